"""The formula language: a whitelisted subset of Python expression syntax, parsed into unit-checked sympy.

A user's formula (`roofline check "P_active*b_w/beta"`, a step of a derivation
file) is parsed by `ast.parse(mode="eval")`, which only builds a tree and runs
nothing, then walked node by node. Allowed: numbers, names from the symbol
table (the glossary, plus symbols the user declares with a unit), `+ - * / **`
with a constant rational exponent of at most `MAX_EXPONENT` in size, unary
minus, parentheses, and the functions in `FUNCTIONS`. Everything else
(attribute access, subscripts, other calls, strings, lambdas, comprehensions,
comparisons, keywords) is refused with the construct's name. The input is
bounded before it is parsed (`MAX_CHARS`) and the tree before it is walked
(`MAX_DEPTH`, `MAX_NODES`), and the sizes numbers and powers can reach are
bounded while it is built, so no input can hang the process. Nothing here calls
`eval`, `sympify` or `parse_expr` on user text.

Units are checked at every node with the engine's own inference
(`units.infer_unit`): the error names the offending subexpression, both
sides' units, and puts a caret under it.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import pint
import sympy as sp

from ...units import RooflineError, UnitMismatchError, infer_unit, same_unit, unit, unit_text, ureg
from ...units.errors import unknown_unit
from ..physics.glossary import GLOSSARY
from .symbols import Symbols, default_latex

#: Longest formula accepted, in characters.
MAX_CHARS = 2000
#: Deepest expression tree accepted (parentheses, calls and operators all count).
MAX_DEPTH = 50
#: Most expression nodes accepted.
MAX_NODES = 500
#: Largest |numerator| and denominator of an exponent (`x**64`, `x**(1/2)`, `x**-3`).
MAX_EXPONENT = 64
#: Largest product of exponents along one path of nested powers ((x**8)**8 is 64).
MAX_TOTAL_EXPONENT = 4096
#: Longest number literal, in characters, and the largest power of ten it may carry (1e100).
MAX_LITERAL_CHARS = 40
MAX_LITERAL_EXPONENT = 100
#: Largest exact number (in bits of its numerator or denominator) a formula's constants may reach.
MAX_NUMBER_BITS = 8192  # about 2,500 digits: below Python's 4,300-digit limit on printing an integer
#: How much of a long formula an error line shows on each side of its caret.
ECHO_CONTEXT = 60

#: The functions a formula may call: name -> (sympy builder, fewest arguments, most arguments).
FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int, int]] = {
    "max": (lambda *a: sp.Max(*a, evaluate=False) if len(set(a)) > 1 else a[0], 2, MAX_NODES),
    "min": (lambda *a: sp.Min(*a, evaluate=False) if len(set(a)) > 1 else a[0], 2, MAX_NODES),
    "sqrt": (sp.sqrt, 1, 1),
    "log": (sp.log, 1, 1),
    "exp": (sp.exp, 1, 1),
    "ceil": (lambda a: sp.ceiling(a, evaluate=False), 1, 1),
    "floor": (lambda a: sp.floor(a, evaluate=False), 1, 1),
}

#: Names a user symbol may not take: the functions and Python's keywords (the parser would never see them as names).
RESERVED = frozenset(FUNCTIONS) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)

#: The refused constructs, as an error line names them.
_REFUSED = {
    ast.Attribute: "attribute access (a.b)",
    ast.Subscript: "subscripts (a[i])",
    ast.Lambda: "lambda expressions",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.Compare: "comparisons (==, <, ...)",
    ast.BoolOp: "boolean operators (and, or)",
    ast.IfExp: "conditional expressions (a if c else b)",
    ast.List: "lists", ast.Tuple: "tuples (a, b)", ast.Set: "sets", ast.Dict: "dicts",
    ast.JoinedStr: "f-strings", ast.FormattedValue: "f-strings",
    ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred arguments (*a)",
    ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
    ast.Slice: "slices",
}
_REFUSED_OPERATORS = {
    ast.FloorDiv: "// (floor division; write floor(a/b))", ast.Mod: "% (modulo)", ast.MatMult: "@ (matrix product)",
    ast.BitAnd: "& (bitwise and)", ast.BitOr: "| (bitwise or)", ast.BitXor: "^ (bitwise xor; write ** for a power)",
    ast.LShift: "<< (shift)", ast.RShift: ">> (shift)",
}


class FormulaError(RooflineError, ValueError):
    """A formula that is refused: one message line, then the formula and a caret under the offending part.

    `where` says whose formula it is ("formula", "kv-offload.toml: steps[2].formula").
    """

    def __init__(self, message: str, text: str = "", start: int | None = None, end: int | None = None, where: str = "formula") -> None:
        self.message = message
        self.text = text
        self.start = start
        self.end = end
        self.where = where
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"{self.where}: {self.message}"
        if self.start is None or not self.text:
            return head
        start = max(0, min(self.start, len(self.text)))
        end = max(start + 1, min(self.end if self.end is not None else start + 1, len(self.text) + 1))
        lo = max(0, start - ECHO_CONTEXT)
        hi = min(len(self.text), lo + 3 * ECHO_CONTEXT)
        prefix = "..." if lo else ""
        shown_text = "".join(ch if " " <= ch <= "~" else "?" for ch in self.text[lo:hi])  # one line, whatever the input held
        echo = prefix + shown_text + ("..." if hi < len(self.text) else "")
        caret = " " * (len(prefix) + start - lo) + "^" * max(1, min(end, hi) - start)
        return f"{head}\n    {echo}\n    {caret}"

    def located(self, where: str) -> FormulaError:
        """The same error, said of another place (a file and field)."""
        return type(self)(self.message, self.text, self.start, self.end, where)


class FormulaSyntaxError(FormulaError):
    """Not a formula: a Python syntax error, a refused construct or character."""


class UnknownNameError(FormulaError):
    """A name that is neither in the glossary nor declared."""


class FormulaTooLargeError(FormulaError):
    """Past a size limit: characters, depth, nodes, exponent or number size."""


class FormulaUnitError(FormulaError, UnitMismatchError):
    """The units do not agree: an added or compared pair, a function's argument, the expected unit."""


@dataclass(frozen=True)
class Formula:
    """A parsed, unit-checked formula."""

    text: str
    expr: sp.Expr
    unit: pint.Unit
    symbols: Symbols

    @property
    def unit_text(self) -> str:
        return unit_text(self.unit)

    @property
    def free_symbols(self) -> list[sp.Symbol]:
        """The symbols it uses, in glossary (then declaration) order."""
        order = {info.symbol: i for i, info in enumerate(self.symbols)}
        return sorted(self.expr.free_symbols, key=lambda s: order.get(s, len(order)))


def symbol_table(declared: Mapping[str, str] | None = None, parent: Symbols = GLOSSARY, where: str = "--symbol") -> Symbols:
    """The glossary plus the user's own symbols, NAME -> unit string (each a new name with a unit pint knows)."""
    table = Symbols(parent=parent)
    for name, unit_str in (declared or {}).items():
        declare(table, name, unit_str, where=where)
    return table


def declare(table: Symbols, name: str, unit_str: str, latex: str | None = None, meaning: str = "", where: str = "--symbol") -> sp.Symbol:
    """Add one user symbol to `table`; refuses a reserved or taken name and a unit pint does not know."""
    if not isinstance(name, str) or not isinstance(unit_str, str):
        raise FormulaError(f"expected NAME=UNIT strings, found {type(name).__name__}={type(unit_str).__name__}", where=where)
    shown_name = name[:40]
    if name in RESERVED:
        raise FormulaError(f"{shown_name!r} is reserved (a function or a Python keyword); choose another symbol name", where=where)
    if name in table:
        raise FormulaError(f"{shown_name!r} is already a glossary symbol ({table[name].unit_text}: {table[name].meaning}); "
                           "use it as it is or choose another name", where=where)
    try:
        u = parse_unit(unit_str, f"{where} {shown_name}")
        return table.add(name, unit_text(u), latex or declared_latex(name), meaning or "declared by the user")
    except FormulaError:
        raise
    except RooflineError as err:
        raise FormulaError(str(err), where=where) from None


_GREEK = frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "kappa", "lambda", "mu", "nu", "pi", "rho", "sigma",
                    "tau", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Pi", "Sigma", "Phi", "Psi", "Omega"})


def declared_latex(name: str) -> str:
    """A declared symbol's LaTeX: the engine's default, with a Greek head as the letter (`beta_pcie` -> `\\beta_{\\mathrm{pcie}}`)."""
    head, _, tail = name.partition("_")
    if head not in _GREEK:
        return default_latex(name)
    return rf"\{head}" + (rf"_{{\mathrm{{{tail.replace('_', chr(92) + '_')}}}}}" if tail else "")


def parse_unit(text: str, where: str = "unit") -> pint.Unit:
    """A unit string (`ms`, `B/s`, `1`) through pint's unit parser, never a number; one clean line on failure."""
    if not isinstance(text, str) or len(text) > 100:
        raise FormulaError(f"expected a unit such as 'ms' or 'B/s', found {str(text)[:40]!r}", where=where)
    try:
        u = unit(text.strip())
    except (pint.errors.PintError, ValueError, TypeError, SyntaxError, AssertionError, AttributeError, KeyError, IndexError):
        raise FormulaError(unknown_unit(text[:40]), where=where) from None
    if not isinstance(u, pint.Unit):
        raise FormulaError(f"expected a unit, found {text[:40]!r}", where=where)
    return u


def parse(text: str, symbols: Symbols = GLOSSARY, where: str = "formula", expect: str | pint.Unit | None = None) -> Formula:
    """Parse and unit-check one formula; `expect`, if given, is the unit (or any unit of the same dimension) it must come out in."""
    if not isinstance(text, str):
        raise FormulaSyntaxError(f"expected a formula as a string, found {type(text).__name__}", where=where)
    if len(text) > MAX_CHARS:
        raise FormulaTooLargeError(f"formula too large: {len(text):,} characters, at most {MAX_CHARS:,}", where=where)
    for i, ch in enumerate(text):
        if not (" " <= ch <= "~"):
            raise FormulaSyntaxError(f"character {ch!r} is not allowed (a formula is one line of ASCII)", text, i, i + 1, where)
    if not text.strip():
        raise FormulaSyntaxError("empty formula", where=where)
    shift = len(text) - len(text.lstrip())  # ast offsets count from the first non-blank character
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid decimal literal" and the like: the parse error says it in one line
            tree = ast.parse(text.lstrip(), mode="eval")
    except SyntaxError as err:
        offset = (err.offset or 1) - 1 + shift
        raise FormulaSyntaxError(f"not a formula: {err.msg}", text, offset, offset + 1, where) from None
    except (RecursionError, MemoryError, ValueError):
        raise FormulaTooLargeError("formula too large: nested too deeply to parse", where=where) from None
    _check_size(tree.body, text, shift, where)
    walker = _Walker(text, shift, symbols, where)
    expr = walker.walk(tree.body, 1)
    u = walker.unit_of(expr, tree.body)
    formula = Formula(text, expr, u, symbols)
    if expect is not None:
        check_expected(formula, expect, where)
    return formula


def check_expected(formula: Formula, expect: str | pint.Unit, where: str = "formula") -> pint.Unit:
    """The expected unit, checked: the formula's unit must have its dimension (ms for a formula in s is fine)."""
    want = parse_unit(expect, "--expect") if isinstance(expect, str) else expect
    if formula.unit.dimensionality != want.dimensionality:
        raise FormulaUnitError(f"expected a result in {unit_text(want)}, but the formula is in {formula.unit_text}", formula.text,
                               0, len(formula.text), where)
    return want


def _check_size(root: ast.AST, text: str, shift: int, where: str) -> None:
    """Depth and node count, with an explicit stack (no recursion on an unchecked tree)."""
    count = 0
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            count += 1
            if count > MAX_NODES:
                raise FormulaTooLargeError(f"formula too large: more than {MAX_NODES} terms, names and operators", where=where)
            if depth > MAX_DEPTH:
                start = getattr(node, "col_offset", 0) + shift
                raise FormulaTooLargeError(f"formula too large: nested more than {MAX_DEPTH} deep", text, start,
                                           getattr(node, "end_col_offset", start) + shift, where)
        for child in ast.iter_child_nodes(node):
            # a chain a + b + c + ... nests to the left in the tree but is one level to a reader (and to the walk)
            chained = isinstance(node, ast.BinOp) and child is node.left and _same_group(node, child)
            stack.append((child, depth if chained else depth + 1))


_GROUPS = ((ast.Add, ast.Sub), (ast.Mult, ast.Div))


def _same_group(node: ast.BinOp, child: ast.AST) -> bool:
    return isinstance(child, ast.BinOp) and any(isinstance(node.op, g) and isinstance(child.op, g) for g in _GROUPS)


class _Walker:
    def __init__(self, text: str, shift: int, symbols: Symbols, where: str) -> None:
        self.text = text
        self.shift = shift
        self.symbols = symbols
        self.units = symbols.units()
        self.where = where

    # --- errors at a node -------------------------------------------------
    def span(self, node: ast.AST) -> tuple[int, int]:
        start = getattr(node, "col_offset", 0) + self.shift
        end = getattr(node, "end_col_offset", None)
        return start, (end + self.shift if end is not None else start + 1)

    def source(self, node: ast.AST) -> str:
        start, end = self.span(node)
        part = self.text[start:end]
        return part if len(part) <= 50 else part[:47] + "..."

    def fail(self, cls: type[FormulaError], message: str, node: ast.AST) -> FormulaError:
        start, end = self.span(node)
        return cls(message, self.text, start, end, self.where)

    # --- units --------------------------------------------------------------
    def unit_of(self, expr: sp.Expr, node: ast.AST) -> pint.Unit:
        try:
            return infer_unit(expr, self.units)
        except UnitMismatchError as err:
            raise self.fail(FormulaUnitError, str(err), node) from None

    def same(self, node: ast.AST, what: str, parts: list[tuple[ast.AST, sp.Expr]]) -> None:
        """Every part (skipping an exact zero, which has any unit) in the unit of the first."""
        parts = [(n, e) for n, e in parts if e != 0]
        if len(parts) < 2:
            return
        first_node, first = parts[0]
        u_first = self.unit_of(first, first_node)
        for other_node, other in parts[1:]:
            u_other = self.unit_of(other, other_node)
            if not same_unit(u_first, u_other):
                hint = " (same dimension, different scale: declare both in one unit)" if u_first.dimensionality == u_other.dimensionality else ""
                raise self.fail(FormulaUnitError, f"unit mismatch in {what}: {self.source(first_node)} is in {unit_text(u_first)} "
                                f"but {self.source(other_node)} is in {unit_text(u_other)}{hint}", node)

    def dimensionless(self, node: ast.AST, fn: str, arg_node: ast.AST, arg: sp.Expr) -> None:
        u = self.unit_of(arg, arg_node)
        if not same_unit(u, ureg.dimensionless):
            raise self.fail(FormulaUnitError, f"{fn}() needs a dimensionless argument but {self.source(arg_node)} is in {unit_text(u)}", node)

    # --- the walk -------------------------------------------------------------
    def walk(self, node: ast.AST, power: int, in_exp: bool = False) -> sp.Expr:
        """The sympy expression of `node`; `power` is the product of the exponents of the powers around it."""
        if isinstance(node, ast.Constant):
            return self.number(node, power)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return self.bounded(-self.walk(node.operand, power, in_exp), node)
            if isinstance(node.op, ast.UAdd):
                return self.walk(node.operand, power, in_exp)
            raise self.fail(FormulaSyntaxError, f"{'not' if isinstance(node.op, ast.Not) else '~'} is not allowed: "
                            "a formula has + - * / ** and the functions " + ", ".join(FUNCTIONS), node)
        if isinstance(node, ast.BinOp):
            return self.chain(node, power, in_exp)
        if isinstance(node, ast.Call):
            return self.call(node, power, in_exp)
        what = _REFUSED.get(type(node), f"{type(node).__name__} expressions")
        hint = "; for an equation use --solve-for NAME --equals EXPR (solve() in Python)" if isinstance(node, ast.Compare) else ""
        raise self.fail(FormulaSyntaxError, f"{what} not allowed in a formula{hint}", node)

    def number(self, node: ast.Constant, power: int) -> sp.Expr:
        value = node.value
        if isinstance(value, str):
            raise self.fail(FormulaSyntaxError, "strings are not allowed in a formula", node)
        if isinstance(value, bool) or value is None or value is Ellipsis or isinstance(value, bytes):
            raise self.fail(FormulaSyntaxError, f"{value!r} is not a number", node)
        if isinstance(value, complex):
            raise self.fail(FormulaSyntaxError, "complex numbers are not allowed in a formula", node)
        start, end = self.span(node)
        literal = self.text[start:end].replace("_", "")
        if len(literal) > MAX_LITERAL_CHARS:
            raise self.fail(FormulaTooLargeError, f"number too long: at most {MAX_LITERAL_CHARS} characters", node)
        exponent = literal.lower().partition("e")[2]
        if exponent and abs(int(exponent)) > MAX_LITERAL_EXPONENT:
            raise self.fail(FormulaTooLargeError, f"number too large: a power of ten of at most {MAX_LITERAL_EXPONENT}", node)
        try:
            exact = Fraction(literal)
        except (ValueError, ZeroDivisionError):
            raise self.fail(FormulaSyntaxError, f"{literal[:40]!r} is not a decimal number", node) from None
        return self.bounded(sp.Rational(exact.numerator, exact.denominator), node)

    def name(self, node: ast.Name) -> sp.Expr:
        if node.id in FUNCTIONS:
            raise self.fail(FormulaSyntaxError, f"{node.id} is a function; call it: {node.id}(...)", node)
        if node.id not in self.symbols:
            names = [info.name for info in self.symbols]
            close = difflib.get_close_matches(node.id, names, n=3, cutoff=0.5)
            if not close:
                lowered = {n.lower(): n for n in names}
                close = [lowered[n] for n in difflib.get_close_matches(node.id.lower(), list(lowered), n=3, cutoff=0.5)]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise self.fail(UnknownNameError, f"unknown name {node.id[:40]!r}{hint}; `roofline list symbols` lists the glossary, "
                            "--symbol NAME=UNIT declares your own", node)
        return self.symbols[node.id].symbol

    def chain(self, node: ast.BinOp, power: int, in_exp: bool) -> sp.Expr:
        """A left-nested chain (a + b - c + ...) folded without recursion, so a long sum cannot exhaust the stack."""
        if not any(isinstance(node.op, g) for g in _GROUPS):
            return self.binop(node, power, in_exp)
        spine = [node]
        while _same_group(spine[-1], spine[-1].left):
            spine.append(spine[-1].left)
        left = self.walk(spine[-1].left, power, in_exp)
        for link in reversed(spine):
            left = self.binop(link, power, in_exp, left)
        return left

    def binop(self, node: ast.BinOp, power: int, in_exp: bool, left: sp.Expr | None = None) -> sp.Expr:
        op = type(node.op)
        if op in _REFUSED_OPERATORS:
            raise self.fail(FormulaSyntaxError, f"{_REFUSED_OPERATORS[op]} is not allowed in a formula", node)
        if op is ast.Pow:
            exponent = self.exponent(node.right)
            total = power * max(abs(exponent.p), 1) * exponent.q
            if total > MAX_TOTAL_EXPONENT:
                raise self.fail(FormulaTooLargeError, f"powers nested too high: exponents multiply to {total}, at most {MAX_TOTAL_EXPONENT}", node)
            base = self.walk(node.left, total, in_exp) if left is None else left
            if base == 0 and exponent < 0:
                raise self.fail(FormulaSyntaxError, "division by zero", node)
            self.unit_of(base, node.left)
            return self.bounded(sp.Pow(base, exponent), node)
        left = self.walk(node.left, power, in_exp) if left is None else left
        right = self.walk(node.right, power, in_exp)
        if op is ast.Add or op is ast.Sub:
            self.same(node, f"{self.source(node)}", [(node.left, left), (node.right, right)])
            return self.bounded(left + right if op is ast.Add else left - right, node)
        if op is ast.Mult:
            return self.bounded(left * right, node)
        if right == 0:
            raise self.fail(FormulaSyntaxError, "division by zero", node)
        return self.bounded(left / right, node)

    def exponent(self, node: ast.AST) -> sp.Rational:
        """A constant rational exponent: 2, -1, 0.5, (1/2), -(3/2)."""
        allowed = (ast.Constant, ast.UnaryOp, ast.BinOp)
        for sub in ast.walk(node):
            if isinstance(sub, ast.expr) and not isinstance(sub, allowed):
                raise self.fail(FormulaSyntaxError, f"an exponent must be a constant number such as 2 or (1/2), found {self.source(node)}", node)
        value = self.walk(node, 1)
        if not value.is_Rational:
            raise self.fail(FormulaSyntaxError, f"an exponent must be a constant rational number, found {self.source(node)}", node)
        if abs(value.p) > MAX_EXPONENT or value.q > MAX_EXPONENT:
            raise self.fail(FormulaTooLargeError, f"exponent {value} too large: numerator and denominator at most {MAX_EXPONENT}", node)
        return value

    def call(self, node: ast.Call, power: int, in_exp: bool) -> sp.Expr:
        if not isinstance(node.func, ast.Name):
            what = "attribute access (a.b)" if isinstance(node.func, ast.Attribute) else "calls of anything but a function name"
            raise self.fail(FormulaSyntaxError, f"{what} not allowed in a formula", node.func)
        name = node.func.id
        if name not in FUNCTIONS:
            raise self.fail(FormulaSyntaxError, f"calls to {name[:40]!r} not allowed; the functions are {', '.join(FUNCTIONS)}", node.func)
        if node.keywords:
            raise self.fail(FormulaSyntaxError, "keyword arguments not allowed in a formula", node.keywords[0].value)
        build, fewest, most = FUNCTIONS[name]
        if name == "exp" and in_exp:
            raise self.fail(FormulaTooLargeError, "exp() inside exp(): the value would be too large to represent", node)
        args = [self.walk(a, power, in_exp or name == "exp") for a in node.args]
        if not fewest <= len(node.args) <= most:
            count = f"at least {fewest}" if most > fewest else str(fewest)
            raise self.fail(FormulaSyntaxError, f"{name}() takes {count} argument{'s' if fewest > 1 else ''}, found {len(node.args)}", node)
        if name in ("max", "min"):
            self.same(node, f"{name}()", list(zip(node.args, args, strict=True)))
        elif name in ("log", "exp"):
            self.dimensionless(node, name, node.args[0], args[0])
            if name == "log" and args[0].is_number and not args[0].is_positive:
                raise self.fail(FormulaSyntaxError, "log() of a number that is not positive", node)
        elif name == "sqrt" and args[0].is_number and args[0].is_negative:
            raise self.fail(FormulaSyntaxError, "sqrt() of a negative number", node)
        return self.bounded(build(*args), node)

    def bounded(self, expr: sp.Expr, node: ast.AST) -> sp.Expr:
        """`expr`, unless one of its exact numbers is past MAX_NUMBER_BITS (so no later step can blow up)."""
        if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise self.fail(FormulaSyntaxError, "division by zero", node)
        if expr.has(sp.I):
            raise self.fail(FormulaSyntaxError, "the square root (or power) of a negative quantity is imaginary", node)
        for atom in expr.atoms(sp.Rational):
            if max(abs(atom.p).bit_length(), atom.q.bit_length()) > MAX_NUMBER_BITS:
                raise self.fail(FormulaTooLargeError, "number too large to work with exactly", node)
        return expr


@dataclass(frozen=True)
class Solution:
    """A closed form for `for_` from `lhs = rhs`, found and verified by the engine's solver."""

    expr: sp.Expr
    unit: pint.Unit
    for_: sp.Symbol
    lhs: Formula
    rhs: Formula
    #: "symbolic" when sympy proves the equation at the root, else "numeric" (always checked at random points)
    verified: str


def solve(lhs: Formula, rhs: Formula, for_: str, where: str = "--solve-for") -> Solution:
    """`for_` such that `lhs` = `rhs`: both sides in one unit, one positive root, checked against the equation.

    This is the engine's own Solve step (declare.solve), so a user's closed
    form is verified exactly as a sheet's is.
    """
    from . import bounded, declare  # the engine imports nothing of ours; a late import keeps this module light

    table = Symbols(parent=lhs.symbols)
    if not isinstance(for_, str) or for_ not in lhs.symbols:
        shown_name = str(for_)[:40]
        close = difflib.get_close_matches(shown_name, [i.name for i in lhs.symbols], n=3, cutoff=0.5)
        raise UnknownNameError(f"unknown symbol {shown_name!r} to solve for" + (f" (did you mean {', '.join(close)}?)" if close else ""), where=where)
    var = lhs.symbols[for_].symbol
    if not same_unit(lhs.unit, rhs.unit):
        raise FormulaUnitError(f"the two sides differ in unit: {_short(lhs.text)} is in {lhs.unit_text} but {_short(rhs.text)} is in {rhs.unit_text}",
                               where=where)
    if var not in (lhs.expr - rhs.expr).free_symbols:
        raise FormulaError(f"{for_} does not appear in {_short(lhs.text)} = {_short(rhs.text)}", where=where)
    if (lhs.expr - rhs.expr).has(sp.Max, sp.Min, sp.ceiling, sp.floor):
        raise FormulaError("cannot solve through max, min, ceil or floor: equate one branch at a time", where=where)
    sides = []
    for side_name, side in (("check_lhs", lhs), ("check_rhs", rhs)):
        step = declare.Step(side_name, side.expr, side.unit_text, "")
        table.add(side_name, side.unit_text, None, "")
        sides.append(step)
    unit_str = unit_text(table.info(var).unit)
    step = declare.solve("check_solution", sides[0], sides[1], var, unit_str, "")
    try:
        solved = declare._solve("check", step, {s.name: s.expr for s in sides}, table, sides, bounded.Budget(bounded.SOLVE_CPU_SECONDS))
    except bounded.LimitExceededError as err:
        raise FormulaTooLargeError(f"the solve for {for_} in {_short(lhs.text)} = {_short(rhs.text)} {err.reason}", where=where) from None
    except (declare.DerivationError, UnitMismatchError) as err:
        raise FormulaError(str(err).removeprefix("check: check_solution: ").removeprefix("check: "), where=where) from None
    except (NotImplementedError, ValueError, TypeError, RecursionError):
        raise FormulaError(f"sympy finds no closed form for {for_} in {_short(lhs.text)} = {_short(rhs.text)}", where=where) from None
    return Solution(solved.expr, table.info(var).unit, var, lhs, rhs, solved.verified)


@dataclass(frozen=True)
class Operand:
    """One symbol's value in a checked formula, and where it came from ("hardware", "model", "set", "default", ...)."""

    symbol: sp.Symbol
    value: sp.Expr
    unit: pint.Unit
    source: str


@dataclass(frozen=True)
class Checked:
    """What `roofline check` reports: the formula (or the closed form solved from it), its unit, and a value where there is a context."""

    formula: Formula
    solution: Solution | None = None
    #: the unit the user expects (a unit of the same dimension as the result), or None
    expect: pint.Unit | None = None
    #: the exact value in `unit`, or None without a context
    value: sp.Expr | None = None
    operands: tuple[Operand, ...] = ()
    context_label: str = ""

    @property
    def expr(self) -> sp.Expr:
        return self.solution.expr if self.solution else self.formula.expr

    @property
    def unit(self) -> pint.Unit:
        return self.solution.unit if self.solution else self.formula.unit

    @property
    def symbols(self) -> Symbols:
        return self.formula.symbols


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


#: The largest argument exp() is evaluated at (e**700 is near the largest float); past it the value is out of range.
MAX_EXP_ARGUMENT = 700


def substitute(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr], text: str = "", where: str = "formula") -> sp.Expr:
    """`expr` at exact `values`: an exact number where the algebra allows, else 40 significant digits; refused if not finite."""
    v = expr.xreplace(dict(values))
    for e in v.atoms(sp.exp):
        arg = sp.N(e.args[0], 30)
        if arg.is_number and abs(arg) > MAX_EXP_ARGUMENT:
            raise FormulaTooLargeError(f"exp() of {sp.N(arg, 4)} is out of range (at most {MAX_EXP_ARGUMENT})", text, 0, len(text), where)
    if v.free_symbols:
        missing = ", ".join(sorted(s.name for s in v.free_symbols))
        raise FormulaError(f"no value for {missing}", where=where)
    if not v.is_Rational or max(abs(v.p).bit_length(), v.q.bit_length()) > MAX_NUMBER_BITS:
        v = sp.N(v, 40)
    if v.is_extended_real is not True or v.is_finite is not True:
        raise FormulaError(f"the formula has no finite real value here ({sp.sstr(v)[:40]})", text, 0, len(text), where)
    if v != 0 and not sp.Float("1e-300") < abs(v) < sp.Float("1e300"):
        raise FormulaTooLargeError("the value is out of range (beyond 1e300 or below 1e-300 in base units)", text, 0, len(text), where)
    return v


__all__ = [
    "FUNCTIONS",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_NODES",
    "Checked",
    "Formula",
    "FormulaError",
    "FormulaSyntaxError",
    "FormulaTooLargeError",
    "FormulaUnitError",
    "Operand",
    "Solution",
    "UnknownNameError",
    "check_expected",
    "declare",
    "parse",
    "parse_unit",
    "solve",
    "substitute",
    "symbol_table",
]

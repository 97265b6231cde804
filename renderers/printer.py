"""sympy's LaTeX printer as the sheets use it, and the printed form (`renderers.printed.Printed`) it makes of a formula.

Every formula a renderer shows goes through `printed`: the expression printed once with a slot for each symbol, then
filled with the names or numbers of the use at hand (`latex_math`; `Printed.lines` for a formula too wide for a line). The slots change nothing: a filled
form is exactly what sympy prints with those names (tests/renderers/test_printed.py checks it for every step of every
sheet), and it lets the light path (roofline.compiled) print a sheet from stored forms without importing sympy.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

from .printed import Piece, Pieces, Printed, ZeroWhen


class _Printer(LatexPrinter):
    """sympy's LaTeX printer, but a symbol printed as a number with a unit is
    parenthesised when raised to a power: (295.3 token)^2, not 295.3 token^2."""

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> str:
        """sympy's sum, with a positive term first: a - b + c reads as a + c - b, never -b + a + c."""
        terms = self._ordered_terms(expr)
        tex = ""
        for i, term in enumerate(terms):
            if i and term.could_extract_minus_sign():
                tex += " - "
                term = -term
            elif i:
                tex += " + "
            term_tex = self._print(term)
            if self._needs_add_brackets(term):
                term_tex = rf"\left({term_tex}\right)"
            tex += term_tex
        return tex

    def _ordered_terms(self, expr: sp.Add) -> list[sp.Expr]:
        """The terms of a sum in print order: by the derivation's ranks, positive terms first."""
        terms = list(self._as_ordered_terms(expr))
        ranks = getattr(self, "ranks", {})
        if ranks:
            terms.sort(key=lambda t: min((ranks.get(_untagged(s), len(ranks)) for s in t.free_symbols), default=len(ranks)))
        return [t for t in terms if not t.could_extract_minus_sign()] + [t for t in terms if t.could_extract_minus_sign()]

    def _print(self, expr: object, **kwargs: object) -> str:
        """sympy's printer, but `nan` (a Piecewise's "no value otherwise") in words: its own `_latex` says NaN."""
        if expr is sp.nan:
            return r"\text{no value}"
        return super()._print(expr, **kwargs)

    def _print_Mul(self, expr: sp.Mul) -> str:
        """sympy's product, but a logarithm over log 2 as the base-2 logarithm it is: log2(x), not log(x)/log(2)."""
        inverse = sp.Pow(sp.log(2), -1)
        logs = [a for a in expr.args if isinstance(a, sp.log)]
        if inverse in expr.args and len(logs) == 1:
            rest = [a for a in expr.args if a is not logs[0] and a != inverse]
            core = r"\log_{2}{\left(" + self._print(logs[0].args[0]) + r"\right)}"
            if not rest:
                return core
            if rest == [sp.S.NegativeOne]:
                return "- " + core
            return self.parenthesize(sp.Mul(*rest), PRECEDENCE["Mul"]) + " " + core
        return super()._print_Mul(expr)

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        """Cases, as a textbook writes them: 'value if condition', the last 'otherwise'."""
        rows = []
        for e, c in expr.args:
            cond = r"\text{otherwise}" if c == sp.true else r"\text{if } " + self._print(c)
            rows.append(f"{self._print(e)} & {cond}")
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"

    def _print_Pow(self, expr: sp.Pow) -> str:
        base, exponent = expr.as_base_exp()
        name = self._settings["symbol_names"].get(base, "") if isinstance(base, sp.Symbol) else ""
        if (" " in name or "\\qty" in name or "\\mathrm" in name) and exponent.is_Rational and exponent > 0 and exponent.q == 1:
            return rf"\left({name}\right)^{{{self._print(exponent)}}}"
        return super()._print_Pow(expr)


# Markers a slot prints as while the formula is printed (private-use characters no formula holds).
_OPEN, _SEP, _CLOSE, _SUPER, _POWER, _EXPONENT = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005"
_MARK = re.compile(f"([{_OPEN}{_SUPER}{_POWER}{_EXPONENT}])([^{_SEP}{_CLOSE}]*)(?:{_SEP}([^{_CLOSE}]*))?{_CLOSE}")
#: The tag after the name of a symbol a unit marker cancels, filled without its unit like an exponent's (renderers.forms._unit_free):
#: after, so the tagged symbol sorts among the factors where its name does
UNIT_FREE = _EXPONENT


def _indicated(arg: sp.Expr) -> sp.Expr | None:
    """x where `arg` is min(1, max(0, x)) or max(0, min(1, x)), whose ceiling is 1 where x > 0 and 0 elsewhere; else None."""
    for outer, inner, bound, floor in ((sp.Min, sp.Max, 1, 0), (sp.Max, sp.Min, 0, 1)):
        if isinstance(arg, outer) and len(arg.args) == 2 and bound in arg.args:
            other = next(a for a in arg.args if a != bound)
            if isinstance(other, inner) and len(other.args) == 2 and floor in other.args:
                return next(a for a in other.args if a != floor)
    return None


class _SlotPrinter(_Printer):
    """The printer with a marker for each symbol: a plain slot, a slot raised to a whole power (whose brackets depend on
    what fills it: `printed._power`), a slot guarded against a superscript of its own (sympy's parenthesize_super)."""

    def _print_Symbol(self, expr: sp.Symbol, style: str = "plain") -> str:
        if expr.name.startswith(_EXPONENT):
            return f"{_EXPONENT}{expr.name[1:]}{_CLOSE}"
        if expr.name.endswith(UNIT_FREE):
            return f"{_EXPONENT}{expr.name[:-1]}{_CLOSE}"
        return f"{_OPEN}{expr.name}{_CLOSE}"

    def _print_Pow(self, expr: sp.Pow) -> str:
        worded = self._print_Pow_of_two(expr)
        if worded is not None:
            return worded
        base, exponent = expr.as_base_exp()
        if isinstance(base, sp.Symbol) and base.name.endswith(UNIT_FREE) and exponent.is_Rational and exponent > 0 and exponent.q == 1:
            # a symbol filled without its unit is a plain number: no brackets to decide
            return f"{_EXPONENT}{base.name[:-1]}{_CLOSE}" + ("" if exponent == 1 else f"^{{{self._print(exponent)}}}")
        if isinstance(base, sp.Symbol) and exponent.is_Rational and exponent > 0 and exponent.q == 1:
            return f"{_POWER}{base.name}{_SEP}{self._print(exponent)}{_CLOSE}"
        if exponent.free_symbols and not expr.exp.is_Rational:
            # the symbols of an exponent are slots of their own ("e"): an exponent is a pure number, so a value fills them
            # without its unit ((1 - 2/8)^(64 * 1), not ^(64 * 1 token): the unit marker that cancels it is printed as 1)
            tagged = expr.exp.xreplace({x: sp.Symbol(_EXPONENT + x.name.removesuffix(UNIT_FREE), **x.assumptions0) for x in expr.exp.free_symbols
                                        if not x.name.startswith(_EXPONENT)})
            expr = sp.Pow(expr.base, tagged, evaluate=False)
        return LatexPrinter._print_Pow(self, expr)

    def _print_Pow_of_two(self, expr: sp.Pow) -> str | None:
        """2^ceil(log2 x), the next power of two at or above x, in words: its numbers read "the next power of two at or above
        0.214", not 2^⌈log₂(0.21418)⌉ (issue 40 item 3)."""
        exponent = expr.exp
        if expr.base == 2 and isinstance(exponent, sp.ceiling):
            inner = exponent.args[0]
            inverse = sp.Pow(sp.log(2), -1)
            logs = [a for a in sp.Mul.make_args(inner) if isinstance(a, sp.log)]
            if len(logs) == 1 and set(sp.Mul.make_args(inner)) == {logs[0], inverse}:
                return r"\text{the next power of two at or above } " + self._print(logs[0].args[0])
        return None

    def _print_ceiling(self, expr: sp.ceiling, exp: object = None) -> str:
        """ceil(min(1, max(0, x))), 1 where x > 0 and 0 elsewhere, in words: "(1 if 0.514 > 1, else 0)", not
        ⌈min(1, max(0, 0.514014 - 1))⌉ (issue 40 item 3)."""
        x = _indicated(expr.args[0])
        if x is None or exp is not None:
            return super()._print_ceiling(expr, exp)  # type: ignore[no-any-return]
        positive = [t for t in sp.Add.make_args(x) if not t.could_extract_minus_sign()]
        negative = [-t for t in sp.Add.make_args(x) if t.could_extract_minus_sign()]
        left, right = (self._print(sp.Add(*terms, evaluate=False)) if terms else "0" for terms in (positive, negative))
        return rf"\left(1 \text{{ if }} {left} > {right}\text{{, else }} 0\right)"

    def parenthesize_super(self, s: str) -> str:
        m = _MARK.fullmatch(s)
        if m is not None and m.group(1) == _OPEN:
            return f"{_SUPER}{m.group(2)}{_CLOSE}"
        return super().parenthesize_super(s)


def _pieces(text: str) -> Pieces:
    out: list[Piece] = []
    last = 0
    for m in _MARK.finditer(text):
        if m.start() > last:
            out.append(text[last:m.start()])
        kind = {_OPEN: "s", _SUPER: "u", _POWER: "p", _EXPONENT: "e"}[m.group(1)]
        out.append((kind, m.group(2), m.group(3)) if kind == "p" else (kind, m.group(2)))
        last = m.end()
    if last < len(text):
        out.append(text[last:])
    if any(c in p for p in out if isinstance(p, str) for c in (_OPEN, _SEP, _CLOSE, _SUPER, _POWER, _EXPONENT)):
        raise ValueError("a printed formula holds a stray slot marker")
    return tuple(out)


class _Ranks(dict):
    """The ranks of the symbols a formula holds, counting as many as the derivation has (an unranked symbol's place)."""

    def __init__(self, ranks: Mapping[str, int], count: int) -> None:
        super().__init__({sp.Symbol(name, positive=True): r for name, r in ranks.items()})
        self.count = count

    def __len__(self) -> int:
        return self.count


def _used(expr: sp.Expr, ranks: Mapping[sp.Symbol, int] | Mapping[str, int] | None) -> tuple[tuple[tuple[str, int], ...], int]:
    """What printing `expr` reads of `ranks`: the ranks of its symbols, and how many there are."""
    if not ranks:
        return (), 0
    by_name = {(k.name if isinstance(k, sp.Symbol) else k): v for k, v in ranks.items()}
    names = {s.name.removesuffix(UNIT_FREE) for s in expr.free_symbols}
    return tuple(sorted((n, r) for n, r in by_name.items() if n in names)), len(by_name)


def _form(printer: _Printer, expr: sp.Expr, pieces: object) -> Printed:
    """`expr` printed whole, a term at a time (a sum) and a case at a time (a case split), each cut into pieces."""
    cut = pieces if callable(pieces) else (lambda text: (text,))
    terms: tuple[Pieces, ...] = ()
    cases: tuple[tuple[Pieces, Pieces], ...] = ()
    zeros: tuple[ZeroWhen, ...] = ()
    if expr.is_Add:
        out = []
        ordered = printer._ordered_terms(expr)
        for i, term in enumerate(ordered):
            if i and term.could_extract_minus_sign():
                out.append(cut("- " + printer._print(-term)))
            else:
                out.append(cut(("+ " if i else "") + printer._print(term)))
        terms = tuple(out)
        zeros = tuple(_zero_when(term) for term in ordered)
    if isinstance(expr, sp.Piecewise):
        cases = tuple((cut(printer._print(value)), cut(r"\text{otherwise}" if cond == sp.true else r"\text{if } " + printer._print(cond)))
                      for value, cond in expr.args)
    return Printed(cut(printer.doprint(expr)), terms, cases, zeros)


def _untagged(x: sp.Symbol) -> sp.Symbol:
    """A symbol without the tag of a slot filled without its unit (renderers.forms._unit_free), as the ranks name it."""
    return sp.Symbol(x.name.removesuffix(UNIT_FREE), **x.assumptions0) if x.name.endswith(UNIT_FREE) else x


#: The most alternatives `_zero_when` keeps for one term (dropping one only misses a zero, never invents one).
MOST_ALTERNATIVES = 16


def _zero_when(term: sp.Expr) -> ZeroWhen:
    """When `term` is zero, as alternatives, each a set of symbols that are zero together: a product is zero where one
    factor is (a factor's base raised to a positive power counts), a sum, a max() or a min() where every part is (so a
    roofline over bytes and flops that are both zero is), a number where it is 0; anything else never."""
    def alternatives(e: sp.Expr) -> frozenset[frozenset[str]]:
        if isinstance(e, sp.Symbol):
            return frozenset({frozenset({e.name.removesuffix(UNIT_FREE)})})  # the symbol's own name, not its slot's tag
        if e.is_Number:
            return frozenset({frozenset()}) if e == 0 else frozenset()
        if e.is_Pow:
            return alternatives(e.base) if e.exp.is_positive else frozenset()
        if e.is_Mul:
            return frozenset().union(*(alternatives(f) for f in e.args))
        if e.is_Add or isinstance(e, sp.Max | sp.Min):
            out = frozenset({frozenset()})
            for part in e.args:
                out = frozenset(a | b for a in out for b in alternatives(part))
                out = frozenset(sorted(out, key=lambda a: (len(a), sorted(a)))[:MOST_ALTERNATIVES])
            return out
        return frozenset()
    return tuple(sorted(tuple(sorted(a)) for a in alternatives(term)))


@lru_cache(maxsize=16384)
def _slots(expr: sp.Expr, ranks: tuple[tuple[str, int], ...], count: int) -> Printed:
    printer = _SlotPrinter({"mul_symbol": "dot"})
    printer.ranks = _Ranks(dict(ranks), count) if count else {}
    return _form(printer, expr, _pieces)


@lru_cache(maxsize=16384)
def _named(expr: sp.Expr, names: tuple[tuple[str, str], ...], ranks: tuple[tuple[str, int], ...], count: int) -> Printed:
    by_name = dict(names)
    printer = _Printer({"symbol_names": {s: by_name[s.name] for s in expr.free_symbols if s.name in by_name}, "mul_symbol": None})
    printer.ranks = _Ranks(dict(ranks), count) if count else {}
    return _form(printer, expr, None)


def printed(expr: sp.Expr, names: Mapping[sp.Symbol, str] | Mapping[str, str] | None = None, ranks: Mapping[sp.Symbol, int] | None = None,
            dots: bool = True) -> Printed:
    """`expr` printed once, for filling with `Printed.fill` and `Printed.lines`.

    With `dots` (a centred dot between factors, as numbers with units need), each symbol is a slot, filled per use: the
    symbols' names, or numbers. Without, symbols stand side by side as a textbook writes them ($2 \\kappa P$), with a dot
    only between two numbers; sympy decides that by what two neighbouring factors print as, so such a form is printed
    with `names` themselves and has no slots. `ranks` orders the terms of a sum (lowest first) instead of sympy's
    alphabetical order; see `term_ranks`.
    """
    expr = sp.sympify(expr)
    used, count = _used(expr, ranks)
    if dots:
        return _slots(expr, used, count)
    by_name = {(k.name if isinstance(k, sp.Symbol) else k): v for k, v in (names or {}).items()}
    return _named(expr, tuple(sorted((s.name, by_name[s.name]) for s in expr.free_symbols if s.name in by_name)), used, count)


def slot_names(expr: sp.Expr, names: Mapping[sp.Symbol, str] | Mapping[str, str]) -> dict[str, str]:
    """`names` by symbol name, and sympy's own LaTeX for a symbol of `expr` it does not name (every slot is filled)."""
    by_name = {(k.name if isinstance(k, sp.Symbol) else k): v for k, v in names.items()}
    for s in sp.sympify(expr).free_symbols:
        if s.name not in by_name:
            by_name[s.name] = LatexPrinter().doprint(s)
    return by_name


def latex_math(expr: sp.Expr, names: Mapping[sp.Symbol, str] | Mapping[str, str], ranks: Mapping[sp.Symbol, int] | None = None,
               dots: bool = True) -> str:
    """sympy's LaTeX with our symbol names (its default for `BW_HBM` is wrong-looking), through `printed`.

    `ranks` orders the terms of a sum (lowest first) instead of sympy's alphabetical order; see `term_ranks`.
    `dots`: a product with a centred dot between factors (numbers with units need it); without, symbols side by side
    as a textbook writes them ($2 \\kappa P$), a dot only between two numbers.
    """
    return printed(expr, names, ranks, dots).fill(slot_names(expr, names))


def term_ranks(symbols: Sequence[sp.Symbol], steps: Collection[str]) -> dict[sp.Symbol, int]:
    """Ranks that print a sum in the order of the derivation: terms holding steps first, in step order; inputs after, in glossary order."""
    ordered = [s for s in symbols if s.name in steps] + [s for s in symbols if s.name not in steps]
    return {s: i for i, s in enumerate(ordered)}

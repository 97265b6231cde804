"""Evaluate a derivation in contexts and assemble the solved sheet renderers consume.

Values stay exact sympy numbers (Rationals wherever the algebra allows);
rounding happens only in the renderers. Spec files are never read here: the
front door passes a `resolve` callable that turns a table row into a Context.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import pint
import sympy as sp

from derivations import conventions
from derivations import glossary as gl
from derivations.context import BINDINGS, ENGINE_INPUTS, LAYOUT_SYMBOLS, Context, Input, default_value, fitted, input_value, layout_problem
from derivations.engine import UNIT_MARKERS, At, Claim, Derivation, Row, Solve, Step, Table
from derivations.numeric import CHECK_TOLERANCE, VALUE_LIMIT_EXPONENT, Missing, out_of_range, plan_of
from derivations.symbols import SymbolInfo
from specs.catalog import SPECS_DIR
from specs.errors import SpecError
from specs.measurements import Profile
from units import Quantity, RooflineError

Resolver = Callable[[Context, Row], Context]
#: A step of this name is the share of HBM a setup needs: above 1, the sheet and its rows say "does not fit".
FIT_STEP = "memory_fraction"


class NoValueError(RooflineError, ValueError):
    """A value asked for as a number or a Quantity where the sheet has none: the text says which and why.

    >>> import roofline
    >>> sheet = roofline.derive("batch-knee", hardware="h200", model="deepseek-v3",
    ...                         weights="fp8")
    >>> try:
    ...     sheet.results["B_max_kv"].to("1")
    ... except roofline.NoValueError as err:
    ...     print(err.missing.kind)
    none
    """

    def __init__(self, name: str, missing: Missing | None) -> None:
        self.missing = missing
        super().__init__(f"{name or 'this value'} has no value here ({missing.label if missing else 'missing'})")


@dataclass(frozen=True)
class Value:
    """An exact value with its unit and the unit a renderer should show it in; or a Missing one.

    `exact` is the number in `unit`: exact (sympy) for the sheet's own context, a float64 from the
    compiled evaluation (derivations.numeric) for a table cell or a claim evaluated elsewhere;
    `quantity`, `to` and `m_as` give it as a pint Quantity of the project's registry. A Missing
    value (`missing` set, `exact` None) raises NoValueError with its reason there, never a NaN.

    >>> import roofline
    >>> sheet = roofline.derive("decode-floor", hardware="h200", model="llama-3.1-8b")
    >>> t = sheet.results["t_floor"]
    >>> t.exact, t.unit, t.to("us")
    (458048/146484375, <Unit('second')>, <Quantity(3126.94101, 'microsecond')>)
    """

    exact: sp.Expr | builtins.float | None
    """The value in `unit`: a sympy number (a Rational wherever the algebra allows) in the sheet's context, a float in a
    table cell or a claim's other context; None when missing."""
    unit: pint.Unit
    """The value's own unit (the step's declared unit)."""
    display_unit: str | None = None
    """The unit the sheets show it in, when not its own."""
    missing: Missing | None = None
    """Why there is no value here (None when there is one)."""
    name: str = field(default="", compare=False)
    """The step, result or input this is the value of ("" for a value that is not one)."""

    @property
    def float(self) -> builtins.float:  # builtins.: inside the class, `float` is this property
        """The value in its own `unit` as a float; raises NoValueError when it is missing."""
        if self.exact is None:
            raise NoValueError(self.name, self.missing)
        return float(self.exact)

    @property
    def quantity(self) -> pint.Quantity:
        """The value as a pint Quantity of the project's registry (`units.ureg`), float magnitude, in its own `unit`.

        The exact value stays in `exact`; raises NoValueError (with the reason) when the value is missing.
        """
        return Quantity(self.float, self.unit)

    def to(self, unit: str | pint.Unit) -> pint.Quantity:
        """The value as a pint Quantity in `unit` (any unit of its dimension: "us", "GB", "token/ms")."""
        return self.quantity.to(unit)

    def m_as(self, unit: str | pint.Unit) -> builtins.float:
        """The value's magnitude in `unit`, a float."""
        return float(self.quantity.m_as(unit))


@dataclass(frozen=True)
class SolvedStep:
    step: Step
    latex: str
    value: Value
    #: the value of every symbol in the step's expression
    operands: Mapping[sp.Symbol, Value]
    #: for a step that is an identity for this model or chip (a dense model's E_read = 1, P_read = P_base): what it reduces
    #: to (one symbol or a number); a sheet leaves it out of its body and says so once. None: the step says something here
    identity: sp.Expr | None = None

    @property
    def applies(self) -> bool:
        """False for a step a sheet does not print here: n/a for this model or chip, or an identity for it."""
        return self.identity is None and not (self.value.missing is not None and self.value.missing.kind == "n/a")


@dataclass(frozen=True)
class SolvedInput:
    name: str
    info: SymbolInfo
    value: Value
    is_set: bool
    meaning: str


@dataclass(frozen=True)
class SolvedTable:
    title: str
    note: str
    columns: tuple[tuple[str, str], ...]  # (result name, symbol latex)
    rows: tuple[tuple[str, tuple[Value | None, ...], str], ...]  # label, cells, why n/a
    #: per row, the inputs it sets as (input name, symbol LaTeX, value) when its label is left to the renderer
    settings: tuple[tuple[tuple[str, str, Value], ...], ...] = ()
    #: per row, whether its label is the derivation's prose (may hold $math$) rather than a spec's name
    authored: tuple[bool, ...] = ()
    #: per row, True when its setup does not fit in memory (sheets with a memory-fraction step)
    overflows: tuple[bool, ...] = ()
    #: per row, (hardware name, model name) when the row names both and no label: the renderer gives each its own column
    parts: tuple[tuple[str, str] | None, ...] = ()


@dataclass(frozen=True)
class SolvedClaim:
    text: str
    #: None when one side has no value here (see `left.missing` / `right.missing`)
    holds: bool | None
    left: Value
    right: Value
    left_name: str
    right_name: str
    where: str
    #: the unit read as a plain number on whichever side carries it ("" when the units match)
    convert: str = ""


@dataclass(frozen=True)
class Sheet:
    """A derivation solved in one context: what every renderer consumes.

    `results` maps each headline result's name to its Value; `values` maps every
    step's name to its Value; `inputs` holds each scenario input with its value and
    whether it was set. A Value converts to a pint Quantity (`sheet.results["t_step"].to("us")`).

    >>> import roofline
    >>> sheet = roofline.derive("decode-floor", hardware="h200", model="llama-3.1-8b")
    >>> list(sheet.results)
    ['weight_bytes', 't_floor', 'tokens_per_s_ceiling', 'kv_bytes_per_token', 't_step']
    >>> sheet.values["kv_bytes_step"].to("GiB")
    <Quantity(1.0, 'gibibyte')>
    >>> [(i.name, str(i.value), i.is_set) for i in sheet.inputs][:3]
    [('batch', '1', False), ('tokens_per_step', '1 token', False), ('context', '8,192 tokens', False)]
    """

    derivation: Derivation
    """The question: its steps, symbols, inputs, claims."""
    context: Context
    """What it is evaluated for: hardware, model, precisions and the inputs set."""
    context_label: str
    """The chip and the model as the sheets name them: "NVIDIA H200 SXM 141GB · Llama 3.1 8B"."""
    spec_facts: tuple[tuple[str, str], ...]
    """(label, text) for the specs and precisions used."""
    inputs: tuple[SolvedInput, ...]
    """Every scenario input with its value (`.value`) and whether it was set (`.is_set`)."""
    bound: tuple[tuple[SymbolInfo, Value], ...]
    """The values bound from the specs, per symbol."""
    steps: tuple[SolvedStep, ...]
    """Every step with its value (`.value`), in order; `values` maps them by name."""
    results: Mapping[str, Value]
    """The headline results by name."""
    tables: tuple[SolvedTable, ...]
    """The headline table across hardware and models, then the sheet's own tables."""
    claims: tuple[SolvedClaim, ...]
    """Each number the question's teaser claims, checked (`.holds`)."""
    conventions: tuple[str, ...] = field(default=conventions.CONVENTIONS)
    """The conventions printed on every sheet."""
    overflow: Value | None = None
    """The share of HBM the setup needs when above 1 (it does not fit); None when it fits or the sheet does not ask."""
    sources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(what, URLs) for each spec the sheet reads: where its figures come from (the specs' research notes are `roofline show`'s)."""

    @property
    def latex_names(self) -> Mapping[sp.Symbol, str]:
        return self.derivation.symbols.latex_names()

    @property
    def values(self) -> Mapping[str, Value]:
        """Every step's value by step name, in step order (the headline results among them)."""
        return {st.step.name: st.value for st in self.steps}


def _to_sympy(q: pint.Quantity, target: pint.Unit) -> sp.Expr:
    magnitude = q.to(target).magnitude
    if isinstance(magnitude, Fraction):
        return sp.Rational(magnitude.numerator, magnitude.denominator)
    if isinstance(magnitude, int):
        return sp.Integer(magnitude)
    return sp.nsimplify(magnitude, rational=True)


def input_values(d: Derivation, ctx: Context, symbols: set[sp.Symbol] | None = None) -> dict[sp.Symbol, sp.Expr | Missing]:
    """Exact values, in each symbol's declared unit, of every symbol the derivation needs (or only `symbols`).

    A spec-bound symbol that this model or chip does not have (K of an MLA
    model, the L2 of a chip that lists none) is Missing, and so is every step
    that uses it; a user input that fails to parse raises.
    """
    units = d.symbols.units()
    values: dict[sp.Symbol, sp.Expr | Missing] = {}
    by_symbol = {i.symbol: i for i in d.inputs}
    for s in d.free_symbols if symbols is None else symbols:
        if s in by_symbol:
            q, _ = input_value(by_symbol[s], ctx)
        else:
            try:
                q = BINDINGS[s](ctx)
            except SpecError as err:
                values[s] = Missing("n/a", err.message, err)
                continue
        values[s] = _to_sympy(q, units[s])
    _check_layout(d, ctx, values)
    return values


def _check_layout(d: Derivation, ctx: Context, values: dict[sp.Symbol, sp.Expr | Missing]) -> None:
    """A layout (tp, dp, ep) that is no layout of the model makes its inputs Missing, with the one-line reason as the error:
    the sheet's own context raises it (solve_sheet), a table row shows n/a."""
    present = [s for s in LAYOUT_SYMBOLS if s in values]
    missing = _layout_missing(d, ctx, present)
    if missing is not None:
        for s in present:
            values[s] = missing


def _layout_missing(d: Derivation, ctx: Context, present: Sequence[sp.Symbol]) -> Missing | None:
    """Why the layout of `ctx` is no layout of its model, as the Missing value of its inputs; None when it is one (or when
    `present`, the layout symbols read, holds neither dp nor ep: tensor parallelism alone needs no check)."""
    if not (set(LAYOUT_SYMBOLS) - {gl.n_tp}) & set(present):
        return None
    by_symbol = {i.symbol: i for i in d.inputs}
    degree = {s: int(input_value(by_symbol[s], ctx)[0].magnitude) if s in by_symbol else 1 for s in LAYOUT_SYMBOLS}
    problem = layout_problem(ctx.model, degree[gl.n_tp], degree[gl.n_dp], degree[gl.n_ep])
    if problem is None:
        return None
    name, reason = problem
    return Missing("n/a", reason, SpecError("--set", name, reason))


def layout_error(values: Mapping[sp.Symbol, sp.Expr | Missing]) -> SpecError | None:
    """The layout's error in these input values (see _check_layout), or None."""
    for s in LAYOUT_SYMBOLS:
        v = values.get(s)
        if isinstance(v, Missing) and v.error is not None and v.error.field in ("ep", "dp"):
            return v.error
    return None


def needed_steps(d: Derivation, names: Sequence[str]) -> set[str]:
    """The steps that `names` depend on, themselves included (an At step needs the step it evaluates)."""
    need = set(names)
    for step in reversed(d.steps):
        if step.name in need:
            need |= {s.name for s in _free_symbols(step.expr) if s.name in d.expanded}
            if isinstance(step, At):
                need.add(step.of)
    return need


def evaluate(d: Derivation, ctx: Context, only: Sequence[str] | None = None) -> dict[str, sp.Expr | Missing]:
    """Every step's exact value in `ctx`, by step name; with `only`, just those steps and what they need.

    A step that uses a Missing value is Missing for the same reason; a closed
    form whose root falls outside its domain (not a finite positive number) is
    Missing with the reason its Solve states. `only` lets a table row or a
    claim skip steps it does not need.
    """
    steps = d.steps
    symbols = None
    if only is not None:
        need = needed_steps(d, only)
        steps = tuple(s for s in d.steps if s.name in need)
        symbols = set().union(*(d.symbols_of[s.name] for s in steps))
    values = input_values(d, ctx, symbols)
    out: dict[str, sp.Expr | Missing] = {}
    for step in steps:
        v = _step_value(d, step, values)
        values[step.s] = v
        out[step.name] = v
    return out


def input_floats(d: Derivation, ctx: Context, names: frozenset[str]) -> dict[str, float | Missing]:
    """Float values, in each symbol's declared unit, of the inputs and spec-bound symbols named (as `input_values`, in float64).

    A spec-bound value is read once per set of specs (chip, model, precisions, second chip and model) and unit: a table's
    rows and a figure's marks share them.
    """
    units = d.symbols.units()
    by_name = {i.symbol.name: i for i in d.inputs}
    symbols = _symbols_by_name(d)
    specs = (ctx.hardware, ctx.model, ctx.weights, ctx.kv, ctx.math, ctx.second_hardware, ctx.second_model)
    k = tuple(id(x) for x in specs)
    hit = _BOUND.get(k)
    if hit is None or any(a is not b for a, b in zip(hit[0], specs, strict=True)):
        if len(_BOUND) > 4096:
            _BOUND.clear()
        hit = _BOUND[k] = (specs, {})
    bound = hit[1]
    values: dict[str, float | Missing] = {}
    for name in names:
        s = symbols[name]
        u = units[s]
        if name in by_name:
            inp = by_name[name]
            if inp.name in ctx.overrides:
                values[name] = float(ctx.overrides[inp.name].to(u).magnitude)
            elif inp.name in ENGINE_INPUTS:  # the context's engine profile supplies it
                values[name] = float(input_value(inp, ctx)[0].to(u).magnitude)
            else:
                values[name] = _default_float(inp, u)
            continue
        v = bound.get((name, u))
        if v is None:
            try:
                v = float(BINDINGS[s](ctx).to(u).magnitude)
            except SpecError as err:
                v = Missing("n/a", err.message, err)
            bound[(name, u)] = v
        values[name] = v
    layout = [s for s in LAYOUT_SYMBOLS if s.name in values]
    missing = _layout_missing(d, ctx, layout)
    if missing is not None:
        for s in layout:
            values[s.name] = missing
    return values


#: spec-bound float values per set of spec objects (kept beside them, so an id is never reused for another)
_BOUND: dict[tuple[int, ...], tuple[tuple[object, ...], dict[tuple[str, pint.Unit], float | Missing]]] = {}


@lru_cache(maxsize=4096)
def _default_float(inp: Input, u: pint.Unit) -> float:
    """An input's default as a float in `u`, once per process."""
    return float(default_value(inp).to(u).magnitude)


_SYMBOLS: dict[int, tuple[Derivation, dict[str, sp.Symbol]]] = {}


def _symbols_by_name(d: Derivation) -> dict[str, sp.Symbol]:
    hit = _SYMBOLS.get(id(d))
    if hit is None or hit[0] is not d:
        hit = _SYMBOLS[id(d)] = (d, {s.name: s for s in d.free_symbols})
    return hit[1]


def evaluate_numbers(d: Derivation, ctx: Context, only: Sequence[str] | None = None) -> dict[str, float | Missing]:
    """Every step's value in `ctx` as a float64 (or Missing), by the derivation's compiled numeric plan (derivations.numeric).

    The same values as `evaluate`, to float precision (`check_numbers` compares them); with `only`, just those steps
    and what they need. Tables, claims, figures and sweeps use it; `evaluate` stays the exact reference.
    """
    plan = plan_of(d)
    values = input_floats(d, ctx, plan.reads(only))
    return plan.evaluate(values, only)


class NumericMismatchError(RooflineError):
    """The compiled evaluation disagrees with the exact one (a bug in the plan or its code, never shown as a number)."""


def check_numbers(d: Derivation, ctx: Context, got: Mapping[str, float | Missing], names: Sequence[str], where: str,
                  exact: Mapping[str, sp.Expr | Missing] | None = None) -> None:
    """The float values `got` of `names` agree with the exact evaluation in `ctx` (CHECK_TOLERANCE, relative); else
    NumericMismatchError. `exact`: that evaluation, where the caller has it already."""
    exact = evaluate(d, ctx, list(names)) if exact is None else exact
    for n in names:
        e, f = exact[n], got[n]
        if isinstance(e, Missing) or isinstance(f, Missing):
            if not (isinstance(e, Missing) and isinstance(f, Missing) and e.kind == f.kind and e.reason == f.reason):
                raise NumericMismatchError(f"{d.slug}: {where}: {n} is {_shown(f)} compiled but {_shown(e)} exactly")
            continue
        want = float(e)
        if not abs(f - want) <= CHECK_TOLERANCE * max(abs(want), abs(f)):
            raise NumericMismatchError(f"{d.slug}: {where}: {n} is {f!r} compiled but {want!r} exactly")


def _shown(v: object) -> str:
    return v.label if isinstance(v, Missing) else repr(float(v))  # type: ignore[arg-type]


def _step_value(d: Derivation, step: Step, values: Mapping[sp.Symbol, sp.Expr | Missing]) -> sp.Expr | Missing:
    """One step's value from the values of its symbols (inputs and earlier steps)."""
    if isinstance(step, At):
        return _at_value(d, step, values)
    v = _plain_value(step.expr, values)
    return v if isinstance(v, Missing) else _in_domain(step, v)


@lru_cache(maxsize=4096)
def _free_symbols(expr: sp.Expr) -> frozenset[sp.Symbol]:
    return frozenset(expr.free_symbols)


@lru_cache(maxsize=8192)
def _rational_code(expr: sp.Expr) -> tuple[Callable[..., object], tuple[sp.Symbol, ...]] | None:
    """`expr` as exact code over Fractions (derivations.numeric, `exact`) and the symbols it reads, in order; None where
    it is not rational code (a power with a symbol in its exponent, a log, a float) and sympy evaluates it."""
    from derivations import exprjson
    from derivations.numeric import PlanError, compile_function

    symbols = tuple(sorted(_free_symbols(expr), key=lambda s: s.name))
    try:
        return compile_function(exprjson.dump(expr), [s.name for s in symbols], numpy=False, exact=True), symbols
    except (exprjson.RefusedError, PlanError, RecursionError):
        return None


def _rational_value(expr: sp.Expr, known: Mapping[sp.Symbol, sp.Expr]) -> sp.Rational | None:
    """`expr` at rational `known` values, computed in Fractions: the Rational sympy's substitution gives, without building
    sympy objects; None where the code cannot say (a value or a result that is not rational, a zero denominator)."""
    code = _rational_code(expr)
    if code is None:
        return None
    f, symbols = code
    args = []
    for s in symbols:
        v = known[s]
        if not v.is_Rational:
            return None
        args.append(Fraction(int(v.p), int(v.q)))
    try:
        r = f(*args)
    except (ArithmeticError, TypeError, ValueError):  # a zero denominator (sympy's zoo), no branch, no position: sympy says
        return None
    if isinstance(r, bool) or not isinstance(r, Fraction | int):
        return None
    return sp.Rational(r.numerator, r.denominator)


def _plain_value(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr | Missing]) -> sp.Expr | Missing:
    """`expr` at `values`: a number, or the first Missing value it cannot do without.

    Where every value is a Rational and the expression rational code, the value is computed in Fractions
    (`_rational_value`): exactly the Rational substitution gives, without its sympy objects; else by substitution.
    """
    free = _free_symbols(expr)
    gone = sorted((values[s] for s in free if isinstance(values[s], Missing)), key=lambda m: m.reason)
    known = {s: values[s] for s in free if not isinstance(values[s], Missing)}
    if not gone:
        fast = _rational_value(expr, known)
        if fast is not None:
            return fast
    v: sp.Expr = _substitute(expr, known)
    if v.free_symbols:
        # a missing value the step cannot do without (a term multiplied by zero, such as
        # the all-reduce on one GPU, does not need its link bandwidth)
        return gone[0]
    if not v.is_Rational and not v.is_Float:
        v = sp.N(v, 40)  # never nsimplify: it would round 7.99999992 experts to 8
    return v


#: needed_steps of one step, per derivation (kept with the derivation it was computed for)
_NEEDS: dict[tuple[int, str], tuple[Derivation, frozenset[str]]] = {}


def _needs(d: Derivation, name: str) -> frozenset[str]:
    hit = _NEEDS.get((id(d), name))
    if hit is None or hit[0] is not d:
        hit = _NEEDS[(id(d), name)] = (d, frozenset(needed_steps(d, [name])))
    return hit[1]


def _at_value(d: Derivation, step: At, values: Mapping[sp.Symbol, sp.Expr | Missing]) -> sp.Expr | Missing:
    """An At step: its earlier step evaluated again, step by step, with the replaced symbols set to their new values.

    Only the steps that depend on a replaced symbol are evaluated again; the
    rest keep their values. Step by step, never through the expanded
    expression, so the values stay exact and cheap.
    """
    local = dict(values)
    replaced = set()
    for symbol, expr in step.where:
        local[symbol] = _plain_value(expr, values)
        replaced.add(symbol)
    of = sp.Symbol(step.of, positive=True)
    need = _needs(d, step.of)
    for s in d.steps:
        if s.name == step.name:
            break
        if s.name in need and d.symbols_of[s.name] & replaced:
            local[s.s] = _step_value(d, s, local)
    v = local[of]
    if isinstance(v, Missing):
        # an At step may say why in its own terms (on the second chip, at low load)
        return Missing(v.kind, step.none, v.error, prose=True) if step.none and v.kind == "none" else v
    return _in_domain(step, v)


#: A step's value beyond this magnitude in its own unit (or nonzero below its inverse) is out of range: no sheet needs it,
#: and no float could hold it in another unit. The inputs are read within 1e30 (specs.quantities.MAX_MAGNITUDE), so only a
#: derivation file's own formulas (a power of a power) reach it.
VALUE_LIMIT = sp.Integer(10) ** VALUE_LIMIT_EXPONENT


def in_range(v: sp.Expr) -> bool:
    """True for zero and for a magnitude from 1/VALUE_LIMIT to VALUE_LIMIT."""
    return bool(v == 0 or 1 / VALUE_LIMIT <= abs(v) <= VALUE_LIMIT)


def _in_domain(step: Step, v: sp.Expr) -> sp.Expr | Missing:
    """The value, or Missing when it is not a finite real number (or, for a closed form, not positive) or is out of range."""
    finite = v.is_extended_real is True and v.is_finite is True
    if finite and not in_range(v):
        return Missing("none", out_of_range(step.name, step.unit))
    if isinstance(step, Solve):
        if not finite or not v > 0:
            return Missing("none", step.none or f"{step.lhs} and {step.rhs} do not meet at a positive value here", prose=bool(step.none))
    elif step.none and (not finite or (not step.signed and not v > 0)):
        # a signed step (an error against a measurement) may be negative; its `none` says why it has no value at all
        return Missing("none", step.none, prose=True)
    elif not finite:
        return Missing("none", f"{step.name} is undefined here (a zero denominator)")
    return v


#: Powers up to this integer exponent are evaluated exactly; beyond it, to 40 significant digits.
MAX_EXACT_EXPONENT = 512


def _substitute(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """`expr` at `values`, exactly where that is cheap.

    A power with a symbol in its exponent ((1 - k/E)**(B*q) for experts
    touched) is exact at a small whole exponent (2 experts at one token, not
    1.9999...), but at a large batch it would expand into an exact rational of
    millions of digits, so such expressions are evaluated to 40 digits.
    """
    if expr.has(sp.Piecewise):
        expr = expr.xreplace({pw: _piecewise_value(pw, values) for pw in expr.atoms(sp.Piecewise)})
    powers = [p for p in expr.atoms(sp.Pow) if p.exp.free_symbols]
    exponents = [p.exp.xreplace(values) for p in powers]
    if all(e.is_Integer and abs(e) <= MAX_EXACT_EXPONENT for e in exponents) or any(e.free_symbols for e in exponents):
        # exact; or an exponent that has no value here, which the caller reports as missing (N would turn it into nan)
        try:
            return expr.xreplace(values)
        except (TypeError, ValueError):  # sympy cannot order a max or min of an undefined value (x / log(1)): no value
            return sp.nan
    with sp.evaluate(False):
        unevaluated = expr.xreplace(values)
    low, high = sp.N(unevaluated, 40), sp.N(unevaluated, 80)
    # a cancellation (or a 0/0, say a dense model's E - 1 = 0) shows as two precisions that disagree: no value
    if not (low.is_Number and high.is_Number and high.is_finite) or abs(low - high) > sp.Float(10) ** -25 * max(abs(high), 1):
        return sp.nan
    return low


def value_at(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """`expr` at `values` as a sheet evaluates it: a Piecewise takes the first branch whose condition holds (NaN where none does)."""
    return _substitute(expr, values)


def _piecewise_value(pw: sp.Piecewise, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """A Piecewise at `values`: the first branch whose condition holds, NaN (no value) where none does.

    A closed form solved branch by branch (engine._branch_roots) has roots that are no number in some contexts
    (a division by L - L_win = 0 when every layer has a window); a condition over such a root does not hold,
    where sympy would refuse to compare it.
    """
    for branch in pw.args:
        holds = _holds(branch.cond, values)
        if holds is None:
            return pw.xreplace(values)  # a value it needs is missing: the caller reports which
        if holds:
            return _substitute(branch.expr, values)
    return sp.nan


def _holds(cond: sp.Basic, values: Mapping[sp.Symbol, sp.Expr]) -> bool | None:
    """Whether a branch condition holds at `values`; None when a symbol it needs has no value."""
    if cond is sp.true:
        return True
    parts = cond.args if isinstance(cond, sp.And) else (cond,)
    for rel in parts:
        if not isinstance(rel, sp.core.relational.Relational):
            rel = rel.xreplace(values)
            return None if rel.free_symbols else bool(rel)
        lhs, rhs = _substitute(rel.lhs, values), _substitute(rel.rhs, values)
        if lhs.free_symbols or rhs.free_symbols:
            return None
        if not all(x.is_extended_real is True and x.is_finite is True for x in (lhs, rhs)):
            return False
        if not bool(rel.func(lhs, rhs)):
            return False
    return True


def _value(d: Derivation, name: str, exact: sp.Expr | Missing) -> Value:
    if isinstance(exact, Missing):
        return Value(None, d.symbols[name].unit, d.display_units.get(name), exact, name=name)
    return Value(exact, d.symbols[name].unit, d.display_units.get(name), name=name)


def solve_sheet(d: Derivation, ctx: Context, resolve: Resolver, grid: tuple[Row, ...]) -> Sheet:
    """The derivation evaluated in `ctx`, its tables and claims, and a headline grid over `grid`."""
    units = d.symbols.units()
    base_values = input_values(d, ctx)
    bad_layout = layout_error(base_values)
    if bad_layout is not None:
        raise bad_layout
    results = evaluate(d, ctx)
    not_applicable = [(n, results[n]) for n in d.results if isinstance(results[n], Missing) and results[n].kind == "n/a"]
    if not_applicable:
        name, why = not_applicable[0]
        if why.error is not None:
            raise why.error
        raise SpecError(d.slug, name, f"cannot be derived for {ctx.model.name} on {ctx.hardware.name}: {why.reason}")
    all_values = {**base_values, **{sp.Symbol(n, positive=True): v for n, v in results.items()}}
    steps = []
    same = identities(d, base_values, results)
    for step in d.steps:
        operands = {s: _operand(all_values[s], units[s], d.display_units.get(s.name)) for s in step.expr.free_symbols}
        steps.append(SolvedStep(step, d.symbols[step.name].latex, _value(d, step.name, results[step.name]), operands, same.get(step.name)))
    inputs = []
    for inp in d.inputs:
        q, is_set = input_value(inp, ctx)
        inputs.append(SolvedInput(inp.name, d.symbols.info(inp.symbol), Value(_to_sympy(q, units[inp.symbol]), units[inp.symbol], name=inp.name),
                                  is_set, inp.meaning))
    input_symbols = {i.symbol for i in d.inputs}
    bound = tuple(
        (d.symbols.info(s), _operand(base_values[s], units[s], None))
        for s in sorted(d.free_symbols - input_symbols, key=lambda s: _glossary_order(d, s))
    )
    headline = Table("Headline results across hardware and models", grid, d.results)
    tables = tuple(_solve_table(d, ctx, t, resolve, results) for t in (headline, *d.tables))
    claims = tuple(_solve_claim(d, ctx, c, resolve, results) for c in d.claims)
    overflow = _value(d, FIT_STEP, results[FIT_STEP]) if FIT_STEP in results and _overflows(results[FIT_STEP]) else None
    return Sheet(
        overflow=overflow,
        derivation=d,
        context=ctx,
        context_label=context_label(ctx),
        spec_facts=spec_facts(ctx),
        sources=sources(ctx),
        inputs=tuple(inputs),
        bound=bound,
        steps=tuple(steps),
        results={name: _value(d, name, results[name]) for name in d.results},
        tables=tables,
        claims=claims,
    )


def _operand(v: sp.Expr | Missing, u: pint.Unit, display_unit: str | None) -> Value:
    return Value(None, u, display_unit, v) if isinstance(v, Missing) else Value(v, u, display_unit)


def _glossary_order(d: Derivation, s: sp.Symbol) -> int:
    for i, info in enumerate(d.symbols):
        if info.symbol == s:
            return i
    return 10**6


def _row_label(row: Row, ctx: Context) -> str:
    if row.model and not row.hardware:
        return ctx.model.name
    if row.hardware and not row.model:
        return ctx.hardware.name
    return context_label(ctx)


def context_label(ctx: Context) -> str:
    second = [x.name for x in (ctx.second_hardware, ctx.second_model) if x is not None]
    return f"{ctx.hardware.name} · {ctx.model.name}" + (f" (second: {', '.join(second)})" if second else "")


def spec_facts(ctx: Context) -> tuple[tuple[str, str], ...]:
    """What the sheet is worked for: chip, model, number formats (and the second chip or model), one line each."""
    h, m = ctx.hardware, ctx.model
    facts = [
        ("Hardware", f"{h.name} ({h.key}; status {h.status})"),
        ("Model", f"{m.name} ({m.key}; {m.model_type}; status {m.status})"),
        ("Weights", ctx.weights.description + (f"; the checkpoint ships {m.quantization_summary()}" if m.quantization is not None else "")),
        ("KV cache", ctx.kv.description),
        ("Math", f"{ctx.math.math} tensor-core peak" + (f" (default: the math of {ctx.weights.name} weights)" if ctx.math_defaulted else " (set with --math)")),
    ]
    e = ctx.engine if ctx.engine is not None else fitted()  # None: a profile file is broken, and fitted() says so
    values = ", ".join(f"{k} = {v}" for k, v in e.values.items())
    facts += [("Engine profile", f"{e.name}: {e.description} ({values}; change with --engine, or --set any one input)"),
              ("Engine profile provenance", f"{e.provenance} ({shown_profile_path(e)})")]
    if ctx.second_hardware is not None:
        h2 = ctx.second_hardware
        facts.append(("Second hardware (primed symbols)", f"{h2.name} ({h2.key}; status {h2.status}); change with --second-hardware"))
    if ctx.second_model is not None:
        m2 = ctx.second_model
        facts.append(("Second model (primed symbols)", f"{m2.name} ({m2.key}; {m2.model_type}; status {m2.status}); change with --second-model"))
    return tuple(facts)


#: A web address in a spec's `source` text: RFC 3986's characters up to the first that is not one (a space, a brace, a quote,
#: a bracket of prose) or a delimiter of the text around it (a comma, a semicolon, a parenthesis); never ending in a full stop.
_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&*+=%]*[A-Za-z0-9\-_~/#\[\]@!$&*+=%]")


def urls(text: str) -> tuple[str, ...]:
    """The web addresses a spec's `source` field names, each once, in order."""
    return tuple(dict.fromkeys(_URL.findall(text)))


def sources(ctx: Context) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(spec name, its source URLs) for the chip, the model and any second chip or model."""
    specs = [ctx.hardware, ctx.model, *(x for x in (ctx.second_hardware, ctx.second_model) if x is not None)]
    return tuple((x.name, urls(x.source)) for x in specs)


#: Spec-bound counts that switch a structure off at 0 or 1 (a dense model's E = k_E = 1, L_MoE = 0, P_exp = 0;
#: an MLA model's one KV stream). Byte widths and conventions are never structural: 1 B per FP8 weight is a number, not an identity.
_STRUCTURAL_UNITS = ("dimensionless", "parameter")
#: (slug, id of the derivation, step, the structural values it reads) -> what the step reduces to, or None
_IDENTITY_CACHE: dict[tuple[object, ...], sp.Expr | None] = {}


def identities(d: Derivation, values: Mapping[sp.Symbol, sp.Expr | Missing], results: Mapping[str, sp.Expr | Missing]) -> dict[str, sp.Expr]:
    """The steps that are identities in this context, each with what it reduces to.

    A step is an identity when its expression, with the context's structural
    values substituted (spec-bound counts that are 0 or 1 here, unit markers
    set to 1, and earlier identities that are numbers), reduces to one symbol
    or one finite number; a step with no value whose expression then reduces
    to nan (0/0: the intensity of shared experts a model does not have) has
    nothing to compute here and is reported as nan. Headline results, closed forms and steps evaluated
    elsewhere (At) are never identities: they are what a sheet is about. The
    reduction is cached by the structural values a step reads, so a table of
    many contexts pays for it once per kind of model.
    """
    units = d.symbols.units()
    structural = {s: v for s, v in values.items()
                  if s in BINDINGS and s not in UNIT_MARKERS and not isinstance(v, Missing) and v in (0, 1)
                  and str(units[s]) in _STRUCTURAL_UNITS}
    constants: dict[sp.Symbol, sp.Expr] = {}
    out: dict[str, sp.Expr] = {}
    for step in d.steps:
        value = results.get(step.name)
        if isinstance(step, (Solve, At)) or step.name in d.results or (isinstance(value, Missing) and value.kind == "n/a"):
            continue
        free = _free_symbols(step.expr)
        reads = {s: v for s, v in (*structural.items(), *constants.items()) if s in free}
        if not reads:
            continue
        key = (d.slug, id(d), step.name, tuple(sorted((s.name, v) for s, v in reads.items())))
        if key not in _IDENTITY_CACHE:
            markers = {u: sp.S.One for u in UNIT_MARKERS if u in free}
            reduced = step.expr.xreplace({**reads, **markers})
            same = reduced.is_Symbol or (reduced.is_Number and reduced.is_finite is True)
            # a ratio of parts that are zero here (a dense model's shared-expert intensity, 0/0): nothing to compute
            empty = isinstance(value, Missing) and reduced is sp.nan
            _IDENTITY_CACHE[key] = reduced if same or empty else None
        reduced = _IDENTITY_CACHE[key]
        if reduced is not None:
            out[step.name] = reduced
            if reduced.is_Number and reduced is not sp.nan:
                constants[step.s] = reduced
    return out


def shown_profile_path(e: Profile) -> str:
    """A shipped profile's file relative to the project (the same on every machine); another as its path shows."""
    try:
        return e.path.resolve().relative_to(SPECS_DIR.parent.resolve()).as_posix()
    except ValueError:
        return e.where


def _solve_table(d: Derivation, ctx: Context, t: Table, resolve: Resolver, results: Mapping[str, sp.Expr | Missing]) -> SolvedTable:
    """A table's rows, each evaluated by the compiled plan in floats; one row with values is checked against the exact
    evaluation: the row worked for the sheet's own context where there is one (its exact values, `results`, are known), else the first."""
    rows, settings, overflows, parts = [], [], [], []
    by_name = {i.name: i for i in d.inputs}
    fit = (FIT_STEP,) if FIT_STEP in d.expanded else ()
    names = (*t.columns, *fit)
    check: tuple[Context, dict[str, float | Missing], str] | None = None
    for row in t.rows:
        setting = () if row.label else tuple(_setting(d, by_name[n], v) for n, v in row.set.items() if n in by_name)
        settings.append(setting)
        try:
            row_ctx = resolve(ctx, row)
            values = evaluate_numbers(d, row_ctx, names)
        except SpecError as err:
            rows.append((row.label or row.model or row.hardware or "?", tuple(None for _ in t.columns), err.message))
            overflows.append(False)
            parts.append(None)
            continue
        if check is None or (check[0] != ctx and row_ctx == ctx):
            check = (row_ctx, values, row.label or _row_label(row, row_ctx))
        both = not row.label and row.hardware and row.model
        parts.append((row_ctx.hardware.name, row_ctx.model.name) if both else None)
        overflows.append(bool(fit) and _overflows(values[FIT_STEP]))
        label = row.label or (_row_label(row, row_ctx) if row.model or row.hardware or not setting else "")
        rows.append((label, tuple(_value(d, c, values[c]) for c in t.columns), ""))
    if check is not None:
        row_ctx, values, label = check
        check_numbers(d, row_ctx, values, names, f"table {t.title!r}, row {label!r}", results if row_ctx == ctx else None)
    columns = tuple((c, d.symbols[c].latex) for c in t.columns)
    return SolvedTable(t.title, t.note, columns, tuple(rows), tuple(settings), tuple(bool(r.label) for r in t.rows), tuple(overflows),
                       tuple(parts))


def _overflows(v: sp.Expr | Missing) -> bool:
    return not isinstance(v, Missing) and v > 1


def _setting(d: Derivation, inp: Input, text: str) -> tuple[str, str, Value]:
    u = d.symbols.info(inp.symbol).unit
    return inp.name, d.symbols.info(inp.symbol).latex, Value(_to_sympy(inp.parse(text, "table row"), u), u)


def _solve_claim(d: Derivation, ctx: Context, c: Claim, resolve: Resolver, results: Mapping[str, sp.Expr | Missing]) -> SolvedClaim:
    try:
        values = evaluate_numbers(d, resolve(ctx, c.where), [n for n in (c.left, c.right) if n in d.expanded]) if c.where else results
    except SpecError as err:
        values = {n: Missing("n/a", err.message) for n in (c.left, c.right)}
    left = _value(d, c.left, values[c.left])
    if c.right in d.expanded:
        right = _value(d, c.right, values[c.right])
    else:
        q = Quantity(c.right)
        right = Value(_to_sympy(q, q.units), q.units, left.display_unit if q.units == left.unit else None)
    holds = None
    if left.exact is not None and right.exact is not None:
        lv, rv = claim_sides(c, left, right)
        slack = c.rel_tol * max(abs(lv), abs(rv))
        holds = lv >= rv - slack if c.at_least else abs(lv - rv) <= slack
    return SolvedClaim(c.text, holds, left, right, c.left, c.right if c.right in d.expanded else "", c.where.label if c.where else "", c.convert)


def claim_sides(c: Claim, left: Value, right: Value) -> tuple[float, float]:
    """Both sides as floats in one unit: the right side in the left's unit, or each read as a number under the claim's stated conversion."""
    lq, rq = Quantity(left.float, left.unit), Quantity(right.float, right.unit)
    if c.convert:
        per = Quantity(1, c.convert)
        lq, rq = (x / per if x.dimensionality == per.dimensionality else x for x in (lq, rq))
    return float(lq.to_base_units().magnitude), float(rq.to(lq.units).to_base_units().magnitude)


__all__ = ["Input", "Missing", "NoValueError", "NumericMismatchError", "Sheet", "SolvedStep", "SolvedTable", "Value", "check_numbers", "evaluate", "evaluate_numbers", "solve_sheet"]

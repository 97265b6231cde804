"""The full path to a sheet: a Derivation in a Context, solved by derivations.engine.run and checked against the exact evaluation.

`derivations.engine.run` builds every sheet from plain data: the derivation's blueprint and numeric plan, and a `Setup` (a
context's values as Fractions). Here a pint Context becomes that Setup (`setup_of`: each chip, model and format's values
computed once, by the bindings of derivations.engine.context). Every value is computed by the compiled plan (`evaluate`,
`evaluate_numbers`, `solve_sheet`); sympy substitution (`evaluate_exactly`) is only the reference it is checked against:
by a build (`solve_sheet(check=True)`: the sheet's own steps, where a Fraction must be the Rational sympy gives and a float
agree to CHECK_TOLERANCE, and one row of every table), for a user's derivation file on every run, and by the tests.
Spec files are never read here: the front door passes a `resolve` callable that turns a table row into a Context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache

import mpmath
import pint
import sympy as sp
from sympy.core.evalf import PrecisionExhausted

from ...specs.catalog import SPECS_DIR
from ...specs.errors import SpecError
from ...specs.hardware import Hardware
from ...specs.measurements import Profile
from ...specs.models import Architecture
from ...specs.precisions import MATH_PRECISIONS, precision
from ...units import RooflineError, unit
from ..physics import glossary as gl
from . import run
from .context import (
    BINDINGS,
    CONSTANT_BINDINGS,
    ENGINE_INPUTS,
    HARDWARE_BINDINGS,
    KV_PEAK_BINDINGS,
    LAYOUT_SYMBOLS,
    MODEL_BINDINGS,
    PEAK_BINDINGS,
    PRECISION_BINDINGS,
    WEIGHT_BINDINGS,
    Context,
    Input,
    checkpoint_warning,
    default_value,
    fitted,
    input_value,
    model_components,
)
from .declare import UNIT_MARKERS, At, Derivation, Row, Solve, Step, needed_steps
from .numeric import CHECK_TOLERANCE, VALUE_LIMIT_EXPONENT, Missing, out_of_range
from .planning import plan_of
from .run import FIT_STEP, Identity, NoValueError, Sheet, SolvedClaim, SolvedInput, SolvedStep, SolvedTable, Value
from .setup import Bindings, ProfileData, Setup, SpecData, context_label, make_setup, sources, spec_facts, urls

Resolver = Callable[[Context, Row], Context]


def _to_sympy(q: pint.Quantity, target: pint.Unit) -> sp.Expr:
    magnitude = q.to(target).magnitude
    if isinstance(magnitude, Fraction):
        return sp.Rational(magnitude.numerator, magnitude.denominator)
    if isinstance(magnitude, int):
        return sp.Integer(magnitude)
    return sp.nsimplify(magnitude, rational=True)


def context_values(d: Derivation, ctx: Context, symbols: set[sp.Symbol] | None = None) -> dict[sp.Symbol, sp.Expr | Missing]:
    """Exact values, in each symbol's declared unit, of every symbol the derivation needs (or only `symbols`), read from the
    pint Context by the bindings: the exact reference's own reading (`input_values` is the compiled path's), and what a fit
    binds before it compiles the step model as a function of the efficiencies (derivations.physics.validation), which needs
    no engine profile.

    A spec-bound symbol that this model or chip does not have (K of an MLA
    model, the L2 of a chip that lists none) is Missing, and so is every step
    that uses it; a user input that fails to parse raises.
    """
    units = d.symbols.units()
    values: dict[sp.Symbol, sp.Expr | Missing] = {}
    by_symbol = {i.symbol: i for i in d.inputs}
    for s in d.free_symbols if symbols is None else symbols:
        if s in by_symbol:
            q, _ = input_value(by_symbol[s], ctx, d.inputs)
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
    """A layout (tp, dp, ep) that is no layout of the model makes its inputs Missing, with the one-line reason as the error
    (the rule once: derivations.engine.run.layout_missing): the sheet's own context raises it, a table row shows n/a."""
    present = [s for s in LAYOUT_SYMBOLS if s in values]
    missing = run.layout_missing(d.blueprint, setup_of(d, ctx, strict=False), [s.name for s in present], defaults_of(d))
    if missing is not None:
        for s in present:
            values[s] = missing


def evaluate(d: Derivation, ctx: Context, only: Sequence[str] | None = None) -> dict[str, sp.Expr | Missing]:
    """Every step's value in `ctx`, by step name, as a sympy number (or Missing); with `only`, just those steps and what they
    need. Computed by the compiled plan, exactly where the arithmetic is rational (a Rational), else in float64 (a Float):
    the one evaluator every caller runs (quiz, grading, figures, validation). `evaluate_exactly` is the reference it is
    checked against at build time and in the tests."""
    return {name: _as_sympy(v) for name, v in evaluate_values(d, ctx, only).items()}


def evaluate_values(d: Derivation, ctx: Context, only: Sequence[str] | None = None) -> dict[str, Fraction | float | Missing]:
    """`evaluate`'s values as the plan gives them, a Fraction (exact) or a float, for a caller that wants plain numbers (a
    float of a Fraction is Python's, correctly rounded and fast where a sympy Rational's goes through mpmath)."""
    values = run.input_values(d.blueprint, setup_of(d, ctx, strict=False), plan_of(d).reads(only), defaults_of(d))
    return plan_of(d).evaluate(dict(values), only, exact=True)


def input_values(d: Derivation, ctx: Context, symbols: set[sp.Symbol] | None = None) -> dict[sp.Symbol, sp.Expr | Missing]:
    """Exact values, in each symbol's declared unit, of every symbol the derivation needs (or only `symbols`), as sympy
    numbers: the compiled path's reading of the context (derivations.engine.run.input_values). A spec-bound symbol this model
    or chip does not have (K of an MLA model) is Missing; a layout that is no layout of the model makes its inputs Missing."""
    names = [s.name for s in (d.free_symbols if symbols is None else symbols)]
    values = run.input_values(d.blueprint, setup_of(d, ctx, strict=False), names, defaults_of(d))
    return {sp.Symbol(n, positive=True): _as_sympy(v) for n, v in values.items()}


def _as_sympy(v: Fraction | float | Missing) -> sp.Expr | Missing:
    if isinstance(v, Missing):
        return v
    if isinstance(v, Fraction):  # sympy's own converter of a Fraction (lowest terms already): no gcd of thousand-digit parts again
        return sp.sympify(v)
    return sp.Float(v)


def evaluate_exactly(d: Derivation, ctx: Context, only: Sequence[str] | None = None) -> dict[str, sp.Expr | Missing]:
    """Every step's exact value in `ctx` by sympy substitution, by step name; with `only`, just those steps and what they need:
    the reference the compiled plan is checked against (`check_numbers`, a build, the tests), never a second evaluator.

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
    values = context_values(d, ctx, symbols)
    out: dict[str, sp.Expr | Missing] = {}
    for step in steps:
        v = _step_value(d, step, values)
        values[step.s] = v
        out[step.name] = v
    return out


def evaluate_numbers(d: Derivation, ctx: Context, only: Sequence[str] | None = None) -> dict[str, float | Missing]:
    """Every step's value in `ctx` as a float64 (or Missing), by the derivation's compiled numeric plan (derivations.engine.numeric).

    The same values as `evaluate`, to float precision (`check_numbers` compares them); with `only`, just those steps
    and what they need. Tables, claims, figures and sweeps use it; `evaluate` stays the exact reference.
    """
    return run.evaluate_numbers(d.blueprint, plan_of(d), setup_of(d, ctx, strict=False), defaults_of(d), only)


def input_floats(d: Derivation, ctx: Context, names: frozenset[str], layout: bool = True) -> dict[str, float | Missing]:
    """Float values, in each symbol's declared unit, of the inputs and spec-bound symbols named (as `input_values`, in float64;
    `layout=False`: the layout's inputs unchecked, see derivations.engine.run.input_values)."""
    values = run.input_values(d.blueprint, setup_of(d, ctx, strict=False), names, defaults_of(d), layout)
    return {k: (v if isinstance(v, Missing) else float(v)) for k, v in values.items()}


class NumericMismatchError(RooflineError):
    """The compiled evaluation disagrees with the exact one (a bug in the plan or its code, never shown as a number)."""


def check_numbers(d: Derivation, ctx: Context, got: Mapping[str, float | Missing], names: Sequence[str], where: str,
                  exact: Mapping[str, sp.Expr | Missing] | None = None) -> None:
    """The float values `got` of `names` agree with the exact evaluation in `ctx` (CHECK_TOLERANCE, relative); else
    NumericMismatchError. `exact`: that evaluation, where the caller has it already."""
    exact = evaluate_exactly(d, ctx, list(names)) if exact is None else exact
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
    """`expr` as exact code over Fractions (derivations.engine.codegen, `exact`) and the symbols it reads, in order; None where
    it is not rational code (a power with a symbol in its exponent, a log, a float) and sympy evaluates it."""
    from . import exprjson
    from .codegen import PlanError, compile_function

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
        try:
            v = sp.N(v, 40)  # never nsimplify: it would round 7.99999992 experts to 8
        except ZeroDivisionError:  # a zero denominator that substitution left unevaluated (floor(1/2)**-3): sympy's 1/0
            return sp.zoo
        except PrecisionExhausted:  # the whole part of a number too large to find at any working precision (ceil(exp(1e3))):
            return sp.Integer(10) ** 400  # beyond every value limit, so out of range, as the compiled evaluation's overflow says
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
    # the exact zeros first: a term they remove (a power multiplied by zero, the prompts of a decode-only step) does not
    # decide how what is left is evaluated
    zeros = {x: v for x, v in values.items() if v == 0 and x in expr.free_symbols}
    if zeros:
        expr = expr.xreplace(zeros)
    expr = _trivial_powers(expr, values)
    powers = [p for p in expr.atoms(sp.Pow) if p.exp.free_symbols]
    exponents = [p.exp.xreplace(values) for p in powers]
    if all(e.is_Integer and abs(e) <= MAX_EXACT_EXPONENT for e in exponents) or any(e.free_symbols for e in exponents):
        # exact; or an exponent that has no value here, which the caller reports as missing (N would turn it into nan)
        try:
            return substitute(expr, values)
        except (TypeError, ValueError):  # sympy cannot order a max or min of an undefined value (x / log(1)): no value
            return sp.nan
    # each such power from its exact base and exponent in mpmath, the rest exact around it: sympy's evalf of the
    # whole unevaluated tree re-evaluates every max() and min() inside an exponent at each precision it tries
    low, high = _with_powers_at(expr, powers, exponents, values, 40), _with_powers_at(expr, powers, exponents, values, 80)
    # a cancellation (or a 0/0, say a dense model's E - 1 = 0) shows as two precisions that disagree: no value
    if not (low.is_Number and high.is_Number and high.is_finite) or abs(low - high) > sp.Float(10) ** -25 * max(abs(high), 1):
        return sp.nan
    return sp.Float(low, 40)


def _trivial_powers(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """`expr` with each power whose base is 0 or 1 here put in, innermost first: a dense model's (1 - k/E)^(B q) is
    (1 - 1/1)^(B q) = 0 at any exponent, so it does not send the rest to 40 digits however long the prompt."""
    while True:
        known = {}
        for p in expr.atoms(sp.Pow):
            if not p.exp.free_symbols or any(inner.exp.free_symbols for inner in p.base.atoms(sp.Pow)):
                continue
            base, exponent = p.base.xreplace(values), p.exp.xreplace(values)
            if base == 1 and exponent.is_finite:
                known[p] = sp.S.One
            elif base == 0 and exponent.is_positive:
                known[p] = sp.S.Zero
        if not known:
            return expr
        expr = expr.xreplace(known)


def _with_powers_at(expr: sp.Expr, powers: Sequence[sp.Pow], exponents: Sequence[sp.Expr], values: Mapping[sp.Symbol, sp.Expr],
                    digits: int) -> sp.Expr:
    """`expr` at `values` with each of `powers` (exponent already at `values`) as a `digits`-digit float."""
    numeric = {}
    for p, e in zip(powers, exponents, strict=True):
        base = _substitute(p.base, values)
        if not (base.is_Number and e.is_Number and base.is_finite and e.is_finite) or (base < 0 and not e.is_Integer):
            return sp.nan
        with mpmath.workdps(digits + 10):
            v = mpmath.power(mpmath.mpf(sp.Float(base, digits + 10)._mpf_), mpmath.mpf(sp.Float(e, digits + 10)._mpf_))
        if not isinstance(v, mpmath.mpf) or not mpmath.isfinite(v):
            return sp.nan
        numeric[p] = sp.Float(v, digits)
    try:
        return sp.N(substitute(expr, {**values, **numeric}), digits)
    except (TypeError, ValueError):
        return sp.nan


def substitute(expr: sp.Basic, values: Mapping[sp.Basic, sp.Basic]) -> sp.Basic:
    """`expr` with `values` put in and every node rebuilt (so evaluated) once: a closed form is a tree that repeats its
    subexpressions many times (a max() of steps that each hold the step model), and sympy's xreplace rebuilds every copy."""
    memo: dict[sp.Basic, sp.Basic] = {}

    def walk(e: sp.Basic) -> sp.Basic:
        hit = memo.get(e)
        if hit is None:
            hit = values[e] if e in values else e if not e.args else e.func(*(walk(a) for a in e.args))
            memo[e] = hit
        return hit

    return walk(expr)


def value_at(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """`expr` at `values` as a sheet evaluates it: a Piecewise takes the first branch whose condition holds (NaN where none does)."""
    return _substitute(expr, values)


def _piecewise_value(pw: sp.Piecewise, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """A Piecewise at `values`: the first branch whose condition holds, NaN (no value) where none does.

    A closed form solved branch by branch (declare._branch_roots) has roots that are no number in some contexts
    (a division by L - L_win = 0 when every layer has a window); a condition over such a root does not hold,
    where sympy would refuse to compare it.
    """
    for branch in pw.args:
        holds = _holds(branch.cond, values)
        if holds is None:
            try:
                return pw.xreplace(values)  # a value it needs is missing: the caller reports which
            except TypeError:  # a value it needs is no number (NaN, compared in a condition): no value
                return sp.nan
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


# --- setups from contexts ------------------------------------------------------------------------------------------


def _magnitude(q: pint.Quantity, target: pint.Unit) -> Fraction:
    m = q.to(target).magnitude
    return m if isinstance(m, Fraction) else Fraction(m) if isinstance(m, int) else Fraction(repr(float(m)))


def _part(bind: Callable[[], pint.Quantity], symbol: sp.Symbol) -> Fraction | Missing:
    """A binding's value in its symbol's unit, or Missing n/a with the spec's own error."""
    try:
        return _magnitude(bind(), gl.GLOSSARY.info(symbol).unit)
    except SpecError as err:
        return Missing("n/a", err.message, err)


_SPECS: dict[int, tuple[object, SpecData]] = {}


def spec_data(spec: Hardware | Architecture) -> SpecData:
    """A chip or a model as plain data: its names and the value of every symbol it binds (once per spec object)."""
    hit = _SPECS.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    if isinstance(spec, Hardware):
        data = SpecData(spec.key, spec.name, str(spec.path), spec.status, spec.source,
                        {s.name: _part(lambda f=f: f(spec), s) for s, f in HARDWARE_BINDINGS.items()},
                        peaks={m: _part(lambda m=m: PEAK_BINDINGS[gl.pi](spec, m), gl.pi) for m in MATH_PRECISIONS})
    else:
        data = SpecData(spec.key, spec.name, str(spec.path), spec.status, spec.source,
                        {s.name: _part(lambda f=f: f(spec), s) for s, f in MODEL_BINDINGS.items()}, model_type=spec.model_type,
                        quantization=spec.quantization_summary() if spec.quantization is not None else None,
                        experts=spec.moe.experts if spec.moe else None, checkpoint_warning=checkpoint_warning(spec),
                        stored_weights=spec.weight_formats, components=model_components(spec),
                        max_context=spec.max_position_embeddings)
    if len(_SPECS) > 1024:
        _SPECS.clear()
    _SPECS[id(spec)] = (spec, data)
    return data


class _PrecisionValues(dict):
    """One role's precision-bound values by precision name, computed on first use (any name `precision` knows)."""

    def __init__(self, role: str) -> None:
        super().__init__()
        self.role = role

    def __missing__(self, name: str) -> dict[str, Fraction]:
        p = precision(name)
        self[name] = {s.name: _part(lambda f=f: f(p), s) for s, f in PRECISION_BINDINGS[self.role].items()}
        return self[name]


@lru_cache(maxsize=1)
def bindings() -> Bindings:
    """Where each spec-bound symbol takes its value (derivations.engine.context's part tables), as plain data."""
    parts = {**{s.name: "hardware" for s in HARDWARE_BINDINGS}, **{s.name: "peak" for s in PEAK_BINDINGS},
             **{s.name: "peak_kv" for s in KV_PEAK_BINDINGS},
             **{s.name: "model" for s in MODEL_BINDINGS}, **{s.name: role for role, t in PRECISION_BINDINGS.items() for s in t},
             **{s.name: "weights" for s in WEIGHT_BINDINGS},
             **{s.name: "constant" for s in CONSTANT_BINDINGS}}
    twins = {**{t.name: ("hardware", s.name) for s, t in gl.SECOND_CHIP.items()}, **{t.name: ("model", s.name) for s, t in gl.SECOND_MODEL.items()}}
    constants = {s.name: _part(f, s) for s, f in CONSTANT_BINDINGS.items()}
    return Bindings(parts, twins, {role: _PrecisionValues(role) for role in PRECISION_BINDINGS}, constants)


_ENGINES: dict[int, tuple[Profile, ProfileData]] = {}


def engine_data(e: Profile) -> ProfileData:
    """An engine profile as plain data: its inputs parsed (each in its input's unit, as `input_value` reads them)."""
    hit = _ENGINES.get(id(e))
    if hit is None or hit[0] is not e:
        from .context import SCENARIO_INPUTS, _profile_value

        parsed = {i.name: _magnitude(_profile_value(e, i), unit(i.unit)) for i in SCENARIO_INPUTS if i.name in ENGINE_INPUTS}
        hit = _ENGINES[id(e)] = (e, ProfileData(e.name, e.description, tuple(e.values.items()), parsed, e.provenance, shown_profile_path(e),
                                                      tuple(e.summary.items()), len(e.records)))
    return hit[1]


def setup_of(d: Derivation, ctx: Context, strict: bool = True) -> Setup:
    """A Context as plain data (derivations.engine.setup.Setup): every spec-bound value as a Fraction, the inputs `d` reads that
    it sets as magnitudes in their own units.

    A context without an engine profile (the profile file is broken) takes the default one, which raises the file's own
    error where `d` has engine inputs the context does not set; `strict=False` (a value asked for by name) leaves the
    profile out instead, and only an engine input that is then read raises (derivations.engine.run.input_magnitude), so
    `roofline calibrate --write-defaults` can evaluate the step model's other steps to mend the file."""
    by_name = {i.name: i for i in d.inputs}
    overrides = {name: _magnitude(q, unit(by_name[name].unit)) for name, q in ctx.overrides.items() if name in by_name}
    engine = ctx.engine
    if engine is None and any(i.name in ENGINE_INPUTS and i.name not in overrides for i in d.inputs):
        try:
            engine = fitted()
        except SpecError:
            if strict:
                raise
    return make_setup(bindings(), spec_data(ctx.hardware), spec_data(ctx.model), ctx.weights, ctx.kv, ctx.math, overrides,
                      ctx.math_defaulted, spec_data(ctx.second_hardware) if ctx.second_hardware else None,
                      spec_data(ctx.second_model) if ctx.second_model else None, engine_data(engine) if engine is not None else None)


@lru_cache(maxsize=4096)
def _default(inp: Input) -> Fraction | None:
    """An input's default as a magnitude in its own unit (None for an engine input: the engine profile supplies it)."""
    if inp.name in ENGINE_INPUTS:
        return None
    return _magnitude(default_value(inp), unit(inp.unit))


def defaults_of(d: Derivation) -> dict[str, Fraction]:
    """The defaults of `d`'s inputs, each a magnitude in its own unit (engine inputs aside: the engine profile supplies them)."""
    out = {}
    for inp in d.inputs:
        v = _default(inp)
        if v is not None:
            out[inp.name] = v
    return out


# --- the full path ----------------------------------------------------------------------------------------------------


def solve_sheet(d: Derivation, ctx: Context, resolve: Resolver, grid: tuple[Row, ...], identities: run.Identities | None = None,
                check: bool = False) -> Sheet:
    """The derivation evaluated in `ctx`, its tables and claims, and a headline grid over `grid` (derivations.engine.run.solve).
    `identities` finds what the steps reduce to (default: `identity_finder`, sympy).

    `check`: also evaluate exactly (`evaluate_exactly`, sympy) and compare, every step of the sheet's own context and one
    row of every table, raising NumericMismatchError on a disagreement: what `roofline build` does for every shipped sheet,
    and every run of a user's derivation file (whose formulas no build has checked). Otherwise sympy evaluates nothing."""
    contexts: dict[int, Context] = {}

    def setup(c: Context) -> Setup:
        s = setup_of(d, c)
        contexts[id(s)] = c
        return s

    own = setup(ctx)

    def resolve_setup(s: Setup, row: Row) -> Setup:
        return setup(resolve(contexts[id(s)], row))

    def check_row(s: Setup, got: Mapping[str, object], names: Sequence[str], where: str, exact: Mapping[str, object] | None) -> None:
        check_numbers(d, contexts[id(s)], got, names, where, exact)  # type: ignore[arg-type]

    sheet = run.solve(d.blueprint, plan_of(d), bindings(), own, defaults_of(d), resolve_setup, grid, identities or identity_finder(d),
                      check_row if check else None)
    if check:
        _check_own(d, {s.step.name: s.value for s in sheet.steps}, evaluate_exactly(d, ctx))
    return replace(sheet, derivation=d, context=ctx)


def _check_own(d: Derivation, got: Mapping[str, Value], exact: Mapping[str, sp.Expr | Missing]) -> None:
    """The sheet's own steps agree with the exact evaluation: a Fraction is the Rational sympy gives, a float agrees to
    CHECK_TOLERANCE, a Missing has the same kind and reason; else NumericMismatchError."""
    for name, v in got.items():
        e = exact[name]
        f = v.missing if v.missing is not None else v.exact
        if isinstance(f, Fraction) and not isinstance(e, Missing) and e.is_Rational:
            if f != Fraction(int(e.p), int(e.q)):
                raise NumericMismatchError(f"{d.slug}: the sheet's own context: {name} is {f} compiled but {e} exactly")
            continue
        check_numbers(d, None, {name: f if isinstance(f, Missing) else float(f)}, [name], "the sheet's own context", {name: e})  # type: ignore[arg-type]


#: (slug, id of the derivation, the structure it is read for) -> what its steps reduce to
_IDENTITY_CACHE: dict[tuple[object, ...], dict[str, Identity]] = {}


def identity_finder(d: Derivation) -> run.Identities:
    """What `d`'s steps reduce to in a setup of a given structure (derivations.engine.run.Identities): `identities`, remembered
    per structure, so a table of many contexts pays for it once per kind of model."""
    def find(structural: Mapping[str, Fraction], not_here: frozenset[str]) -> Mapping[str, Identity]:
        key = (d.slug, id(d), tuple(sorted(structural.items())), not_here)
        hit = _IDENTITY_CACHE.get(key)
        if hit is None:
            if len(_IDENTITY_CACHE) > 4096:
                _IDENTITY_CACHE.clear()
            hit = _IDENTITY_CACHE[key] = identities(d, structural, not_here)
        return hit
    return find


def identities_known(d: Derivation) -> list[tuple[tuple[dict[str, Fraction], frozenset[str]], dict[str, Identity]]]:
    """Every kind of setup this process has found `d`'s identities for (`identity_finder`), with what it found: what the
    light path stores (roofline.compiled)."""
    return [((dict(k[2]), k[3]), found) for k, found in list(_IDENTITY_CACHE.items()) if k[0] == d.slug and k[1] == id(d)]


def identities(d: Derivation, structural: Mapping[str, Fraction], not_here: frozenset[str] = frozenset()) -> dict[str, Identity]:
    """The steps that are identities for a setup of this structure, each with what it reduces to.

    A step is an identity when its expression, with the structural values substituted (spec-bound counts that are 0 or
    1 here: derivations.engine.run.structure), unit markers set to 1, and earlier identities that are numbers, reduces to one
    symbol or one finite number; one that reduces to nan (0/0: the intensity of shared experts a model does not have) has
    nothing to compute here where it has no value (a `nan` Identity: derivations.engine.run applies it only there). Headline
    results, closed forms, steps evaluated elsewhere (At) and steps that are n/a here (`not_here`) are never identities.
    """
    values = {sp.Symbol(n, positive=True): sp.Rational(v.numerator, v.denominator) for n, v in structural.items()}
    constants: dict[sp.Symbol, sp.Expr] = {}
    out: dict[str, Identity] = {}
    for step in d.steps:
        if isinstance(step, (Solve, At)) or step.name in d.results or step.name in not_here:
            continue
        free = _free_symbols(step.expr)
        reads = {s: v for s, v in (*values.items(), *constants.items()) if s in free}
        if not reads:
            continue
        markers = {u: sp.S.One for u in UNIT_MARKERS if u in free}
        reduced = step.expr.xreplace({**reads, **markers})
        if reduced is sp.nan:
            out[step.name] = Identity(nan=True)
        elif reduced.is_Symbol:
            out[step.name] = Identity(symbol=reduced.name)
        elif reduced.is_Number and reduced.is_finite is True:
            out[step.name] = Identity(number=Fraction(int(reduced.p), int(reduced.q)) if reduced.is_Rational else float(reduced))
            constants[step.s] = reduced
    return out


def shown_profile_path(e: Profile) -> str:
    """A shipped profile's file relative to the project (the same on every machine); another as its path shows."""
    try:
        return e.path.resolve().relative_to(SPECS_DIR.parent.resolve()).as_posix()
    except ValueError:
        return e.where


__all__ = ["FIT_STEP", "Input", "Missing", "NoValueError", "NumericMismatchError", "Sheet", "SolvedClaim", "SolvedInput", "SolvedStep",
           "SolvedTable", "Value", "check_numbers", "context_label", "context_values", "evaluate", "evaluate_exactly", "evaluate_numbers", "setup_of", "solve_sheet",
           "sources", "spec_facts", "urls"]

"""Values for grading, every sympy call on a candidate under a time limit: the context's values, an expression at a point.

The time limits (`SYMPY_SECONDS`: `time_limit`, `bounded`; `caught` for work linear
in a size-bounded formula, with no clock); the identities that hold for the
context's model family and its conventions (`IDENTITIES`, `identities`,
`apply_identities`); the step to grade (`target`) and the exact values of its
symbols in the context (`context_values`); a formula with the sheet's step names
expanded (`expand`); an expression's value at a point to `DIGITS` digits (`num`);
random points inside the inputs' domains (`points`, `values_at`); and a number
answer read with its unit (`is_number`, `parse_answer`).
`roofline.grading.compare` grades with them.
"""

from __future__ import annotations

import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import mpmath
import pint
import sympy as sp

from ..derivations.engine import formula as fm
from ..derivations.engine.context import BARE_NUMBER_UNITS, BINDINGS, SCENARIO_INPUTS, Context, Input, input_value
from ..derivations.engine.declare import Derivation
from ..derivations.physics import glossary as gl
from ..derivations.physics.primitives import ArgMax, Pick
from ..specs.errors import SpecError, suggest
from ..units import Quantity, RooflineError, unit_text

#: The longest any one sympy operation on a candidate may run, in seconds.
SYMPY_SECONDS = 2.0
#: Random points at which two formulas are compared, and the digits they are evaluated to.
CHECK_POINTS = 6
DIGITS = 40


class GradeError(RooflineError, ValueError):
    """An answer or a target that cannot be graded: one line."""


# --- time limits ---------------------------------------------------------------------------------------------------

class _Timeout(BaseException):
    """Raised by the alarm inside a bounded sympy call (a BaseException, so sympy's own `except Exception` cannot swallow it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds` (SIGALRM, re-fired every 50 ms until the block ends).

    Only the main thread receives signals; elsewhere the block runs unbounded and
    only the formula language's size limits (`derivations.engine.formula`) apply.

    An alarm that lands where Python cannot raise (a `__del__`, a weakref callback)
    is reported as unraisable and swallowed; the next one, 50 ms on, interrupts the
    block. While the block runs, unraisable reports are held: the limit's own are
    dropped, any other is handed to the previous hook once the clock is stopped, so
    no alarm can land inside that hook. The teardown stops the clock before it does
    anything else, and an alarm that lands while it does so is caught there.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    armed = True
    held: list[object] = []

    def alarm(signum: int, frame: object) -> None:
        if armed:
            raise _Timeout

    def hold(report: object) -> None:
        if not isinstance(getattr(report, "exc_value", None), _Timeout):
            held.append(report)

    previous_hook = sys.unraisablehook
    sys.unraisablehook = hold
    previous = signal.signal(signal.SIGALRM, alarm)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    start = time.monotonic()
    try:
        yield
    finally:
        while armed:  # an alarm may land before the clock is stopped: stop it again
            try:
                armed = False
                signal.setitimer(signal.ITIMER_REAL, 0)
            except _Timeout:
                armed = True
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = previous_hook
        for report in held:
            previous_hook(report)
        if outer:  # an enclosing limit keeps what is left of its time
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 0.001), 0.05)


_SYMPY_GIVES_UP = (RecursionError, NotImplementedError, TypeError, ValueError, ZeroDivisionError, AttributeError, OverflowError)


def bounded(fn: Callable[..., object], *args: object, seconds: float = SYMPY_SECONDS) -> object | None:
    """fn(*args), or None when it runs past `seconds` or sympy gives up on it."""
    try:
        with time_limit(seconds):
            return fn(*args)
    except (_Timeout, *_SYMPY_GIVES_UP):
        return None


def caught(fn: Callable[..., object], *args: object) -> object | None:
    """fn(*args), or None when sympy gives up on it: no clock, for work linear in a size-bounded formula (walking, compiling).

    Its answer does not depend on how loaded the machine is, as a wall-clock limit's would.
    """
    try:
        return fn(*args)
    except _SYMPY_GIVES_UP:
        return None


# --- identities that hold for one architecture ---------------------------------------------------------------------

@dataclass(frozen=True)
class Identity:
    """`symbol = expr` for every model of one family (checked against the context's values before it is used)."""

    symbol: sp.Symbol
    expr: sp.Expr
    family: str


def _family(name: str, pairs: Sequence[tuple[sp.Symbol, sp.Expr | int]]) -> tuple[Identity, ...]:
    return tuple(Identity(s, sp.sympify(e), name) for s, e in pairs)


#: The relations the spec layer's bindings (derivations.engine.context.BINDINGS) build in, by family; see specs/models.py
#: (ParamCounts, kv_elements_per_token) and the glossary's meanings, which state each.
IDENTITIES: dict[str, tuple[Identity, ...]] = {
    "gqa": _family("GQA attention", ((gl.n_kv, gl.K), (gl.w_k, gl.H), (gl.w_v, gl.H), (gl.w_c, 2 * gl.H), (gl.h_k, gl.H), (gl.h_v, gl.H),
                                      (gl.e_kv, 2 * gl.L_att * gl.K * gl.H))),
    "mla": _family("multi-head latent attention", ((gl.n_kv, 1), (gl.w_k, gl.r_kv + gl.d_R), (gl.w_v, gl.r_kv), (gl.w_c, gl.r_kv + gl.d_R),
                                                   (gl.h_k, gl.d_nope + gl.d_R), (gl.h_v, gl.d_v), (gl.e_kv, gl.L_att * (gl.r_kv + gl.d_R)))),
    "dense": _family("a dense model", ((gl.E, 1), (gl.k_E, 1), (gl.L_moe, 0), (gl.P_exp, 0), (gl.E_s, 0), (gl.F_E, 0),
                                       (gl.P_base, gl.P_active), (gl.P_matmul, gl.P_active))),
    "moe": _family("a mixture of experts", ((gl.P_base, gl.P_active - gl.L_moe * gl.k_E * gl.P_exp),
                                            (gl.P_matmul, gl.P_active + gl.L_moe * (gl.E - gl.k_E) * gl.P_exp))),
    # every layer attends over a KV cache: no recurrent layer, no state
    "attention": _family("a model whose every layer attends", ((gl.L_att, gl.L), (gl.L_rec, 0), (gl.s_st, 0), (gl.e_rec, 0))),
    # no sparse attention: no indexer, and every windowed layer keeps only its window
    "dense_attention": _family("attention without a sparse top-k", ((gl.s_idx, 0), (gl.e_idx, 0), (gl.L_drop, gl.L_win))),
    "params": _family("the parameter counts", ((gl.P_total, gl.P_matmul + gl.P_emb + gl.P_norm), (gl.P_noarith, gl.P_emb + gl.P_norm))),
    # one weight format throughout (every unquantized checkpoint, any --weights X): the routed experts are as wide as the rest;
    # applied only where it holds at the context's values, like every identity
    "formats": _family("one weight format throughout", ((gl.b_e, gl.b_w),)),
}
#: Conventions and unit markers, replaced by their values (read from the bindings, so a changed convention follows).
CONVENTION_SYMBOLS = (gl.kappa, gl.kappa_attn, gl.u_token, gl.u_param, gl.u_bit)


def exact(q: pint.Quantity, u: pint.Unit) -> sp.Expr:
    m = q.to(u).magnitude
    if isinstance(m, float):
        m = Fraction(Decimal(repr(m)))
    m = Fraction(m)
    return sp.Rational(m.numerator, m.denominator)


def _bound_value(s: sp.Symbol, ctx: Context) -> sp.Expr | None:
    """A spec-bound symbol's exact value in the context, or None where the chip or model has none."""
    try:
        return exact(BINDINGS[s](ctx), gl.GLOSSARY.info(s).unit)
    except SpecError:
        return None


def model_families(m: object) -> list[str]:
    """The identity families (keys of IDENTITIES) a model belongs to."""
    families = ["mla" if m.mla is not None else "gqa", "moe" if m.moe is not None else "dense", "params", "formats"]
    if not m.recurrent_layers:
        families.append("attention")
    if not m.sparse_layers:
        families.append("dense_attention")
    return families


def identities(ctx: Context) -> tuple[Identity, ...]:
    """The identities of the context's model families and its conventions, each one that holds at the context's values."""
    families = model_families(ctx.model)
    out = []
    for ident in (i for f in families for i in IDENTITIES[f]):
        left = _bound_value(ident.symbol, ctx)
        values = {s: _bound_value(s, ctx) for s in ident.expr.free_symbols}
        if left is None or any(v is None for v in values.values()):
            continue
        if ident.expr.xreplace(values) == left:
            out.append(ident)
    for s in CONVENTION_SYMBOLS:
        v = _bound_value(s, ctx)
        if v is not None:
            out.append(Identity(s, v, "the sheets' conventions"))
    return tuple(out)


def apply_identities(expr: sp.Expr, ids: Sequence[Identity]) -> sp.Expr:
    mapping = {i.symbol: i.expr for i in ids}
    for _ in range(6):  # P_total -> P_matmul + ... -> P_active + ...: a few rounds reach every chain
        if not expr.free_symbols & set(mapping):
            return expr
        with sp.evaluate(False):
            expr = expr.xreplace(mapping)
    return expr


def free_after_identities(expr: sp.Expr, ids: Sequence[Identity]) -> set[sp.Symbol]:
    """The symbols `expr` still depends on once the identities are applied and the result evaluated (a dense model's
    L_moe = 0 takes the batch out of its weight bytes); the unevaluated ones where evaluating runs out of time."""
    unevaluated = apply_identities(expr, ids)
    mapping = {i.symbol: i.expr for i in ids}
    evaluated = bounded(lambda: sp.sympify(unevaluated).xreplace(mapping).doit())
    return set(evaluated.free_symbols) if isinstance(evaluated, sp.Expr) else set(unevaluated.free_symbols)


# --- the target and the context's values ---------------------------------------------------------------------------

def target(d: Derivation, name: str) -> str:
    """The step to grade against; one line listing the sheet's results for a name it does not have."""
    if not isinstance(name, str) or name not in d.expanded:
        shown = str(name)[:40]
        steps = [s.name for s in d.steps]
        raise GradeError(f"{d.slug} has no result {shown!r}{suggest(shown, steps)}; its results: {', '.join(d.results)} "
                         f"(any of its steps also works: {', '.join(n for n in steps if n not in d.results)})")
    return name


def title(d: Derivation, name: str) -> str:
    """A step's title in words, else its meaning; "" for no step."""
    if not name or name not in d.expanded:
        return ""
    step = d.step(name)
    return step.title or step.meaning or name


def inputs(d: Derivation) -> dict[sp.Symbol, Input]:
    out = {i.symbol: i for i in SCENARIO_INPUTS}
    out.update({i.symbol: i for i in d.inputs})
    return out


def context_values(d: Derivation, ctx: Context, symbols: set[sp.Symbol], unused: bool = False) -> dict[sp.Symbol, sp.Expr]:
    """Exact values of `symbols` in the context: inputs as set or defaulted, spec-bound symbols from the specs.

    With `unused`, a spec-bound symbol the chip or model does not give is 1 (in its unit) instead of an error: the
    caller has checked that the step has a value here, so the symbol sits in a term this context multiplies by zero
    (the all-to-alls' scale-out link at ep = 1), and any value leaves the step's value as it is.
    """
    by_symbol = inputs(d)
    units = d.symbols.units()
    out: dict[sp.Symbol, sp.Expr] = {}
    for s in symbols:
        if s in by_symbol:
            inp = by_symbol[s]
            q = input_value(inp, ctx, d.inputs)[0] if inp in d.inputs else inp.parse(inp.default, "default")
            out[s] = exact(q, units[s])
        elif s in BINDINGS:
            try:
                out[s] = exact(BINDINGS[s](ctx), units[s])
            except SpecError as err:
                if unused:
                    out[s] = sp.Integer(1)
                    continue
                raise GradeError(f"{s.name} has no value for {ctx.model.name} on {ctx.hardware.name}: {err.message}") from None
        else:
            raise GradeError(f"{s.name} has no value in {d.slug}: it is neither one of its inputs nor bound from a spec; "
                             f"use the sheet's symbols (`roofline derive {d.slug} --format json` lists its steps)")
    return out


def expand(d: Derivation, expr: sp.Expr) -> sp.Expr:
    """`expr` with the sheet's step names replaced by their expansions (not re-evaluated: see expansion.expand_steps)."""
    mapping = {sp.Symbol(n, positive=True): e for n, e in d.expanded.items()}
    with sp.evaluate(False):
        return expr.xreplace({s: mapping[s] for s in expr.free_symbols if s in mapping})


class _UnsupportedError(Exception):
    """A node the numeric walk does not know: the caller falls back to sympy's own evaluation."""


def _snap(x: mpmath.mpf) -> mpmath.mpf:
    """A value within 40-digit rounding of a whole number, as that number (counts are whole; ceil(2.0000...01) must be 2)."""
    r = mpmath.nint(x)
    return r if abs(x - r) <= mpmath.mpf(10) ** -30 * max(1, abs(x)) else x


def _mp(e: sp.Expr, values: Mapping[sp.Symbol, mpmath.mpf]) -> mpmath.mpf:
    """`e` at `values` in mpmath at DIGITS digits, node by node (never an exact power of a huge exponent)."""
    if e.is_Symbol:
        return values[e]
    if e.is_Integer:
        return mpmath.mpf(int(e))
    if e.is_Rational:
        return mpmath.mpf(int(e.p)) / int(e.q)
    if e.is_Float:
        return mpmath.mpf(e._mpf_)
    if isinstance(e, sp.Add):
        return mpmath.fsum(_mp(a, values) for a in e.args)
    if isinstance(e, sp.Mul):
        out = mpmath.mpf(1)
        for a in e.args:
            out *= _mp(a, values)
        return out
    if isinstance(e, sp.Pow):
        base, exponent = _mp(e.base, values), _mp(e.exp, values)
        if base < 0 and exponent != mpmath.nint(exponent):
            raise _UnsupportedError
        if base == 0 and exponent < 0:
            raise ZeroDivisionError
        return base ** exponent
    if isinstance(e, sp.Max | sp.Min):
        args = [_mp(a, values) for a in e.args]
        return max(args) if isinstance(e, sp.Max) else min(args)
    if isinstance(e, sp.ceiling | sp.floor):
        x = _snap(_mp(e.args[0], values))
        return mpmath.ceil(x) if isinstance(e, sp.ceiling) else mpmath.floor(x)
    if isinstance(e, sp.log):
        return mpmath.log(_mp(e.args[0], values))
    if isinstance(e, sp.exp):
        return mpmath.exp(_mp(e.args[0], values))
    if isinstance(e, sp.Piecewise):  # the first piece whose condition holds
        for piece, condition in e.args:
            if _holds(condition, values):
                return _mp(piece, values)
        raise _UnsupportedError
    if isinstance(e, ArgMax):
        return mpmath.mpf(_argmax([_mp(a, values) for a in e.args]))
    if isinstance(e, Pick):  # only the value picked is evaluated
        i = _snap(_mp(e.args[0], values))
        if i != mpmath.nint(i) or not 0 <= int(i) < len(e.args) - 1:
            raise _UnsupportedError
        return _mp(e.args[1 + int(i)], values)
    raise _UnsupportedError


_RELATIONS = {sp.Eq: lambda a, b: a == b, sp.Ne: lambda a, b: a != b, sp.Lt: lambda a, b: a < b, sp.Le: lambda a, b: a <= b,
              sp.Gt: lambda a, b: a > b, sp.Ge: lambda a, b: a >= b}


def _holds(condition: sp.Basic, values: Mapping[sp.Symbol, mpmath.mpf]) -> bool:
    """Whether a Piecewise condition holds at `values`: true, false, or one relation between two sides. Sides within rounding
    of each other are compared here only where both are symbols or numbers (an input's exact value against a constant);
    a near tie of computed sides, which rounding could have made or broken, is left to sympy's exact evaluation."""
    if condition is sp.true or condition is sp.false:
        return bool(condition)
    relation = _RELATIONS.get(type(condition))
    if relation is None:
        raise _UnsupportedError
    left, right = (_mp(side, values) for side in condition.args)
    near = abs(left - right) <= mpmath.mpf(10) ** -30 * max(1, abs(left), abs(right))
    if near and not all(side.is_Symbol or side.is_Number for side in condition.args):
        raise _UnsupportedError
    return bool(relation(left, right))


def _argmax(args: list[mpmath.mpf]) -> int:
    """ArgMax's index (the first on a tie) of values at DIGITS digits; a near tie, which rounding could have made or broken,
    is left to sympy's exact evaluation (_UnsupportedError)."""
    best = max(range(len(args)), key=lambda i: (args[i], -i))
    if any(i != best and abs(args[i] - args[best]) <= mpmath.mpf(10) ** -30 * max(1, abs(args[best])) for i in range(len(args))):
        raise _UnsupportedError
    return best


def num(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Float | None:
    """`expr` at `values` to DIGITS digits, or None when it has no finite real value there."""
    free = expr.free_symbols  # once: sympy walks the whole tree for it on every call
    if free - set(values):
        return None

    def walk() -> mpmath.mpf:
        with mpmath.workdps(DIGITS + 5):
            return _mp(expr, {s: _mp(sp.sympify(v), {}) for s, v in values.items() if s in free})

    try:
        with time_limit(SYMPY_SECONDS):
            got = walk()
        if not isinstance(got, mpmath.mpf) or not mpmath.isfinite(got):
            return None
        return sp.Float(got, DIGITS)
    except _UnsupportedError:
        pass
    except (_Timeout, ZeroDivisionError, OverflowError, ValueError, TypeError, RecursionError):
        return None
    with sp.evaluate(False):
        substituted = expr.xreplace(dict(values))
    v = bounded(lambda: sp.N(substituted.doit(), DIGITS))  # doit: a function left unevaluated evaluates
    if v is None or not isinstance(v, sp.Expr) or v.free_symbols or not v.is_number:
        return None
    if v.is_extended_real is not True or v.is_finite is not True:
        return None
    return sp.Float(v, DIGITS)


# --- random points inside the domains ------------------------------------------------------------------------------

def _sample_input(inp: Input, v0: sp.Expr, rng: random.Random) -> sp.Expr:
    if inp.domain in ("count", "whole"):
        # small counts mostly: a term like (1 - k/E)**B that vanishes at large B would hide a difference
        top = 5 if rng.random() < 0.7 else 14
        return sp.Integer(max(1, round(2 ** rng.uniform(0, top))) - (inp.domain == "whole"))
    if inp.domain == "fraction":
        return sp.Float(rng.uniform(0.05, 1.0), DIGITS)
    if inp.domain == "at_least_one":
        return sp.Float(1 + 2 ** rng.uniform(-3, 3), DIGITS)
    base = v0 if v0 > 0 else sp.Rational(1, 1000)
    return sp.Float(base * sp.Float(2 ** rng.uniform(-3, 3), DIGITS), DIGITS)


def points(d: Derivation, symbols: set[sp.Symbol], ctxvals: Mapping[sp.Symbol, sp.Expr], seed: str, n: int) -> list[dict[sp.Symbol, sp.Expr]]:
    """`n` random points: inputs inside their domains, spec-bound counts whole, other spec values around the context's."""
    rng = random.Random(seed)
    by_symbol = inputs(d)
    units = d.symbols.units()
    out = []
    for _ in range(n):
        point: dict[sp.Symbol, sp.Expr] = {}
        for s in sorted(symbols, key=lambda s: s.name):
            v0 = ctxvals.get(s, sp.S.One)
            if s in by_symbol:
                point[s] = _sample_input(by_symbol[s], v0, rng)
            elif units[s].dimensionless:
                point[s] = sp.Integer(rng.randint(1, 64))
            else:
                point[s] = sp.Float((v0 if v0 > 0 else 1) * sp.Float(2 ** rng.uniform(-2, 2), DIGITS), DIGITS)
        out.append(point)
    return out


def values_at(exprs: Sequence[sp.Expr], points: Sequence[Mapping[sp.Symbol, sp.Expr]]) -> list[list[sp.Float]] | None:
    """Each expression at each point where all of them have a value; None where too few points do."""
    rows = []
    for p in points:
        row = [num(e, p) for e in exprs]
        if all(v is not None for v in row):
            rows.append(row)
    return rows if len(rows) >= max(2, len(points) // 2) else None


# --- reading a number answer ---------------------------------------------------------------------------------------

#: a number as roofline prints one (thousands grouped with commas: "2,140") or as typed ("2140", "1.2e3"), then its unit
_NUMBER = re.compile(r"^\s*([-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?)\s*([A-Za-z%µ][A-Za-z0-9_*/()^. µ%-]*)?\s*$")


def _number_parts(text: object) -> tuple[str, str] | None:
    """(number, unit) of a number with an optional unit, or None. `1e100*P_active` is a formula, not 1 of a unit `e100*P_active`."""
    m = _NUMBER.match(text) if isinstance(text, str) and len(text) <= 100 else None
    if m is None:
        return None
    number, unit_part = m.group(1), (m.group(2) or "").strip()
    if unit_part[:1] in ("e", "E") and text.strip()[len(number):len(number) + 1] in ("e", "E"):
        return None
    return number.replace(",", ""), unit_part


def is_number(text: str) -> bool:
    """True when `text` reads as a number with an optional unit ("4.5 ms", "8", "1.2e3 token/s"), not a formula."""
    return _number_parts(text) is not None


def parse_answer(text: str, step_unit: pint.Unit, name: str) -> pint.Quantity:
    """A number and its unit (pint's unit parser; the number is read as a decimal, never evaluated)."""
    parts = _number_parts(text)
    if parts is None:
        raise GradeError(f"answer: expected a number with its unit, such as '4.5 ms', found {str(text)[:40]!r}")
    number, unit_part = parts
    magnitude = Fraction(Decimal(number))
    if magnitude and not Fraction(1, 10**300) < abs(magnitude) < 10**300:
        raise GradeError(f"answer: {number} is out of range: a value between 1e-300 and 1e300 is expected")
    if not unit_part:
        if step_unit.dimensionless:
            return Quantity(magnitude, "")
        if unit_text(step_unit) in BARE_NUMBER_UNITS:
            return Quantity(magnitude, step_unit)
        raise GradeError(f"answer: {number} has no unit, and {name} is in {unit_text(step_unit)}: give one (e.g. '{number} {_example_unit(step_unit)}')")
    u = fm.parse_unit(unit_part, "answer")
    return Quantity(magnitude, u)


def _example_unit(u: pint.Unit) -> str:
    text = unit_text(u)
    return {"s": "ms", "B": "GB", "B/s": "TB/s", "flop": "Tflop", "flop/s": "Tflop/s"}.get(text, text)


__all__ = ["IDENTITIES", "GradeError", "Identity", "apply_identities", "bounded", "identities", "is_number", "time_limit"]

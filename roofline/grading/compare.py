"""Grade an answer against a sheet: a candidate's formula or number, compared with the engine's own step.

A formula (in the formula language, `derivations.engine.formula`) is expanded down to
glossary symbols and the sheet's inputs, as the step itself is
(`Derivation.expanded`; the candidate may use step names too), and compared at
three levels of generality:

1. as written: the two expansions over free symbols;
2. for the context's architecture: the identities that hold for this model
   family (`IDENTITIES`: e_kv = 2 L K H for GQA, P_base = P_active for a dense
   model, ...), each checked against the context's own values before it is used,
   and the conventions (kappa = 2 flop per weight per token, ...);
3. for the context's chip, model and precisions: every spec-bound symbol at its
   value, the inputs still free.

At each level the two sides are first compared numerically at random points
inside the inputs' domains (40 digits), then, where they agree, the difference
is simplified to zero. Where they differ the verdict is, in this order: off by a
constant factor (with the known slips that give that factor: `SLIPS`, and ratios
such as 8 or 1.024^3), off by a factor of one symbol, missing or extra additive
terms (the step distributed through its own steps, each term named by the step it
comes from), an approximation that holds within a tolerance at the context (the
sheet's max() terms on the side they take there; where the error passes the
tolerance is found by a search over each input's domain), or different.

A number with its unit is compared with the step's value in the context: within
a tolerance, or off by a ratio, with the slips and the left-out terms that give
that ratio.

Every sympy operation on a candidate whose cost can grow faster than its size
(expanding, simplifying, evaluating symbolically) runs under a time limit
(`SYMPY_SECONDS`), and the formula language bounds the input's size before any
of it runs. Walking and compiling a formula, linear in that size, run without a
clock, so where an approximation stops holding does not depend on how loaded
the machine is. Nothing
here reads a file or formats text: a `Verdict` is data, `roofline.grading.words` words it.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pint
import sympy as sp

from derivations.engine import formula as fm
from derivations.engine.context import BARE_NUMBER_UNITS, BINDINGS, MAX_COUNT, SCENARIO_INPUTS, Context, Input, input_value
from derivations.engine.declare import At, Derivation, Solve, needed_steps
from derivations.engine.sheet import Missing, evaluate
from derivations.engine.symbols import Symbols
from derivations.physics import glossary as gl
from specs.errors import SpecError, shown, suggest
from units import Quantity, RooflineError, unit, unit_text

#: A formula within this relative error of the step at the sheet's context is an approximation there; past it, it stops holding.
APPROXIMATION_TOLERANCE = 0.10
#: A number within this relative error of the step's value is right (an interview answer carries two or three figures).
NUMBER_TOLERANCE = 0.05
#: The longest any one sympy operation on a candidate may run, in seconds.
SYMPY_SECONDS = 2.0
#: Random points at which two formulas are compared, and the digits they are evaluated to.
CHECK_POINTS = 6
DIGITS = 40
#: Two values at a random point are equal when they agree to this relative precision (far above 40-digit rounding).
EQUAL_RTOL = sp.Float("1e-25", DIGITS)
#: The most additive terms a step is split into, and the most of them (and of the candidate's) one explanation names.
MAX_TERMS = 12
MAX_CHANGED_TERMS = 5
#: The dimensions a person leaves implicit in a bare number: "2 P" FLOPs for kappa P, "B q" for a count of tokens.
COUNT_DIMENSIONS = frozenset({"[compute]", "[token]", "[parameter]"})


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
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum: int, frame: object) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, alarm)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
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
                                      (gl.e_kv, 2 * gl.L * gl.K * gl.H))),
    "mla": _family("multi-head latent attention", ((gl.n_kv, 1), (gl.w_k, gl.r_kv + gl.d_R), (gl.w_v, gl.r_kv), (gl.w_c, gl.r_kv + gl.d_R),
                                                   (gl.h_k, gl.d_nope + gl.d_R), (gl.h_v, gl.d_v), (gl.e_kv, gl.L * (gl.r_kv + gl.d_R)))),
    "dense": _family("a dense model", ((gl.E, 1), (gl.k_E, 1), (gl.L_moe, 0), (gl.P_exp, 0), (gl.E_s, 0), (gl.F_E, 0),
                                       (gl.P_base, gl.P_active), (gl.P_matmul, gl.P_active))),
    "moe": _family("a mixture of experts", ((gl.P_base, gl.P_active - gl.L_moe * gl.k_E * gl.P_exp),
                                            (gl.P_matmul, gl.P_active + gl.L_moe * (gl.E - gl.k_E) * gl.P_exp))),
    "params": _family("the parameter counts", ((gl.P_total, gl.P_matmul + gl.P_emb + gl.P_norm), (gl.P_noarith, gl.P_emb + gl.P_norm))),
}
#: Conventions and unit markers, replaced by their values (read from the bindings, so a changed convention follows).
CONVENTION_SYMBOLS = (gl.kappa, gl.kappa_attn, gl.u_token, gl.u_param, gl.u_bit)


def _exact(q: pint.Quantity, u: pint.Unit) -> sp.Expr:
    m = q.to(u).magnitude
    if isinstance(m, float):
        m = Fraction(Decimal(repr(m)))
    m = Fraction(m)
    return sp.Rational(m.numerator, m.denominator)


def _bound_value(s: sp.Symbol, ctx: Context) -> sp.Expr | None:
    """A spec-bound symbol's exact value in the context, or None where the chip or model has none."""
    try:
        return _exact(BINDINGS[s](ctx), gl.GLOSSARY.info(s).unit)
    except SpecError:
        return None


def identities(ctx: Context) -> tuple[Identity, ...]:
    """The identities of the context's model families and its conventions, each one that holds at the context's values."""
    families = ["mla" if ctx.model.mla is not None else "gqa", "moe" if ctx.model.moe is not None else "dense", "params"]
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


# --- known slips ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Slip:
    """A mistake candidates make, as what it does to the step: a symbol replaced (`symbol` -> `replace`), or a fixed ratio."""

    key: str
    text: str
    source: str
    symbol: sp.Symbol | None = None
    replace: sp.Expr | None = None
    ratios: tuple[float, ...] = ()


#: Symbol slips: each is applied to the sheet's own formula, so the factor it gives is the sheet's, not a typed number.
SLIPS: tuple[Slip, ...] = (
    Slip("sparse-peak", "a 2:4-sparse datasheet peak used as the dense one (sparse headlines are twice the dense peak)",
         "/work/shared/reference/hardware.md (H100 SXM: 989.4 dense, 1,979 sparse BF16 TFLOP/s)", gl.pi, 2 * gl.pi),
    Slip("mac-one-flop", "a multiply-add counted as one FLOP (the convention is two)", "derivations/physics/conventions.py FLOPS_PER_WEIGHT_PER_TOKEN",
         gl.kappa, gl.kappa / 2),
    Slip("attention-mac-one-flop", "attention multiply-adds counted as one FLOP each", "derivations/physics/conventions.py ATTENTION_FLOPS_PER_CHANNEL",
         gl.kappa_attn, gl.kappa_attn / 2),
    Slip("attention-flops-doubled", "attention FLOPs doubled (QK and PV counted twice)", "DESIGN.md, known bugs in peer tools",
         gl.kappa_attn, 2 * gl.kappa_attn),
    Slip("kv-heads-as-query-heads", "the query heads counted where the KV heads belong (MHA for a GQA model)",
         "Ainslie et al., GQA, arXiv:2305.13245, section 2", gl.K, gl.N),
    Slip("head-dim-from-hidden", "the head dimension taken as hidden/heads where the config sets it", "DESIGN.md, known bugs in peer tools",
         gl.H, gl.D / gl.N),
    Slip("datasheet-bandwidth", "the datasheet bandwidth used where the achieved fraction belongs", "derivations/physics/stepmodel.py", gl.eta_bw, sp.S.One),
    Slip("datasheet-peak", "the datasheet peak used where the achieved fraction belongs", "derivations/physics/stepmodel.py", gl.eta_flops, sp.S.One),
    Slip("no-tp-split", "the tensor-parallel split left out (the whole model on one GPU)", "derivations/physics/stepmodel.py", gl.n_tp, sp.S.One),
    Slip("one-sequence", "one sequence counted where the batch belongs", "derivations/physics/stepmodel.py", gl.B, sp.S.One),
    Slip("all-parameters", "every parameter streamed (the embedding gather and norms, every expert) where only the GEMM weights a token uses belong",
         "derivations/physics/conventions.py (the embedding is a gather)", gl.P_active, gl.P_total),
)
#: Ratios that are slips whatever the formula: units read wrong.
RATIO_SLIPS: tuple[Slip, ...] = (
    Slip("bits-bytes", "bits and bytes mixed up", "one byte is 8 bits", ratios=(8.0,)),
    Slip("binary-prefix", "a binary prefix read as a decimal one (GiB for GB: 1.074; KiB 1.024, MiB 1.049, TiB 1.100)",
         "IEC 80000-13 binary prefixes: Ki = 2^10, Mi = 2^20, Gi = 2^30, Ti = 2^40", ratios=(1.024, 1.024**2, 1.024**3, 1.024**4)),
    Slip("prefix-1000", "a unit prefix off by a step or more (ms for s, GB for MB)", "SI prefixes", ratios=(1e3, 1e6, 1e9)),
)


# --- the verdict ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Term:
    """One additive term of the step (or of the answer): its expression in the sheet's symbols, the step it belongs to, its value here."""

    expr: sp.Expr
    #: the step this term is (or is a part of), whose title names it; "" for a term of the candidate's own
    step: str = ""
    #: glossary symbols that only this term uses, which name it when no step does
    symbols: tuple[sp.Symbol, ...] = ()
    value: sp.Expr | None = None
    #: the title of `step` ("KV-cache bytes per step")
    title: str = ""


@dataclass(frozen=True)
class Cause:
    slip: Slip
    #: the ratio the slip gives here (answer over sheet)
    ratio: float
    #: True when the answer lacks the slip's symbol while the sheet has it: the slip is then the likely one
    absent: bool = False


@dataclass(frozen=True)
class Boundary:
    """Where an approximation stops holding: the input, which way from the sheet's value, the first value past the tolerance."""

    input: Input
    direction: str  # "up" or "down"
    value: sp.Expr | None  # None: within the tolerance over the whole domain that way
    error: float | None


@dataclass(frozen=True)
class Regime:
    """A max() of the sheet taken on one side: the step, which side ("memory", "compute" or the branch), at the context."""

    step: str
    side: str


@dataclass(frozen=True)
class Verdict:
    """What `roofline check --against` reports. `kind` is one of KINDS."""

    kind: str
    slug: str
    result: str
    #: the step's title in words ("The floor")
    title: str
    answer: str
    #: "formula" or "number"
    form: str
    #: the step's value in the context (exact, in `unit`), or None
    value: sp.Expr | None
    unit: pint.Unit
    display_unit: str | None
    context_label: str
    #: the answer's unit (a formula's inferred one, a number's given one)
    answer_unit: pint.Unit | None = None
    #: the answer's value in the step's unit at the context, when it has one
    answer_value: sp.Expr | None = None
    #: equivalent: "general", "architecture" or "context"; and how: "symbolic" or "numeric"
    scope: str = ""
    proof: str = ""
    identities: tuple[Identity, ...] = ()
    #: answer over sheet: a number, or a number times a power of one symbol
    factor: sp.Expr | None = None
    causes: tuple[Cause, ...] = ()
    missing: tuple[Term, ...] = ()
    extra: tuple[Term, ...] = ()
    #: relative error (answer - sheet)/sheet at the context
    error: float | None = None
    tolerance: float = APPROXIMATION_TOLERANCE
    boundaries: tuple[Boundary, ...] = ()
    regimes: tuple[Regime, ...] = ()
    #: inputs the answer does not use, held at their values in the context for the comparison (tp = 1 for an answer without n_tp)
    pinned: tuple[tuple[Input, sp.Expr], ...] = ()
    #: for a formula whose unit differs only in counts (flop, token, parameter): the unit its bare numbers were read in
    implicit: pint.Unit | None = None
    #: for a different unit: symbols of the step whose unit (or inverse) the answer lacks, and the verdict with each put in
    suggestions: tuple[tuple[sp.Symbol, int, Verdict], ...] = ()
    points: int = 0
    #: the answer as parsed, in the sheet's symbols (a formula)
    expr: sp.Expr | None = None
    #: the sheet's symbol table (units, LaTeX and meanings of every symbol a verdict names)
    table: Symbols | None = None


KINDS = ("equivalent", "factor", "terms", "approximation", "different", "unit", "within", "off")


# --- the target and the context's values ---------------------------------------------------------------------------

def target(d: Derivation, name: str) -> str:
    """The step to grade against; one line listing the sheet's results for a name it does not have."""
    if not isinstance(name, str) or name not in d.expanded:
        shown = str(name)[:40]
        steps = [s.name for s in d.steps]
        raise GradeError(f"{d.slug} has no result {shown!r}{suggest(shown, steps)}; its results: {', '.join(d.results)} "
                         f"(any of its steps also works: {', '.join(n for n in steps if n not in d.results)})")
    return name


def _title(d: Derivation, name: str) -> str:
    """A step's title in words, else its meaning; "" for no step."""
    if not name or name not in d.expanded:
        return ""
    step = d.step(name)
    return step.title or step.meaning or name


def _inputs(d: Derivation) -> dict[sp.Symbol, Input]:
    out = {i.symbol: i for i in SCENARIO_INPUTS}
    out.update({i.symbol: i for i in d.inputs})
    return out


def context_values(d: Derivation, ctx: Context, symbols: set[sp.Symbol], unused: bool = False) -> dict[sp.Symbol, sp.Expr]:
    """Exact values of `symbols` in the context: inputs as set or defaulted, spec-bound symbols from the specs.

    With `unused`, a spec-bound symbol the chip or model does not give is 1 (in its unit) instead of an error: the
    caller has checked that the step has a value here, so the symbol sits in a term this context multiplies by zero
    (the all-to-alls' scale-out link at ep = 1), and any value leaves the step's value as it is.
    """
    by_symbol = _inputs(d)
    units = d.symbols.units()
    out: dict[sp.Symbol, sp.Expr] = {}
    for s in symbols:
        if s in by_symbol:
            inp = by_symbol[s]
            q = input_value(inp, ctx)[0] if inp in d.inputs else inp.parse(inp.default, "default")
            out[s] = _exact(q, units[s])
        elif s in BINDINGS:
            try:
                out[s] = _exact(BINDINGS[s](ctx), units[s])
            except SpecError as err:
                if unused:
                    out[s] = sp.Integer(1)
                    continue
                raise GradeError(f"{s.name} has no value for {ctx.model.name} on {ctx.hardware.name}: {err.message}") from None
        else:
            raise GradeError(f"{s.name} has no value in {d.slug}: it is neither one of its inputs nor bound from a spec; "
                             f"use the sheet's symbols (`roofline derive {d.slug} --format json` lists its steps)")
    return out


def _expand(d: Derivation, expr: sp.Expr) -> sp.Expr:
    """`expr` with the sheet's step names replaced by their expansions (not re-evaluated: see engine._expand)."""
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
    raise _UnsupportedError


def _num(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Float | None:
    """`expr` at `values` to DIGITS digits, or None when it has no finite real value there."""
    if expr.free_symbols - set(values):
        return None

    def walk() -> mpmath.mpf:
        with mpmath.workdps(DIGITS + 5):
            return _mp(expr, {s: _mp(sp.sympify(v), {}) for s, v in values.items() if s in expr.free_symbols})

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


def _equal(a: sp.Float, b: sp.Float) -> bool:
    return abs(a - b) <= EQUAL_RTOL * max(abs(a), abs(b), sp.Float("1e-300"))


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


def _points(d: Derivation, symbols: set[sp.Symbol], ctxvals: Mapping[sp.Symbol, sp.Expr], seed: str, n: int) -> list[dict[sp.Symbol, sp.Expr]]:
    """`n` random points: inputs inside their domains, spec-bound counts whole, other spec values around the context's."""
    rng = random.Random(seed)
    by_symbol = _inputs(d)
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


def _values_at(exprs: Sequence[sp.Expr], points: Sequence[Mapping[sp.Symbol, sp.Expr]]) -> list[list[sp.Float]] | None:
    """Each expression at each point where all of them have a value; None where too few points do."""
    rows = []
    for p in points:
        row = [_num(e, p) for e in exprs]
        if all(v is not None for v in row):
            rows.append(row)
    return rows if len(rows) >= max(2, len(points) // 2) else None


# --- comparing two expressions -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Level:
    scope: str
    sheet: sp.Expr
    answer: sp.Expr
    rows: list[list[sp.Float]] | None  # [sheet, answer] per point


def _is_zero(expr: sp.Expr) -> bool | None:
    """True when sympy shows `expr` is zero within the time limit; None when it cannot tell."""
    if expr == 0:
        return True
    for op in (sp.expand, lambda e: sp.cancel(sp.together(e)), sp.simplify):
        got = bounded(op, expr)
        if got is not None and got == 0:
            return True
    return None


def _constant_ratio(rows: list[list[sp.Float]], i: int = 1, j: int = 0) -> sp.Float | None:
    ratios = [r[i] / r[j] for r in rows if r[j] != 0]
    if len(ratios) < 2 or any(not _equal(x, ratios[0]) for x in ratios):
        return None
    return ratios[0]


def _nice(r: sp.Float) -> sp.Expr:
    """A ratio as an exact number where one is close (1/2, 8, 134217728/125000000), else the float."""
    got = bounded(lambda: sp.nsimplify(r, tolerance=sp.Float("1e-20"), rational=True))
    if isinstance(got, sp.Rational) and max(abs(got.p), got.q) < 10**12:
        return got
    return r


# --- the step split into additive terms ----------------------------------------------------------------------------

def _steps_of(d: Derivation) -> dict[str, object]:
    return {s.name: s for s in d.steps}


def split_terms(d: Derivation, name: str) -> list[tuple[sp.Expr, tuple[str, ...]]]:
    """The step as a sum of terms, each distributed through the steps it multiplies, with the path of steps it came through.

    t_memory = bytes_per_gpu/(eta_bw beta) splits into weight_bytes_gpu/(eta_bw beta) and kv_bytes_step/(eta_bw beta);
    max() terms, closed forms and At steps stay whole. Deeper splits are tried first, shallower ones when there are
    more than MAX_TERMS terms.
    """
    steps = _steps_of(d)

    def split(expr: sp.Expr, path: tuple[str, ...], depth: int) -> list[tuple[sp.Expr, tuple[str, ...]]]:
        if isinstance(expr, sp.Add):
            return [t for a in expr.args for t in split(a, path, depth)]
        if depth <= 0:
            return [(expr, path)]
        if isinstance(expr, sp.Symbol) and expr.name in steps:
            step = steps[expr.name]
            if isinstance(step, Solve | At):
                return [(expr, path)]
            inner = split(step.expr, (*path, expr.name), depth - 1)
            return inner if len(inner) > 1 else [(expr, path)]
        if isinstance(expr, sp.Mul):
            for f in expr.args:
                if isinstance(f, sp.Symbol) and f.name in steps and not isinstance(steps[f.name], Solve | At):
                    inner = split(f, path, depth)
                    if len(inner) > 1:
                        rest = expr / f
                        return [(rest * t, p) for t, p in inner]
        return [(expr, path)]

    root = steps[name]
    top = root.expr if not isinstance(root, Solve | At) else sp.Symbol(name, positive=True)
    for depth in range(8, -1, -1):
        terms = split(top, (name,), depth)
        if len(terms) <= MAX_TERMS:
            return terms
    return [(top, (name,))]


def _term_step(expr: sp.Expr, path: tuple[str, ...], d: Derivation) -> str:
    """The step that names a term: the one step it is, else the innermost step of its path."""
    own = [s for s in expr.free_symbols if s.name in d.expanded]
    if len(own) == 1:
        return own[0].name
    return path[-1] if path else ""


# --- grading a formula ---------------------------------------------------------------------------------------------

def _side(expr: sp.Expr) -> str:
    """Which side of a roofline max() an argument is: over a bandwidth (memory) or a peak (compute)."""
    free = expr.free_symbols
    bandwidths = {gl.beta, *(v for k, v in gl.SECOND_CHIP.items() if k == gl.beta)}
    peaks = {gl.pi, gl.pi_bf16, gl.pi_fp8, *(v for k, v in gl.SECOND_CHIP.items() if k == gl.pi)}
    if free & bandwidths and not free & peaks:
        return "memory"
    if free & peaks and not free & bandwidths:
        return "compute"
    return ""


def _resolve_max(expr: sp.Expr, ctxvals: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """Every max() and min() replaced by the argument it takes at the context."""
    def pick(e: sp.Expr) -> sp.Expr:
        values = [(_num(a, ctxvals), a) for a in e.args]
        known = [(v, a) for v, a in values if v is not None]
        if not known:
            return e
        chooser = max if isinstance(e, sp.Max) else min
        return chooser(known, key=lambda va: va[0])[1]

    got = bounded(lambda: expr.replace(lambda e: isinstance(e, sp.Max | sp.Min), pick))
    return got if isinstance(got, sp.Expr) else expr


def regimes(d: Derivation, name: str, values: Mapping[str, sp.Expr | Missing], ctxvals: Mapping[sp.Symbol, sp.Expr]) -> tuple[Regime, ...]:
    """The sheet's max() steps that `name` needs, each with the side it takes at the context (from the exact step values)."""
    need = needed_steps(d, [name])
    out = []
    symbol_values = {**ctxvals, **{sp.Symbol(n, positive=True): v for n, v in values.items() if not isinstance(v, Missing)}}
    for step in d.steps:
        if step.name not in need or not isinstance(step.expr, sp.Max | sp.Min) or isinstance(step, Solve | At):
            continue
        args = [(_num(a, symbol_values), a) for a in step.expr.args]
        if any(v is None for v, _ in args):
            continue
        chooser = max if isinstance(step.expr, sp.Max) else min
        _, arg = chooser(args, key=lambda va: va[0])
        side = _side(_expand(d, arg)) or f"branch {step.expr.args.index(arg) + 1}"
        out.append(Regime(step.name, side))
    return tuple(out)


#: The levels at which a formula is compared, from the most general: see the module docstring.
LEVELS = ("general", "architecture", "pinned", "context")


@dataclass
class _Formula:
    """The working state of one formula's grading."""

    d: Derivation
    name: str
    ctx: Context
    text: str
    tolerance: float
    ids: tuple[Identity, ...]
    ctxvals: dict[sp.Symbol, sp.Expr]
    seed: str
    sheet0: sp.Expr
    answer0: sp.Expr
    parsed: sp.Expr
    spec_values: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    #: inputs the sheet's formula uses and the answer does not, held at their values in the context at the "pinned" level
    pinned: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)

    def level(self, scope: str, sheet: sp.Expr | None = None, answer: sp.Expr | None = None) -> tuple[sp.Expr, sp.Expr]:
        """The sheet's formula and the answer (or the given parts of them) at one level of LEVELS."""
        s, a = (self.sheet0 if sheet is None else sheet), (self.answer0 if answer is None else answer)
        n = LEVELS.index(scope)
        if n >= 1:
            s, a = apply_identities(s, self.ids), apply_identities(a, self.ids)
        if n >= 2:
            with sp.evaluate(False):
                s, a = s.xreplace(self.pinned), a.xreplace(self.pinned)
        if n >= 3:
            with sp.evaluate(False):
                s, a = s.xreplace(self.spec_values), a.xreplace(self.spec_values)
        return s, a

    def points(self, exprs: Sequence[sp.Expr], tag: str) -> list[dict[sp.Symbol, sp.Expr]]:
        free = set().union(*(e.free_symbols for e in exprs))
        return _points(self.d, free, self.ctxvals, f"{self.seed}/{tag}", CHECK_POINTS)


def grade_formula(d: Derivation, name: str, text: str, ctx: Context, context_label: str = "",
                  tolerance: float = APPROXIMATION_TOLERANCE) -> Verdict:
    """Compare the formula `text` with step `name` of `d` (see the module docstring)."""
    name = target(d, name)
    _check_tolerance(tolerance)
    parsed = fm.parse(text, d.symbols)
    step_unit = d.symbols[name].unit
    answer0 = _expand(d, parsed.expr)
    sheet0 = d.expanded[name]
    free = sheet0.free_symbols | answer0.free_symbols
    values = evaluate(d, ctx, only=[name])
    v = values[name]
    ctxvals = context_values(d, ctx, free, unused=not isinstance(v, Missing))
    ids = identities(ctx)
    seed = f"{d.slug}/{name}/{text}"
    base = dict(kind="", slug=d.slug, result=name, title=_title(d, name), table=d.symbols, answer=text, form="formula", value=None, unit=step_unit,
                display_unit=d.display_units.get(name), context_label=context_label, answer_unit=parsed.unit, tolerance=tolerance,
                expr=parsed.expr)
    base["value"] = None if isinstance(v, Missing) else v
    work = _Formula(d, name, ctx, text, tolerance, ids, ctxvals, seed, sheet0, answer0, parsed.expr)
    work.spec_values = {s: val for s, val in ctxvals.items() if s not in _inputs(d)}
    # the identities' right-hand sides may bring in symbols the two sides did not name (K, H for e_kv)
    extra_free = set().union(*(apply_identities(e, ids).free_symbols for e in (sheet0, answer0))) - set(ctxvals)
    if extra_free:
        more = context_values(d, ctx, extra_free, unused=not isinstance(v, Missing))
        ctxvals.update(more)
        work.spec_values.update({s: val for s, val in more.items() if s not in _inputs(d)})

    inputs = _inputs(d)
    sheet1, answer1 = apply_identities(sheet0, ids), apply_identities(answer0, ids)
    work.pinned = {s: ctxvals[s] for s in sheet1.free_symbols - answer1.free_symbols if s in inputs}
    if not _same(parsed.unit, step_unit):
        ratio = step_unit / parsed.unit
        dims = set(Quantity(1, ratio).dimensionality)
        if Quantity(1, ratio).dimensionless:
            factor = _exact(Quantity(1, parsed.unit), step_unit)
            work.answer0 = answer0 = answer0 * factor
        elif dims <= COUNT_DIMENSIONS:
            base["implicit"] = unit(unit_text(ratio))
        else:
            return _different_unit(work, base, ratio)
    return _compare(work, base)


def _check_tolerance(tolerance: float) -> None:
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 < tolerance < 1:
        raise GradeError(f"--tolerance: expected a fraction between 0 and 1 (0.1 for 10%), found {shown(tolerance)}")


def _different_unit(work: _Formula, base: dict, ratio: pint.Unit) -> Verdict:
    """A unit the step is not in: say both, and which of the step's symbols has the unit the answer lacks."""
    d = work.d
    suggestions = []
    answer_free = work.parsed.free_symbols
    for s in sorted(work.sheet0.free_symbols | apply_identities(work.sheet0, work.ids).free_symbols, key=lambda s: s.name):
        if s in answer_free or s.name not in d.symbols:
            continue
        u = d.symbols.info(s).unit
        for power in (1, -1):
            if _same(u**power, ratio):
                fixed = replace_answer(work, work.answer0 * s**power)
                sub = _compare(fixed, {**base, "answer": f"({work.text})*{s.name}" if power == 1 else f"({work.text})/{s.name}"})
                suggestions.append((s, power, sub))
    return Verdict(**{**base, "kind": "unit", "suggestions": tuple(suggestions[:3])})


def _same(a: pint.Unit, b: pint.Unit) -> bool:
    q = Quantity(1, a) / Quantity(1, b)
    return bool(q.dimensionless) and q.to("").magnitude == 1


def replace_answer(work: _Formula, answer0: sp.Expr) -> _Formula:
    new = _Formula(work.d, work.name, work.ctx, work.text, work.tolerance, work.ids, work.ctxvals, work.seed, work.sheet0, answer0, work.parsed)
    new.spec_values, new.pinned = work.spec_values, work.pinned
    return new


def _compare(work: _Formula, base: dict) -> Verdict:
    """The verdict, trying each kind in the order of the module docstring."""
    d, name = work.d, work.name
    levels: dict[str, _Level] = {}

    def at(scope: str) -> _Level:
        if scope not in levels:
            s, a = work.level(scope)
            levels[scope] = _Level(scope, s, a, _values_at([s, a], work.points([s, a], scope)))
        return levels[scope]

    def equal(lv: _Level) -> bool:
        return lv.rows is not None and all(_equal(r[0], r[1]) for r in lv.rows)

    used = tuple(i for i in work.ids if i.symbol in _chained(work))
    for scope in ("general", "architecture"):
        lv = at(scope)
        if equal(lv):
            return Verdict(**{**base, "kind": "equivalent", "scope": scope, "proof": "symbolic" if _is_zero(lv.sheet - lv.answer) else "numeric",
                              "identities": used if scope != "general" else (), "points": len(lv.rows), "error": 0.0, "answer_value": base["value"]})
    context = at("context")
    answer_value, sheet_value = _num(context.answer, work.ctxvals), _num(context.sheet, work.ctxvals)
    error = float((answer_value - sheet_value) / sheet_value) if answer_value is not None and sheet_value not in (None, 0) else None
    near = error is not None and abs(error) <= work.tolerance
    pinned = tuple((_inputs(d)[s], work.pinned[s]) for s in sorted(work.pinned, key=lambda s: s.name))
    base = {**base, "answer_value": answer_value, "error": error, "identities": used}

    def boundaries() -> tuple[Boundary, ...]:
        return _boundaries(work) if near else ()

    def factor_or_terms(scope: str, extra: dict) -> Verdict | None:
        lv = at(scope)
        if lv.rows is None:
            return None
        r = _constant_ratio(lv.rows)
        if r is not None:
            return Verdict(**{**base, **extra, "kind": "factor", "scope": scope, "factor": _nice(r), "points": len(lv.rows),
                              "causes": _formula_causes(work, float(r))})
        monomial = _monomial_factor(work, lv)
        if monomial is not None:
            return Verdict(**{**base, **extra, "kind": "factor", "scope": scope, "factor": monomial, "points": len(lv.rows)})
        return _terms_or_regime(scope, extra)

    def _terms_or_regime(scope: str, extra: dict) -> Verdict | None:
        """Left-out and added terms, as written or with the sheet's max() on the side it takes here: the explanation that changes less."""
        plain = _terms(work, scope, resolve=False)
        resolved_equal = _resolved_equivalent(work, scope)
        resolved = None if resolved_equal else _terms(work, scope, resolve=True)
        size = lambda found: len(found[0]) + len(found[1])  # noqa: E731
        values = evaluate(d, work.ctx, only=[name])
        if resolved_equal and (plain is None or size(plain) > 1):
            return Verdict(**{**base, **extra, "kind": "approximation", "scope": scope, "regimes": regimes(d, name, values, work.ctxvals),
                              "boundaries": boundaries()})
        found, regime = (resolved, regimes(d, name, values, work.ctxvals)) if resolved is not None and (plain is None or size(resolved) < size(plain)) \
            else (plain, ())
        if found is None:
            return None
        held = {"pinned": tuple(p for p in extra.get("pinned", ()) if p[0].symbol in found[2])}
        return Verdict(**{**base, **extra, **held, "kind": "terms", "scope": scope, "missing": found[0], "extra": found[1], "regimes": regime,
                          "boundaries": boundaries(), "causes": _context_causes(work, error)})

    verdict = factor_or_terms("architecture", {})
    if verdict is not None:
        return verdict
    if work.pinned:
        lv = at("pinned")
        if equal(lv):
            # the sheet's max() terms the answer writes one side of: name the sides they take here (the sampled points may all fall there)
            sides = regimes(d, name, evaluate(d, work.ctx, only=[name]), work.ctxvals) \
                if lv.sheet.has(sp.Max, sp.Min) and not lv.answer.has(sp.Max, sp.Min) else ()
            return Verdict(**{**base, "kind": "approximation", "scope": "pinned", "pinned": pinned, "regimes": sides, "boundaries": boundaries()})
        verdict = factor_or_terms("pinned", {"pinned": pinned})
        if verdict is not None:
            return verdict
    if equal(context):
        return Verdict(**{**base, "kind": "equivalent", "scope": "context", "proof": "symbolic" if _is_zero(context.sheet - context.answer) else "numeric",
                          "points": len(context.rows), "pinned": pinned})
    if context.rows is not None and (r := _constant_ratio(context.rows)) is not None:
        return Verdict(**{**base, "kind": "factor", "scope": "context", "factor": _nice(r), "points": len(context.rows),
                          "causes": _formula_causes(work, float(r)), "pinned": pinned})
    if near:
        return Verdict(**{**base, "kind": "approximation", "scope": "context", "boundaries": boundaries(), "pinned": pinned})
    return Verdict(**{**base, "kind": "different", "causes": _context_causes(work, error)})


def _context_causes(work: _Formula, error: float | None) -> tuple[Cause, ...]:
    """The slips that give the answer's ratio to the step at the context exactly (a P_total for P_active, say)."""
    if error is None or error == 0:
        return ()
    return tuple(c for c in _formula_causes(work, 1 + error) if c.slip.symbol is not None)


def _chained(work: _Formula) -> set[sp.Symbol]:
    """Every symbol the two sides reach through the identities (P_total reaches P_matmul, then P_active)."""
    seen = set(work.sheet0.free_symbols | work.answer0.free_symbols)
    by_symbol = {i.symbol: i for i in work.ids}
    frontier = set(seen)
    while frontier:
        nxt = set()
        for s in frontier:
            if s in by_symbol:
                nxt |= by_symbol[s].expr.free_symbols - seen
        seen |= nxt
        frontier = nxt
    return seen


def _monomial_factor(work: _Formula, lv: _Level) -> sp.Expr | None:
    """answer/sheet = c * s**k for one symbol s and k in (1, -1, 2, -2): a factor the answer has too many or too few of."""
    if lv.rows is None:
        return None
    free = sorted(lv.sheet.free_symbols | lv.answer.free_symbols, key=lambda s: s.name)
    pts = work.points([lv.sheet, lv.answer], "architecture")
    rows = [(p, _num(lv.sheet, p), _num(lv.answer, p)) for p in pts]
    rows = [(p, s, a) for p, s, a in rows if s not in (None, 0) and a is not None]
    if len(rows) < 3:
        return None
    for s in free:
        for k in (1, -1, 2, -2):
            ratios = [a / (sv * p[s] ** k) for p, sv, a in rows]
            if all(_equal(x, ratios[0]) for x in ratios):
                return _nice(sp.Float(ratios[0], DIGITS)) * s**k
    return None


def _slip_ratio(work: _Formula, slip: Slip, values: Mapping[sp.Symbol, sp.Expr]) -> float | None:
    """answer/sheet that `slip` gives at `values`: the sheet's own formula with the slip applied, over the formula."""
    sheet0 = work.sheet0
    if slip.symbol in sheet0.free_symbols:
        with sp.evaluate(False):
            slipped = apply_identities(sheet0.xreplace({slip.symbol: slip.replace}), work.ids)
        plain = apply_identities(sheet0, work.ids)
    else:
        plain = apply_identities(sheet0, work.ids)
        if slip.symbol not in plain.free_symbols:
            return None
        with sp.evaluate(False):
            slipped = plain.xreplace({slip.symbol: slip.replace})
    missing = (slipped.free_symbols | plain.free_symbols) - set(values)
    if missing:
        values = {**values, **context_values(work.d, work.ctx, missing, unused=True)}
    a, b = _num(slipped, values), _num(plain, values)
    if a is None or b in (None, 0):
        return None
    return float(a / b)


def _formula_causes(work: _Formula, ratio: float) -> tuple[Cause, ...]:
    """The slips that give exactly `ratio` (at the context and at one other point): the sheet's formula with each applied."""
    out = []
    present = work.parsed.free_symbols | _expand(work.d, work.parsed).free_symbols
    for slip in SLIPS:
        r = _slip_ratio(work, slip, work.ctxvals)
        if r is not None and math.isclose(r, ratio, rel_tol=1e-9):
            out.append(Cause(slip, r, absent=slip.symbol not in present))
    if not any(c.absent for c in out):  # a slip on a symbol the answer lacks explains it better than a unit read wrong
        out += [Cause(slip, r) for slip in RATIO_SLIPS for r in _ratio_matches(slip, ratio, 1e-9)]
    return tuple(sorted(out, key=lambda c: not c.absent))


def _ratio_matches(slip: Slip, ratio: float, rtol: float) -> list[float]:
    return [r for base in slip.ratios for r in (base, 1 / base) if math.isclose(ratio, r, rel_tol=rtol)][:1]


def _terms(work: _Formula, scope: str, resolve: bool) -> tuple[tuple[Term, ...], tuple[Term, ...], set[sp.Symbol]] | None:
    """The fewest terms of the step left out and of the answer added that make the two equal; None when no such set exists."""
    d = work.d
    parts = split_terms(d, work.name)
    sheet_terms = []
    for expr, path in parts:
        s1, _ = work.level(scope, sheet=_expand(d, expr), answer=sp.S.Zero)
        if resolve:
            s1 = _resolve_max(s1, work.ctxvals)
        sheet_terms.append((expr, path, s1))
    _, answer1 = work.level(scope)
    if resolve:
        answer1 = _resolve_max(answer1, work.ctxvals)
    expanded = bounded(sp.expand, answer1)
    answer_parts = list(sp.Add.make_args(expanded)) if isinstance(expanded, sp.Expr) and len(sp.Add.make_args(expanded)) <= 8 \
        else list(sp.Add.make_args(answer1))
    exprs = [t for _, _, t in sheet_terms] + answer_parts
    pts = work.points(exprs, f"terms-{scope}-{resolve}")
    rows = _values_at(exprs, pts)
    if rows is None:
        return None
    # points x terms, each point scaled by its largest term (a float64 cannot hold every 40-digit value)
    m = np.array([[float(v / max(max(abs(x) for x in row), sp.Float("1e-300"))) for v in row] for row in rows])
    n_sheet = len(sheet_terms)
    zero = np.all(m == 0, axis=0)
    scale = np.sum(np.abs(m), axis=1, keepdims=True) + 1e-300
    sheet_idx = [i for i in range(n_sheet) if not zero[i]]
    answer_idx = [j for j in range(n_sheet, m.shape[1]) if not zero[j]]
    total_sheet = m[:, sheet_idx].sum(axis=1)
    total_answer = m[:, answer_idx].sum(axis=1)
    for size in range(1, MAX_CHANGED_TERMS + 1):
        for k in range(size + 1):
            for left_out in itertools.combinations(sheet_idx, k):
                if len(left_out) == len(sheet_idx):
                    continue
                kept_sheet = total_sheet - m[:, list(left_out)].sum(axis=1)
                for added in itertools.combinations(answer_idx, size - k):
                    if len(added) == len(answer_idx):
                        continue
                    kept_answer = total_answer - m[:, list(added)].sum(axis=1)
                    if np.all(np.abs(kept_sheet - kept_answer) <= 1e-9 * scale[:, 0]):
                        return _named_terms(work, sheet_terms, answer_parts, left_out, [j - n_sheet for j in added])
    return None


def _named_terms(work: _Formula, sheet_terms: list, answer_parts: list, left_out: Sequence[int],
                 added: Sequence[int]) -> tuple[tuple[Term, ...], tuple[Term, ...], set[sp.Symbol]]:
    """The left-out terms (merged into their step where all of a step's terms are left out) and the added ones, with values here;
    and the symbols the kept terms of the sheet use (an input held at its value matters only if they do)."""
    d = work.d
    # a step all of whose terms are left out is named once
    by_step: dict[str, list[int]] = {}
    for i, (_, path, _) in enumerate(sheet_terms):
        for p in path[1:]:
            by_step.setdefault(p, []).append(i)
    merged: list[tuple[sp.Expr, str]] = []
    used: set[int] = set()
    for stepname, members in sorted(by_step.items(), key=lambda kv: -len(kv[1])):
        if len(members) > 1 and set(members) <= set(left_out) and not set(members) & used:
            merged.append((sum((sheet_terms[i][0] for i in members), sp.S.Zero), stepname))
            used |= set(members)
    for i in left_out:
        if i not in used:
            expr, path, _ = sheet_terms[i]
            merged.append((expr, _term_step(expr, path, d)))
    others = set().union(*(t[2].free_symbols for j, t in enumerate(sheet_terms) if j not in left_out)) if sheet_terms else set()
    missing = []
    for expr, stepname in merged:
        full = apply_identities(_expand(d, expr), work.ids)
        own = tuple(sorted(full.free_symbols - others, key=lambda s: s.name))
        missing.append(Term(expr, stepname, own, _num(full, work.ctxvals), _title(d, stepname)))
    sheet_free = set().union(*(t[2].free_symbols for t in sheet_terms))
    extra = []
    for j in added:
        expr = answer_parts[j]
        own = tuple(sorted(expr.free_symbols - sheet_free, key=lambda s: s.name))
        extra.append(Term(expr, "", own, _num(expr, work.ctxvals)))
    kept = set().union(*(_free_after_identities(_expand(d, t[0]), work.ids) for j, t in enumerate(sheet_terms) if j not in left_out))
    return tuple(missing), tuple(extra), kept


def _free_after_identities(expr: sp.Expr, ids: Sequence[Identity]) -> set[sp.Symbol]:
    """The symbols `expr` still depends on once the identities are applied and the result evaluated (a dense model's
    L_moe = 0 takes the batch out of its weight bytes); the unevaluated ones where evaluating runs out of time."""
    unevaluated = apply_identities(expr, ids)
    mapping = {i.symbol: i.expr for i in ids}
    evaluated = bounded(lambda: sp.sympify(unevaluated).xreplace(mapping).doit())
    return set(evaluated.free_symbols) if isinstance(evaluated, sp.Expr) else set(unevaluated.free_symbols)


def _resolved_equivalent(work: _Formula, scope: str) -> bool:
    """True when the answer equals the step with its max() terms on the sides they take at the context."""
    s1, a1 = work.level(scope)
    if not (s1.has(sp.Max, sp.Min) or a1.has(sp.Max, sp.Min)):
        return False
    s1, a1 = _resolve_max(s1, work.ctxvals), _resolve_max(a1, work.ctxvals)
    rows = _values_at([s1, a1], work.points([s1, a1], "resolved"))
    return rows is not None and all(_equal(r[0], r[1]) for r in rows)


# --- where an approximation stops holding ------------------------------------------------------------------------

def _grid(inp: Input, v0: float, direction: str) -> list[float]:
    """Values of `inp` from its sheet value outward, doubling (or halving) to the ends of its domain."""
    if inp.domain in ("count", "whole"):
        lo = 1 if inp.domain == "count" else 0
        if direction == "up":
            out, v = [], max(v0, 1)
            while v < MAX_COUNT:
                v = min(v * 2, MAX_COUNT)
                out.append(v)
            return out
        out, v = [], v0
        while v > lo:
            v = max(math.floor(v / 2), lo)
            out.append(v)
        return out
    if inp.domain == "fraction":
        steps = [v0 + (1 - v0) * (1 - 0.5**k) for k in range(1, 12)] + [1.0] if direction == "up" else [v0 * 0.5**k for k in range(1, 14)]
        return [s for s in steps if 0 < s <= 1]
    lo = 1.0 if inp.domain == "at_least_one" else 0.0
    if direction == "up":
        start = v0 if v0 > 0 else 1e-9
        return [start * 2**k for k in range(1, 41)]
    if v0 <= lo:
        return []
    out = [max(v0 * 0.5**k, lo) for k in range(1, 41)]
    return [*(x for x in out if x > lo), *([lo] if inp.domain in ("nonnegative", "at_least_one") else [])]


def _boundaries(work: _Formula) -> tuple[Boundary, ...]:
    """For each input the difference depends on: the first value, up and down from the sheet's, where the error passes the tolerance."""
    d = work.d
    s1, a1 = work.level("architecture")
    by_symbol = _inputs(d)
    moving = _free_after_identities(work.sheet0, work.ids) | _free_after_identities(work.answer0, work.ids)
    varying = sorted((s for s in moving if s in by_symbol), key=lambda s: s.name)
    diff_free = caught(lambda: (s1 - a1).free_symbols)
    out = []
    for s in varying:
        if isinstance(diff_free, set) and s not in diff_free:
            continue
        inp = by_symbol[s]
        others = {k: v for k, v in work.ctxvals.items() if k != s}
        with sp.evaluate(False):
            fs, fa = s1.xreplace(others), a1.xreplace(others)
        error_at = _error_function(fs, fa, s)
        if error_at is None:
            continue
        v0 = float(work.ctxvals[s])
        for direction in ("up", "down"):
            grid = _grid(inp, v0, direction)
            if not grid:
                continue
            errors = error_at(np.array(grid, dtype=float))
            past = [i for i, e in enumerate(errors) if np.isfinite(e) and e > work.tolerance]
            if not past:
                if np.all(np.isfinite(errors)):
                    out.append(Boundary(inp, direction, None, None))
                continue
            i = past[0]
            ok = v0 if i == 0 else grid[i - 1]
            value, err = _refine(inp, fs, fa, s, ok, grid[i], work.tolerance)
            out.append(Boundary(inp, direction, value, err))
    return tuple(out)


def _error_function(fs: sp.Expr, fa: sp.Expr, s: sp.Symbol) -> Callable[[np.ndarray], np.ndarray] | None:
    """|answer - sheet|/|sheet| as a function of one input over numpy arrays (compiled once; confirmed exactly where it matters)."""
    def compile_() -> Callable[[np.ndarray], np.ndarray]:
        custom = {type(f).__name__: type(f).numpy for e in (fs, fa) for f in e.atoms(sp.Function) if hasattr(type(f), "numpy")}
        f_s = sp.lambdify([s], fs, modules=[custom, "numpy"])
        f_a = sp.lambdify([s], fa, modules=[custom, "numpy"])

        def err(x: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                a = np.broadcast_to(np.asarray(f_a(x), dtype=float), x.shape)
                b = np.broadcast_to(np.asarray(f_s(x), dtype=float), x.shape)
                return np.abs(a - b) / np.abs(b)
        return err

    return caught(compile_)  # type: ignore[return-value]  # linear in the formula's size: no clock, so the search is the same under load


def _exact_error(fs: sp.Expr, fa: sp.Expr, s: sp.Symbol, x: sp.Expr) -> float | None:
    a, b = _num(fa, {s: x}), _num(fs, {s: x})
    if a is None or b in (None, 0):
        return None
    return float(abs(a - b) / abs(b))


def _refine(inp: Input, fs: sp.Expr, fa: sp.Expr, s: sp.Symbol, ok: float, bad: float, tol: float) -> tuple[sp.Expr, float | None]:
    """The first value past `ok` toward `bad` where the exact error passes `tol`: a whole number for counts, else 3 figures."""
    whole = inp.domain in ("count", "whole")
    lo, hi = ok, bad
    for _ in range(64):
        if whole and abs(hi - lo) <= 1:
            break
        if not whole and abs(hi - lo) <= 1e-3 * max(abs(hi), abs(lo)):
            break
        mid = (lo + hi) / 2
        mid = math.floor(mid) if whole and hi > lo else (math.ceil(mid) if whole else mid)
        err = _exact_error(fs, fa, s, sp.Integer(mid) if whole else sp.Float(mid, DIGITS))
        if err is None:
            break
        if err > tol:
            hi = mid
        else:
            lo = mid
    value = sp.Integer(int(hi)) if whole else sp.Float(float(f"{hi:.3g}"), DIGITS)
    return value, _exact_error(fs, fa, s, value)


# --- grading a number ----------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?)\s*([A-Za-z%µ][A-Za-z0-9_*/()^. µ%-]*)?\s*$")


def _number_parts(text: object) -> tuple[str, str] | None:
    """(number, unit) of a number with an optional unit, or None. `1e100*P_active` is a formula, not 1 of a unit `e100*P_active`."""
    m = _NUMBER.match(text) if isinstance(text, str) and len(text) <= 100 else None
    if m is None:
        return None
    number, unit_part = m.group(1), (m.group(2) or "").strip()
    if unit_part[:1] in ("e", "E") and text.strip()[len(number):len(number) + 1] in ("e", "E"):
        return None
    return number, unit_part


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


def grade_number(d: Derivation, name: str, text: str, ctx: Context, context_label: str = "", tolerance: float = NUMBER_TOLERANCE) -> Verdict:
    """Compare a number with its unit with step `name`'s value in `ctx`: within `tolerance`, or off by a ratio with its likely slip."""
    name = target(d, name)
    _check_tolerance(tolerance)
    step_unit = d.symbols[name].unit
    q = parse_answer(text, step_unit, name)
    if q.magnitude < 0 and not d.step(name).signed:
        raise GradeError(f"answer: {text.strip()[:40]} is negative, and {name} is zero or more")
    base = dict(slug=d.slug, result=name, title=_title(d, name), table=d.symbols, answer=text, form="number", unit=step_unit, display_unit=d.display_units.get(name),
                context_label=context_label, answer_unit=q.units, tolerance=tolerance)
    v = evaluate(d, ctx, only=[name])[name]
    if isinstance(v, Missing):
        raise GradeError(f"{d.slug}:{name} has no value for this setup ({v.label}); nothing to grade against")
    base["value"] = v
    if q.dimensionality != Quantity(1, step_unit).dimensionality:
        return Verdict(**{**base, "kind": "unit"})
    answer = _exact(q, step_unit)
    base["answer_value"] = answer
    if v == 0:
        return Verdict(**{**base, "kind": "within" if answer == 0 else "off", "error": None})
    ratio = float(answer / v)
    error = ratio - 1
    base["error"] = error
    if abs(error) <= tolerance:
        return Verdict(**{**base, "kind": "within"})
    missing = _number_missing(d, name, ctx, v, ratio, tolerance)
    causes = _number_causes(d, name, ctx, v, ratio, tolerance)
    if missing and causes:
        # the closer explanation first: a left-out term, or a slip
        left = 1 - float(sum(t.value for t in missing) / v)
        if abs(math.log(ratio / left)) < abs(math.log(ratio / causes[0].ratio)):
            causes = ()
        else:
            missing = ()
    return Verdict(**{**base, "kind": "off", "factor": sp.Float(ratio, 6), "causes": causes, "missing": missing})


def _number_causes(d: Derivation, name: str, ctx: Context, v: sp.Expr, ratio: float, tol: float) -> tuple[Cause, ...]:
    """The slips whose ratio at the context is within the tolerance of the answer's, closest first."""
    sheet0 = d.expanded[name]
    ids = identities(ctx)
    plain = apply_identities(sheet0, ids)
    ctxvals = context_values(d, ctx, sheet0.free_symbols | plain.free_symbols, unused=True)
    work = _Formula(d, name, ctx, "", tol, ids, ctxvals, "", sheet0, sp.S.Zero, sp.S.Zero)
    singles = [(slip, r) for slip in SLIPS if (r := _slip_ratio(work, slip, ctxvals)) is not None and not math.isclose(r, 1, rel_tol=1e-12)]
    singles += [(slip, r) for slip in RATIO_SLIPS for base in slip.ratios for r in (base, 1 / base)]
    found = [Cause(slip, r) for slip, r in singles if math.isclose(ratio, r, rel_tol=tol)]
    best: dict[str, Cause] = {}
    for c in sorted(found, key=lambda c: abs(math.log(ratio / c.ratio))):
        best.setdefault(c.slip.key, c)
    return tuple(best.values())[:4]


def _number_missing(d: Derivation, name: str, ctx: Context, v: sp.Expr, ratio: float, tol: float) -> tuple[Term, ...]:
    """One or two of the step's terms whose leaving out gives the answer's ratio (within the tolerance)."""
    ids = identities(ctx)
    parts = split_terms(d, name)
    if len(parts) < 2:
        return ()
    fulls = [apply_identities(_expand(d, e), ids) for e, _ in parts]
    ctxvals = context_values(d, ctx, set().union(*(f.free_symbols for f in fulls)), unused=True)
    values = [_num(f, ctxvals) for f in fulls]
    if any(x is None for x in values):
        return ()
    best = None
    for k in (1, 2):
        for combo in itertools.combinations(range(len(parts)), k):
            left = 1 - float(sum(values[i] for i in combo) / v)
            if left > 0 and math.isclose(ratio, left, rel_tol=tol) and (best is None or abs(left - ratio) < best[0]):
                best = (abs(left - ratio), combo)
        if best:
            break
    if best is None:
        return ()
    return tuple(Term(parts[i][0], step, (), values[i], _title(d, step)) for i in best[1] for step in [_term_step(parts[i][0], parts[i][1], d)])


# --- what bounds a time --------------------------------------------------------------------------------------------

#: The resources a step time can scale with: the symbol whose value a faster part would raise.
RESOURCES = (gl.beta, gl.pi, gl.beta_link)
#: The step model's engine overheads, which no resource moves: the per-layer overhead, the per-step time, the all-reduce latency, the
#: time per sequence.
OVERHEADS = (gl.t_layer, gl.t_fixed, gl.t_ar, gl.t_seq)


@dataclass(frozen=True)
class Bound:
    """How a time splits over what it scales with: the share that falls as each resource grows (d ln t / d ln x), and the rest."""

    shares: tuple[tuple[sp.Symbol, float], ...]
    #: the share that no resource moves (the engine's overheads and latencies)
    rest: float
    #: the rest by engine overhead the time holds (d ln t / d ln t_x: the share of the time each overhead term is)
    overheads: tuple[tuple[sp.Symbol, float], ...] = ()

    @property
    def binding(self) -> sp.Symbol | None:
        """The resource with the largest share, or None when the fixed part is larger than any."""
        top = max(self.shares, key=lambda x: x[1], default=None)
        return None if top is None or top[1] < self.rest else top[0]


def asks_bound(d: Derivation, name: str) -> bool:
    """True for a time whose formula holds a roofline (a max of a memory side and a compute side): "what bounds it?" has an answer."""
    if unit_text(d.symbols[name].unit) != "s":
        return False
    maxes = d.expanded[name].atoms(sp.Max)
    return any({_side(a) for a in m.args} >= {"memory", "compute"} for m in maxes)


def what_bounds(d: Derivation, name: str, ctx: Context) -> Bound | None:
    """The elasticity of the step's time with respect to each resource at the context (exact values, a 1e-8 relative step)."""
    expr = d.expanded[name]
    if isinstance(evaluate(d, ctx, only=[name])[name], Missing):
        return None
    ctxvals = context_values(d, ctx, expr.free_symbols, unused=True)
    t0 = _num(expr, ctxvals)
    if t0 in (None, 0):
        return None
    eps = sp.Rational(1, 10**8)
    shares = []
    for r in RESOURCES:
        if r not in expr.free_symbols:
            continue
        t1 = _num(expr, {**ctxvals, r: ctxvals[r] * (1 + eps)})
        if t1 is None:
            return None
        shares.append((r, max(0.0, float(-(t1 - t0) / t0 / eps))))
    rest = max(0.0, 1 - sum(s for _, s in shares))
    overheads = []
    for o in OVERHEADS:
        if o not in expr.free_symbols or ctxvals[o] == 0:
            continue
        t1 = _num(expr, {**ctxvals, o: ctxvals[o] * (1 + eps)})
        if t1 is None:
            return None
        overheads.append((o, max(0.0, float((t1 - t0) / t0 / eps))))
    return Bound(tuple(shares), rest, tuple(overheads))


__all__ = [
    "APPROXIMATION_TOLERANCE",
    "IDENTITIES",
    "KINDS",
    "NUMBER_TOLERANCE",
    "RATIO_SLIPS",
    "SLIPS",
    "Bound",
    "GradeError",
    "Identity",
    "Verdict",
    "apply_identities",
    "asks_bound",
    "bounded",
    "grade_formula",
    "grade_number",
    "identities",
    "is_number",
    "time_limit",
    "what_bounds",
]

"""How far do real servers sit from the step model, and which engine inputs does the dataset give?

Every published record (specs/measurements/) is turned into a measured decode
step time under a stated rule, and the shared step model (derivations.physics.stepmodel
DECODE_STEP, the one every sheet uses) is evaluated at the record's hardware,
model, precisions, batch, mean context and tensor-parallel degree through the
same context machinery as a sheet. No second step-time formula exists here:
the model's own t_step expression is substituted and compiled once per record
as a function of its five engine inputs (eta_bw, eta_flops, t_layer, t_fixed,
t_ar: what an engine profile holds).

A fit gives four of them to a set of memory-bound decode records: the achieved
bandwidth fraction eta_bw, the overhead per layer t_layer, the small time per
step t_fixed and the latency of one all-reduce round t_ar, by least squares on
relative error with every source weighing the same (its records share one
engine, harness and conversion rule, so their errors are not independent). The
step time is linear in t_layer, t_fixed and t_ar and piecewise linear in
1/eta_bw, so the fit is a closed-form linear solve (with eta_bw <= 1 and the
times at or above zero as bounds, an active set by enumeration) repeated until
the set of memory-bound components stops changing: exact for records the model
itself generated. eta_flops is held (memory-bound records cannot see it).

The engine profiles (specs/measurements/profiles/) come from here: `fitted` to
every memory-bound record, one per engine family with at least
MIN_FAMILY_RECORDS of them (what its records cannot tell apart held at
`fitted`'s values), and the hand-written `ideal`. The honest figures are
out-of-sample: leave one source out (all records of a source held out together),
per TP degree, and the eight-GPU records predicted from a fit to TP <= 4 only.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import product
from pathlib import Path

import numpy as np
import sympy as sp

from derivations.engine.context import BINDINGS, PROFILES_ERROR, Context, fitted, make_context
from derivations.engine.declare import derivation
from derivations.engine.sheet import Missing, evaluate, input_values
from derivations.engine.symbols import Symbols
from derivations.physics import glossary as gl
from derivations.physics import stepmodel as sm
from specs.catalog import SPECS_DIR, shown_path
from specs.errors import SpecError, suggest
from specs.measurements import DEFAULT_PROFILE, PROFILE_SUMMARY, Measurement, Profile, decode_step
from specs.power import load_power
from units import Quantity

#: The step model alone, as a derivation (never rendered; evaluated like a sheet).
STEP_MODEL = derivation(
    "step-model-validation",
    "The shared step model, evaluated for published measurements",
    "How long does one decode step of this setup take?",
    Symbols(parent=gl.GLOSSARY),
    sm.DECODE_STEP,
    ("t_step",),
    display_units=sm.DISPLAY_UNITS,
)

#: A record implying more bandwidth than this share of the datasheet's (the model's bytes over the measured step) is impossible.
MAX_IMPLIED_MBU = 1.0
#: A record whose interleaved prefill costs at least this share of its predicted decode step is prefill-heavy.
PREFILL_HEAVY_SHARE = 0.1
MEMORY_BOUND = "memory-bound decode"
OTHER_REGIME = "compute-bound or prefill-heavy"
REGIMES = (MEMORY_BOUND, OTHER_REGIME)

#: How each metric becomes a decode step time (the stated rules).
RULES = {
    "itl": "step = inter-token latency",
    "tokens_per_s_per_user": "step = 1 token / (tokens/s of one sequence)",
    "aggregate_tokens_per_s": "step = B tokens / (aggregate tokens/s at batch B); a static batch's figure includes its prefill",
    "e2e_latency": "step = (end-to-end latency - TTFT) / (output tokens - 1); without a TTFT, latency / output tokens (prefill included)",
}
#: The engine inputs the fit and the table vary, in the order the compiled step takes them; everything else comes from the record.
EFFICIENCY_SYMBOLS = (gl.eta_bw, gl.eta_flops, gl.t_layer, gl.t_fixed, gl.t_ar, gl.t_seq)
_MAX_FIT_ROUNDS = 50
#: eta_flops is held in every fitted profile at this value (the hand-set default the sheets always used): memory-bound decode
#: records, the only ones fitted, do not depend on it.
HELD_ETA_FLOPS = "0.7"
#: An engine family gets its own profile when the dataset holds at least this many memory-bound decode records of it.
MIN_FAMILY_RECORDS = 8
#: The validation targets the issue set (item 4): leave-one-source-out, per TP degree, eight GPUs from a fit to TP <= 4.
TARGETS = {"loso": 0.10, "per_tp": 0.12, "tp8_from_tp4": 0.15}


def measured_step(m: Measurement) -> float:
    """The record's figure as one decode step time [s], under RULES[m.metric] (specs.measurements.decode_step, checked at load)."""
    return float(decode_step(m).magnitude)


def mean_context(m: Measurement) -> int:
    """Tokens in each sequence's cache, averaged over the decode: the prompt plus half the output."""
    return m.input_tokens + m.output_tokens // 2


def serving(m: Measurement) -> bool:
    """The record measured a server at load: continuous batching, its figure a decode step between other requests' prompts.
    It is compared with the serving step (prompts in every step, stepmodel.prompts), which models their prefill."""
    return m.batching == "continuous" and m.metric in ("itl", "tokens_per_s_per_user")


def running_batch(m: Measurement) -> int:
    """Sequences in each decode step: the time-averaged running batch where the source gives it (rounded to whole sequences),
    else the batch or concurrency the record names."""
    mean = getattr(m, "mean_batch", None)
    return max(1, round(mean)) if mean is not None else m.batch


def prefill_sequences(m: Measurement) -> int:
    """Prompts prefilled during the measured decode that the step compared with does not model: the whole static batch when
    the figure includes its prefill; none for a server at load (the serving step carries the prompts) or a figure without it."""
    if serving(m) or m.metric == "itl" or (m.metric == "e2e_latency" and m.ttft is not None):
        return 0
    return m.batch


def record_context(m: Measurement, **inputs: str) -> Context:
    """The sheet context of a record: its chip, model and precisions, running batch, mean context and layout; a server at load
    (`serving`) with its mean prompt and output lengths, which turn on the serving step."""
    ctx = make_context(m.hardware, m.model, m.weights, m.kv, m.math)
    return ctx.with_overrides(**{**record_inputs(m), **inputs})


def record_inputs(m: Measurement) -> dict[str, str]:
    """The scenario inputs a record sets (its running batch, mean context, layout; for a server at load its mean prompt and
    output lengths, which turn on the serving step): one rule for the validation and the sheets' tables of records."""
    base = {"batch": str(running_batch(m)), "context": f"{mean_context(m)} token", "tp": str(m.tp), "tokens_per_step": "1 token",
            "dp": str(getattr(m, "dp", 1)), "ep": str(getattr(m, "ep", 1))}
    if serving(m):
        base.update(prompt_len=f"{m.input_tokens} token", output_len=f"{m.output_tokens} token")
    return base


StepFunction = Callable[[float, float, float, float, float, float], float]


@cache
def _t_step_compiled() -> tuple[tuple[sp.Symbol, ...], Callable[..., float]]:
    """The step model's t_step compiled once over all its symbols (the record's values first, then EFFICIENCY_SYMBOLS)."""
    expr = STEP_MODEL.expanded["t_step"]
    args = tuple(sorted(STEP_MODEL.symbols_of["t_step"] - set(EFFICIENCY_SYMBOLS), key=lambda s: s.name))
    custom = {type(f).__name__: type(f).numpy for f in expr.atoms(sp.Function) if hasattr(type(f), "numpy")}
    return args, sp.lambdify((*args, *EFFICIENCY_SYMBOLS), expr, modules=[custom, "math"])


def step_function(ctx: Context) -> StepFunction:
    """The step model's t_step [s] in `ctx` as a function of (eta_bw, eta_flops, t_layer, t_fixed, t_ar, t_seq): its own expression,
    compiled.

    Compiled once for every record (the record's values bound as floats); a record with a value its chip or model lacks (one
    the step needs only as a term multiplied by zero) is substituted exactly instead, which drops such terms."""
    args, compiled = _t_step_compiled()
    values = input_values(STEP_MODEL, ctx, set(args))
    if not any(isinstance(v, Missing) for v in values.values()):
        bound = tuple(float(values[s]) for s in args)
        return lambda eta_bw, eta_flops, t_layer, t_fixed, t_ar, t_seq: float(compiled(*bound, eta_bw, eta_flops, t_layer, t_fixed, t_ar, t_seq))
    known = {s: v for s, v in values.items() if s not in EFFICIENCY_SYMBOLS and not isinstance(v, Missing)}
    expr = STEP_MODEL.expanded["t_step"].xreplace(known)
    left = expr.free_symbols - set(EFFICIENCY_SYMBOLS)
    if left:
        gone = [v for s, v in values.items() if s in left and isinstance(v, Missing)]
        why = gone[0].reason if gone else f"no value for {sorted(str(s) for s in left)}"
        raise SpecError(ctx.hardware.path, None, f"the step model has no value here: {why}")
    return sp.lambdify(EFFICIENCY_SYMBOLS, expr, modules="math")


@dataclass(frozen=True)
class Calibration:
    """A set of engine inputs and how it was obtained."""

    eta_bw: float
    t_layer: float
    t_fixed: float
    t_ar: float
    #: how they were obtained, in words (which were fitted, which held, which hit a bound)
    how: str
    #: the records fitted
    ids: tuple[str, ...] = ()
    eta_flops: float = float(HELD_ETA_FLOPS)
    #: the time per sequence per step (the serving step's host work per request)
    t_seq: float = 0.0

    def replaced(self, **values: float) -> Calibration:
        return replace(self, **values)


def profile_calibration(p: Profile) -> Calibration:
    """An engine profile's values as a Calibration (SI floats)."""
    si = {k: float(p.quantity(k).to_base_units().magnitude) for k in p.values}
    return Calibration(si["eta_bw"], si["t_layer"], si["t_fixed"], si["ar_latency"], f"the {p.name} profile ({_where(p.path)}: {p.provenance})",
                       p.records, si["eta_flops"], si["t_seq"])


@cache
def sheet_defaults() -> Calibration:
    """The engine inputs every sheet uses by default: the default profile (specs/measurements/profiles/fitted.toml); where a
    profile file is broken, its one-line error (a fit then starts from HAND_SET: `start`)."""
    return profile_calibration(fitted())


def _where(path: Path) -> str:
    """A shipped file relative to the project (the same on every machine); another as shown in errors."""
    try:
        return path.resolve().relative_to(SPECS_DIR.parent.resolve()).as_posix()
    except ValueError:
        return shown_path(path)


#: The hand-set defaults every sheet printed before the dataset existed, with no overhead per layer and no all-reduce latency:
#: the starting point, kept to report the error before any fit.
HAND_SET = Calibration(0.8, 0.0, 0.2e-3, 0.0, "the hand-set defaults before the dataset (eta_bw 0.8, t_fixed 0.2 ms, no per-layer overhead, "
                       "no all-reduce latency)")


def start() -> Calibration:
    """Where a fit starts (its first guess, the eta_flops it holds, and the regimes it first judges the records at): the sheets'
    defaults, or the hand-set ones when a profile file is broken (so `roofline calibrate --write-defaults` can write it anew)."""
    return sheet_defaults() if PROFILES_ERROR is None else HAND_SET


@dataclass(frozen=True)
class Record:
    """One measurement with the step model evaluated at its inputs."""

    m: Measurement
    #: measured decode step [s]
    measured: float
    #: t_step(eta_bw, eta_flops, t_layer, t_fixed, t_ar, t_seq) [s]
    step: StepFunction
    #: bytes one GPU streams per step (weights split by TP, plus the KV cache) [B]
    bytes_per_gpu: float
    #: datasheet bandwidth [B/s]
    bandwidth: float
    #: the step's memory time and compute time at the datasheet rates (eta_bw = eta_flops = 1) [s]
    memory_time: float
    compute_time: float
    #: prefill compute time folded into each measured step, at the dense peak (eta_flops = 1) [s]
    prefill_time: float
    #: the chip's board power cap [W] (0: the spec gives none) and GPUs the record's setup uses
    tdp: float = 0.0
    gpus: int = 1
    #: the set of engine inputs the regime is judged at (None: the sheets' defaults)
    classify: Calibration | None = field(default=None, compare=False)

    def at(self, c: Calibration) -> float:
        """The predicted step [s] at a set of engine inputs."""
        return self.predict(c.eta_bw, c.t_layer, c.t_fixed, c.t_ar, c.eta_flops, c.t_seq)

    def predict(self, eta_bw: float, t_layer: float, t_fixed: float, t_ar: float, eta_flops: float | None = None, t_seq: float = 0.0) -> float:
        ef = start().eta_flops if eta_flops is None else eta_flops
        return float(self.step(eta_bw, ef, t_layer, t_fixed, t_ar, t_seq))

    def floor(self) -> float:
        """The step at the datasheet rates with no overheads and no all-reduce latency (the `ideal` profile's inputs);
        all-reduce bytes at link rate stay."""
        return self.predict(1.0, 0.0, 0.0, 0.0, 1.0, 0.0)

    def utilisation(self, step: float) -> tuple[float, float]:
        """The step's use of the datasheet bandwidth and of the dense peak at a step time [s]: (U_mem, U_flop)."""
        return self.memory_time / step, self.compute_time / step

    def power_share(self, step: float, power: PowerFit) -> float:
        """Board power per GPU as a share of the TDP at a step time: the power model (stepmodel.power_share)."""
        u_mem, u_flop = self.utilisation(step)
        return min(1.0, power.idle + power.memory * u_mem + power.compute * u_flop)

    def energy_at(self, step: float, power: PowerFit) -> float:
        """Energy per output token [J/token] at a step time: every GPU's board power over the step, per sequence of the batch."""
        return self.gpus * self.tdp * self.power_share(step, power) * step / running_batch(self.m)

    def implied_mbu(self) -> float:
        """The model's bytes per GPU over the measured step, as a share of the datasheet bandwidth."""
        return self.bytes_per_gpu / (self.measured * self.bandwidth)

    def prefill_share_at(self, c: Calibration) -> float:
        """Prefill FLOPs folded into each measured step, as a share of the prediction at `c`."""
        return self.prefill_time / c.eta_flops / self.at(c)

    def compute_bound_at(self, c: Calibration) -> bool:
        """The step's FLOPs take longer than its bytes at `c`."""
        return self.compute_time / c.eta_flops > self.memory_time / c.eta_bw

    def regime_at(self, c: Calibration) -> str:
        return OTHER_REGIME if self.compute_bound_at(c) or self.prefill_share_at(c) >= PREFILL_HEAVY_SHARE else MEMORY_BOUND

    @property
    def prefill_share(self) -> float:
        return self.prefill_share_at(self.classify or start())

    @property
    def regime(self) -> str:
        """The record's regime at the sheets' defaults: compute-bound, or prefill-heavy at PREFILL_HEAVY_SHARE, or memory-bound decode."""
        return self.regime_at(self.classify or start())

    @property
    def group(self) -> tuple[str, str]:
        """Records of one engine on one chip calibrate each other."""
        return self.m.engine, self.m.hardware.key

    @property
    def source(self) -> str:
        """The source a record comes from: its file (one file per source). Leave-one-source-out holds a whole source out."""
        return self.m.path.name

    @property
    def family(self) -> str:
        """The engine family as a profile name: the record's engine, lowercase, words joined by '-'."""
        return family_name(self.m.engine)


def family_name(engine: str) -> str:
    return "-".join(engine.lower().replace("_", " ").split())


def _si(v: sp.Expr | Missing, what: str, m: Measurement) -> float:
    if isinstance(v, Missing):
        raise SpecError(m.where, what, v.reason)
    return float(v)


def evaluate_record(m: Measurement) -> Record:
    ctx = record_context(m)
    f = step_function(ctx)
    rates = {"eta_bw": "1", "eta_flops": "1"}
    values = evaluate(STEP_MODEL, record_context(m, **rates), only=("bytes_per_gpu", "t_memory", "t_compute"))
    units = STEP_MODEL.symbols.units()
    bytes_per_gpu = float(Quantity(_si(values["bytes_per_gpu"], "bytes_per_gpu", m), units[sp.Symbol("bytes_per_gpu", positive=True)]).to("B").magnitude)
    t_mem, t_cmp = _si(values["t_memory"], "t_memory", m), _si(values["t_compute"], "t_compute", m)
    bandwidth = float(BINDINGS[gl.beta](ctx).to("B/s").magnitude)
    prefill = 0.0
    seqs = prefill_sequences(m)
    if seqs:
        pre = record_context(m, batch=str(seqs), tokens_per_step=f"{m.input_tokens} token", context=f"{max(1, m.input_tokens // 2)} token", **rates)
        prefill = _si(evaluate(STEP_MODEL, pre, only=("t_compute",))["t_compute"], "t_compute", m) / m.output_tokens
    tdp = float(m.hardware.tdp.to("W").magnitude) if m.hardware.tdp is not None else 0.0
    record = Record(m, measured_step(m), f, bytes_per_gpu, bandwidth, t_mem, t_cmp, prefill, tdp=tdp, gpus=m.gpus)
    if record.implied_mbu() > MAX_IMPLIED_MBU:
        raise SpecError(m.where, "value", f"a decode step of {record.measured * 1e3:.3g} ms moves the {bytes_per_gpu / 1e9:.3g} GB a GPU must read "
                                          f"at {record.implied_mbu():.2f} times its datasheet bandwidth; no server does (check the unit, the metric and the batch)")
    return record


#: evaluated records by the identity of their measurement (the measurement is kept, so its id is never reused)
_EVALUATED: dict[int, tuple[Measurement, Record]] = {}


def evaluate_records(records: Sequence[Measurement], classify: Calibration | None = None) -> tuple[Record, ...]:
    """Each measurement with the step model evaluated (cached per measurement object); regimes judged at `classify`
    (None: the sheets' defaults)."""
    out = []
    for m in records:
        hit = _EVALUATED.get(id(m))
        if hit is None or hit[0] is not m:
            hit = _EVALUATED[id(m)] = (m, evaluate_record(m))
        out.append(hit[1] if classify is None else replace(hit[1], classify=classify))
    return tuple(out)


def _memo(f: Callable) -> Callable:
    """Cache a function of (records, classify) per process by the identity of the records (kept alive with the result): the
    out-of-sample figures refit the dataset dozens of times, and `roofline validate`, the profiles and the tests all ask for them."""
    memo: dict[tuple, tuple] = {}

    def wrapped(records: Sequence[Measurement], classify: Calibration | None = None):
        key = (tuple(id(m) for m in records), classify)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = (tuple(records), f(records, classify))
        return hit[1]

    wrapped.__doc__ = f.__doc__
    wrapped.__name__ = f.__name__
    return wrapped


# --- fitting -------------------------------------------------------------------------------------

_FAST = "eta_bw bound at 1 (the records are faster than the model at datasheet bandwidth)"
#: the fitted parameters (x = 1/eta_bw), their lower bounds and their names in words
_PARAMS = ("x", "t_layer", "t_fixed", "t_ar", "t_seq")
_BOUNDS = {"x": 1.0, "t_layer": 0.0, "t_fixed": 0.0, "t_ar": 0.0, "t_seq": 0.0}
_NAMES = {"x": "eta_bw", "t_layer": "t_layer", "t_fixed": "t_fixed", "t_ar": "t_ar", "t_seq": "t_seq"}
#: the order in which a fit that cannot tell its parameters apart holds them (the small per-step time first)
_HOLD_ORDER = ("t_fixed", "t_seq", "t_ar", "t_layer")


def _local_line(r: Record, x: float, eta_flops: float) -> tuple[float, dict[str, float], float]:
    """t_step near x = 1/eta_bw as slope*x + sum(coefficient*parameter) + intercept: piecewise linear in x, linear in the times."""
    h = 1e-6 * x
    g0 = float(r.step(1 / x, eta_flops, 0.0, 0.0, 0.0, 0.0))
    g1 = float(r.step(1 / (x + h), eta_flops, 0.0, 0.0, 0.0, 0.0))
    slope = (g1 - g0) / h
    return slope, _time_coefficients(r.step, eta_flops), g0 - slope * x


@lru_cache(maxsize=8192)
def _time_coefficients(step: StepFunction, eta_flops: float) -> dict[str, float]:
    """What one second of each time adds to a record's step. The times enter t_step as a sum outside every max()
    (stepmodel.t_step), so these do not depend on eta_bw: one evaluation per record, not one per round of every fit."""
    g0 = float(step(1.0, eta_flops, 0.0, 0.0, 0.0, 0.0))
    return {"t_layer": float(step(1.0, eta_flops, 1.0, 0.0, 0.0, 0.0)) - g0, "t_fixed": 1.0,
            "t_ar": float(step(1.0, eta_flops, 0.0, 0.0, 1.0, 0.0)) - g0, "t_seq": float(step(1.0, eta_flops, 0.0, 0.0, 0.0, 1.0)) - g0}


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None for a (numerically) singular system."""
    n = len(b)
    m = [[*row, bi] for row, bi in zip(a, b, strict=True)]
    scale = max((abs(v) for row in a for v in row), default=0.0)
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(m[k][i]))
        if abs(m[p][i]) <= 1e-12 * scale:
            return None
        m[i], m[p] = m[p], m[i]
        for k in range(i + 1, n):
            f = m[k][i] / m[i][i]
            for j in range(i, n + 1):
                m[k][j] -= f * m[i][j]
    out = [0.0] * n
    for i in reversed(range(n)):
        out[i] = (m[i][n] - sum(m[i][j] * out[j] for j in range(i + 1, n))) / m[i][i]
    return out


class IndistinctError(ValueError):
    """The records cannot tell the free parameters apart: hold one."""


def _least_squares(cols: dict[str, list[float]], ys: Sequence[float], w: Sequence[float], free: Sequence[str],
                   values: dict[str, float]) -> tuple[dict[str, float], tuple[str, ...]]:
    """Weighted least squares of y = sum(col * param) over the `free` parameters (the others at `values`), each at or above
    its bound: the best feasible solution over every choice of bounds that bind. Returns the parameters and those bound."""
    best: tuple[float, dict[str, float], tuple[str, ...]] | None = None
    col = {p: np.asarray(cols[p], dtype=float) for p in _PARAMS}
    y_all, w_all = np.asarray(ys, dtype=float), np.asarray(w, dtype=float)
    for binds in product((False, True), repeat=len(free)):
        bound = tuple(p for p, b in zip(free, binds, strict=True) if b)
        fit_these = [p for p in free if p not in bound]
        vals = {**values, **{p: _BOUNDS[p] for p in bound}}
        rest = y_all - sum(col[p] * vals[p] for p in _PARAMS if p not in fit_these)
        if fit_these:
            a = [[float(np.dot(w_all * col[p], col[q])) for q in fit_these] for p in fit_these]
            b = [float(np.dot(w_all * col[p], rest)) for p in fit_these]
            sol = _solve(a, b)
            if sol is None:
                if not bound:
                    raise IndistinctError(f"these records cannot tell {' from '.join(_NAMES[p] for p in fit_these)} apart; hold one")
                continue
            vals.update(zip(fit_these, sol, strict=True))
            if any(vals[p] < _BOUNDS[p] for p in fit_these):
                continue
        cost = float(np.dot(w_all, (y_all - sum(col[p] * vals[p] for p in _PARAMS)) ** 2))
        if best is None or cost < best[0] * (1 - 1e-12):
            best = (cost, vals, bound)
    assert best is not None  # every parameter at its bound is always feasible
    return best[1], best[2]


def source_weights(records: Sequence[Record]) -> list[float]:
    """Least-squares weights on relative error with every source weighing the same: 1/measured^2, divided by the number of the
    fitted records that share the record's source."""
    count: dict[str, int] = {}
    for r in records:
        count[r.source] = count.get(r.source, 0) + 1
    return [1 / (r.measured ** 2 * count[r.source]) for r in records]


def fit(records: Sequence[Record], held: Mapping[str, float] | None = None, eta_flops: float | None = None,
        held_as: str = "held") -> Calibration:
    """Least squares on relative error, each source weighing the same, for eta_bw and every time parameter not in `held`
    (t_layer, t_fixed, t_ar; held ones stay at their given value), over `records`.

    eta_bw stays in (0, 1], the times at or above zero: a bound that binds is held there and the others refitted, and `how`
    says so. Records that cannot tell the free parameters apart raise IndistinctError (see fit_distinct); records with no tensor
    parallelism cannot fit t_ar.
    """
    if not records:
        raise ValueError("fit needs at least one record")
    held = dict(held or {})
    unknown = set(held) - set(_PARAMS[1:])
    if unknown:
        raise ValueError(f"only t_layer, t_fixed, t_ar and t_seq can be held, not {sorted(unknown)}")
    ef = start().eta_flops if eta_flops is None else eta_flops
    free = ["x"] + [p for p in _PARAMS[1:] if p not in held]
    if len(free) > len(records):
        raise IndistinctError(f"{len(records)} record(s) cannot fix {len(free)} parameters: hold some")
    w = source_weights(records)
    x = 1 / start().eta_bw
    if "t_ar" in free and not any(_local_line(r, x, ef)[1]["t_ar"] > 0 for r in records):
        raise IndistinctError("no record has tensor parallelism, so t_ar cannot be fitted: hold it")
    vals: dict[str, float] = {}
    bound: tuple[str, ...] = ()
    for _ in range(_MAX_FIT_ROUNDS):
        lines = [_local_line(r, x, ef) for r in records]
        cols = {"x": [a for a, _, _ in lines], **{p: [c[p] for _, c, _ in lines] for p in _PARAMS[1:]}}
        ys = [r.measured - c for r, (_, _, c) in zip(records, lines, strict=True)]
        if free == ["x"] and len(records) == 1 and lines[0][0] > 0:  # one record, eta_bw alone: the least squares is one division
            y = ys[0] - sum(lines[0][1][p] * held[p] for p in _PARAMS[1:])
            vals, bound = ({**held, "x": y / lines[0][0]}, ()) if y / lines[0][0] >= _BOUNDS["x"] else ({**held, "x": _BOUNDS["x"]}, ("x",))
        else:
            vals, bound = _least_squares(cols, ys, w, free, {**held, "x": x})
        done = abs(vals["x"] - x) <= 1e-12 * x
        x = vals["x"]
        if done:
            break
    fitted = [_NAMES[p] for p in free if p not in bound]
    parts = [f"{_NAMES[p]} bound at 0" for p in free if p in bound and p != "x"]
    if fitted:
        parts.append(_and(fitted) + (" fitted together" if len(fitted) > 1 else " fitted"))
    if held:
        parts.append(f"{_and(list(held))} {held_as}")
    if "x" in bound:
        parts.append(_FAST)
    return Calibration(1 / x, float(vals["t_layer"]), float(vals["t_fixed"]), float(vals["t_ar"]), "; ".join(parts),
                       tuple(r.m.id for r in records), ef, float(vals["t_seq"]))


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def fit_distinct(records: Sequence[Record], fallback: Calibration, held_as: str) -> Calibration:
    """fit(), holding parameters at `fallback`'s values in _HOLD_ORDER until the records can tell the rest apart."""
    held: dict[str, float] = {}
    for p in (None, *_HOLD_ORDER):
        if p is not None:
            held[p] = getattr(fallback, p)
        try:
            return fit(records, held, held_as=held_as)
        except IndistinctError:
            continue
    raise ValueError("the records cannot fit eta_bw even with every time held")


# --- the validation table ------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    id: str
    engine: str
    hardware: str
    model: str
    setup: str
    regime: str
    tp: int
    source: str
    measured: float
    floor: float
    predicted: float
    #: (predicted - measured) / measured: negative means the model is too fast
    error: float
    implied_mbu: float
    prefill_share: float
    rule: str
    source_title: str
    url: str
    #: sequences in each step (the running batch), whether the model routes experts, and what the record says of its energy
    batch: int = 1
    moe: bool = False
    #: the measured energy per output token [J/token] and the power model's at the prediction (None: the record has no meter)
    energy_measured: float | None = None
    energy_predicted: float | None = None


@dataclass(frozen=True)
class Summary:
    regime: str
    count: int
    median_abs_error: float | None
    worst_error: float | None
    worst_id: str


@dataclass(frozen=True)
class Validation:
    calibration: Calibration
    label: str
    rows: tuple[Row, ...]
    summaries: tuple[Summary, ...]


def _setup(m: Measurement) -> str:
    return (f"{m.weights}/{m.kv} kv, {m.gpus}x tp{m.tp}, B={m.batch} {m.batching}, "
            f"{m.input_tokens} in / {m.output_tokens} out")


def row(r: Record, c: Calibration, power: PowerFit | None = None) -> Row:
    p = r.at(c)
    m = r.m
    measured_e = getattr(m, "energy_per_token", None)
    e_meas = float(measured_e.to("J/token").magnitude) if measured_e is not None else None
    e_pred = r.energy_at(p, power or power_fit_stored()) if e_meas is not None and r.tdp else None
    return Row(m.id, m.engine, m.hardware.key, m.model.key, _setup(m), r.regime, m.tp, r.source, r.measured, r.floor(), p,
               (p - r.measured) / r.measured, r.implied_mbu(), r.prefill_share, RULES[m.metric], m.source, m.url,
               running_batch(m), m.model.moe is not None, e_meas, e_pred)


def _summary(label: str, sel: Sequence[Row], errors: Callable[[Row], float]) -> Summary:
    if not sel:
        return Summary(label, 0, None, None, "")
    worst = max(sel, key=lambda x: abs(errors(x)))
    return Summary(label, len(sel), statistics.median(abs(errors(x)) for x in sel), errors(worst), worst.id)


def memory_summary(rows: Iterable[Row]) -> Summary:
    """Median and worst absolute error of the memory-bound decode records among `rows`."""
    return _summary(MEMORY_BOUND, [x for x in rows if x.regime == MEMORY_BOUND], lambda x: x.error)


def summarise(rows: Iterable[Row], errors: Callable[[Row], float] = lambda x: x.error) -> tuple[Summary, ...]:
    """Median and worst absolute error per regime, and over all records."""
    rows = tuple(rows)
    return tuple(_summary(regime, [x for x in rows if regime in ("all", x.regime)], errors) for regime in (*REGIMES, "all"))


def by_tp(rows: Iterable[Row]) -> tuple[Summary, ...]:
    """Median and worst absolute error of the memory-bound decode records per tensor-parallel degree (labels 'TP n')."""
    mem = [x for x in rows if x.regime == MEMORY_BOUND]
    return tuple(_summary(f"TP {n}", [x for x in mem if x.tp == n], lambda x: x.error) for n in sorted({x.tp for x in mem}))


def validate(records: Sequence[Measurement], c: Calibration) -> Validation:
    """Every record predicted at `c`, with the error summary per regime (regimes judged at the sheets' defaults)."""
    rows = tuple(row(r, c) for r in evaluate_records(records))
    return Validation(c, c.how, rows, summarise(rows))


def memory_bound(records: Sequence[Measurement], classify: Calibration | None = None) -> list[Record]:
    """The records every fit uses: memory-bound decode at `classify`, and not marked `excluded` in their file (a host bottleneck
    or a saturated run is reported, never fitted)."""
    return [r for r in evaluate_records(records, classify) if r.regime == MEMORY_BOUND and getattr(r.m, "excluded", None) is None]


def dataset_defaults(records: Sequence[Measurement], classify: Calibration | None = None) -> Calibration:
    """eta_bw, t_layer, t_fixed and t_ar fitted to every memory-bound decode record of the dataset, the regimes judged at
    `classify` (None: the sheets' defaults)."""
    rs = memory_bound(records, classify)
    c = fit(rs)
    return replace(c, how=f"fitted to the {len(rs)} memory-bound decode records of {len({r.source for r in rs})} sources "
                          f"(least squares on relative error, each source weighing the same; {c.how}; eta_flops {HELD_ETA_FLOPS} held)")


#: significant figures the stored profiles keep
DEFAULT_FIGURES = 2


def _figures(v: float, figures: int = DEFAULT_FIGURES) -> str:
    """`v` to `figures` significant figures as a plain decimal (no exponent)."""
    r = float(f"{v:.{figures}g}")
    return f"{r:f}".rstrip("0").rstrip(".") or "0"


def default_texts(c: Calibration) -> dict[str, str]:
    """A fit as the unit strings a profile file stores (engine-input name -> value)."""
    return {"eta_bw": _figures(c.eta_bw), "eta_flops": _figures(c.eta_flops), "t_layer": f"{_figures(c.t_layer * 1e6)} us",
            "t_fixed": f"{_figures(c.t_fixed * 1e3)} ms", "ar_latency": f"{_figures(c.t_ar * 1e6)} us", "t_seq": f"{_figures(c.t_seq * 1e6)} us"}


def from_texts(texts: Mapping[str, str], how: str, ids: tuple[str, ...]) -> Calibration:
    si = {k: float(Quantity(v).to_base_units().magnitude) for k, v in texts.items()}
    return Calibration(si["eta_bw"], si["t_layer"], si["t_fixed"], si["ar_latency"], how, ids, si["eta_flops"], si["t_seq"])


#: a regime change can move a record across the line and the refit back: give up after this many rounds
_MAX_DEFAULT_ROUNDS = 10


def fresh_defaults(records: Sequence[Measurement]) -> tuple[Calibration, dict[str, str]]:
    """The `fitted` profile the dataset gives today: fitted with the regimes judged at the stored profile, rounded, and refitted
    with the regimes judged at the rounded values until the rounded values stop changing (a fixed point: the stored profile
    classifies the records that fit it). Returns the unrounded fit and the rounded texts."""
    classify = start()
    for _ in range(_MAX_DEFAULT_ROUNDS):
        c = dataset_defaults(records, classify)
        texts = default_texts(c)
        if texts == default_texts(classify):
            return c, texts
        classify = from_texts(texts, c.how, c.ids)
    raise ValueError("the dataset defaults do not settle: a record keeps crossing between regimes as they change")


# --- out of sample: leave one source out, per TP degree, eight GPUs from TP <= 4 -------------------

@dataclass(frozen=True)
class OutOfSample:
    """Memory-bound decode records predicted from fits that did not see them (regimes judged at the sheets' defaults).

    - `loso`: each source's records predicted from a fit to every other source's (leave one source out);
    - `tp8`: the eight-GPU records predicted from a fit to the records of four GPUs or fewer.
    Each fit holds what its records cannot tell apart at the sheets' defaults (fit_distinct).
    """

    loso: tuple[Row, ...]
    loso_fits: Mapping[str, Calibration]
    tp8: tuple[Row, ...]
    tp8_fit: Calibration | None


@_memo
def out_of_sample(records: Sequence[Measurement], classify: Calibration | None = None) -> OutOfSample:
    rs = memory_bound(records, classify)
    defaults = classify or start()
    loso, fits = [], {}
    for src in sorted({r.source for r in rs}):
        c = fit_distinct([r for r in rs if r.source != src], defaults, "held at the sheets' defaults")
        fits[src] = c
        loso += [row(r, c) for r in rs if r.source == src]
    loso.sort(key=lambda x: [r.m.id for r in rs].index(x.id))
    small, eight = [r for r in rs if r.m.tp <= 4], [r for r in rs if r.m.tp == 8]
    c8 = fit_distinct(small, defaults, "held at the sheets' defaults") if small and eight else None
    return OutOfSample(tuple(loso), fits, tuple(row(r, c8) for r in eight) if c8 else (), c8)


def at_family_profiles(records: Sequence[Measurement], profiles: Mapping[str, Profile]) -> tuple[Row, ...]:
    """Every record predicted at its own engine family's profile where one exists, else at the default profile. In sample: a
    family profile is fitted to these very records, so this is what a profile reaches, not what it predicts."""
    return tuple(row(r, profile_calibration(profiles.get(r.family, profiles[DEFAULT_PROFILE]))) for r in evaluate_records(records))


# --- engine profiles ----------------------------------------------------------------------------

@dataclass(frozen=True)
class FittedProfile:
    """A profile `roofline calibrate --write-defaults` writes: its name, description, the unrounded fit and the stored texts."""

    name: str
    description: str
    calibration: Calibration
    texts: dict[str, str]
    summary: dict[str, str]


def family_profiles(records: Sequence[Measurement], fitted: Calibration) -> list[FittedProfile]:
    """One profile per engine family with at least MIN_FAMILY_RECORDS memory-bound decode records (regimes judged at `fitted`),
    what its records cannot tell apart held at `fitted`'s values."""
    rs = memory_bound(records, fitted)
    out = []
    for fam in sorted({r.family for r in rs}):
        mine = [r for r in rs if r.family == fam]
        if len(mine) < MIN_FAMILY_RECORDS or fam in (DEFAULT_PROFILE, "ideal"):
            continue
        c = fit_distinct(mine, fitted, f"held at the {DEFAULT_PROFILE} profile's values (these records cannot tell them apart)")
        engines = sorted({r.m.engine for r in mine})
        sources = len({r.source for r in mine})
        c = replace(c, how=f"fitted to the {len(mine)} memory-bound decode records of {', '.join(engines)} ({sources} source"
                           f"{'s' if sources > 1 else ''}; least squares on relative error, each source weighing the same; {c.how}; "
                           f"eta_flops {HELD_ETA_FLOPS} held)")
        rows = [row(r, c) for r in mine]
        s = _summary(MEMORY_BOUND, rows, lambda x: x.error)
        out.append(FittedProfile(fam, f"{', '.join(engines)} as the dataset measured it ({len(mine)} records)", c, default_texts(c),
                                 {"median_error": _figures(s.median_abs_error), "worst_error": _figures(abs(s.worst_error))}))
    return out


def summary_texts(records: Sequence[Measurement], c: Calibration, classify: Calibration | None = None) -> dict[str, str]:
    """What the dataset says at `c` (regimes judged at `classify`, None: the sheets' defaults), as the plain numbers stored in
    the default profile's [summary] table (specs.measurements.PROFILE_SUMMARY)."""
    rs = evaluate_records(records, classify)
    rows = [row(r, c) for r in rs]
    mem = summarise(rows)[0]
    low, mid, high = measured_mbu_range(records, classify)
    low8, _, high8 = measured_mbu_range(records, classify, tp=8)
    loso = memory_summary(out_of_sample(records, classify).loso)
    return {"median_error": _figures(mem.median_abs_error), "worst_error": _figures(abs(mem.worst_error)),
            "loso_error": _figures(loso.median_abs_error), "mbu_low": _figures(low), "mbu_median": _figures(mid), "mbu_high": _figures(high),
            "tp8_mbu_low": _figures(low8), "tp8_mbu_high": _figures(high8)}


def fresh_profiles(records: Sequence[Measurement]) -> list[FittedProfile]:
    """Every profile the dataset gives today: `fitted` (to every memory-bound record) and one per engine family."""
    fresh, texts = fresh_defaults(records)
    rounded = from_texts(texts, fresh.how, fresh.ids)
    fitted = FittedProfile(DEFAULT_PROFILE, "fitted to every memory-bound decode record of the published measurements (specs/measurements)",
                           fresh, texts, summary_texts(records, rounded, rounded))
    return [fitted, *family_profiles(records, rounded)]


def profile_file_text(p: FittedProfile) -> str:
    """A fitted profile's file (`roofline calibrate --write-defaults`)."""
    ids = "".join(f'    "{i}",\n' for i in p.calibration.ids)
    table = "".join(f'{k} = "{p.summary[k]}"\n' for k in PROFILE_SUMMARY if k in p.summary)
    values = "".join(f'{k} = "{p.texts[k]}"\n' for k in ("eta_bw", "eta_flops", "t_layer", "t_fixed", "t_seq", "ar_latency"))
    return (
        f"# Engine profile {p.name!r}: the step model's engine inputs fitted to published measurements in specs/measurements/, and what\n"
        "# the dataset says at them. Written by `roofline calibrate --write-defaults`; a test fails when a fresh fit rounds to other values.\n"
        f'description = "{p.description}"\n'
        f'provenance = "{p.calibration.how}; rounded to {DEFAULT_FIGURES} significant figures"\n'
        f"{values}"
        f"records = [\n{ids}]\n"
        "\n"
        "# At these values, regimes judged at the default profile (`roofline validate`); each a plain number, to two significant figures.\n"
        "[summary]\n"
        f"{table}"
    )


# --- calibration on a few records, and leave-one-out -----------------------------------------------

@dataclass(frozen=True)
class LeaveOneOut:
    """Leave-one-out over the dataset. For each record, the dataset defaults are refitted without it; then

    - `one`: eta_bw is calibrated on one other memory-bound record of the same engine and chip (the times held at those
      defaults), the record predicted, and the median absolute error over the choices of that record kept (unsigned:
      `Row.error` is that median, not a signed error);
    - `group`: eta_bw and t_fixed are calibrated on all other memory-bound records of the same engine and chip, t_layer and
      t_ar held (eta_bw alone, t_fixed held too, when they cannot tell the two apart).

    A record with no such peer is left out (`skipped`). Regimes are judged at the sheets' defaults.
    """

    one: tuple[Row, ...]
    group: tuple[Row, ...]
    one_summary: tuple[Summary, ...]
    group_summary: tuple[Summary, ...]
    skipped: tuple[str, ...]


def calibrate(records: Sequence[Measurement], ids: Sequence[str], defaults: Calibration) -> Calibration:
    """Fit on the named records: eta_bw and t_fixed from two or more, eta_bw alone from one; the rest held at `defaults`."""
    by_id = {r.m.id: r for r in evaluate_records(records)}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise SpecError("--from", unknown[0][:60], f"no record with this id{suggest(unknown[0], by_id)}; `roofline validate` lists them")
    chosen = [by_id[i] for i in dict.fromkeys(ids)]
    return _calibrate(chosen, defaults)


def _calibrate(chosen: Sequence[Record], defaults: Calibration) -> Calibration:
    times = {"t_layer": defaults.t_layer, "t_ar": defaults.t_ar, "t_seq": defaults.t_seq}
    if len(chosen) == 1:
        return fit(chosen, {**times, "t_fixed": defaults.t_fixed}, held_as="held at the dataset defaults")
    try:
        return fit(chosen, times, held_as="held at the dataset defaults")
    except IndistinctError:
        return fit(chosen, {**times, "t_fixed": defaults.t_fixed},
                   held_as="held at the dataset defaults (the records cannot tell eta_bw from t_fixed)")


def _error(r: Record, c: Calibration) -> float:
    return (r.at(c) - r.measured) / r.measured


#: The most peers (memory-bound records of the same engine and chip) a record's one-record calibration is tried with in the
#: leave-one-out, the first in the dataset's order (the shipped dataset's largest group, TensorRT-LLM on the A100 of
#: LLM-Inference-Bench and TensorRT-LLM 0.6.1, has 26 records, so its records use 16 of their 25 peers): it keeps the
#: leave-one-out linear.
MAX_LOO_PEERS = 16
#: Two local lines are the same piece of the step model when they agree to this relative tolerance (a finite difference's noise
#: is about 1e-10; a component crossing the ridge changes a line by far more).
_SAME_LINE = 1e-7
_GRAM_KEYS = (*_PARAMS, "y")

Line = tuple[float, dict[str, float], float]


def _same_line(a: Line, b: Line, x: float, scale: float) -> bool:
    """Two local lines (slope, coefficients, intercept) near x agree: slope*x and the intercept to _SAME_LINE of `scale` (the
    record's measured step), each time's coefficient to _SAME_LINE of itself."""
    return (abs(a[0] - b[0]) * x <= _SAME_LINE * scale and abs(a[2] - b[2]) <= _SAME_LINE * scale
            and all(abs(a[1][p] - b[1][p]) <= _SAME_LINE * max(abs(a[1][p]), abs(b[1][p]), 1.0) for p in a[1]))


class _Linearised:
    """Records' local lines at one x (= 1/eta_bw), their least-squares sums (a Gram matrix per record and per source, each
    source weighing the same as in `fit`), and the interval of x around it over which each record's line stays the same (the
    step model is piecewise linear in x).

    A fit of all but one record is then the sums less that record's (its source's weight rescaled for one record fewer),
    solved in O(1) (`fit_without`); it is exact when its x lands where every other record's line is still the one it was
    linearised with, since `fit` would stop there too.
    """

    def __init__(self, records: Sequence[Record], x: float, eta_flops: float) -> None:
        self.records = list(records)
        self.x, self.eta_flops = x, eta_flops
        self.lines = [_local_line(r, x, eta_flops) for r in self.records]
        self.grams = []
        for r, (slope, coef, intercept) in zip(self.records, self.lines, strict=True):
            w = 1 / r.measured**2
            col = {"x": slope, **coef, "y": r.measured - intercept}
            self.grams.append({(a, b): w * col[a] * col[b] for a in _GRAM_KEYS for b in _GRAM_KEYS})
        self.count: dict[str, int] = {}
        self.by_source: dict[str, dict[tuple[str, str], float]] = {}
        for r, g in zip(self.records, self.grams, strict=True):
            self.count[r.source] = self.count.get(r.source, 0) + 1
            s = self.by_source.setdefault(r.source, dict.fromkeys(g, 0.0))
            for k, v in g.items():
                s[k] += v
        keys = [(a, b) for a in _GRAM_KEYS for b in _GRAM_KEYS]
        self.total = {k: sum(s[k] / self.count[src] for src, s in self.by_source.items()) for k in keys}
        self.spans = [self._span(r, line) for r, line in zip(self.records, self.lines, strict=True)]
        self.index = {id(r): i for i, r in enumerate(self.records)}
        # the two tightest ends of the spans, so the common interval without any one record takes O(1)
        self.lows = sorted(range(len(self.records)), key=lambda k: -self.spans[k][0])[:2]
        self.highs = sorted(range(len(self.records)), key=lambda k: self.spans[k][1])[:2]
        self.with_tp = sum(1 for line in self.lines if line[1]["t_ar"] > 0)

    def _span(self, r: Record, line: Line) -> tuple[float, float]:
        """The x interval around self.x (within a factor 2, and x >= 1) where `r`'s line is `line`."""
        def same(at: float) -> bool:
            return _same_line(_local_line(r, at, self.eta_flops), line, at, r.measured)

        def edge(limit: float) -> float:
            inside, d = self.x, 1e-6 * self.x * (1 if limit > self.x else -1)
            while abs(d) < abs(limit - self.x) and same(self.x + d):
                inside, d = self.x + d, d * 8
            outside = self.x + d if abs(d) < abs(limit - self.x) else limit
            if outside == limit and same(limit):
                return limit
            for _ in range(40):
                mid = (inside + outside) / 2
                if same(mid):
                    inside = mid
                else:
                    outside = mid
            return inside
        return edge(max(1.0, self.x / 2)) if self.x > 1.0 else 1.0, edge(2 * self.x)

    def without(self, r: Record | None) -> tuple[dict[tuple[str, str], float], tuple[float, float], int, int]:
        """The weighted sums, the common interval, the number of records and of those with tensor parallelism, of the set less
        `r` (None, or a record not in the set: the whole set)."""
        i = self.index.get(id(r)) if r is not None else None
        lo = next((self.spans[k][0] for k in self.lows if k != i), 1.0)
        hi = next((self.spans[k][1] for k in self.highs if k != i), float("inf"))
        if i is None:
            return self.total, (lo, hi), len(self.records), self.with_tp
        src, n = self.records[i].source, self.count[self.records[i].source]
        s, g = self.by_source[src], self.grams[i]
        gram = {k: v - s[k] / n + ((s[k] - g[k]) / (n - 1) if n > 1 else 0.0) for k, v in self.total.items()}
        return gram, (lo, hi), len(self.records) - 1, self.with_tp - (self.lines[i][1]["t_ar"] > 0)

    def fit_without(self, r: Record | None, held: Mapping[str, float]) -> Calibration | None:
        """The least-squares fit of the set less `r` with `held` times fixed, or None where `fit` itself must run: the result
        leaves the lines it was linearised with, or the records cannot tell the free parameters apart (`fit` says so)."""
        gram, (lo, hi), count, with_tp = self.without(r)
        free = ["x"] + [p for p in _PARAMS[1:] if p not in held]
        if count < len(free) or ("t_ar" in free and not with_tp):
            return None
        try:
            vals, _ = _least_squares_gram(gram, free, {**held, "x": self.x})
        except IndistinctError:
            return None
        x = vals["x"]
        if not lo <= x <= hi:
            return None
        return Calibration(1 / x, float(vals["t_layer"]), float(vals["t_fixed"]), float(vals["t_ar"]), "", (), self.eta_flops, float(vals["t_seq"]))


def _least_squares_gram(gram: Mapping[tuple[str, str], float], free: Sequence[str], values: Mapping[str, float]) -> tuple[dict[str, float], tuple[str, ...]]:
    """`_least_squares` from the weighted sums of the records (their Gram matrix) instead of the records: the same choice of bounds."""
    best: tuple[float, dict[str, float], tuple[str, ...]] | None = None
    for binds in product((False, True), repeat=len(free)):
        bound = tuple(p for p, b in zip(free, binds, strict=True) if b)
        fit_these = [p for p in free if p not in bound]
        vals = {**values, **{p: _BOUNDS[p] for p in bound}}
        fixed = [p for p in _PARAMS if p not in fit_these]
        if fit_these:
            a = [[gram[(p, q)] for q in fit_these] for p in fit_these]
            b = [gram[(p, "y")] - sum(vals[f] * gram[(p, f)] for f in fixed) for p in fit_these]
            sol = _solve(a, b)
            if sol is None:
                if not bound:
                    raise IndistinctError(f"these records cannot tell {' from '.join(_NAMES[p] for p in fit_these)} apart; hold one")
                continue
            vals.update(zip(fit_these, sol, strict=True))
            if any(vals[p] < _BOUNDS[p] for p in fit_these):
                continue
        cost = (gram[("y", "y")] - 2 * sum(vals[p] * gram[(p, "y")] for p in _PARAMS)
                + sum(vals[p] * vals[q] * gram[(p, q)] for p in _PARAMS for q in _PARAMS))
        if best is None or cost < best[0] * (1 - 1e-12):
            best = (cost, vals, bound)
    assert best is not None  # every parameter at its bound is always feasible
    return best[1], best[2]


_HELD_LOO = "held at the sheets' defaults"


@_memo
def leave_one_out(records: Sequence[Measurement], classify: Calibration | None = None) -> LeaveOneOut:
    """See LeaveOneOut. Linear in the number of records: each refit without one record is the dataset's sums less that record's
    (`_Linearised`), falling back to a full fit only where that would leave the lines the sums were taken at."""
    rs = evaluate_records(records, classify)
    defaults = classify or start()
    memory = [s for s in rs if s.regime == MEMORY_BOUND and getattr(s.m, "excluded", None) is None]  # what every fit uses
    ef = start().eta_flops  # what `fit` holds
    everything = _Linearised(memory, 1 / fit_distinct(memory, defaults, _HELD_LOO).eta_bw, ef) if memory else None
    groups: dict[tuple[str, str], list[Record]] = {}
    for s in memory:
        groups.setdefault(s.group, []).append(s)
    group_fits: dict[tuple[str, str], _Linearised | None] = {}
    one, group, skipped = [], [], []
    for r in rs:
        peers = [s for s in groups.get(r.group, []) if s is not r]
        if not peers:
            skipped.append(r.m.id)
            continue
        held = ((everything.fit_without(r, {}) if everything is not None else None)
                or fit_distinct([s for s in memory if s is not r], defaults, _HELD_LOO))
        errs = [abs(_error(r, _calibrate([s], held))) for s in peers[:MAX_LOO_PEERS]]
        cg = _group_calibration(r, peers, held, groups[r.group], group_fits, ef)
        one.append(replace(row(r, cg), error=statistics.median(errs)))
        group.append(row(r, cg))
    return LeaveOneOut(tuple(one), tuple(group), summarise(one), summarise(group), tuple(skipped))


def _group_calibration(r: Record, peers: list[Record], held: Calibration, members: list[Record],
                       cache_: dict[tuple[str, str], _Linearised | None], ef: float) -> Calibration:
    """`_calibrate(peers, held)`, from the group's sums less `r` where that is exact."""
    if len(peers) == 1:
        return _calibrate(peers, held)
    times = {"t_layer": held.t_layer, "t_ar": held.t_ar, "t_seq": held.t_seq}
    if r.group not in cache_:
        try:
            cache_[r.group] = _Linearised(members, 1 / _calibrate(members, held).eta_bw, ef)
        except ValueError:
            cache_[r.group] = None
    lin = cache_[r.group]
    c = lin.fit_without(r, times) if lin is not None else None
    return c if c is not None else _calibrate(peers, held)


# --- the power model: board power against the step's utilisation ----------------------------------

@dataclass(frozen=True)
class PowerFit:
    """The power model's shares of the TDP (specs.power): idle, plus memory at full bandwidth, plus compute at the full peak."""

    idle: float
    memory: float
    compute: float
    #: records fitted, and the median absolute error of their measured board power at the fit
    ids: tuple[str, ...] = ()
    median_error: float | None = None


def power_fit_stored() -> PowerFit:
    """The stored power model (specs/measurements/power/power.toml), the default family's shares."""
    fam = load_power().family_of("")[0]
    return PowerFit(float(fam.shares["idle_share"]), float(fam.shares["memory_share"]), float(fam.shares["compute_share"]), fam.records)


def metered(records: Sequence[Record]) -> list[Record]:
    """The records with a measured board power, on a chip whose spec gives a TDP, and not excluded."""
    return [r for r in records if getattr(r.m, "power", None) is not None and r.tdp and getattr(r.m, "excluded", None) is None]


def fit_power(records: Sequence[Measurement]) -> PowerFit:
    """Least squares of measured board power per GPU over the TDP against the step's utilisation at the measured step time:
    share = idle + memory * U_mem + compute * U_flop, each share at or above zero (an active set by enumeration)."""
    rs = metered(evaluate_records(records))
    if len(rs) < 3:
        raise ValueError("the power model needs at least three records with measured board power")
    ys = [float(r.m.power.to("W").magnitude) / (r.gpus * r.tdp) for r in rs]
    cols = {"idle": [1.0] * len(rs), "memory": [r.utilisation(r.measured)[0] for r in rs], "compute": [r.utilisation(r.measured)[1] for r in rs]}
    best: tuple[float, dict[str, float]] | None = None
    names = tuple(cols)
    for binds in product((False, True), repeat=len(names)):
        free = [n for n, b in zip(names, binds, strict=True) if not b]
        vals = dict.fromkeys(names, 0.0)
        if free:
            sol = _solve([[sum(cols[a][i] * cols[b][i] for i in range(len(rs))) for b in free] for a in free],
                         [sum(cols[a][i] * ys[i] for i in range(len(rs))) for a in free])
            if sol is None or any(v < 0 for v in sol):
                continue
            vals.update(zip(free, sol, strict=True))
        cost = sum((y - sum(vals[n] * cols[n][i] for n in names)) ** 2 for i, y in enumerate(ys))
        if best is None or cost < best[0]:
            best = (cost, vals)
    assert best is not None
    v = best[1]
    fit_ = PowerFit(v["idle"], v["memory"], v["compute"], tuple(r.m.id for r in rs))
    errs = [abs(r.power_share(r.measured, fit_) * r.gpus * r.tdp / float(r.m.power.to("W").magnitude) - 1) for r in rs]
    return replace(fit_, median_error=statistics.median(errs))


def power_file_text(p: PowerFit, chips: Sequence[str]) -> str:
    """The power model's file (`roofline calibrate --write-defaults`)."""
    ids = "".join(f'    "{i}",\n' for i in p.ids)
    return (
        "# The power model's shares of the TDP, fitted to measured board power. Written by `roofline calibrate --write-defaults`.\n"
        'source = "least squares of measured board power per GPU over the TDP against the step model\'s bandwidth and compute utilisation '
        'at the measured step time, over every record with a meter (specs/measurements)"\n'
        'default = "hopper"\n\n[[family]]\nname = "hopper"\n'
        f"chips = [{', '.join(repr(c).replace(chr(39), chr(34)) for c in chips)}]\n"
        f'idle_share = "{_figures(p.idle, 3)}"\nmemory_share = "{_figures(p.memory, 3)}"\ncompute_share = "{_figures(p.compute, 3)}"\n'
        f'median_error = "{_figures(p.median_error or 0.0)}"\n'
        f'provenance = "fitted to the {len(p.ids)} records with measured board power (ML.ENERGY v3 on H100 SXM); other chips are assumed to draw '
        'the same shares of their own TDP; rounded to 3 significant figures"\n'
        f"records = [\n{ids}]\n"
    )


# --- validation by regime: batch band, dense or MoE, chip, engine -----------------------------------

#: the batch bands `roofline validate` reports (running sequences per step; None: no upper end)
BATCH_BANDS: tuple[tuple[int, int | None], ...] = ((1, 16), (17, 64), (65, 512), (513, None))
#: the targets of the serving-step issue: leave-one-source-out, batch 65 and above, MoE models, energy per token
REGIME_TARGETS = {"loso": 0.12, "batch_65_up": 0.15, "moe": 0.20, "energy": 0.15}


def band_label(lo: int, hi: int | None) -> str:
    return f"batch {lo}-{hi}" if hi is not None else f"batch above {lo - 1}"


def _fitted_rows(rows: Iterable[Row], records: Sequence[Measurement]) -> list[Row]:
    """Rows of records that are not excluded (a host bottleneck or a saturated run is reported, never scored)."""
    excluded = {m.id for m in records if getattr(m, "excluded", None) is not None}
    return [x for x in rows if x.id not in excluded]


def breakdown(rows: Iterable[Row], records: Sequence[Measurement]) -> dict[str, tuple[Summary, ...]]:
    """Median and worst error of every scored record (each regime) by batch band, dense against MoE, chip and engine; and of
    the energy per token where a meter measured it."""
    rows = _fitted_rows(rows, records)
    err = lambda x: x.error  # noqa: E731
    out = {
        "batch": tuple(_summary(band_label(lo, hi), [x for x in rows if x.batch >= lo and (hi is None or x.batch <= hi)], err) for lo, hi in BATCH_BANDS),
        "model": tuple(_summary(name, [x for x in rows if x.moe == moe], err) for name, moe in (("dense", False), ("MoE", True))),
        "chip": tuple(_summary(h, [x for x in rows if x.hardware == h], err) for h in sorted({x.hardware for x in rows})),
        "engine": tuple(_summary(e, [x for x in rows if x.engine == e], err) for e in sorted({x.engine for x in rows})),
    }
    metered_rows = [x for x in rows if x.energy_measured is not None and x.energy_predicted is not None]
    out["energy"] = (_summary("energy per token", metered_rows, lambda x: (x.energy_predicted - x.energy_measured) / x.energy_measured),)
    return out


def measured_mbu_range(records: Sequence[Measurement], classify: Calibration | None = None, tp: int | None = None) -> tuple[float, float, float]:
    """The implied MBU (model bytes per GPU over measured step and datasheet bandwidth) of the memory-bound decode records
    (of `tp` GPUs only, if given): (lowest, median, highest). For sheets that cite how much of the bandwidth real servers reach."""
    mbus = [r.implied_mbu() for r in memory_bound(records, classify) if tp is None or r.m.tp == tp]
    return min(mbus), statistics.median(mbus), max(mbus)


__all__ = [
    "BATCH_BANDS",
    "DEFAULT_FIGURES",
    "HAND_SET",
    "HELD_ETA_FLOPS",
    "MAX_IMPLIED_MBU",
    "MAX_LOO_PEERS",
    "MEMORY_BOUND",
    "MIN_FAMILY_RECORDS",
    "OTHER_REGIME",
    "PREFILL_HEAVY_SHARE",
    "REGIME_TARGETS",
    "RULES",
    "STEP_MODEL",
    "TARGETS",
    "Calibration",
    "FittedProfile",
    "IndistinctError",
    "LeaveOneOut",
    "OutOfSample",
    "PowerFit",
    "Record",
    "Row",
    "Summary",
    "Validation",
    "at_family_profiles",
    "breakdown",
    "by_tp",
    "calibrate",
    "dataset_defaults",
    "default_texts",
    "evaluate_records",
    "family_profiles",
    "fit",
    "fit_distinct",
    "fit_power",
    "fresh_defaults",
    "fresh_profiles",
    "from_texts",
    "leave_one_out",
    "measured_mbu_range",
    "measured_step",
    "memory_bound",
    "memory_summary",
    "out_of_sample",
    "power_file_text",
    "power_fit_stored",
    "profile_calibration",
    "profile_file_text",
    "record_context",
    "record_inputs",
    "running_batch",
    "serving",
    "sheet_defaults",
    "source_weights",
    "start",
    "step_function",
    "summarise",
    "summary_texts",
    "validate",
]

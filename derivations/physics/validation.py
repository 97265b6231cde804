"""How far do real servers sit from the step model?

Every published record (specs/measurements/) is turned into a measured decode
step time under a stated rule, and the shared step model (derivations.physics.stepmodel
DECODE_STEP, the one every sheet uses) is evaluated at the record's hardware,
model, precisions, batch, mean context and tensor-parallel degree through the
same context machinery as a sheet. No second step-time formula exists here:
the model's own t_step expression is substituted and compiled once per record
as a function of its five engine inputs (eta_bw, eta_flops, t_layer, t_fixed,
t_ar: what an engine profile holds).

Here each record is predicted at a set of engine inputs (a Calibration) and
compared with its measured step: the validation table, its error summaries per
regime and per TP degree, and the breakdown by batch band, dense or MoE, chip
and engine (with energy per token from the stored power model). Which engine
inputs the dataset gives (the fits, the engine profiles, the out-of-sample
figures, the power model's fit) is derivations.physics.fitting; calibration on
a few records and the leave-one-out, derivations.physics.leave_one_out.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cache
from pathlib import Path

import sympy as sp

from ...specs.catalog import SPECS_DIR, shown_path
from ...specs.errors import SpecError
from ...specs.measurements import Measurement, Profile, decode_step
from ...specs.power import load_power
from ...units import Quantity
from ..engine.context import BINDINGS, PROFILES_ERROR, Context, fitted, make_context
from ..engine.declare import derivation
from ..engine.sheet import Missing, context_values, evaluate_values
from ..engine.symbols import Symbols
from . import glossary as gl
from . import stepmodel as sm

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
#: eta_flops is held in every fitted profile at this value (the hand-set default the sheets always used): memory-bound decode
#: records, the only ones fitted, do not depend on it.
HELD_ETA_FLOPS = "0.7"
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
    It is compared with the serving step (prompts in every step, stepmodel.prompts), which models their prefill. A disaggregated
    server's decode pool (role "decode") is not: its prompts run on other GPUs."""
    return m.batching == "continuous" and m.metric in ("itl", "tokens_per_s_per_user") and getattr(m, "role", None) != "decode"


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
    output lengths, which turn on the serving step; for a disaggregated decode pool no output length, the decode-only step):
    one rule for the validation and the sheets' tables of records."""
    base = {"batch": str(running_batch(m)), "context": f"{mean_context(m)} token", "tp": str(m.tp), "tokens_per_step": "1 token",
            "dp": str(getattr(m, "dp", 1)), "ep": str(getattr(m, "ep", 1))}
    if serving(m):
        base.update(prompt_len=f"{m.input_tokens} token", output_len=f"{m.output_tokens} token")
    elif getattr(m, "role", None) == "decode":
        base.update(output_len="0 token")  # the decode-only step, also on a sheet whose own default is a server at load
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
    values = context_values(STEP_MODEL, ctx, set(args))
    if not any(isinstance(v, Missing) for v in values.values()):
        bound = tuple(float(values[s]) for s in args)
        return lambda eta_bw, eta_flops, t_layer, t_fixed, t_ar, t_seq: float(compiled(*bound, eta_bw, eta_flops, t_layer, t_fixed, t_ar, t_seq))
    # each value as a 30-digit float, so a missing value's zero factor still drops its term (a float zero times anything is
    # zero) while powers of the values stay floats (an exact one, say (31/32)^1000 raised to the batch, runs to millions of digits)
    known = {s: sp.Float(v, 30) for s, v in values.items() if s not in EFFICIENCY_SYMBOLS and not isinstance(v, Missing)}
    expr = STEP_MODEL.expanded["t_step"].xreplace(known).evalf(30)
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


def _si(v: Fraction | float | Missing, what: str, m: Measurement) -> float:
    if isinstance(v, Missing):
        raise SpecError(m.where, what, v.reason)
    return float(v)


def evaluate_record(m: Measurement) -> Record:
    ctx = record_context(m)
    f = step_function(ctx)
    rates = {"eta_bw": "1", "eta_flops": "1"}
    values = evaluate_values(STEP_MODEL, record_context(m, **rates), only=("bytes_per_gpu", "t_memory", "t_compute"))
    units = STEP_MODEL.symbols.units()
    bytes_per_gpu = float(Quantity(_si(values["bytes_per_gpu"], "bytes_per_gpu", m), units[sp.Symbol("bytes_per_gpu", positive=True)]).to("B").magnitude)
    t_mem, t_cmp = _si(values["t_memory"], "t_memory", m), _si(values["t_compute"], "t_compute", m)
    bandwidth = float(BINDINGS[gl.beta](ctx).to("B/s").magnitude)
    prefill = 0.0
    seqs = prefill_sequences(m)
    if seqs:
        pre = record_context(m, batch=str(seqs), tokens_per_step=f"{m.input_tokens} token", context=f"{max(1, m.input_tokens // 2)} token", **rates)
        prefill = _si(evaluate_values(STEP_MODEL, pre, only=("t_compute",))["t_compute"], "t_compute", m) / m.output_tokens
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


def memo(f: Callable) -> Callable:
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


def setup_text(m: Measurement) -> str:
    layout = f"tp{m.tp}" + (f" dp{m.dp}" if getattr(m, "dp", 1) > 1 else "") + (f" ep{m.ep}" if getattr(m, "ep", 1) > 1 else "")
    formats = f"{m.weights or 'checkpoint'}/{m.kv or 'checkpoint'} kv"
    return (f"{formats}, {m.gpus}x {layout}, B={m.batch}{' per replica' if getattr(m, 'dp', 1) > 1 else ''} {m.batching}, "
            f"{m.input_tokens} in / {m.output_tokens} out")


def row(r: Record, c: Calibration, power: PowerFit | None = None) -> Row:
    p = r.at(c)
    m = r.m
    measured_e = getattr(m, "energy_per_token", None)
    e_meas = float(measured_e.to("J/token").magnitude) if measured_e is not None else None
    e_pred = r.energy_at(p, power or power_fit_stored()) if e_meas is not None and r.tdp else None
    return Row(m.id, m.engine, m.hardware.key, m.model.key, setup_text(m), r.regime, m.tp, r.source, r.measured, r.floor(), p,
               (p - r.measured) / r.measured, r.implied_mbu(), r.prefill_share, RULES[m.metric], m.source, m.url,
               running_batch(m), m.model.moe is not None, e_meas, e_pred)


def summary(label: str, sel: Sequence[Row], errors: Callable[[Row], float]) -> Summary:
    if not sel:
        return Summary(label, 0, None, None, "")
    worst = max(sel, key=lambda x: abs(errors(x)))
    return Summary(label, len(sel), statistics.median(abs(errors(x)) for x in sel), errors(worst), worst.id)


def memory_summary(rows: Iterable[Row]) -> Summary:
    """Median and worst absolute error of the memory-bound decode records among `rows`."""
    return summary(MEMORY_BOUND, [x for x in rows if x.regime == MEMORY_BOUND], lambda x: x.error)


def summarise(rows: Iterable[Row], errors: Callable[[Row], float] = lambda x: x.error) -> tuple[Summary, ...]:
    """Median and worst absolute error per regime, and over all records."""
    rows = tuple(rows)
    return tuple(summary(regime, [x for x in rows if regime in ("all", x.regime)], errors) for regime in (*REGIMES, "all"))


def by_tp(rows: Iterable[Row]) -> tuple[Summary, ...]:
    """Median and worst absolute error of the memory-bound decode records per tensor-parallel degree (labels 'TP n')."""
    mem = [x for x in rows if x.regime == MEMORY_BOUND]
    return tuple(summary(f"TP {n}", [x for x in mem if x.tp == n], lambda x: x.error) for n in sorted({x.tp for x in mem}))


def validate(records: Sequence[Measurement], c: Calibration) -> Validation:
    """Every record predicted at `c`, with the error summary per regime (regimes judged at the sheets' defaults)."""
    rows = tuple(row(r, c) for r in evaluate_records(records))
    return Validation(c, c.how, rows, summarise(rows))


def memory_bound(records: Sequence[Measurement], classify: Calibration | None = None) -> list[Record]:
    """The records every fit uses: memory-bound decode at `classify`, and not marked `excluded` in their file (a host bottleneck
    or a saturated run is reported, never fitted)."""
    return [r for r in evaluate_records(records, classify) if r.regime == MEMORY_BOUND and getattr(r.m, "excluded", None) is None]


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
        "batch": tuple(summary(band_label(lo, hi), [x for x in rows if x.batch >= lo and (hi is None or x.batch <= hi)], err) for lo, hi in BATCH_BANDS),
        "model": tuple(summary(name, [x for x in rows if x.moe == moe], err) for name, moe in (("dense", False), ("MoE", True))),
        "chip": tuple(summary(h, [x for x in rows if x.hardware == h], err) for h in sorted({x.hardware for x in rows})),
        "engine": tuple(summary(e, [x for x in rows if x.engine == e], err) for e in sorted({x.engine for x in rows})),
    }
    metered_rows = [x for x in rows if x.energy_measured is not None and x.energy_predicted is not None]
    out["energy"] = (summary("energy per token", metered_rows, lambda x: (x.energy_predicted - x.energy_measured) / x.energy_measured),)
    return out


def measured_mbu_range(records: Sequence[Measurement], classify: Calibration | None = None, tp: int | None = None) -> tuple[float, float, float]:
    """The implied MBU (model bytes per GPU over measured step and datasheet bandwidth) of the memory-bound decode records
    (of `tp` GPUs only, if given): (lowest, median, highest). For sheets that cite how much of the bandwidth real servers reach."""
    mbus = [r.implied_mbu() for r in memory_bound(records, classify) if tp is None or r.m.tp == tp]
    return min(mbus), statistics.median(mbus), max(mbus)


__all__ = [
    "BATCH_BANDS",
    "HAND_SET",
    "HELD_ETA_FLOPS",
    "MAX_IMPLIED_MBU",
    "MEMORY_BOUND",
    "OTHER_REGIME",
    "PREFILL_HEAVY_SHARE",
    "REGIME_TARGETS",
    "RULES",
    "STEP_MODEL",
    "TARGETS",
    "Calibration",
    "PowerFit",
    "Record",
    "Row",
    "Summary",
    "Validation",
    "breakdown",
    "by_tp",
    "evaluate_records",
    "measured_mbu_range",
    "measured_step",
    "memory_bound",
    "memory_summary",
    "power_fit_stored",
    "profile_calibration",
    "record_context",
    "record_inputs",
    "running_batch",
    "serving",
    "setup_text",
    "sheet_defaults",
    "start",
    "step_function",
    "summarise",
    "validate",
]

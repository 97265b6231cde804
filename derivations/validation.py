"""How far do real servers sit from the step model, and can one measurement calibrate it?

Every published record (specs/measurements/) is turned into a measured decode
step time under a stated rule, and the shared step model (derivations.stepmodel
DECODE_STEP, the one every sheet uses) is evaluated at the record's hardware,
model, precisions, batch, mean context and tensor-parallel degree through the
same context machinery as a sheet. No second step-time formula exists here:
the model's own t_step expression is substituted and compiled once per record
as a function of its three efficiency inputs (eta_bw, eta_flops, t_fixed).

Calibration fits the two inputs a server's software decides, the achieved
bandwidth fraction eta_bw and the fixed time per step t_fixed, by least squares
on relative error; the step time is piecewise linear in 1/eta_bw, so the fit
is a closed-form two-parameter solve repeated until the set of memory-bound
components stops changing (exact for records the model itself generated).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import sympy as sp

from derivations import glossary as gl
from derivations import stepmodel as sm
from derivations.context import BINDINGS, SCENARIO_INPUTS, Context, make_context
from derivations.engine import derivation
from derivations.sheet import Missing, evaluate, input_values
from derivations.symbols import Symbols
from specs.errors import SpecError, suggest
from specs.measurements import Measurement
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
#: The efficiency inputs the fit and the table vary; everything else comes from the record.
EFFICIENCY_SYMBOLS = (gl.eta_bw, gl.eta_flops, gl.t_fixed)
_DEFAULTS = {i.name: i for i in SCENARIO_INPUTS}
_MAX_FIT_ROUNDS = 50


def sheet_default(name: str) -> float:
    """A scenario input's project-wide default (eta_bw, eta_flops, t_fixed) as a float in its SI unit."""
    q = _DEFAULTS[name].parse(_DEFAULTS[name].default, "default")
    return float(q.to_base_units().magnitude)


def measured_step(m: Measurement) -> float:
    """The record's figure as one decode step time [s], under RULES[m.metric]."""
    v = m.value
    if m.metric == "itl":
        return float(v.to("s").magnitude)
    if m.metric == "tokens_per_s_per_user":
        return float((Quantity(1, "token") / v).to("s").magnitude)
    if m.metric == "aggregate_tokens_per_s":
        return float((Quantity(m.batch, "token") / v).to("s").magnitude)
    if m.ttft is not None:
        return float(((v - m.ttft) / (m.output_tokens - 1)).to("s").magnitude)
    return float((v / m.output_tokens).to("s").magnitude)


def mean_context(m: Measurement) -> int:
    """Tokens in each sequence's cache, averaged over the decode: the prompt plus half the output."""
    return m.input_tokens + m.output_tokens // 2


def prefill_sequences(m: Measurement) -> int:
    """Prompts prefilled during the measured decode: the whole static batch when the figure includes its prefill;
    under continuous batching the other B - 1 requests' prompts, interleaved with this one's decode."""
    if m.metric == "itl" or (m.metric == "e2e_latency" and m.ttft is not None):
        return m.batch - 1 if m.batching == "continuous" else 0
    return m.batch


def record_context(m: Measurement, **inputs: str) -> Context:
    """The sheet context of a record: its chip, model and precisions, batch, mean context and TP degree."""
    ctx = make_context(m.hardware, m.model, m.weights, m.kv, m.math)
    base = {"batch": str(m.batch), "context": f"{mean_context(m)} token", "tp": str(m.tp), "tokens_per_step": "1 token"}
    base.update(inputs)
    return ctx.with_overrides(**base)


StepFunction = Callable[[float, float, float], float]


def step_function(ctx: Context) -> StepFunction:
    """The step model's t_step [s] in `ctx` as a function of (eta_bw, eta_flops, t_fixed): its own expression, substituted and compiled."""
    values = input_values(STEP_MODEL, ctx)
    known = {s: v for s, v in values.items() if s not in EFFICIENCY_SYMBOLS and not isinstance(v, Missing)}
    expr = STEP_MODEL.expanded["t_step"].xreplace(known)
    left = expr.free_symbols - set(EFFICIENCY_SYMBOLS)
    if left:
        gone = [v for s, v in values.items() if s in left and isinstance(v, Missing)]
        why = gone[0].reason if gone else f"no value for {sorted(str(s) for s in left)}"
        raise SpecError(ctx.hardware.path, None, f"the step model has no value here: {why}")
    return sp.lambdify(EFFICIENCY_SYMBOLS, expr, modules="math")


@dataclass(frozen=True)
class Record:
    """One measurement with the step model evaluated at its inputs."""

    m: Measurement
    #: measured decode step [s]
    measured: float
    #: t_step(eta_bw, eta_flops, t_fixed) [s]
    step: StepFunction
    #: bytes one GPU streams per step (weights split by TP, plus the KV cache) [B]
    bytes_per_gpu: float
    #: datasheet bandwidth [B/s]
    bandwidth: float
    #: prefill FLOPs folded into each measured step, as a share of the default prediction
    prefill_share: float
    #: the step's FLOPs take longer than its bytes at the default efficiencies
    compute_bound: bool

    @property
    def regime(self) -> str:
        return OTHER_REGIME if self.compute_bound or self.prefill_share >= PREFILL_HEAVY_SHARE else MEMORY_BOUND

    @property
    def group(self) -> tuple[str, str]:
        """Records of one engine on one chip calibrate each other."""
        return self.m.engine, self.m.hardware.key

    def predict(self, eta_bw: float, t_fixed: float, eta_flops: float | None = None) -> float:
        return float(self.step(eta_bw, sheet_default("eta_flops") if eta_flops is None else eta_flops, t_fixed))

    def floor(self) -> float:
        """The step at the datasheet rates with no fixed time (eta_bw = eta_flops = 1, t_fixed = 0); all-reduces at link rate stay."""
        return self.predict(1.0, 0.0, 1.0)

    def implied_mbu(self) -> float:
        """The model's bytes per GPU over the measured step, as a share of the datasheet bandwidth."""
        return self.bytes_per_gpu / (self.measured * self.bandwidth)


def _si(v: sp.Expr | Missing, what: str, m: Measurement) -> float:
    if isinstance(v, Missing):
        raise SpecError(m.where, what, v.reason)
    return float(v)


def evaluate_record(m: Measurement) -> Record:
    ctx = record_context(m)
    f = step_function(ctx)
    values = evaluate(STEP_MODEL, ctx, only=("bytes_per_gpu", "t_memory", "t_compute"))
    units = STEP_MODEL.symbols.units()
    bytes_per_gpu = float(Quantity(_si(values["bytes_per_gpu"], "bytes_per_gpu", m), units[sp.Symbol("bytes_per_gpu", positive=True)]).to("B").magnitude)
    t_mem, t_cmp = _si(values["t_memory"], "t_memory", m), _si(values["t_compute"], "t_compute", m)
    bandwidth = float(BINDINGS[gl.beta](ctx).to("B/s").magnitude)
    default = float(f(sheet_default("eta_bw"), sheet_default("eta_flops"), sheet_default("t_fixed")))
    share = 0.0
    seqs = prefill_sequences(m)
    if seqs:
        pre = record_context(m, batch=str(seqs), tokens_per_step=f"{m.input_tokens} token", context=f"{max(1, m.input_tokens // 2)} token")
        t_prefill = _si(evaluate(STEP_MODEL, pre, only=("t_compute",))["t_compute"], "t_compute", m)
        share = t_prefill / m.output_tokens / default
    return Record(m, measured_step(m), f, bytes_per_gpu, bandwidth, share, t_cmp > t_mem)


#: evaluated records by the identity of their measurement (the measurement is kept, so its id is never reused)
_EVALUATED: dict[int, tuple[Measurement, Record]] = {}


def evaluate_records(records: Sequence[Measurement]) -> tuple[Record, ...]:
    """Each measurement with the step model evaluated (cached per measurement object)."""
    out = []
    for m in records:
        hit = _EVALUATED.get(id(m))
        if hit is None or hit[0] is not m:
            hit = _EVALUATED[id(m)] = (m, evaluate_record(m))
        out.append(hit[1])
    return tuple(out)


# --- calibration ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    eta_bw: float
    t_fixed: float
    #: how the two were obtained, in words (which one was fitted, which held, which hit a bound)
    how: str
    #: the records fitted
    ids: tuple[str, ...] = ()


def _local_line(r: Record, x: float, eta_flops: float) -> tuple[float, float]:
    """t_step - t_fixed near x = 1/eta_bw as slope*x + intercept (the model is piecewise linear in x)."""
    h = 1e-6 * x
    g0 = float(r.step(1 / x, eta_flops, 0.0))
    g1 = float(r.step(1 / (x + h), eta_flops, 0.0))
    slope = (g1 - g0) / h
    return slope, g0 - slope * x


def fit(records: Sequence[Record], t_fixed: float | None = None, eta_flops: float | None = None) -> Calibration:
    """Least squares on relative error for eta_bw and t_fixed over `records`.

    With `t_fixed` given (or one record, or records that cannot tell the two
    apart) only eta_bw is fitted and t_fixed is held. eta_bw stays in (0, 1] and
    t_fixed at or above zero: a bound that binds is held there and the other
    refitted, and `how` says so.
    """
    if not records:
        raise ValueError("fit needs at least one record")
    ef = sheet_default("eta_flops") if eta_flops is None else eta_flops
    hold = t_fixed
    if hold is None and len(records) == 1:
        raise ValueError("one record cannot fix both eta_bw and t_fixed: give t_fixed to hold")
    x = 1 / sheet_default("eta_bw")
    how = ""
    for _ in range(_MAX_FIT_ROUNDS):
        lines = [_local_line(r, x, ef) for r in records]
        w = [1 / r.measured ** 2 for r in records]
        ys = [r.measured - c for r, (_, c) in zip(records, lines, strict=True)]
        slopes = [a for a, _ in lines]
        if hold is None:
            x_two, tf = _two_parameter(slopes, ys, w)
            if x_two is None:
                raise ValueError("these records cannot tell eta_bw from t_fixed (same slope); hold t_fixed")
            x_new, how = x_two, "eta_bw and t_fixed fitted together"
            if tf < 0:
                tf, x_new, how = 0.0, _one_parameter(slopes, ys, w, 0.0), "t_fixed bound at 0; eta_bw fitted"
        else:
            tf = hold
            x_new = _one_parameter(slopes, ys, w, hold)
            how = "eta_bw fitted with t_fixed held"
        if x_new < 1:
            x_new = 1.0
            if hold is None:
                tf = max(0.0, _mean_residual(records, 1.0, ef, w))
            how += "; eta_bw bound at 1 (the records are faster than the model at datasheet bandwidth)"
        done = abs(x_new - x) <= 1e-12 * x
        x = x_new
        if done:
            break
    return Calibration(1 / x, float(tf), how, tuple(r.m.id for r in records))


def _two_parameter(slopes: Sequence[float], ys: Sequence[float], w: Sequence[float]) -> tuple[float | None, float]:
    """Weighted least squares of y = a*x + t for (x, t), closed form; x None when the slopes do not differ."""
    sw = sum(w)
    sa = sum(wi * a for wi, a in zip(w, slopes, strict=True))
    sy = sum(wi * y for wi, y in zip(w, ys, strict=True))
    saa = sum(wi * a * a for wi, a in zip(w, slopes, strict=True))
    say = sum(wi * a * y for wi, a, y in zip(w, slopes, ys, strict=True))
    det = sw * saa - sa * sa
    if det <= 1e-12 * sw * saa:
        return None, 0.0
    x = (sw * say - sa * sy) / det
    return x, (sy - sa * x) / sw


def _one_parameter(slopes: Sequence[float], ys: Sequence[float], w: Sequence[float], t: float) -> float:
    num = sum(wi * a * (y - t) for wi, a, y in zip(w, slopes, ys, strict=True))
    den = sum(wi * a * a for wi, a in zip(w, slopes, strict=True))
    return num / den


def _mean_residual(records: Sequence[Record], x: float, ef: float, w: Sequence[float]) -> float:
    res = [r.measured - float(r.step(1 / x, ef, 0.0)) for r in records]
    return sum(wi * e for wi, e in zip(w, res, strict=True)) / sum(w)


# --- the validation table ------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    id: str
    engine: str
    hardware: str
    model: str
    setup: str
    regime: str
    measured: float
    floor: float
    predicted: float
    #: (predicted - measured) / measured: negative means the model is too fast
    error: float
    implied_mbu: float
    prefill_share: float
    rule: str
    source: str
    url: str


@dataclass(frozen=True)
class Summary:
    regime: str
    count: int
    median_abs_error: float | None
    worst_error: float | None
    worst_id: str


@dataclass(frozen=True)
class Validation:
    eta_bw: float
    t_fixed: float
    eta_flops: float
    label: str
    rows: tuple[Row, ...]
    summaries: tuple[Summary, ...]


def _setup(m: Measurement) -> str:
    return (f"{m.weights}/{m.kv} kv, {m.gpus}x tp{m.tp}, B={m.batch} {m.batching}, "
            f"{m.input_tokens} in / {m.output_tokens} out")


def row(r: Record, eta_bw: float, t_fixed: float) -> Row:
    p = r.predict(eta_bw, t_fixed)
    m = r.m
    return Row(m.id, m.engine, m.hardware.key, m.model.key, _setup(m), r.regime, r.measured, r.floor(), p,
               (p - r.measured) / r.measured, r.implied_mbu(), r.prefill_share, RULES[m.metric], m.source, m.url)


def summarise(rows: Iterable[Row], errors: Callable[[Row], float] = lambda x: x.error) -> tuple[Summary, ...]:
    """Median and worst absolute error per regime, and over all records."""
    rows = tuple(rows)
    out = []
    for regime in (*REGIMES, "all"):
        sel = [x for x in rows if regime in ("all", x.regime)]
        if not sel:
            out.append(Summary(regime, 0, None, None, ""))
            continue
        worst = max(sel, key=lambda x: abs(errors(x)))
        out.append(Summary(regime, len(sel), statistics.median(abs(errors(x)) for x in sel), errors(worst), worst.id))
    return tuple(out)


def validate(records: Sequence[Measurement], eta_bw: float, t_fixed: float, label: str) -> Validation:
    rows = tuple(row(r, eta_bw, t_fixed) for r in evaluate_records(records))
    return Validation(eta_bw, t_fixed, sheet_default("eta_flops"), label, rows, summarise(rows))


def dataset_defaults(records: Sequence[Measurement]) -> Calibration:
    """eta_bw and t_fixed fitted to every memory-bound decode record of the dataset (the proposed defaults)."""
    rs = [r for r in evaluate_records(records) if r.regime == MEMORY_BOUND]
    return replace(fit(rs), how=f"fitted to the {len(rs)} memory-bound decode records (least squares on relative error)")


def sheet_defaults() -> Calibration:
    """The project-wide defaults every sheet prints today."""
    return Calibration(sheet_default("eta_bw"), sheet_default("t_fixed"), "the sheets' defaults (derivations/context.py)")


# --- calibration on a few records, and leave-one-out -----------------------------------------------

@dataclass(frozen=True)
class LeaveOneOut:
    """Leave-one-out over the dataset. For each record, the dataset defaults are refitted without it; then

    - `one`: eta_bw is calibrated on one other memory-bound record of the same engine and chip (t_fixed held at
      those defaults), the record predicted, and the median absolute error over the choices of that record kept
      (unsigned: `Row.error` is that median, not a signed error);
    - `group`: both inputs are calibrated on all other memory-bound records of the same engine and chip
      (eta_bw alone, t_fixed held, when they cannot tell the two apart).

    A record with no such peer is left out (`skipped`).
    """

    one: tuple[Row, ...]
    group: tuple[Row, ...]
    one_summary: tuple[Summary, ...]
    group_summary: tuple[Summary, ...]
    skipped: tuple[str, ...]


def calibrate(records: Sequence[Measurement], ids: Sequence[str], defaults: Calibration) -> Calibration:
    """Fit on the named records: both inputs from two or more, eta_bw alone (t_fixed held at the dataset default) from one."""
    by_id = {r.m.id: r for r in evaluate_records(records)}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise SpecError("--from", unknown[0][:60], f"no record with this id{suggest(unknown[0], by_id)}; `roofline validate` lists them")
    chosen = [by_id[i] for i in dict.fromkeys(ids)]
    return _calibrate(chosen, defaults.t_fixed)


def _calibrate(chosen: Sequence[Record], t_fixed: float) -> Calibration:
    if len(chosen) == 1:
        c = fit(chosen, t_fixed=t_fixed)
        return replace(c, how=c.how.replace("t_fixed held", "t_fixed held at the dataset default"))
    try:
        return fit(chosen)
    except ValueError:
        c = fit(chosen, t_fixed=t_fixed)
        return replace(c, how=c.how.replace("t_fixed held", "t_fixed held at the dataset default (the records cannot tell the two apart)"))


def _error(r: Record, c: Calibration) -> float:
    return (r.predict(c.eta_bw, c.t_fixed) - r.measured) / r.measured


def leave_one_out(records: Sequence[Measurement]) -> LeaveOneOut:
    rs = evaluate_records(records)
    one, group, skipped = [], [], []
    for r in rs:
        others = [s for s in rs if s.m.id != r.m.id]
        held = fit([s for s in others if s.regime == MEMORY_BOUND]).t_fixed
        peers = [s for s in others if s.group == r.group and s.regime == MEMORY_BOUND]
        if not peers:
            skipped.append(r.m.id)
            continue
        errs = [abs(_error(r, _calibrate([s], held))) for s in peers]
        cg = _calibrate(peers, held)
        one.append(replace(row(r, cg.eta_bw, cg.t_fixed), error=statistics.median(errs)))
        group.append(row(r, cg.eta_bw, cg.t_fixed))
    return LeaveOneOut(tuple(one), tuple(group), summarise(one), summarise(group), tuple(skipped))


def measured_mbu_range(records: Sequence[Measurement]) -> tuple[float, float, float]:
    """The implied MBU (model bytes per GPU over measured step and datasheet bandwidth) of the memory-bound
    decode records: (lowest, median, highest). For sheets that cite how much of the bandwidth real servers reach."""
    mbus = [r.implied_mbu() for r in evaluate_records(records) if r.regime == MEMORY_BOUND]
    return min(mbus), statistics.median(mbus), max(mbus)


__all__ = [
    "MEMORY_BOUND",
    "OTHER_REGIME",
    "PREFILL_HEAVY_SHARE",
    "RULES",
    "STEP_MODEL",
    "Calibration",
    "LeaveOneOut",
    "Record",
    "Row",
    "Summary",
    "Validation",
    "calibrate",
    "dataset_defaults",
    "evaluate_records",
    "fit",
    "leave_one_out",
    "measured_mbu_range",
    "measured_step",
    "record_context",
    "sheet_defaults",
    "step_function",
    "summarise",
    "validate",
]

"""`roofline diagnose TRACE --model M --hardware H [--set ...]`: a profiler trace's decode steps, measured, beside the step model.

The trace is read by specs.traces (a PyTorch profiler trace or an Nsight Systems SQLite export). Each GPU activity is put in
one class by its name (KERNEL_CLASSES; a name no class takes is counted and listed, never dropped), the activities are split
into the steps the host marked, and the steps no longer than twice the median are the decode steps (a prefill, or a step that
mixes one in, runs longer; it is reported and left out). Per decode step the trace gives its period on the GPU's clock (from
its first kernel to the next step's), the time each class ran, and the idle time (the period less the union of the
activities); the medians over the decode steps are compared with the step model at the setup given on the command line
(the decode-floor sheet's components), each kernel class is placed on the roofline at its achieved intensity (the bytes
and FLOPs it moves, `roofline_rows`, over the time the trace measured), and the measured times fill the buckets of the
mbu-diagnosis and batch1-gap sheets (their inputs set from the trace, the sheets computing the rest).
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from . import api
from .renderers.escape import markdown as md
from .renderers.numbers import plain
from .specs.catalog import shown_path
from .specs.traces import Kernel, Trace, read_trace

#: Kernel classes, tried in order on a kernel's name without its parameter list (a memory copy or set is its own class).
#: The streaming classes move the bytes the step model counts (weights, the KV cache); the others are the step's overheads.
KERNEL_CLASSES: tuple[tuple[str, str], ...] = (
    ("collective", r"nccl|rccl|all_?reduce|allgather|all_gather|reduce_scatter|cross_device_reduce|multimem|alltoall|all_to_all|custom_ar"
                   r"|one_shot|two_shot|lamport|mscclpp|quickreduce"),
    ("grouped MoE GEMM", r"moe|expert|grouped_?gemm|group_gemm|_matmul_ogs|bmm_.*MxE|topk_softmax|routing|finalize|marlin_moe|cutlass_moe"
                         r"|fused_experts|align_block_size|bitmatrix|^_topk_forward|reduce_segments"),
    ("attention", r"flash|fmha|attn|attention|paged_|mla_|reshape_and_cache|store_kvcache|BatchDecode|BatchPrefill|xqa|mmha|merge_state"
                  r"|rotary|rope_|_rope|unified_attention|^_fwd_kernel|kv_indices"),
    ("weight GEMM", r"gemm|gemv|xmma|cutlass|cublas|nvjet|Cijk_|matmul|splitK|wgmma|s16816|s1688|marlin|dot_kernel|scaled_mm|wvSplitK|LLGemm"),
    ("sampling", r"argmax|top_?k|top_?p|sampl|multinomial|gumbel|penalt|radix_?sort|sort_kernel|bitonic|log_softmax|softmax_warp"),
    ("norm and elementwise", r"norm|rms|elementwise|vectorized_|act_and_mul|silu|gelu|swiglu|triton_|fused_|quant|add_kernel|mul_kernel|fill"
                             r"|reduce_kernel|where|embedding|index|cat_|pow|rsqrt|arange|cumsum|clamp|to_copy|multi_tensor_apply|future_token"),
    ("memory copy", r"Memcpy|Memset|CatArrayBatchedCopy|direct_copy|copy_kernel|copy_page|gather_kernel|scatter"),
)
_COMPILED = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in KERNEL_CLASSES)
CLASS_NAMES = (*(n for n, _ in KERNEL_CLASSES), "unknown")
STREAMING = ("weight GEMM", "grouped MoE GEMM", "attention")
#: a step longer than this many times the median step's kernel time is a prefill (or mixes one in)
PREFILL_FACTOR = 2.0


def function_name(name: str) -> str:
    """A demangled kernel name without its parameter list (`void ns::k<T, (E)2>(int, ns::Layout)` -> `void ns::k<T, (E)2>`):
    an argument type names a library, not what the kernel does."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0 and i > 0:
            return name[:i]
    return name


def kernel_class(k: Kernel) -> str:
    if k.kind != "kernel":
        return "memory copy"
    base = function_name(k.name)
    return next((name for name, rx in _COMPILED if rx.search(base)), "unknown")


@dataclass
class StepMeasure:
    """One step of the trace on one device: its kernels' times by class [us], its busy time, its period and idle time."""

    index: int
    start: float
    end: float
    kernels: int
    by_class: dict[str, float]
    count_by_class: dict[str, int]
    busy: float
    #: first kernel of this step to the first of the next [us] (None: the trace's last step)
    period: float | None = None
    #: the GPU's idle time at kernel boundaries inside the step, the median gap [us], and the gap before the next step [us]
    gaps: list[float] = field(default_factory=list)
    host_gap: float | None = None

    @property
    def kernel_time(self) -> float:
        return sum(self.by_class.values())


def _union(intervals: Sequence[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def _split(trace: Trace, kernels: Sequence[Kernel]) -> list[list[Kernel]]:
    """The kernels of each host step (by launch time); all of them as one step where the trace marks none or has no launches."""
    if not trace.steps or all(k.launched is None for k in kernels):
        return [list(kernels)]
    groups: list[list[Kernel]] = [[] for _ in trace.steps]
    starts = [s[0] for s in trace.steps]
    for k in kernels:
        if k.launched is None:
            continue
        i = max((j for j, s in enumerate(starts) if s <= k.launched), default=None)
        if i is not None and k.launched <= trace.steps[i][1]:
            groups[i].append(k)
    return [g for g in groups if g]


@dataclass
class Measured:
    trace: Trace
    device: int
    steps: list[StepMeasure]
    decode: list[StepMeasure]
    left_out: list[StepMeasure]
    unknown: Counter[str]
    notes: list[str]

    def median(self, f) -> float:  # type: ignore[no-untyped-def]
        return statistics.median(f(s) for s in self.decode)

    @property
    def period(self) -> float:
        """The decode step [us]: the median period of the decode steps that have one, else the one step's span."""
        with_period = [s.period for s in self.decode if s.period is not None]
        return statistics.median(with_period) if with_period else statistics.median(s.end - s.start for s in self.decode)

    def class_time(self, name: str) -> float:
        return self.median(lambda s: s.by_class.get(name, 0.0))

    @property
    def idle(self) -> float:
        return max(0.0, self.period - self.median(lambda s: s.busy))


def measure(trace: Trace) -> Measured:
    notes: list[str] = []
    by_device: dict[int, float] = defaultdict(float)
    for k in trace.kernels:
        by_device[k.device] += k.end - k.start
    device = max(by_device, key=lambda d: by_device[d])
    if len(by_device) > 1:
        notes.append(f"the trace holds {len(by_device)} devices; device {device}, the busiest, is read")
    kernels = [k for k in trace.kernels if k.device == device]
    groups = _split(trace, kernels)
    if not trace.steps or all(k.launched is None for k in kernels):
        notes.append("the trace marks no steps the host launched (no execute_model, ProfilerStep or step range with its launches): "
                     "it is read as one step, its span the step time, the host's time between steps unseen")
    unknown: Counter[str] = Counter()
    steps = []
    for i, g in enumerate(groups):
        by_class: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        for k in g:
            c = kernel_class(k)
            by_class[c] += k.end - k.start
            count[c] += 1
            if c == "unknown":
                unknown[function_name(k.name)[:120]] += 1
        ordered = sorted(g, key=lambda k: k.start)
        gaps, reach = [], ordered[0].end
        for k in ordered[1:]:
            if k.start > reach:
                gaps.append(k.start - reach)
            reach = max(reach, k.end)
        steps.append(StepMeasure(i, ordered[0].start, max(k.end for k in g), len(g), dict(by_class), dict(count),
                                 _union([(k.start, k.end) for k in g]), gaps=gaps))
    for a, b in pairwise(steps):
        a.period = b.start - a.start
        a.host_gap = max(0.0, b.start - a.end)
    if len(steps) == 1:
        notes.append("the trace holds one step: its span on the GPU is taken as the step, the host's time before the next step unseen")
    median_time = statistics.median(s.kernel_time for s in steps)
    decode = [s for s in steps if s.kernel_time <= PREFILL_FACTOR * median_time]
    left = [s for s in steps if s not in decode]
    if left:
        notes.append(f"{len(left)} of {len(steps)} steps left out as prefill (kernel time over {PREFILL_FACTOR:g} times the median step's): "
                     + ", ".join(f"step {s.index} ({s.kernel_time / 1000:.1f} ms)" for s in left))
    for s in decode:
        span = s.period if s.period is not None else s.end - s.start
        if s.gaps and span > 0 and (span - s.busy) > 0.5 * span:
            notes.append(f"step {s.index}: the GPU is idle {(span - s.busy) / 1000:.1f} ms of its {span / 1000:.1f} ms, the longest gap between "
                         f"two kernels {max(s.gaps) / 1000:.1f} ms: a host stall, a synchronisation or a trace cut inside a step")
    return Measured(trace, device, steps, decode, left, unknown, notes)


# --- the step model beside it -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Predicted:
    values: Mapping[str, float]  # SI
    beta: float
    peak: float
    math: str
    #: what the small kernels' and collectives' bytes are counted from: the model's hidden size and vocabulary, its layers,
    #: the tensor-parallel degree and the chip's scale-up link (bytes/s per direction; 0 where it has none)
    hidden: int = 0
    vocab: int = 0
    layers: int = 0
    tp: int = 1
    link: float = 0.0


_PREDICTED = ("t_step", "bytes_per_gpu", "tokens_per_step", "gpus", "t_gemm", "t_attention", "t_comm", "t_alltoall", "t_overhead", "weight_bytes_gpu", "kv_bytes_step",
              "index_bytes_step", "state_bytes_step", "flops_gemm_gpu", "flops_attention_gpu")


def predict(hardware: str, model: str, sets: Sequence[str], weights: str | None, kv: str | None, math: str | None,
            engine: str | None) -> Predicted:
    sheet = api.derive("decode-floor", hardware=hardware, model=model, weights=weights, kv=kv, math=math, overrides=list(sets), engine=engine)
    values = {}
    for name in _PREDICTED:
        v = sheet.values.get(name)
        values[name] = 0.0 if v is None or v.missing else float(v.quantity.to_base_units().magnitude)
    hw = api.hardware(hardware)
    m = sheet.setup.math.math
    beta = float(hw.memory_bandwidth.to("B/s").magnitude)
    values["t_floor"] = values["bytes_per_gpu"] / beta  # one GPU's bytes at datasheet bandwidth: the floor of this layout
    arch = api.model(model)
    tp = next((round(float(i.value.exact)) for i in sheet.inputs if i.name == "tp"), 1)
    link = hw.scaleup_bandwidth_per_direction
    return Predicted(values, beta, float(hw.peak_dense[m].to("flop/s").magnitude), m, int(arch.hidden_size), int(arch.vocab_size),
                     int(arch.num_layers), tp, float(link.to("B/s").magnitude) if link is not None else 0.0)


# --- the report -----------------------------------------------------------------------------------------------------------


def _ms(us: float) -> str:
    return f"{us / 1000:.2f}"


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def buckets(m: Measured, p: Predicted) -> list[tuple[str, float, float | None]]:
    """(bucket, measured [s], predicted [s] or None): the step, its floor, and where the rest goes."""
    v = p.values
    stream = sum(m.class_time(c) for c in STREAMING) / 1e6
    collective = m.class_time("collective") / 1e6
    other = sum(m.class_time(c) for c in CLASS_NAMES if c not in (*STREAMING, "collective")) / 1e6
    idle = m.idle / 1e6
    return [
        ("decode step", m.period / 1e6, v["t_step"]),
        ("floor: the step's bytes at datasheet bandwidth", v["t_floor"], v["t_floor"]),
        ("streaming kernels (weight GEMMs, grouped MoE GEMMs, attention)", stream, v["t_gemm"] + v["t_attention"]),
        ("collectives", collective, v["t_comm"] + v["t_alltoall"]),
        ("overheads: other kernels and idle time", other + idle, v["t_overhead"]),
        ("  other kernels (norms, elementwise, sampling, copies, unknown)", other, None),
        ("  idle (no kernel running)", idle, None),
    ]


#: Activations between kernels are BF16 in the engines traced (2 bytes an element): the small kernels' and the all-reduces'
#: bytes are counted in it. Logits are sampled in FP32 (4 bytes).
ACTIVATION_BYTES = 2
LOGIT_BYTES = 4


def roofline_rows(m: Measured, p: Predicted) -> list[dict[str, object]]:
    """Each kernel class on the roofline at its achieved intensity, over the time the trace measured:

    - weight GEMMs and attention: the step model's bytes and FLOPs of the class per GPU;
    - norms and elementwise kernels: each reads and writes one activation of the step's tokens (2 x tokens x hidden x 2 bytes),
      at a few FLOPs an element, so below 1 flop/B: at the bandwidth roof whatever that count, and its percent of roof is its
      achieved bandwidth over the datasheet's;
    - sampling: the step's logits read once (tokens x vocabulary x 4 bytes), likewise at the bandwidth roof;
    - collectives: the ring all-reduces' bytes on the scale-up link (2 per layer, each 2(n-1)/n of one activation), against
      the link's bandwidth per direction, the roof a collective has;
    - memory copies: bytes the trace does not give, so time only (not placed).
    """
    v = p.values
    tokens = v["tokens_per_step"]
    activation = tokens * p.hidden * ACTIVATION_BYTES
    rows: list[dict[str, object]] = []

    def row(label: str, t: float, bytes_: float, flops: float | None, roof_bw: float, bound: str, counted: str) -> None:
        if t <= 0 or bytes_ <= 0 or roof_bw <= 0:
            return
        if flops is None:  # below 1 flop/B: the roof is the bandwidth's, and the percent its share
            rows.append({"class": label, "time_s": t, "bytes": bytes_, "flops": None, "intensity_flop_per_byte": None,
                         "achieved_bandwidth_Bps": bytes_ / t, "achieved_flops": None, "roof_Bps": roof_bw,
                         "percent_of_roof": bytes_ / t / roof_bw, "bound": bound, "counted": counted})
            return
        intensity = flops / bytes_
        roof = min(p.peak, intensity * p.beta)
        rows.append({"class": label, "time_s": t, "bytes": bytes_, "flops": flops, "intensity_flop_per_byte": intensity,
                     "achieved_bandwidth_Bps": bytes_ / t, "achieved_flops": flops / t, "roof_flops": roof,
                     "percent_of_roof": (flops / t) / roof, "bound": "memory" if intensity * p.beta < p.peak else "compute", "counted": counted})

    row("weight GEMMs (dense and grouped MoE)", (m.class_time("weight GEMM") + m.class_time("grouped MoE GEMM")) / 1e6,
        v["weight_bytes_gpu"], v["flops_gemm_gpu"], p.beta, "memory", "the step model's weight bytes and GEMM FLOPs per GPU")
    row("attention", m.class_time("attention") / 1e6, v["kv_bytes_step"] + v["index_bytes_step"] + v["state_bytes_step"],
        v["flops_attention_gpu"], p.beta, "memory", "the step model's cache bytes and attention FLOPs per GPU")
    kernels = m.median(lambda s: s.count_by_class.get("norm and elementwise", 0))
    row("norm and elementwise", m.class_time("norm and elementwise") / 1e6, kernels * 2 * activation, None, p.beta, "memory",
        f"{kernels:g} kernels a step, each reading and writing one activation of {tokens:g} tokens x {p.hidden} in BF16")
    row("sampling", m.class_time("sampling") / 1e6, tokens * p.vocab * LOGIT_BYTES, None, p.beta, "memory",
        f"the logits of {tokens:g} tokens x {p.vocab:,} in FP32, read once")
    if p.tp > 1:
        n = p.tp
        row("collective", m.class_time("collective") / 1e6, 2 * p.layers * 2 * (n - 1) / n * activation, None, p.link, "link",
            f"two ring all-reduces a layer over {n} GPUs, each 2(n-1)/n of one activation in BF16, on the scale-up link")
    return rows


def sheet_inputs(m: Measured, p: Predicted, layers: int) -> dict[str, dict[str, str]]:
    """The two diagnosis sheets' inputs, set from the trace (the setup's own, --set, are given beside them)."""
    t = m.period / 1e6
    kernel = m.median(lambda s: s.kernel_time) / 1e6
    collective = m.class_time("collective") / 1e6
    other = sum(m.class_time(c) for c in CLASS_NAMES if c not in (*STREAMING, "collective")) / 1e6
    out: dict[str, dict[str, str]] = {}
    mbu = p.values["t_floor"] / t if t > 0 else 0.0
    if 0 < mbu <= 1:
        out["mbu-diagnosis"] = {"mbu": f"{mbu:.6g}", "idle_share": f"{m.idle / 1e6 / t:.6g}",
                                "nonstreaming_share": f"{other / max(kernel - collective, 1e-12):.6g}",
                                "t_collectives_observed": f"{collective * 1e6:.6g} us"}
    kernels = round(m.median(lambda s: s.kernels))
    per_layer = max(1, kernels // max(layers, 1))
    gaps = [g for s in m.decode for g in s.gaps]
    host = [s.host_gap for s in m.decode if s.host_gap is not None]
    small = [s.count_by_class.get("norm and elementwise", 0) for s in m.decode]
    out["batch1-gap"] = {"t_step_measured": f"{t * 1e3:.6g} ms", "kernels_per_layer": str(per_layer),
                         "kernels_other": str(max(0, kernels - per_layer * layers)),
                         "launch_gap": f"{statistics.median(gaps) if gaps else 0:.6g} us",
                         "host_time": f"{statistics.median(host) if host else 0:.6g} us",
                         "small_kernels_per_layer": str(round(statistics.median(small) / max(layers, 1))) if small else "0",
                         "outside_time": "0 ms"}
    return out


_SHEET_BUCKETS = {
    "mbu-diagnosis": ("t_floor", "tpot", "t_idle", "t_collective_bucket", "t_nonstream", "t_bandwidth"),
    "batch1-gap": ("t_floor", "t_step_observed", "t_white_space", "t_slow_kernels", "t_extra_kernels", "t_invisible", "t_remainder"),
}


def diagnose(path: str, hardware: str, model: str, sets: Sequence[str], weights: str | None, kv: str | None, math: str | None,
             engine: str | None, fmt: str) -> str:
    trace = read_trace(Path(path))
    m = measure(trace)
    p = predict(hardware, model, sets, weights, kv, math, engine)
    layers = api.model(model).num_layers
    sheets = {}
    for slug, inputs in sheet_inputs(m, p, layers).items():
        sh = api.derive(slug, hardware=hardware, model=model, weights=weights, kv=kv, math=math, overrides=list(sets), inputs=inputs,
                        engine=engine)
        sheets[slug] = (inputs, {n: (sh.values[n].quantity.to_base_units().magnitude if not sh.values[n].missing else None,
                                     sh.blueprint.step(n).title or n) for n in _SHEET_BUCKETS[slug] if n in sh.values})
    return (_json if fmt == "json" else _markdown)(m, p, sheets, hardware, model)


def _markdown(m: Measured, p: Predicted, sheets: Mapping[str, tuple[Mapping[str, str], Mapping[str, tuple[float | None, str]]]],
              hardware: str, model: str) -> str:
    t = m.trace
    out = [f"# Diagnosis of {md(t.path.name)}", "",
           f"- {t.format} trace, GPU {md(t.gpu or 'not stated')}; {len(m.steps)} step{'s' if len(m.steps) != 1 else ''} on device {m.device}, "
           f"{len(m.decode)} read as decode steps; compared with {md(model)} on {md(hardware)} as the command line sets it.",
           *(f"- {md(n)}." for n in m.notes), "",
           "## Where the decode step goes", "",
           "Medians over the decode steps; the step model's prediction at the same setup beside each.", "",
           "| bucket | measured ms | share of the step | step model ms |", "|---|---:|---:|---:|"]
    for label, measured, predicted in buckets(m, p):
        out.append(f"| {md(label)} | {measured * 1e3:.2f} | {_pct(measured / (m.period / 1e6))} | "
                   f"{'' if predicted is None else f'{predicted * 1e3:.2f}'} |")
    out += ["", "## Kernel classes", "", "| class | kernels per step | ms per step | share of kernel time |", "|---|---:|---:|---:|"]
    total = m.median(lambda s: s.kernel_time)
    for c in CLASS_NAMES:
        time_ = m.class_time(c)
        if time_ <= 0:
            continue
        out.append(f"| {c} | {round(m.median(lambda s, c=c: s.count_by_class.get(c, 0)))} | {_ms(time_)} | {_pct(time_ / total)} |")
    out += ["", "## Each kernel class on the roofline", "",
            f"The bytes and FLOPs each class moves per GPU in a step, over the time the trace measured; the roof at its intensity is "
            f"min(peak, intensity x bandwidth) with the datasheet's {p.beta / 1e12:.3g} TB/s and dense {p.math} peak {p.peak / 1e12:.4g} "
            "TFLOP/s. A class below 1 flop/B sits under the bandwidth roof whatever its FLOPs, so its percent is its bandwidth's share; "
            "a collective's roof is the scale-up link. Memory copies are not placed: the trace gives their time, not their bytes.", "",
            "| class | ms | bytes | FLOP/byte | achieved | roof | percent of roof | bytes counted as |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in roofline_rows(m, p):
        if r["flops"] is None:
            achieved, roof, intensity = plain(r["achieved_bandwidth_Bps"], "B/s"), plain(r["roof_Bps"], "B/s"), "below 1"
        else:
            achieved = f"{plain(r['achieved_flops'], 'flop/s')} ({plain(r['achieved_bandwidth_Bps'], 'B/s')})"
            roof, intensity = plain(r["roof_flops"], "flop/s"), f"{r['intensity_flop_per_byte']:.3g}"
        out.append(f"| {r['class']} | {r['time_s'] * 1e3:.2f} | {plain(r['bytes'], 'B')} | {intensity} | {achieved} | {roof} | "
                   f"{_pct(r['percent_of_roof'])} ({r['bound']}-bound) | {md(str(r['counted']))} |")
    for slug, (inputs, values) in sheets.items():
        out += ["", f"## The {slug} sheet's buckets, filled from the trace", "",
                "Inputs set from the trace: " + ", ".join(f"{md(k)} = {md(v)}" for k, v in inputs.items()) + ".", "",
                "| bucket | ms |", "|---|---:|"]
        out += [f"| {md(title)} | {'none' if x is None else f'{x * 1e3:.2f}'} |" for x, title in values.values()]
    if "mbu-diagnosis" not in sheets:
        out += ["", f"The measured step ({m.period / 1000:.2f} ms) is below the step model's floor ({p.values['t_floor'] * 1e3:.2f} ms): the trace "
                "cannot be this model on this layout (check --model and --set tp=...), so mbu-diagnosis is not filled."]
    out += ["", f"## Unknown kernels ({sum(m.unknown.values())})", ""]
    out += [f"- {md(n)}: {c}" for n, c in m.unknown.most_common(20)] or ["Every kernel was classed."]
    if len(m.unknown) > 20:
        out.append(f"- and {len(m.unknown) - 20} more names")
    return "\n".join(out) + "\n"


def _json(m: Measured, p: Predicted, sheets: Mapping[str, tuple[Mapping[str, str], Mapping[str, tuple[float | None, str]]]],
          hardware: str, model: str) -> str:
    return json.dumps({
        "trace": {"path": shown_path(m.trace.path), "format": m.trace.format, "gpu": m.trace.gpu, "device": m.device,
                  "steps": len(m.steps), "decode_steps": [s.index for s in m.decode], "left_out": [s.index for s in m.left_out], "notes": m.notes},
        "setup": {"hardware": hardware, "model": model, "math": p.math},
        "steps": [{"index": s.index, "period_s": None if s.period is None else s.period / 1e6, "busy_s": s.busy / 1e6, "kernels": s.kernels,
                   "by_class_s": {c: x / 1e6 for c, x in s.by_class.items()}} for s in m.steps],
        "buckets": [{"bucket": label.strip(), "measured_s": a, "predicted_s": b} for label, a, b in buckets(m, p)],
        "roofline": roofline_rows(m, p),
        "sheets": {slug: {"inputs": dict(inputs), "buckets": {n: x for n, (x, _) in values.items()}} for slug, (inputs, values) in sheets.items()},
        "unknown_kernels": dict(m.unknown.most_common()),
    }, indent=2, ensure_ascii=False) + "\n"


__all__ = ["CLASS_NAMES", "KERNEL_CLASSES", "STREAMING", "diagnose", "function_name", "kernel_class", "measure"]

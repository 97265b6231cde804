"""A measured MBU of 60%: where did the other 40% of the step go?

Takeaway: rebuild the floor from bytes (the weights the step reads plus the KV
cache at the context, per GPU, over the datasheet bandwidth); the MBU gives the
measured step, t = t_floor / MBU, and the missing time is t - t_floor. Split
that time along what one profiler trace shows, outside in:

    MBU = f_busy * f_coll * f_stream * eta_hat
    t - t_floor = t_idle + t_coll + t_nonstream + t_bw

f_busy = 1 - idle share (white space in the timeline); f_coll = 1 - t_coll /
t_busy (the step model's all-reduces: bytes over the link and latency); f_stream =
1 - non-streaming share of the remaining kernel time (norms, rotary, sampling,
routing); eta_hat, the bandwidth the streaming kernels (weight GEMMs,
attention) reach, is derived as what is left: MBU / (f_busy f_coll f_stream) =
t_floor / t_stream. Each factor is a ratio of two nested times, so the factors
multiply to the MBU and the bucket times add to the missing time for any
inputs: both identities are algebraic. eta_hat above 1 means the inputs
contradict each other (streaming kernels faster than the datasheet); the sheet
then prints none with the reason.

Assumes the byte count of the shared step model (derivations.physics.stepmodel), the
all-reduces not overlapped with compute, and the trace shares as inputs. Cites
the implied MBU range of published measurements (derivations.physics.measured).
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)
U = S.add("U_mbu", "1", r"\mathrm{MBU}", "measured memory-bandwidth utilisation: bytes that must move per step over (step time times datasheet bandwidth)")
s_idle = S.add("s_idle", "1", r"s_{\mathrm{idle}}", "share of the step the GPU is idle (white space between kernels in the trace)")
s_ns = S.add("s_ns", "1", r"s_{\mathrm{ns}}", "share of kernel time, collectives excluded, in kernels that stream no weights or cache")

MBU = Input("mbu", U, "0.6", "1", "measured MBU of the server, a fraction: bytes that must move per step over (step time times datasheet bandwidth)",
            "fraction")
IDLE = Input("idle_share", s_idle, "0.05", "1",
             "share of the step with no kernel running, read off the trace's timeline (white space); an illustrative default: measure it", "nonnegative")
NONSTREAM = Input("nonstreaming_share", s_ns, "0.1", "1",
                  "share of kernel time, collectives excluded, in kernels that move none of the counted bytes (norms, rotary, activations, "
                  "sampling, MoE routing), from the trace's kernel summary; an illustrative default: measure it", "nonnegative")

# --- the floor, and the step the MBU implies ----------------------------------------------------

t_floor = Step("t_floor", pr.memory_time(sm.bytes_gpu.s), "s",
               "Every byte the step must move on one GPU (its share of the weights read, its cached streams) at the datasheet bandwidth: "
               "no step can be shorter.",
               latex=r"t_{\mathrm{floor}}", title="The floor")
tpot = Step("tpot", pr.step_time_at_mbu(sm.bytes_gpu.s, U), "s",
            "The MBU is the floor over the measured step, so the step it implies is the floor over the MBU: the time per output token of each "
            "sequence at one token per step.",
            latex=r"t_{\mathrm{step}}", title="Step time the MBU implies")
gap = Step("gap", tpot.s - t_floor.s, "s",
           "The time to explain: the measured step minus the floor. It is zero exactly when the MBU is 1.",
           latex=r"\Delta t", title="Missing time")
missing = Step("missing_share", gap.s / tpot.s, "1",
               "The missing time as a share of the step: one minus the MBU.", latex=r"\Delta t/t_{\mathrm{step}}", title="Share of the step missing")
achieved = Step("bandwidth_achieved", sm.bytes_gpu.s / tpot.s, "B/s",
                r"The same measurement as a bandwidth: the bytes over the measured step, $\sym{U_mbu}$ times the datasheet figure.",
                latex=r"\beta_{\mathrm{MBU}}", title="Bandwidth the MBU stands for")

# --- the buckets, outside in: idle, collectives, non-streaming kernels, bandwidth ----------------

f_busy = Step("f_busy", 1 - s_idle, "1",
              "The first factor: the share of the step some kernel is running. In a trace: the timeline's white space between kernels, "
              "the launch gaps, the host's scheduling, sampling and detokenisation on the CPU.",
              latex=r"f_{\mathrm{busy}}", title="Busy share of the step",
              none="an idle share of 1 or more leaves no time for any kernel: the idle share must be below 1")
t_busy = Step("t_busy", f_busy.s * tpot.s, "s", "The time some kernel runs.", latex=r"t_{\mathrm{busy}}", title="Busy time")
coll_given = Step("collectives_given", pr.measurement_given(gl.t_coll_meas, t_floor.s), "1",
                  r"1 where a trace's collective time is given ($\sym{t_coll_meas}$ above 0, as a diagnosis of a trace sets it), 0 where "
                  "none is, and the step model's all-reduces stand in.",
                  latex=r"\delta_{\mathrm{coll}}", title="Measured collectives given")
t_coll = Step("t_collective", pr.measured_or(gl.t_coll_meas, sm.t_comm.s, coll_given.s), "s",
              "Collectives as their own bucket: the collective kernels' time a trace measured where one is given, else the tensor-parallel "
              "all-reduces of the step model (bytes over the link and their rounds of latency), not overlapped with compute. "
              "In a trace: the NCCL (or RCCL) all-reduce kernels; owned by whoever sets the parallel layout and the communication library.",
              latex=r"t_{\mathrm{coll}}", title="Collective time")
f_coll = Step("f_collective", 1 - t_coll.s / t_busy.s, "1",
              "The second factor: the share of the busy time outside collectives (1 on one GPU).",
              latex=r"f_{\mathrm{coll}}", title="Busy share outside collectives",
              none="the modelled all-reduces alone take longer than the busy time: the MBU, the idle share or the all-reduce latency contradict each other")
t_kernels = Step("t_kernels", f_coll.s * t_busy.s, "s", "The time compute kernels run: the busy time less the collectives.",
                 latex=r"t_{\mathrm{kern}}", title="Compute-kernel time")
f_stream = Step("f_stream", 1 - s_ns, "1",
                "The third factor: the share of that time in the kernels that move the counted bytes (weight GEMMs and attention).",
                latex=r"f_{\mathrm{stream}}", title="Streaming share of kernel time",
                none="a non-streaming share of 1 or more leaves no time for the kernels that move the bytes: the share must be below 1")
t_stream = Step("t_stream", f_stream.s * t_kernels.s, "s",
                "The time the weight GEMMs and attention run: the kernels whose bytes the MBU counts.",
                latex=r"t_{\mathrm{stream}}", title="Streaming-kernel time")
residual = U / (f_busy.s * f_coll.s * f_stream.s)
eta_hat = Step("f_bandwidth", sp.Piecewise((residual, residual <= 1), (sp.nan, True)), "1",
               "The fourth factor, derived rather than stated: the MBU over the other three, which is the floor over the streaming-kernel time, "
               "the share of the datasheet bandwidth the streaming kernels reach. It is the factor a trace does not show without a byte count "
               "per kernel; above 1 the inputs contradict each other.",
               latex=r"\hat{\eta}_{\mathrm{bw}}", title="Bandwidth reached inside streaming kernels",
               none="inconsistent inputs: the MBU is above what the idle, collective and non-streaming shares leave room for "
                    "(the streaming kernels would beat the datasheet bandwidth)")

b_idle = Step("t_idle", tpot.s - t_busy.s, "s",
              "Idle bucket. Trace signature: white space between kernels on the GPU timeline, the CPU thread busy in Python, the scheduler "
              "or sampling while the GPU waits. Owner: the serving runtime (CUDA graphs, overlapped scheduling, asynchronous output).",
              latex=r"\Delta t_{\mathrm{idle}}", title="Idle bucket")
b_coll = Step("t_collective_bucket", t_busy.s - t_kernels.s, "s",
              "Collective bucket (zero on one GPU). Trace signature: all-reduce kernels between the attention output and the MLP projections, "
              "twice per layer, their time set by their latency rounds, not by bytes of HBM. Owner: the parallelism and communication "
              "owners (TP degree, custom all-reduce, fusing the all-reduce with the norm).",
              latex=r"\Delta t_{\mathrm{coll}}", title="Collective bucket")
b_ns = Step("t_nonstream", t_kernels.s - t_stream.s, "s",
            "Non-streaming bucket. Trace signature: many short kernels (norms, rotary, activation, residual adds, cache writes, MoE routing and "
            "permutes, sampling) that move few bytes each. Owner: the kernel and compiler team (fusion into the neighbouring GEMMs).",
            latex=r"\Delta t_{\mathrm{ns}}", title="Non-streaming bucket")
b_bw = Step("t_bandwidth", pr.bandwidth_shortfall(sm.bytes_gpu.s, eta_hat.s), "s",
            "Bandwidth bucket. Trace signature: the GEMM and attention kernels themselves take longer than their bytes over the datasheet "
            "bandwidth (Nsight Compute shows DRAM throughput well below peak: small tiles, too few blocks for the SMs, split-K missing, "
            "an attention kernel tuned for prefill). Owner: the kernel team (GEMM and attention tuning, kernel choice per batch).",
            latex=r"\Delta t_{\mathrm{bw}}", title="Bandwidth bucket")

mbu_rebuilt = Step("mbu_rebuilt", f_busy.s * f_coll.s * f_stream.s * eta_hat.s, "1",
                   "The check: the four factors multiply back to the measured MBU, exactly.",
                   latex=r"f_{\mathrm{busy}} f_{\mathrm{coll}} f_{\mathrm{stream}} \hat{\eta}_{\mathrm{bw}}", title="Factors multiplied")
gap_rebuilt = Step("gap_rebuilt", b_idle.s + b_coll.s + b_ns.s + b_bw.s, "s",
                   "The check: the four buckets add back to the missing time, exactly.",
                   latex=r"\sum \Delta t", title="Buckets added")
share_idle = Step("share_idle", b_idle.s / gap_rebuilt.s, "1", "The idle bucket's share of the missing time (none where the buckets are: inconsistent inputs, or no missing time).",
                  latex=r"\Delta t_{\mathrm{idle}}/\Delta t", title="Idle share of the missing time")
share_coll = Step("share_collective", b_coll.s / gap_rebuilt.s, "1", "The collective bucket's share of the missing time.",
                  latex=r"\Delta t_{\mathrm{coll}}/\Delta t", title="Collective share of the missing time")
share_ns = Step("share_nonstream", b_ns.s / gap_rebuilt.s, "1", "The non-streaming bucket's share of the missing time.",
                latex=r"\Delta t_{\mathrm{ns}}/\Delta t", title="Non-streaming share of the missing time")
share_bw = Step("share_bandwidth", b_bw.s / gap_rebuilt.s, "1", "The bandwidth bucket's share of the missing time.",
                latex=r"\Delta t_{\mathrm{bw}}/\Delta t", title="Bandwidth share of the missing time")

STEPS = (*sm.BYTES_STEPS, *sm.MEMORY_FIT, t_floor, tpot, gap, missing, achieved,
         f_busy, t_busy, *sm.COMM_STEPS, coll_given, t_coll, f_coll, t_kernels, f_stream, t_stream, eta_hat,
         b_idle, b_coll, b_ns, b_bw, mbu_rebuilt, gap_rebuilt, share_idle, share_coll, share_ns, share_bw, *ms.MBU_STEPS)

BUCKETS = ("t_idle", "t_collective_bucket", "t_nonstream", "t_bandwidth")
FACTORS = ("f_busy", "f_collective", "f_stream", "f_bandwidth")

DERIVATION = derivation(
    "mbu-diagnosis",
    "Diagnosing an MBU: from one number to buckets a team can own",
    "A 60% MBU number is a symptom, not a diagnosis. The answer rebuilds the floor from bytes, then splits the missing 40% into buckets "
    "a profiler can confirm and a team can own.",
    S,
    STEPS,
    ("t_floor", "tpot", "gap"),
    inputs=(MBU, IDLE, NONSTREAM, ms.MEASURED_COLLECTIVES, *ms.MBU_INPUTS),
    argument=(
        "bytes_per_gpu", "t_floor", "tpot", "gap", "f_busy", "t_collective", "f_collective", "f_stream", "f_bandwidth", "t_idle",
        "t_collective_bucket", "t_nonstream", "t_bandwidth", "gap_rebuilt",
    ),
    body_tables=(1, 2),
    answer=(
        "The step's bytes, {bytes_per_gpu} per GPU, set a floor of {t_floor}; an MBU of {mbu} puts the step at {tpot}, so {gap} "
        "per step is missing.",
        "The missing time splits into idle time ({t_idle}, the serving runtime's), collectives ({t_collective_bucket}), "
        "non-streaming kernels ({t_nonstream}, fusion) and bandwidth inside the streaming kernels ({t_bandwidth}, the kernel "
        "team's), each with its own trace signature.",
    ),
    assumptions=(
        r"MBU is bytes that must move per step on one GPU over the step time times that GPU's datasheet bandwidth (@mbu-definition): "
        r"the bytes are the shared step model's, the weights the step reads (for MoE the experts the batch touches under uniform top-$k$ "
        r"routing) split $\sym{n_tp}$ ways plus each sequence's cache of $T$ tokens on that GPU.",
        r"Decode at $q$ tokens per sequence per step; at $q = 1$ token the step time is the time per output token of every sequence.",
        "The missing time is split outside in, as a trace is read: white space first, then collectives, then kernels that move none of the "
        "counted bytes, and what is left is the streaming kernels running below the datasheet bandwidth.",
        "The idle and non-streaming shares are measurements (inputs, illustrative defaults); the collectives are the step model's all-reduces "
        r"(two per layer: bytes over the link plus $\sym{allreduce_rounds}$ rounds of $\sym{t_ar}$, one round on a switched domain, the latency "
        "from the engine profile); the bandwidth factor is derived, so the identities hold for any inputs.",
        "For scale: the memory-bound decode records of published measurements (specs/measurements) reach an implied MBU of "
        "{measured_mbu_low} to {measured_mbu_high}, median {measured_mbu_median}; at those MBUs this setup's step would take "
        "{t_step_mbu_high} to {t_step_mbu_low}. An MBU of {mbu} is a measurement to diagnose, not a fault by itself, when it sits inside that range.",
        "Collectives are not overlapped with compute (decode's all-reduces sit on the critical path between attention and the MLP).",
        "The worked server is Llama 3.1 70B on four H100s: on eight, the engine profile's all-reduce latency alone takes more of the "
        "step than a 60% MBU leaves at these shares (the table across servers shows it): the bandwidth factor would exceed 1.",
    ),
    takeaways=(
        "The floor is {t_floor}: {bytes_per_gpu} per GPU at the datasheet bandwidth. An MBU of {mbu} puts the step at {tpot}, "
        "so {gap} is missing.",
        r"The factors multiply to the MBU: $\sym{f_busy} \cdot \sym{f_collective} \cdot \sym{f_stream} \cdot \sym{f_bandwidth}$ = "
        "{f_busy} x {f_collective} x {f_stream} x {f_bandwidth} = {mbu_rebuilt}; the buckets add to the missing time: "
        "{t_idle} + {t_collective_bucket} + {t_nonstream} + {t_bandwidth} = {gap_rebuilt}.",
        "Idle, {t_idle} ({share_idle} of the missing time): white space in the timeline, owned by the serving runtime.",
        "Collectives, {t_collective_bucket} ({share_collective}): the all-reduce kernels, owned by the parallelism and communication owners.",
        "Non-streaming kernels, {t_nonstream} ({share_nonstream}): many small kernels, owned by the kernel and compiler team (fusion).",
        "Bandwidth inside the streaming kernels, {t_bandwidth} ({share_bandwidth}): they reach {f_bandwidth} of the datasheet bandwidth; "
        "owned by the kernel team.",
    ),
    scoring=(
        "Rebuilds the numerator from the config: the weights the step reads per GPU (for MoE the experts touched, not all parameters) plus "
        "the KV cache at the context, in decimal bytes, against one GPU's datasheet bandwidth.",
        "Turns the MBU into milliseconds: the floor, the implied step and the missing time, before naming any cause.",
        "Splits the missing time into buckets a single trace confirms (white space, collectives, small kernels, slow streaming kernels) and "
        "makes them add up exactly, with one factor derived and said to be derived.",
        "Names the owner of each bucket and the signature that proves it, so the number becomes a work list.",
        "On several GPUs, counts per-GPU bytes (cached streams replicate past their count) and gives the collectives their own bucket.",
        "Knows a 60% MBU is not a bandwidth problem until the other buckets are ruled out.",
    ),
    limits=(
        "The shares are inputs: the sheet checks that they are consistent with the MBU, it does not measure them. A trace of a few hundred "
        "steps, with the GPU and CPU timelines, gives them.",
        "The buckets assume nothing overlaps: where a runtime overlaps the host's work with the GPU or an all-reduce with a GEMM, the trace "
        "shows less white space and a shorter collective bucket, and the factors shift accordingly.",
        r"The collective bucket is modelled, not measured: the step model's all-reduces, bytes over the link plus $\sym{allreduce_rounds}$ rounds of "
        r"$\sym{t_ar}$ each. Compare it with the all-reduce kernel time in the trace; a large difference is itself a finding.",
        "The collective bucket's latency is the engine profile's: here {t_collective} of all-reduces against a step of {tpot}. Where the "
        "modelled all-reduces exceed the busy time the MBU implies, the buckets are none and the identity cannot be checked: either the "
        "server beats the profile's all-reduce latency or the MBU is not reachable there; a trace of the all-reduce kernels settles it.",
        "MoE bytes assume uniform routing; skewed routing reads fewer experts, which lowers the floor and moves time into the bandwidth bucket.",
        "Prefill chunks mixed into decode steps add bytes and FLOPs the numerator does not count: measure the MBU on pure decode steps, "
        "or count those bytes too.",
    ),
    tables=(
        Table("The same MBU on one GPU and on several (the bucket times)", tuple(
            Row("", set={"tp": str(n)}) for n in (1, 2, 4, 8)
        ), ("t_floor", "tpot", *BUCKETS),
            note="One GPU has no collective bucket; on several, the all-reduces take a share of the same missing time."),
        Table("The four factors as the MBU changes (default shares)", tuple(
            Row("", set={"mbu": m}) for m in ("0.3", "0.45", "0.6", "0.7", "0.75")
        ), ("tpot", *FACTORS),
            note="The stated shares cap the MBU: above their product the bandwidth factor would exceed 1, and the sheet says none."),
        Table("Across servers (MBU 0.6, batch 16)", (
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "4"}),
            Row("", model="llama-3.1-70b", hardware="h200", set={"tp": "2"}),
            Row("", model="llama-3.1-70b", hardware="b200", set={"tp": "2"}),
            Row("", model="mixtral-8x7b", hardware="h100-sxm", set={"tp": "2"}),
            Row("", model="qwen3-235b-a22b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="deepseek-v3", hardware="h200", weights="fp8", set={"tp": "8"}),
        ), ("bytes_per_gpu", "t_floor", "gap", "t_collective_bucket", "f_bandwidth"),
            note="The MoE models read the experts their batch touches; DeepSeek-V3 is served in FP8, its MLA latent whole on every GPU. "
                 "Where the bandwidth factor is none, the modelled all-reduces leave no room for this MBU at the stated shares."),
        Table("Long context (batch 16, tensor parallel 4)", tuple(
            Row("", set={"context": f"{t} token"}) for t in (2048, 8192, 32768, 131072)
        ), ("kv_bytes_step", "t_floor", "gap", "t_bandwidth")),
    ),
    claims=(
        Claim("A 60% MBU leaves 40% of the step to explain.", "missing_share", "0.4", rel_tol=1e-9),
        Claim("The buckets add back to the missing time exactly.", "gap_rebuilt", "gap", rel_tol=1e-12),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-70b", "qwen3-235b-a22b"),
    defaults={"tp": "4", "batch": "16"},
    plots=(Plot("buckets", "stack",
                "The step the MBU implies, for each tensor-parallel degree: the floor, then the missing time in its four buckets "
                "(idle, collectives, non-streaming kernels, bandwidth below the datasheet in the streaming kernels). Where the modelled "
                "all-reduces leave no room for the MBU the buckets are none.",
                title="An MBU of {mbu} leaves {gap} of the {tpot} step to explain, split into buckets a trace can confirm",
                y=("t_floor", "gap_rebuilt"), split=("gap_rebuilt",), table=0, answer=True,
                labels={"t_floor": "floor", "gap_rebuilt": "missing time", "t_idle": "idle", "t_collective_bucket": "collectives",
                        "t_nonstream": "non-streaming kernels", "t_bandwidth": "bandwidth below the datasheet"}),),
    display_units={"f_bandwidth": "%", **sm.DISPLAY_UNITS, **ms.DISPLAY_UNITS, "t_floor": "ms", "tpot": "ms", "gap": "ms", "bandwidth_achieved": "TB/s", "t_busy": "ms",
                   "t_collective": "ms", "t_kernels": "ms", "t_stream": "ms", "t_idle": "ms",
                   "t_collective_bucket": "ms", "t_nonstream": "ms", "t_bandwidth": "ms", "gap_rebuilt": "ms", "t_comm": "ms",
                   **{n: "percent" for n in ("missing_share", "share_idle", "share_collective", "share_nonstream", "share_bandwidth")}},
)

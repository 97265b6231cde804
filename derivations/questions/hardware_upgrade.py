"""What does moving to a new accelerator buy: one speedup, or three?

Takeaway: the shared step model on both chips, same model, same GPU count,
splits the upgrade into three regimes. Compute-bound work speeds up by the
ratio of dense peaks (pi'/pi: 1 from H100 SXM to H200, the same GH100 die and
clocks); bandwidth-bound work by the ratio of bandwidths (beta'/beta); and a
server limited by its KV cache by the ratio of throughputs at the largest
batch each chip fits. That last one is the biggest when the weights take much
of the old chip's memory: the new chip's extra capacity all goes to the cache,
so the batch grows by more than the capacity ratio, and a larger batch shares
each weight read among more sequences. As the GPU count grows the weights'
share shrinks and the capacity speedup falls back towards the bandwidth ratio;
at short contexts the big batch turns the GEMMs compute-bound and it falls
towards the peak ratio, while long contexts keep the step memory-bound. The second chip's values are the same steps with the
second chip's (primed) symbols (engine.At).
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, at, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import stepmodel as sm
from . import batch_knee as bk

S = Symbols(parent=bk.S)
NEW = gl.SECOND_CHIP

t_cmp_2 = at("t_compute_new", sm.t_compute, NEW, "The same FLOPs on the second chip: only its dense peak changes.",
             latex=r"t_{\mathrm{cmp}}'", title="Compute time on the second chip")
speedup_compute = Step("speedup_compute", sm.t_compute.s / t_cmp_2.s, "1",
                       r"Compute-bound work (large-batch GEMMs, prefill) speeds up by the ratio of dense peaks, $\sym{pi_2}/\sym{pi}$: "
                       "the FLOPs are the same on both chips.",
                       latex=r"\sigma_{\mathrm{cmp}}", title="Speedup when compute-bound")
t_mem_2 = at("t_memory_new", sm.t_memory, NEW, "The same bytes on the second chip: only its bandwidth changes.",
             latex=r"t_{\mathrm{mem}}'", title="Memory time on the second chip")
speedup_memory = Step("speedup_memory", sm.t_memory.s / t_mem_2.s, "1",
                      r"Bandwidth-bound work (decode at small batch) speeds up by the ratio of bandwidths, $\sym{beta_2}/\sym{beta}$, "
                      "at the same achieved fraction.",
                      latex=r"\sigma_{\mathrm{mem}}", title="Speedup when bandwidth-bound")
t_step_2 = at("t_step_new", sm.t_step, NEW,
              "The whole step on the second chip at this batch and context: each component on its own roofline, the all-reduces over its link.",
              latex=r"t_{\mathrm{step}}'", title="Step time on the second chip")
speedup_step = Step("speedup_step", sm.t_step.s / t_step_2.s, "1",
                    "At this batch and context the upgrade is a blend: near the bandwidth ratio while the step is memory-bound, "
                    "diluted by the overheads and the all-reduces' latency, which the chips share.",
                    latex=r"\sigma_{\mathrm{step}}", title="Speedup at this batch and context")
weights_share = Step("weights_share", bk.weights_resident.s / bk.usable.s, "1",
                     "Whether the model fits at all: its weights as a share of the usable memory of one GPU (above 1 it does not fit at this GPU count).",
                     latex=r"W_{\mathrm{res}}/M_{\mathrm{use}}", title="Weights' share of the usable memory")
weights_share_2 = at("weights_share_new", weights_share, NEW, "The same on the second chip.", latex=r"(W_{\mathrm{res}}/M_{\mathrm{use}})'",
                     title="Weights' share on the second chip")
gpus_min = solve("gpus_for_weights", bk.weights_resident, bk.usable, gl.n_tp, "1",
                 "The tensor-parallel degree at which the weights alone fill the usable memory: below it the model does not fit at all, "
                 "and just above it almost nothing is left for the cache.",
                 latex=r"n_{\mathrm{TP,min}}", title="GPUs the weights need")
gpus_min_2 = at("gpus_for_weights_new", gpus_min, NEW, "The same on the second chip.", latex=r"n_{\mathrm{TP,min}}'",
                title="GPUs the weights need on the second chip")
b_max_2 = at("B_max_kv_new", bk.b_max, NEW, "The largest batch whose cache fits on the second chip, at the same GPU count and context.",
             latex=r"B_{\max}'", title="Largest batch on the second chip",
             none="the weights alone fill the second chip's usable memory at this GPU count, or leave no room for one sequence's cache at this context")
capacity_ratio = Step("capacity_ratio", gl.SECOND_CHIP[gl.C_mem] / gl.C_mem, "1",
                      "The datasheet capacity ratio: what the lazy answer would multiply the batch by.", latex=r"C_{\mathrm{HBM}}'/C_{\mathrm{HBM}}",
                      title="Capacity ratio")
batch_ratio = Step("batch_ratio", b_max_2.s / bk.b_max.s, "1",
                   r"More room for the cache means a bigger batch: $(f_{\mathrm{use}} \sym{C_mem_2} - W_{\mathrm{res}})/(f_{\mathrm{use}} \sym{C_mem} - W_{\mathrm{res}})$ "
                   "before rounding, more than the capacity ratio whenever the weights take a share of the memory.",
                   latex=r"B_{\max}'/B_{\max}", title="Batch ratio")
thr_fit_2 = at("throughput_at_capacity_new", bk.throughput_fit, NEW,
               "The second chip's throughput at its own largest batch.", latex=r"\Theta(B_{\max})'", title="Throughput at capacity on the second chip",
               none="the weights alone fill the second chip's usable memory at this GPU count, or leave no room for one sequence's cache at this context")
speedup_capacity = Step("speedup_capacity", thr_fit_2.s / bk.throughput_fit.s, "1",
                        "A server limited by its KV cache runs each chip at the largest batch it fits: the speedup is the ratio of those throughputs, "
                        "the batch ratio times the ratio of step times at the two batches.",
                        latex=r"\sigma_{\mathrm{cap}}", title="Speedup when capacity-bound")
capacity_over_bandwidth = Step("capacity_over_bandwidth", speedup_capacity.s / speedup_memory.s, "1",
                               "Above 1 the capacity is worth more than the bandwidth: the weights' share of the old chip, amortised over a bigger batch.",
                               latex=r"\sigma_{\mathrm{cap}}/\sigma_{\mathrm{mem}}", title="Capacity gain over the bandwidth gain")

speedup_capacity_cf = Step("speedup_capacity_closed", sp.Piecewise(((NEW[gl.beta] / gl.beta) * (1 - weights_share_2.s) / (1 - weights_share.s),
                                                                   weights_share.s < 1), (sp.nan, True)), "1",
                           r"The capacity speedup in closed form. At its largest batch a memory-bound step reads nearly all it holds, the usable "
                           r"memory $u C$, so it takes $u C/(\eta_{\mathrm{bw}} \beta)$ and the throughput is $B_{\max} \eta_{\mathrm{bw}} \beta / (u C)$. "
                           r"With $B_{\max} \propto u C (1 - W/(N u C))$, the ratio is the bandwidth ratio times "
                           r"$(1 - W/(N u C'))/(1 - W/(N u C))$: above it whenever the weights take a share, and falling to it as $N$ grows.",
                           latex=r"\sigma_{\mathrm{cap}}^{\mathrm{cf}}", title="Capacity speedup in closed form",
                           none="the weights alone fill the old chip's usable memory at this GPU count: there is no largest batch to compare")
t_full = Step("t_memory_full", bk.usable.s / (gl.eta_bw * gl.beta), "s",
              r"The invariant behind it: a memory-bound step at the largest batch reads the usable memory once, whatever the context "
              r"(a long context fits fewer sequences, each reading more).",
              latex=r"u C/(\eta_{\mathrm{bw}} \beta)", title="Memory time of a step with the memory full")
t_mem_fit = at("t_memory_at_capacity", sm.t_memory, {gl.B: bk.b_fit.s},
               "The step model's memory time at the largest batch that fits (before rounding): the usable memory's time, less the "
               "resident bytes a step does not read (the embedding beyond one row per token).",
               latex=r"t_{\mathrm{mem}}(B_{\mathrm{fit}})", title="Memory time at the largest batch")
energy_ratio = Step("energy_per_token_gain", speedup_capacity.s * gl.P_tdp / NEW[gl.P_tdp], "1",
                    r"Energy per token at capacity is the boards' power over the throughput, $N P_{\mathrm{TDP}}/\Theta(B_{\max})$: it improves "
                    r"by the capacity speedup times the ratio of board powers, the same ratio where the two chips draw the same power.",
                    latex=r"e/e'", title="Energy per token gain when capacity-bound")

# --- a vendor's figure in its own regime: offline serving, every request prefilled then decoded (issue 26) -------------
n_out = S.add("n_out", "token", r"n_{\mathrm{out}}", "tokens each request generates after its prompt (an offline benchmark's output length)")
b_new = S.add("B_new", "1", r"B'", "sequences the second chip runs together in the offline comparison (a benchmark's batch on the new chip)")
OUTPUT_LEN = Input("offline_output_len", n_out, "128 token", "token", "tokens each request generates after its prompt, offline", "count")
BATCH_NEW = Input("batch_new", b_new, "1", "1", "sequences the second chip runs together in the offline comparison (a benchmark's batch there)", "count")
t_prefill = at("t_prefill_request", sm.t_step, {gl.B: sp.Integer(1), gl.q: gl.S, gl.T: gl.S / 2},
               r"One request's prompt as one step of $S$ tokens through the shared step model, its attention over half the prompt on "
               "average (causal): compute-bound for any prompt of a few hundred tokens.",
               latex=r"t_{\mathrm{pre}}", title="Prefill of one request")
t_dec_off = at("t_decode_offline", sm.t_step, {gl.T: gl.S + n_out / 2},
               r"A decode step of the batch at the mean context while it generates, $S + n_{\mathrm{out}}/2$.",
               latex=r"t_{\mathrm{dec}}", title="Decode step, offline")
thr_off = Step("throughput_offline", gl.B * n_out / (gl.B * t_prefill.s + n_out / gl.u_token * t_dec_off.s), "token/s",
               r"Offline throughput: a batch of $B$ requests is prefilled one after another, then decoded together to $n_{\mathrm{out}}$ tokens "
               "each; output tokens over the whole time, as an offline benchmark counts them.",
               latex=r"\Theta_{\mathrm{off}}", title="Offline throughput")
thr_off_2 = at("throughput_offline_new", thr_off, {**NEW, gl.B: b_new},
               r"The same on the second chip at its own batch $B'$.", latex=r"\Theta_{\mathrm{off}}'", title="Offline throughput, second chip")
speedup_off = Step("speedup_offline", thr_off_2.s / thr_off.s, "1",
                   "What an offline benchmark reports as the upgrade: both chips at their batches, prefill included.",
                   latex=r"\sigma_{\mathrm{off}}", title="Offline speedup")
#: NVIDIA's H200 launch figure, in its own setup (TensorRT-LLM docs/source/blogs/H200launch.md, v0.5.0: "Max Throughput TP1", footnote
#: "Llama-70B: H100 FP8 BS 8, H200 FP8 BS 32"): Llama 2 70B in FP8, one GPU, 2,048 tokens in and 128 out
VENDOR = Row("2,048 in, 128 out, batch 8 on the H100 and 32 on the H200",
             model="llama-2-70b", weights="fp8", kv="fp8", hardware="h100-sxm", second_hardware="h200",
             set={"tp": "1", "prompt_len": "2048 token", "offline_output_len": "128 token", "batch": "8", "batch_new": "32"})

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, *bk.CAPACITY, t_cmp_2, speedup_compute, t_mem_2, speedup_memory, t_step_2, speedup_step,
         weights_share, weights_share_2, gpus_min, gpus_min_2, b_max_2, capacity_ratio, batch_ratio, thr_fit_2, speedup_capacity, capacity_over_bandwidth,
         speedup_capacity_cf, t_full, t_mem_fit, energy_ratio, t_prefill, t_dec_off, thr_off, thr_off_2, speedup_off)

H100, H200 = "h100-sxm", "h200"
MODEL = "llama-3.1-70b"
THREE = ("speedup_compute", "speedup_memory", "speedup_capacity")
UPGRADE = Row("H100 SXM to H200", hardware=H100, second_hardware=H200)

DERIVATION = derivation(
    "hardware-upgrade",
    "Upgrading the accelerator: three speedups, not one",
    "The datasheet ratios are close to each other, so the lazy answer is one speedup for everything. "
    "The answer splits it into three regimes, and the biggest win turns out to come from capacity, not bandwidth.",
    S,
    STEPS,
    ("speedup_compute", "speedup_memory", "speedup_capacity"),
    inputs=(bk.USABLE, OUTPUT_LEN, BATCH_NEW),
    defaults={"tp": "4"},
    second_hardware=H200,
    argument=(
        "t_memory", "t_compute", "B_max_kv", "t_compute_new", "speedup_compute", "t_memory_new", "speedup_memory",
        "B_max_kv_new", "speedup_capacity", "capacity_over_bandwidth", "speedup_capacity_closed", "t_memory_full",
        "energy_per_token_gain",
    ),
    body_tables=(0, 3),
    answer=(
        "The second chip's speedup is {speedup_compute} for compute-bound work and {speedup_memory} for bandwidth-bound work; at this "
        "batch and context the step gains {speedup_step}.",
        "Capacity-bound, its memory holds {B_max_kv_new} instead of {B_max_kv} and serves {speedup_capacity} times the throughput: "
        "{capacity_over_bandwidth} times the bandwidth gain, the biggest win of the three.",
        "In closed form the capacity speedup is the bandwidth ratio times $(1 - W/(N u C'))/(1 - W/(N u C))$, {speedup_capacity_closed} here, "
        "falling to the bandwidth ratio as the GPU count grows: a step with the memory full takes {t_memory_full} whatever the context, "
        "and energy per token improves {energy_per_token_gain} times.",
    ),
    assumptions=(
        r"The same model, number formats and GPU count on both chips; the first chip is the old one, the second chip (primed symbols) the new one. "
        "Every time is the shared step model evaluated on each chip with the same engine profile (achieved fractions and overheads), "
        "each chip's all-reduces by its own scale-up topology.",
        r"Compute-bound and bandwidth-bound speedups compare the same work: the FLOPs or the bytes of the step at this batch and context.",
        "Capacity-bound: a server whose batch is set by its KV cache runs each chip at the largest whole batch whose cache fits beside the weights "
        "in the usable share of the datasheet capacity (decimal bytes, as printed), and the speedup is the ratio of throughputs at those batches.",
        "Tensor parallelism splits the weights over the GPUs and the KV heads while there are more of them than GPUs; the all-reduces run over each chip's link.",
    ),
    takeaways=(
        "Compute-bound work gains {speedup_compute}, bandwidth-bound work {speedup_memory}; at this batch and context the step gains {speedup_step}.",
        "Capacity-bound, the new chip fits {B_max_kv_new} sequences against {B_max_kv} ({batch_ratio} times, against a capacity ratio of {capacity_ratio}) "
        "and serves {speedup_capacity} times the throughput: "
        "{capacity_over_bandwidth} times the bandwidth gain.",
        "The weights take {weights_share} of the old chip's usable memory and {weights_share_new} of the new one's; they need {gpus_for_weights} and {gpus_for_weights_new} GPUs' worth of it.",
        "The capacity win is largest where the weights nearly fill the old chip (few GPUs) and falls towards the bandwidth ratio with more GPUs; "
        "at short contexts the bigger batch turns the GEMMs compute-bound and it gives way to the peak ratio (the tables).",
    ),
    scoring=(
        "Refuses one number: names the three regimes and the datasheet ratio behind each (peak, bandwidth, capacity).",
        "Knows the H200 is the H100's die with more and faster HBM: compute-bound work does not speed up at all.",
        r"Turns capacity into batch: the room left after the weights, $f_{\mathrm{use}} C_{\mathrm{HBM}} - W_{\mathrm{res}}$, over the cache per sequence; "
        "sees that this grows faster than the capacity itself.",
        "Puts the bigger batch back into the step model (weights amortised, cache reads growing) rather than multiplying by the batch ratio.",
        "Says how the answer moves with the GPU count and the context, and checks that the model fits at all on each chip first.",
        r"Writes the capacity speedup in closed form, $(\beta'/\beta)(1 - W/(N u C'))/(1 - W/(N u C))$, and says it falls to the bandwidth ratio with $N$.",
        r"Knows the invariant: at the largest batch a memory-bound step reads the whole usable memory, $u C/\beta$, whatever the context.",
        "Carries the gain to energy: at the same board power, energy per token improves by the same ratio.",
        "Reads a vendor's upgrade figure in the regime it was measured in (offline, prefill included, each chip at its own batch) "
        "before comparing it with a datasheet ratio.",
    ),
    limits=(
        "The closed-form capacity speedup leaves out the engine's host time per sequence, which a full memory multiplies: it tracks the "
        "step model on a few GPUs and overstates it on eight or more, where many more sequences fit.",
        "The same TP degree on both chips; in practice the bigger chip is often run with fewer GPUs, which trades the capacity win for cost.",
        "Achieved fractions of bandwidth and peak are taken equal on both chips; newer HBM and software often reach different fractions.",
        "Throughput at the largest batch ignores latency targets: a server with a per-token deadline may not run the batch that fits.",
        "Power and clocks are the datasheet's; a chip that throttles under load (or a higher TDP variant) moves the compute-bound ratio.",
    ),
    tables=(
        Table("Capacity as a function of the GPU count", tuple(
            Row("", set={"tp": str(n), "context": "8192 token"}) for n in (1, 2, 4, 8, 16)
        ), ("weights_share", "weights_share_new", "B_max_kv", "B_max_kv_new", "speedup_capacity", "speedup_capacity_closed", "speedup_memory")),
        Table("Capacity as a function of the context (sheet GPU count)", tuple(
            Row("", set={"context": f"{t} token"}) for t in (1024, 4096, 8192, 32768, 131072)
        ), ("B_max_kv", "B_max_kv_new", "batch_ratio", "speedup_step", "speedup_capacity", "t_memory_full", "t_memory_at_capacity")),
        Table("Other upgrades (sheet model and GPU count)", (
            Row("H100 SXM to H200", hardware=H100, second_hardware=H200),
            Row("H100 SXM to B200", hardware=H100, second_hardware="b200"),
            Row("A100 SXM 80GB to H100 SXM", hardware="a100-sxm-80gb", second_hardware=H100),
            Row("H100 SXM to MI300X", hardware=H100, second_hardware="mi300x"),
            Row("MI300X to MI325X", hardware="mi300x", second_hardware="mi325x"),
        ), (*THREE, "speedup_step")),
        Table("Other models, H100 SXM to H200", (
            Row("", model="llama-3.1-8b", set={"tp": "1"}),
            Row("", model=MODEL, set={"tp": "2"}),
            Row("", model="mixtral-8x7b", set={"tp": "2"}),
            Row("", model="qwen3-235b-a22b", set={"tp": "8"}),
            Row("", model="deepseek-v3", set={"tp": "8"}),
            Row("", model="deepseek-v3", set={"tp": "16"}),
        ), ("weights_share", "weights_share_new", "B_max_kv", "B_max_kv_new", "speedup_capacity")),
    ),
    claims=(
        Claim("The closed form (bandwidth ratio times the weights' share term) gives the step model's capacity speedup within 10% (four GPUs, context 8,192).",
              "speedup_capacity_closed", "speedup_capacity", rel_tol=0.1,
              where=Row("four GPUs, context 8,192", hardware=H100, second_hardware=H200, set={"tp": "4", "context": "8192 token"})),
        Claim("NVIDIA's H200 launch figure (NVIDIA/TensorRT-LLM docs/source/blogs/H200launch.md, v0.5), in its own regime: offline, "
              "prefill included, Llama 2 70B in FP8 on one GPU, the H200 is 1.9 times the H100.",
              "speedup_offline", "1.9", rel_tol=0.15, where=VENDOR),
        Claim("The same 1.9 read as the bandwidth ratio: the upgrade is faster HBM3e.", "speedup_memory", "1.9",
              rel_tol=0.15, where=VENDOR),
        Claim("H100 SXM to H200: the compute-bound speedup is 1 (the same GH100 compute, the same clocks).", "speedup_compute", "1", rel_tol=1e-12,
              where=UPGRADE),
        Claim("The lazy answer: one speedup for everything, the bandwidth ratio, holds when compute-bound too.", "speedup_compute", "speedup_memory",
              rel_tol=0.05, where=UPGRADE),
        Claim("The lazy answer: the bandwidth ratio also gives the capacity-bound speedup (four GPUs, context 8,192).", "speedup_capacity",
              "speedup_memory", rel_tol=0.05, where=Row("four GPUs, context 8,192", hardware=H100, second_hardware=H200, set={"tp": "4", "context": "8192 token"})),
        Claim("The biggest win comes from capacity, not bandwidth (four GPUs, 8,192-token context).", "speedup_capacity", "speedup_memory",
              rel_tol=0, at_least=True, where=Row("four GPUs, context 8,192", hardware=H100, second_hardware=H200, set={"tp": "4", "context": "8192 token"})),
        Claim("The biggest win comes from capacity, not bandwidth (eight GPUs, 8,192-token context).", "speedup_capacity", "speedup_memory",
              rel_tol=0, at_least=True, where=Row("eight GPUs, context 8,192", hardware=H100, second_hardware=H200, set={"tp": "8", "context": "8192 token"})),
        Claim("The biggest win comes from capacity, not bandwidth (two GPUs: the weights fill most of an H100).", "speedup_capacity", "speedup_memory",
              rel_tol=0, at_least=True, where=Row("two GPUs, context 8,192", hardware=H100, second_hardware=H200, set={"tp": "2", "context": "8192 token"})),
        Claim("The biggest win comes from capacity, not bandwidth (eight GPUs, short 1,024-token chats).", "speedup_capacity", "speedup_memory",
              rel_tol=0, at_least=True, where=Row("eight GPUs, context 1,024", hardware=H100, second_hardware=H200, set={"tp": "8", "context": "1024 token"})),
    ),
    hardware=(H100, "a100-sxm-80gb", "h100-pcie"),
    models=(MODEL, "llama-3.1-8b"),
    plots=(Plot("speedup", "sweep",
                "Speedup of the second chip over the first in each regime against the GPU count: compute-bound work gains the peak ratio, "
                "bandwidth-bound work the bandwidth ratio, capacity-bound serving the throughput ratio at the largest batches that fit.",
                title="At {tp} GPUs the capacity-bound speedup is {speedup_capacity}, against {speedup_memory} bandwidth-bound "
                      "and {speedup_compute} compute-bound",
                x="tp", y=("speedup_compute", "speedup_memory", "speedup_capacity"), span=("1", "16"), vlines=("tp",), log="xy", answer=True,
                labels={"speedup_compute": "compute-bound", "speedup_memory": "bandwidth-bound", "speedup_capacity": "capacity-bound"}),),
    display_units={"weights_share": "%", "weights_share_new": "%", **bk.DERIVATION.display_units, "t_compute_new": "ms", "t_memory_new": "ms", "t_step_new": "ms",
                   "throughput_at_capacity_new": "token/s", "t_memory_full": "ms", "t_memory_at_capacity": "ms"},
)

"""Twenty lines of roofline arithmetic, and where they stop being true.

Takeaway: the shared step model (derivations.physics.stepmodel) is the twenty lines:
the weights a step reads and the batch's KV cache over the achieved bandwidth,
the GEMM and attention FLOPs over the achieved peak, each component at the
slower of the two, two all-reduces per layer under tensor parallelism
(their bytes over the link as a ring's and their latency rounds, one round
where the scale-up domain is switched), and the overheads no byte count shows
(a time per layer and a small time per step). Its efficiency, overheads and
all-reduce latency come from the engine profile (`fitted` to published
measurements of real servers by default, `roofline validate`), and the sheet
shows that fit's error band and the range the eight-GPU records support. Its
worked prediction is for Llama 3.1 70B on eight H100 SXM (the sheet's
defaults). Then each place it breaks, sized from stated inputs as a time it
leaves out (or, for capacity, the memory it leaves out):

- kernel launch gaps, kernels per step times the gap at each boundary;
- prefill mixed into decode steps (each decode token brings S/n_out prompt tokens),
  which turns the GEMMs compute-bound at a batch the model calls memory-bound;
- GEMM tile quantization: rows padded up to whole tiles once compute-bound;
- MoE routing: the step-to-step spread of the experts read (uniform routing's
  variance; real routers are skewed);
- attention at long context below the GEMMs' bandwidth;
- dequantization of weight-only quantized weights (lower achieved bandwidth);
- clocks below the boost clock behind the datasheet peak;
- KV-cache paging waste and the memory the engine reserves.

Each comes with the measurement that catches it before a capacity plan rests on it.
"""

import sympy as sp

from ...specs.measurements import load_measurements
from ..engine.context import Input, fitted
from ..engine.declare import Claim, Plot, Row, Step, Table, at, derivation
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import primitives as pr
from ..physics import stepmodel as sm
from . import batch1_gap as bg
from . import batch_knee as bk

S = Symbols(parent=bk.S)
n_out = S.add("n_out", "token", r"n_{\mathrm{out}}", "tokens each request generates (its decode steps)")
m_tile = S.add("m_tile_gemm", "token", r"m_{\mathrm{tile,GEMM}}", "rows of one dense GEMM tile: the token count a GEMM pads up to")
T_page = S.add("T_page", "token", r"T_{\mathrm{page}}", "tokens per KV-cache page (block)")
f_clk = S.add("f_clk", "1", r"f_{\mathrm{clk}}", "sustained SM clock under load over the boost clock behind the datasheet peak")
e_med = S.add("e_med", "1", r"\epsilon_{\mathrm{med}}", "median absolute error of the step model against the memory-bound decode records of the measurements dataset")
e_worst = S.add("e_worst", "1", r"\epsilon_{\mathrm{max}}", "largest absolute error of the step model against those records")
U8_lo = S.add("U8_lo", "1", r"\mathrm{MBU}_{8,\mathrm{low}}", "lowest implied MBU of the memory-bound decode records on eight GPUs")
U8_hi = S.add("U8_hi", "1", r"\mathrm{MBU}_{8,\mathrm{high}}", "highest implied MBU of the memory-bound decode records on eight GPUs")
eta_q = S.add("eta_q", "1", r"\eta_{q}", "achieved fraction of datasheet bandwidth in weight-only quantized GEMMs (dequantizing as they stream)")

# --- the twenty lines ---

lines = Step("model_lines", sp.Integer(len(sm.DECODE_STEP)), "1",
             "The equations of the shared step model above, counted: tokens, experts, weights, KV cache, bytes, FLOPs, the roofline of each "
             "component, all-reduces, step time and throughput.",
             latex=r"n_{\mathrm{lines}}", title="Lines in the step model")

# --- how far it sits from real servers: the measurements dataset ---

err_med = Step("error_median", e_med, "1",
               "The step model's median absolute error, at the defaults, against the memory-bound decode records of published measurements "
               "that the defaults are fitted to (the validation table below; `roofline validate`).",
               latex=r"\bar{\epsilon}", title="Median error against measurements")
err_worst = Step("error_worst", e_worst, "1", "Its largest absolute error against those records.",
                 latex=r"\epsilon_{\max}", title="Worst error against measurements")
accuracy = Step("accuracy_median", sp.Max(0, 1 - e_med), "1",
                "One less the median error (never below zero): how close the model comes to a measured server at the median of the dataset.",
                latex=r"1 - \bar{\epsilon}", title="Median accuracy against measurements")
band_low = Step("t_step_band_low", sm.t_step.s * sp.Max(0, 1 - e_med), "s",
                "The prediction less the model's median error against published measurements (never below zero): half of the measured "
                "servers sit closer to the model than this band.",
                latex=r"t_{\mathrm{step}}^{-}", title="Error band, low")
band_high = Step("t_step_band_high", sm.t_step.s * (1 + e_med), "s",
                 "The prediction plus that median error.", latex=r"t_{\mathrm{step}}^{+\epsilon}", title="Error band, high")
worst_low = Step("t_step_worst_low", sm.t_step.s * sp.Max(0, 1 - e_worst), "s",
                 "The prediction less the model's largest error against those measurements (never below zero).",
                 latex=r"t_{\mathrm{step}}^{-\max}", title="Worst-case band, low")
worst_high = Step("t_step_worst_high", sm.t_step.s * (1 + e_worst), "s",
                  "The prediction plus that largest error: every memory-bound record sits inside this band.",
                  latex=r"t_{\mathrm{step}}^{+\max}", title="Worst-case band, high")
tp8_fast = Step("t_step_tp8_fast", pr.step_time_at_mbu(sm.bytes_gpu.s, U8_hi), "s",
                "This setup's bytes per GPU at the highest MBU an eight-GPU record of the dataset reached: the fastest step the eight-GPU "
                "measurements support.", latex=r"t_{8}^{-}", title="Fastest step the eight-GPU records support")
tp8_slow = Step("t_step_tp8_slow", pr.step_time_at_mbu(sm.bytes_gpu.s, U8_lo), "s",
                "The same bytes at the lowest MBU an eight-GPU record reached: the slowest step they support.", latex=r"t_{8}^{+}",
                title="Slowest step the eight-GPU records support")
# --- where it breaks: each a time the model leaves out ---
# (The latency of decode's small all-reduces and the overhead per layer were breaks here; the step model now has both:
# t_comm pays its latency rounds per all-reduce and t_overhead a time per layer, each from the engine profile.)

kernels = Step("kernels_per_step", pr.kernels_per_step(), "1",
               "The kernels one step launches: the same per layer, a few more outside the layers.", latex=r"n_{\mathrm{k}}",
               title="Kernels per step")
b_launch = Step("break_launch_gaps", pr.launch_gap_time(kernels.s), "s",
                r"The model has an overhead per layer for launches and host work, fitted to an engine's average; every kernel boundary "
                "of a given server also leaves the GPU idle. "
                "Catch it: the white space between kernels in a trace of one step, with and without CUDA graphs.",
                latex=r"\Delta t_{\mathrm{launch}}", title="Kernel launch gaps")
t_gemm_mixed = at("t_gemm_prefill_mix", sm.t_gemm, {gl.q: gl.q * (1 + gl.S / n_out)},
                  r"The weight GEMMs when each decode token brings $S/n_{\mathrm{out}}$ prompt tokens with it: in steady state every request "
                  "prefills its prompt once over its decode steps, and chunked prefill puts those tokens into the same steps. More tokens "
                  "touch more experts, too.",
                  latex=r"t_{\mathrm{gemm,mix}}", title="Weight GEMMs with prefill mixed in")
b_prefill = Step("break_prefill_mix", t_gemm_mixed.s - sm.t_gemm.s, "s",
                 "A decode-only model misses the prompt tokens: nothing while the GEMMs stay memory-bound, their whole arithmetic once "
                 "the mix pushes them past the ridge. Catch it: replay the production prompt and output lengths, not a decode-only "
                 "benchmark, and log the tokens scheduled per step.",
                 latex=r"\Delta t_{\mathrm{mix}}", title="Prefill mixed into decode steps")
flops_tiled = Step("flops_gemm_tiled", sm.flops_gemm.s * pr.tiled_tokens(gl.B * gl.q, m_tile) / (gl.B * gl.q), "flop",
                   "The GEMM FLOPs with the step's token rows padded up to whole tiles: the tensor cores compute the padding too.",
                   latex=r"F_{\mathrm{gemm,tile}}", title="GEMM FLOPs with whole tiles")
b_tile = Step("break_tile_quantization", sp.Max(0, pr.roofline_component_time(flops_tiled.s, sm.weights_gpu.s) - sm.t_gemm.s), "s",
              "Zero while the GEMMs are memory-bound; once compute-bound, a batch one token past a tile boundary pays a whole tile. "
              "Wave quantization (tiles over SMs) adds a second staircase. Catch it: sweep the batch one sequence at a time and look for steps.",
              latex=r"\Delta t_{\mathrm{tile}}", title="GEMM tile quantization")
experts_2 = Step("experts_for_spread", sp.Max(gl.E, 2), "1",
                 r"The routed experts per layer, read as at least 2: the variance below needs two experts to compare, and a dense model "
                 r"($E = 1$) then gets a finite variance that its zero MoE layers multiply away.",
                 latex=r"E_{\ge 2}", title="Experts per layer, at least two")
variance = Step("experts_touched_variance", pr.experts_touched_variance(sm.tokens.s, experts_2.s), "1",
                r"Uniform routing reads $\sym{experts_touched}$ experts per MoE layer on average; the count varies from step to step "
                r"(@moe-experts derives the variance: $E p_{0} + E (E - 1) p_{00} - E^{2} p_{0}^{2}$ with $p_{0}$ the chance one expert is missed "
                r"by every token, $p_{00}$ two). Zero at one token, which always reads its top-$k$.",
                latex=r"\sigma^{2}_{E}", title="Variance of the experts one layer reads")
spread = Step("experts_spread", sp.sqrt(gl.L_moe * variance.s), "1",
              r"Layers route independently, so a step's variance over its $L_{\mathrm{MoE}}$ layers is their sum; zero for a dense model.",
              latex=r"\sigma_{E}", title="Spread of the experts a step reads")
b_moe = Step("break_moe_spread", spread.s * gl.P_exp * gl.b_e / (gl.n_tp * gl.eta_bw * gl.beta), "s",
             "One standard deviation of expert bytes per step: the jitter a mean-only model hides. Real routers are skewed, which reads fewer "
             "experts but loads the GPUs that hold the hot ones under expert parallelism. Catch it: log each layer's router histogram per step "
             "and compare the step time's p99 with its median.",
             latex=r"\Delta t_{\mathrm{MoE}}", title="MoE routing spread")
b_att = Step("break_attention_long_context", sp.Max(0, pr.roofline_component_time(sm.flops_attn.s, sm.kv_step.s, eta_bw=sp.Min(gl.eta_att, gl.eta_bw))
             - sm.t_attn.s), "s",
             "The model streams the KV cache at the GEMMs' bandwidth; a decode attention kernel with few KV heads per GPU reaches less, "
             "and its share grows with the context. Catch it: the attention kernel's time against its KV bytes in a trace, swept from 1K "
             "to the longest context served.",
             latex=r"\Delta t_{\mathrm{att}}", title="Attention at long context")
weight_only = Step("weight_only_quantized", sp.ceiling(sp.Max(0, 1 - gl.b_w * gl.u_param / (gl.b_a * gl.u_token))), "1",
                   "1 when the weights are stored narrower than the math runs (weight-only quantization dequantizes every weight it streams), "
                   "0 otherwise.",
                   latex=r"\delta_{\mathrm{wo}}", title="Weight-only quantized")
b_dq = Step("break_dequantization", weight_only.s * sp.Max(0, pr.roofline_component_time(sm.flops_gemm.s, sm.weights_gpu.s, eta_bw=sp.Min(eta_q, gl.eta_bw))
                                                            - sm.t_gemm.s), "s",
            "Weight-only quantized GEMMs unpack and scale every weight before the tensor cores see it, so they stream below the bandwidth "
            "a plain GEMM reaches. Catch it: benchmark the quantized GEMM against the unquantized one at each batch you serve (@int4-flip).",
            latex=r"\Delta t_{\mathrm{dq}}", title="Dequantization")
t_gemm_clk = at("t_gemm_clock", sm.t_gemm, {gl.eta_flops: gl.eta_flops * f_clk},
                "The weight GEMMs with the tensor cores at the sustained clock.", latex=r"t_{\mathrm{gemm,clk}}", title="Weight GEMMs at the sustained clock")
t_attn_clk = at("t_attention_clock", sm.t_attn, {gl.eta_flops: gl.eta_flops * f_clk},
                "Attention with the tensor cores at the sustained clock.", latex=r"t_{\mathrm{att,clk}}", title="Attention at the sustained clock")
b_clk = Step("break_clocks", sp.Max(0, t_gemm_clk.s + t_attn_clk.s - sm.t_gemm.s - sm.t_attn.s), "s",
             "The datasheet peak is at the boost clock; under a power cap the clock sags and every compute-bound component slows with it, "
             "while memory-bound ones do not move (a lower clock never speeds a step, so rounding cannot make this negative)."
             " Catch it: log the SM clock and board power under the real load (nvidia-smi, DCGM).",
             latex=r"\Delta t_{\mathrm{clk}}", title="Clocks below boost")

BREAKS = (b_launch, b_prefill, b_tile, b_moe, b_att, b_dq, b_clk)
t_breaks = Step("t_breaks", sp.Add(*(b.s for b in BREAKS)), "s", "Every break sized above, added to the prediction.",
                latex=r"\Delta t_{\mathrm{breaks}}", title="What the breaks add")
t_broken = Step("t_step_with_breaks", sm.t_step.s + t_breaks.s, "s",
                "The prediction plus its breaks at the stated inputs: what a capacity plan should check against a measurement.",
                latex=r"t_{\mathrm{step}}^{+}", title="Step time with the breaks")
share_model = Step("share_modelled", sm.t_step.s / t_broken.s, "1",
                   "How much of the step the twenty lines capture at these inputs.", latex=r"t_{\mathrm{step}}/t_{\mathrm{step}}^{+}",
                   title="Share the model captures")
largest = Step("largest_break", pr.best_of([b.s for b in BREAKS], tuple(range(1, len(BREAKS) + 1))), "1",
               "The number of the largest break in the order of this sheet (1 launch gaps, 2 prefill mix, 3 tiles, 4 MoE spread, "
               "5 attention, 6 dequantization, 7 clocks): the first to measure.",
               latex=r"j^{*}", title="Largest break")

# --- capacity: the memory the model leaves out ---

kv_waste = Step("kv_page_waste", gl.B * T_page / 2 * sm.kv_tok_gpu.s, "B",
                r"A paged cache fills each sequence's last page half-way on average: $T_{\mathrm{page}}/2$ tokens of cache per sequence "
                "that no token uses.",
                latex=r"M_{\mathrm{page}}", title="KV-cache paging waste per GPU")
fraction_usable = Step("memory_fraction_usable", (sm.memory_gpu.s + kv_waste.s) / bk.usable.s, "1",
                       r"The model's memory against what the engine lets the cache fill: a share $\sym{f_use}$ of HBM (activations, CUDA graphs, "
                       "communication buffers and fragments take the rest), with the paging waste. Above 1 the planned batch does not fit. "
                       "Catch it: the engine's count of KV blocks at start-up against the batch and context the plan assumes.",
                       latex=r"M^{+}/M_{\mathrm{use}}", title="Share of usable memory, with paging")

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, lines, err_med, err_worst, accuracy, band_low, band_high, worst_low, worst_high, tp8_fast, tp8_slow, ms.t_measured, ms.error, kernels, b_launch, t_gemm_mixed, b_prefill, flops_tiled, b_tile, experts_2, variance, spread, b_moe, b_att,
         weight_only, b_dq, t_gemm_clk, t_attn_clk, b_clk, t_breaks, t_broken, share_model, largest, bk.usable, kv_waste, fraction_usable)

_RECORDS = {m.id: m for m in load_measurements()}


#: the worked setup: Llama 3.1 70B on eight H100 SXM at batch 1 (the sheet's defaults)
WORKED = ("llama-3.1-70b", "h100-sxm", 8, 1)


def _record_at_worked_setup() -> str:
    """The fitted record nearest the worked setup: the same model, TP degree and batch, on the same chip where the dataset has one
    (it has none of eight H100s: then on another chip)."""
    model, hardware, tp, batch = WORKED
    same = [rid for rid in fitted().records
            if _RECORDS[rid].model.key == model and _RECORDS[rid].tp == tp and _RECORDS[rid].batch == batch]
    on_chip = [rid for rid in same if _RECORDS[rid].hardware.key == hardware]
    return (on_chip or same)[0]


NEAREST = _record_at_worked_setup()

VALIDATION = Table("Against published measurements: the memory-bound decode records the defaults are fitted to",
                   tuple(ms.record_row(_RECORDS[rid]) for rid in fitted().records),
                   ("t_comm", "t_step", "t_measured", "prediction_error"),
                   note="Each row is a record of specs/measurements/ at its own chip, model, precisions, batch, mean context (prompt plus half "
                        "the output) and TP degree, predicted at this sheet's defaults; compute-bound and prefill-heavy records are left out "
                        "(`roofline validate` lists them). A row's inputs other than these are this setup's: set a break's input and "
                        "the prediction does not move, since breaks are outside it.")

#: Tables in reading order; the validation table is last.
TABLES: tuple[Table, ...] = (
    Table("The prediction and its breaks as the batch grows (sheet's model and chip)", tuple(
        Row("", set={"batch": str(b), "context": f"{t} token"}) for b, t in ((1, 8192), (16, 8192), (64, 8192), (300, 2048))
    ), ("t_step", "t_comm", "break_launch_gaps", "break_prefill_mix", "break_tile_quantization", "t_step_with_breaks"),
        note="The all-reduces (in the model, latency included) and the launch gaps are fixed costs that matter most at batch 1; the prefill mix arrives once it pushes the GEMMs past the ridge, "
             "and tiles only once decode alone does (the last row, at a context short enough for its cache to fit)."),
    Table("Across models, hardware and formats", (
        Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "8"}),
        Row("", model="llama-3.1-8b", hardware="h100-sxm", set={"tp": "1"}),
        Row("", model="mixtral-8x7b", hardware="h100-sxm", set={"tp": "2", "batch": "16"}),
        Row("", model="deepseek-v3", hardware="h200", weights="fp8", set={"tp": "8", "batch": "16"}),
        sm.LAYOUT_ROWS[-1],
        Row("", model="qwen3-235b-a22b", hardware="h100-sxm", set={"tp": "8", "batch": "16"}),
        Row("", model="llama-3.1-70b", hardware="h100-sxm", weights="int4-g128", set={"tp": "2", "batch": "16"}),
    ), ("t_step", "break_moe_spread", "break_attention_long_context", "break_dequantization", "t_step_with_breaks", "share_modelled"),
        note="Batch 16 for the MoE rows (the spread is zero at one token); DeepSeek-V3 runs its native FP8 weights, on eight H200s by tensor "
             "parallelism and on 128 H800s as DeepSeek serves it (EP128 with data-parallel attention, 128 sequences per GPU); the last row is Llama 3.1 70B "
             "in INT4 with BF16 scales per 128 weights on two GPUs, where dequantization applies."),
    Table("Long context and the memory the plan leaves out (sheet's model and chip)", tuple(
        Row("", set={"batch": str(b), "context": f"{t} token"}) for b, t in ((16, 8192), (64, 8192), (16, 131072), (8, 131072))
    ), ("t_step", "break_attention_long_context", "memory_fraction", "kv_page_waste", "memory_fraction_usable")),
    VALIDATION,
)

DERIVATION = derivation(
    "model-limits",
    "The twenty-line step model and where it breaks",
    "Twenty lines of roofline arithmetic get within striking distance of a real server, and the interviewer knows it. What they are "
    "scoring is the list of places the model breaks, and how you would catch each one before a capacity plan rests on it.",
    S,
    STEPS,
    ("t_step",),
    inputs=(
        bk.USABLE, bg.KERNELS_LAYER, bg.KERNELS_OTHER, bg.LAUNCH_GAP, bg.ETA_ATT,
        Input("mix_output_len", n_out, "512 token", "token", "tokens each request generates; with the prompt length it sets the prefill tokens per decode token",
              "count"),
        Input("tile_tokens", m_tile, "64 token", "token", "rows of one GEMM tile (64 or 128 for H100 GEMM kernels)", "count"),
        Input("page_tokens", T_page, "16 token", "token", "tokens per KV-cache page (vLLM's default block size is 16)", "count"),
        Input("clock_fraction", f_clk, "0.9", "1", "sustained SM clock under load over the boost clock of the datasheet peak", "fraction"),
        ms.MEASURED_STEP,
        Input("validation_median_error", e_med, fitted().summary["median_error"], "1",
              f"median absolute error of the step model at these defaults against the {len(fitted().records)} memory-bound decode records "
              "of published measurements (`roofline validate`)", "nonnegative"),
        Input("validation_worst_error", e_worst, fitted().summary["worst_error"], "1",
              "largest absolute error of the step model at these defaults against those records (`roofline validate`)", "nonnegative"),
        Input("measured_tp8_mbu_low", U8_lo, fitted().summary["tp8_mbu_low"], "1",
              "lowest implied MBU of the memory-bound decode records on eight GPUs (`roofline validate`)", "fraction"),
        Input("measured_tp8_mbu_high", U8_hi, fitted().summary["tp8_mbu_high"], "1",
              "highest implied MBU of the memory-bound decode records on eight GPUs (`roofline validate`)", "fraction"),
        Input("eta_bw_quant", eta_q, "0.6", "1",
              "achieved fraction of datasheet bandwidth in weight-only quantized GEMMs (used only when the weights are narrower than the math)",
              "fraction"),
    ),
    defaults={"tp": "8", "launch_gap": "0.5 us"},
    argument=(
        "weight_bytes_gpu", "kv_bytes_step", "bytes_per_gpu", "t_gemm", "t_attention", "t_comm", "t_step", "error_median",
        "t_step_band_low", "t_step_band_high", "break_launch_gaps", "t_breaks", "t_step_with_breaks", "largest_break",
    ),
    body_tables=(1,),
    answer=(
        "The twenty-line model predicts {t_step} per step ({throughput}) for this setup.",
        "Against published measurements its median error is {error_median}, so the step is {t_step_band_low} to "
        "{t_step_band_high}; the breaks it leaves out add {t_breaks} here, and the largest of them, break {largest_break} of the "
        "seven sized below, is the first to measure.",
    ),
    assumptions=(
        "The twenty lines are the shared step model (@decode-floor): per component the slower of its bytes at the achieved bandwidth and its "
        r"FLOPs at the achieved peak, summed; two all-reduces per layer, each its bytes over the link plus $\sym{allreduce_rounds}$ rounds of "
        r"latency $\sym{t_ar}$; the overheads no byte count shows, $\sym{t_layer}$ per layer and $\sym{t_fixed}$ per step. The worked prediction "
        "is its value at this setup's inputs: Llama 3.1 70B on eight H100 SXM by default.",
        r"The achieved bandwidth $\sym{eta_bw}$, the overheads and the all-reduce latency come from the engine profile printed with the specs, "
        "by default fitted to published measurements of real servers (specs/measurements, `roofline validate`): against the memory-bound "
        "decode records the default profile's median error is {error_median} and its worst {error_worst} (the validation table below), so the "
        "worked prediction's band is {t_step_band_low} to {t_step_band_high}, and {t_step_worst_low} to {t_step_worst_high} at the worst error.",
        "The eight-GPU records of the dataset reach an implied MBU of {measured_tp8_mbu_low} to {measured_tp8_mbu_high}: at those MBUs this "
        "setup's bytes take {t_step_tp8_fast} to {t_step_tp8_slow}, the range the eight-GPU measurements support for the worked prediction "
        "(the claims check it).",
        "Each break is sized alone from the inputs printed above, as the time it adds to the prediction (zero where it does not apply), "
        "and the breaks are added; real effects overlap, so their sum is a bound, not a forecast.",
        r"The overheads $\sym{t_layer}$ and $\sym{t_fixed}$ are fitted, so they hold the measured servers' average host work, launch gaps and "
        "small kernels; the breaks below are what a given server adds beyond that average, each sized from its own inputs (launch gaps as a "
        "production engine's CUDA graphs leave them, half a microsecond by default), so the fitted overheads and the breaks overlap and their "
        "sum errs long.",
        r"The prefill mix is the steady state of a server whose requests bring $S$ prompt tokens and generate $n_{\mathrm{out}}$: "
        r"$S/n_{\mathrm{out}}$ prompt tokens per decode token, scheduled into the same steps (chunked prefill); prefill attention is left out.",
        "MoE spread is uniform routing's: the variance of the distinct experts read, summed over independent layers (@moe-experts).",
    ),
    takeaways=(
        "The worked prediction: {t_step} per step ({throughput}), from {model_lines} lines: weight GEMMs {t_gemm}, attention {t_attention}, "
        "all-reduces {t_comm} (bytes and latency), and the overheads {t_overhead}.",
        "Against published measurements of real servers the model at these defaults has a median error of {error_median} "
        "(worst {error_worst}): the worked prediction is {t_step_band_low} to {t_step_band_high} within the median error. The eight-GPU "
        "records' implied MBU puts this setup at {t_step_tp8_fast} to {t_step_tp8_slow}.",
        "Its breaks at the stated inputs: launch gaps {break_launch_gaps} over "
        "{kernels_per_step} kernels, prefill mix {break_prefill_mix}, tiles {break_tile_quantization}, MoE spread {break_moe_spread}, "
        "attention {break_attention_long_context}, dequantization {break_dequantization}, clocks {break_clocks}.",
        "With them the step is {t_step_with_breaks}: the twenty lines capture {share_modelled} of it, and the largest break is number "
        "{largest_break}, the first to measure.",
        "Capacity: the model needs {memory_fraction} of HBM; against the memory the engine lets the cache use, with paging, "
        "{memory_fraction_usable}.",
    ),
    scoring=(
        "Writes the step model from bytes and FLOPs in a few lines and gets a number for a named setup before listing caveats.",
        "Names the breaks in order of size at the setup in question, not as a generic list.",
        "Knows the TP all-reduce at decode is latency-bound: message size is a few kilobytes, so bandwidth figures do not apply, and "
        "puts the latency in the model rather than in a caveat.",
        "Knows how far the model sits from measured servers (its error against published measurements) and quotes the band with the number.",
        "Knows a decode-only model misses the prefill that shares the same steps, and that it turns the GEMMs compute-bound early.",
        "For MoE, knows the expected experts are a mean and asks for the spread and the skew.",
        "Gives a measurement for each break (a trace, nccl-tests, a batch sweep, a router histogram, clock logs, the KV block count) "
        "and runs them before the capacity plan, not after.",
    ),
    limits=(
        "The breaks are sized one at a time and added; interactions (a slower clock with a compute-bound prefill mix) are not modelled.",
        "Speculative decoding, prefix caching and sliding-window attention change the bytes per token; see @speculative-decoding for the first.",
        r"The all-reduce latency law follows the chip's scale-up topology: one round where it is switched or fully meshed (a one-shot "
        "all-reduce), NCCL's ring over PCIe. An engine that fuses the all-reduce with the norm or overlaps it with a GEMM pays less; one that "
        "falls back to NCCL's ring on a switched domain pays more. Catch it: time the all-reduce kernels of one decode step in a trace, or run "
        "nccl-tests at the step's message size on the same GPUs.",
        "The error band is the dataset's: a few engines (their overheads per layer differ several times over, hence the per-engine profiles), "
        "A100, H100 and H200, eight GPUs only on A100; compute-bound and prefill-heavy records sit further off, and so do static batches whose "
        "step grows with the batch faster than their bytes (`roofline validate`, which also predicts each source from the others).",
        "Network, storage and the host's own limits (tokenization, the API server) are outside a GPU step model.",
        "The breaks' default inputs are typical values, not measurements: each break is only as good as the number given for it.",
    ),
    tables=TABLES,
    claims=(
        Claim("The step model is about twenty lines (within 20%).", "model_lines", "20", rel_tol=0.2),
        Claim("The twenty lines get within striking distance of a real server, read as within 30% of the measured step at the dataset's "
              "record nearest the worked setup (Llama 3.1 70B, eight GPUs, batch 1: on A100s, the dataset has no eight-H100 record).",
              "t_step", "t_measured", rel_tol=0.3, where=ms.record_row(_RECORDS[NEAREST])),
        Claim("Across the published measurements they sit within striking distance too: at the median error, read as at least 70% "
              "accurate.", "accuracy_median", "0.7", rel_tol=0.0, at_least=True),
        Claim("The worked prediction is no faster than the fastest step the eight-GPU records support.", "t_step", "t_step_tp8_fast",
              rel_tol=0, at_least=True),
        Claim("It is no slower than the slowest step they support.", "t_step_tp8_slow", "t_step", rel_tol=0, at_least=True),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-70b", "llama-3.1-8b"),
    plots=(Plot("step", "stack",
                "Where the step goes on each setup: the twenty lines (weight GEMMs, attention, all-reduces, the overheads), then each "
                "break sized at the stated inputs, hatched.",
                title="The twenty lines predict {t_step} here; the breaks add {t_breaks}, so the model captures {share_modelled} of the step",
                y=("t_step", "t_breaks"), split=("t_step", "t_breaks"), table=1, answer=True,
                labels={"t_step": "the twenty lines", "t_breaks": "the breaks", "t_gemm": "weight GEMMs", "t_attention": "attention",
                        "t_comm": "all-reduces", "t_overhead": "overheads", "break_launch_gaps": "launch gaps", "break_prefill_mix": "prefill mix",
                        "break_tile_quantization": "tiles", "break_moe_spread": "MoE spread", "break_attention_long_context": "long-context attention",
                        "break_dequantization": "dequantization", "break_clocks": "clocks"}),
           Plot("validation", "scatter",
                "The step model at the defaults against each memory-bound decode record of the published measurements: predicted "
                "against measured, the marker by engine, the colour by tensor-parallel degree, the dashed lines the median error.",
                title="Predicted against measured on published servers: a median error of {error_median}, the worst {error_worst}",
                x="t_measured", y=("t_step",), hlines=("error_median",), table=3, group="tp",
                labels={"t_measured": "measured step", "t_step": "predicted step", "error_median": "median error"})),
    display_units={**bk.DERIVATION.display_units, **{b.name: "ms" for b in BREAKS}, "t_gemm_prefill_mix": "ms", "t_gemm_clock": "ms",
                   "t_attention_clock": "ms", "t_breaks": "ms", "t_step_with_breaks": "ms", "share_modelled": "%", "prediction_error": "%", "error_median": "%", "error_worst": "%", "accuracy_median": "%", "t_step_band_low": "ms", "t_step_band_high": "ms", "t_step_worst_low": "ms",
                   "t_step_worst_high": "ms", "t_step_tp8_fast": "ms", "t_step_tp8_slow": "ms", "t_measured": "ms", "t_step_measured": "ms", "kv_page_waste": "GB",
                   "flops_gemm_tiled": "Tflop", "memory_fraction": "%", "memory_fraction_usable": "%"},
)

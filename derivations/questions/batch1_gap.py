"""A decode step at batch 1 runs 2.5x its floor: where do the milliseconds go?

Takeaway: the floor is the bytes one GPU must stream per step (weights plus the
KV cache at the context) over the datasheet bandwidth; the observed step is a
measured time (--set t_step_measured=11.3ms), or where none is given a stated multiple
of it (default 2.5x), and the gap is their difference; the ratio is derived from
the time. The suspects are sorted by what one profiler trace of a step shows:

- white space between kernels: launch gaps (kernels x gap) and host work per step;
- kernels slower than their bytes: weight GEMVs and attention below the datasheet
  bandwidth, and small kernels (norms, rotary, activations) that move almost no
  bytes but cost a few microseconds each;
- extra or wrong kernels: weights read at a wider width than intended (an FP32
  copy of a BF16 matrix), and the tensor-parallel all-reduces (the step
  model's: their bytes and the small-message latency of each round);
- invisible in the timeline: time the client counts outside the engine's steps,
  and whatever the stated suspects leave unexplained.

Each has a formula and a millisecond figure from stated inputs; the suspects
plus the remainder add up to the gap exactly (an overshoot is printed when the
stated inputs predict more than was observed). At the default inputs a slow
GPU, the streaming kernels' bandwidth, is a small share: a slow GPU alone would
need the streaming kernels at 1/2.5 = 40% of the datasheet. The bytes come from
the shared step model (derivations.physics.stepmodel).
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, at, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)
rho_obs = S.add("rho_obs", "1", r"\rho_{\mathrm{obs}}", "observed step time over the floor (the measured ratio)")
t_host = S.add("t_host", "s", r"t_{\mathrm{host}}", "host work per step the GPU waits for: scheduling, sampling, detokenizing, Python")
n_small = S.add("n_small", "1", r"n_{\mathrm{small}}", "small kernels per layer that move almost no bytes (norms, rotary, activations, cache writes)")
t_small = S.add("t_small", "s", r"t_{\mathrm{small}}", "time of one small kernel in the trace (a few microseconds however few bytes it moves)")
f_wide = S.add("f_wide", "1", r"f_{\mathrm{wide}}", "share of the weight bytes read at a wider width than intended")
rho_w = S.add("rho_w", "1", r"\rho_{w}", "read width over intended width of those weights (2 for FP32 read in place of BF16)")
t_out = S.add("t_out", "s", r"t_{\mathrm{out}}", "time per step the client counts outside the engine's steps (API server, streaming, network)")


GAP_RATIO = Input("gap_ratio", rho_obs, "2.5", "1",
                  "measured step time over the floor printed on this sheet (the teaser's 2.5x), used where no measured time is given"
                  "; at least 1: below it the GPU would stream faster than its datasheet bandwidth, so the bytes or the "
                  "measurement are wrong", "at_least_one")
#: Inputs model-limits shares: kernel counts, the launch gap, all-reduce latency and the attention kernel's bandwidth.
KERNELS_LAYER = Input("kernels_per_layer", gl.n_kl, "12", "1",
                      "kernels per layer per step in the trace: about 10 for a fused engine (GEMMs, attention, norms, activation, cache write), "
                      "2 more all-reduces under tensor parallelism, 20 to 30 unfused", "count")
KERNELS_OTHER = Input("kernels_other", gl.n_k0, "8", "1", "kernels per step outside the layers: embedding, final norm, LM head, sampling", "whole")
LAUNCH_GAP = Input("launch_gap", gl.t_launch, "2 us", "s",
                   "idle time at each kernel boundary in the trace: about 1 to 3 microseconds launched from the host, under 1 in a CUDA graph",
                   "nonnegative")
ETA_ATT = Input("eta_attention", gl.eta_att, "0.5", "1",
                "achieved fraction of datasheet bandwidth in the decode attention kernel: at batch 1 a few KV heads per GPU leave SMs idle", "fraction")

# --- floor, observed step, gap ---

t_floor = Step("t_floor", pr.memory_time(sm.bytes_gpu.s), "s",
               "What one GPU must stream per step, weights and the KV cache at this context, at datasheet bandwidth: "
               "no step on this chip can be faster.",
               latex=r"t_{\mathrm{floor}}", title="The floor")
t_at_ratio = Step("t_step_at_ratio", rho_obs * t_floor.s, "s",
                  r"The step a ratio $\sym{rho_obs}$ over the floor stands for: the stated ratio's step where no time is measured, and the "
                  "equation the closed forms below solve.",
                  latex=r"t(\rho_{\mathrm{obs}})", title="Step at a stated ratio")
given = Step("measurement_given", pr.measurement_given(gl.t_meas, t_floor.s), "1",
             r"1 where a measured step is given (`--set t_step_measured`), 0 where none is ($\sym{t_meas}$ = 0, the default).",
             latex=r"\delta_{\mathrm{meas}}", title="Measured step given")
t_obs = Step("t_step_observed", pr.measured_or(gl.t_meas, t_at_ratio.s, given.s), "s",
             r"The measured step: the time given ($\sym{t_meas}$, `--set t_step_measured`), else the stated ratio over the floor "
             "(the teaser's 2.5x by default).",
             latex=r"t_{\mathrm{obs}}", title="Observed step")
ratio = Step("gap_ratio_observed", sp.Piecewise((t_obs.s / t_floor.s, t_obs.s >= t_floor.s), (sp.nan, True)), "1",
             "The measurement as a ratio over the floor: derived from the measured time where one is given, the stated ratio otherwise.",
             latex=r"\rho", title="Observed ratio",
             none="the measured step is shorter than the floor: no step streams its bytes faster than the datasheet bandwidth, so the "
                  "bytes or the measurement are wrong")
gap = Step("gap", (ratio.s - 1) * t_floor.s, "s",
           "What the suspects below have to explain: zero exactly when the step runs at its floor.", latex=r"\Delta t", title="The gap")

# --- white space between kernels ---

kernels = Step("kernels_per_step", pr.kernels_per_step(), "1",
               "Every layer launches the same kernels; the embedding, final norm, LM head and sampling add a few more.",
               latex=r"n_{\mathrm{k}}", title="Kernels per step")
t_gaps = Step("t_launch_gaps", pr.launch_gap_time(kernels.s), "s",
              "Trace: thin white gaps between every pair of kernels. Each boundary leaves the GPU idle while the next kernel is launched; "
              "a CUDA graph replays the whole step with almost none.",
              latex=r"t_{\mathrm{gaps}}", title="Launch gaps (white space)")
t_host_step = Step("t_host_wait", t_host, "s",
                   "Trace: one wide white gap at each step boundary, the GPU idle while the host schedules, samples and detokenizes. "
                   "Asynchronous scheduling overlaps it with the next step.",
                   latex=r"t_{\mathrm{host,wait}}", title="Host work between steps (white space)")
white = Step("t_white_space", t_gaps.s + t_host_step.s, "s",
             "Everything the trace shows as the GPU doing nothing.", latex=r"t_{\mathrm{idle}}", title="White space in all")

# --- kernels slower than their bytes ---

t_bw_w = Step("t_slow_weights", pr.bandwidth_shortfall(sm.weights_gpu.s), "s",
              r"Trace: the GEMV kernels are busy, but each takes its weight bytes over $\eta_{\mathrm{bw}} \beta$, not $\beta$. "
              "Their achieved bandwidth is their bytes over their duration; 80 to 90% of the datasheet is good.",
              latex=r"t_{\mathrm{bw,w}}", title="Weight GEMVs below datasheet bandwidth")
t_bw_kv = Step("t_slow_attention", pr.bandwidth_shortfall(sm.kv_step.s, gl.eta_att), "s",
               r"Trace: the attention kernel's time over its KV bytes. At batch 1 it has only the KV heads of one sequence to spread over the SMs, "
               "so without split-KV (flash-decoding) it reaches a smaller share of the bandwidth than the GEMVs.",
               latex=r"t_{\mathrm{bw,att}}", title="Attention below datasheet bandwidth")
t_small_k = Step("t_small_kernels", gl.L * n_small * t_small, "s",
                 "Trace: many short kernels (norms, rotary, activation, residual adds, cache writes) that move almost no bytes yet take a few "
                 "microseconds each, ramp-up and tail included. Fusion removes them.",
                 latex=r"t_{\mathrm{small}}", title="Small kernels")
slow = Step("t_slow_kernels", t_bw_w.s + t_bw_kv.s + t_small_k.s, "s",
            "Everything the trace shows as busy kernels taking longer than their bytes at datasheet bandwidth.", latex=r"t_{\mathrm{slow}}",
            title="Slow kernels in all")

# --- extra or wrong kernels ---

t_wide = Step("t_wide_weights", pr.wide_read_time(sm.weights_gpu.s, f_wide, rho_w, gl.eta_bw * gl.beta), "s",
              r"Trace: kernel names that give the data type away (an FP32 GEMV, a dequantize or cast kernel before each GEMM). "
              r"A share $\sym{f_wide}$ of the weights read $\sym{rho_w}$ times wider than intended streams that many more bytes.",
              latex=r"t_{\mathrm{wide}}", title="Weights read at a wider width")
t_coll = Step("t_collectives", sm.t_comm.s, "s",
              r"Trace: NCCL kernels, two per layer under tensor parallelism: the step model's all-reduces. At batch 1 each message is one row "
              r"of activations, so its $\sym{allreduce_rounds}$ rounds of latency, not its bytes, set the time; zero on one GPU.",
              latex=r"t_{\mathrm{coll}}", title="Tensor-parallel all-reduces")
extra = Step("t_extra_kernels", t_wide.s + t_coll.s, "s", "Everything the trace shows as kernels a lean step would not run.",
             latex=r"t_{\mathrm{extra}}", title="Extra or wrong kernels in all")

# --- invisible in the timeline ---

t_outside = Step("t_outside", t_out, "s",
                 "Not in a GPU trace at all: time the client's per-token measurement counts outside the engine's steps "
                 "(API server, streaming, network). Compare the engine's own step time with the client's.",
                 latex=r"t_{\mathrm{out}}", title="Outside the engine (invisible)")

# --- adding up ---

suspects = Step("t_suspects", white.s + slow.s + extra.s + t_outside.s, "s",
                "The stated suspects together.", latex=r"t_{\mathrm{sus}}", title="All stated suspects")
explained = Step("t_explained", sp.Min(gap.s, suspects.s), "s",
                 "The part of the gap the stated suspects account for: all of it when they add up to more.",
                 latex=r"t_{\mathrm{expl}}", title="Gap explained by the suspects")
remainder = Step("t_remainder", gap.s - explained.s, "s",
                 "What the stated suspects leave unexplained: invisible in the timeline too until a measurement names it "
                 "(clocks below boost, synchronisation, a measurement that includes other work).",
                 latex=r"t_{\mathrm{rest}}", title="Unexplained remainder")
overshoot = Step("t_overshoot", suspects.s - explained.s, "s",
                 "Above zero the stated inputs predict more than was observed: one of them is too pessimistic for this server.",
                 latex=r"t_{\mathrm{over}}", title="Suspects beyond the gap")
accounted = Step("t_accounted", suspects.s + remainder.s, "s",
                 "The suspects plus the remainder: the gap itself, or the suspects where they overshoot it.",
                 latex=r"t_{\mathrm{acc}}", title="Time accounted for")


def _share(name: str, part: Step, title: str, latex: str) -> Step:
    return Step(name, part.s / accounted.s, "1", f"{title} as a share of the time accounted for.", latex=latex, title=title + ", share")


share_white = _share("share_white_space", white, "White space", r"s_{\mathrm{idle}}")
share_slow = _share("share_slow_kernels", slow, "Slow kernels", r"s_{\mathrm{slow}}")
share_extra = _share("share_extra_kernels", extra, "Extra or wrong kernels", r"s_{\mathrm{extra}}")
invisible = Step("t_invisible", t_outside.s + remainder.s, "s",
                 "Everything no GPU trace shows: time outside the engine and the unexplained remainder.", latex=r"t_{\mathrm{inv}}",
                 title="Invisible in the timeline in all")
share_invisible = _share("share_invisible", invisible, "Invisible in the timeline", r"s_{\mathrm{inv}}")
share_explained = Step("share_explained", explained.s / gap.s, "1",
                       "How much of the gap the stated suspects explain (1 when they explain all of it or more).",
                       latex=r"s_{\mathrm{expl}}", title="Share of the gap explained",
                       none="there is no gap to explain: the step runs at its floor")
gpu_slow = Step("share_gpu_slow", (t_bw_w.s + t_bw_kv.s) / accounted.s, "1",
                "The part a slow GPU could be blamed for: streaming kernels below the datasheet bandwidth.", latex=r"s_{\mathrm{GPU}}",
                title="Share from streaming below datasheet bandwidth")
not_gpu = Step("share_not_gpu", 1 - gpu_slow.s, "1",
               "Everything else: launches, host work, small, wide and extra kernels, and what the timeline does not show.",
               latex=r"1 - s_{\mathrm{GPU}}", title="Share not from a slow GPU")

# --- closed forms ---

t_gpu_only = Step("t_gpu_only", pr.memory_time(sm.bytes_gpu.s, gl.eta_bw * gl.beta), "s",
                  "The step if a slow GPU were the whole story: the same bytes at the achieved bandwidth, nothing else.",
                  latex=r"t_{\mathrm{GPU}}", title="Step with only a slow GPU")
eta_ratio = solve("eta_bw_alone_at_ratio", t_gpu_only, t_at_ratio, gl.eta_bw, "1",
                  "The bandwidth share the streaming kernels would have to sink to for a slow GPU alone to give a step a ratio "
                  r"$\sym{rho_obs}$ over the floor: one over the ratio.",
                  latex=r"\eta_{\mathrm{bw}}^{\mathrm{alone}}(\rho_{\mathrm{obs}})", keep=(sm.bytes_gpu,),
                  title="Bandwidth a slow GPU alone would need, at a ratio")
eta_alone = at("eta_bw_alone", eta_ratio, {rho_obs: ratio.s},
               "The same closed form at the observed ratio: the share a slow GPU alone would need to explain the observed step. "
               "A streaming kernel on a healthy GPU reaches 80 to 90%.",
               latex=r"\eta_{\mathrm{bw}}^{\mathrm{alone}}", title="Bandwidth a slow GPU alone would need")
gap_stated = Step("gap_at_ratio", (rho_obs - 1) * t_floor.s, "s",
                  r"The gap a ratio $\sym{rho_obs}$ over the floor leaves, whatever was measured: the equation the suspects' ratio solves.",
                  latex=r"\Delta t(\rho_{\mathrm{obs}})", title="Gap at a ratio")
rho_pred = solve("gap_ratio_predicted", gap_stated, suspects, rho_obs, "1",
                 "The ratio the stated suspects predict: the one at which they explain the gap exactly.",
                 latex=r"\rho_{\mathrm{pred}}", keep=(t_floor, suspects), title="Ratio the suspects predict")

SUSPECTS = (t_gaps, t_host_step, t_bw_w, t_bw_kv, t_small_k, t_wide, t_coll, t_outside)
first = Step("largest_suspect", pr.best_of([s.s for s in SUSPECTS], tuple(range(1, len(SUSPECTS) + 1))), "1",
             "The number of the largest suspect in the order of this sheet (1 launch gaps, 2 host work, 3 weight GEMVs, 4 attention, 5 small kernels, "
             "6 wide weights, 7 all-reduces, 8 outside the engine): the first to fix when fixes cost the same.",
             latex=r"i^{*}", title="Largest suspect")

STEPS = (*sm.BYTES_STEPS, *sm.COMM_STEPS, t_floor, t_at_ratio, given, t_obs, ratio, gap, kernels, t_gaps, t_host_step, white, t_bw_w, t_bw_kv, t_small_k, slow,
         t_wide, t_coll, extra, t_outside, suspects, explained, remainder, overshoot, accounted, invisible, share_white, share_slow, share_extra, share_invisible,
         share_explained, gpu_slow, not_gpu, t_gpu_only, eta_ratio, eta_alone, gap_stated, rho_pred, first, *sm.MEMORY_FIT)

SUSPECT_COLUMNS = ("t_launch_gaps", "t_host_wait", "t_slow_weights", "t_slow_attention", "t_small_kernels", "t_wide_weights")

DERIVATION = derivation(
    "batch1-gap",
    "The batch-1 gap: suspects sorted by what one trace shows",
    "A 2.5x gap at batch 1 almost never comes from the GPU being slow. The answer sorts the suspects by what a single profiler trace "
    "shows and puts a millisecond figure on each.",
    S,
    STEPS,
    ("t_floor", "t_step_observed", "gap"),
    inputs=(
        ms.MEASURED_STEP, GAP_RATIO, KERNELS_LAYER, KERNELS_OTHER, LAUNCH_GAP,
        Input("host_time", t_host, "1.5 ms", "s", "host work per step the GPU waits for (scheduling, sampling, detokenizing): "
              "1 to 3 ms in a synchronous Python engine, near 0 with asynchronous scheduling", "nonnegative"),
        ETA_ATT,
        Input("small_kernels_per_layer", n_small, "6", "1", "small kernels per layer: norms, rotary, activation, residual adds, cache write", "whole"),
        Input("small_kernel_time", t_small, "3 us", "s", "time of one small kernel in the trace", "nonnegative"),
        Input("wide_share", f_wide, "0.1", "1", "share of the weight bytes read at a wider width than intended (0.1: a tenth, such as an LM head kept in FP32)",
              "nonnegative"),
        Input("wide_ratio", rho_w, "2", "1", "how many times wider those weights are read (2: FP32 for BF16, or BF16 for FP8); at least 1",
              "at_least_one"),
        Input("outside_time", t_out, "0.3 ms", "s", "time per step the client counts outside the engine (API server, streaming, network)",
              "nonnegative"),
    ),
    argument=(
        "bytes_per_gpu", "t_floor", "t_step_observed", "gap_ratio_observed", "gap", "t_white_space", "t_slow_kernels", "t_extra_kernels", "t_outside",
        "t_explained", "t_remainder", "share_gpu_slow", "eta_bw_alone", "largest_suspect",
    ),
    body_tables=(0, 3),
    answer=(
        "The floor is {t_floor}; the observed step takes {t_step_observed}, {gap_ratio_observed} times the floor, so {gap} per step needs explaining.",
        "One trace sorts the suspects: white space ({t_white_space}), kernels slower than their bytes ({t_slow_kernels}), extra "
        "or wrong kernels ({t_extra_kernels}) and time outside the engine ({t_outside}). A slow GPU accounts for only "
        "{share_gpu_slow} of the gap.",
    ),
    assumptions=(
        r"The floor is one GPU's bytes per step (its share of the weights the step reads and its KV cache at context $T$) at datasheet bandwidth; "
        "it is the same floor an MBU divides by. At batch 1 every step is memory-bound, so bytes, not FLOPs, set it.",
        r"The measurement is a time per step ($\sym{t_meas}$, `--set t_step_measured`) or, where none is given, a ratio over this floor "
        r"($\sym{rho_obs}$, the teaser's 2.5x by default); the ratio is derived from the time where one is given. "
        "The measured step is the engine's decode step, one token per sequence.",
        "Each suspect is sized from the inputs printed above, one formula each, and they add: a real trace may overlap some of them "
        "(host work hidden under a long kernel), so a suspect's figure is what it costs when nothing hides it.",
        "The suspects plus the unexplained remainder equal the gap exactly; if the stated suspects add up to more than the gap, "
        "the overshoot is printed and the remainder is zero.",
        "Weights read wide are a share of the GEMM weights at the achieved bandwidth; the all-reduces are the shared step model's: their bytes "
        r"over the link plus $\sym{allreduce_rounds}$ rounds of latency each (one on a switched scale-up domain), twice per layer.",
    ),
    takeaways=(
        "The floor is {t_floor} per step; the observed step takes {t_step_observed} ({gap_ratio_observed} times the floor), a gap of {gap}.",
        "White space {t_white_space} (launch gaps {t_launch_gaps} over {kernels_per_step} kernels, host work {t_host_wait}); "
        "slow kernels {t_slow_kernels} (weight GEMVs {t_slow_weights}, attention {t_slow_attention}, small kernels {t_small_kernels}); "
        "extra or wrong kernels {t_extra_kernels} (wide weights {t_wide_weights}, all-reduces {t_collectives}); outside the engine {t_outside}.",
        "The stated suspects explain {share_explained} of the gap, leaving {t_remainder} unexplained (overshoot {t_overshoot}); "
        "they predict a ratio of {gap_ratio_predicted}.",
        "A slow GPU, the streaming kernels below datasheet bandwidth, accounts for {share_gpu_slow} of it. To explain the whole ratio alone, "
        "the streaming kernels would have to run at {eta_bw_alone} of the datasheet bandwidth.",
        "Fix in this order: white space first (a CUDA graph and asynchronous scheduling remove most of it and touch no kernel), then extra or "
        "wrong kernels (a data type or configuration fix), then small kernels (fusion), and the streaming kernels' bandwidth last "
        "(kernel work, and a healthy GPU leaves little to win there). At these inputs the largest suspect is number {largest_suspect}.",
    ),
    scoring=(
        "Rebuilds the floor from bytes (weights and KV per GPU over datasheet bandwidth) before looking at the measurement.",
        "Sorts suspects by what the trace shows: the GPU idle, kernels busy but slow, kernels that should not be there, and what no trace shows.",
        "Puts a millisecond figure on each from a count and a unit cost (kernels times gap, layers times small kernels times their time), "
        "not adjectives.",
        "Shows the suspects and the remainder add up to the gap, and says what would confirm the remainder.",
        "Says a slow GPU would need the streaming kernels far below what healthy kernels reach, so it is the last suspect, not the first.",
        "Orders the fixes by size and by cost: CUDA graphs and asynchronous scheduling before kernel work.",
    ),
    limits=(
        "The suspects add; in a real step host work and launches partly hide under long kernels, so the sum is an upper bound on what they cost.",
        "Launch gaps and small kernels are counts times a typical cost; the trace gives the real distribution, and the tail matters.",
        "GPU clocks below boost (power or thermal limits) slow every kernel uniformly: the trace shows slow kernels, and only the clock log says why.",
        "At larger batches the floor grows with the KV cache and the GEMMs approach the ridge: the fixed suspects shrink in share and compute joins.",
        "The remainder is what the stated inputs do not cover, not a measured quantity: a profile is the only way to name it.",
    ),
    tables=(
        Table("The suspects in milliseconds across hardware and models (batch 1, 8K context)", (
            Row("", model="llama-3.1-8b", hardware="h100-sxm"),
            Row("", model="llama-3.1-8b", hardware="b200"),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="mixtral-8x7b", hardware="h100-sxm", set={"tp": "2"}),
            Row("", model="deepseek-v3", hardware="h200", weights="fp8", set={"tp": "8"}),
            Row("", model="qwen3-235b-a22b", hardware="h100-sxm", set={"tp": "8"}),
        ), ("t_floor", "gap", "t_white_space", "t_slow_kernels", "t_extra_kernels", "t_remainder"),
            note="The same inputs on every row: a faster chip or a larger tensor-parallel group shrinks the floor but not the white space, "
                 "so the same server software leaves a larger ratio. DeepSeek-V3 runs its native FP8 weights (in BF16 it does not fit eight H200)."),
        Table("Each group's share of the time accounted for (same rows)", (
            Row("", model="llama-3.1-8b", hardware="h100-sxm"),
            Row("", model="llama-3.1-8b", hardware="b200"),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="mixtral-8x7b", hardware="h100-sxm", set={"tp": "2"}),
            Row("", model="deepseek-v3", hardware="h200", weights="fp8", set={"tp": "8"}),
            Row("", model="qwen3-235b-a22b", hardware="h100-sxm", set={"tp": "8"}),
        ), ("share_white_space", "share_slow_kernels", "share_extra_kernels", "share_invisible", "share_gpu_slow", "largest_suspect")),
        Table("The suspects in milliseconds (sheet's model and chip)", (
            Row("sheet's inputs"),
            Row("context 128K", set={"context": "131072 token"}),
            Row("CUDA graph, asynchronous host", set={"launch_gap": "0.5 us", "host_time": "0.1 ms"}),
            Row("batch 16", set={"batch": "16"}),
        ), SUSPECT_COLUMNS),
        Table("The ratio the same suspects predict as batch and context grow", tuple(
            Row("", set={"batch": str(b), "context": f"{t} token"}) for b, t in ((1, 8192), (8, 8192), (64, 8192), (1, 131072))
        ), ("t_floor", "t_suspects", "gap_ratio_predicted", "share_gpu_slow")),
    ),
    claims=(
        Claim("A 2.5x gap almost never comes from the GPU being slow: read as streaming below datasheet bandwidth explaining at most a quarter "
              "of it (the rest at least three quarters).", "share_not_gpu", "0.75", rel_tol=0.0, at_least=True),
        Claim("The stated suspects reproduce a 2.5x step at batch 1 (within 20%).", "gap_ratio_predicted", "2.5", rel_tol=0.2),
        Claim("A slow GPU alone would need streaming kernels at 40% of datasheet bandwidth to give 2.5x.", "eta_bw_alone_at_ratio", "0.4",
              rel_tol=0.01, where=Row("", set={"gap_ratio": "2.5"})),
        Claim("On a B200 the same software predicts a ratio of at least 2.5x.", "gap_ratio_predicted", "2.5", rel_tol=0.0, at_least=True,
              where=Row("", hardware="b200")),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-8b", "llama-3.1-70b"),
    plots=(Plot("suspects", "bars",
                "Each suspect in milliseconds, grouped by what one trace shows (white space, slow kernels, extra or wrong kernels, "
                "invisible in the timeline), against the gap they must explain.",
                title="A {t_step_observed} step over a {t_floor} floor: the {gap} gap suspect by suspect; {share_not_gpu} of the time "
                      "accounted for is not a slow GPU",
                y=("t_white_space", "t_slow_kernels", "t_extra_kernels", "t_invisible"), split=("t_white_space", "t_slow_kernels", "t_extra_kernels", "t_invisible"),
                vlines=("gap",), log="", answer=True,
                labels={"t_white_space": "white space", "t_slow_kernels": "slow kernels", "t_extra_kernels": "extra or wrong kernels",
                        "t_invisible": "invisible in the timeline"}),),
    display_units={"eta_bw_alone": "%", **sm.DISPLAY_UNITS, "t_floor": "ms", "t_step_observed": "ms", "t_step_measured": "ms", "gap_at_ratio": "ms", "t_step_at_ratio": "ms", "gap": "ms", "t_launch_gaps": "ms", "t_host_wait": "ms",
                   "t_white_space": "ms", "t_slow_weights": "ms", "t_slow_attention": "ms", "t_small_kernels": "ms", "t_slow_kernels": "ms",
                   "t_wide_weights": "ms", "t_collectives": "ms", "t_extra_kernels": "ms", "t_outside": "ms", "t_suspects": "ms",
                   "t_explained": "ms", "t_remainder": "ms", "t_overshoot": "ms", "t_invisible": "ms", "t_accounted": "ms", "t_gpu_only": "ms",
                   **{n: "%" for n in ("share_white_space", "share_slow_kernels", "share_extra_kernels", "share_invisible", "share_explained",
                                       "share_gpu_slow", "share_not_gpu", "eta_bw_alone", "eta_bw_alone_at_ratio")}},
)

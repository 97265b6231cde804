"""MBU, defined on a real server, and six ways a dashboard gets it wrong.

Takeaway: MBU = W_GPU / (t_step * beta): the bytes one GPU must move per decode
step (its share of the weights the step reads, for MoE only the experts the
batch touches, plus its cached streams at the context) over what that GPU's
datasheet HBM bandwidth moves in the decode step time. Every way to get it
wrong changes one operand:

1. numerator, what is counted: every parameter instead of the weights read (MoE);
2. numerator, what is left out: the KV cache;
3. numerator, its unit: bytes in GiB read as GB, or the wrong bytes per weight;
4. denominator, which peak: the bandwidth a benchmark achieves instead of the datasheet;
5. denominator, which time: wall time per step with the interleaved prefills in it;
6. both, which GPUs: the whole server's bytes over one GPU's bandwidth, or the
   server's bytes over the server's bandwidth with the cache counted once.

Three more an interviewer checks: the time base (the kernels' summed time, which
drops the step model's overheads t_layer and t_fixed), a datasheet peak from another
SKU (the H100 PCIe's 2.0 TB/s for an SXM's 3.35 TB/s: the second chip), and
per-token MBU under speculative decoding (inflated by the expected tokens per
cycle). An MBU above 1 proves an accounting error: a step counts the slips that
read above it. nvidia-smi's and DCGM's "memory utilization" is the share of time
memory was read or written (NVML's nvmlUtilization_t), not bandwidth.

Each is sized in points of MBU (hundredths) on one reference server: the shared
step model (derivations.physics.stepmodel) for Qwen3-235B-A22B in BF16 on eight H100
SXM at tensor parallel 8, batch 16, 8K context, so the true MBU is derived, not
typed. "30 points off" holds for some ways and not for others; the claims say
which.
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)
n_out = S.add("n_out", "token", r"n_{\mathrm{out}}", "output tokens each request decodes")
n_bits = S.add("n_bits", "1", r"n_{\mathrm{bit}}", "bits per weight a dashboard assumes")

OUTPUT = Input("output_tokens", n_out, "512 token", "token",
               "output tokens each request decodes; each request's prefill is spread over them (illustrative default)", "count")
BITS = Input("assumed_bits_per_weight", n_bits, "8", "1",
             "bits per weight the dashboard assumes (the default: a dashboard written for an FP8 deployment, reading a BF16 one)", "positive")

MBU = pr.memory_bandwidth_utilization

# --- the definition ---------------------------------------------------------------------------

achieved = Step("bandwidth_achieved", sm.bytes_gpu.s / sm.t_step.s, "B/s",
                "The numerator over the time: the bytes one GPU must move per decode step over the decode step time. Per GPU, because each GPU "
                "streams from its own HBM; bytes that must move, not bytes that happen to move (no re-reads, no activations); "
                "the step time of decode alone.",
                latex=r"\beta_{\mathrm{ach}}", title="Achieved bandwidth per GPU")
possible = Step("bytes_possible", gl.beta * sm.t_step.s, "B",
                "The denominator as bytes: what one GPU's datasheet HBM bandwidth could move in the decode step time.",
                latex=r"W_{\max}", title="Bytes the datasheet bandwidth could move in the step")
mbu = Step("mbu", MBU(sm.bytes_gpu.s, sm.t_step.s), "1",
           "Over one GPU's datasheet HBM bandwidth, in decimal bytes, the same units as the numerator: not a benchmark's achievable figure, "
           "not the server's sum. The reference server's step time is the shared step model's, so the true MBU is known.",
           latex=r"\mathrm{MBU}", title="MBU of the reference server")


def _points(name: str, wrong: Step, title: str, sub: str) -> Step:
    return Step(name, 100 * sp.Abs(wrong.s - mbu.s), "1",
                "How far the dashboard's number sits from the true one, in points (hundredths of MBU); its direction is in the MBU above.",
                latex=r"\Delta_{\mathrm{" + sub + "}}", title=title)


# 1. every parameter instead of the weights read
w_total_gpu = Step("weight_bytes_all_params_gpu", pr.tp_split(pr.mixed_weight_bytes(gl.P_total - sm.ROUTED_ALL, sm.ROUTED_ALL)), "B",
                   r"Every parameter of the model, every routed expert and the embedding table included, at the served width, split over the GPUs: "
                   r"what a dashboard gets from the parameter count. A decode step of $B$ sequences reads only the experts its tokens touch "
                   r"and one embedding row per token.",
                   latex=r"W_{\mathrm{all,GPU}}", title="Weight bytes per GPU from the parameter count")
mbu_all = Step("mbu_all_params", MBU(w_total_gpu.s + sm.kv_step.s + sm.index_step.s + sm.state_step.s + sm.permute.s, sm.t_step.s), "1",
               "Way 1, the numerator counts what is stored rather than what is read: too high for a MoE model at small batch, "
               "barely off for a dense one (the embedding).",
               latex=r"\mathrm{MBU}_{\mathrm{all}}", title="Way 1: every parameter counted")
pts_all = _points("points_all_params", mbu_all, "Way 1 in points", r"all")

# 2. the KV cache left out
mbu_nokv = Step("mbu_no_kv", MBU(sm.weights_gpu.s, sm.t_step.s), "1",
                r"Way 2, the numerator leaves out the cache: too low, by the cache's share of the bytes, which grows with batch and context.",
                latex=r"\mathrm{MBU}_{\mathrm{no\,kv}}", title="Way 2: the KV cache left out")
pts_nokv = _points("points_no_kv", mbu_nokv, "Way 2 in points", r"no\,kv")

# 3a. binary bytes read as decimal
with sp.evaluate(False):
    gib_over_gb = sp.Pow(2, 30) / sp.Pow(10, 9)
gib = Step("gib_per_gb", gib_over_gb, "1",
           r"One GiB ($2^{30}$ bytes, what PyTorch and nvidia-smi print) in GB ($10^{9}$ bytes, what datasheets print bandwidth in).",
           latex=r"\mathrm{GiB}/\mathrm{GB}", title="A binary gigabyte in decimal ones")
mbu_bin = Step("mbu_binary", MBU(sm.bytes_gpu.s / gib.s, sm.t_step.s), "1",
               "Way 3a, the numerator in GiB over a bandwidth in TB/s: the bytes shrink by the ratio, so the MBU is too low by about 7%.",
               latex=r"\mathrm{MBU}_{\mathrm{GiB}}", title="Way 3a: bytes in GiB read as GB")
pts_bin = _points("points_binary", mbu_bin, "Way 3a in points", r"GiB")

# 3b. the wrong weight width
b_assumed = Step("b_w_assumed", n_bits * gl.u_bit / gl.u_param, "B/parameter",
                 "The bytes per weight the dashboard uses: its bits per weight over eight.", latex=r"b_{w}^{\mathrm{dash}}",
                 title="Bytes per weight the dashboard assumes")
mbu_width = Step("mbu_weight_width", MBU(pr.tp_split(pr.weight_bytes(sm.params.s, b_assumed.s)) + sm.kv_step.s + sm.permute.s, sm.t_step.s), "1",
                 r"Way 3b, the weights read at the wrong width: the right parameters times the wrong bytes each. A BF16 checkpoint's size "
                 r"for FP8 serving doubles the weight bytes; an FP8 assumption on a BF16 server halves them.",
                 latex=r"\mathrm{MBU}_{b_{w}}", title="Way 3b: the wrong weight width")
pts_width = _points("points_weight_width", mbu_width, "Way 3b in points", r"width")

# 4. the achievable peak
mbu_ach = Step("mbu_achievable_peak", MBU(sm.bytes_gpu.s, sm.t_step.s, gl.eta_bw * gl.beta), "1",
               r"Way 4, the denominator is the bandwidth a copy benchmark reaches ($\sym{eta_bw}$ of the datasheet) rather than the datasheet: "
               r"the MBU rises by $1/\sym{eta_bw}$ and a well-tuned server reads near 100%. The sparse-peak slip is the same mistake on MFU's side.",
               latex=r"\mathrm{MBU}_{\eta}", title="Way 4: the achievable peak as denominator")
pts_ach = _points("points_achievable_peak", mbu_ach, "Way 4 in points", r"ach")

# 5. a step time with the prefills in it
pf_flops = Step("prefill_flops_gpu", pr.tp_split(pr.gemm_flops(gl.P_active, gl.S) + pr.prefill_attention_flops()), "flop",
                r"One request's prefill of $S$ prompt tokens: its GEMMs and causal attention, split over the GPUs.",
                latex=r"F_{\mathrm{pre}}", title="Prefill FLOPs per GPU")
pf_bytes = Step("prefill_bytes_gpu", pr.tp_split(pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.E * gl.P_exp)) + gl.S * sm.kv_tok_gpu.s, "B",
                r"The prefill streams every weight (its $S$ tokens touch every expert) and writes $S$ tokens of cache.",
                latex=r"W_{\mathrm{pre}}", title="Prefill bytes per GPU")
t_pf = Step("t_prefill", pr.roofline_component_time(pf_flops.s, pf_bytes.s) + 2 * gl.L * pr.allreduce_time(pr.tp_allreduce_bytes(1, gl.S)), "s",
            "The prefill on the step model's roofline at the achieved rates, with its all-reduces.",
            latex=r"t_{\mathrm{pre}}", title="Prefill time of one request")
t_dash = Step("t_step_with_prefill", sm.t_step.s + gl.B * gl.q / n_out * t_pf.s, "s",
              r"Wall time per decode step when prefills are interleaved with decode (continuous batching): each of the $B$ sequences "
              r"brings one prefill per $n_{\mathrm{out}}/q$ steps. A dashboard that divides wall time by steps, or by output tokens, reads this.",
              latex=r"t_{\mathrm{wall}}", title="Step time with the prefills in it")
mbu_pf = Step("mbu_prefill_in_time", MBU(sm.bytes_gpu.s, t_dash.s), "1",
              "Way 5, the denominator's time includes the prefills (and, on a quiet server, the host's gaps between requests): too low.",
              latex=r"\mathrm{MBU}_{\mathrm{wall}}", title="Way 5: prefill in the step time")
pts_pf = _points("points_prefill_in_time", mbu_pf, "Way 5 in points", r"wall")

# 6. the GPUs of a tensor-parallel server
server_bytes = Step("bytes_server", sm.weight_bytes.s + gl.B * (sm.read.s * sm.kv_tok.s + gl.T * gl.s_idx + 2 * gl.s_st), "B",
                    "The server's bytes counted once: the weights read and one copy of every sequence's cache (and its indexer keys and "
                    "recurrent state, where the model has them).",
                    latex=r"W_{\mathrm{server}}", title="Bytes per step for the whole server, counted once")
mbu_one = Step("mbu_tp_one_gpu", MBU(server_bytes.s, sm.t_step.s), "1",
               r"Way 6a, the whole server's bytes over one GPU's bandwidth: about $\sym{n_tp}$ times too high, often above 1.",
               latex=r"\mathrm{MBU}_{\mathrm{TP},1}", title="Way 6a: server bytes over one GPU")
pts_one = _points("points_tp_one_gpu", mbu_one, "Way 6a in points", r"TP,1")
mbu_once = Step("mbu_tp_cache_once", MBU(server_bytes.s, sm.t_step.s, gl.n_tp * gl.beta), "1",
                r"Way 6b, the server's bytes over the server's bandwidth: right while the cached streams split evenly, too low once they "
                r"replicate (more GPUs than KV heads; an MLA latent on every GPU), because each copy is read.",
                latex=r"\mathrm{MBU}_{\mathrm{TP,once}}", title="Way 6b: the cache counted once")
pts_once = _points("points_tp_cache_once", mbu_once, "Way 6b in points", r"TP,once")

# 7. the time base: kernel time summed instead of the wall-clock step
t_kern = Step("t_kernels_summed", sm.t_gemm.s + sm.t_attn.s + sm.t_comm.s, "s",
              "What a profiler's kernel table adds up: the weight GEMMs, attention and the all-reduce kernels. The step model's overheads, "
              r"$\sym{t_layer}$ per layer and $\sym{t_fixed}$ per step, are the step's time outside them (launch gaps, host work).",
              latex=r"t_{\mathrm{kern}}", title="Kernel time summed")
share_out = Step("share_step_outside_kernels", sm.t_overhead.s / sm.t_step.s, "1",
                 "The share of the wall-clock step the time base moves: the overheads over the step.",
                 latex=r"t_{\mathrm{over}}/t_{\mathrm{step}}", title="Share of the step outside the kernels")
mbu_kern = Step("mbu_kernel_time", MBU(sm.bytes_gpu.s, t_kern.s), "1",
                "Way 7, the time base is the kernels' summed time rather than the wall-clock step: too high by one over the kernels' share "
                "of the step, since the white space between kernels drops out.",
                latex=r"\mathrm{MBU}_{\mathrm{kern}}", title="Way 7: kernel time as the time base")
pts_kern = _points("points_kernel_time", mbu_kern, "Way 7 in points", r"kern")
share_in = Step("share_step_in_kernels", t_kern.s / sm.t_step.s, "1",
                "The share of the step some kernel runs, each of them reading or writing HBM: about what nvidia-smi's and DCGM's "
                "\"memory utilization\" counter reads, since it counts the time memory was being read or written, not the bytes moved.",
                latex=r"t_{\mathrm{kern}}/t_{\mathrm{step}}", title="Share of the step memory is busy")

# 8. a datasheet peak from another SKU of the chip (the H100 PCIe's for an H100 SXM)
mbu_sku = Step("mbu_wrong_sku", MBU(sm.bytes_gpu.s, sm.t_step.s, gl.SECOND_CHIP[gl.beta]), "1",
               r"Way 8, the denominator is the datasheet bandwidth of another SKU of the chip, $\sym{beta_2}$ (the H100 PCIe's HBM2e for an "
               "H100 SXM's HBM3): the MBU moves by the ratio of the two bandwidths.",
               latex=r"\mathrm{MBU}_{\mathrm{SKU}}", title="Way 8: a peak from the wrong SKU")
sku_ratio = Step("mbu_wrong_sku_ratio", mbu_sku.s / mbu.s, "1",
                 "The wrong SKU's MBU over the true one: the right chip's bandwidth over the other's, whatever the server.",
                 latex=r"\mathrm{MBU}_{\mathrm{SKU}}/\mathrm{MBU}", title="Wrong-SKU error ratio")
pts_sku = _points("points_wrong_sku", mbu_sku, "Way 8 in points", r"SKU")

# 9. speculative decoding: accepted tokens counted as if each cost a step's bytes
tau = Step("expected_tokens", pr.expected_tokens_per_cycle(), "1",
           r"With a drafter, each verification step gains $1 + \alpha + \ldots + \alpha^{\gamma}$ tokens per sequence on average "
           "(@speculative-decoding; Leviathan et al. 2023), not one.",
           latex=r"\bar{n}", title="Expected tokens per cycle")
bytes_tok = Step("bytes_per_token_assumed", sm.bytes_gpu.s / (gl.B * gl.q), "B/token",
                 "The bytes per token a dashboard uses: the step's bytes over the tokens a plain step emits.",
                 latex=r"W_{\mathrm{tok}}", title="Bytes per token a dashboard assumes")
rate_spec = Step("token_rate_speculative", gl.B * tau.s * gl.u_token / sm.t_step.s, "token/s",
                 "The tokens per second it counts: every sequence's accepted tokens per step.",
                 latex=r"\Theta_{\mathrm{spec}}", title="Tokens per second with speculation")
mbu_spec = Step("mbu_speculative_per_token", bytes_tok.s * rate_spec.s / gl.beta, "1",
                "Way 9, MBU per token under speculative decoding: bytes per token times tokens per second over the bandwidth counts the "
                "step's bytes once per accepted token, though one verification read them once for all of them.",
                latex=r"\mathrm{MBU}_{\mathrm{tok}}", title="Way 9: per-token MBU with accepted tokens")
spec_infl = Step("mbu_speculative_inflation", mbu_spec.s / mbu.s, "1",
                 r"How many times too high: the expected tokens per cycle over the tokens of a plain step ($\bar{n}$ at $q$ = 1 token).",
                 latex=r"\mathrm{MBU}_{\mathrm{tok}}/\mathrm{MBU}", title="Speculative per-token inflation")
pts_spec = _points("points_speculative_per_token", mbu_spec, "Way 9 in points", r"tok")

worst = Step("points_worst", sp.Max(pts_all.s, pts_nokv.s, pts_bin.s, pts_width.s, pts_ach.s, pts_pf.s, pts_one.s, pts_once.s, pts_kern.s,
                                    pts_sku.s, pts_spec.s, evaluate=False), "1",  # distinct step symbols: nothing to prune
             "The largest of them: how far off one slip can put the dashboard on this server.",
             latex=r"\Delta_{\max}", title="The worst single slip, in points")

# the check: bytes that must move can never exceed what the datasheet bandwidth moves in the step
REPORTED = (mbu_all, mbu_nokv, mbu_bin, mbu_width, mbu_ach, mbu_pf, mbu_one, mbu_once, mbu_kern, mbu_sku, mbu_spec)
SLIP_POINTS = (pts_all, pts_nokv, pts_bin, pts_width, pts_ach, pts_pf, pts_one, pts_once, pts_kern, pts_sku, pts_spec)
unflagged = Step("points_worst_unflagged", sp.Max(*(pt.s * (1 - sp.ceiling(sp.Min(1, sp.Max(0, m.s - 1))))
                                                    for m, pt in zip(REPORTED, SLIP_POINTS, strict=True)), evaluate=False), "1",
                 "The largest of the slips whose number still reads at or below 1: how far off a dashboard can be without the MBU-above-1 "
                 "check catching it (a number above 1 is caught, however far off).",
                 latex=r"\Delta_{\max,\le 1}", title="The worst slip the check does not catch, in points")
flagged = Step("slips_above_one", sp.Add(*(sp.ceiling(sp.Min(1, sp.Max(0, m.s - 1))) for m in REPORTED)), "1",
               "How many of the slipped numbers read above 1: an MBU above 1 would need a GPU to move more bytes than its datasheet "
               "bandwidth allows, so it proves an accounting error (bytes counted on more GPUs than read them, a slower SKU's peak, "
               "accepted tokens counted as steps), and the check catches exactly these.",
               latex=r"n_{\mathrm{MBU}>1}", title="Slips the MBU-above-1 check catches", counts="slips")
true_flag = Step("mbu_above_one", sp.ceiling(sp.Min(1, sp.Max(0, mbu.s - 1))), "1",
                 "The same check on the true MBU: 0, since the bytes that must move over the step time never beat the datasheet bandwidth.",
                 latex=r"\delta_{\mathrm{MBU}>1}", title="True MBU above 1")

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, achieved, possible, mbu,
         w_total_gpu, mbu_all, pts_all, mbu_nokv, pts_nokv, gib, mbu_bin, pts_bin, b_assumed, mbu_width, pts_width,
         mbu_ach, pts_ach, pf_flops, pf_bytes, t_pf, t_dash, mbu_pf, pts_pf, server_bytes, mbu_one, pts_one, mbu_once, pts_once,
         t_kern, share_out, mbu_kern, pts_kern, share_in, mbu_sku, sku_ratio, pts_sku, tau, bytes_tok, rate_spec, mbu_spec, spec_infl, pts_spec,
         worst, unflagged, flagged, true_flag)

POINTS = ("points_all_params", "points_no_kv", "points_binary", "points_weight_width", "points_achievable_peak", "points_prefill_in_time",
          "points_tp_one_gpu", "points_tp_cache_once", "points_kernel_time", "points_wrong_sku", "points_speculative_per_token")
THIRTY = "30"

DERIVATION = derivation(
    "mbu-definition",
    "MBU, defined: two operands and six ways to get them wrong",
    "MBU is one division, and that is why it is so easy to get wrong. The answer defines both operands precisely on a real server and then "
    "shows six ways a dashboard can report a number 30 points off.",
    S,
    STEPS,
    ("mbu",),
    inputs=(OUTPUT, BITS),
    argument=(
        "bytes_per_gpu", "t_step", "bandwidth_achieved", "mbu", "mbu_all_params", "mbu_no_kv", "mbu_binary",
        "mbu_prefill_in_time", "mbu_tp_one_gpu", "mbu_tp_cache_once", "points_worst",
    ),
    body_tables=(0,),
    answer=(
        "MBU is the bytes a step must move per GPU, {bytes_per_gpu}, over what the datasheet bandwidth moves in the step: on "
        "the reference server {mbu}.",
        "Six slips move it: counting every parameter gives {mbu_all_params}, leaving out the cache {mbu_no_kv}, GiB read as GB "
        "{mbu_binary}, the wrong weight width {mbu_weight_width}, the achievable peak {mbu_achievable_peak}, prefill in the "
        "step time {mbu_prefill_in_time}, the server's bytes over one GPU {mbu_tp_one_gpu}; the worst a dashboard shows without "
        "reading above 1 is {points_worst_unflagged} points off.",
        "Three more an interviewer checks: the kernels' summed time as the time base gives {mbu_kernel_time}, another SKU's datasheet "
        "peak {mbu_wrong_sku} ({mbu_wrong_sku_ratio} times the true MBU), and per-token MBU under speculative decoding reads "
        "{mbu_speculative_inflation} times too high; {slips_above_one} read above 1, which proves an accounting error.",
    ),
    assumptions=(
        r"Numerator: the bytes one GPU must move per decode step, from the config: its share of the weights the step reads (for MoE the "
        r"experts its $B q$ tokens touch under uniform top-$k$ routing, plus the always-used weights; the LM head included, the embedding a "
        r"gather) and its cached streams of every sequence at context $T$ (replicated past their count). Decimal bytes.",
        r"Denominator: the decode step time times one GPU's datasheet HBM bandwidth, decimal TB/s. The reference server's step time is the "
        r"shared step model's at the printed efficiencies, all-reduces and overheads (@decode-floor), so its MBU is derived, not measured; "
        r"with a measured MBU, the MBU diagnosis sheet splits what is missing.",
        r"Each way changes one operand and holds the rest; several slips in one dashboard multiply. Points are hundredths of MBU, "
        "as the absolute difference; the misreported MBU shows the direction.",
        r"The prefill slip spreads one prefill of $S$ prompt tokens per request over its $n_{\mathrm{out}}$ output tokens, on the step "
        "model's roofline; the width slip assumes the printed bits per weight for the weights the step reads.",
        "The reference server is Qwen3-235B-A22B in BF16 on eight H100 SXM (tensor parallel 8, batch 16, 8K context): a MoE model, "
        "so every way is live; it fits (see the memory share).",
        r"The time-base slip sums the step model's kernels (weight GEMMs, attention, all-reduces) and leaves out its overheads "
        r"$\sym{t_layer}$ per layer and $\sym{t_fixed}$ per step; the wrong-SKU slip divides by the second chip's datasheet bandwidth "
        r"(the H100 PCIe's by default, --second-hardware); the speculative slip takes the printed acceptance and draft length.",
    ),
    takeaways=(
        "On the reference server each GPU must move {bytes_per_gpu} per step; the step model's step is {t_step}, so each GPU achieves "
        "{bandwidth_achieved} and the MBU is {mbu}.",
        "What is counted: every parameter gives {mbu_all_params} ({points_all_params} points off); leaving out the cache gives "
        "{mbu_no_kv} ({points_no_kv} points).",
        "Units: bytes in GiB read as GB give {mbu_binary} ({points_binary} points); {assumed_bits_per_weight} bits per weight give "
        "{mbu_weight_width} ({points_weight_width} points).",
        "Which peak: the achievable bandwidth gives {mbu_achievable_peak} ({points_achievable_peak} points). Which time: the prefills in the "
        "step time give {mbu_prefill_in_time} ({points_prefill_in_time} points).",
        "Which GPUs: the server's bytes over one GPU give {mbu_tp_one_gpu} ({points_tp_one_gpu} points); the server's bytes over the server's "
        "bandwidth, the cache counted once, give {mbu_tp_cache_once} ({points_tp_cache_once} points).",
        "Which time base: the kernels' summed time, {t_kernels_summed} of a {t_step} step ({share_step_outside_kernels} of it outside "
        "the kernels), gives {mbu_kernel_time} ({points_kernel_time} points). The \"memory utilization\" counter of nvidia-smi and DCGM "
        "would read about {share_step_in_kernels}: the time memory is busy, not the bytes moved.",
        "Which datasheet: the second chip's bandwidth for this one's gives {mbu_wrong_sku}, {mbu_wrong_sku_ratio} times the true MBU "
        "({points_wrong_sku} points). Which tokens: with speculation at {expected_tokens} tokens per cycle, per-token MBU reads "
        "{mbu_speculative_per_token}, {mbu_speculative_inflation} times too high ({points_speculative_per_token} points).",
        "The worst single slip is {points_worst} points, and {points_worst_unflagged} among those the check does not catch: 30 points off "
        "is easy to reach, but not by every way; the claims give the verdict for each. "
        "{slips_above_one} read above 1, which no server can reach: the true MBU's check reads {mbu_above_one}.",
    ),
    scoring=(
        "Defines MBU per GPU: bytes that must move per step on that GPU over the step time times that GPU's datasheet bandwidth.",
        "Counts the numerator from the config: weights read (for MoE the experts the batch touches, not all parameters), plus the KV cache "
        "at the real context, at the served widths.",
        "States which peak (datasheet, decimal, per GPU) and which time (decode steps only, not wall time with prefills).",
        "On tensor parallelism, keeps numerator and denominator on the same GPUs, and counts replicated cached streams once per GPU that reads them.",
        "Sizes each slip in points on one server rather than listing them, and knows which ones reach 30 points there.",
        "Names the time base: the wall-clock decode step, not the kernels' summed time, which drops the white space between kernels "
        "and raises the MBU by one over the kernels' share of the step.",
        "Knows the \"memory utilization\" of nvidia-smi (utilization.memory) and DCGM (DCGM_FI_DEV_MEM_COPY_UTIL) is not bandwidth: NVML "
        "defines it as the percent of time over the past sample period during which global (device) memory was being read or written "
        "(NVML API reference, nvmlUtilization_t, https://docs.nvidia.com/deploy/nvml-api/structnvmlUtilization__t.html), so a GEMV "
        "streaming at a fraction of the bandwidth reads near 100%.",
        "Takes the datasheet of the SKU in the rack: an H100 PCIe's 2.0 TB/s for an H100 SXM's 3.35 TB/s moves the MBU by their ratio.",
        "Under speculative decoding, counts bytes per verification step, not per accepted token: per-token accounting inflates the MBU "
        "by the expected tokens per cycle.",
        "Treats an MBU above 1 as proof of an accounting error (a numerator counted on more GPUs than read it, a slower SKU's peak, "
        "accepted tokens counted as steps), never as a fast server.",
    ),
    limits=(
        "The reference step time is modelled: a measured one changes the true MBU, and the slips move it by the same factors.",
        "Uniform routing sets the experts read; skewed routing reads fewer, so the every-parameter slip grows.",
        "Bytes that must move exclude re-reads a kernel may make (attention re-reading the cache per query block, spills): a kernel "
        "that moves more bytes than it must shows up as a lower MBU, which is the point.",
        "Quantized weights carry scales (a few percent for group-wise INT4) that belong in the numerator; speculative decoding moves "
        r"$q$ tokens per step, and the MBU stays per step, not per token.",
    ),
    tables=(
        Table("Every way, across servers (batch 16, 8K context)", (
            Row("", model="qwen3-235b-a22b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="mixtral-8x7b", hardware="h100-sxm", set={"tp": "2"}),
            Row("", model="deepseek-v3", hardware="h200", weights="fp8", set={"tp": "8", "assumed_bits_per_weight": "16"}),
            Row("", model="llama-3.1-8b", hardware="h100-sxm", set={"tp": "1"}),
        ), ("mbu", *POINTS),
            note="DeepSeek-V3 is served in FP8 and the dashboard assumes the BF16 checkpoint's 16 bits per weight. The wrong SKU is the "
                 "H100 PCIe's datasheet bandwidth on every row (the second chip)."),
        Table("What is counted moves with the batch (reference server)", tuple(
            Row("", set={"batch": str(b)}) for b in (1, 4, 16, 64, 256)
        ), ("experts_touched", "mbu", "points_all_params", "points_no_kv", "memory_fraction")),
        Table("The cache's share grows with the context (reference server)", tuple(
            Row("", set={"context": f"{t} token"}) for t in (1024, 8192, 32768, 131072)
        ), ("mbu", "points_no_kv", "points_prefill_in_time", "points_tp_cache_once", "memory_fraction")),
    ),
    claims=(
        Claim("A dashboard can be 30 points off: the worst single slip on the reference server that still reads at or below 1 (one above "
              "1 is caught however far off).", "points_worst_unflagged", THIRTY, at_least=True),
        Claim("Counting every parameter is 30 points off.", "points_all_params", THIRTY, at_least=True),
        Claim("Leaving out the KV cache is 30 points off.", "points_no_kv", THIRTY, at_least=True),
        Claim("Bytes in GiB read as GB are 30 points off.", "points_binary", THIRTY, at_least=True),
        Claim("The wrong weight width is 30 points off.", "points_weight_width", THIRTY, at_least=True),
        Claim("The achievable peak as denominator is 30 points off.", "points_achievable_peak", THIRTY, at_least=True),
        Claim("A step time with the prefills in it is 30 points off.", "points_prefill_in_time", THIRTY, at_least=True),
        Claim("The server's bytes over one GPU's bandwidth are 30 points off.", "points_tp_one_gpu", THIRTY, at_least=True),
        Claim("The cache counted once across the server is 30 points off.", "points_tp_cache_once", THIRTY, at_least=True),
        Claim("The kernels' summed time as the time base is 30 points off.", "points_kernel_time", THIRTY, at_least=True),
        Claim("A datasheet peak from the wrong SKU is 30 points off.", "points_wrong_sku", THIRTY, at_least=True),
        Claim("Per-token MBU under speculative decoding is inflated by the expected tokens per cycle.", "mbu_speculative_inflation",
              "expected_tokens", rel_tol=1e-12),
        Claim("MBU above 1 proves an accounting error: on the reference server at least one slip reads above 1, and the check catches it.",
              "slips_above_one", "1", rel_tol=0.0, at_least=True),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("qwen3-235b-a22b", "llama-3.1-70b", "mixtral-8x7b"),
    defaults={"tp": "8", "batch": "16"},
    second_hardware="h100-pcie",
    plots=(Plot("slips", "bars",
                "Each way a dashboard gets MBU wrong, as the value it reports, drawn from the true MBU of the reference server.",
                title="The true MBU is {mbu}; the worst slip a dashboard would not catch moves it by {points_worst_unflagged} points, one "
                      "that reads above 1 by {points_worst}",
                y=("mbu_all_params", "mbu_no_kv", "mbu_binary", "mbu_weight_width", "mbu_achievable_peak", "mbu_prefill_in_time",
                   "mbu_tp_one_gpu", "mbu_tp_cache_once"), base="mbu", log="", answer=True, labels={"mbu": "MBU a dashboard reports"}),),
    display_units={**sm.DISPLAY_UNITS, "bandwidth_achieved": "TB/s", "weight_bytes_all_params_gpu": "GB", "b_w_assumed": "B/parameter",
                   "prefill_flops_gpu": "Tflop", "prefill_bytes_gpu": "GB", "bytes_possible": "GB", "t_prefill": "ms", "t_step_with_prefill": "ms", "bytes_server": "GB",
                   "t_kernels_summed": "ms", "bytes_per_token_assumed": "GB/token", "token_rate_speculative": "token/s",
                   "share_step_outside_kernels": "%", "share_step_in_kernels": "%"},
)

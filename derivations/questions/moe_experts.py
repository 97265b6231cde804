"""How many experts does a MoE decode step pull through HBM, and where does the MoE cost advantage come from?

Takeaway: under uniform top-k routing a step of n = B*q tokens reads
E_read = E * (1 - (1 - k/E)^n) experts per MoE layer (variance
E p0 + E(E-1) p00 - E^2 p0^2, at most E p0 (1 - p0)): k at one token, half of
them at B_half = ln 2 / (q ln(E/(E - k))), a fraction phi at
ln(1/(1 - phi)) / (q ln(E/(E - k))). Past that the step streams nearly every
expert: as many bytes as a dense model of the TOTAL size, and up to
P_all/P_act times the bytes of a dense model of the same ACTIVE size. The
advantage is FLOPs: P_act instead of P_all per token, which pays only once the
step is compute-bound, at B_payoff = pi W_all / (kappa q beta P_act)
sequences, W_all = P_base b_w + L_moe E P_exp b_e the bytes of every weight (with
one format throughout, the ridge times P_all/P_act); from there the MoE costs what a dense
model of its active size costs. Skewed routing (a share s of the picks on a
fraction h of the experts) reads fewer experts at mid batch but loads the hot
ones s/h times the uniform share.

Assumes the shared step model (derivations.physics.stepmodel); closed forms at
datasheet peak and bandwidth, weight GEMMs only. A dense model has no routed
experts: the sheet refuses it (one line) rather than print trivial numbers.
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)
phi = S.add("phi", "1", r"\varphi", "share of the routed experts that counts as nearly all")
h_hot = S.add("h_hot", "1", r"h", "skewed routing: fraction of the experts that are hot")
s_hot = S.add("s_hot", "1", r"s", "skewed routing: share of the routing picks the hot experts receive")

n = sm.tokens.s
MIXTRAL, DEEPSEEK = "mixtral-8x7b", "deepseek-v3"

# --- experts read per step ------------------------------------------------------------------------

fraction = Step("experts_fraction", sm.experts.s / gl.E, "1",
                "The share of each MoE layer's routed experts the step reads.", latex=r"E_{\mathrm{read}}/E", title="Share of experts read")
var = Step("experts_touched_variance", pr.experts_touched_variance(n), "1",
           r"The count is a sum of $E$ indicators, expert read or not. One expert is missed by all $n$ tokens with $p_{0} = (1 - k_{E}/E)^{n}$, "
           r"two given experts both are with $p_{00} = ((E - k_{E})(E - k_{E} - 1)/(E (E - 1)))^{n}$ (a token picks $k_{E}$ distinct experts), "
           r"so the variance is $E p_{0} + E (E - 1) p_{00} - E^{2} p_{0}^{2}$.",
           latex=r"\sigma^{2}_{E}", title="Variance of the experts read")
var_bound = Step("experts_touched_variance_bound", pr.experts_touched_variance_bound(n), "1",
                 r"Misses are negatively correlated ($p_{00} \le p_{0}^{2}$): one token's picks crowd out others. "
                 r"So the variance is at most the binomial $E p_{0} (1 - p_{0})$, which is the expected count times $p_{0}$: the spread is below "
                 "the square root of the count, a few experts where hundreds are read.",
                 latex=r"\bar{\sigma}^{2}_{E}", title="Bound on the variance")
e_half = Step("E_half", gl.E / 2, "1", "Half of each MoE layer's routed experts.", latex=r"E/2", title="Half the experts")
#: the experts read at the decode-only step (no prompts in it): the batch solves below are in decode sequences
experts_decode = Step("experts_touched_decode", pr.experts_touched(gl.n_dp * gl.B * gl.q / gl.u_token), "1",
                      r"The experts read when the step carries only the decodes ($\sym{N_out} = 0$), $B q$ tokens per replica: the "
                      r"step model's count without prompts.",
                      latex=r"E_{\mathrm{read,dec}}", title="Experts read by the decodes alone", counts="experts")
b_half = solve("B_half", experts_decode, e_half, gl.B, "1",
               r"Set the expected count to half: $(1 - k_{E}/E)^{B q} = 1/2$, a logarithm. It depends only on $E$ and $k_{E}$: "
               "the same batch for every model with the same routing.",
               latex=r"B_{1/2}", title="Batch that reads half the experts")
e_most = Step("E_nearly_all", phi * gl.E, "1", r"The experts that count as nearly all: a share $\varphi$ of them.",
              latex=r"\varphi E", title="Nearly all the experts")
b_most = solve("B_nearly_all", experts_decode, e_most, gl.B, "1",
               r"The same logarithm for a share $\varphi$: $B q = \ln(1/(1 - \varphi)) / \ln(E/(E - k_{E}))$, "
               r"$\log_{2}(1/(1 - \varphi))$ times $\sym{B_half}$.",
               latex=r"B_{\varphi}", title="Batch that reads nearly all the experts",
               none="every expert is read only in the limit of infinite batch: no finite batch reads a share of 1")

# --- bytes per step, by component -----------------------------------------------------------------

expert_bytes = Step("expert_bytes", pr.mlp_params(gl.D, gl.F_moe, gl.m_E) * gl.u_param * gl.b_e, "B",
                    "One routed expert of one layer (gate, up and down projections): what each extra expert the batch touches costs. "
                    "A dense model has none.",
                    latex=r"W_{\mathrm{exp}}", title="Bytes of one routed expert")
b_attn = Step("bytes_attention", pr.weight_bytes(gl.P_attn), "B", "Attention projections of every layer, read once per step whatever the batch.",
              latex=r"W_{\mathrm{attn}}", title="Attention weights")
b_dense = Step("bytes_dense_mlp", pr.weight_bytes(gl.P_mlp), "B",
               "The MLPs of the dense layers (DeepSeek-V3 keeps a few at the bottom of the stack; Mixtral has none), read whole by every step.",
               latex=r"W_{\mathrm{mlp}}", title="Dense-layer MLP weights")
b_shared = Step("bytes_shared_experts", gl.L_moe * gl.E_s * pr.weight_bytes(gl.P_exp), "B",
                "Shared experts see every token, so every step reads all of them, like a dense MLP.",
                latex=r"W_{\mathrm{shared}}", title="Shared-expert weights")
b_router = Step("bytes_routers", gl.L_moe * pr.weight_bytes(gl.P_rtr), "B",
                r"Each MoE layer's router, $D \times E$ (and a shared expert's gate, where it has one): small, read every step.",
                latex=r"W_{\mathrm{rtr}}", title="Router weights")
b_head = Step("bytes_lm_head", pr.weight_bytes(gl.P_head), "B", "The LM head, a GEMM read every decode step.",
              latex=r"W_{\mathrm{head}}", title="LM head")
b_routed = Step("bytes_routed_experts", gl.L_moe * sm.experts.s * expert_bytes.s, "B",
                r"The only term that grows with the batch: each MoE layer reads $\sym{experts_touched}$ distinct experts.",
                latex=r"W_{\mathrm{routed}}", title="Routed experts the batch touches")
b_kv = Step("bytes_kv", gl.B * (sm.read.s * sm.kv_tok.s + gl.T * gl.s_idx + 2 * gl.s_st), "B",
            r"Every sequence reads what its layers read of its $T$ tokens (one copy of the whole model's cache; tensor parallelism may "
            r"replicate it, see $\sym{kv_bytes_step}$), and where the model has them its indexer keys and its recurrent state, read and written.",
            latex=r"W_{\mathrm{kv}}^{\mathrm{all}}", title="KV cache read per step")
b_step = Step("bytes_per_step", sm.weight_bytes.s + b_kv.s, "B",
              "Everything a step streams from HBM, over all GPUs: the weights it reads, which are the components above, and the KV cache.",
              latex=r"W_{\mathrm{step}}", title="Bytes per step")
#: the weight bytes of the active weights (a dense model of the MoE's active size) and of all of them (of its total size),
#: each component in the MoE's own formats: the comparisons isolate sparsity, not a format
W_ACTIVE = pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.k_E * gl.P_exp)
W_ALL = pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.E * gl.P_exp)
b_dense_eq = Step("bytes_dense_same_active", W_ACTIVE + b_kv.s, "B",
                  r"A dense model with as many GEMM weights as the MoE uses per token ($\sym{P_active}$) and the same attention reads all of them "
                  "every step, at any batch.",
                  latex=r"W_{\mathrm{dense}}", title="Bytes per step of a dense model of the same active size")
b_ratio = Step("bytes_ratio", b_step.s / b_dense_eq.s, "1",
               "What the MoE streams over what that dense model streams: 1 at one token, rising as the batch touches more experts.",
               latex=r"W_{\mathrm{step}}/W_{\mathrm{dense}}", title="Bytes over a dense model of the same active size")
w_ratio = Step("weights_ratio", sm.params.s / gl.P_active, "1",
               r"The same for the weights alone: from 1 at one token towards $\sym{params_all}$ over $\sym{P_active}$.",
               latex=r"P_{\mathrm{read}}/P_{\mathrm{act}}", title="Weights read over the active weights")

# --- where the advantage comes from (weight GEMMs, datasheet peak and bandwidth) -------------------

p_all = Step("params_all", pr.params_all_experts(), "parameter",
             "The GEMM weights with every expert read: what a dense model of the same total size would multiply by per token.",
             latex=r"P_{\mathrm{all}}", title="GEMM weights, all experts")
flops_ratio = Step("flops_ratio", p_all.s / gl.P_active, "1",
                   "FLOPs per token of a dense model of the total size over the MoE's: the whole of the MoE's arithmetic advantage.",
                   latex=r"P_{\mathrm{all}}/P_{\mathrm{act}}", title="FLOP advantage per token")
t_moe = Step("t_moe", pr.roofline_time(pr.gemm_flops(gl.P_active), sm.weight_bytes.s), "s",
             "The MoE's weight GEMMs on the roofline: the weights the batch touches, or the active FLOPs of every token.",
             latex=r"t_{\mathrm{MoE}}", title="MoE weight GEMMs")
t_act = Step("t_dense_active", pr.roofline_time(pr.gemm_flops(gl.P_active), W_ACTIVE), "s",
             "A dense model of the same active size: the same FLOPs, but only its own weights to read.",
             latex=r"t_{\mathrm{act}}", title="Dense model of the same active size")
t_tot = Step("t_dense_total", pr.roofline_time(pr.gemm_flops(p_all.s), W_ALL), "s",
             "A dense model of the same total size: every weight read and multiplied by every token.",
             latex=r"t_{\mathrm{tot}}", title="Dense model of the same total size")
cost_act = Step("cost_vs_active", t_moe.s / t_act.s, "1",
                "The MoE's price against a dense model of its active size: its extra expert bytes while memory-bound, 1 once compute-bound.",
                latex=r"t_{\mathrm{MoE}}/t_{\mathrm{act}}", title="Cost over a dense model of the same active size")
adv_tot = Step("advantage_vs_total", t_tot.s / t_moe.s, "1",
               "The MoE's gain against a dense model of its total size: large at one token (fewer bytes), near 1 once the batch reads every expert "
               "and both are memory-bound, back to the FLOP ratio once the MoE is compute-bound.",
               latex=r"t_{\mathrm{tot}}/t_{\mathrm{MoE}}", title="Advantage over a dense model of the same total size")
t_cmp_act = Step("t_compute_active", pr.compute_time(pr.gemm_flops(gl.P_active)), "s",
                 r"The MoE's GEMM FLOPs: $\kappa \sym{P_active}$ per token.", latex=r"t_{\mathrm{cmp}}^{\mathrm{act}}", title="MoE compute time")
t_mem_all = Step("t_memory_all", pr.memory_time(W_ALL), "s",
                 "Streaming every expert: what the MoE reads once the batch touches them all.", latex=r"t_{\mathrm{mem}}^{\mathrm{all}}",
                 title="Time to stream every expert")
b_payoff = solve("B_payoff", t_cmp_act, t_mem_all, gl.B, "1",
                 r"Where the step's GEMM FLOPs take as long as streaming every expert: the ridge batch times $\sym{params_all}$ over $\sym{P_active}$. "
                 "This is the whole step's roofline; each expert's own GEMM, with only its share of the batch's tokens, stays memory-bound "
                 "to a larger batch. "
                 "From here its step costs what a dense model of its active size costs, and the FLOP ratio is its advantage over a dense model of its total size.",
                 latex=r"B_{\mathrm{pay}}", title="Batch where the MoE pays off")
tok_payoff = Step("tokens_payoff", b_payoff.s * gl.q, "token", "The same in tokens per step.", latex=r"n_{\mathrm{pay}}",
                  title="Tokens per step where the MoE pays off")
cov_payoff = Step("coverage_at_payoff", pr.experts_touched(b_payoff.s * gl.q / gl.u_token) / gl.E, "1",
                  r"Check of the closed form, which takes every expert as read: the share read at $\sym{B_payoff}$ (1 to many digits).",
                  latex=r"E_{\mathrm{read}}/E\,|_{\mathrm{pay}}", title="Share of experts read at the payoff batch")
t_cmp_tot = Step("t_compute_total", pr.compute_time(pr.gemm_flops(p_all.s)), "s",
                 "The dense model of the total size multiplies every weight by every token.", latex=r"t_{\mathrm{cmp}}^{\mathrm{tot}}",
                 title="Compute time of the dense model of the total size")
b_ridge = solve("B_dense_ridge", t_cmp_tot, t_mem_all, gl.B, "1",
                "Where a dense model turns compute-bound: the ridge batch, whatever its size. Between the batch that reads every expert and this one "
                "the MoE has no advantage over a dense model of its total size; beyond it the advantage grows with the batch.",
                latex=r"B^{*}", title="Batch where a dense model turns compute-bound")

# --- skewed routing ---------------------------------------------------------------------------------

hot_n = gl.E * h_hot
cold_n = gl.E * (1 - h_hot)
touched_skew = Step("experts_touched_skewed",
                    pr.experts_touched(n, hot_n, sp.Min(hot_n, gl.k_E * s_hot)) + pr.experts_touched(n, cold_n, sp.Min(cold_n, gl.k_E * (1 - s_hot))),
                    "1",
                    r"Two groups, each uniform inside: $h E$ hot experts take a share $s$ of the $k_{E}$ picks per token, the rest take $1 - s$ "
                    r"(a hot expert is picked by a token with probability $\min(1, k_{E} s/(h E))$). Each group is the uniform formula with its own "
                    r"$E$ and $k_{E}$. Equal to the uniform count when $s = h$.",
                    latex=r"E_{\mathrm{read}}^{\mathrm{skew}}", title="Experts read under skewed routing")
skew_ratio = Step("skew_ratio", touched_skew.s / sm.experts.s, "1",
                  "Skew reads fewer distinct experts at the same batch (the hot ones are hit again and again): the bytes it saves at mid batch.",
                  latex=r"E_{\mathrm{read}}^{\mathrm{skew}}/E_{\mathrm{read}}", title="Skewed over uniform experts read")
w_skew = Step("weight_bytes_skewed", pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.P_exp * touched_skew.s), "B",
              "The weight bytes of the step under the skewed routing.", latex=r"W^{\mathrm{skew}}", title="Weight bytes under skewed routing")
hot_load = Step("hot_expert_load", sp.Min(hot_n, gl.k_E * s_hot) / hot_n / (gl.k_E / gl.E), "1",
                r"Tokens a hot expert receives over the uniform share $B q k_{E}/E$: $s/h$ while no hot expert is picked by every token. "
                "Once compute-bound, or with experts spread over GPUs, the step waits for the hottest expert.",
                latex=r"\lambda_{\mathrm{hot}}", title="Load on a hot expert over the uniform share")

STEPS = (
    sm.tokens, sm.experts, experts_decode, fraction, var, var_bound, e_half, b_half, e_most, b_most,
    sm.params, sm.weight_bytes, expert_bytes, b_attn, b_dense, b_shared, b_router, b_head, b_routed,
    sm.kv_tok, sm.kept, sm.read, b_kv, b_step, b_dense_eq, b_ratio, w_ratio,
    *(s for s in sm.DECODE_STEP if s not in (sm.tokens, sm.experts, sm.params, sm.weight_bytes, sm.kv_tok, sm.kept, sm.read)), *sm.MEMORY_FIT,
    p_all, flops_ratio, t_moe, t_act, t_tot, cost_act, adv_tot, t_cmp_act, t_mem_all, b_payoff, tok_payoff, cov_payoff, t_cmp_tot, b_ridge,
    touched_skew, skew_ratio, w_skew, hot_load,
)

BATCHES = (1, 2, 4, 8, 16, 64, 256, 1024)

DERIVATION = derivation(
    "moe-experts",
    "Experts touched per MoE decode step, and where the MoE advantage comes from",
    "Active parameters describe one token. A decode step serves a batch, and the batch decides how many experts get pulled through HBM. "
    "The answer computes that number and shows where the MoE cost advantage actually comes from.",
    S,
    STEPS,
    ("experts_touched", "B_half", "bytes_per_step", "expert_bytes", "B_nearly_all", "B_payoff"),
    argument=(
        "experts_touched", "experts_touched_variance", "B_half", "B_nearly_all", "expert_bytes", "bytes_routed_experts",
        "bytes_per_step", "bytes_ratio", "flops_ratio", "B_payoff", "B_dense_ridge",
    ),
    body_tables=(4, 5),
    answer=(
        "At batch {batch} each MoE layer reads {experts_touched}; half its experts are read by a batch of {B_half} and nearly all by "
        "{B_nearly_all}, whatever the model's size.",
        "A step streams {bytes_per_step}, each expert read adding {expert_bytes} per layer: past a few dozen tokens a MoE step "
        "reads nearly all its weights.",
        "The advantage is FLOPs, not bytes: it pays only once the step's FLOPs take as long as streaming every expert, at a batch "
        "of {B_payoff}.",
    ),
    assumptions=(
        r"Uniform top-$k$ routing: every token picks $k_{E}$ distinct experts of $E$, each set equally likely, independently of the other tokens. "
        "The expected count is the one the shared step model uses.",
        r"A step of $B$ sequences pushes $B q$ tokens through every MoE layer; batch crossovers count sequences, the payoff also tokens per step.",
        "Bytes per step are whole-model bytes on all GPUs together, one copy of the KV cache; the step time is per GPU with the printed tensor parallelism.",
        "The default setup is one people run: Mixtral 8x7B in BF16 (93.4 GB of weights) does not fit one 80 GB H100, so the sheet splits it over "
        "two H100 SXMs with tensor parallelism 2, as vLLM deployments of it do (`vllm serve mistralai/Mixtral-8x7B-Instruct-v0.1 --tensor-parallel-size 2`).",
        "The dense models compared have the MoE's attention and LM head: one with as many GEMM weights as the MoE uses per token (same active size), "
        "one with as many as all its experts (same total size).",
        r"The advantage section compares weight GEMMs only, at the datasheet peak and bandwidth, on the same GPUs; attention and the KV cache cost "
        "the same for all three models and are left out there.",
        r"Skewed routing is a stated two-group model: a fraction $h$ of the experts takes a share $s$ of the picks; it is an assumption to size the effect, "
        "not a measurement.",
        "A dense model has no routed experts: the sheet refuses it rather than print one expert read at every batch.",
    ),
    takeaways=(
        "At this batch each MoE layer reads {experts_touched} experts ({experts_fraction} of them) with variance {experts_touched_variance}, "
        "at most {experts_touched_variance_bound}: the spread is below the square root of the count, so the expectation is what a step reads.",
        r"Half the experts are read by {B_half} sequences and the share $\varphi$ by {B_nearly_all}: a logarithm in "
        r"$E/(E - k_{E})$, so the answer depends on the routing, not the size of the model.",
        "A step streams {bytes_per_step}, {bytes_ratio} times what a dense model of the same active size would; each extra expert costs {expert_bytes} per layer.",
        "The advantage is FLOPs: a dense model of the total size does {flops_ratio} times the arithmetic per token. It pays only once the MoE is compute-bound "
        "with every expert read, at {B_payoff} sequences ({tokens_payoff} per step); a dense model turns compute-bound at {B_dense_ridge} sequences.",
        "Skewed routing (the inputs below) reads {experts_touched_skewed} experts at this batch where uniform routing reads {experts_touched} "
        "(the same at one token; the skew table shows mid batch, where they differ most), and loads each hot expert {hot_expert_load} times the uniform share.",
    ),
    scoring=(
        r"Says that active parameters are per token: a step of $B q$ tokens reads the union of their experts, not $k_{E}$ of them.",
        r"Derives $E (1 - (1 - k_{E}/E)^{B q})$ from the chance that an expert is missed by every token, and checks its ends: $k_{E}$ at one token, $E$ in the limit.",
        "Gives the spread (or the binomial bound) and notes that the variance stays below the count itself, so the expected count is what a step costs.",
        "Solves the half and nearly-all batches with a logarithm in $E/(E - k_{E})$ and sees how few tokens it takes: a handful for Mixtral, "
        "a few hundred at most for fine-grained MoE (many small experts).",
        "Splits the bytes per step into attention, dense layers, shared experts, routers, LM head and the routed experts touched; only the last grows with the batch.",
        "Compares with both dense baselines: more bytes than a dense model of the same active size at any batch above one token; "
        "the same bytes as a dense model of the same total size once every expert is read.",
        "Puts the advantage where it is: FLOPs per token, which pay only once compute-bound, at the ridge batch times the total-over-active ratio.",
        "Knows what skew does: fewer distinct experts at mid batch (fewer bytes), but hot experts that gate the step once compute-bound or spread over GPUs.",
    ),
    limits=(
        "Real routers are not uniform: per-batch load varies, and load-balancing losses or bias terms (DeepSeek-V3) only keep it near uniform on average.",
        "DeepSeek-V3 limits each token to experts on at most four nodes (group-limited routing); the distinct count per layer is the same in expectation, "
        "but the spread over GPUs is not.",
        "With expert parallelism each GPU reads only its share of the experts the group touches, and two all-to-alls per MoE layer replace the "
        "tensor-parallel all-reduce; under skewed routing the step waits for the GPU with the most tokens, which the uniform model does not show.",
        r"Prefill of any real prompt reads every expert ($S$ tokens in one step); see @prefill-decode-crossover.",
        "A routed expert sees only its share of the tokens, so its GEMM turns compute-bound later than the dense parts (@ridge-coincidence).",
        r"The closed-form payoff takes every expert as read; $\sym{coverage_at_payoff}$ checks that this holds there.",
    ),
    tables=(
        Table("Experts read as the batch grows", tuple(
            Row("", model=m, set={"batch": str(b)}) for m in (MIXTRAL, DEEPSEEK) for b in BATCHES
        ), ("experts_touched", "experts_fraction", "experts_touched_variance", "experts_touched_variance_bound", "weights_ratio")),
        Table("Where the bytes of a step go", tuple(
            Row("", model=m, set={"batch": str(b)}) for m, b in ((MIXTRAL, 1), (MIXTRAL, 64), (DEEPSEEK, 1), (DEEPSEEK, 64), (DEEPSEEK, 256))
        ), ("bytes_attention", "bytes_dense_mlp", "bytes_shared_experts", "bytes_routers", "bytes_lm_head", "bytes_routed_experts")),
        Table("Bytes per step against a dense model of the same active size", tuple(
            Row("", model=m, set={"batch": str(b)}) for m, b in ((MIXTRAL, 1), (MIXTRAL, 64), (DEEPSEEK, 1), (DEEPSEEK, 64), (DEEPSEEK, 256))
        ), ("bytes_kv", "bytes_per_step", "bytes_dense_same_active", "bytes_ratio")),
        Table("Where the advantage comes from: the MoE against both dense baselines", tuple(
            Row("", model=m, set={"batch": str(b)}) for m in (MIXTRAL, DEEPSEEK) for b in (1, 16, 256, 1024, 4096, 16384)
        ), ("t_moe", "cost_vs_active", "advantage_vs_total", "flops_ratio"),
            note="Weight GEMMs only, datasheet peak and bandwidth, one GPU's worth of each model (the ratios do not depend on how many GPUs share it)."),
        Table("Across MoE models", tuple(
            Row("", model=m) for m in (MIXTRAL, "mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v2-lite", DEEPSEEK)
        ), ("B_half", "B_nearly_all", "expert_bytes", "flops_ratio", "B_payoff", "coverage_at_payoff")),
        Table("Across hardware: the payoff moves with the ridge", tuple(
            Row("", hardware=h) for h in ("a100-sxm-80gb", "h100-sxm", "h200", "b200", "mi300x", "l40s", "tpu-v6e")
        ), ("B_dense_ridge", "B_payoff", "tokens_payoff")),
        Table("Skewed routing against uniform (DeepSeek-V3)", tuple(
            Row("", model=DEEPSEEK, set={"batch": str(b), "hot_experts": h, "hot_share": s})
            for b in (16, 64) for h, s in (("0.25", "0.25"), ("0.25", "0.5"), ("0.25", "0.8"), ("0.1", "0.5"))
        ), ("experts_touched", "experts_touched_skewed", "skew_ratio", "hot_expert_load"),
            note=r"$s = h$ is uniform routing. A share $s$ of the picks on a fraction $h$ of the experts."),
        Table("Expert parallelism: what each GPU reads (DeepSeek-V3 on H800)", sm.LAYOUT_ROWS,
              ("gpus", "experts_touched", "weight_bytes_gpu", "alltoall_bytes", "t_alltoall", "t_step", "memory_fraction"), note=sm.LAYOUT_NOTE),
    ),
    claims=(
        Claim("Active parameters describe one token: at one token per step the MoE reads exactly its active weights.",
              "weights_ratio", "1", rel_tol=1e-12, where=Row(r"$B = 1$", set={"batch": "1"})),
        Claim("Once the batch reads nearly every expert, the MoE streams about as many weight bytes as a dense model of its total size: "
              "its bytes advantage is gone (within 5%).",
              "advantage_vs_total", "1", where=Row(r"DeepSeek-V3, $B = 160$", model=DEEPSEEK, set={"batch": "160"})),
        Claim("The advantage comes from FLOPs at large batch: past the payoff batch it is the FLOP ratio (DeepSeek-V3).",
              "advantage_vs_total", "flops_ratio", rel_tol=1e-9, where=Row(r"DeepSeek-V3, $B = 16{,}384$", model=DEEPSEEK, set={"batch": "16384"})),
        Claim("The advantage comes from FLOPs at large batch: past the payoff batch it is the FLOP ratio (Mixtral 8x7B).",
              "advantage_vs_total", "flops_ratio", rel_tol=1e-9, where=Row(r"Mixtral 8x7B, $B = 16{,}384$", model=MIXTRAL, set={"batch": "16384"})),
    ),
    inputs=(
        Input("nearly_all", phi, "0.99", "1", "share of the routed experts that counts as nearly all", "fraction"),
        Input("hot_experts", h_hot, "0.25", "1", "skewed routing: fraction of the experts that are hot (illustrative)", "fraction"),
        Input("hot_share", s_hot, "0.5", "1", "skewed routing: share of the routing picks that go to the hot experts (illustrative)", "fraction"),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=(MIXTRAL, DEEPSEEK),
    # Mixtral 8x7B's 93.4 GB of BF16 weights need two 80 GB H100s (issue 26: a sheet's default is a setup people run)
    defaults={"tp": "2"},
    plots=(Plot("experts", "sweep",
                r"Routed experts read per MoE layer against batch under uniform top-$k$ routing: $k_{E}$ at one sequence, half of them at "
                r"$\sym{B_half}$, nearly all at $\sym{B_nearly_all}$.",
                title="A batch of {B_half} sequences already reads half the routed experts of each MoE layer, and a batch of "
                      "{B_nearly_all} nearly all of them",
                x="batch", y=("experts_touched",), span=("1", "1024"), hlines=("E_half", "E_nearly_all"), vlines=("B_half", "B_nearly_all"), log="x",
                answer=True),),
    display_units={**sm.DISPLAY_UNITS, "expert_bytes": "MB", "bytes_attention": "GB", "bytes_dense_mlp": "GB", "bytes_shared_experts": "GB",
                   "bytes_routers": "MB", "bytes_lm_head": "GB", "bytes_routed_experts": "GB", "bytes_kv": "GB", "bytes_per_step": "GB",
                   "bytes_dense_same_active": "GB", "weight_bytes_skewed": "GB", "t_moe": "ms", "t_dense_active": "ms", "t_dense_total": "ms",
                   "t_compute_active": "ms", "t_memory_all": "ms", "t_compute_total": "ms", "params_all": "parameter", "tokens_payoff": "token"},
)

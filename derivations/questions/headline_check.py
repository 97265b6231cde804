"""Is a tokens-per-second headline physics or marketing?

Takeaway: one division. A user's decode step moves the bytes of the shared
step model (the weights the step reads plus that user's KV cache, per GPU)
and yields q tokens, so a claim of tau tokens/s per user needs
beta_need = W_GPU * tau / q. Above the datasheet bandwidth the claim is not
physical as stated, and each unstated condition that would make it so is
sized by solving the same equation, beta_need = beta, for one variable:

- quantization: the weight width b_w (reported in bits per weight; a MoE
  model's routed experts held at their own width b_e);
- aggregate over a batch: the batch B, when tau counts every user's tokens;
- more GPUs: the tensor-parallel degree n_TP;
- speculative decoding: the accepted tokens per verification step q;
- a short context: the context T;
- a sparse peak: the FLOP rate the claim needs over the dense peak.

Assumes the shared step model of derivations.physics.stepmodel (uniform top-k
routing, weights split n_TP ways, cached streams split while there are more of
them than GPUs); each condition is sized alone, the others held at the
printed inputs. The default claim is illustrative: the teaser states no number.
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)
tau = S.add("tau_claim", "token/s", r"\tau_{\mathrm{claim}}", "claimed decode speed per user (one stream)")
f_sparse = S.add("f_sparse", "1", r"f_{\mathrm{sparse}}", "sparse headline peak over the dense peak")

#: The teaser states no number; this default is an illustrative round figure of the kind vendors headline.
DEFAULT_CLAIM = "500 token/s"

# --- the one division ---------------------------------------------------------------------------

bw_ds = Step("bandwidth_datasheet", gl.beta, "B/s",
             "The ceiling every claim is held against: the datasheet HBM bandwidth of one GPU, not an achieved figure.",
             latex=r"\beta_{\mathrm{DS}}", title="Datasheet bandwidth")
bytes_tok = Step("bytes_per_token", sm.bytes_gpu.s / gl.q, "B/token",
                 r"Each step moves $\sym{bytes_per_gpu}$ through every GPU and gives each user $q$ tokens: the weights the step reads "
                 "and each sequence's own KV cache, per token delivered.",
                 latex=r"w_{\mathrm{tok}}", title="Bytes per token, per GPU")
bw_need = Step("bandwidth_needed", bytes_tok.s * tau, "B/s",
               "The claim times the bytes each of its tokens costs: the bandwidth each GPU would have to deliver.",
               latex=r"\beta_{\mathrm{need}}", title="Bandwidth the claim needs")
ratio = Step("bandwidth_ratio", bw_need.s / gl.beta, "1",
             "The one division. Above 1 the claim needs more bandwidth than the chip has, so it cannot be true as stated; "
             "at or below 1 it is physical.",
             latex=r"\rho_{\beta}", title="Needed over datasheet bandwidth")
ratio_ach = Step("bandwidth_ratio_achieved", bw_need.s / (gl.eta_bw * gl.beta), "1",
                 r"The same against the bandwidth streaming kernels reach in practice: between $\eta_{\mathrm{bw}}$ and 1 on the datasheet ratio "
                 "a claim is physical but beyond what real kernels deliver.",
                 latex=r"\rho_{\beta,\eta}", title="Needed over achieved bandwidth")
t_claim = Step("t_claim", gl.q / tau, "s",
               r"The step time the claim implies: one step per $q$ tokens of each user.", latex=r"t_{\mathrm{claim}}",
               title="Step time the claim implies")
per_user = Step("tokens_per_user_modelled", sm.throughput.s / gl.B, "token/s",
                "What the shared step model gives each user at the achieved rates, with the all-reduces and the overheads per layer and per step.",
                latex=r"\tau_{\mathrm{model}}", title="Speed per user in the step model")
over_model = Step("claim_over_model", tau / per_user.s, "1",
                  "The claim over the modelled speed: how much a vendor's stack would have to beat the printed efficiencies by.",
                  latex=r"\tau_{\mathrm{claim}}/\tau_{\mathrm{model}}", title="Claim over the modelled speed")

# --- quantization: the widest weights that fit --------------------------------------------------

bw_max = solve("b_w_max", bw_need, bw_ds, gl.b_w, "B/parameter",
               r"Solve the division for the bytes per weight: the datasheet bandwidth over the claim is the byte budget of a step, "
               r"the KV cache takes its share first, and the weights read share the rest (a MoE model's routed experts stay at "
               r"$\sym{b_e}$: this is the width of the weights every token reads).",
               latex=r"b_{w}^{\max}", keep=(sm.experts, sm.kv_step), title="Widest weight format that fits",
               none="the KV cache alone needs more than the datasheet bandwidth at this claim and context, so no weight width makes it fit "
                    "(a shorter context or a smaller KV format has to come first)")
bits = Step("max_bits_per_weight", bw_max.s * gl.u_param / gl.u_bit, "1",
            "The same in bits: the widest weights (group scales included) with which the claim is physical, the KV cache unchanged.",
            latex=r"n_{\mathrm{bit}}^{\max}", title="Widest weights in bits")

# --- aggregate over a batch ---------------------------------------------------------------------

w_all = Step("weight_bytes_all_experts", pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.E * gl.P_exp), "B",
             "The most any step reads: every routed expert of every MoE layer (for a dense model, its weights).",
             latex=r"W_{\mathrm{all}}", title="Weight bytes with every expert read")
w_top = Step("weight_bytes_top_k", pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.k_E * gl.P_exp), "B",
             r"The least any step reads: the top-$k$ experts of one token (for a dense model, its weights).",
             latex=r"W_{\mathrm{top}}", title="Weight bytes with the top-k experts only")
bw_agg = Step("bandwidth_aggregate", (pr.tp_split(w_all.s) + sm.kv_step.s) * tau / (gl.B * gl.q), "B/s",
              r"Read as the sum over the $B$ users of a batch, the claim grants a step $B q$ tokens: the weights amortise over the batch, "
              "each user's KV cache does not. Every expert is counted as read.",
              latex=r"\beta_{\mathrm{agg}}", title="Bandwidth for an aggregate claim")
b_agg = solve("B_aggregate", bw_agg, bw_ds, gl.B, "1",
              "The batch at which the claim, read as an aggregate, fits the datasheet bandwidth. With every expert counted as read it suffices "
              "for any model; for a dense model it is exact.",
              latex=r"B_{\mathrm{agg}}", keep=(w_all, sm.kv_tok_gpu), title="Batch that makes an aggregate claim",
              none="each user's own KV cache, read every step, needs more than the datasheet bandwidth at this rate, and the cache does not "
                   "amortise over users: no batch makes the aggregate claim")
bw_agg_top = Step("bandwidth_aggregate_top_k", (pr.tp_split(w_top.s) + sm.kv_step.s) * tau / (gl.B * gl.q), "B/s",
                  r"The same with each MoE layer reading only the top-$k$ experts: the least bandwidth any batch could need.",
                  latex=r"\beta_{\mathrm{agg,top}}", title="Aggregate bandwidth, top-k experts only")
b_agg_min = solve("B_aggregate_min", bw_agg_top, bw_ds, gl.B, "1",
                  r"No smaller batch can make the aggregate claim: the batch does read at least the top-$k$ experts (equal to "
                  r"$\sym{B_aggregate}$ for a dense model).",
                  latex=r"B_{\mathrm{agg,min}}", keep=(w_top, sm.kv_tok_gpu), title="Least batch for an aggregate claim",
                  none="each user's own KV cache, read every step, needs more than the datasheet bandwidth at this rate: no batch makes the "
                       "aggregate claim")
per_user_agg = Step("tokens_per_user_aggregate", tau / b_agg.s, "token/s",
                    "What each of those users would see: the headline shared out.",
                    latex=r"\tau_{\mathrm{agg}}", title="Speed per user of an aggregate claim")
capacity = Step("hbm_capacity", gl.C_mem, "B", "What one GPU holds.", latex=r"C_{\mathrm{GPU}}", title="HBM capacity")
b_fit = solve("B_fits", sm.memory_gpu, capacity, gl.B, "1",
              "The largest batch whose weights and caches fit in memory; an aggregate claim "
              "needs its batch to be no larger.",
              latex=r"B_{\mathrm{fit}}", keep=(sm.kv_tok_gpu,), title="Largest batch that fits", rounds="down",
              none="the weights alone do not fit on this many GPUs, so no batch fits")

# --- more GPUs ----------------------------------------------------------------------------------

kv_all = Step("kv_bytes_step_all", gl.B * sm.read.s * sm.kv_tok.s, "B",
              "The KV cache the step reads over the whole tensor-parallel group.", latex=r"W_{\mathrm{kv,all}}",
              title="KV-cache bytes per step, all GPUs")
bw_split = Step("bandwidth_split", (pr.tp_split(sm.weight_bytes.s) + pr.tp_split(kv_all.s)) * tau / gl.q, "B/s",
                "Per GPU while each GPU holds its share of the cached streams: weights and cache both divide.",
                latex=r"\beta_{\mathrm{split}}", title="Per-GPU bandwidth, cache split")
n_split = solve("n_gpus_split", bw_split, bw_ds, gl.n_tp, "1",
                "The GPU count if weights and cache both divided: right while the GPUs are no more than the cached streams.",
                latex=r"n_{\mathrm{split}}", keep=(sm.weight_bytes, kv_all), title="GPUs needed, cache split")
kv_one = Step("kv_bytes_step_one_stream", gl.B * sm.read.s * pr.kv_bytes_per_token_per_gpu(degree=gl.n_kv), "B",
              "Past as many GPUs as cached streams, each GPU keeps one whole stream (a KV head, or MLA's whole latent): the cache stops dividing.",
              latex=r"W_{\mathrm{kv,1}}", title="KV-cache bytes per step, one stream per GPU")
bw_rep = Step("bandwidth_replicated", (pr.tp_split(sm.weight_bytes.s) + kv_one.s) * tau / gl.q, "B/s",
              "Per GPU with one cached stream on each: only the weights divide.",
              latex=r"\beta_{\mathrm{rep}}", title="Per-GPU bandwidth, one stream each")
n_rep = solve("n_gpus_replicated", bw_rep, bw_ds, gl.n_tp, "1",
              "The GPU count if each GPU kept one whole stream: right once the GPUs outnumber the cached streams.",
              latex=r"n_{\mathrm{rep}}", keep=(sm.weight_bytes, kv_one), title="GPUs needed, one stream each",
              none="one cached stream per GPU already needs more than the datasheet bandwidth at this claim, and more GPUs do not divide it: "
                   "no GPU count makes it")
gpus = Step("gpus_needed", sp.Max(n_split.s, n_rep.s), "1",
            r"The larger of the two is where the per-GPU bytes, cache split while it can be and replicated after, meet the budget; "
            r"whole GPUs round up (a layout whose degree does not divide the model's heads would need the next one that does).",
            latex=r"n_{\mathrm{GPU}}", title="GPUs needed", counts="GPUs", rounds="up")

# --- speculative decoding -----------------------------------------------------------------------

w_one = Step("weight_bytes_one_token", pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.P_exp * pr.experts_touched(gl.B)), "B",
             "What a plain decode step of this batch reads, one token per sequence: the experts its tokens touch.",
             latex=r"W_{1}", title="Weight bytes of a plain decode step")
bw_spec = Step("bandwidth_speculative", (pr.tp_split(w_one.s) + sm.kv_step.s) * tau / gl.q, "B/s",
               r"A verification step reads the weights and caches once and yields $q$ accepted tokens per user; here the extra tokens "
               "reuse the experts of a plain step.",
               latex=r"\beta_{\mathrm{spec}}", title="Bandwidth with speculative decoding")
q_spec = solve("q_speculative", bw_spec, bw_ds, gl.q, "token",
               "The accepted tokens per verification step the claim needs: a lower bound for a MoE model, whose extra tokens touch "
               "more experts; exact for a dense one.",
               latex=r"q_{\mathrm{spec}}", keep=(w_one, sm.kv_step), title="Accepted tokens per step needed")
bw_spec_all = Step("bandwidth_speculative_all_experts", (pr.tp_split(w_all.s) + sm.kv_step.s) * tau / gl.q, "B/s",
                   "The same with every expert read.", latex=r"\beta_{\mathrm{spec,all}}",
                   title="Bandwidth with speculative decoding, every expert read")
q_spec_all = solve("q_speculative_all_experts", bw_spec_all, bw_ds, gl.q, "token",
                   "Enough accepted tokens per step whatever the routing: the upper bound for a MoE model.",
                   latex=r"q_{\mathrm{spec,all}}", keep=(w_all, sm.kv_step), title="Accepted tokens per step, every expert read")

# --- a shorter context --------------------------------------------------------------------------

bw_top = Step("bandwidth_top_k", (pr.tp_split(w_top.s) + sm.kv_step.s) * tau / gl.q, "B/s",
              r"The per-user bandwidth with each MoE layer reading only the top-$k$ experts of one token: what a step of one sequence "
              r"needs, and the least any batch needs (for a dense model, $\sym{bandwidth_needed}$ itself).",
              latex=r"\beta_{\mathrm{top}}", title="Bandwidth the claim needs, top-k experts only")
t_fits = solve("T_fits", bw_top, bw_ds, gl.T, "token",
               "The longest context at which the claim fits: the cache shrinks with the context, the weights do not. Exact for a dense "
               "model and for any model at batch 1; a larger MoE batch reads more experts, and then fits only a shorter context.",
               latex=r"T_{\mathrm{fit}}", keep=(w_top, sm.kv_tok_gpu), title="Longest context that fits", rounds="down",
               none="no context meets the claim exactly: the weights alone need more than the datasheet bandwidth at this claim (no context "
                    "is short enough), or every layer attends through a window that caps the cache before it reaches the budget")

# --- a sparse peak ------------------------------------------------------------------------------

flops_tok = Step("flops_per_token_gpu", (sm.flops_gemm.s + sm.flops_attn.s) / (gl.B * gl.q), "flop/token",
                 "Each token's weight and attention FLOPs on one GPU, whatever the batch.",
                 latex=r"f_{\mathrm{tok}}", title="FLOPs per token, per GPU")
compute_ratio = Step("compute_ratio", flops_tok.s * tau / gl.pi, "1",
                     r"The claim's FLOP rate over the dense peak, read as an aggregate: the one check a batch cannot escape. "
                     r"A per-user claim at batch $B$ needs $B$ times this.",
                     latex=r"\rho_{\pi}", title="Needed over dense peak")
compute_ratio_sparse = Step("compute_ratio_sparse", compute_ratio.s / f_sparse, "1",
                            "The same over the sparse headline, which only a pruned model reaches and which buys no bandwidth.",
                            latex=r"\rho_{\pi,\mathrm{sparse}}", title="Needed over the sparse headline")

STEPS = (*sm.BYTES_STEPS, bw_ds, bytes_tok, bw_need, ratio, ratio_ach, t_claim, *sm.DECODE_STEP[len(sm.BYTES_STEPS):], per_user, over_model, *sm.MEMORY_FIT,
         bw_max, bits,
         w_all, w_top, bw_agg, b_agg, bw_agg_top, b_agg_min, per_user_agg, capacity, b_fit,
         kv_all, bw_split, n_split, kv_one, bw_rep, n_rep, gpus,
         w_one, bw_spec, q_spec, bw_spec_all, q_spec_all,
         bw_top, t_fits,
         flops_tok, compute_ratio, compute_ratio_sparse)

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3")

DERIVATION = derivation(
    "headline-check",
    "Checking a tokens-per-second headline",
    "One division tells you whether a headline number is physics or marketing. The answer runs it, then works out which "
    "unstated condition would make the claim true and what to ask the vendor for.",
    S,
    STEPS,
    ("bandwidth_needed", "bandwidth_ratio", "max_bits_per_weight"),
    inputs=(
        Input("claimed_tokens_per_s", tau, DEFAULT_CLAIM, "token/s",
              "claimed decode speed per user; the default is illustrative, since the teaser states no number: set the vendor's figure"),
        Input("sparse_peak_factor", f_sparse, "2", "1",
              "datasheet sparse headline over the dense peak (2 for the 2:4 structured-sparsity figures of NVIDIA and AMD)"),
    ),
    argument=(
        "bytes_per_token", "bandwidth_needed", "bandwidth_ratio", "bandwidth_ratio_achieved", "t_step", "claim_over_model",
        "b_w_max", "max_bits_per_weight", "B_aggregate", "B_fits", "gpus_needed", "q_speculative", "compute_ratio_sparse",
    ),
    body_tables=(0, 1),
    answer=(
        "The claim needs {bandwidth_needed} of HBM bandwidth per GPU, {bandwidth_ratio} times the datasheet figure: above 1 it "
        "cannot hold as stated.",
        "It would fit with weights of at most {max_bits_per_weight} bits each. The other unstated conditions that make it true: "
        "a total over a batch of {B_aggregate}, {gpus_needed}, or speculative decoding that accepts {q_speculative} per "
        "step.",
    ),
    assumptions=(
        r"The claim is read as decode tokens per second for one user (one stream), at the printed batch $B$, context $T$, tokens per step $q$ "
        r"and tensor-parallel degree; the default claim is illustrative, because the teaser states no number.",
        r"Bytes per step are the shared step model's, per GPU: the weights the step reads (for MoE the experts the batch touches under "
        r"uniform top-$k$ routing) split over the GPUs, plus each sequence's KV cache of $T$ tokens; the embedding gather and activations are left out.",
        r"Physical means the needed bytes per second fit under the datasheet bandwidth. Real streaming kernels reach $\eta_{\mathrm{bw}}$ of it, "
        "so a claim that needs more than that is physical but not plausible.",
        "Each condition is sized alone, every other input held at its printed value: the conditions combine, and a vendor may use several. "
        "Where the ratio is at most 1 the claim already holds as stated, and the sizes show the headroom instead (a batch or a GPU count below 1).",
        r"For a MoE model the aggregate batch and the accepted tokens per step come as two bounds: every expert read (enough in any case) "
        r"and the fewest experts a step can read (no less will do). For a dense model the two agree.",
        "The GPU count divides the weights over the GPUs and the cached streams only while there are more streams than GPUs; "
        "the all-reduces that more GPUs add are left out, so the count is a lower bound.",
        r"The compute check counts $\kappa \sym{P_active}$ FLOPs per token for the weights plus attention at context $T$, "
        "against the dense peak of the math precision.",
    ),
    takeaways=(
        "The division: each token costs {bytes_per_token} of HBM traffic per GPU, so {claimed_tokens_per_s} per user needs {bandwidth_needed}, "
        "{bandwidth_ratio} times the datasheet bandwidth (above 1 the claim cannot hold as stated), {bandwidth_ratio_achieved} times what "
        "streaming kernels achieve.",
        "The claim implies a step every {t_claim}; the step model, with its efficiencies and overheads, gives each user {tokens_per_user_modelled}, "
        "so the claim is {claim_over_model} times the model.",
        "Quantization: the claim fits with weights of at most {max_bits_per_weight} bits each, scales included, the KV cache as printed.",
        "Aggregate over users: read as a total, the claim needs a batch of {B_aggregate} sequences (no fewer than {B_aggregate_min}), "
        "each user then seeing {tokens_per_user_aggregate}; the largest batch that fits in memory: {B_fits}.",
        "More GPUs: at least {gpus_needed} sharing every layer. Speculative decoding: at least {q_speculative} accepted per "
        "verification step ({q_speculative_all_experts} with every expert read). A shorter context, the longest that fits: {T_fits}.",
        "A sparse peak: read as an aggregate the claim needs {compute_ratio} of the dense peak and {compute_ratio_sparse} of the sparse "
        "headline; a per-user decode claim is bandwidth-bound, so a sparse peak cannot rescue it.",
    ),
    scoring=(
        r"Runs the division first: bytes per token (the weights the step reads, for MoE the experts touched, plus the KV cache at the stated "
        r"context) times the claim, against the datasheet bandwidth in decimal TB/s.",
        "Aggregate or per user? Batching raises the total, never one user's speed: the claim becomes physical as a total over {B_aggregate} "
        "sequences. Ask: per user or summed over all users, at what concurrency, and what does each user see?",
        "Quantization: the claim needs weights of at most {max_bits_per_weight} bits. Ask: what precision are the weights and the KV cache, "
        "group scales included, and what accuracy was measured at that precision?",
        "More GPUs: the bandwidth of {gpus_needed} would do it. Ask: how many GPUs serve one stream (tensor and pipeline parallel), and is the "
        "number per GPU, per server or per rack?",
        "Speculative decoding: {q_speculative} accepted per verification step would do it. Ask: is speculation or multi-token "
        "prediction on, with what draft length and acceptance rate, on which prompts?",
        "Context: the longest context at which the claim fits is {T_fits}. Ask: at what prompt and output length, and is the number the first tokens of a short "
        "chat or the average over a long one?",
        r"Sparse peak: a decode claim per user is bandwidth-bound, and a 2:4 sparse headline adds FLOPs, not bytes per second; read as an "
        r"aggregate it needs {compute_ratio} of the dense peak. Ask: does any figure come from a sparse peak, and was the model pruned to 2:4?",
        "Says which conditions would make the claim true together, and that a number with none of them stated is marketing until answered.",
    ),
    limits=(
        "Bandwidth is the floor of the argument: a claim below it can still fail on launches, all-reduces and scheduling, which the step "
        "model's overheads and all-reduce terms only estimate.",
        "Uniform routing is the MoE best case at small batch; skewed routing reads fewer experts for a batch and hot experts turn compute-bound sooner.",
        r"Speculative decoding is sized by accepted tokens per step; the draft model's own time and rejected tokens come on top, "
        "so the real acceptance must be higher (@decode-floor has the step time).",
        "More GPUs add two all-reduces per layer; at high per-user speeds their latency, not their bandwidth, sets the floor.",
        "Chips with large on-chip SRAM that hold the whole model (wafer-scale or SRAM-only designs) are outside this HBM model: "
        "their claim is checked against on-chip bandwidth and the number of chips holding the weights.",
    ),
    tables=(
        Table("One condition at a time (sheet model and chip)", (
            Row("As stated"),
            Row("FP8 weights and math", weights="fp8"),
            Row("INT4 weights, g128 scales, BF16 math", weights="int4-g128"),
            Row("", set={"tp": "8"}),
            Row("", set={"tokens_per_step": "4 token"}),
            Row("", set={"context": "1024 token"}),
            Row("", set={"batch": "8"}),
        ), ("bandwidth_needed", "bandwidth_ratio", "claim_over_model", "memory_fraction"),
            note=r"A larger batch only lowers each user's speed: the per-user claim needs more bandwidth, not less."),
        Table("Sizing each condition across models", tuple(Row("", model=m) for m in (*MODELS, "qwen3-235b-a22b")),
              ("bandwidth_ratio", "max_bits_per_weight", "B_aggregate", "gpus_needed", "q_speculative")),
        Table("MoE bounds: fewest and all experts read", tuple(Row("", model=m) for m in ("mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3")),
              ("B_aggregate_min", "B_aggregate", "q_speculative", "q_speculative_all_experts")),
        Table("From a modest claim to a bold one", tuple(
            Row("", set={"claimed_tokens_per_s": f"{c} token/s"}) for c in (50, 100, 200, 500, 1000, 2000, 5000)
        ), ("bandwidth_ratio", "max_bits_per_weight", "B_aggregate", "gpus_needed", "T_fits", "compute_ratio")),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=MODELS,
    plots=(Plot("claim", "stack",
                "The bandwidth one GPU would need for the claim, as stated and under each unstated condition alone, against the "
                "datasheet bandwidth (the tick on each bar): below it the claim is physical.",
                title="The claim needs {bandwidth_needed}, {bandwidth_ratio} times the datasheet bandwidth; weights of "
                      "{max_bits_per_weight} bits would make it physical",
                y=("bandwidth_needed",), vlines=("bandwidth_datasheet",), table=0, answer=True,
                labels={"bandwidth_needed": "bandwidth the claim needs", "bandwidth_datasheet": "datasheet bandwidth"}),),
    display_units={"compute_ratio": "%", "compute_ratio_sparse": "%", **sm.DISPLAY_UNITS, "bandwidth_datasheet": "TB/s", "bytes_per_token": "GB/token", "bandwidth_needed": "TB/s",
                   "t_claim": "ms", "tokens_per_user_modelled": "token/s", "b_w_max": "B/parameter",
                   "weight_bytes_all_experts": "GB", "weight_bytes_top_k": "GB", "bandwidth_aggregate": "TB/s",
                   "bandwidth_aggregate_top_k": "TB/s", "tokens_per_user_aggregate": "token/s", "hbm_capacity": "GB",
                   "kv_bytes_step_all": "GB", "bandwidth_split": "TB/s", "kv_bytes_step_one_stream": "GB", "bandwidth_replicated": "TB/s",
                   "weight_bytes_one_token": "GB", "bandwidth_speculative": "TB/s", "bandwidth_speculative_all_experts": "TB/s",
                   "T_fits": "token", "flops_per_token_gpu": "Gflop/token", "q_speculative": "token",
                   "q_speculative_all_experts": "token"},
)

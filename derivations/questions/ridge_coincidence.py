"""The decode batch where weight GEMMs turn compute-bound is the ridge point.

Takeaway: B* = pi * b_w / (kappa * q * beta). In BF16, b_w / (kappa * q) =
(2 B/param) / (2 flop/(param*token) * 1 token) = 1 B/flop, so B* equals the
ridge point pi/beta numerically, and so does the prefill crossover S*. The
coincidence breaks when bytes per weight and FLOPs per weight stop being
equal: weight-only quantization, FP8 math. With a GQA KV cache, beyond T_max
no batch makes a decode step compute-bound.
Assumes B << D, F (activation traffic negligible); dense peak.
"""

from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)

ridge = Step("ridge_point", pr.ridge_point(), "flop/B",
             "The intensity where a kernel's compute time equals its memory time.", latex=r"I^{*}", title="Ridge point")
t_mem = Step("t_mem", pr.memory_time(pr.weight_bytes(gl.P_base)), "s",
             "A decode step streams the weights every token uses (attention, dense and shared MLPs, LM head) once, whatever the batch.",
             latex=r"t_{\mathrm{mem}}", title="Time to stream the weights")
t_cmp = Step("t_cmp", pr.compute_time(pr.gemm_flops(gl.P_base, gl.B * gl.q)), "s",
             r"Each of the $B q$ tokens does one multiply-add per weight.", latex=r"t_{\mathrm{cmp}}", title="Time to compute the weight GEMMs")
b_cross = solve("B_cross", t_cmp, t_mem, gl.B, "1",
                r"Equate the two: the model size $\sym{P_base}$ cancels, so the crossover batch depends only on the chip and the number formats.",
                latex=r"B^{*}", title="Crossover batch")
i_gemm = Step("intensity_gemm", pr.gemm_intensity_limit(gl.B * gl.q), "flop/B",
              r"A decode weight GEMM's intensity at this batch, activation traffic left out: $\kappa B q / b_{w}$ flop/B, in BF16 the batch "
              r"itself. It meets the ridge at $\sym{B_cross}$.",
              latex=r"I_{\mathrm{gemm}}", title="Intensity of the weight GEMMs")
tok_exp = Step("tokens_per_expert", pr.tokens_per_expert(), "token",
               r"A routed expert sees only its share of the step's tokens: $k_{E}$ of $E$ experts per token, $B q k_{E}/E$ on average (all $B q$ for a dense model).",
               latex=r"n_{E}", title="Tokens per routed expert")
i_exp = Step("intensity_expert_gemm", pr.gemm_intensity_limit(tok_exp.s), "flop/B",
             "A routed expert's GEMM intensity: the weight-GEMM limit at its share of the tokens.", latex=r"I_{E}",
             title="Intensity of a routed expert's GEMM")
b_cross_exp = solve("B_cross_expert", i_exp, ridge, gl.B, "1",
                    r"The batch at which the routed experts' GEMMs turn compute-bound too: $E/k_{E}$ times $\sym{B_cross}$, because each expert sees "
                    r"$k_{E}/E$ of the tokens. For a dense model it is $\sym{B_cross}$ itself.",
                    latex=r"B^{*}_{E}", title="Crossover batch of the routed experts")
t_prefill = Step("t_prefill", pr.compute_time(pr.gemm_flops(gl.P_base, gl.S)), "s",
                 r"A prefill of $S$ tokens does the same GEMMs for $S$ tokens at once.", latex=r"t_{\mathrm{pre}}", title="Time to compute a prefill")
t_cross = solve("T_cross", t_prefill, t_mem, gl.S, "token",
                "The prompt length where prefill turns compute-bound: the same division.", latex=r"S^{*}", title="Crossover prompt length")
factor = Step("bytes_per_flop_of_weights", gl.b_w / (gl.kappa * gl.q), "B/flop",
              r"$\sym{B_cross}$ is $\sym{ridge_point}$ times this factor; it is exactly $1\,\mathrm{B/flop}$ when weights are 2 bytes and each does 2 FLOPs per token.",
              latex=r"\frac{b_w}{\kappa q}", title="Weight bytes per weight FLOP")
f_seq = Step("flops_per_sequence", gl.q * (pr.matmul_flops_per_token() + pr.attention_flops_per_token() + pr.indexer_flops_per_token()
                                         + pr.recurrent_flops_per_token()), "flop",
             r"One sequence's decode FLOPs: the weights plus attention over the tokens its layers read of $T$ (and a sparse layer's indexer "
             "over all of them, a recurrent layer's state update, where the model has them).", latex=r"F_{\mathrm{seq}}",
             title="Decode FLOPs per sequence")
kv_seq = Step("kv_bytes_per_sequence", pr.read_context() * pr.kv_bytes_per_token() + gl.T * gl.s_idx + 2 * gl.s_st, "B",
              "One sequence's KV bytes (what its layers read of its context, with its indexer keys and recurrent state where the model has "
              "them), read every step; unlike the weights, they do not amortise over the batch.",
              latex=r"W_{\mathrm{seq}}", title="KV-cache bytes per sequence")
i_limit = Step("intensity_batch_limit", pr.intensity(f_seq.s, kv_seq.s), "flop/B",
               r"As $B$ grows the weight bytes amortise away and the step's intensity tends to this per-sequence limit.",
               latex=r"I_{B\to\infty}", title="Intensity at unlimited batch")
t_max = solve("T_max", i_limit, ridge, gl.T, "token",
              "The context beyond which even an infinite batch keeps a decode step memory-bound.", latex=r"T_{\max}",
              title="Longest compute-bound context",
              none="attention's own intensity, the limit as the context grows, is at or above the ridge here, so the per-sequence intensity "
                   "never falls to it: a large enough batch is compute-bound at every context")

DERIVATION = derivation(
    "ridge-coincidence",
    "The ridge-point coincidence",
    "The crossover falls out of one division, and the number it gives lines up exactly with something else on the GPU. "
    "Spotting that coincidence is what the interviewer is waiting for.",
    S,
    (ridge, t_mem, t_cmp, b_cross, i_gemm, tok_exp, i_exp, b_cross_exp, t_prefill, t_cross, factor, f_seq, kv_seq, i_limit, t_max),
    ("ridge_point", "B_cross", "T_cross", "T_max"),
    argument=(
        "ridge_point", "t_mem", "t_cmp", "B_cross", "intensity_expert_gemm", "B_cross_expert", "t_prefill", "T_cross",
        "bytes_per_flop_of_weights", "kv_bytes_per_sequence", "intensity_batch_limit", "T_max",
    ),
    body_tables=(0, 1, 2),
    answer=(
        "The ridge point is {ridge_point}, and the weight GEMMs turn compute-bound at the same number of sequences in a decode batch "
        "and of tokens in a prompt ({B_cross} and {T_cross} in whole numbers, rounded up), because in BF16 a weight's bytes match its "
        "FLOPs ({bytes_per_flop_of_weights}).",
        "The coincidence breaks with weight-only quantization or FP8 math (the tables), and past a context of {T_max} no batch makes a "
        "GQA decode step compute-bound.",
    ),
    assumptions=(
        r"The step's $B q$ tokens are far fewer than $D$ and $F$, so activation traffic is negligible next to the weights (@attention-intensity keeps it).",
        r"$\sym{B_cross}$ counts sequences, each decoding $q = 1$ token per step; $\sym{T_cross}$ counts prompt tokens.",
        r"Weight GEMMs only for $\sym{B_cross}$ and $\sym{T_cross}$; the KV cache enters only $\sym{T_max}$. For a MoE model $\sym{B_cross}$ is for the GEMMs "
        r"every token passes through (attention projections, dense and shared MLPs, LM head); its routed experts see $B q k_{E}/E$ tokens each "
        r"and turn compute-bound at $\sym{B_cross_expert}$.",
        r"$\sym{T_max}$ compares the large-batch intensity of a decode step, weight FLOPs plus attention FLOPs per KV byte of one sequence, with the ridge; "
        "decode attention of MLA models is the absorbed kernel.",
        "Math runs at the dense peak of the math precision (weight-only INT4 runs BF16 math).",
    ),
    takeaways=(
        "The ridge point is {ridge_point}, and a decode batch and a prompt reach it at the same number of sequences and tokens ({B_cross} and {T_cross} in whole numbers, rounded up), because a BF16 weight is 2 bytes and does 2 FLOPs per token ({bytes_per_flop_of_weights}).",
        "With this KV cache, a decode step at a context beyond {T_max} cannot be compute-bound at any batch: each sequence brings {kv_bytes_per_sequence} of KV that no batch amortises.",
    ),
    scoring=(
        "Divides peak by bandwidth and gets the ridge point with dense peaks and decimal TB/s.",
        r"Writes $\sym{t_mem}$ and $\sym{t_cmp}$, sees the model size cancel, and notices $\sym{B_cross}$ equals the ridge point numerically.",
        "Explains the coincidence: 2 bytes per weight over 2 FLOPs per weight per token.",
        r"Says when it breaks: INT4 weights with BF16 math divide $\sym{B_cross}$ by 4; FP8 weights with FP8 math keep $\sym{B_cross}$ at the BF16 ridge, "
        "half the FP8 ridge.",
        r"Brings in the KV cache: past $\sym{T_max}$, batching cannot make decode compute-bound.",
    ),
    limits=(
        r"Real kernels turn compute-bound later than $\sym{B_cross}$ (tile quantization, achieved bandwidth and FLOPs below datasheet).",
        r"Routing is not uniform in practice: hot experts see more than $B q k_{E}/E$ tokens and turn compute-bound earlier, cold ones later.",
        r"Attention at long context keeps decode memory-bound regardless ($\sym{T_max}$); MLA raises the per-sequence limit (@attention-intensity).",
    ),
    tables=(
        Table("When the coincidence breaks", (
            Row("BF16 weights, BF16 math", weights="bf16"),
            Row("FP8 weights, FP8 math", weights="fp8"),
            Row("INT8 weights, INT8 math", weights="int8"),
            Row("INT4 weights, BF16 math", weights="int4"),
            Row("INT4 + g128 scales, BF16 math", weights="int4-g128"),
        ), ("ridge_point", "B_cross", "bytes_per_flop_of_weights")),
        Table(r"Mixture of experts: the routed experts turn compute-bound $E/k_{E}$ times later", tuple(
            Row("", model=m) for m in ("llama-3.1-70b", "mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3")
        ), ("B_cross", "tokens_per_expert", "B_cross_expert")),
        Table(r"No batch helps beyond $\sym{T_max}$ (BF16 vs FP8 KV cache)", (
            Row("Llama 3.1 8B, BF16 KV", model="llama-3.1-8b", kv="bf16"),
            Row("Llama 3.1 8B, FP8 KV", model="llama-3.1-8b", kv="fp8"),
            Row("Llama 3.1 70B, BF16 KV", model="llama-3.1-70b", kv="bf16"),
            Row("Llama 3.1 70B, FP8 KV", model="llama-3.1-70b", kv="fp8"),
            Row("Llama 2 7B (MHA), BF16 KV", model="llama-2-7b", kv="bf16"),
            Row("DeepSeek-V3 (MLA), BF16 KV", model="deepseek-v3", kv="bf16"),
            Row("DeepSeek-V3 (MLA), FP8 KV", model="deepseek-v3", kv="fp8"),
        ), ("intensity_batch_limit", "T_max")),
    ),
    claims=(
        Claim("In BF16, the crossover batch equals the ridge point numerically.", "B_cross", "ridge_point", rel_tol=1e-12, convert="flop/B"),
        Claim("The decode crossover batch equals the prefill crossover in tokens.", "B_cross", "T_cross", rel_tol=1e-12, convert="token"),
        Claim("With INT4 weights (BF16 math) the crossover batch still equals the ridge point.", "B_cross", "ridge_point", rel_tol=1e-12,
              where=Row("INT4 weights", weights="int4"), convert="flop/B"),
    ),
    plots=(Plot("roofline", "roofline",
                "The roofline of this accelerator, with the ceilings of the others: a decode weight GEMM climbs the slope with the batch "
                r"and reaches the ridge at $\sym{B_cross}$, the same number as the ridge in flop/B; a whole decode step at this context "
                "tends to its per-sequence limit however large the batch.",
                title="The weight GEMMs reach the ridge, {ridge_point}, at a batch of {B_cross}: the same number. At this context a whole "
                      "decode step never passes {intensity_batch_limit}",
                points=("intensity_gemm", "intensity_batch_limit"), batches=("1", "16", "B_cross"), answer=True,
                labels={"intensity_gemm": "weight GEMMs", "intensity_batch_limit": "a whole decode step at this context"}),),
    display_units={"t_mem": "ms", "t_cmp": "ms", "t_prefill": "ms", "kv_bytes_per_sequence": "GB", "flops_per_sequence": "Gflop"},
)

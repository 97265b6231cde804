"""The decode batch where weight GEMMs turn compute-bound is the ridge point.

Takeaway: B* = pi * b_w / (kappa * q * beta). In BF16, b_w / (kappa * q) =
(2 B/param) / (2 flop/(param*token) * 1 token) = 1 B/flop, so B* equals the
ridge point pi/beta numerically, and so does the prefill crossover S*. The
coincidence breaks when bytes per weight and FLOPs per weight stop being
equal: weight-only quantization, FP8 math. With a GQA KV cache, beyond T_max
no batch makes a decode step compute-bound.
Assumes B << D, F (activation traffic negligible); dense peak.
"""

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.engine import Claim, Row, Step, Table, derivation, solve
from derivations.symbols import Symbols

S = Symbols(parent=gl.GLOSSARY)

ridge = Step("ridge_point", pr.ridge_point(), "flop/B",
             "The intensity where a kernel's compute time equals its memory time.", latex=r"I^{*}")
t_mem = Step("t_mem", pr.memory_time(pr.weight_bytes()), "s",
             "A decode step streams every weight once, whatever the batch.", latex=r"t_{\mathrm{mem}}")
t_cmp = Step("t_cmp", pr.compute_time(pr.gemm_flops(gl.P_active, gl.B * gl.q)), "s",
             "Each of the B*q tokens does one multiply-add per weight.", latex=r"t_{\mathrm{cmp}}")
b_cross = solve("B_cross", t_cmp, t_mem, gl.B, "1",
                "Equate the two: the model size P cancels, so the crossover batch depends only on the chip and the number formats.",
                latex=r"B^{*}")
t_prefill = Step("t_prefill", pr.compute_time(pr.gemm_flops(gl.P_active, gl.S)), "s",
                 "A prefill of S tokens does the same GEMMs for S tokens at once.", latex=r"t_{\mathrm{pre}}")
t_cross = solve("T_cross", t_prefill, t_mem, gl.S, "token",
                "The prompt length where prefill turns compute-bound: the same division.", latex=r"S^{*}")
factor = Step("bytes_per_flop_of_weights", gl.b_w / (gl.kappa * gl.q), "B/flop",
              "B* = I* times this factor; it is exactly 1 B/flop when weights are 2 bytes and each does 2 FLOPs per token.",
              latex=r"\frac{b_w}{\kappa q}")
f_seq = Step("flops_per_sequence", gl.q * (pr.matmul_flops_per_token() + pr.attention_flops_per_token()), "flop",
             "One sequence's decode FLOPs: the weights plus attention over its T cached tokens.", latex=r"F_{\mathrm{seq}}")
kv_seq = Step("kv_bytes_per_sequence", gl.T * pr.kv_bytes_per_token(), "B",
              "One sequence's KV bytes, read every step; unlike the weights, they do not amortise over the batch.",
              latex=r"W_{\mathrm{seq}}")
i_limit = Step("intensity_batch_limit", pr.intensity(f_seq.s, kv_seq.s), "flop/B",
               "As B grows the weight bytes amortise away and the step's intensity tends to this per-sequence limit.",
               latex=r"I_{B\to\infty}")
t_max = solve("T_max", i_limit, ridge, gl.T, "token",
              "The context beyond which even an infinite batch keeps a GQA decode step memory-bound.", latex=r"T_{\max}")

DERIVATION = derivation(
    "ridge-coincidence",
    "The ridge-point coincidence",
    "The crossover falls out of one division, and the number it gives lines up exactly with something else on the GPU. "
    "Spotting that coincidence is what the interviewer is waiting for.",
    S,
    (ridge, t_mem, t_cmp, b_cross, t_prefill, t_cross, factor, f_seq, kv_seq, i_limit, t_max),
    ("ridge_point", "B_cross", "T_cross", "T_max"),
    assumptions=(
        "B*q is much smaller than D and F, so activation traffic is negligible next to the weights (attention-intensity keeps it).",
        "B_cross counts sequences, each decoding q = 1 token per step; T_cross counts prompt tokens.",
        "Weight GEMMs only for B_cross and T_cross; the KV cache enters only T_max.",
        "Math runs at the dense peak of the math precision (weight-only INT4 runs BF16 math).",
    ),
    takeaways=(
        "The ridge point is {ridge_point}; the decode batch where the weight GEMMs turn compute-bound is {B_cross} sequences and the prefill crossover {T_cross}: the same number, because a BF16 weight is 2 bytes and does 2 FLOPs per token ({bytes_per_flop_of_weights}).",
        "With this KV cache, a decode step at a context beyond {T_max} cannot be compute-bound at any batch: each sequence brings {kv_bytes_per_sequence} of KV that no batch amortises.",
    ),
    scoring=(
        "Divides peak by bandwidth and gets the ridge point with dense peaks and decimal TB/s.",
        "Writes t_mem and t_cmp, sees P cancel, and notices B* equals the ridge point numerically.",
        "Explains the coincidence: 2 bytes per weight over 2 FLOPs per weight per token.",
        "Says when it breaks: INT4 weights with BF16 math divide B* by 4; FP8 weights with FP8 math keep B* at the BF16 ridge, half the FP8 ridge.",
        "Brings in the KV cache: past T_max, batching cannot make decode compute-bound.",
    ),
    limits=(
        "Real kernels turn compute-bound later than B* (tile quantization, achieved bandwidth and FLOPs below datasheet).",
        "MoE spreads the batch over experts: each expert sees about B*k/E tokens (moe-experts).",
        "Attention at long context keeps decode memory-bound regardless (T_max); MLA raises the per-sequence limit (attention-intensity).",
    ),
    tables=(
        Table("When the coincidence breaks", (
            Row("BF16 weights, BF16 math", weights="bf16"),
            Row("FP8 weights, FP8 math", weights="fp8"),
            Row("INT8 weights, INT8 math", weights="int8"),
            Row("INT4 weights, BF16 math", weights="int4"),
            Row("INT4 + g128 scales, BF16 math", weights="int4-g128"),
        ), ("ridge_point", "B_cross", "bytes_per_flop_of_weights")),
        Table("No batch helps beyond T_max (BF16 vs FP8 KV cache)", (
            Row("Llama 3.1 8B, BF16 KV", model="llama-3.1-8b", kv="bf16"),
            Row("Llama 3.1 8B, FP8 KV", model="llama-3.1-8b", kv="fp8"),
            Row("Llama 3.1 70B, BF16 KV", model="llama-3.1-70b", kv="bf16"),
            Row("Llama 3.1 70B, FP8 KV", model="llama-3.1-70b", kv="fp8"),
            Row("Llama 2 7B (MHA), BF16 KV", model="llama-2-7b", kv="bf16"),
        ), ("intensity_batch_limit", "T_max")),
    ),
    claims=(
        Claim("In BF16, the crossover batch equals the ridge point numerically.", "B_cross", "ridge_point", rel_tol=1e-12, convert="flop/B"),
        Claim("The decode crossover batch equals the prefill crossover in tokens.", "B_cross", "T_cross", rel_tol=1e-12, convert="token"),
        Claim("With INT4 weights (BF16 math) the crossover batch still equals the ridge point.", "B_cross", "ridge_point", rel_tol=1e-12,
              where=Row("INT4 weights", weights="int4"), convert="flop/B"),
    ),
    display_units={"t_mem": "ms", "t_cmp": "ms", "t_prefill": "ms", "kv_bytes_per_sequence": "GB", "flops_per_sequence": "Gflop"},
)

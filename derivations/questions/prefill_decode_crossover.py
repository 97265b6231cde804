"""At what prompt length does prefill stop waiting on memory, and what TTFT follows?

Takeaway: prefill of S tokens streams the weights once and does kappa*P*S
FLOPs; the two times cross at S* = pi * b_w / (kappa * beta), the ridge point
in tokens (model size cancels; a MoE model's S* is pi W / (kappa beta P_act), W
its bytes with every expert read, b_e bytes per routed-expert weight). Beyond it TTFT grows linearly with S, and the
S**2 attention term takes over at long prompts.
Assumes one prompt prefilled alone, datasheet peak and bandwidth.
"""

from ..engine.declare import Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)

p_all = Step("params_read", pr.params_all_experts(), "parameter",
             r"A prefill of $S$ tokens reads every expert of a MoE model ($S$ tokens touch all $E$ experts of a layer long before $S$ reaches "
             "the crossover; see the coverage step), so it streams the GEMM weights of all experts; for a dense model this is every GEMM weight.",
             latex=r"P_{\mathrm{read}}", meaning="GEMM weights a prefill reads (every expert)", title="Weights a prefill reads")
w = Step("weight_bytes", pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.E * gl.P_exp), "B",
         "Prefill and decode run the same GEMMs, so both stream every weight they use once per forward pass.", latex=r"W",
         title="Weight bytes")
t_w = Step("t_weights", pr.memory_time(w.s), "s",
           "The time to read the weights: decode's floor, and prefill's floor too.", latex=r"t_{W}",
           title="Time to read the weights")
f_gemm = Step("prefill_flops_gemm", pr.gemm_flops(gl.P_active, gl.S), "flop",
              r"All $S$ prompt tokens go through every GEMM in one pass.", latex=r"F_{\mathrm{gemm}}", title="GEMM FLOPs of the prefill")
t_gemm = Step("t_gemm", pr.compute_time(f_gemm.s), "s",
              "The GEMM FLOPs at the dense tensor peak.", latex=r"t_{\mathrm{gemm}}", title="GEMM time at peak")
t_cross = solve("T_cross", t_gemm, t_w, gl.S, "token",
                "Below this prompt length prefill waits on HBM like decode; above it, on the tensor cores. For a dense model the size cancels; "
                r"a MoE model reads all its experts but multiplies each token by only its top-$k$, so the crossover moves out by "
                r"$\sym{params_read}/\sym{P_active}$.",
                latex=r"S^{*}", title="Crossover prompt length")
coverage = Step("expert_coverage_at_cross", pr.experts_touched(t_cross.s / gl.u_token) / gl.E, "1",
                r"The check on reading every expert: the expected share of a MoE layer's experts that $S^{*}$ tokens touch under uniform top-$k$ routing "
                "(1 for a dense model).",
                latex=r"E_{\mathrm{read}}(S^{*})/E", title="Expert coverage at the crossover")
f_attn = Step("prefill_flops_attention", pr.prefill_attention_flops(), "flop",
              r"Causal attention over the prompt: $S^{2}/2$ query-key pairs per layer (fewer in a layer with a window), $2 L N (h_{k} + h_{v})$ FLOPs each ($4 L N H$ for GQA; "
              "MLA prefill decompresses K and V rather than absorbing).",
              latex=r"F_{\mathrm{att}}", title="Attention FLOPs of the prefill")
kv_tok = Step("kv_bytes_per_token", pr.kv_bytes_per_token(gl.e_kv, gl.b_kv), "B/token",
              "Each prompt token writes its K and V to the cache.", latex=r"s_{\mathrm{kv}}", title="KV-cache bytes per token")
f_total = Step("prefill_flops", f_gemm.s + f_attn.s, "flop", "All prefill FLOPs: the GEMMs and causal attention.", latex=r"F",
               title="Prefill FLOPs")
b_total = Step("prefill_bytes", w.s + gl.S * kv_tok.s, "B", "HBM traffic of the pass: the weights once, plus each prompt token's KV write.",
               latex=r"W_{\mathrm{pre}}", title="Prefill bytes")
ttft = Step("ttft", pr.roofline_time(f_total.s, b_total.s), "s",
            "Time to first token, as a roofline: the longer of the FLOPs at peak and the bytes at bandwidth.",
            latex=r"t_{\mathrm{TTFT}}", title="Time to first token")
at_cross = {gl.S: t_cross.s}
f_gemm_cross = Step("prefill_flops_gemm_at_cross", f_gemm.expr.xreplace(at_cross), "flop",
                    r"The GEMM FLOPs for a prompt of exactly $S^{*}$ tokens.", latex=r"F_{\mathrm{gemm}}(S^{*})", title="GEMM FLOPs at the crossover")
f_attn_cross = Step("prefill_flops_attention_at_cross", f_attn.expr.xreplace(at_cross), "flop",
                    r"The attention FLOPs for a prompt of $S^{*}$ tokens: the quadratic term the crossover leaves out.", latex=r"F_{\mathrm{att}}(S^{*})",
                    title="Attention FLOPs at the crossover")
f_total_cross = Step("prefill_flops_at_cross", f_gemm_cross.s + f_attn_cross.s, "flop",
                     r"All FLOPs of a prompt of $S^{*}$ tokens.", latex=r"F(S^{*})", title="Prefill FLOPs at the crossover")
b_total_cross = Step("prefill_bytes_at_cross", b_total.expr.xreplace(at_cross), "B",
                     r"The same bytes for a prompt of $S^{*}$ tokens.", latex=r"W_{\mathrm{pre}}(S^{*})", title="Prefill bytes at the crossover")
ttft_cross = Step("ttft_at_cross", pr.roofline_time(f_total_cross.s, b_total_cross.s), "s",
                  "TTFT at the crossover prompt, where the GEMM time equals the weight-read time by construction; attention and the KV writes add to either side.",
                  latex=r"t_{\mathrm{TTFT}}(S^{*})", title="Time to first token at the crossover")
attn_share = Step("attention_share", f_attn.s / (f_gemm.s + f_attn.s), "1",
                  "The fraction of prefill FLOPs spent in attention at the input prompt length.", latex=r"\phi_{\mathrm{att}}",
                  title="Attention's share of the FLOPs")
s_attn = solve("S_attention_equal", f_attn, f_gemm, gl.S, "token",
               r"The prompt length where attention's $S^{2}$ term matches the GEMM FLOPs: beyond it TTFT turns quadratic.",
               latex=r"S_{=}", title="Prompt length where attention matches the GEMMs")

DERIVATION = derivation(
    "prefill-decode-crossover",
    "Prefill vs decode: the prompt length where they trade places",
    "Decode and prefill run the same weights through the same kernels, yet one waits on memory and the other on tensor cores. "
    "The answer finds the prompt length where they trade places and turns it into a TTFT.",
    S,
    (p_all, w, t_w, f_gemm, t_gemm, t_cross, coverage, f_attn, kv_tok, f_total, b_total, ttft, f_gemm_cross, f_attn_cross, f_total_cross, b_total_cross, ttft_cross, attn_share, s_attn),
    ("T_cross", "ttft_at_cross", "ttft"),
    argument=(
        "weight_bytes", "t_weights", "prefill_flops_gemm", "t_gemm", "T_cross", "prefill_flops_attention", "prefill_flops",
        "prefill_bytes", "ttft", "ttft_at_cross", "S_attention_equal",
    ),
    body_tables=(0, 1),
    answer=(
        "Prefill and decode trade places at a prompt of {T_cross}: shorter prompts wait on reading the weights, as decode does; "
        "longer ones on the tensor cores.",
        "The time to first token is {ttft_at_cross} at the crossover and {ttft} at the set prompt length; past a prompt of "
        "{S_attention_equal} attention's quadratic term dominates it.",
    ),
    assumptions=(
        "One prompt prefilled alone (no batching with decode), at the dense datasheet peak and bandwidth; real prefill runs below peak, so measured TTFT sits above this line.",
        "Activations stay on chip between kernels; the only HBM traffic is the weights and the KV writes.",
        r"Attention is causal and counted as $4 L N H$ FLOPs per query-key pair for GQA (FlashAttention does not change the FLOPs); MLA prefill over decompressed K and V.",
        r"A MoE prefill streams every expert (the coverage step checks it) while each token multiplies only its top-$k$: "
        r"$\sym{params_read}/\sym{P_active}$ moves the crossover out.",
    ),
    takeaways=(
        "Prefill turns compute-bound at a prompt of {T_cross}: the ridge point in tokens for every dense model on this chip, "
        r"times $\sym{params_read}/\sym{P_active}$ for a MoE model.",
        "TTFT at the crossover is {ttft_at_cross}: the weight-read time {t_weights} plus what attention or the KV writes add; at the input prompt it is {ttft}.",
        "Attention's quadratic term matches the GEMM FLOPs at a prompt of {S_attention_equal}; beyond it TTFT grows as $S^{2}$.",
    ),
    scoring=(
        r"Writes both times per pass and sees that the parameter count cancels: $S^{*} = \pi b_{w}/(\kappa \beta)$.",
        r"Recognises $S^{*}$ as the ridge point (FLOPs per byte) expressed in tokens (@ridge-coincidence).",
        r"Adds the $S^{2}$ attention term for long prompts and says when it dominates.",
        "Knows chunked prefill mixes the two regimes and that prefill rarely reaches datasheet peak.",
    ),
    limits=(
        "Achieved prefill throughput is below peak (tile and wave quantization; attention kernels run further below peak than GEMMs).",
        "Batching prefill with decode (chunked prefill) moves the crossover: the decode tokens share the weight read.",
        "Tensor parallelism adds all-reduces proportional to $S$, which become significant for long prompts.",
    ),
    tables=(
        Table("Dense and mixture-of-experts models", tuple(Row("", model=m) for m in (
            "llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v2-lite", "deepseek-v3")),
            ("T_cross", "expert_coverage_at_cross", "ttft_at_cross"),
            note=r"MoE prefill reads every expert but does top-$k$ arithmetic per token, so its crossover sits $\sym{params_read}/\sym{P_active}$ times the ridge."),
        Table("TTFT as the prompt grows", tuple(
            Row("", set={"prompt_len": f"{s} token"}) for s in (128, 512, 2048, 8192, 32768, 131072)
        ), ("t_gemm", "ttft", "attention_share")),
    ),
    plots=(Plot("ttft", "sweep",
                r"Time to first token against the prompt length: flat at the weight-read time until the GEMM time crosses it at "
                r"$\sym{T_cross}$, then linear, then quadratic once attention passes the GEMMs at $\sym{S_attention_equal}$.",
                title="Prefill turns compute-bound at a prompt of {T_cross}, where the first token takes {ttft_at_cross}; "
                      "beyond it the time grows with the prompt",
                x="prompt_len", y=("ttft", "t_gemm", "t_weights"), span=("16 token", "131072 token"), vlines=("T_cross", "S_attention_equal"),
                answer=True, labels={"ttft": "time to first token", "t_gemm": "GEMM compute", "t_weights": "weight read"}),),
    display_units={"params_read": "parameter", "weight_bytes": "GB", "t_weights": "ms", "t_gemm": "ms", "ttft": "ms", "ttft_at_cross": "ms",
                   "prefill_flops_gemm": "Tflop", "prefill_flops_attention": "Tflop", "prefill_flops": "Tflop",
                   "prefill_flops_at_cross": "Tflop", "prefill_flops_gemm_at_cross": "Tflop", "prefill_flops_attention_at_cross": "Gflop", "prefill_bytes": "GB", "prefill_bytes_at_cross": "GB", "kv_bytes_per_token": "kB/token"},
)

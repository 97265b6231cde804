"""Where does "2 FLOPs per parameter" come from, and where does it break?

Takeaway: per token, each GEMM weight does one multiply-add (2 FLOPs); the
embedding gather and norms do none, MoE's inactive experts do none, and
attention adds 4*L*N*H FLOPs per token of context, which equals the weight
FLOPs at T = kappa*P / (kappa_attn*L*N*H) (twice that, averaged over a prefill).
The rebuild from the config covers GQA attention with gated MLPs, dense or
mixture-of-experts; the exact counts come from the spec layer for any family,
MLA included.
"""

from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)

n_attn = Step("n_attn", pr.gqa_attention_params(gl.D, gl.N, gl.K, gl.H), "1",
              r"One layer's query ($D \times N H$), key and value ($D \times K H$ each) and output ($N H \times D$) projections.",
              latex=r"n_{\mathrm{att}}", meaning="attention weights per layer", title="Attention weights per layer")
n_mlp = Step("n_mlp", pr.mlp_params(gl.D, gl.F, gl.m_mlp), "1",
             r"One dense layer's gate and up ($D \times F$) and down ($F \times D$) projections: $\sym{m_mlp} = 3$ matrices for a gated MLP, "
             "2 for a plain one (up and down).", latex=r"n_{\mathrm{mlp}}",
             meaning="MLP weights per dense layer", title="MLP weights per dense layer")
n_moe = Step("n_moe", (gl.E + gl.E_s) * gl.P_exp / gl.u_param + gl.D * gl.E, "1",
             r"One MoE layer: $E$ routed and $E_{s}$ shared experts, each an MLP of $\sym{P_exp}$ weights (a gated one of width $F_{E}$: "
             r"$3 D F_{E}$), and the router ($D \times E$). "
             "Zero for a dense model.",
             latex=r"n_{\mathrm{moe}}", meaning="MLP weights per MoE layer (all experts, router)", title="MLP weights per MoE layer")
rebuilt = Step("params_matmul_rebuilt", (gl.L * n_attn.s + (gl.L - gl.L_moe) * n_mlp.s + gl.L_moe * n_moe.s + gl.V * gl.D) * gl.u_param, "parameter",
               r"$L$ blocks of attention, the dense and the MoE MLPs, plus the LM head ($V \times D$): the part of the model that multiplies.",
               latex=r"\hat{P}_{\mathrm{mm}}", meaning="GEMM parameters rebuilt from the config", title="GEMM parameters rebuilt from the config")
matmul = Step("params_matmul", gl.P_matmul, "parameter",
              "The spec layer's exact count of GEMM operands (all experts); for a dense model it equals the rebuild above.",
              latex=r"P_{\mathrm{mm}}", meaning="parameters that are GEMM operands", title="GEMM parameters from the spec layer")
no_arith = Step("params_no_arithmetic", gl.P_emb + gl.P_norm, "parameter",
                "The embedding is a gather (a row read, no FLOPs) and norm weights scale elementwise: neither does a matmul.",
                latex=r"P_{0}", meaning="parameters that do no matmul arithmetic", title="Parameters that do no arithmetic")
total = Step("params_total", matmul.s + no_arith.s, "parameter",
             "Everything the checkpoint stores (main layers; MTP heads excluded).", latex=r"P", meaning="all parameters",
             title="All parameters")
no_arith_share = Step("no_arithmetic_share", no_arith.s / total.s, "1",
                      "The fraction of the checkpoint that the rule counts but that does no matmul.", latex=r"P_{0}/P",
                      title="Share of the checkpoint that does no arithmetic")
flops_params = Step("flops_per_token_params", pr.matmul_flops_per_token(gl.P_active), "flop/token",
                    r"Two FLOPs per multiply-add, one multiply-add per GEMM weight a token touches (its top-$k$ experts only for MoE).",
                    latex=r"f_{\mathrm{w}}", meaning="weight FLOPs per token", title="Weight FLOPs per token")
rule = Step("flops_rule", gl.kappa * total.s, "flop/token",
            "What the rule of thumb quotes: two FLOPs per stored parameter.", latex=r"f_{\mathrm{rule}}", title="The rule of thumb")
rule_over = Step("rule_over_actual", rule.s / flops_params.s, "1",
                 "How far the rule overstates the weight FLOPs (embedding, norms, inactive experts).", latex=r"f_{\mathrm{rule}}/f_{\mathrm{w}}",
                 title="Rule over the weight FLOPs")
per_ctx = Step("attention_flops_per_context_token", pr.attention_flops_per_token(1), "flop/token**2",
               r"$QK^{\top}$ and $PV$ do $2 w_{k}$ and $2 w_{v}$ FLOPs per query head per cached token in every layer "
               r"($w_{k} = w_{v} = H$ for GQA; absorbed MLA scores over its latent and RoPE key and sums values in the latent); "
               "query heads count, not KV heads.",
               latex=r"a", meaning="attention FLOPs per token per token of context", title="Attention FLOPs per token of context")
attn = Step("attention_flops", per_ctx.s * pr.read_context() + pr.indexer_flops_per_token() + pr.recurrent_flops_per_token(), "flop/token",
            r"A decode token attends to the tokens each attention layer reads: all $T$ cached tokens, or at most $\sym{W_win}$ in a layer "
            "with a window or a sparse top-$k$ (whose indexer scores all $T$ first); a recurrent layer updates its state instead, whatever "
            "the context.", latex=r"f_{\mathrm{att}}", title="Attention FLOPs per decode token")
ctx_break = solve("ctx_break", attn, flops_params, gl.T, "token",
                  r"The context where attention FLOPs equal the weight FLOPs: beyond it the rule undercounts by more than $2\times$.",
                  latex=r"T_{\mathrm{break}}", title="Context where attention matches the weights",
                  none="every layer attends through a window, which caps attention's FLOPs below the weights' at any context")
per_ctx_prefill = Step("attention_flops_per_context_token_prefill", pr.attention_flops_per_token(1, gl.L_att, gl.N, gl.h_k, gl.h_v), "flop/token**2",
                       r"Prefill runs attention over materialised K and V (per head $h_{k}$ and $h_{v}$ wide; MLA decompresses its latent once "
                       "rather than absorbing): the same as decode for GQA.",
                       latex=r"a_{\mathrm{pre}}", title="Prefill attention FLOPs per token of context")
attn_prefill = Step("attention_flops_prefill_avg", per_ctx_prefill.s * pr.attended_pairs() / gl.S + pr.indexer_flops_per_token(gl.S / 2)
                    + pr.recurrent_flops_per_token(), "flop/token",
                    r"In a causal prefill of $S$ tokens, query $i$ sees $i$ tokens ($S/2$ on average), or at most $\sym{W_win}$ in a layer "
                    "with a window.", latex=r"\bar{f}_{\mathrm{att}}",
                    title="Average attention FLOPs per prefill token")
ctx_break_prefill = solve("ctx_break_prefill", attn_prefill, flops_params, gl.S, "token",
                          "The prompt length where prefill's average attention FLOPs per token equal the weight FLOPs: twice the decode break "
                          "without windows.",
                          latex=r"S_{\mathrm{break}}", title="Prompt length where prefill attention matches the weights",
                          none="every layer attends through a window, which caps prefill attention's FLOPs per token below the weights' at any prompt length")
per_token_total = Step("flops_per_token_total", flops_params.s + attn.s, "flop/token",
                       "Weight FLOPs plus attention at the input context.", latex=r"f", title="FLOPs per token at the input context")
rule_error = Step("actual_over_rule", per_token_total.s / rule.s, "1",
                  "Above 1 the rule undercounts; below 1 it overcounts.", latex=r"f/f_{\mathrm{rule}}", title="True count over the rule")

MODELS = ("llama-3.2-1b", "llama-2-7b", "mistral-7b", "llama-3.1-8b", "llama-3.1-70b", "qwen2.5-72b", "llama-3.1-405b",
          "mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v2-lite", "deepseek-v3")

DERIVATION = derivation(
    "flops-per-token",
    "FLOPs per token: where the 2 FLOPs per parameter rule comes from and where it breaks",
    "Two FLOPs per parameter is the number everyone quotes. The answer interviewers want rebuilds it from the config, "
    "finds the parameters that do no arithmetic, and names the context length where the rule breaks.",
    S,
    (n_attn, n_mlp, n_moe, rebuilt, matmul, no_arith, total, no_arith_share, flops_params, rule, rule_over, per_ctx, attn,
     ctx_break, per_ctx_prefill, attn_prefill, ctx_break_prefill, per_token_total, rule_error),
    ("params_total", "params_matmul", "params_no_arithmetic", "flops_per_token_params", "attention_flops_per_context_token", "ctx_break"),
    argument=(
        "n_attn", "n_mlp", "params_matmul_rebuilt", "params_matmul", "params_no_arithmetic", "params_total",
        "flops_per_token_params", "flops_rule", "rule_over_actual", "attention_flops_per_context_token", "ctx_break",
        "ctx_break_prefill",
    ),
    body_tables=(0, 1),
    answer=(
        "The model holds {params_total}: {params_matmul} are GEMM operands and {params_no_arithmetic} do no arithmetic (the embedding "
        "is a gather, norms scale).",
        "Its weights cost {flops_per_token_params}, where the two-FLOPs-per-parameter rule says {flops_rule}: the rule is "
        "{rule_over_actual} times too high because it counts the parameters that do no matmul.",
        "Attention adds {attention_flops_per_context_token} for each token of context and matches the weights at a context of "
        "{ctx_break}: beyond it the rule undercounts.",
    ),
    assumptions=(
        "The rebuild from the config writes GQA attention and gated (SwiGLU) MLPs, dense or mixture-of-experts (Llama, Mistral, Mixtral, Qwen); "
        r"MLA attention (DeepSeek) and linear attention (Qwen3-Next's Gated DeltaNet) have other projections, so their rebuild is not applicable, while the exact counts ($\sym{params_matmul}$, $\sym{params_no_arithmetic}$) "
        "come from the spec layer for every family, including Qwen's QKV biases, tied embeddings, MoE experts and MLA.",
        "Norm weights, biases and the embedding are counted as parameters that do no matmul; their elementwise work (at most a few FLOPs per element of activation) is left out.",
        r"Attention FLOPs count $QK^{\top}$ and $PV$ only; softmax, RoPE and masking are left out (a few FLOPs per score, not per weight).",
        r"MoE: a token multiplies only its top-$k$ routed experts (plus shared experts and the router).",
        r"Decode attention of MLA models is counted as the absorbed kernel runs it (scores over $r_{\mathrm{kv}} + d_{R}$, values in the $r_{\mathrm{kv}}$ latent); "
        "prefill over materialised K and V.",
    ),
    takeaways=(
        "Weight FLOPs per token are {flops_per_token_params}, against {flops_rule} from the rule: the rule overstates them {rule_over_actual} times because it also counts the parameters that do no matmul ({params_no_arithmetic}).",
        "Attention adds {attention_flops_per_context_token} per token of context; it equals the weight FLOPs at a context of {ctx_break} in decode and at a prompt of {ctx_break_prefill} averaged over a prefill.",
        "At the input context the true count is {actual_over_rule} times the rule.",
    ),
    scoring=(
        r"Rebuilds the per-layer count from $D$, $F$, $N$, $K$, $H$ and gets the LM head in and the embedding gather out.",
        "Says 2 FLOPs per multiply-add and one multiply-add per weight per token.",
        "Knows tied embeddings are read once, as the LM head, and MoE inactive experts do no FLOPs.",
        "Counts attention with query heads (GQA saves bytes, not FLOPs) and finds the break context in closed form.",
        "Distinguishes the decode break from the prefill-average break (a factor of 2 from causality).",
    ),
    limits=(
        "FLOPs are not time: at decode the weights are read from HBM and the step is memory-bound (@decode-floor).",
        "Sliding-window or local attention caps the context term; MLA changes its constant (@mla-absorption).",
        "Speculative decoding and beam search multiply the tokens per step, not the per-token count.",
    ),
    tables=(
        Table("The rule across models (input context)", tuple(Row(model=m, label="") for m in MODELS),
              ("params_total", "params_no_arithmetic", "flops_per_token_params", "ctx_break"),
              note="MoE rows count only the routed experts a token uses; MLA rows (DeepSeek) count absorbed decode attention (@mla-absorption)."),
        Table("Attention's share as the context grows", tuple(
            Row("", set={"context": f"{t} token"}) for t in (1024, 8192, 32768, 131072)
        ), ("attention_flops", "flops_per_token_total", "actual_over_rule")),
    ),
    claims=(
        Claim("Two FLOPs per parameter holds within 10% at short context.", "flops_per_token_params", "flops_rule", rel_tol=0.10),
        Claim("The rebuild from the config matches the exact count of GEMM parameters.", "params_matmul_rebuilt", "params_matmul", rel_tol=1e-12),
        Claim("The rebuild matches for a mixture of experts too (Mixtral 8x7B: 8 experts and a router per layer).", "params_matmul_rebuilt", "params_matmul",
              rel_tol=1e-12, where=Row("Mixtral 8x7B", model="mixtral-8x7b")),
        Claim("The rebuild matches for Qwen3-235B-A22B (128 experts of width 1536, QK norms and no dense MLP).", "params_matmul_rebuilt", "params_matmul",
              rel_tol=1e-12, where=Row("Qwen3-235B-A22B", model="qwen3-235b-a22b")),
    ),
    models=("llama-3.1-8b", "llama-3.1-70b"),
    plots=(Plot("flops", "sweep",
                r"FLOPs per token against context: the weights' two FLOPs per parameter stay flat while attention's grow with every "
                r"cached token, and pass them at $\sym{ctx_break}$.",
                title="Attention's FLOPs per token pass the weights' {flops_per_token_params} at a context of {ctx_break}",
                x="context", y=("flops_per_token_params", "attention_flops", "flops_per_token_total"), span=("128 token", "1048576 token"),
                vlines=("ctx_break",), answer=True,
                labels={"flops_per_token_params": r"weights, $\kappa P_{\mathrm{act}}$", "attention_flops": "attention",
                        "flops_per_token_total": "both"}),),
    display_units={"flops_per_token_params": "Gflop/token", "flops_rule": "Gflop/token", "attention_flops": "Gflop/token",
                   "flops_per_token_total": "Gflop/token", "attention_flops_per_context_token": "Mflop/token**2",
                   "attention_flops_prefill_avg": "Gflop/token"},
)

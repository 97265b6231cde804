"""MLA weight absorption: one line of associativity, and its bill.

Takeaway: with absorbed weights every head scores against the cached latent
plus RoPE key (r_kv + d_R) and sums values in the latent (r_kv), so one cached
token costs N*(4*r_kv + 2*d_R) FLOPs per query token for (r_kv + d_R)*b_kv
bytes: more FLOPs per cached token than attention over materialised K and V,
far fewer than decompressing the latent every step, and an intensity near the
ridge that no GQA model reaches. Per layer, per sequence; softmax left out.
"""

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.engine import Claim, Row, Step, Table, derivation
from derivations.symbols import Symbols

S = Symbols(parent=gl.GLOSSARY)
ONE = 1  # per cached token: the attention primitives at T = 1 give FLOPs and bytes per cached token

latent = Step("latent_width", pr.mla_latent_width(), "1",
              "MLA caches one latent of r_kv elements per token and layer, plus one RoPE key of d_R shared by all heads.",
              latex=r"w_{\mathrm{lat}}")
bytes_tok = Step("bytes_per_cached_token", pr.mla_latent_bytes_per_cached_token(), "B/token",
                 "With or without absorption the kernel reads each cached token's latent and RoPE key once per step, for all heads.",
                 latex=r"s_{c}")
flops_abs = Step("flops_per_cached_token_absorbed", pr.mla_absorbed_flops_per_cached_token(), "flop/token",
                 "Absorbed: each of N heads scores its (r_kv + d_R)-wide query against the latent and RoPE key and adds p times the r_kv latent into its output.",
                 latex=r"f_{\mathrm{abs}}")
i_mla = Step("intensity_mla", pr.intensity(flops_abs.s, bytes_tok.s), "flop/B",
             "All N heads reuse the one latent they read: N*(4*r_kv + 2*d_R)/((r_kv + d_R)*b_kv) per query token.",
             latex=r"I_{\mathrm{MLA}}")
flops_dec = Step("flops_decompress_per_cached_token", pr.mla_decompress_flops_per_cached_token(), "flop/token",
                 "Not absorbed: every step re-multiplies every cached latent by W_UK and W_UV (r_kv x N*(d_nope + d_v)) to rebuild each head's K_nope and V.",
                 latex=r"f_{\mathrm{up}}")
flops_mat = Step("flops_per_cached_token_materialised", pr.mla_materialised_flops_per_cached_token(), "flop/token",
                 "Then ordinary attention over per-head K (d_nope + d_R) and V (d_v); this is also the whole bill when K and V are stored materialised.",
                 latex=r"f_{\mathrm{mat}}")
flops_naive = Step("flops_per_cached_token_naive", flops_dec.s + flops_mat.s, "flop/token",
                   "Non-absorbed MLA pays the decompression plus the ordinary attention for every cached token, every step.",
                   latex=r"f_{\mathrm{naive}}")
i_naive = Step("intensity_naive", pr.intensity(flops_naive.s, bytes_tok.s), "flop/B",
               "It reads the same latent bytes (K and V rebuilt on chip), so its intensity is huge: compute-bound, on wasted FLOPs.",
               latex=r"I_{\mathrm{naive}}")
bytes_mat = Step("bytes_per_cached_token_materialised", pr.mla_materialised_bytes_per_cached_token(), "B/token",
                 "Storing per-head K and V instead (as the reference implementation's cache does) reads N*(d_nope + d_R + d_v) elements per cached token.",
                 latex=r"s_{\mathrm{mat}}")
i_mat = Step("intensity_materialised", pr.intensity(flops_mat.s, bytes_mat.s), "flop/B",
             "Attention over materialised K and V is multi-head attention: every head reads its own K and V, 2q/b_kv.",
             latex=r"I_{\mathrm{mat}}")
abs_over_mat = Step("absorbed_over_materialised", flops_abs.s / flops_mat.s, "1",
                    "The bill: absorbed attention does more FLOPs per cached token than attention over materialised K and V, because it works in the wider latent.",
                    latex=r"f_{\mathrm{abs}}/f_{\mathrm{mat}}")
naive_over_abs = Step("naive_over_absorbed", flops_naive.s / flops_abs.s, "1",
                      "What absorption saves against decompressing the cache every step.", latex=r"f_{\mathrm{naive}}/f_{\mathrm{abs}}")
flops_q = Step("flops_absorb_per_step", gl.kappa * pr.mla_up_projection_params() * gl.q, "flop",
               "Absorption moves W_UK onto the query and W_UV onto the output: once per query token, not once per cached token.",
               latex=r"F_{\mathrm{q}}")
step_naive = Step("flops_step_naive", gl.T * flops_naive.s, "flop",
                  "One sequence, one layer, one step, not absorbed: T cached tokens.", latex=r"F_{\mathrm{naive}}")
step_abs = Step("flops_step_absorbed", gl.T * flops_abs.s + flops_q.s, "flop",
                "Absorbed: T cached tokens plus the per-query projections.", latex=r"F_{\mathrm{abs}}")
t_absorb = Step("T_absorb", flops_q.s / (flops_naive.s - flops_abs.s), "token",
                "Set F_naive = F_abs and solve for T (tests check this closed form against the equation): the context beyond which absorption does fewer FLOPs. "
                "About one token, so absorption always wins at decode.",
                latex=r"T_{\mathrm{abs}}")
ridge = Step("ridge_point", pr.ridge_point(), "flop/B",
             "The intensity where compute time equals memory time.", latex=r"I^{*}")
mla_over = Step("mla_over_ridge", i_mla.s / ridge.s, "1",
                "Near 1 the kernel sits at the ridge: neither the bandwidth nor the tensor cores have slack. Above 1 it is compute-bound.",
                latex=r"I_{\mathrm{MLA}}/I^{*}")
group = Step("group_size", gl.N / gl.n_kv, "1",
             "For comparison with GQA: query heads that read one cached stream (N/K for GQA, all N for MLA).", latex=r"G")
flops_any = Step("flops_per_cached_token_attention", pr.decode_attention_flops(T=ONE), "flop/token",
                 "The same per-cached-token FLOPs written for any architecture (w_k, w_v bound from the config): equal to f_abs for MLA.",
                 latex=r"f_{\mathrm{att}}")
bytes_any = Step("bytes_per_cached_token_attention", pr.decode_attention_cache_bytes(T=ONE), "B/token",
                 "Cached bytes per token and layer for any architecture: 2KH*b_kv for GQA, the latent for MLA.",
                 latex=r"s_{\mathrm{att}}")
i_any = Step("intensity_attention", pr.intensity(flops_any.s, bytes_any.s), "flop/B",
             "GQA lands at about G flop/B in BF16; MLA at I_MLA.", latex=r"I_{\mathrm{att}}")

GQA = "llama-3.1-70b"

DERIVATION = derivation(
    "mla-absorption",
    "MLA weight absorption and its bill",
    "Absorption is one line of matrix associativity. The part interviewers score is the bill: attention gets more expensive per cached token, "
    "and the kernel lands in a roofline regime GQA never visits.",
    S,
    (latent, bytes_tok, flops_abs, i_mla, flops_dec, flops_mat, flops_naive, i_naive, bytes_mat, i_mat, abs_over_mat, naive_over_abs,
     flops_q, step_naive, step_abs, t_absorb, ridge, mla_over, group, flops_any, bytes_any, i_any),
    ("flops_per_cached_token_absorbed", "flops_per_cached_token_naive", "bytes_per_cached_token", "intensity_mla"),
    assumptions=(
        "Associativity, with shapes: head h's key is k_h,t = W_UK,h c_t, with W_UK,h of shape d_nope x r_kv and c_t the r_kv-wide cached latent. "
        "So q_h^T k_h,t = q_h^T (W_UK,h c_t) = (W_UK,h^T q_h)^T c_t: the r_kv-wide absorbed query W_UK,h^T q_h is built once per query token, "
        "and no cached token is decompressed. Likewise o_h = sum_t p_t W_UV,h c_t = W_UV,h (sum_t p_t c_t), with W_UV,h of shape d_v x r_kv: "
        "values are summed in the latent and up-projected once.",
        "The decoupled RoPE key (d_R, shared by all heads) cannot be absorbed: it is cached beside the latent and each head's d_R-wide RoPE query scores against it.",
        "'Naive' means not absorbed: cache the latent, and every step up-project every cached latent to each head's K_nope and V "
        "(r_kv x N*(d_nope + d_v) weights), then run ordinary attention. K and V are rebuilt on chip, so bytes stay the latent's.",
        "'Materialised' means caching per-head K and V (what the reference Hugging Face code keeps): no decompression, but N*(d_nope + d_R + d_v) elements per cached token.",
        "Counts are per layer, per sequence, per step, for q query tokens per sequence; 2 FLOPs per multiply-add; softmax and scaling left out.",
        "GQA numbers come from the same step written with architecture-neutral widths (w_k, w_v, w_c, n_kv), bound from each model's config.",
    ),
    takeaways=(
        "Absorbed, one cached token costs {flops_per_cached_token_absorbed} for {bytes_per_cached_token}: an intensity of {intensity_mla}, {mla_over_ridge} of this chip's ridge {ridge_point}.",
        "The bill: that is {absorbed_over_materialised} times the FLOPs of attention over materialised K and V ({flops_per_cached_token_materialised}), because scores and value sums run in the {latent_width}-wide latent.",
        "Not absorbing costs {flops_per_cached_token_naive}, {naive_over_absorbed} times more, almost all of it rebuilding K and V; absorption wins beyond T = {T_absorb}.",
        "GQA never gets here: each KV head serves only G query heads, so its intensity is about G in BF16 (the GQA comparison table), while MLA's G is all N heads.",
    ),
    scoring=(
        "Writes the associativity with shapes: (W_UK^T q)^T c instead of q^T (W_UK c); the same for W_UV on the output side.",
        "Says the RoPE part is decoupled because a position-dependent rotation cannot be folded into W_UK.",
        "Counts FLOPs per cached token with exact widths: 2*(r_kv + d_R) for scores plus 2*r_kv for values, per head.",
        "Sees that absorbed attention does more FLOPs per cached token than materialised MHA, but reads far fewer bytes, so the intensity jumps.",
        "Places the kernel on each accelerator's roofline and contrasts GQA's G flop/B.",
    ),
    limits=(
        "Prefill is the opposite case: with many query tokens per cached token, decompressing K and V once is cheaper, and production kernels do not absorb there.",
        "Past the ridge (H200, FP8 latents, MTP) the kernel is compute-bound and softmax and exponent work, left out here, starts to count.",
        "Tensor parallelism splits heads but replicates the latent, dividing the intensity per GPU by n_TP (attention-intensity).",
        "FP8 latent formats keep the RoPE part in BF16 and add scales, so the FP8 gain is a little under 2x.",
    ),
    tables=(
        Table("Regime on each accelerator", (
            Row("", hardware="h100-sxm"),
            Row("", hardware="h200"),
            Row("", hardware="b200"),
            Row("H100 SXM, FP8 latent, BF16 math", hardware="h100-sxm", kv="fp8"),
            Row("B200, FP8 latent, FP8 math", hardware="b200", kv="fp8", math="fp8"),
        ), ("intensity_mla", "ridge_point", "mla_over_ridge")),
        Table("Absorbed MLA against GQA, per cached token and layer", (
            Row("DeepSeek-V3 (MLA, absorbed)", model="deepseek-v3"),
            Row("DeepSeek-V2-Lite (MLA, absorbed)", model="deepseek-v2-lite"),
            Row("Llama 3.1 8B (GQA)", model="llama-3.1-8b"),
            Row("Llama 3.1 70B (GQA)", model=GQA),
            Row("Llama 3.1 405B (GQA)", model="llama-3.1-405b"),
        ), ("group_size", "flops_per_cached_token_attention", "bytes_per_cached_token_attention", "intensity_attention"),
            note="BF16 cache, one query token per step."),
        Table("Tokens per step multiply both FLOP counts", (
            Row("q=1", set={"tokens_per_step": "1 token"}),
            Row("q=2 (MTP)", set={"tokens_per_step": "2 token"}),
            Row("q=4", set={"tokens_per_step": "4 token"}),
        ), ("flops_per_cached_token_absorbed", "flops_per_cached_token_naive", "intensity_mla", "mla_over_ridge")),
    ),
    claims=(
        Claim("Absorption pays for itself from the first cached token: the FLOP crossover is at about one token of context.", "T_absorb", "1 token", rel_tol=0.05),
        Claim("The GQA comparison model (Llama 3.1 70B, BF16) sits at its group size in flop/B.", "intensity_attention", "group_size", rel_tol=1e-9,
              where=Row("Llama 3.1 70B", model=GQA), convert="flop/B"),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("deepseek-v3", "deepseek-v2-lite"),
    display_units={"flops_per_cached_token_absorbed": "kflop/token", "flops_per_cached_token_naive": "Mflop/token",
                   "flops_decompress_per_cached_token": "Mflop/token", "flops_per_cached_token_materialised": "kflop/token",
                   "flops_per_cached_token_attention": "kflop/token", "bytes_per_cached_token_attention": "kB/token",
                   "bytes_per_cached_token_materialised": "kB/token", "bytes_per_cached_token": "kB/token",
                   "flops_absorb_per_step": "Mflop", "flops_step_naive": "Gflop", "flops_step_absorbed": "Gflop"},
)

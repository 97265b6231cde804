"""MLA weight absorption: one line of associativity, and its bill.

Takeaway: three ways to run MLA decode attention, per cached token and layer.
The reference kernel (DeepSeek-V3's own inference code, attn_impl = "naive")
caches every head's K (d_nope + d_R) and V (d_v) and runs ordinary attention:
N*(d_nope + d_R + d_v) channels, as many cached elements. Absorbed, every head
scores against the cached latent plus RoPE key (r_kv + d_R) and sums values in
the latent (r_kv): N*(2*r_kv + d_R) channels, more FLOPs than the reference
kernel but only (r_kv + d_R) cached elements for all heads, so the intensity
lands near the ridge. Caching the latent without absorbing means decompressing
it every step, up-projecting each cached latent to every head's K and V: far
more FLOPs than either. Per layer, per sequence; softmax left out.
"""

from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)
ONE = 1  # per cached token: the attention primitives at T = 1 give FLOPs and bytes per cached token

latent = Step("latent_width", pr.mla_latent_width(), "1",
              "MLA caches one latent of $\\sym{r_kv}$ elements per token and layer, plus one RoPE key of $\\sym{d_R}$ shared by all heads.",
              latex=r"w_{\mathrm{lat}}", title="Latent width")
bytes_tok = Step("bytes_per_cached_token", pr.mla_latent_bytes_per_cached_token(), "B/token",
                 "Absorbed (and decompressed) kernels read each cached token's latent and RoPE key once per step, for all heads.",
                 latex=r"s_{\mathrm{lat}}", title="Latent bytes per cached token")
flops_abs = Step("flops_per_cached_token_absorbed", pr.mla_absorbed_flops_per_cached_token(), "flop/token",
                 "Absorbed: each of $\\sym{N}$ heads scores its ($\\sym{r_kv} + \\sym{d_R}$)-wide query against the latent and RoPE key and adds "
                 "$p$ times the $\\sym{r_kv}$-wide latent into its output.",
                 latex=r"f_{\mathrm{abs}}", title="Absorbed FLOPs per cached token")
i_mla = Step("intensity_mla", pr.intensity(flops_abs.s, bytes_tok.s), "flop/B",
             "All $\\sym{N}$ heads reuse the one latent they read: "
             "$\\sym{N}(4\\sym{r_kv} + 2\\sym{d_R})/((\\sym{r_kv} + \\sym{d_R})\\sym{b_kv})$ per query token.",
             latex=r"I_{\mathrm{MLA}}", title="Absorbed intensity")
flops_naive = Step("flops_per_cached_token_naive", pr.mla_materialised_flops_per_cached_token(), "flop/token",
                   "Not absorbed, as the reference implementation runs it: each head scores against its own cached $K$ "
                   "($\\sym{d_nope} + \\sym{d_R}$) and sums its own cached $V$ ($\\sym{d_v}$), "
                   "$\\sym{N}(\\sym{d_nope} + \\sym{d_R} + \\sym{d_v})$ channels.",
                   latex=r"f_{\mathrm{naive}}", title="Reference-kernel FLOPs per cached token")
bytes_naive = Step("bytes_per_cached_token_naive", pr.mla_materialised_bytes_per_cached_token(), "B/token",
                   "The reference cache keeps per-head $K$ and $V$ (the RoPE key copied to every head): "
                   "$\\sym{N}(\\sym{d_nope} + \\sym{d_R} + \\sym{d_v})$ elements per cached token.",
                   latex=r"s_{\mathrm{naive}}", title="Reference-cache bytes per cached token")
i_naive = Step("intensity_naive", pr.intensity(flops_naive.s, bytes_naive.s), "flop/B",
               "Every head reads its own $K$ and $V$, as in multi-head attention: $2\\sym{q}/\\sym{b_kv}$, whatever the widths.",
               latex=r"I_{\mathrm{naive}}", title="Reference-kernel intensity")
flops_up = Step("flops_upproject_per_cached_token", pr.mla_decompress_flops_per_cached_token(), "flop/token",
                "Caching the latent without absorbing means re-multiplying every cached latent by $W_{UK}$ and $W_{UV}$ "
                "($\\sym{r_kv} \\times \\sym{N}(\\sym{d_nope} + \\sym{d_v})$) every step, to rebuild each head's $K_{\\mathrm{nope}}$ and $V$.",
                latex=r"f_{\mathrm{up}}", title="Up-projection FLOPs per cached token")
flops_dec = Step("flops_per_cached_token_decompress", flops_up.s + flops_naive.s, "flop/token",
                 "Decompress every step: the up-projection plus the ordinary attention over the rebuilt $K$ and $V$.",
                 latex=r"f_{\mathrm{dec}}", title="Decompress-every-step FLOPs per cached token")
i_dec = Step("intensity_decompress", pr.intensity(flops_dec.s, bytes_tok.s), "flop/B",
             "It reads only the latent ($K$ and $V$ rebuilt on chip), so all the up-projection FLOPs, which absorption avoids, land on the same few bytes.",
             latex=r"I_{\mathrm{dec}}", title="Decompress-every-step intensity")
abs_over_naive = Step("absorbed_over_naive", flops_abs.s / flops_naive.s, "1",
                      "The bill: absorbed FLOPs per cached token over the reference kernel's; scores and value sums run in the latent, not in the head widths.",
                      latex=r"f_{\mathrm{abs}}/f_{\mathrm{naive}}", title="The bill in FLOPs")
abs_over_naive_bytes = Step("absorbed_over_naive_bytes", bytes_tok.s / bytes_naive.s, "1",
                            "What it buys: absorbed bytes per cached token over the reference kernel's; one latent for all heads instead of a $K$ and $V$ per head.",
                            latex=r"s_{\mathrm{lat}}/s_{\mathrm{naive}}", title="What it buys in bytes")
dec_over_abs = Step("decompress_over_absorbed", flops_dec.s / flops_abs.s, "1",
                    "Decompressing every step over absorbing: what absorption saves when the cache holds only the latent.",
                    latex=r"f_{\mathrm{dec}}/f_{\mathrm{abs}}", title="Decompress over absorbed")
flops_q = Step("flops_absorb_per_step", gl.kappa * pr.mla_up_projection_params() * gl.q, "flop",
               "Absorption moves $W_{UK}$ onto the query and $W_{UV}$ onto the output: once per query token, not once per cached token.",
               latex=r"F_{\mathrm{q}}", title="Absorbed projections per step")
step_dec = Step("flops_step_decompress", gl.T * flops_dec.s, "flop",
                "One sequence, one layer, one step, decompressing: $\\sym{T}$ cached tokens.", latex=r"F_{\mathrm{dec}}", title="Decompress FLOPs per step")
step_abs = Step("flops_step_absorbed", gl.T * flops_abs.s + flops_q.s, "flop",
                "Absorbed: $\\sym{T}$ cached tokens plus the per-query projections.", latex=r"F_{\mathrm{abs}}", title="Absorbed FLOPs per step")
t_absorb = solve("T_absorb", step_dec, step_abs, gl.T, "token",
                 "The context beyond which absorbing does fewer FLOPs than decompressing the latent every step.",
                 latex=r"T_{\mathrm{abs}}", title="Context where absorbing starts to win",
                 none="with this many query tokens per step the absorbed scores and value sums cost more per cached token than decompressing "
                      "once for all of them, so absorbing never does fewer FLOPs (the prefill case)")
ridge = Step("ridge_point", pr.ridge_point(gl.pi_kv), "flop/B",
             r"The intensity where compute time equals memory time, at the attention kernel's own math: the KV cache's format "
             r"($\sym{pi_kv}$; FlashMLA runs a BF16 latent in BF16 whatever format the weights' GEMMs run in).", latex=r"I^{*}", title="Ridge point")
mla_over = Step("mla_over_ridge", i_mla.s / ridge.s, "1",
                "Near 1 the kernel sits at the ridge: neither the bandwidth nor the tensor cores have slack. Above 1 it is compute-bound.",
                latex=r"I_{\mathrm{MLA}}/I^{*}", title="Absorbed intensity over the ridge")
t_abs = Step("time_step_absorbed", pr.roofline_time(step_abs.s, gl.T * bytes_tok.s, gl.pi_kv), "s",
             "Roofline time of one layer's attention for one sequence at context $\\sym{T}$, absorbed: the longer of its FLOPs at peak "
             "and its latent bytes at full bandwidth.",
             latex=r"t_{\mathrm{abs}}", title="Absorbed attention time")
t_naive = Step("time_step_naive", pr.roofline_time(gl.T * flops_naive.s, gl.T * bytes_naive.s, gl.pi_kv), "s",
               "The same for the reference kernel, which reads every head's $K$ and $V$.", latex=r"t_{\mathrm{naive}}", title="Reference-kernel attention time")
t_dec = Step("time_step_decompress", pr.roofline_time(step_dec.s, gl.T * bytes_tok.s, gl.pi_kv), "s",
             "The same for decompressing every step, which reads the latent and does the up-projection.", latex=r"t_{\mathrm{dec}}", title="Decompress attention time")
naive_over_abs_time = Step("naive_over_absorbed_time", t_naive.s / t_abs.s, "1",
                           "Reference kernel time over absorbed time on this chip.", latex=r"t_{\mathrm{naive}}/t_{\mathrm{abs}}", title="Reference over absorbed time")
group = Step("group_size", gl.N / gl.n_kv, "1",
             "For comparison with GQA: query heads that read one cached stream ($\\sym{N}/\\sym{K}$ for GQA, all $\\sym{N}$ for MLA).", latex=r"G", title="Query heads per cached stream")
flops_any = Step("flops_per_cached_token_attention", pr.decode_attention_flops(T=ONE), "flop/token",
                 "The same per-cached-token FLOPs written for any architecture ($\\sym{w_k}$, $\\sym{w_v}$ bound from the config): "
                 "equal to $f_{\\mathrm{abs}}$ for MLA.",
                 latex=r"f_{\mathrm{att}}", title="Attention FLOPs per cached token, any architecture")
bytes_any = Step("bytes_per_cached_token_attention", pr.decode_attention_cache_bytes(T=ONE), "B/token",
                 "Cached bytes per token and layer for any architecture: $2\\sym{K}\\sym{H}\\sym{b_kv}$ for GQA, the latent for MLA.",
                 latex=r"s_{\mathrm{att}}", title="Cached bytes per token, any architecture")
i_any = Step("intensity_attention", pr.intensity(flops_any.s, bytes_any.s), "flop/B",
             "GQA lands at its group size $G$ in flop/B in BF16; MLA at $I_{\\mathrm{MLA}}$.", latex=r"I_{\mathrm{att}}", title="Attention intensity, any architecture")

GQA = "llama-3.1-70b"

DERIVATION = derivation(
    "mla-absorption",
    "MLA weight absorption and its bill",
    "Absorption is one line of matrix associativity. The part interviewers score is the bill: attention gets more expensive per cached token, "
    "and the kernel lands in a roofline regime GQA never visits.",
    S,
    (latent, bytes_tok, flops_abs, i_mla, flops_naive, bytes_naive, i_naive, flops_up, flops_dec, i_dec,
     abs_over_naive, abs_over_naive_bytes, dec_over_abs, flops_q, step_dec, step_abs, t_absorb, ridge, mla_over,
     t_abs, t_naive, t_dec, naive_over_abs_time, group, flops_any, bytes_any, i_any),
    ("flops_per_cached_token_absorbed", "flops_per_cached_token_naive", "bytes_per_cached_token", "intensity_mla"),
    argument=(
        "latent_width", "bytes_per_cached_token", "flops_per_cached_token_absorbed", "intensity_mla",
        "flops_per_cached_token_naive", "bytes_per_cached_token_naive", "intensity_naive", "absorbed_over_naive", "T_absorb",
        "ridge_point", "mla_over_ridge", "naive_over_absorbed_time",
    ),
    body_tables=(0, 1, 3),
    answer=(
        "Absorbed, attention reads {bytes_per_cached_token} of latent and does {flops_per_cached_token_absorbed} on it: an "
        "intensity of {intensity_mla}, {mla_over_ridge} of this chip's ridge.",
        "The reference kernel over per-head K and V does {flops_per_cached_token_naive}: absorption costs {absorbed_over_naive} "
        "times the FLOPs and lands attention in a regime GQA never visits.",
    ),
    assumptions=(
        "Associativity, with shapes: head $h$'s key is $k_{h,t} = W_{UK,h} c_t$, with $W_{UK,h}$ of shape $\\sym{d_nope} \\times \\sym{r_kv}$ "
        "and $c_t$ the $\\sym{r_kv}$-wide cached latent. So $q_h^\\top k_{h,t} = q_h^\\top (W_{UK,h} c_t) = (W_{UK,h}^\\top q_h)^\\top c_t$: "
        "the $\\sym{r_kv}$-wide absorbed query $W_{UK,h}^\\top q_h$ is built once per query token, and no cached token is decompressed. "
        "Likewise $o_h = \\sum_t p_t W_{UV,h} c_t = W_{UV,h} (\\sum_t p_t c_t)$, with $W_{UV,h}$ of shape $\\sym{d_v} \\times \\sym{r_kv}$: "
        "values are summed in the latent and up-projected once.",
        "The decoupled RoPE key ($\\sym{d_R}$ wide, shared by all heads) cannot be absorbed: it is cached beside the latent and each head's "
        "$\\sym{d_R}$-wide RoPE query scores against it.",
        "'Naive' is the non-absorbed kernel of DeepSeek-V3's reference inference code (its attn_impl 'naive'): its cache holds each head's $K$ "
        "($\\sym{d_nope} + \\sym{d_R}$, the shared RoPE key copied to every head) and $V$ ($\\sym{d_v}$), "
        "$\\sym{N}(\\sym{d_nope} + \\sym{d_R} + \\sym{d_v})$ elements per token, and it runs ordinary attention over them.",
        "'Decompress' caches only the latent but does not absorb: every step it up-projects every cached latent to each head's "
        "$K_{\\mathrm{nope}}$ and $V$ ($\\sym{r_kv} \\times \\sym{N}(\\sym{d_nope} + \\sym{d_v})$ weights), then runs the same ordinary attention. "
        "$K$ and $V$ are rebuilt on chip, so its bytes are the latent's.",
        "The crossover $T_{\\mathrm{abs}}$ compares absorbed with decompress, the variant that caches the same latent; the reference kernel, "
        "whose cache differs, is compared per cached token by the ratios of FLOPs, bytes and roofline time.",
        "Counts are per layer, per sequence, per step, for $\\sym{q}$ query tokens per sequence; 2 FLOPs per multiply-add; softmax and scaling "
        "left out. Times are on the datasheet roofline (dense peak, full bandwidth).",
        "GQA numbers come from the same step written with architecture-neutral widths ($\\sym{w_k}$, $\\sym{w_v}$, $\\sym{w_c}$, $\\sym{n_kv}$), "
        "bound from each model's config.",
    ),
    takeaways=(
        "Absorbed, one cached token costs {flops_per_cached_token_absorbed} for {bytes_per_cached_token} of latent: "
        "an intensity of {intensity_mla}, {mla_over_ridge} of this chip's ridge {ridge_point}.",
        "The reference kernel, over per-head $K$ and $V$ in its cache, costs {flops_per_cached_token_naive} for {bytes_per_cached_token_naive}: "
        "an intensity of {intensity_naive}.",
        "The bill: absorbed over reference is {absorbed_over_naive} times the FLOPs per cached token (scores and value sums run in the "
        "{latent_width}-wide latent) and {absorbed_over_naive_bytes} times the bytes.",
        "Caching the latent but decompressing it every step costs {flops_per_cached_token_decompress}, {decompress_over_absorbed} times "
        "the absorbed FLOPs; against that variant absorbing breaks even at $\\sym{T}$ = {T_absorb} of context.",
        "On this chip's roofline, one layer's attention for one sequence at $\\sym{T}$ = {context} takes {time_step_absorbed} absorbed, "
        "{time_step_naive} with the reference kernel ({naive_over_absorbed_time} times as long) and {time_step_decompress} decompressing.",
        "GQA's intensity is its group size $G$ in flop/B in BF16 (the GQA comparison table and the claim below): each KV head serves "
        "only its $G$ query heads, while MLA's one latent serves all $\\sym{N}$.",
    ),
    scoring=(
        "Writes the associativity with shapes: $(W_{UK}^\\top q)^\\top c$ instead of $q^\\top (W_{UK} c)$; the same for $W_{UV}$ on the output side.",
        "Says the RoPE part is decoupled because a position-dependent rotation cannot be folded into $W_{UK}$.",
        "Counts FLOPs per cached token with exact widths: $2(\\sym{r_kv} + \\sym{d_R})$ for scores plus $2\\sym{r_kv}$ for values, per head, "
        "against $2(\\sym{d_nope} + \\sym{d_R})$ plus $2\\sym{d_v}$ for the reference kernel.",
        "Sees that absorbed attention does more FLOPs per cached token than the reference kernel over per-head $K$ and $V$, but reads far fewer "
        "bytes, so the intensity jumps; and that decompressing the latent every step is the expensive way to cache it.",
        "Places the kernel on each accelerator's roofline and contrasts GQA's $G$ flop/B.",
    ),
    limits=(
        "Prefill is the opposite case: with many query tokens per cached token, decompressing $K$ and $V$ once is cheaper, and production kernels "
        "do not absorb there ($T_{\\mathrm{abs}}$ has no value once $\\sym{q}$ is large enough).",
        "Past the ridge (H200, FP8 latents, MTP) the kernel is compute-bound and softmax and exponent work, left out here, starts to count.",
        "Tensor parallelism splits heads but replicates the latent, dividing the intensity per GPU by $\\sym{n_tp}$ (@attention-intensity).",
        "FP8 latent formats keep the RoPE part in BF16 and add scales, so the FP8 gain is a little under 2x.",
        "Roofline times are lower bounds: real kernels reach a fraction of peak and bandwidth, and the reference kernel also pays to write "
        "its much larger cache.",
    ),
    tables=(
        Table("The three kernels per cached token and layer", (
            Row("DeepSeek-V3", model="deepseek-v3"),
            Row("DeepSeek-V2-Lite", model="deepseek-v2-lite"),
        ), ("flops_per_cached_token_naive", "flops_per_cached_token_absorbed", "flops_per_cached_token_decompress",
            "bytes_per_cached_token_naive", "bytes_per_cached_token"),
            note="Query tokens per step and cache format as set above."),
        Table("Regime on each accelerator", (
            Row("", hardware="h100-sxm"),
            Row("", hardware="h200"),
            Row("", hardware="b200"),
            Row("H100 SXM, FP8 latent, BF16 math", hardware="h100-sxm", kv="fp8", math="bf16"),
            Row("B200, FP8 latent, FP8 math", hardware="b200", kv="fp8", math="fp8"),
        ), ("intensity_mla", "ridge_point", "mla_over_ridge")),
        Table("Roofline time of one layer's attention, one sequence, at the context set above", tuple(
            Row("", hardware=h) for h in ("h100-sxm", "h200", "b200", "mi300x", "tpu-v5e")
        ), ("time_step_naive", "time_step_absorbed", "time_step_decompress", "naive_over_absorbed_time")),
        Table("Absorbed MLA against GQA, per cached token and layer", (
            Row("DeepSeek-V3 (MLA, absorbed)", model="deepseek-v3"),
            Row("DeepSeek-V2-Lite (MLA, absorbed)", model="deepseek-v2-lite"),
            Row("Llama 3.1 8B (GQA)", model="llama-3.1-8b"),
            Row("Llama 3.1 70B (GQA)", model=GQA),
            Row("Llama 3.1 405B (GQA)", model="llama-3.1-405b"),
        ), ("group_size", "flops_per_cached_token_attention", "bytes_per_cached_token_attention", "intensity_attention"),
            note="BF16 cache, one query token per step."),
        Table("Tokens per step multiply the attention FLOPs, not the up-projection", (
            Row("", set={"tokens_per_step": "1 token"}),
            Row("MTP, $\\sym{q} = 2$ tokens", set={"tokens_per_step": "2 token"}),
            Row("", set={"tokens_per_step": "4 token"}),
            Row("a prefill chunk, $\\sym{q} = 512$ tokens", set={"tokens_per_step": "512 token"}),
        ), ("flops_per_cached_token_naive", "flops_per_cached_token_absorbed", "flops_per_cached_token_decompress", "T_absorb", "mla_over_ridge")),
    ),
    claims=(
        Claim("Against decompressing the latent every step, absorption pays for itself from about the first cached token "
              "(FLOP crossover near 1 token of context).", "T_absorb", "1 token", rel_tol=0.05),
        Claim("Absorbed MLA lands within 25% of this chip's ridge point.", "intensity_mla", "ridge_point", rel_tol=0.25),
        Claim("The GQA comparison model (Llama 3.1 70B, BF16) sits at its group size in flop/B.", "intensity_attention", "group_size", rel_tol=1e-9,
              where=Row("Llama 3.1 70B", model=GQA), convert="flop/B"),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("deepseek-v3", "deepseek-v2-lite"),
    plots=(Plot("roofline", "roofline",
                "The three MLA kernels and GQA attention on the roofline of each accelerator (filled on this one, open on the others): "
                "absorbed MLA lands near the ridges, the reference kernel and GQA far below them.",
                title="Absorbed, MLA attention runs at {intensity_mla}, {mla_over_ridge} of this chip's ridge; the reference kernel at "
                      "{intensity_naive}",
                points=("intensity_mla", "intensity_decompress", "intensity_naive"),
                rows=(Row("Llama 3.1 70B (GQA)", model=GQA),), row_points=("intensity_attention",), each_chip=True, answer=True,
                labels={"intensity_mla": "absorbed", "intensity_decompress": "decompressing the latent",
                        "intensity_naive": "reference kernel", "intensity_attention": "attention"}),),
    display_units={"mla_over_ridge": "%", "flops_per_cached_token_absorbed": "kflop/token", "flops_per_cached_token_naive": "kflop/token",
                   "flops_upproject_per_cached_token": "Mflop/token", "flops_per_cached_token_decompress": "Mflop/token",
                   "flops_per_cached_token_attention": "kflop/token", "bytes_per_cached_token_attention": "kB/token",
                   "bytes_per_cached_token_naive": "kB/token", "bytes_per_cached_token": "kB/token",
                   "flops_absorb_per_step": "Mflop", "flops_step_decompress": "Gflop", "flops_step_absorbed": "Gflop"},
)

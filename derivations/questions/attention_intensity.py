"""Why batching rescues the decode weight GEMMs but never the attention kernel.

Takeaway: a weight GEMM's intensity is kappa*B*q*P / (P*b_w + B*q*(d_in + d_out)*b_a),
rising with B towards kappa*B*q/b_w. Decode attention's is
(kappa_attn/2) * G * q * (w_k + w_v) / (w_c * b_kv): batch and context cancel
because every sequence reads its own cache, and only the group size G (query
heads per cached stream), the tokens per step and the KV format remain. GQA
gives 2*G*q/b_kv (G for BF16 and one token); absorbed MLA lets all N heads read
one latent, which lifts it to N*(4*r_kv + 2*d_R) / ((r_kv + d_R) * b_kv).
Assumes one layer, dense peaks, the architecture-neutral widths of the glossary.
"""

from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)
tokens = gl.B * gl.q

p_gate = Step("P_gate", gl.D * gl.F * gl.u_param, "parameter",
              r"The GEMM followed here is a real decode matrix: the MLP gate projection, $D \times F$ (the up projection has the same shape).",
              latex=r"P_{\mathrm{gate}}", title="Weights of the gate projection")
flops_gemm = Step("flops_gemm", pr.gemm_flops(p_gate.s, tokens), "flop",
                  r"Each of the $B q$ tokens of the step does one multiply-add per weight.", latex=r"F_{\mathrm{gemm}}", title="GEMM FLOPs")
bytes_gemm = Step("bytes_gemm", pr.gemm_bytes(gl.D, gl.F, tokens, P=p_gate.s), "B",
                  r"The weights cross HBM once per step whatever the batch; each token's input row ($D$) and output row ($F$) cross too.",
                  latex=r"W_{\mathrm{gemm}}", title="GEMM bytes")
i_gemm = Step("intensity_gemm", pr.intensity(flops_gemm.s, bytes_gemm.s), "flop/B",
              r"It rises with $B$: the batch shares the weight bytes, and only the activation rows grow with it.",
              latex=r"I_{\mathrm{gemm}}", title="GEMM intensity")
i_gemm_lim = Step("intensity_gemm_limit", pr.gemm_intensity_limit(tokens), "flop/B",
                  r"For a large matrix ($B q$ much smaller than $D$ and $F$) the activation rows vanish next to the weights, leaving $\kappa B q / b_{w}$, "
                  r"which in BF16 is $B$ itself.",
                  latex=r"I_{\mathrm{gemm}}^{\infty}", title="GEMM intensity for a large matrix")
ridge = Step("ridge_point", pr.ridge_point(), "flop/B",
             "The intensity where a kernel's compute time equals its memory time.", latex=r"I^{*}", title="Ridge point")
ridge_att = Step("ridge_point_attention", pr.ridge_point(gl.pi_kv), "flop/B",
                 r"The ridge attention meets: at the KV cache format's math ($\sym{pi_kv}$), which a checkpoint's FP8 GEMMs do not change "
                 "(FlashMLA runs a BF16 latent in BF16); the same as the weight GEMMs' ridge unless they run a narrower math.",
                 latex=r"I^{*}_{\mathrm{att}}", title="Ridge point of the attention kernel")
b_gemm_ridge = solve("B_gemm_ridge", i_gemm_lim, ridge, gl.B, "1",
                     "The batch at which a large weight GEMM turns compute-bound: batching does rescue the weight GEMMs. "
                     "Activation traffic moves it a little higher (the batch table).",
                     latex=r"B_{\mathrm{gemm}}^{*}", title="Batch where the GEMM turns compute-bound")
group = Step("group_size", gl.N / gl.n_kv, "1",
             r"Query heads that read the same cached stream: $N/K$ for GQA; all $N$ for MLA, whose one latent every head reads.",
             latex=r"G", title="Group size")
heads_gpu = Step("heads_per_gpu", pr.tp_split(gl.N), "1",
                 "Tensor parallelism splits the query heads over the GPUs.", latex=r"N_{\mathrm{GPU}}", title="Query heads per GPU")
streams_gpu = Step("streams_per_gpu", pr.streams_per_gpu(), "1",
                   "It splits the cached streams too, but never below one per GPU: MLA's single latent is replicated on every GPU.",
                   latex=r"n_{\mathrm{kv,GPU}}", title="Cached streams per GPU")
group_gpu = Step("group_per_gpu", heads_gpu.s / streams_gpu.s, "1",
                 r"Query heads per stream on one GPU: unchanged for GQA while $\sym{n_tp} \le K$, divided by $\sym{n_tp}$ for MLA.",
                 latex=r"G_{\mathrm{GPU}}", title="Group size on one GPU")
flops_attn = Step("flops_attention", gl.B * pr.decode_attention_flops(heads=heads_gpu.s), "flop",
                  r"$QK^{\top}$ over $w_{k}$ and $PV$ over $w_{v}$ channels per head, for the $q$ query tokens of each of $B$ sequences against $T$ cached tokens "
                  "(one layer, one GPU).",
                  latex=r"F_{\mathrm{att}}", title="Attention FLOPs")
bytes_cache = Step("bytes_attention_cache", gl.B * pr.decode_attention_cache_bytes(streams=streams_gpu.s), "B",
                   r"Each sequence reads its own $T$ cached tokens once, every stream; nothing is shared across the batch.",
                   latex=r"W_{\mathrm{cache}}", title="KV-cache bytes attention reads")
bytes_io = Step("bytes_attention_io", gl.B * pr.decode_attention_io_bytes(heads=heads_gpu.s), "B",
                r"The query rows read and the output rows written, which do not grow with $T$.", latex=r"W_{\mathrm{qo}}",
                title="Query and output bytes")
i_attn = Step("intensity_attention", pr.decode_attention_intensity(group_gpu.s), "flop/B",
              r"$\sym{flops_attention}$ over $\sym{bytes_attention_cache}$: $B$ cancels (each sequence brings its own cache) and $T$ cancels "
              "(each cached token is read once and used once per query), leaving the group size, the tokens per step and the KV format.",
              latex=r"I_{\mathrm{att}}", title="Attention intensity")
i_attn_t = Step("intensity_attention_at_T", pr.intensity(flops_attn.s, bytes_cache.s + bytes_io.s), "flop/B",
                r"Counting the query and output rows as well, the intensity approaches $\sym{intensity_attention}$ from below as $T$ grows: "
                "nearly independent of context.",
                latex=r"I_{\mathrm{att}}(T)", title="Attention intensity at this context")
att_over = Step("attention_over_ridge", i_attn.s / ridge_att.s, "1",
                "Below 1 the kernel is memory-bound: the tensor cores wait on the cache.", latex=r"I_{\mathrm{att}}/I^{*}",
                title="Attention intensity over the ridge")
q_ridge = solve("q_attention_ridge", i_attn, ridge_att, gl.q, "token",
                "The query tokens per sequence per step (speculative or multi-token decoding) at which attention reaches the ridge; batch cannot do this.",
                latex=r"q^{*}", title="Query tokens that reach the ridge")
i_equal = Step("intensity_attention_equal_widths", pr.decode_attention_intensity(group_gpu.s, w_v=gl.w_k), "flop/B",
               r"The common shortcut $d_{k} = d_{v}$: the value sum taken as wide as the score. Exact for GQA; for MLA it counts the RoPE columns in $PV$ too.",
               latex=r"I_{\mathrm{att}}^{d_k=d_v}", title="Attention intensity with equal widths")
equal_over = Step("equal_widths_over_ridge", i_equal.s / ridge_att.s, "1",
                  r"The same ratio to the ridge under the $d_{k} = d_{v}$ shortcut.", latex=r"I_{\mathrm{att}}^{d_k=d_v}/I^{*}",
                  title="Equal-width intensity over the ridge")
ridge_thr = Step("ridge_throttled", pr.ridge_point(gl.pi_sus, gl.beta), "flop/B",
                 "The ridge at the sustained (throttled) BF16 peak measured on this chip, over this chip's own bandwidth: FlashMLA's authors "
                 "measured about 865 Tflop/s at about 1600 MHz on the H800 SXM5, the reading under which their 'MLA sits at the ridge' holds. "
                 "A chip whose spec gives no measured sustained peak has no throttled ridge (n/a), rather than another chip's clock over its bandwidth.",
                 latex=r"I^{*}_{\mathrm{thr}}", title="Ridge at the throttled peak")

MLA = "deepseek-v3"
H100 = "h100-sxm"
#: the chip FlashMLA measured its throttled peak on (specs/hardware/h800.toml, sustained_peak_bf16)
H800 = "h800"
HAIR = 0.02
DK_DV = r"$d_{k} = d_{v}$"

DERIVATION = derivation(
    "attention-intensity",
    "Attention intensity at decode: one head-count ratio",
    "Batching rescues the weight GEMMs at decode but never the attention kernel, and one head-count ratio explains why. "
    "The answer derives it, then checks how close MLA brings attention to the H100 ridge.",
    S,
    (p_gate, flops_gemm, bytes_gemm, i_gemm, i_gemm_lim, ridge, b_gemm_ridge, ridge_att,
     group, heads_gpu, streams_gpu, group_gpu, flops_attn, bytes_cache, bytes_io, i_attn, i_attn_t, att_over, q_ridge,
     i_equal, equal_over, ridge_thr),
    ("intensity_gemm", "group_size", "intensity_attention", "ridge_point", "attention_over_ridge"),
    argument=(
        "flops_gemm", "bytes_gemm", "intensity_gemm", "intensity_gemm_limit", "ridge_point", "B_gemm_ridge", "group_size",
        "flops_attention", "bytes_attention_cache", "intensity_attention", "attention_over_ridge", "q_attention_ridge",
    ),
    body_tables=(0, 2, 3),
    answer=(
        "A decode weight GEMM runs at {intensity_gemm} at this batch and grows with it: batching brings it to the ridge, "
        "{ridge_point}, at {B_gemm_ridge}.",
        "Attention runs at {intensity_attention} whatever the batch, because each cached stream serves only its group of "
        "{group_size} query heads: {attention_over_ridge} of the ridge. MLA lets all heads read one latent; the claims give "
        "DeepSeek-V3's distance to the ridge under each convention.",
    ),
    assumptions=(
        r"Decode: each of $B$ sequences adds $q$ tokens per step ($q = 1$ token for plain decode); one layer is shown, and every layer is alike.",
        r"Attention is written once for every architecture with the widths bound from the config: a score reads $w_{k}$ elements per head per cached token, "
        r"the value sum $w_{v}$, and each of $n_{\mathrm{kv}}$ streams caches $w_{c}$ elements per token. "
        r"GQA: $w_{k} = w_{v} = H$, $w_{c} = 2H$ (K and V), $n_{\mathrm{kv}} = K$.",
        r"MLA with absorbed weights (DeepSeek-V2/V3): $W^{UK}$ is folded into the query and $W^{UV}$ into the output, so every head scores against the cached "
        r"latent plus RoPE key ($w_{k} = r_{\mathrm{kv}} + d_{R}$) and sums values in the latent ($w_{v} = r_{\mathrm{kv}}$); "
        r"the cache is one stream of $w_{c} = r_{\mathrm{kv}} + d_{R}$ per token.",
        f"Exact widths are the default; the {DK_DV} shortcut (value as wide as the key) is shown beside it because it changes the MLA answer.",
        "Tensor parallelism splits query heads; a cached stream is split while there are more streams than GPUs and replicated otherwise.",
        r"Softmax, masking and rescaling FLOPs are left out (a few per score, against $2(w_{k} + w_{v})$ per score in the matmuls).",
        r"The GEMM keeps its activation traffic: input and output rows at the math precision ($b_{a}$). Its weights are the $D \times F$ gate projection.",
        f"'Within a hair' is read as within {HAIR:.0%} of the ridge; the claims below say which conventions and which ridge meet it.",
        r"FlashMLA's reading (deepseek-ai/FlashMLA, docs/20250422-new-kernel-deep-dive.md): intensity about $2 h_{q} s_{q}$, "
        f"i.e. the {DK_DV} shortcut, against the H800 SXM5's ridge at its throttled clock: about 865 Tflop/s (about 1600 MHz) over its 3.35 TB/s. "
        "That sustained peak is the H800's own (its spec's sustained_peak_bf16); no other chip's spec gives one, so the throttled ridge is n/a elsewhere.",
    ),
    takeaways=(
        "At batch {batch} the gate GEMM runs at {intensity_gemm}, below its large-matrix limit {intensity_gemm_limit}; "
        "it reaches the ridge {ridge_point} at a batch of {B_gemm_ridge}. Batching rescues it.",
        "Attention runs at {intensity_attention} whatever the batch: {group_size} query heads (the group size $G$) share each cached stream, "
        "and that ratio, the tokens per step and the KV format are all that is left once $B$ and $T$ cancel.",
        "Context barely matters: with the query and output rows counted the intensity is {intensity_attention_at_T} at this context, against the long-context {intensity_attention}.",
        "Only more query tokens per sequence per step move it: attention reaches the ridge at {q_attention_ridge} per sequence per step.",
        r"MLA raises $G$ to all $N$ heads, because every head reads the one latent. How close that brings DeepSeek-V3 to a ridge depends on the conventions: "
        f"exact widths or the {DK_DV} shortcut, the full or throttled clock, the KV format, the query tokens per step and tensor parallelism. "
        "The checked claims give each verdict, and the conventions table each number.",
    ),
    scoring=(
        r"Writes the GEMM intensity with the activation traffic kept and shows it rising with $B$ towards $\kappa B q / b_{w}$.",
        r"Shows $B$ and $T$ cancelling in attention's FLOPs over bytes: each sequence brings its own cache, so batching does not amortise it.",
        r"Names the ratio: query heads per KV head ($G = N/K$), so GQA attention sits at about $G$ flop/B in BF16, far below any GPU's ridge.",
        r"For MLA: absorbed weights make all $N$ heads read one latent; computes exact widths ($r_{\mathrm{kv}} + d_{R}$ for scores, "
        r"$r_{\mathrm{kv}}$ for values), not just " f"{DK_DV}.",
        "States the conventions that move the MLA number: KV format (FP8 doubles it), query tokens per step (MTP multiplies it), TP (divides it); compares with H100, H200 and B200 ridges.",
    ),
    limits=(
        r"Real decode kernels do not reach the roofline at small $T$ or small batch: launch and reduction overheads, split-K over the context, partial tiles.",
        "With paged KV, short pages and the gather cost more bytes than the ideal count; prefix sharing lets sequences share cache and raises the intensity.",
        r"The GEMM's limit assumes one pass over the weights; MoE experts see about $B q k_{E}/E$ tokens each, so their intensity is that much lower.",
        r"FP8 caches often keep the RoPE part in BF16 and add scales, so the FP8 gain is a little under $2\times$.",
        "Past the ridge (H200 with MLA, FP8 latents, MTP) the kernel is compute-bound and the softmax and exponent work left out here starts to matter.",
    ),
    tables=(
        Table("Batching rescues the GEMM, not attention", (
            *(Row("", set={"batch": str(b)}) for b in (1, 8, 64, 512, 4096)),
        ), ("intensity_gemm", "intensity_gemm_limit", "intensity_attention", "intensity_attention_at_T"),
            note=r"Sheet model and hardware; the GEMM is the $D \times F$ gate projection."),
        Table("Context barely moves decode attention", (
            *(Row("", model=m, set={"context": f"{t} token"}) for m in ("llama-3.1-70b", MLA) for t in (128, 8192, 131072)),
        ), ("intensity_attention_at_T", "intensity_attention")),
        Table("One head-count ratio across models", (
            Row("", model="llama-2-7b"),
            Row("", model="llama-3.1-8b"),
            Row("", model="llama-3.1-70b"),
            Row("", model="llama-3.1-405b"),
            Row("", model="qwen3-235b-a22b"),
            Row("", model="deepseek-v2-lite"),
            Row("", model=MLA),
        ), ("group_size", "intensity_attention", "attention_over_ridge"), note=r"BF16 cache, $q = 1$ token, no TP, sheet hardware."),
        Table("MLA (DeepSeek-V3) on H100 SXM under the conventions that change the answer", (
            Row(r"BF16 latent, $q = 1$, $\sym{n_tp} = 1$", model=MLA, hardware=H100),
            Row("FP8 latent, BF16 math", model=MLA, hardware=H100, kv="fp8", math="bf16"),
            Row("FP8 latent, FP8 math", model=MLA, hardware=H100, kv="fp8", math="fp8"),
            Row(r"BF16 latent, $q = 2$ (MTP)", model=MLA, hardware=H100, set={"tokens_per_step": "2 token"}),
            Row(r"BF16 latent, $\sym{n_tp} = 8$", model=MLA, hardware=H100, set={"tp": "8"}),
            Row(r"BF16 latent, $q = 2$, $\sym{n_tp} = 8$", model=MLA, hardware=H100, set={"tokens_per_step": "2 token", "tp": "8"}),
        ), ("group_per_gpu", "intensity_attention", "intensity_attention_equal_widths", "ridge_point_attention", "attention_over_ridge"),
            note=r"Exact widths: scores over $r_{\mathrm{kv}} + d_{R}$, values in the $r_{\mathrm{kv}}$ latent. "
                 f"The {DK_DV} column takes both as " r"$r_{\mathrm{kv}} + d_{R}$."),
        Table(r"MLA (DeepSeek-V3, BF16 latent, $q = 1$) against each accelerator's ridge", (
            Row("", model=MLA, hardware="h100-sxm"),
            Row("", model=MLA, hardware="h200"),
            Row("", model=MLA, hardware="b200"),
        ), ("intensity_attention", "ridge_point_attention", "attention_over_ridge", "equal_widths_over_ridge")),
    ),
    claims=(
        Claim("With a BF16 cache and one query token, GQA attention's intensity in flop/B equals its group size (Llama 3.1 70B: 64 query heads over 8 KV heads).",
              "intensity_attention", "group_size", rel_tol=1e-9, where=Row("Llama 3.1 70B", model="llama-3.1-70b"), convert="flop/B"),
        Claim(f"FlashMLA's reading: the {DK_DV} intensity " r"($2 h_{q} s_{q}$)" f" lands within a hair ({HAIR:.0%}) of the H800's ridge at its throttled clock.",
              "intensity_attention_equal_widths", "ridge_throttled", rel_tol=HAIR,
              where=Row(f"DeepSeek-V3 on H800 SXM5, {DK_DV}, throttled ridge", model=MLA, hardware=H800)),
        Claim(f"MLA, exact widths (BF16 latent, $q = 1$, no TP), lands within a hair ({HAIR:.0%}) of the H100 SXM ridge.",
              "intensity_attention", "ridge_point_attention", rel_tol=HAIR, where=Row("DeepSeek-V3 on H100 SXM, exact widths", model=MLA, hardware=H100)),
        Claim(f"MLA under the {DK_DV} shortcut (BF16 latent, $q = 1$, no TP) lands within a hair ({HAIR:.0%}) of the H100 SXM ridge.",
              "intensity_attention_equal_widths", "ridge_point_attention", rel_tol=HAIR, where=Row(f"DeepSeek-V3 on H100 SXM, {DK_DV}", model=MLA, hardware=H100)),
        Claim(f"MLA with an FP8 latent (BF16 math) lands within a hair ({HAIR:.0%}) of the H100 SXM ridge.",
              "intensity_attention", "ridge_point_attention", rel_tol=HAIR, where=Row("DeepSeek-V3 on H100 SXM, FP8 latent", model=MLA, hardware=H100, kv="fp8", math="bf16")),
        Claim(f"MLA with two query tokens per step (MTP) lands within a hair ({HAIR:.0%}) of the H100 SXM ridge.",
              "intensity_attention", "ridge_point_attention", rel_tol=HAIR,
              where=Row("DeepSeek-V3 on H100 SXM, $q = 2$", model=MLA, hardware=H100, set={"tokens_per_step": "2 token"})),
        Claim(f"MLA with its heads split 8 ways by tensor parallelism lands within a hair ({HAIR:.0%}) of the H100 SXM ridge.",
              "intensity_attention", "ridge_point_attention", rel_tol=HAIR,
              where=Row(r"DeepSeek-V3 on H100 SXM, $\sym{n_tp} = 8$", model=MLA, hardware=H100, set={"tp": "8"})),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-70b", MLA),
    plots=(Plot("roofline", "roofline",
                "The roofline of this accelerator, with the ceilings of the others: the gate GEMM climbs the slope as the batch grows and "
                "reaches the ridge, while decode attention sits at its group size whatever the batch (GQA for this model) and MLA's one "
                "latent, shared by all heads, lifts it towards the ridge.",
                title="Batching walks the gate GEMM up to the ridge at a batch of {B_gemm_ridge}; attention stays at "
                      "{intensity_attention}, and MLA's shared latent lifts it towards the ridge",
                points=("intensity_gemm", "intensity_attention"), batches=("1", "8", "64", "512", "4096"),
                rows=(Row("DeepSeek-V3 (MLA)", model=MLA),), row_points=("intensity_attention",), answer=True,
                labels={"intensity_gemm": "gate GEMM", "intensity_attention": "attention"}),),
    display_units={"attention_over_ridge": "%", "flops_gemm": "Gflop", "bytes_gemm": "MB", "flops_attention": "Mflop", "bytes_attention_cache": "MB",
                   "bytes_attention_io": "kB", "P_gate": "parameter"},
)

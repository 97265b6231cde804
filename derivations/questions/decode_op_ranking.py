"""Every kernel of one decode step, ranked by intensity, and the batch where attention's rank flips.

Takeaway: a weight GEMM's intensity is about kappa*B*q/b_w whatever its shape
(B in BF16), so all weight GEMMs tie; GQA attention sits at
kappa_attn*G*q/(2*b_kv) (G in BF16) whatever the batch. The ranks cross at
B_flip = kappa_attn*N*b_w / (2*kappa*K*b_kv): 8 for Llama 3.1 70B in BF16,
16 with an FP8 cache, 4 for Llama 3.1 8B. Fusion removes the small kernels'
round trips; only the architecture (K, MLA, KV format) or the batch moves the
GEMM and attention intensities. One layer per kernel, GQA models.
"""

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.context import Input
from derivations.engine import Claim, Row, Step, Table, derivation, solve
from derivations.symbols import Symbols

S = Symbols(parent=gl.GLOSSARY)
t_k = S.add("t_k", "s", r"t_{k}", "fixed time each small kernel costs beyond its bytes: launch, ramp-up, tail")
c_ew = S.add("c_ew", "flop/token", r"c_{\mathrm{ew}}", "FLOPs per output element per token of the small kernels (norm, RoPE, SiLU*mul, add), averaged")
tokens = gl.B * gl.q


def _gemm(name: str, latex: str, d_in, d_out, what: str) -> tuple[Step, ...]:
    """The four steps of one weight GEMM: FLOPs, bytes, intensity, roofline time."""
    flops = Step(f"flops_{name}", pr.gemm_flops(d_in * d_out * gl.u_param, tokens), "flop",
                 f"{what} Each of the B*q tokens does one multiply-add per weight.", latex=rf"F_{{\mathrm{{{latex}}}}}")
    nbytes = Step(f"bytes_{name}", pr.gemm_bytes(d_in, d_out, tokens), "B",
                  "Its weights once, plus each token's input and output rows.", latex=rf"W_{{\mathrm{{{latex}}}}}")
    inten = Step(f"intensity_{name}", pr.intensity(flops.s, nbytes.s), "flop/B",
                 "About kappa*B*q/b_w: the shape cancels once the weights dominate the bytes.", latex=rf"I_{{\mathrm{{{latex}}}}}")
    time = Step(f"t_{name}", pr.roofline_time(flops.s, nbytes.s), "s",
                "The roofline: the longer of its compute and its memory time.", latex=rf"t_{{\mathrm{{{latex}}}}}")
    return flops, nbytes, inten, time


qkv = _gemm("qkv", "qkv", gl.D, (gl.N + 2 * gl.K) * gl.H, "QKV projection: D x (N + 2K)H, fused.")
o_proj = _gemm("o", "o", gl.N * gl.H, gl.D, "Output projection: NH x D.")
gate_up = _gemm("gate_up", "gu", gl.D, 2 * gl.F, "Gate and up projections: D x 2F, fused.")
down = _gemm("down", "down", gl.F, gl.D, "Down projection: F x D.")
lm_head = _gemm("lm_head", "head", gl.D, gl.V, "LM head: D x V, once per step (not per layer).")

flops_attn = Step("flops_attn", gl.B * pr.decode_attention_flops(gl.T, gl.q, gl.N, gl.H, gl.H), "flop",
                  "Attention: QK^T and PV for q query tokens of each of B sequences against T cached tokens, all N query heads.",
                  latex=r"F_{\mathrm{att}}")
bytes_cache = Step("bytes_attn_cache", gl.B * pr.decode_attention_cache_bytes(gl.T, gl.K, 2 * gl.H), "B",
                   "Each sequence reads its own K and V: K heads of 2H elements per cached token.", latex=r"W_{\mathrm{kv}}")
bytes_attn = Step("bytes_attn", bytes_cache.s + gl.B * pr.decode_attention_io_bytes(gl.q, gl.N, gl.H, gl.H), "B",
                  "Plus the query read and the output written.", latex=r"W_{\mathrm{att}}")
i_attn = Step("intensity_attn", pr.intensity(flops_attn.s, bytes_attn.s), "flop/B",
              "B cancels: every sequence brings its own cache. About G = N/K flop/B in BF16.", latex=r"I_{\mathrm{att}}")
t_attn = Step("t_attn", pr.roofline_time(flops_attn.s, bytes_attn.s), "s",
              "Memory-bound at any batch: it grows with B*T.", latex=r"t_{\mathrm{att}}")

ew_in = Step("elements_ew_in", 6 * gl.D + (gl.N + gl.K) * gl.H + 2 * gl.F, "1",
             "Elements the small kernels read per token per layer: two RMSNorms (D each), RoPE on Q and K ((N + K)H), SiLU*mul (2F), two residual adds (2D each).",
             latex=r"e_{\mathrm{in}}")
ew_out = Step("elements_ew_out", 4 * gl.D + (gl.N + gl.K) * gl.H + gl.F, "1",
              "Elements they write: 2D, (N + K)H, F and 2D.", latex=r"e_{\mathrm{out}}")
flops_ew = Step("flops_ew", c_ew * tokens * ew_out.s, "flop",
                "A few FLOPs per output element.", latex=r"F_{\mathrm{ew}}")
bytes_ew = Step("bytes_ew", tokens * (ew_in.s + ew_out.s) * gl.b_a, "B",
                "Unfused, every one reads its input from HBM and writes its output back.", latex=r"W_{\mathrm{ew}}")
i_ew = Step("intensity_ew", pr.intensity(flops_ew.s, bytes_ew.s), "flop/B",
            "Below 1 flop/B at any batch: pure data movement.", latex=r"I_{\mathrm{ew}}")
t_ew = Step("t_ew", pr.roofline_time(flops_ew.s, bytes_ew.s), "s",
            "Bytes over bandwidth; fusion into the neighbouring GEMM or attention kernel removes it.", latex=r"t_{\mathrm{ew}}")

t_small = Step("t_small_overhead", 6 * gl.L * t_k, "s",
                "Six small kernels per layer (two norms, RoPE, SiLU*mul, two adds), each paying a fixed launch-and-tail time that no byte count shows.",
                latex=r"t_{\mathrm{small}}")
t_layer = Step("t_layer", qkv[3].s + t_attn.s + o_proj[3].s + gate_up[3].s + down[3].s + t_ew.s, "s",
               "One layer: the kernels run one after another.", latex=r"t_{\mathrm{layer}}")
t_step = Step("t_step", gl.L * t_layer.s + lm_head[3].s, "s",
              "All layers, then the LM head once.", latex=r"t_{\mathrm{step}}")
attn_share = Step("attention_share", gl.L * t_attn.s / t_step.s, "1",
                  "Attention's share of the roofline step time.", latex=r"\phi_{\mathrm{att}}")
ew_share = Step("elementwise_share", gl.L * t_ew.s / t_step.s, "1",
                "The small kernels' byte time as a share of the step: small, because activations are tiny next to the weights.", latex=r"\phi_{\mathrm{ew}}")
fusable = Step("fusable_share", (gl.L * t_ew.s + t_small.s) / (t_step.s + t_small.s), "1",
               "What fusion (and CUDA graphs) can remove: the small kernels' bytes and their fixed per-kernel time, as a share of the step including it.",
               latex=r"\phi_{\mathrm{fuse}}")
i_gemm_lim = Step("intensity_gemm_limit", pr.gemm_intensity_limit(tokens), "flop/B",
                  "Every weight GEMM tends to this when its weights dominate its bytes: the tie.", latex=r"I_{\mathrm{gemm}}^{\infty}")
i_attn_lim = Step("intensity_attn_limit", pr.decode_attention_intensity(gl.N / gl.K, gl.q, gl.H, gl.H, 2 * gl.H), "flop/B",
                  "Attention at long context (query and output rows negligible): kappa_attn*G*q/(2*b_kv).", latex=r"I_{\mathrm{att}}^{\infty}")
b_flip = solve("B_flip", i_gemm_lim, i_attn_lim, gl.B, "1",
               "The intensity ranks cross where the tied GEMMs reach attention's constant: independent of T and of the hardware.",
               latex=r"B_{\mathrm{flip}}")
w_o = Step("weight_bytes_o", pr.weight_bytes(gl.N * gl.H * gl.D * gl.u_param), "B",
           "The smallest weight GEMM's bytes (output projection), for the time view.", latex=r"W_{o}")
b_flip_time = solve("B_flip_time", bytes_cache, w_o, gl.B, "1",
                    "The time view: the batch where attention's KV bytes (hence its memory time) pass the output projection's weight bytes. It falls as T grows.",
                    latex=r"B_{\mathrm{flip}}^{t}")

STEPS = (*qkv, flops_attn, bytes_cache, bytes_attn, i_attn, t_attn, *o_proj, *gate_up, *down, *lm_head,
         ew_in, ew_out, flops_ew, bytes_ew, i_ew, t_ew, t_small, t_layer, t_step, attn_share, ew_share, fusable,
         i_gemm_lim, i_attn_lim, b_flip, w_o, b_flip_time)

BATCHES = (1, 8, 16, 64, 256)

DERIVATION = derivation(
    "decode-op-ranking",
    "Ranking the kernels of one decode step",
    "Every weight GEMM ties, attention sits at a constant the batch cannot move, and the ranking flips at batch 8. "
    "The answer then separates what fusion can fix from what only the model architecture or the batch can.",
    S,
    STEPS,
    ("B_flip", "intensity_qkv", "intensity_attn", "intensity_o", "intensity_gate_up", "intensity_down", "intensity_lm_head", "intensity_ew"),
    inputs=(Input("elementwise_flops", c_ew, "4 flop/token", "flop/token",
                  "FLOPs per output element of the small kernels (RMSNorm about 4, RoPE 3, SiLU*mul 5, add 1)"),
            Input("small_kernel_overhead", t_k, "2 µs", "s", "fixed time per small kernel beyond its bytes (launch, ramp-up, tail)")),
    assumptions=(
        "One decode step of a GQA model: B sequences, q = 1 token each, T cached tokens each; one layer per kernel, the LM head once per step.",
        "Kernels as an unfused server runs them: fused QKV, attention, output projection, fused gate/up, down, and the small elementwise kernels "
        "(two RMSNorms, RoPE, SiLU*mul, two residual adds) each reading and writing HBM.",
        "GEMM bytes are the weights once plus each token's input and output rows at the math precision; attention bytes are the K and V cache plus the query and output rows.",
        "Roofline time per kernel = max(FLOPs / peak, bytes / bandwidth) at datasheet figures, no overlap between kernels; the small kernels' fixed time is an input, kept out of t_step.",
        "B_flip counts sequences; the intensity view (B_flip) ranks by flop/B, the time view (B_flip_time) compares attention's memory time with the output projection's.",
    ),
    takeaways=(
        "At this batch the weight GEMMs tie: QKV {intensity_qkv}, O {intensity_o}, gate/up {intensity_gate_up}, down {intensity_down}, LM head {intensity_lm_head}, all close to {intensity_gemm_limit}.",
        "Attention sits at {intensity_attn} (about G in BF16) at any batch, so the ranks flip at B_flip = {B_flip} sequences, which is the teaser's 'batch 8' for Llama 3.1 70B in BF16; an FP8 cache doubles it, Llama 3.1 8B halves it.",
        "In time, attention overtakes even the smallest weight GEMM at B = {B_flip_time} at this context: that crossover moves with T, the intensity flip does not.",
        "The small kernels run at {intensity_ew}; their bytes are only {elementwise_share} of the step, but with a fixed {small_kernel_overhead} each they cost {t_small_overhead} per step. Fusion removes both: {fusable_share} of the step.",
        "Fusion cannot change the GEMM or attention intensities: only the batch (GEMMs) or the architecture and KV format (fewer KV heads, MLA, FP8 cache) move them. Attention takes {attention_share} of the step here.",
    ),
    scoring=(
        "Lists every kernel of a decode step, the LM head and the small elementwise kernels included, with FLOPs and bytes from the config.",
        "Explains the tie: weight bytes dominate, so intensity is kappa*B*q/b_w for every weight GEMM regardless of its shape.",
        "Explains attention's constant: B cancels because each sequence reads its own KV; the constant is G = N/K in BF16.",
        "Gives B_flip in closed form (kappa_attn*N*b_w/(2*kappa*K*b_kv)) and says how it moves with an FP8 cache and with a smaller group size (the flip table below).",
        "Separates the intensity flip from the time crossover, which depends on T.",
        "Sorts the fixes: fusion for elementwise kernels and launches; batch for GEMMs; architecture (GQA, MLA) or KV format for attention.",
    ),
    limits=(
        "Real GEMMs at small batch run below the roofline (tile quantization: a 64- or 128-row tile for a handful of tokens), and attention kernels split the context to fill the SMs.",
        "Launch gaps, the all-reduces of tensor parallelism and host work are not kernels here (decode-floor, batch1-gap).",
        "Production stacks already fuse RoPE into attention and residual adds into norms; the elementwise share is then smaller still.",
        "At large batch the GEMMs turn compute-bound and their time stops growing with bytes; attention never does (attention-intensity).",
    ),
    tables=(
        Table("Every weight GEMM ties; attention does not move", tuple(Row(f"B={b}", set={"batch": str(b)}) for b in BATCHES),
              ("intensity_qkv", "intensity_o", "intensity_gate_up", "intensity_down", "intensity_attn")),
        Table("The LM head and the small kernels", tuple(Row(f"B={b}", set={"batch": str(b)}) for b in BATCHES),
              ("intensity_lm_head", "intensity_ew", "elementwise_share", "fusable_share", "attention_share")),
        Table("Where the flip lands", (
            Row("Llama 3.1 70B, BF16 KV", model="llama-3.1-70b", kv="bf16"),
            Row("Llama 3.1 70B, FP8 KV", model="llama-3.1-70b", kv="fp8"),
            Row("Llama 3.1 8B, BF16 KV", model="llama-3.1-8b", kv="bf16"),
            Row("Llama 3.1 8B, FP8 KV", model="llama-3.1-8b", kv="fp8"),
            Row("Llama 3.1 405B, BF16 KV", model="llama-3.1-405b", kv="bf16"),
        ), ("intensity_attn_limit", "B_flip", "B_flip_time"), note="B_flip_time at the sheet's context."),
        Table("The time view moves with context (Llama 3.1 70B)", tuple(
            Row(f"T={t}", model="llama-3.1-70b", set={"context": f"{t} token"}) for t in (2048, 4096, 8192, 32768)
        ), ("B_flip", "B_flip_time")),
        Table("Step time at B=64 across accelerators", tuple(
            Row("", hardware=h, set={"batch": "64"}) for h in ("h100-sxm", "h200", "b200")
        ), ("t_step", "attention_share", "fusable_share")),
    ),
    claims=(
        Claim("The ranking flips at batch 8 (Llama 3.1 70B, BF16 weights and cache).", "B_flip", "8", rel_tol=1e-9,
              where=Row("Llama 3.1 70B, BF16", model="llama-3.1-70b")),
        Claim("The weight GEMMs tie: QKV and down projection at the same intensity (within 1%, B = 64).", "intensity_qkv", "intensity_down", rel_tol=0.01,
              where=Row("Llama 3.1 70B, B=64", model="llama-3.1-70b", set={"batch": "64"})),
        Claim("Batch 8 is also where attention's time passes the output projection's (T = 8192).", "B_flip_time", "8", rel_tol=0.05,
              where=Row("Llama 3.1 70B, T=8192", model="llama-3.1-70b", set={"context": "8192 token"})),
        Claim("Batch 8 is where attention's time passes the output projection's at T = 4096.", "B_flip_time", "8", rel_tol=0.05,
              where=Row("Llama 3.1 70B, T=4096", model="llama-3.1-70b", set={"context": "4096 token"})),
        Claim("The teaser's batch 8 carries over to an FP8 KV cache.", "B_flip", "8", rel_tol=1e-9,
              where=Row("Llama 3.1 70B, FP8 KV", model="llama-3.1-70b", kv="fp8")),
        Claim("The teaser's batch 8 carries over to Llama 3.1 8B.", "B_flip", "8", rel_tol=1e-9,
              where=Row("Llama 3.1 8B, BF16", model="llama-3.1-8b")),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-70b", "llama-3.1-8b"),
    display_units={**{f"flops_{k}": "Mflop" for k in ("qkv", "o", "gate_up", "down", "lm_head", "attn", "ew")},
                   **{f"bytes_{k}": "MB" for k in ("qkv", "o", "gate_up", "down", "lm_head", "attn", "attn_cache", "ew")},
                   **{f"t_{k}": "µs" for k in ("qkv", "o", "gate_up", "down", "lm_head", "attn", "ew", "layer")},
                   "t_step": "ms", "weight_bytes_o": "MB", "t_small_overhead": "ms",
                   "elementwise_share": "%", "fusable_share": "%", "attention_share": "%"},
)

"""Every kernel of one decode step, ranked by intensity, and the batch where attention's rank flips.

Takeaway: a weight GEMM's intensity is about kappa*B*q/b_w whatever its shape,
so the weight GEMMs tie; attention sits at a constant set by the architecture
and the KV format (the group size G for GQA in BF16, far higher for MLA)
whatever the batch. The ranks cross at B_flip. Routed experts are the
exception to the tie: each token uses k_E of the experts the batch reads, so
they reach attention's constant E/k_E times later. Fusion removes the small
kernels' round trips; only the architecture (K, MLA, KV format) or the batch
moves the GEMM and attention intensities.

One derivation serves every architecture. Attention is written with the
architecture-neutral widths of the glossary (w_k, w_v, w_c, n_kv, h_v); the
projections before attention differ (GQA: one fused QKV; MLA: the fused latent
down-projections, the query up-projection and the absorbed W_UK and W_UV), and
delta_MLA picks which set a layer runs. Dense-MLP and MoE layers are counted
L - L_MoE and L_MoE times. A kernel a model does not run is n/a on its sheet
(a spec symbol it lacks), and a zero count keeps it out of the step time.
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)
t_k = S.add("t_k", "s", r"t_{k}", "fixed time each small kernel costs beyond its bytes: launch, ramp-up, tail")
c_ew = S.add("c_ew", "flop/token", r"c_{\mathrm{ew}}", "FLOPs per output element per token of the small kernels (norm, RoPE, SiLU and multiply, add), averaged")
tokens = gl.B * gl.q
mla, gqa = gl.delta_mla, 1 - gl.delta_mla

TIE = r"About $\kappa B q / b_{w}$: the shape cancels once the weights dominate the bytes."


def _kernel(name: str, latex: str, title: str, flops, nbytes, what: str, bytes_why: str, intensity_why: str) -> tuple[Step, ...]:
    """The four steps of one kernel: FLOPs, bytes, intensity, roofline time (datasheet peak and bandwidth)."""
    f = Step(f"flops_{name}", flops, "flop", what, latex=rf"F_{{\mathrm{{{latex}}}}}", title=f"FLOPs of {title}")
    b = Step(f"bytes_{name}", nbytes, "B", bytes_why, latex=rf"W_{{\mathrm{{{latex}}}}}", title=f"Bytes of {title}")
    i = Step(f"intensity_{name}", pr.intensity(f.s, b.s), "flop/B", intensity_why, latex=rf"I_{{\mathrm{{{latex}}}}}",
             title=f"Intensity of {title}")
    t = Step(f"t_{name}", pr.roofline_time(f.s, b.s), "s", "The roofline: the longer of its compute and its memory time.",
             latex=rf"t_{{\mathrm{{{latex}}}}}", title=f"Time of {title}")
    return f, b, i, t


def _gemm(name: str, latex: str, title: str, weights, a_in, a_out, what: str, intensity_why: str = TIE) -> tuple[Step, ...]:
    """A weight GEMM: `weights` multiply-adds per token, read once; `a_in` and `a_out` activation elements per token."""
    return _kernel(name, latex, title, pr.gemm_flops(weights * gl.u_param, tokens), pr.gemm_bytes(a_in, a_out, tokens, weights * gl.u_param),
                   what + r" Each of the $B q$ tokens does one multiply-add per weight.",
                   "Its weights once, plus each token's input and output rows.", intensity_why)


def _small(name: str, latex: str, title: str, e_in, e_out, what: str) -> tuple[Step, ...]:
    """The unfused elementwise kernels of one block: `e_in` elements read and `e_out` written per token."""
    return _kernel(name, latex, title, c_ew * tokens * e_out, tokens * (e_in + e_out) * gl.b_a, what + " A few FLOPs per output element.",
                   "Unfused, every one reads its input from HBM and writes its output back.",
                   r"The batch cancels: a few FLOPs per element moved, at most about $c_{\mathrm{ew}}/(2 b_{a})$. Pure data movement.")


# --- attention block: the projections before attention (GQA or MLA), attention, the output projection ---

qkv = _gemm("qkv", "qkv", "the fused QKV projection", gl.D * (gl.N + 2 * gl.K) * gl.H, gl.D, (gl.N + 2 * gl.K) * gl.H,
            r"GQA only: the fused QKV projection, $D \times (N + 2K) H$.")
dqkv = _gemm("dqkv", "DQKV", "the latent down-projections", gl.D * (gl.r_q + gl.r_kv + gl.d_R), gl.D, gl.r_q + gl.r_kv + gl.d_R,
             r"MLA only: the down-projections that read the hidden state, the query latent ($D \times r_{q}$) and the KV latent with the "
             r"decoupled RoPE key ($D \times (r_{\mathrm{kv}} + d_{R})$), fused into one GEMM as vLLM and SGLang run them; "
             r"$r_{q} = 0$ where there is no query latent.")
uq = _gemm("uq", "UQ", "the query up-projection", gl.d_q * gl.N * (gl.d_nope + gl.d_R), gl.d_q, gl.N * (gl.d_nope + gl.d_R),
           r"MLA only: the query up-projection, $d_{q} \times N (d_{\mathrm{nope}} + d_{R})$: every head's non-RoPE query and its RoPE part "
           r"(from the query latent, or from the hidden state where there is none).")
uk = _gemm("uk", "UK", "the absorbed key up-projection", gl.N * gl.d_nope * gl.r_kv, gl.N * gl.d_nope, gl.N * gl.r_kv,
           r"MLA only: $W_{UK}$ absorbed into the query, $N$ heads of $d_{\mathrm{nope}} \times r_{\mathrm{kv}}$, so that attention scores "
           "each head against the cached latent.",
           r"Per head the matrix is small ($d_{\mathrm{nope}} \times r_{\mathrm{kv}}$): the query rows in and the latent rows out outweigh it "
           r"as $B q$ grows, so its intensity levels off near $\kappa d_{\mathrm{nope}} r_{\mathrm{kv}} / ((d_{\mathrm{nope}} + r_{\mathrm{kv}}) b_{a})$ "
           "instead of growing with the batch like the tie.")
flops_attn = Step("flops_attn", gl.B * pr.decode_attention_flops(), "flop",
                  r"Attention: $Q K^{\top}$ and $P V$ for $q$ query tokens of each of $B$ sequences against $T$ cached tokens, all $N$ query heads; "
                  r"scores read $w_{k}$ channels per head and the value sum $w_{v}$ (GQA: $H$ and $H$; absorbed MLA: $r_{\mathrm{kv}} + d_{R}$ "
                  r"and $r_{\mathrm{kv}}$).",
                  latex=r"F_{\mathrm{att}}", title="FLOPs of attention")
bytes_cache = Step("bytes_attn_cache", gl.B * pr.decode_attention_cache_bytes(), "B",
                   r"Each sequence reads its own cache: $n_{\mathrm{kv}}$ streams of $w_{c}$ elements per cached token (GQA: $K$ heads of K and V, "
                   r"$2H$; MLA: one latent of $r_{\mathrm{kv}}$ plus the decoupled RoPE key $d_{R}$, shared by all heads).",
                   latex=r"W_{\mathrm{kv}}", title="Cache bytes attention reads")
bytes_attn = Step("bytes_attn", bytes_cache.s + gl.B * pr.decode_attention_io_bytes(), "B",
                  "Plus the query read and the output written (for MLA both live in the latent).", latex=r"W_{\mathrm{att}}",
                  title="Bytes of attention")
i_attn = Step("intensity_attn", pr.intensity(flops_attn.s, bytes_attn.s), "flop/B",
              r"$B$ cancels: every sequence brings its own cache. For GQA about $G = N/K$ flop/B in BF16; MLA shares one latent among all "
              r"$N$ heads.", latex=r"I_{\mathrm{att}}", title="Intensity of attention")
t_attn = Step("t_attn", pr.roofline_time(flops_attn.s, bytes_attn.s), "s",
              r"It grows with $B T$; memory-bound unless its constant intensity passes the ridge.", latex=r"t_{\mathrm{att}}",
              title="Time of attention")
uv = _gemm("uv", "UV", "the absorbed value up-projection", gl.N * gl.r_kv * gl.d_v, gl.N * gl.r_kv, gl.N * gl.d_v,
           r"MLA only: $W_{UV}$ absorbed into the output, $N$ heads of $r_{\mathrm{kv}} \times d_{v}$, turning each head's latent output into "
           "its value output.",
           r"Per head the matrix is small ($r_{\mathrm{kv}} \times d_{v}$): like $W_{UK}$ its activation rows outweigh it as $B q$ grows, so its "
           r"intensity levels off near $\kappa r_{\mathrm{kv}} d_{v} / ((r_{\mathrm{kv}} + d_{v}) b_{a})$.")
o_proj = _gemm("o", "o", "the output projection", gl.N * gl.h_v * gl.D, gl.N * gl.h_v, gl.D,
               r"Output projection: $N h_{v} \times D$ ($h_{v} = H$ for GQA, $d_{v}$ for MLA).")

rope = gqa * (gl.N + gl.K) * gl.H + mla * ((gl.N + 1) * gl.d_R + gl.r_q + gl.r_kv)
ew_in = Step("elements_ew_in", 3 * gl.D + rope, "1",
             r"Elements the attention block's small kernels read per token: the RMSNorm ($D$), RoPE (GQA: $(N + K) H$; MLA: the $N$ query "
             r"RoPE parts and the one shared RoPE key, $(N + 1) d_{R}$), MLA's RMSNorms on its latents ($r_{q} + r_{\mathrm{kv}}$), the "
             r"residual add ($2D$).",
             latex=r"e_{\mathrm{in}}", title="Elements the attention block's small kernels read")
ew_out = Step("elements_ew_out", 2 * gl.D + rope, "1",
              r"Elements they write: $D$, the rotated elements, the normed latents and $D$.", latex=r"e_{\mathrm{out}}",
              title="Elements the attention block's small kernels write")
ew = _small("ew", "ew", "the attention block's small kernels", ew_in.s, ew_out.s, "The attention block's small kernels.")
t_attn_block = Step("t_attn_block", gqa * qkv[3].s + mla * (dqkv[3].s + uq[3].s + uk[3].s + uv[3].s) + t_attn.s + o_proj[3].s + ew[3].s, "s",
                    r"One attention block, its kernels one after another: GQA runs the fused QKV, MLA its down-projections, query "
                    r"up-projection and the absorbed $W_{UK}$ and $W_{UV}$ ($\sym{delta_mla}$ picks the set); then attention, the output "
                    "projection and the small kernels.",
                    latex=r"t_{\mathrm{att,blk}}", title="Time of one attention block")

# --- MLP of a dense layer ---

gate_up = _gemm("gate_up", "gu", "the gate and up projections", (gl.m_mlp - 1) * gl.D * gl.F_dense, gl.D, (gl.m_mlp - 1) * gl.F_dense,
                r"Dense layers only: gate and up projections, $D \times 2 \sym{F_dense}$, fused ($\sym{m_mlp} - 1$ of them: a plain MLP "
                r"has the up projection alone, $D \times \sym{F_dense}$).")
down = _gemm("down", "down", "the down projection", gl.F_dense * gl.D, gl.F_dense, gl.D,
             r"Dense layers only: down projection, $\sym{F_dense} \times D$.")
ew_mlp = _small("ew_mlp", "ew,mlp", "a dense MLP's small kernels", 3 * gl.D + (gl.m_mlp - 1) * gl.F_dense, 2 * gl.D + gl.F_dense,
                r"Dense layers only: the RMSNorm ($D$ in, $D$ out), SiLU and multiply ($2 \sym{F_dense}$ in, $\sym{F_dense}$ out; a plain MLP's "
                r"activation alone reads $\sym{F_dense}$) and the residual add ($2D$ in, $D$ out).")
t_mlp_dense = Step("t_mlp_dense", gate_up[3].s + down[3].s + ew_mlp[3].s, "s",
                   r"The MLP of one dense layer. A model whose every layer is MoE has none (n/a), and $L - \sym{L_moe} = 0$ counts it nowhere.",
                   latex=r"t_{\mathrm{mlp,dense}}", title="Time of one dense MLP")

# --- MLP of a MoE layer: router, routed experts, shared experts ---

#: one expert's gated MLP (gate, up, down): P_exp, written so that a dense model, which has no MoE layer, has none
p_exp = pr.mlp_params(gl.D, gl.F_moe, gl.m_E) * gl.u_param
experts = Step("experts_touched", pr.experts_touched(pr.tokens_per_step()), "1",
               r"Under uniform top-$k$ routing a MoE layer reads every distinct expert its $B q$ tokens picked: $k_{E}$ at one token, nearly "
               r"all $E$ a few dozen tokens later. A dense model is one expert that every token uses.",
               latex=r"E_{\mathrm{read}}", meaning="routed experts read per MoE layer per step (expected)", title="Routed experts read per MoE layer",
               counts="experts")
w_experts = Step("weight_bytes_experts", pr.weight_bytes(experts.s * p_exp, gl.b_e), "B",
                 r"The routed experts' weights one MoE layer reads per step: each expert (a gated MLP of $3 D \sym{F_moe}$ weights, "
                 r"$\sym{P_exp}$) read once however many tokens chose it.",
                 latex=r"W_{\mathrm{exp}}^{\mathrm{w}}", title="Routed-expert weight bytes per MoE layer")
router = _gemm("router", "rtr", "the router", gl.P_rtr / gl.u_param, gl.D, gl.E,
               r"MoE layers only: the router, $D \times E$, one score per routed expert.",
               r"A thin matrix ($D \times E$): once the batch grows its token rows outweigh it, and its intensity levels off near "
               r"$\kappa D E / ((D + E) b_{a})$, about $E$ flop/B in BF16.")
routed = _kernel("experts", "exp", "the routed experts", pr.gemm_flops(gl.k_E * p_exp, tokens),
                 w_experts.s + tokens * gl.k_E * (2 * gl.D + 3 * gl.F_moe) * gl.b_a,
                 r"MoE layers only: the routed experts as grouped GEMMs (gate and up, $D \times 2 \sym{F_moe}$, and down, "
                 r"$\sym{F_moe} \times D$, one roofline for both). Each token goes through its top $k_{E}$ experts only.",
                 r"The experts read, plus each token's rows through each of its $k_{E}$ experts: $D$ in and $2 \sym{F_moe}$ out of gate and up, "
                 r"$\sym{F_moe}$ in and $D$ out of down.",
                 r"About $\kappa B q k_{E} / (\sym{experts_touched} b_{e})$: each token uses $k_{E}$ of the $\sym{experts_touched}$ experts "
                 "read, so it falls below the tie once a step's tokens pick different experts.")
shared = _kernel("shared", "sh", "the shared experts", pr.gemm_flops(gl.E_s * p_exp, tokens),
                 gl.E_s * (pr.weight_bytes(p_exp) + tokens * (2 * gl.D + 3 * gl.F_moe) * gl.b_a),
                 r"MoE layers only: the $E_{s}$ shared experts every token uses, each an expert-sized gated MLP (nothing where $E_{s} = 0$).",
                 r"Their weights once, plus each token's rows through each; taken as $E_{s}$ separate expert MLPs (HF and vLLM fuse them into "
                 r"one of width $E_{s} \sym{F_moe}$: the same weights and FLOPs, the hidden-state rows once instead of $E_{s}$ times).",
                 TIE + r" No value where $E_{s} = 0$: no shared expert, nothing read.")
ew_moe = _small("ew_moe", "ew,moe", "a MoE MLP's small kernels",
                3 * gl.D + gl.E + (gl.k_E + gl.E_s) * (gl.D + 2 * gl.F_moe), 3 * gl.D + gl.k_E + (gl.k_E + gl.E_s) * gl.F_moe,
                r"MoE layers only: the RMSNorm ($D$ in, $D$ out), the router's softmax and top-$k$ ($E$ scores in, $k_{E}$ gates out), SiLU "
                r"and multiply for each routed and shared expert a token uses ($2 \sym{F_moe}$ in, $\sym{F_moe}$ out each), the weighted "
                r"combine of their outputs ($k_{E} + E_{s}$ rows of $D$ in, $D$ out) and the residual add ($2D$ in, $D$ out).")
t_mlp_moe = Step("t_mlp_moe", router[3].s + routed[3].s + shared[3].s + ew_moe[3].s, "s",
                 r"The MLP of one MoE layer. A dense model has none (n/a), and $\sym{L_moe} = 0$ counts it nowhere.",
                 latex=r"t_{\mathrm{mlp,MoE}}", title="Time of one MoE MLP")

lm_head = _gemm("lm_head", "head", "the LM head", gl.D * gl.V, gl.D, gl.V, r"LM head: $D \times V$, once per step (not per layer).")

# --- the step, shares ---

t_step = Step("t_step", gl.L * t_attn_block.s + (gl.L - gl.L_moe) * t_mlp_dense.s + gl.L_moe * t_mlp_moe.s + lm_head[3].s, "s",
              r"All layers: every layer has an attention block; $L - \sym{L_moe}$ of them a dense MLP and $\sym{L_moe}$ a MoE one; then the "
              "LM head once.", latex=r"t_{\mathrm{step}}", title="Step time")
n_small = Step("small_kernels", gl.L * (3 + mla * (1 + sp.Min(gl.r_q, 1))) + (gl.L - gl.L_moe) * 3 + gl.L_moe * (5 + gl.E_s), "1",
               "Small kernels per step. Attention block: RMSNorm, RoPE, residual add, and MLA's latent RMSNorms (one per latent: the KV "
               r"latent, and the query latent where $r_{q} > 0$). Dense MLP: RMSNorm, SiLU and multiply, add. MoE MLP: RMSNorm, softmax and "
               "top-$k$, SiLU and multiply for the routed experts and one per shared expert, combine, add.",
               latex=r"n_{\mathrm{small}}", title="Small kernels per step")
t_small = Step("t_small_overhead", n_small.s * t_k, "s",
               "Each small kernel pays a fixed launch-and-tail time that no byte count shows.", latex=r"t_{\mathrm{small}}",
               title="Fixed time of the small kernels")
t_ew_all = Step("t_ew_step", gl.L * ew[3].s + (gl.L - gl.L_moe) * ew_mlp[3].s + gl.L_moe * ew_moe[3].s, "s",
                "The small kernels' byte time over all layers.", latex=r"t_{\mathrm{ew,step}}", title="Byte time of the small kernels per step")
attn_share = Step("attention_share", gl.L * t_attn.s / t_step.s, "1",
                  "Attention's share of the roofline step time.", latex=r"\phi_{\mathrm{att}}", title="Attention's share of the step")
ew_share = Step("elementwise_share", t_ew_all.s / t_step.s, "1",
                "The small kernels' byte time as a share of the step: small, because activations are tiny next to the weights.",
                latex=r"\phi_{\mathrm{ew}}", title="The small kernels' share of the step")
fusable = Step("fusable_share", (t_ew_all.s + t_small.s) / (t_step.s + t_small.s), "1",
               "What fusion (and CUDA graphs) can remove: the small kernels' bytes and their fixed per-kernel time, as a share of the step "
               "including it.", latex=r"\phi_{\mathrm{fuse}}", title="What fusion can remove")

# --- where the ranks flip ---

i_gemm_lim = Step("intensity_gemm_limit", pr.gemm_intensity_limit(tokens), "flop/B",
                  "Every weight GEMM tends to this when its weights dominate its bytes: the tie.", latex=r"I_{\mathrm{gemm}}^{\infty}",
                  title="The tie: a weight GEMM's large-matrix intensity")
i_exp_lim = Step("intensity_experts_limit", i_gemm_lim.s * gl.k_E / experts.s, "flop/B",
                 r"The routed experts' large-matrix limit: each token uses $k_{E}$ of the $\sym{experts_touched}$ experts read. The tie itself "
                 r"for a dense model ($\sym{experts_touched} = k_{E} = 1$).", latex=r"I_{\mathrm{exp}}^{\infty}",
                 title="The routed experts' large-matrix intensity")
i_exp_all = Step("intensity_experts_all_read", i_gemm_lim.s * gl.k_E / gl.E, "flop/B",
                 r"The same once the batch reads every expert ($\sym{experts_touched} = E$, within a few per cent once $B q$ passes a few "
                 r"times $E / k_{E}$).", latex=r"I_{\mathrm{exp}}^{E}", title="The routed experts' intensity with every expert read")
i_attn_lim = Step("intensity_attn_limit", pr.decode_attention_intensity(gl.N / gl.n_kv), "flop/B",
                  r"Attention at long context (query and output rows negligible): $N / n_{\mathrm{kv}}$ query heads share each cached stream. "
                  r"GQA: $\kappa_{\mathrm{att}} G q / (2 b_{\mathrm{kv}})$; MLA: all $N$ heads share the latent.",
                  latex=r"I_{\mathrm{att}}^{\infty}", title="Attention's long-context intensity")
b_flip = solve("B_flip", i_gemm_lim, i_attn_lim, gl.B, "1",
               "The intensity ranks cross where the tied GEMMs reach attention's constant: independent of the context and of the hardware.",
               latex=r"B_{\mathrm{flip}}", title="Batch where the intensity ranks flip")
b_flip_exp = solve("B_flip_experts", i_exp_all, i_attn_lim, gl.B, "1",
                   r"Where the routed experts reach attention's constant: $E / k_{E}$ times $\sym{B_flip}$, every expert read by then. "
                   r"For a dense model ($E = k_{E} = 1$) it is $\sym{B_flip}$.", latex=r"B_{\mathrm{flip}}^{\mathrm{exp}}",
                   title="Batch where the routed experts reach attention")
w_o = Step("weight_bytes_o", pr.weight_bytes(gl.N * gl.h_v * gl.D * gl.u_param), "B",
           r"The output projection's weight bytes alone ($N h_{v} \times D$), for the time view.", latex=r"W_{\mathrm{o}}^{\mathrm{w}}",
           title="Output-projection weight bytes")
b_flip_time = solve("B_flip_time", bytes_cache, w_o, gl.B, "1",
                    "The time view: the batch where attention's cache bytes (hence its memory time) pass the output projection's weight bytes. "
                    r"It falls as $T$ grows.", latex=r"B_{\mathrm{flip}}^{t}", title="Batch where attention's time passes the output projection's")

STEPS = (*qkv, *dqkv, *uq, *uk, flops_attn, bytes_cache, bytes_attn, i_attn, t_attn, *uv, *o_proj, ew_in, ew_out, *ew, t_attn_block,
         *gate_up, *down, *ew_mlp, t_mlp_dense,
         experts, w_experts, *router, *routed, *shared, *ew_moe, t_mlp_moe,
         *lm_head, t_step, n_small, t_small, t_ew_all, attn_share, ew_share, fusable,
         i_gemm_lim, i_exp_lim, i_exp_all, i_attn_lim, b_flip, b_flip_exp, w_o, b_flip_time)

BATCHES = (1, 8, 16, 64, 256)
KERNELS = ("qkv", "dqkv", "uq", "uk", "attn", "uv", "o", "ew", "gate_up", "down", "ew_mlp", "router", "experts", "shared", "ew_moe", "lm_head")

DERIVATION = derivation(
    "decode-op-ranking",
    "Ranking the kernels of one decode step",
    "Rank every kernel of one decode step by arithmetic intensity. The teaser says every weight GEMM ties, attention sits at a constant "
    "the batch cannot move, and the ranking flips at batch 8: where does it flip for dense, MoE and MLA models, and what can fusion fix "
    "that otherwise only the model architecture or the batch can?",
    S,
    STEPS,
    ("B_flip", "B_flip_experts", "B_flip_time", "intensity_gemm_limit", "intensity_attn", "intensity_o", "intensity_lm_head", "intensity_ew", "t_step"),
    inputs=(Input("elementwise_flops", c_ew, "4 flop/token", "flop/token",
                  "FLOPs per output element of the small kernels (RMSNorm about 4, RoPE 3, SiLU and multiply 5, add 1)"),
            Input("small_kernel_overhead", t_k, "2 µs", "s", "fixed time per small kernel beyond its bytes (launch, ramp-up, tail)")),
    argument=(
        "intensity_qkv", "intensity_attn", "intensity_o", "intensity_ew", "intensity_lm_head", "t_step", "intensity_gemm_limit",
        "B_flip", "B_flip_experts", "B_flip_time",
    ),
    body_tables=(2,),
    answer=(
        "At this batch every weight GEMM ties near {intensity_gemm_limit} (the output projection at {intensity_o}, the LM head "
        "at {intensity_lm_head}), and the tie grows with the batch.",
        "Attention sits at {intensity_attn} whatever the batch and the small kernels at {intensity_ew}: the tied GEMMs pass "
        "attention at a batch of {B_flip} (routed experts at {B_flip_experts}), and attention's time passes the output "
        "projection's at {B_flip_time}.",
        "The step takes {t_step}. Fusion removes the small kernels' round trips and launches; only the batch moves the GEMMs, "
        "and only the architecture or the KV format moves attention.",
    ),
    assumptions=(
        r"One decode step on one GPU: $B$ sequences, $q$ tokens each, $T$ cached tokens each; every kernel of one layer, the LM head once "
        "per step. Tensor parallelism is not modelled here (the tp input does not apply; @decode-floor splits the step over GPUs).",
        "The layers shown are each kind of layer the model has: the attention block every layer runs, the MLP of a dense layer (dense "
        "models, and DeepSeek's first layers) and the MLP of a MoE layer (MoE models). A kernel the model does not run is n/a; the step "
        r"counts $L$ attention blocks, $L - \sym{L_moe}$ dense MLPs and $\sym{L_moe}$ MoE MLPs.",
        r"Attention projections by architecture. GQA: the fused QKV, $D \times (N + 2K) H$, and the output projection, $N H \times D$. MLA "
        r"(absorbed, as decode kernels run it): the fused down-projections $D \times (r_{q} + r_{\mathrm{kv}} + d_{R})$, the query "
        r"up-projection $d_{q} \times N (d_{\mathrm{nope}} + d_{R})$, $W_{UK}$ absorbed into the query ($N$ heads of "
        r"$d_{\mathrm{nope}} \times r_{\mathrm{kv}}$), attention over the cached latent, $W_{UV}$ absorbed into the output ($N$ heads of "
        r"$r_{\mathrm{kv}} \times d_{v}$) and the output projection $N d_{v} \times D$. The decoupled RoPE key ($d_{R}$, shared by all "
        r"heads) is part of the cached width $w_{c} = r_{\mathrm{kv}} + d_{R}$ and of the score width $w_{k}$.",
        r"MoE layers: the router ($D \times E$), the routed experts as grouped gate, up and down GEMMs reading the "
        r"$\sym{experts_touched}$ experts the batch touches under uniform top-$k$ routing (each token multiplies by its $k_{E}$ experts "
        r"only), and $E_{s}$ shared experts every token uses.",
        "Kernels as an unfused server runs them: the GEMMs and attention above, and the small elementwise kernels (RMSNorms, RoPE, SiLU "
        "and multiply, softmax and top-k, combine, residual adds) each reading and writing HBM.",
        "GEMM bytes are the weights once plus each token's input and output rows at the math precision; attention bytes are the cache "
        "plus the query and output rows.",
        "Roofline time per kernel = max(FLOPs / peak, bytes / bandwidth) at datasheet figures, no overlap between kernels; the small "
        r"kernels' fixed time is an input, kept out of $\sym{t_step}$.",
        r"The flip batches count sequences; the intensity view ($\sym{B_flip}$, $\sym{B_flip_experts}$) ranks by flop/B, the time view "
        r"($\sym{B_flip_time}$) compares attention's cache bytes with the output projection's weight bytes.",
    ),
    takeaways=(
        "At this batch the weight GEMMs tie near {intensity_gemm_limit}: output projection {intensity_o}, LM head {intensity_lm_head}.",
        "Attention sits at {intensity_attn} at any batch; its long-context constant is {intensity_attn_limit}, and the tied GEMMs reach it "
        r"at $\sym{B_flip}$ = {B_flip} sequences. It moves with the KV format and the architecture, never with the hardware.",
        r"Routed experts sit at {intensity_experts_limit} here: the tie scaled by $k_{E} / \sym{experts_touched}$, since each token uses "
        r"$k_{E}$ of the experts the batch reads (for a dense model, the tie itself). They reach attention's constant at "
        r"$\sym{B_flip_experts}$ = {B_flip_experts} sequences.",
        r"In time, attention's cache bytes pass the output projection's weight bytes at $B$ = {B_flip_time} at this context: that "
        "crossover moves with the context, the intensity flip does not.",
        "The small kernels' bytes are {elementwise_share} of the step, but with a fixed {small_kernel_overhead} each they cost "
        "{t_small_overhead} per step. Fusion removes both: {fusable_share} of the step.",
        "Fusion cannot change the GEMM or attention intensities: only the batch (GEMMs) or the architecture and KV format (fewer KV heads, "
        "MLA, FP8 cache) move them. Attention takes {attention_share} of the step here.",
    ),
    scoring=(
        "Lists every kernel of a decode step from the config, the LM head, the MoE router and experts, MLA's projections and the small "
        "elementwise kernels included, with FLOPs and bytes.",
        r"Explains the tie: weight bytes dominate, so intensity is $\kappa B q / b_{w}$ for every weight GEMM regardless of its shape.",
        r"Explains the exceptions: routed experts (each token uses $k_{E}$ of the experts read), the thin router, and MLA's absorbed "
        r"per-head $W_{UK}$ and $W_{UV}$ (their activation rows outweigh their small matrices).",
        "Explains attention's constant: the batch cancels because each sequence reads its own cache; the constant is the group size "
        r"$G = N/K$ in BF16 for GQA, and far higher for MLA, whose $N$ heads share one latent.",
        "Gives the flip batch in closed form and says how it moves with an FP8 cache, a smaller group size or MLA (the flip table below).",
        "Separates the intensity flip from the time crossover, which depends on the context.",
        "Sorts the fixes: fusion for elementwise kernels and launches; batch for GEMMs; architecture (GQA, MLA) or KV format for attention.",
    ),
    limits=(
        "Real GEMMs at small batch run below the roofline (tile quantization: a 64- or 128-row tile for a handful of tokens), and attention "
        "kernels split the context to fill the SMs.",
        "Routing is taken as uniform; real routers are skewed, so fewer distinct experts are read at a given batch. The token permute "
        "before the grouped expert GEMMs and the load imbalance between experts are not counted.",
        "Launch gaps, the all-reduces of tensor parallelism and host work are not kernels here (@decode-floor).",
        "Production stacks already fuse RoPE into attention and residual adds into norms; the elementwise share is then smaller still. "
        "Qwen's per-head Q and K norms and QKV biases are left out.",
        "At large batch the GEMMs turn compute-bound and their time stops growing with bytes; attention only does where its constant "
        "passes the ridge (@attention-intensity).",
    ),
    tables=(
        Table("The weight GEMMs tie; attention does not move", tuple(Row("", set={"batch": str(b)}) for b in BATCHES),
              ("intensity_o", "intensity_lm_head", "intensity_gemm_limit", "intensity_experts_limit", "intensity_attn")),
        Table("The LM head and the small kernels", tuple(Row("", set={"batch": str(b)}) for b in BATCHES),
              ("intensity_lm_head", "intensity_ew", "elementwise_share", "fusable_share", "attention_share")),
        Table("Where the flip lands", (
            Row("Llama 3.1 70B, BF16 KV", model="llama-3.1-70b", kv="bf16"),
            Row("Llama 3.1 70B, FP8 KV", model="llama-3.1-70b", kv="fp8"),
            Row("Llama 3.1 8B, BF16 KV", model="llama-3.1-8b", kv="bf16"),
            Row("Llama 3.1 8B, FP8 KV", model="llama-3.1-8b", kv="fp8"),
            Row("Llama 3.1 405B, BF16 KV", model="llama-3.1-405b", kv="bf16"),
            Row("Mixtral 8x7B (MoE, GQA), BF16 KV", model="mixtral-8x7b", kv="bf16"),
            Row("Qwen3-235B-A22B (MoE, GQA), BF16 KV", model="qwen3-235b-a22b", kv="bf16"),
            Row("DeepSeek-V3 (MoE, MLA), BF16 KV", model="deepseek-v3", kv="bf16"),
            Row("DeepSeek-V3 (MoE, MLA), FP8 KV", model="deepseek-v3", kv="fp8"),
            Row("DeepSeek-V2-Lite (MoE, MLA), BF16 KV", model="deepseek-v2-lite", kv="bf16"),
        ), ("intensity_attn_limit", "B_flip", "B_flip_experts", "B_flip_time"), note=r"$\sym{B_flip_time}$ at this context."),
        Table("The time view moves with context (Llama 3.1 70B)", tuple(
            Row("", model="llama-3.1-70b", set={"context": f"{t} token"}) for t in (2048, 4096, 8192, 32768)
        ), ("B_flip", "B_flip_time")),
        Table("MoE layers: the experts a batch reads and their intensity", tuple(
            Row("", model=m, set={"batch": str(b)})
            for m in ("mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3") for b in (1, 8, 64, 1024)
        ), ("experts_touched", "weight_bytes_experts", "intensity_experts", "intensity_router", "t_mlp_moe"),
            note="Dense models have no MoE layer."),
        Table("MLA's projections around attention (DeepSeek-V3)", tuple(
            Row("", model="deepseek-v3", set={"batch": str(b)}) for b in (1, 64, 1024, 4096)
        ), ("intensity_dqkv", "intensity_uq", "intensity_uk", "intensity_attn", "intensity_uv", "intensity_o")),
        Table("Step time across models", tuple(
            Row("", model=m, set={"batch": "64"})
            for m in ("llama-3.1-70b", "mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3", "deepseek-v2-lite")
        ), ("t_step", "attention_share", "fusable_share"), note="On this chip; the weights alone may exceed one GPU's memory."),
        Table("Step time across accelerators", tuple(
            Row("", hardware=h, set={"batch": "64"}) for h in ("h100-sxm", "h200", "b200")
        ), ("t_step", "attention_share", "fusable_share")),
    ),
    claims=(
        Claim("The ranking flips at batch 8 (Llama 3.1 70B, BF16 weights and cache).", "B_flip", "8", rel_tol=1e-9,
              where=Row("Llama 3.1 70B, BF16", model="llama-3.1-70b")),
        Claim(r"The weight GEMMs tie: QKV and down projection at the same intensity (within 1%, $B = 64$).", "intensity_qkv", "intensity_down",
              rel_tol=0.01, where=Row(r"Llama 3.1 70B, $B = 64$", model="llama-3.1-70b", set={"batch": "64"})),
        Claim(r"Batch 8 is also where attention's time passes the output projection's ($T = 8192$).", "B_flip_time", "8", rel_tol=0.05,
              where=Row(r"Llama 3.1 70B, $T = 8192$", model="llama-3.1-70b", set={"context": "8192 token"})),
        Claim(r"Batch 8 is where attention's time passes the output projection's at $T = 4096$.", "B_flip_time", "8", rel_tol=0.05,
              where=Row(r"Llama 3.1 70B, $T = 4096$", model="llama-3.1-70b", set={"context": "4096 token"})),
        Claim("The teaser's batch 8 carries over to an FP8 KV cache.", "B_flip", "8", rel_tol=1e-9,
              where=Row("Llama 3.1 70B, FP8 KV", model="llama-3.1-70b", kv="fp8")),
        Claim("The teaser's batch 8 carries over to Llama 3.1 8B.", "B_flip", "8", rel_tol=1e-9,
              where=Row("Llama 3.1 8B, BF16", model="llama-3.1-8b")),
        Claim("The teaser's batch 8 carries over to MLA (DeepSeek-V3).", "B_flip", "8", rel_tol=0.05,
              where=Row("DeepSeek-V3, BF16", model="deepseek-v3")),
        Claim("The teaser's batch 8 carries over to Mixtral 8x7B's routed experts.", "B_flip_experts", "8", rel_tol=0.05,
              where=Row("Mixtral 8x7B, BF16", model="mixtral-8x7b")),
        Claim("At batch 1 a Mixtral 8x7B MoE layer reads only its top-2 experts.", "experts_touched", "2", rel_tol=1e-9,
              where=Row(r"Mixtral 8x7B, $B = 1$", model="mixtral-8x7b", set={"batch": "1"})),
        Claim("By batch 64 a Mixtral 8x7B MoE layer reads all 8 experts.", "experts_touched", "8", rel_tol=0.01,
              where=Row(r"Mixtral 8x7B, $B = 64$", model="mixtral-8x7b", set={"batch": "64"})),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-70b", "llama-3.1-8b", "mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3"),
    plots=(Plot("roofline", "roofline",
                "The roofline of this accelerator (attainable FLOP/s against intensity, the ridge marked), with the ceilings of the others, "
                "and the kernels of one decode step placed on it at batch 1, at the flip batch and at a large batch: the weight GEMMs climb "
                "the slope together as the batch grows and meet attention at the flip, while attention and the small kernels stay where the "
                "architecture and the KV format put them.",
                title=r"The weight GEMMs tie and climb with the batch; attention stays at {intensity_attn}, and the GEMMs reach it at "
                      r"$\sym{B_flip}$ = {B_flip}",
                points=tuple(f"intensity_{k}" for k in KERNELS), batches=("1", "B_flip", "1024"), answer=True,
                labels={**{f"intensity_{k}": "weight GEMMs" for k in ("qkv", "dqkv", "uq", "o", "gate_up", "down", "lm_head", "shared")},
                        "intensity_uk": r"absorbed $W_{UK}$", "intensity_uv": r"absorbed $W_{UV}$", "intensity_attn": "attention",
                        "intensity_router": "router", "intensity_experts": "routed experts",
                        **{f"intensity_{k}": "small kernels" for k in ("ew", "ew_mlp", "ew_moe")}}),),
    display_units={**{f"flops_{k}": "Mflop" for k in KERNELS},
                   **{f"bytes_{k}": "MB" for k in (*KERNELS, "attn_cache")},
                   **{f"t_{k}": "µs" for k in (*KERNELS, "attn_block", "mlp_dense", "mlp_moe")},
                   "t_step": "ms", "weight_bytes_o": "MB", "weight_bytes_experts": "MB", "t_small_overhead": "ms", "t_ew_step": "ms",
                   "elementwise_share": "%", "fusable_share": "%", "attention_share": "%"},
)

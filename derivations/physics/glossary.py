"""The glossary: every shared symbol, its unit, LaTeX, meaning, in one place.

Letters follow the JAX scaling book for the model (B batch, D d_model, F d_ff,
L layers, N query heads, K KV heads, H head dim, T context, V vocabulary) and
Williams' roofline for the machine (pi peak, beta bandwidth, I intensity).
One letter means one thing everywhere.
"""

from __future__ import annotations

from ..engine.symbols import Symbols

GLOSSARY = Symbols()
g = GLOSSARY.add

# machine
pi = g("pi", "flop/s", r"\pi", "dense tensor peak at the math precision")
pi_kv = g("pi_kv", "flop/s", r"\pi_{\mathrm{kv}}", "dense tensor peak at the KV cache format's math: attention kernels run at their cache's precision (FlashMLA in BF16 over a BF16 latent)")
beta = g("beta", "B/s", r"\beta", "HBM bandwidth (datasheet)")
C_mem = g("C_mem", "B", r"C_{\mathrm{HBM}}", "HBM capacity per chip (datasheet)")
M_sram = g("M_sram", "B", r"M_{\mathrm{L2}}", "on-chip cache (L2) per chip")

# model shape (dimensionless counts, from config.json)
D = g("D", "1", "D", "hidden size (d_model)")
F = g("F", "1", "F", "MLP intermediate size (d_ff; a routed expert's where the config gives no dense width: every layer a mixture of experts)")
m_mlp = g("m_mlp", "1", r"m_{\mathrm{mlp}}", "weight matrices of a dense MLP: 3 gated (gate, up, down), 2 plain (up, down: GPT-2, OPT, Falcon, Phi)")
m_E = g("m_E", "1", r"m_{E}", "weight matrices of one routed expert: 3 gated (gate, up, down), 2 plain (up, down: Nemotron 3's ReLU-squared experts)")
L = g("L", "1", "L", "transformer layers")
N = g("N", "1", "N", "query heads")
K = g("K", "1", "K", "KV heads")
H = g("H", "1", "H", "head dimension")
V = g("V", "1", "V", "vocabulary size")
r_kv = g("r_kv", "1", r"r_{\mathrm{kv}}", "MLA latent (compressed KV) rank")
d_R = g("d_R", "1", r"d_{R}", "MLA decoupled RoPE key width per head")
d_nope = g("d_nope", "1", r"d_{\mathrm{nope}}", "MLA non-RoPE query/key width per head")
d_v = g("d_v", "1", r"d_{v}", "MLA value width per head")

# parameter counts (exact, from the config by the spec layer)
P_total = g("P_total", "parameter", r"P_{\mathrm{total}}", "all parameters of the model")
P_matmul = g("P_matmul", "parameter", r"P_{\mathrm{mm}}", "parameters that are GEMM operands (all experts)")
P_noarith = g("P_noarith", "parameter", r"P_{\mathrm{0}}", "parameters that do no matmul (embedding gather, norms, biases)")
P_active = g("P_active", "parameter", r"P_{\mathrm{act}}", "GEMM parameters one token multiplies by (its top-$k$ experts only)")
P_emb = g("P_emb", "parameter", r"P_{\mathrm{emb}}", "input embedding (a gather; 0 when tied to the LM head)")
P_norm = g("P_norm", "parameter", r"P_{\mathrm{norm}}", "norm weights and biases")
P_head = g("P_head", "parameter", r"P_{\mathrm{head}}", r"LM head ($V \times D$)")

# number formats
b_w = g("b_w", "B/parameter", r"b_{w}", "bytes per weight (the always-read GEMM weights' mean, in the formats the sheet computes)")
b_e = g("b_e", "B/parameter", r"b_{e}", "bytes per routed-expert weight")
b_kv = g("b_kv", "B/token", r"b_{\mathrm{kv}}", "bytes per cached K/V element, per token")
b_a = g("b_a", "B/token", r"b_{a}", "bytes per activation element, per token")

# conventions
kappa = g("kappa", "flop/(parameter*token)", r"\kappa", "FLOPs per weight per token (one multiply-add)")
kappa_attn = g("kappa_attn", "flop/token**2", r"\kappa_{\mathrm{att}}", r"attention FLOPs per query token per cached token per head channel ($QK^{\top}$ and $PV$)")

# scenario
B = g("B", "1", "B", "batch: sequences decoded together")
q = g("q", "token", "q", "tokens each sequence adds per step")
T = g("T", "token", "T", "context length (tokens already in the KV cache)")
S = g("S", "token", "S", "prompt length (tokens prefilled at once)")
n_tp = g("n_tp", "1", r"n_{\mathrm{TP}}", "tensor-parallel degree (GPUs sharing each layer)")
n_ep = g("n_ep", "1", r"n_{\mathrm{EP}}", "expert-parallel degree: the GPUs a MoE layer's routed experts are split over, whole experts each")
n_dp = g("n_dp", "1", r"n_{\mathrm{DP}}", "data-parallel attention degree: attention replicas, each serving its own $B$ sequences")
eta_bw = g("eta_bw", "1", r"\eta_{\mathrm{bw}}", "achieved fraction of datasheet bandwidth")
t_fixed = g("t_fixed", "s", r"t_{\mathrm{fixed}}", "time per step beside the per-layer overhead (host work paid once a step)")
t_layer = g("t_layer", "s", r"t_{\mathrm{layer}}", "overhead per layer per step that no byte count shows (launches, small kernels, host work)")
t_seq = g("t_seq", "s", r"t_{\mathrm{seq}}", "time per sequence per step that no byte count shows (scheduling, sampling, detokenisation: the per-request work of the engine's host)")
N_out = g("N_out", "token", r"N_{\mathrm{out}}", "mean output tokens per request of a server at load (0: the decode-only step, no prompts in the step)")
h_pfx = g("h_pfx", "1", r"h_{\mathrm{pfx}}", "prefix cache hit rate: the share of each prompt whose KV cache the server already holds, so it is read, not computed",
          share=True)
# the power model (joules-per-token): board power as a share of the TDP, fitted to measured board power
phi_0 = g("phi_0", "1", r"\phi_{0}", "board power of a powered GPU doing nothing, as a share of its TDP (the power model's intercept)")
a_mem = g("a_mem", "1", r"a_{\mathrm{mem}}", "board power the memory system adds at full datasheet bandwidth, as a share of the TDP")
a_flop = g("a_flop", "1", r"a_{\mathrm{flop}}", "board power the tensor cores add at the full dense peak, as a share of the TDP")
m_tile = g("m_tile", "token", r"m_{\mathrm{tile}}", "rows of one grouped-GEMM tile: the fewest rows an expert's GEMM computes once any token is routed to it")

# aggregate from the spec layer (the GQA or MLA formula, by architecture)
e_kv = g("e_kv", "1", r"e_{\mathrm{kv}}", r"cached elements per token over all layers ($2 L K H$ for GQA; $L (r_{\mathrm{kv}} + d_{R})$ for MLA)")
u_param = g("u_param", "parameter", r"\mathrm{parameter}", "one parameter: turns a count of weights into parameters")

# attention for any architecture (bound per model: the GQA or the absorbed-MLA value)
n_kv = g("n_kv", "1", r"n_{\mathrm{kv}}", r"cached K/V streams per layer ($K$ for GQA; 1 for MLA, whose one latent all heads read)")
w_k = g("w_k", "1", r"w_{k}", r"elements a score reads per head per cached token ($H$ for GQA; $r_{\mathrm{kv}} + d_{R}$ for absorbed MLA)")
w_v = g("w_v", "1", r"w_{v}", r"elements the value sum reads per head per cached token ($H$ for GQA; $r_{\mathrm{kv}}$ for absorbed MLA)")
w_c = g("w_c", "1", r"w_{c}", r"cached elements per token per stream per layer ($2H$ for GQA, K and V; $r_{\mathrm{kv}} + d_{R}$ for MLA)")
n_SM = g("n_SM", "1", r"n_{\mathrm{SM}}", "streaming multiprocessors (compute units) per chip")
u_token = g("u_token", "token", r"\mathrm{tok}", "one token: turns bytes per element per token into bytes per element")

# the kinds of layer (config layer_types, full_attention_interval, index_topk): which layers keep a KV cache, which read only
# part of it, which keep a fixed-size state instead. A model whose every layer is full attention has L_att = L and the rest 0.
L_att = g("L_att", "1", r"L_{\mathrm{att}}", "layers that attend over a KV cache (full, windowed or sparse attention); the rest keep a fixed-size state ($L$ for most models)")
L_rec = g("L_rec", "1", r"L_{\mathrm{rec}}", "layers (or blocks) that keep a fixed-size state instead of a KV cache: linear attention, Mamba-2 (0 for most models)")
# windowed attention (config sliding_window, layer_types, attention_chunk_size) and sparse attention (DeepSeek Sparse Attention,
# index_topk): a model without either has L_win = L_drop = 0
L_win = g("L_win", "1", r"L_{\mathrm{win}}", r"attention layers that read at most $W_{\mathrm{win}}$ tokens per query: a sliding window, an attention chunk, or a sparse top-$k$ selection (0 when every layer reads the whole context)")
W_win = g("W_win", "token", r"W_{\mathrm{win}}", "tokens a windowed layer reads per query: the sliding window, the chunk of chunked attention, or the top-$k$ of sparse attention ($10^{9}$ without: longer than any context)")
L_drop = g("L_drop", "1", r"L_{\mathrm{drop}}", r"windowed layers that also drop the tokens outside their window (a sliding window or chunk); a sparse top-$k$ layer keeps every token ($L_{\mathrm{win}}$ for most models)")
k_top = g("k_top", "token", r"k_{\mathrm{top}}", "tokens a sparse-attention layer reads per query: its indexer's top-$k$ (index_topk; none without sparse attention)")
# sparse attention's indexer (DeepSeek-V3.2): a small key per token per sparse layer, scored against every cached token
s_idx = g("s_idx", "B/token", r"s_{\mathrm{idx}}", "indexer-cache bytes per token over all sparse-attention layers (0 without sparse attention)")
e_idx = g("e_idx", "1", r"e_{\mathrm{idx}}", "indexer channels one query scores per cached token over all sparse layers: indexer heads times their width (0 without sparse attention)")
# recurrent layers (linear attention such as Gated DeltaNet, state-space layers such as Mamba-2): a fixed-size state per sequence
s_st = g("s_st", "B", r"s_{\mathrm{st}}", "recurrent-state bytes per sequence over all linear-attention and state-space layers, convolution state included (0 for a model whose every layer attends)")
e_rec = g("e_rec", "1", r"e_{\mathrm{rec}}", "elements of the recurrent (delta-rule or SSM) state per sequence over all recurrent layers, each updated and read once per token")
kappa_st = g("kappa_st", "flop/token", r"\kappa_{\mathrm{st}}", "FLOPs per recurrent-state element per token: a multiply-add to update it and one to read it out")

# mixture of experts (a dense model is bound as E = k_E = 1, L_moe = 0, P_exp = 0: every weight is in P_base)
E = g("E", "1", "E", "routed experts per MoE layer (1 for a dense model)")
k_E = g("k_E", "1", r"k_{E}", "routed experts each token uses (top-$k$; 1 for a dense model)")
L_moe = g("L_moe", "1", r"L_{\mathrm{MoE}}", "layers whose MLP is a mixture of routed experts (0 for a dense model)")
P_exp = g("P_exp", "parameter", r"P_{\mathrm{exp}}", "GEMM weights of one routed expert in one layer")
P_base = g("P_base", "parameter", r"P_{\mathrm{base}}", "GEMM weights every step reads whatever the routing: attention, dense MLPs, shared experts, routers, LM head")

# attention over materialised K and V (prefill; non-absorbed MLA)
h_k = g("h_k", "1", r"h_{k}", r"per-head key width of attention over materialised K ($H$ for GQA; $d_{\mathrm{nope}} + d_{R}$ for MLA)")
h_v = g("h_v", "1", r"h_{v}", r"per-head value width of attention over materialised V ($H$ for GQA; $d_{v}$ for MLA)")

# the shared step-time model
eta_flops = g("eta_flops", "1", r"\eta_{\mathrm{flop}}", "achieved fraction of the dense tensor peak in GEMMs and attention")
beta_link = g("beta_link", "B/s", r"\beta_{\mathrm{link}}", "GPU-to-GPU bandwidth per direction (NVLink, ICI, or PCIe where there is no scale-up link)")
F_E = g("F_E", "1", r"F_{E}", "FFN width of one routed expert (moe_intermediate_size; 0 for a dense model)")
E_s = g("E_s", "1", r"E_{s}", "shared experts per MoE layer, used by every token, in routed-expert sizes (0 for most models)")
t_ar = g("t_ar", "s", r"t_{\mathrm{AR}}", "latency of one round of a small all-reduce, however small the message")
# how the scale-up domain connects its GPUs (hardware scaleup_topology): exactly one is 1; they pick the all-reduce latency law
d_1shot = g("d_1shot", "1", r"\delta_{\mathrm{1shot}}", "whether the chip is on a switch or full mesh (NVSwitch, Infinity Fabric): one-shot all-reduces (1) or not (0)")
d_ring = g("d_ring", "1", r"\delta_{\mathrm{ring}}", "whether the chip is on PCIe, with no scale-up switch: NCCL's ring all-reduce (1) or not (0)")
n_dom = g("n_dom", "1", r"n_{\mathrm{dom}}", "GPUs one scale-up domain connects (an NVSwitch node of 8, an NVL72 rack of 72)")
beta_out = g("beta_out", "B/s", r"\beta_{\mathrm{out}}", "scale-out network bandwidth per GPU per direction (InfiniBand, RoCE), for traffic that leaves the scale-up domain")
beta_host = g("beta_host", "B/s", r"\beta_{\mathrm{host}}", "the link to host memory per accelerator per direction (PCIe to the CPU's DRAM, NVLink-C2C to a Grace's LPDDR5X)")
d_torus = g("d_torus", "1", r"\delta_{\mathrm{torus}}", "whether the chip is on a torus (TPU ICI): a bidirectional ring all-reduce (1) or not (0)")

# the on-chip memories FlashAttention works in (flash-attention-io); bound only on chips that have them
M_smem = g("M_smem", "B", r"M_{\mathrm{SM}}", "shared memory per SM: the on-chip SRAM one thread block tiles into (none on a TPU)")
M_llc = g("M_llc", "B", r"C_{\mathrm{LLC}}", "last-level cache every SM reads through: L2 on NVIDIA, Infinity Cache on AMD (none on a TPU)")
n_blk = g("n_blk", "1", r"n_{\mathrm{blk}}", "thread blocks the chip runs at once, one per SM (CU on AMD); none on a TPU")

# the kernels of one layer of any architecture (decode-op-ranking): bound only where the model has that part
F_dense = g("F_dense", "1", r"F_{\mathrm{dense}}", "MLP width of the dense (non-MoE) layers (intermediate_size); none when every layer is a mixture of experts")
F_moe = g("F_moe", "1", r"F_{\mathrm{MoE}}", r"FFN width of each routed or shared expert of a MoE layer ($F_{E}$ where a MoE layer exists; none for a dense model)")
P_rtr = g("P_rtr", "parameter", r"P_{\mathrm{rtr}}", r"router weights of one MoE layer: $D \times E$, and a shared expert's $D \times 1$ gate where it has one (none for a dense model)")
delta_mla = g("delta_mla", "1", r"\delta_{\mathrm{MLA}}", "1 for multi-head latent attention (DeepSeek-V2/V3), 0 for GQA: which attention projections a layer runs")
r_q = g("r_q", "1", r"r_{q}", "MLA query latent rank (q_lora_rank); 0 where the query is projected straight from the hidden state (DeepSeek-V2-Lite)")
d_q = g("d_q", "1", r"d_{q}", r"width MLA's query up-projection reads: $r_{q}$, or $D$ where there is no query latent")

# bits (headline-check: the weight width that makes a claim fit)
u_bit = g("u_bit", "B", r"\mathrm{bit}", r"one bit, $\tfrac{1}{8}$ of a byte: turns bytes per weight into bits per weight")

# the second setup: a sheet that compares two chips (hardware-upgrade) or runs two models (speculative-decoding's drafter)
# binds these primed twins from the context's second chip or second model; the shared step model evaluated with them
# (engine.At) is the second setup's step time. One prime means "the same quantity, second setup" everywhere.


def _twin(symbol: object, what: str) -> object:
    info = GLOSSARY.info(symbol)
    return g(f"{info.name}_2", str(info.unit), "{" + info.latex + "}'", f"{info.meaning}, {what}")


#: chip symbols -> the second chip's twins
SECOND_CHIP = {s: _twin(s, "second chip") for s in (pi, beta, C_mem, beta_link, d_1shot, d_ring, d_torus, n_dom, beta_out)}
#: model symbols of the shared step model and memory fit -> the second model's twins
SECOND_MODEL = {s: _twin(s, "second model") for s in (D, L, N, n_kv, w_k, w_v, w_c, e_kv, P_total, P_active, P_base, P_exp, E, k_E, L_moe,
                                                     L_att, L_rec, L_win, W_win, L_drop, s_idx, e_idx, s_st, e_rec)}

# fixed number formats beside the context's own (int4-flip compares INT4 weights with BF16 and FP8 in one sheet)
pi_bf16 = g("pi_bf16", "flop/s", r"\pi_{\mathrm{BF16}}", "dense BF16 tensor peak, whatever the context's math precision")
pi_fp8 = g("pi_fp8", "flop/s", r"\pi_{\mathrm{FP8}}", "dense FP8 tensor peak (none on chips without FP8 tensor cores)")
b_bf16 = g("b_bf16", "B/parameter", r"b_{\mathrm{BF16}}", "bytes per BF16 weight")
b_fp8 = g("b_fp8", "B/parameter", r"b_{\mathrm{FP8}}", "bytes per FP8 weight")

# where a model's always-read weights sit (moe-experts' bytes per step, by component)
P_attn = g("P_attn", "parameter", r"P_{\mathrm{attn}}", "attention projection weights of all layers (GQA or MLA)")
P_mlp = g("P_mlp", "parameter", r"P_{\mathrm{mlp}}", "MLP weights of the dense (non-MoE) layers; 0 when every layer is a mixture of experts")

# board power (joules-per-token): the datasheet cap; n/a for chips whose spec gives no TDP
P_tdp = g("P_tdp", "W", r"P_{\mathrm{TDP}}", "board power cap per chip (datasheet TDP); n/a where the spec gives none")
# a dense BF16 peak measured under sustained load on the chip itself (FlashMLA's H800 figure); n/a where no source gives one
SECOND_CHIP[P_tdp] = _twin(P_tdp, "second chip")
pi_sus = g("pi_sus", "flop/s", r"\pi_{\mathrm{sus}}", "dense BF16 peak measured under sustained load (clock throttled) on this chip; n/a where no source gives one")

# what one profiler trace of a decode step shows (batch1-gap, model-limits)
n_kl = g("n_kl", "1", r"n_{\mathrm{k/layer}}", "kernels launched per layer per decode step (GEMMs, attention, norms, activations, cache writes, all-reduces)")
n_k0 = g("n_k0", "1", r"n_{\mathrm{k,0}}", "kernels per decode step outside the layers (embedding, final norm, LM head, sampling)")
t_launch = g("t_launch", "s", r"t_{\mathrm{launch}}", "GPU idle time at each kernel boundary of a trace: the launch gap")
eta_att = g("eta_att", "1", r"\eta_{\mathrm{att}}", "achieved fraction of datasheet bandwidth in the decode attention kernel")
# speculative decoding (speculative-decoding, mbu-definition): a drafter proposes gamma tokens, the target accepts each with chance alpha
alpha = g("alpha", "1", r"\alpha", "acceptance rate: the chance the target accepts a drafted token once the ones before it were accepted "
          "(the first drafted token's; every later one's too, unless set per position)")
gamma = g("gamma", "1", r"\gamma", "draft length: tokens the drafter proposes per sequence per cycle (the issue's $k$)")
#: acceptance per draft position (speculative-decoding): the chance the target accepts the i-th drafted token once the ones
#: before it were accepted; position 1 is alpha, and past the last of them every position takes the last one's rate
ACCEPTANCE_POSITIONS = (alpha, *(g(f"alpha_{i}", "1", rf"\alpha_{{{i}}}", f"acceptance rate of the drafted token at position {i}, once the "
                                   "ones before it were accepted", share=True) for i in range(2, 9)))
# a measured step of the setup at hand (batch1-gap, model-limits: --set t_step_measured=11.3ms); 0 where none is given
t_meas = g("t_meas", "s", r"t_{\mathrm{meas}}", "a measured decode step time of this setup (0: none given)")
# the collective kernels' time per step in a trace of the setup at hand (mbu-diagnosis, roofline diagnose); 0 where none is given
t_coll_meas = g("t_coll_meas", "s", r"t_{\mathrm{coll,meas}}", "the collective kernels' time per step in a trace of this setup (0: none given)")

# what published measurements of real servers say (specs/measurements/, `roofline validate`): decode-floor, mbu-diagnosis
U_lo = g("U_lo", "1", r"\mathrm{MBU}_{\mathrm{low}}", "lowest implied MBU of the memory-bound decode records of the measurements dataset")
U_med = g("U_med", "1", r"\mathrm{MBU}_{\mathrm{med}}", "median implied MBU of the memory-bound decode records of the measurements dataset")
U_hi = g("U_hi", "1", r"\mathrm{MBU}_{\mathrm{high}}", "highest implied MBU of the memory-bound decode records of the measurements dataset")

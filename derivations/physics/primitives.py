"""Primitives every question builds on: one definition each, as sympy expressions.

Each returns a plain expression over glossary symbols (or whatever symbols
are passed in). Questions combine these; none re-derives one.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ...specs.counts import gqa_attention_params, gqa_kv_elements_per_token, mla_kv_elements_per_token, mlp_params, swiglu_mlp_params
from . import glossary as gl

__all__ = [
    "attended_pairs",
    "attention_flops_per_token",
    "compute_time",
    "gemm_flops",
    "gqa_attention_params",
    "gqa_kv_elements_per_token",
    "indexer_flops_per_token",
    "intensity",
    "kept_context",
    "kv_bytes_per_token",
    "matmul_flops_per_token",
    "memory_time",
    "mixed_weight_bytes",
    "mla_kv_elements_per_token",
    "mlp_params",
    "prefill_attention_flops",
    "read_context",
    "recurrent_flops_per_token",
    "ridge_point",
    "roofline_time",
    "swiglu_mlp_params",
    "tp_split",
    "weight_bytes",
]


def weight_bytes(P: sp.Expr = gl.P_active, b_w: sp.Expr = gl.b_w) -> sp.Expr:
    """Bytes of weights streamed from HBM when every weight is read once [B]."""
    return P * b_w


def mixed_weight_bytes(always: sp.Expr, routed: sp.Expr, b_w: sp.Expr = gl.b_w, b_e: sp.Expr = gl.b_e) -> sp.Expr:
    """Bytes of `always` always-read weights (attention, dense and shared MLPs, routers, LM head; the embedding and norms
    where a sum of resident weights holds them) at b_w, plus `routed` routed-expert weights at b_e [B]: a checkpoint stores
    the two in different formats (gpt-oss: BF16 attention, MXFP4 experts)."""
    return always * b_w + routed * b_e


def matmul_flops_per_token(P: sp.Expr = gl.P_active) -> sp.Expr:
    """GEMM FLOPs per token: one multiply-add per weight [flop/token]."""
    return gl.kappa * P


def gemm_flops(P: sp.Expr = gl.P_active, tokens: sp.Expr = gl.B * gl.q) -> sp.Expr:
    """FLOPs of the weight GEMMs for `tokens` tokens in one step [flop]."""
    return matmul_flops_per_token(P) * tokens


def read_context(T: sp.Expr = gl.T, L: sp.Expr = gl.L_att, L_w: sp.Expr = gl.L_win, W: sp.Expr = gl.W_win) -> sp.Expr:
    """Tokens one attention layer reads per decode query at context T, averaged over the L attention layers [token].

    The one rule every KV byte read and every attention FLOP uses: a full layer reads all T tokens; each of the L_w
    windowed layers min(T, W). A sliding window of W tokens (Mistral 7B v0.1 4096 in every layer; Gemma 3 1024 in five
    layers of six; gpt-oss 128 in every other layer); chunked attention (Llama 4, attention_chunk_size C) taken as a window
    of C, an upper bound: a query at position T reads the T mod C + 1 tokens of its own chunk (C/2 on average over a long
    sequence); sparse attention (DeepSeek-V3.2's DSA, index_topk 2048 in every layer) reads the top-W tokens its indexer
    picks. A model without either has L_w = 0: exactly T. Linear-attention layers read no cache and are not among the L.
    """
    return ((L - L_w) * T + L_w * sp.Min(T, W)) / L


def kept_context(T: sp.Expr = gl.T, L: sp.Expr = gl.L_att, L_d: sp.Expr = gl.L_drop, W: sp.Expr = gl.W_win) -> sp.Expr:
    """Tokens one attention layer keeps in its cache at context T, averaged over the L attention layers [token].

    What the cache holds: a sliding-window or chunked layer (one of the L_d) keeps at most W tokens, as vLLM sizes it
    (vllm/v1/kv_cache_interface.py, ChunkedLocalAttentionSpec: "we hold KV for at most one chunk window"); a sparse layer
    keeps every token, since any may be among a later query's top-k; a full layer keeps all T.
    """
    return ((L - L_d) * T + L_d * sp.Min(T, W)) / L


def attended_pairs(S: sp.Expr = gl.S, L: sp.Expr = gl.L_att, L_w: sp.Expr = gl.L_win, W: sp.Expr = gl.W_win) -> sp.Expr:
    """(query, key) pairs a causal S-token prefill scores in one attention layer, averaged over the L attention layers [token**2].

    A full layer scores S**2/2 (each query the tokens before it); a windowed or sparse one at most W per query:
    sum over positions of min(t, W) = m (S - m/2) with m = min(S, W), which is S**2/2 again for S <= W.
    """
    m = sp.Min(S, W)
    return ((L - L_w) * S**2 / 2 + L_w * m * (S - m / 2)) / L


def indexer_flops_per_token(T: sp.Expr = gl.T, e: sp.Expr = gl.e_idx) -> sp.Expr:
    """Sparse attention's indexer for one query token: every cached token scored over the indexer's e channels (all sparse
    layers), one multiply-add each [flop/token]. It grows with T while the attention behind it reads only the top-k."""
    return gl.kappa_attn / 2 * e * T


def recurrent_flops_per_token(e: sp.Expr = gl.e_rec) -> sp.Expr:
    """A recurrent layer's state update and read-out for one token, all recurrent layers: kappa_st per state element, whatever
    the context [flop/token]."""
    return gl.kappa_st * e


def attention_flops_per_token(T: sp.Expr | None = None, L: sp.Expr = gl.L_att, N: sp.Expr = gl.N,
                              w_k: sp.Expr = gl.w_k, w_v: sp.Expr = gl.w_v) -> sp.Expr:
    """QK^T and PV FLOPs of one decode query token against T cached tokens, all attention layers [flop/token].

    Scores over w_k channels and the value sum over w_v per head: 4*L*N*H*T for
    GQA (w_k = w_v = H); absorbed MLA works in the latent (r_kv + d_R and r_kv).
    T defaults to the tokens a layer reads (read_context: windows and top-k applied).
    """
    return gl.kappa_attn / 2 * L * N * (w_k + w_v) * (read_context() if T is None else T)


def prefill_attention_flops(S: sp.Expr = gl.S, L: sp.Expr = gl.L_att, N: sp.Expr = gl.N,
                            h_k: sp.Expr = gl.h_k, h_v: sp.Expr = gl.h_v) -> sp.Expr:
    """Sequence-mixing FLOPs of a whole S-token prefill: causal attention over materialised K and V (S**2/2 pairs per attention
    layer, fewer through windows or a sparse top-k), a sparse layer's indexer over every earlier token (S**2/2 scores), and
    the recurrent layers' state updates (linear in S) [flop].

    Prefill kernels do not absorb MLA's projections: K and V are decompressed
    once (d_nope + d_R and d_v per head), so the widths are h_k and h_v.
    """
    return (gl.kappa_attn / 2 * L * N * (h_k + h_v) * attended_pairs(S, L) + indexer_flops_per_token(S / 2) * S
            + recurrent_flops_per_token() * S)


def kv_bytes_per_token(elements: sp.Expr = gl.e_kv, b_kv: sp.Expr = gl.b_kv) -> sp.Expr:
    """KV-cache bytes each token leaves behind [B/token]."""
    return elements * b_kv


def compute_time(flops: sp.Expr, peak: sp.Expr = gl.pi) -> sp.Expr:
    return flops / peak


def memory_time(nbytes: sp.Expr, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    return nbytes / bandwidth


def roofline_time(flops: sp.Expr, nbytes: sp.Expr, peak: sp.Expr = gl.pi, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    """Williams' roofline: a kernel takes the longer of its compute and its memory time [s]."""
    return sp.Max(compute_time(flops, peak), memory_time(nbytes, bandwidth))


def ridge_point(peak: sp.Expr = gl.pi, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    """Intensity where compute time equals memory time [flop/B]."""
    return peak / bandwidth


def intensity(flops: sp.Expr, nbytes: sp.Expr) -> sp.Expr:
    """Arithmetic intensity [flop/B]."""
    return flops / nbytes


def tp_split(x: sp.Expr, degree: sp.Expr = gl.n_tp) -> sp.Expr:
    """What one of `degree` tensor-parallel GPUs holds or moves of `x` (weights, FLOPs: split evenly)."""
    return x / degree


# --- Parallelism as a layout: tensor parallel (tp), data-parallel attention (dp), expert parallel (ep) ---
#
# n = tp * dp GPUs: dp attention replicas, each split over tp GPUs and serving its own B sequences; the MoE layers
# run over all n GPUs, the routed experts split over ep of them (whole experts, E/ep a GPU) and each expert over
# n/ep. DeepSeek-V3's decode deployment is tp 1, dp = ep = 128, 128 sequences a GPU (deepseek-ai/profile-data
# README, "Decoding": EP128, TP1, 4K prompt, 128 requests per GPU); SGLang's --enable-dp-attention is the same
# shape. tp = n, dp = ep = 1 is plain tensor parallelism.

def layout_gpus(tp: sp.Expr = gl.n_tp, dp: sp.Expr = gl.n_dp) -> sp.Expr:
    """GPUs the layout uses: dp attention replicas of tp GPUs each [1]."""
    return tp * dp


def layout_weight_bytes(touched: sp.Expr, P_base: sp.Expr = gl.P_base, L_moe: sp.Expr = gl.L_moe, P_exp: sp.Expr = gl.P_exp,
                        tp: sp.Expr = gl.n_tp, dp: sp.Expr = gl.n_dp) -> sp.Expr:
    """GEMM weight bytes one GPU reads per step when each MoE layer reads `touched` experts over the whole group [B].

    The always-read weights (attention, dense MLPs, shared experts, routers, LM head; b_w bytes each) are replicated over
    the dp replicas and split over tp. The routed experts (b_e bytes each) are spread over all tp*dp GPUs (E/ep whole
    experts a GPU, each split tp*dp/ep ways), so under uniform routing a GPU reads its share, 1/(tp*dp), of the experts
    the group's tokens touch: (E/ep)(1 - (1 - k/E)^n) of its own, n the group's tokens. At dp = 1 this is the step's
    weight bytes over tp.
    """
    return mixed_weight_bytes(P_base / tp, L_moe * P_exp * touched / (tp * dp))


def alltoall_bytes(B: sp.Expr = gl.B, q: sp.Expr = gl.q, k: sp.Expr = gl.k_E, D: sp.Expr = gl.D, b_a: sp.Expr = gl.b_a,
                   tp: sp.Expr = gl.n_tp, ep: sp.Expr = gl.n_ep) -> sp.Expr:
    """Bytes one GPU sends, and receives, in one all-to-all of a MoE layer (a dispatch; the combine carries as many) [B].

    Each of the GPU's B*q/tp tokens (its share of its replica's) goes to its k routed experts, a D-wide row each,
    and (ep - 1)/ep of those experts sit on other GPUs; zero at ep = 1. InferSim's low-latency DeepEP model counts
    the same rows, tokens * k * D (alibaba/InferSim comm/comm.py, dispatch and combine); DeepEP sends the dispatch
    in FP8 and the combine in BF16, here both at the activation width b_a.
    """
    return B * q / tp * k * D * b_a * (ep - 1) / ep


def alltoall_link(tp: sp.Expr = gl.n_tp, dp: sp.Expr = gl.n_dp, domain: sp.Expr = gl.n_dom, link: sp.Expr = gl.beta_link,
                  out: sp.Expr = gl.beta_out) -> sp.Expr:
    """Seconds per byte of an all-to-all over the layout's GPUs: the scale-up link while the tp*dp GPUs fit in one
    scale-up domain, else the scale-out network [s/B].

    Written as arithmetic, not a branch: `leaves` is 0 inside one domain and 1 past it (whole GPU counts), so a
    missing scale-out figure or domain size is only needed where a term uses it, and a zero factor (no expert
    parallelism) absorbs it in the exact and the compiled evaluation alike.
    """
    leaves = sp.Min(1, sp.Max(0, layout_gpus(tp, dp) - domain))
    return 1 / link + leaves * (1 / out - 1 / link)


def alltoall_rounds(ep: sp.Expr = gl.n_ep) -> sp.Expr:
    """Latency rounds of one all-to-all: one (every GPU writes to its peers at once), zero at ep = 1 [1]."""
    return sp.Min(1, ep - 1)


# --- Mixture of experts (decode-floor, prefill-decode-crossover, moe-experts, and every step-time sheet) ---

def tokens_per_step(B: sp.Expr = gl.B, q: sp.Expr = gl.q) -> sp.Expr:
    """Tokens one step pushes through the GEMMs, as a plain count: B*q/(1 token) [1]."""
    return B * q / gl.u_token


# --- The serving step: a server at load (continuous batching with chunked prefill) ---
#
# A server at load replaces each finished request with a new one and runs the new prompts inside the same steps as
# the decodes (vLLM, SGLang and TensorRT-LLM alike, with chunked prefill): with B running sequences, each emitting
# one of its N mean output tokens per step, B/N requests finish and B/N prompts of S tokens arrive per step on
# average. N = 0 is the decode-only step of the textbook (no prompts in the step).

def request_rate_per_token(N: sp.Expr = gl.N_out) -> sp.Expr:
    """Requests that finish (and arrive) per output token of one sequence: 1/N, and 0 for the decode-only step (N = 0) [1/token].

    Written as arithmetic, not a branch: min(1, N/tok) is 0 at N = 0 and 1 for any whole N >= 1 token, and max(N, tok)
    keeps the division finite, so the same expression is the decode-only step at N = 0 and 1/N at load, in the exact and
    the compiled evaluation alike, and stays linear in B for the closed forms.
    """
    return sp.Min(1, N / gl.u_token) / sp.Max(N, gl.u_token)


def finish_chance(N: sp.Expr = gl.N_out) -> sp.Expr:
    """The chance that a running sequence finishes (and hands its place to a new request) in one step: request_rate_per_token(N)
    times one token, 1/N at load and 0 for the decode-only step (N = 0) [1]. Written min(tok, N)/max(N, tok), the same value
    in a shorter tree: it sits in every MoE step's expected experts (experts_touched_serving)."""
    return sp.Min(gl.u_token, N) / sp.Max(N, gl.u_token)


def prompt_tokens_per_step(B: sp.Expr = gl.B, S: sp.Expr = gl.S, N: sp.Expr = gl.N_out, hit: sp.Expr = gl.h_pfx) -> sp.Expr:
    """Prompt tokens a serving step computes beside its decodes: B*S*(1 - h)/N at load, the share `hit` of each prompt being
    in the prefix cache already; 0 for the decode-only step [token]."""
    return B * S * (1 - hit) * request_rate_per_token(N) * gl.u_token


def cached_prefill_attention_flops(S: sp.Expr = gl.S, hit: sp.Expr = gl.h_pfx) -> sp.Expr:
    """Sequence-mixing FLOPs of a prompt whose first hit*S tokens are in the prefix cache: its new tokens attend over the whole
    prompt, so the whole prompt's causal attention less the cached prefix's own [flop]."""
    return prefill_attention_flops(S) - prefill_attention_flops(hit * S)


def serving_prompt_attention_flops(B: sp.Expr = gl.B, S: sp.Expr = gl.S, N: sp.Expr = gl.N_out, hit: sp.Expr = gl.h_pfx) -> sp.Expr:
    """Attention FLOPs of the prompts a serving step carries: B/N whole prompts per step (B*tok/N, a count), each new token
    causal over its prompt's prefix, cached or not [flop]."""
    return B * gl.u_token * request_rate_per_token(N) * cached_prefill_attention_flops(S, hit)


def grouped_expert_rows(tokens: sp.Expr, touched: sp.Expr, k: sp.Expr = gl.k_E, tile: sp.Expr = gl.m_tile) -> sp.Expr:
    """Rows the grouped GEMMs of one MoE layer compute for `tokens` tokens (a count) over `touched` experts [token].

    Each token goes to k experts; the `touched` experts share the tokens*k rows, about tokens*k/touched each, and a
    grouped GEMM computes at least one tile of rows for every expert it runs (the rest padding). Equal to the dense
    count tokens*k*tok once every expert sees at least a tile.
    """
    return sp.Max(touched * tile, tokens * k * gl.u_token)  # touched * max(tile, rows per expert), touched > 0


def moe_permute_bytes(tokens: sp.Expr, k: sp.Expr = gl.k_E, D: sp.Expr = gl.D, b_a: sp.Expr = gl.b_a) -> sp.Expr:
    """Bytes one MoE layer moves to gather each token's rows into its experts' groups and scatter the results back:
    tokens*k rows of D activations, each read and written once per direction [B]."""
    return 4 * tokens * k * D * b_a * gl.u_token


def experts_touched(tokens: sp.Expr, E: sp.Expr = gl.E, k: sp.Expr = gl.k_E) -> sp.Expr:
    """Expected distinct routed experts one MoE layer reads for `tokens` tokens [1].

    Uniform top-k routing: an expert is missed by one token with probability
    1 - k/E, by all of them with (1 - k/E)^tokens. Exactly k at one token, E
    in the limit; a dense model (E = k = 1) always reads its one MLP.
    """
    return E * (1 - (1 - k / E) ** tokens)


def experts_touched_serving(decode_tokens: sp.Expr, sequences: sp.Expr, finish: sp.Expr, prompt_tokens: sp.Expr,
                            E: sp.Expr = gl.E, k: sp.Expr = gl.k_E) -> sp.Expr:
    """Expected distinct routed experts one MoE layer reads in a serving step of `sequences` running sequences, each
    decoding `decode_tokens` tokens a step and, with probability `finish` per step, handing its place to a new prompt of
    `prompt_tokens` tokens (all counts) [1].

    A prompt joins one step whole (chunked prefill runs it in the step it arrives), so steps differ: most carry only the
    decodes and read few experts, a step with a prompt reads nearly all. Each sequence's slot misses an expert with
    probability (1 - k/E)^decode_tokens * (1 - finish (1 - (1 - k/E)^prompt_tokens)) (its decodes miss it, and so does its
    prompt if one arrives), independently of the others: E[x^K] = (1 - finish (1 - x))^sequences for
    K ~ Binomial(sequences, finish) prompts. It equals experts_touched(sequences * decode_tokens) with no prompts (finish
    0), and is below experts_touched of the step's mean token count (the count is concave in the tokens), which would read
    as if every step carried a share of every prompt.
    """
    miss = 1 - k / E
    return E * (1 - (miss**decode_tokens * (1 - finish * (1 - miss**prompt_tokens))) ** sequences)


def tokens_per_expert(tokens: sp.Expr = gl.B * gl.q, E: sp.Expr = gl.E, k: sp.Expr = gl.k_E) -> sp.Expr:
    """Tokens one routed expert multiplies on average: each token picks k of E [token, or whatever `tokens` is in]."""
    return tokens * k / E


def params_read(touched: sp.Expr, P_base: sp.Expr = gl.P_base, L_moe: sp.Expr = gl.L_moe, P_exp: sp.Expr = gl.P_exp) -> sp.Expr:
    """GEMM weights a forward pass reads when each MoE layer reads `touched` experts (see experts_touched) [parameter]."""
    return P_base + L_moe * P_exp * touched


def params_all_experts(P_base: sp.Expr = gl.P_base, L_moe: sp.Expr = gl.L_moe, P_exp: sp.Expr = gl.P_exp,
                       E: sp.Expr = gl.E) -> sp.Expr:
    """GEMM weights with every expert read: what a prefill of any real prompt streams [parameter]."""
    return P_base + L_moe * E * P_exp


# --- The one step-time model (decode-floor and every serving or diagnosis sheet) ---

def roofline_component_time(flops: sp.Expr, nbytes: sp.Expr, eta_flops: sp.Expr = gl.eta_flops,
                            eta_bw: sp.Expr = gl.eta_bw, peak: sp.Expr = gl.pi, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    """One component of a step (the weight GEMMs, or attention) on the roofline at achieved rates [s]:
    max(bytes/(eta_bw*beta), FLOPs/(eta_flops*pi))."""
    return sp.Max(memory_time(nbytes, eta_bw * bandwidth), compute_time(flops, eta_flops * peak))


def kv_bytes_per_token_per_gpu(L: sp.Expr = gl.L_att, w_c: sp.Expr = gl.w_c, b_kv: sp.Expr = gl.b_kv,
                               streams: sp.Expr = gl.n_kv, degree: sp.Expr = gl.n_tp) -> sp.Expr:
    """KV-cache bytes one cached token occupies on the busiest GPU: its streams, replicated past the stream count [B/token]."""
    return L * w_c * b_kv * streams_per_gpu(streams, degree)


def allreduce_time(nbytes: sp.Expr, degree: sp.Expr = gl.n_tp, link: sp.Expr = gl.beta_link) -> sp.Expr:
    """Ring all-reduce of `nbytes` over `degree` GPUs: each sends and receives 2(n - 1)/n of it [s]; zero at n = 1."""
    return 2 * (degree - 1) / degree * nbytes / link


def tp_allreduce_bytes(B: sp.Expr = gl.B, q: sp.Expr = gl.q, D: sp.Expr = gl.D, b_a: sp.Expr = gl.b_a) -> sp.Expr:
    """Bytes one tensor-parallel all-reduce carries: the step's activations, B*q rows of D [B]."""
    return B * q * D * b_a


# --- Attention and the GEMMs around it (attention-intensity, decode-op-ranking, mla-absorption, flash-attention-io) ---
#
# Decode attention is written once for any architecture with the context-bound
# widths of the glossary: per head, a score reads w_k elements of each cached
# token and the value sum w_v; each of n_kv streams caches w_c elements per
# token. GQA: w_k = w_v = H, w_c = 2H, n_kv = K. Absorbed MLA: w_k = r_kv + d_R,
# w_v = r_kv, w_c = r_kv + d_R, n_kv = 1.

def gemm_bytes(d_in: sp.Expr, d_out: sp.Expr, tokens: sp.Expr = gl.B * gl.q, P: sp.Expr | None = None,
               b_w: sp.Expr = gl.b_w, b_a: sp.Expr = gl.b_a) -> sp.Expr:
    """HBM bytes of one d_in x d_out weight GEMM over `tokens` tokens: the weights once, activations in and out [B]."""
    weights = d_in * d_out * gl.u_param if P is None else P
    return weight_bytes(weights, b_w) + tokens * (d_in + d_out) * b_a


def gemm_intensity_limit(tokens: sp.Expr = gl.B * gl.q, b_w: sp.Expr = gl.b_w) -> sp.Expr:
    """Large-matrix limit of a weight GEMM's intensity, activation traffic negligible: kappa * tokens / b_w [flop/B]."""
    return gl.kappa * tokens / b_w


def streams_per_gpu(streams: sp.Expr = gl.n_kv, degree: sp.Expr = gl.n_tp) -> sp.Expr:
    """Cached streams the busiest tensor-parallel GPU holds: ceil(streams/degree) [1].

    Streams split while there are more of them than GPUs; beyond that each GPU
    holds one replicated copy (always, for MLA's single latent). A degree that
    does not divide the streams leaves some GPUs one stream more.
    """
    return sp.ceiling(streams / degree)


def decode_attention_flops(T: sp.Expr | None = None, q: sp.Expr = gl.q, heads: sp.Expr = gl.N,
                           w_k: sp.Expr = gl.w_k, w_v: sp.Expr = gl.w_v) -> sp.Expr:
    """QK^T and PV FLOPs of q query tokens of one sequence against T cached tokens, one layer [flop].

    kappa_attn/2 per channel per matmul; with w_k = w_v = H this is the convention 4*N*H*T per query token.
    T defaults to the tokens a layer reads (read_context: windows and top-k applied).
    """
    return gl.kappa_attn / 2 * heads * q * (read_context() if T is None else T) * (w_k + w_v)


def decode_attention_cache_bytes(T: sp.Expr | None = None, streams: sp.Expr = gl.n_kv, w_c: sp.Expr = gl.w_c,
                                 b_kv: sp.Expr = gl.b_kv) -> sp.Expr:
    """KV-cache bytes one sequence's attention reads in one layer: every kept token of every stream once [B].

    T defaults to the tokens a layer reads (read_context: windows and top-k applied)."""
    return streams * w_c * (read_context() if T is None else T) * b_kv


def decode_attention_io_bytes(q: sp.Expr = gl.q, heads: sp.Expr = gl.N, w_k: sp.Expr = gl.w_k,
                              w_v: sp.Expr = gl.w_v, b_a: sp.Expr = gl.b_a) -> sp.Expr:
    """Bytes of the query read and the output written by one sequence's attention in one layer [B]."""
    return q * heads * (w_k + w_v) * b_a


def decode_attention_intensity(group: sp.Expr, q: sp.Expr = gl.q, w_k: sp.Expr = gl.w_k, w_v: sp.Expr = gl.w_v,
                               w_c: sp.Expr = gl.w_c, b_kv: sp.Expr = gl.b_kv) -> sp.Expr:
    """Long-context decode attention intensity: `group` query heads share each stream's bytes [flop/B].

    Batch and context cancel: each sequence reads its own cache. GQA: kappa_attn*G*q/(2*b_kv).
    """
    return gl.kappa_attn / 2 * group * q * (w_k + w_v) / (w_c * b_kv)


def mla_latent_width(r_kv: sp.Expr = gl.r_kv, d_R: sp.Expr = gl.d_R) -> sp.Expr:
    """Elements MLA caches per token per layer: the latent plus the shared RoPE key."""
    return r_kv + d_R


def mla_absorbed_flops_per_cached_token(q: sp.Expr = gl.q, N: sp.Expr = gl.N, r_kv: sp.Expr = gl.r_kv,
                                        d_R: sp.Expr = gl.d_R) -> sp.Expr:
    """Absorbed MLA, per cached token per layer: scores over r_kv + d_R, values summed in the r_kv latent [flop/token]."""
    return gl.kappa_attn / 2 * N * q * (mla_latent_width(r_kv, d_R) + r_kv)


def mla_materialised_flops_per_cached_token(q: sp.Expr = gl.q, N: sp.Expr = gl.N, d_nope: sp.Expr = gl.d_nope,
                                            d_R: sp.Expr = gl.d_R, d_v: sp.Expr = gl.d_v) -> sp.Expr:
    """Ordinary attention over per-head K (d_nope + d_R) and V (d_v), per cached token per layer [flop/token]."""
    return gl.kappa_attn / 2 * N * q * (d_nope + d_R + d_v)


def mla_up_projection_params(N: sp.Expr = gl.N, r_kv: sp.Expr = gl.r_kv, d_nope: sp.Expr = gl.d_nope,
                             d_v: sp.Expr = gl.d_v) -> sp.Expr:
    """W_UK and W_UV of one layer: r_kv x N*(d_nope + d_v) weights [parameter]."""
    return r_kv * N * (d_nope + d_v) * gl.u_param


def mla_decompress_flops_per_cached_token(N: sp.Expr = gl.N, r_kv: sp.Expr = gl.r_kv, d_nope: sp.Expr = gl.d_nope,
                                          d_v: sp.Expr = gl.d_v) -> sp.Expr:
    """Up-projecting one cached latent to every head's K_nope and V, one layer [flop/token]."""
    return matmul_flops_per_token(mla_up_projection_params(N, r_kv, d_nope, d_v))


def mla_latent_bytes_per_cached_token(r_kv: sp.Expr = gl.r_kv, d_R: sp.Expr = gl.d_R, b_kv: sp.Expr = gl.b_kv) -> sp.Expr:
    """Bytes of one cached token's latent and RoPE key, one layer: read once for all heads [B/token]."""
    return mla_latent_width(r_kv, d_R) * b_kv


def mla_materialised_bytes_per_cached_token(N: sp.Expr = gl.N, d_nope: sp.Expr = gl.d_nope, d_R: sp.Expr = gl.d_R,
                                            d_v: sp.Expr = gl.d_v, b_kv: sp.Expr = gl.b_kv) -> sp.Expr:
    """Bytes of one cached token's per-head K and V, one layer, if they were stored (MHA-style) [B/token]."""
    return N * (d_nope + d_R + d_v) * b_kv


def attention_io_naive(n: sp.Expr, d: sp.Expr = gl.H, b: sp.Expr = gl.b_a * gl.u_token) -> sp.Expr:
    """HBM bytes of unfused attention, one head, n tokens: Q, K, V read and O written (4nd);
    S written and read back for the softmax, P written and read for PV (4n^2) [B]."""
    return (4 * n * d + 4 * n**2) * b


def attention_io_textbook(n: sp.Expr, block: sp.Expr, d: sp.Expr = gl.H, b: sp.Expr = gl.b_a * gl.u_token) -> sp.Expr:
    """FlashAttention's textbook HBM count, one head: Q read and O written once, K and V re-read for each of n/block query blocks [B]."""
    return (2 * n * d + 2 * n * d * n / block) * b


def attention_io_resident(n: sp.Expr, d: sp.Expr = gl.H, b: sp.Expr = gl.b_a * gl.u_token) -> sp.Expr:
    """FlashAttention's HBM bytes, one head, when K and V stay in L2 while the query blocks sweep them: each read once [B]."""
    return 4 * n * d * b


def flash_block_columns(M: sp.Expr, d: sp.Expr = gl.H, b: sp.Expr = gl.b_a * gl.u_token) -> sp.Expr:
    """FlashAttention-1 (Dao et al. 2022, Algorithm 1) block columns before rounding up: M/(4d) elements of SRAM [1]."""
    return M / (4 * d * b)


def flash_block_rows(M: sp.Expr, d: sp.Expr = gl.H, b: sp.Expr = gl.b_a * gl.u_token) -> sp.Expr:
    """FlashAttention-1 query block: B_r = min(ceil(M/(4d)), d) [1]."""
    return sp.Min(sp.ceiling(flash_block_columns(M, d, b)), d)


__all__ += [
    "allreduce_time",
    "attention_io_naive",
    "attention_io_resident",
    "attention_io_textbook",
    "decode_attention_cache_bytes",
    "decode_attention_flops",
    "decode_attention_intensity",
    "decode_attention_io_bytes",
    "experts_touched",
    "experts_touched_serving",
    "finish_chance",
    "flash_block_columns",
    "flash_block_rows",
    "gemm_bytes",
    "gemm_intensity_limit",
    "kv_bytes_per_token_per_gpu",
    "mla_absorbed_flops_per_cached_token",
    "mla_decompress_flops_per_cached_token",
    "mla_latent_bytes_per_cached_token",
    "mla_latent_width",
    "mla_materialised_bytes_per_cached_token",
    "mla_materialised_flops_per_cached_token",
    "mla_up_projection_params",
    "params_all_experts",
    "params_read",
    "roofline_component_time",
    "streams_per_gpu",
    "tokens_per_expert",
    "tokens_per_step",
    "tp_allreduce_bytes",
]


# --- FlashAttention's working set in the last-level cache (flash-attention-io) ---

def attention_kv_bytes_per_head(n: sp.Expr, d: sp.Expr = gl.H, b: sp.Expr = gl.b_a * gl.u_token) -> sp.Expr:
    """K and V of one head over n tokens: 2nd elements, what its query blocks sweep [B]."""
    return 2 * n * d * b


def attention_heads_in_flight(n: sp.Expr, block: sp.Expr, blocks_at_once: sp.Expr = gl.n_blk, heads: sp.Expr = gl.N) -> sp.Expr:
    """Heads whose K and V the resident query blocks read at once [1].

    One block per SM, the blocks of a head scheduled together: n_blk blocks
    cover ceil(n_blk / ceil(n/block)) heads, a head partly in flight counted
    whole (its block needs all of K and V); never more than the `heads` there are.
    """
    return sp.Min(heads, sp.ceiling(blocks_at_once / sp.ceiling(n / block)))


__all__ += ["attention_heads_in_flight", "attention_kv_bytes_per_head"]


# --- Spread of the experts a step reads (moe-experts) ---

def experts_touched_variance(tokens: sp.Expr, E: sp.Expr = gl.E, k: sp.Expr = gl.k_E) -> sp.Expr:
    """Variance of the distinct routed experts one MoE layer reads for `tokens` tokens, uniform top-k routing [1].

    The count is a sum of E indicators "expert i is read". One expert is missed
    by all tokens with p0 = (1 - k/E)^n; two given experts both are with
    p00 = ((E - k)(E - k - 1)/(E(E - 1)))^n, a token picking k distinct experts.
    Var = E p0 + E(E - 1) p00 - E^2 p0^2. Misses are negatively correlated
    (p00 <= p0^2), so Var <= E p0 (1 - p0): see experts_touched_variance_bound.
    Needs E >= 2 (a dense model's one MLP has no spread to speak of). Held at 0 or above: at one token the count is
    exactly k and the three terms cancel, which floating point leaves a rounding error below 0.
    """
    p0 = (1 - k / E) ** tokens
    p00 = ((E - k) * (E - k - 1) / (E * (E - 1))) ** tokens
    return sp.Max(0, E * p0 + E * (E - 1) * p00 - E**2 * p0**2)


def experts_touched_variance_bound(tokens: sp.Expr, E: sp.Expr = gl.E, k: sp.Expr = gl.k_E) -> sp.Expr:
    """The binomial bound on experts_touched_variance: E p0 (1 - p0), as if experts were missed independently [1]."""
    p0 = (1 - k / E) ** tokens
    return E * p0 * (1 - p0)


__all__ += ["experts_touched_variance", "experts_touched_variance_bound"]


# --- Picking the best of a few candidates (speculative-decoding's draft length) ---

class ArgMax(sp.Function):
    """argmax(x_0, ..., x_n): the index (from 0) of the largest argument, the first one on a tie.

    It evaluates only when every argument is a number, so a derivation keeps it
    symbolic and a context picks; its arguments share one unit and the index is
    a plain number (`unit_rule`, read by the unit checker).
    """

    unit_rule = "index"

    @classmethod
    def eval(cls, *args: sp.Expr) -> sp.Integer | None:
        if args and all(a.is_extended_real and a.is_number and (a.is_Rational or a.is_Float) for a in args):
            best = max(range(len(args)), key=lambda i: (args[i], -i))
            return sp.Integer(best)
        return None

    def _eval_evalf(self, prec: int) -> sp.Integer | None:
        values = [a.evalf(prec) for a in self.args]
        return ArgMax.eval(*values)

    def _latex(self, printer: object) -> str:
        return r"\operatorname{arg\,max}\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"

    @staticmethod
    def numpy(*args: object) -> object:
        """The same over numpy arrays, element by element (sweeps compile it with `sympy.lambdify`)."""
        import numpy as np

        return np.argmax(np.stack(np.broadcast_arrays(*args)), axis=0)


def best_of(values: sp.Expr | list[sp.Expr], labels: list[int] | tuple[int, ...]) -> sp.Expr:
    """The label of the largest of `values` (labels evenly spaced: first + step * argmax) [1]."""
    step = labels[1] - labels[0] if len(labels) > 1 else 1
    if any(labels[i + 1] - labels[i] != step for i in range(len(labels) - 1)):
        raise ValueError("best_of needs evenly spaced labels")
    return labels[0] + step * ArgMax(*values)


class Pick(sp.Function):
    """pick(i, x_0, ..., x_n): x_i, the value at position i (from 0).

    The engine writes a step that reads a chosen label (`best_of`'s first + stride * argmax)
    as a Pick over that argmax, one value per label (`expansion.expand_by_cases`): the same
    value, with the argmax written once instead of wherever the label appears. It evaluates
    when the position is a whole number; the position is a plain number and the values share
    one unit, the unit of the result (`unit_rule`, read by the unit checker).
    """

    unit_rule = "pick"

    @classmethod
    def eval(cls, index: sp.Expr, *values: sp.Expr) -> sp.Expr | None:
        if index.is_Integer and 0 <= int(index) < len(values):
            return values[int(index)]
        return None

    def _eval_evalf(self, prec: int) -> sp.Expr | None:
        index = self.args[0].evalf(prec)
        if not (index.is_number and index.is_real):
            return None
        k = int(index)
        if not (index - k).is_zero or not 0 <= k < len(self.args) - 1:  # sympy's Float(5) == 5 is False
            return None
        return self.args[1 + k].evalf(prec)

    def _latex(self, printer: object) -> str:
        values = ", ".join(printer._print(a) for a in self.args[1:])
        return r"\left(" + values + r"\right)_{\left[" + printer._print(self.args[0]) + r"\right]}"

    @staticmethod
    def numpy(index: object, *values: object) -> object:
        """The same over numpy arrays, element by element."""
        import numpy as np

        arrays = np.stack(np.broadcast_arrays(index, *values))
        return np.take_along_axis(arrays[1:], np.asarray(arrays[0], dtype=int)[None, ...], axis=0)[0]


__all__ += ["ArgMax", "Pick", "best_of"]


# Diagnosis (gap, limits): what a profiler trace of one decode step shows, and where the step model breaks

def kernels_per_step(L: sp.Expr = gl.L, per_layer: sp.Expr = gl.n_kl, other: sp.Expr = gl.n_k0) -> sp.Expr:
    """Kernels one decode step launches: `per_layer` in each of L layers plus `other` outside them [1]."""
    return L * per_layer + other


def launch_gap_time(kernels: sp.Expr, gap: sp.Expr = gl.t_launch) -> sp.Expr:
    """GPU idle time between `kernels` kernels run back to back, `gap` at each boundary [s]."""
    return kernels * gap


def bandwidth_shortfall(nbytes: sp.Expr, eta: sp.Expr = gl.eta_bw, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    """Time a streaming kernel loses against the datasheet by reaching only `eta` of it: bytes/(eta*beta) - bytes/beta [s]; zero at eta = 1."""
    return memory_time(nbytes, bandwidth) * (1 / eta - 1)


def wide_read_time(nbytes: sp.Expr, share: sp.Expr, width_ratio: sp.Expr, bandwidth: sp.Expr) -> sp.Expr:
    """Extra time when a `share` of `nbytes` is read `width_ratio` times wider than intended (FP32 for BF16, BF16 for FP8) [s]."""
    return share * (width_ratio - 1) * memory_time(nbytes, bandwidth)


def allreduce_rounds(degree: sp.Expr = gl.n_tp, oneshot: sp.Expr = gl.d_1shot, ring: sp.Expr = gl.d_ring,
                     torus: sp.Expr = gl.d_torus) -> sp.Expr:
    """Latency rounds of one small all-reduce over `degree` GPUs, by how the scale-up domain connects them [1]; 0 on one GPU.

    Decode's all-reduces carry a few kB, so their time is rounds of latency, not bytes. Exactly one of the
    topology flags (bound from the chip's `scaleup_topology`) is 1:

    - switch or full mesh (`oneshot`): one-shot, every GPU reads its peers' buffers at once, one round whatever
      the GPU count: min(1, n - 1). SGLang PR #2904 measures vLLM's custom all-reduce at 9.5/9.1/10.1 us and a
      one-shot kernel at 3.7/4.8/5.9 us for 512 B on 2/4/8 H100s (flat in n); vLLM PR #2192 and
      TensorRT-LLM's ONESHOT strategy do the same.
    - PCIe, no scale-up switch (`ring`): NCCL's ring, 2(n - 1) steps each paying the per-step latency
      (NCCL src/graph/tuning.cc: nsteps = 2*(nRanks-1) for AllReduce).
    - torus (`torus`, TPU ICI): a reduce-scatter then an all-gather, each a bidirectional ring along one axis
      whose farthest peer is floor(n/2) hops away, about 1 us a hop (the JAX scaling book, sharding.md,
      "How is an AllGather actually performed?" and "A note on ICI latency"): 2 floor(n/2).
    """
    return oneshot * sp.Min(1, degree - 1) + ring * 2 * (degree - 1) + torus * 2 * sp.floor(degree / 2)


def tiled_tokens(tokens: sp.Expr, tile: sp.Expr) -> sp.Expr:
    """Rows a GEMM computes when its `tokens` rows are padded up to whole tiles of `tile` rows [token, or the unit of both]."""
    return sp.ceiling(tokens / tile) * tile


__all__ += ["cached_prefill_attention_flops", "grouped_expert_rows", "moe_permute_bytes", "prompt_tokens_per_step", "request_rate_per_token", "serving_prompt_attention_flops"]
__all__ += ["alltoall_bytes", "alltoall_link", "alltoall_rounds", "layout_gpus", "layout_weight_bytes"]
__all__ += ["allreduce_rounds", "bandwidth_shortfall", "kernels_per_step", "launch_gap_time",
            "tiled_tokens", "wide_read_time"]


# Diagnosis (MBU): memory-bandwidth utilisation and the step time it implies (mbu-diagnosis, mbu-definition)

def memory_bandwidth_utilization(nbytes: sp.Expr, t_step: sp.Expr, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    """MBU: the bytes a step must move over what the datasheet bandwidth could move in the step time [1]."""
    return nbytes / (t_step * bandwidth)


def step_time_at_mbu(nbytes: sp.Expr, mbu: sp.Expr, bandwidth: sp.Expr = gl.beta) -> sp.Expr:
    """The step time at which `nbytes` per step is `mbu` of the datasheet bandwidth: the floor over the MBU [s]."""
    return memory_time(nbytes, mbu * bandwidth)


def expected_tokens_per_cycle(alpha: sp.Expr = gl.alpha, gamma: sp.Expr = gl.gamma) -> sp.Expr:
    """Tokens a sequence gains per speculative cycle on average: 1 + alpha + ... + alpha^gamma (Leviathan et al. 2023,
    arXiv:2211.17192, eq. 1), gamma + 1 when every draft is accepted [1]."""
    return sp.Piecewise((gamma + 1, sp.Eq(alpha, 1)), ((1 - alpha ** (gamma + 1)) / (1 - alpha), True))


def expected_tokens_at(rates: Sequence[sp.Expr], gamma: int) -> sp.Expr:
    """Tokens a sequence gains per cycle of `gamma` drafted tokens when the target accepts the token at position i with chance
    rates[i - 1] once the ones before it were accepted (every position past the list at the last rate): the target keeps
    drafted tokens up to the first it rejects and adds one of its own, 1 + a_1 + a_1 a_2 + ... + a_1 ... a_gamma, written
    1 + a_1 (1 + a_2 (1 + ...)). With every rate alpha it is `expected_tokens_per_cycle` (Leviathan et al. 2023, eq. 1) [1]."""
    if gamma < 0 or not rates:
        raise ValueError("expected_tokens_at needs a draft length >= 0 and one rate at least")
    out: sp.Expr = sp.Integer(1)
    for i in range(gamma, 0, -1):
        out = 1 + rates[min(i, len(rates)) - 1] * out
    return out


__all__ += ["expected_tokens_at", "expected_tokens_per_cycle"]


def measurement_given(measured: sp.Expr, scale: sp.Expr) -> sp.Expr:
    """1 where a measurement is given, 0 where none is [1].

    A measurement input is 0 where none is given (a measured step: `measured.MEASURED_STEP`); `scale`, a positive quantity in its
    unit (the step's floor), makes the test a plain number: ceiling(min(1, measured/scale)) is 1 for any measurement, 0 for none.
    (Written with Min: sympy's symbols are positive, so a plain ceiling of measured/(measured + scale) would simplify to 1.)
    """
    return sp.ceiling(sp.Min(1, measured / scale))


def measured_or(measured: sp.Expr, otherwise: sp.Expr, given: sp.Expr) -> sp.Expr:
    """The measurement where one is given (`given`, from `measurement_given`, is 1), else `otherwise` [the unit of both]."""
    return given * measured + (1 - given) * otherwise


__all__ += ["measured_or", "measurement_given", "memory_bandwidth_utilization", "step_time_at_mbu"]


def md1_mean_wait(rate: sp.Expr, service: sp.Expr) -> sp.Expr:
    """Mean wait in an M/D/1 queue (Poisson arrivals at `rate`, each served in a fixed `service` time): the
    Pollaczek-Khinchine mean, rate*service**2 / (2 (1 - rate*service)); no value at or above a utilisation of 1 [s]."""
    rho = rate * service
    return sp.Piecewise((rate * service**2 / (2 * (1 - rho)), rho < 1))


__all__ += ["md1_mean_wait"]

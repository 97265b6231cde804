"""Primitives every question builds on: one definition each, as sympy expressions.

Each returns a plain expression over glossary symbols (or whatever symbols
are passed in). Questions combine these; none re-derives one.
"""

from __future__ import annotations

import sympy as sp

from derivations import glossary as gl
from specs.counts import gqa_attention_params, gqa_kv_elements_per_token, mla_kv_elements_per_token, swiglu_mlp_params

__all__ = [
    "attention_flops_per_token",
    "compute_time",
    "gemm_flops",
    "gqa_attention_params",
    "gqa_kv_elements_per_token",
    "intensity",
    "kv_bytes_per_token",
    "matmul_flops_per_token",
    "memory_time",
    "mla_kv_elements_per_token",
    "prefill_attention_flops",
    "ridge_point",
    "roofline_time",
    "swiglu_mlp_params",
    "tp_split",
    "weight_bytes",
]


def weight_bytes(P: sp.Expr = gl.P_active, b_w: sp.Expr = gl.b_w) -> sp.Expr:
    """Bytes of weights streamed from HBM when every weight is read once [B]."""
    return P * b_w


def matmul_flops_per_token(P: sp.Expr = gl.P_active) -> sp.Expr:
    """GEMM FLOPs per token: one multiply-add per weight [flop/token]."""
    return gl.kappa * P


def gemm_flops(P: sp.Expr = gl.P_active, tokens: sp.Expr = gl.B * gl.q) -> sp.Expr:
    """FLOPs of the weight GEMMs for `tokens` tokens in one step [flop]."""
    return matmul_flops_per_token(P) * tokens


def attention_flops_per_token(T: sp.Expr = gl.T, L: sp.Expr = gl.L, N: sp.Expr = gl.N, H: sp.Expr = gl.H) -> sp.Expr:
    """QK^T and PV FLOPs of one query token against T cached tokens, all layers [flop/token]."""
    return gl.kappa_attn * L * N * H * T


def prefill_attention_flops(S: sp.Expr = gl.S, L: sp.Expr = gl.L, N: sp.Expr = gl.N, H: sp.Expr = gl.H) -> sp.Expr:
    """Causal attention FLOPs of a whole S-token prefill: query i sees i tokens, S**2/2 pairs [flop]."""
    return attention_flops_per_token(S, L, N, H) * S / 2


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
    """What one of `degree` tensor-parallel GPUs holds or moves of `x`."""
    return x / degree


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
    """Cached streams one tensor-parallel GPU holds: max(streams/degree, 1) [1].

    A stream is replicated once the degree exceeds the stream count (always, for MLA's one latent).
    """
    return sp.Max(streams, degree) / degree


def query_heads_per_stream(N: sp.Expr = gl.N, streams: sp.Expr = gl.n_kv, degree: sp.Expr = gl.n_tp) -> sp.Expr:
    """Query heads that read one cached stream on one GPU: N/degree heads over its streams [1]."""
    return tp_split(N, degree) / streams_per_gpu(streams, degree)


def decode_attention_flops(T: sp.Expr = gl.T, q: sp.Expr = gl.q, heads: sp.Expr = gl.N,
                           w_k: sp.Expr = gl.w_k, w_v: sp.Expr = gl.w_v) -> sp.Expr:
    """QK^T and PV FLOPs of q query tokens of one sequence against T cached tokens, one layer [flop].

    kappa_attn/2 per channel per matmul; with w_k = w_v = H this is the convention 4*N*H*T per query token.
    """
    return gl.kappa_attn / 2 * heads * q * T * (w_k + w_v)


def decode_attention_cache_bytes(T: sp.Expr = gl.T, streams: sp.Expr = gl.n_kv, w_c: sp.Expr = gl.w_c,
                                 b_kv: sp.Expr = gl.b_kv) -> sp.Expr:
    """KV-cache bytes one sequence's attention reads in one layer: every cached token of every stream once [B]."""
    return streams * w_c * T * b_kv


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
    "attention_io_naive",
    "attention_io_resident",
    "attention_io_textbook",
    "decode_attention_cache_bytes",
    "decode_attention_flops",
    "decode_attention_intensity",
    "decode_attention_io_bytes",
    "flash_block_columns",
    "flash_block_rows",
    "gemm_bytes",
    "gemm_intensity_limit",
    "mla_absorbed_flops_per_cached_token",
    "mla_decompress_flops_per_cached_token",
    "mla_latent_bytes_per_cached_token",
    "mla_latent_width",
    "mla_materialised_bytes_per_cached_token",
    "mla_materialised_flops_per_cached_token",
    "mla_up_projection_params",
    "query_heads_per_stream",
    "streams_per_gpu",
]

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
    "prefill_attention_flops",
    "compute_time",
    "gemm_flops",
    "gqa_attention_params",
    "gqa_kv_elements_per_token",
    "intensity",
    "kv_bytes_per_token",
    "matmul_flops_per_token",
    "memory_time",
    "mla_kv_elements_per_token",
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

"""Parameter-count formulas, written once for plain ints and sympy symbols alike.

The spec layer calls them with a config's integers to get exact counts; the
derivations call the same functions with sympy symbols to show the formula,
so the formula on an answer sheet is the one that produced the number.
"""

from __future__ import annotations

from typing import TypeVar

N_ = TypeVar("N_")


def gqa_attention_params(D: N_, N: N_, K: N_, H: N_) -> N_:
    """Q (D x N*H), K and V (D x K*H each), O (N*H x D) projections of one layer."""
    return D * N * H + 2 * D * K * H + N * H * D


def swiglu_mlp_params(D: N_, F: N_) -> N_:
    """Gate, up (D x F each) and down (F x D) of one gated MLP."""
    return 3 * D * F


def mlp_params(D: N_, F: N_, matrices: N_) -> N_:
    """One MLP of width F: `matrices` D x F matrices (3 gated: gate, up, down; 2 plain: up, down)."""
    return matrices * D * F


def mla_attention_params(D: N_, N: N_, q_rank: N_ | None, kv_rank: N_, rope: N_, nope: N_, v: N_) -> N_:
    """Multi-head latent attention (DeepSeek-V2/V3) matrices of one layer.

    Q: D x q_rank then q_rank x N*(nope+rope) (or D x N*(nope+rope) without a
    Q latent); KV: D x (kv_rank + rope) down-projection, kv_rank x N*(nope + v)
    up-projection; O: N*v x D.
    """
    q_head = nope + rope
    q = D * N * q_head if q_rank is None else D * q_rank + q_rank * N * q_head
    return q + D * (kv_rank + rope) + kv_rank * N * (nope + v) + N * v * D


def gqa_kv_elements_per_token(L: N_, K: N_, H: N_) -> N_:
    """Cached elements per token: K and V of every KV head of every layer."""
    return 2 * L * K * H


def mla_kv_elements_per_token(L: N_, kv_rank: N_, rope: N_) -> N_:
    """Cached elements per token: the shared latent plus the decoupled RoPE key, per layer."""
    return L * (kv_rank + rope)

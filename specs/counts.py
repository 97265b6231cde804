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


def gated_deltanet_params(D: N_, k_heads: N_, v_heads: N_, k_dim: N_, v_dim: N_) -> N_:
    """Gated DeltaNet (Qwen3-Next's linear attention) matrices of one layer: in_proj_qkvz (D x (2 k_heads k_dim + 2 v_heads v_dim):
    queries, keys, values and the output gate), in_proj_ba (D x 2 v_heads: the write strength and the decay) and out_proj
    (v_heads v_dim x D)."""
    return D * (2 * k_heads * k_dim + 2 * v_heads * v_dim) + D * 2 * v_heads + v_heads * v_dim * D


def kda_params(D: N_, heads: N_, head_dim: N_) -> N_:
    """Kimi Delta Attention matrices of one layer (vLLM kda.py), P = heads head_dim: q_proj, k_proj, v_proj and o_proj (4 D P),
    the low-rank decay gate f_a_proj (D x head_dim) and f_b_proj (head_dim x P), the low-rank output gate g_a_proj and
    g_b_proj (the same shapes), and b_proj (D x heads: the write strength)."""
    P = heads * head_dim
    return 4 * D * P + 2 * (D * head_dim + head_dim * P) + D * heads


def dsa_indexer_params(D: N_, q_rank: N_, heads: N_, dim: N_) -> N_:
    """DeepSeek Sparse Attention's lightning indexer, one layer: wq_b (q_rank x heads*dim, from the query latent), wk (D x dim,
    one key shared by its heads) and weights_proj (D x heads, each head's weight per query)."""
    return q_rank * heads * dim + D * dim + D * heads


def mamba2_params(D: N_, inner: N_, groups: N_, state: N_, heads: N_) -> N_:
    """Mamba-2 mixer matrices of one block: in_proj (D x (2 inner + 2 groups state + heads): the gate z, the input x, B, C and
    the step dt) and out_proj (inner x D)."""
    return D * (2 * inner + 2 * groups * state + heads) + inner * D

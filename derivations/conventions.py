"""Conventions: each a named constant, defined once, printed on every sheet, tested.

Values are strings with units so they go through the same parser as any input.
"""

from __future__ import annotations

#: One multiply-add is two FLOPs; a weight does one multiply-add per token.
FLOPS_PER_WEIGHT_PER_TOKEN = "2 flop/(parameter*token)"
#: Attention per query token and per cached token, per head channel: QK^T (2) + PV (2).
ATTENTION_FLOPS_PER_CHANNEL = "4 flop/token**2"
#: Default number formats when a context does not say.
DEFAULT_WEIGHTS = "bf16"
DEFAULT_KV = "bf16"
DEFAULT_MATH = "bf16"

CONVENTIONS: tuple[str, ...] = (
    r"2 FLOPs per multiply-add; a weight does one multiply-add per token ($\kappa = 2\,\mathrm{flop/(parameter \cdot token)}$).",
    "Peaks are dense tensor-core peaks (never the 2:4-sparsity headline).",
    r"Bandwidth and weight bytes are decimal ($1\,\mathrm{TB/s} = 10^{12}\,\mathrm{B/s}$, $1\,\mathrm{GB} = 10^{9}\,\mathrm{B}$); capacity is the datasheet figure as printed.",
    "The input embedding is a gather: no FLOPs, one row read per token. The LM head is a GEMM read every decode step (tied embeddings: the same matrix, read once).",
    r"Attention FLOPs per query token at context $T$: $4 L N H T$ for GQA ($QK^{\top}$ and $PV$), counted with query heads $N$, not KV heads.",
    r"Roofline time of a kernel $= \max(\mathrm{FLOPs}/\pi,\ \mathrm{bytes}/\beta)$, at achieved fractions $\eta_{\mathrm{flop}}$ and $\eta_{\mathrm{bw}}$ where a sheet says so.",
    r"Batch $B$ counts sequences; each adds $q$ tokens per step ($q = 1$ token for plain decode).",
    r"A mixture-of-experts step reads the expected number of distinct experts its tokens touch under uniform top-$k$ routing, $E (1 - (1 - k_{E}/E)^{B q})$ per MoE layer.",
    r"Tensor parallelism splits weights and FLOPs $n_{\mathrm{TP}}$ ways and cached streams only while there are more streams than GPUs (an MLA latent is on every GPU).",
)

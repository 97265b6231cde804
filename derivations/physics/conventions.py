"""Conventions: each a named constant, defined once, printed on every sheet, tested.

Values are strings with units so they go through the same parser as any input.
"""

from __future__ import annotations

from fractions import Fraction

#: One multiply-add is two FLOPs; a weight does one multiply-add per token.
FLOPS_PER_WEIGHT_PER_TOKEN = "2 flop/(parameter*token)"
#: Attention per query token and per cached token, per head channel: QK^T (2) + PV (2).
ATTENTION_FLOPS_PER_CHANNEL = "4 flop/token**2"
#: A recurrent layer per token and per state element: a multiply-add to update it (decay and write) and one to read it out.
#: The leading term of Gated DeltaNet's delta rule and of Mamba-2's SSM step; gates, norms and the short convolution are left out.
RECURRENT_FLOPS_PER_STATE_ELEMENT = "4 flop/token"
#: Rows of one grouped-GEMM tile of the routed experts: vLLM's fused MoE kernel computes BLOCK_SIZE_M = 64 rows per tile
#: once a step has more tokens than experts (vllm-project/vllm, vllm/model_executor/layers/fused_moe/fused_moe.py,
#: get_default_config, commit 000d1458098ebf47491dad470d164d443ab18a9c; 16 below that, where the expert GEMMs are memory-bound
#: anyway); an expert read pays at least one tile of rows.
GROUPED_GEMM_TILE = "64 token"
#: The serving step's rule for the cached context: with output_len set (N > 0) and context not set, each running sequence
#: holds on average its prompt and half its output (S + N/2). The sympy context and the plain-data setup both apply it.
SERVING_CONTEXT_INPUTS = ("prompt_len", "output_len")


def serving_context(prompt: Fraction, output: Fraction) -> Fraction | None:
    """The context [token] a server at load holds per sequence on average, S + N/2; None for the decode-only step (N = 0)."""
    return prompt + output / 2 if output > 0 else None


#: The input whose value names the step a step-model sheet is worked on: 0 (its default) the decode-only step, no prompt
#: entering the batch while it decodes; above 0 the serving step, a prompt of prompt_len tokens per output_len tokens.
STEP_INPUT = "output_len"
#: The output length a decode-only sheet's claims are re-read at to say whether they hold on the serving step too: the mean
#: output of the LM Arena chats vLLM served in ML.ENERGY's v3 H100 runs (706 to 725 tokens for Llama 3.1 8B and 70B,
#: specs/measurements/ml-energy-v3-h100.toml, mean_output_tokens; ml-energy/leaderboard at commit 0cd52dab), rounded to 700.
SERVING_OUTPUT_LEN = Fraction(700)


def other_step(output: Fraction) -> Fraction:
    """output_len of the other step: the serving step's SERVING_OUTPUT_LEN from the decode-only step, 0 from the serving step."""
    return SERVING_OUTPUT_LEN if output == 0 else Fraction(0)


#: Default number formats when a context does not say.
DEFAULT_WEIGHTS = "bf16"
DEFAULT_KV = "bf16"

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

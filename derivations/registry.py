"""The explicit list of answer sheets, in the order of QUESTIONS.md.

A sheet is built (solved, verified, checked) only when it is asked for:
`get(slug)` imports its module; `QUESTIONS` lists slugs and titles without
importing sympy, so `roofline list questions` and `--help` stay fast.
`DERIVATIONS` and `BY_SLUG` build every sheet on first use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from derivations.engine import Derivation


@dataclass(frozen=True)
class Question:
    slug: str
    title: str
    module: str  # under derivations.questions


QUESTIONS: tuple[Question, ...] = (
    Question("decode-floor", "The decode floor and what sits above it", "decode_floor"),
    Question("flops-per-token", "FLOPs per token: where the 2 FLOPs per parameter rule comes from and where it breaks", "flops_per_token"),
    Question("prefill-decode-crossover", "Prefill vs decode: the prompt length where they trade places", "prefill_decode_crossover"),
    Question("attention-intensity", "Attention intensity at decode: one head-count ratio", "attention_intensity"),
    Question("mbu-diagnosis", "Diagnosing an MBU: from one number to buckets a team can own", "mbu_diagnosis"),
    Question("ridge-coincidence", "The ridge-point coincidence", "ridge_coincidence"),
    Question("batch1-gap", "The batch-1 gap: suspects sorted by what one trace shows", "batch1_gap"),
    Question("decode-op-ranking", "Ranking the kernels of one decode step", "decode_op_ranking"),
    Question("model-limits", "The twenty-line step model and where it breaks", "model_limits"),
    Question("headline-check", "Checking a tokens-per-second headline", "headline_check"),
    Question("hardware-upgrade", "Upgrading the accelerator: three speedups, not one", "hardware_upgrade"),
    Question("moe-experts", "Experts touched per MoE decode step, and where the MoE advantage comes from", "moe_experts"),
    Question("mbu-definition", "MBU, defined: two operands and six ways to get them wrong", "mbu_definition"),
    Question("batch-knee", "The batch knee: a line, a hyperbola and the cache that stops it", "batch_knee"),
    Question("joules-per-token", "Joules per token: the denominator moves, the numerator is capped", "joules_per_token"),
    Question("mla-absorption", "MLA weight absorption and its bill", "mla_absorption"),
    Question("flash-attention-io", "FlashAttention's HBM traffic: the textbook count and the real one", "flash_attention_io"),
    Question("int4-flip", "The INT4 flip batch: weight-only quantization against BF16 and FP8", "int4_flip"),
    Question("speculative-decoding", "Speculative decoding: a draft length per batch bucket", "speculative_decoding"),
)
SLUGS: tuple[str, ...] = tuple(q.slug for q in QUESTIONS)
_BY_SLUG_ENTRY = {q.slug: q for q in QUESTIONS}


@cache
def get(slug: str) -> Derivation:
    """The built derivation of a registered sheet (KeyError for an unknown slug)."""
    from derivations.engine import DerivationError

    entry = _BY_SLUG_ENTRY[slug]
    d = importlib.import_module(f"derivations.questions.{entry.module}").DERIVATION
    if (d.slug, d.title) != (entry.slug, entry.title):
        raise DerivationError(f"registry: {entry.module} builds {d.slug!r} ({d.title!r}), registered as {entry.slug!r} ({entry.title!r})")
    check_links(d)
    return d


def check_links(d: Derivation) -> None:
    """Every `@slug` in the sheet's prose names a registered sheet."""
    from derivations import prose
    from derivations.engine import DerivationError, prose_strings

    for where, text in prose_strings(d):
        for link in prose.links(text):
            if link not in _BY_SLUG_ENTRY:
                raise DerivationError(f"{d.slug}: {where} links to @{link}, which is not a registered sheet")


def __getattr__(name: str) -> Any:
    if name == "DERIVATIONS":
        return tuple(get(s) for s in SLUGS)
    if name == "BY_SLUG":
        return {s: get(s) for s in SLUGS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The explicit list of answer sheets, in the order of QUESTIONS.md.

A sheet is built (solved, verified, checked) only when it is asked for:
`get(slug)` imports its module; `QUESTIONS` lists slugs and titles without
importing sympy, so `roofline list questions` and `--help` stay fast.
`DERIVATIONS` and `BY_SLUG` build every sheet on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine.declare import Derivation


@dataclass(frozen=True)
class Part:
    """A part of the book (and a group on the site's index): the sheets that ask the same kind of question."""

    key: str
    title: str
    about: str  # one sentence: what the sheets in this part ask


#: The book's parts, in the order the book prints them; each sheet names its part below (one place).
PARTS: tuple[Part, ...] = (
    Part("foundations", "Foundations", "What one decode or prefill step costs, from the weights and the roofline, and where that model of a step breaks."),
    Part("attention", "Attention", "What the attention kernel reads and computes at decode: GQA, MLA and FlashAttention."),
    Part("serving", "Serving", "What batching, a faster chip, power and a draft model do to a server's throughput."),
    Part("diagnosis", "Diagnosis", "From a measured number (an MBU, a gap, a headline) to the causes a profiler can confirm."),
    Part("quantization-moe", "Quantization and MoE", "What fewer bytes per weight and routed experts change in a decode step."),
)


@dataclass(frozen=True)
class Question:
    slug: str
    title: str
    module: str  # under derivations.questions
    part: str  # a key of PARTS: what the sheet asks


QUESTIONS: tuple[Question, ...] = (
    Question("decode-floor", "The decode floor and what sits above it", "decode_floor", "foundations"),
    Question("flops-per-token", "FLOPs per token: where the 2 FLOPs per parameter rule comes from and where it breaks", "flops_per_token", "foundations"),
    Question("prefill-decode-crossover", "Prefill vs decode: the prompt length where they trade places", "prefill_decode_crossover", "foundations"),
    Question("attention-intensity", "Attention intensity at decode: one head-count ratio", "attention_intensity", "attention"),
    Question("mbu-diagnosis", "Diagnosing an MBU: from one number to buckets a team can own", "mbu_diagnosis", "diagnosis"),
    Question("ridge-coincidence", "The ridge-point coincidence", "ridge_coincidence", "foundations"),
    Question("batch1-gap", "The batch-1 gap: suspects sorted by what one trace shows", "batch1_gap", "diagnosis"),
    Question("decode-op-ranking", "Ranking the kernels of one decode step", "decode_op_ranking", "diagnosis"),
    Question("model-limits", "The twenty-line step model and where it breaks", "model_limits", "foundations"),
    Question("headline-check", "Checking a tokens-per-second headline", "headline_check", "diagnosis"),
    Question("hardware-upgrade", "Upgrading the accelerator: three speedups, not one", "hardware_upgrade", "serving"),
    Question("moe-experts", "Experts touched per MoE decode step, and where the MoE advantage comes from", "moe_experts", "quantization-moe"),
    Question("mbu-definition", "MBU, defined: two operands and six ways to get them wrong", "mbu_definition", "diagnosis"),
    Question("batch-knee", "The batch knee: a line, a hyperbola and the cache that stops it", "batch_knee", "serving"),
    Question("joules-per-token", "Joules per token: the denominator moves, the numerator is capped", "joules_per_token", "serving"),
    Question("mla-absorption", "MLA weight absorption and its bill", "mla_absorption", "attention"),
    Question("flash-attention-io", "FlashAttention's HBM traffic: the textbook count and the real one", "flash_attention_io", "attention"),
    Question("int4-flip", "The INT4 flip batch: weight-only quantization against BF16 and FP8", "int4_flip", "quantization-moe"),
    Question("speculative-decoding", "Speculative decoding: a draft length per batch bucket", "speculative_decoding", "serving"),
    Question("attention-kinds", "Full, windowed, sparse and linear attention: what one sequence keeps and reads", "attention_kinds", "attention"),
    Question("slo-goodput", "Serving against a latency target: the batch it allows and what it earns", "slo_goodput", "serving"),
    Question("disaggregation", "Splitting prefill from decode: when the transfer and the lost batching pay", "disaggregation", "serving"),
    Question("prefix-cache", "A prefix cache hit: the prompt you never compute, and the batch the cache takes", "prefix_cache", "serving"),
    Question("kv-tiers", "KV tiers: where the cache can live, and when reading it back sets the pace", "kv_tiers", "serving"),
)
SLUGS: tuple[str, ...] = tuple(q.slug for q in QUESTIONS)
_BY_SLUG_ENTRY = {q.slug: q for q in QUESTIONS}


def by_part(slugs: Sequence[str]) -> list[tuple[Part | None, list[str]]]:
    """`slugs` grouped by the part their sheet belongs to, parts in the book's order and the registry's order inside a part;
    a slug no question registers (a user's derivation file) goes in a last group with no part."""
    part_of = {q.slug: q.part for q in QUESTIONS}
    groups: list[tuple[Part | None, list[str]]] = [(p, [s for s in slugs if part_of.get(s) == p.key]) for p in PARTS]
    groups.append((None, [s for s in slugs if s not in part_of]))
    return [(p, members) for p, members in groups if members]


@cache
def get(slug: str) -> Derivation:
    """The built derivation of a registered sheet (KeyError for an unknown slug)."""
    from ..engine.declare import DerivationError

    entry = _BY_SLUG_ENTRY[slug]
    d = importlib.import_module(f".{entry.module}", __package__).DERIVATION
    if (d.slug, d.title) != (entry.slug, entry.title):
        raise DerivationError(f"registry: {entry.module} builds {d.slug!r} ({d.title!r}), registered as {entry.slug!r} ({entry.title!r})")
    check_links(d)
    return d


def check_links(d: Derivation) -> None:
    """Every `@slug` in the sheet's prose names a registered sheet."""
    from ..engine import prose
    from ..engine.declare import DerivationError, prose_strings

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

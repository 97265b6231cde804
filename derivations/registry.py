"""The explicit list of answer sheets, in the order of QUESTIONS.md."""

from __future__ import annotations

from derivations.engine import Derivation
from derivations.questions import decode_floor, flops_per_token, prefill_decode_crossover, ridge_coincidence
from derivations.questions import attention_intensity

DERIVATIONS: tuple[Derivation, ...] = (
    decode_floor.DERIVATION,
    flops_per_token.DERIVATION,
    prefill_decode_crossover.DERIVATION,
    attention_intensity.DERIVATION,
    ridge_coincidence.DERIVATION,
)
BY_SLUG: dict[str, Derivation] = {d.slug: d for d in DERIVATIONS}

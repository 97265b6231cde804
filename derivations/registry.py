"""The explicit list of answer sheets, in the order of QUESTIONS.md."""

from __future__ import annotations

from derivations.engine import Derivation
from derivations.questions import decode_floor

DERIVATIONS: tuple[Derivation, ...] = (
    decode_floor.DERIVATION,
)
BY_SLUG: dict[str, Derivation] = {d.slug: d for d in DERIVATIONS}

"""The explicit list of answer sheets, in the order of QUESTIONS.md."""

from __future__ import annotations

from derivations import prose
from derivations.engine import Derivation, DerivationError, prose_strings
from derivations.questions import (
    attention_intensity,
    batch_knee,
    decode_floor,
    decode_op_ranking,
    flash_attention_io,
    flops_per_token,
    hardware_upgrade,
    headline_check,
    int4_flip,
    joules_per_token,
    mla_absorption,
    moe_experts,
    prefill_decode_crossover,
    ridge_coincidence,
    speculative_decoding,
)

DERIVATIONS: tuple[Derivation, ...] = (
    decode_floor.DERIVATION,
    flops_per_token.DERIVATION,
    prefill_decode_crossover.DERIVATION,
    attention_intensity.DERIVATION,
    ridge_coincidence.DERIVATION,
    decode_op_ranking.DERIVATION,
    headline_check.DERIVATION,
    hardware_upgrade.DERIVATION,
    moe_experts.DERIVATION,
    batch_knee.DERIVATION,
    joules_per_token.DERIVATION,
    mla_absorption.DERIVATION,
    flash_attention_io.DERIVATION,
    int4_flip.DERIVATION,
    speculative_decoding.DERIVATION,
)
BY_SLUG: dict[str, Derivation] = {d.slug: d for d in DERIVATIONS}


def _check_links() -> None:
    """Every `@slug` in any sheet's prose names a registered sheet."""
    for d in DERIVATIONS:
        for where, text in prose_strings(d):
            for slug in prose.links(text):
                if slug not in BY_SLUG:
                    raise DerivationError(f"{d.slug}: {where} links to @{slug}, which is not a registered sheet")


_check_links()

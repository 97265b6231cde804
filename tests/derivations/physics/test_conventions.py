"""Each convention is a named constant with a test."""

import json

from roofline.derivations.physics import conventions
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.units import Quantity

from roofline import api


def test_two_flops_per_weight_per_token():
    assert Quantity(conventions.FLOPS_PER_WEIGHT_PER_TOKEN).to("flop/(parameter*token)").magnitude == 2


def test_attention_four_flops_per_channel_qk_and_pv():
    assert Quantity(conventions.ATTENTION_FLOPS_PER_CHANNEL).to("flop/token**2").magnitude == 4


def test_default_precisions_are_bf16():
    assert conventions.DEFAULT_WEIGHTS == conventions.DEFAULT_KV == "bf16"


def test_every_sheet_prints_the_conventions_its_inputs_and_its_engine_profile_and_has_every_headline_at_its_defaults(sheets):
    """Every registered sheet (the session's, derived once at its defaults) prints the conventions, its inputs and its engine
    profile, and has every headline valued."""
    assert [s.derivation.slug for s in sheets] == [d.slug for d in DERIVATIONS]
    for solved in sheets:
        d = solved.derivation
        missing = {n: v.missing.label for n, v in solved.results.items() if v.exact is None}
        assert not missing, f"{d.slug}: a none or n/a headline at the defaults: {missing}"
        sheet = json.loads(api.render(solved, "json"))
        assert sheet["conventions"] == list(conventions.CONVENTIONS)
        assert set(sheet["context"]["inputs"]) == {i.name for i in d.inputs}
        assert sheet["context"]["engine"] == "fitted"
        md = api.render(solved, "md")
        assert "## Conventions" in md and md.count("| default |") == len(d.inputs)
        assert "| Engine profile | fitted: " in md and "| Engine profile provenance | fitted to the " in md

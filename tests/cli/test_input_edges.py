"""Every input of every sheet at values across its domain: the sheet's numbers stay finite and (unless signed) non-negative.

The hypothesis test in test_options_and_domains.py samples inputs at random; this one walks them all
deterministically (slow: about two minutes), so a negative time or share at a domain edge cannot hide.
"""

from __future__ import annotations

import math

import pytest
from roofline.derivations.engine.context import BARE_NUMBER_UNITS, parse_overrides
from roofline.derivations.engine.sheet import Missing, evaluate
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.units import RooflineError

from tests.derivations.helpers import context

VALUES = ("1e-9", "0.5", "1", "2", "1000", "1000000000")


@pytest.mark.slow
@pytest.mark.parametrize("d", DERIVATIONS, ids=lambda d: d.slug)
def test_every_input_across_its_domain_gives_finite_non_negative_numbers(d):
    ctx = context()
    bad = []
    for inp in d.inputs:
        for v in VALUES:
            text = v if inp.unit in BARE_NUMBER_UNITS else f"{v} {inp.unit}"
            try:
                overrides = parse_overrides([f"{inp.name}={text}"], d.inputs, d.slug)
            except RooflineError:
                continue  # outside the domain: refused in one line (test_options_and_domains)
            for name, x in evaluate(d, type(ctx)(**{**ctx.__dict__, "overrides": overrides})).items():
                if isinstance(x, Missing):
                    continue
                f = float(x)
                if not math.isfinite(f) or (f < 0 and not d.step(name).signed):
                    bad.append((inp.name, text, name, f))
    assert bad == []

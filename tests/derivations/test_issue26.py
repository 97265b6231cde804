"""Issue 26: what each answer still missed — the defaults matrix, and each new closed form against its equation and its sheet's tables.

The engine verifies every Solve symbolically and numerically when a derivation is built; these tests check the closed forms
again by substitution into the equation they solve, and against the values the sheet's own tables print.
"""

from __future__ import annotations

import pytest

from derivations.registry import DERIVATIONS
from derivations.sheet import FIT_STEP
from roofline import api

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# --- the defaults matrix: every sheet at its own defaults fits and values every headline ----------

@pytest.mark.parametrize("slug", [d.slug for d in DERIVATIONS])
def test_every_sheet_at_its_defaults_fits_and_values_every_headline(slug):
    """A sheet's default is a setup people run: it fits in HBM (where the sheet asks) and no headline is none or n/a."""
    sheet = api.derive(slug)
    assert sheet.overflow is None, f"{slug}: its default setup needs {sheet.overflow.float:.0%} of HBM"
    if FIT_STEP in sheet.values:
        assert sheet.values[FIT_STEP].float <= 1
    missing = {name: v.missing.label for name, v in sheet.results.items() if v.missing is not None}
    assert not missing, f"{slug}: headlines without a value at the defaults: {missing}"

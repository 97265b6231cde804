"""Fixtures the renderer tests share: each sheet solved once for its default context, and its figures as data."""

from __future__ import annotations

import pytest
from roofline.renderers import plots

from roofline import api


@pytest.fixture(scope="session")
def default_sheets(sheets) -> dict:
    """Every registered sheet for its default context by slug: the session's one derivation of each (tests/conftest.py)."""
    return {s.derivation.slug: s for s in sheets}


@pytest.fixture(scope="session")
def default_figures(default_sheets) -> dict:
    """Every sheet's figures as data, for its default context."""
    return {slug: plots.figures(sheet, api.resolve_row) for slug, sheet in default_sheets.items()}

"""Shared fixtures and the --refresh-golden flag."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--refresh-golden", action="store_true", help="rewrite tests/golden/* from the current output")


@pytest.fixture
def refresh_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--refresh-golden"))

"""Shared fixtures and the --refresh-golden flag."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--refresh-golden", action="store_true", help="rewrite tests/golden/* from the current output")


@pytest.fixture
def refresh_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--refresh-golden"))


@pytest.fixture(scope="session")
def sheets() -> list:
    """Every registered sheet on its default context, derived once per test session and shared."""
    from roofline import api

    return [api.derive(d.slug) for d in api.DERIVATIONS]


@pytest.fixture(scope="session")
def built(sheets) -> dict[str, str | bytes]:
    """One real build's files (name -> content), rendered once per test session and shared."""
    from roofline import build as build_mod

    return build_mod.render_all(sheets)


@pytest.fixture
def fast_build(built, monkeypatch):
    """`roofline build` without re-rendering: the shared build's files."""
    from roofline import build as build_mod

    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(built))
    return built

"""Shared fixtures and the --refresh-golden flag."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--refresh-golden", action="store_true", help="rewrite tests/golden/* from the current output")


def pytest_configure(config: pytest.Config) -> None:
    """The tests' own cache folder, beside the user's and kept between runs (a warm cache keeps the suite fast): a test's
    stand-in data (a fake PDF, a sheet of a patched process) never reaches the cache `roofline` itself reads. A test that
    wants another folder sets its own."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    os.environ["ROOFLINE_CACHE_DIR"] = str(base / "roofline-tests")


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


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright, once per test process (the browser tests: live pages, their scripts, the
    practice page); skipped where Playwright is not installed, failed where chromium is missing (.ci/run installs it)."""
    playwright = pytest.importorskip("playwright.sync_api")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is needed for the browser tests (.ci/run installs it)"
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield b
        b.close()

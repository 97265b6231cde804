"""Shared fixtures and the --refresh-golden flag."""

from __future__ import annotations

import base64
import fcntl
import json
import os
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
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | bytes]:
    """One real build's files (name -> content), rendered once per test run and shared: under pytest-xdist the first worker
    to ask renders it, under a file lock, and writes it as JSON in the run's temporary folder; the others read it."""
    from roofline import build as build_mod

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build_mod.render_all(request.getfixturevalue("sheets"))
    shared = tmp_path_factory.getbasetemp().parent / "built.json"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.is_file():
            return {name: base64.b64decode(v["b"]) if "b" in v else v["t"] for name, v in json.loads(shared.read_text()).items()}
        files = build_mod.render_all(request.getfixturevalue("sheets"))
        shared.write_text(json.dumps({name: {"b": base64.b64encode(v).decode()} if isinstance(v, bytes) else {"t": v}
                                      for name, v in files.items()}))
        return files


@pytest.fixture
def fast_build(built, monkeypatch):
    """`roofline build` without re-rendering: the shared build's files."""
    from roofline import build as build_mod

    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(built))
    return built

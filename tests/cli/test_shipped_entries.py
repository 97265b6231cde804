"""The cache entries shipped with the package (derivations.engine.store.SHIPPED): a fresh clone's or install's first run
reads them, read by the cache's rules; `roofline build` writes them and `roofline build --check` compares them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from roofline.derivations.engine import store

from roofline import build as build_mod
from roofline import compiled
from roofline.cli import _parser, main

ROOT = Path(__file__).resolve().parents[2]


def _made_here() -> None:
    """Skip unless the shipped entries were made with this Python and these library versions (their keys hold both: made
    elsewhere, no lookup finds them, by design; CI on another image checks them with a warning instead)."""
    made = store.SHIPPED / build_mod.SHIPPED_ENVIRONMENT
    if not made.is_file() or made.read_bytes() != build_mod.shipped_environment():
        pytest.skip("the shipped entries were made with another Python or library version")


def _what(path: Path) -> str:
    return json.loads(path.read_bytes().partition(b"\n")[0])["what"]


def test_a_fresh_cache_answers_from_the_shipped_entries_without_sympy(tmp_path: Path) -> None:
    _made_here()
    code = ("import sys, io, contextlib\nfrom roofline.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    main(['derive', 'decode-floor', '--format', 'json'], light=True)\n"
            "print(sorted(m for m in ('sympy', 'pint', 'numpy') if m in sys.modules))\nprint(out.getvalue())")
    env = {**os.environ, "ROOFLINE_CACHE_DIR": str(tmp_path / "cache")}
    for name in ("ROOFLINE_CACHE", "ROOFLINE_SHIPPED"):
        env.pop(name, None)
    shipped = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert shipped.returncode == 0, shipped.stderr
    modules, _, sheet = shipped.stdout.partition("\n")
    assert modules == "[]", "a fresh cache took the full path: is the shipped folder current (roofline build)?"
    cold = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "ROOFLINE_CACHE": "off"}, capture_output=True, text=True, timeout=300)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.partition("\n")[2] == sheet, "the shipped entries print what the full path prints"


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped folder in its place, and a fresh user cache."""
    folder = tmp_path / "compiled"
    shutil.copytree(store.SHIPPED, folder)
    monkeypatch.setattr(store, "SHIPPED", folder)
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("ROOFLINE_CACHE", "ROOFLINE_SHIPPED"):
        monkeypatch.delenv(name, raising=False)
    return folder


def test_a_tampered_shipped_entry_is_a_miss(shipped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _made_here()
    argv = ["derive", "decode-floor", "--format", "json"]
    assert compiled.derive(_parser().parse_args(argv)) is not None, "the shipped entries answer"
    entry = next(p for p in shipped.glob("*.json") if p.name != build_mod.SHIPPED_ENVIRONMENT and _what(p) == "compiled sheet decode-floor")
    entry.write_bytes(entry.read_bytes().replace(b"decode floor", b"PWNED floor", 1))
    assert compiled.derive(_parser().parse_args(argv)) is None, "an edited entry is a miss"
    assert main(argv) == 0
    assert "PWNED" not in capsys.readouterr().out


def test_the_check_names_a_shipped_folder_that_differs(shipped: Path) -> None:
    entries = {p.stem: p.read_bytes() for p in shipped.glob("*.json") if p.name != build_mod.SHIPPED_ENVIRONMENT}
    assert build_mod.stale_shipped(entries) == ([], "")
    first, second = sorted(entries)[:2]
    (shipped / f"{first}.json").unlink()
    (shipped / f"{second}.json").write_bytes(b"{}")
    (shipped / ("0" * 64 + ".json")).write_bytes(b"{}")
    bad, note = build_mod.stale_shipped(entries)
    assert note == "" and len(bad) == 1 and "(1 entries missing, 1 differ, 1 left over)" in bad[0]
    build_mod.write_shipped(entries)
    assert build_mod.stale_shipped(entries) == ([], "")


def test_entries_made_in_another_environment_are_not_compared(shipped: Path) -> None:
    (shipped / build_mod.SHIPPED_ENVIRONMENT).write_text('{"python": "another", "libraries": {}}\n')
    bad, note = build_mod.stale_shipped({})
    assert bad == [] and "another Python or library version" in note

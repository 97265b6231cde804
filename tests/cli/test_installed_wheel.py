"""Installed as software, not as a checkout: the wheel holds every file a run reads, and runs from another folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_wheel_derives_and_builds_from_another_folder(tmp_path: Path) -> None:
    # built from a copy of the sources: setuptools would reuse (and package) whatever an earlier build left in the
    # checkout's build/, and would leave its own there
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "out", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp_path / "dist")],
                   check=True, capture_output=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("roofline-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:  # a pure-Python wheel installs by unpacking it
        z.extractall(site)
        tops = {name.split("/")[0] for name in z.namelist()}
    # every layer inside the one import name roofline owns: installing it shadows no other distribution's `units` or `specs`
    assert {t for t in tops if not t.endswith(".dist-info")} == {"roofline"}
    for other in ("units", "specs", "derivations", "renderers"):  # and another distribution's packages of those names are not read
        (site / other).mkdir()
        (site / other / "__init__.py").write_text(f"raise ImportError('another distribution named {other}')\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "ROOFLINE_CACHE_DIR": str(tmp_path / "cache")}

    def run(*argv: str) -> str:
        code = ("import sys, roofline; assert roofline.__file__.startswith(sys.argv[1]), roofline.__file__\n"
                "from roofline.cli import main; sys.exit(main(sys.argv[2:]))")
        r = subprocess.run([sys.executable, "-c", code, str(site), *argv], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert run("derive", "decode-floor").startswith("# The decode floor")
    assert run("derive", "batch-knee", "--format", "tex").startswith("\\documentclass")
    assert "records from" in run("validate")
    run("build", "--out", str(elsewhere / "out"))
    assert (elsewhere / "out" / "decode-floor.md").is_file() and (elsewhere / "out" / "book.tex").is_file()

"""Installed as software, not as a checkout: the wheel, installed by pip into a fresh virtual environment, holds every file a
run reads, and its `roofline` command runs from another folder."""

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
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
    # every layer inside the one import name roofline owns: installing it shadows no other distribution's `units` or `specs`
    assert {t for t in tops if not t.endswith(".dist-info")} == {"roofline"}
    # installed by pip into a fresh virtual environment (no index: its libraries are the running environment's, read through a
    # .pth line, which runs no .pth of that folder, so nothing of the checkout's editable install is on the path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True, capture_output=True, timeout=300)
    fresh_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], check=True,
                                     capture_output=True, text=True).stdout.strip())
    libraries = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "sympy").is_dir())
    (fresh_site / "libraries.pth").write_text(libraries + "\n")
    decoys = tmp_path / "decoys"
    for other in ("units", "specs", "derivations", "renderers"):  # another distribution's packages of those names are not read
        (decoys / other).mkdir(parents=True)
        (decoys / other / "__init__.py").write_text(f"raise ImportError('another distribution named {other}')\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update({"PYTHONPATH": str(decoys), "ROOFLINE_CACHE_DIR": str(tmp_path / "cache")})
    where = subprocess.run([str(python), "-c", "import roofline; print(roofline.__file__)"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert where.stdout.startswith(str(fresh_site)), where.stdout + where.stderr

    def run(*argv: str) -> str:
        r = subprocess.run([str(venv / "bin" / "roofline"), *argv], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert run("derive", "decode-floor").startswith("# The decode floor")
    assert run("derive", "batch-knee", "--format", "tex").startswith("\\documentclass")
    assert "records from" in run("validate")
    run("build", "--out", str(elsewhere / "out"))
    assert (elsewhere / "out" / "decode-floor.md").is_file() and (elsewhere / "out" / "book.tex").is_file()

"""Issue 22, family 3: the solve cache never runs what it loads, reads only from a folder this user alone can write, only
regular files of a bounded size, and takes any load error as a miss.

Every hostile cache below is set up in a fresh folder; the derivation is then solved with it and must give exactly the
closed forms of a cold run, without running anything, hanging, or printing a traceback.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from roofline.derivations.engine import cache, store

ROOT = Path(__file__).resolve().parents[3]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


class _Payload:
    """A pickle that, if ever loaded, leaves a file behind (what an attacker's `os.system` would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


def _derive() -> list[tuple[str, str, str]]:
    """A small derivation with one closed form, built (and so solved, through the cache) afresh."""
    from roofline.derivations.engine.declare import Step, derivation, solve
    from roofline.derivations.engine.symbols import Symbols
    from roofline.derivations.physics import glossary as gl
    from roofline.derivations.physics import primitives as pr

    t_mem = Step("t_mem", pr.memory_time(pr.weight_bytes()), "s", "w")
    t_cmp = Step("t_cmp", pr.compute_time(pr.gemm_flops()), "s", "w")
    cross = solve("B_cross", t_mem, t_cmp, gl.B, "1", "w")
    d = derivation("cache-test", "t", "q", Symbols(parent=gl.GLOSSARY), [t_mem, t_cmp, cross], ["B_cross"])
    return [(s.name, str(s.expr), s.verified) for s in d.steps if s.kind == "solve"]


@pytest.fixture
def in_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def cold() -> list[tuple[str, str, str]]:
    import os as _os

    old = _os.environ.get("ROOFLINE_CACHE")
    _os.environ["ROOFLINE_CACHE"] = "off"
    try:
        return _derive()
    finally:
        if old is None:
            del _os.environ["ROOFLINE_CACHE"]
        else:
            _os.environ["ROOFLINE_CACHE"] = old


def _keys(tmp: Path, cold: list[tuple[str, str, str]]) -> list[str]:
    """Fill the cache folder `tmp` with a good run's entries and return their keys."""
    assert _derive() == cold
    return [p.stem for p in tmp.glob("*.json")]


def _pickle_everywhere(tmp: Path, keys: list[str]) -> None:
    for k in keys:
        data = pickle.dumps(_Payload(tmp / "PWNED"))
        (tmp / f"{k}.pickle").write_bytes(data)  # the old entry name
        (tmp / f"{k}.json").write_bytes(data)  # and under the new one


def _fifo_everywhere(tmp: Path, keys: list[str]) -> None:
    for k in keys:
        (tmp / f"{k}.json").unlink()
        os.mkfifo(tmp / f"{k}.json")


def _symlink_everywhere(tmp: Path, keys: list[str]) -> None:
    target = tmp / "elsewhere.json"
    target.write_text(json.dumps({"expr": {"exprjson": 1, "nodes": [["Integer", "7"]], "root": 0}, "verified": "symbolic"}))
    for k in keys:
        (tmp / f"{k}.json").unlink()
        os.symlink(target, tmp / f"{k}.json")


def _rewrite_everywhere(make):
    def change(tmp: Path, keys: list[str]) -> None:
        for k in keys:
            (tmp / f"{k}.json").write_bytes(make((tmp / f"{k}.json").read_bytes()))
    return change


def _foreign_owner(tmp: Path, keys: list[str]) -> None:
    for k in keys:
        os.chown(tmp / f"{k}.json", 65534, 65534)


def _huge(tmp: Path, keys: list[str]) -> None:
    for k in keys:
        with open(tmp / f"{k}.json", "wb") as f:
            f.truncate(cache.MAX_ENTRY_BYTES + 1)


#: (id, how the filled cache folder is tampered with)
ENTRY_CASES = [
    pytest.param(_pickle_everywhere, id="pickles-that-would-run-code"),
    pytest.param(_fifo_everywhere, id="fifo-entries-that-would-hang"),
    pytest.param(_symlink_everywhere, id="symlinked-entries"),
    pytest.param(_rewrite_everywhere(lambda b: b[: len(b) // 2]), id="truncated-entries"),
    pytest.param(_rewrite_everywhere(lambda b: b"[1, 2, 3]"), id="wrong-shaped-entries"),
    pytest.param(_rewrite_everywhere(lambda b: b.replace(b'"Symbol"', b'"__import__"', 1)), id="entries-with-a-foreign-node"),
    pytest.param(_rewrite_everywhere(lambda b: b.replace(b'"verified":"symbolic"', b'"verified":"trust me"')), id="entries-with-a-bad-verification"),
    pytest.param(_huge, id="entries-past-the-size-bound"),
    pytest.param(_foreign_owner, id="entries-owned-by-another-user", marks=pytest.mark.skipif(not IS_ROOT, reason="chown needs root")),
]


@pytest.mark.parametrize("tamper", ENTRY_CASES)
def test_a_tampered_entry_is_a_miss_and_never_runs(tamper, cold, in_cache):
    keys = _keys(in_cache, cold)
    assert keys
    tamper(in_cache, keys)
    signal.alarm(120)  # a FIFO read would block: the alarm fails the test instead of hanging it
    try:
        assert _derive() == cold
    finally:
        signal.alarm(0)
    assert not (in_cache / "PWNED").exists()


def _world_writable(tmp: Path) -> Path:
    tmp.chmod(0o777)
    return tmp


def _group_writable(tmp: Path) -> Path:
    tmp.chmod(0o770)
    return tmp


def _inside_a_foreign_link(tmp: Path) -> Path:
    real = tmp / "real"
    real.mkdir(mode=0o700)
    link = tmp / "link"
    os.symlink(real, link)
    os.lchown(link, 65534, 65534)
    return link


def _foreign_folder(tmp: Path) -> Path:
    os.chown(tmp, 65534, 65534)
    return tmp


#: (id, how the cache folder is made untrustworthy, what the warning says)
FOLDER_CASES = [
    pytest.param(_world_writable, "can be written by others (mode 0777", id="world-writable-folder"),
    pytest.param(_group_writable, "can be written by others (mode 0770", id="group-writable-folder"),
    pytest.param(_foreign_folder, "is owned by another user (uid 65534", id="folder-owned-by-another-user",
                 marks=pytest.mark.skipif(not IS_ROOT, reason="chown needs root")),
    pytest.param(_inside_a_foreign_link, "is a symbolic link owned by another user", id="symbolic-link-owned-by-another-user",
                 marks=pytest.mark.skipif(not IS_ROOT, reason="chown needs root")),
]


@pytest.mark.parametrize(("spoil", "message"), FOLDER_CASES)
def test_an_untrusted_folder_turns_the_cache_off_with_one_warning(spoil, message, cold, tmp_path, monkeypatch):
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "fill"))
    (tmp_path / "fill").mkdir(mode=0o700)
    keys = _keys(tmp_path / "fill", cold)
    _pickle_everywhere(tmp_path / "fill", keys)
    folder = spoil(tmp_path / "fill")
    monkeypatch.setattr(store, "_DECIDED", {})  # a new process: it decides about the folder afresh
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(folder))
    with pytest.warns(cache.CacheWarning, match=re.escape(message)):
        assert _derive() == cold
    assert not (tmp_path / "fill" / "PWNED").exists() and not list((tmp_path / "fill").glob("*.bin"))


def test_the_cli_says_the_cache_is_off_in_one_warning_line(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    run = subprocess.run([sys.executable, "-m", "roofline", "derive", "ridge-coincidence", "--format", "json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=False, env={**os.environ, "ROOFLINE_CACHE_DIR": str(folder), "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0 and json.loads(run.stdout)["slug"] == "ridge-coincidence"
    assert run.stderr.splitlines() == [f"roofline: warning: the cache folder {folder} can be written by others (mode 0777; it must not be writable "
                                       "by group or others); the cache is off for this run (fix its owner or mode, set ROOFLINE_CACHE_DIR to a "
                                       "folder of your own, or ROOFLINE_CACHE=off)"]
    assert not list(folder.iterdir()), "nothing is written into an untrusted folder"


def test_the_folders_the_cache_creates_are_the_users_only(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "a" / "b" / "cache"))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    cache.store_bytes("k" * 64, b"data")
    for p in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "cache"):
        assert p.stat().st_mode & 0o777 == cache.FOLDER_MODE
    assert cache.load_bytes("k" * 64) == b"data"


def test_a_fifo_is_not_waited_on(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    os.mkfifo(tmp_path / f"{'f' * 64}.json")
    signal.alarm(20)  # a blocking open would hang the test run: fail it instead
    try:
        assert cache.load_json("f" * 64) is None
    finally:
        signal.alarm(0)


def test_a_key_is_never_a_path(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    (tmp_path / "secret.json").write_text("[1]")
    assert cache.load_json("../secret") is None
    cache.store_json("../written", [1])
    assert not (tmp_path / "written.json").exists()

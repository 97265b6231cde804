"""A cache entry names what it is for, its numbers and text pass a file's checks, and any failure reading it is a miss (issue
35, family 5).

Each case fills a cache folder with the entries a derive stores, then tampers with them: copied under another key, edited
by hand, or rewritten as well-formed entries (their header's digest made again) holding what no file could hold. The next
`roofline derive` must print what a run without a cache prints, with no traceback, and nothing from the entry reaches it.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from roofline import compiled
from roofline.cli import _parser, main
from tests import cache_entries

ARGV = ["derive", "decode-floor", "--format", "tex"]


def _use_cache(mp: pytest.MonkeyPatch, folder: Path) -> None:
    mp.delenv("ROOFLINE_CACHE", raising=False)
    mp.setenv("ROOFLINE_CACHE_DIR", str(folder))
    mp.setenv("ROOFLINE_SHIPPED", "off")  # the user's folder alone: a first run is cold (the shipped entries: test_shipped_entries.py)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    _use_cache(monkeypatch, tmp_path / "cache")
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def filled(tmp_path_factory, cold) -> Path:
    """A cache folder as a cold `derive` of decode-floor, then of batch-knee, fills it (once per module: each tampering case
    starts from a copy). Filling it prints what a run with no cache prints."""
    folder = tmp_path_factory.mktemp("filled") / "cache"
    with pytest.MonkeyPatch.context() as mp:
        _use_cache(mp, folder)
        assert cold[0] == 0
        with redirect_stdout(io.StringIO()) as out, redirect_stderr(io.StringIO()) as err:
            code = main(list(ARGV), light=False)
        assert (code, out.getvalue(), err.getvalue()) == cold, "filling the cache prints what a run with no cache prints"
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            main(["derive", "batch-knee", "--format", "tex"], light=False)
    return folder


def _run(capsys, argv, light=True) -> tuple[int, str, str]:
    code = main(list(argv), light=light)
    out, err = capsys.readouterr()
    return code, out, err


def _entry(cache: Path, what: str) -> Path:
    found = [p for p in cache.glob("*.json") if cache_entries.header(p)["what"] == what]
    assert len(found) == 1, (what, [cache_entries.header(p)["what"] for p in cache.glob("*.json")])
    return found[0]


def _edit(what: str, change: Callable[[Any], None]) -> Callable[[Path], None]:
    """Rewrite the entry for `what` as a well-formed entry of its key (digest made again) after `change` edits its value."""
    def tamper(cache: Path) -> None:
        p = _entry(cache, what)
        value = cache_entries.value(p)
        change(value)
        cache_entries.rewrite(p, value)
    return tamper


def _raw(what: str, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """Change the bytes of the entry for `what`, header untouched (an edit by hand)."""
    def tamper(cache: Path) -> None:
        p = _entry(cache, what)
        p.write_bytes(change(p.read_bytes()))
    return tamper


def _copied(forge_key: bool, forge_what: bool) -> Callable[[Path], None]:
    """batch-knee's compiled sheet copied over decode-floor's, its header's key and slug forged or not."""
    def tamper(cache: Path) -> None:
        src, dst = _entry(cache, "compiled sheet batch-knee"), _entry(cache, "compiled sheet decode-floor")
        key, what = cache_entries.header(dst)["key"], cache_entries.header(dst)["what"]
        shutil.copy(src, dst)
        changes = {**({"key": key} if forge_key else {}), **({"what": what} if forge_what else {})}
        if changes:
            cache_entries.rewrite(dst, cache_entries.value(dst), **changes)
    return tamper


def _h100(value: Any) -> dict[str, Any]:
    return value["hardware"]["h100-sxm"]


def _set_bandwidth(value: Any, number: list[int]) -> None:
    _h100(value)["values"]["beta"] = number


def _first_step(value: Any) -> dict[str, Any]:
    return value["blueprint"]["steps"][0]


def _first_symbol(value: Any) -> dict[str, Any]:
    return value["blueprint"]["symbols"][0]


def _form_piece(value: Any, piece: str) -> None:
    step = next(iter(value["forms"]["steps"].values()))
    step["formula"]["whole"] = [piece]


def _plan_nan(value: Any) -> None:
    nodes = next(st["expr"]["nodes"] for st in value["plan"]["steps"] if any(x[0] == "Integer" for x in st["expr"]["nodes"]))
    k = next(i for i, x in enumerate(nodes) if x[0] == "Integer")
    nodes[k] = ["Float", "nan", 53]


#: (id, the tampering) : every family of bad entry, several members each
TAMPERS = [
    # an entry not bound to its key
    ("copied-under-another-key", _copied(False, False)),
    ("copied-with-a-forged-key", _copied(True, False)),
    ("copied-with-a-forged-key-and-slug", _copied(True, True)),
    ("header-of-another-version", _raw("compiled catalog", lambda b: b.replace(b'"roofline-cache":1', b'"roofline-cache":0', 1))),
    ("no-header", _raw("compiled catalog", lambda b: b.partition(b"\n")[2])),
    # a well-formed entry edited by hand (the digest no longer matches)
    ("doubled-bandwidth-by-hand", _raw("compiled catalog", lambda b: b.replace(b'"beta":[3350000000000,1]', b'"beta":[6700000000000,1]'))),
    ("a-title-edited-by-hand", _raw("compiled sheet decode-floor", lambda b: b.replace(b"decode floor", b"DECODE FLOOR", 1))),
    # numbers no file could hold
    ("zero-denominator", _edit("compiled catalog", lambda v: _set_bandwidth(v, [1, 0]))),
    ("negative-denominator", _edit("compiled catalog", lambda v: _set_bandwidth(v, [1, -2]))),
    ("a-number-past-1e300", _edit("compiled catalog", lambda v: _set_bandwidth(v, [10**400, 1]))),
    ("a-float-for-a-fraction", _edit("compiled catalog", lambda v: _set_bandwidth(v, [1.5, 1]))),
    ("a-boolean-for-a-number", _edit("compiled catalog", lambda v: _set_bandwidth(v, [True, 1]))),
    ("an-integer-of-5000-digits", _raw("compiled catalog", lambda b: b)),  # replaced below (JSON cannot write it from Python)
    ("nan", _raw("compiled catalog", lambda b: b)),  # replaced below
    ("a-nan-float-in-the-plan", _edit("compiled sheet decode-floor", _plan_nan)),
    # shapes this code never writes
    ("a-missing-field", _edit("compiled catalog", lambda v: v.pop("default_engine"))),
    ("a-missing-spec-field", _edit("compiled catalog", lambda v: _h100(v).pop("peaks"))),
    ("a-list-for-a-table", _edit("compiled sheet decode-floor", lambda v: v.__setitem__("defaults", [1, 2]))),
    ("identities-of-the-wrong-shape", lambda cache: [cache_entries.rewrite(p, {"t_step": {"symbol": 1}})
                                                    for p in cache.glob("*.json") if cache_entries.header(p)["what"].startswith("compiled identities")]),
    # text no file could hold
    ("an-escape-in-a-chip-name", _edit("compiled catalog", lambda v: _h100(v).__setitem__("name", "\x1b]0;PWNED\x07H100"))),
    ("a-bidi-override-in-a-title", _edit("compiled sheet decode-floor", lambda v: v["blueprint"].__setitem__("title", "\u202ePWNED"))),
    ("input-in-a-symbols-latex", _edit("compiled sheet decode-floor", lambda v: _first_symbol(v).__setitem__("latex", r"\input{/etc/passwd}"))),
    ("input-in-a-steps-latex", _edit("compiled sheet decode-floor", lambda v: _first_step(v).__setitem__("latex", r"W\input{/etc/passwd}"))),
    ("carets-in-a-steps-latex", _edit("compiled sheet decode-floor", lambda v: _first_step(v).__setitem__("latex", "W^^5cinput{x}"))),
    ("input-in-prose-math", _edit("compiled sheet decode-floor", lambda v: _first_step(v).__setitem__("why", r"See $\input{/etc/passwd}$."))),
    ("write18-in-a-printed-formula", _edit("compiled sheet decode-floor", lambda v: _form_piece(v, r"\immediate\write18{touch PWNED}"))),
    ("an-environment-in-a-printed-formula", _edit("compiled sheet decode-floor", lambda v: _form_piece(v, r"\begin{verbatim}"))),
]


def _long_integer(cache: Path) -> None:
    p = _entry(cache, "compiled catalog")
    text = json.dumps(cache_entries.value(p), separators=(",", ":")).replace('"beta":[3350000000000,1]', '"beta":[' + "9" * 5000 + ",1]")
    _write_raw_payload(p, text)


def _nan(cache: Path) -> None:
    p = _entry(cache, "compiled catalog")
    text = json.dumps(cache_entries.value(p), separators=(",", ":")).replace('"beta":[3350000000000,1]', '"beta":[NaN,1]')
    _write_raw_payload(p, text)


def _write_raw_payload(p: Path, text: str) -> None:
    import hashlib

    payload = text.encode()
    head = {**cache_entries.header(p), "sha256": hashlib.sha256(payload).hexdigest()}
    p.write_bytes(json.dumps(head).encode() + b"\n" + payload)


TAMPERS = [(name, {"an-integer-of-5000-digits": _long_integer, "nan": _nan}.get(name, t)) for name, t in TAMPERS]


@pytest.fixture(scope="module")
def cold() -> tuple[int, str, str]:
    """What `derive` prints with no cache."""
    import os

    old = os.environ.get("ROOFLINE_CACHE")
    os.environ["ROOFLINE_CACHE"] = "off"
    try:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(ARGV), light=False)
        return code, out.getvalue(), err.getvalue()
    finally:
        if old is None:
            del os.environ["ROOFLINE_CACHE"]
        else:
            os.environ["ROOFLINE_CACHE"] = old


@pytest.mark.parametrize("tamper", [t for _, t in TAMPERS], ids=[n for n, _ in TAMPERS])
def test_a_tampered_entry_is_a_miss(tamper, cache, filled, capsys, cold) -> None:
    shutil.copytree(filled, cache)
    assert compiled.derive(_parser().parse_args(ARGV)) == cold[1], "the light path answers from a good cache"
    tamper(cache)
    assert compiled.derive(_parser().parse_args(ARGV)) is None, "a miss"
    assert _run(capsys, ARGV) == cold
    assert "PWNED" not in cold[1] and not (Path.cwd() / "PWNED").exists()


def test_the_issue_reproducer_a_copied_entry_no_longer_prints_another_sheet(cache, capsys, cold) -> None:
    _run(capsys, ARGV, light=False)
    _run(capsys, ["derive", "batch-knee", "--format", "tex"], light=False)
    src, dst = _entry(cache, "compiled sheet batch-knee"), _entry(cache, "compiled sheet decode-floor")
    shutil.copy(src, dst)
    code, out, _ = _run(capsys, ARGV)
    assert (code, out) == cold[:2] and "decode floor" in out.lower()

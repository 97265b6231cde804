"""Only the requested work runs: light commands import no sympy; the solve cache is used, safe and optional; `roofline sweep`."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from roofline.derivations.engine import cache

from roofline.cli import main

ROOT = Path(__file__).resolve().parents[2]


#: The list of sheets: a light module inside the questions package, which every command reads; a question module is any other.
QUESTION_LIST = "roofline.derivations.questions.registry"


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


@pytest.mark.parametrize("argv", [["--help"], ["list", "questions"], ["list", "models"], ["list", "hardware"],
                                  ["show", "hardware", "h100-sxm"], ["show", "model", "deepseek-v3", "--format", "json"]])
def test_light_commands_import_no_sympy(argv: list[str]) -> None:
    code = (
        "import sys, contextlib, io\n"
        f"QUESTION_LIST = {QUESTION_LIST!r}\n"
        "from roofline.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in sys.modules if m == 'sympy' or m.startswith('roofline.derivations.questions.') and m != QUESTION_LIST))\n"
    )
    r = _python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_derive_builds_only_its_own_sheet() -> None:
    r = _python(
        "import sys, contextlib, io\n"
        "from roofline.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['derive', 'decode-floor', '--format', 'json'])\n"
        f"print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('roofline.derivations.questions.') and m != {QUESTION_LIST!r}))\n",
    )  # the modules imported do not depend on the cache: the session's (warm) cache spares a cold solve
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['decode_floor']"


def test_list_questions_titles_match_the_built_sheets(capsys: pytest.CaptureFixture[str]) -> None:
    from roofline.derivations.questions.registry import DERIVATIONS

    assert main(["list", "questions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [d.slug for d in DERIVATIONS]
    assert all(line.endswith(d.title) for line, d in zip(lines, DERIVATIONS, strict=True))


SOLVE = (
    "from roofline.derivations.questions.registry import get\n"
    "d = get('prefill-decode-crossover')\n"
    "print([(s.name, str(s.expr), s.verified) for s in d.steps if s.kind == 'solve'])\n"
)


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_the_solve_cache_gives_the_same_closed_forms_survives_races_and_corruption(tmp_path: Path) -> None:
    cold = _python(SOLVE, ROOFLINE_CACHE="off")
    # two processes racing to fill an empty cache both finish, with the same closed forms and whole entries
    procs = [subprocess.Popen([sys.executable, "-c", SOLVE], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "ROOFLINE_CACHE_DIR": str(tmp_path)}) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert cold.returncode == 0 and all(p.returncode == 0 for p in procs), outs
    assert outs[0][0] == outs[1][0] == cold.stdout
    assert not list(tmp_path.glob(".tmp-*"))
    entries = sorted(tmp_path.glob("*.json"))
    assert entries, "a run with a cache directory stores its solves"
    warm = _python(SOLVE, ROOFLINE_CACHE_DIR=str(tmp_path))
    assert cold.stdout == warm.stdout and "solve" not in cold.stderr
    for e in entries:  # a truncated or garbage entry is a miss, never an error
        e.write_bytes(b"\x80\x05garbage" if e.stat().st_size % 2 else e.read_bytes()[: e.stat().st_size // 2])
    broken = _python(SOLVE, ROOFLINE_CACHE_DIR=str(tmp_path))
    assert broken.returncode == 0 and broken.stdout == cold.stdout
    assert not list(tmp_path.glob(".tmp-*")), "no temporary files left behind"


def test_cache_keys_change_with_what_the_solve_reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sympy as sp

    x = sp.Symbol("x", positive=True)
    k = cache.key("engine", "slug", x**2)
    assert k == cache.key("engine", "slug", x**2)
    assert k != cache.key("engine", "slug", x**3)
    assert k != cache.key("engine", "slug", sp.Symbol("x") ** 2)  # assumptions are part of the key
    assert cache.key(lambda r: r[0]) != cache.key(lambda r: r[-1])
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    cache.store_expr(k, x**2, verified="symbolic")
    assert cache.load_expr(k, ("verified",)) == (x**2, {"verified": "symbolic"})
    monkeypatch.setenv("ROOFLINE_CACHE", "off")
    assert cache.load_expr(k, ("verified",)) is None


def test_an_unwritable_cache_directory_is_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(cache.CacheWarning, match="cannot be created"):
        cache.store_bytes("abc", b"1")
    assert cache.load_bytes("abc") is None


def _sweep(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sweep", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_sweep_csv_has_units_in_the_header_and_one_row_per_point(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _sweep(capsys, "decode-floor", "t_step", "--over", "batch=1:8:log2", "--over", "context=1024,32768",
                          "--hardware", "h100-sxm,h200", "--model", "llama-3.1-8b")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0
    assert rows[0] == ["hardware", "model", "batch", "context [token]", "t_step [ms]", "missing"]
    assert len(rows) == 1 + 2 * 4 * 2
    assert {r[0] for r in rows[1:]} == {"h100-sxm", "h200"}
    from roofline import api

    sheet = api.derive("decode-floor", "h200", "llama-3.1-8b", overrides=["batch=4", "context=32768"])
    exact = next(s for s in sheet.steps if s.step.name == "t_step").value.exact
    row = next(r for r in rows[1:] if r[0] == "h200" and r[2] == "4" and r[3] == "32768")
    assert float(row[4]) == pytest.approx(float(exact) * 1e3, rel=1e-9)


def test_sweep_json_reports_missing_points_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _sweep(capsys, "batch-knee", "B_max_kv", "--over", "tp=1,8", "--model", "deepseek-v3", "--hardware", "h200", "--weights", "fp8", "--format", "json")
    doc = json.loads(out)
    one, eight = doc["points"]
    assert (code == 0 and doc["inputs"] == {"tp": "1"}) or doc["inputs"]["tp"]
    assert one["value"] is None and "weights alone" in one["missing"]
    assert eight["value"] > 0 and "missing" not in eight


@pytest.mark.parametrize(("argv", "message"), [
    (["decode-floor", "t_stp", "--over", "batch=1"], "did you mean t_step"),
    (["decode-floor", "t_step", "--over", "batch=0"], "--over: batch"),
    (["decode-floor", "t_step", "--over", "batch=1", "--set", "batch=2"], "also swept"),
    (["decode-floor", "t_step", "--over", "batch=1", "--unit", "kg"], "--unit"),
    (["decode-floor", "t_step", "--over", "batch=1", "--hardware", "h100-sxm,nope"], "nope"),
    (["nope", "t_step", "--over", "batch=1"], "unknown question"),
])
def test_sweep_bad_input_is_one_line_and_no_output(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = _sweep(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1

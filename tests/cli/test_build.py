import os
from pathlib import Path

import pytest

from roofline import build as build_mod
from roofline.cli import main


def test_build_writes_every_sheet_and_is_byte_identical(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", "--out", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(["build", "--out", str(out)]) == 0
    second = {p.name: p.read_bytes() for p in out.iterdir()}
    assert first == second
    from derivations.registry import DERIVATIONS
    assert {f"{d.slug}.{ext}" for d in DERIVATIONS for ext in ("md", "tex", "json")} == set(first)


def test_check_detects_stale_and_missing(tmp_path, capsys):
    out = tmp_path / "out"
    main(["build", "--out", str(out)])
    assert main(["build", "--check", "--out", str(out)]) == 0
    (out / "decode-floor.md").write_text("stale")
    assert main(["build", "--check", "--out", str(out)]) == 1
    assert "decode-floor.md" in capsys.readouterr().err
    (out / "decode-floor.md").unlink()
    assert main(["build", "--check", "--out", str(out)]) == 1


def test_failed_build_leaves_out_untouched(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    main(["build", "--out", str(out)])
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def boom(sheet, fmt):
        if sheet.derivation.slug == "ridge-coincidence" and fmt == "json":
            raise build_mod.BuildError("render failed")
        return real(sheet, fmt)

    real = build_mod.api.render
    monkeypatch.setattr(build_mod.api, "render", boom)
    assert main(["build", "--out", str(out)]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_committed_out_is_current():
    """The same check CI runs: out/ in the repository matches a fresh build."""
    repo_out = Path(__file__).resolve().parents[2] / "out"
    if not any(repo_out.glob("*.md")):
        pytest.fail("out/ has no sheets: run `roofline build` and commit out/")
    assert build_mod.stale(repo_out, build_mod.render_all()) == []


@pytest.mark.slow
def test_build_pdf(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--pdf"]) == 0
    pdfs = sorted(p.name for p in out.glob("*.pdf"))
    assert pdfs and all((out / n).stat().st_size > 10_000 for n in pdfs)
    assert not [n for n in os.listdir(out) if n.startswith(".")]

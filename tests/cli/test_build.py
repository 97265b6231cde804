import json
import os
from pathlib import Path

import pytest

from roofline import build as build_mod
from roofline.cli import main


def _files(out: Path) -> dict[str, bytes]:
    """Every file under `out` (plots/ included) by its path relative to `out`."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_build_writes_every_sheet_and_is_byte_identical(tmp_path, built, capsys):
    """A real build equals the session's own independent render, byte for byte."""
    out = tmp_path / "out"
    assert main(["build", "--out", str(out)]) == 0
    first = _files(out)
    manifest = json.loads(first.pop(build_mod.MANIFEST))
    second = {name: data.encode() if isinstance(data, str) else data for name, data in built.items()}
    assert first == second
    assert manifest["files"] == sorted(second)  # what the next build may delete: exactly what this one wrote
    from derivations.registry import DERIVATIONS
    assert {f"{d.slug}.{ext}" for d in DERIVATIONS for ext in ("md", "tex", "json")} <= set(first)
    plots = {n for n in first if n.startswith("plots/")}
    assert plots == {f"plots/{d.slug}-{p.name}.{fmt}" for d in DERIVATIONS for p in d.plots for fmt in ("svg", "pdf")}


def test_check_detects_stale_and_missing(tmp_path, fast_build, capsys):
    out = tmp_path / "out"
    main(["build", "--out", str(out)])
    assert main(["build", "--check", "--out", str(out)]) == 0
    (out / "decode-floor.md").write_text("stale")
    assert main(["build", "--check", "--out", str(out)]) == 1
    assert "decode-floor.md" in capsys.readouterr().err
    (out / "decode-floor.md").unlink()
    assert main(["build", "--check", "--out", str(out)]) == 1


def test_failed_build_leaves_out_untouched(tmp_path, built, monkeypatch, capsys):
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setattr(build_mod, "render_all", lambda engine=None: dict(built))
        main(["build", "--out", str(out)])
    before = _files(out)

    def boom(sheet, fmt, **options):
        if sheet.derivation.slug == "ridge-coincidence" and fmt == "json":
            raise build_mod.BuildError("render failed")
        return real(sheet, fmt, **options)

    real = build_mod.api.render
    monkeypatch.setattr(build_mod.api, "render", boom)
    assert main(["build", "--out", str(out)]) == 2
    assert _files(out) == before


def test_committed_out_is_current(built):
    """The same check CI runs: out/ in the repository matches a fresh build."""
    repo_out = Path(__file__).resolve().parents[2] / "out"
    if not any(repo_out.glob("*.md")):
        pytest.fail("out/ has no sheets: run `roofline build` and commit out/")
    assert build_mod.stale(repo_out, built) == []


@pytest.mark.slow
def test_build_pdf(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--pdf"]) == 0
    pdfs = sorted(p.name for p in out.glob("*.pdf"))
    assert pdfs and all((out / n).stat().st_size > 10_000 for n in pdfs)
    assert [n for n in os.listdir(out) if n.startswith(".")] == [build_mod.MANIFEST]

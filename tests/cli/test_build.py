import json
import os
from pathlib import Path

import pytest

from roofline import build as build_mod
from roofline import out_folder as out_folder_mod
from roofline import pdfs as pdfs_mod
from roofline.build_outputs import BuildError
from roofline.cli import main


def _files(out: Path) -> dict[str, bytes]:
    """Every file under `out` (plots/ included) by its path relative to `out`."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_build_writes_every_sheet_and_is_byte_identical(tmp_path, built, monkeypatch, capsys):
    """A real build (its sheets derived and rendered in two forked workers) equals the session's own render in one process,
    byte for byte. (Its figures drawn on this machine: a build into a new folder may take the checkout's committed figures,
    drawn elsewhere, which the next test checks.)"""
    monkeypatch.setattr(build_mod, "workers", lambda: 2)
    monkeypatch.setattr(build_mod, "drawn_folder", lambda out: None)
    out = tmp_path / "out"
    assert main(["build", "--out", str(out)]) == 0
    first = _files(out)
    manifest = json.loads(first.pop(out_folder_mod.MANIFEST))
    second = {name: data.encode() if isinstance(data, str) else data for name, data in built.items()}
    assert first == second
    assert manifest["files"] == sorted(second)  # what the next build may delete: exactly what this one wrote
    from roofline.derivations.questions.registry import DERIVATIONS
    assert {f"{d.slug}.{ext}" for d in DERIVATIONS for ext in ("md", "tex", "json")} <= set(first)
    plots = {n for n in first if n.startswith("plots/")}
    assert plots == {f"plots/{d.slug}-{p.name}.{fmt}" for d in DERIVATIONS for p in d.plots for fmt in ("svg", "pdf")}


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_a_build_into_a_new_folder_takes_the_committed_figures_that_draw_its_data(tmp_path, built, monkeypatch):
    """A fresh clone's build into a new folder takes a figure from the checkout's committed out/ where that file draws the
    figure's data (its data digest: renderers.plots.same_plot), so its bytes may be another machine's matplotlib's; every
    other file is the session's own render byte for byte."""
    from roofline.renderers.plots import same_plot

    committed = build_mod.drawn_folder(tmp_path / "new")
    assert committed is not None and (committed / "decode-floor.md").is_file()
    assert main(["build", "--out", str(tmp_path / "new")]) == 0
    first = _files(tmp_path / "new")
    first.pop(out_folder_mod.MANIFEST)
    second = {name: data.encode() if isinstance(data, str) else data for name, data in built.items()}
    assert sorted(first) == sorted(second)
    assert {n: v for n, v in first.items() if not n.startswith("plots/")} == {n: v for n, v in second.items() if not n.startswith("plots/")}
    assert all(same_plot(first[n], second[n]) for n in first if n.startswith("plots/"))


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_a_build_with_unchanged_code_makes_its_sheets_on_the_light_path_byte_for_byte(built, monkeypatch):
    """A build on the full path (forced) remembers each sheet and its figures' files (roofline.compiled.remember_built); the
    next build with the same code makes every sheet on the light path (the full path made to fail proves it) and writes the
    same files as the session's render in one process."""
    from roofline import api, compiled

    monkeypatch.setattr(build_mod, "workers", lambda: 2)
    real = compiled.built
    monkeypatch.setattr(compiled, "built", lambda slug, engine, drawn=None: None)
    assert build_mod.render_all() == built
    monkeypatch.setattr(compiled, "built", real)
    monkeypatch.setattr(api, "derive", lambda *a, **k: pytest.fail("a sheet took the full path"))
    assert build_mod.render_all() == built


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_workers_fail_with_the_first_failed_sheet_and_time_the_rest(tmp_path, sheets, monkeypatch):
    """A sheet failing in a worker fails the build with the error of the first failed sheet in the registry's order (as
    one process would stop there); a build that succeeds records each sheet's seconds, and the next starts the longest first."""
    from roofline.derivations.questions import registry

    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build_mod, "workers", lambda: 2)
    three = ("ridge-coincidence", "joules-per-token", "flash-attention-io")
    monkeypatch.setattr(registry, "SLUGS", three)
    derive = build_mod.api.derive

    def failing(slug, **kwargs):
        if slug != "ridge-coincidence":
            raise BuildError(f"{slug}: derivation failed")
        return derive(slug, **kwargs)

    monkeypatch.setattr(build_mod.api, "derive", failing)
    with pytest.raises(BuildError, match=r"^joules-per-token: derivation failed$"):
        build_mod.render_all()
    assert build_mod._longest_first(list(three)) == list(three)  # no timing from a failed build: the registry's order
    monkeypatch.setattr(build_mod.api, "derive", derive)
    files = build_mod.render_all()
    assert files == build_mod.render_all([s for s in sheets if s.derivation.slug in three])
    seconds = build_mod.cache.load_json(build_mod.cache.key(*build_mod._SECONDS_KEY), "build seconds")
    assert set(seconds) == set(three) and all(v > 0 for v in seconds.values())
    assert build_mod._longest_first(list(three)) == sorted(three, key=lambda s: -seconds[s])


def test_check_detects_stale_and_missing(tmp_path, fast_build, capsys):
    out = tmp_path / "out"
    main(["build", "--out", str(out)])
    assert main(["build", "--check", "--out", str(out)]) == 0
    (out / "decode-floor.md").write_text("stale")
    assert main(["build", "--check", "--out", str(out)]) == 1
    assert "decode-floor.md" in capsys.readouterr().err
    (out / "decode-floor.md").unlink()
    assert main(["build", "--check", "--out", str(out)]) == 1


def test_failed_build_leaves_out_untouched(tmp_path, sheets, built, monkeypatch, capsys):
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(built))
        main(["build", "--out", str(out)])
    before = _files(out)
    render_all = build_mod.render_all
    # the real rendering (of the session's sheets, derived once), failing at one sheet's JSON
    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: render_all(sheets, **kwargs))

    def boom(sheet, fmt, **options):
        if sheet.derivation.slug == "ridge-coincidence" and fmt == "json":
            raise BuildError("render failed")
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
    assert [n for n in os.listdir(out) if n.startswith(".")] == [out_folder_mod.MANIFEST]


# --- progress and parallel, cached PDFs (issue 25) ---------------------------------------------------------------------


class _Terminal:
    """A stderr that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.lines += [x for x in text.splitlines() if x]
        return len(text)

    def flush(self) -> None:
        pass


def _fake_pdflatex(monkeypatch, calls: list[str], running: list[int]):
    import threading
    import time

    lock = threading.Lock()

    def compile_pdf(tex, name, graphics=None):
        with lock:
            calls.append(name)
            running[0] += 1
            running[1] = max(running[1], running[0])
        time.sleep(0.05)  # long enough for the other workers to start
        with lock:
            running[0] -= 1
        return b"%PDF-1.5 " + name.encode()

    monkeypatch.setattr(pdfs_mod, "compile_pdf", compile_pdf)
    monkeypatch.setattr(pdfs_mod, "workers", lambda: 4)
    monkeypatch.setattr(pdfs_mod, "_pdflatex_version", lambda: "pdfTeX (test)")


def test_build_says_what_it_does_on_a_terminal_and_nothing_otherwise(tmp_path, fast_build, monkeypatch, capsys):
    import sys

    calls: list[str] = []
    _fake_pdflatex(monkeypatch, calls, [0, 0])
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["build", "--out", str(tmp_path / "a"), "--pdf"]) == 0
    pdfs = len([n for n in fast_build if n.endswith(".tex")])
    compiled = [x for x in terminal.lines if " compiled " in x]
    assert len(compiled) == pdfs and f"[{pdfs}/{pdfs}]" in compiled[-1]
    assert any(f"compiling {pdfs} PDFs, 4 at a time" in x for x in terminal.lines)
    assert terminal.lines[-1].endswith(f"writing {len(fast_build) + pdfs} files")
    assert all(x.startswith("roofline: ") for x in terminal.lines)
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main(["build", "--out", str(tmp_path / "b"), "--pdf", "--quiet"]) == 0
    assert quiet.lines == []
    monkeypatch.undo()
    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(fast_build))
    _fake_pdflatex(monkeypatch, calls, [0, 0])
    capsys.readouterr()
    assert main(["build", "--out", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().err == ""  # stderr is not a terminal here: nothing but errors and warnings


def test_pdfs_compile_in_parallel_and_again_only_when_their_inputs_change(tmp_path, fast_build, monkeypatch):
    calls: list[str] = []
    running = [0, 0]
    _fake_pdflatex(monkeypatch, calls, running)
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    first = pdfs_mod.compile_pdfs(dict(fast_build))
    texs = sorted(n[:-4] for n in fast_build if n.endswith(".tex"))
    assert sorted(calls) == texs and sorted(n[:-4] for n in first) == texs
    assert running[1] > 1  # several pdflatex runs at once
    assert calls[0] == "book"  # the longest document starts first
    calls.clear()
    assert pdfs_mod.compile_pdfs(dict(fast_build)) == first and calls == []  # nothing changed: every PDF from the cache
    changed = dict(fast_build)
    changed["decode-floor.tex"] = str(changed["decode-floor.tex"]).replace("decode", "Decode", 1)
    plot = next(n for n in fast_build if n.startswith("plots/batch-knee-") and n.endswith(".pdf"))
    changed[plot] = bytes(changed[plot]) + b"\n% another drawing"
    pdfs_mod.compile_pdfs(changed)
    assert sorted(calls) == ["batch-knee", "book", "decode-floor"]  # its .tex, or a figure it includes, changed


def test_a_failed_pdf_fails_the_build_naming_the_first_sheet(tmp_path, fast_build, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(pdfs_mod, "_pdflatex_version", lambda: "pdfTeX (test)")

    def compile_pdf(tex, name, graphics=None):
        if name in ("int4-flip", "batch-knee"):
            raise BuildError(f"{name}.tex: pdflatex failed: ! Undefined control sequence.")
        return b"%PDF-1.5"

    monkeypatch.setattr(pdfs_mod, "compile_pdf", compile_pdf)
    with pytest.raises(BuildError, match=r"^batch-knee\.tex: pdflatex failed"):
        pdfs_mod.compile_pdfs(dict(fast_build))

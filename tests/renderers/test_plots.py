"""Plots: drawn for every sheet that declares them, byte-identical twice, and drawing the sheet's own numbers."""

from __future__ import annotations

import math
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest
from roofline.derivations.engine.declare import DerivationError, Plot, Step, derivation
from roofline.derivations.engine.sheet import Missing, Sheet, evaluate
from roofline.derivations.engine.symbols import Symbols
from roofline.derivations.physics import glossary as gl
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.renderers import latex, markdown, notebook, plots
from roofline.renderers.notebook import NotebookSheet, NotebookValue
from roofline.renderers.value_text import whole
from roofline.specs.catalog import HARDWARE_DIR, MODELS_DIR
from roofline.units import Quantity, UnitMismatchError, unit

from roofline import api
from roofline import build as build_mod
from roofline import out_folder as out_folder_mod
from roofline import pdfs as pdfs_mod
from roofline.cli import main

PLOTTED = [d.slug for d in DERIVATIONS if d.plots]
#: one sheet per kind of figure: drawn twice with the cache off (drawing every figure twice would double the suite's plot time)
ONE_OF_EACH_KIND = sorted({p.kind: d.slug for d in reversed(DERIVATIONS) for p in d.plots}.values())
REL = 1e-9


@pytest.fixture(scope="module")
def drawn(default_sheets, default_figures) -> dict[str, tuple[tuple[plots.Figure, ...], dict[str, bytes]]]:
    """Every declared plot, as data and as files, for each sheet's default context (drawn once for the module; through the
    cache, which the build's tests then share: `test_two_renders_are_byte_identical` draws again with the cache off)."""
    return {slug: (default_figures[slug], api.plot_files(default_sheets[slug])) for slug in PLOTTED}


@pytest.mark.parametrize("slug", PLOTTED)
def test_every_declared_plot_is_drawn_as_svg_and_pdf(slug, drawn):
    figures, files = drawn[slug]
    d = api.get(slug)
    assert [f.name for f in figures] == [p.name for p in d.plots]
    assert sorted(files) == sorted(f"plots/{slug}-{p.name}.{fmt}" for p in d.plots for fmt in ("svg", "pdf"))
    for f in figures:
        svg, pdf = files[f"plots/{f.stem}.svg"], files[f"plots/{f.stem}.pdf"]
        assert svg.startswith(b"<?xml") and b"<svg" in svg and pdf.startswith(b"%PDF")
        assert plots.digest_of(svg) == plots.digest_of(pdf) == plots.digest(f)
        assert all(p.curves or p.cells or p.roofs or p.bars or p.points for p in f.panels)


@pytest.mark.parametrize("slug", ONE_OF_EACH_KIND)
def test_two_renders_are_byte_identical(slug, drawn, default_sheets, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE", "off")  # both drawn by matplotlib, not one read back
    again = api.plot_files(default_sheets[slug])
    assert again == drawn[slug][1]


def test_a_cached_plot_is_the_drawn_plot(drawn, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    fig = drawn["moe-experts"][0][0]
    first, second = plots.render(fig, "svg"), plots.render(fig, "svg")
    assert first == second == drawn["moe-experts"][1][f"plots/{fig.stem}.svg"]
    assert len(list(tmp_path.iterdir())) == 2  # laid out once, both formats kept


def test_a_drawing_cached_with_fonts_at_other_paths_is_not_read(drawn, tmp_path, monkeypatch):
    """matplotlib's PDF writer orders the fonts it embeds by file path: the same figure drawn in a virtual environment in
    another folder (Computer Modern sorting before the system's Latin Modern) is other bytes. A cache shared with such a
    drawing (a home folder carried to a clone elsewhere) must not hand its bytes to this one."""
    import matplotlib
    from matplotlib import font_manager
    from roofline.derivations.engine import cache
    from roofline.renderers import plot_draw

    setup = plot_draw.drawing_setup()
    assert matplotlib.get_data_path() in setup.splitlines()  # the Computer Modern and DejaVu files matplotlib ships
    family = plot_draw.fonts_in_use()
    family_files = {f.fname for f in font_manager.fontManager.ttflist if f.name == family}
    assert family_files and family_files <= set(setup.splitlines())
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    fig = drawn["moe-experts"][0][0]
    ours = drawn["moe-experts"][1][f"plots/{fig.stem}.pdf"]
    elsewhere = ours.replace(b"%PDF-1.4\n", b"%PDF-1.4\n% drawn elsewhere\n", 1)
    assert elsewhere != ours and plots.whole_file(elsewhere, "x.pdf") and plots.digest_of(elsewhere) == plots.digest(fig)
    monkeypatch.setattr(plot_draw, "drawing_setup", lambda: setup.replace(matplotlib.get_data_path(), "/a/venv/elsewhere"))
    cache.store_bytes(plots._cache_key(fig, "pdf"), elsewhere)
    cache.store_bytes(plots._cache_key(fig, "svg"), drawn["moe-experts"][1][f"plots/{fig.stem}.svg"])
    assert plots.render(fig, "pdf") == elsewhere  # read back under the setup it was drawn with
    monkeypatch.undo()
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    assert plots.render(fig, "pdf") == ours


def test_plot_files_carry_no_date_creator_or_other_fonts(drawn):
    for slug in PLOTTED:
        for name, data in drawn[slug][1].items():
            if name.endswith(".svg"):
                assert b"<dc:date>" not in data and b"Matplotlib v" not in data and b"<dc:creator>" not in data, name
                # glyphs as paths, in the house fonts only: the text font and Computer Modern math, never matplotlib's DejaVu Sans
                assert b'<path id="DejaVuSans' not in data, name
            else:
                assert b"/CreationDate" not in data and b"/Producer" not in data and b"/Creator" not in data, name


def test_the_digest_changes_with_the_data(drawn):
    fig = drawn["batch-knee"][0][0]
    panel = fig.panels[0]
    moved = plots.Figure(fig.slug, fig.name, fig.kind, fig.caption, fig.alt,
                         (plots.Panel(**{**panel.__dict__, "lines": (panel.lines[0].__class__(panel.lines[0].label, "x", panel.lines[0].value * 1.01),
                                                                     *panel.lines[1:])}),))
    assert plots.digest(moved) != plots.digest(fig)
    assert not plots.same_plot(plots.render(moved, "svg"), drawn["batch-knee"][1][f"plots/{fig.stem}.svg"])


# --- the numbers drawn are the sheet's numbers ----------------------------------------------------


def _marked_at(sheet: Sheet, name: str) -> float:
    """Where a figure marks a step's value: a count at the whole number the sheet runs, anything else at its value."""
    st = next(st for st in sheet.steps if st.step.name == name)
    n = whole(st.step, st.value)
    return st.value.float if n is None else float(n)


def _line(fig: plots.Figure, step: str) -> plots.Line:
    return next(ln for p in fig.panels for ln in p.lines if ln.step == step)


def _in(value, u, shown: str) -> float:
    return float(Quantity(float(value), u).to(unit(shown)).magnitude)


def test_roofline_ridges_equal_ridge_coincidence_and_kernels_sit_on_the_roof(drawn):
    fig = drawn["decode-op-ranking"][0][0]
    chips = api.get("decode-op-ranking").hardware
    (panel,) = fig.panels  # one readable panel: the sheet's chip, the others' ceilings beside it
    assert len(panel.roofs) == len(chips) == 3 and panel.roofs[0].own
    for chip, roof in zip(chips, panel.roofs, strict=True):
        ridge = api.derive("ridge-coincidence", hardware=chip, model="llama-3.1-70b").results["ridge_point"].float
        assert roof.ridge == pytest.approx(ridge, rel=REL)
        assert max(roof.y) == pytest.approx(roof.peak, rel=REL)
        assert api.hardware(chip).name.endswith(roof.label) or roof.label in api.hardware(chip).name
    for pt in panel.points:  # each kernel at its intensity on the roof of the chip it sits on, never above it
        roof = panel.roofs[pt.roof]
        assert pt.y == pytest.approx(min(roof.peak, roof.peak / roof.ridge * pt.x), rel=1e-6), pt
    gemm = {pt.batch: pt for pt in panel.points if pt.step == "intensity_o"}
    attention = {pt.batch: pt for pt in panel.points if pt.step == "intensity_attn"}
    assert gemm["$B$ = 1,024"].x > 100 * gemm["$B$ = 1"].x  # the weight GEMMs climb with the batch
    assert attention["$B$ = 1,024"].x == pytest.approx(attention["$B$ = 1"].x, rel=1e-3)  # attention does not move


def test_roofline_shows_the_batch_8_flip(drawn, default_sheets):
    """At the sheet's flip batch the tied weight GEMMs land on attention's intensity: the point the teaser makes."""
    sheet = default_sheets["decode-op-ranking"]
    assert sheet.results["B_flip"].float == pytest.approx(8, rel=1e-9)
    (panel,) = drawn["decode-op-ranking"][0][0].panels
    at_flip = [pt for pt in panel.points if pt.batch == r"$B_{\mathrm{flip}}$ = 8" and pt.roof == 0]
    gemms = [pt for pt in at_flip if pt.label == "weight GEMMs"]
    attention = next(pt for pt in at_flip if pt.step == "intensity_attn")
    assert gemms and all(pt.x == pytest.approx(attention.x, rel=0.02) for pt in gemms)


def test_roofline_attention_point_is_the_sheets_attention_intensity(drawn, default_sheets):
    sheet = default_sheets["decode-op-ranking"]
    point = next(pt for pt in drawn["decode-op-ranking"][0][0].panels[0].points if pt.step == "intensity_attn" and pt.batch == "$B$ = 1")
    assert point.x == pytest.approx(sheet.results["intensity_attn"].float, rel=REL)  # the sheet's default batch is 1


def test_knee_ceiling_and_capacity_marks_are_batch_knees_results(drawn, default_sheets):
    sheet = default_sheets["batch-knee"]
    fig = drawn["batch-knee"][0][0]
    # a count is marked at the whole number its label gives, the batch the sheet runs (issue 40 item 4)
    assert _line(fig, "B_knee").value == _marked_at(sheet, "B_knee") == math.ceil(sheet.results["B_knee"].float)
    assert _line(fig, "B_max_kv").value == _marked_at(sheet, "B_max_kv") == math.floor(sheet.results["B_max_kv"].float)
    ceiling = sheet.results["throughput_ceiling"]
    assert _line(fig, "throughput_ceiling").value == pytest.approx(_in(ceiling.float, ceiling.unit, fig.panels[0].units[1]), rel=REL)
    assert _line(fig, "B_knee").axis == "x" and _line(fig, "throughput_ceiling").axis == "y"


def test_crossover_and_expert_marks_are_the_sheets_results(drawn, default_sheets):
    ttft = drawn["prefill-decode-crossover"][0][0]
    assert _line(ttft, "T_cross").value == _marked_at(default_sheets["prefill-decode-crossover"], "T_cross")
    moe = default_sheets["moe-experts"]
    experts = drawn["moe-experts"][0][0]
    assert _line(experts, "B_half").value == _marked_at(moe, "B_half")


@pytest.mark.parametrize("slug", [s for s in PLOTTED if any(p.kind == "sweep" for p in api.get(s).plots)])
def test_swept_curves_equal_the_sheet_evaluated_at_sampled_inputs(slug, drawn, default_sheets):
    sheet = default_sheets[slug]
    d = sheet.derivation
    for fig, decl in zip(drawn[slug][0], d.plots, strict=True):
        if decl.kind != "sweep":
            continue
        panel = fig.panels[0]
        for curve in panel.curves:
            for i in (0, len(curve.x) // 3, len(curve.x) - 1):
                x = curve.x[i]
                shown = int(x) if float(x).is_integer() else repr(float(x))  # a count swept whole, a share (a hit rate) as drawn
                value = evaluate(d, sheet.context.with_overrides(**{decl.x: f"{shown} {d.symbols.info(_input(d, decl.x).symbol).unit}"}),
                                 [curve.step])[curve.step]
                if isinstance(value, Missing):  # no value there (a model that does not fit on one GPU): a gap in the curve
                    assert math.isnan(curve.y[i]), (slug, curve.step, x)
                    continue
                expected = _in(value, d.symbols[curve.step].unit, panel.units[1])
                assert curve.y[i] == pytest.approx(expected, rel=1e-9), (slug, curve.step, x)


def _input(d, name):
    return next(i for i in d.inputs if i.name == name)


def test_ttft_curve_is_flat_below_the_crossover_and_rises_past_it(drawn):
    panel = drawn["prefill-decode-crossover"][0][0].panels[0]
    ttft = next(c for c in panel.curves if c.step == "ttft")
    cross = next(ln.value for ln in panel.lines if ln.step == "T_cross")
    below = [y for x, y in zip(ttft.x, ttft.y, strict=True) if x < cross / 2]
    above = [y for x, y in zip(ttft.x, ttft.y, strict=True) if x > cross * 4]
    assert max(below) == pytest.approx(min(below), rel=0.01)  # the weight read (plus a few KV writes): nearly the same for any short prompt
    assert min(above) > 2 * max(below)


@pytest.mark.parametrize("slug", ["batch-knee", "joules-per-token"])
def test_the_shading_starts_at_the_printed_largest_batch_that_fits(slug, drawn, default_sheets):
    """Regression (issue 23): the shading began where the whole HBM is full (near 52) while the sheet prints 41 sequences."""
    sheet = default_sheets[slug]
    printed = sheet.results["B_max_kv"] if "B_max_kv" in sheet.results else next(s.value for s in sheet.steps if s.step.name == "B_max_kv")
    panel = drawn[slug][0][0].panels[0]
    ((lo, hi),) = panel.overflow
    assert lo == printed.float and hi == panel.curves[0].x[-1]
    assert panel.overflow_label.endswith(f"= {int(printed.float):,}")
    assert _line(drawn[slug][0][0], "B_max_kv").value == lo
    assert not drawn["prefill-decode-crossover"][0][0].panels[0].overflow  # a prefill sheet does not compute the fit


def test_heatmap_cells_are_the_speedup_table(drawn, default_sheets):
    sheet = default_sheets["speculative-decoding"]
    panel = drawn["speculative-decoding"][0][0].panels[0]
    table = sheet.tables[1]
    columns = [n for n, _ in table.columns]
    declared = sheet.derivation.plots[0].y
    for r, (_, cells, _) in enumerate(table.rows):
        for j, name in enumerate(declared):
            assert panel.cells[r][j] == pytest.approx(cells[columns.index(name)].float, rel=REL)
    assert panel.columns == tuple(str(g) for g in range(len(declared)))  # the draft lengths the At steps set
    assert all(row[0] == pytest.approx(1, rel=REL) for row in panel.cells)  # drafting nothing is plain decode


def test_a_users_chip_gets_its_own_roofline(tmp_path):
    chip = (HARDWARE_DIR / "h100-sxm.toml").read_text().replace('name = "NVIDIA H100 SXM5 80GB"', 'name = "My GPU"')
    (tmp_path / "my-gpu.toml").write_text(chip)
    sheet = api.derive("decode-op-ranking", hardware=str(tmp_path / "my-gpu.toml"), model="llama-3.1-8b")
    (fig,) = plots.figures(sheet, api.resolve_row)
    assert [r.label for r in fig.panels[0].roofs] == ["My GPU"]
    knee = plots.figures(api.derive("batch-knee", hardware="b200", overrides=["context=32768"]), api.resolve_row)[0]
    assert "B200" in knee.panels[0].title
    assert _line(knee, "B_knee").value == _marked_at(api.derive("batch-knee", hardware="b200", overrides=["context=32768"]), "B_knee")


# --- sheets link their plots ----------------------------------------------------------------------


@pytest.mark.parametrize("slug", PLOTTED)
def test_markdown_and_latex_link_the_plot_files(slug, drawn, default_sheets):
    sheet = default_sheets[slug]
    md, tex = markdown.render(sheet, plots="plots"), latex.render(sheet, plots="plots")
    names = set(drawn[slug][1])
    assert set(re.findall(r"\]\((plots/[^)]+\.svg)\)", md)) == {n for n in names if n.endswith(".svg")}
    assert set(re.findall(r"\\includegraphics\[[^\]]*\]\{([^}]+)\}", tex)) == {n for n in names if n.endswith(".pdf")}
    assert "## Plots" not in markdown.render(sheet) and "includegraphics" not in latex.render(sheet)


def test_sheets_without_plots_render_as_before(default_sheets):
    sheet = default_sheets["decode-floor"]
    bp = replace(sheet.blueprint, plots=())
    bare = replace(sheet, derivation=replace(sheet.derivation, blueprint=bp), blueprint=bp)
    assert markdown.render(bare, plots="plots") == markdown.render(bare)
    assert api.plot_files(bare) == {}


def test_derive_writes_plots_where_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["derive", "moe-experts", "--plots", "figs"]) == 0
    out = capsys.readouterr().out
    assert "](figs/moe-experts-experts.svg)" in out
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["moe-experts-experts.pdf", "moe-experts-experts.svg"]
    assert main(["derive", "moe-experts", "--plots", "my figs"]) == 2
    assert "--plots" in capsys.readouterr().err


# --- the build: plots/ is the build's own folder, compared by data --------------------------------


def test_stale_compares_plot_files_by_their_data(tmp_path):
    fig_a = b"<svg><dc:description>roofline-plot-data sha256:" + b"a" * 64 + b"</dc:description></svg>"
    same_data_other_bytes = b"<svg version='x'><dc:description>roofline-plot-data sha256:" + b"a" * 64 + b"</dc:description></svg>"
    other_data = fig_a.replace(b"a" * 64, b"b" * 64)
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "x-y.svg").write_bytes(same_data_other_bytes)
    assert build_mod.stale(tmp_path, {"plots/x-y.svg": fig_a}) == []
    (tmp_path / "plots" / "x-y.svg").write_bytes(other_data)
    assert build_mod.stale(tmp_path, {"plots/x-y.svg": fig_a}) == ["plots/x-y.svg"]
    assert build_mod.stale(tmp_path, {"plots/z.svg": fig_a}) == ["plots/z.svg"]


def test_a_build_replaces_the_plots_folder_whole(tmp_path):
    out = tmp_path / "out"
    out_folder_mod.write_atomically(out, {"a.md": "x", "plots/old.svg": b"1"})
    out_folder_mod.write_atomically(out, {"a.md": "x", "plots/new.svg": b"2"})
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["new.svg"]  # a plot the last build wrote and this one does not


# --- declarations are checked when the derivation is built -----------------------------------------


def _with_plot(p: Plot):
    t = Step("t", gl.P_active * gl.b_w / gl.beta, "s", "why", title="Time")
    return derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), [t], ["t"], plots=[p])


def test_a_plot_of_an_unknown_step_is_refused():
    with pytest.raises(DerivationError, match="not steps"):
        _with_plot(Plot("p", "sweep", "A plot.", title="T.", x="batch", y=("nope",)))


def test_a_marked_line_in_the_wrong_unit_is_refused():
    with pytest.raises(UnitMismatchError, match="horizontal line t"):
        b = Step("b", gl.B * gl.q / gl.u_token, "1", "why", title="Batch")
        t = Step("t", gl.P_active * gl.b_w / gl.beta + 0 * b.s, "s", "why", title="Time")
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), [b, t], ["t"], plots=[Plot("p", "sweep", "A plot.", title="T.", x="batch", y=("b",), hlines=("t",))])


def test_a_plot_name_must_be_a_file_stem():
    with pytest.raises(DerivationError, match="plot name"):
        _with_plot(Plot("a b", "sweep", "A plot.", title="T.", x="batch", y=("t",)))


# --- notebooks -------------------------------------------------------------------------------------


def test_a_solved_sheet_shows_itself_in_a_notebook():
    sheet = api.derive("decode-floor", hardware="h200", model="llama-3.1-70b", overrides=["batch=8"])
    assert isinstance(sheet, NotebookSheet)
    assert sheet._repr_markdown_() == api.render(sheet, "md")
    tex = sheet._repr_latex_()
    assert tex.startswith("$$\n\\begin{aligned}") and tex.endswith("\\end{aligned}\n$$")
    assert "\\qty" not in tex and "\\si{" not in tex  # MathJax and nbconvert have no siunitx
    assert tex.count("&=") == len(sheet.steps) + len(sheet.results)
    first = sheet.steps[0]
    assert tex.split(" \\\\\n")[0].split("\\begin{aligned}\n")[1].startswith(first.latex + " &= ")


def test_a_result_shows_its_value_with_its_unit():
    sheet = api.derive("decode-floor", hardware="h200", model="llama-3.1-70b")
    v = sheet.results["t_step"]
    assert isinstance(v, NotebookValue)
    seconds = v.float
    text = str(v)
    number, unit_text = text.split()
    assert Quantity(float(number.replace(",", "")), unit_text).to("s").magnitude == pytest.approx(seconds, rel=1e-3)
    assert "\\mathrm{" + unit_text + "}" in v._repr_latex_()
    assert v._repr_markdown_().startswith(number)


def test_a_missing_result_says_why_in_a_notebook():
    sheet = api.derive("ridge-coincidence", hardware="h100-sxm", model="llama-3.1-8b", overrides=["context=1"])
    missing = [v for v in sheet.results.values() if v.missing]
    for v in missing:
        assert str(v).startswith(v.missing.kind + ":")
        assert v.missing.kind in v._repr_latex_()


def test_the_notebook_sheet_is_the_solved_sheet(default_sheets):
    sheet = default_sheets["batch-knee"]
    base = Sheet(**{f.name: getattr(sheet, f.name) for f in fields(Sheet)})
    assert type(base) is Sheet and notebook.wrap(sheet) is sheet
    wrapped = notebook.wrap(base)
    assert wrapped.steps == sheet.steps and wrapped.tables == sheet.tables
    assert api.render(wrapped, "md") == api.render(base, "md") == api.render(sheet, "md")


@pytest.mark.slow
@pytest.mark.parametrize("slug", PLOTTED)
def test_a_sheet_with_its_plots_compiles_without_overfull_boxes(slug, drawn, default_sheets):
    """The .tex that `build` writes includes the plot PDFs: it compiles with them beside it, as build --pdf does."""
    tex = latex.render(default_sheets[slug], plots="plots")
    graphics = {n: b for n, b in drawn[slug][1].items() if n.endswith(".pdf")}
    pdf, log = pdfs_mod.compile_pdf_with_log(tex, slug, graphics)
    assert pdf.startswith(b"%PDF")
    assert [line for line in log.splitlines() if line.startswith("Overfull")] == []
    assert all(f"<{name}>" in log or name in log for name in graphics)  # pdflatex read every plot


def test_the_readme_notebook_example_runs(tmp_path, monkeypatch):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Notebooks", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(block.strip().splitlines()) == 3
    (tmp_path / "config.json").write_text((MODELS_DIR / "llama-3.1-8b.json").read_text())
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)  # the README's own text, not user input
    assert isinstance(scope["sheet"], NotebookSheet)
    assert scope["sheet"].context.model.name == "config"

"""Figures say the sheet's numbers (issue 23): every mark, bar, point and shading boundary drawn is the sheet's own value.

These tests read the figures as data (`renderers.plots.figures`), without drawing: test_plots draws the files.
"""

from __future__ import annotations

import re

import pytest
import sympy as sp
from roofline.derivations.engine.declare import DerivationError, Plot, Step, derivation
from roofline.derivations.engine.sheet import Missing, evaluate
from roofline.derivations.engine.symbols import Symbols
from roofline.derivations.physics import glossary as gl
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.renderers import plot_draw, plots, value_text
from roofline.renderers.numbers import FIGURE_SIGNIFICANT_FIGURES, plain
from roofline.renderers.value_text import whole
from roofline.units import Quantity, UnitMismatchError, unit

from roofline import api

#: The sheets issue 23 names as shapes, plus the six that had a plot before it.
SHAPES = ("ridge-coincidence", "attention-intensity", "int4-flip", "decode-floor", "model-limits", "mbu-diagnosis", "batch1-gap",
          "flash-attention-io", "hardware-upgrade", "headline-check", "mla-absorption", "mbu-definition", "flops-per-token",
          "decode-op-ranking", "prefill-decode-crossover", "batch-knee", "moe-experts", "joules-per-token", "speculative-decoding")
REL = 1e-9


@pytest.fixture(scope="module")
def figs(default_sheets, default_figures) -> dict[str, tuple]:
    """Every sheet and its figures as data, for its default context."""
    return {slug: (default_sheets[slug], default_figures[slug]) for slug in default_sheets}


def _in(value: float, u, shown: str) -> float:
    return float(Quantity(float(value), u).to(unit(shown) if shown else unit("1")).magnitude)


def _value(sheet, name):
    """A step's or an input's value on the sheet (its declared unit), or None where it has none."""
    for st in sheet.steps:
        if st.step.name == name:
            return None if st.value.missing else st.value
    return next(i.value for i in sheet.inputs if i.name == name)


def test_a_figure_for_every_sheet_whose_argument_is_a_shape():
    with_plots = {d.slug for d in DERIVATIONS if d.plots}
    assert set(SHAPES) <= with_plots
    assert len(with_plots) >= 17
    kinds = {(d.slug, p.name): p.kind for d in DERIVATIONS for p in d.plots}
    assert kinds[("model-limits", "validation")] == "scatter"  # the validation: predicted against measured
    assert {"sweep", "roofline", "heatmap", "bars", "stack", "scatter"} == set(kinds.values())
    # the rooflines share one figure type: every sheet that places kernels by their intensity draws it
    assert {s for (s, _), k in kinds.items() if k == "roofline"} == {"decode-op-ranking", "attention-intensity", "ridge-coincidence",
                                                                    "mla-absorption"}


def test_every_sheet_marks_the_figure_that_is_its_answer():
    for d in DERIVATIONS:
        assert any(p.answer for p in d.plots), d.slug


def _printed(sheet, name: str, v) -> str:
    """A value's number as the sheet prints it (renderers.view: a count whole, rounded as its step says)."""
    d = sheet.derivation
    n = value_text.whole(d.step(name), v) if name in d.expanded else None
    return plain(v.exact if n is None else sp.Integer(n), v.unit, v.display_unit, FIGURE_SIGNIFICANT_FIGURES).split(" ")[0]


def test_every_title_states_the_finding_with_the_sheets_values(figs):
    for slug, (_, figures) in figs.items():
        for fig in figures:
            assert fig.title and "{" not in re.sub(r"\$[^$]*\$", "", fig.title), (slug, fig.title)
    sheet, (fig,) = figs["batch-knee"]
    r = sheet.results
    for name in ("B_knee", "throughput_ceiling", "B_max_kv"):
        assert _printed(sheet, name, r[name]) in fig.title
    assert "68.3" not in fig.title and "69" in fig.title  # the knee is a count of sequences: whole, as the sheet prints it (68.3 rounded up)
    assert "41" in fig.title  # the largest batch that fits, as the sheet prints it


def test_every_marked_line_is_the_sheets_value(figs):
    checked = 0
    for slug, (sheet, figures) in figs.items():
        d = sheet.derivation
        for fig, decl in zip(figures, d.plots, strict=True):
            panel = fig.panels[0]
            for ln in panel.lines:
                v = _value(sheet, ln.step)
                assert v is not None, (slug, ln.step)
                # a count is drawn at the whole number its label gives (issue 40 item 4), anything else at its value
                step = next((st.step for st in sheet.steps if st.step.name == ln.step), None)
                n = whole(step, v) if step is not None else None
                x = v.float if n is None else float(n)
                if (fig.kind == "sweep" and ln.axis == "x") or fig.kind == "scatter":
                    expected = x
                elif fig.kind == "sweep":
                    expected = _in(x, v.unit, panel.units[1])
                else:
                    expected = _in(x, v.unit, panel.units[0])
                assert ln.value == pytest.approx(expected, rel=REL), (slug, decl.name, ln.step)
                # its label prints the value as the sheet does: three significant figures, a count whole
                assert _printed(sheet, ln.step, v) in ln.label, (slug, ln.label)
                checked += 1
            for bar in panel.bars:
                for m in bar.marks:
                    assert m.step in d.expanded
    assert checked >= 20


def test_roofline_points_are_the_sheets_intensities_on_their_roofs(figs):
    for slug in ("decode-op-ranking", "attention-intensity", "ridge-coincidence", "mla-absorption"):
        sheet, figures = figs[slug]
        (panel,) = figures[0].panels
        for roof, ctx in zip(panel.roofs, plots._chips(sheet, api.resolve_row), strict=True):
            ridge = evaluate(api.get("ridge-coincidence"), ctx, ["ridge_point"])["ridge_point"]
            assert roof.ridge == pytest.approx(float(ridge), rel=REL), slug
        own = [pt for pt in panel.points if pt.roof == 0 and "," not in pt.label.replace(", at every batch", "")]
        assert own, slug
        for pt in own:
            roof = panel.roofs[0]
            assert pt.y == pytest.approx(min(roof.peak, roof.peak / roof.ridge * pt.x), rel=1e-6)
            batch = re.search(r"= ([\d,]+)$", pt.batch)
            ctx = sheet.context.with_overrides(batch=batch.group(1).replace(",", "")) if batch else sheet.context
            assert pt.x == pytest.approx(float(evaluate(sheet.derivation, ctx, [pt.step])[pt.step]), rel=REL), (slug, pt)
    # a row's point is the row's value: MLA attention on the attention-intensity sheet
    sheet, figures = figs["attention-intensity"]
    mla = next(pt for pt in figures[0].panels[0].points if "DeepSeek" in pt.label)
    assert mla.x == pytest.approx(api.derive("attention-intensity", model="deepseek-v3").results["intensity_attention"].float, rel=REL)


def test_the_ridge_coincidence_point_sits_at_the_ridge(figs):
    sheet, (fig,) = figs["ridge-coincidence"]
    at_cross = next(pt for pt in fig.panels[0].points if pt.step == "intensity_gemm" and "B^{*}" in pt.batch)
    assert pt_batch(at_cross) == -(-int(sheet.results["B_cross"].float * 10**9) // 10**9)  # the first whole batch at or past B*
    assert at_cross.x == pytest.approx(sheet.results["ridge_point"].float, rel=0.01)


def pt_batch(pt) -> int:
    return int(re.search(r"= ([\d,]+)$", pt.batch).group(1).replace(",", ""))


def test_bars_are_the_sheets_steps_and_split_steps_add_up(figs):
    for slug, (sheet, figures) in figs.items():
        d = sheet.derivation
        for fig, decl in zip(figures, d.plots, strict=True):
            if fig.kind != "bars":
                continue
            panel = fig.panels[0]
            for bar in panel.bars:
                if bar.missing:
                    continue
                (seg,) = bar.segments
                if seg.step in d.expanded:
                    v = _value(sheet, seg.step)
                    assert seg.value == pytest.approx(_in(v.float, v.unit, panel.units[0]), rel=REL), (slug, seg.step)
            for name in decl.split:  # the terms of a split step add up to the step
                v = _value(sheet, name)
                parts = [b.segments[0].value for b in panel.bars if b.segments and b.segments[0].group == plots._mathtext(plots._name(d, decl, name), d)]
                assert sum(parts) == pytest.approx(_in(v.float, v.unit, panel.units[0]), rel=1e-9), (slug, name)


def test_stacked_bars_are_each_rows_steps(figs):
    checked = 0
    for slug, (sheet, figures) in figs.items():
        d = sheet.derivation
        for fig, decl in zip(figures, d.plots, strict=True):
            if fig.kind != "stack":
                continue
            panel = fig.panels[0]
            rows = d.tables[decl.table].rows
            assert len(panel.bars) == len(rows)
            for bar, row in zip(panel.bars, rows, strict=True):
                values = evaluate(d, api.resolve_row(sheet.context, row), [*decl.y, *decl.vlines])
                if bar.missing:  # a bar without a value is a row where the sheet has none
                    assert any(isinstance(values[n], Missing) for n in decl.y), (slug, row)
                    continue
                total = sum(float(values[n]) for n in decl.y)
                u = d.symbols[decl.y[0]].unit
                assert sum(s.value for s in bar.segments) == pytest.approx(_in(total, u, panel.units[0]), rel=1e-9), (slug, row)
                for s in bar.segments:
                    if s.step in values:
                        assert s.value == pytest.approx(_in(float(values[s.step]), u, panel.units[0]), rel=REL)
                for m in bar.marks:
                    assert m.value == pytest.approx(_in(float(values[m.step]), d.symbols[m.step].unit, panel.units[0]), rel=REL)
                checked += 1
    assert checked >= 15


def test_the_step_bars_follow_the_step_model_by_name(figs):
    """decode-floor's bars are the terms of t_step: a changed step model changes the bars, not the plot."""
    sheet, (fig,) = figs["decode-floor"]
    d = sheet.derivation
    terms = {t.name if isinstance(t, sp.Symbol) else sp.sstr(t) for t in sp.Add.make_args(d.step("t_step").expr)}
    assert {s.step for s in fig.panels[0].bars[0].segments} == terms


def test_scatter_points_are_the_validation_tables_cells(figs):
    sheet, figures = figs["model-limits"]
    fig = next(f for f in figures if f.name == "validation")
    panel = fig.panels[0]
    table = sheet.tables[1 + 3]
    columns = [n for n, _ in table.columns]
    cells = [(c[columns.index("t_measured")], c[columns.index("t_step")]) for _, c, _ in table.rows]
    assert len(panel.points) == len(cells)
    for pt, (measured, predicted) in zip(panel.points, cells, strict=True):
        assert pt.x == pytest.approx(_in(measured.float, measured.unit, panel.units[0]), rel=REL)
        assert pt.y == pytest.approx(_in(predicted.float, predicted.unit, panel.units[1]), rel=REL)
    assert {pt.series for pt in panel.points} >= {"vLLM", "lmdeploy"} and len({pt.group for pt in panel.points}) >= 2


def test_the_slips_start_at_the_true_mbu(figs):
    sheet, (fig,) = figs["mbu-definition"]
    true = sheet.results["mbu"].float
    panel = fig.panels[0]
    assert all(b.base == pytest.approx(true, rel=REL) for b in panel.bars)
    assert len(panel.bars) == 8


def test_the_house_style():
    assert plot_draw.STYLE["mathtext.fontset"] == "cm"
    assert plot_draw.PALETTE[:3] == ("#0072B2", "#D55E00", "#009E73")  # Okabe-Ito
    assert plot_draw.WIDTH <= 6.77  # the LaTeX text block: letter paper less 2.2 cm margins
    assert plot_draw.fonts_in_use() in (plot_draw.HOUSE_SERIF, plot_draw.FALLBACK_SERIF)


def test_svg_glyphs_are_the_house_fonts(figs):
    _, (fig,) = figs["batch-knee"]
    svg = plots.draw(fig, "svg")
    fonts = set(re.findall(rb'<path id="([A-Za-z0-9]+(?:-[A-Za-z]+)?)-[0-9a-f]+"', svg))
    text = b"LMRoman10-Regular" if plot_draw.fonts_in_use() == plot_draw.HOUSE_SERIF else b"DejaVuSerif"
    assert text in fonts and b"Cmmi10" in fonts  # the text font, and math in Computer Modern
    assert not {f for f in fonts if f.startswith(b"DejaVuSans")}


# --- declarations are checked when the derivation is built -----------------------------------------


def _sheet(*plots_: Plot):
    t = Step("t", gl.P_active * gl.b_w / gl.beta, "s", "why", title="Time")
    b = Step("b", gl.B * gl.q / gl.u_token, "1", "why", title="Batch")
    w = Step("w", gl.P_active * gl.b_w, "B", "why", title="Bytes")
    return derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), [t, b, w], ["t"], plots=list(plots_))


def test_a_plot_without_a_title_is_refused():
    with pytest.raises(DerivationError, match="title"):
        _sheet(Plot("p", "bars", "A plot.", y=("t",)))


def test_a_split_of_a_step_the_plot_does_not_draw_is_refused():
    with pytest.raises(DerivationError, match="splits"):
        _sheet(Plot("p", "bars", "A plot.", title="T.", y=("t",), split=("w",)))


def test_bars_of_two_units_are_refused():
    with pytest.raises(UnitMismatchError, match="bar w"):
        _sheet(Plot("p", "bars", "A plot.", title="T.", y=("t", "w")))


def test_a_fit_limit_in_the_wrong_unit_is_refused():
    with pytest.raises(UnitMismatchError, match="vertical line t"):
        _sheet(Plot("p", "sweep", "A plot.", title="T.", x="batch", y=("t",), fits_up_to="t"))


def test_a_roofline_point_must_be_an_intensity():
    with pytest.raises(UnitMismatchError, match="point t"):
        _sheet(Plot("p", "roofline", "A plot.", title="T.", points=("t",)))


def test_a_title_placeholder_must_be_a_value():
    with pytest.raises(DerivationError, match="nope"):
        _sheet(Plot("p", "bars", "A plot.", title="It is {nope}.", y=("t",)))


def test_a_sweep_over_gpus_draws_the_powers_of_two_as_points(figs):
    """Discrete axes for discrete quantities: hardware-upgrade's speedup against the tensor-parallel degree is drawn at 1, 2, 4,
    8 and 16 GPUs, as points with a tick at each, never through 3, 5, 6 or 7 GPUs."""
    _, (fig,) = figs["hardware-upgrade"]
    (panel,) = fig.panels
    assert panel.discrete
    assert {x for c in panel.curves for x in c.x} == {1.0, 2.0, 4.0, 8.0, 16.0}
    _, (fig,) = figs["batch-knee"]
    assert not fig.panels[0].discrete  # a batch swept over 1 to 4,096 is a line


def test_a_log_axis_over_many_decades_puts_its_prefix_on_each_tick(figs):
    """flash-attention-io's bytes run from about 0.3 MB to 300 GB: the ticks say "100 kB" to "1 TB", not 0.1 to 10^6 MB."""
    _, (fig,) = figs["flash-attention-io"]
    (panel,) = fig.panels
    assert panel.y_tick_unit == "MB" and "(MB)" not in panel.ylabel and panel.ylabel.startswith("Bytes")
    assert plot_draw.prefixed_tick(1e6, "MB") == "1 TB"
    assert plot_draw.prefixed_tick(0.1, "MB") == "100 kB"
    _, (fig,) = figs["hardware-upgrade"]
    assert fig.panels[0].y_tick_unit == ""  # a ratio has no prefix


def test_a_bar_of_a_setup_that_does_not_fit_says_so(figs):
    """mbu-diagnosis's buckets at TP 1 and 2 (Llama 3.1 70B, batch 16 at 8,192 tokens on 80 GB GPUs) need more memory than a
    GPU has: their bars say so after their totals, as the table's rows do; TP 4 fits and says nothing."""
    sheet, (fig,) = figs["mbu-diagnosis"]
    solved = sheet.tables[1]
    bars = [b for b in fig.panels[0].bars]
    assert [b.total.endswith(", does not fit") for b in bars if not b.missing] == [o for o, b in zip(solved.overflows, bars, strict=True) if not b.missing]
    assert sum(b.total.endswith(", does not fit") for b in bars) == 2


def test_alt_text_is_words():
    """Every figure's alt text is words: no LaTeX markup, no input names, each thing named once (issue 40 item 6)."""
    from roofline.renderers.figure_refs import alt_text

    for d in DERIVATIONS:
        for p in d.plots:
            text = alt_text(d.blueprint, p)
            assert text[:1].isupper(), (d.slug, text)
            assert not re.search(r"[\\$_{}]|mathrm", text), (d.slug, text)
            assert "output_len" not in text and "output\\_len" not in text, (d.slug, text)
    (rank,) = [p for d in DERIVATIONS if d.slug == "decode-op-ranking" for p in d.plots]
    ranked = alt_text(next(d for d in DERIVATIONS if d.slug == "decode-op-ranking").blueprint, rank)
    assert ranked.count("weight GEMMs") == 1 and "weight GEMMs (" in ranked


def test_a_log_axis_to_a_million_ticks_in_one_style():
    """An axis of contexts up to a million tokens reads 100,000 then 1,000,000, one style, not 100,000 then 10^6 (issue 40
    item 6); a tick past the largest a figure reaches is a power of ten."""
    ticks = [plot_draw.plain_tick(10.0**k) for k in range(-2, 7)]
    assert ticks == ["0.01", "0.1", "1", "10", "100", "1,000", "10,000", "100,000", "1,000,000"]
    assert plot_draw.plain_tick(2e5) == "200,000"
    assert plot_draw.plain_tick(1e8) == "$10^{8}$"

"""The figures a sheet declares (`derivations.engine.declare.Plot`), as data for the sheet's context, and their files.

Every number drawn comes from the derivation evaluated for the sheet's specs
and inputs, never from this module:

- a sweep draws steps over a grid of one input (`derivations.engine.sweep`: compiled
  to numpy, every other input fixed by the context, checked against the exact
  evaluation), and marks the sheet's own values of its crossovers, ceilings
  and inputs; the "does not fit" shading starts at the sheet's own largest
  value that fits;
- a roofline draws `primitives.roofline_time` at each chip's peak and
  bandwidth, marks `primitives.ridge_point`, and places each intensity step at
  its evaluated value on the roof;
- bars and stacks draw steps evaluated in the sheet's context (or in each row
  of one of its tables), a split step as the terms of its own formula;
- a scatter places a table's rows by two of their steps; a heat map colours
  the cells of the sheet's solved table.

Other accelerators and table rows come through the resolver the front door
passes; nothing here reads a spec file or solves. Titles state each figure's
finding: the plot's prose with the sheet's values filled in, at
`numbers.FIGURE_SIGNIFICANT_FIGURES`. Drawing is `renderers.draw_kinds`, in the house
style of `renderers.plot_draw`.

Files: `<slug>-<plot>.svg` (Markdown, HTML) and `<slug>-<plot>.pdf` (LaTeX),
in the folder `PLOTS_DIR` beside the sheets. The public calls:
`figures(sheet, resolve)` (the data), `render(fig, "svg"|"pdf")` (bytes),
`files(sheet, resolve)` (name -> bytes, drawn or from the cache), `same_plot(a, b)` (compare two files by
data); what a sheet links for its figures, without drawing, is renderers.figure_refs'.

Deterministic output: see `renderers.plot_draw`. Two renders on one machine
are byte-identical. Bytes may still differ between matplotlib versions, so
every file carries `roofline-plot-data sha256:<hex>`, a digest of what it
draws (the data, labels, style and the source of both modules), and `build
--check` compares plot files by that digest.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pint
import sympy as sp

from ..derivations.engine import cache, prose
from ..derivations.engine.context import Context, Input, input_value
from ..derivations.engine.declare import At, Derivation, Plot, Row, Solve
from ..derivations.engine.sheet import Missing, Sheet, SolvedTable, evaluate, evaluate_numbers, input_values
from ..derivations.engine.sweep import Axis, sweep
from ..derivations.physics import glossary as gl
from ..derivations.physics import primitives as pr
from ..specs.errors import SpecError
from ..units import Quantity, unit, unit_text
from . import draw_kinds, figure_data, plot_draw
from .figure_data import LAYOUT_DEGREES, MAX_DISCRETE_POINTS, SWEEP_POINTS, Bar, Curve, Figure, Line, Panel, Point, Roof, Segment, sweep_grid
from .figure_refs import alt_text, shared_words, term_label
from .figure_refs import name as _name
from .figure_refs import step_title as _step_title
from .numbers import FIGURE_SIGNIFICANT_FIGURES, display, number_text, plain, whole_count
from .printer import latex_math, term_ranks
from .sheet_prose import lower_first

Resolver = Callable[[Context, Row], Context]

#: The folder beside the sheets that holds the plot files.
PLOTS_DIR = "plots"
FORMATS = ("svg", "pdf")
STYLE = plot_draw.STYLE
_MARKER = re.compile(rb"roofline-plot-data sha256:([0-9a-f]{64})")
FIGURES = FIGURE_SIGNIFICANT_FIGURES


# --- data --------------------------------------------------------------------------------------------


def figures(sheet: Sheet, resolve: Resolver) -> tuple[Figure, ...]:
    """Every plot the sheet declares, as data, for the sheet's context."""
    d = sheet.derivation
    out = []
    for p in d.plots:
        panels = _KINDS[p.kind](sheet, p, resolve)
        out.append(Figure(d.slug, p.name, p.kind, p.caption, alt_text(d.blueprint, p), panels, _title(sheet, p), p.answer))
    return tuple(out)


def _mathtext(text: str, d: Derivation, values: Mapping[str, str] | None = None) -> str:
    """Prose for matplotlib: `$...$` stays mathtext with symbols spelled; a literal `$` would open math, so it is escaped."""
    names = {info.name: info.latex for info in d.symbols}
    return prose.render(text, lambda t: t.replace("$", r"\$"), lambda m: f"${m}$", names, values)


def _title(sheet: Sheet, p: Plot) -> str:
    """The plot's finding with the sheet's values filled in."""
    return _mathtext(p.title, sheet.derivation, _value_texts(sheet))


def _value_texts(sheet: Sheet) -> dict[str, str]:
    out = {}
    for st in sheet.steps:
        v = st.value
        out[st.step.name] = v.missing.kind if v.missing else _value_text(_whole(st.step, v.exact), v.unit, v.display_unit)
    for i in sheet.inputs:
        out[i.name] = _value_text(i.value.exact, i.value.unit, i.value.display_unit)
    return out


def _symbol(d: Derivation, name: str) -> str:
    return f"${d.symbols[name].latex}$"


def _axis_unit(values: Sequence[float], si: pint.Unit, preferred: str | None) -> pint.Unit:
    """The unit an axis shows: the sheet's display unit if it has one, else the prefix that suits the values' middle."""
    if preferred:
        return unit(preferred)
    finite = sorted(abs(v) for v in values if math.isfinite(v) and v != 0)
    if not finite:
        return si
    return display(finite[len(finite) // 2], si).unit


#: A log axis spanning more than this many decades of a unit with prefixes has a prefix on each tick: one unit for all of
#: them would print 0.0001 at one end or 10^6 at the other.
PREFIXED_DECADES = 5


def _prefixed_ticks(values: Sequence[float], si: pint.Unit, shown: pint.Unit, log: bool) -> str:
    """The unit the ticks of a log axis are given in where each says its own prefix (Panel.y_tick_unit), else ""."""
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    if not log or not finite or math.log10(max(finite) / min(finite)) <= PREFIXED_DECADES:
        return ""
    text = unit_text(shown)
    prefixes = display(1e9, text).unit.text != text or display(1e-9, text).unit.text != text
    return text if prefixes else ""


def _factor(si: pint.Unit, shown: object) -> float:
    return float(Quantity(1, si).to(unit_text(shown)).magnitude)


def _unit_label(u: pint.Unit) -> str:
    """An axis's unit in parentheses, a count in the plural (Context (tokens), not (token)); nothing for a plain number."""
    text = unit_text(u)
    return "" if text == "1" else f" ({_PLURALS.get(text, text)})"


#: count units a figure's prose writes in the plural (295 tokens)
_PLURALS = {"token": "tokens", "parameter": "parameters"}


def _value_text(value: sp.Expr | float, u: pint.Unit, preferred: str | None = None) -> str:
    """A value as a figure writes it: three significant figures, a count unit in the plural unless the value is one."""
    text = plain(value, u, preferred, FIGURES)
    number, _, word = text.rpartition(" ")
    return f"{number} {_PLURALS[word]}" if word in _PLURALS and number not in ("1", "1.00") else text


def _whole(step: Any, value: Any) -> Any:
    """A count's value as the sheets print it, whole (rounded as the step says); any other value as it is."""
    n = whole_count(step.counts, step.rounds, float(value)) if step.counts and isinstance(value, Fraction | int | float) else None
    return value if n is None else Fraction(n)


def _at(d: Derivation, name: str, value: Any) -> Any:
    """Where a marked value is drawn: a count at the whole number its label gives (a knee at 72.4 sequences is drawn at the
    73 the sheet runs), any other value where it is."""
    return _whole(d.step(name), value) if name in d.expanded else value


def _mark(d: Derivation, name: str, value: sp.Expr, u: pint.Unit, preferred: str | None) -> str:
    """A marked value's label: its symbol and its value, '$B_{knee}$ = 72.1' (a count whole, as the sheet prints it: 73)."""
    latex = d.symbols[name].latex if name in d.expanded else d.symbols.info(next(i.symbol for i in d.inputs if i.name == name)).latex
    return f"${latex}$ = {_value_text(_at(d, name, value), u, preferred)}"


def _sheet_value(sheet: Sheet, name: str) -> tuple[sp.Expr | Missing, pint.Unit, str | None]:
    """A step's or an input's value on the sheet, its unit and display unit."""
    for st in sheet.steps:
        if st.step.name == name:
            v = st.value
            return (v.missing if v.missing else v.exact), v.unit, v.display_unit
    i = next(i for i in sheet.inputs if i.name == name)
    return i.value.exact, i.value.unit, i.value.display_unit


def _sweep(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    d, ctx = sheet.derivation, sheet.context
    inp = next(i for i in d.inputs if i.name == p.x)
    x_unit = d.symbols.info(inp.symbol).unit
    lines: list[Line] = []
    marks_x = []
    for axis, names in (("x", p.vlines), ("y", p.hlines)):
        for name in names:
            v, u, shown = _sheet_value(sheet, name)
            if isinstance(v, Missing):
                continue
            at = float(_at(d, name, v))
            lines.append(Line(_mark(d, name, v, u, shown), axis, at, name))
            if axis == "x":
                marks_x.append(at)
    fit = _sheet_value(sheet, p.fits_up_to)[0] if p.fits_up_to else None
    lo, hi = (float(inp.parse(t, "plot span").to(x_unit).magnitude) for t in p.span)
    whole = inp.domain in ("count", "whole")
    grid = np.array(sweep_grid(lo, hi, "x" in p.log, whole, inp.name in LAYOUT_DEGREES, marks_x))
    y_si = d.symbols[p.y[0]].unit
    raw = {name: _curve(d, ctx, name, inp, grid) for name in p.y}
    all_y = [float(v) for ys in raw.values() if ys is not None for v in ys]
    y_shown = _axis_unit(all_y, y_si, d.display_units.get(p.y[0]))
    fy = _factor(y_si, y_shown)
    curves = tuple(Curve(_mathtext(_name(d, p, n), d), tuple(float(x) for x in grid), tuple(float(v) * fy for v in ys), n)
                   for n, ys in raw.items() if ys is not None)
    lines = [Line(ln.label, ln.axis, ln.value * (fy if ln.axis == "y" else 1.0), ln.step) for ln in lines]
    info = d.symbols.info(inp.symbol)
    xlabel = f"{_mathtext(_sentence(p.labels.get(p.x) or inp.meaning), d)}, ${info.latex}${_unit_label(x_unit)}"
    tick_unit = _prefixed_ticks(all_y, y_si, y_shown, "y" in p.log)
    ylabel = (f"{_mathtext(_name(d, p, p.y[0]), d) if len(p.y) == 1 else _shared_name(d, p.y, y_si)}"
              f"{'' if tick_unit else _unit_label(y_shown)}")
    missing = [n for n, ys in raw.items() if ys is None]
    notes = [f"{', '.join(missing)}: no value in this context"] if missing else []
    overflow, overflow_label = (), ""
    if p.fits_up_to:
        if isinstance(fit, Missing):
            notes.append(f"Does not fit in memory at any {inp.name} shown")
        elif float(fit) < float(grid[-1]):
            fit_u = d.symbols[p.fits_up_to]
            overflow = ((float(fit), float(grid[-1])),)
            overflow_label = f"does not fit in memory beyond {_mark(d, p.fits_up_to, fit, fit_u.unit, d.display_units.get(p.fits_up_to))}"
    return (Panel(sheet.context_label, xlabel, ylabel, p.log, curves, tuple(lines), units=(unit_text(x_unit), unit_text(y_shown)),
                  note="; ".join(notes), overflow=overflow, overflow_label=overflow_label,
                  discrete=whole and len(grid) <= MAX_DISCRETE_POINTS, y_tick_unit=tick_unit),)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


#: what a y axis of several curves shows, by its unit
_QUANTITY_KINDS = (("s", "Time"), ("token/s", "Throughput"), ("J/token", "Energy per token"), ("B", "Bytes"), ("W", "Power"),
                   ("flop/token", "FLOPs per token"), ("B/s", "Bandwidth"), ("flop/B", "Intensity"), ("1", "Ratio"))


def _shared_name(d: Derivation, names: Sequence[str], u: pint.Unit) -> str:
    """What several curves have in common, for their axis: the words their step titles start with ("Speedup" of "Speedup when
    compute-bound" and "Speedup when bandwidth-bound"), else the kind of quantity their unit measures."""
    return shared_words([_step_title(d.step(n)) for n in names]) or _quantity_kind(u)


def _quantity_kind(u: pint.Unit) -> str:
    return next((kind for text, kind in _QUANTITY_KINDS if unit(text).dimensionality == u.dimensionality), "Value")


def _curve(d: Derivation, ctx: Context, name: str, inp: Input, grid: np.ndarray) -> np.ndarray | None:
    """Step `name` over `grid` values of input `inp`, every other input and spec value fixed by `ctx`; None where it has no value here.

    `derivations.engine.sweep` compiles the steps to numpy with the exact evaluation's domain rules and checks the grid's
    ends against `evaluate`, so a point of the curve is the sheet's value at that input (NaN where there is none).
    """
    texts = tuple(str(int(v)) if float(v).is_integer() else repr(float(v)) for v in grid)
    result = sweep(d, ctx, name, [Axis(inp, texts, grid.astype(float))])
    y = np.asarray(result.values, dtype=float).reshape(grid.shape)
    return None if not np.isfinite(y).any() else y


# --- rooflines ---------------------------------------------------------------------------------------


def _short_name(ctx: Context) -> str:
    """The chip's name without its vendor's or a closing remark ("H100 SXM5 80GB", "B200"): the roofs share one panel and their
    labels its space."""
    name, vendor = ctx.hardware.name, ctx.hardware.vendor
    if vendor and name.startswith(vendor + " ") and len(name) > len(vendor) + 1:
        name = name[len(vendor) + 1:]
    short = re.sub(r"\s*\([^()]*\)$", "", name)
    return short or name


def _chips(sheet: Sheet, resolve: Resolver) -> list[Context]:
    """The sheet's own chip first, then the others of its grid (the sheet's chip alone when it is not one of them)."""
    d, ctx = sheet.derivation, sheet.context
    out = [ctx]
    if ctx.hardware.key in d.hardware:
        for key in d.hardware:
            if key == ctx.hardware.key:
                continue
            try:
                out.append(resolve(ctx, Row("", hardware=key)))
            except SpecError:
                continue
    return out


def _rooflines(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    """One panel: the roof of each accelerator of the sheet's grid, and the plot's intensities placed on the sheet's chip."""
    d = sheet.derivation
    chips = _chips(sheet, resolve)
    machines = [input_values(d, c, {gl.pi, gl.beta}) for c in chips]
    peaks = [float(m[gl.pi]) for m in machines]
    shown = _axis_unit([min(peaks)], unit("flop/s"), None)
    fy = _factor(unit("flop/s"), shown)
    settings = [(sheet.context, "")]
    for row in p.rows:
        try:
            settings.append((resolve(sheet.context, row), _mathtext(row.label, d)))
        except SpecError:
            continue
    found = []
    for ctx, where in settings:
        names = list((p.row_points or p.points) if where else p.points)
        for batch in p.batches or ("",):
            n = _batch_value(sheet, batch) if batch else None
            if batch and n is None:
                continue  # a batch the sheet has no value for here (no flip in this context): nothing to place
            at = ctx.with_overrides(batch=str(n)) if batch else ctx
            values = evaluate_numbers(d, at, names)
            for name in names:
                v = values[name]
                if isinstance(v, Missing) or not v > 0:
                    continue  # a kernel this model does not run
                label = _mathtext(_name(d, p, name), d) + (f", {where}" if where else "")
                found.append((label, float(v), name, _batch_label(sheet, batch) if batch else ""))
    xs = [x for _, x, _, _ in found] + [float(pr.ridge_point().xreplace(m)) for m in machines]
    # room beyond the ridges: the flat ceilings carry the chips' labels
    lo, hi = 10 ** math.floor(math.log10(min(xs) / 2)), 10 ** math.ceil(math.log10(max(xs) * 8))
    grid = np.geomspace(lo, hi, SWEEP_POINTS)
    intensity = sp.Symbol("I", positive=True)
    roofs, points = [], []
    for k, (ctx, machine) in enumerate(zip(chips, machines, strict=True)):
        roof_of = sp.lambdify(intensity, 1 / pr.roofline_time(sp.Integer(1), 1 / intensity).xreplace(machine), modules="numpy")
        ridge = pr.ridge_point().xreplace(machine)
        roofs.append(Roof(_short_name(ctx), float(machine[gl.pi]) * fy, float(ridge), tuple(float(x) for x in grid),
                          tuple(float(v) * fy for v in roof_of(grid)), _value_text(machine[gl.pi], unit("flop/s")),
                          _value_text(ridge, unit("flop/B")), own=k == 0))
        if k == 0 or p.each_chip:  # every chip's roof, or the sheet's own
            points += [Point(label, x, float(roof_of(np.float64(x))) * fy, name, batch, roof=k) for label, x, name, batch in found]
    math_name = chips[0].math.math.upper()
    return (Panel(sheet.context_label, "Arithmetic intensity (flop/B)", f"Attainable FLOP/s at the {math_name} peak{_unit_label(shown)}", "xy",
                  points=tuple(points), roofs=tuple(roofs), units=("flop/B", unit_text(shown))),)


def _batch_value(sheet: Sheet, batch: str) -> int | None:
    """A batch the plot names: a whole number as given, or a step's value as the sheet runs it (its closed form rounded
    the way it is meant: up to the first whole batch at or past a threshold, down for a limit); None where the step has none."""
    d = sheet.derivation
    if batch not in d.expanded:
        return int(next(i for i in d.inputs if i.name == "batch").parse(batch, "plot batches").magnitude)
    v, _, _ = _sheet_value(sheet, batch)
    if isinstance(v, Missing):
        return None
    step = d.step(batch)
    down = isinstance(step, Solve) and step.rounds == "down"
    return max(1, math.floor(float(v)) if down else math.ceil(float(v) - 1e-12))




def _batch_label(sheet: Sheet, batch: str) -> str:
    """'$B$ = 1', or for a batch a step names, '$B_{flip}$ = 8'."""
    d = sheet.derivation
    latex = d.symbols[batch].latex if batch in d.expanded else d.symbols.info(gl.B).latex
    return f"${latex}$ = {_batch_value(sheet, batch):,}"


# --- bars, stacks and scatters -------------------------------------------------------------------------


def _parts(d: Derivation, p: Plot) -> list[tuple[str, sp.Expr, str]]:
    """(label, expression, group) for every part a bar shows: each step of `y`, a split one as the terms of its formula."""
    names = d.symbols.latex_names()
    ranks = term_ranks(list(names), set(d.expanded))
    out = []
    for name in p.y:
        step = d.step(name)
        if name not in p.split:
            out.append((_mathtext(_name(d, p, name), d), step.s, ""))
            continue
        group = _mathtext(_name(d, p, name), d)
        terms = sorted(sp.Add.make_args(step.expr), key=lambda t: min((ranks.get(s, len(ranks)) for s in t.free_symbols), default=len(ranks)))
        for term in terms:
            out.append((_term_label(d, p, term, names), term, group))
    if any(label[:1].islower() for label, _, _ in out):  # one key, one case: a title among the plot's lower-case labels follows them
        out = [(lower_first(label), e, g) for label, e, g in out]
    return out



def _term_label(d: Derivation, p: Plot, term: sp.Expr, names: Mapping[sp.Symbol, str]) -> str:
    """A term of a split step: a step by its label or title, an input by its meaning, anything else as its formula."""
    if isinstance(term, sp.Symbol):
        return _mathtext(term_label(d.blueprint, p, term.name), d)
    return f"${latex_math(term, names)}$"


def _part_values(d: Derivation, ctx: Context, parts: Sequence[tuple[str, sp.Expr, str]], extra: Sequence[str]) -> tuple[list[sp.Expr | Missing], dict[str, sp.Expr | Missing]]:
    """Each part's value in `ctx` (a term evaluated from the values of its steps and inputs), and the steps in `extra`."""
    needed = sorted({s.name for _, e, _ in parts for s in e.free_symbols if s.name in d.expanded} | set(extra))
    steps = evaluate(d, ctx, needed)
    symbols = set().union(*(e.free_symbols for _, e, _ in parts)) - {sp.Symbol(n, positive=True) for n in d.expanded}
    known: dict[sp.Symbol, sp.Expr | Missing] = {**input_values(d, ctx, symbols), **{sp.Symbol(n, positive=True): v for n, v in steps.items()}}
    out = []
    for _, e, _ in parts:
        gone = [known[s] for s in e.free_symbols if isinstance(known[s], Missing)]
        out.append(gone[0] if gone else e.xreplace(known))
    return out, steps


def _missing_text(d: Derivation, m: Missing) -> str:
    """'none: reason' as matplotlib text: a closed form's reason is prose (it may hold math), a spec's literal."""
    return f"{m.kind}: " + (_mathtext(m.reason, d) if m.prose else m.reason.replace("$", r"\$"))


def _bars(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    """One bar per part, the sheet's own values; `base` (a step) where each bar starts; `vlines` marked."""
    d, ctx = sheet.derivation, sheet.context
    parts = _parts(d, p)
    values, steps = _part_values(d, ctx, parts, [*p.vlines, *((p.base,) if p.base else ())])
    si = d.symbols[p.y[0]].unit
    shown = _axis_unit([float(v) for v in values if not isinstance(v, Missing)], si, d.display_units.get(p.y[0]))
    f = _factor(si, shown)
    base = steps[p.base] if p.base else None
    bars = []
    for (label, e, group), v in zip(parts, values, strict=True):
        if isinstance(v, Missing):
            bars.append(Bar(label, missing=_missing_text(d, v)))
            continue
        name = e.name if isinstance(e, sp.Symbol) else sp.sstr(e)
        bars.append(Bar(label, (Segment(label, float(v) * f, name, group),), _value_text(v, si, d.display_units.get(p.y[0])),
                        base=None if base is None or isinstance(base, Missing) else float(base) * f))
    marks = tuple(Line(_mark(d, n, steps[n], d.symbols[n].unit, d.display_units.get(n)), "x", float(_at(d, n, steps[n])) * f, n)
                  for n in (*((p.base,) if p.base else ()), *p.vlines) if not isinstance(steps[n], Missing))
    axis = _sentence(_mathtext(_name(d, p, p.base), d)) if p.base else _quantity_kind(si)
    return (Panel(sheet.context_label, f"{axis}{_unit_label(shown)}", "", "x" if "x" in p.log else "",
                  lines=marks, bars=tuple(bars), units=(unit_text(shown), "")),)


def _row_contexts(sheet: Sheet, p: Plot, resolve: Resolver) -> list[tuple[str, Row, Context | SpecError]]:
    """(label, row, context) for each row the plot draws: a table's rows, labelled as the table labels them; the plot's own rows;
    or the sheet's own context."""
    d = sheet.derivation
    if p.table is not None:
        solved: SolvedTable = sheet.tables[1 + p.table]  # the first solved table is the headline grid
        rows = d.tables[p.table].rows
    elif p.rows:
        rows, solved = p.rows, None
    else:
        return [(_short_context(sheet.context), Row(""), sheet.context)]
    out = []
    for i, row in enumerate(rows):
        try:
            ctx: Context | SpecError = resolve(sheet.context, row)
        except SpecError as err:
            ctx = err
        label = _row_label(d, row, ctx, solved, i)
        out.append((label, row, ctx))
    return out


def _row_overflows(sheet: Sheet, p: Plot) -> list[bool]:
    """For each row `_row_contexts` gives: whether its setup does not fit in memory (a table's rows say; a plot's own rows and
    the sheet's own context as the sheet does)."""
    if p.table is not None:
        solved: SolvedTable = sheet.tables[1 + p.table]
        return list(solved.overflows) if solved.overflows else [False] * len(sheet.derivation.tables[p.table].rows)
    return [False] * len(p.rows) if p.rows else [sheet.overflow is not None]


#: what a bar of a setup that does not fit in memory says after its total
DOES_NOT_FIT = "does not fit"


def _short_context(ctx: Context) -> str:
    return f"{_short_name(ctx)}, {ctx.model.name}"


def _row_label(d: Derivation, row: Row, ctx: Context | SpecError, table: SolvedTable | None, i: int) -> str:
    """A row's label as its table prints it, shorter: its own (prose), else the chip and model it changes (short names), and the
    inputs it sets."""
    parts = []
    if row.label:
        parts.append(_mathtext(row.label, d))
    elif isinstance(ctx, Context) and (row.hardware or row.model):
        parts.append(" · ".join(x for x in (_short_name(ctx) if row.hardware else "", ctx.model.name if row.model else "") if x))
    for _, latex, v in (table.settings[i] if table is not None and table.settings else ()):
        parts.append(f"${latex}$ = {_value_text(v.exact, v.unit)}")
    return ", ".join(parts) or (table.rows[i][0] if table is not None else "")


def _stack(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    """One bar per row, its parts stacked; `vlines` marked on each bar."""
    d = sheet.derivation
    parts = _parts(d, p)
    si = d.symbols[p.y[0]].unit
    raw = []
    overflows = _row_overflows(sheet, p)
    for label, _row, ctx in _row_contexts(sheet, p, resolve):
        if isinstance(ctx, SpecError):
            raw.append((label, None, {}, _missing_text(d, Missing("n/a", ctx.message))))
            continue
        values, steps = _part_values(d, ctx, parts, p.vlines)
        gone = next((v for v in values if isinstance(v, Missing)), None)
        raw.append((label, None if gone else values, steps, _missing_text(d, gone) if gone else ""))
    totals = [float(sum(vals)) for _, vals, _, _ in raw if vals is not None]
    shown = _axis_unit(totals, si, d.display_units.get(p.y[0]))
    f = _factor(si, shown)
    bars = []
    for (label, vals, steps, why), over in zip(raw, overflows, strict=True):
        if vals is None:
            bars.append(Bar(label, missing=why))
            continue
        segments = tuple(Segment(name, float(v) * f, e.name if isinstance(e, sp.Symbol) else sp.sstr(e), group)
                         for (name, e, group), v in zip(parts, vals, strict=True))
        marks = tuple(Line(_mathtext(_name(d, p, n), d) + f" {_symbol(d, n)}", "x", float(steps[n]) * f, n)
                      for n in p.vlines if not isinstance(steps[n], Missing))
        total = _value_text(sum(vals), si, d.display_units.get(p.y[0]))
        bars.append(Bar(label, segments, f"{total}, {DOES_NOT_FIT}" if over else total, marks))
    axis = _sentence(parts[0][0]) if len(parts) == 1 else _quantity_kind(si)
    return (Panel(sheet.context_label, f"{axis}{_unit_label(shown)}", "", "", bars=tuple(bars), units=(unit_text(shown), "")),)


def _scatter(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    """A table's rows as points, `x` against `y[0]`; the line where they are equal and the bands `hlines` around it."""
    d = sheet.derivation
    si = d.symbols[p.y[0]].unit
    group = next((i for i in d.inputs if i.name == p.group), None)
    raw = []
    for label, row, ctx in _row_contexts(sheet, p, resolve):
        if isinstance(ctx, SpecError):
            continue
        values = evaluate_numbers(d, ctx, [p.x, p.y[0]])
        x, y = values[p.x], values[p.y[0]]
        if isinstance(x, Missing) or isinstance(y, Missing):
            continue
        g = ""
        if group is not None:
            q, _ = input_value(group, ctx, d.inputs)
            magnitude = q.magnitude
            g = f"${d.symbols.info(group.symbol).latex}$ = {_value_text(int(magnitude) if float(magnitude).is_integer() else magnitude, q.units)}"
        raw.append((label, float(x), float(y), row.series, g))
    shown = _axis_unit([v for _, x, y, _, _ in raw for v in (x, y)], si, d.display_units.get(p.y[0]))
    f = _factor(si, shown)
    points = tuple(Point(label, x * f, y * f, p.y[0], series=series, group=g) for label, x, y, series, g in raw)
    bands = []
    for n in p.hlines:
        v, _, _ = _sheet_value(sheet, n)
        if not isinstance(v, Missing):
            bands.append(Line(f"{_mathtext(_name(d, p, n), d)}, {_value_text(v, unit('1'), d.display_units.get(n))}", "y", float(v), n))
    return (Panel(sheet.context_label, f"{_sentence(_mathtext(_name(d, p, p.x), d))}{_unit_label(shown)}",
                  f"{_sentence(_mathtext(_name(d, p, p.y[0]), d))}{_unit_label(shown)}",
                  p.log, lines=tuple(bands), points=points, units=(unit_text(shown), unit_text(shown))),)


# --- heat maps ---------------------------------------------------------------------------------------


def _heatmap(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    d = sheet.derivation
    table: SolvedTable = sheet.tables[1 + p.table]  # the first solved table is the headline grid
    index = [next(j for j, (n, _) in enumerate(table.columns) if n == name) for name in p.y]
    cells, texts, rows = [], [], []
    for r, (label, row_cells, _) in enumerate(table.rows):
        setting = table.settings[r] if table.settings else ()
        rows.append(_mathtext(label, d) if label else ", ".join(f"${latex}$ = {_value_text(v.exact, v.unit)}" for _, latex, v in setting))
        row, text = [], []
        for j in index:
            v = row_cells[j]
            if v is None or v.missing:
                row.append(None)
                text.append(v.missing.kind if v is not None and v.missing else "n/a")
            else:
                row.append(float(v.exact))
                text.append(number_text(display(v.exact, v.unit, v.display_unit, FIGURES).number))
        cells.append(tuple(row))
        texts.append(tuple(text))
    columns, xlabel = _heat_columns(d, p.y)
    of = d.step(p.y[0])
    base = of.of if isinstance(of, At) else of.name
    return (Panel(sheet.context_label, xlabel, _heat_rows_label(d, table), "", cells=tuple(cells), cell_text=tuple(texts), rows=tuple(rows),
                  columns=columns, colorbar=f"{_mathtext(_step_title(d.step(base)), d)} {_symbol(d, base)}",
                  units=("", unit_text(d.symbols[base].unit))),)


def _heat_columns(d: Derivation, names: Sequence[str]) -> tuple[tuple[str, ...], str]:
    """Column labels: the value an At step sets (draft length 4), with that symbol as the axis label; else each step's symbol."""
    steps = [d.step(n) for n in names]
    wheres = [s.where for s in steps if isinstance(s, At)]
    if len(wheres) == len(steps) and all(len(w) == 1 for w in wheres) and len({w[0][0] for w in wheres}) == 1:
        symbol = wheres[0][0][0]
        info = d.symbols.info(symbol)
        meaning = re.split(r"[:(]", info.meaning)[0].strip()
        return tuple(str(w[0][1]) for w in wheres), f"{_mathtext(_sentence(meaning), d)}, ${info.latex}$"
    return tuple(_symbol(d, n) for n in names), ""


def _heat_rows_label(d: Derivation, table: SolvedTable) -> str:
    """The input every row sets, when they all set the same one."""
    names = {tuple(n for n, _, _ in s) for s in table.settings}
    if len(names) == 1 and len(next(iter(names))) == 1:
        inp = next(i for i in d.inputs if i.name == next(iter(names))[0])
        return f"{_mathtext(_sentence(inp.meaning), d)}, ${d.symbols.info(inp.symbol).latex}$"
    return ""


_KINDS: dict[str, Callable[[Sheet, Plot, Resolver], tuple[Panel, ...]]] = {
    "sweep": _sweep, "roofline": _rooflines, "heatmap": _heatmap, "bars": _bars, "stack": _stack, "scatter": _scatter}


def _rounded(x: Any) -> Any:
    """Floats to 9 significant digits, so a digest does not depend on the last bits a platform's libm computes."""
    if isinstance(x, float):
        return None if not math.isfinite(x) else float(f"{x:.9g}")
    if isinstance(x, Mapping):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_rounded(v) for v in x]
    return x


_CODE_DIGEST = hashlib.sha256(Path(__file__).read_bytes() + Path(plot_draw.__file__).read_bytes() + Path(draw_kinds.__file__).read_bytes()
                              + Path(figure_data.__file__).read_bytes()).hexdigest()


def digest(fig: Figure) -> str:
    """What the picture shows, hashed: the data and labels, the style and the code that draws them."""
    payload = json.dumps({"figure": _rounded(asdict(fig)), "style": plot_draw.STYLE, "palette": plot_draw.PALETTE, "code": _CODE_DIGEST},
                         sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(payload.encode()).hexdigest()


# --- files -------------------------------------------------------------------------------------------


def marker(fig: Figure) -> str:
    return f"roofline-plot-data sha256:{digest(fig)}"


def render(fig: Figure, fmt: str) -> bytes:
    """The figure as SVG or PDF bytes; the same figure gives the same bytes on one machine.

    Drawn bytes are kept in the roofline cache (derivations.engine.cache) under the figure's digest and the drawing setup
    (`plot_draw.drawing_setup`: matplotlib's version and the font files, by path), so a build that draws what it drew
    before skips matplotlib; `ROOFLINE_CACHE=off` always draws.
    """
    if fmt not in FORMATS:
        raise ValueError(f"plot format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return _render_all(fig)[fmt]


def _render_all(fig: Figure) -> dict[str, bytes]:
    """Every format of the figure, from the cache or laid out once and written in each."""
    found = {fmt: _cached(fig, fmt) for fmt in FORMATS}
    if all(data is not None for data in found.values()):
        return found  # type: ignore[return-value]
    drawn = draw_kinds.draw(fig, FORMATS, marker(fig))
    for fmt, data in drawn.items():
        cache.store_bytes(_cache_key(fig, fmt), data)
    return drawn


def _cached(fig: Figure, fmt: str) -> bytes | None:
    """A whole drawing of this figure from the cache (its digest inside, its format's last line at the end), or None."""
    found = cache.load_bytes(_cache_key(fig, fmt))
    if found is not None and digest_of(found) == digest(fig) and whole_file(found, f".{fmt}"):
        return found
    return None


def _cache_key(fig: Figure, fmt: str) -> str:
    return cache.key("plot", digest(fig), fmt, plot_draw.drawing_setup())


def draw(fig: Figure, fmt: str) -> bytes:
    """The figure drawn by matplotlib, bypassing the cache."""
    return draw_kinds.draw(fig, (fmt,), marker(fig))[fmt]


def files(sheet: Sheet, resolve: Resolver, folder: str = PLOTS_DIR, keys: dict[str, str] | None = None) -> dict[str, bytes]:
    """`folder/<stem>.svg` and `.pdf` for every plot the sheet declares; `keys`, where given, gains each file's cache key
    (a build keeps them: roofline.compiled.remember_built)."""
    out = {}
    for fig in figures(sheet, resolve):
        for fmt, data in _render_all(fig).items():
            out[f"{folder}/{fig.stem}.{fmt}"] = data
            if keys is not None:
                keys[f"{folder}/{fig.stem}.{fmt}"] = _cache_key(fig, fmt)
    return out


def whole_file(data: bytes, name: str) -> bool:
    """A plot file as `files` writes it: its data digest inside, its format's last line at its end."""
    return digest_of(data) is not None and data.rstrip().endswith(b"</svg>" if name.endswith(".svg") else b"%%EOF")


def digest_of(data: bytes) -> str | None:
    """The data digest a plot file carries, or None."""
    m = _MARKER.search(data)
    return m.group(1).decode() if m else None


def same_plot(a: bytes, b: bytes) -> bool:
    """Two plot files draw the same thing: the same data digest (whatever matplotlib version wrote the bytes)."""
    da = digest_of(a)
    return da is not None and da == digest_of(b)


__all__ = ["FORMATS", "PLOTS_DIR", "STYLE", "Figure", "digest", "digest_of", "draw", "figures", "files", "render", "same_plot", "whole_file"]

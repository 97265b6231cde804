"""The figures a sheet declares (`derivations.engine.Plot`), drawn with matplotlib in the sheet's context.

Every number drawn comes from the derivation evaluated for the sheet's specs
and inputs, never from this module:

- a sweep draws a step over a grid of one input (`derivations.sweep`: compiled
  to numpy, every other input fixed by the context, checked against the exact
  evaluation), and marks the sheet's own values of its crossovers and ceilings;
- a roofline draws `primitives.roofline_time` at each chip's peak and
  bandwidth, marks `primitives.ridge_point`, and places each kernel at its
  evaluated intensity and FLOPs over its evaluated roofline time;
- a heat map colours the cells of the sheet's solved table.

Other accelerators (a roofline's panels) come through the resolver the front
door passes, as table rows do; nothing here reads a spec file or solves.

Files: `<slug>-<plot>.svg` (Markdown, HTML) and `<slug>-<plot>.pdf` (LaTeX),
in the folder `PLOTS_DIR` beside the sheets. The public calls:
`figures(sheet, resolve)` (the data), `render(fig, "svg"|"pdf")` (bytes),
`files(sheet, resolve)` (name -> bytes, drawn or from the cache), `refs(derivation, folder)` (what a
sheet links, without drawing), `same_plot(a, b)` (compare two files by data).

Deterministic output: matplotlib's defaults (never the user's matplotlibrc)
plus `STYLE`, the Agg-family vector backends through `Figure.savefig` (no
pyplot), a fixed `svg.hashsalt`, text kept as text (`svg.fonttype = 'none'`),
no date, creator or producer metadata. Two renders on one machine are
byte-identical. Bytes may still differ between matplotlib versions, so every
file carries `roofline-plot-data sha256:<hex>`, a digest of what it draws (the
data, labels, style and this module's source), and `build --check` compares
plot files by that digest.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pint
import sympy as sp

from derivations import cache, prose
from derivations import glossary as gl
from derivations import primitives as pr
from derivations.context import Context, Input
from derivations.engine import At, Derivation, Plot, Row
from derivations.sheet import FIT_STEP, Missing, Sheet, SolvedTable, evaluate, input_values
from derivations.sweep import Axis, sweep
from renderers.numbers import display, number_text, plain
from specs.errors import SpecError
from units import Quantity, unit, unit_text

Resolver = Callable[[Context, Row], Context]

#: The folder beside the sheets that holds the plot files.
PLOTS_DIR = "plots"
FORMATS = ("svg", "pdf")
#: matplotlib settings on top of its built-in defaults (a user's matplotlibrc is never read).
STYLE: dict[str, Any] = {
    "svg.hashsalt": "roofline",
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "pdf.compression": 6,
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "mathtext.fontset": "dejavusans",
    "axes.grid": True,
    "axes.grid.which": "major",
    "grid.alpha": 0.3,
    "legend.fontsize": 8.0,
    "legend.framealpha": 0.9,
    "figure.dpi": 100.0,
    "savefig.bbox": None,
    "path.simplify": False,
}
#: Points per swept curve (fewer where the input is a whole number over a short range).
SWEEP_POINTS = 160
#: A swept range is widened to show every marked crossover with this much room on a log axis (a factor) or a linear one (a share).
MARK_ROOM = 2.0
_MARKER = re.compile(rb"roofline-plot-data sha256:([0-9a-f]{64})")
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#ff7f0e")
_MARK_COLOURS = ("#444444", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e")
_INLINE_MATH = re.compile(r"\$[^$]*\$")


@dataclass(frozen=True)
class Curve:
    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    #: the step drawn (for tests and readers of the data)
    step: str = ""


@dataclass(frozen=True)
class Line:
    """A marked value: a vertical line at x (axis "x") or a horizontal one at y (axis "y")."""

    label: str
    axis: str
    value: float
    step: str = ""


@dataclass(frozen=True)
class Point:
    """A kernel placed on a roofline: intensity x, attained FLOP/s y, its kind and the batch it was evaluated at."""

    kernel: str
    group: str
    batch: str
    x: float
    y: float


@dataclass(frozen=True)
class Panel:
    title: str
    xlabel: str
    ylabel: str
    log: str
    curves: tuple[Curve, ...] = ()
    lines: tuple[Line, ...] = ()
    points: tuple[Point, ...] = ()
    #: a heat map: values (None where the sheet has none), their text, row and column labels, the colour bar's label
    cells: tuple[tuple[float | None, ...], ...] = ()
    cell_text: tuple[tuple[str, ...], ...] = ()
    rows: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    colorbar: str = ""
    #: the axis units (SI units in which the values above are given)
    units: tuple[str, str] = ("", "")
    #: a roofline panel: the ridge (flop/B) and the peak (in the y unit)
    ridge: float | None = None
    peak: float | None = None
    note: str = ""
    #: x ranges where the setup does not fit in memory (the sheet's memory-fraction step above 1), shaded
    overflow: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class Figure:
    slug: str
    name: str
    kind: str
    #: the declaration's caption (prose: renderers fill it for their target)
    caption: str
    alt: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)

    @property
    def stem(self) -> str:
        return stem(self.slug, self.name)

    @property
    def digest(self) -> str:
        """What the picture shows, hashed: the data and labels, the style and the code that draws them."""
        payload = json.dumps({"figure": _rounded(asdict(self)), "style": STYLE, "code": _CODE_DIGEST}, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(payload.encode()).hexdigest()


def stem(slug: str, name: str) -> str:
    return f"{slug}-{name}"


def refs(d: Derivation, folder: str, fmt: str) -> list[dict[str, str]]:
    """What a sheet links for each of its plots, without drawing: path (`folder/<stem>.<fmt>`), alt text and caption (prose)."""
    return [{"path": f"{folder}/{stem(d.slug, p.name)}.{fmt}", "alt": alt_text(d, p), "caption": p.caption} for p in d.plots]


def alt_text(d: Derivation, p: Plot) -> str:
    """A plain-words description of a plot (Markdown alt text)."""
    if p.kind == "sweep":
        inp = next(i for i in d.inputs if i.name == p.x)
        return f"{_plain(', '.join(_step_title(d, n) for n in p.y))} against {_plain(inp.meaning)}"
    if p.kind == "roofline":
        return "Roofline of each accelerator with the kernels of one decode step"
    return f"Heat map of {_plain(', '.join(_step_title(d, n) for n in p.y[:1]))} and the rest of its table row by row"


def _plain(text: str) -> str:
    return _INLINE_MATH.sub(lambda m: m.group(0).strip("$").replace("\\", "").replace("{", "").replace("}", ""), text).replace("[", "(").replace("]", ")")


# --- data --------------------------------------------------------------------------------------------


def figures(sheet: Sheet, resolve: Resolver) -> tuple[Figure, ...]:
    """Every plot the sheet declares, as data, for the sheet's context."""
    d = sheet.derivation
    out = []
    for p in d.plots:
        if p.kind == "sweep":
            panels = (_sweep(sheet, p),)
        elif p.kind == "roofline":
            panels = _rooflines(sheet, p, resolve)
        else:
            panels = (_heatmap(sheet, p),)
        out.append(Figure(d.slug, p.name, p.kind, p.caption, alt_text(d, p), panels))
    return tuple(out)


def _step_title(d: Derivation, name: str) -> str:
    s = d.step(name)
    text = s.title or s.meaning or s.name
    return text[:1].upper() + text[1:]


def _mathtext(text: str, d: Derivation) -> str:
    """Prose for matplotlib: `$...$` stays mathtext with symbols spelled; a literal `$` would open math, so it is escaped."""
    names = {info.name: info.latex for info in d.symbols}
    return prose.render(text, lambda t: t.replace("$", r"\$"), lambda m: f"${m}$", names)


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


def _factor(si: pint.Unit, shown: pint.Unit) -> float:
    return float(Quantity(1, si).to(shown).magnitude)


def _unit_label(u: pint.Unit) -> str:
    text = unit_text(u)
    return "" if text == "1" else f" ({text})"


def _value_text(value: sp.Expr | float, u: pint.Unit, preferred: str | None = None) -> str:
    return plain(value, u, preferred)


def _sweep(sheet: Sheet, p: Plot) -> Panel:
    d, ctx = sheet.derivation, sheet.context
    inp = next(i for i in d.inputs if i.name == p.x)
    x_unit = d.symbols.info(inp.symbol).unit
    values = evaluate(d, ctx, [*p.vlines, *p.hlines])
    lines: list[Line] = []
    marks_x = []
    for axis, names in (("x", p.vlines), ("y", p.hlines)):
        for name in names:
            v = values[name]
            if isinstance(v, Missing):
                continue
            lines.append(Line(f"{_symbol(d, name)} = {_value_text(v, d.symbols[name].unit, d.display_units.get(name))}", axis, float(v), name))
            if axis == "x":
                marks_x.append(float(v))
    lo, hi = (float(inp.parse(t, "plot span").to(x_unit).magnitude) for t in p.span)
    if marks_x:
        room = MARK_ROOM if "x" in p.log else 1 + (MARK_ROOM - 1) / 10
        lo, hi = min(lo, min(marks_x) / room), max(hi, max(marks_x) * room)
    whole = inp.domain in ("count", "whole")
    if whole:
        lo, hi = max(math.floor(lo), 1), math.ceil(hi)
    grid = np.geomspace(lo, hi, SWEEP_POINTS) if "x" in p.log else np.linspace(lo, hi, SWEEP_POINTS)
    if whole:
        grid = np.unique(np.round(grid))
    y_si = d.symbols[p.y[0]].unit
    raw = {name: _curve(d, ctx, name, inp, grid) for name in p.y}
    all_y = [float(v) for ys in raw.values() if ys is not None for v in ys]
    y_shown = _axis_unit(all_y, y_si, d.display_units.get(p.y[0]))
    fy = _factor(y_si, y_shown)
    curves = tuple(Curve(f"{_mathtext(_step_title(d, n), d)} {_symbol(d, n)}", tuple(float(x) for x in grid), tuple(float(v) * fy for v in ys), n)
                   for n, ys in raw.items() if ys is not None)
    lines = [Line(ln.label, ln.axis, ln.value * (fy if ln.axis == "y" else 1.0), ln.step) for ln in lines]
    info = d.symbols.info(inp.symbol)
    xlabel = f"{_mathtext(_sentence(inp.meaning), d)}, ${info.latex}${_unit_label(x_unit)}"
    ylabel = f"{_mathtext(_step_title(d, p.y[0]), d) if len(p.y) == 1 else _quantity_kind(y_si)}{_unit_label(y_shown)}"
    missing = [n for n, ys in raw.items() if ys is None]
    notes = [f"{', '.join(missing)}: no value in this context"] if missing else []
    overflow = _overflow(d, ctx, inp, grid)
    if overflow == ((float(grid[0]), float(grid[-1])),):  # shading everything would hide the argument: say it once
        notes.append(f"Does not fit in memory at any {inp.name} shown")
        overflow = ()
    return Panel(sheet.context_label, xlabel, ylabel, p.log, curves, tuple(lines), units=(unit_text(x_unit), unit_text(y_shown)),
                 note="; ".join(notes), overflow=overflow)


def _overflow(d: Derivation, ctx: Context, inp: Input, grid: np.ndarray) -> tuple[tuple[float, float], ...]:
    """The x ranges where the sheet's memory-fraction step is above 1: the setup does not fit (sheets that compute it)."""
    if FIT_STEP not in d.expanded or inp.symbol not in d.symbols_of[FIT_STEP]:
        return ()
    share = _curve(d, ctx, FIT_STEP, inp, grid)
    if share is None:
        return ()
    over = share > 1
    spans, start = [], None
    for i, flag in enumerate(over):
        if flag and start is None:
            start = i
        if start is not None and (not flag or i == len(over) - 1):
            end = i if flag else i - 1
            # from midway to the last point that fits (the grid's end where the range starts at it) to the last that does not
            lo = float(grid[start]) if start == 0 else float((grid[start - 1] + grid[start]) / 2)
            spans.append((lo, float(grid[end])))
            start = None
    return tuple(spans)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


#: what a y axis of several curves shows, by its unit
_KINDS = (("s", "Time"), ("token/s", "Throughput"), ("J/token", "Energy per token"), ("B", "Bytes"), ("W", "Power"))


def _quantity_kind(u: pint.Unit) -> str:
    return next((kind for text, kind in _KINDS if unit(text).dimensionality == u.dimensionality), "Value")


def _curve(d: Derivation, ctx: Context, name: str, inp: Input, grid: np.ndarray) -> np.ndarray | None:
    """Step `name` over `grid` values of input `inp`, every other input and spec value fixed by `ctx`; None where it has no value here.

    `derivations.sweep` compiles the steps to numpy with the exact evaluation's domain rules and checks the grid's
    ends against `evaluate`, so a point of the curve is the sheet's value at that input (NaN where there is none).
    """
    texts = tuple(str(int(v)) if float(v).is_integer() else repr(float(v)) for v in grid)
    result = sweep(d, ctx, name, [Axis(inp, texts, grid.astype(float))])
    y = np.asarray(result.values, dtype=float).reshape(grid.shape)
    return None if not np.isfinite(y).any() else y


#: kernel names by kind, for the roofline's markers (anything else is a weight GEMM)
ATTENTION_KERNELS = frozenset({"attn"})
SMALL_KERNELS = frozenset({"ew", "ew_mlp", "ew_moe"})


def kernel_group(kernel: str) -> str:
    if kernel in ATTENTION_KERNELS:
        return "attention"
    if kernel in SMALL_KERNELS:
        return "small kernels"
    return "weight GEMMs"


def _rooflines(sheet: Sheet, p: Plot, resolve: Resolver) -> tuple[Panel, ...]:
    """One panel per accelerator of the sheet's grid (the sheet's own chip alone when it is not one of them)."""
    d, ctx = sheet.derivation, sheet.context
    chips = d.hardware if ctx.hardware.key in d.hardware else ()
    contexts = []
    for key in chips:
        try:
            contexts.append(ctx if key == ctx.hardware.key else resolve(ctx, Row("", hardware=key)))
        except SpecError:
            continue
    contexts = contexts or [ctx]
    # one unit on every panel (they share the y axis): the one that suits the smallest peak
    peaks = [float(input_values(d, c, {gl.pi})[gl.pi]) for c in contexts]
    shown = _axis_unit([min(peaks)], unit("flop/s"), None)
    return tuple(_roofline(d, c, p, shown) for c in contexts)


def _roofline(d: Derivation, ctx: Context, p: Plot, shown: pint.Unit) -> Panel:
    machine = input_values(d, ctx, {gl.pi, gl.beta})
    peak_si, ridge = float(machine[gl.pi]), float(pr.ridge_point().xreplace(machine))
    intensity = sp.Symbol("I", positive=True)
    attainable = sp.lambdify(intensity, 1 / pr.roofline_time(sp.Integer(1), 1 / intensity).xreplace(machine), modules="numpy")
    fy = _factor(unit("flop/s"), shown)
    names = [f"{part}_{k}" for k in p.kernels for part in ("flops", "t", "intensity")]
    points = []
    for batch in p.batches:
        values = evaluate(d, ctx.with_overrides(batch=batch), names)
        for k in p.kernels:
            f, t, i = (values[f"{part}_{k}"] for part in ("flops", "t", "intensity"))
            if any(isinstance(v, Missing) for v in (f, t, i)) or not (f > 0 and t > 0):
                continue  # a kernel this model does not run
            points.append(Point(k, kernel_group(k), batch, float(i), float(f / t) * fy))
    xs = [pt.x for pt in points] + [ridge]
    lo, hi = 10 ** math.floor(math.log10(min(xs) / 2)), 10 ** math.ceil(math.log10(max(xs) * 2))
    grid = np.geomspace(lo, hi, SWEEP_POINTS)
    roof = Curve(f"roofline at {ctx.math.math.upper()} peak", tuple(float(x) for x in grid),
                 tuple(float(v) * fy for v in attainable(grid)), "roofline")
    ridge_line = Line(f"ridge {_value_text(pr.ridge_point().xreplace(machine), unit('flop/B'))}", "x", ridge, "ridge_point")
    return Panel(ctx.hardware.name, "Arithmetic intensity (flop/B)", f"Attainable FLOP/s{_unit_label(shown)}", "xy", (roof,), (ridge_line,),
                 tuple(points), units=("flop/B", unit_text(shown)), ridge=ridge, peak=peak_si * fy)


def _heatmap(sheet: Sheet, p: Plot) -> Panel:
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
                text.append(number_text(display(v.exact, v.unit, v.display_unit).number))
        cells.append(tuple(row))
        texts.append(tuple(text))
    columns, xlabel = _heat_columns(d, p.y)
    of = d.step(p.y[0])
    base = of.of if isinstance(of, At) else of.name
    return Panel(sheet.context_label, xlabel, _heat_rows_label(d, table), "", cells=tuple(cells), cell_text=tuple(texts), rows=tuple(rows),
                 columns=columns, colorbar=f"{_mathtext(_step_title(d, base), d)} {_symbol(d, base)}", units=("", unit_text(d.symbols[base].unit)))


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


def _rounded(x: Any) -> Any:
    """Floats to 9 significant digits, so a digest does not depend on the last bits a platform's libm computes."""
    if isinstance(x, float):
        return None if not math.isfinite(x) else float(f"{x:.9g}")
    if isinstance(x, Mapping):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_rounded(v) for v in x]
    return x


_CODE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


# --- drawing -----------------------------------------------------------------------------------------


def marker(fig: Figure) -> str:
    return f"roofline-plot-data sha256:{fig.digest}"


def render(fig: Figure, fmt: str) -> bytes:
    """The figure as SVG or PDF bytes; the same figure gives the same bytes on one machine.

    Drawn bytes are kept in the roofline cache (derivations.cache) under the figure's digest and matplotlib's
    version, so a build that draws what it drew before skips matplotlib; `ROOFLINE_CACHE=off` always draws.
    """
    if fmt not in FORMATS:
        raise ValueError(f"plot format {fmt!r}; expected one of {', '.join(FORMATS)}")
    k = cache.key("plot", fig.digest, fmt, version("matplotlib"))
    found = cache.load_bytes(k)
    # a whole drawing of this figure (its digest inside, its format's last line at the end), or a miss
    if found is not None and digest_of(found) == fig.digest and found.rstrip().endswith(b"</svg>" if fmt == "svg" else b"%%EOF"):
        return found
    data = draw(fig, fmt)
    cache.store_bytes(k, data)
    return data


def draw(fig: Figure, fmt: str) -> bytes:
    """The figure drawn by matplotlib, bypassing the cache."""
    import matplotlib
    from matplotlib.figure import Figure as MplFigure

    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(STYLE)
        mpl = MplFigure(figsize=_size(fig), layout="constrained")
        _DRAW[fig.kind](mpl, fig)
        buf = io.BytesIO()
        if fmt == "svg":
            metadata = {"Date": None, "Creator": None, "Description": marker(fig)}
        else:
            metadata = {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None, "Subject": marker(fig)}
        mpl.savefig(buf, format=fmt, metadata=metadata)
    return buf.getvalue()


def files(sheet: Sheet, resolve: Resolver, folder: str = PLOTS_DIR) -> dict[str, bytes]:
    """`folder/<stem>.svg` and `.pdf` for every plot the sheet declares."""
    out = {}
    for fig in figures(sheet, resolve):
        for fmt in FORMATS:
            out[f"{folder}/{fig.stem}.{fmt}"] = render(fig, fmt)
    return out


def digest_of(data: bytes) -> str | None:
    """The data digest a plot file carries, or None."""
    m = _MARKER.search(data)
    return m.group(1).decode() if m else None


def same_plot(a: bytes, b: bytes) -> bool:
    """Two plot files draw the same thing: the same data digest (whatever matplotlib version wrote the bytes)."""
    da = digest_of(a)
    return da is not None and da == digest_of(b)


def _size(fig: Figure) -> tuple[float, float]:
    if fig.kind == "roofline":
        n = len(fig.panels)
        rows = 1 if n == 1 else (n + 2) // 2
        return (6.5, 4.0) if n == 1 else (6.5, 3.0 * rows)
    if fig.kind == "heatmap":
        return (6.5, 0.45 * max(len(fig.panels[0].rows), 4) + 1.4)
    return (6.5, 4.0)


def _draw_sweep(mpl: Any, fig: Figure) -> None:
    panel = fig.panels[0]
    ax = mpl.add_subplot()
    _scales(ax, panel.log)
    for k, (lo, hi) in enumerate(panel.overflow):
        ax.axvspan(lo, hi, color="0.88", lw=0, zorder=0, label="does not fit in memory" if k == 0 else None)
    for i, c in enumerate(panel.curves):
        ax.plot(c.x, c.y, color=_COLOURS[i % len(_COLOURS)], lw=1.8 if i == 0 else 1.3, ls="-" if i == 0 else ("--", ":", "-.")[(i - 1) % 3],
                label=c.label)
    for j, ln in enumerate(panel.lines):
        # marked values in colours of their own (a legend of look-alike lines would not say which is which): dashed across x, dotted across y
        style = {"color": _MARK_COLOURS[j % len(_MARK_COLOURS)], "lw": 1.1, "label": ln.label}
        if ln.axis == "x":
            ax.axvline(ln.value, ls=(0, (5, 2)), **style)
        else:
            ax.axhline(ln.value, ls=(0, (1, 1.2)), **style)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=9)
    ax.legend(loc="best")
    if panel.note:
        ax.text(0.01, 0.99, panel.note, transform=ax.transAxes, ha="left", va="top", fontsize=7.5, color="0.3")


def _scales(ax: Any, log: str) -> None:
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")


#: marker per kernel kind; colour per batch
_KIND_MARKERS = {"weight GEMMs": "o", "attention": "^", "small kernels": "s"}


def _draw_roofline(mpl: Any, fig: Figure) -> None:
    n = len(fig.panels)
    cols = 1 if n == 1 else 2
    rows = (n + 1) // cols if n > 1 else 1
    grid = mpl.add_gridspec(rows, cols)
    axes = []
    for k, panel in enumerate(fig.panels):
        ax = mpl.add_subplot(grid[k // cols, k % cols], sharey=axes[0] if axes else None)
        axes.append(ax)
        _scales(ax, "xy")
        roof = panel.curves[0]
        ax.plot(roof.x, roof.y, color="black", lw=1.6, label=roof.label)
        ridge = panel.lines[0]
        ax.axvline(ridge.value, color="0.35", lw=0.9, ls=(0, (4, 2)))
        ax.annotate(ridge.label, (ridge.value, panel.peak or 1.0), xytext=(4, -12), textcoords="offset points", fontsize=7.5, color="0.2")
        batches = list(dict.fromkeys(pt.batch for pt in panel.points))
        for b_index, batch in enumerate(batches):
            for group, shape in _KIND_MARKERS.items():
                pts = [pt for pt in panel.points if pt.batch == batch and pt.group == group]
                if pts:
                    # the first batch as large open markers, the last as small filled ones: a kernel the batch does not move shows both
                    filled = b_index == len(batches) - 1
                    colour = _COLOURS[b_index % len(_COLOURS)]
                    ax.scatter([pt.x for pt in pts], [pt.y for pt in pts], marker=shape, s=22 if filled else 70, zorder=3 + b_index, linewidths=1.2,
                               facecolors=colour if filled else "none", edgecolors=colour, label=f"{group}, $B$ = {batch}")
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
    handles, labels = axes[0].get_legend_handles_labels()
    if n > 1 and n % 2 == 1:
        spare = mpl.add_subplot(grid[rows - 1, 1])
        spare.axis("off")
        spare.legend(handles, labels, loc="center", fontsize=8)
    else:
        axes[0].legend(handles, labels, loc="lower right", fontsize=7)


def _draw_heatmap(mpl: Any, fig: Figure) -> None:
    from matplotlib.colors import Normalize, TwoSlopeNorm

    panel = fig.panels[0]
    data = np.array([[np.nan if v is None else v for v in row] for row in panel.cells], dtype=float)
    finite = data[np.isfinite(data)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    # a ratio (a speedup) is white at 1, blue above and red below, a factor up as deep a colour as the same factor down;
    # any other value spans its own range
    ratio = panel.units[1] == "1" and lo > 0
    top = max(hi, 1.0 / lo, 1.0 + 1e-9) if ratio else hi
    norm = TwoSlopeNorm(vmin=1.0 / top, vcenter=1.0, vmax=top) if ratio else Normalize(vmin=lo, vmax=hi if hi > lo else lo + 1)
    ax = mpl.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu", norm=norm, aspect="auto")
    for i, row in enumerate(panel.cell_text):
        for j, text in enumerate(row):
            v = data[i, j]
            dark = np.isfinite(v) and abs(norm(v) - 0.5) > 0.3
            ax.text(j, i, text, ha="center", va="center", fontsize=7.5, color="white" if dark else "black")
    ax.set_xticks(range(len(panel.columns)), panel.columns)
    ax.set_yticks(range(len(panel.rows)), panel.rows)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=9)
    ax.grid(False)
    mpl.colorbar(image, ax=ax, label=panel.colorbar)


_DRAW: dict[str, Callable[[Any, Figure], None]] = {"sweep": _draw_sweep, "roofline": _draw_roofline, "heatmap": _draw_heatmap}

__all__ = ["FORMATS", "PLOTS_DIR", "STYLE", "Figure", "alt_text", "digest_of", "draw", "figures", "files", "refs", "render", "same_plot", "stem"]

"""Each kind of figure drawn with matplotlib in the house style of `renderers.plot_draw` (a sweep, rooflines, bars, a
stack, a scatter, a heat map), and `draw`, which sets a figure up, draws it by its kind and writes it in each format.

Deterministic output: see `renderers.plot_draw`.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .plot_draw import (
    FALLBACK_SERIF,
    INK,
    LABEL_SIZE,
    MARK,
    MUTED,
    PALETTE,
    SHADE,
    STYLE,
    WIDTH,
    Placer,
    draw_title,
    fonts_in_use,
    lay_out,
    plain_tick,
    wrap_label,
)

if TYPE_CHECKING:
    from .figure_data import Figure, Panel

#: candidate offsets (points) of a point's label, nearest first
_AROUND = ((6, 0, "left", "center"), (-6, 0, "right", "center"), (0, 6, "center", "bottom"), (0, -6, "center", "top"),
           (6, 6, "left", "bottom"), (-6, 6, "right", "bottom"), (6, -6, "left", "top"), (-6, -6, "right", "top"),
           (14, 12, "left", "bottom"), (-14, 12, "right", "bottom"), (14, -12, "left", "top"), (-14, -12, "right", "top"),
           (22, 0, "left", "center"), (-22, 0, "right", "center"), (0, 18, "center", "bottom"), (0, -18, "center", "top"))


def draw(fig: Figure, formats: Sequence[str], marker: str) -> dict[str, bytes]:
    """The figure laid out once and written in each of `formats` ("svg", "pdf"), `marker` (its data digest) in each file's metadata."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    out = {}
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(STYLE)
        matplotlib.rcParams["font.family"] = [fonts_in_use(), FALLBACK_SERIF]
        mpl = MplFigure(figsize=_size(fig), layout="constrained")
        canvas = FigureCanvasAgg(mpl)
        _DRAW[fig.kind](mpl, canvas, fig)
        _freeze(mpl)
        for fmt in formats:
            buf = io.BytesIO()
            if fmt == "svg":
                metadata = {"Date": None, "Creator": None, "Description": marker}
            else:
                metadata = {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None, "Subject": marker}
            mpl.savefig(buf, format=fmt, metadata=metadata)
            out[fmt] = buf.getvalue()
    return out


def _freeze(mpl: Any) -> None:
    """Lay the figure out once, if its kind has not (`lay_out`), so that every format writes the same picture."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    if isinstance(mpl.get_layout_engine(), ConstrainedLayoutEngine):
        lay_out(mpl)


def _size(fig: Figure) -> tuple[float, float]:
    """The figure's size without its title band (`draw_title` adds that): drawn as it prints, a page's width and, with its
    title and key, no taller than the answer figure's room on page 1 (sheet.tex.j2: 0.4 of the text height), so its 8 pt
    text prints at 8 pt rather than shrunk."""
    panel = fig.panels[0]
    if fig.kind == "heatmap":
        return (WIDTH, 0.3 * max(len(panel.rows), 4) + 1.0)
    if fig.kind == "bars":
        return (WIDTH, 0.25 * max(len(panel.bars), 3) + 0.9)
    if fig.kind == "stack":
        return (WIDTH, 0.3 * max(len(panel.bars), 2) + 0.8)
    if fig.kind == "roofline":
        return (WIDTH, 2.9)
    return (WIDTH, 2.7)


# --- the kinds -------------------------------------------------------------------------------------------


def _scales(ax: Any, log: str) -> None:
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")


def _limits(values: Sequence[float], log: bool, room: float = 0.08, floor_zero: bool = False) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v) and (v > 0 or not log)]
    if not finite:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(finite), max(finite)
    if log:
        span = math.log10(hi / lo) if hi > lo else 1.0
        return lo / 10 ** (room * span + 0.05), hi * 10 ** (room * span + 0.05)
    span = hi - lo if hi > lo else abs(hi) or 1.0
    low = 0.0 if floor_zero and lo >= 0 else lo - room * span
    return low, hi + room * span


def _mark_candidates(value: float, side_first: str = "left") -> list[tuple[Any, tuple[float, float], float, float, str, str]]:
    """Where a vertical mark's label may go: beside its line, from the top of the axes down."""
    sides = ((3, "left"), (-3, "right")) if side_first == "left" else ((-3, "right"), (3, "left"))
    return [(("data", "axes fraction"), (value, frac), dx, 0, ha, "top")
            for frac in (0.985, 0.9, 0.815, 0.73, 0.6, 0.47, 0.34, 0.21) for dx, ha in sides]


def _hline_candidates(value: float) -> list[tuple[Any, tuple[float, float], float, float, str, str]]:
    return [(("axes fraction", "data"), (fx, value), dx, dy, ha, va)
            for fx, dx, ha in ((0.995, 0, "right"), (0.005, 0, "left"), (0.5, 0, "center"), (0.75, 0, "center"), (0.25, 0, "center"))
            for dy, va in ((2, "bottom"), (-2, "top"))]


def _draw_sweep(mpl: Any, canvas: Any, fig: Figure) -> None:
    panel = fig.panels[0]
    ax = mpl.add_subplot()
    _scales(ax, panel.log)
    xs = [x for c in panel.curves for x in c.x]
    ys = [y for c in panel.curves for y in c.y] + [ln.value for ln in panel.lines if ln.axis == "y"]
    xlim = (min(xs), max(xs)) if xs else (1.0, 10.0)
    if panel.discrete and xs:  # room for the end points' markers
        pad = 1.15 if "x" in panel.log else (xlim[1] - xlim[0]) * 0.04 or 0.5
        xlim = (xlim[0] / pad, xlim[1] * pad) if "x" in panel.log else (xlim[0] - pad, xlim[1] + pad)
    ylim = _limits(ys, "y" in panel.log, room=0.1, floor_zero=True)
    if "y" not in panel.log and ylim[0] == 0:
        ylim = (0.0, ylim[1] * 1.06)
    for lo, hi in panel.overflow:
        ax.axvspan(lo, hi, facecolor=SHADE, edgecolor="none", zorder=0)
    for i, c in enumerate(panel.curves):
        ax.plot(c.x, c.y, color=PALETTE[i % len(PALETTE)], lw=1.9 if i == 0 else 1.5, ls=("-", (0, (5, 2)), (0, (1, 1.4)), (0, (6, 2, 1, 2)))[i % 4],
                zorder=3, **({"marker": _MARKERS[i % len(_MARKERS)], "ms": 4.5} if panel.discrete else {}))
    if panel.discrete and xs:
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

        ax.xaxis.set_major_locator(FixedLocator(sorted(set(xs))))
        ax.xaxis.set_major_formatter(FuncFormatter(plain_tick))
        ax.xaxis.set_minor_locator(NullLocator())
    for ln in panel.lines:
        if ln.axis == "x":
            ax.axvline(ln.value, color=MARK, lw=0.8, ls=(0, (4, 2.5)), zorder=2)
        else:
            ax.axhline(ln.value, color=MARK, lw=0.8, ls=(0, (1, 1.5)), zorder=2)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    draw_title(mpl, canvas, fig, panel.title)
    lay_out(mpl, panel.y_tick_unit)
    placer = Placer(ax, canvas)
    for c in panel.curves:
        placer.line(c.x, c.y)
    for ln in panel.lines:
        placer.line(*(([ln.value, ln.value], [0, 1]) if ln.axis == "x" else ([0, 1], [ln.value, ln.value])),
                    transform=ax.get_xaxis_transform() if ln.axis == "x" else ax.get_yaxis_transform())
    for ln in panel.lines:
        cands = _mark_candidates(ln.value) if ln.axis == "x" else _hline_candidates(ln.value)
        placer.place(ln.label, cands, bbox={"fc": "white", "ec": "none", "pad": 0.4})
    if panel.overflow_label:
        lo = panel.overflow[0][0]
        placer.place(panel.overflow_label, [(("data", "axes fraction"), (lo, fy), 4, 0, "left", va)
                                            for fy, va in ((0.03, "bottom"), (0.5, "center"), (0.2, "bottom"), (0.8, "top"), (0.97, "top"))],
                     color=MUTED)
    for i, c in enumerate(panel.curves):
        if len(panel.curves) > 1:  # one curve is named by its axis
            placer.place(c.label, _curve_candidates(c), color=PALETTE[i % len(PALETTE)])
    if panel.note:
        placer.place(panel.note, [("axes fraction", (0.01, 0.99), 0, 0, "left", "top"), ("axes fraction", (0.01, 0.01), 0, 0, "left", "bottom")],
                     color=MUTED)


def _curve_candidates(c: Any) -> list[tuple[Any, tuple[float, float], float, float, str, str]]:
    """Along the curve, from its right end leftwards, just above and just below it."""
    n = len(c.x)
    out = []
    for frac in (0.96, 0.86, 0.75, 0.64, 0.52, 0.4, 0.28, 0.16, 0.06):
        i = min(n - 1, int(frac * (n - 1)))
        if not (math.isfinite(c.x[i]) and math.isfinite(c.y[i])):
            continue
        ha = "right" if frac > 0.8 else ("left" if frac < 0.2 else "center")
        for dy, va in ((5, "bottom"), (-5, "top"), (10, "bottom"), (-10, "top")):
            out.append(("data", (c.x[i], c.y[i]), 0, dy, ha, va))
    return out or [("axes fraction", (0.5, 0.5), 0, 0, "center", "center")]


def _colours(labels: Sequence[str], skip_black: bool = True) -> dict[str, str]:
    palette = [c for c in PALETTE if not (skip_black and c == "#000000")]
    out: dict[str, str] = {}
    for label in labels:
        if label not in out:
            out[label] = palette[len(out) % len(palette)]
    return out


def _clusters(points: Sequence[Any], tolerance: float = 0.12) -> list[list[Any]]:
    """Points with one label at about one place (within `tolerance` decades on both axes: the tied GEMMs, whose activation rows
    part them a little), in the order they were given."""
    out: list[list[Any]] = []
    for pt in points:
        for group in out:
            first = group[0]
            if first.label == pt.label and first.roof == pt.roof and abs(math.log10(pt.x / first.x)) < tolerance \
                    and abs(math.log10(pt.y / first.y)) < tolerance:
                group.append(pt)
                break
        else:
            out.append([pt])
    return out


_OTHER_ROOFS = ("#6e6e6e", "#9a9a9a", "#b8b8b8")
_OTHER_DASHES = ((0, (6, 2)), (0, (2, 1.5)), (0, (6, 2, 1, 2)))


def _draw_roofline(mpl: Any, canvas: Any, fig: Figure) -> None:
    panel = fig.panels[0]
    ax = mpl.add_subplot()
    _scales(ax, "xy")
    # the sheet's chip in ink, the others in greys with their own dashes: colour is left to the points
    roof_colours = [INK] + [_OTHER_ROOFS[(k - 1) % len(_OTHER_ROOFS)] for k in range(1, len(panel.roofs))]
    for k, roof in enumerate(panel.roofs):
        ax.plot(roof.x, roof.y, color=roof_colours[k], lw=1.9 if roof.own else 1.2,
                ls="-" if roof.own else _OTHER_DASHES[(k - 1) % len(_OTHER_DASHES)], zorder=2)
    xs = [x for r in panel.roofs for x in r.x]
    lows = [min(r.y) for r in panel.roofs] + [pt.y for pt in panel.points]
    ax.set_xlim(min(xs), max(xs))
    ax.set_ylim(min(lows) / 2.5, max(r.peak for r in panel.roofs) * 15)
    ymin = ax.get_ylim()[0]
    for k, roof in enumerate(panel.roofs):
        ax.plot([roof.ridge, roof.ridge], [ymin, roof.peak], color=roof_colours[k], lw=0.6, ls=(0, (1, 2)), zorder=1)
        ax.plot([roof.ridge], [roof.peak], marker="o", ms=4, mfc="white", mec=roof_colours[k], mew=1.1, zorder=4, ls="none")
    colours = _colours([pt.label for pt in panel.points])
    own = [pt for pt in panel.points if pt.roof == 0]
    drawn: list[Any] = []
    for pt in panel.points:
        filled = pt.roof == 0
        # a point on top of others' (the weight GEMMs at the flip batch, on attention's intensity) is a ring around them, one
        # ring wider per name already there, so every one shows; the same name twice at one spot is drawn once
        there = {q.label for q in drawn if pt.x > 0 and pt.y > 0 and q.x > 0 and q.y > 0
                 and abs(math.log10(q.x / pt.x)) < 0.04 and abs(math.log10(q.y / pt.y)) < 0.04}
        if pt.label in there:
            continue
        if there:
            ax.plot([pt.x], [pt.y], marker="o", ms=5.5 + 4.5 * len(there), ls="none", zorder=6, mec=colours[pt.label], mfc="none", mew=1.6)
        else:
            ax.plot([pt.x], [pt.y], marker="o", ms=5.5 if filled else 4.5, ls="none", zorder=5, mec=colours[pt.label],
                    mfc=colours[pt.label] if filled else "white", mew=1.1)
        drawn.append(pt)
    trails: dict[str, list[Any]] = {}
    for pt in own:
        trails.setdefault(pt.label, []).append(pt)
    for label, pts in trails.items():
        for a, b in itertools.pairwise(pts):
            if abs(math.log10(b.x / a.x)) > 0.05:
                ax.annotate("", xy=(b.x, b.y), xytext=(a.x, a.y), arrowprops={"arrowstyle": "-|>", "color": colours[label], "lw": 0.9,
                                                                            "shrinkA": 4, "shrinkB": 4, "mutation_scale": 8}, zorder=4)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    draw_title(mpl, canvas, fig, panel.title)
    lay_out(mpl)
    placer = Placer(ax, canvas)
    for roof in panel.roofs:
        placer.line(roof.x, roof.y)
        placer.line([roof.ridge, roof.ridge], [ymin, roof.peak])
        placer.marker(roof.ridge, roof.peak)
    for pt in panel.points:
        placer.marker(pt.x, pt.y, 4.5)
    for pts in trails.values():
        placer.line([p.x for p in pts], [p.y for p in pts])
    # each chip once, up and to the left of its ridge, where the slope leaves the panel empty: its peak and its ridge
    for k, roof in enumerate(panel.roofs):
        name = f"{roof.label}\n" if len(panel.roofs) > 1 else ""
        placer.place(f"{name}{roof.peak_text}, ridge {roof.ridge_text}",
                     [("data", (roof.ridge, roof.peak), dx, dy, "left", va) for dx, dy, va in ((8, 3, "bottom"), (8, -3, "top"))] +
                     [("data", (roof.ridge, roof.peak), dx, dy, "right", "bottom") for dx in (-6, -40, -90, -150, -210)
                      for dy in (5, 16, 27, 38, 49, 60, 71)] +
                     [("data", (roof.ridge, roof.peak), dx, dy, "left", "bottom") for dx in (8, 40) for dy in (14, 25, 36, 47)],
                     color=roof_colours[k], leader=roof_colours[k])
    batches_shown = {p.batch for p in own if p.batch}
    for group in _clusters(own):
        pt = group[0]
        batches = list(dict.fromkeys(p.batch for p in group if p.batch))
        if len(batches) > 1 and set(batches) == batches_shown:
            text = f"{pt.label}, at every batch"
        else:
            text = pt.label + (f", {'; '.join(batches)}" if batches else "")
        placer.place(text, [("data", (pt.x, pt.y), dx, dy, ha, va) for dx, dy, ha, va in _AROUND], color=colours[pt.label],
                     bbox={"fc": "white", "ec": "none", "pad": 0.3, "alpha": 0.85}, leader=colours[pt.label])


def _group_colours(panel: Panel) -> dict[str, str]:
    return _colours([s.group for b in panel.bars for s in b.segments])


def _missing_label(placer: Placer, text: str, y: float) -> None:
    width = placer.frame.width * 0.98
    mpl = placer.ax.figure
    placer.place(wrap_label(mpl, placer.renderer, text, LABEL_SIZE, width), [(("axes fraction", "data"), (0.005, y), 0, 0, "left", "center")],
                 color=MUTED, inside=False)


def _draw_bars(mpl: Any, canvas: Any, fig: Figure) -> None:
    from matplotlib.patches import Patch

    panel = fig.panels[0]
    ax = mpl.add_subplot()
    colours = _group_colours(panel)
    n = len(panel.bars)
    ends = [s.value for b in panel.bars for s in b.segments] + [ln.value for ln in panel.lines] + \
           [b.base for b in panel.bars if b.base is not None]
    log = "x" in panel.log
    if log:
        ax.set_xscale("log")
    for i, b in enumerate(panel.bars):
        if b.missing:
            continue
        seg = b.segments[0]
        c = colours[seg.group]
        if b.base is not None:
            ax.annotate("", xy=(seg.value, i), xytext=(b.base, i), arrowprops={"arrowstyle": "-|>", "color": c, "lw": 1.6,
                                                                               "shrinkA": 0, "shrinkB": 3, "mutation_scale": 10}, zorder=3)
            ax.plot([seg.value], [i], marker="o", ms=5, color=c, zorder=4)
        else:
            ax.barh(i, seg.value, height=0.62, color=c, zorder=3)
    for ln in panel.lines:
        ax.axvline(ln.value, color=MARK, lw=0.9, ls=(0, (4, 2.5)), zorder=2)
    ax.set_yticks(range(n), bar_labels(mpl, canvas, [b.label for b in panel.bars]))
    ax.set_ylim(n - 0.4, -0.9)
    ax.grid(axis="y", visible=False)
    lo, hi = _limits(ends, log, room=0.0)
    if any(b.base is not None for b in panel.bars):
        span = hi - lo
        ax.set_xlim(lo - 0.12 * span, hi + 0.14 * span)
    else:
        ax.set_xlim(lo / 2 if log else 0, hi * (3 if log else 1.16))
    ax.set_xlabel(panel.xlabel)
    groups = [g for g in colours if g]
    key = ([Patch(color=colours[g]) for g in groups], groups) if len(groups) > 1 else None
    draw_title(mpl, canvas, fig, panel.title, key)
    lay_out(mpl)
    placer = Placer(ax, canvas)
    for i, b in enumerate(panel.bars):
        if b.missing:
            continue
        seg = b.segments[0]
        x0 = b.base if b.base is not None else (ax.get_xlim()[0] if log else 0.0)
        placer.line([x0, seg.value], [i, i])
    for ln in panel.lines:
        placer.line([ln.value, ln.value], [0, 1], transform=ax.get_xaxis_transform())
    for ln in panel.lines:
        placer.place(ln.label, [(("data", "axes fraction"), (ln.value, 0.995), dx, 0, ha, "top") for dx, ha in ((3, "left"), (-3, "right"))],
                     bbox={"fc": "white", "ec": "none", "pad": 0.4})
    for i, b in enumerate(panel.bars):
        if b.missing:
            _missing_label(placer, b.missing, i)
            continue
        seg = b.segments[0]
        right = b.base is None or seg.value >= b.base
        placer.place(b.total, [("data", (seg.value, i), 6 if right else -6, 0, "left" if right else "right", "center"),
                               ("data", (seg.value, i), 0, 7, "center", "bottom"), ("data", (seg.value, i), 0, -7, "center", "top")])


#: the widest a bar's label may be, as a share of the figure's width: a longer one wraps (at its " · " first), so the labels
#: never take the width the bars need
BAR_LABEL_SHARE = 0.38


def bar_labels(mpl: Any, canvas: Any, labels: Sequence[str]) -> list[str]:
    """Bar labels wrapped to BAR_LABEL_SHARE of the figure's width: a chip and a model on lines of their own, then words."""
    renderer = canvas.get_renderer()
    width = mpl.get_figwidth() * mpl.dpi * BAR_LABEL_SHARE
    out = []
    for label in labels:
        # "B = 128" stays on one line: the spaces around an equals sign do not break
        parts = [p.strip().replace(" = ", "\u00a0=\u00a0") for p in label.split(" · ")]
        out.append("\n".join(wrap_label(mpl, renderer, p, LABEL_SIZE, width) for p in parts))
    return out


def _room_for_lines(mpl: Any, labels: Sequence[str]) -> None:
    """The figure taller by the lines its bar labels wrap to past two (a bar's row holds two lines of 8 pt)."""
    extra = sum(max(0, label.count("\n") + 1 - 2) for label in labels)
    if extra:
        mpl.set_figheight(mpl.get_figheight() + 0.14 * extra)


def _draw_stack(mpl: Any, canvas: Any, fig: Figure) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    panel = fig.panels[0]
    ax = mpl.add_subplot()
    groups = list(dict.fromkeys(s.group for b in panel.bars for s in b.segments))
    # the parts in the order of the formula (every bar has the same parts), those that are zero on every bar left out
    order = [label for label in dict.fromkeys(s.label for b in panel.bars for s in b.segments)
             if any(s.value for b in panel.bars for s in b.segments if s.label == label)]
    group_of = {s.label: s.group for b in panel.bars for s in b.segments}
    # colours restart in each group; the second group is hatched, so parts of different groups never look alike
    palette = [c for c in PALETTE if c != "#000000"]
    colours, hatch, seen = {}, {}, {}
    for label in order:
        g = group_of[label]
        colours[label] = palette[seen.get(g, 0) % len(palette)]
        seen[g] = seen.get(g, 0) + 1
        hatch[label] = "////" if groups.index(g) % 2 else None
    n = len(panel.bars)
    totals = [sum(s.value for s in b.segments) for b in panel.bars if not b.missing]
    for i, b in enumerate(panel.bars):
        left = 0.0
        for s in b.segments:
            if s.value:
                ax.barh(i, s.value, left=left, height=0.6, color=colours[s.label], hatch=hatch[s.label], edgecolor="white", lw=0.5, zorder=3)
            left += s.value
        for m in b.marks:
            ax.plot([m.value, m.value], [i - 0.38, i + 0.38], color=INK, lw=1.6, zorder=4, solid_capstyle="butt")
    labels = bar_labels(mpl, canvas, [b.label for b in panel.bars])
    _room_for_lines(mpl, labels)
    ax.set_yticks(range(n), labels)
    ax.set_ylim(n - 0.45, -0.55)
    ax.grid(axis="y", visible=False)
    top = max(totals + [m.value for b in panel.bars for m in b.marks], default=1.0)
    longest = max((len(b.total) for b in panel.bars if not b.missing), default=0)
    ax.set_xlim(0, top * max(1.2, 1.06 + 0.012 * longest))  # room past the longest bar for its total ("90.5 ms, does not fit")
    ax.set_xlabel(panel.xlabel)
    handles: list[Any] = [Patch(facecolor=colours[label], hatch=hatch[label], edgecolor="white") for label in order]
    labels = list(order)
    hatched = [g for g in groups if groups.index(g) % 2 and g]
    if len(order) > 1 and hatched:
        handles.append(Patch(facecolor="white", hatch="////", edgecolor=MUTED))
        labels.append(f"hatched: {hatched[0]}")
    for label in dict.fromkeys(m.label for b in panel.bars for m in b.marks):
        handles.append(Line2D([], [], color=INK, lw=1.6, marker="|", ms=9, ls="none"))
        labels.append(label)
    draw_title(mpl, canvas, fig, panel.title, (handles, labels) if len(labels) > 1 else None)
    lay_out(mpl)
    placer = Placer(ax, canvas)
    for i, b in enumerate(panel.bars):
        if b.missing:
            _missing_label(placer, b.missing, i)
            continue
        total = sum(s.value for s in b.segments)
        ends = [total] + [m.value for m in b.marks]
        placer.place(b.total, [("data", (max(ends), i), 5, 0, "left", "center")], inside=False)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _draw_scatter(mpl: Any, canvas: Any, fig: Figure) -> None:
    from matplotlib.lines import Line2D

    panel = fig.panels[0]
    ax = mpl.add_subplot()
    _scales(ax, panel.log)
    values = [v for pt in panel.points for v in (pt.x, pt.y)]
    lo, hi = _limits(values, "x" in panel.log, room=0.06)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal", adjustable="box")
    grid = np.geomspace(lo, hi, 50) if "x" in panel.log else np.linspace(lo, hi, 50)
    ax.plot(grid, grid, color=INK, lw=1.0, zorder=2)
    for ln in panel.lines:
        for sign in (1, -1):
            ax.plot(grid, grid * max(1e-9, 1 + sign * ln.value), color=MUTED, lw=0.8, ls=(0, (4, 2.5)), zorder=2)
    series = list(dict.fromkeys(pt.series for pt in panel.points))
    groups = list(dict.fromkeys(pt.group for pt in panel.points))
    colours = _colours(groups)
    for pt in panel.points:
        ax.plot([pt.x], [pt.y], marker=_MARKERS[series.index(pt.series) % len(_MARKERS)], ms=6, ls="none", mfc=colours[pt.group], mec="white",
                mew=0.6, zorder=4, alpha=0.95)
    handles = [Line2D([], [], marker=_MARKERS[i % len(_MARKERS)], ls="none", color=MUTED, ms=6) for i, _ in enumerate(series) if series[i]]
    labels = [s for s in series if s]
    handles += [Line2D([], [], marker="s", ls="none", color=colours[g], ms=6) for g in groups if g]
    labels += [g for g in groups if g]
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.03, 1.0), fontsize=LABEL_SIZE, handletextpad=0.3, borderaxespad=0.0)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    draw_title(mpl, canvas, fig, panel.title)
    lay_out(mpl)
    placer = Placer(ax, canvas)
    legend = ax.get_legend()
    if legend is not None:
        placer.box(legend.get_window_extent(placer.renderer))
    for pt in panel.points:
        placer.marker(pt.x, pt.y, 4)
    placer.line(grid, grid)
    for ln in panel.lines:
        placer.line(grid, grid * (1 + ln.value))
        placer.line(grid, grid * max(1e-9, 1 - ln.value))
    k = int(len(grid) * 0.8)
    placer.place("predicted = measured", [("data", (grid[k], grid[k]), dx, dy, ha, va) for dx, dy, ha, va in
                                          ((4, -4, "left", "top"), (-4, 4, "right", "bottom"))], color=INK)
    for ln in panel.lines:
        cands = [("data", (grid[j], grid[j] * (1 + s * ln.value)), dx, dy, ha, va) for j in (int(len(grid) * 0.7), int(len(grid) * 0.5))
                 for s, dx, dy, ha, va in ((1, -3, 3, "right", "bottom"), (-1, 3, -3, "left", "top"))]
        placer.place(f"$\\pm$ {ln.label}", cands, color=MUTED)


def _draw_heatmap(mpl: Any, canvas: Any, fig: Figure) -> None:
    from matplotlib.colors import LinearSegmentedColormap, Normalize, TwoSlopeNorm

    panel = fig.panels[0]
    data = np.array([[np.nan if v is None else v for v in row] for row in panel.cells], dtype=float)
    finite = data[np.isfinite(data)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    # a ratio (a speedup) is white at 1, blue above and vermillion below, each side spanning its own range (no half of the
    # scale left unused); any other value, or a ratio on one side of 1 only, runs from white to one colour over its range
    low, high = "#D55E00", "#0072B2"
    ratio = panel.units[1] == "1" and lo > 0
    if ratio and lo < 1 < hi:
        norm: Any = TwoSlopeNorm(vmin=lo, vcenter=1.0, vmax=hi)
        cmap = LinearSegmentedColormap.from_list("ratio", [low, "#ffffff", high])
    elif ratio and hi <= 1:
        norm, cmap = Normalize(vmin=lo, vmax=1.0), LinearSegmentedColormap.from_list("below", [low, "#ffffff"])
    else:
        base = 1.0 if ratio else lo
        norm, cmap = Normalize(vmin=base, vmax=hi if hi > base else base + 1), LinearSegmentedColormap.from_list("above", ["#ffffff", high])
    ax = mpl.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, norm=norm, aspect="auto")
    for i, row in enumerate(panel.cell_text):
        for j, text in enumerate(row):
            v = data[i, j]
            r, g, b, _ = cmap(norm(v)) if np.isfinite(v) else (1, 1, 1, 1)
            dark = 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.4
            ax.text(j, i, text, ha="center", va="center", fontsize=LABEL_SIZE, color="white" if dark else INK)
    ax.set_xticks(range(len(panel.columns)), panel.columns)
    ax.set_yticks(range(len(panel.rows)), panel.rows)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.grid(False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    mpl.colorbar(image, ax=ax, label=panel.colorbar, shrink=0.9)
    draw_title(mpl, canvas, fig, panel.title)


_DRAW: dict[str, Callable[[Any, Any, Figure], None]] = {"sweep": _draw_sweep, "roofline": _draw_roofline, "heatmap": _draw_heatmap,
                                                        "bars": _draw_bars, "stack": _draw_stack, "scatter": _draw_scatter}

__all__ = ["draw"]

"""Drawing the figures of `renderers.plots` with matplotlib, in one house style.

The house style matches the documents: the LaTeX text font (Latin Modern Roman 10 where the system has it, as TeX Live's
lmodern package installs it; DejaVu Serif otherwise, nothing bundled), math in matplotlib's Computer Modern (`cm`), the
Okabe-Ito colour-blind-safe palette, dark text on white, one width that fits the LaTeX text block (the site scales the
SVG to its column). Lines and points carry their own labels, placed where no other label, line or point is (a small greedy
placer over candidate positions, measured with the Agg renderer), so no legend of numbers is needed and no label is
crossed by a line.

Deterministic output: matplotlib's defaults (never the user's matplotlibrc) plus `STYLE`, `Figure.savefig` with no pyplot,
a fixed `svg.hashsalt`, the glyphs written as paths (`svg.fonttype = 'path'`: an SVG looks the same in every viewer, with or
without the fonts), no date, creator or producer metadata, and a placer with no randomness: two renders on one machine are
byte-identical. The sheets give every figure its alt text and caption in words.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from renderers.figure_data import Figure, Panel

#: Okabe and Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/), yellow left out: too light on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
INK = "#1a1a1a"
MUTED = "#5a5a5a"
MARK = "#4d4d4d"
SHADE = "#ececec"
#: The text font: Latin Modern Roman at its 10-point design, the font of the LaTeX sheets.
HOUSE_SERIF = "LM Roman 10"
_LM_FILES = {"lmroman10-regular": ("normal", 400), "lmroman10-italic": ("italic", 400), "lmroman10-bold": ("normal", 700),
             "lmroman10-bolditalic": ("italic", 700)}
FALLBACK_SERIF = "DejaVu Serif"
#: Width of every figure in inches: the LaTeX text block (letter paper, 2.2 cm margins, about 6.77 in) holds it unscaled.
WIDTH = 6.5
#: matplotlib settings on top of its built-in defaults (a user's matplotlibrc is never read).
STYLE: dict[str, Any] = {
    "svg.hashsalt": "roofline",
    # glyphs as paths: a browser or Markdown viewer has neither Latin Modern nor matplotlib's Computer Modern files (whose
    # private encoding turns a Theta into a pound sign as text), so text kept as text would not look like the PDF
    "svg.fonttype": "path",
    # Type 3 glyphs: matplotlib embeds any outline that way, the Latin Modern OpenType (CFF) files included
    "pdf.fonttype": 3,
    "pdf.compression": 6,
    "font.size": 9.0,
    "mathtext.fontset": "cm",
    "axes.formatter.use_mathtext": False,
    "axes.unicode_minus": True,
    "text.color": INK,
    "axes.labelcolor": INK,
    "axes.edgecolor": MUTED,
    "axes.linewidth": 0.7,
    "axes.titlesize": 8.5,
    "axes.labelsize": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "xtick.labelcolor": INK,
    "ytick.labelcolor": INK,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "axes.grid": True,
    "axes.grid.which": "major",
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "legend.fontsize": 8.0,
    "legend.frameon": False,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    # the vector backends lay text out at 72 dpi: measuring at the same resolution shares their cache of parsed math
    "figure.dpi": 72.0,
    "savefig.bbox": None,
    "path.simplify": False,
    "lines.linewidth": 1.6,
    "lines.solid_capstyle": "round",
}
TITLE_SIZE = 10.0
LABEL_SIZE = 8.0
#: candidate offsets (points) of a point's label, nearest first
_AROUND = ((6, 0, "left", "center"), (-6, 0, "right", "center"), (0, 6, "center", "bottom"), (0, -6, "center", "top"),
           (6, 6, "left", "bottom"), (-6, 6, "right", "bottom"), (6, -6, "left", "top"), (-6, -6, "right", "top"),
           (14, 12, "left", "bottom"), (-14, 12, "right", "bottom"), (14, -12, "left", "top"), (-14, -12, "right", "top"),
           (22, 0, "left", "center"), (-22, 0, "right", "center"), (0, 18, "center", "bottom"), (0, -18, "center", "top"))


@cache
def fonts_in_use() -> str:
    """The text font family the figures use on this machine (registered once): Latin Modern Roman 10, else the fallback."""
    from matplotlib import font_manager as fm

    if any(f.name == HOUSE_SERIF for f in fm.fontManager.ttflist):
        return HOUSE_SERIF
    entries = [f for f in fm.fontManager.ttflist if Path(f.fname).stem in _LM_FILES]
    if not entries:
        for path in sorted(fm.findSystemFonts(fontext="otf")):
            if Path(path).stem in _LM_FILES:
                fm.fontManager.addfont(path)
        entries = [f for f in fm.fontManager.ttflist if Path(f.fname).stem in _LM_FILES]
    if not entries:
        return FALLBACK_SERIF
    # one family name for the 10-point design only: the files share "Latin Modern Roman" with their other sizes and cuts
    for f in sorted(entries, key=lambda f: f.fname):
        style, weight = _LM_FILES[Path(f.fname).stem]
        fm.fontManager.ttflist.append(replace(f, name=HOUSE_SERIF, style=style, weight=weight))
    fm.fontManager._findfont_cached.cache_clear()
    return HOUSE_SERIF


@cache
def drawing_setup() -> str:
    """All that a drawn file's bytes depend on beside the figure: matplotlib's version, the text family, and the font files
    the text and the math resolve to, by path (a cache entry of a drawing holds it in its key).

    The path counts: matplotlib's PDF writer orders the fonts it embeds by file path, so the same figure with the same
    fonts, under a virtual environment in another folder (its Computer Modern files sorting before or after the system's
    Latin Modern), is other bytes."""
    import matplotlib
    from matplotlib import font_manager as fm

    family = fonts_in_use()
    files = {f.fname for f in fm.fontManager.ttflist if f.name == family} | {fm.findfont(FALLBACK_SERIF)}
    return "\n".join([matplotlib.__version__, family, matplotlib.get_data_path(), *sorted(files)])


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
    """Lay the figure out once, if its kind has not (`_layout`), so that every format writes the same picture."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    if isinstance(mpl.get_layout_engine(), ConstrainedLayoutEngine):
        _layout(mpl)


def _size(fig: Figure) -> tuple[float, float]:
    """The figure's size without its title band (`_title` adds that)."""
    panel = fig.panels[0]
    extra = 0.0
    if fig.kind == "heatmap":
        return (WIDTH, 0.42 * max(len(panel.rows), 4) + 1.5 + extra)
    if fig.kind == "bars":
        return (WIDTH, 0.3 * max(len(panel.bars), 3) + 1.3 + extra)
    if fig.kind == "stack":
        groups = len({s.label for b in panel.bars for s in b.segments if s.value})
        return (WIDTH, 0.4 * max(len(panel.bars), 2) + 1.4 + 0.17 * math.ceil(groups / 3) + extra)
    if fig.kind == "roofline":
        return (WIDTH, 4.2 + extra)
    return (WIDTH, 3.7 + extra)


# --- text --------------------------------------------------------------------------------------------


def _is_math(text: str) -> bool:
    return (text.count("$") - 2 * text.count(r"\$")) >= 2


def _words(text: str) -> list[str]:
    """Words of a label, a `$...$` group kept whole (a line is never broken inside math)."""
    out, current, inside, i = [], "", False, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] == "$":
            current += text[i:i + 2]
            i += 2
            continue
        if c == "$":
            inside = not inside
        if c == " " and not inside:
            if current:
                out.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        out.append(current)
    return out


def _measure(mpl: Any, renderer: Any, text: str, size: float) -> float:
    """The width in pixels of `text` set at `size` points."""
    t = mpl.text(0, 0, text, fontsize=size)
    width = t.get_window_extent(renderer).width
    t.remove()
    return width


def _wrap(mpl: Any, renderer: Any, text: str, size: float, width_px: float) -> str:
    lines: list[str] = []
    for word in _words(text):
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and _measure(mpl, renderer, trial, size) <= width_px:
            lines[-1] = trial
        else:
            lines.append(word)
    return "\n".join(lines)


def _title(mpl: Any, canvas: Any, fig: Figure, context: str = "", key: tuple[Sequence[Any], Sequence[str]] | None = None) -> None:
    """The finding as the figure's title, wrapped to its width, and under it the key of names `key` (handles, labels) if any, in
    a band of their own above what the layout places; the figure grows by the band. The setup it was drawn for goes beneath,
    in grey."""
    renderer = canvas.get_renderer()
    width = mpl.get_figwidth() * mpl.dpi * 0.98
    text = _wrap(mpl, renderer, fig.title, TITLE_SIZE, width)
    probe = mpl.text(0, 0, text, fontsize=TITLE_SIZE, linespacing=1.25)
    title_h = probe.get_window_extent(renderer).height / mpl.dpi
    probe.remove()
    legend, key_h = None, 0.0
    if key is not None and key[0]:
        for ncols in range(min(4, len(key[1])), 0, -1):
            legend = mpl.legend(*key, loc="upper left", bbox_to_anchor=(0.005, 1.0), bbox_transform=mpl.transFigure, ncols=ncols,
                                fontsize=LABEL_SIZE, handlelength=1.4, columnspacing=1.2, borderaxespad=0.0, borderpad=0.2)
            legend.set_in_layout(False)
            box = legend.get_window_extent(renderer)
            if box.width <= width or ncols == 1:
                break
            legend.remove()
        key_h = legend.get_window_extent(renderer).height / mpl.dpi + 0.06
    height = mpl.get_figheight()
    total = height + title_h + 0.18 + key_h  # inches: room above the title, between it and the key, and below
    mpl.set_figheight(total)
    mpl.text(0.008, 1 - 0.06 / total, text, ha="left", va="top", fontsize=TITLE_SIZE, color=INK, linespacing=1.25)
    if legend is not None:
        legend.set_bbox_to_anchor((0.005, 1 - (title_h + 0.14) / total), transform=mpl.transFigure)
    mpl.get_layout_engine().set(rect=(0, 0, 1, height / total))
    if context:
        mpl.supxlabel(context, x=0.99, ha="right", fontsize=7.0, color=MUTED)


# --- the label placer ------------------------------------------------------------------------------------


class _Placer:
    """Puts labels where they overlap no placed label, cross no registered line and leave the axes nowhere.

    Obstacles are in display coordinates: lines as densely sampled points, placed labels and markers as boxes. Each
    label tries its candidate positions in order and keeps the first free one (else the least crowded).
    """

    def __init__(self, ax: Any, canvas: Any) -> None:
        self.ax = ax
        self.renderer = canvas.get_renderer()
        self.boxes: list[Any] = []
        self.points = np.empty((0, 2))
        self.frame = ax.get_window_extent(self.renderer)

    def line(self, xs: Sequence[float], ys: Sequence[float], transform: Any = None) -> None:
        """A line labels must not cross, in data coordinates (or the given transform's), finite points only."""
        pts = np.column_stack([np.asarray(xs, float), np.asarray(ys, float)])
        pts = pts[np.isfinite(pts).all(axis=1)]
        if len(pts) == 0:
            return
        disp = (transform or self.ax.transData).transform(pts)
        dense = [disp[:1]]
        for a, b in itertools.pairwise(disp):
            n = max(2, int(np.hypot(*(b - a)) / 2.0) + 1)
            dense.append(np.linspace(a, b, n)[1:])
        self.points = np.vstack([self.points, *dense])

    def box(self, bbox: Any) -> None:
        self.boxes.append(bbox)

    def marker(self, x: float, y: float, radius_px: float = 4.0) -> None:
        from matplotlib.transforms import Bbox

        cx, cy = self.ax.transData.transform((x, y))
        self.boxes.append(Bbox.from_extents(cx - radius_px, cy - radius_px, cx + radius_px, cy + radius_px))

    def place(self, text: str, candidates: Sequence[tuple[Any, tuple[float, float], float, float, str, str]], *, inside: bool = True,
              leader: str | None = None, **kw: Any) -> Any:
        """The label at the first free candidate, (xycoords, xy, dx points, dy points, ha, va), else the least crowded one;
        `leader` (a colour) draws a thin line from a label set far from its anchor back to it."""
        best: tuple[float, Any, Any] | None = None
        probe = self._annotate(text, candidates[0], kw) if candidates else None
        for cand in candidates:
            coords, xy, dx, dy, ha, va = cand
            probe.xycoords, probe.xy, probe.xyann = coords, xy, (dx, dy)
            probe.set_ha(ha)
            probe.set_va(va)
            bb = probe.get_window_extent(self.renderer)
            score = self._score(bb, inside)
            if leader is not None and math.hypot(cand[2], cand[3]) > 10:
                score += self._leader_score(self._leader(cand, bb))
            if best is None or score < best[0]:
                best = (score, cand, bb)
            if score == 0:
                break
        if best is None:
            raise ValueError(f"no position to try for the label {text[:40]!r}")
        probe.remove()
        _, cand, bb = best
        far = leader is not None and math.hypot(cand[2], cand[3]) > 10
        ann = self._annotate(text, cand, kw, {"arrowstyle": "-", "color": leader, "lw": 0.5, "shrinkA": 1, "shrinkB": 3} if far else None)
        self.boxes.append(bb)
        if far:
            self.points = np.vstack([self.points, self._leader(cand, bb)])
        return ann

    def _leader(self, cand: tuple[Any, tuple[float, float], float, float, str, str], bb: Any) -> np.ndarray:
        """Points along the line from a label's box to its anchor, in display coordinates."""
        coords, xy = cand[0], cand[1]
        if coords == "data":
            anchor = self.ax.transData.transform(xy)
        elif coords == "axes fraction":
            anchor = self.ax.transAxes.transform(xy)
        else:
            anchor = self.ax.transData.transform(xy)  # a label with a leader is anchored on a data point
        centre = np.array([(bb.x0 + bb.x1) / 2, (bb.y0 + bb.y1) / 2])
        n = max(2, int(np.hypot(*(centre - anchor)) / 2.0))
        line = np.linspace(anchor, centre, n)
        inside = (line[:, 0] > bb.x0 - 2) & (line[:, 0] < bb.x1 + 2) & (line[:, 1] > bb.y0 - 2) & (line[:, 1] < bb.y1 + 2)
        return line[~inside]

    def _leader_score(self, line: np.ndarray) -> float:
        hits = 0
        for other in self.boxes:
            hits += int(((line[:, 0] > other.x0) & (line[:, 0] < other.x1) & (line[:, 1] > other.y0) & (line[:, 1] < other.y1)).sum())
        return 5.0 * hits

    def _annotate(self, text: str, cand: tuple[Any, tuple[float, float], float, float, str, str], kw: dict[str, Any],
                  arrow: dict[str, Any] | None = None) -> Any:
        coords, xy, dx, dy, ha, va = cand
        ann = self.ax.annotate(text, xy=xy, xycoords=coords, xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, annotation_clip=False,
                               fontsize=kw.get("fontsize", LABEL_SIZE), color=kw.get("color", INK), zorder=6, bbox=kw.get("bbox"),
                               arrowprops=arrow)
        ann.set_in_layout(False)
        return ann

    def _score(self, bb: Any, inside: bool) -> float:
        pad = bb.expanded(1.0, 1.0).padded(1.5)
        score = 0.0
        if inside:
            f = self.frame
            outside = max(0.0, f.x0 - pad.x0) + max(0.0, pad.x1 - f.x1) + max(0.0, f.y0 - pad.y0) + max(0.0, pad.y1 - f.y1)
            score += 50.0 * outside
        for other in self.boxes:
            w = min(pad.x1, other.x1) - max(pad.x0, other.x0)
            h = min(pad.y1, other.y1) - max(pad.y0, other.y0)
            if w > 0 and h > 0:
                score += 10.0 + w * h
        if len(self.points):
            p = self.points
            hit = (p[:, 0] > pad.x0) & (p[:, 0] < pad.x1) & (p[:, 1] > pad.y0) & (p[:, 1] < pad.y1)
            score += 5.0 * float(hit.sum())
        return score


def _layout(mpl: Any) -> None:
    """Run the layout once, then freeze it: labels placed afterwards must not move the axes they were measured in."""
    for ax in mpl.axes:
        _log_ticks(ax)
    mpl.draw_without_rendering()
    mpl.set_layout_engine("none")



# --- the kinds -------------------------------------------------------------------------------------------


def _scales(ax: Any, log: str) -> None:
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")


def _plain_tick(v: float, _pos: Any = None) -> str:
    """A log axis's tick as a person writes it (0.01, 1, 300, 10,000); powers of ten beyond that range."""
    if v <= 0 or not math.isfinite(v):
        return ""
    if 1e-3 <= v < 1e6:
        text = f"{v:.3g}"
        if "e" in text:
            text = f"{v:.0f}"
        whole, dot, frac = text.partition(".")
        return (f"{int(whole):,}" if len(whole) > 4 else whole) + dot + frac
    exponent = math.floor(math.log10(v) + 1e-9)
    mantissa = v / 10**exponent
    return f"$10^{{{exponent}}}$" if abs(mantissa - 1) < 1e-6 else f"${mantissa:.2g} \\times 10^{{{exponent}}}$"


def _log_ticks(ax: Any) -> None:
    """Plain numbers on log axes; over less than two decades the 2s and 5s labelled too, so a short axis is readable."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() != "log" or not (lo > 0 and hi > 0):
            continue
        decades = abs(math.log10(hi / lo))
        subs = (1.0, 2.0, 5.0) if decades < 2.2 else (1.0,)
        axis.set_major_locator(LogLocator(base=10, subs=subs))
        axis.set_major_formatter(FuncFormatter(_plain_tick))
        axis.set_minor_formatter(NullFormatter())


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
    ylim = _limits(ys, "y" in panel.log, room=0.1, floor_zero=True)
    if "y" not in panel.log and ylim[0] == 0:
        ylim = (0.0, ylim[1] * 1.06)
    for lo, hi in panel.overflow:
        ax.axvspan(lo, hi, facecolor=SHADE, edgecolor="none", zorder=0)
    for i, c in enumerate(panel.curves):
        ax.plot(c.x, c.y, color=PALETTE[i % len(PALETTE)], lw=1.9 if i == 0 else 1.5, ls=("-", (0, (5, 2)), (0, (1, 1.4)), (0, (6, 2, 1, 2)))[i % 4],
                zorder=3)
    for ln in panel.lines:
        if ln.axis == "x":
            ax.axvline(ln.value, color=MARK, lw=0.8, ls=(0, (4, 2.5)), zorder=2)
        else:
            ax.axhline(ln.value, color=MARK, lw=0.8, ls=(0, (1, 1.5)), zorder=2)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    _title(mpl, canvas, fig, panel.title)
    _layout(mpl)
    placer = _Placer(ax, canvas)
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
    for pt in panel.points:
        filled = pt.roof == 0
        ax.plot([pt.x], [pt.y], marker="o", ms=5.5 if filled else 4.5, ls="none", zorder=5, mec=colours[pt.label],
                mfc=colours[pt.label] if filled else "white", mew=1.1)
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
    _title(mpl, canvas, fig, panel.title)
    _layout(mpl)
    placer = _Placer(ax, canvas)
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


def _missing_label(placer: _Placer, text: str, y: float) -> None:
    width = placer.frame.width * 0.98
    mpl = placer.ax.figure
    placer.place(_wrap(mpl, placer.renderer, text, LABEL_SIZE, width), [(("axes fraction", "data"), (0.005, y), 0, 0, "left", "center")],
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
    ax.set_yticks(range(n), [b.label for b in panel.bars])
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
    _title(mpl, canvas, fig, panel.title, key)
    _layout(mpl)
    placer = _Placer(ax, canvas)
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
    ax.set_yticks(range(n), [b.label for b in panel.bars])
    ax.set_ylim(n - 0.45, -0.55)
    ax.grid(axis="y", visible=False)
    top = max(totals + [m.value for b in panel.bars for m in b.marks], default=1.0)
    ax.set_xlim(0, top * 1.2)
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
    _title(mpl, canvas, fig, panel.title, (handles, labels) if len(labels) > 1 else None)
    _layout(mpl)
    placer = _Placer(ax, canvas)
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
    _title(mpl, canvas, fig, panel.title)
    _layout(mpl)
    placer = _Placer(ax, canvas)
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
    _title(mpl, canvas, fig, panel.title)


_DRAW: dict[str, Callable[[Any, Any, Figure], None]] = {"sweep": _draw_sweep, "roofline": _draw_roofline, "heatmap": _draw_heatmap,
                                                        "bars": _draw_bars, "stack": _draw_stack, "scatter": _draw_scatter}

__all__ = ["FALLBACK_SERIF", "HOUSE_SERIF", "PALETTE", "STYLE", "WIDTH", "draw", "drawing_setup", "fonts_in_use"]

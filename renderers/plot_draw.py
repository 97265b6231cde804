"""The house style the figures of `renderers.plots` are drawn in with matplotlib, and what every kind of figure draws with:
its fonts, the title band, wrapped text, the label placer and the frozen layout (each kind is drawn by
`renderers.draw_kinds`, whose `draw` writes the files).

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

import itertools
import math
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .figure_data import Figure

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


def wrap_label(mpl: Any, renderer: Any, text: str, size: float, width_px: float) -> str:
    lines: list[str] = []
    for word in _words(text):
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and _measure(mpl, renderer, trial, size) <= width_px:
            lines[-1] = trial
        else:
            lines.append(word)
    return "\n".join(lines)


def draw_title(mpl: Any, canvas: Any, fig: Figure, context: str = "", key: tuple[Sequence[Any], Sequence[str]] | None = None) -> None:
    """The finding as the figure's title, wrapped to its width, and under it the key of names `key` (handles, labels) if any, in
    a band of their own above what the layout places; the figure grows by the band. The setup it was drawn for goes beneath,
    in grey."""
    renderer = canvas.get_renderer()
    width = mpl.get_figwidth() * mpl.dpi * 0.98
    text = wrap_label(mpl, renderer, fig.title, TITLE_SIZE, width)
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


class Placer:
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


def lay_out(mpl: Any, y_tick_unit: str = "") -> None:
    """Run the layout once, then freeze it: labels placed afterwards must not move the axes they were measured in.
    `y_tick_unit`: the y values' unit where each tick says its own prefix (figure_data.Panel.y_tick_unit)."""
    for ax in mpl.axes:
        _log_ticks(ax, y_tick_unit)
    mpl.draw_without_rendering()
    mpl.set_layout_engine("none")


#: ticks below this print as grouped numbers (the largest a figure's axis reaches: a context of a million tokens)
PLAIN_TICKS_BELOW = 1e7


def plain_tick(v: float, _pos: Any = None) -> str:
    """A log axis's tick as a person writes it (0.01, 1, 300, 1,000, 10,000, 1,000,000): one style on every axis, a thousands
    comma from 1,000 up as the sheets' numbers have it, so an axis to a million tokens reads 100,000 then 1,000,000, not 10⁶;
    powers of ten beyond that range."""
    if v <= 0 or not math.isfinite(v):
        return ""
    if 1e-3 <= v < PLAIN_TICKS_BELOW:
        text = f"{v:.3g}"
        if "e" in text:
            text = f"{v:.0f}"
        whole, dot, frac = text.partition(".")
        return (f"{int(whole):,}" if len(whole) > 3 else whole) + dot + frac
    exponent = math.floor(math.log10(v) + 1e-9)
    mantissa = v / 10**exponent
    return f"$10^{{{exponent}}}$" if abs(mantissa - 1) < 1e-6 else f"${mantissa:.2g} \\times 10^{{{exponent}}}$"


def prefixed_tick(v: float, unit_text: str) -> str:
    """A tick of a log axis over many decades as a quantity with its own prefix: 0.1 MB as "100 kB", 1e6 MB as "1 TB"."""
    from .numbers import plain

    return plain(v, unit_text) if v > 0 and math.isfinite(v) else ""


def _log_ticks(ax: Any, y_tick_unit: str = "") -> None:
    """Plain numbers on log axes; over less than two decades the 2s and 5s labelled too, so a short axis is readable; a y
    axis whose ticks carry their own prefixes (`y_tick_unit`) says each as a quantity."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if isinstance(axis.get_major_locator(), FixedLocator):  # ticks placed by the drawing (a discrete axis, a bar's labels)
            continue
        if axis.get_scale() == "linear" and max(abs(lo), abs(hi)) >= 1000 and min(lo, hi) >= 0:
            axis.set_major_formatter(FuncFormatter(lambda v, _pos=None: plain_tick(v) if v > 0 else "0"))  # 2,000, not 2000
            continue
        if axis.get_scale() != "log" or not (lo > 0 and hi > 0):
            continue
        decades = abs(math.log10(hi / lo))
        subs = (1.0, 2.0, 5.0) if decades < 2.2 else (1.0,)
        axis.set_major_locator(LogLocator(base=10, subs=subs))
        prefixed = axis is ax.yaxis and y_tick_unit
        axis.set_major_formatter(FuncFormatter(lambda v, _pos=None: prefixed_tick(v, y_tick_unit)) if prefixed else FuncFormatter(plain_tick))
        axis.set_minor_formatter(NullFormatter())


__all__ = ["FALLBACK_SERIF", "HOUSE_SERIF", "PALETTE", "STYLE", "WIDTH", "drawing_setup", "fonts_in_use"]

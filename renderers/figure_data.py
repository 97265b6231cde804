"""A figure as plain data: what `renderers.plots` computes from a sheet and `renderers.draw_kinds` draws (no drawing, no
sympy here). Values are floats in the panel's SI units; every label is text ready for matplotlib."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .figure_refs import stem

#: Points per swept curve (fewer where the input is a whole number over a short range).
SWEEP_POINTS = 160
#: Inputs counted in GPUs (tensor, data and expert parallelism): a sweep over one draws the powers of two, the degrees
#: servers are built with, as points, not a line through 3, 5, 6 and 7 GPUs.
LAYOUT_DEGREES = ("tp", "dp", "ep", "tp_draft")
#: A sweep over a whole quantity with at most this many values draws them as points (a tick at each).
MAX_DISCRETE_POINTS = 12
#: A swept range is widened to show every marked value with this much room on a log axis (a factor) or a linear one (a share).
MARK_ROOM = 2.0


def sweep_grid(lo: float, hi: float, log: bool, whole: bool, degrees: bool, marks: Sequence[float]) -> list[float]:
    """The x values a sweep draws from `lo` to `hi` (its span, in the input's symbol's unit): widened to show every marked x
    value (`marks`), SWEEP_POINTS of them evenly on the axis (`log`: in ratio), whole numbers where the input is one (`whole`),
    and the powers of two plus the marked values where it is a layout degree (`degrees`). The live pages' script (site
    figure.js) draws its sweeps by this rule, ported beside it."""
    if marks:
        room = MARK_ROOM if log else 1 + (MARK_ROOM - 1) / 10
        lo, hi = min(lo, min(marks) / room), max(hi, max(marks) * room)
    if whole:
        lo, hi = max(math.floor(lo), 1), math.ceil(hi)
    n = SWEEP_POINTS - 1
    if log:
        a, b = math.log10(lo), math.log10(hi)
        grid = [lo, *(10 ** (a + (b - a) * i / n) for i in range(1, n)), hi]
    else:
        grid = [lo, *(lo + (hi - lo) * i / n for i in range(1, n)), hi]
    if whole:
        grid = sorted({float(round(x)) for x in grid})
    if degrees:  # GPUs come in powers of two; a degree marked on the sheet (a --set tp=6) is drawn too
        grid = sorted({*(2.0**k for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1) if lo <= 2**k <= hi), *(float(m) for m in marks)})
    return [float(x) for x in grid]


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
    """A placed value: on a roofline an intensity x at attained FLOP/s y; on a scatter a table row.

    `label` names what it is (points with the same label are one thing, drawn as one labelled cluster), `batch` the batch
    it was evaluated at (text), `roof` the index of the roof it sits on, `series` and `group` its marker and colour classes.
    """

    label: str
    x: float
    y: float
    step: str = ""
    batch: str = ""
    roof: int = 0
    series: str = ""
    group: str = ""


@dataclass(frozen=True)
class Roof:
    """One accelerator's roofline: its name, peak (in the panel's y unit) and ridge (flop/B), and the curve drawn."""

    label: str
    peak: float
    ridge: float
    x: tuple[float, ...]
    y: tuple[float, ...]
    peak_text: str
    ridge_text: str
    own: bool = False


@dataclass(frozen=True)
class Segment:
    """One part of a bar: its label, its value in the panel's unit, the step (or term) it is, and the group it belongs to."""

    label: str
    value: float
    step: str = ""
    group: str = ""


@dataclass(frozen=True)
class Bar:
    """One bar: its label, its parts (stacked in order), its total as text, marks on it, or why it has no value."""

    label: str
    segments: tuple[Segment, ...] = ()
    total: str = ""
    marks: tuple[Line, ...] = ()
    missing: str = ""
    #: where the bar starts (a "bars" plot with a base: how far each value moves from it)
    base: float | None = None


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
    #: a roofline: one roof per accelerator, the sheet's own first
    roofs: tuple[Roof, ...] = ()
    bars: tuple[Bar, ...] = ()
    note: str = ""
    #: the x values are the only ones that exist (a GPU count): drawn as points joined, with a tick at each
    discrete: bool = False
    #: a log y axis over many decades: each tick says its value with its own prefix ("100 kB", "1 GB"), the values being in
    #: this unit; "" for ticks in the axis label's unit
    y_tick_unit: str = ""
    #: x ranges where the setup does not fit in memory (beyond the sheet's largest value that fits), shaded, and their label
    overflow: tuple[tuple[float, float], ...] = ()
    overflow_label: str = ""


@dataclass(frozen=True)
class Figure:
    slug: str
    name: str
    kind: str
    #: the declaration's caption (prose: renderers fill it for their target)
    caption: str
    alt: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)
    #: the finding, filled with the sheet's values, as matplotlib text
    title: str = ""
    answer: bool = False

    @property
    def stem(self) -> str:
        return stem(self.slug, self.name)

"""A sweep as named numpy columns with their units: what `roofline.sweep` returns.

One row per point, in the order `roofline sweep` prints them (per hardware, per
model, then the grid in C order, last swept input fastest); the columns are
`hardware`, `model`, each swept input, the result and `missing` (the reason a
point has no value, "" where it has one). Numbers are plain numpy arrays, ready
for matplotlib; the units are beside them in `units`. A point without a
value is NaN in the result column, and its reason is in `missing`: the arrays
never hide a missing value behind a number. `m_as(column, unit)` gives a column
in another unit of its dimension.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
import pint

from .. import units
from ..specs.errors import SpecError
from ..specs.files import replace_files
from ..units import Quantity, unit_text
from .sweep_out import Labelled
from .sweep_out import render as render_text

LABELS = ("hardware", "model")
MISSING = "missing"
WHOLE_DOMAINS = ("count", "whole")


class SweepTable(Mapping[str, np.ndarray]):
    """One sheet result over a grid of inputs, per hardware and model: a mapping column -> numpy array.

    >>> import roofline
    >>> table = roofline.sweep("decode-floor", "kv_bytes_step", over={"batch": [1, 8, 64]},
    ...                        model="llama-3.1-8b")
    >>> table.columns
    ('hardware', 'model', 'batch', 'kv_bytes_step', 'missing')
    >>> table["batch"], table["kv_bytes_step"], table.units["kv_bytes_step"]
    (array([ 1,  8, 64]), array([ 1.07374182,  8.58993459, 68.71947674]), 'GB')
    >>> table.m_as("kv_bytes_step", "GiB").tolist()
    [1.0, 8.0, 64.0]
    """

    def __init__(self, sweeps: Sequence[Labelled]) -> None:
        if not sweeps:
            raise ValueError("a sweep table needs at least one sweep")
        first = sweeps[0].sweep
        self.sweeps: tuple[Labelled, ...] = tuple(sweeps)
        """The sweeps this table holds, one per hardware and model (what `roofline sweep` renders)."""
        self.result: str = first.result
        """The result's name: the column that holds its values."""
        self.inputs: tuple[str, ...] = tuple(a.input.name for a in first.axes)
        """The swept inputs' names, in grid order."""
        self.columns: tuple[str, ...] = (*LABELS, *self.inputs, self.result, MISSING)
        """The column names, in order."""
        self.units: Mapping[str, str | None] = {**dict.fromkeys(LABELS), **{a.input.name: unit_text(units.unit(a.input.unit)) for a in first.axes},
                                                self.result: first.display_unit, MISSING: None}
        """Each column's unit as text ("1" for a plain number, None for a text column); the result is in the sheet's display unit."""

    @cached_property
    def _columns(self) -> dict[str, np.ndarray]:
        """The arrays, built on first use (a sweep rendered straight to CSV never needs them)."""
        first = self.sweeps[0].sweep
        factor = float(Quantity(1, units.unit(first.unit)).to(units.unit(first.display_unit)).magnitude)
        parts: dict[str, list[np.ndarray]] = {c: [] for c in self.columns}
        for labelled in self.sweeps:
            s = labelled.sweep
            n = s.values.size
            parts["hardware"].append(np.full(n, labelled.hardware))
            parts["model"].append(np.full(n, labelled.model))
            grids = np.meshgrid(*(a.values for a in s.axes), indexing="ij") if s.axes else []
            for a, grid in zip(s.axes, grids, strict=True):
                values = grid.ravel()
                parts[a.input.name].append(values.astype(np.int64) if a.input.domain in WHOLE_DOMAINS else values)
            parts[self.result].append(s.values.ravel() * factor)
            reasons = np.array([*s.reason_texts, ""], dtype=str)  # index -1 (a value) picks ""
            parts[MISSING].append(reasons[s.reasons.ravel()])
        columns = {c: np.concatenate(p) for c, p in parts.items()}
        for array in columns.values():
            array.flags.writeable = False  # a column is a view of the sweep, not a scratch buffer
        return columns

    def __getitem__(self, column: str) -> np.ndarray:
        try:
            return self._columns[column]
        except KeyError:
            raise KeyError(f"{column!r}: not a column of this sweep; columns: {', '.join(self.columns)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    @property
    def size(self) -> int:
        """The number of rows (points, over every hardware and model)."""
        return sum(labelled.sweep.values.size for labelled in self.sweeps)

    def m_as(self, column: str, unit: str) -> np.ndarray:
        """A numeric column in another unit of its dimension, as a float array: `table.m_as("t_step", "us")`."""
        own = self.units.get(column) if column in self._columns else None
        if own is None:
            numeric = ", ".join(c for c in self.columns if self.units[c])
            raise KeyError(f"{column!r}: not a numeric column of this sweep; numeric columns: {numeric}")
        try:
            factor = float(Quantity(1, units.unit(own)).to(units.unit(unit)).magnitude)
        except (pint.UndefinedUnitError, pint.DimensionalityError, ValueError, AttributeError, TypeError, SyntaxError):
            raise SpecError("unit", column, f"{str(unit)[:40]!r} is not a unit {column} ({own}) converts to") from None
        # one float factor: pint's own conversion in this registry multiplies by an exact Fraction, which turns a float array into objects
        return self._columns[column] * factor

    def to_numpy(self) -> np.ndarray:
        """The table as one numpy structured array, a field per column (units in `units`)."""
        dtype = [(c, self._columns[c].dtype) for c in self.columns]
        out = np.empty(self.size, dtype=dtype)
        for c in self.columns:
            out[c] = self._columns[c]
        return out

    def to_csv(self, path: str | Path | None = None, unit: str | None = None) -> str:
        """The table as CSV, exactly as `roofline sweep --format csv` prints it; written to `path` when given.

        The header carries each column's unit (`t_step [ms]`); `unit` shows the result in another unit of its dimension.
        """
        text = render_text(self.sweeps, "csv", unit or self.units[self.result])
        if path is not None:
            replace_files({Path(path): text}, make_folders=False)  # whole or untouched; a link there is replaced, not followed
        return text

    def __repr__(self) -> str:
        where = ", ".join(sorted({f"{s.hardware} · {s.model}" for s in self.sweeps}))
        header = ", ".join(c if self.units[c] in (None, "1") else f"{c} [{self.units[c]}]" for c in self.columns)
        return f"<SweepTable {self.result} over {', '.join(self.inputs) or 'no input'}: {self.size} rows ({where}); columns {header}>"


__all__ = ["SweepTable"]

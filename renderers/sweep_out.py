"""Sweeps as CSV, JSON or JSON lines: one row per point, units once per column (in the header), written block by block.

`pieces` yields the text one block of points at a time (derivations.engine.sweep.Plan
evaluates a block, this writes it, the next block reuses the memory), so
`roofline sweep` holds memory for one block however many points it prints.
CSV and JSON lines are a row per line; JSON is one document, written in the
same pieces (its header, then the points, then its closing brackets).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

import pint

from ..derivations.engine import sweep as sweep_module
from ..derivations.engine.sweep import Plan, Sweep
from ..specs.errors import SpecError
from ..units import Quantity, unit, unit_text

#: The formats `pieces` writes.
FORMATS = ("csv", "json", "jsonl")


@dataclass(frozen=True)
class Labelled:
    """One sweep (evaluated, or a plan evaluated block by block as it is written) with the hardware and model it is for."""

    hardware: str
    model: str
    sweep: Sweep | Plan


def _factor(from_unit: str, to_unit: str) -> float:
    try:
        return float(Quantity(1, unit(from_unit)).to(unit(to_unit)).magnitude)
    except (pint.UndefinedUnitError, pint.DimensionalityError, ValueError, AttributeError, TypeError, SyntaxError):
        raise SpecError("--unit", None, f"{to_unit[:40]!r} is not a unit the result ({from_unit}) converts to") from None


def _number(v: float) -> int | float:
    """A whole value (a batch, a count of experts) as an integer; anything else as the float it is."""
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def _header(name: str, u: str) -> str:
    return name if u == "1" else f"{name} [{u}]"


def _columns(s: Sweep | Plan, shown_unit: str) -> list[str]:
    axes = [_header(a.input.name, unit_text(unit(a.input.unit))) for a in s.axes]
    return ["hardware", "model", *axes, _header(s.result, shown_unit), "missing"]


def _blocks(s: Sweep | Plan) -> Iterator[list[tuple[tuple[str, ...], float | None, str]]]:
    """The sweep's points, a block at a time."""
    if isinstance(s, Plan):
        for block in s.blocks():
            yield list(block.points(s))
        return
    points = iter(s.points())
    while chunk := list(islice(points, sweep_module.BLOCK_POINTS)):
        yield chunk


def _csv(rows: Iterable[list[object]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def pieces(results: Sequence[Labelled], fmt: str, shown_unit: str | None = None) -> Iterator[str]:
    """The sweep's text in pieces (a header, then a block of points each): `fmt` is "csv", "json" or "jsonl"; values in
    `shown_unit` (default: the result's own unit). Checks the format and unit before the first piece."""
    if fmt not in FORMATS:
        raise SpecError("--format", None, f"unknown sweep format {str(fmt)[:20]!r}; known: {', '.join(FORMATS)}")
    s0 = results[0].sweep
    shown = shown_unit or s0.unit
    factor = _factor(s0.unit, shown)
    return _pieces(results, fmt, shown, factor)


def _pieces(results: Sequence[Labelled], fmt: str, shown: str, factor: float) -> Iterator[str]:
    s0 = results[0].sweep
    names = [a.input.name for a in s0.axes]
    if fmt == "csv":
        yield _csv([_columns(s0, shown)])
    elif fmt == "json":
        head = {"sheet_result": s0.result, "unit": shown, "inputs": {a.input.name: unit_text(unit(a.input.unit)) for a in s0.axes}, "points": []}
        yield json.dumps(head, indent=1, ensure_ascii=False)[: -len("[]\n}")] + "["
    first = True
    for r in results:
        for block in _blocks(r.sweep):
            if fmt == "csv":
                yield _csv([r.hardware, r.model, *texts, "" if v is None else repr(_number(v * factor)), why] for texts, v, why in block)
                continue
            points = ({"hardware": r.hardware, "model": r.model, **dict(zip(names, texts, strict=True)),
                       "value": None if v is None else _number(v * factor), **({"missing": why} if why else {})}
                      for texts, v, why in block)
            if fmt == "jsonl":
                yield "".join(json.dumps({**p, "unit": shown}, ensure_ascii=False) + "\n" for p in points)
                continue
            text = ",".join("\n  " + json.dumps(p, indent=1, ensure_ascii=False).replace("\n", "\n  ") for p in points)
            yield text if first else "," + text
            first = False
    if fmt == "json":
        yield "\n ]\n}\n"


def render(results: Sequence[Labelled], fmt: str, shown_unit: str | None = None) -> str:
    """The whole text at once (for a sweep small enough to hold; `roofline sweep` writes the pieces as they come)."""
    return "".join(pieces(results, fmt, shown_unit))

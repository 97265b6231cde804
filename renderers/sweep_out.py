"""Sweeps as CSV or JSON: one row per point, units once per column (in the header)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

import pint

from derivations.sweep import Sweep
from specs.errors import SpecError
from units import Quantity, unit, unit_text


@dataclass(frozen=True)
class Labelled:
    """One sweep with the hardware and model it was evaluated for."""

    hardware: str
    model: str
    sweep: Sweep


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


def _columns(results: Sequence[Labelled], shown_unit: str) -> list[str]:
    s = results[0].sweep
    axes = [_header(a.input.name, unit_text(unit(a.input.unit))) for a in s.axes]
    return ["hardware", "model", *axes, _header(s.result, shown_unit), "missing"]


def render(results: Sequence[Labelled], fmt: str, shown_unit: str | None = None) -> str:
    """`fmt` is "csv" or "json"; values in `shown_unit` (default: the result's own unit)."""
    s0 = results[0].sweep
    shown = shown_unit or s0.unit
    factor = _factor(s0.unit, shown)
    rows = []
    for r in results:
        for texts, value, reason in r.sweep.points():
            rows.append((r.hardware, r.model, texts, None if value is None else value * factor, reason))
    if fmt == "json":
        doc = {
            "sheet_result": s0.result,
            "unit": shown,
            "inputs": {a.input.name: unit_text(unit(a.input.unit)) for a in s0.axes},
            "points": [
                {"hardware": h, "model": m, **{a.input.name: t for a, t in zip(s0.axes, texts, strict=True)},
                 "value": None if v is None else _number(v), **({"missing": why} if why else {})}
                for h, m, texts, v, why in rows
            ],
        }
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(_columns(results, shown))
    for h, m, texts, v, why in rows:
        w.writerow([h, m, *texts, "" if v is None else repr(_number(v)), why])
    return out.getvalue()

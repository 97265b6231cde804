"""The public Python API: load specs, derive a sheet, render it.

    >>> from roofline import api
    >>> sheet = api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-8b")
    >>> api.render(sheet, "json")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path

from derivations.context import Context, make_context, parse_overrides
from derivations.engine import Derivation, Row
from derivations.registry import BY_SLUG, DERIVATIONS
from derivations.sheet import Sheet, solve_sheet
from renderers import FORMATS
from specs.errors import SpecError, suggest
from specs.hardware import Hardware, load_hardware
from specs.models import Architecture, load_model
from specs.precisions import precision

__all__ = ["DERIVATIONS", "derive", "get", "hardware", "model", "render"]


@cache
def hardware(name_or_path: str) -> Hardware:
    return load_hardware(name_or_path)


@cache
def model(name_or_path: str) -> Architecture:
    return load_model(name_or_path)


# `derive` takes parameters named hardware and model; these aliases reach the loaders.
_hardware = hardware
_model = model


def get(slug: str) -> Derivation:
    if slug not in BY_SLUG:
        shown = slug if len(slug) <= 40 else slug[:37] + "..."
        raise SpecError(f"question {shown!r}", None, f"unknown question{suggest(slug, BY_SLUG)}; `roofline list questions` lists them")
    return BY_SLUG[slug]


def resolve_row(ctx: Context, row: Row) -> Context:
    """The context a table row describes: the sheet's context with the row's changes."""
    new = ctx
    if row.hardware:
        new = replace(new, hardware=_hardware(row.hardware))
    if row.model:
        new = replace(new, model=_model(row.model))
    if row.weights:
        w = precision(row.weights)
        new = replace(new, weights=w, math=precision(row.math or w.math))
    elif row.math:
        new = replace(new, math=precision(row.math))
    if row.kv:
        new = replace(new, kv=precision(row.kv))
    if row.set:
        new = new.with_overrides(**row.set)
    return new


def derive(
    slug: str,
    hardware: str | None = None,
    model: str | None = None,
    weights: str | None = None,
    kv: str | None = None,
    math: str | None = None,
    overrides: Sequence[str] = (),
) -> Sheet:
    """One sheet: the derivation evaluated for the given (or default) context."""
    d = get(slug)
    hw_names = (hardware,) if hardware else d.hardware
    model_names = (model,) if model else d.models
    ctx = make_context(_hardware(hw_names[0]), _model(model_names[0]), weights, kv, math)
    ctx = replace(ctx, overrides=parse_overrides(list(overrides), d.inputs, d.slug))
    grid = tuple(Row("", hardware=h, model=m) for m in model_names for h in hw_names)
    return solve_sheet(d, ctx, resolve_row, grid)


def render(sheet: Sheet, fmt: str) -> str:
    if fmt not in FORMATS:
        raise SpecError("--format", None, f"unknown format {fmt[:20]!r}; known: {', '.join(FORMATS)}")
    return FORMATS[fmt](sheet)


def out_files(sheet: Sheet, directory: Path) -> dict[Path, str]:
    return {directory / f"{sheet.derivation.slug}.{fmt}": render(sheet, fmt) for fmt in FORMATS}

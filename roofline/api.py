"""The public Python API: load specs, derive a sheet, render it.

    >>> from roofline import api
    >>> sheet = api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-8b")
    >>> api.render(sheet, "json")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from pathlib import Path

from derivations.context import Context, make_context, parse_overrides
from derivations.engine import Derivation, Row
from derivations.registry import BY_SLUG, DERIVATIONS
from derivations.sheet import Sheet, solve_sheet
from renderers import FORMATS
from specs.errors import SpecError, shown, suggest
from specs.hardware import Hardware, load_hardware
from specs.models import Architecture, load_model
from specs.precisions import precision

__all__ = ["DERIVATIONS", "derive", "get", "hardware", "model", "render"]


def _found(value: object) -> str:
    """A wrong-typed argument as an error line shows it: its type and value."""
    return "None" if value is None else f"{type(value).__name__} {shown(value)}"


def _name_or_path(value: object, kind: str) -> str | Path:
    """A spec argument checked for type: a name or path as text, or a path object."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        return Path(value)
    raise SpecError(kind, None, f"expected a shipped name or a path (str or pathlib.Path), found {_found(value)}")


def hardware(name_or_path: str | Path) -> Hardware:
    """A shipped accelerator by name, or your own TOML file by path (cached)."""
    return _load_hardware(_name_or_path(name_or_path, "hardware"))


def model(name_or_path: str | Path) -> Architecture:
    """A shipped model by name, or your own config.json by path (cached)."""
    return _load_model(_name_or_path(name_or_path, "model"))


@cache
def _load_hardware(name_or_path: str | Path) -> Hardware:
    return load_hardware(name_or_path)


@cache
def _load_model(name_or_path: str | Path) -> Architecture:
    return load_model(name_or_path)


# `derive` takes parameters named hardware and model; these aliases reach the loaders.
_hardware = hardware
_model = model


def get(slug: str) -> Derivation:
    if not isinstance(slug, str):
        raise SpecError("question", None, f"expected a question slug such as 'decode-floor' (`roofline list questions`), found {shown(slug)}")
    if slug not in BY_SLUG:
        short = slug if len(slug) <= 40 else slug[:37] + "..."
        raise SpecError(f"question {short!r}", None, f"unknown question{suggest(slug, BY_SLUG)}; `roofline list questions` lists them")
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
    if row.second_hardware:
        new = replace(new, second_hardware=_hardware(row.second_hardware))
    if row.second_model:
        new = replace(new, second_model=_model(row.second_model))
    if row.set:
        new = new.with_overrides(**row.set)
    return new


def derive(
    slug: str,
    hardware: str | Path | None = None,
    model: str | Path | None = None,
    weights: str | None = None,
    kv: str | None = None,
    math: str | None = None,
    overrides: Iterable[str] | None = (),
    second_hardware: str | Path | None = None,
    second_model: str | Path | None = None,
) -> Sheet:
    """One sheet: the derivation evaluated for the given (or default) context.

    `hardware` and `model` are a shipped name or a path; None means the sheet's
    defaults. `overrides` is a list of "NAME=VALUE" strings, each input at most once.
    `second_hardware` and `second_model` (the chip compared with, a drafter)
    apply to sheets that name a second chip or model; None means the sheet's default.
    """
    d = get(slug)
    for where, value in (("--weights", weights), ("--kv", kv), ("--math", math)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise SpecError(where, None, f"expected a precision name such as 'bf16', found {shown(value)}")
    pairs = _override_pairs(overrides)
    hw_names = d.hardware if hardware is None else (_name_or_path(hardware, "hardware"),)
    model_names = d.models if model is None else (_name_or_path(model, "model"),)
    ctx = make_context(_hardware(hw_names[0]), _model(model_names[0]), weights, kv, math)
    ctx = replace(ctx, overrides=parse_overrides(pairs, d.inputs, d.slug))
    ctx = _with_second(d, ctx, second_hardware, second_model)
    grid = tuple(Row("", hardware=h, model=m) for m in model_names for h in hw_names)
    return solve_sheet(d, ctx, resolve_row, grid)


def _with_second(d: Derivation, ctx: Context, second_hardware: str | Path | None, second_model: str | Path | None) -> Context:
    """The sheet's second chip and model: given, else the sheet's default; an option the sheet has no use for is an error."""
    for what, given, default in (("hardware", second_hardware, d.second_hardware), ("model", second_model, d.second_model)):
        if given is not None and default is None:
            users = ", ".join(x.slug for x in DERIVATIONS if getattr(x, f"second_{what}") is not None) or "none"
            raise SpecError(f"--second-{what}", None, f"{d.slug} has no second {what}; sheets that have one: {users}")
    hw = second_hardware if second_hardware is not None else d.second_hardware
    model = second_model if second_model is not None else d.second_model
    if hw is not None:
        ctx = replace(ctx, second_hardware=_hardware(_name_or_path(hw, "second hardware")))
        if ctx.math.math not in ctx.second_hardware.peak_dense:
            raise SpecError(ctx.second_hardware.path, f"peak_dense.{ctx.math.math}",
                            f"{ctx.second_hardware.name} lists no dense {ctx.math.math} peak; it lists {', '.join(ctx.second_hardware.peak_dense)}")
    if model is not None:
        ctx = replace(ctx, second_model=_model(_name_or_path(model, "second model")))
    return ctx


def _override_pairs(overrides: Iterable[str] | None) -> list[str]:
    """Check `overrides`: a list of NAME=VALUE strings, no input named twice."""
    if overrides is None:
        return []
    if isinstance(overrides, str | bytes):
        raise SpecError("overrides", None, f"expected a list of NAME=VALUE strings, found one string {shown(overrides)}; wrap it in a list: [{shown(overrides)}]")
    try:
        pairs = list(overrides)
    except TypeError:
        raise SpecError("overrides", None, f"expected a list of NAME=VALUE strings, found {_found(overrides)}") from None
    seen: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, str):
            raise SpecError("--set", None, f"expected a NAME=VALUE string, found {_found(pair)}")
        name = pair.partition("=")[0].strip()
        if name in seen:
            raise SpecError("--set", name[:40], f"set twice ({shown(seen[name], 40)} and {shown(pair, 40)}); give each input once")
        seen[name] = pair
    return pairs


def render(sheet: Sheet, fmt: str) -> str:
    """One sheet as text: fmt is "md", "tex" or "json"."""
    if not isinstance(sheet, Sheet):
        raise SpecError("sheet", None, f"expected a Sheet from api.derive, found {type(sheet).__name__}")
    if not isinstance(fmt, str):
        raise SpecError("--format", None, f"expected one of {', '.join(FORMATS)}, found {_found(fmt)}")
    if fmt not in FORMATS:
        raise SpecError("--format", None, f"unknown format {fmt[:20]!r}; known: {', '.join(FORMATS)}")
    return FORMATS[fmt](sheet)


def out_files(sheet: Sheet, directory: Path) -> dict[Path, str]:
    return {directory / f"{sheet.derivation.slug}.{fmt}": render(sheet, fmt) for fmt in FORMATS}

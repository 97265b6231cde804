"""The public Python API: load specs, derive a sheet, render it.

    >>> from roofline import api
    >>> sheet = api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-8b")
    >>> api.render(sheet, "json")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from derivations import registry
from derivations.context import Context, make_context, parse_overrides
from derivations.engine import Derivation, Row
from derivations.sheet import Sheet, solve_sheet
from derivations.sweep import check_points, grid_points, parse_axis
from derivations.sweep import plan as sweep_plan
from derivations.sweep import sweep as sweep_grid
from derivations.userfile import is_derivation_file
from derivations.userfile import load as load_derivation_file
from renderers import FORMATS, notebook
from renderers import plots as plot_renderer
from renderers.sweep_out import Labelled
from renderers.sweep_out import pieces as render_sweep_pieces
from renderers.sweep_out import render as render_sweep_text
from specs.errors import SpecError, shown, suggest
from specs.hardware import Hardware, load_hardware
from specs.models import Architecture, load_model
from specs.precisions import precision

__all__ = ["derive", "get", "hardware", "model", "render"]


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
    if slug not in registry.SLUGS:
        short = slug if len(slug) <= 40 else slug[:37] + "..."
        raise SpecError(f"question {short!r}", None, f"unknown question{suggest(slug, registry.SLUGS)}; `roofline list questions` lists them")
    return registry.get(slug)


def __getattr__(name: str) -> Any:
    if name == "DERIVATIONS":  # every sheet, built on first use
        return registry.DERIVATIONS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def user_derivation(path: str | Path) -> Derivation:
    """Your own derivation file (TOML; see examples/kv-offload.toml), checked and built like a shipped sheet."""
    return load_derivation_file(path)


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
    d = user_derivation(slug) if is_derivation_file(slug) else get(slug)
    _check_precisions(weights, kv, math)
    pairs = _override_pairs(overrides)
    hw_names = d.hardware if hardware is None else (_name_or_path(hardware, "hardware"),)
    model_names = d.models if model is None else (_name_or_path(model, "model"),)
    ctx = _context(d, hw_names[0], model_names[0], weights, kv, math, pairs, second_hardware, second_model)
    grid = tuple(Row("", hardware=h, model=m) for m in model_names for h in hw_names)
    return notebook.wrap(solve_sheet(d, ctx, resolve_row, grid))


def _check_precisions(weights: object, kv: object, math: object) -> None:
    for where, value in (("--weights", weights), ("--kv", kv), ("--math", math)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise SpecError(where, None, f"expected a precision name such as 'bf16', found {shown(value)}")


def _context(d: Derivation, hardware: str | Path, model: str | Path, weights: str | None, kv: str | None, math: str | None,
             pairs: list[str], second_hardware: str | Path | None, second_model: str | Path | None) -> Context:
    """The context of one chip and model: precisions, the user's inputs, the sheet's second chip and model."""
    ctx = make_context(_hardware(hardware), _model(model), weights, kv, math)
    ctx = replace(ctx, overrides=parse_overrides(pairs, d.inputs, d.slug))
    return _with_second(d, ctx, second_hardware, second_model)


def _with_second(d: Derivation, ctx: Context, second_hardware: str | Path | None, second_model: str | Path | None) -> Context:
    """The sheet's second chip and model: given, else the sheet's default; an option the sheet has no use for is an error."""
    for what, given, default in (("hardware", second_hardware, d.second_hardware), ("model", second_model, d.second_model)):
        if given is not None and default is None:
            users = ", ".join(x.slug for x in registry.DERIVATIONS if getattr(x, f"second_{what}") is not None) or "none"
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


def render(sheet: Sheet, fmt: str, fragment: bool = False, plots: str | None = None) -> str:
    """One sheet as text: fmt is "md", "tex" or "json"; `fragment` (tex only): the body alone, for \\input (see `tex_preamble`).

    `plots` (md and tex): a folder, relative to where the text is read from, holding the sheet's plots
    (`plot_files`); the text then shows each as an SVG image (md) or a PDF `\\includegraphics` (tex).
    """
    if not isinstance(sheet, Sheet):
        raise SpecError("sheet", None, f"expected a Sheet from api.derive, found {type(sheet).__name__}")
    if not isinstance(fmt, str):
        raise SpecError("--format", None, f"expected one of {', '.join(FORMATS)}, found {_found(fmt)}")
    if fmt not in FORMATS:
        raise SpecError("--format", None, f"unknown format {fmt[:20]!r}; known: {', '.join(FORMATS)}")
    options: dict[str, Any] = {"plots": plots} if plots is not None and fmt != "json" else {}
    if fragment:
        if fmt != "tex":
            raise SpecError("--fragment", None, f"a fragment is LaTeX only: use --format tex, found --format {fmt}")
        return FORMATS[fmt](sheet, fragment=True, **options)
    return FORMATS[fmt](sheet, **options)


def tex_preamble() -> str:
    """The `\\usepackage` lines and macros a `fragment=True` LaTeX sheet needs in your document's preamble."""
    from renderers.latex import preamble

    return preamble()


def out_files(sheet: Sheet, directory: Path, plots: str | None = None) -> dict[Path, str]:
    return {directory / f"{sheet.derivation.slug}.{fmt}": render(sheet, fmt, plots=plots) for fmt in FORMATS}


def plot_files(sheet: Sheet, folder: str = plot_renderer.PLOTS_DIR) -> dict[str, bytes]:
    """The sheet's plots drawn for its context: `folder/<slug>-<plot>.svg` and `.pdf` -> bytes (none for a sheet that declares none)."""
    if not isinstance(sheet, Sheet):
        raise SpecError("sheet", None, f"expected a Sheet from api.derive, found {type(sheet).__name__}")
    return plot_renderer.files(sheet, resolve_row, folder)


def sweep(
    slug: str,
    result: str,
    over: Iterable[str],
    hardware: str | Path | Iterable[str | Path] | None = None,
    model: str | Path | Iterable[str | Path] | None = None,
    weights: str | None = None,
    kv: str | None = None,
    math: str | None = None,
    overrides: Iterable[str] | None = (),
    second_hardware: str | Path | None = None,
    second_model: str | Path | None = None,
) -> list[Labelled]:
    """One result of a sheet over the cartesian product of inputs, per hardware and model.

    `over` is a list of "NAME=VALUES" strings: `batch=1:1024:log2` (doubling),
    `eta_bw=0.5:0.9:0.1` (a step), `t_fixed=1ms:2ms:0.5ms` (a step with units),
    `context=1024,32768` (a list). `hardware` and `model` are a name or path, or a list
    of them; None means the sheet's first default. The other arguments are those of
    `derive`. Each grid is compiled once to numpy and evaluated whole; at most
    `derivations.sweep.MAX_POINTS` points in all (chips x models x grid). Render the
    result with `render_sweep(results, "csv" | "json" | "jsonl")`; for a grid too large
    to hold, `sweep_pieces` computes and writes it block by block.

        >>> rows = sweep("decode-floor", "t_step", ["batch=1:64:log2"], hardware=["h100-sxm", "h200"])  # doctest: +SKIP
    """
    return [Labelled(h, m, sweep_grid(d, ctx, result, axes))
            for h, m, d, ctx, axes in _sweep_setups(slug, over, hardware, model, weights, kv, math, overrides, second_hardware, second_model)]


def sweep_pieces(
    slug: str,
    result: str,
    over: Iterable[str],
    hardware: str | Path | Iterable[str | Path] | None = None,
    model: str | Path | Iterable[str | Path] | None = None,
    weights: str | None = None,
    kv: str | None = None,
    math: str | None = None,
    overrides: Iterable[str] | None = (),
    second_hardware: str | Path | None = None,
    second_model: str | Path | None = None,
    fmt: str = "csv",
    unit: str | None = None,
) -> Iterator[str]:
    """The sweep of `sweep` as text ("csv", "json" or "jsonl"), computed and yielded one block of points at a time, so memory does
    not grow with the number of points. Every input is checked and every grid compiled (and its corners checked) before the
    first piece: an error leaves no partial output."""
    setups = _sweep_setups(slug, over, hardware, model, weights, kv, math, overrides, second_hardware, second_model)
    plans = [Labelled(h, m, sweep_plan(d, ctx, result, axes)) for h, m, d, ctx, axes in setups]
    return render_sweep_pieces(plans, fmt, unit or plans[0].sweep.display_unit)


def _sweep_setups(slug: str, over: Iterable[str], hardware: str | Path | Iterable[str | Path] | None, model: str | Path | Iterable[str | Path] | None,
                  weights: str | None, kv: str | None, math: str | None, overrides: Iterable[str] | None,
                  second_hardware: str | Path | None, second_model: str | Path | None) -> list[tuple[str, str, Derivation, Context, list]]:
    """(hardware label, model label, derivation, context, axes) for every chip and model; the command's point count checked first."""
    d = get(slug)
    if isinstance(over, str | bytes):
        raise SpecError("over", None, f"expected a list of NAME=VALUES strings, found one string {shown(over)}; wrap it in a list")
    axes = [parse_axis(d, spec) for spec in over]
    swept = {a.input.name for a in axes}
    pairs = _override_pairs(overrides)
    clash = sorted(swept & {p.partition("=")[0].strip() for p in pairs})
    if clash:
        raise SpecError("--set", clash[0][:40], "is also swept with --over; give it once")
    _check_precisions(weights, kv, math)
    chips, models = _names(hardware, d.hardware[0], "hardware"), _names(model, d.models[0], "model")
    plural = lambda n, word: f"{n:,} {word}" + ("" if n == 1 else "s")  # noqa: E731
    check_points(len(chips) * len(models) * grid_points(axes),
                 f"this sweep ({plural(len(chips), 'chip')} x {plural(len(models), 'model')} x {plural(grid_points(axes), 'grid point')})")
    return [(_label(h), _label(m), d, _context(d, h, m, weights, kv, math, pairs, second_hardware, second_model), axes)
            for h in chips for m in models]


def _names(value: str | Path | Iterable[str | Path] | None, default: str, kind: str) -> list[str | Path]:
    if value is None:
        return [default]
    if isinstance(value, str | os.PathLike):
        return [_name_or_path(value, kind)]
    try:
        names = [_name_or_path(v, kind) for v in value]
    except TypeError:
        raise SpecError(kind, None, f"expected a name, a path or a list of them, found {_found(value)}") from None
    if not names:
        raise SpecError(kind, None, "an empty list")
    return names


def _label(name: str | Path) -> str:
    return name.name if isinstance(name, Path) else name


def render_sweep(results: list[Labelled], fmt: str, unit: str | None = None) -> str:
    """Sweep results as "csv", "json" or "jsonl" (JSON lines), values in `unit` (default: the sheet's display unit for the result,
    else its own)."""
    if not results:
        raise SpecError("sweep", None, "no results to render")
    return render_sweep_text(results, fmt, unit or results[0].sweep.display_unit)


def validation() -> Any:
    """The step model against the measurements dataset (specs/measurements/), as `roofline validate` shows it:
    a `roofline.validate.Report` with per-record rows at the sheet and dataset defaults, error summaries per regime,
    the proposed defaults (`.defaults`), leave-one-out calibration (`.loo`) and the implied-MBU range (`.mbu`)."""
    from roofline.validate import report

    return report()

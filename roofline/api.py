"""The public Python API: load specs, derive a sheet, sweep a result, render them.

The same functions are at the top level (`roofline.derive`, `roofline.sweep`, ...).

>>> from roofline import api
>>> sheet = api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-8b",
...                    inputs={"batch": 8})
>>> sheet.results["t_floor"].to("ms")
<Quantity(4.48039309, 'millisecond')>
>>> sheet.results["t_floor"].exact
Fraction(14657536, 3271484375)
>>> api.render(sheet, "md").splitlines()[0]
'# The decode floor and what sits above it'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pint

from . import compiled
from .derivations.engine.blueprint import by_name as input_names
from .derivations.engine.context import Context, input_overrides, make_context, model_components, parse_overrides, warn_checkpoint
from .derivations.engine.declare import Derivation, Row
from .derivations.engine.run import headline_grid
from .derivations.engine.sheet import NumericMismatchError, Sheet, solve_sheet
from .derivations.engine.sweep import MAX_AXIS, Axis, SweepError, check_points, grid_points, parse_axis
from .derivations.engine.sweep import plan as sweep_plan
from .derivations.engine.sweep import sweep as sweep_grid
from .derivations.physics import conventions
from .derivations.questions import registry
from .renderers import FORMATS, notebook
from .renderers import forms as printed_forms
from .renderers import plots as plot_renderer
from .renderers.sweep_out import Labelled
from .renderers.sweep_out import pieces as render_sweep_pieces
from .renderers.sweep_out import render as render_sweep_text
from .renderers.sweep_table import SweepTable
from .specs.catalog import shown_path
from .specs.errors import SpecError, shown, suggest
from .specs.hardware import Hardware, load_hardware
from .specs.measurements import profile as engine_profile
from .specs.models import Architecture, load_drafter, load_model
from .specs.precisions import precision
from .specs.text import check_name
from .specs.weight_formats import row_formats
from .userfile import is_derivation_file
from .userfile import load as load_derivation_file

__all__ = ["InputValue", "SweepTable", "derive", "get", "hardware", "model", "plot_files", "render", "render_sweep", "sweep", "tex_preamble",
           "user_derivation", "validation"]

#: One input's value from Python: a plain number in the input's own unit (`batch` 8, `t_fixed` 0.0005 for 0.5 ms),
#: a string read exactly as `--set` reads it ("0.5 ms", "64 GB/s"), or a pint Quantity of roofline's registry
#: (`roofline.ureg("0.5 ms")`; a Quantity of another registry is refused).
InputValue: TypeAlias = "int | float | Fraction | str | pint.Quantity"


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
    """A shipped accelerator by name, or your own TOML file by path (cached); every figure a pint Quantity.

    >>> import roofline
    >>> h200 = roofline.hardware("h200")
    >>> h200.memory_bandwidth.to("TB/s"), h200.peak("bf16").to("Tflop/s")
    (<Quantity(24/5, 'terabyte / second')>, <Quantity(4947/5, 'teraflop / second')>)
    """
    return _load_hardware(_name_or_path(name_or_path, "hardware"))


def model(name_or_path: str | Path) -> Architecture:
    """A shipped model by name, or your own config.json by path (cached).

    >>> import roofline
    >>> m = roofline.model("llama-3.1-70b")
    >>> m.num_layers, m.num_kv_heads, m.head_dim
    (80, 8, 128)
    """
    return _load_model(_name_or_path(name_or_path, "model"))


@cache
def _load_hardware(name_or_path: str | Path) -> Hardware:
    return load_hardware(name_or_path)


@cache
def _load_model(name_or_path: str | Path) -> Architecture:
    return load_model(name_or_path)


@cache
def _load_drafter(name_or_path: str | Path, target: Path) -> Architecture:
    return load_drafter(name_or_path, _load_model(target))


def _drafter(name_or_path: str | Path, target: Architecture) -> Architecture:
    """A second model: `mtp` or `eagle` (the target's own MTP module or an EAGLE head of its shape), `NAME:mtp` or `NAME:eagle`,
    or a model by name or path (cached by the target's file)."""
    return _load_drafter(_name_or_path(name_or_path, "second model"), target.path)


# `derive` takes parameters named hardware and model; these aliases reach the loaders.
_hardware = hardware
_model = model


def get(slug: str) -> Derivation:
    """A shipped derivation by slug (`roofline list questions`): its steps, symbols and `inputs` (name, unit, default, domain).

    >>> from roofline import api
    >>> [(i.name, i.unit, i.default) for i in api.get("decode-floor").inputs][:3]
    [('batch', '1', '1'), ('tokens_per_step', 'token', '1 token'), ('context', 'token', '8192 token')]
    """
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
    """Your own derivation file (TOML; see examples/kv-offload.toml), checked and built like a shipped sheet.

    >>> from roofline import api
    >>> [i.name for i in api.user_derivation("examples/kv-offload.toml").inputs][-2:]
    ['offload_fraction', 'pcie_bandwidth']
    """
    return load_derivation_file(path)


def resolve_row(ctx: Context, row: Row) -> Context:
    """The context a table row describes: the sheet's context with the row's changes."""
    new = ctx
    if row.hardware:
        new = replace(new, hardware=_hardware(row.hardware))
    if row.model:
        new = replace(new, model=_model(row.model))
    w, math = row_formats(new.weights, new.math_defaulted, new.model.weight_formats, model_components(new.model), tuple(new.hardware.peak_dense),
                          conventions.DEFAULT_WEIGHTS, row.weights or None, row.math or None)
    new = replace(new, weights=w, **({"math": precision(math), "math_defaulted": not row.math and new.math_defaulted} if math is not None else {}))
    if row.kv:
        new = replace(new, kv=precision(row.kv))
    if row.second_hardware:
        new = replace(new, second_hardware=_hardware(row.second_hardware))
    if row.second_model:
        new = replace(new, second_model=_drafter(row.second_model, new.model))
    if row.engine:
        new = replace(new, engine=engine_profile(row.engine))
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
    *,
    inputs: Mapping[str, InputValue] | None = None,
    engine: str | None = None,
    check: bool = False,
) -> Sheet:
    """One sheet: the derivation evaluated for the given (or default) context.

    `slug` is a shipped question (`roofline list questions`) or the path of your own
    derivation file. `hardware` and `model` are a shipped name or a path; None means the
    sheet's defaults. `weights`, `kv` and `math` are precision names ("bf16", "fp8", "int4").
    `inputs` sets scenario inputs by name, each an `InputValue`: a plain number in the
    input's own unit, a string with its unit, or a Quantity of `roofline.ureg`, checked
    against the input's domain exactly as `--set` is. `overrides`, the older form, is a
    list of "NAME=VALUE" strings; the two may be combined, each input given once.
    `second_hardware` and `second_model` (the chip compared with, a drafter) apply to
    sheets that name a second chip or model; None means the sheet's default. `engine` names
    the engine profile (specs/measurements/profiles/) that supplies eta_bw, eta_flops,
    t_layer, t_fixed and ar_latency unless `inputs` or `overrides` sets them; None means the
    default profile (`fitted`).

    Every value is computed by the sheet's compiled plan. `check=True` also evaluates the sheet exactly (sympy) and compares,
    raising NumericMismatchError on a disagreement, as `roofline build` does for every shipped sheet; a derivation file of
    your own is always checked so.

    Every value of the sheet (`sheet.results`, `sheet.values`, each step's `.value`)
    converts to a pint Quantity with `.to(unit)` or `.quantity`; the exact number (a Fraction where the arithmetic is rational, else a float)
    is `.exact`. A value that does not exist here raises NoValueError with its reason.

    >>> import roofline
    >>> inputs = {"batch": 8, "context": roofline.ureg("4096 token"), "tp": "2"}
    >>> sheet = roofline.derive("decode-floor", hardware="h200", model="llama-3.1-70b",
    ...                         inputs=inputs)
    >>> sheet.values["kv_bytes_step"].to("GB")  # per GPU: TP splits the cache
    <Quantity(5.36870912, 'gigabyte')>
    >>> sheet.results["t_step"].to("us").units
    <Unit('microsecond')>
    """
    d = user_derivation(slug) if is_derivation_file(slug) else get(slug)
    ctx = context(d, hardware, model, weights, kv, math, overrides, second_hardware, second_model, inputs=inputs, engine=engine)
    hw_names = d.hardware if hardware is None else (_name_or_path(hardware, "hardware"),)
    model_names = d.models if model is None else (_name_or_path(model, "model"),)
    grid = headline_grid(hw_names, model_names)
    if is_derivation_file(slug):
        with _naming_the_file(slug):
            return notebook.wrap(solve_sheet(d, ctx, resolve_row, grid, check=True))
    # a shipped sheet: its identities and printed forms where the compiled form stores them (else made now), and what the
    # light path of `roofline derive` needs stored for next time (roofline.compiled)
    sheet = solve_sheet(d, ctx, resolve_row, grid, identities=compiled.identities(d), check=check)
    special = printed_forms.specials(d, sheet)  # the numbers lines this setup's zeros and ones simplify
    sheet = replace(sheet, forms=compiled.forms(d).with_special(special))
    compiled.remember(d, ctx, special)
    return notebook.wrap(sheet)


@contextmanager
def _naming_the_file(slug: str | Path) -> Iterator[None]:
    """A derivation file whose formula the compiled and the exact evaluation disagree on (float64 cannot follow it): the
    error's one line names the file, not only the slug the file gives its derivation."""
    try:
        yield
    except (NumericMismatchError, SweepError) as err:
        if not is_derivation_file(slug):
            raise
        raise type(err)(f"{shown_path(slug)}: {err}") from None


def context(d: Derivation, hardware: str | Path | None = None, model: str | Path | None = None, weights: str | None = None,
            kv: str | None = None, math: str | None = None, overrides: Iterable[str] | None = (), second_hardware: str | Path | None = None,
            second_model: str | Path | None = None, *, inputs: Mapping[str, InputValue] | None = None,
            engine: str | None = None) -> Context:
    """The context `derive` evaluates `d` in: the chip and model given (else the sheet's first defaults), precisions, the
    inputs set (checked as `derive` checks them) and the sheet's second chip and model.

    >>> import roofline
    >>> from roofline import api
    >>> api.context(api.get("decode-floor"), "h200", inputs={"batch": 8}).overrides["batch"]
    <Quantity(8, 'dimensionless')>
    """
    _check_precisions(weights, kv, math)
    given = _given(d, overrides, inputs)
    hw = d.hardware[0] if hardware is None else _name_or_path(hardware, "hardware")
    name = d.models[0] if model is None else _name_or_path(model, "model")
    ctx = _context(d, hw, name, weights, kv, math, given, second_hardware, second_model, engine)
    if model is not None:
        warn_checkpoint(ctx.model, weights)
    return ctx


def _given(d: Derivation, overrides: Iterable[str] | None, inputs: Mapping[str, InputValue] | None) -> dict[str, pint.Quantity]:
    """The inputs a caller sets, checked: the NAME=VALUE strings of `overrides` and the values of `inputs`, no input given twice."""
    given = parse_overrides(_override_pairs(overrides), d.inputs, d.slug)
    if inputs is None:
        return given
    if not isinstance(inputs, Mapping):
        raise SpecError("inputs", None, f"expected a mapping NAME -> value such as {{'batch': 8}}, found {_found(inputs)}")
    values = input_overrides(inputs, d.inputs, d.slug)
    twice = sorted(set(given) & set(values))
    if twice:
        raise SpecError("inputs", twice[0][:40], "given in both inputs and overrides; give each input once")
    return {**given, **values}


def _check_precisions(weights: object, kv: object, math: object) -> None:
    for where, value in (("--weights", weights), ("--kv", kv), ("--math", math)):
        if value is not None and not isinstance(value, str):
            raise SpecError(where, None, f"expected a precision name such as 'bf16', found {shown(value)}")
        if value is not None:
            check_name(value, where, None, "a precision name such as 'bf16'")


def _context(d: Derivation, hardware: str | Path, model: str | Path, weights: str | None, kv: str | None, math: str | None,
             given: Mapping[str, pint.Quantity], second_hardware: str | Path | None, second_model: str | Path | None,
             engine: str | None = None) -> Context:
    """The context of one chip and model: precisions, the engine profile, the user's inputs (checked Quantities), the sheet's
    second chip and model."""
    if engine is not None and not isinstance(engine, str):
        raise SpecError("--engine", None, f"expected an engine profile name such as 'fitted', found {_found(engine)}")
    ctx = make_context(_hardware(hardware), _model(model), weights, kv, math, engine)
    ctx = replace(ctx, overrides=dict(given))
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
        ctx = replace(ctx, second_model=_drafter(model, ctx.model))
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

    >>> import json, roofline
    >>> doc = json.loads(roofline.render(roofline.derive("decode-floor"), "json"))
    >>> doc["results"]["t_floor"]["unit"]
    'ms'
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
    """The `\\usepackage` lines and macros a `fragment=True` LaTeX sheet needs in your document's preamble.

    >>> from roofline import api
    >>> "usepackage{siunitx}" in api.tex_preamble()
    True
    """
    from .renderers.latex import preamble

    return preamble()


def out_files(sheet: Sheet, directory: Path, plots: str | None = None) -> dict[Path, str]:
    """`directory/<slug>.md|.tex|.json` -> text, as `roofline build` writes them."""
    return {directory / f"{sheet.blueprint.slug}.{fmt}": render(sheet, fmt, plots=plots) for fmt in FORMATS}


def plot_files(sheet: Sheet, folder: str = plot_renderer.PLOTS_DIR, keys: dict[str, str] | None = None) -> dict[str, bytes]:
    """The sheet's plots drawn for its context: `folder/<slug>-<plot>.svg` and `.pdf` -> bytes (none for a sheet that declares none);
    `keys`, where given, gains each file's cache key.

    >>> from roofline import api
    >>> sorted(api.plot_files(api.derive("batch-knee")))[:2]
    ['plots/batch-knee-throughput.pdf', 'plots/batch-knee-throughput.svg']
    """
    if not isinstance(sheet, Sheet):
        raise SpecError("sheet", None, f"expected a Sheet from api.derive, found {type(sheet).__name__}")
    return plot_renderer.files(sheet, resolve_row, folder, keys)


def sweep(
    slug: str,
    result: str,
    over: Mapping[str, Iterable[InputValue] | str] | Iterable[str],
    hardware: str | Path | Iterable[str | Path] | None = None,
    model: str | Path | Iterable[str | Path] | None = None,
    weights: str | None = None,
    kv: str | None = None,
    math: str | None = None,
    overrides: Iterable[str] | None = (),
    second_hardware: str | Path | None = None,
    second_model: str | Path | None = None,
    *,
    inputs: Mapping[str, InputValue] | None = None,
    engine: str | None = None,
) -> SweepTable:
    """One result of a sheet over the cartesian product of inputs, per hardware and model, as named numpy arrays.

    `over` maps each swept input to its values: a list, range or numpy array of `InputValue`s
    (`{"batch": [1, 2, 4], "context": np.arange(1024, 32769, 1024)}`), or a string in
    `--over`'s syntax (`"1:1024:log2"` doubling, `"0.5:0.9:0.1"` a step, `"1ms:2ms:0.5ms"` a
    step with units, `"1024,8192"` a list); the older form is a list of "NAME=VALUES" strings.
    Every value is checked against its input's domain. `hardware` and `model` are a name or
    path, or a list of them; None means the sheet's first default. The other arguments
    (`engine` among them) are those of `derive`. Each grid is compiled once to numpy and
    checked against the exact evaluation at its corners; at most `derivations.engine.sweep.MAX_POINTS`
    points in all (chips x models x grid). For a grid too large to hold, `sweep_pieces`
    computes and writes it block by block.

    The `SweepTable` maps each column (hardware, model, the swept inputs, the result,
    missing) to a numpy array, with `units` per column; `to_csv()` writes what
    `roofline sweep` prints.

    >>> import roofline
    >>> table = roofline.sweep("decode-floor", "kv_bytes_step",
    ...                        over={"batch": [1, 8], "context": [1024, 8192]},
    ...                        hardware=["h100-sxm", "h200"])
    >>> table["hardware"].tolist()
    ['h100-sxm', 'h100-sxm', 'h100-sxm', 'h100-sxm', 'h200', 'h200', 'h200', 'h200']
    >>> table["batch"].tolist(), table["context"].tolist()
    ([1, 1, 8, 8, 1, 1, 8, 8], [1024, 8192, 1024, 8192, 1024, 8192, 1024, 8192])
    >>> table["kv_bytes_step"].round(3).tolist()[:4], table.units["kv_bytes_step"]
    ([0.134, 1.074, 1.074, 8.59], 'GB')
    """
    setups = _sweep_setups(slug, over, hardware, model, weights, kv, math, overrides, second_hardware, second_model, inputs, engine)
    with _naming_the_file(slug):
        return SweepTable([Labelled(h, m, sweep_grid(d, ctx, result, axes, is_derivation_file(slug))) for h, m, d, ctx, axes in setups])


def sweep_pieces(
    slug: str,
    result: str,
    over: Mapping[str, Iterable[InputValue] | str] | Iterable[str],
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
    *,
    inputs: Mapping[str, InputValue] | None = None,
    engine: str | None = None,
) -> Iterator[str]:
    """The sweep of `sweep` as text ("csv", "json" or "jsonl"), computed and yielded one block of points at a time, so memory does
    not grow with the number of points. Every input is checked and every grid compiled (and its corners checked) before the
    first piece: an error leaves no partial output.

    >>> from roofline import api
    >>> "".join(api.sweep_pieces("decode-floor", "t_floor", {"batch": [1]}, model="llama-3.1-8b", unit="us")).splitlines()[0]
    'hardware,model,batch,t_floor [us],missing'
    """
    if fmt not in ("csv", "json", "jsonl"):
        raise SpecError("--format", None, f"unknown sweep format {str(fmt)[:20]!r}; known: csv, json, jsonl")
    setups = _sweep_setups(slug, over, hardware, model, weights, kv, math, overrides, second_hardware, second_model, inputs, engine)
    with _naming_the_file(slug):
        plans = [Labelled(h, m, sweep_plan(d, ctx, result, axes, is_derivation_file(slug))) for h, m, d, ctx, axes in setups]
    return render_sweep_pieces(plans, fmt, unit or plans[0].sweep.display_unit)


def _sweep_setups(slug: str, over: object, hardware: str | Path | Iterable[str | Path] | None, model: str | Path | Iterable[str | Path] | None,
                  weights: str | None, kv: str | None, math: str | None, overrides: Iterable[str] | None,
                  second_hardware: str | Path | None, second_model: str | Path | None,
                  inputs: Mapping[str, InputValue] | None, engine: str | None = None) -> list[tuple[str, str, Derivation, Context, list[Axis]]]:
    """(hardware label, model label, derivation, context, axes) for every chip and model; the command's point count checked first."""
    d = user_derivation(slug) if is_derivation_file(slug) else get(slug)
    axes = _axes(d, over)
    swept = {a.input.name for a in axes}
    _check_precisions(weights, kv, math)
    given = _given(d, overrides, inputs)
    clash = sorted(swept & set(given))
    if clash:
        raise SpecError("--set", clash[0][:40], "is also swept with --over; give it once")
    chips, models = _names(hardware, d.hardware[0], "hardware"), _names(model, d.models[0], "model")
    plural = lambda n, word: f"{n:,} {word}" + ("" if n == 1 else "s")  # noqa: E731
    check_points(len(chips) * len(models) * grid_points(axes),
                 f"this sweep ({plural(len(chips), 'chip')} x {plural(len(models), 'model')} x {plural(grid_points(axes), 'grid point')})")
    out = []
    for h in chips:
        for m in models:
            ctx = _context(d, h, m, weights, kv, math, given, second_hardware, second_model, engine)
            if model is not None:
                warn_checkpoint(ctx.model, weights)
            out.append((_label(h), _label(m), d, ctx, axes))
    return out


def _axes(d: Derivation, over: object) -> list[Axis]:
    """The swept inputs: a mapping NAME -> values (or NAME -> "VALUES" text), or a list of NAME=VALUES strings."""
    if isinstance(over, str | bytes):
        raise SpecError("over", None, f"expected a mapping NAME -> values or a list of NAME=VALUES strings, found one string {shown(over)}; wrap it in a list")
    if isinstance(over, Mapping):
        return [_value_axis(d, name, values) for name, values in over.items()]
    try:
        specs = list(over)  # type: ignore[call-overload]
    except TypeError:
        raise SpecError("over", None, f"expected a mapping NAME -> values or a list of NAME=VALUES strings, found {_found(over)}") from None
    return [parse_axis(d, spec) for spec in specs]


def _value_axis(d: Derivation, name: object, values: object) -> Axis:
    """One swept input from Python values, each checked as `derive`'s inputs are (Input.value)."""
    known = [i.name for i in d.inputs]
    if not isinstance(name, str) or name not in input_names(d.inputs):
        shown_name = name[:40] if isinstance(name, str) else shown(name)
        raise SpecError("over", shown_name, f"{d.slug} has no input by that name{suggest(str(name), known)}; inputs: {', '.join(known)}")
    if isinstance(values, str):
        return parse_axis(d, f"{name}={values}")
    inp = input_names(d.inputs)[name]
    if (isinstance(values, pint.Quantity) and np.ndim(values.magnitude) == 0) or isinstance(values, bytes):
        raise SpecError("over", name, f"expected a list, range or array of values, found one value {shown(values)}; wrap it in a list")
    try:
        items = values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[call-overload]
    except TypeError:
        raise SpecError("over", name, f"expected a list, range or array of values (or a string such as '1:1024:log2'), found {_found(values)}") from None
    if not items:
        raise SpecError("over", name, "an empty list of values")
    if len(items) > MAX_AXIS:
        raise SpecError("over", name, f"more than {MAX_AXIS:,} values")
    exact = [inp.magnitude(v, "over") for v in items]
    texts = tuple(str(m.numerator) if m.denominator == 1 else repr(float(m)) for m in exact)  # in the input's unit, as the CSV's header says
    return Axis(inp, texts, np.array([float(m) for m in exact]))


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


def render_sweep(results: SweepTable | list[Labelled], fmt: str, unit: str | None = None) -> str:
    """A sweep as "csv", "json" or "jsonl" (JSON lines) text, as `roofline sweep` prints it; values in `unit` (default: the sheet's
    display unit for the result).

    >>> import roofline
    >>> table = roofline.sweep("decode-floor", "t_floor", over={"batch": [1]},
    ...                        model="llama-3.1-8b")
    >>> print(roofline.render_sweep(table, "csv", unit="us"), end="")
    hardware,model,batch,t_floor [us],missing
    h100-sxm,llama-3.1-8b,1,4480.3930937313435,
    """
    if fmt not in ("csv", "json", "jsonl"):
        raise SpecError("--format", None, f"unknown sweep format {str(fmt)[:20]!r}; known: csv, json, jsonl")
    if isinstance(results, SweepTable):
        results = list(results.sweeps)
    if not results:
        raise SpecError("sweep", None, "no results to render")
    return render_sweep_text(results, fmt, unit or results[0].sweep.display_unit)


def validation() -> Any:
    """The step model against the measurements dataset (specs/measurements/), as `roofline validate` shows it.

    A `roofline.validate.Report` with per-record rows at the hand-set and default-profile inputs, error summaries per regime,
    the default profile (`.defaults`), today's refits (`.fresh`), the shipped engine profiles (`.profiles`), the out-of-sample
    figures (`.oos`: leave one source out, eight GPUs from TP <= 4), leave-one-out calibration (`.loo`) and the implied-MBU
    range (`.mbu`); `roofline.validate.figures(report)` gives the issue-20 targets' figures.

    >>> from roofline import api
    >>> report = api.validation()  # doctest: +SKIP
    """
    from .validate import report

    return report()

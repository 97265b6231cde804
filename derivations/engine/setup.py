"""Setups: what a sheet is evaluated for, as plain data (the values a chip, a model and number formats bind, the engine
profile's inputs, the inputs set), and what a sheet says it is worked for. `derivations.engine.sheet` makes them from a
pint Context; the light path of `roofline derive` (roofline.compiled) reads them from the compiled form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...specs.catalog import STATUS_WORDS
from ...specs.precisions import Precision, precision
from ...specs.weight_formats import WeightFormats, default_math
from ...specs.weight_formats import row_formats as weight_rows
from .numeric import Missing

# --- setups: what a sheet is evaluated for, as plain data ----------------------------------------------------------


@dataclass(frozen=True)
class SpecData:
    """A chip or a model as a sheet reads it: its names, and the value of every symbol it binds, in the symbol's unit
    (Missing n/a, with the spec's own error, where it lacks what the symbol needs)."""

    key: str
    name: str
    #: the spec's file as an error names it
    path: str
    status: str
    #: the spec's `source` text (its URLs are the sheet's sources)
    source: str
    values: Mapping[str, Fraction | Missing]
    #: a chip's: its dense peak at each math precision (Missing n/a where it lists none)
    peaks: Mapping[str, Fraction | Missing] = field(default_factory=dict)
    #: a model's: its architecture ("llama"), what its checkpoint ships quantized (None: nothing), its routed experts per
    #: MoE layer (None: a dense model), and the warning a sheet gives when it is named without --weights (a quantized
    #: checkpoint computed in the default format: derivations.engine.context.checkpoint_warning)
    model_type: str = ""
    quantization: str | None = None
    experts: int | None = None
    checkpoint_warning: str | None = None
    #: a model's: the formats its checkpoint stores each weight component in ((component, precision name); empty for an
    #: unquantized or unread checkpoint), and its parameters by component (specs.weight_formats.COMPONENTS)
    stored_weights: tuple[tuple[str, str], ...] = ()
    components: Mapping[str, int] = field(default_factory=dict)
    #: a model's: the positions it was trained for (its config's max_position_embeddings; 0 where the config gives none)
    max_context: int = 0


@dataclass(frozen=True)
class ProfileData:
    """An engine profile as a sheet reads it: its name, what it is, the inputs it supplies (as written and parsed, each in
    its input's unit), where its numbers come from and its file."""

    name: str
    description: str
    values: tuple[tuple[str, str], ...]
    parsed: Mapping[str, Fraction]
    provenance: str
    path: str
    #: what measurements say at it (specs.measurements.PROFILE_SUMMARY: name -> plain number as written), and how many records
    #: it was fitted to (0: not fitted, e.g. `ideal`)
    summary: tuple[tuple[str, str], ...] = ()
    records: int = 0


@dataclass(frozen=True)
class Bindings:
    """Where each spec-bound symbol takes its value in a setup (derivations.engine.context declares it, per part):

    `parts` maps a symbol to "hardware" or "model" (SpecData.values), "peak" (the chip's peak at the math precision),
    "peak_kv" (at the KV cache format's math),
    "weights" (a width of the weight formats over the model's components: WEIGHT_WIDTHS), "kv" or "math" (`precisions`, by
    the precision's name), or "constant" (`constants`); `twins` maps a primed
    symbol to the part it is read from on the second chip or model ("hardware" or "model") and the symbol it twins.
    """

    parts: Mapping[str, str]
    twins: Mapping[str, tuple[str, str]]
    precisions: Mapping[str, Mapping[str, Mapping[str, Fraction]]]
    constants: Mapping[str, Fraction]


@dataclass(frozen=True)
class Setup:
    """What a sheet is evaluated for, as plain data: chip, model, number formats, inputs set (each a magnitude in its
    input's own unit), the second chip and model, the engine profile; `bound` is every spec-bound symbol's value."""

    hardware: SpecData
    model: SpecData
    weights: WeightFormats
    kv: Precision
    math: Precision
    overrides: Mapping[str, Fraction]
    bound: Mapping[str, Fraction | Missing]
    math_defaulted: bool = True
    second_hardware: SpecData | None = None
    second_model: SpecData | None = None
    engine: ProfileData | None = None


#: the symbols the weight formats bind, in the order WeightFormats.widths gives them: always-read weights, routed experts
WEIGHT_WIDTHS = ("b_w", "b_e")


def make_setup(bindings: Bindings, hardware: SpecData, model: SpecData, weights: WeightFormats, kv: Precision, math: Precision,
               overrides: Mapping[str, Fraction] | None = None, math_defaulted: bool = True, second_hardware: SpecData | None = None,
               second_model: SpecData | None = None, engine: ProfileData | None = None) -> Setup:
    """A setup, with the value of every spec-bound symbol taken from the part that binds it (`Bindings`)."""
    second = {"hardware": second_hardware or hardware, "model": second_model or model}
    roles = {"kv": kv.name, "math": math.name}
    widths = dict(zip(WEIGHT_WIDTHS, weights.widths(model.components), strict=True))
    bound: dict[str, Fraction | Missing] = {}
    for name, part in bindings.parts.items():
        if part == "hardware":
            bound[name] = hardware.values[name]
        elif part == "model":
            bound[name] = model.values[name]
        elif part == "peak":
            bound[name] = hardware.peaks[math.math]
        elif part == "peak_kv":
            bound[name] = hardware.peaks[attention_math(kv, math, math_defaulted)]
        elif part == "weights":
            bound[name] = widths[name]
        elif part in roles:
            bound[name] = bindings.precisions[part][roles[part]][name]
        else:
            bound[name] = bindings.constants[name]
    # the second chip runs the math the weights default to on it (an FP8 checkpoint widened to BF16 where it lists no FP8 peak)
    second_math = default_math(weights, _listed(second["hardware"].peaks))[0] if math_defaulted else math.math
    for twin, (part, base) in bindings.twins.items():
        bound[twin] = second[part].peaks[second_math] if bindings.parts[base] == "peak" else second[part].values[base]
    return Setup(hardware, model, weights, kv, math, dict(overrides or {}), bound, math_defaulted, second_hardware, second_model, engine)


def with_changes(bindings: Bindings, s: Setup, **changes: Any) -> Setup:
    """`s` with some of its parts replaced (a table row's chip, model, formats, inputs), `bound` made again."""
    parts = {"hardware": s.hardware, "model": s.model, "weights": s.weights, "kv": s.kv, "math": s.math, "overrides": s.overrides,
             "math_defaulted": s.math_defaulted, "second_hardware": s.second_hardware, "second_model": s.second_model, "engine": s.engine}
    parts.update(changes)
    return make_setup(bindings, **parts)


def attention_math(kv: Precision, math: Precision, math_defaulted: bool) -> str:
    """The math the attention kernels run at: the KV cache format's (FlashMLA runs a BF16 latent in BF16 beside FP8 GEMMs),
    unless a math precision was given, which every kernel then runs at."""
    return kv.math if math_defaulted else math.math


def row_formats(s: Setup, default_weights: str, weights: str | None, math: str | None) -> dict[str, Any]:
    """The formats a table row's setup takes, after its chip and model are in `s` (specs.weight_formats.row_formats): only
    the parts that change."""
    w, m = weight_rows(s.weights, s.math_defaulted, s.model.stored_weights, s.model.components, _listed(s.hardware.peaks),
                       default_weights, weights, math)
    return {**({"weights": w} if w != s.weights else {}),
            **({"math": precision(m), "math_defaulted": math is None and s.math_defaulted} if m is not None else {})}


def _listed(peaks: Mapping[str, Fraction | Missing]) -> tuple[str, ...]:
    return tuple(k for k, v in peaks.items() if isinstance(v, Fraction))


# --- what the sheet is worked for ----------------------------------------------------------------------------------


def context_label(s: Setup) -> str:
    second = [x.name for x in (s.second_hardware, s.second_model) if x is not None]
    return f"{s.hardware.name} · {s.model.name}" + (f" (second: {', '.join(second)})" if second else "")


def _status(status: str) -> str:
    """A spec's status in words (specs.catalog.STATUS_WORDS)."""
    return STATUS_WORDS.get(status, f"status {status}")


def spec_facts(s: Setup) -> tuple[tuple[str, str], ...]:
    """What the sheet is worked for: chip, model, number formats (and the second chip or model), one line each."""
    h, m = s.hardware, s.model
    facts = [
        ("Hardware", f"{h.name} ({h.key}; {_status(h.status)})"),
        ("Model", f"{m.name} ({m.key}; {m.model_type}; {_status(m.status)})"),
        ("Weights", _weights_line(s)),
        ("KV cache", s.kv.description),
        ("Math", f"{s.math.math} tensor-core peak" + (f" (default: {default_math(s.weights, _listed(h.peaks))[1]})" if s.math_defaulted
                                                      else " (set with --math)") + _no_faster(h.peaks, s.math.math)),
    ]
    e = s.engine
    if e is not None:
        values = ", ".join(f"{k} = {v}" for k, v in e.values)
        facts += [("Engine profile", f"{e.name}: {e.description} ({values}; change with --engine, or --set any one input)"),
                  ("Engine profile provenance", f"{e.provenance} ({e.path})")]
    if s.second_hardware is not None:
        h2 = s.second_hardware
        facts.append(("Second hardware (primed symbols)", f"{h2.name} ({h2.key}; {_status(h2.status)}); change with --second-hardware"))
    if s.second_model is not None:
        m2 = s.second_model
        facts.append(("Second model (primed symbols)", f"{m2.name} ({m2.key}; {m2.model_type}; {_status(m2.status)}); change with --second-model"))
    return tuple(facts)


def _weights_line(s: Setup) -> str:
    """The formats the weights are computed in; where they are not the checkpoint's own, what the checkpoint ships."""
    m = s.model
    line = s.weights.describe(m.components)
    if m.quantization is not None and s.weights.origin != "checkpoint":
        line += f"; the checkpoint ships {m.quantization}"
    return line


#: The wider format a narrower math precision is expected to outrun (twice as fast on most tensor cores)
WIDER_MATH = {"fp8": "bf16", "int8": "bf16", "fp6": "fp8", "fp4": "fp8"}


def _no_faster(peaks: Mapping[str, Fraction | Missing], math: str) -> str:
    """'; on this chip fp4 runs no faster than fp8 (...)' where a narrower math precision's dense peak is not above the
    wider one's (Trainium3's FP4, Gaudi 3's FP8, Blackwell Ultra's INT8), else ''."""
    wider = WIDER_MATH.get(math)
    mine, theirs = peaks.get(math), peaks.get(wider) if wider else None
    if not isinstance(mine, Fraction) or not isinstance(theirs, Fraction) or mine > theirs:
        return ""
    speed = "no faster than" if mine == theirs else f"slower than ({float(mine / theirs):.0%} of)"
    return f"; on this chip {math} runs {speed} {wider}: {float(mine) / 1e12:,.0f} against {float(theirs) / 1e12:,.0f} Tflop/s dense"


#: A web address in a spec's `source` text: RFC 3986's characters up to the first that is not one (a space, a brace, a quote,
#: a bracket of prose) or a delimiter of the text around it (a comma, a semicolon, a parenthesis); never ending in a full stop.
_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&*+=%]*[A-Za-z0-9\-_~/#\[\]@!$&*+=%]")


def urls(text: str) -> tuple[str, ...]:
    """The web addresses a spec's `source` field names, each once, in order."""
    return tuple(dict.fromkeys(_URL.findall(text)))


def sources(s: Setup) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(spec name, its source URLs) for the chip, the model and any second chip or model."""
    specs = [s.hardware, s.model, *(x for x in (s.second_hardware, s.second_model) if x is not None)]
    return tuple((x.name, urls(x.source)) for x in specs)

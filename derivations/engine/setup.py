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

from ...specs.precisions import Precision
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


@dataclass(frozen=True)
class Bindings:
    """Where each spec-bound symbol takes its value in a setup (derivations.engine.context declares it, per part):

    `parts` maps a symbol to "hardware" or "model" (SpecData.values), "peak" (the chip's peak at the math precision),
    "weights", "kv" or "math" (`precisions`, by the precision's name), or "constant" (`constants`); `twins` maps a primed
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
    weights: Precision
    kv: Precision
    math: Precision
    overrides: Mapping[str, Fraction]
    bound: Mapping[str, Fraction | Missing]
    math_defaulted: bool = True
    second_hardware: SpecData | None = None
    second_model: SpecData | None = None
    engine: ProfileData | None = None


def make_setup(bindings: Bindings, hardware: SpecData, model: SpecData, weights: Precision, kv: Precision, math: Precision,
               overrides: Mapping[str, Fraction] | None = None, math_defaulted: bool = True, second_hardware: SpecData | None = None,
               second_model: SpecData | None = None, engine: ProfileData | None = None) -> Setup:
    """A setup, with the value of every spec-bound symbol taken from the part that binds it (`Bindings`)."""
    second = {"hardware": second_hardware or hardware, "model": second_model or model}
    roles = {"weights": weights.name, "kv": kv.name, "math": math.name}
    bound: dict[str, Fraction | Missing] = {}
    for name, part in bindings.parts.items():
        if part == "hardware":
            bound[name] = hardware.values[name]
        elif part == "model":
            bound[name] = model.values[name]
        elif part == "peak":
            bound[name] = hardware.peaks[math.math]
        elif part in roles:
            bound[name] = bindings.precisions[part][roles[part]][name]
        else:
            bound[name] = bindings.constants[name]
    for twin, (part, base) in bindings.twins.items():
        bound[twin] = second[part].peaks[math.math] if bindings.parts[base] == "peak" else second[part].values[base]
    return Setup(hardware, model, weights, kv, math, dict(overrides or {}), bound, math_defaulted, second_hardware, second_model, engine)


def with_changes(bindings: Bindings, s: Setup, **changes: Any) -> Setup:
    """`s` with some of its parts replaced (a table row's chip, model, formats, inputs), `bound` made again."""
    parts = {"hardware": s.hardware, "model": s.model, "weights": s.weights, "kv": s.kv, "math": s.math, "overrides": s.overrides,
             "math_defaulted": s.math_defaulted, "second_hardware": s.second_hardware, "second_model": s.second_model, "engine": s.engine}
    parts.update(changes)
    return make_setup(bindings, **parts)


# --- what the sheet is worked for ----------------------------------------------------------------------------------


def context_label(s: Setup) -> str:
    second = [x.name for x in (s.second_hardware, s.second_model) if x is not None]
    return f"{s.hardware.name} · {s.model.name}" + (f" (second: {', '.join(second)})" if second else "")


def spec_facts(s: Setup) -> tuple[tuple[str, str], ...]:
    """What the sheet is worked for: chip, model, number formats (and the second chip or model), one line each."""
    h, m = s.hardware, s.model
    facts = [
        ("Hardware", f"{h.name} ({h.key}; status {h.status})"),
        ("Model", f"{m.name} ({m.key}; {m.model_type}; status {m.status})"),
        ("Weights", s.weights.description + (f"; the checkpoint ships {m.quantization}" if m.quantization is not None else "")),
        ("KV cache", s.kv.description),
        ("Math", f"{s.math.math} tensor-core peak" + (f" (default: the math of {s.weights.name} weights)" if s.math_defaulted else " (set with --math)")
         + _no_faster(h.peaks, s.math.math)),
    ]
    e = s.engine
    if e is not None:
        values = ", ".join(f"{k} = {v}" for k, v in e.values)
        facts += [("Engine profile", f"{e.name}: {e.description} ({values}; change with --engine, or --set any one input)"),
                  ("Engine profile provenance", f"{e.provenance} ({e.path})")]
    if s.second_hardware is not None:
        h2 = s.second_hardware
        facts.append(("Second hardware (primed symbols)", f"{h2.name} ({h2.key}; status {h2.status}); change with --second-hardware"))
    if s.second_model is not None:
        m2 = s.second_model
        facts.append(("Second model (primed symbols)", f"{m2.name} ({m2.key}; {m2.model_type}; status {m2.status}); change with --second-model"))
    return tuple(facts)


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

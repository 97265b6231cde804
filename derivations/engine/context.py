"""Contexts: what a derivation is evaluated for, and how each symbol gets its value.

A Context holds a hardware spec, a model architecture, three precisions
(weights, KV cache, math) and scenario inputs. Glossary symbols that describe
the machine or the model are bound from the specs here, in one table; scenario
inputs have defaults declared once (`SCENARIO_INPUTS` and each question's own)
and printed on every sheet.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pint
import sympy as sp

from ...specs.errors import SpecError, shown, suggest
from ...specs.hardware import Hardware, SpecWarning
from ...specs.measurements import DEFAULT_PROFILE, PROFILE_INPUTS, Profile, load_profiles
from ...specs.measurements import profile as engine_profile
from ...specs.models import Architecture, MoE
from ...specs.power import PowerFamily, load_power
from ...specs.precisions import MATH_PRECISIONS, Precision, precision
from ...specs.quantities import check_sign, parse_quantity
from ...specs.weight_formats import COMPONENTS, WeightFormats, default_math, resolve_weights
from ...units import Quantity, unit, unit_text, ureg
from ..physics import conventions
from ..physics import glossary as gl
from .blueprint import BARE_NUMBER_UNITS, DOMAINS, MAX_COUNT, MAX_MAGNITUDE, ZERO_DOMAINS, by_name, is_bare_number, within
from .setup import WEIGHT_WIDTHS, attention_math


@dataclass(frozen=True)
class Input:
    """A scenario input: CLI name, the symbol it sets, its default (a unit string) and its domain."""

    name: str
    symbol: sp.Symbol
    default: str
    unit: str
    meaning: str
    domain: str = "positive"
    #: the input whose value this one takes unless set (its name; the drafter's tensor-parallel degree follows the target's,
    #: a later draft position's acceptance the one before it): the value follows, the formulas keep two symbols
    follows: str = ""
    #: the inputs a comma-separated value sets in turn after this one (`--set acceptance=0.8,0.6,0.4`): one value per input,
    #: the inputs past the last value following it
    spreads: tuple[str, ...] = ()
    #: older names `--set`, the Python API's inputs, `--over` and derivation files still read as this input's (a renamed
    #: input keeps its users' commands working); printed and stored under `name` only
    aliases: tuple[str, ...] = ()

    def parse(self, value: str, where: str = "--set") -> pint.Quantity:
        """A user value for this input, checked against its domain.

        A bare number is read in the input's unit when that unit is a count.
        """
        text = value.strip()
        bare = is_bare_number(text)
        if bare and self.unit not in BARE_NUMBER_UNITS:
            raise SpecError(where, self.name, f"expected a quantity with a unit convertible to {self.unit} (e.g. {self.default!r}), found {text[:40]!r}")
        if not bare and self.unit == "1":
            raise SpecError(where, self.name, f"expected a plain number ({DOMAINS[self.domain]}, e.g. {self.default!r}), found {text[:40]!r}")
        if bare and self.unit != "1":
            text = f"{text} {self.unit}"  # a count, or a rate of counts: the unit is not in doubt
        q = parse_quantity(text, self.unit, where, self.name, allow_zero=self.domain in ZERO_DOMAINS)
        self.check(Fraction(q.to(unit(self.unit)).magnitude), where, repr(text[:40]))
        return q

    def value(self, raw: object, where: str = "inputs") -> pint.Quantity:
        """A value from Python for this input, checked against its domain exactly as `parse` checks `--set`.

        `raw` is a string (read as `--set` reads it), a plain number in the input's own unit
        (`self.unit`; a float is read as the decimal it prints as, 0.83 as 83/100), or a pint
        Quantity of the project's registry (`units.ureg`) in any unit of the input's dimension.
        A Quantity of another registry is refused (its units may be defined differently:
        pint's default registry has no byte dimension); build it with `units.ureg`.
        """
        if isinstance(raw, str):
            return self.parse(raw, where)
        return Quantity(self.magnitude(raw, where), unit(self.unit))

    def magnitude(self, raw: object, where: str = "inputs") -> Fraction:
        """`value(raw)` as an exact magnitude in the input's own unit (a sweep reads many values: a number needs no Quantity)."""
        if isinstance(raw, str):
            return Fraction(self.parse(raw, where).to(unit(self.unit)).magnitude)
        want = unit(self.unit)
        if isinstance(raw, pint.Quantity):
            if raw._REGISTRY is not ureg:
                raise SpecError(where, self.name, f"a Quantity from another pint registry ({shown(raw)}); build it with roofline's registry "
                                "(`from roofline import ureg`; `ureg('...')`) or give a string such as " + repr(self.default))
            if raw.dimensionality != want.dimensionality:
                raise SpecError(where, self.name, f"expected a quantity convertible to {self.unit} (e.g. {self.default!r}), found {_quantity_text(raw)}")
            number = raw.to(want).magnitude
            if not _is_number(number):
                raise SpecError(where, self.name, f"expected one value, found a Quantity of {type(raw.magnitude).__name__} {_quantity_text(raw)}")
        elif _is_number(raw):
            number = raw
        else:
            number_in = "a plain number" if self.unit == "1" else f"a number in {self.unit}"
            raise SpecError(where, self.name, f"expected {number_in}, a string such as {self.default!r} or a Quantity of roofline's registry, found "
                            f"{type(raw).__name__} {shown(raw)}")
        m = _exact(number)
        found = (lambda: _quantity_text(raw)) if isinstance(raw, pint.Quantity) else (lambda: shown(raw))
        if m is None:
            raise SpecError(where, self.name, f"expected a finite number ({DOMAINS[self.domain]}), found {found()}")
        allow_zero = self.domain in ZERO_DOMAINS
        if m < 0 or (m == 0 and not allow_zero):
            check_sign(m, want, where, self.name, found(), allow_zero=allow_zero)  # the words parse_quantity uses for text
        if not self.within(m):
            self.check(m, where, found())
        return m

    def within(self, m: Fraction) -> bool:
        """Whether a magnitude (in the input's unit) lies in the input's domain."""
        return within(self.domain, m)

    def check(self, m: Fraction, where: str, found: str) -> None:
        """Refuse a magnitude (in the input's unit) outside the input's domain: one line naming the input and what was found."""
        if not self.within(m):
            limit = (f" up to {MAX_COUNT:,}" if self.domain in ("count", "whole")
                     else f" up to 1e30 {self.unit}" if m > MAX_MAGNITUDE and self.domain != "fraction" else "")
            raise SpecError(where, self.name, f"expected {DOMAINS[self.domain]}{limit}, found {found}")


def _quantity_text(q: pint.Quantity) -> str:
    """A Quantity as an error line shows it: "5 ms", "1/2 ms"."""
    m = q.magnitude
    return f"{m if isinstance(m, int | float | Fraction) else shown(m)} {unit_text(q.units)}"[:60]


def _is_number(raw: object) -> bool:
    """A real number from Python or numpy (a bool is not one: True is no batch)."""
    return isinstance(raw, numbers.Real | Decimal) and not isinstance(raw, bool | np.bool_)


def _exact(number: object) -> Fraction | None:
    """A number as an exact Fraction: integers and rationals as they are, a float as the decimal it prints as; None for NaN or inf."""
    if isinstance(number, numbers.Rational):
        return Fraction(int(number.numerator), int(number.denominator))
    if isinstance(number, Decimal):
        return Fraction(number) if number.is_finite() else None
    x = float(number)  # type: ignore[arg-type]
    return Fraction(repr(x)) if math.isfinite(x) else None


#: The engine profiles (specs/measurements/profiles/) and the one every sheet uses unless --engine names another.
#: A broken profile file (truncated, edited by hand) does not stop this module from loading: every use of a profile raises
#: its one-line error instead (`profiles()`, `fitted()`), and `roofline calibrate --write-defaults`, which needs none, can mend it.
try:
    PROFILES: Mapping[str, Profile] = load_profiles()
    PROFILES_ERROR: SpecError | None = None
except SpecError as _err:
    PROFILES, PROFILES_ERROR = {}, _err
#: the default profile (None where a profile file is broken: see PROFILES_ERROR)
DEFAULT_ENGINE: Profile | None = PROFILES.get(DEFAULT_PROFILE)


def profiles() -> Mapping[str, Profile]:
    """The engine profiles by name, or the broken profile file's own error (one line naming it and the field)."""
    if PROFILES_ERROR is not None:
        raise PROFILES_ERROR
    return PROFILES


def fitted() -> Profile:
    """The default profile, fitted to the published measurements (its records and [summary] are what the sheets cite), or the
    broken profile file's own error."""
    return profiles()[DEFAULT_PROFILE]


def _engine_default(name: str) -> str:
    return DEFAULT_ENGINE.values[name] if DEFAULT_ENGINE is not None else ""


_FROM_ENGINE = ("its default comes from the engine profile the sheet names, with the source of its numbers; the "
                f"{DEFAULT_PROFILE} profile's is fitted to published measurements of real servers")

SCENARIO_INPUTS: tuple[Input, ...] = (
    Input("batch", gl.B, "1", "1", "sequences decoded together", "count"),
    Input("tokens_per_step", gl.q, "1 token", "token", "tokens each sequence adds per step", "count"),
    Input("context", gl.T, "8192 token", "token", "tokens already in each sequence's KV cache", "count"),
    Input("prompt_len", gl.S, "2048 token", "token", "prompt tokens prefilled at once; with output_len, the mean prompt of a server at load", "count"),
    Input("output_len", gl.N_out, "0 token", "token", "mean output tokens per request at load: above 0, the serving step (B/output_len prompts "
          "join each step; the context defaults to prompt_len + output_len/2); 0, the decode-only step", "whole"),
    Input("prefix_hit_rate", gl.h_pfx, "0", "1", "share of each prompt of a server at load whose KV cache the prefix cache already "
          "holds (shared system prompts, earlier turns): read, not computed; 0, every prompt computed whole", "share"),
    Input("tp", gl.n_tp, "1", "1", "tensor-parallel degree (GPUs sharing each layer of one attention replica)", "count"),
    Input("ep", gl.n_ep, "1", "1", "expert-parallel degree: GPUs the routed experts of a MoE layer are split over, whole experts each "
          "(1: every expert split by tensor parallelism)", "count"),
    Input("dp", gl.n_dp, "1", "1", "data-parallel attention degree: attention replicas, each on tp GPUs and serving its own batch of "
          "sequences; the layout uses tp x dp GPUs", "count"),
    Input("eta_bw", gl.eta_bw, _engine_default("eta_bw"), "1",
          f"achieved fraction of datasheet bandwidth in streaming kernels; {_FROM_ENGINE}", "fraction"),
    Input("eta_flops", gl.eta_flops, _engine_default("eta_flops"), "1",
          f"achieved fraction of the dense tensor peak in GEMMs and attention; {_FROM_ENGINE}", "fraction"),
    Input("t_layer", gl.t_layer, _engine_default("t_layer"), "s",
          f"overhead per layer per step that no byte count shows (launches, small kernels, host work); {_FROM_ENGINE}", "nonnegative"),
    Input("t_seq", gl.t_seq, _engine_default("t_seq"), "s",
          f"time per sequence per step that no byte count shows (scheduling, sampling, detokenisation); {_FROM_ENGINE}", "nonnegative"),
    Input("t_fixed", gl.t_fixed, _engine_default("t_fixed"), "s",
          f"time per step beside the per-layer overhead (host work paid once a step); collectives are their own term; {_FROM_ENGINE}",
          "nonnegative"),
    Input("ar_latency", gl.t_ar, _engine_default("ar_latency"), "s",
          "latency of one round of a small all-reduce over the scale-up link: one round per all-reduce where it is one-shot (NVSwitch, a full "
          "mesh), 2(n - 1) ring steps over PCIe, 2 floor(n/2) hops on a torus; a one-shot all-reduce on eight H100s takes 4 to 10 "
          f"microseconds (SGLang PR 2904); {_FROM_ENGINE}", "nonnegative"),
)
#: speculative decoding's two inputs, shared by every sheet whose steps read them (speculative-decoding, mbu-definition)
SCENARIO_INPUTS += (
    Input("acceptance", gl.alpha, "0.8", "1", "acceptance rate per drafted token (measured on your traffic; 0.6 to 0.9 is typical for a same-family drafter); "
          "a comma-separated list sets one rate per draft position where a sheet takes them (0.8,0.7,0.6)",
          "fraction", spreads=tuple(f"acceptance_{i}" for i in range(2, len(gl.ACCEPTANCE_POSITIONS) + 1))),
    Input("draft_length", gl.gamma, "4", "1", "tokens drafted per sequence per cycle (0: no speculation)", "whole"),
)
#: the inputs an engine profile supplies (specs.measurements.PROFILE_INPUTS), by name
ENGINE_INPUTS = frozenset(PROFILE_INPUTS)


@dataclass(frozen=True)
class Context:
    hardware: Hardware
    model: Architecture
    #: the format of each weight component: the checkpoint's own unless --weights says otherwise
    weights: WeightFormats
    kv: Precision
    math: Precision
    #: user-set inputs by name, already parsed and checked
    overrides: Mapping[str, pint.Quantity] = field(default_factory=dict)
    #: True when the math precision was not given and follows the weights (weight-only INT4 runs BF16 math)
    math_defaulted: bool = True
    #: the second chip and second model that primed symbols are bound from (glossary.SECOND_CHIP, SECOND_MODEL);
    #: None: the same as the first
    second_hardware: Hardware | None = None
    second_model: Architecture | None = None
    #: the engine profile that supplies the engine inputs (eta_bw, eta_flops, t_layer, t_fixed, ar_latency) not set with --set
    #: (None only where a profile file is broken: an engine input then raises that file's error)
    engine: Profile | None = DEFAULT_ENGINE

    def second(self) -> Context:
        """The second setup: the second chip and model in place of the first, formats and inputs unchanged (a default math is
        the weights' default math on the second chip)."""
        hardware = self.second_hardware or self.hardware
        math = precision(default_math(self.weights, tuple(hardware.peak_dense))[0]) if self.math_defaulted else self.math
        return replace(self, hardware=hardware, model=self.second_model or self.model, math=math, second_hardware=None, second_model=None)

    def with_overrides(self, **values: str) -> Context:
        """A copy with more inputs set (values are unit strings); used by tables."""
        merged = dict(self.overrides)
        merged.update({k: Quantity(v) if isinstance(v, str) else v for k, v in values.items()})
        return replace(self, overrides=merged)


def make_context(hardware: Hardware, model: Architecture, weights: str | None = None, kv: str | None = None, math: str | None = None,
                 engine: str | None = None) -> Context:
    """The sheet's own context. A math precision the chip has no dense peak for is an error here, naming the chip and what it has;
    an unknown engine profile (None: the default) is one line with the closest names.

    Without --weights every weight component is computed in the format the model's checkpoint stores it in (its config's
    quantization_config; the default format for an unquantized checkpoint), and the sheet says so (`setup.spec_facts`);
    `--weights` names one format for all, or a format per component (specs.weight_formats).
    """
    # `is None`, never `or`: an empty name is refused (specs.text.check_name), not read as the default
    w = resolve_weights(weights, model.weight_formats, model_components(model), conventions.DEFAULT_WEIGHTS)
    if math is not None and math not in MATH_PRECISIONS:
        raise SpecError("--math", None, f"{math[:20]!r} is a storage format, not a math precision; the tensor cores run one of {', '.join(MATH_PRECISIONS)}")
    m = precision(default_math(w, tuple(hardware.peak_dense))[0] if math is None else math, "--math")
    if m.math not in hardware.peak_dense:
        given = f"--math {math}" if math is not None else f"--weights {w.name} (whose math is {m.math})"
        raise SpecError(hardware.path, f"peak_dense.{m.math}",
                        f"{given}: {hardware.name} lists no dense {m.math} peak; it lists {', '.join(hardware.peak_dense)}; choose one with --math")
    return Context(hardware=hardware, model=model, weights=w, kv=precision(conventions.DEFAULT_KV if kv is None else kv, "--kv"), math=m,
                   math_defaulted=math is None, engine=engine_profile(engine) if engine is not None else DEFAULT_ENGINE)


def model_components(model: Architecture) -> dict[str, int]:
    """The model's parameters by weight component (specs.weight_formats.COMPONENTS)."""
    counts = model.param_counts()
    return {c: getattr(counts, c) for c in COMPONENTS}


def warn_checkpoint(model: Architecture, weights: str | None) -> None:
    """One SpecWarning when a user picks a checkpoint whose quantization_config is not read, and no --weights: the sheet
    computes it in the default format."""
    if weights is None and model.quantization is not None and not model.quantization.read:
        warnings.warn(SpecWarning(*checkpoint_warning_parts(model), flag="--weights"), stacklevel=3)


def checkpoint_warning(model: Architecture) -> str | None:
    """The one line for a checkpoint whose quantization is not read (computed in the default weight format), or None."""
    if model.quantization is None or model.quantization.read:
        return None
    return "".join(checkpoint_warning_parts(model))


def checkpoint_warning_parts(model: Architecture) -> tuple[str, str]:
    """checkpoint_warning's line as (what is warned about, the advice naming --weights)."""
    return (f"{model.key}: quantization_config: {model.quantization_summary()}; this sheet computes every weight as {conventions.DEFAULT_WEIGHTS}",
            " (set --weights)")


def _mla(m: Architecture) -> object:
    if m.mla is None:
        raise SpecError(m.path, "kv_lora_rank", f"{m.name} has no multi-head latent attention; this needs an MLA model (e.g. deepseek-v3)")
    return m.mla


def _gqa(m: Architecture) -> Architecture:
    if m.mla is not None:
        raise SpecError(m.path, "head_dim", f"{m.name} uses multi-head latent attention: it has no GQA KV heads or head dimension (its attention terms use the latent widths)")
    return m


#: scale-up topology -> the all-reduce latency law it implies (primitives.allreduce_rounds): one-shot, PCIe ring, torus ring
TOPOLOGY_LAWS = {"switch": gl.d_1shot, "mesh": gl.d_1shot, "pcie": gl.d_ring, "torus": gl.d_torus}


def _topology_flag(flag: sp.Symbol) -> Callable[[Hardware], pint.Quantity]:
    """1 when the chip's scale-up topology implies the all-reduce law `flag` stands for, else 0; n/a when the spec gives no topology."""
    def bind(h: Hardware) -> pint.Quantity:
        topology = h.scaleup_topology
        if topology is None:
            raise SpecError(h.path, "scaleup_topology", f"{h.name}'s spec gives no scaleup_topology "
                                                       "(switch, mesh, torus or pcie): it decides an all-reduce's latency law")
        return _count(1 if TOPOLOGY_LAWS[topology] == flag else 0)
    return bind


def _window(m: Architecture) -> tuple[int, int]:
    """(layers, tokens) of the model's windowed layers: a sliding window, an attention chunk or a sparse top-k; (0, NO_WINDOW)
    when every attention layer reads the whole context.

    One window size per model (every shipped one has at most one); a config with two is refused in one line, and so is one
    with sparse layers beside windowed ones (the window symbols describe one kind).
    """
    if m.sparse_layers and m.dropping_layers:
        raise SpecError(m.path, "layer_types", f"{m.name} has sparse-attention layers beside sliding or chunked ones; the step model takes one kind")
    groups = [(n, w) for n, w in m.attention_windows if w is not None]
    if len(groups) > 1:
        raise SpecError(m.path, "layer_types", f"{m.name} has windowed layers of {len(groups)} sizes "
                                               f"({', '.join(str(w) for _, w in groups)} tokens); the step model takes one window size")
    return groups[0] if groups else (0, NO_WINDOW)


#: The window of a model whose layers all see the whole context: longer than any context an input allows (MAX_COUNT tokens), so
#: min(T, W) is T; with no windowed layer (L_win = 0) it changes no value, and a closed form solved branch by branch of min(T, W)
#: takes the full-context branch.
NO_WINDOW = MAX_COUNT
#: the layout's inputs, checked together (derivations.engine.run.layout_problem)
LAYOUT_SYMBOLS = (gl.n_tp, gl.n_dp, gl.n_ep)


def _moe_value(m: Architecture, pick: Callable[[MoE], int], dense: int) -> pint.Quantity:
    return _count(pick(m.moe) if m.moe else dense)


def _expert_params(m: Architecture) -> pint.Quantity:
    return Quantity(Fraction(m.moe.expert_params(m.hidden_size) if m.moe else 0), "parameter")


def _count(x: int) -> pint.Quantity:
    return Quantity(Fraction(x), "")


def _params(pick: Callable[..., int]) -> Callable[[Architecture], pint.Quantity]:
    return lambda m: Quantity(Fraction(pick(m.param_counts())), "parameter")


#: on-chip memory kinds that are a hardware cache every SM reads HBM through (L2's role in flash-attention-io)
LAST_LEVEL_CACHES = ("L2", "Infinity Cache")
#: compute units that each run thread blocks out of their own shared memory
BLOCK_UNITS = ("SM", "CU")


def _no_blocks(h: Hardware) -> bool:
    """A chip whose cores do not run thread blocks side by side out of their own shared memory (a TPU's TensorCore)."""
    kind = h.compute_unit_kind
    return kind is not None and kind not in BLOCK_UNITS


def _gpu_blocks(h: Hardware, field: str) -> None:
    if _no_blocks(h):
        raise SpecError(h.path, field, f"{h.name} has no SMs: its {h.compute_unit_kind} runs a kernel's blocks one after another, "
                                       "so shared memory per SM and blocks in flight have no meaning")


def _shared_memory_per_sm(h: Hardware) -> pint.Quantity:
    _gpu_blocks(h, "shared_memory_per_sm")
    return h.require("shared_memory_per_sm")


def _blocks_at_once(h: Hardware) -> pint.Quantity:
    _gpu_blocks(h, "compute_units")
    return _count(h.require("compute_units"))


def _last_level_cache(h: Hardware) -> pint.Quantity:
    kind = h.on_chip_memory_kind
    if (kind is not None and kind not in LAST_LEVEL_CACHES) or (kind is None and _no_blocks(h)):
        what = f"its on-chip memory is {kind}, a scratchpad" if kind else "its on-chip memory is a scratchpad"
        raise SpecError(h.path, "on_chip_memory_kind", f"{h.name} has no L2: {what} the kernel fills itself, "
                                                      "so an L2 working set has no meaning")
    return h.require("on_chip_memory")


def _indexer(m: Architecture) -> object:
    if m.indexer is None:
        raise SpecError(m.path, "index_topk", f"{m.name} has no sparse attention: no indexer picks a top-k of its cache")
    return m.indexer


def _kernels_listed(m: Architecture) -> Architecture:
    """A model whose layers are the attention (GQA or MLA) plus MLP whose kernels decode-op-ranking lists; a linear-attention,
    Mamba-2 or sparse-attention layer runs kernels it does not list, so it is refused rather than ranked as attention."""
    if m.recurrent_layers or m.sparse_layers:
        kind = "sparse-attention layers (an indexer kernel)" if m.sparse_layers else "layers that keep a state (linear attention or Mamba-2)"
        raise SpecError(m.path, "layer_types", f"{m.name} has {kind}, whose kernels the per-layer ranking does not list")
    return m


def _moe_layer(m: Architecture) -> MoE:
    if m.moe is None:
        raise SpecError(m.path, None, f"{m.name} is a dense model: it has no MoE layer (no router, no experts)")
    return m.moe


def _dense_ffn(m: Architecture) -> pint.Quantity:
    if m.dense_layers == 0:
        raise SpecError(m.path, "intermediate_size", f"{m.name} has no dense-MLP layer: every layer's MLP is a mixture of experts")
    return _count(m.intermediate_size)


# How each spec-backed glossary symbol gets its value, by the one part of a context it reads: the chip, the model, a number
# format (the weights', the KV cache's, the math's), the chip's peak at the math precision, or nothing. A binding reads its
# part only (it is given nothing else), so a table row that changes the chip evaluates the chip's bindings alone again, and
# the light path (roofline.compiled) stores each part's values once.

#: symbols bound from the chip
HARDWARE_BINDINGS: dict[sp.Symbol, Callable[[Hardware], pint.Quantity]] = {
    gl.beta: lambda h: h.memory_bandwidth,
    gl.C_mem: lambda h: h.memory_capacity,
    gl.M_sram: lambda h: h.require("on_chip_memory"),
    gl.beta_link: lambda h: h.require("scaleup_bandwidth_per_direction"),
    gl.n_dom: lambda h: _count(h.require("scaleup_domain")),
    gl.beta_out: lambda h: h.require("scaleout_bandwidth_per_direction"),
    gl.beta_host: lambda h: h.require("host_link_bandwidth_per_direction"),
    gl.d_1shot: _topology_flag(gl.d_1shot),
    gl.d_ring: _topology_flag(gl.d_ring),
    gl.d_torus: _topology_flag(gl.d_torus),
    gl.n_SM: lambda h: _count(h.require("compute_units")),
    # flash-attention-io: shared memory and the last-level cache exist only on chips whose SMs (CUs) run thread blocks
    gl.M_smem: _shared_memory_per_sm,
    gl.M_llc: _last_level_cache,
    gl.n_blk: _blocks_at_once,
    # fixed formats beside the context's own (int4-flip); an FP8 peak only where the chip lists one
    gl.pi_bf16: lambda h: h.peak("bf16"),
    gl.pi_fp8: lambda h: h.peak("fp8"),
    # the board power cap (joules-per-token); a chip whose spec gives no TDP makes the power steps n/a
    gl.P_tdp: lambda h: h.require("tdp"),
    # a throttled peak belongs to the chip it was measured on: n/a on every chip whose spec gives none
    gl.pi_sus: lambda h: h.require("sustained_peak_bf16"),
}
#: the dense tensor peak the math runs at: the chip's, at the math precision
PEAK_BINDINGS: dict[sp.Symbol, Callable[[Hardware, str], pint.Quantity]] = {gl.pi: lambda h, math: h.peak(math)}
#: the dense tensor peak the attention kernels run at: the chip's, at the KV cache format's math (a --math given runs everything)
KV_PEAK_BINDINGS: dict[sp.Symbol, Callable[[Hardware, str], pint.Quantity]] = {gl.pi_kv: lambda h, math: h.peak(math)}
#: symbols bound from the model
MODEL_BINDINGS: dict[sp.Symbol, Callable[[Architecture], pint.Quantity]] = {
    gl.D: lambda m: _count(m.hidden_size),
    gl.F: lambda m: _count(m.intermediate_size or (m.moe.expert_ffn if m.moe else 0)),
    gl.m_mlp: lambda m: _count(m.mlp_matrices),
    gl.L: lambda m: _count(m.num_layers),
    gl.N: lambda m: _count(m.num_heads),
    gl.K: lambda m: _count(_gqa(m).num_kv_heads),
    gl.H: lambda m: _count(_gqa(m).head_dim),
    gl.e_kv: lambda m: _count(m.kv_elements_per_token()),
    gl.L_att: lambda m: _count(m.attention_layers),
    gl.L_rec: lambda m: _count(m.recurrent_layers),
    gl.L_win: lambda m: _count(_window(m)[0]),
    gl.W_win: lambda m: Quantity(Fraction(_window(m)[1]), "token"),
    gl.L_drop: lambda m: _count(m.dropping_layers),
    gl.k_top: lambda m: Quantity(Fraction(_indexer(m).topk), "token"),
    gl.s_idx: lambda m: Quantity(Fraction(m.index_bytes_per_token()), "B/token"),
    gl.e_idx: lambda m: _count(m.index_elements()),
    gl.s_st: lambda m: Quantity(Fraction(m.state_bytes_per_sequence()), "B"),
    gl.e_rec: lambda m: _count(m.recurrent_elements()),
    gl.V: lambda m: _count(m.vocab_size),
    gl.r_kv: lambda m: _count(_mla(m).kv_rank),
    gl.d_R: lambda m: _count(_mla(m).rope_dim),
    gl.d_nope: lambda m: _count(_mla(m).nope_dim),
    gl.d_v: lambda m: _count(_mla(m).v_dim),
    gl.P_total: _params(lambda c: c.total),
    gl.P_matmul: _params(lambda c: c.matmul),
    gl.P_noarith: _params(lambda c: c.no_arithmetic),
    gl.P_active: _params(lambda c: c.active_matmul),
    gl.P_emb: _params(lambda c: c.embedding),
    gl.P_norm: _params(lambda c: c.norms + c.biases),
    gl.P_head: _params(lambda c: c.lm_head),
    # attention for any architecture: GQA reads K and V per KV head; absorbed MLA reads one latent for all heads
    gl.n_kv: lambda m: _count(1 if m.mla else m.num_kv_heads),
    gl.w_k: lambda m: _count(m.mla.kv_rank + m.mla.rope_dim if m.mla else m.head_dim),
    gl.w_v: lambda m: _count(m.mla.kv_rank if m.mla else m.head_dim),
    gl.w_c: lambda m: _count(m.mla.kv_rank + m.mla.rope_dim if m.mla else 2 * m.head_dim),
    # attention over materialised K and V (prefill, non-absorbed MLA)
    gl.h_k: lambda m: _count(m.mla.nope_dim + m.mla.rope_dim if m.mla else m.head_dim),
    gl.h_v: lambda m: _count(m.mla.v_dim if m.mla else m.head_dim),
    # mixture of experts; a dense model is one "expert" that every token uses, held in P_base
    gl.E: lambda m: _moe_value(m, lambda moe: moe.experts, 1),
    gl.k_E: lambda m: _moe_value(m, lambda moe: moe.top_k, 1),
    gl.L_moe: lambda m: _moe_value(m, lambda moe: len(moe.moe_layers), 0),
    gl.P_exp: _expert_params,
    gl.F_E: lambda m: _moe_value(m, lambda moe: moe.expert_ffn, 0),
    # shared experts in routed-expert sizes (Nemotron 3 Nano's one shared expert is twice as wide as a routed one: 2)
    gl.E_s: lambda m: _count(Fraction(m.moe.shared_experts * m.moe.shared_params(m.hidden_size), m.moe.expert_params(m.hidden_size))
                             if m.moe else Fraction(0)),
    gl.P_base: _params(lambda c: c.active_matmul - c.experts_routed_active),
    # the kernels of one layer (decode-op-ranking): a part the model lacks is n/a, so its kernel is too
    gl.F_dense: _dense_ffn,
    gl.F_moe: lambda m: _count(_moe_layer(m).expert_ffn),
    gl.m_E: lambda m: _count(_moe_layer(m).expert_matrices),
    gl.P_rtr: lambda m: Quantity(Fraction(m.param_counts().router, len(_moe_layer(m).moe_layers)), "parameter"),
    gl.delta_mla: lambda m: _count(1 if _kernels_listed(m).mla else 0),
    gl.r_q: lambda m: _count(_mla(m).q_rank or 0),
    gl.d_q: lambda m: _count(_mla(m).q_rank or m.hidden_size),
    # always-read weights by component (moe-experts)
    gl.P_attn: _params(lambda c: c.attention),
    gl.P_mlp: _params(lambda c: c.mlp_dense),
}
#: symbols bound from one of the context's number formats ("weights", "kv", "math"), by role
PRECISION_BINDINGS: dict[str, dict[sp.Symbol, Callable[[Precision], pint.Quantity]]] = {
    "kv": {gl.b_kv: lambda p: Quantity(p.bytes_per_element, "B/token")},
    "math": {gl.b_a: lambda p: Quantity(precision(p.math).bytes_per_element, "B/token")},
}
#: symbols bound from the weight formats over the model's components (WeightFormats.widths): the always-read weights' mean
#: width and the routed experts' width
WEIGHT_BINDINGS: tuple[sp.Symbol, ...] = tuple(getattr(gl, name) for name in WEIGHT_WIDTHS)


def _power_default() -> PowerFamily:
    model = load_power()
    return next(f for f in model.families if f.name == model.default)


#: symbols that read nothing: units, conventions, the fixed formats beside the context's own (int4-flip)
CONSTANT_BINDINGS: dict[sp.Symbol, Callable[[], pint.Quantity]] = {
    gl.u_param: lambda: Quantity(Fraction(1), "parameter"),
    gl.kappa: lambda: Quantity(conventions.FLOPS_PER_WEIGHT_PER_TOKEN),
    gl.kappa_attn: lambda: Quantity(conventions.ATTENTION_FLOPS_PER_CHANNEL),
    gl.kappa_st: lambda: Quantity(conventions.RECURRENT_FLOPS_PER_STATE_ELEMENT),
    gl.u_token: lambda: Quantity(Fraction(1), "token"),
    gl.m_tile: lambda: Quantity(conventions.GROUPED_GEMM_TILE),
    # the power model's shares (specs/measurements/power.toml): the default family's, applied to every chip's own TDP
    **{sym: (lambda key=key: Quantity(_power_default().shares[key])) for sym, key in ((gl.phi_0, "idle_share"), (gl.a_mem, "memory_share"),
                                                                                       (gl.a_flop, "compute_share"))},
    # one bit in bytes (headline-check's bits per weight)
    gl.u_bit: lambda: Quantity(Fraction(1, 8), "B"),
    gl.b_bf16: lambda: Quantity(precision("bf16").bytes_per_element, "B/parameter"),
    gl.b_fp8: lambda: Quantity(precision("fp8").bytes_per_element, "B/parameter"),
}


def _on_second(binding: Callable[[Context], pint.Quantity]) -> Callable[[Context], pint.Quantity]:
    return lambda ctx: binding(ctx.second())


#: How each spec-backed glossary symbol gets its value from a context (the part tables above, each given its part).
BINDINGS: dict[sp.Symbol, Callable[[Context], pint.Quantity]] = {
    **{s: (lambda ctx, f=f: f(ctx.hardware)) for s, f in HARDWARE_BINDINGS.items()},
    **{s: (lambda ctx, f=f: f(ctx.hardware, ctx.math.math)) for s, f in PEAK_BINDINGS.items()},
    **{s: (lambda ctx, f=f: f(ctx.hardware, attention_math(ctx.kv, ctx.math, ctx.math_defaulted))) for s, f in KV_PEAK_BINDINGS.items()},
    **{s: (lambda ctx, f=f: f(ctx.model)) for s, f in MODEL_BINDINGS.items()},
    **{s: (lambda ctx, f=f, role=role: f(getattr(ctx, role))) for role, table in PRECISION_BINDINGS.items() for s, f in table.items()},
    **{s: (lambda ctx, i=i: Quantity(ctx.weights.widths(model_components(ctx.model))[i], "B/parameter")) for i, s in enumerate(WEIGHT_BINDINGS)},
    **{s: (lambda ctx, f=f: f()) for s, f in CONSTANT_BINDINGS.items()},
}
# primed twins: the same binding, read from the second chip or second model
BINDINGS.update({twin: _on_second(BINDINGS[s]) for s, twin in (*gl.SECOND_CHIP.items(), *gl.SECOND_MODEL.items())})


def input_value(inp: Input, ctx: Context, inputs: Sequence[Input] = ()) -> tuple[pint.Quantity, bool]:
    """The input's value in this context and whether it was set (not the default): --set, else the engine profile's value for an
    engine input, else (context, for the serving step: `serving_context`) the value of the input it follows among `inputs`
    (the derivation's), else the input's default (a follower's is its leader's default)."""
    if inp.name in ctx.overrides:
        return ctx.overrides[inp.name].to(unit(inp.unit)), True
    leader = next((i for i in inputs if i.name == inp.follows), None) if inp.follows else None
    if leader is not None:
        return input_value(leader, ctx, inputs)[0].to(unit(inp.unit)), False
    if inp.name == "context" and "output_len" in ctx.overrides:
        shared = {i.name: i for i in SCENARIO_INPUTS}
        s, n = (Fraction(input_value(shared[k], ctx)[0].to("token").magnitude) for k in conventions.SERVING_CONTEXT_INPUTS)
        served = conventions.serving_context(s, n)
        if served is not None:
            return Quantity(served, "token"), False
    if inp.name in ENGINE_INPUTS:
        return _profile_value(ctx.engine if ctx.engine is not None else fitted(), inp), False
    return default_value(inp), False


@lru_cache(maxsize=256)
def _profile_value(engine: Profile, inp: Input) -> pint.Quantity:
    """An engine input's value in a profile, parsed once per process and checked against the input's domain."""
    return inp.parse(engine.values[inp.name], f"{engine.where}")


@lru_cache(maxsize=1024)
def default_value(inp: Input) -> pint.Quantity:
    """An input's default, parsed once per process (evaluation asks for it per step and per row)."""
    if not inp.default and inp.name in ENGINE_INPUTS:
        fitted()  # a profile file is broken: its own error
    return inp.parse(inp.default, "default")


def check_override_names(names: Mapping[str, object], inputs: tuple[Input, ...], slug: str, where: str = "--set") -> None:
    known, named = [i.name for i in inputs], by_name(inputs)
    for name in names:
        if not isinstance(name, str):
            raise SpecError(where, None, f"expected input names as strings, found {type(name).__name__} {shown(name)}")
        if name not in named:
            raise SpecError(where, name[:40], f"{slug} has no input by that name{suggest(name, known)}; inputs: {', '.join(known)}")


def spread(name: str, value: object, inputs: tuple[Input, ...], slug: str, where: str = "--set") -> dict[str, object]:
    """A value for `name` (an input's name or older name) as the inputs it sets, by their names: itself, or, for a
    comma-separated value of an input that spreads (`acceptance=0.8,0.6,0.4`), one value per input in turn; a list the sheet
    has no inputs for is refused in one line."""
    inp = by_name(inputs)[name]
    if not isinstance(value, str) or "," not in value:
        return {inp.name: value}
    parts = [p.strip() for p in value.split(",")]
    known = {i.name for i in inputs}
    targets = [inp.name, *(n for n in inp.spreads if n in known)]
    if len(parts) > len(targets):
        took = f"at most {len(targets)} values, one per draft position" if len(targets) > 1 else "one value"
        raise SpecError(where, name, f"{slug} takes {took} here; found {len(parts)} in {value[:40]!r}")
    return dict(zip(targets, parts, strict=False))


def _gather(given: list[tuple[str, object]], inputs: tuple[Input, ...], slug: str, where: str) -> dict[str, object]:
    """Named values as the inputs they set (`spread`), by input name; an input given twice (under its name or an older one)
    takes the later value, as a repeated `--set` does."""
    return {n: v for name, value in given for n, v in spread(name, value, inputs, slug, where).items()}


def parse_overrides(pairs: list[str], inputs: tuple[Input, ...], slug: str) -> dict[str, pint.Quantity]:
    """`NAME=VALUE` strings into checked Quantities by input name (pint's parser, never eval); an input's older name
    (`Input.aliases`) sets it, and a comma-separated value sets the inputs an input spreads to (`spread`)."""
    named = {i.name: i for i in inputs}
    given: list[tuple[str, object]] = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SpecError("--set", None, f"expected NAME=VALUE, found {pair[:40]!r}")
        check_override_names({name: None}, inputs, slug)
        given.append((name, value))
    return {n: named[n].parse(str(v)) for n, v in _gather(given, inputs, slug, "--set").items()}


def input_overrides(values: Mapping[str, object], inputs: tuple[Input, ...], slug: str, where: str = "inputs") -> dict[str, pint.Quantity]:
    """Input values from Python (name or older name -> number, string or Quantity; see `Input.value`) into checked Quantities
    by input name; a comma-separated string sets the inputs its input spreads to, as `--set` does."""
    check_override_names(values, inputs, slug, where)
    named = {i.name: i for i in inputs}
    return {n: named[n].value(raw, where) for n, raw in _gather(list(values.items()), inputs, slug, where).items()}



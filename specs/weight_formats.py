"""The format each weight component is computed in: as the model's checkpoint stores it (the default), or as --weights says.

A sheet's step model reads two widths from them (derivations.physics.glossary): `b_w`, the bytes per always-read GEMM weight
(attention, dense MLPs, shared experts, routers, LM head: the parameter-weighted mean of their formats), and `b_e`, the bytes
per routed-expert weight. gpt-oss-120b as served is MXFP4 experts with BF16 attention: b_e = 0.53125 B, b_w = 2 B.

`--weights` takes one format for every component (`fp8`), a format per component (`experts_routed=nvfp4,attention=fp8`, the
rest as the checkpoint stores them), or both (`fp8,experts_routed=mxfp4`: every component in FP8 but the routed experts).
The component names are ParamCounts' (specs.models), as `roofline show model` prints them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .errors import SpecError, shown, suggest
from .precisions import Precision, precision
from .quantization import MATMUL_COMPONENTS
from .text import check_name

#: the components --weights may name, in the order a sheet lists them
COMPONENTS = MATMUL_COMPONENTS
#: the GEMM weights every token multiplies (P_base): their mean width is b_w
ALWAYS_READ = ("attention", "mlp_dense", "experts_shared", "router", "lm_head")
#: the routed experts: their width is b_e
ROUTED = "experts_routed"
#: what each component is called on a sheet
COMPONENT_NAMES = {"attention": "attention", "mlp_dense": "dense MLPs", "experts_routed": "routed experts", "experts_shared": "shared experts",
                   "router": "routers", "embedding": "embedding", "lm_head": "LM head"}
#: where the formats come from
ORIGINS = ("default", "checkpoint", "--weights")


@dataclass(frozen=True)
class WeightFormats:
    """The format of each weight component (COMPONENTS, in order), the one that holds most of the GEMM weights (its math is
    the default math), and where they come from (ORIGINS)."""

    formats: tuple[tuple[str, Precision], ...]
    principal: Precision
    origin: str

    def of(self, component: str) -> Precision:
        return dict(self.formats)[component]

    @property
    def uniform(self) -> Precision | None:
        """The one format every component is in, or None for mixed formats."""
        distinct = {p for _, p in self.formats}
        return next(iter(distinct)) if len(distinct) == 1 else None

    @property
    def name(self) -> str:
        """`bf16` for one format; `bf16,experts_routed=mxfp4` style for mixed ones (the format most components are in, then
        the others by component): a value --weights reads back to the same formats."""
        if self.uniform is not None:
            return self.uniform.name
        formats = [p for _, p in self.formats]
        head = max(formats, key=formats.count)  # the format most components are in; the rest named
        return ",".join([head.name, *(f"{c}={p.name}" for c, p in self.formats if p != head)])

    def widths(self, counts: Mapping[str, int]) -> tuple[Fraction, Fraction]:
        """(b_w, b_e) in bytes per parameter: the always-read weights' parameter-weighted mean width (`counts`: parameters by
        component), and the routed experts' width."""
        read = {c: counts.get(c, 0) for c in ALWAYS_READ}
        total = sum(read.values())
        b_w = (sum(n * self.of(c).bytes_per_element for c, n in read.items()) / total if total
               else self.of("attention").bytes_per_element)
        return Fraction(b_w), self.of(ROUTED).bytes_per_element

    def describe(self, counts: Mapping[str, int]) -> str:
        """One line: each format with the components in it (those the model has), and where the formats come from."""
        if self.uniform is not None:
            text = self.uniform.description
        else:
            groups: dict[Precision, list[str]] = {}
            for c, p in self.formats:
                if counts.get(c, 0):
                    groups.setdefault(p, []).append(COMPONENT_NAMES[c])
            text = "; ".join(f"{', '.join(names)} in {p.description}" for p, names in
                             sorted(groups.items(), key=lambda kv: kv[0] != self.principal))
        if self.origin == "checkpoint":
            return text + " (as the checkpoint stores them; --weights X computes every weight in X)"
        return text


def resolve_weights(given: str | None, stored: Sequence[tuple[str, str]], counts: Mapping[str, int], default: str,
                    where: str = "--weights") -> WeightFormats:
    """The formats a sheet computes: `given` (a --weights value, None when not given) over the checkpoint's `stored` formats
    ((component, precision name); empty for an unquantized or unread checkpoint, which is `default` throughout)."""
    stored_map = {c: f for c, f in stored if c in COMPONENTS}
    base = {c: precision(stored_map.get(c, default)) for c in COMPONENTS}
    origin = "checkpoint" if stored_map else "default"
    if given is not None:
        check_name(given, where, None, "a precision name such as 'bf16', or COMPONENT=FORMAT pairs")
        origin = "--weights"
        seen: set[str] = set()
        for i, part in enumerate(given.split(",")):
            part = part.strip()
            if not part:
                raise SpecError(where, None, f"expected a format or COMPONENT=FORMAT between commas, found an empty one in {shown(given)}")
            if "=" not in part:
                if i:
                    raise SpecError(where, None, f"one format for every component comes first ('fp8,experts_routed=mxfp4'), found {shown(part)} after a pair")
                base = {c: precision(part, where) for c in COMPONENTS}
                continue
            component, _, fmt = (s.strip() for s in part.partition("="))
            if component not in COMPONENTS:
                raise SpecError(where, component[:40] or None, f"unknown weight component{suggest(component, COMPONENTS)}; components: {', '.join(COMPONENTS)}")
            if component in seen:
                raise SpecError(where, component, "named twice")
            seen.add(component)
            base[component] = precision(fmt, f"{where} {component}")
    principal = _principal(base, counts)
    # a component the model lacks weighs nothing: it takes the format most of the model's components are in, so that the
    # name lists only components the model has
    present = [base[c] for c in COMPONENTS if counts.get(c, 0)] or [principal]
    common = max(present, key=present.count)
    formats = tuple((c, base[c] if counts.get(c, 0) else common) for c in COMPONENTS)
    return WeightFormats(formats, principal, origin)


def _principal(formats: Mapping[str, Precision], counts: Mapping[str, int]) -> Precision:
    """The format holding most GEMM parameters (ties: the first in COMPONENTS order)."""
    share: dict[Precision, int] = {}
    for c in COMPONENTS:
        share[formats[c]] = share.get(formats[c], 0) + counts.get(c, 0)
    return max(share, key=lambda p: share[p])


def default_math(weights: WeightFormats, listed: Collection[str]) -> tuple[str, str]:
    """The math precision a sheet runs at when --math is not given, and why: the principal format's math; for a checkpoint's
    own formats on a chip that lists no peak for it, BF16 (weight-only kernels, such as vLLM's Marlin FP8 and MXFP4 paths,
    widen the weights to BF16 before the tensor cores)."""
    math = weights.principal.math
    if math in listed or weights.origin == "--weights":
        return math, f"the math of {weights.principal.name} weights"
    return "bf16", f"{weights.principal.name} weights widened to bf16: this chip lists no {math} peak"


def row_formats(current: WeightFormats, math_defaulted: bool, stored: Sequence[tuple[str, str]], counts: Mapping[str, int],
                listed: Collection[str], default: str, weights: str | None, math: str | None) -> tuple[WeightFormats, str | None]:
    """The formats of a table row's setup, on the row's model (`stored`, `counts`) and chip (`listed` math peaks): the row's
    weights (read as --weights reads them), else, for formats the user did not set, the model's own checkpoint formats, else
    `current`; and the row's math, else the weights' default math on the row's chip where the math follows them (as
    `roofline derive` on that chip and model runs it: FP8 weights on a chip with no FP8 peak widened to BF16) or where the
    row sets other weights (None: the math stays)."""
    w = current
    if weights is not None or current.origin != "--weights":
        w = resolve_weights(weights, stored, counts, default)
    if math is not None:
        return w, math
    if math_defaulted or (w != current and weights is not None):
        return w, default_math(w, listed)[0]
    return w, None

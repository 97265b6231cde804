"""Number formats: bytes per element for weights and KV cache, and which peak the math uses.

INT4's group-scale overhead is explicit: `int4` is the bare 0.5 B/parameter;
`int4-g128` adds one BF16 scale per 128 weights (0.5 + 2/128 = 0.515625 B).

`mxfp4` is the OCP Microscaling format MXFP4: blocks of 32 FP4 (E2M1) elements
sharing one 8-bit E8M0 scale, 4 + 8/32 = 4.25 bits (0.53125 B) per weight.
Sources: OCP Microscaling Formats (MX) Specification v1.0, section 5 (block
size 32, scale E8M0) at https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf ;
the gpt-oss model card (arXiv 2508.10925, section 2: "MXFP4 format (4.25 bits)");
docs.rs float4 MXFP4Block ("17 bytes for 32 values"). Where no FP4 tensor core
runs it (Hopper), the MXFP4 MoE kernels dequantize to BF16 (vLLM's and
transformers' Triton MXFP4 paths), so its math is BF16 like weight-only INT4.

`nvfp4` is NVIDIA's NVFP4: FP4 (E2M1) values with one FP8 (E4M3) scale per 16 and one FP32 scale per tensor, 4 + 8/16 =
4.5 bits per weight (the per-tensor scale is one number per matrix and is not counted). `fp4-g16` counts its scale as BF16
(5 bits): it is not NVFP4. Its math is the chip's FP4 peak (Blackwell's tensor cores run it). Source: NVIDIA technical blog
"Introducing NVFP4 for Efficient and Accurate Low-Precision Inference" (developer.nvidia.com/blog/introducing-nvfp4-for-
efficient-and-accurate-low-precision-inference/: "a 16-value micro-block ... FP8 E4M3 scale ... a second-level FP32 scalar").
`mxfp8` is OCP MXFP8: FP8 values in blocks of 32 sharing one E8M0 scale, 8 + 8/32 = 8.25 bits (OCP MX v1.0, section 5).
`mxfp6` is OCP MXFP6 (E2M3 or E3M2 values, blocks of 32, one E8M0 scale): 6 + 8/32 = 6.25 bits; `fp6` the bare 6 bits. Their
math is a chip's FP6 peak where it lists one: CDNA 4 (MI355X) runs FP6 at its FP4 rate, Blackwell Ultra at its FP8 rate
(NVIDIA prints "FP8/FP6" as one row), so there a `--math fp6` sheet says it runs no faster than FP8.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .errors import SpecError, suggest
from .text import check_name


@dataclass(frozen=True)
class Precision:
    """A storage or math format."""

    name: str
    bits: int
    #: weights sharing one scale; None when there is no per-group scale
    group_size: int | None = None
    #: bytes of each group's scale (BF16 = 2)
    scale_bytes: int = 0
    #: the tensor-core peak this format's math runs at (weight-only INT4 runs BF16 math)
    math: str = ""

    @property
    def bytes_per_element(self) -> Fraction:
        base = Fraction(self.bits, 8)
        if self.group_size:
            base += Fraction(self.scale_bytes, self.group_size)
        return base

    @property
    def description(self) -> str:
        if self.group_size:
            scale_bits = 8 * self.scale_bytes
            article = "an" if str(scale_bits).startswith("8") else "a"
            return f"{self.name}: {self.bits}-bit values plus {article} {scale_bits}-bit scale per {self.group_size} elements"
        return f"{self.name}: {self.bits}-bit values, no scale overhead counted"


#: The formats roofline knows, by name. `math` names the hardware peak used when
#: these are also the math precision.
PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("fp32", 32, math="fp32"),
        Precision("bf16", 16, math="bf16"),
        Precision("fp16", 16, math="fp16"),
        Precision("fp8", 8, math="fp8"),
        Precision("int8", 8, math="int8"),
        Precision("int4", 4, math="bf16"),
        Precision("fp4", 4, math="fp4"),
        Precision("mxfp4", 4, group_size=32, scale_bytes=1, math="bf16"),
        Precision("nvfp4", 4, group_size=16, scale_bytes=1, math="fp4"),
        Precision("mxfp8", 8, group_size=32, scale_bytes=1, math="fp8"),
        Precision("fp6", 6, math="fp6"),
        Precision("mxfp6", 6, group_size=32, scale_bytes=1, math="fp6"),
    )
}
#: Precisions a chip may list under [peak_dense].
MATH_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp6", "fp4")
_GROUPED = re.compile(r"^(int4|fp4)-g(\d{1,5})$")


def precision(name: str, where: str = "precision") -> Precision:
    """The Precision called `name`; `int4-g128` style names add a BF16 group scale."""
    if not isinstance(name, str):
        raise SpecError(where, None, f"expected a precision name, found {name!r}")
    check_name(name, where, None, "a precision name such as 'bf16'")
    if name in PRECISIONS:
        return PRECISIONS[name]
    grouped = _GROUPED.match(name)
    if grouped:
        base, group = PRECISIONS[grouped.group(1)], int(grouped.group(2))
        if group < 1:
            raise SpecError(where, None, f"group size must be at least 1, found {group}")
        return Precision(name, base.bits, group_size=group, scale_bytes=2, math=base.math)
    choices = [*PRECISIONS, "int4-g128"]
    raise SpecError(where, None, f"unknown precision {name[:40]!r}; known: {', '.join(choices)}{suggest(name, choices)}")

"""A checkpoint's storage formats, from its config.json's quantization_config (AWQ, GPTQ, FP8, MXFP4).

`read_quantization` tells which format each parameter group of specs.models.ParamCounts is stored in
(`Quantization`), or why the method is not read; a format's scales and zero points are named in its note.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import SpecError, shown
from .model_families import Family

#: the parameter groups of ParamCounts that hold weights a checkpoint may store in another format
MATMUL_COMPONENTS = ("attention", "mlp_dense", "experts_routed", "experts_shared", "router", "embedding", "lm_head")
#: module names the components go by in Hugging Face checkpoints, to match a quantization_config's modules_to_not_convert
COMPONENT_MODULES: dict[str, tuple[str, ...]] = {
    "attention": ("model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.o_proj", "transformer.h.0.attn.c_attn",
                  "transformer.h.0.self_attention.query_key_value", "model.decoder.layers.0.self_attn.q_proj"),
    "mlp_dense": ("model.layers.0.mlp.gate_proj", "model.layers.0.mlp.down_proj", "model.layers.0.feed_forward.gate_proj",
                  "transformer.h.0.mlp.c_fc", "model.layers.0.mlp.fc1"),
    "experts_routed": ("model.layers.0.mlp.experts.0.gate_proj", "model.layers.0.mlp.experts", "model.layers.0.block_sparse_moe.experts.0.w1",
                       "model.layers.0.feed_forward.experts"),
    "experts_shared": ("model.layers.0.mlp.shared_experts.gate_proj", "model.layers.0.mlp.shared_expert.gate_proj",
                       "model.layers.0.feed_forward.shared_expert.gate_proj"),
    "router": ("model.layers.0.mlp.router", "model.layers.0.mlp.gate", "model.layers.0.block_sparse_moe.gate", "model.layers.0.feed_forward.router"),
    "embedding": ("model.embed_tokens", "transformer.wte", "transformer.word_embeddings", "model.decoder.embed_tokens"),
    "lm_head": ("lm_head",),
}
#: torch dtype names in config.json -> our precisions
TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@dataclass(frozen=True)
class Quantization:
    """A checkpoint's quantization_config, read: which format each parameter group is stored in."""

    #: quant_method as the config writes it
    method: str
    #: (ParamCounts group, precision name) for MATMUL_COMPONENTS, then norms and biases; empty when the method is not read
    formats: tuple[tuple[str, str], ...]
    #: what the format leaves out (scales, zero points), or why the method is not read
    note: str

    @property
    def read(self) -> bool:
        return bool(self.formats)


def read_quantization(top: Mapping[str, object], text: Mapping[str, object], path: Path, fam: Family) -> Quantization | None:
    """The checkpoint's storage format per parameter group, from quantization_config (AWQ, GPTQ, FP8, MXFP4)."""
    q = text.get("quantization_config", top.get("quantization_config"))
    if q is None:
        return None
    if not isinstance(q, dict):
        raise SpecError(path, "quantization_config", f"expected a JSON object, found {shown(q)}")
    method = q.get("quant_method")
    if not isinstance(method, str):
        raise SpecError(path, "quantization_config.quant_method", f"expected text (awq, gptq, fp8, mxfp4, ...), found {shown(method)}")
    dtype = text.get("torch_dtype", text.get("dtype", top.get("torch_dtype", top.get("dtype"))))
    # a config without a dtype: the unquantized tensors are taken as BF16 (gpt-oss ships them in BF16, its model card says)
    if dtype is not None and dtype not in TORCH_DTYPES:
        raise SpecError(path, "torch_dtype", f"expected one of {', '.join(TORCH_DTYPES)} (the unquantized tensors' format), found {shown(dtype)}")
    base = TORCH_DTYPES[dtype] if dtype is not None else "bf16"
    keep = q.get("modules_to_not_convert") or []
    if not isinstance(keep, list) or not all(isinstance(m, str) for m in keep):
        raise SpecError(path, "quantization_config.modules_to_not_convert", f"expected a list of module names, found {shown(keep)}")
    fmt, converted, note = _quantized_format(q, method, fam)
    if fmt is None:
        return Quantization(method, (), note)
    converted = tuple(comp for comp in converted if not _kept(comp, keep))
    formats = (*((comp, fmt if comp in converted else base) for comp in MATMUL_COMPONENTS), ("norms", base), ("biases", base))
    return Quantization(method, formats, note)


def _quantized_format(q: Mapping[str, object], method: str, fam: Family) -> tuple[str | None, tuple[str, ...], str]:
    """(precision of the quantized weights, the groups a method converts by default, a note) or (None, (), why not read)."""
    blocks = ("attention", "mlp_dense", "experts_routed", "experts_shared") + (("router",) if fam.router_linear else ())
    if method == "mxfp4":
        # transformers' mxfp4 integration replaces the MoE experts only; modules_to_not_convert names the rest
        return "mxfp4", ("experts_routed", "experts_shared"), " (4-bit E2M1, one E8M0 scale per 32)"
    if method == "fp8":
        block = q.get("weight_block_size")
        note = f" ({q.get('fmt', 'e4m3')}, {block[0]}x{block[1]} blocks; their FP32 scales, {4 / (block[0] * block[1]):.3%} more, not counted)" \
            if isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block) else ""
        return "fp8", blocks, note
    if method in ("awq", "gptq"):
        bits = q.get("bits", q.get("w_bit"))
        group = q.get("group_size", q.get("q_group_size"))
        if bits not in (4, 8) or isinstance(bits, bool) or not isinstance(group, int) or isinstance(group, bool) or group == 0 or group < -1:
            return None, (), f"with bits {shown(bits)} and group_size {shown(group)} is not read (4-bit, or 8-bit per channel, are)"
        if bits == 8 and group != -1:
            return None, (), f"8-bit with group_size {group} is not read (no grouped 8-bit format)"
        fmt = ("int4" if group == -1 else f"int4-g{group}") if bits == 4 else "int8"
        return fmt, blocks, " (zero points, 4 bits per group, not counted)" if group != -1 else ""
    return None, (), "is not read (awq, gptq, fp8 and mxfp4 are)"


def _kept(component: str, patterns: list[str]) -> bool:
    """Whether modules_to_not_convert names the component (glob patterns, or module-name parts)."""
    for name in COMPONENT_MODULES[component]:
        for p in patterns:
            if "*" in p or "?" in p:
                if fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name, p + ".*"):
                    return True
            elif f".{p}." in f".{name}.":
                return True
    return False

"""A checkpoint's storage formats, from its config.json's quantization_config (AWQ, GPTQ, FP8, MXFP4, NVIDIA ModelOpt,
compressed-tensors).

`read_quantization` tells which format each parameter group of specs.models.ParamCounts is stored in
(`Quantization`), or why the method is not read; a format's scales and zero points are named in its note.
"""

from __future__ import annotations

import fnmatch
import re
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
    # the modules left in the base format: transformers' modules_to_not_convert, ModelOpt's exclude_modules, compressed-tensors' ignore
    field = next((f for f in ("modules_to_not_convert", "exclude_modules", "ignore") if q.get(f) is not None), "modules_to_not_convert")
    keep = q.get(field) or []
    if not isinstance(keep, list) or not all(isinstance(m, str) for m in keep):
        raise SpecError(path, f"quantization_config.{field}", f"expected a list of module names, found {shown(keep)}")
    if method in ("modelopt", "modelopt_fp4"):
        chosen, note = _modelopt(q, path)
    elif method == "compressed-tensors":
        chosen, note = _compressed_tensors(q, fam, path)
    else:
        fmt, converted, note = _quantized_format(q, method, fam)
        chosen = {comp: fmt for comp in converted} if fmt is not None else None
    if chosen is None:
        return Quantization(method, (), note)
    chosen = {comp: fmt for comp, fmt in chosen.items() if not _kept(comp, keep)}
    formats = (*((comp, chosen.get(comp, base)) for comp in MATMUL_COMPONENTS), ("norms", base), ("biases", base))
    return Quantization(method, formats, note)


#: ModelOpt's quant_algo -> our precision (NVFP4: E2M1 with an E4M3 scale per 16 and an FP32 scale per tensor)
_MODELOPT = {"NVFP4": "nvfp4", "W4A16_NVFP4": "nvfp4", "FP8": "fp8"}
#: what ModelOpt's export quantizes by default: every Linear of the decoder; its default configurations disable the LM head
#: and the routers (NVIDIA/TensorRT-Model-Optimizer modelopt/torch/quantization/config.py: "*lm_head*", "*router*" and
#: "*mlp.gate.*" disabled), and exclude_modules names the rest
_MODELOPT_LINEARS = ("attention", "mlp_dense", "experts_routed", "experts_shared")


def _modelopt(q: Mapping[str, object], path: Path) -> tuple[dict[str, str] | None, str]:
    """NVIDIA ModelOpt's quantization_config (quant_method modelopt): quant_algo NVFP4 or FP8 for every Linear, or
    MIXED_PRECISION with a quant_algo per module (quantized_layers); kv_cache_quant_algo is said in the note."""
    algo = q.get("quant_algo")
    kv = q.get("kv_cache_quant_algo")
    kv_note = f"; its KV cache in {str(kv).lower()} by kv_cache_quant_algo, which --kv {str(kv).lower()} gives a sheet" if isinstance(kv, str) and kv else ""
    if algo in _MODELOPT:
        fmt = _MODELOPT[algo]
        scales = " (E2M1, one E4M3 scale per 16 and an FP32 scale per tensor)" if fmt == "nvfp4" else " (e4m3, per-tensor scales not counted)"
        return dict.fromkeys(_MODELOPT_LINEARS, fmt), scales[:-1] + kv_note + ")"
    if algo == "MIXED_PRECISION":
        layers = q.get("quantized_layers")
        if not isinstance(layers, dict) or not layers:
            raise SpecError(path, "quantization_config.quantized_layers", f"expected a mapping of module name to its quant_algo, found {shown(layers)}")
        chosen: dict[str, str] = {}
        for module, spec in layers.items():
            module_algo = spec.get("quant_algo") if isinstance(spec, dict) else None
            if module_algo not in _MODELOPT:
                return None, f"with quant_algo {shown(module_algo)} for {module[:60]} is not read (NVFP4 and FP8 are)"
            comp = _component_of(module)
            if comp is None:
                return None, f"names a module roofline cannot place ({module[:60]}): not read"
            if chosen.setdefault(comp, _MODELOPT[module_algo]) != _MODELOPT[module_algo]:
                return None, f"stores {GROUP_LABELS.get(comp, comp)} in two formats (one format per component is read): not read"
        return chosen, f" (mixed precision per module{kv_note})"
    return None, f"with quant_algo {shown(algo)} is not read (NVFP4, FP8 and MIXED_PRECISION are)"


#: readable names of the components, for a refusal
GROUP_LABELS = {"attention": "attention", "mlp_dense": "dense MLPs", "experts_routed": "routed experts", "experts_shared": "shared experts",
                "router": "router", "embedding": "embedding", "lm_head": "LM head"}


#: (component, a part of a module's name that places it there), first match wins: the Hugging Face module names of
#: COMPONENT_MODULES, by the part that tells them apart
_NAME_PARTS = (("router", "shared_expert_gate"), ("experts_shared", "shared_expert"), ("experts_routed", ".experts"), ("router", ".gate"),
               ("router", ".router"), ("attention", "self_attn."), ("attention", ".attn."), ("attention", ".self_attention."),
               ("attention", ".linear_attn."), ("mlp_dense", ".mlp."),
               ("mlp_dense", ".feed_forward."), ("embedding", "embed_tokens"), ("embedding", ".wte"), ("lm_head", "lm_head"))


def _component_of(module: str) -> str | None:
    """The component a checkpoint module name belongs to (model.layers.3.mlp.experts -> experts_routed), or None."""
    name = f".{module}."
    for comp, part in _NAME_PARTS:
        if part in name and not (part == ".gate" and f"{part}_" in name):
            return comp
    return None


def _compressed_tensors(q: Mapping[str, object], fam: Family, path: Path) -> tuple[dict[str, str] | None, str]:
    """compressed-tensors' quantization_config (llm-compressor): one config group targeting every Linear, its weights'
    scheme read as a format (float 4-bit in groups of 16: NVFP4; float 8-bit: FP8; int 4-bit in groups: int4-gN; int 8-bit
    per channel: INT8); `ignore` names the modules left as they are."""
    groups = q.get("config_groups")
    if not isinstance(groups, dict):
        raise SpecError(path, "quantization_config.config_groups", f"expected a mapping of quantization groups, found {shown(groups)}")
    if len(groups) != 1:
        return None, f"with {len(groups)} config groups is not read (one group for every Linear is)"
    (name, group), = groups.items()
    targets = group.get("targets") if isinstance(group, dict) else None
    if not isinstance(targets, list) or "Linear" not in targets or not isinstance(group.get("weights"), dict):
        return None, f"group {str(name)[:40]} targets {shown(group.get('targets') if isinstance(group, dict) else group)}: not read (a group whose targets include \"Linear\" is)"
    w = group["weights"]
    kind, bits, size = w.get("type"), w.get("num_bits"), w.get("group_size")
    if kind == "float" and bits == 4 and size == 16:
        fmt, note = "nvfp4", " (NVFP4: E2M1, one E4M3 scale per 16, an FP32 scale per tensor)"
    elif kind == "float" and bits == 8:
        fmt, note = "fp8", f" (e4m3, {w.get('strategy', 'tensor')} scales not counted)"
    elif kind == "int" and bits == 4 and isinstance(size, int) and not isinstance(size, bool) and size > 0:
        fmt, note = f"int4-g{size}", " (a BF16 scale per group counted; zero points, where asymmetric, not counted)"
    elif kind == "int" and bits == 8 and size in (None, -1):
        fmt, note = "int8", " (per-channel scales not counted)"
    else:
        return None, f"with {shown(kind)} weights of {shown(bits)} bits in groups of {shown(size)} is not read"
    linears = ("attention", "mlp_dense", "experts_routed", "experts_shared", "lm_head") + (("router",) if fam.router_linear else ())
    return dict.fromkeys(linears, fmt), note


def _regex_kept(component: str, patterns: list[str]) -> bool:
    """compressed-tensors' `re:` patterns in ignore: a regular expression a module name matches in full."""
    for p in patterns:
        if p.startswith("re:"):
            try:
                rx = re.compile(p[3:])
            except re.error:
                continue
            if any(rx.fullmatch(name) for name in COMPONENT_MODULES[component]):
                return True
    return False


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
    """Whether the list of modules left unconverted names the component (glob patterns, `re:` regular expressions, or
    module-name parts)."""
    if _regex_kept(component, patterns):
        return True
    for name in COMPONENT_MODULES[component]:
        for p in patterns:
            if p.startswith("re:"):
                continue
            if "*" in p or "?" in p:
                if fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name, p + ".*"):
                    return True
            elif f".{p}." in f".{name}.":
                return True
    return False

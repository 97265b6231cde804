"""Model architectures from Hugging Face config.json files.

Reads the Llama, Mistral, Mixtral, Qwen2/3 (dense and MoE) and DeepSeek-V2/V3
families. `head_dim` comes from the config when present (Qwen3 sets 128 with
hidden 4096 and 64 heads, so hidden/heads would be wrong). MoE and MLA fields
are read, never guessed. A shipped model may have a metadata TOML beside its
config (name, source, status, notes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from specs.catalog import MODELS_DIR, model_names, parse_json, parse_toml, read_text, resolve
from specs.counts import (
    gqa_attention_params,
    gqa_kv_elements_per_token,
    mla_attention_params,
    mla_kv_elements_per_token,
    swiglu_mlp_params,
)
from specs.errors import SpecError, shown
from specs.precisions import Precision
from specs.text import check as check_text

DENSE_TYPES = ("llama", "mistral", "qwen2", "qwen3")
MOE_TYPES = ("mixtral", "qwen3_moe", "deepseek_v2", "deepseek_v3")
SUPPORTED_TYPES = DENSE_TYPES + MOE_TYPES
MLA_TYPES = ("deepseek_v2", "deepseek_v3")
#: families whose Q, K, V projections carry a bias although config.json does not say so
QKV_BIAS_TYPES = ("qwen2",)
#: families with a per-head RMSNorm on Q and K
QK_NORM_TYPES = ("qwen3", "qwen3_moe")
METADATA_FIELDS = ("name", "hf_repo", "status", "source", "notes")
#: Metadata fields that may span lines (the rest are one line).
MULTI_LINE_FIELDS = ("source", "notes")
MAX_TEXT = 4000
MAX_DIMENSION = 10**7


@dataclass(frozen=True)
class MoE:
    experts: int
    top_k: int
    shared_experts: int
    expert_ffn: int
    #: indices of the layers whose MLP is a mixture of experts
    moe_layers: tuple[int, ...]


@dataclass(frozen=True)
class MLA:
    q_rank: int | None
    kv_rank: int
    rope_dim: int
    nope_dim: int
    v_dim: int


@dataclass(frozen=True)
class ParamCounts:
    """Exact parameter counts by component (whole model, main layers only)."""

    attention: int
    mlp_dense: int
    experts_routed: int
    experts_shared: int
    router: int
    embedding: int
    lm_head: int
    norms: int
    biases: int
    #: routed experts' weights one token uses (top_k of them)
    experts_routed_active: int

    @property
    def total(self) -> int:
        return self.attention + self.mlp_dense + self.experts_routed + self.experts_shared + self.router + self.embedding + self.lm_head + self.norms + self.biases

    @property
    def no_arithmetic(self) -> int:
        """Parameters that do no matmul: the embedding gather (unless tied), norm weights, biases."""
        return self.embedding + self.norms + self.biases

    @property
    def matmul(self) -> int:
        """Parameters that are GEMM operands (all experts counted)."""
        return self.total - self.no_arithmetic

    @property
    def active_matmul(self) -> int:
        """GEMM parameters one token multiplies by: only its top_k routed experts."""
        return self.matmul - self.experts_routed + self.experts_routed_active

    @property
    def active(self) -> int:
        return self.active_matmul + self.no_arithmetic


@dataclass(frozen=True)
class Architecture:
    key: str
    path: Path
    name: str
    status: str
    source: str
    notes: str
    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    tie_embeddings: bool
    max_position_embeddings: int
    qkv_bias: bool = False
    qk_norm: bool = False
    moe: MoE | None = None
    mla: MLA | None = None
    hf_repo: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)

    @property
    def group_size(self) -> Fraction:
        """Query heads per KV head."""
        return Fraction(self.num_heads, self.num_kv_heads)

    @property
    def dense_layers(self) -> int:
        return self.num_layers - (len(self.moe.moe_layers) if self.moe else 0)

    def param_counts(self) -> ParamCounts:
        D, L, V = self.hidden_size, self.num_layers, self.vocab_size
        N, K, H = self.num_heads, self.num_kv_heads, self.head_dim
        norms_per_layer = 2 * D
        if self.mla:
            m = self.mla
            attention = L * mla_attention_params(D, N, m.q_rank, m.kv_rank, m.rope_dim, m.nope_dim, m.v_dim)
            norms_per_layer += m.kv_rank + (m.q_rank or 0)
        else:
            attention = L * gqa_attention_params(D, N, K, H)
        if self.qk_norm:
            norms_per_layer += 2 * H
        biases = L * (N * H + 2 * K * H) if self.qkv_bias else 0
        mlp_dense = self.dense_layers * swiglu_mlp_params(D, self.intermediate_size)
        routed = shared = router = routed_active = 0
        if self.moe:
            e = self.moe
            n_moe = len(e.moe_layers)
            expert = swiglu_mlp_params(D, e.expert_ffn)
            routed = n_moe * e.experts * expert
            routed_active = n_moe * e.top_k * expert
            shared = n_moe * e.shared_experts * expert
            router = n_moe * D * e.experts
            if self.extra.get("topk_method") == "noaux_tc":
                # DeepSeek-V3's per-expert score-correction bias: no matmul.
                biases += n_moe * e.experts
        return ParamCounts(
            attention=attention,
            mlp_dense=mlp_dense,
            experts_routed=routed,
            experts_shared=shared,
            router=router,
            # tied: one matrix, counted once, as the LM head (a GEMM operand); the gather is free
            embedding=0 if self.tie_embeddings else V * D,
            lm_head=V * D,
            norms=L * norms_per_layer + D,
            biases=biases,
            experts_routed_active=routed_active,
        )

    def kv_elements_per_token(self) -> int:
        """Cached elements per token across all layers (the MLA latent for MLA models)."""
        if self.mla:
            return mla_kv_elements_per_token(self.num_layers, self.mla.kv_rank, self.mla.rope_dim)
        return gqa_kv_elements_per_token(self.num_layers, self.num_kv_heads, self.head_dim)

    def kv_bytes_per_token(self, kv: Precision) -> Fraction:
        return self.kv_elements_per_token() * kv.bytes_per_element


def load_model(name_or_path: str | Path) -> Architecture:
    """Load a shipped model by name, or any config.json of a supported family by path."""
    path = resolve(name_or_path, "model", MODELS_DIR, ".json", model_names(), "models")
    config = parse_json(read_text(path), path)
    if not isinstance(config, dict):
        raise SpecError(path, None, f"expected a JSON object (a config.json), found {type(config).__name__}")
    meta = _metadata(path)
    return parse_config(config, path, meta)


def _metadata(path: Path) -> dict[str, str]:
    toml_path = path.with_suffix(".toml")
    if not toml_path.is_file():
        return _default_metadata(path)
    data = parse_toml(read_text(toml_path), toml_path)
    unknown = sorted(set(data) - set(METADATA_FIELDS))
    if unknown:
        raise SpecError(toml_path, unknown[0][:60], f"unknown field; known fields: {', '.join(METADATA_FIELDS)}")
    for name in ("name", "status", "source"):
        if name not in data:
            raise SpecError(toml_path, name, "missing required field (text)")
    for name, value in data.items():
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise SpecError(toml_path, name, f"expected text, found {shown(value)}")
        check_text(value, toml_path, name, multiline=name in MULTI_LINE_FIELDS)
    return {"notes": "", "hf_repo": "", **data}


def _default_metadata(path: Path) -> dict[str, str]:
    """A config.json without a metadata file: its file's stem is the model's name (checked like any text from a file)."""
    check_text(path.stem, path, "name", multiline=False)
    return {"name": path.stem, "status": "user", "source": str(path), "notes": "", "hf_repo": ""}


class _Config:
    """Typed reads from a config.json dict; every failure names the field."""

    def __init__(self, data: Mapping[str, object], path: Path) -> None:
        self.data, self.path = data, path

    def int(self, name: str, *, default: int | None = None, minimum: int = 1) -> int:
        if name not in self.data or (self.data[name] is None and default is not None):
            if default is None:
                raise SpecError(self.path, name, "missing required field (a positive integer)")
            return default
        value = self.data[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(self.path, name, f"expected an integer, found {shown(value)}")
        if value < minimum or value > MAX_DIMENSION:
            raise SpecError(self.path, name, f"expected an integer from {minimum} to {MAX_DIMENSION}, found {value}")
        return value

    def optional_int(self, name: str) -> int | None:
        if self.data.get(name) is None:
            return None
        return self.int(name)

    def bool(self, name: str, default: bool) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            raise SpecError(self.path, name, f"expected true or false, found {shown(value)}")
        return value


def parse_config(data: Mapping[str, object], path: Path, meta: Mapping[str, str] | None = None) -> Architecture:
    """Validate a config.json mapping into an Architecture."""
    meta = meta or _default_metadata(path)
    c = _Config(data, path)
    model_type = data.get("model_type")
    if not isinstance(model_type, str):
        raise SpecError(path, "model_type", f"missing or not text (expected one of {', '.join(SUPPORTED_TYPES)}), found {shown(model_type)}")
    if model_type not in SUPPORTED_TYPES:
        raise SpecError(path, "model_type", f"unsupported architecture {shown(model_type)}; supported: {', '.join(SUPPORTED_TYPES)}")
    D = c.int("hidden_size")
    N = c.int("num_attention_heads")
    L = c.int("num_hidden_layers")
    K = c.int("num_key_value_heads", default=N)
    if N % K:
        raise SpecError(path, "num_key_value_heads", f"expected a divisor of num_attention_heads ({N}), found {K}")
    head_dim = c.int("head_dim") if data.get("head_dim") is not None else None
    if head_dim is None:
        if D % N:
            raise SpecError(path, "head_dim", f"missing, and hidden_size {D} is not a multiple of num_attention_heads {N}")
        head_dim = D // N
    mla = _mla(c) if model_type in MLA_TYPES else None
    moe = _moe(c, model_type, L)
    needs_dense_ffn = moe is None or len(moe.moe_layers) < L
    F = c.int("intermediate_size") if needs_dense_ffn else c.int("intermediate_size", default=0, minimum=0)
    return Architecture(
        key=path.stem,
        path=path,
        name=meta["name"],
        status=meta["status"],
        source=meta["source"],
        notes=meta["notes"],
        hf_repo=meta.get("hf_repo", ""),
        model_type=model_type,
        vocab_size=c.int("vocab_size"),
        hidden_size=D,
        intermediate_size=F,
        num_layers=L,
        num_heads=N,
        num_kv_heads=K,
        head_dim=head_dim,
        tie_embeddings=c.bool("tie_word_embeddings", False),
        max_position_embeddings=c.int("max_position_embeddings", default=0, minimum=0),
        qkv_bias=model_type in QKV_BIAS_TYPES or c.bool("attention_bias", False),
        qk_norm=model_type in QK_NORM_TYPES,
        moe=moe,
        mla=mla,
        extra={"topk_method": data.get("topk_method")},
    )


def _mla(c: _Config) -> MLA:
    return MLA(
        q_rank=c.optional_int("q_lora_rank"),
        kv_rank=c.int("kv_lora_rank"),
        rope_dim=c.int("qk_rope_head_dim"),
        nope_dim=c.int("qk_nope_head_dim"),
        v_dim=c.int("v_head_dim"),
    )


def _moe(c: _Config, model_type: str, L: int) -> MoE | None:
    if model_type == "mixtral":
        experts, ffn = c.int("num_local_experts"), c.int("intermediate_size")
        return MoE(experts, _top_k(c, experts), 0, ffn, tuple(range(L)))
    if model_type == "qwen3_moe":
        experts = c.int("num_experts")
        step = c.int("decoder_sparse_step", default=1)
        dense_only = c.data.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in dense_only):
            raise SpecError(c.path, "mlp_only_layers", f"expected a list of layer indices, found {shown(dense_only)}")
        layers = tuple(i for i in range(L) if i not in dense_only and (i + 1) % step == 0)
        return MoE(experts, _top_k(c, experts), 0, c.int("moe_intermediate_size"), layers)
    if model_type in ("deepseek_v2", "deepseek_v3"):
        experts = c.int("n_routed_experts")
        first_dense = c.int("first_k_dense_replace", default=0, minimum=0)
        freq = c.int("moe_layer_freq", default=1)
        if freq != 1:
            raise SpecError(c.path, "moe_layer_freq", f"expected 1 (every layer after first_k_dense_replace is MoE), found {freq}")
        shared = c.int("n_shared_experts", default=0, minimum=0)
        layers = tuple(range(min(first_dense, L), L))
        return MoE(experts, _top_k(c, experts), shared, c.int("moe_intermediate_size"), layers)
    return None


def _top_k(c: _Config, experts: int) -> int:
    k = c.int("num_experts_per_tok")
    if k > experts:
        raise SpecError(c.path, "num_experts_per_tok", f"expected at most the number of experts ({experts}), found {k}")
    return k

"""Model architectures from Hugging Face config.json files.

Reads the Llama, Mistral, Mixtral, Qwen2/3 (dense and MoE), DeepSeek-V2/V3/V3.2 and
Kimi K2, GLM-4.5 (glm4_moe), GLM-5 (glm_moe_dsa), MiniMax-M2, Phi-3/Phi-4, Gemma 2/3,
gpt-oss and Llama 4 families (gated MLPs), GPT-2, OPT, Falcon and Phi (plain
two-matrix MLPs), and Nemotron-H (Mamba-2, plain MLP and plain-expert MoE blocks).
How each `model_type` lays out its weights (which projections carry biases, norms per layer, gated or plain MLP,
where the experts are, which layers attend through a window) is written once in
specs.model_families.FAMILIES, from transformers' `modeling_<family>.py`; the
defaults of its config class fill a field a config.json leaves out, as
transformers itself would. A quantization_config is read by specs.quantization.

`head_dim` comes from the config when present (Qwen3 sets 128 with hidden 4096
and 64 heads, so hidden/heads would be wrong). MoE, MLA, windows and
quantization fields are read, never guessed: what cannot be read is refused in
one line naming the field. Multimodal configs (Gemma 3, Llama 4) nest the
language model under `text_config`; it is read, the vision tower is not counted.
A shipped model may have a metadata TOML beside its config (name, source,
status, notes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

from .catalog import MODELS_DIR, model_names, parse_json, parse_toml, read_text, resolve
from .counts import (
    dsa_indexer_params,
    gated_deltanet_params,
    gqa_attention_params,
    gqa_kv_elements_per_token,
    kda_params,
    mamba2_params,
    mla_attention_params,
    mla_kv_elements_per_token,
    mlp_params,
)
from .errors import SpecError, shown
from .model_families import FAMILIES, SUPPORTED_TYPES, WRAPPERS, Family
from .precisions import Precision
from .quantization import MATMUL_COMPONENTS, Quantization, read_quantization
from .text import check as check_text
from .text import check_name

METADATA_FIELDS = ("name", "hf_repo", "status", "source", "notes")
#: Metadata fields that may span lines (the rest are one line).
MULTI_LINE_FIELDS = ("source", "notes")
MAX_TEXT = 4000
MAX_DIMENSION = 10**7
#: transformers' names for a layer's attention (config `layer_types`): the whole context, a sliding window, a chunk, and
#: linear attention (Qwen3-Next's Gated DeltaNet: a fixed-size state, no KV cache)
FULL, SLIDING, CHUNKED, LINEAR = "full_attention", "sliding_attention", "chunked_attention", "linear_attention"
LAYER_TYPES = (FULL, SLIDING, CHUNKED)
#: roofline's name for a DeepSeek Sparse Attention layer: it keeps every token and reads its indexer's top-k
SPARSE = "sparse_attention"
#: Nemotron-H's blocks of one sublayer (hybrid_override_pattern): M a Mamba-2 mixer, * attention, - an MLP, E a mixture of
#: experts (Nemotron 3; an MLP block by its sequence mixing, none: MoE.moe_layers says which blocks are experts)
MAMBA, MLP_BLOCK = "mamba", "mlp"
BLOCK_TYPES = {"M": MAMBA, "*": FULL, "-": MLP_BLOCK, "E": MLP_BLOCK}
#: layer types that keep a fixed-size state, and those with no sequence mixing of their own
RECURRENT_TYPES = (LINEAR, MAMBA)
NOT_ATTENTION = (LINEAR, MAMBA, MLP_BLOCK)
#: the bytes of one FP32 scale, and the block of elements it scales, in DSA's FP8 indexer cache
INDEX_SCALE_BYTES, INDEX_SCALE_BLOCK = 4, 128
#: config dtypes -> bytes per element of a recurrent state kept in that dtype (the model's own, unless the config names one)
STATE_DTYPES = {"bfloat16": 2, "float16": 2, "float32": 4, "bf16": 2, "fp16": 2, "fp32": 4}
#: activations transformers' ACT2FN maps to an elementwise function: the MLP's structure (gated or plain) is the
#: architecture's; an activation outside this list might itself be a gate (a "swiglu" activation halves its input),
#: so the MLP cannot be determined and the config is refused
ACTIVATIONS = ("silu", "swish", "gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu_accurate", "quick_gelu", "relu", "relu2", "tanh")
#: how the parameter groups are named in a line of text
GROUP_NAMES = {"attention": "attention", "mlp_dense": "dense MLPs", "experts_routed": "routed experts", "experts_shared": "shared experts",
               "router": "router", "embedding": "embedding", "lm_head": "LM head", "norms": "norms", "biases": "biases",
               "projection": "MTP input projection"}
#: the config field that counts a checkpoint's multi-token-prediction (MTP) modules, and the families whose MTP module roofline
#: reads: one decoder layer of the main model's shape (attention and MoE), fed the main model's last hidden state and the next
#: token's embedding, each normed (enorm, hnorm), through a 2D x D projection (eh_proj), and read out through the main model's
#: LM head (DeepSeek-V3 technical report, arXiv:2412.19437, section 2.2; vLLM vllm/model_executor/models/deepseek_mtp.py)
MTP_FIELD = "num_nextn_predict_layers"
MTP_FAMILIES = ("deepseek_v3", "deepseek_v32", "glm4_moe", "glm_moe_dsa")
#: a second model named so is the MTP module of a model: `mtp` (the target's own) or `NAME:mtp`
MTP_SUFFIX = ":mtp"
#: a second model named so is an EAGLE head of a dense model's shape: `eagle` (the target's) or `NAME:eagle`: one decoder layer
#: fed the token's embedding and the target's last hidden state through a 2D x D projection, read out through the target's LM
#: head (Li et al. 2024, EAGLE, arXiv:2401.15077, section 3: one FC layer and one decoder layer; the embedding and LM head shared)
EAGLE_SUFFIX = ":eagle"


@dataclass(frozen=True)
class MoE:
    experts: int
    top_k: int
    shared_experts: int
    expert_ffn: int
    #: indices of the layers whose MLP is a mixture of experts (of the blocks, for a block-structured model)
    moe_layers: tuple[int, ...]
    #: the router has a bias per expert (gpt-oss)
    router_bias: bool = False
    #: each routed expert's projections carry biases (gpt-oss: 2 F_E on gate-up, D on down)
    expert_bias: bool = False
    #: weight matrices in one expert: 3 gated (gate, up, down), 2 plain (up, down: Nemotron-H's squared-ReLU experts)
    expert_matrices: int = 3
    #: each shared expert's width where it differs from expert_ffn (Nemotron-H's moe_shared_expert_intermediate_size), else None
    shared_ffn: int | None = None

    def expert_params(self, D: int) -> int:
        """Weights of one routed expert."""
        return mlp_params(D, self.expert_ffn, self.expert_matrices)

    def shared_params(self, D: int) -> int:
        """Weights of one shared expert."""
        return mlp_params(D, self.shared_ffn or self.expert_ffn, self.expert_matrices)


@dataclass(frozen=True)
class MLA:
    q_rank: int | None
    kv_rank: int
    rope_dim: int
    nope_dim: int
    v_dim: int


@dataclass(frozen=True)
class LinearAttention:
    """Gated DeltaNet layers (Qwen3-Next's linear attention; transformers modeling_qwen3_next.Qwen3NextGatedDeltaNet).

    Each layer keeps, per sequence, a k_dim x v_dim state for each of its v_heads value heads (keys are shared by
    v_heads/k_heads value heads) and the last conv_kernel - 1 inputs of its causal convolution over the queries, keys and
    values (vLLM's mamba_utils.gated_delta_net_state_shape); nothing grows with the context.
    """

    k_heads: int
    v_heads: int
    k_dim: int
    v_dim: int
    conv_kernel: int

    @property
    def conv_channels(self) -> int:
        """Channels of the short convolution: queries, keys and values (2 k_heads k_dim + v_heads v_dim)."""
        return 2 * self.k_heads * self.k_dim + self.v_heads * self.v_dim

    @property
    def recurrent_elements(self) -> int:
        """Elements of one layer's delta-rule state per sequence: v_heads x k_dim x v_dim."""
        return self.v_heads * self.k_dim * self.v_dim

    @property
    def conv_elements(self) -> int:
        """Elements of one layer's convolution state per sequence: the last conv_kernel - 1 inputs of every channel."""
        return self.conv_channels * (self.conv_kernel - 1)

    def matmul_params(self, D: int) -> int:
        return gated_deltanet_params(D, self.k_heads, self.v_heads, self.k_dim, self.v_dim)

    @property
    def other_params(self) -> int:
        """No-matmul parameters of one layer: the depthwise convolution's weights, dt_bias and A_log (one each per value head)."""
        return self.conv_channels * self.conv_kernel + 2 * self.v_heads

    @property
    def norm_params(self) -> int:
        """The gated RMSNorm over each value head's output: one weight per channel of a head."""
        return self.v_dim


@dataclass(frozen=True)
class KimiDeltaAttention:
    """Kimi Delta Attention layers (Kimi Linear's linear attention; vLLM model_executor/layers/kda.py).

    Each layer keeps, per sequence, a head_dim x head_dim state for each of its heads, in float32 whatever the model's dtype
    (vLLM's MambaStateDtypeCalculator.kda_state_dtype), and the last conv_kernel - 1 inputs of its three causal
    convolutions, over the queries, the keys and the values; nothing grows with the context.
    """

    heads: int
    head_dim: int
    conv_kernel: int
    #: bytes per element of the recurrent state: float32, fixed by the kernels rather than by the config
    recurrent_dtype_bytes = 4

    @property
    def width(self) -> int:
        """heads x head_dim: the width of the queries, keys, values and output gate."""
        return self.heads * self.head_dim

    @property
    def recurrent_elements(self) -> int:
        """Elements of one layer's delta-rule state per sequence: heads x head_dim x head_dim."""
        return self.heads * self.head_dim * self.head_dim

    @property
    def conv_elements(self) -> int:
        """Elements of one layer's convolution state per sequence: the last conv_kernel - 1 inputs of q, k and v."""
        return 3 * self.width * (self.conv_kernel - 1)

    def matmul_params(self, D: int) -> int:
        return kda_params(D, self.heads, self.head_dim)

    @property
    def other_params(self) -> int:
        """No-matmul parameters of one layer: the three depthwise convolutions' weights, dt_bias (one per channel) and A_log
        (one per head)."""
        return 3 * self.width * self.conv_kernel + self.width + self.heads

    @property
    def norm_params(self) -> int:
        """The gated RMSNorm over each head's output: one weight per channel of a head."""
        return self.head_dim


@dataclass(frozen=True)
class Mamba2:
    """Mamba-2 state-space mixers (Nemotron-H; vLLM nemotron_h.py and mamba_utils.mamba2_state_shape).

    Each block keeps, per sequence, a head_dim x state SSM state for each of its heads and the last conv_kernel - 1 inputs
    of its causal convolution over x, B and C; nothing grows with the context.
    """

    heads: int
    head_dim: int
    groups: int
    state: int
    conv_kernel: int
    conv_bias: bool

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        """Channels of the short convolution: x, B and C (inner + 2 groups state)."""
        return self.inner + 2 * self.groups * self.state

    @property
    def recurrent_elements(self) -> int:
        """Elements of one block's SSM state per sequence: heads x head_dim x state."""
        return self.heads * self.head_dim * self.state

    @property
    def conv_elements(self) -> int:
        return self.conv_channels * (self.conv_kernel - 1)

    def matmul_params(self, D: int) -> int:
        return mamba2_params(D, self.inner, self.groups, self.state, self.heads)

    @property
    def other_params(self) -> int:
        """No-matmul parameters of one block: the depthwise convolution (and its bias), A_log, D and dt_bias per head."""
        return self.conv_channels * (self.conv_kernel + (1 if self.conv_bias else 0)) + 3 * self.heads

    @property
    def norm_params(self) -> int:
        """The gated RMSNorm over the mixer's output: one weight per inner channel."""
        return self.inner


@dataclass(frozen=True)
class Indexer:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2): `heads` heads of `dim` over the query latent score one
    `dim`-wide key per cached token; the attention then reads only the `topk` best tokens."""

    heads: int
    dim: int
    topk: int

    def matmul_params(self, D: int, q_rank: int) -> int:
        return dsa_indexer_params(D, q_rank, self.heads, self.dim)

    @property
    def norm_params(self) -> int:
        """k_norm, a LayerNorm over the key: a weight and a bias per channel."""
        return 2 * self.dim

    @property
    def cache_bytes_per_token(self) -> int:
        """One layer's cached indexer key: dim FP8 values and one FP32 scale per 128 of them (vLLM's DeepseekV32IndexerCache,
        head_dim 128 + 128 // 128 * 4 bytes; DeepSeek's reference k_cache and k_scale_cache)."""
        return self.dim + INDEX_SCALE_BYTES * -(-self.dim // INDEX_SCALE_BLOCK)


@dataclass(frozen=True)
class ParamCounts:
    """Exact parameter counts by component (whole model, main layers only)."""

    attention: int
    mlp_dense: int
    experts_routed: int
    experts_shared: int
    router: int
    #: the input gathers: the token embedding (0 when tied: it is the LM head) and learned position embeddings
    embedding: int
    lm_head: int
    norms: int
    #: every bias, plus the other per-channel parameters that do no matmul: per-head attention sinks, DeepSeek's expert
    #: score-correction bias, and a recurrent layer's decays, dt biases and short-convolution weights
    biases: int
    #: routed experts' weights one token uses (top_k of them)
    experts_routed_active: int
    #: the routed experts' biases (part of `biases`), all of them and the top_k one token uses
    experts_routed_biases: int = 0
    experts_routed_biases_active: int = 0
    #: an MTP module's input projection (eh_proj: the normed embedding and hidden state, 2D wide, down to D)
    projection: int = 0

    @property
    def total(self) -> int:
        return (self.attention + self.mlp_dense + self.experts_routed + self.experts_shared + self.router + self.embedding + self.lm_head
                + self.norms + self.biases + self.projection)

    @property
    def no_arithmetic(self) -> int:
        """Parameters that do no matmul: the embedding gathers (unless tied), norm weights, biases."""
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
        return self.active_matmul + self.no_arithmetic - self.experts_routed_biases + self.experts_routed_biases_active


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
    #: the MLP width of the dense (non-MoE) layers (Llama 4: intermediate_size_mlp)
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    tie_embeddings: bool
    max_position_embeddings: int
    #: q, k and v projections carry biases
    qkv_bias: bool = False
    qk_norm: bool = False
    #: the q/k norm spans all heads (N H weights on queries, K H on keys: MiniMax-M2) instead of one head (head_dim each)
    qk_norm_per_layer: bool = False
    moe: MoE | None = None
    mla: MLA | None = None
    hf_repo: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)
    #: "gated" (gate, up, down) or "plain" (up, down)
    mlp_kind: str = "gated"
    hidden_act: str = "silu"
    #: "rms" or "layer" (LayerNorm: a weight and a bias per channel)
    norm: str = "rms"
    norms_per_layer: int = 2
    final_norm: bool = True
    #: the attention output projection carries a bias
    o_bias: bool = False
    mlp_bias: bool = False
    lm_head_bias: bool = False
    attention_sinks: bool = False
    #: rows of learned position embeddings (GPT-2, OPT); 0 for rotary models
    position_embeddings: int = 0
    #: per layer, transformers' layer type: full_attention, sliding_attention, chunked_attention or linear_attention, and
    #: roofline's sparse_attention (DeepSeek Sparse Attention); per block for a block-structured model (mamba, mlp, full_attention)
    layer_attention: tuple[str, ...] = ()
    #: per layer, the tokens one query attends over: None for the whole context (and for a layer that keeps a state instead),
    #: else the window, the chunk or the sparse top-k
    layer_windows: tuple[int | None, ...] = ()
    #: the recurrent layers' shape (Qwen3-Next's Gated DeltaNet, Nemotron-H's Mamba-2), or None
    linear: LinearAttention | Mamba2 | KimiDeltaAttention | None = None
    #: DeepSeek Sparse Attention's indexer, or None
    indexer: Indexer | None = None
    #: the full-attention q_proj also yields an output gate (D x 2 N H)
    attn_output_gate: bool = False
    #: each MoE layer's shared expert has a D x 1 sigmoid gate
    shared_expert_gate: bool = False
    #: bytes per element of the recurrent state: the model's dtype (vLLM's mamba_cache_dtype "auto"), or the dtype the config
    #: names for it (mamba_ssm_cache_dtype, mamba_ssm_dtype)
    state_element_bytes: int = 2
    #: bytes per element of the convolution state: the model's dtype
    conv_element_bytes: int = 2
    #: blocks of one sublayer each (Nemotron-H: a mixer or an MLP behind one norm); 0 where a layer is attention plus an MLP.
    #: num_layers is then half of them, so the per-layer all-reduces and overheads count one per block
    blocks: int = 0
    #: the checkpoint's quantization_config, read; None for an unquantized checkpoint
    quantization: Quantization | None = None
    #: the config nests the language model under this key ("text_config"), or ""
    nested_in: str = ""
    #: a drafter built from a model (`mtp_module`, `eagle_head`): its layers take the embedding and the hidden state through a
    #: 2D x D projection (DeepSeek's eh_proj, EAGLE's fc) and two norms
    mtp_inputs: bool = False

    @property
    def group_size(self) -> Fraction:
        """Query heads per KV head."""
        return Fraction(self.num_heads, self.num_kv_heads)

    @property
    def dense_layers(self) -> int:
        """Layers (blocks) with a dense MLP."""
        if self.blocks:
            experts = set(self.moe.moe_layers) if self.moe else set()
            return sum(t == MLP_BLOCK and i not in experts for i, t in enumerate(self.layer_types))
        return self.num_layers - (len(self.moe.moe_layers) if self.moe else 0)

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices in one dense MLP: 3 gated (gate, up, down), 2 plain (up, down)."""
        return 3 if self.mlp_kind == "gated" else 2

    @property
    def layer_types(self) -> tuple[str, ...]:
        """Each layer's type (each block's, for a block-structured model)."""
        return self.layer_attention or (FULL,) * self.num_layers

    @property
    def attention_layers(self) -> int:
        """Layers that keep a KV cache (full, windowed, chunked or sparse attention); the rest keep a fixed-size state."""
        return sum(t not in NOT_ATTENTION for t in self.layer_types)

    @property
    def recurrent_layers(self) -> int:
        """Layers that keep a fixed-size state per sequence instead of a KV cache (linear attention, Mamba-2)."""
        return sum(t in RECURRENT_TYPES for t in self.layer_types)

    @property
    def dropping_layers(self) -> int:
        """Windowed layers that keep only their window (sliding, chunked); a sparse layer keeps every token."""
        return sum(t in (SLIDING, CHUNKED) for t in self.layer_types)

    @property
    def sparse_layers(self) -> int:
        return sum(t == SPARSE for t in self.layer_types)

    @property
    def attention_windows(self) -> tuple[tuple[int, int | None], ...]:
        """(layer count, window in tokens) groups of the attention layers: None is the whole context; full layers first, then
        windows (or a sparse top-k) ascending. Layers that keep a state are not among them."""
        windows = [w for w, t in zip(self.layer_windows or (None,) * len(self.layer_types), self.layer_types, strict=True)
                   if t not in NOT_ATTENTION]
        distinct = sorted(set(windows), key=lambda w: (w is not None, w or 0))
        return tuple((windows.count(w), w) for w in distinct)

    def state_bytes_per_sequence(self) -> int:
        """Bytes of the recurrent layers' state per sequence (recurrent state and convolution state); 0 without such layers."""
        if self.linear is None:
            return 0
        per_layer = self.linear.recurrent_elements * self.state_element_bytes + self.linear.conv_elements * self.conv_element_bytes
        return self.recurrent_layers * per_layer

    def recurrent_elements(self) -> int:
        """Elements of the recurrent state (convolution state excluded) per sequence over all recurrent layers."""
        return self.recurrent_layers * self.linear.recurrent_elements if self.linear else 0

    def index_bytes_per_token(self) -> int:
        """Bytes of the sparse layers' indexer cache per token over all layers; 0 without sparse attention."""
        return self.sparse_layers * self.indexer.cache_bytes_per_token if self.indexer else 0

    def index_elements(self) -> int:
        """Indexer channels one query scores per cached token over all sparse layers (heads x width per layer)."""
        return self.sparse_layers * self.indexer.heads * self.indexer.dim if self.indexer else 0

    @property
    def weight_formats(self) -> tuple[tuple[str, str], ...]:
        """(parameter group, precision name) as the checkpoint stores them; empty for an unquantized or unread checkpoint."""
        return self.quantization.formats if self.quantization else ()

    def quantization_summary(self) -> str:
        """One line: the formats the checkpoint stores its parameter groups in (groups this model has), or why it is not read."""
        q = self.quantization
        if q is None:
            return ""
        if not q.read:
            return f"quant_method {q.method!r} {q.note}"
        counts = self.param_counts()
        by_format: dict[str, list[str]] = {}
        for component, fmt in q.formats:
            if getattr(counts, component):
                by_format.setdefault(fmt, []).append(GROUP_NAMES[component])
        quantized = self.checkpoint_weights()
        # the method and its note go with the groups it quantized, never after the last group (which is the unquantized one)
        method = f" (quant_method {q.method}; {q.note[2:]}" if q.note.startswith(" (") else f" (quant_method {q.method}){q.note}"
        parts = [f"{', '.join(groups)} in {fmt}" + (method if fmt == quantized else "") for fmt, groups in
                 sorted(by_format.items(), key=lambda kv: kv[0] != quantized)]
        return "; ".join(parts) if quantized in by_format else f"quant_method {q.method}: " + "; ".join(parts)

    def checkpoint_weights(self) -> str | None:
        """The format that holds most of the checkpoint's GEMM parameters (what one weight format per sheet should be), or None."""
        if not self.weight_formats:
            return None
        counts = self.param_counts()
        share: dict[str, int] = {}
        for component, fmt in self.weight_formats:
            if component in MATMUL_COMPONENTS:
                share[fmt] = share.get(fmt, 0) + getattr(counts, component)
        return max(share, key=lambda f: (share[f], f))

    def param_counts(self) -> ParamCounts:
        D, L, V = self.hidden_size, self.num_layers, self.vocab_size
        N, K, H = self.num_heads, self.num_kv_heads, self.head_dim
        L_att = self.attention_layers
        per_norm = 2 if self.norm == "layer" else 1  # LayerNorm: weight and bias
        # a block-structured model has one norm per block; a layer has its family's norms
        norms = (self.blocks or L * self.norms_per_layer) * D * per_norm
        if self.mla:
            m = self.mla
            attention = L_att * mla_attention_params(D, N, m.q_rank, m.kv_rank, m.rope_dim, m.nope_dim, m.v_dim)
            norms += L_att * (m.kv_rank + (m.q_rank or 0))
        else:
            attention = L_att * gqa_attention_params(D, N, K, H)
        if self.attn_output_gate:
            attention += L_att * D * N * H
        if self.qk_norm:
            norms += L_att * ((N + K) * H if self.qk_norm_per_layer else 2 * H) * per_norm
        biases = L_att * ((N * H + 2 * K * H) if self.qkv_bias else 0) + L_att * (D if self.o_bias else 0)
        if self.attention_sinks:
            biases += L_att * N
        if self.linear:
            attention += self.recurrent_layers * self.linear.matmul_params(D)
            norms += self.recurrent_layers * self.linear.norm_params
            biases += self.recurrent_layers * self.linear.other_params
        if self.indexer and self.mla and self.mla.q_rank:
            attention += self.sparse_layers * self.indexer.matmul_params(D, self.mla.q_rank)
            norms += self.sparse_layers * self.indexer.norm_params
        F = self.intermediate_size
        mlp_dense = self.dense_layers * mlp_params(D, F, self.mlp_matrices)
        if self.mlp_bias:
            biases += self.dense_layers * ((self.mlp_matrices - 1) * F + D)
        routed = shared = router = routed_active = routed_biases = routed_biases_active = 0
        if self.moe:
            e = self.moe
            n_moe = len(e.moe_layers)
            expert = e.expert_params(D)
            routed = n_moe * e.experts * expert
            routed_active = n_moe * e.top_k * expert
            shared = n_moe * e.shared_experts * e.shared_params(D)
            router = n_moe * D * (e.experts + (1 if self.shared_expert_gate and e.shared_experts else 0))
            if e.router_bias:
                biases += n_moe * e.experts
            if e.expert_bias:
                per_expert = 2 * e.expert_ffn + D
                routed_biases, routed_biases_active = n_moe * e.experts * per_expert, n_moe * e.top_k * per_expert
                biases += routed_biases
            if self.extra.get("topk_method") == "noaux_tc":
                # DeepSeek-V3's per-expert score-correction bias: no matmul.
                biases += n_moe * e.experts
        if self.lm_head_bias:
            biases += V
        projection = L * 2 * D * D if self.mtp_inputs else 0
        if self.mtp_inputs:
            norms += L * 2 * D  # enorm and hnorm
        return ParamCounts(
            attention=attention,
            mlp_dense=mlp_dense,
            experts_routed=routed,
            experts_shared=shared,
            router=router,
            # tied: one matrix, counted once, as the LM head (a GEMM operand); the gather is free
            embedding=(0 if self.tie_embeddings else V * D) + self.position_embeddings * D,
            lm_head=V * D,
            norms=norms + (D * per_norm if self.final_norm else 0),
            biases=biases,
            experts_routed_active=routed_active,
            experts_routed_biases=routed_biases,
            experts_routed_biases_active=routed_biases_active,
            projection=projection,
        )

    def kv_elements_per_token(self) -> int:
        """Cached elements per token across all attention layers at full context (the MLA latent for MLA models); windows not
        applied; a layer that keeps a state caches none (state_bytes_per_sequence)."""
        if self.mla:
            return mla_kv_elements_per_token(self.attention_layers, self.mla.kv_rank, self.mla.rope_dim)
        return gqa_kv_elements_per_token(self.attention_layers, self.num_kv_heads, self.head_dim)

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


def load_drafter(name_or_path: str | Path, target: Architecture) -> Architecture:
    """A second model: `mtp` and `eagle` are the target's own MTP module and an EAGLE head of its shape, `NAME:mtp` and
    `NAME:eagle` another model's, anything else a model by name or path."""
    text = str(name_or_path)
    for suffix, build in DRAFTERS:
        if text == suffix[1:]:
            return build(target)
        if text.endswith(suffix) and len(text) > len(suffix):
            return build(load_model(text[: -len(suffix)]))
    return load_model(name_or_path)


def mtp_module(arch: Architecture) -> Architecture:
    """The model's multi-token-prediction module as a model of its own, the drafter an engine runs for MTP speculation
    (`--second-model mtp`): `num_nextn_predict_layers` decoder layers of the main model's shape (its MoE, not its first dense
    layers), the eh_proj projection and two norms in front of each, and the main model's LM head, which it reads on every
    draft step. The embedding gather is shared and free (tied); the head it shares is counted in its memory too."""
    config = parse_json(read_text(arch.path), arch.path)
    text, model_type, _ = _language_model(config, arch.path) if isinstance(config, dict) else ({}, "", "")
    n = text.get(MTP_FIELD, 0)
    if model_type not in MTP_FAMILIES:
        raise SpecError(arch.path, MTP_FIELD, f"{arch.name} ({model_type}) has no MTP module roofline reads; it reads those of "
                        f"{', '.join(MTP_FAMILIES)}")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 8:
        raise SpecError(arch.path, MTP_FIELD, f"{arch.name} has no MTP module (expected 1 to 8 MTP layers, found {shown(n)})")
    return _draft_layers(arch, text, n, MTP_SUFFIX, "MTP module",
                         f"{n} decoder layer(s) of its shape read from {MTP_FIELD} in its config.json")


def eagle_head(arch: Architecture) -> Architecture:
    """An EAGLE head for a dense model (`--second-model eagle`): one decoder layer of the model's shape, fed the token's
    embedding and the target's hidden state through a 2D x D projection, read out through the model's LM head (EAGLE and
    EAGLE-2; EAGLE-3 adds a smaller vocabulary and a 3D x D fusion of three hidden states, not counted). A MoE model's EAGLE
    head is a dense layer of its own width: give its config.json as the second model instead."""
    if arch.moe is not None or arch.linear is not None or arch.indexer is not None:
        raise SpecError(arch.path, "model_type", f"{arch.name} is not a dense transformer: an EAGLE head for it is a model of its own; "
                        "give its config.json as --second-model")
    config = parse_json(read_text(arch.path), arch.path)
    text, _, _ = _language_model(config, arch.path) if isinstance(config, dict) else ({}, "", "")
    plain = {k: v for k, v in text.items() if k not in ("layer_types", "sliding_window_pattern")}
    return _draft_layers(arch, plain, 1, EAGLE_SUFFIX, "EAGLE head", "one decoder layer of its shape (Li et al. 2024)")


#: the drafters a model yields, by the suffix that names them (`NAME:mtp`, `NAME:eagle`; the bare suffix is the target's own)
DRAFTERS = ((MTP_SUFFIX, mtp_module), (EAGLE_SUFFIX, eagle_head))


def _draft_layers(arch: Architecture, text: Mapping[str, object], n: int, suffix: str, what: str, notes: str) -> Architecture:
    """`n` decoder layers of the model's shape (its MoE, not its first dense layers) with the 2D x D input projection and
    two norms in front, and the model's LM head (tied: the embedding gather is shared): a drafter built from the model."""
    module = {**text, "num_hidden_layers": n, "first_k_dense_replace": 0}
    meta = {"name": f"{arch.name} {what}", "status": arch.status, "source": arch.source, "notes": f"The {what} of {arch.name}: {notes}."}
    sub = parse_config(module, arch.path, meta)
    return replace(sub, key=f"{arch.key}{suffix}", hf_repo=arch.hf_repo, tie_embeddings=True, mtp_inputs=True, quantization=arch.quantization)


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
    check_name(data["name"], toml_path, "name", "the model's name")
    return {"notes": "", "hf_repo": "", **data}


def _default_metadata(path: Path) -> dict[str, str]:
    """A config.json without a metadata file: its file's stem is the model's name (checked like any text from a file)."""
    check_text(path.stem, path, "name", multiline=False)
    check_name(path.stem, path, "name", "the model's name (the file's name, without a metadata file beside it)")
    return {"name": path.stem, "status": "user", "source": str(path), "notes": "", "hf_repo": ""}


class _Config:
    """Typed reads from a config.json dict; every failure names the field (as the file spells it).

    A field the file leaves out takes the family's config-class default, where it has one.
    """

    def __init__(self, data: Mapping[str, object], path: Path, family: Family | None = None, prefix: str = "") -> None:
        self.data, self.path, self.prefix = data, path, prefix
        self.aliases = family.aliases if family else {}
        self.defaults = family.defaults if family else {}

    def key(self, name: str) -> str:
        """The config's own spelling of one of our field names (of several spellings, the first the file has)."""
        alias = self.aliases.get(name, name)
        if isinstance(alias, tuple):
            return next((k for k in alias if k in self.data), alias[0])
        return alias

    def where(self, name: str) -> str:
        return self.prefix + self.key(name)

    def raw(self, name: str) -> object:
        k = self.key(name)
        if k in self.data:
            return self.data[k]
        return self.defaults.get(k, self.defaults.get(name))

    def present(self, name: str) -> bool:
        return self.raw(name) is not None

    def int(self, name: str, *, default: int | None = None, minimum: int = 1) -> int:
        value = self.raw(name)
        if value is None:
            if default is None:
                raise SpecError(self.path, self.where(name), "missing required field (a positive integer)")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(self.path, self.where(name), f"expected an integer, found {shown(value)}")
        if value < minimum or value > MAX_DIMENSION:
            raise SpecError(self.path, self.where(name), f"expected an integer from {minimum} to {MAX_DIMENSION}, found {value}")
        return value

    def optional_int(self, name: str) -> int | None:
        if self.raw(name) is None:
            return None
        return self.int(name)

    def bool(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        value = default if value is None else value
        if not isinstance(value, bool):
            raise SpecError(self.path, self.where(name), f"expected true or false, found {shown(value)}")
        return value

    def flag(self, spec: bool | str) -> bool:
        """A family setting: fixed, or read from the config field it names (default false)."""
        return spec if isinstance(spec, bool) else self.bool(spec, False)

    def text(self, name: str) -> str | None:
        value = self.raw(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise SpecError(self.path, self.where(name), f"expected text, found {shown(value)}")
        return value

    def index_list(self, name: str, count: int) -> tuple[int, ...] | None:
        """A list of distinct layer indices below `count`, or None when absent."""
        value = self.raw(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
            raise SpecError(self.path, self.where(name), f"expected a list of layer indices, found {shown(value)}")
        bad = [i for i in value if not 0 <= i < count]
        if bad or len(set(value)) != len(value):
            why = f"index {bad[0]} outside 0 to {count - 1}" if bad else "a layer listed twice"
            raise SpecError(self.path, self.where(name), f"expected distinct layer indices from 0 to {count - 1}, found {why}")
        return tuple(sorted(value))


def _language_model(data: Mapping[str, object], path: Path) -> tuple[Mapping[str, object], str, str]:
    """The config the language model is described by, its model_type, and the key it sits under ('' at the top)."""
    model_type = data.get("model_type")
    if not isinstance(model_type, str):
        raise SpecError(path, "model_type", f"missing or not text (expected one of {', '.join(SUPPORTED_TYPES)}), found {shown(model_type)}")
    if model_type in FAMILIES:
        return data, model_type, ""
    text = data.get("text_config")
    if model_type not in WRAPPERS and text is None:
        raise SpecError(path, "model_type", f"unsupported architecture {shown(model_type)}; supported: {', '.join(SUPPORTED_TYPES)}")
    if not isinstance(text, dict):
        raise SpecError(path, "text_config", f"expected the language model's config (a JSON object), found {shown(text)}")
    inner = text.get("model_type", WRAPPERS.get(model_type))
    if inner not in FAMILIES:
        raise SpecError(path, "text_config.model_type", f"unsupported language model {shown(inner)}; supported: {', '.join(SUPPORTED_TYPES)}")
    # the wrapper's own fields (tie_word_embeddings, quantization_config) apply where the text config does not set them
    merged = {**{k: v for k, v in data.items() if k in ("tie_word_embeddings", "quantization_config", "torch_dtype", "dtype")}, **text}
    return merged, str(inner), "text_config"


def parse_config(data: Mapping[str, object], path: Path, meta: Mapping[str, str] | None = None) -> Architecture:
    """Validate a config.json mapping into an Architecture."""
    meta = meta or _default_metadata(path)
    text, model_type, nested = _language_model(data, path)
    fam = FAMILIES[model_type]
    c = _Config(text, path, fam, prefix=f"{nested}." if nested else "")
    D = c.int("hidden_size")
    N = c.int("num_attention_heads")
    L = c.int("num_hidden_layers")
    blocks = _blocks(c, L) if fam.windows == "blocks" else ()
    if blocks:
        # blocks of one sublayer: two make one layer of the step model (its all-reduces and per-layer overheads, one per block)
        if L % 2:
            raise SpecError(path, c.where("num_hidden_layers"), f"expected an even number of blocks (two make one layer), found {L}")
        L //= 2
    K, kv_field = _kv_heads(c, model_type, N)
    if N % K:
        raise SpecError(path, c.where(kv_field), f"expected a divisor of num_attention_heads ({N}), found {K}")
    head_dim = c.int("head_dim") if c.present("head_dim") else None
    if head_dim is None:
        if D % N:
            raise SpecError(path, c.where("head_dim"), f"missing, and hidden_size {D} is not a multiple of num_attention_heads {N}")
        head_dim = D // N
    mla = _mla(c) if fam.mla else None
    if mla and c.bool("attention_bias", False):
        raise SpecError(path, c.where("attention_bias"), "expected false: biases on multi-head latent attention's projections are not counted")
    moe = _moe(c, fam, L)
    act = _activation(c, fam)
    if blocks:
        experts = set(moe.moe_layers) if moe else set()
        dense_needed = any(t == MLP_BLOCK and i not in experts for i, t in enumerate(blocks))
    else:
        dense_needed = moe is None or len(moe.moe_layers) < L
    F = _dense_width(c, model_type, D, needed=dense_needed)
    linear = LINEAR_READERS[fam.linear](c) if fam.linear else None
    indexer = _indexer(c, mla) if fam.indexer else None
    if blocks:
        layer_attention, layer_windows = blocks, (None,) * len(blocks)
    elif indexer:
        # every layer of DeepSeek-V3.2 is sparse: it keeps every token and reads its indexer's top-k
        layer_attention, layer_windows = (SPARSE,) * L, (indexer.topk,) * L
    else:
        layer_attention, layer_windows = _windows(c, fam, L)
    if LINEAR in layer_attention and linear is None:
        raise SpecError(path, c.where("layer_types"), f"{model_type} has no linear-attention layer; found linear_attention in layer_types")
    if moe and fam.shared_expert_gate:
        width = c.int("shared_expert_intermediate_size", default=0, minimum=0)
        if width not in (0, moe.expert_ffn):
            raise SpecError(path, c.where("shared_expert_intermediate_size"), f"expected 0 or moe_intermediate_size ({moe.expert_ffn}): a shared "
                            f"expert of another width is not counted, found {width}")
    norms_per_layer, final_norm = _norm_layout(c, model_type, fam)
    quant = read_quantization(data, text, path, fam)
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
        qkv_bias=c.flag(fam.qkv_bias),
        qk_norm=c.flag(fam.qk_norm),
        qk_norm_per_layer=fam.qk_norm_span == "layer",
        moe=moe,
        mla=mla,
        extra={"topk_method": c.raw("topk_method")},
        mlp_kind=fam.mlp,
        hidden_act=act,
        norm=fam.norm,
        norms_per_layer=norms_per_layer,
        final_norm=final_norm,
        o_bias=c.flag(fam.o_bias),
        mlp_bias=c.flag(fam.mlp_bias),
        lm_head_bias=fam.lm_head_bias,
        attention_sinks=fam.sinks,
        position_embeddings=_positions(c, fam),
        layer_attention=layer_attention,
        layer_windows=layer_windows,
        linear=linear,
        indexer=indexer,
        attn_output_gate=c.flag(fam.attn_output_gate),
        shared_expert_gate=fam.shared_expert_gate,
        state_element_bytes=(getattr(linear, "recurrent_dtype_bytes", None) or _state_bytes(c, ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"))
                             if linear else 2),
        conv_element_bytes=_state_bytes(c, ()) if linear else 2,
        blocks=len(blocks),
        quantization=quant,
        nested_in=nested,
    )


def _kv_heads(c: _Config, model_type: str, N: int) -> tuple[int, str]:
    """KV heads and the field they come from."""
    if model_type == "falcon":
        # Falcon: new_decoder_architecture groups K/V in num_kv_heads; otherwise multi_query (the default) has one K/V head
        if c.bool("new_decoder_architecture", False):
            return c.int("num_kv_heads", default=N), "num_kv_heads"
        return (1 if c.bool("multi_query", True) else N), "multi_query"
    return c.int("num_key_value_heads", default=N), "num_key_value_heads"


def _activation(c: _Config, fam: Family) -> str:
    for name in fam.act_fields:
        act = c.text(name)
        if act is not None:
            if act not in ACTIVATIONS:
                raise SpecError(c.path, c.where(name), f"cannot tell how a {fam.mlp} MLP uses activation {shown(act)} (it may be a gate itself); "
                                                      f"known: {', '.join(ACTIVATIONS)}; the MLP is not guessed")
            return act
    raise SpecError(c.path, c.where(fam.act_fields[0]), "missing: the MLP's activation is needed to read its structure")


def _dense_width(c: _Config, model_type: str, D: int, needed: bool) -> int:
    """The MLP width of the dense layers: intermediate_size (Llama 4: intermediate_size_mlp; GPT-2 and Falcon default to 4 D)."""
    if model_type == "llama4_text":
        return c.int("intermediate_size_mlp")
    if model_type in ("gpt2", "falcon") and not c.present("intermediate_size"):
        return 4 * D
    return c.int("intermediate_size") if needed else c.int("intermediate_size", default=0, minimum=0)


def _positions(c: _Config, fam: Family) -> int:
    if fam.positions is None:
        return 0
    rows = c.int("max_position_embeddings")
    if fam.positions == "n+2":
        # OPT's learned position embeddings keep 2 extra rows (OPTLearnedPositionalEmbedding's offset)
        if c.int("word_embed_proj_dim", default=c.int("hidden_size")) != c.int("hidden_size"):
            raise SpecError(c.path, c.where("word_embed_proj_dim"), "expected hidden_size: OPT's projection of a narrower embedding is not counted")
        return rows + 2
    return rows


def _norm_layout(c: _Config, model_type: str, fam: Family) -> tuple[int, bool]:
    """D-wide norms per layer and whether a final norm follows the last layer."""
    if model_type == "falcon":
        # FalconDecoderLayer: a serial block has two LayerNorms; a parallel one one, or two with num_ln_in_parallel_attn 2
        # (the default under new_decoder_architecture)
        if not c.bool("parallel_attn", True):
            return 2, True
        lns = c.int("num_ln_in_parallel_attn", default=2 if c.bool("new_decoder_architecture", False) else 1)
        return (2 if lns == 2 else 1), True
    if model_type == "opt":
        if not c.bool("layer_norm_elementwise_affine", True):
            raise SpecError(c.path, c.where("layer_norm_elementwise_affine"), "expected true: LayerNorms without weights are not counted")
        # the decoder's final LayerNorm exists only with pre-norm layers (do_layer_norm_before, the default)
        return 2, c.bool("do_layer_norm_before", True) and not c.bool("_remove_final_layer_norm", False)
    return fam.norms_per_layer, True


def _mla(c: _Config) -> MLA:
    return MLA(
        q_rank=c.optional_int("q_lora_rank"),
        kv_rank=c.int("kv_lora_rank"),
        rope_dim=c.int("qk_rope_head_dim"),
        nope_dim=c.int("qk_nope_head_dim"),
        v_dim=c.int("v_head_dim"),
    )


def _blocks(c: _Config, count: int) -> tuple[str, ...]:
    """Each block's type from hybrid_override_pattern (Nemotron-H: M Mamba-2, * attention, - MLP), one character per block."""
    pattern = c.raw("hybrid_override_pattern")
    if not isinstance(pattern, str) or len(pattern) != count:
        raise SpecError(c.path, c.where("hybrid_override_pattern"), f"expected a string of {count} block types (M, * or -), found {shown(pattern)}")
    unknown = sorted(set(pattern) - set(BLOCK_TYPES))
    if unknown:
        raise SpecError(c.path, c.where("hybrid_override_pattern"), f"unsupported block type {unknown[0]!r}; supported: M (Mamba-2), "
                                                                    "* (attention), - (MLP), E (mixture of experts)")
    return tuple(BLOCK_TYPES[ch] for ch in pattern)


def _linear(c: _Config) -> LinearAttention:
    return LinearAttention(k_heads=c.int("linear_num_key_heads"), v_heads=c.int("linear_num_value_heads"), k_dim=c.int("linear_key_head_dim"),
                           v_dim=c.int("linear_value_head_dim"), conv_kernel=c.int("linear_conv_kernel_dim"))


def _mamba2(c: _Config) -> Mamba2:
    return Mamba2(heads=c.int("mamba_num_heads"), head_dim=c.int("mamba_head_dim"), groups=c.int("n_groups"), state=c.int("ssm_state_size"),
                  conv_kernel=c.int("conv_kernel"), conv_bias=c.bool("use_conv_bias", True))


def _kda(c: _Config) -> KimiDeltaAttention:
    """Kimi Linear's linear_attn_config: the KDA layers' heads, head size and convolution (vLLM kda.py reads these three);
    a full-rank gate (use_full_rank_gate, a later variant) has other matrices and is refused."""
    k = _linear_attn_config(c)
    if c.bool("mla_use_output_gate", False):
        raise SpecError(c.path, c.where("mla_use_output_gate"), "expected false: an output gate on the MLA layers is not counted")
    for name, what in (("routed_expert_hidden_size", "experts in a latent space of their own"), ("attn_res_block_size", "attention residuals")):
        if c.raw(name) is not None:
            raise SpecError(c.path, c.where(name), f"expected absent: {what} (a later Kimi variant) are not read")
    if k.bool("use_full_rank_gate", False):
        raise SpecError(c.path, k.where("use_full_rank_gate"), "expected false: a full-rank KDA gate's matrices are not counted")
    return KimiDeltaAttention(heads=k.int("num_heads"), head_dim=k.int("head_dim"), conv_kernel=k.int("short_conv_kernel_size"))


def _linear_attn_config(c: _Config) -> _Config:
    block = c.raw("linear_attn_config")
    if not isinstance(block, dict):
        raise SpecError(c.path, c.where("linear_attn_config"), f"expected an object (the KDA layers' shape), found {shown(block)}")
    return _Config(block, c.path, prefix=c.where("linear_attn_config") + ".")


#: Family.linear -> the reader of that recurrent layer's shape
LINEAR_READERS = {"gated_deltanet": _linear, "mamba2": _mamba2, "kda": _kda}


def _indexer(c: _Config, mla: MLA | None) -> Indexer:
    if mla is None or mla.q_rank is None:
        raise SpecError(c.path, c.where("q_lora_rank"), "missing: DeepSeek Sparse Attention's indexer reads the query latent (q_lora_rank)")
    # GlmMoeDsaConfig (GLM-5.2's IndexCache): a "shared" layer runs no indexer and reuses the previous layer's top-k, from
    # indexer_types, else index_topk_pattern (F full, S shared), else every index_topk_freq-th layer; roofline reads only
    # layers that each run their own indexer
    types, pattern, freq = c.raw("indexer_types"), c.raw("index_topk_pattern"), c.raw("index_topk_freq")
    if types is not None and (not isinstance(types, list) or any(t != "full" for t in types)):
        raise SpecError(c.path, c.where("indexer_types"), f"expected every layer 'full': layers that share another's top-k ('shared') are "
                                                          f"not modelled, found {shown(types)}")
    if types is None and pattern is not None and (not isinstance(pattern, str) or set(pattern) - {"F"}):
        raise SpecError(c.path, c.where("index_topk_pattern"), f"expected only F (every layer runs its indexer): shared (S) layers are not "
                                                               f"modelled, found {shown(pattern)}")
    if types is None and pattern is None and freq is not None and freq != 1:
        raise SpecError(c.path, c.where("index_topk_freq"), f"expected 1 (every layer runs its indexer): layers that reuse another's top-k "
                                                            f"are not modelled, found {shown(freq)}")
    return Indexer(heads=c.int("index_n_heads"), dim=c.int("index_head_dim"), topk=c.int("index_topk"))


def _state_bytes(c: _Config, own: tuple[str, ...]) -> int:
    """Bytes per state element: the dtype the config names for it (`own`: Nemotron-H's mamba_ssm_cache_dtype, Qwen3.5's
    mamba_ssm_dtype for the recurrent state), else the model's dtype."""
    for name in (*own, "torch_dtype", "dtype"):
        value = c.raw(name)
        if value is None or value == "auto":
            continue
        if not isinstance(value, str) or value not in STATE_DTYPES:
            raise SpecError(c.path, c.where(name), f"unknown dtype {shown(value)}; known: {', '.join(STATE_DTYPES)}")
        return STATE_DTYPES[value]
    return 2


def _moe(c: _Config, fam: Family, L: int) -> MoE | None:
    if fam.moe == "mixtral":
        experts, ffn = c.int("num_local_experts"), c.int("intermediate_size")
        return MoE(experts, _top_k(c, experts), 0, ffn, tuple(range(L)))
    if fam.moe in ("qwen3_moe", "qwen3_next"):
        # Qwen3MoeSparseMoeBlock: routed experts in every decoder_sparse_step-th layer outside mlp_only_layers; Qwen3-Next's
        # (Qwen3NextSparseMoeBlock) adds one shared expert where shared_expert_intermediate_size is set
        experts = c.int("num_experts")
        step = c.int("decoder_sparse_step", default=1)
        dense_only = c.index_list("mlp_only_layers", L) or ()
        layers = tuple(i for i in range(L) if i not in dense_only and (i + 1) % step == 0)
        shared = 1 if fam.moe == "qwen3_next" and c.int("shared_expert_intermediate_size", default=0, minimum=0) else 0
        return MoE(experts, _top_k(c, experts), shared, c.int("moe_intermediate_size"), layers)
    if fam.moe == "deepseek":
        experts = c.int("n_routed_experts")
        first_dense = c.int("first_k_dense_replace", default=0, minimum=0)
        freq = c.int("moe_layer_freq", default=1)
        if freq != 1:
            raise SpecError(c.path, c.where("moe_layer_freq"), f"expected 1 (every layer after first_k_dense_replace is MoE), found {freq}")
        shared = c.int("n_shared_experts", default=0, minimum=0)
        layers = tuple(range(min(first_dense, L), L))
        # GlmMoeDsaConfig's mlp_layer_types ("dense" or "sparse" per layer) defaults to first_k_dense_replace dense layers
        kinds = c.raw("mlp_layer_types")
        if kinds is not None and kinds != ["dense" if i < first_dense else "sparse" for i in range(L)]:
            raise SpecError(c.path, c.where("mlp_layer_types"), f"expected {first_dense} 'dense' then 'sparse' layers (first_k_dense_replace), "
                                                                f"found {shown(kinds)}")
        return MoE(experts, _top_k(c, experts), shared, c.int("moe_intermediate_size"), layers)
    if fam.moe == "nemotron_h":
        # NemotronHMoE (vLLM nemotron_h.py): in each E block of hybrid_override_pattern, a sigmoid router (D x E, a per-expert
        # score-correction bias), n_routed_experts plain squared-ReLU experts (up and down, no gate) of moe_intermediate_size
        # and n_shared_experts of moe_shared_expert_intermediate_size; a latent MoE (Nemotron 3 Super) is not read
        layers = tuple(i for i, ch in enumerate(c.raw("hybrid_override_pattern")) if ch == "E")
        if not layers:
            return None
        if c.raw("moe_latent_size") is not None:
            raise SpecError(c.path, c.where("moe_latent_size"), "expected null: a latent MoE (experts in a narrower space behind "
                                                                "fc1/fc2 latent projections) is not read")
        experts, width = c.int("n_routed_experts"), c.int("moe_intermediate_size")
        shared = c.int("n_shared_experts", default=0, minimum=0)
        shared_width = c.int("moe_shared_expert_intermediate_size") if shared else width
        return MoE(experts, _top_k(c, experts), shared, width, layers, expert_matrices=2,
                   shared_ffn=shared_width if shared_width != width else None)
    if fam.moe == "minimax_m2":
        # MiniMaxM2MoE: num_local_experts SwiGLU experts of intermediate_size in every layer, a sigmoid router with a correction
        # bias (use_routing_bias, counted through topk_method noaux_tc); MiniMax-01's lightning-attention layers and a shared
        # expert are not read
        kinds = c.raw("attn_type_list")
        if kinds is not None and (not isinstance(kinds, list) or len(kinds) != L or any(k != 1 or isinstance(k, bool) for k in kinds)):
            raise SpecError(c.path, c.where("attn_type_list"), f"expected {L} entries of 1 (softmax attention): lightning attention (0) is "
                                                               f"not modelled, found {shown(kinds)}")
        norm = c.text("qk_norm_type")
        if c.bool("use_qk_norm", True) and norm != "per_layer":
            raise SpecError(c.path, c.where("qk_norm_type"), f"expected 'per_layer' (one norm over all heads), found {shown(norm)}")
        if not c.bool("use_routing_bias", True):
            raise SpecError(c.path, c.where("use_routing_bias"), "expected true: a router without its score-correction bias is not read")
        if c.int("shared_intermediate_size", default=0, minimum=0):
            raise SpecError(c.path, c.where("shared_intermediate_size"), "expected 0: MiniMax-M2's shared expert is not read")
        experts = c.int("num_local_experts")
        return MoE(experts, _top_k(c, experts), 0, c.int("intermediate_size"), tuple(range(L)))
    if fam.moe == "gpt_oss":
        # GptOssMLP: a biased router and biased experts (gate_up 2F, down D) of width intermediate_size, in every layer
        experts = c.int("num_local_experts")
        return MoE(experts, _top_k(c, experts), 0, c.int("intermediate_size"), tuple(range(L)), router_bias=True, expert_bias=True)
    if fam.moe == "llama4":
        # Llama4TextMoe: routed experts of width intermediate_size and one shared expert of the same width; the MoE layers
        # are moe_layers, or every interleave_moe_layer_step-th layer (Llama4TextConfig)
        experts = c.int("num_local_experts")
        layers = c.index_list("moe_layers", L)
        if layers is None:
            step = c.int("interleave_moe_layer_step")
            layers = tuple(range(step - 1, L, step))
        return MoE(experts, _top_k(c, experts), 1, c.int("intermediate_size"), layers)
    return None


def _top_k(c: _Config, experts: int) -> int:
    k = c.int("num_experts_per_tok")
    if k > experts:
        raise SpecError(c.path, c.where("num_experts_per_tok"), f"expected at most the number of experts ({experts}), found {k}")
    return k


def _windows(c: _Config, fam: Family, L: int) -> tuple[tuple[str, ...], tuple[int | None, ...]]:
    """Each layer's attention type and span (None: the whole context): `layer_types` when given, else the family's rule."""
    given = c.raw("layer_types")
    if given is not None:
        if not isinstance(given, list) or len(given) != L or not all(isinstance(t, str) for t in given):
            raise SpecError(c.path, c.where("layer_types"), f"expected a list of {L} layer types (one per layer), found {shown(given)}")
        known = (*LAYER_TYPES, LINEAR) if fam.linear else LAYER_TYPES
        unknown = sorted({t for t in given if t not in known})
        if unknown:
            raise SpecError(c.path, c.where("layer_types"), f"unsupported layer type {shown(unknown[0])}; supported: {', '.join(known)}")
        types = tuple(given)
    else:
        types = _family_layer_types(c, fam, L)
    spans = []
    for t in types:
        if t == SLIDING:
            window = c.optional_int("sliding_window")
            if window is None:
                raise SpecError(c.path, c.where("sliding_window"), "missing: the config has sliding-attention layers and no window")
            spans.append(window)
        elif t == CHUNKED:
            chunk = c.optional_int("attention_chunk_size")
            if chunk is None:
                raise SpecError(c.path, c.where("attention_chunk_size"), "missing: the config has chunked-attention layers and no chunk size")
            spans.append(chunk)
        else:
            spans.append(None)
    return types, tuple(spans)


def _layer_numbers(c: _Config, name: str, L: int) -> frozenset[int]:
    """A list of distinct layer numbers from 1 to L (Kimi Linear counts its layers from 1)."""
    value = c.raw(name)
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= L for i in value) \
            or len(set(value)) != len(value):
        raise SpecError(c.path, c.where(name), f"expected a list of distinct layer numbers from 1 to {L}, found {shown(value)}")
    return frozenset(value)


def _family_layer_types(c: _Config, fam: Family, L: int) -> tuple[str, ...]:
    """transformers' own default layer_types for the family (the rule each config class applies when the file gives none)."""
    rule = fam.windows
    if rule == "all":
        # Mistral and Mixtral: sliding_window (null for none) applies in every layer
        return (SLIDING if c.optional_int("sliding_window") else FULL,) * L
    if rule == "qwen":
        # Qwen2Config: sliding only with use_sliding_window, and then from layer max_window_layers on
        if not c.bool("use_sliding_window", False) or c.optional_int("sliding_window") is None:
            return (FULL,) * L
        first = c.int("max_window_layers", minimum=0)
        return tuple(SLIDING if i >= first else FULL for i in range(L))
    if rule == "qwen3_next":
        # Qwen3NextConfig: linear attention except in every full_attention_interval-th layer
        interval = c.int("full_attention_interval")
        return tuple(LINEAR if (i + 1) % interval else FULL for i in range(L))
    if rule in ("gemma2", "gpt_oss"):
        # Gemma2Config and GptOssConfig: sliding on even layers (bool((i + 1) % 2)), full on odd ones
        return tuple(SLIDING if (i + 1) % 2 else FULL for i in range(L))
    if rule == "kimi_linear":
        # KimiLinearConfig.is_kda_layer: linear_attn_config lists the KDA layers and the full (MLA) ones, counted from 1
        k = _linear_attn_config(c)
        full = _layer_numbers(k, "full_attn_layers", L)
        kda = _layer_numbers(k, "kda_layers", L) if k.present("kda_layers") else frozenset(range(1, L + 1)) - full
        if full & kda or len(full | kda) != L:
            raise SpecError(c.path, k.where("kda_layers"), f"expected every layer from 1 to {L} in exactly one of kda_layers and "
                                                           "full_attn_layers")
        return tuple(LINEAR if i + 1 in kda else FULL for i in range(L))
    if rule == "olmo3":
        # Olmo3Config: sliding but in every fourth layer ((i + 1) % 4)
        return tuple(SLIDING if (i + 1) % 4 else FULL for i in range(L))
    if rule == "gemma3":
        # Gemma3TextConfig: one full layer in every sliding_window_pattern, the rest sliding (bool((i + 1) % pattern))
        pattern = c.int("sliding_window_pattern")
        return tuple(SLIDING if (i + 1) % pattern else FULL for i in range(L))
    if rule == "llama4":
        # Llama4TextConfig: no_rope_layers[i] = 1 for a RoPE layer, which attends in chunks; 0 for a NoPE layer, which sees
        # everything. An empty or missing list is a NoPE layer every no_rope_layer_interval layers.
        flags = c.raw("no_rope_layers")
        if not flags:
            interval = c.int("no_rope_layer_interval")
            flags = [int((i + 1) % interval != 0) for i in range(L)]
        if not isinstance(flags, list) or len(flags) < L or not all(f in (0, 1) and not isinstance(f, bool) for f in flags):
            raise SpecError(c.path, c.where("no_rope_layers"), f"expected a list of at least {L} flags (1 RoPE, 0 NoPE), found {shown(flags)}")
        chunked = c.optional_int("attention_chunk_size") is not None
        return tuple(CHUNKED if f and chunked else FULL for f in flags[:L])
    return (FULL,) * L

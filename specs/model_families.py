"""How each Hugging Face `model_type` lays out its weights: one `Family` per supported type, in FAMILIES.

Which projections carry biases, norms per layer, gated or plain MLP, where the
experts are, which layers attend through a window: written once per family from
transformers' `modeling_<family>.py`, with the defaults of its config class
(`configuration_<family>.py`) for the fields a config.json may leave out.
specs.models reads a config.json by these layouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Family:
    """The weight layout of one transformers `model_type`.

    A bias or norm setting is True/False, or the name of the config field that
    switches it (read with the family's default for that field).
    """

    #: "gated": gate, up and down projections (3 D x F); "plain": up and down (2 D x F)
    mlp: str = "gated"
    #: config fields that name the activation, first found wins
    act_fields: tuple[str, ...] = ("hidden_act",)
    #: "rms": one weight per channel; "layer": a weight and a bias per channel
    norm: str = "rms"
    #: D-wide norms in each layer (pre-attention, pre-MLP; Gemma adds two post-norms; a parallel block has one)
    norms_per_layer: int = 2
    #: a per-head norm with weights on queries and keys (Qwen3, Gemma 3); a field name where it is switchable (Phi)
    qk_norm: bool | str = False
    #: the q/k norm's span: "head" (head_dim weights each for q and k) or "layer" (one norm over all heads: N H and K H
    #: weights; MiniMax-M2's qk_norm_type per_layer)
    qk_norm_span: str = "head"
    qkv_bias: bool | str = "attention_bias"
    o_bias: bool | str = "attention_bias"
    mlp_bias: bool | str = "mlp_bias"
    lm_head_bias: bool = False
    #: one learned attention-sink logit per head per layer (gpt-oss)
    sinks: bool = False
    #: learned position embeddings: None, "n" (max_position_embeddings rows, GPT-2) or "n+2" (OPT's offset of 2)
    positions: str | None = None
    #: how layers attend when the config gives no `layer_types`: "none" (all full), "all" (sliding_window on every
    #: layer), "qwen" (use_sliding_window from max_window_layers on), "gemma2" (even layers), "gemma3"
    #: (sliding_window_pattern), "gpt_oss" (even layers), "llama4" (no_rope_layers: RoPE layers chunked), "qwen3_next"
    #: (linear attention but every full_attention_interval-th layer), "olmo3" (every fourth layer full, the others sliding), "blocks" (Nemotron-H: hybrid_override_pattern, one
    #: sublayer per block)
    windows: str = "none"
    #: "mixtral", "qwen3_moe", "qwen3_next", "deepseek", "gpt_oss", "llama4", "nemotron_h" (E blocks), "minimax_m2" or None (dense)
    moe: str | None = None
    mla: bool = False
    #: the recurrent layers' kind where some layers keep a fixed-size state instead of a KV cache: "gated_deltanet"
    #: (Qwen3-Next's linear attention), "mamba2" (Nemotron-H's state-space mixers), "kda" (Kimi Delta Attention) or None
    linear: str | None = None
    #: the query projection also yields a per-channel output gate (Qwen3-Next's gated attention: q_proj is D x 2 N H); a field
    #: name where the config switches it (Qwen3.5's attn_output_gate)
    attn_output_gate: bool | str = False
    #: DeepSeek Sparse Attention: a lightning indexer in every layer picks the top index_topk cached tokens each query reads
    indexer: bool = False
    #: the shared expert's output is scaled by a sigmoid gate of its own (a D x 1 projection per MoE layer: Qwen2-MoE, Qwen3-Next)
    shared_expert_gate: bool = False
    #: the router is an nn.Linear an FP8 checkpoint quantizes (DeepSeek's MoEGate is a bare parameter: it is not)
    router_linear: bool = True
    #: our field name -> the config's, where the family spells it differently (GPT-2's n_embd); several spellings: the first
    #: the file has
    aliases: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    #: the config class's defaults for fields a config.json may omit (transformers configuration_<family>.py)
    defaults: Mapping[str, object] = field(default_factory=dict)


_LLAMA_LIKE = {"tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False}
_GEMMA_DEFAULTS = {"tie_word_embeddings": True, "hidden_activation": "gelu_pytorch_tanh", "attention_bias": False}

#: Qwen3-Next's layout, which Qwen3.5's language model shares: Gated DeltaNet layers between gated full-attention layers with
#: q/k norms, and a Qwen3-MoE block with a gated shared expert in every layer
_QWEN_NEXT = {"windows": "qwen3_next", "qk_norm": True, "mlp_bias": False, "moe": "qwen3_next", "linear": "gated_deltanet",
              "shared_expert_gate": True}
_QWEN_NEXT_DEFAULTS = {**_LLAMA_LIKE, "head_dim": 256, "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
                       "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "decoder_sparse_step": 1}

#: DeepSeek-V3.2's layout (MLA, DeepSeek's MoE, a DSA indexer in every layer), which GLM-5 (glm_moe_dsa) shares
_DSA = {"mla": True, "moe": "deepseek", "mlp_bias": False, "router_linear": False, "indexer": True}

#: model_type -> weight layout. Sources: huggingface/transformers src/transformers/models/<family>/modeling_<family>.py
#: and configuration_<family>.py (gemma3 @ 008f5c8c, llama4 @ 008e5743, gpt_oss @ 00d4b3d2, glm4_moe @ a0699c97 (modeling)
#: and c7ec229a (configuration), phi3 @ 43c2b481 (modeling) and d7991107 (configuration) read for this table).
FAMILIES: dict[str, Family] = {
    "llama": Family(defaults=_LLAMA_LIKE),
    # SmolLM3 (SmolLM3ForCausalLM, transformers @ cbc6e94a modular_smollm3.py): Llama's attention and MLP; a quarter of the
    # layers skip RoPE (no_rope_layers: no parameter, no cached element changes). layer_types, which the config class always
    # writes, says which layers slide. SmolLM3Config ties the embeddings by default, unlike Llama's.
    "smollm3": Family(defaults={**_LLAMA_LIKE, "tie_word_embeddings": True, "vocab_size": 128256, "max_position_embeddings": 32768}),
    # OLMo 3 (Olmo3ForCausalLM, transformers @ 0233e509 modeling_olmo3.py, configuration_olmo3.py @ 008e5743): Llama's
    # projections (biases per attention_bias, none in the MLP) with one RMSNorm over all query heads and one over all KV heads
    # (N H and K H weights), and the two norms after their sublayers instead of before. Olmo3Config writes layer_types when the
    # file has none: every fourth layer full, the others through sliding_window.
    "olmo3": Family(windows="olmo3", qk_norm=True, qk_norm_span="layer", mlp_bias=False,
                    defaults={**_LLAMA_LIKE, "vocab_size": 50304, "max_position_embeddings": 2048, "sliding_window": 4096}),
    # Seed-OSS (SeedOssForCausalLM, transformers @ 008e5743 configuration_seed_oss.py): Llama's layer with q/k/v biases per
    # attention_bias and an o_proj bias per attention_out_bias (the config class defaults: true and false).
    "seed_oss": Family(qkv_bias="attention_bias", o_bias="attention_out_bias",
                       defaults={**_LLAMA_LIKE, "attention_bias": True, "attention_out_bias": False, "vocab_size": 155136, "head_dim": 128,
                                 "max_position_embeddings": 524288}),
    "mistral": Family(windows="all", qkv_bias=False, o_bias=False, mlp_bias=False, defaults=_LLAMA_LIKE),
    "mixtral": Family(windows="all", qkv_bias=False, o_bias=False, mlp_bias=False, moe="mixtral", defaults=_LLAMA_LIKE),
    # Qwen2: q, k and v carry a bias although config.json does not say so; o_proj and the MLP have none
    "qwen2": Family(windows="qwen", qkv_bias=True, o_bias=False, mlp_bias=False, defaults={**_LLAMA_LIKE, "max_window_layers": 28}),
    "qwen3": Family(windows="qwen", qk_norm=True, mlp_bias=False, defaults={**_LLAMA_LIKE, "max_window_layers": 28}),
    "qwen3_moe": Family(windows="qwen", qk_norm=True, mlp_bias=False, moe="qwen3_moe", defaults={**_LLAMA_LIKE, "max_window_layers": 28}),
    # GLM-4.5 / 4.5-Air (Glm4MoeForCausalLM): GQA with q/k/v biases per attention_bias and an o_proj without one, a per-head
    # q/k norm only with use_qk_norm, DeepSeek-V3's MoE (first_k_dense_replace dense layers of intermediate_size, then
    # n_routed_experts of moe_intermediate_size plus n_shared_experts, a bare-Parameter router with an always-registered
    # e_score_correction_bias: Glm4MoeTopkRouter is DeepseekV3TopkRouter, hence topk_method noaux_tc, which Glm4MoeConfig does
    # not spell). partial_rotary_factor rotates part of each head and changes no parameter and no cached element.
    "glm4_moe": Family(qkv_bias="attention_bias", o_bias=False, mlp_bias=False, qk_norm="use_qk_norm", moe="deepseek", router_linear=False,
                       defaults={"tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False, "use_qk_norm": False,
                                 "vocab_size": 151552, "max_position_embeddings": 131072, "n_routed_experts": 128, "n_shared_experts": 1,
                                 "num_experts_per_tok": 8, "moe_intermediate_size": 1408, "first_k_dense_replace": 1,
                                 "topk_method": "noaux_tc"}),
    # Phi-3 / Phi-4 (Phi3ForCausalLM): one fused qkv_proj (D x (N + 2K) H) and one fused gate_up_proj (D x 2F), no biases at all
    # (the modeling ignores attention_bias); the same parameters as separate projections. sliding_window, when set, is passed
    # to every layer's attention.
    "phi3": Family(windows="all", qkv_bias=False, o_bias=False, mlp_bias=False,
                   defaults={"tie_word_embeddings": False, "hidden_act": "silu", "vocab_size": 32064, "max_position_embeddings": 4096}),
    # Qwen3-Next (Qwen3NextForCausalLM): three Gated DeltaNet layers (linear attention, a fixed-size state per sequence) for every
    # full-attention layer (layer_types, else one full layer every full_attention_interval); the full layers are gated attention
    # (q_proj D x 2 N H: queries and an output gate) with per-head q/k norms; every layer's MLP is a Qwen3-MoE block with one
    # shared expert of shared_expert_intermediate_size behind a sigmoid gate (D x 1). The MTP layer (mtp_num_hidden_layers),
    # which transformers does not load, is not counted.
    "qwen3_next": Family(**_QWEN_NEXT, attn_output_gate=True, defaults={**_QWEN_NEXT_DEFAULTS, "vocab_size": 151936, "max_position_embeddings": 32768}),
    # Qwen3.5 MoE (Qwen3_5MoeForConditionalGeneration; its language model, qwen3_5_moe_text, under text_config): Qwen3-Next's
    # layout (Gated DeltaNet layers between gated full-attention layers, a Qwen3-MoE block with a gated shared expert in every
    # layer), the output gate switched by attn_output_gate. The vision tower and the MTP layer are not counted.
    "qwen3_5_moe_text": Family(**_QWEN_NEXT, attn_output_gate="attn_output_gate",
                               defaults={**_QWEN_NEXT_DEFAULTS, "vocab_size": 248320, "attn_output_gate": True, "max_position_embeddings": 262144}),
    # DeepSeek-V3.2 (DeepseekV32ForCausalLM): DeepSeek-V3 with DeepSeek Sparse Attention in every layer: a lightning indexer
    # (index_n_heads heads of index_head_dim over the query latent, one shared key per token cached in FP8) scores the whole
    # cache and the MLA attention reads only its top index_topk tokens
    "deepseek_v32": Family(**_DSA, defaults={**_LLAMA_LIKE, "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048}),
    # GLM-5 (GlmMoeDsaForCausalLM; modeling_glm_moe_dsa @ 00371f38, configuration_glm_moe_dsa @ 008e5743): DeepSeek-V3.2's
    # layout at GLM's sizes: MLA with a DSA indexer in every layer, first_k_dense_replace dense SwiGLU layers then DeepSeek's
    # MoE (a bare-Parameter sigmoid router with e_score_correction_bias, routed and shared SwiGLU experts). vLLM runs it as
    # DeepseekV2ForCausalLM. GLM-5.2's shared-indexer layers (indexer_types "shared") are refused; the MTP layer is not counted.
    "glm_moe_dsa": Family(**_DSA, defaults={**_LLAMA_LIKE, "vocab_size": 154880, "max_position_embeddings": 202752, "n_routed_experts": 256,
                                            "n_shared_experts": 1, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
                                            "first_k_dense_replace": 3, "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                                            "qk_nope_head_dim": 192, "v_head_dim": 256, "index_n_heads": 32, "index_head_dim": 128,
                                            "index_topk": 2048, "topk_method": "noaux_tc"}),
    # Nemotron-H (NemotronHForCausalLM, vLLM nemotron_h.py): blocks of one sublayer each behind one RMSNorm, from
    # hybrid_override_pattern: M a Mamba-2 mixer, * GQA attention (attention_head_dim, or head_dim as Nemotron 3 spells it; no
    # RoPE), - a plain MLP (up and down, squared ReLU), E (Nemotron 3) a MoE of plain squared-ReLU experts and a wider shared
    # expert behind a sigmoid router with a score-correction bias (NemotronHMoE: DeepSeek-V3's noaux_tc routing, a router no
    # quantization converts); no biases but the convolution's (use_conv_bias). A latent MoE (moe_latent_size) is refused.
    "nemotron_h": Family(mlp="plain", act_fields=("mlp_hidden_act",), norms_per_layer=1, qkv_bias="attention_bias", o_bias="attention_bias",
                         mlp_bias="mlp_bias", windows="blocks", linear="mamba2", moe="nemotron_h", router_linear=False,
                         aliases={"head_dim": ("attention_head_dim", "head_dim")},
                         defaults={"tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "mlp_hidden_act": "relu2",
                                   "use_conv_bias": True, "conv_kernel": 4, "max_position_embeddings": 4096, "n_shared_experts": 1,
                                   "topk_method": "noaux_tc"}),
    # MiniMax-M2 (MiniMaxM2ForCausalLM, vLLM minimax_m2.py): GQA with partial RoPE (rotary_dim) and q/k RMSNorms over all heads
    # at once (q_norm N H, k_norm K H: qk_norm_type per_layer), no biases; every layer a MoE of num_local_experts SwiGLU experts
    # (w1, w2, w3) of intermediate_size behind a sigmoid router (D x E, FP32, not quantized) with a per-expert score-correction
    # bias (use_routing_bias); no shared expert. attn_type_list 0 (MiniMax-01's lightning attention) and the MTP modules are
    # not read.
    "minimax_m2": Family(qkv_bias="attention_bias", o_bias=False, mlp_bias=False, qk_norm="use_qk_norm", qk_norm_span="layer",
                         moe="minimax_m2",
                         defaults={"tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False, "use_qk_norm": True,
                                   "qk_norm_type": "per_layer", "use_routing_bias": True, "shared_intermediate_size": 0,
                                   "topk_method": "noaux_tc"}),
    # Kimi Linear (KimiLinearForCausalLM; vLLM model_executor/models/kimi_linear.py and layers/kda.py): Kimi Delta Attention
    # (linear attention: a head_dim x head_dim float32 state per head, low-rank decay and output gates, short convolutions
    # over q, k and v) in the layers linear_attn_config lists as kda_layers, MLA without RoPE (mla_use_nope) in its
    # full_attn_layers (both counted from 1), and DeepSeek-V3's MoE spelled num_experts, num_experts_per_token and
    # num_shared_experts (KimiMoE: a router that is not quantized, with an e_score_correction_bias; shared experts of
    # num_shared_experts x moe_intermediate_size), after first_k_dense_replace dense layers of intermediate_size.
    "kimi_linear": Family(mla=True, moe="deepseek", mlp_bias=False, router_linear=False, linear="kda", windows="kimi_linear",
                          aliases={"n_routed_experts": "num_experts", "num_experts_per_tok": "num_experts_per_token",
                                   "n_shared_experts": "num_shared_experts",
                                   "max_position_embeddings": ("max_position_embeddings", "model_max_length")},
                          defaults={**_LLAMA_LIKE, "topk_method": "noaux_tc"}),
    "deepseek_v2": Family(mla=True, moe="deepseek", mlp_bias=False, router_linear=False, defaults=_LLAMA_LIKE),
    "deepseek_v3": Family(mla=True, moe="deepseek", mlp_bias=False, router_linear=False, defaults=_LLAMA_LIKE),
    # Kimi K2: DeepSeek-V3's architecture (its config names DeepseekV3ForCausalLM and configuration_deepseek.DeepseekV3Config)
    "kimi_k2": Family(mla=True, moe="deepseek", mlp_bias=False, router_linear=False, defaults=_LLAMA_LIKE),
    # Gemma 2/3: pre- and post-norms around attention and MLP (4 per layer), tied embeddings, GeGLU MLP
    "gemma2": Family(act_fields=("hidden_activation", "hidden_act"), norms_per_layer=4, mlp_bias=False, windows="gemma2",
                     defaults={**_GEMMA_DEFAULTS, "vocab_size": 256000, "head_dim": 256, "num_key_value_heads": 4, "sliding_window": 4096,
                               "max_position_embeddings": 8192}),
    "gemma3_text": Family(act_fields=("hidden_activation", "hidden_act"), norms_per_layer=4, qk_norm=True, mlp_bias=False, windows="gemma3",
                          defaults={**_GEMMA_DEFAULTS, "vocab_size": 262208, "head_dim": 256, "num_key_value_heads": 4,
                                    "sliding_window": 4096, "sliding_window_pattern": 6, "max_position_embeddings": 131072}),
    # gpt-oss: q, k, v and o biases, a sink per head, a biased router and biased experts, alternating 128-token windows
    "gpt_oss": Family(sinks=True, mlp_bias=False, windows="gpt_oss", moe="gpt_oss",
                      defaults={"tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": True, "sliding_window": 128,
                                "max_position_embeddings": 131072}),
    # Llama 4: chunked attention on RoPE layers, a shared expert in each MoE layer, dense layers of intermediate_size_mlp;
    # its QK norm is an L2 norm without weights (no parameters)
    "llama4_text": Family(qkv_bias="attention_bias", o_bias="attention_bias", mlp_bias=False, windows="llama4", moe="llama4",
                          defaults={"tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False, "head_dim": 128,
                                    "attention_chunk_size": 8192, "no_rope_layer_interval": 4, "interleave_moe_layer_step": 1,
                                    "intermediate_size_mlp": 16384, "max_position_embeddings": 131072}),
    # plain MLPs, LayerNorm with bias, biases on every projection
    "gpt2": Family(mlp="plain", act_fields=("activation_function",), norm="layer", qkv_bias=True, o_bias=True, mlp_bias=True, positions="n",
                   aliases={"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
                            "intermediate_size": "n_inner", "max_position_embeddings": "n_positions"},
                   defaults={"activation_function": "gelu_new", "tie_word_embeddings": True, "n_positions": 1024}),
    "opt": Family(mlp="plain", act_fields=("activation_function",), norm="layer", qkv_bias="enable_bias", o_bias="enable_bias",
                  mlp_bias="enable_bias", positions="n+2", aliases={"intermediate_size": "ffn_dim"},
                  defaults={"activation_function": "relu", "tie_word_embeddings": True, "enable_bias": True, "max_position_embeddings": 2048}),
    "falcon": Family(mlp="plain", act_fields=("activation",), norm="layer", qkv_bias="bias", o_bias="bias", mlp_bias="bias",
                     aliases={"intermediate_size": "ffn_hidden_size"},
                     defaults={"activation": "gelu", "tie_word_embeddings": True, "bias": False, "max_position_embeddings": 2048}),
    "phi": Family(mlp="plain", act_fields=("hidden_act",), norm="layer", norms_per_layer=1, qk_norm="qk_layernorm", qkv_bias=True,
                  o_bias=True, mlp_bias=True, lm_head_bias=True,
                  defaults={"hidden_act": "gelu_new", "tie_word_embeddings": False, "qk_layernorm": False, "max_position_embeddings": 2048}),
}
SUPPORTED_TYPES = tuple(FAMILIES)
#: multimodal configs whose language model sits under text_config, and that language model's model_type
WRAPPERS = {"gemma3": "gemma3_text", "llama4": "llama4_text", "qwen3_5_moe": "qwen3_5_moe_text"}

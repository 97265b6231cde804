"""GLM-4.5-Air (glm4_moe), Phi-4 (phi3), GLM-5 (glm_moe_dsa) and Nemotron 3 Nano (nemotron_h with MoE blocks): each
layout rule with its numbers, each count against the model card.

What a card counts is said at each test: GLM-4.5's "106B total / 12B active" counts the main model (the MTP layer
is extra: the HF checkpoint holds 110B); Phi-4's Hugging Face page lists 14.7B parameters (the report says 14B);
GLM-5's "744B parameters (40B active)" counts the main model without its MTP layer; NVIDIA gives Nemotron 3 Nano as
"3.2B active (3.6B with embeddings), 31.6B total".
"""

import json
from pathlib import Path

import pytest
from roofline.specs.catalog import MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.models import load_model, parse_config
from roofline.specs.precisions import precision


def _shipped(name: str) -> dict:
    return json.loads((MODELS_DIR / f"{name}.json").read_text())


def _parse(data: dict) -> object:
    return parse_config(data, Path("config.json"))


# --- GLM-4.5-Air: DeepSeek-V3's MoE behind GQA attention ---

def test_glm_4_5_air_total_and_active_match_the_model_card():
    """zai-org/GLM-4.5 README: GLM-4.5-Air has 106B total and 12B active parameters (whole billions).

    Total within 1%; active as the GEMM parameters one token multiplies by outside the embedding and the LM head
    (12.18B; 12.80B with the LM head), within half a unit of the card's last digit.
    """
    c = load_model("glm-4.5-air").param_counts()
    assert c.total == pytest.approx(106e9, rel=0.01)
    assert c.active_matmul - c.lm_head == pytest.approx(12e9, abs=0.5e9)


def test_glm_4_5_air_layout_by_component():
    m = load_model("glm-4.5-air")
    c = m.param_counts()
    D, L, N, K, H, V = m.hidden_size, m.num_layers, m.num_heads, m.num_kv_heads, m.head_dim, m.vocab_size
    assert (D, L, N, K, H, m.intermediate_size) == (4096, 46, 96, 8, 128, 10944)
    e = m.moe
    assert (e.experts, e.top_k, e.shared_experts, e.expert_ffn, e.moe_layers) == (128, 8, 1, 1408, tuple(range(1, 46)))
    assert m.dense_layers == 1 and m.qkv_bias and not m.o_bias and not m.mlp_bias and not m.qk_norm
    assert c.attention == L * (D * N * H + 2 * D * K * H + N * H * D)
    assert c.mlp_dense == 3 * D * 10944
    assert c.experts_routed == 45 * 128 * 3 * D * 1408 and c.experts_shared == 45 * 3 * D * 1408
    assert c.router == 45 * 128 * D
    # q/k/v biases, then the router's e_score_correction_bias (Glm4MoeTopkRouter registers it in every MoE layer)
    assert c.biases == L * (N + 2 * K) * H + 45 * 128
    assert c.norms == L * 2 * D + D
    assert c.embedding == c.lm_head == V * D
    assert m.layer_attention == ("full_attention",) * L


def test_glm_4_5_air_kv_bytes_per_token():
    """2 (K, V) x 46 layers x 8 KV heads x 128 x 2 B = 188,416 B/token; partial RoPE caches whole heads."""
    assert load_model("glm-4.5-air").kv_bytes_per_token(precision("bf16")) == 188_416


def test_glm_use_qk_norm_adds_a_per_head_norm_and_the_router_is_no_linear():
    """GLM-4.5 (the 355B model) sets use_qk_norm: q_norm and k_norm of head_dim weights in every layer."""
    base = _shipped("glm-4.5-air")
    plain, normed = _parse(base), _parse({**base, "use_qk_norm": True})
    assert normed.qk_norm and normed.param_counts().norms - plain.param_counts().norms == 46 * 2 * 128
    # the router is a bare Parameter (as DeepSeek's MoEGate): an FP8 checkpoint leaves it unquantized
    fp8 = _parse({**base, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128],
                                                  "activation_scheme": "dynamic"}})
    formats = dict(fp8.weight_formats)
    assert formats["experts_routed"] == "fp8" and formats["router"] == "bf16"


def test_glm_config_class_defaults_fill_what_a_file_leaves_out():
    """Glm4MoeConfig: first_k_dense_replace 1, n_shared_experts 1, attention_bias false, use_qk_norm false."""
    base = {k: v for k, v in _shipped("glm-4.5-air").items()
            if k not in ("first_k_dense_replace", "n_shared_experts", "attention_bias", "use_qk_norm")}
    m = _parse(base)
    assert m.moe.moe_layers == tuple(range(1, 46)) and m.moe.shared_experts == 1 and not m.qkv_bias and not m.qk_norm


@pytest.mark.parametrize("change, field", [
    ({"moe_layer_freq": 2}, "moe_layer_freq"),
    ({"first_k_dense_replace": "one"}, "first_k_dense_replace"),
    ({"num_experts_per_tok": 200}, "num_experts_per_tok"),
    ({"use_qk_norm": "yes"}, "use_qk_norm"),
    ({"hidden_act": "swiglu"}, "hidden_act"),
])
def test_glm_fields_the_loader_cannot_use_are_refused_in_one_line(change, field):
    with pytest.raises(SpecError) as err:
        _parse({**_shipped("glm-4.5-air"), **change})
    assert err.value.field == field and "\n" not in str(err.value)


# --- Phi-4: Phi-3's fused projections ---

def test_phi_4_total_matches_the_model_card():
    """microsoft/phi-4 on Hugging Face: 14.7B parameters (one decimal); the exact count is 14,659,507,200."""
    c = load_model("phi-4").param_counts()
    assert c.total == 14_659_507_200
    assert c.total == pytest.approx(14.7e9, abs=0.05e9)
    assert c.active == c.total and c.biases == 0


def test_phi3_fused_projections_count_as_separate_ones():
    """qkv_proj (D x (N + 2K) H) and gate_up_proj (D x 2F) hold what q/k/v and gate/up hold in a Llama of the same shape."""
    phi = load_model("phi-4")
    llama = _parse({**_shipped("phi-4"), "model_type": "llama", "sliding_window": None})
    assert phi.param_counts() == llama.param_counts()
    assert phi.kv_elements_per_token() == llama.kv_elements_per_token()


def test_phi_4_kv_bytes_and_window():
    """2 x 40 layers x 10 KV heads x 128 x 2 B = 204,800 B/token; sliding_window 16384 (= max_position_embeddings) on every layer."""
    m = load_model("phi-4")
    assert m.kv_bytes_per_token(precision("bf16")) == 204_800
    assert m.attention_windows == ((40, 16384),)
    assert _parse({**_shipped("phi-4"), "sliding_window": None}).attention_windows == ((40, None),)


def test_phi3_has_no_biases_whatever_attention_bias_says():
    """Phi3Attention builds qkv_proj and o_proj with bias=False and Phi3MLP has none: the config field changes nothing."""
    m = _parse({**_shipped("phi-4"), "attention_bias": True})
    assert m.param_counts().biases == 0 and not m.qkv_bias and not m.o_bias


def test_phi3_config_class_defaults():
    """Phi3Config: vocab 32064, no tied embeddings, silu, num_key_value_heads = num_attention_heads when absent."""
    cfg = {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32}
    m = _parse(cfg)
    assert (m.vocab_size, m.num_kv_heads, m.tie_embeddings, m.hidden_act) == (32064, 32, False, "silu")


# --- GLM-5: DeepSeek-V3.2's sparse attention and MoE at GLM's sizes ---

def test_glm_5_total_and_active_match_the_model_card():
    """zai-org/GLM-5 card: 744B parameters (40B active). Total within 1% (743.91B, without the MTP layer); active as the GEMM
    parameters one token multiplies by outside the embedding and the LM head (39.88B; 40.83B with the LM head)."""
    c = load_model("glm-5").param_counts()
    assert c.total == 743_911_218_432
    assert c.total == pytest.approx(744e9, rel=0.01)
    assert c.active_matmul - c.lm_head == pytest.approx(40e9, rel=0.01)


def test_glm_5_layout_by_component():
    m = load_model("glm-5")
    c = m.param_counts()
    D, L, N, V = m.hidden_size, m.num_layers, m.num_heads, m.vocab_size
    assert (D, L, N, V) == (6144, 78, 64, 154880)
    a, x, e = m.mla, m.indexer, m.moe
    assert (a.q_rank, a.kv_rank, a.rope_dim, a.nope_dim, a.v_dim) == (2048, 512, 64, 192, 256)
    assert (x.heads, x.dim, x.topk) == (32, 128, 2048)
    assert (e.experts, e.top_k, e.shared_experts, e.expert_ffn, e.moe_layers, e.expert_matrices) == (256, 8, 1, 2048, tuple(range(3, 78)), 3)
    mla = D * 2048 + 2048 * N * (192 + 64) + D * (512 + 64) + 512 * N * (192 + 256) + N * 256 * D
    indexer = 2048 * 32 * 128 + D * 128 + D * 32
    assert c.attention == L * (mla + indexer)
    assert c.mlp_dense == 3 * 3 * D * 12288
    assert c.experts_routed == 75 * 256 * 3 * D * 2048 and c.experts_shared == 75 * 3 * D * 2048
    assert c.router == 75 * 256 * D and c.biases == 75 * 256  # e_score_correction_bias
    # input, post-attention and final norms; the q and kv latents' norms; the indexer's LayerNorm (weight and bias)
    assert c.norms == L * 2 * D + D + L * (2048 + 512) + L * 2 * 128
    assert c.embedding == c.lm_head == V * D
    assert m.layer_types == ("sparse_attention",) * L and m.attention_layers == L and m.sparse_layers == L


def test_glm_5_cache_bytes_per_token_and_no_state():
    """MLA latent 78 x (512 + 64) x 2 B = 89,856 B/token in bf16; the indexer's FP8 key and FP32 scale 78 x 132 = 10,296 B."""
    m = load_model("glm-5")
    assert m.kv_bytes_per_token(precision("bf16")) == 89_856
    assert m.index_bytes_per_token() == 10_296
    assert m.state_bytes_per_sequence() == 0 and m.recurrent_layers == 0
    assert m.attention_windows == ((78, 2048),)


def test_glm_moe_dsa_is_deepseek_v32_s_layout():
    """Read as deepseek_v32 (every field given), the same file gives the same counts and caches: one layout, two model_types."""
    glm = load_model("glm-5")
    v32 = _parse({**_shipped("glm-5"), "model_type": "deepseek_v32"})
    assert glm.param_counts() == v32.param_counts()
    assert glm.kv_elements_per_token() == v32.kv_elements_per_token() and glm.index_bytes_per_token() == v32.index_bytes_per_token()


def test_glm_moe_dsa_config_class_defaults_fill_what_a_file_leaves_out():
    """GlmMoeDsaConfig: index_n_heads 32 (DeepSeek-V3.2's is 64), first_k_dense_replace 3, one shared expert."""
    base = {k: v for k, v in _shipped("glm-5").items() if k not in ("index_n_heads", "first_k_dense_replace", "n_shared_experts")}
    m = _parse(base)
    assert m.indexer.heads == 32 and m.moe.moe_layers == tuple(range(3, 78)) and m.moe.shared_experts == 1
    # mlp_layer_types that say what first_k_dense_replace says are read
    same = _parse({**_shipped("glm-5"), "mlp_layer_types": ["dense"] * 3 + ["sparse"] * 75, "indexer_types": ["full"] * 78})
    assert same.param_counts() == load_model("glm-5").param_counts()


@pytest.mark.parametrize("change, field", [
    ({"indexer_types": ["full", "full", "full"] + ["shared"] * 75}, "indexer_types"),
    ({"index_topk_freq": 4, "index_skip_topk_offset": 3}, "index_topk_freq"),
    ({"index_topk_pattern": "FFFS" * 19 + "FS"}, "index_topk_pattern"),
    ({"mlp_layer_types": ["dense"] * 78}, "mlp_layer_types"),
    ({"q_lora_rank": None}, "q_lora_rank"),
    ({"moe_layer_freq": 2}, "moe_layer_freq"),
    ({"index_topk": "2048"}, "index_topk"),
])
def test_glm_moe_dsa_fields_the_loader_cannot_use_are_refused_in_one_line(change, field):
    """GLM-5.2's shared-indexer layers (IndexCache: a layer reuses another's top-k) are not modelled: refused, not miscounted."""
    with pytest.raises(SpecError) as err:
        _parse({**_shipped("glm-5"), **change})
    assert err.value.field == field and "\n" not in str(err.value)


# --- Nemotron 3 Nano: Nemotron-H with MoE blocks of plain squared-ReLU experts ---

NANO_D = 2688


def test_nemotron_3_nano_total_and_active_match_nvidia_s_figures():
    """NVIDIA: '3.2B active (3.6B with embeddings), 31.6B total'; the card: '3.5B active parameters and 30B parameters in total'
    (rounded: the name's 30B). Total 31.58B; active 3.23B GEMM parameters with the LM head, 3.58B with the embedding too."""
    c = load_model("nemotron-3-nano-30b-a3b").param_counts()
    assert c.total == 31_577_940_288
    assert c.total == pytest.approx(31.6e9, rel=0.01)
    assert c.active_matmul == pytest.approx(3.2e9, rel=0.01)
    assert c.active == pytest.approx(3.6e9, rel=0.01)


def test_nemotron_3_nano_experts_have_two_matrices_and_a_wider_shared_expert():
    m = load_model("nemotron-3-nano-30b-a3b")
    c, e, D = m.param_counts(), m.moe, NANO_D
    assert (e.experts, e.top_k, e.shared_experts, e.expert_ffn, e.shared_ffn, e.expert_matrices) == (128, 6, 1, 1856, 3712, 2)
    assert e.expert_params(D) == 2 * D * 1856 and e.shared_params(D) == 2 * D * 3712
    assert c.experts_routed == 23 * 128 * 2 * D * 1856 and c.experts_routed_active == 23 * 6 * 2 * D * 1856
    assert c.experts_shared == 23 * 2 * D * 3712
    assert c.router == 23 * 128 * D
    assert c.mlp_dense == 0 and m.dense_layers == 0


def test_nemotron_3_nano_blocks_and_attention():
    m = load_model("nemotron-3-nano-30b-a3b")
    c, D = m.param_counts(), NANO_D
    pattern = _shipped("nemotron-3-nano-30b-a3b")["hybrid_override_pattern"]
    assert m.blocks == 52 and m.num_layers == 26
    assert m.moe.moe_layers == tuple(i for i, ch in enumerate(pattern) if ch == "E") and len(m.moe.moe_layers) == 23
    assert (m.attention_layers, m.recurrent_layers) == (6, 23)
    # head_dim 128 from the file (Nemotron 3's spelling), not hidden / heads = 84
    assert (m.num_heads, m.num_kv_heads, m.head_dim) == (32, 2, 128)
    mamba = D * (2 * 4096 + 2 * 8 * 128 + 64) + 4096 * D
    assert c.attention == 6 * (D * 32 * 128 + 2 * D * 2 * 128 + 32 * 128 * D) + 23 * mamba
    # the convolution (6144 channels, kernel 4, with bias), A_log, D and dt_bias per Mamba block; the routers' correction bias
    assert c.biases == 23 * (6144 * 5 + 3 * 64) + 23 * 128
    assert c.norms == 52 * D + D + 23 * 4096


def test_nemotron_3_nano_kv_and_state_bytes():
    """KV: 6 x 2 x 2 x 128 x 2 B = 6,144 B/token. State: 23 x (64 x 64 x 128 x 4 B, float32 per mamba_ssm_cache_dtype,
    + 3 x 6144 x 2 B of convolution) = 49,082,368 B per sequence."""
    m = load_model("nemotron-3-nano-30b-a3b")
    assert m.kv_bytes_per_token(precision("bf16")) == 6_144
    assert m.state_bytes_per_sequence() == 23 * (64 * 64 * 128 * 4 + 3 * 6144 * 2) == 49_082_368


def test_nemotron_h_dense_and_moe_blocks_together():
    """A '-' block is a dense MLP of intermediate_size, an 'E' block a MoE: each counted as what it is."""
    base = _shipped("nemotron-3-nano-30b-a3b")
    pattern = base["hybrid_override_pattern"].replace("EMEMEMEME", "-M-MEMEME")
    m = _parse({**base, "hybrid_override_pattern": pattern})
    assert m.dense_layers == 2 and len(m.moe.moe_layers) == 21
    assert m.param_counts().mlp_dense == 2 * 2 * NANO_D * 1856
    # without E blocks there are no experts at all
    m = _parse({**base, "hybrid_override_pattern": base["hybrid_override_pattern"].replace("E", "-")})
    assert m.moe is None and m.dense_layers == 23


@pytest.mark.parametrize("change, field", [
    ({"moe_latent_size": 1024}, "moe_latent_size"),
    ({"hybrid_override_pattern": "X" * 52}, "hybrid_override_pattern"),
    ({"num_experts_per_tok": 129}, "num_experts_per_tok"),
    ({"moe_shared_expert_intermediate_size": None}, "moe_shared_expert_intermediate_size"),
    ({"head_dim": "128"}, "head_dim"),
])
def test_nemotron_h_moe_fields_the_loader_cannot_use_are_refused_in_one_line(change, field):
    """A latent MoE (Nemotron 3 Super: experts behind fc1/fc2 latent projections) is not read: refused, not miscounted."""
    with pytest.raises(SpecError) as err:
        _parse({**_shipped("nemotron-3-nano-30b-a3b"), **change})
    assert err.value.field == field and "\n" not in str(err.value)


# --- MiniMax-M2.7: GQA with per-layer q/k norms, a MoE in every layer ---

def test_minimax_m2_7_total_and_active_match_the_model_card():
    """MiniMax-M2.7: 230B total / 10B active. Total within 1% (228.69B, without the MTP modules); active GEMM parameters
    without the LM head 9.80B, within half a unit of the card's one-digit 10B (10.42B with the LM head)."""
    c = load_model("minimax-m2.7").param_counts()
    assert c.total == 228_689_764_864
    assert c.total == pytest.approx(230e9, rel=0.01)
    assert c.active_matmul - c.lm_head == pytest.approx(10e9, abs=0.5e9)


def test_minimax_m2_7_layout_by_component():
    m = load_model("minimax-m2.7")
    c = m.param_counts()
    D, L, N, K, H, V = m.hidden_size, m.num_layers, m.num_heads, m.num_kv_heads, m.head_dim, m.vocab_size
    assert (D, L, N, K, H, V) == (3072, 62, 48, 8, 128, 200064)
    e = m.moe
    assert (e.experts, e.top_k, e.shared_experts, e.expert_ffn, e.moe_layers) == (256, 8, 0, 1536, tuple(range(L)))
    assert c.attention == L * (D * N * H + 2 * D * K * H + N * H * D)
    assert c.experts_routed == L * 256 * 3 * D * 1536 and c.experts_shared == 0 and c.mlp_dense == 0
    assert c.router == L * 256 * D and c.biases == L * 256  # e_score_correction_bias (use_routing_bias)
    # q_norm and k_norm span all heads (qk_norm_type per_layer): N H + K H weights a layer, not 2 H
    assert m.qk_norm and m.qk_norm_per_layer and c.norms == L * (2 * D + (N + K) * H) + D
    assert c.embedding == c.lm_head == V * D
    assert dict(m.weight_formats)["experts_routed"] == "fp8" and dict(m.weight_formats)["lm_head"] == "bf16"


def test_minimax_m2_7_kv_bytes_per_token():
    """2 x 62 layers x 8 KV heads x 128 x 2 B = 253,952 B/token; partial RoPE (rotary_dim 64) caches whole heads."""
    m = load_model("minimax-m2.7")
    assert m.kv_bytes_per_token(precision("bf16")) == 253_952
    assert m.attention_layers == 62 and m.state_bytes_per_sequence() == 0 and m.attention_windows == ((62, None),)


@pytest.mark.parametrize("change, field", [
    ({"attn_type_list": [0] + [1] * 61}, "attn_type_list"),
    ({"qk_norm_type": "per_head"}, "qk_norm_type"),
    ({"use_routing_bias": False}, "use_routing_bias"),
    ({"shared_intermediate_size": 1536}, "shared_intermediate_size"),
    ({"num_local_experts": "256"}, "num_local_experts"),
])
def test_minimax_m2_fields_the_loader_cannot_use_are_refused_in_one_line(change, field):
    """MiniMax-01's lightning-attention layers (attn_type_list 0) keep a state, not a KV cache: refused, not miscounted."""
    with pytest.raises(SpecError) as err:
        _parse({**_shipped("minimax-m2.7"), **change})
    assert err.value.field == field and "\n" not in str(err.value)


# --- SmolLM3: Llama's layers with NoPE every fourth layer and tied embeddings by default ---

def test_smollm3_3b_total_matches_the_card_and_the_shards():
    """HuggingFaceTB/SmolLM3-3B: 3.08B parameters listed; its two bf16 safetensors shards hold 6,150,235,008 B, of which the
    parameters are all but the shards' JSON headers (tens of kB)."""
    m = load_model("smollm3-3b")
    c = m.param_counts()
    assert c.total == pytest.approx(3.08e9, rel=0.01) and c.active == c.total and c.biases == 0
    assert m.tie_embeddings  # absent from the file: SmolLM3Config's default
    shards = 4_966_315_264 + 1_183_919_744
    assert 0 < shards - 2 * c.total < 100_000


def test_smollm3_kv_bytes_and_the_nope_layers():
    """2 x 36 layers x 4 KV heads x 128 x 2 B = 73,728 B/token; NoPE layers change no parameter and no cached element."""
    m = load_model("smollm3-3b")
    assert m.kv_bytes_per_token(precision("bf16")) == 73_728
    assert m.attention_windows == ((36, None),)
    llama = _parse({**_shipped("smollm3-3b"), "model_type": "llama", "tie_word_embeddings": True})
    assert llama.param_counts() == m.param_counts() and llama.kv_elements_per_token() == m.kv_elements_per_token()


def test_smollm3_config_class_defaults():
    """SmolLM3Config: vocab 128256, tied embeddings, silu, num_key_value_heads = num_attention_heads when absent."""
    cfg = {"model_type": "smollm3", "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 4, "num_attention_heads": 16}
    m = _parse(cfg)
    assert (m.vocab_size, m.num_kv_heads, m.tie_embeddings, m.hidden_act) == (128256, 16, True, "silu")


# --- OLMo 3 and Seed-OSS: Llama-shaped layers with their own norms and biases, each count equal to the Hub's ---

def test_olmo_3_7b_total_equals_the_hub_count_and_its_norms_span_all_heads():
    """allenai/Olmo-3-1025-7B: the Hub lists 7,298,011,136 parameters. q_norm spans all 32 query heads (4,096 weights) and
    k_norm all 32 KV heads; the two per-layer norms sit after their sublayers (the same count as two pre-norms)."""
    m = load_model("olmo-3-7b")
    c = m.param_counts()
    D, L, N, K, H = m.hidden_size, m.num_layers, m.num_heads, m.num_kv_heads, m.head_dim
    assert c.total == 7_298_011_136 and c.biases == 0
    assert c.norms == L * (2 * D + (N + K) * H) + D


def test_olmo3_layer_types_follow_the_config_class_when_the_file_has_none():
    """Olmo3Config.__post_init__: every fourth layer full, the rest through sliding_window; KV 2 x 32 x 32 x 128 x 2 B a token."""
    m = load_model("olmo-3-7b")
    assert m.layer_attention == ("sliding_attention",) * 3 + ("full_attention",) + ("sliding_attention",) * 3 + ("full_attention",) + \
        m.layer_attention[8:] and m.layer_attention.count("full_attention") == 8
    assert m.attention_windows == ((8, None), (24, 4096))
    assert m.kv_bytes_per_token(precision("bf16")) == 524_288
    given = _parse({**_shipped("olmo-3-7b"), "layer_types": ["full_attention"] * 32})
    assert given.attention_windows == ((32, None),)


def test_seed_oss_36b_total_equals_its_checkpoint_index_and_o_proj_has_no_bias():
    """Seed-OSS-36B: 36,151,104,512 parameters in its checkpoint index; q, k and v carry biases, o_proj none."""
    m = load_model("seed-oss-36b")
    c = m.param_counts()
    N, K, H, L = m.num_heads, m.num_kv_heads, m.head_dim, m.num_layers
    assert c.total == 36_151_104_512
    assert c.biases == L * (N + 2 * K) * H and m.qkv_bias and not m.o_bias
    assert m.kv_bytes_per_token(precision("bf16")) == 2 * 64 * 8 * 128 * 2
    with_o_bias = _parse({**_shipped("seed-oss-36b"), "attention_out_bias": True})
    assert with_o_bias.param_counts().biases - c.biases == L * m.hidden_size


def test_olmo3_and_seed_oss_config_class_defaults():
    olmo = _parse({"model_type": "olmo3", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4})
    assert (olmo.vocab_size, olmo.num_kv_heads, olmo.tie_embeddings, olmo.attention_windows) == (50304, 4, False, ((1, None), (3, 4096)))
    seed = _parse({"model_type": "seed_oss", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "num_key_value_heads": 2})
    assert (seed.vocab_size, seed.head_dim, seed.qkv_bias, seed.o_bias) == (155136, 128, True, False)


# --- Kimi Linear: Kimi Delta Attention layers between MLA layers, DeepSeek's MoE ---

def test_kimi_linear_total_and_active_against_the_card():
    """MoonshotAI/Kimi-Linear README: '3B activated parameters and 48B total parameters'. Without the embedding and the untied
    LM head the count is within 1% of 48B (with them 49.12B, +2.3%); the GEMM parameters one token multiplies by, LM head
    included, round to 3B."""
    c = load_model("kimi-linear-48b-a3b").param_counts()
    assert c.total - c.embedding - c.lm_head == pytest.approx(48e9, rel=0.01)
    assert round(c.total / 1e7) == 4912  # llama.cpp's llama-bench on its conversion (PR #17592): "49.12 B" params
    assert c.active_matmul == pytest.approx(3e9, abs=0.5e9)


def test_kimi_linear_layout_by_component():
    m = load_model("kimi-linear-48b-a3b")
    c = m.param_counts()
    D, P, d, heads = m.hidden_size, 32 * 128, 128, 32
    assert m.layer_attention.count("linear_attention") == 20 and m.attention_layers == 7 and m.recurrent_layers == 20
    assert [i + 1 for i, t in enumerate(m.layer_attention) if t == "full_attention"] == [4, 8, 12, 16, 20, 24, 27]
    kda = 4 * D * P + 2 * (D * d + d * P) + D * heads
    mla = D * 32 * 192 + D * (512 + 64) + 512 * 32 * 256 + 32 * 128 * D
    assert c.attention == 20 * kda + 7 * mla
    e = m.moe
    assert (e.experts, e.top_k, e.shared_experts, e.expert_ffn, m.dense_layers) == (256, 8, 1, 1024, 1)
    assert c.experts_routed == 26 * 256 * 3 * D * 1024 and c.mlp_dense == 3 * D * 9216
    # conv weights (3 P x 4), dt_bias (P) and A_log (32) per KDA layer, and the router's score-correction bias per MoE layer
    assert c.biases == 20 * (3 * P * 4 + P + heads) + 26 * 256


def test_kimi_linear_cache_and_state_bytes():
    """MLA's 512 + 64 latent in 7 layers; per sequence 20 layers of 32 x 128 x 128 float32 state (vLLM's kda_state_dtype keeps
    it in float32 whatever the model's dtype) and 3 x 4096 x 3 convolution inputs in the model's bf16."""
    m = load_model("kimi-linear-48b-a3b")
    assert m.kv_bytes_per_token(precision("bf16")) == 7 * 576 * 2
    assert m.state_bytes_per_sequence() == 20 * (32 * 128 * 128 * 4 + 3 * 4096 * 3 * 2) == 43_417_600


@pytest.mark.parametrize("change, field", [
    ({"mla_use_output_gate": True}, "mla_use_output_gate"),
    ({"routed_expert_hidden_size": 1024}, "routed_expert_hidden_size"),
    ({"linear_attn_config": {"head_dim": 128, "num_heads": 32, "short_conv_kernel_size": 4, "full_attn_layers": [4, 8], "kda_layers": [1, 4]}},
     "linear_attn_config.kda_layers"),
    ({"linear_attn_config": {"head_dim": 128, "num_heads": 32, "short_conv_kernel_size": 4, "full_attn_layers": [0]}},
     "linear_attn_config.full_attn_layers"),
    ({"linear_attn_config": [1, 2]}, "linear_attn_config"),
    ({"linear_attn_config": {"head_dim": 128, "num_heads": 32, "full_attn_layers": [4], "use_full_rank_gate": True}},
     "linear_attn_config.use_full_rank_gate"),
])
def test_kimi_linear_fields_the_loader_cannot_use_are_refused_in_one_line(change, field):
    with pytest.raises(SpecError) as err:
        _parse({**_shipped("kimi-linear-48b-a3b"), **change})
    assert err.value.field == field and "\n" not in str(err.value)


def test_kimi_linear_kda_layers_default_to_every_layer_not_full():
    """A file that lists only full_attn_layers: every other layer is a KDA layer (KimiLinearConfig.is_kda_layer)."""
    data = _shipped("kimi-linear-48b-a3b")
    block = {k: v for k, v in data["linear_attn_config"].items() if k != "kda_layers"}
    assert _parse({**data, "linear_attn_config": block}).layer_attention == load_model("kimi-linear-48b-a3b").layer_attention

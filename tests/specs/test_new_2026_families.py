"""GLM-4.5-Air (glm4_moe) and Phi-4 (phi3): each layout rule with its numbers, each count against the model card.

What a card counts is said at each test: GLM-4.5's "106B total / 12B active" counts the main model (the MTP layer
is extra: the HF checkpoint holds 110B); Phi-4's Hugging Face page lists 14.7B parameters (the report says 14B).
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


@pytest.mark.parametrize("model_type, words", [("kimi_linear", "linear attention"),
                                               ("glm_moe_dsa", "Sparse Attention")])
def test_families_whose_layers_the_step_model_lacks_are_refused_with_the_reason(tmp_path, model_type, words):
    """Read as another family, a hybrid or sparse model's KV bytes and reads would be wrong: one line says which layers it has."""
    config = {**json.loads((MODELS_DIR / "llama-3.1-8b.json").read_text()), "model_type": model_type}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(SpecError) as err:
        load_model(str(path))
    assert err.value.field == "model_type" and words in str(err.value) and "\n" not in str(err.value)

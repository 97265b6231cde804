import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.specs.catalog import MODELS_DIR, model_names
from roofline.specs.errors import SpecError
from roofline.specs.models import load_model, parse_config
from roofline.specs.precisions import precision

REQUIRED = ["llama-2-7b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b", "llama-3.2-1b",
            "mistral-7b", "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-72b", "qwen3-235b-a22b", "deepseek-v2-lite", "deepseek-v3",
            "gpt-oss-120b", "gpt-oss-20b", "gemma-3-27b", "kimi-k2", "llama-4-maverick"]


@pytest.mark.parametrize("name", REQUIRED)
def test_every_required_model_loads_with_metadata(name):
    m = load_model(name)
    assert m.status in ("C", "S", "U") and m.source
    c = m.param_counts()
    assert c.total == c.matmul + c.no_arithmetic
    assert c.active <= c.total


def test_every_shipped_model_loads():
    assert set(REQUIRED) <= set(model_names())


def test_llama_3_1_8b_total_parameters():
    """HF meta-llama/Llama-3.1-8B model.safetensors.index.json: total_size 16060522496 bytes of BF16 = 8,030,261,248."""
    assert load_model("llama-3.1-8b").param_counts().total == 16060522496 // 2


def test_llama_3_1_70b_total_parameters():
    """HF API safetensors total for Llama 3.x 70B (same architecture as 3.3-70B-Instruct): 70,553,706,496."""
    assert load_model("llama-3.1-70b").param_counts().total == 70_553_706_496
    assert load_model("llama-3.3-70b").param_counts().total == 70_553_706_496


def test_deepseek_v3_total_and_active_parameters():
    """DeepSeek README_WEIGHTS.md: 671B main-model parameters, 36.6B activated (incl. 0.9B output head, excl. the embedding)."""
    c = load_model("deepseek-v3").param_counts()
    assert c.total == pytest.approx(671e9, rel=1e-3)
    assert c.active_matmul == pytest.approx(36.6e9, rel=2e-3)
    assert c.lm_head == pytest.approx(0.9e9, rel=0.05)


def test_mixtral_total_and_active():
    """Mistral AI: Mixtral 8x7B has 46.7B total and 12.9B active parameters."""
    c = load_model("mixtral-8x7b").param_counts()
    # published to one decimal: within half a unit of the last digit
    assert c.total == pytest.approx(46.7e9, abs=0.05e9)
    assert c.active == pytest.approx(12.9e9, abs=0.05e9)


def test_kv_bytes_per_token_llama_3_1_70b():
    """2 (K,V) x 80 layers x 8 KV heads x 128 x 2 B = 327,680 B/token (models.md)."""
    assert load_model("llama-3.1-70b").kv_bytes_per_token(precision("bf16")) == 327_680


def test_kv_bytes_per_token_deepseek_v3_is_the_mla_latent():
    """DeepSeek-V2 paper: (kv_lora_rank + qk_rope_head_dim) per layer = 576 x 61 x 2 B = 70,272 B/token."""
    m = load_model("deepseek-v3")
    assert m.kv_bytes_per_token(precision("bf16")) == 70_272
    assert m.kv_bytes_per_token(precision("fp8")) == 35_136


def test_head_dim_comes_from_the_config_when_present():
    """Qwen3-235B-A22B: head_dim 128 with hidden 4096 and 64 heads (hidden/heads would give 64)."""
    m = load_model("qwen3-235b-a22b")
    assert m.head_dim == 128 and m.hidden_size // m.num_heads == 64


def test_tied_embeddings_are_counted_once_as_the_lm_head():
    m = load_model("llama-3.2-1b")
    c = m.param_counts()
    assert m.tie_embeddings and c.embedding == 0 and c.lm_head == m.vocab_size * m.hidden_size


def test_moe_fields_are_read():
    m = load_model("deepseek-v3")
    assert (m.moe.experts, m.moe.top_k, m.moe.shared_experts, m.moe.expert_ffn) == (256, 8, 1, 2048)
    assert len(m.moe.moe_layers) == 58 and m.dense_layers == 3
    assert m.mla.q_rank == 1536 and load_model("deepseek-v2-lite").mla.q_rank is None


def _write(tmp_path: Path, data) -> Path:
    p = tmp_path / "config.json"
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


BASE = json.loads((MODELS_DIR / "llama-3.1-8b.json").read_text())


@pytest.mark.parametrize("change, field, message", [
    ({"hidden_size": None}, "hidden_size", "missing"),
    ({"hidden_size": "4096"}, "hidden_size", "expected an integer"),
    ({"hidden_size": True}, "hidden_size", "expected an integer"),
    ({"num_hidden_layers": 0}, "num_hidden_layers", "from 1"),
    ({"num_key_value_heads": 7}, "num_key_value_heads", "divisor"),
    ({"model_type": "bert"}, "model_type", "unsupported architecture"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings", "true or false"),
])
def test_bad_configs_name_the_field(tmp_path, change, field, message):
    data = {**BASE, **change}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(SpecError) as err:
        load_model(str(_write(tmp_path, data)))
    assert err.value.field == field and message in str(err.value) and "\n" not in str(err.value)


def test_malformed_json(tmp_path):
    with pytest.raises(SpecError, match="valid JSON.*line 1"):
        load_model(str(_write(tmp_path, '{"hidden_size": 4096,')))


def test_a_users_config_by_path(tmp_path):
    m = load_model(str(_write(tmp_path, BASE)))
    assert m.param_counts().total == 8_030_261_248 and m.status == "user"


def test_unknown_model_name_suggests():
    with pytest.raises(SpecError, match="did you mean llama-3.1-8b"):
        load_model("llama-3.1-8")


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10, 10**8), st.floats(allow_nan=True), st.text(max_size=12)),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=6)
keys = st.sampled_from(sorted(set(BASE) | {"model_type", "head_dim", "num_local_experts", "num_experts_per_tok", "n_routed_experts",
                                           "kv_lora_rank", "q_lora_rank", "moe_intermediate_size", "first_k_dense_replace", "mlp_only_layers"}))
types = st.sampled_from(["llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v2", "deepseek_v3", "bert"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(types, st.dictionaries(keys, json_values, max_size=6))
def test_fuzz_config_loader_gives_an_architecture_or_a_spec_error(model_type, changes):
    data = {**BASE, "model_type": model_type, **changes}
    try:
        m = parse_config(data, Path("fuzz.json"))
    except SpecError as err:
        assert "\n" not in str(err)
        return
    c = m.param_counts()
    assert c.total > 0 and m.kv_elements_per_token() > 0


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_config_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fz") / "config.json"
    path.write_text(text, encoding="utf-8")
    try:
        load_model(str(path))
    except SpecError:
        pass

"""Layer kinds as physics: linear attention (Gated DeltaNet), Mamba-2 and DeepSeek Sparse Attention in the shared step model and
the attention-kinds sheet, each number by hand from the shipped configs."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.catalog import MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.models import load_model

from roofline import api
from tests.derivations.helpers import context

AK = BY_SLUG["attention-kinds"]
DF = BY_SLUG["decode-floor"]
BK = BY_SLUG["batch-knee"]

# Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers (32 value heads of 128 x 128, 8192 conv channels, kernel 4) and 12 attention layers
# (2 KV heads of 256); BF16 state and cache
QN_STATE = 36 * (32 * 128 * 128 + 8192 * 3) * 2
QN_KV = 12 * 2 * 2 * 256 * 2
# DeepSeek-V3.2: 61 MLA layers (512 + 64 cached), each sparse: 2,048 tokens read, a 128-wide FP8 key and one FP32 scale indexed
DS_KV = 61 * 576 * 2
DS_INDEX = 61 * (128 + 4)
# Nemotron-H-56B: 54 Mamba-2 blocks of 256 heads x 64 x 256 state, 16384 + 2 * 8 * 256 conv channels, kernel 4; 10 attention blocks
NH_STATE = 54 * (256 * 64 * 256 + (16384 + 2 * 8 * 256) * 3) * 2
NH_KV = 10 * 2 * 8 * 128 * 2


def _values(d, model, **inputs):
    return evaluate_exactly(d, context(model=model, **inputs))


def test_spec_counts_by_hand():
    qn, ds, nh = (api.model(m) for m in ("qwen3-next-80b-a3b", "deepseek-v3.2", "nemotron-h-56b-base-8k"))
    assert (qn.attention_layers, qn.recurrent_layers, qn.state_bytes_per_sequence(), qn.kv_bytes_per_token(api.precision("bf16"))) == (
        12, 36, QN_STATE, QN_KV)
    assert (ds.sparse_layers, ds.index_bytes_per_token(), ds.kv_elements_per_token() * 2) == (61, DS_INDEX, DS_KV)
    assert (nh.blocks, nh.num_layers, nh.attention_layers, nh.recurrent_layers, nh.dense_layers) == (118, 59, 10, 54, 54)
    assert nh.state_bytes_per_sequence() == NH_STATE and nh.kv_elements_per_token() * 2 == NH_KV


@pytest.mark.parametrize(("model", "total", "card"), [
    ("qwen3-next-80b-a3b", 79_674_391_296, 80e9),       # "80B in total and 3B activated"
    ("deepseek-v3.2", 671_877_944_064, 671e9),          # the reference config_671B_v3.2.json; 685B with the MTP layer
    ("nemotron-h-56b-base-8k", 56_324_350_464, 56e9),   # the model's name
])
def test_parameter_counts_against_the_card(model, total, card):
    assert api.model(model).param_counts().total == total
    assert abs(total - card) / card < 0.01


def test_step_model_reads_a_hybrids_state_once_a_step_and_a_sparse_layers_top_k():
    qn = _values(DF, "qwen3-next-80b-a3b", batch="4", context="131072 token")
    assert qn["state_bytes_step"] == 2 * 4 * QN_STATE
    assert qn["kv_bytes_step"] == 4 * 131072 * QN_KV and qn["index_bytes_step"] == 0
    ds = _values(DF, "deepseek-v3.2", batch="4", context="131072 token")
    assert ds["read_context"] == 2048 and ds["kept_context"] == 131072
    assert ds["kv_bytes_step"] == 4 * 2048 * DS_KV
    assert ds["index_bytes_step"] == 4 * 131072 * DS_INDEX
    assert ds["flops_index"] == 4 * 131072 * 2 * 61 * 64 * 128  # two FLOPs a channel, 64 heads of 128, every cached token
    assert ds["state_bytes_step"] == 0


def test_memory_holds_every_token_of_a_sparse_layer_and_the_state_of_a_hybrid():
    """The memory fit keeps what a layer keeps (a sparse layer all T + q tokens, with their indexer keys), not what it reads."""
    ds = _values(DF, "deepseek-v3.2", weights="bf16", batch="2", context="65536 token", tp="8")
    weights = ds["memory_per_gpu"] - 2 * ((65536 + 1) * (DS_KV + DS_INDEX))  # MLA's latent sits whole on every GPU
    assert weights == pytest.approx(float(api.model("deepseek-v3.2").param_counts().total * 2 / 8), rel=1e-12)
    qn = _values(DF, "qwen3-next-80b-a3b", batch="2", context="1024 token", tp="2")
    per_sequence = (1024 + 1) * QN_KV // 2 + QN_STATE // 2  # 2 KV heads split over 2 GPUs; the state's heads too
    assert qn["memory_per_gpu"] - _values(DF, "qwen3-next-80b-a3b", batch="1", context="1024 token", tp="2")["memory_per_gpu"] == per_sequence


def test_batch_knee_slope_counts_the_state_and_capacity_holds_it():
    v = _values(BK, "qwen3-next-80b-a3b", context="8192 token", tp="4")
    per_sequence = (8192 + 1) * Fraction(QN_KV, 2) + Fraction(QN_STATE, 4)  # 2 KV heads over 4 GPUs: one each; the state split 4 ways
    free = v["usable_memory"] - v["weight_bytes_resident"]
    assert v["B_fit"] == free / per_sequence


def test_the_crossovers_by_hand():
    qn = _values(AK, "qwen3-next-80b-a3b")
    assert qn["T_state"] == Fraction(2 * QN_STATE * 12, 36 * QN_KV)  # 1,072 tokens
    ds = _values(AK, "deepseek-v3.2")
    assert ds["T_index"] == Fraction(2048 * DS_KV, DS_INDEX)  # about 17,900 tokens with a BF16 latent
    assert ds["T_index_flops"] == Fraction(61 * 128 * (576 + 512) * 2048, 61 * 64 * 128) == 34816
    assert isinstance(ds["T_state"], Missing) and ds["T_state"].kind == "none"
    assert isinstance(qn["T_index"], Missing)
    nh = _values(AK, "nemotron-h-56b-base-8k")
    assert nh["T_state"] == Fraction(2 * NH_STATE * 10, 54 * NH_KV)


def test_a_model_whose_every_layer_attends_reads_exactly_full_attention():
    for model in ("llama-3.1-70b", "deepseek-v3", "qwen3-235b-a22b"):
        v = _values(AK, model, context="32768 token")
        assert v["read_over_full"] == 1, model


def test_a_windowed_model_reads_less_than_full_attention():
    v = _values(AK, "gpt-oss-120b", context="131072 token")
    assert v["read_over_full"] == Fraction(18 * 131072 + 18 * 128, 36 * 131072)


# --- the readers refuse what they cannot count, in one line ---------------------------------------------------------

def _write(tmp_path, config):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def _shipped(name):
    return json.loads((MODELS_DIR / f"{name}.json").read_text().replace("Infinity", "1e999"))


@pytest.mark.parametrize(("change", "field"), [
    ({"hybrid_override_pattern": "M*ME" + "-" * 114}, "n_routed_experts"),   # a MoE block: read, but this config names no experts
    ({"hybrid_override_pattern": "M*"}, "hybrid_override_pattern"),                 # not one type per block
    ({"num_hidden_layers": 117, "hybrid_override_pattern": "M" * 117}, "num_hidden_layers"),  # an odd block count
    ({"mamba_ssm_cache_dtype": "float8"}, "mamba_ssm_cache_dtype"),
])
def test_nemotron_h_configs_it_cannot_count_are_refused(tmp_path, change, field):
    with pytest.raises(SpecError) as err:
        load_model(_write(tmp_path, {**_shipped("nemotron-h-56b-base-8k"), **change}))
    assert err.value.field == field and "\n" not in str(err.value)


def test_qwen3_5_reads_its_language_model_and_a_float32_recurrent_state(tmp_path):
    """Qwen3.5-35B-A3B: Qwen3-Next's layout under text_config; its config keeps the delta-rule state in float32
    (mamba_ssm_dtype) and the convolution state in the model's bfloat16."""
    m = api.model("qwen3.5-35b-a3b")
    assert (m.nested_in, m.attention_layers, m.recurrent_layers, m.attn_output_gate) == ("text_config", 10, 30, True)
    assert m.state_bytes_per_sequence() == 30 * (32 * 128 * 128 * 4 + 3 * 8192 * 2)
    assert m.param_counts().total == 34_660_610_688
    cfg = _shipped("qwen3.5-35b-a3b")
    with pytest.raises(SpecError) as err:
        load_model(_write(tmp_path, {**cfg, "text_config": {**cfg["text_config"], "mamba_ssm_dtype": "int3"}}))
    assert err.value.field == "text_config.mamba_ssm_dtype"


def test_a_float32_ssm_cache_doubles_the_recurrent_state(tmp_path):
    m = load_model(_write(tmp_path, {**_shipped("nemotron-h-56b-base-8k"), "mamba_ssm_cache_dtype": "float32"}))
    assert m.state_bytes_per_sequence() == 54 * (256 * 64 * 256 * 4 + (16384 + 2 * 8 * 256) * 3 * 2)  # the conv state stays BF16


def test_qwen3_next_layer_types_and_interval_agree(tmp_path):
    cfg = _shipped("qwen3-next-80b-a3b")
    types = ["linear_attention" if (i + 1) % 4 else "full_attention" for i in range(48)]
    given = load_model(_write(tmp_path, {**cfg, "layer_types": types}))
    assert given.layer_types == api.model("qwen3-next-80b-a3b").layer_types
    with pytest.raises(SpecError) as err:
        load_model(_write(tmp_path, {**_shipped("llama-3.1-8b"), "layer_types": ["linear_attention"] * 32}))
    assert err.value.field == "layer_types"


def test_sparse_attention_needs_the_query_latent(tmp_path):
    with pytest.raises(SpecError) as err:
        load_model(_write(tmp_path, {**_shipped("deepseek-v3.2"), "q_lora_rank": None}))
    assert err.value.field == "q_lora_rank"


def test_the_readme_quotes_the_new_models_as_their_specs_count_them():
    """The README's figures for the 2026 families come from the specs, not typed by hand."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    for name in ("qwen3-next-80b-a3b", "qwen3.5-35b-a3b", "deepseek-v3.2", "nemotron-h-56b-base-8k"):
        assert f"{api.model(name).param_counts().total / 1e9:.2f}B" in readme, name
    assert f"{QN_STATE / 1e6:.1f} MB of state" in readme
    assert f"{api.model('qwen3.5-35b-a3b').state_bytes_per_sequence() / 1e6:.1f} MB per sequence" in readme
    assert f"{DS_INDEX / 1e3:.2f} kB of indexer keys" in readme

"""The 2025 families, plain MLPs, attention windows and checkpoint formats, each rule with its numbers.

Parameter counts are checked against the figure each model card gives, to the
precision it gives it; what the card counts (vision tower, MTP layers,
embedding in or out of "active") is said at each test.
"""

import json
import warnings
from fractions import Fraction
from pathlib import Path

import pytest
from roofline.derivations.engine.context import make_context, model_components
from roofline.specs.catalog import MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.hardware import SpecWarning, load_hardware
from roofline.specs.models import load_model, parse_config
from roofline.specs.precisions import precision

from roofline import api

GIB = 2**30


def _config(tmp_path: Path, data: dict) -> Path:
    p = tmp_path / "config.json"
    p.write_text(json.dumps(data))
    return p


def _shipped(name: str) -> dict:
    return json.loads((MODELS_DIR / f"{name}.json").read_text())


# --- gpt-oss: the model card's Table 1 (arXiv 2508.10925), two decimals in billions ---

def _gpt_oss_groups(name: str) -> dict[str, int]:
    m = load_model(name)
    c = m.param_counts()
    L, N, D, E = m.num_layers, m.num_heads, m.hidden_size, m.moe.experts
    attn_biases = L * (N * m.head_dim + 2 * m.num_kv_heads * m.head_dim + D)
    return {
        # the card's MLP row: experts, their biases, the biased router and the norm before it
        "mlp": c.experts_routed + c.experts_routed_biases + c.router + L * E + L * D,
        # attention row: q/k/v/o weights and biases, the sinks, the norm before it
        "attention": c.attention + attn_biases + L * N + L * D,
        "embed_unembed": c.embedding + c.lm_head,
        "total": c.total,
        # the card counts the unembedding towards active, not the embedding (Table 1 caption)
        "active": c.active_matmul,
    }


@pytest.mark.parametrize("name, card", [
    ("gpt-oss-120b", {"mlp": 114.71e9, "attention": 0.96e9, "embed_unembed": 1.16e9, "active": 5.13e9, "total": 116.83e9}),
    ("gpt-oss-20b", {"mlp": 19.12e9, "attention": 0.64e9, "embed_unembed": 1.16e9, "active": 3.61e9, "total": 20.91e9}),
])
def test_gpt_oss_parameter_counts_match_the_model_card_table(name, card):
    groups = _gpt_oss_groups(name)
    for row, figure in card.items():
        assert groups[row] == pytest.approx(figure, abs=0.005e9), row  # two decimals in billions


@pytest.mark.parametrize("name, gib", [("gpt-oss-120b", 60.8), ("gpt-oss-20b", 12.8)])
def test_gpt_oss_weight_formats_reproduce_the_checkpoint_size(name, gib):
    """Model card Table 1: checkpoint 60.8 GiB and 12.8 GiB: MXFP4 experts (4.25 bits) plus BF16 everything else."""
    m = load_model(name)
    c = m.param_counts()
    nbytes = sum(getattr(c, group) * precision(fmt).bytes_per_element for group, fmt in m.weight_formats)
    assert float(nbytes) / GIB == pytest.approx(gib, abs=0.05)
    assert dict(m.weight_formats)["experts_routed"] == "mxfp4" and m.checkpoint_weights() == "mxfp4"
    assert {dict(m.weight_formats)[g] for g in ("attention", "router", "embedding", "lm_head", "norms", "biases")} == {"bf16"}


def test_gpt_oss_layout_biases_sinks_and_windows():
    m = load_model("gpt-oss-120b")
    assert m.qkv_bias and m.o_bias and m.attention_sinks and m.moe.router_bias and m.moe.expert_bias
    assert (m.moe.experts, m.moe.top_k, m.moe.shared_experts, m.moe.expert_ffn, len(m.moe.moe_layers)) == (128, 4, 0, 2880, 36)
    assert m.attention_windows == ((18, None), (18, 128))
    assert m.layer_windows[:4] == (128, None, 128, None)
    assert load_model("gpt-oss-20b").attention_windows == ((12, None), (12, 128))


# --- Gemma 3 27B: the model card says 27B; the text model is read from text_config ---

def test_gemma_3_27b_text_model_against_the_card():
    """google/gemma-3-27b-it: '27B'. The text model counts 27.01B; the SigLIP tower (about 0.42B by its shapes) is not counted."""
    m = load_model("gemma-3-27b")
    c = m.param_counts()
    assert m.nested_in == "text_config" and m.model_type == "gemma3_text"
    assert c.total == pytest.approx(27e9, abs=0.5e9)
    # the config leaves vocab_size and tie_word_embeddings out: Gemma3TextConfig's 262208 and true apply
    assert m.vocab_size == 262208 and m.tie_embeddings and c.embedding == 0 and c.lm_head == 262208 * 5376
    # four RMSNorms per layer and per-head q/k norms of head_dim 128 (explicit: 5376/32 would be 168)
    assert m.head_dim == 128 and m.norms_per_layer == 4 and m.qk_norm
    assert c.norms == 62 * (4 * 5376 + 2 * 128) + 5376
    assert c.total - c.lm_head == 25_599_716_096  # the non-embedding parameters


def test_gemma_3_local_and_global_layers():
    """sliding_window_pattern 6 (Gemma3TextConfig default): layers 5, 11, ..., 59 global, the other 52 local of 1024 tokens."""
    m = load_model("gemma-3-27b")
    assert m.attention_windows == ((10, None), (52, 1024))
    assert [i for i, w in enumerate(m.layer_windows) if w is None] == list(range(5, 62, 6))


# --- Llama 4 Maverick: the model card says 17B activated, 400B total ---

def test_llama_4_maverick_against_the_card():
    """The card: 400B total, 17B activated. Text model 400.71B (vision encoder not counted); active 17.18B with the input
    embedding, 16.15B of GEMM parameters without it: the card's 17B is the former."""
    m = load_model("llama-4-maverick")
    c = m.param_counts()
    assert c.total == pytest.approx(400e9, rel=0.005)
    assert c.active == pytest.approx(17e9, abs=0.5e9)
    assert c.active_matmul == pytest.approx(16.15e9, abs=0.005e9)


def test_llama_4_interleaved_moe_layers_and_shared_expert():
    """interleave_moe_layer_step 2: layers 1, 3, ..., 47 MoE (128 experts of 8192 + one shared), the others dense of intermediate_size_mlp 16384."""
    m = load_model("llama-4-maverick")
    c = m.param_counts()
    assert m.moe.moe_layers == tuple(range(1, 48, 2)) and m.dense_layers == 24
    assert (m.moe.experts, m.moe.top_k, m.moe.shared_experts, m.moe.expert_ffn, m.intermediate_size) == (128, 1, 1, 8192, 16384)
    assert c.mlp_dense == 24 * 3 * 5120 * 16384 and c.experts_shared == 24 * 3 * 5120 * 8192
    # explicit moe_layers win over the step (Llama4TextConfig)
    text = {**_shipped("llama-4-maverick")["text_config"], "moe_layers": [0, 1]}
    two = parse_config({"model_type": "llama4", "text_config": text}, Path("m.json"))
    assert two.moe.moe_layers == (0, 1) and two.dense_layers == 46


def test_llama_4_chunked_attention():
    """No no_rope_layers: a NoPE (full-context) layer every no_rope_layer_interval 4; the 36 RoPE layers attend in chunks of 8192."""
    m = load_model("llama-4-maverick")
    assert m.attention_windows == ((12, None), (36, 8192))
    assert [i for i, w in enumerate(m.layer_windows) if w is None] == list(range(3, 48, 4))
    assert set(m.layer_attention) == {"full_attention", "chunked_attention"}
    text = {**_shipped("llama-4-maverick")["text_config"], "no_rope_layers": [1, 0] * 24}
    alt = parse_config({"model_type": "llama4", "text_config": text}, Path("m.json"))
    assert alt.attention_windows == ((24, None), (24, 8192))


# --- Kimi K2: the README says 1T total, 32B activated ---

def test_kimi_k2_against_the_card():
    """MoonshotAI/Kimi-K2 README: 1T total, 32B activated (DeepSeek's convention: LM head in, embedding out; no MTP layer)."""
    m = load_model("kimi-k2")
    c = m.param_counts()
    assert c.total == pytest.approx(1e12, abs=0.05e12)  # one significant figure
    assert c.active_matmul == pytest.approx(32e9, abs=0.5e9)  # two
    assert (m.moe.experts, m.moe.top_k, m.moe.shared_experts, len(m.moe.moe_layers), m.num_heads) == (384, 8, 1, 60, 64)
    assert m.kv_elements_per_token() == 61 * 576  # the MLA latent, as DeepSeek-V3's


def test_deepseek_family_fp8_checkpoints_keep_router_and_embeddings_in_bf16():
    for name in ("deepseek-v3", "kimi-k2"):
        m = load_model(name)
        formats = dict(m.weight_formats)
        assert m.checkpoint_weights() == "fp8"
        assert formats["experts_routed"] == formats["attention"] == "fp8"
        assert formats["router"] == formats["embedding"] == formats["lm_head"] == "bf16"


# --- windows of the families shipped before ---

def test_mistral_7b_v0_1_sliding_window_is_read():
    """Its config.json: sliding_window 4096, on every layer (Mistral)."""
    m = load_model("mistral-7b")
    assert m.attention_windows == ((32, 4096),)
    assert set(m.layer_attention) == {"sliding_attention"}


@pytest.mark.parametrize("name", ["llama-3.1-8b", "mixtral-8x7b", "qwen2.5-72b", "qwen3-235b-a22b", "deepseek-v3"])
def test_full_context_models_have_no_window(name):
    """Mixtral: sliding_window null; Qwen2.5-72B: sliding_window 131072 but use_sliding_window false."""
    m = load_model(name)
    assert m.attention_windows == ((m.num_layers, None),)


def test_qwen_windows_follow_use_sliding_window_and_max_window_layers(tmp_path):
    base = _shipped("qwen2.5-72b")
    on = load_model(str(_config(tmp_path, {**base, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 70})))
    assert on.attention_windows == ((70, None), (10, 4096))


def test_layer_types_win_over_the_family_rule(tmp_path):
    base = _shipped("mistral-7b")
    m = load_model(str(_config(tmp_path, {**base, "layer_types": ["full_attention"] * 31 + ["sliding_attention"]})))
    assert m.attention_windows == ((31, None), (1, 4096))


def test_gemma_2_alternates_sliding_and_global_layers(tmp_path):
    """Gemma2Config: even layers slide (sliding_window 4096), odd ones attend globally."""
    cfg = {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
           "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000, "sliding_window": 4096, "hidden_activation": "gelu_pytorch_tanh"}
    m = load_model(str(_config(tmp_path, cfg)))
    assert m.attention_windows == ((13, None), (13, 4096)) and m.layer_windows[0] == 4096 and m.layer_windows[1] is None
    assert m.tie_embeddings and m.norms_per_layer == 4


# --- plain (two-matrix) MLPs: GPT-2, OPT, Falcon, Phi ---

GPT2 = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768,
        "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257}
OPT_125M = {"activation_function": "relu", "architectures": ["OPTForCausalLM"], "do_layer_norm_before": True, "ffn_dim": 3072, "hidden_size": 768,
            "max_position_embeddings": 2048, "model_type": "opt", "num_attention_heads": 12, "num_hidden_layers": 12, "vocab_size": 50272,
            "word_embed_proj_dim": 768, "torch_dtype": "float16"}
PHI_2 = {"architectures": ["PhiForCausalLM"], "hidden_act": "gelu_new", "hidden_size": 2560, "intermediate_size": 10240,
         "max_position_embeddings": 2048, "model_type": "phi", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
         "partial_rotary_factor": 0.4, "qk_layernorm": False, "tie_word_embeddings": False, "vocab_size": 51200}
FALCON_7B = {"alibi": False, "architectures": ["FalconForCausalLM"], "bias": False, "hidden_size": 4544, "model_type": "falcon", "multi_query": True,
             "new_decoder_architecture": False, "num_attention_heads": 71, "num_hidden_layers": 32, "parallel_attn": True, "vocab_size": 65024}


@pytest.mark.parametrize("config, total", [
    # GPT-2 small: 124,439,808 (tied head, learned positions; the figure nanoGPT and HF print)
    (GPT2, 124_439_808),
    # facebook/opt-125m: 125,239,296 (sum of numel over model.parameters(), as several scripts print it)
    (OPT_125M, 125_239_296),
    # microsoft/phi-2: 2,779,683,840 (HfApi.model_info safetensors total)
    (PHI_2, 2_779_683_840),
    # tiiuae/falcon-7b by its module shapes (FalconForCausalLM dump): qkv 4544 -> 4672, dense 4544 -> 4544, MLP 4544 -> 18176 -> 4544,
    # bias=False, one input LayerNorm per parallel block, ln_f, lm_head tied to 65024 x 4544
    (FALCON_7B, 32 * (4544 * 4672 + 4544 * 4544 + 2 * 4544 * 18176 + 2 * 4544) + 2 * 4544 + 65024 * 4544),
])
def test_plain_mlp_parameter_counts(tmp_path, config, total):
    m = load_model(str(_config(tmp_path, config)))
    assert m.mlp_kind == "plain" and m.mlp_matrices == 2
    assert m.param_counts().total == total


def test_falcon_7b_is_6_92_billion(tmp_path):
    assert load_model(str(_config(tmp_path, FALCON_7B))).param_counts().total == 6_921_720_704


def test_gpt2_fields_and_positions(tmp_path):
    m = load_model(str(_config(tmp_path, GPT2)))
    c = m.param_counts()
    assert (m.hidden_size, m.num_layers, m.num_heads, m.intermediate_size) == (768, 12, 12, 3072)  # n_inner null: 4 x n_embd
    assert m.tie_embeddings and c.embedding == 1024 * 768  # the position table; the token table is the tied LM head
    assert m.hidden_act == "gelu_new" and m.norm == "layer"


@pytest.mark.parametrize("config, field", [
    ({**_shipped("llama-3.1-8b"), "hidden_act": "swiglu"}, "hidden_act"),
    ({**GPT2, "activation_function": "swiglu"}, "activation_function"),
    ({**_shipped("llama-3.1-8b"), "hidden_act": 3}, "hidden_act"),
])
def test_an_mlp_that_cannot_be_determined_is_refused(tmp_path, config, field):
    with pytest.raises(SpecError) as err:
        load_model(str(_config(tmp_path, config)))
    assert err.value.field == field and "\n" not in str(err.value)


# --- quantization_config ---

def _quantized(tmp_path: Path, q: dict) -> object:
    return load_model(str(_config(tmp_path, {**_shipped("llama-3.1-8b"), "quantization_config": q})))


@pytest.mark.parametrize("q, fmt", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}, "int4-g128"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}, "int4-g128"),
    ({"quant_method": "gptq", "bits": 4, "group_size": -1}, "int4"),
    ({"quant_method": "gptq", "bits": 8, "group_size": -1}, "int8"),
    ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8"),
])
def test_quantization_config_is_read(tmp_path, q, fmt):
    m = _quantized(tmp_path, q)
    formats = dict(m.weight_formats)
    assert m.checkpoint_weights() == fmt and formats["attention"] == formats["mlp_dense"] == fmt
    assert formats["embedding"] == formats["lm_head"] == formats["norms"] == "bf16"  # torch_dtype bfloat16


def test_modules_to_not_convert_keeps_a_group_unquantized(tmp_path):
    m = _quantized(tmp_path, {"quant_method": "awq", "bits": 4, "group_size": 64, "modules_to_not_convert": ["self_attn"]})
    assert dict(m.weight_formats)["attention"] == "bf16" and dict(m.weight_formats)["mlp_dense"] == "int4-g64"


@pytest.mark.parametrize("q", [
    {"quant_method": "compressed-tensors", "config_groups": {}},
    {"quant_method": "bitsandbytes", "load_in_4bit": True},
    {"quant_method": "gptq", "bits": 3, "group_size": 128},
])
def test_a_quantization_that_cannot_be_used_warns_which_precision_is_used(tmp_path, q):
    """Before: silently computed as BF16. Now one warning line names the method and the precision used instead."""
    m = _quantized(tmp_path, q)
    assert m.quantization is not None and not m.quantization.read and m.checkpoint_weights() is None
    with pytest.warns(SpecWarning) as caught:
        api.context(api.get("decode-floor"), "h100-sxm", m.path)
    (w,) = caught
    line = str(w.message)
    assert q["quant_method"] in line and "computes every weight as bf16" in line and "\n" not in line


def test_a_read_quantization_is_computed_as_stored_without_a_warning(tmp_path):
    """An AWQ checkpoint: its linears in int4-g128, its LM head in BF16 (AWQ leaves it), read per component; b_w is the
    always-read weights' parameter-weighted mean width, the LM head in it at 2 bytes."""
    m = _quantized(tmp_path, {"quant_method": "awq", "bits": 4, "group_size": 128})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx = api.context(api.get("decode-floor"), "h100-sxm", m.path)
    c = m.param_counts()
    g128 = Fraction(1, 2) + Fraction(2, 128)
    assert ctx.weights.origin == "checkpoint" and ctx.weights.of("attention").bytes_per_element == g128
    head = ctx.weights.of("lm_head").bytes_per_element
    read = c.attention + c.mlp_dense + c.lm_head
    assert ctx.weights.widths(model_components(m))[0] == (g128 * (c.attention + c.mlp_dense) + head * c.lm_head) / read
    assert ctx.math.math == "bf16"  # weight-only INT4: BF16 math

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx = make_context(load_hardware("h100-sxm"), m, weights="int4-g128")  # every component in it
    assert ctx.weights.uniform is not None and ctx.weights.uniform.bytes_per_element == g128


@pytest.mark.parametrize("q, field", [
    ("fp8", "quantization_config"),
    ({"bits": 4}, "quantization_config.quant_method"),
    ({"quant_method": "awq", "modules_to_not_convert": "lm_head"}, "quantization_config.modules_to_not_convert"),
])
def test_bad_quantization_configs_name_the_field(tmp_path, q, field):
    with pytest.raises(SpecError) as err:
        _quantized(tmp_path, q)
    assert err.value.field == field and "\n" not in str(err.value)


def test_mxfp4_is_4_25_bits_with_its_scale():
    """OCP MX v1.0: 32 FP4 (E2M1) elements share one E8M0 scale: 4 + 8/32 = 4.25 bits; the gpt-oss card says 4.25 bits."""
    p = precision("mxfp4")
    assert p.bytes_per_element == Fraction(17, 32) and p.bytes_per_element * 8 == Fraction(17, 4)
    assert p.math == "bf16" and "8-bit scale per 32" in p.description


# --- bad configs: one line naming the field ---

@pytest.mark.parametrize("config, field", [
    ({**_shipped("mistral-7b"), "layer_types": ["full_attention"] * 3}, "layer_types"),
    ({**_shipped("mistral-7b"), "layer_types": ["linear_attention"] * 32}, "layer_types"),
    ({**_shipped("llama-3.1-8b"), "layer_types": ["sliding_attention"] * 32}, "sliding_window"),
    ({**_shipped("llama-3.1-8b"), "layer_types": ["chunked_attention"] * 32}, "attention_chunk_size"),
    ({**_shipped("mistral-7b"), "sliding_window": -1}, "sliding_window"),
    ({"model_type": "gemma3", "text_config": [1, 2]}, "text_config"),
    ({"model_type": "llava", "text_config": {"model_type": "bert"}}, "text_config.model_type"),
    ({"model_type": "gemma3", "text_config": {**_shipped("gemma-3-27b")["text_config"], "hidden_size": "big"}}, "text_config.hidden_size"),
    ({"model_type": "llama4", "text_config": {**_shipped("llama-4-maverick")["text_config"], "moe_layers": [0, 99]}}, "text_config.moe_layers"),
    ({"model_type": "llama4", "text_config": {**_shipped("llama-4-maverick")["text_config"], "no_rope_layers": [1, 2]}}, "text_config.no_rope_layers"),
    ({**OPT_125M, "word_embed_proj_dim": 512}, "word_embed_proj_dim"),
    ({**_shipped("deepseek-v3"), "attention_bias": True}, "attention_bias"),
    ({**_shipped("deepseek-v3"), "torch_dtype": "float8"}, "torch_dtype"),
])
def test_bad_new_fields_are_refused_in_one_line(tmp_path, config, field):
    with pytest.raises(SpecError) as err:
        load_model(str(_config(tmp_path, config)))
    assert err.value.field == field and "\n" not in str(err.value)


def test_a_shipped_sheet_default_or_table_row_does_not_warn_it_says_so_on_the_sheet():
    """A sheet's own default (mla-absorption's DeepSeek-V3) is not the user's pick: no warning line; the sheet names the checkpoint's format."""

    with warnings.catch_warnings():
        warnings.simplefilter("error", SpecWarning)
        sheet = api.derive("mla-absorption")
    assert "as the checkpoint stores them" in dict(sheet.spec_facts)["Weights"]

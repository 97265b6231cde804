"""Checkpoint formats of 2026 (issue 37, item 3): NVFP4 at 4.5 bits, MXFP8, and the quantization_config dialects of NVIDIA
ModelOpt (quant_method modelopt: quant_algo NVFP4, FP8 or MIXED_PRECISION with quantized_layers, exclude_modules,
kv_cache_quant_algo) and compressed-tensors (llm-compressor: config_groups whose weights give type, num_bits and group_size;
ignore with plain names and `re:` patterns), as those tools write them into config.json."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from roofline.specs.catalog import MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.models import load_model
from roofline.specs.precisions import precision

LLAMA = json.loads((MODELS_DIR / "llama-3.1-8b.json").read_text())
QWEN_MOE = json.loads((MODELS_DIR / "qwen3-235b-a22b.json").read_text())


def _formats(tmp_path, base, quantization):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**base, "quantization_config": quantization}))
    m = load_model(str(path))
    return dict(m.quantization.formats) if m.quantization.read else m.quantization.note, m


def test_nvfp4_is_four_and_a_half_bits_and_mxfp8_eight_and_a_quarter():
    """NVFP4: E2M1 with one E4M3 scale per 16 (the FP32 per-tensor scale is one number a matrix); fp4-g16 counts a BF16 scale."""
    assert precision("nvfp4").bytes_per_element * 8 == Fraction(9, 2)
    assert precision("fp4-g16").bytes_per_element * 8 == 5
    assert precision("mxfp8").bytes_per_element * 8 == Fraction(33, 4)
    assert precision("nvfp4").math == "fp4" and precision("mxfp8").math == "fp8"


def test_mxfp6_is_six_and_a_quarter_bits_at_a_chips_fp6_peak():
    """OCP MXFP6: 6-bit values in blocks of 32 with one E8M0 scale. CDNA 4 runs FP6 at its FP4 rate; Hopper lists no FP6 peak."""
    from roofline.specs.errors import SpecError

    from roofline import api

    assert precision("mxfp6").bytes_per_element * 8 == Fraction(25, 4) and precision("fp6").bytes_per_element * 8 == 6
    assert precision("mxfp6").math == "fp6"
    mi355x = api.hardware("mi355x")
    assert mi355x.peak("fp6") == mi355x.peak("fp4")
    with pytest.raises(SpecError) as err:
        api.derive("decode-floor", hardware="h100-sxm", weights="mxfp6")
    assert err.value.field == "peak_dense.fp6"


def test_modelopt_nvfp4_converts_the_decoders_linears_and_keeps_what_it_excludes(tmp_path):
    formats, m = _formats(tmp_path, QWEN_MOE, {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                                              "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head", "*mlp.gate"]})
    assert formats["attention"] == formats["experts_routed"] == "nvfp4"
    assert formats["lm_head"] == formats["embedding"] == formats["router"] == "bf16"
    assert "kv_cache_quant_algo" in m.quantization_summary() and m.checkpoint_weights() == "nvfp4"


def test_modelopt_fp8_and_an_unknown_algorithm(tmp_path):
    formats, _ = _formats(tmp_path, LLAMA, {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]})
    assert formats["attention"] == formats["mlp_dense"] == "fp8" and formats["lm_head"] == "bf16"
    note, _ = _formats(tmp_path, LLAMA, {"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"})
    assert "W4A8_AWQ" in note and "not read" in note


def test_modelopt_mixed_precision_reads_a_format_per_component(tmp_path):
    layers = {"model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}, "model.layers.0.self_attn.o_proj": {"quant_algo": "FP8"},
              "model.layers.0.mlp.experts": {"quant_algo": "NVFP4", "group_size": 16},
              "model.layers.1.mlp.experts": {"quant_algo": "NVFP4", "group_size": 16}}
    formats, _ = _formats(tmp_path, QWEN_MOE, {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": layers})
    assert formats["attention"] == "fp8" and formats["experts_routed"] == "nvfp4" and formats["lm_head"] == "bf16"
    layers["model.layers.1.self_attn.q_proj"] = {"quant_algo": "NVFP4"}
    note, _ = _formats(tmp_path, QWEN_MOE, {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": layers})
    assert "two formats" in note


def test_modelopt_mixed_precision_without_its_layers_is_one_line(tmp_path):
    with pytest.raises(SpecError) as err:
        _formats(tmp_path, LLAMA, {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"})
    assert err.value.field == "quantization_config.quantized_layers" and "\n" not in str(err.value)


NVFP4_GROUP = {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True}}


@pytest.mark.parametrize("weights, expected", [
    ({"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}, "nvfp4"),
    ({"num_bits": 8, "type": "float", "strategy": "channel", "group_size": None}, "fp8"),
    ({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}, "int4-g128"),
    ({"num_bits": 8, "type": "int", "strategy": "channel", "group_size": None}, "int8"),
])
def test_compressed_tensors_schemes(tmp_path, weights, expected):
    formats, _ = _formats(tmp_path, LLAMA, {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
                                            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}}})
    assert formats["attention"] == formats["mlp_dense"] == expected and formats["lm_head"] == formats["embedding"] == "bf16"


def test_compressed_tensors_ignore_takes_regular_expressions(tmp_path):
    formats, _ = _formats(tmp_path, QWEN_MOE, {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
                                               "ignore": ["lm_head", "re:.*mlp.gate$", "re:.*self_attn.*"], "config_groups": {"group_0": NVFP4_GROUP}})
    assert formats["experts_routed"] == "nvfp4"
    assert formats["attention"] == formats["router"] == formats["lm_head"] == "bf16"


def test_compressed_tensors_it_cannot_map_is_said_not_guessed(tmp_path):
    two = {"dense": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "group_size": 128}},
           "moe": {"targets": ["FusedMoE"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}}}
    note, m = _formats(tmp_path, QWEN_MOE, {"quant_method": "compressed-tensors", "config_groups": two})
    assert "2 config groups" in note and "not read" in note and m.checkpoint_weights() is None
    with pytest.raises(SpecError) as err:
        _formats(tmp_path, LLAMA, {"quant_method": "compressed-tensors", "config_groups": []})
    assert err.value.field == "quantization_config.config_groups"

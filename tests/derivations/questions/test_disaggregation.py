"""disaggregation: the handover, transfer against recompute, the decode pool's batch and the prefill:decode ratio, each by
hand against the sheet's own steps."""

from __future__ import annotations

from fractions import Fraction

import pytest
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG

from roofline import api

from ..helpers import context

DIS = BY_SLUG["disaggregation"]
SERVING = {"prompt_len": "1024 token", "output_len": "512 token", "context": "1280 token"}


def _values(hardware="h100-sxm", model="llama-3.1-8b", **inputs):
    return evaluate_exactly(DIS, context(hardware, model, **{**SERVING, **inputs}))


def test_the_handover_is_the_prompts_cache_per_gpu_over_the_nic():
    """Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 B = 131,072 B a token; 1,024 tokens over 50 GB/s."""
    v = _values()
    assert v["kv_bytes_request_gpu"] == 1024 * 131072
    assert v["t_transfer"] == Fraction(1024 * 131072, 50 * 10**9)
    assert v["t_transfer_scaleup"] == Fraction(1024 * 131072, 450 * 10**9)


def test_transfer_against_recompute_per_token_and_the_floor_prompt():
    v = _values()
    assert v["transfer_over_recompute"] == v["transfer_per_token"] / v["recompute_per_token"]
    assert v["S_transfer_floor"] * v["transfer_per_token"] == v["t_weights"]  # its cache takes a weight read to send


def test_the_decode_pool_runs_the_line_without_the_prompts():
    v = _values()
    assert v["t_per_sequence_decode"] == v["t_per_sequence"] - v["t_prompt_per_sequence"]
    assert v["B_slo_decode"] == (Fraction(50, 1000) - v["t_zero"]) / v["t_per_sequence_decode"]
    assert v["B_slo_decode"] >= v["B_slo"]  # without prompts in its steps a pool fits at least as many sequences


def test_the_pools_are_balanced_by_their_rates():
    v = _values()
    t, w = v["t_prefill"], v["wait_budget_split"]
    assert w == 1 - t - v["t_transfer"]
    assert v["lambda_prefill_group"] == 2 * w / (t + 2 * w) / t
    assert v["prefill_per_decode_group"] == v["lambda_decode_group"] / v["lambda_prefill_group"]
    assert v["goodput_per_gpu_split"] == v["lambda_decode_group"] / (1 + v["prefill_per_decode_group"])  # one GPU a group
    assert v["goodput_per_gpu_colocated"] == v["goodput_requests"]


def test_a_chip_without_a_scale_out_figure_is_one_line():
    with pytest.raises(Exception) as err:
        api.derive("disaggregation", hardware="l4")
    assert "scaleout_bandwidth_per_direction" in str(err.value) and "\n" not in str(err.value).strip()

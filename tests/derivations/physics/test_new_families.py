"""The 2025 families and plain-MLP configs on today's sheets: the rebuilds from the config still equal the spec layer's counts."""

import json

import pytest
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG

from tests.derivations.helpers import context

FPT = BY_SLUG["flops-per-token"]
RANKING = BY_SLUG["decode-op-ranking"]
GPT2 = {"activation_function": "gelu_new", "model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257}


@pytest.fixture
def gpt2(tmp_path):
    p = tmp_path / "gpt2.json"
    p.write_text(json.dumps(GPT2))
    return str(p)


@pytest.mark.parametrize("model", ["gpt-oss-120b", "gemma-3-27b", "llama-4-maverick"])
def test_rebuild_matches_the_exact_count_for_the_new_families(model):
    """Biases, sinks and q/k norms do no matmul; Llama 4's dense layers use intermediate_size_mlp and its MoE layers a shared expert."""
    v = evaluate_exactly(FPT, context(model=model), ["params_matmul_rebuilt", "params_matmul"])
    assert v["params_matmul_rebuilt"] == v["params_matmul"]


def test_a_plain_mlp_is_rebuilt_with_two_matrices(gpt2):
    """GPT-2: up and down only (m_mlp = 2); the gated 3 D F would overcount its MLPs by half."""
    v = evaluate_exactly(FPT, context(model=gpt2), ["n_mlp", "params_matmul_rebuilt", "params_matmul"])
    assert v["n_mlp"] == 2 * 768 * 3072
    assert v["params_matmul_rebuilt"] == v["params_matmul"] == 12 * (4 * 768 * 768 + 2 * 768 * 3072) + 50257 * 768


def test_decode_op_ranking_runs_a_plain_mlp_as_up_and_down(gpt2):
    """The fused gate-up GEMM of a gated MLP is the up projection alone (D x F) in a plain one."""
    plain = evaluate_exactly(RANKING, context(model=gpt2), ["flops_gate_up", "flops_down"])
    gated = evaluate_exactly(RANKING, context(model="llama-3.1-8b"), ["flops_gate_up", "flops_down"])
    assert plain["flops_gate_up"] == plain["flops_down"] == 2 * 768 * 3072
    assert gated["flops_gate_up"] == 2 * gated["flops_down"]

"""moe-experts: experts touched per MoE decode step, bytes per step, and where the MoE advantage comes from.

Anchors from the configs (Mixtral 8x7B: E 8, top-2; DeepSeek-V3: E 256, top-8,
one shared expert, 58 MoE layers), closed forms against their equations, the
variance against brute-force enumeration, and the physics as hypothesis
properties.
"""

import itertools
import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.physics import primitives as pr
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.catalog import hardware_names, model_names
from roofline.specs.errors import SpecError

from roofline import api
from tests.derivations.helpers import context

MOE = BY_SLUG["moe-experts"]
FAST = settings(max_examples=40, deadline=None)
MOE_MODELS = sorted(m for m in model_names() if api.model(m).moe is not None)
DENSE_MODELS = sorted(m for m in model_names() if api.model(m).moe is None)


def values(model, *names, hardware="h100-sxm", **inputs):
    return evaluate_exactly(MOE, context(hardware, model, **inputs), names)


# --- experts touched -------------------------------------------------------------------------------

@FAST
@given(st.sampled_from(MOE_MODELS), st.integers(1, 4096), st.integers(1, 4096), st.integers(1, 4))
def test_experts_touched_rises_with_batch_between_top_k_and_all(model, b1, b2, q):
    lo, hi = sorted((b1, b2))
    moe = api.model(model).moe
    a = values(model, "experts_touched", batch=str(lo), tokens_per_step=f"{q} token")["experts_touched"]
    b = values(model, "experts_touched", batch=str(hi), tokens_per_step=f"{q} token")["experts_touched"]
    assert moe.top_k - 1e-9 <= a <= b <= moe.experts + 1e-9
    if lo == 1 and q == 1:
        assert a == moe.top_k  # exactly top-k at one token


def test_experts_touched_anchors():
    """Mixtral at B = 8: 8 (1 - (3/4)^8) = 7.199; DeepSeek-V3 at B = 64: 256 (1 - (31/32)^64) = 222.4."""
    assert float(values("mixtral-8x7b", "experts_touched", batch="8")["experts_touched"]) == pytest.approx(8 * (1 - 0.75**8), rel=1e-12)
    assert float(values("deepseek-v3", "experts_touched", batch="64")["experts_touched"]) == pytest.approx(256 * (1 - (31 / 32) ** 64), rel=1e-12)


def _brute_force(E, k, n):
    """Mean and variance of the distinct experts n tokens pick, each choosing k of E uniformly: every outcome enumerated."""
    subsets = list(itertools.combinations(range(E), k))
    counts = [len(set().union(*picks)) for picks in itertools.product(subsets, repeat=n)]
    mean = sum(counts) / len(counts)
    return mean, sum(c * c for c in counts) / len(counts) - mean**2


@pytest.mark.parametrize("E, k, n", [(4, 2, 3), (5, 2, 2), (6, 3, 3), (5, 1, 4), (8, 2, 2)])
def test_variance_matches_enumeration_and_stays_under_the_binomial_bound(E, k, n):
    mean, var = _brute_force(E, k, n)
    args = (sp.Integer(n), sp.Integer(E), sp.Integer(k))
    assert float(pr.experts_touched(*args)) == pytest.approx(mean, rel=1e-12)
    assert float(pr.experts_touched_variance(*args)) == pytest.approx(var, rel=1e-9, abs=1e-12)
    assert float(pr.experts_touched_variance(*args)) <= float(pr.experts_touched_variance_bound(*args)) + 1e-12


@FAST
@given(st.sampled_from(MOE_MODELS), st.integers(1, 2048))
def test_variance_is_between_zero_and_its_bound(model, batch):
    v = values(model, "experts_touched_variance", "experts_touched_variance_bound", batch=str(batch))
    assert -1e-12 <= v["experts_touched_variance"] <= v["experts_touched_variance_bound"] + 1e-12
    if batch == 1:
        assert v["experts_touched_variance"] == 0  # one token reads exactly its top-k


# --- the half and nearly-all batches --------------------------------------------------------------

def test_b_half_closed_form_and_anchors():
    """ln 2 / ln(E/(E - k)): Mixtral 2.409 sequences, DeepSeek-V3 21.83."""
    assert float(values("mixtral-8x7b", "B_half")["B_half"]) == pytest.approx(math.log(2) / math.log(8 / 6), rel=1e-12)
    assert float(values("deepseek-v3", "B_half")["B_half"]) == pytest.approx(math.log(2) / math.log(256 / 248), rel=1e-12)


@FAST
@given(st.sampled_from(MOE_MODELS), st.sampled_from(["0.5", "0.9", "0.99", "0.999"]), st.integers(1, 3))
def test_coverage_batches_solve_their_equation(model, share, q):
    """At B_phi (continuous) the expected share read is phi; q tokens per sequence divide the batch by q."""
    m = api.model(model).moe
    v = values(model, "B_half", "B_nearly_all", nearly_all=share, tokens_per_step=f"{q} token")
    for name, target in (("B_half", 0.5), ("B_nearly_all", float(share))):
        tokens = float(v[name]) * q
        assert 1 - (1 - m.top_k / m.experts) ** tokens == pytest.approx(target, rel=1e-9)
    assert float(v["B_nearly_all"]) >= float(v["B_half"]) - 1e-9


def test_all_experts_read_only_in_the_limit():
    v = values("mixtral-8x7b", "B_nearly_all", nearly_all="1")
    assert getattr(v["B_nearly_all"], "kind", None) == "none" and "infinite batch" in v["B_nearly_all"].reason


# --- bytes per step ---------------------------------------------------------------------------------

PARTS = ("bytes_attention", "bytes_dense_mlp", "bytes_shared_experts", "bytes_routers", "bytes_lm_head", "bytes_routed_experts")


@FAST
@given(st.sampled_from(MOE_MODELS), st.integers(1, 1024))
def test_bytes_by_component_sum_to_the_shared_weight_bytes(model, batch):
    v = values(model, "weight_bytes", "bytes_per_step", "bytes_kv", "bytes_ratio", *PARTS, batch=str(batch))
    assert float(sum(v[p] for p in PARTS)) == pytest.approx(float(v["weight_bytes"]), rel=1e-12)
    assert float(v["bytes_per_step"]) == pytest.approx(float(v["weight_bytes"] + v["bytes_kv"]), rel=1e-12)
    assert v["bytes_ratio"] >= 1 - 1e-12


def test_deepseek_bytes_components_from_the_config():
    """DeepSeek-V3: 58 MoE layers, one shared expert of 3 * 7168 * 2048 weights, routers 7168 x 256 per layer, BF16 (the
    checkpoint's own formats: every expert in FP8, one byte a weight)."""
    assert values("deepseek-v3", "expert_bytes")["expert_bytes"] == 3 * 7168 * 2048
    v = evaluate_exactly(MOE, context("h100-sxm", "deepseek-v3", weights="bf16"), (*PARTS, "expert_bytes"))
    expert = 3 * 7168 * 2048 * 2
    assert v["expert_bytes"] == expert
    assert v["bytes_shared_experts"] == 58 * expert
    assert v["bytes_routers"] == 58 * 7168 * 256 * 2
    assert v["bytes_routed_experts"] == 58 * 8 * expert  # top-8 at one token


@pytest.mark.parametrize("model", DENSE_MODELS)
def test_dense_models_are_refused_in_one_line(model):
    with pytest.raises(SpecError, match="dense model: it has no MoE layer"):
        api.derive("moe-experts", model=model)


# --- where the advantage comes from -----------------------------------------------------------------

@pytest.mark.parametrize("model", MOE_MODELS)
@pytest.mark.parametrize("hardware", ["a100-sxm-80gb", "h100-sxm", "b200", "tpu-v6e", "l4"])
def test_payoff_closed_form_and_every_expert_read_there(model, hardware):
    # every weight in BF16 (a quantized checkpoint's own formats move the payoff by its bytes: the engine checks that closed form)
    v = evaluate_exactly(MOE, context(hardware, model, weights="bf16"), ("B_payoff", "B_dense_ridge", "params_all", "flops_ratio", "coverage_at_payoff"))
    hw, c = api.hardware(hardware), api.model(model).param_counts()
    ridge = float(hw.peak("bf16").to("flop/s").magnitude) / float(hw.memory_bandwidth.to("B/s").magnitude)
    assert float(v["B_dense_ridge"]) == pytest.approx(ridge, rel=1e-12)  # 2 B/param over 2 flop/(param token)
    assert float(v["B_payoff"]) == pytest.approx(ridge * float(v["params_all"]) / c.active_matmul, rel=1e-12)
    assert float(v["flops_ratio"]) == pytest.approx((c.matmul) / c.active_matmul, rel=1e-12)
    assert float(v["coverage_at_payoff"]) > 0.9999  # the all-experts approximation holds at the payoff


@FAST
@given(st.sampled_from(MOE_MODELS), st.integers(1, 8192))
def test_moe_never_beats_a_dense_model_of_its_active_size_and_never_loses_to_one_of_its_total_size(model, batch):
    v = values(model, "cost_vs_active", "advantage_vs_total", "flops_ratio", batch=str(batch))
    assert v["cost_vs_active"] >= 1 - 1e-12
    assert 1 - 1e-12 <= v["advantage_vs_total"] <= v["flops_ratio"] + 1e-9


# --- claims, one test per number --------------------------------------------------------------------

def test_claim_one_token_reads_the_active_weights():
    assert values("mixtral-8x7b", "weights_ratio", batch="1")["weights_ratio"] == 1


def test_claim_bytes_advantage_gone_once_nearly_every_expert_is_read():
    """DeepSeek-V3 at B = 160 on H100 SXM: 254.4 of 256 experts read; a dense model of the total size is only 1.006x slower."""
    v = values("deepseek-v3", "advantage_vs_total", batch="160")
    assert float(v["advantage_vs_total"]) == pytest.approx(1.006, abs=0.001)


@pytest.mark.parametrize("model, ratio", [("deepseek-v3", 18.30), ("mixtral-8x7b", 3.653)])
def test_claim_advantage_is_the_flop_ratio_at_large_batch(model, ratio):
    v = values(model, "advantage_vs_total", "flops_ratio", batch="16384")
    assert float(v["advantage_vs_total"]) == pytest.approx(float(v["flops_ratio"]), rel=1e-9)
    assert float(v["flops_ratio"]) == pytest.approx(ratio, abs=0.005)


def test_sheet_claims_hold_at_defaults():
    sheet = api.derive("moe-experts")
    assert [c.holds for c in sheet.claims] == [True] * len(sheet.claims)


# --- skewed routing ---------------------------------------------------------------------------------

@FAST
@given(st.sampled_from(MOE_MODELS), st.integers(1, 512), st.sampled_from(["0.1", "0.25", "0.5"]), st.sampled_from(["0.5", "0.7", "0.9"]))
def test_skew_reads_no_more_experts_than_uniform(model, batch, hot, share):
    v = values(model, "experts_touched", "experts_touched_skewed", "hot_expert_load", batch=str(batch), hot_experts=hot, hot_share=share)
    assert v["experts_touched_skewed"] <= v["experts_touched"] + 1e-9
    m = api.model(model).moe
    assert float(v["hot_expert_load"]) == pytest.approx(min(1.0, m.top_k * float(share) / (m.experts * float(hot))) * m.experts / m.top_k, rel=1e-12)


@pytest.mark.parametrize("model", MOE_MODELS)
def test_skew_with_share_equal_to_fraction_is_uniform(model):
    v = values(model, "experts_touched", "experts_touched_skewed", batch="16", hot_experts="0.25", hot_share="0.25")
    assert float(v["experts_touched_skewed"]) == pytest.approx(float(v["experts_touched"]), rel=1e-12)


def test_every_moe_model_on_every_chip_has_finite_headlines():
    for m in MOE_MODELS:
        for h in hardware_names():
            v = evaluate_exactly(MOE, context(h, m), MOE.results)
            assert all(float(v[r]) > 0 and math.isfinite(float(v[r])) for r in MOE.results), (m, h)

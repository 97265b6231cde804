"""headline-check: one division, and the unstated conditions that would make a claim true.

Anchors from the Llama 3.1 8B config (7,504,658,432 GEMM weights, 32 layers,
8 KV heads of 128, BF16) and the H100 SXM datasheet (3.35 TB/s); closed forms
against their equations in real contexts; the physics as hypothesis properties.
"""

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.context import model_components
from roofline.derivations.engine.declare import Solve
from roofline.derivations.engine.sheet import Missing, context_values, evaluate_exactly
from roofline.derivations.questions.headline_check import DEFAULT_CLAIM
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.errors import SpecError

from roofline import api
from tests.derivations.helpers import context

HC = BY_SLUG["headline-check"]
FAST = settings(max_examples=40, deadline=None)
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-235b-a22b", "deepseek-v3", "deepseek-v2-lite")
CHIPS = ("h100-sxm", "h200", "b200", "mi300x", "tpu-v5e", "l4")

# Llama 3.1 8B, BF16, batch 1, context 8192, one H100 SXM
P_READ = 7_504_658_432
W = 2 * P_READ
KV = 8192 * 32 * 8 * 128 * 2 * 2  # T * L * K * H * (K and V) * 2 B
KV_ONE_STREAM = KV // 8
BETA = Fraction(335, 100) * 10**12


def test_the_division_for_llama_8b_on_h100():
    v = evaluate_exactly(HC, context(claimed_tokens_per_s="500 token/s"))
    assert v["bytes_per_token"] == W + KV  # per token at q = 1: every weight and the cache once
    assert v["bandwidth_needed"] == (W + KV) * 500
    assert v["bandwidth_ratio"] == (W + KV) * 500 / BETA  # about 2.4
    assert float(v["bandwidth_ratio"]) == pytest.approx(2.4005, rel=1e-4)
    assert v["t_claim"] == Fraction(1, 500)


def test_conditions_sized_for_llama_8b_on_h100():
    v = evaluate_exactly(HC, context(claimed_tokens_per_s="500 token/s"))
    budget = BETA / 500  # bytes one step may move
    assert v["max_bits_per_weight"] == 8 * (budget - KV) / P_READ  # about 6.0 bits: INT4 fits, FP8 does not
    assert float(v["max_bits_per_weight"]) == pytest.approx(5.9976, rel=1e-4)
    assert v["B_aggregate"] == W * 500 / (BETA - KV * 500)  # about 2.67 users
    assert v["B_aggregate_min"] == v["B_aggregate"]  # dense: the two bounds agree
    assert v["n_gpus_split"] == (W + KV) * 500 / BETA
    assert v["n_gpus_replicated"] == W * 500 / (BETA - KV_ONE_STREAM * 500)
    assert v["gpus_needed"] == max(v["n_gpus_split"], v["n_gpus_replicated"])
    assert v["q_speculative"] == v["q_speculative_all_experts"] == (W + KV) * 500 / BETA
    assert v["T_fits"].kind == "none" and "weights alone" in v["T_fits"].reason  # 7.5 TB/s of weights alone
    assert v["B_fits"] == Fraction(80 * 10**9 - 2 * 8_030_261_248, 8193 * KV // 8192)  # about 59.5 sequences


def test_default_claim_is_the_illustrative_input_and_is_printed():
    inp = next(i for i in HC.inputs if i.name == "claimed_tokens_per_s")
    assert inp.default == DEFAULT_CLAIM and "illustrative" in inp.meaning
    sheet = api.derive("headline-check")
    assert sheet.results["bandwidth_needed"].float == pytest.approx(float(evaluate_exactly(HC, context())["bandwidth_needed"]))
    with pytest.raises(SpecError):
        inp.parse("0 token/s")
    assert inp.parse("500").to("token/s").magnitude == 500  # a rate of tokens: a bare number is read in token/s
    with pytest.raises(SpecError):
        inp.parse("500 B/s")  # a wrong dimension is refused


def _at_root(step: Solve, ctx) -> tuple[float, float]:
    """Both sides of a closed form's equation in a real context, the root substituted for its variable."""
    values = {s: x for s, x in context_values(HC, ctx).items() if not isinstance(x, Missing)}
    root = HC.expanded[step.name].xreplace(values)
    lhs, rhs = step.equation
    point = {**values, step.for_: root}
    return float(sp.N(lhs.xreplace(point), 30)), float(sp.N(rhs.xreplace(point), 30))


@pytest.mark.parametrize("model, tp, batch", [("llama-3.1-8b", "1", "1"), ("llama-3.1-70b", "8", "4"), ("mixtral-8x7b", "2", "16"),
                                              ("deepseek-v3", "8", "1"), ("qwen3-235b-a22b", "4", "32")])
def test_every_closed_form_meets_its_equation_in_real_contexts(model, tp, batch):
    ctx = context("h200", model, tp=tp, batch=batch, context="2048 token", claimed_tokens_per_s="100 token/s")
    values = evaluate_exactly(HC, ctx)
    for step in HC.steps:
        if isinstance(step, Solve) and not isinstance(values[step.name], Missing):
            lhs, rhs = _at_root(step, ctx)
            assert lhs == pytest.approx(rhs, rel=1e-12), (model, step.name)


@FAST
@given(st.sampled_from(MODELS), st.sampled_from(CHIPS), st.integers(1, 512), st.integers(1, 131072), st.integers(1, 16),
       st.fractions(Fraction(1, 100), Fraction(99, 100)))
def test_a_claim_below_the_bandwidth_floor_is_reported_physical(model, chip, batch, ctx_len, tp, share):
    inputs = {"batch": str(batch), "context": f"{ctx_len} token", "tp": str(tp)}
    floor = evaluate_exactly(HC, context(chip, model, **inputs), ["bytes_per_token", "bandwidth_datasheet"])
    ceiling = floor["bandwidth_datasheet"] / floor["bytes_per_token"]  # token/s per user at the datasheet bandwidth
    claim = sp.Float(sp.Rational(share.numerator, share.denominator) * ceiling, 30)
    ctx = context(chip, model, claimed_tokens_per_s=f"{claim} token/s", **inputs)
    v = evaluate_exactly(HC, ctx)
    assert float(v["bandwidth_ratio"]) == pytest.approx(float(share), rel=1e-9)
    assert v["bandwidth_ratio"] < 1
    # each condition then asks for no more than the setup already has
    assert v["max_bits_per_weight"] > 8 * ctx.weights.widths(model_components(ctx.model))[0]  # the weights in use already fit
    assert v["gpus_needed"] < tp
    assert v["q_speculative"] < 1
    assert v["T_fits"] > ctx_len


@FAST
@given(st.sampled_from(MODELS), st.sampled_from(CHIPS), st.integers(1, 256), st.integers(1, 131072), st.integers(1, 16),
       st.integers(1, 10**5), st.integers(2, 50))
def test_needed_bandwidth_scales_linearly_with_the_claim(model, chip, batch, ctx_len, tp, claim, factor):
    inputs = {"batch": str(batch), "context": f"{ctx_len} token", "tp": str(tp)}
    names = ["bandwidth_needed", "bandwidth_ratio", "compute_ratio"]
    one = evaluate_exactly(HC, context(chip, model, claimed_tokens_per_s=f"{claim} token/s", **inputs), names)
    many = evaluate_exactly(HC, context(chip, model, claimed_tokens_per_s=f"{claim * factor} token/s", **inputs), names)
    for name in names:
        assert float(many[name]) == pytest.approx(factor * float(one[name]), rel=1e-12), name


@FAST
@given(st.sampled_from(MODELS), st.integers(1, 256), st.integers(1, 65536), st.integers(1, 16), st.integers(10, 5000))
def test_moe_bounds_are_ordered_and_agree_for_dense_models(model, batch, ctx_len, tp, claim):
    v = evaluate_exactly(HC, context("b200", model, batch=str(batch), context=f"{ctx_len} token", tp=str(tp),
                             claimed_tokens_per_s=f"{claim} token/s"))
    dense = api.model(model).moe is None
    assert v["q_speculative"] <= v["q_speculative_all_experts"] * (1 + 1e-12)
    if dense:
        assert v["q_speculative"] == v["q_speculative_all_experts"]
    if not isinstance(v["B_aggregate"], Missing):
        assert v["B_aggregate_min"] <= v["B_aggregate"]
        assert dense is False or v["B_aggregate_min"] == v["B_aggregate"]
    else:
        assert isinstance(v["B_aggregate_min"], Missing)  # the KV cache alone decides both


def test_gpus_needed_is_where_the_per_gpu_bytes_meet_the_budget():
    """Llama 3.1 70B (8 KV heads): past 8 GPUs each keeps one head, so the replicated count decides."""
    v = evaluate_exactly(HC, context("h100-sxm", "llama-3.1-70b", claimed_tokens_per_s="1000 token/s", context="1024 token"))
    assert v["n_gpus_split"] > 8 and v["gpus_needed"] == v["n_gpus_replicated"] > v["n_gpus_split"]
    few = evaluate_exactly(HC, context("h100-sxm", "llama-3.1-70b", claimed_tokens_per_s="100 token/s", context="1024 token"))
    assert few["n_gpus_split"] < 8 and few["gpus_needed"] == few["n_gpus_split"]


def test_no_weight_width_fits_when_the_cache_alone_is_too_slow():
    """Llama 2 7B (MHA, 512 kB per token) at 8K context: 4.3 GB of cache per step, 2.1 TB/s at 500 token/s on an A100's 2.04."""
    v = evaluate_exactly(HC, context("a100-sxm-80gb", "llama-2-7b", claimed_tokens_per_s="500 token/s"))
    assert v["max_bits_per_weight"].kind == "none" and "KV cache alone" in v["max_bits_per_weight"].reason
    assert v["B_aggregate"].kind == "none"
    assert float(v["bandwidth_ratio"]) > 1


def test_a_sparse_peak_halves_the_compute_ratio_but_buys_no_bandwidth():
    v = evaluate_exactly(HC, context(claimed_tokens_per_s="20000 token/s"))
    assert v["compute_ratio_sparse"] == v["compute_ratio"] / 2
    flops_per_token = 2 * P_READ + 4 * 32 * 32 * 128 * 8192  # kappa P_act + attention at T = 8192
    assert v["compute_ratio"] == Fraction(flops_per_token * 20000) / (Fraction(9894, 10) * 10**12)
    s4 = evaluate_exactly(HC, context(claimed_tokens_per_s="20000 token/s", sparse_peak_factor="4"))
    assert s4["bandwidth_ratio"] == v["bandwidth_ratio"] and s4["compute_ratio_sparse"] == v["compute_ratio"] / 4

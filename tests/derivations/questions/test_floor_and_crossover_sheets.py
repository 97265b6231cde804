"""The decode-floor, flops-per-token, prefill-decode-crossover and ridge-coincidence sheets (issue 3): anchors, crossovers, properties."""

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.engine.sweep import parse_axis, sweep
from roofline.derivations.questions.registry import BY_SLUG

from tests.derivations.helpers import context

DF, FPT, PDC, RC = (BY_SLUG[s] for s in ("decode-floor", "flops-per-token", "prefill-decode-crossover", "ridge-coincidence"))


def test_decode_floor_h100_llama_8b():
    """Llama 3.1 8B: 7,504,658,432 GEMM weights (8,030,261,248 minus the embedding and norms), 2 B each, over 3.35 TB/s."""
    v = evaluate_exactly(DF, context())
    assert v["weight_bytes"] == 2 * 7_504_658_432
    assert v["t_floor"] == sp.Rational(2 * 7_504_658_432, 3_350_000_000_000)
    assert v["kv_bytes_per_token"] == 131_072
    assert v["tokens_per_s_ceiling"] == 1 / v["t_floor"]


def test_ridge_coincidence_exact_rational_from_the_style_guide():
    """STYLE.md: with 989.4 Tflop/s, 3.35 TB/s, 2 B/param and q = 1 token, B* is exactly 19788/67."""
    v = evaluate_exactly(RC, context())
    assert v["B_cross"] == sp.Rational(19788, 67) == v["ridge_point"] == v["T_cross"]


def test_int4_breaks_the_coincidence_by_four():
    v = evaluate_exactly(RC, context(weights="int4"))
    assert v["B_cross"] == v["ridge_point"] / 4


def test_prefill_crossover_does_not_depend_on_the_model():
    a = evaluate_exactly(PDC, context(model="llama-3.1-8b"))["T_cross"]
    b = evaluate_exactly(PDC, context(model="llama-3.1-70b"))["T_cross"]
    assert a == b


def test_ttft_at_cross_is_the_weight_read_time_plus_a_little_attention():
    v = evaluate_exactly(PDC, context())
    assert v["t_weights"] <= v["ttft_at_cross"] <= v["t_weights"] * Fraction(102, 100)


def test_flops_per_token_break_context():
    """T_break = 2 P_act / (4 L N H); for Llama 3.1 8B: 2*7,504,658,432 / (4*32*32*128)."""
    v = evaluate_exactly(FPT, context())
    assert v["ctx_break"] == sp.Rational(2 * 7_504_658_432, 4 * 32 * 32 * 128)
    assert v["ctx_break_prefill"] == 2 * v["ctx_break"]
    assert v["params_matmul_rebuilt"] == v["params_matmul"]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 512), st.integers(1, 200_000))
def test_t_max_is_where_the_batch_limit_meets_the_ridge(batch, ctx_len):
    v = evaluate_exactly(RC, context(batch=str(batch), context=f"{ctx_len} token"))
    below = evaluate_exactly(RC, context(context=f"{max(1, int(v['T_max']) - 1)} token"))
    above = evaluate_exactly(RC, context(context=f"{int(v['T_max']) + 2} token"))
    assert below["intensity_batch_limit"] > below["ridge_point"] > above["intensity_batch_limit"]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2048), st.sampled_from(["h100-sxm", "h200", "b200", "mi300x"]))
def test_at_the_crossover_both_sides_are_equal(batch, hw):
    ctx = context(hardware=hw, batch=str(batch))
    v = evaluate_exactly(RC, ctx)
    at = evaluate_exactly(RC, ctx.with_overrides(batch=str(sp.Rational(v["B_cross"]).p / sp.Rational(v["B_cross"]).q)))
    assert float(at["t_cmp"]) == pytest.approx(float(at["t_mem"]), rel=1e-12)


@pytest.mark.parametrize("a, b", [("0.2 ms", "200 µs"), ("0.0002 s", "200000 ns")])
def test_results_do_not_change_when_inputs_come_in_other_units(a, b):
    assert evaluate_exactly(DF, context(t_fixed=a)) == evaluate_exactly(DF, context(t_fixed=b))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 256), st.integers(1, 256), st.integers(1, 65536))
def test_step_time_grows_with_batch_and_context(b1, b2, t):
    lo, hi = sorted((b1, b2))
    a = evaluate_exactly(DF, context(batch=str(lo), context=f"{t} token"))
    b = evaluate_exactly(DF, context(batch=str(hi), context=f"{t} token"))
    c = evaluate_exactly(DF, context(batch=str(hi), context=f"{t + 1000} token"))
    assert a["t_step"] <= b["t_step"] < c["t_step"]


def test_floor_is_below_the_modelled_step():
    v = evaluate_exactly(DF, context())
    assert v["t_step"] > v["t_floor"]


def test_sweep_matches_pointwise_evaluation():
    import numpy as np

    batches = np.array([1.0, 8.0, 64.0])
    swept = sweep(DF, context(), "t_step", [parse_axis(DF, "batch=1,8,64")]).values
    for b, s in zip(batches, swept, strict=True):
        assert s == pytest.approx(float(evaluate_exactly(DF, context(batch=str(int(b))))["t_step"]), rel=1e-12)


def test_tensor_parallel_divides_the_bytes():
    one = evaluate_exactly(DF, context(model="llama-3.1-70b"))
    eight = evaluate_exactly(DF, context(model="llama-3.1-70b", tp="8"))
    assert eight["bytes_per_gpu"] == one["bytes_per_gpu"] / 8
    assert one["memory_fraction"] > 1 > eight["memory_fraction"]

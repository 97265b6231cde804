"""batch-knee: the line t(B) = t0 + B*c, its ceiling and knee, the largest batch that fits, and which binds.

Anchors from the configs and spec files (Llama 3.1 8B: 8,030,261,248 parameters,
131,072 B of BF16 KV per token; H100 SXM: 80 GB as printed, 3.35 TB/s); the
physics as hypothesis properties: throughput never exceeds its ceiling and rises
with batch; the knee is where the line's throughput is half the ceiling.
"""

import functools
import math

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.physics import glossary as gl
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.catalog import model_names

from roofline import api
from tests.derivations.helpers import HAND_SET, context

BK = BY_SLUG["batch-knee"]
FAST = settings(max_examples=40, deadline=None)
MODELS = model_names()
CHIPS = ["h100-sxm", "h200", "b200", "mi300x", "l4", "tpu-v5e"]


def _v(only=None, **kw):
    """The sheet's values at a context (`only`: just these steps, and what they read)."""
    hw, model = kw.pop("hardware", "h100-sxm"), kw.pop("model", "llama-3.1-8b")
    return evaluate_exactly(BK, context(hw, model, **kw), only)


# --- anchors ---------------------------------------------------------------------------------------

def test_largest_batch_that_fits_llama_8b_h100_8k():
    """(0.9 * 80e9 - 8,030,261,248 * 2) / 131,072 B = 426,784.3 cached tokens; over 8,193 per sequence: 52.09, so 52."""
    v = _v(tp="1")
    tokens = (sp.Rational(9, 10) * 80 * 10**9 - 8_030_261_248 * 2) / 131_072
    assert v["tokens_fit"] == tokens
    assert v["B_fit"] == tokens / 8193
    assert v["B_max_kv"] == 52


def test_the_whole_batch_fits_and_one_more_does_not():
    for model, hw, tp in (("llama-3.1-8b", "h100-sxm", "1"), ("llama-3.1-70b", "h200", "2"), ("mixtral-8x7b", "h100-sxm", "2"), ("deepseek-v3", "h200", "16")):
        names = ("B_max_kv", "memory_per_gpu", "usable_memory")
        b = int(_v(names, model=model, hardware=hw, tp=tp)["B_max_kv"])
        at = _v(names, model=model, hardware=hw, tp=tp, batch=str(b))
        over = _v(names, model=model, hardware=hw, tp=tp, batch=str(b + 1))
        assert at["memory_per_gpu"] <= at["usable_memory"] < over["memory_per_gpu"], model


def test_knee_and_ceiling_llama_8b_h100():
    """t0 = 15.01 GB / (0.8 * 3.35 TB/s) + 0.2 ms; c = 8192 * 131,072 B / (0.8 * 3.35 TB/s) on one GPU."""
    v = _v(tp="1", **HAND_SET)
    t0 = 2 * 7_504_658_432 / (0.8 * 3.35e12) + 0.2e-3
    c = 8192 * 131_072 / (0.8 * 3.35e12)
    assert float(v["t_zero"]) == pytest.approx(t0, rel=1e-12)
    assert float(v["t_per_sequence"]) == pytest.approx(c, rel=1e-12)
    assert float(v["throughput_ceiling"]) == pytest.approx(1 / c, rel=1e-12)
    assert float(v["B_knee"]) == pytest.approx(t0 / c, rel=1e-12)


def test_default_sheet_headlines():
    """Llama 3.1 70B on two H200s at 8K context (the sheet's default TP of 2), at the default (fitted) engine profile (t_seq in the slope)."""
    r = {k: v.float for k, v in _sheet().results.items()}
    assert r["B_knee"] == pytest.approx(68.16, rel=1e-3)
    assert r["throughput_ceiling"] == pytest.approx(2697, rel=1e-3)
    assert r["B_max_kv"] == 41


# --- the line, its ceiling and its knee ------------------------------------------------------------

def test_knee_closed_form_is_half_the_ceiling():
    line = BK.expanded["throughput_line"].xreplace({gl.B: BK.expanded["B_knee"]})
    assert sp.simplify(line - BK.expanded["throughput_ceiling"] / 2) == 0


@FAST
@given(st.sampled_from(MODELS), st.sampled_from(CHIPS), st.integers(1, 2048), st.integers(1, 131072), st.sampled_from(["1", "2", "8"]))
@example("deepseek-v3.2", "tpu-v5e", 2030, 32768, "1")  # attention memory-bound, the indexer compute-bound: one roofline each
def test_throughput_never_exceeds_its_ceiling_and_rises_with_batch(model, hw, batch, ctx_len, tp):
    names = ["throughput", "throughput_line", "throughput_ceiling", "throughput_ceiling_compute"]
    a = evaluate_exactly(BK, context(hw, model, batch=str(batch), context=f"{ctx_len} token", tp=tp), names)
    b = evaluate_exactly(BK, context(hw, model, batch=str(2 * batch), context=f"{ctx_len} token", tp=tp), names)
    if any(isinstance(x, Missing) for x in (*a.values(), *b.values())):
        assert all(x.kind == "n/a" for x in (*a.values(), *b.values()) if isinstance(x, Missing))  # a chip without a link at TP > 1
        return
    ceiling = float(a["throughput_ceiling"])
    for v in (a, b):
        assert float(v["throughput"]) <= ceiling * (1 + 1e-12)
        assert float(v["throughput"]) <= float(v["throughput_ceiling_compute"]) * (1 + 1e-12)
        assert float(v["throughput_line"]) < ceiling
    assert float(b["throughput"]) >= float(a["throughput"]) * (1 - 1e-12)
    assert float(b["throughput_line"]) > float(a["throughput_line"])


@FAST
@given(st.sampled_from([m for m in MODELS if api.model(m).moe is None]), st.sampled_from(CHIPS), st.integers(1, 131072), st.sampled_from(["1", "4"]))
def test_the_line_is_the_step_model_until_compute_binds_dense(model, hw, ctx_len, tp):
    base = evaluate_exactly(BK, context(hw, model, context=f"{ctx_len} token", tp=tp), ["B_compute", "B_knee"])
    if any(isinstance(x, Missing) for x in base.values()):
        return
    for batch in {1, max(1, math.floor(float(base["B_compute"]))), max(1, math.floor(float(base["B_knee"])))}:
        if batch > float(base["B_compute"]):
            continue
        v = evaluate_exactly(BK, context(hw, model, batch=str(batch), context=f"{ctx_len} token", tp=tp), ["throughput", "throughput_line"])
        assert float(v["throughput"]) == pytest.approx(float(v["throughput_line"]), rel=1e-9)


@FAST
@given(st.sampled_from(MODELS), st.sampled_from(CHIPS), st.integers(1, 131072), st.sampled_from(["1", "2", "8"]))
def test_knee_is_where_the_line_reaches_half_its_ceiling(model, hw, ctx_len, tp):
    v = evaluate_exactly(BK, context(hw, model, context=f"{ctx_len} token", tp=tp), ["t_zero", "t_per_sequence", "B_knee", "throughput_ceiling"])
    if any(isinstance(x, Missing) for x in v.values()):
        return
    t0, c, knee, q = float(v["t_zero"]), float(v["t_per_sequence"]), float(v["B_knee"]), 1.0
    assert knee == pytest.approx(t0 / c, rel=1e-12)
    assert knee * q / (t0 + knee * c) == pytest.approx(float(v["throughput_ceiling"]) / 2, rel=1e-12)


# --- which limit binds ------------------------------------------------------------------------------

def test_limits_trade_places_at_t_trade_llama_70b_two_h200():
    v = _v(model="llama-3.1-70b", hardware="h200", tp="2", **HAND_SET)
    t = float(v["T_trade"])
    assert 500 < t < 600
    below = _v(model="llama-3.1-70b", hardware="h200", tp="2", context=f"{math.floor(t)} token", **HAND_SET)["knee_over_capacity"]
    above = _v(model="llama-3.1-70b", hardware="h200", tp="2", context=f"{math.ceil(t)} token", **HAND_SET)["knee_over_capacity"]
    assert below < 1 < above
    assert v["knee_over_capacity_long"] > 1  # the cache binds at long context


def test_ratio_tends_to_its_long_context_limit():
    v = _v(model="llama-3.1-70b", hardware="h100-sxm", tp="8", context="131072 token", **HAND_SET)
    assert float(v["knee_over_capacity"]) == pytest.approx(float(v["knee_over_capacity_long"]), rel=0.01)
    assert isinstance(v["T_trade"], Missing) and v["T_trade"].kind == "none"  # the knee is the smaller at every context


def test_moe_line_reads_every_expert_and_the_knee_touches_nearly_all():
    # the sheet as `roofline derive` computes it (the compiled plan; sympy's exact power of the knee is minutes)
    v = api.derive("batch-knee", hardware="h100-sxm", model="mixtral-8x7b", inputs={"tp": "2"}).values
    assert v["experts_at_knee"].float == pytest.approx(8, rel=1e-6)
    # in BF16 (the FP8 checkpoint as stored reads half the bytes a step, so its knee comes at a smaller batch: 242 experts)
    ds = api.derive("batch-knee", hardware="h200", model="deepseek-v3", weights="bf16", inputs={"tp": "16"}).values
    assert ds["experts_at_knee"].float > 0.98 * 256


# --- refusals: one line where no batch fits --------------------------------------------------------

def test_weights_that_do_not_fit_leave_no_batch():
    v = _v(model="llama-3.1-70b", hardware="h100-sxm", tp="1")
    assert isinstance(v["B_max_kv"], Missing) and "weights alone" in v["B_max_kv"].reason
    assert float(v["B_knee"]) > 0  # the line itself still has a knee


def test_not_one_whole_sequence_fits_is_none_not_zero():
    v = _v(model="llama-3.1-8b", hardware="l4", tp="1", context="131072 token")
    assert 0 < float(v["B_fit"]) < 1
    assert isinstance(v["B_max_kv"], Missing) and "not one whole sequence" in v["B_max_kv"].reason


# --- the claims, one test per number ---------------------------------------------------------------

@functools.cache
def _sheet():
    return api.derive("batch-knee")


def _claims():
    return {c.text[:25]: c for c in _sheet().claims}


def test_claim_ceiling_from_the_cache_at_default_context():
    c = _claims()["At this context the ceili"]
    assert c.holds is True
    assert c.left.float / c.right.float == pytest.approx(0.7865, abs=1e-3)  # compute lowers the ceiling by 21%


def test_claim_ceiling_from_the_cache_at_32k():
    c = _claims()["At a 32K-token context th"]
    assert c.holds is True
    assert c.left.float / c.right.float == pytest.approx(0.9311, abs=1e-3)


def test_claim_ceiling_from_the_cache_fails_at_512_tokens():
    c = _claims()["At a 512-token context th"]
    assert c.holds is False
    assert c.left.float / c.right.float == pytest.approx(0.3834, abs=1e-3)  # compute binds at short context

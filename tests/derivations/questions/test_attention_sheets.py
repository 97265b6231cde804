"""The attention sheets: attention-intensity (decode-op-ranking: test_decode_op_ranking.py; mla-absorption and flash-attention-io: test_flash_mla_sheets.py).

Anchors from the configs (Llama 3.1 70B: N 64, K 8, H 128; DeepSeek-V3: N 128,
r_kv 512, d_R 64, d_nope 128, d_v 128), closed forms against their equations,
and the physics as hypothesis properties.
"""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import evaluate
from roofline.derivations.physics import glossary as gl
from roofline.derivations.questions.registry import BY_SLUG

from roofline import api
from tests.derivations.helpers import context

AI = BY_SLUG["attention-intensity"]
FAST = settings(max_examples=50, deadline=None)


def expanded(d, name):
    return d.expanded[name]


# --- attention-intensity -------------------------------------------------------------------------

def test_gqa_attention_intensity_is_the_group_size_for_llama_70b():
    v = evaluate(AI, context(model="llama-3.1-70b"))
    assert v["group_size"] == 8
    assert v["intensity_attention"] == 8  # 2*G*q/b_kv in flop/B with q = 1 token, b_kv = 2 B/token
    assert v["intensity_attention_equal_widths"] == v["intensity_attention"]  # d_k = d_v is exact for GQA


def test_mla_attention_intensity_exact_and_equal_widths_for_deepseek_v3():
    v = evaluate(AI, context(model="deepseek-v3", weights="bf16"))
    assert v["group_size"] == 128
    assert v["intensity_attention"] == sp.Rational(128 * (4 * 512 + 2 * 64), (512 + 64) * 2)  # 241.78 flop/B
    assert v["intensity_attention_equal_widths"] == 256  # 4N/b_kv with d_k = d_v = r_kv + d_R
    assert v["ridge_point"] == sp.Rational(9894, 10) * 10**12 / (sp.Rational(335, 100) * 10**12)


def test_mla_conventions_fp8_doubles_q_multiplies_tp_divides():
    base = evaluate(AI, context(model="deepseek-v3"))["intensity_attention"]
    assert evaluate(AI, context(model="deepseek-v3", kv="fp8"))["intensity_attention"] == 2 * base
    assert evaluate(AI, context(model="deepseek-v3", tokens_per_step="2 token"))["intensity_attention"] == 2 * base
    assert evaluate(AI, context(model="deepseek-v3", tp="8"))["intensity_attention"] == base / 8


def test_tp_does_not_change_gqa_intensity_until_it_exceeds_the_kv_heads():
    base = evaluate(AI, context(model="llama-3.1-70b"))["intensity_attention"]
    assert evaluate(AI, context(model="llama-3.1-70b", tp="8"))["intensity_attention"] == base
    assert evaluate(AI, context(model="llama-3.1-70b", tp="16"))["intensity_attention"] == base / 2


def test_intensity_attention_is_flops_over_cache_bytes():
    """The closed form shown on the sheet equals F_att / W_cache symbolically: B and T cancel."""
    ratio = expanded(AI, "flops_attention") / expanded(AI, "bytes_attention_cache")
    assert sp.simplify(ratio - expanded(AI, "intensity_attention")) == 0
    assert gl.B not in expanded(AI, "intensity_attention").free_symbols
    assert gl.T not in expanded(AI, "intensity_attention").free_symbols


def test_attention_ridge_q_closed_form_meets_its_equation():
    step = AI.step("q_attention_ridge")
    lhs, rhs = step.equation
    assert sp.simplify(lhs.xreplace({gl.q: step.expr}) - rhs) == 0
    v = evaluate(AI, context(model="deepseek-v3"))
    at = evaluate(AI, context(model="deepseek-v3", tokens_per_step=f"{float(v['q_attention_ridge'])} token"))
    assert float(at["attention_over_ridge"]) == pytest.approx(1, rel=1e-9)


def test_within_a_hair_holds_only_under_flashmlas_reading():
    """'Within a hair' is 2%: MLA meets it only as FlashMLA reads it (d_k = d_v, throttled 865 Tflop/s ridge)."""
    sheet = api.derive("attention-intensity")
    verdicts = {c.text: c for c in sheet.claims}
    hair = [t for t in verdicts if "within a hair" in t]
    assert [t for t in hair if verdicts[t].holds] == [t for t in hair if "FlashMLA" in t]
    flashmla = next(verdicts[t] for t in hair if "FlashMLA" in t)
    assert flashmla.left.float == pytest.approx(256)  # 2 * h_q, h_q = 128 (FlashMLA deep-dive)
    assert flashmla.right.float == pytest.approx(865e12 / 3.35e12)
    assert flashmla.where.startswith("DeepSeek-V3 on H800 SXM5")


@pytest.mark.parametrize("chip", ["h100-sxm", "h200", "b200"])
def test_ridge_throttled_is_the_h800s_own_and_na_on_other_chips(chip):
    """Issue 26: the throttled ridge divided the H800's 865 Tflop/s by every chip's bandwidth (108 flop/B on B200, 180 on H200).

    The sustained peak is the H800's measurement (FlashMLA's deep-dive note), over the H800's own 3.35 TB/s; a chip whose
    spec gives no sustained peak has no throttled ridge.
    """
    h800 = api.derive("attention-intensity", hardware="h800", model="deepseek-v3").values["ridge_throttled"]
    assert h800.float == pytest.approx(865e12 / 3.35e12, rel=1e-12)
    other = api.derive("attention-intensity", hardware=chip, model="deepseek-v3").values["ridge_throttled"]
    assert other.missing is not None and other.missing.kind == "n/a" and "sustained_peak_bf16" in other.missing.reason


@FAST
@given(st.integers(1, 8192), st.integers(1, 8192), st.sampled_from(["llama-3.1-70b", "llama-3.1-8b", "deepseek-v3"]))
def test_attention_intensity_does_not_change_with_batch(b1, b2, model):
    a = evaluate(AI, context(model=model, batch=str(b1)))
    b = evaluate(AI, context(model=model, batch=str(b2)))
    assert a["intensity_attention"] == b["intensity_attention"]
    assert a["intensity_attention_at_T"] == b["intensity_attention_at_T"]


@FAST
@given(st.integers(1, 4096), st.integers(1, 4096))
def test_gemm_intensity_rises_with_batch_and_stays_below_its_limit(b1, b2):
    lo, hi = sorted((b1, b2))
    a = evaluate(AI, context(model="llama-3.1-70b", batch=str(lo)))
    b = evaluate(AI, context(model="llama-3.1-70b", batch=str(hi)))
    assert a["intensity_gemm"] < a["intensity_gemm_limit"]
    assert b["intensity_gemm"] < b["intensity_gemm_limit"]
    assert (a["intensity_gemm"] < b["intensity_gemm"]) if lo < hi else (a["intensity_gemm"] == b["intensity_gemm"])


@FAST
@given(st.integers(1, 2**20), st.integers(1, 2**20))
def test_attention_intensity_rises_with_context_towards_its_limit(t1, t2):
    lo, hi = sorted((t1, t2))
    a = evaluate(AI, context(model="deepseek-v3", context=f"{lo} token"))
    b = evaluate(AI, context(model="deepseek-v3", context=f"{hi} token"))
    assert a["intensity_attention_at_T"] <= b["intensity_attention_at_T"] < b["intensity_attention"]

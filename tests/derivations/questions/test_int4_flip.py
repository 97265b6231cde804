"""int4-flip: the batch where weight-only INT4 decode turns compute-bound, against BF16 and FP8.

Anchors from the specs (H100 SXM: 989.4 Tflop/s BF16, 1978.9 FP8, 3.35 TB/s;
int4-g128: 0.5 + 2/128 = 0.515625 B per weight), closed forms against their
equations, and the physics as hypothesis properties: the flip batch does not
change with the model and scales with the ridge.
"""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.catalog import hardware_names, model_names
from roofline.specs.precisions import precision

from roofline import api
from tests.derivations.helpers import context

INT4 = BY_SLUG["int4-flip"]
FAST = settings(max_examples=40, deadline=None)
HARDWARE = hardware_names()
MODELS = model_names()
B4 = Fraction(33, 64)  # 0.515625 B/parameter
FLIPS = ("B_flip", "B_flip_bf16", "B_even_bf16", "B_even_fp8", "B_flip_fp8_weight_only")


def values(hardware="h100-sxm", model="llama-3.1-8b", names=FLIPS, **inputs):
    return evaluate_exactly(INT4, context(hardware, model, **inputs), names)


def ridge(hardware):
    hw = api.hardware(hardware)
    return Fraction(hw.peak("bf16").to("flop/s").magnitude) / Fraction(hw.memory_bandwidth.to("B/s").magnitude)


def test_default_int4_bytes_are_the_int4_g128_precision():
    assert values(names=("b_int4",))["b_int4"] == B4 == precision("int4-g128").bytes_per_element


@FAST
@given(st.sampled_from(MODELS), st.sampled_from(MODELS), st.sampled_from(HARDWARE), st.integers(1, 16), st.integers(1, 131072))
def test_flip_batch_does_not_change_with_the_model(m1, m2, hardware, tp, ctx_len):
    a = values(hardware, m1, tp=str(tp), context=f"{ctx_len} token")
    b = values(hardware, m2)
    for name in FLIPS:
        assert a[name] == b[name], name


@FAST
@given(st.sampled_from(HARDWARE), st.sampled_from(HARDWARE), st.sampled_from(["0", "0.1", "0.5"]))
def test_flip_batch_scales_with_the_ridge(h1, h2, dq):
    a = values(h1, dequant_overhead=dq)["B_flip"]
    b = values(h2, dequant_overhead=dq)["B_flip"]
    assert a / b == pytest.approx(float(ridge(h1) / ridge(h2)), rel=1e-12)


@pytest.mark.parametrize("hardware", HARDWARE)
def test_closed_forms_against_their_equations(hardware):
    """B_flip = pi_BF16 b_4 / (kappa q beta (1 + delta)) with kappa = 2 flop/(param token), q = 1 token, delta = 0.1."""
    v = values(hardware)
    r = ridge(hardware)
    assert v["B_flip"] == pytest.approx(float(r * B4 / 2 / Fraction(11, 10)), rel=1e-12)
    assert v["B_flip_bf16"] == pytest.approx(float(r), rel=1e-12)  # BF16's flip is the ridge
    assert v["B_flip_fp8_weight_only"] == pytest.approx(float(r / 2), rel=1e-12)
    assert v["B_even_bf16"] == pytest.approx(float(r / Fraction(11, 10)), rel=1e-12)
    assert v["B_even_fp8"] == pytest.approx(float(r / 2 / Fraction(11, 10)), rel=1e-12)
    assert v["B_flip"] < v["B_even_fp8"] < v["B_even_bf16"] < v["B_flip_bf16"]


@pytest.mark.parametrize("hardware", HARDWARE)
def test_fp8_math_flip_where_the_chip_has_fp8(hardware):
    v = values(hardware, names=("B_flip_fp8", "B_even_fp8"))
    if "fp8" not in api.hardware(hardware).peak_dense:
        assert isinstance(v["B_flip_fp8"], Missing) and v["B_flip_fp8"].kind == "n/a"
        return
    hw = api.hardware(hardware)
    fp8 = Fraction(hw.peak("fp8").to("flop/s").magnitude) / Fraction(hw.memory_bandwidth.to("B/s").magnitude)
    assert v["B_flip_fp8"] == pytest.approx(float(fp8 / 2), rel=1e-12)
    assert v["B_even_fp8"] < v["B_flip_fp8"]  # FP8 is still memory-bound where INT4 loses to it, so one batch serves both maths


def test_h100_anchor():
    """H100 SXM: ridge 989.4/3.35 = 295.3; INT4-g128 with 10% dequantization flips at 69.22 sequences, 76.14 with none."""
    assert float(values()["B_flip"]) == pytest.approx(69.22, abs=0.01)
    assert float(values(dequant_overhead="0")["B_flip"]) == pytest.approx(76.14, abs=0.01)


def test_more_tokens_per_step_divide_the_flip():
    assert values(tokens_per_step="2 token")["B_flip"] == values()["B_flip"] / 2


def test_group_size_and_scale_bytes_set_the_overhead():
    assert values(names=("b_int4",), group_size="32 parameter")["b_int4"] == Fraction(1, 2) + Fraction(2, 32)
    assert values(names=("b_int4",), scale_bytes="0 B")["b_int4"] == Fraction(1, 2)
    assert values(names=("b_int4",), value_bits="3")["b_int4"] == Fraction(3, 8) + Fraction(2, 128)


def test_speedups_across_the_batch():
    small = values(names=("speedup_bf16", "speedup_fp8_weight_only", "speedup_fp8"), batch="1")
    assert small["speedup_bf16"] == 2 / B4 and small["speedup_fp8"] == 1 / B4
    large = values(names=("speedup_bf16", "speedup_fp8_weight_only", "speedup_fp8"), batch="4096")
    assert large["speedup_bf16"] == large["speedup_fp8_weight_only"] == Fraction(10, 11)  # INT4 pays its dequantization
    assert float(large["speedup_fp8"]) == pytest.approx(10 / 11 * 989.4 / 1978.9, rel=1e-12)


@pytest.mark.parametrize("model", ["mixtral-8x7b", "deepseek-v3", "qwen3-235b-a22b", "llama-3.1-8b"])
def test_routed_experts_flip_e_over_k_times_later(model):
    v = values(model=model, names=("B_flip", "B_flip_experts"))
    moe = api.model(model).moe
    assert v["B_flip_experts"] == v["B_flip"] * (Fraction(moe.experts, moe.top_k) if moe else 1)


# --- claims, one test per number ------------------------------------------------------------------------

def test_claim_about_4x_over_bf16_below_the_flip():
    assert values(names=("speedup_memory_bound_bf16",))["speedup_memory_bound_bf16"] == 2 / B4  # 3.879, within 5% of 4


def test_claim_quarter_holds_only_with_free_dequantization():
    assert values(names=("flip_ratio",))["flip_ratio"] == B4 / 2 / Fraction(11, 10)  # 0.2344: 6% under a quarter
    assert values(names=("flip_ratio",), dequant_overhead="0")["flip_ratio"] == B4 / 2  # 0.2578: 3% over
    sheet = api.derive("int4-flip")
    assert [c.holds for c in sheet.claims] == [True, False, True]


def test_every_model_and_chip_has_finite_headlines():
    for h in HARDWARE:
        v = evaluate_exactly(INT4, context(h, "deepseek-v3"), INT4.results)
        assert all(float(v[r]) > 0 for r in INT4.results), h

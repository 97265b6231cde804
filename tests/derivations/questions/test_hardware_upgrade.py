"""hardware-upgrade: three speedups from one step model on two chips.

Anchors from the specs (H100 SXM: 989.4 Tflop/s BF16, 3.35 TB/s, 80 GB; H200:
989.4 Tflop/s, 4.8 TB/s, 141 GB; Llama 3.1 70B: 70,553,706,496 parameters),
the issue's properties (a compute-bound speedup from H100 to H200 is 1; every
speedup is positive and finite) and one test per claim's number.
"""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.declare import Row
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.catalog import hardware_names, model_names
from roofline.specs.errors import SpecError

from roofline import api
from tests.derivations.helpers import context

HU = BY_SLUG["hardware-upgrade"]
FAST = settings(max_examples=40, deadline=None)
SPEEDUPS = ("speedup_compute", "speedup_memory", "speedup_step", "speedup_capacity")
#: chips that share the default math (BF16) with every other: all shipped ones
CHIPS = hardware_names()


def upgrade(first: str = "h100-sxm", second: str = "h200", model: str = "llama-3.1-70b", only=SPEEDUPS, **inputs: str) -> dict:
    return evaluate_exactly(HU, context(first, model, second_hardware=second, **inputs), only)


@FAST
@given(st.sampled_from(model_names()), st.integers(1, 4096), st.integers(1, 131072), st.integers(1, 16))
def test_compute_bound_speedup_from_h100_to_h200_is_one(model, batch, ctx_len, tp):
    v = upgrade(model=model, only=("speedup_compute",), batch=str(batch), context=f"{ctx_len} token", tp=str(tp))
    # exactly the same FLOPs on both chips; the grouped GEMMs' expert count can evaluate in floats, so the ratio is 1 to 1e-12
    assert float(v["speedup_compute"]) == pytest.approx(1, rel=1e-12)


@FAST
@given(st.sampled_from(CHIPS), st.sampled_from(CHIPS), st.sampled_from(model_names()), st.integers(1, 4096),
       st.integers(1, 131072), st.integers(1, 16))
def test_speedups_are_positive_and_finite(first, second, model, batch, ctx_len, tp):
    v = upgrade(first, second, model, batch=str(batch), context=f"{ctx_len} token", tp=str(tp))
    for name in SPEEDUPS:
        x = v[name]
        if isinstance(x, Missing):  # only the capacity regime, and only where no sequence fits on one of the chips
            assert name == "speedup_capacity" and x.kind == "none" and x.prose  # a reason the sheet states
            continue
        assert 0 < float(x) < float("inf"), (name, x)


@FAST
@given(st.sampled_from(CHIPS), st.sampled_from(CHIPS))
def test_compute_and_bandwidth_speedups_are_the_datasheet_ratios(first, second):
    v = upgrade(first, second, only=("speedup_compute", "speedup_memory"))
    a, b = api.hardware(first), api.hardware(second)
    assert v["speedup_compute"] == pytest.approx(b.peak("bf16").magnitude / a.peak("bf16").magnitude, rel=1e-12)
    assert v["speedup_memory"] == pytest.approx(b.memory_bandwidth.to("B/s").magnitude / a.memory_bandwidth.to("B/s").magnitude, rel=1e-12)


def test_h100_to_h200_bandwidth_ratio_is_exact():
    """4.8 TB/s over 3.35 TB/s = 96/67, exactly (rationals throughout)."""
    assert upgrade(only=("speedup_memory",))["speedup_memory"] == Fraction(96, 67)


def test_the_same_chip_twice_is_no_upgrade():
    v = upgrade("h100-sxm", "h100-sxm", tp="8")
    assert all(v[n] == 1 for n in SPEEDUPS)


def test_gpus_for_the_weights_alone():
    """Llama 3.1 70B in BF16: 141.1 GB over 0.9 x 80 GB = 1.96 H100s, over 0.9 x 141 GB = 1.11 H200s."""
    v = upgrade(only=("gpus_for_weights", "gpus_for_weights_new"))
    assert float(v["gpus_for_weights"]) == pytest.approx(70_553_706_496 * 2 / 72e9, rel=1e-12)
    assert float(v["gpus_for_weights_new"]) == pytest.approx(70_553_706_496 * 2 / 126.9e9, rel=1e-12)


def test_the_batch_grows_faster_than_the_capacity():
    """The room after the weights grows by more than the capacity ratio whenever the weights take a share of it."""
    v = upgrade(only=("B_max_kv", "B_max_kv_new", "batch_ratio", "capacity_ratio"), tp="4")
    assert v["capacity_ratio"] == Fraction(141, 80)
    assert v["batch_ratio"] > v["capacity_ratio"]


def test_a_model_that_fits_neither_chip_has_no_capacity_speedup():
    """Llama 3.1 70B on one GPU: the weights alone fill both chips' usable memory."""
    v = upgrade(only=("speedup_capacity", "weights_share", "weights_share_new"), tp="1")
    assert v["weights_share"] > 1 and v["weights_share_new"] > 1
    assert isinstance(v["speedup_capacity"], Missing) and v["speedup_capacity"].kind == "none"


# --- one test per claim's number (H100 SXM to H200, Llama 3.1 70B) ---

def test_claim_compute_bound_speedup_is_one_and_the_lazy_answer_fails():
    v = upgrade(only=("speedup_compute", "speedup_memory"))
    # exactly the same FLOPs on both chips; the grouped GEMMs' expert count can evaluate in floats, so the ratio is 1 to 1e-12
    assert float(v["speedup_compute"]) == pytest.approx(1, rel=1e-12)
    assert float(v["speedup_memory"]) == pytest.approx(1.433, abs=1e-3)


@pytest.mark.parametrize("tp, ctx_len, capacity", [("4", 8192, 1.985), ("8", 8192, 1.417), ("2", 8192, 33.62), ("8", 1024, 1.091)])
def test_claim_capacity_speedups(tp, ctx_len, capacity):
    v = upgrade(only=("speedup_capacity", "speedup_memory"), tp=tp, context=f"{ctx_len} token")
    assert float(v["speedup_capacity"]) == pytest.approx(capacity, rel=2e-3)
    # with the engine's cost per sequence in the step, capacity wins over bandwidth at 8K on four GPUs or fewer, not on eight
    assert (v["speedup_capacity"] >= v["speedup_memory"]) == (ctx_len == 8192 and tp != "8")


def test_claim_verdicts_on_the_sheet():
    sheet = api.derive("hardware-upgrade")
    verdicts = [c.holds for c in sheet.claims]
    # first (issue 26): the closed-form capacity speedup within 10% of the step model's; then NVIDIA's 1.9x in its regime (2.21 from
    # the step model: within 15% of the larger side) and read as the bandwidth ratio (1.43); capacity no longer beats bandwidth on
    # eight GPUs at 8K (1.42 against 1.43) once each sequence costs the engine t_seq
    assert verdicts == [True, True, False, True, False, False, True, False, True, False]


# --- the second chip as a choice ---

def test_second_hardware_is_a_choice_and_other_sheets_refuse_it():
    b200 = api.derive("hardware-upgrade", second_hardware="b200")
    assert b200.results["speedup_compute"].float == pytest.approx(2250 / 989.4)
    assert b200.context.second_hardware.key == "b200"
    with pytest.raises(SpecError, match="no second hardware"):
        api.derive("decode-floor", second_hardware="h200")


def test_a_row_can_set_the_second_chip():
    from roofline.api import resolve_row

    ctx = resolve_row(context(), Row("", hardware="a100-sxm-80gb", second_hardware="h100-sxm"))
    v = evaluate_exactly(HU, ctx, ("speedup_compute",))
    assert float(v["speedup_compute"]) == pytest.approx(989.4 / 312)


def test_the_vendors_h200_figure_is_read_in_its_own_regime():
    """NVIDIA's 1.9x (Llama 2 70B FP8, one GPU, 2,048 in / 128 out, batch 8 on H100 and 32 on H200): the offline speedup, prefill
    included, lies between the bandwidth ratio and the batch ratio; neither claim is bent to hold."""
    from roofline.derivations.questions import hardware_upgrade as hu

    r = hu.VENDOR
    ctx = context(r.hardware, r.model, r.weights, r.kv, second_hardware=r.second_hardware, **r.set)
    v = {k: float(x) for k, x in evaluate_exactly(HU, ctx, ["speedup_offline", "speedup_memory", "throughput_offline", "t_prefill_request",
                                                    "t_decode_offline"]).items()}
    assert v["speedup_memory"] < v["speedup_offline"] < 32 / 8
    # the offline throughput is its definition: B n_out / (B t_pre + n_out t_dec)
    b, n_out = 8, 128
    assert abs(v["throughput_offline"] - b * n_out / (b * v["t_prefill_request"] + n_out * v["t_decode_offline"])) <= 1e-9 * v["throughput_offline"]
    claims = [c for c in api.derive("hardware-upgrade").claims if "1.9" in c.text]
    # the sheet's rule for a claim with a tolerance: the two sides within 15% of the larger
    assert [c.holds for c in claims] == [abs(v[k] - 1.9) <= 0.15 * max(v[k], 1.9) for k in ("speedup_offline", "speedup_memory")]

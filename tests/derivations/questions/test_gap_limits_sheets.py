"""batch1-gap and model-limits: the exact identities, every model on every chip, the physics as properties, claims, bad input.

Anchors from the Llama 3.1 8B config (7,504,658,432 GEMM weights, 32 layers,
8 KV heads of 128), the Llama 3.1 70B config (80 layers, 8 KV heads of 128,
hidden size 8192) and the H100 SXM datasheet (3.35 TB/s, 450 GB/s NVLink per
direction), computed here by hand from those figures, not read off a sheet.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.declare import identically_zero
from roofline.derivations.engine.sheet import Missing, evaluate_exactly, evaluate_numbers
from roofline.derivations.engine.sweep import parse_axis
from roofline.derivations.questions import batch1_gap as bg
from roofline.derivations.questions import model_limits as ml
from roofline.derivations.questions import registry
from roofline.specs.catalog import hardware_names, model_names

from roofline import api
from roofline.cli import main
from tests.derivations.helpers import context, sheet_context

GAP = registry.get("batch1-gap")
LIM = registry.get("model-limits")
HARDWARE = hardware_names()
MODELS = model_names()
FAST = settings(max_examples=40, deadline=None)

SUSPECTS = [s.name for s in bg.SUSPECTS]
GROUPS = ("t_white_space", "t_slow_kernels", "t_extra_kernels", "t_invisible")
SHARES = ("share_white_space", "share_slow_kernels", "share_extra_kernels", "share_invisible")
BREAKS = [b.name for b in ml.BREAKS]

BETA = Fraction(335, 100) * 10**12
P_8B = 7_504_658_432
KV_8B_PER_TOKEN = 32 * 8 * 128 * 2 * 2  # L * K * H * (K and V) * 2 B


def _sym(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True)


def _num(v: object) -> float:
    assert not isinstance(v, Missing), v
    return float(v)


# --- exact identities, symbolically ---

def test_suspects_and_remainder_add_up_to_the_gap_symbolically():
    # the observed ratio held as a symbol (its Piecewise has no value below the floor, which sympy cannot simplify through)
    held = {GAP.expanded["gap_ratio_observed"]: _sym("rho")}
    e = {name: x.xreplace(held) for name, x in GAP.expanded.items()}
    assert identically_zero(e["t_suspects"] + e["t_remainder"] - e["t_overshoot"] - e["gap"])
    assert identically_zero(e["t_suspects"] - sum(e[n] for n in SUSPECTS))
    assert identically_zero(sum(e[g] for g in GROUPS) - e["t_suspects"] - e["t_remainder"])
    assert identically_zero(sum(e[s] for s in SHARES) - 1)


def test_gap_is_the_ratio_less_one_times_the_floor_and_vanishes_at_one():
    rho = _sym("rho_obs")
    assert identically_zero(GAP.step("gap").expr - (_sym("gap_ratio_observed") - 1) * _sym("t_floor"))
    e = GAP.expanded
    assert identically_zero(e["gap_at_ratio"] - (rho - 1) * e["t_floor"])
    assert identically_zero(e["gap_at_ratio"].subs(rho, 1))
    assert identically_zero(GAP.step("eta_bw_alone_at_ratio").expr - 1 / rho)  # a slow GPU alone: one over the ratio
    # the observed ratio is the measured time over the floor where a time is given, the stated ratio where none is (t_meas = 0)
    t_meas, t_floor = _sym("t_meas"), _sym("t_floor")
    observed = GAP.step("t_step_observed").expr.subs({_sym("t_step_at_ratio"): rho * t_floor,
                                                      _sym("measurement_given"): GAP.step("measurement_given").expr})
    ratio = GAP.step("gap_ratio_observed").expr.subs(_sym("t_step_observed"), observed)
    floor = Fraction(48, 10**4)
    assert ratio.subs({t_meas: Fraction(113, 10**4), rho: Fraction(5, 2), t_floor: floor}) == Fraction(113, 48)
    assert ratio.subs({t_meas: 0, rho: Fraction(5, 2), t_floor: floor}) == Fraction(5, 2)
    assert ratio.subs({t_meas: Fraction(3, 10**3), rho: Fraction(5, 2), t_floor: floor}) is sp.nan  # below the floor: no ratio


def test_a_measured_time_sets_the_ratio_and_the_gap():
    """Issue 26: batch1-gap takes the measurement as a time too (--set t_step_measured=11.3ms), the ratio derived from it."""
    stated = evaluate_exactly(GAP, sheet_context(GAP))
    v = evaluate_exactly(GAP, sheet_context(GAP, t_step_measured="11.3 ms"))
    floor = stated["t_floor"]
    assert v["t_floor"] == floor  # the floor does not depend on the measurement
    assert v["t_step_observed"] == Fraction(113, 10**4)
    assert v["gap_ratio_observed"] == Fraction(113, 10**4) / floor
    assert v["gap"] == Fraction(113, 10**4) - floor
    assert v["eta_bw_alone"] == floor / Fraction(113, 10**4)  # one over the derived ratio
    assert v["t_suspects"] == stated["t_suspects"] and v["gap_ratio_predicted"] == stated["gap_ratio_predicted"]  # the suspects do not move
    assert float(v["t_remainder"]) + float(v["t_suspects"]) - float(v["t_overshoot"]) == pytest.approx(float(v["gap"]), rel=1e-12)
    # Llama 3.1 8B on one H100 SXM at 8K: a 4.80 ms floor, so 11.3 ms is 2.35x, a gap of 6.50 ms
    assert float(floor) == pytest.approx(4.8009e-3, rel=1e-4)
    assert float(v["gap_ratio_observed"]) == pytest.approx(2.3537, rel=1e-4) and float(v["gap"]) == pytest.approx(6.4991e-3, rel=1e-4)
    # the same time as a ratio gives the same sheet
    same = evaluate_exactly(GAP, sheet_context(GAP, gap_ratio=str(float(v["gap_ratio_observed"]))))
    assert float(same["gap"]) == pytest.approx(float(v["gap"]), rel=1e-12)
    # no value at all, with the reason, for a measured step faster than the floor
    fast = evaluate_exactly(GAP, sheet_context(GAP, t_step_measured="3 ms"))
    for name in ("gap_ratio_observed", "gap", "eta_bw_alone", "share_gpu_slow"):
        assert isinstance(fast[name], Missing) and "shorter than the floor" in fast[name].reason, name


def test_predicted_ratio_is_one_plus_suspects_over_floor():
    root = GAP.step("gap_ratio_predicted").expr
    assert identically_zero(root - (1 + _sym("t_suspects") / _sym("t_floor")))


def test_prediction_components_add_to_the_step_time_symbolically():
    e = LIM.expanded
    assert identically_zero(e["t_step"] - e["t_gemm"] - e["t_attention"] - e["t_comm"] - e["t_alltoall"] - _sym("L") * _sym("t_layer") - _sym("t_fixed")
                            - _sym("B") * _sym("t_seq"))
    assert identically_zero(e["t_step_with_breaks"] - e["t_step"] - sum(e[b] for b in BREAKS))


# --- every shipped model on every shipped chip, one GPU and eight ---

@pytest.mark.parametrize("tp", ["1", "8"])
def test_identities_hold_numerically_for_every_model_and_chip(tp):
    produced = 0
    for h in HARDWARE:
        for m in MODELS:
            # the compiled evaluation (checked against the exact one in tests/derivations/engine/test_numeric.py): every cell, cheaply
            g = evaluate_numbers(GAP, sheet_context(GAP, h, m, tp=tp))
            lim = evaluate_numbers(LIM, sheet_context(LIM, h, m, tp=tp, t_fixed="0.2 ms", t_layer="0 s", t_seq="0 s"))
            where = f"{h} {m} tp={tp}"
            for name, v in (*g.items(), *lim.items()):
                if isinstance(v, Missing):
                    assert v.reason.strip(), f"{where}: {name}"
                    continue
                assert math.isfinite(float(v)) and float(v) >= 0, f"{where}: {name} = {float(v)}"
            if isinstance(g["t_collectives"], Missing) or isinstance(lim["t_comm"], Missing):
                assert tp != "1" and api.hardware(h).scaleup_bandwidth_per_direction is None, where
                continue
            produced += 1
            gap = _num(g["gap"])
            assert _num(g["t_suspects"]) + _num(g["t_remainder"]) - _num(g["t_overshoot"]) == pytest.approx(gap, rel=1e-12, abs=1e-15)
            assert min(_num(g["t_remainder"]), _num(g["t_overshoot"])) == 0, where  # one of the two, never both
            assert sum(_num(g[s]) for s in SHARES) == pytest.approx(1, rel=1e-12)
            for s in (*SHARES, "share_explained", "share_gpu_slow", "share_not_gpu", "eta_bw_alone"):
                assert 0 <= _num(g[s]) <= 1 + 1e-12, f"{where}: {s}"
            assert _num(g["t_step_observed"]) == pytest.approx(2.5 * _num(g["t_floor"]), rel=1e-12)
            step = _num(lim["t_gemm"]) + _num(lim["t_attention"]) + _num(lim["t_comm"]) + 0.2e-3
            assert _num(lim["t_step"]) == pytest.approx(step, rel=1e-12)
            broken = _num(lim["t_step"]) + sum(_num(lim[b]) for b in BREAKS)
            assert _num(lim["t_step_with_breaks"]) == pytest.approx(broken, rel=1e-12)
            assert 0 < _num(lim["share_modelled"]) <= 1
    assert produced >= len(MODELS) * (len(HARDWARE) - 3)


def test_dense_models_have_no_moe_spread_and_moe_models_do_past_one_token():
    for m in MODELS:
        moe = api.model(m).moe
        one = evaluate_exactly(LIM, sheet_context(LIM, "h200", m, batch="1"), ["experts_spread"])["experts_spread"]
        many = evaluate_exactly(LIM, sheet_context(LIM, "h200", m, batch="8"), ["experts_spread"])["experts_spread"]
        assert one == 0, m  # one token always reads exactly its top-k
        assert (float(many) > 0) == (moe is not None and moe.top_k < moe.experts), m


# --- anchors, computed by hand from the configs and the datasheet ---

def test_batch1_gap_for_llama_8b_on_h100():
    v = evaluate_exactly(GAP, sheet_context(GAP, "h100-sxm", "llama-3.1-8b", eta_bw="0.8"))
    floor = (2 * P_8B + 8192 * KV_8B_PER_TOKEN) / BETA  # about 4.80 ms
    assert v["t_floor"] == floor
    assert v["gap"] == Fraction(3, 2) * floor
    assert v["t_launch_gaps"] == (32 * 12 + 8) * Fraction(2, 10**6)  # 784 us
    assert v["t_slow_weights"] == 2 * P_8B / BETA * Fraction(1, 4)  # 1/0.8 - 1
    assert v["t_slow_attention"] == 8192 * KV_8B_PER_TOKEN / BETA  # 1/0.5 - 1
    assert v["t_small_kernels"] == 32 * 6 * Fraction(3, 10**6)
    assert v["t_wide_weights"] == Fraction(1, 10) * 2 * P_8B / (Fraction(4, 5) * BETA)
    assert v["t_collectives"] == 0  # one GPU
    assert v["eta_bw_alone"] == Fraction(2, 5)


def test_model_limits_worked_prediction_llama_70b_tp8_h100():
    # the sheet's tp 8, batch 1, 8K context; engine inputs pinned (the default profile is fitted to measurements and moves with the dataset)
    v = evaluate_exactly(LIM, sheet_context(LIM, "h100-sxm", "llama-3.1-70b", eta_bw="0.8", t_layer="0 s", t_fixed="0.2 ms", ar_latency="1 us", t_seq="0 s"))
    p = api.model("llama-3.1-70b").param_counts().active_matmul
    eta_beta = Fraction(4, 5) * BETA
    gemm = Fraction(2 * p, 8) / eta_beta
    attention = Fraction(8192 * 80 * 2 * 128 * 2) / eta_beta  # one KV head per GPU at TP 8
    latency = 2 * 80 * 1 * Fraction(1, 10**6)  # 0.16 ms: two all-reduces per layer, one-shot on NVSwitch: one round of 1 us each
    comm = 2 * 80 * 2 * Fraction(7, 8) * 8192 * 2 / Fraction(450 * 10**9) + latency
    assert v["t_comm"] == comm
    assert v["t_step"] == gemm + attention + comm + Fraction(2, 10**4)
    assert 6.9e-3 < float(v["t_step"]) < 7.1e-3  # 7.0 ms with a lean engine's inputs
    assert v["break_launch_gaps"] == (80 * 12 + 8) * Fraction(1, 2 * 10**6)
    assert v["break_prefill_mix"] == 0 and v["break_tile_quantization"] == 0  # batch 1 stays memory-bound
    # 20, since issue 24 the layout's GPUs, the kept context and the all-to-all's bytes and time, and since issue 34 the serving
    # step's prompt tokens, their cache and attention, and the MoE layers' token permutation
    assert v["model_lines"] == 33  # the tokens read, the sparse indexer's bytes and FLOPs and the recurrent state's added five


def test_prefill_mix_turns_the_gemms_compute_bound_at_large_batch():
    small = evaluate_exactly(LIM, sheet_context(LIM, "h100-sxm", "llama-3.1-70b", batch="8"), ["break_prefill_mix"])
    large = evaluate_exactly(LIM, sheet_context(LIM, "h100-sxm", "llama-3.1-70b", batch="128"), ["break_prefill_mix", "t_gemm"])
    assert small["break_prefill_mix"] == 0
    assert float(large["break_prefill_mix"]) > 0.5 * float(large["t_gemm"])


def test_dequantization_applies_only_to_weight_only_formats():
    bf16 = evaluate_exactly(LIM, sheet_context(LIM, "h100-sxm", "llama-3.1-70b", tp="2"), ["weight_only_quantized", "break_dequantization"])
    assert bf16["weight_only_quantized"] == 0 and bf16["break_dequantization"] == 0
    int4 = evaluate_exactly(LIM, context("h100-sxm", "llama-3.1-70b", weights="int4-g128", tp="2"), ["weight_only_quantized", "break_dequantization"])
    assert int4["weight_only_quantized"] == 1 and float(int4["break_dequantization"]) > 0


# --- the physics as properties ---

@FAST
@given(st.integers(1000, 20000), st.sampled_from(["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "qwen3-235b-a22b"]),
       st.sampled_from(["h100-sxm", "h200", "b200"]), st.sampled_from(["1", "2", "8"]))
def test_shares_are_fractions_and_the_gap_vanishes_only_at_ratio_one(thousandths, model, hardware, tp):
    ratio = Fraction(thousandths, 1000)
    v = evaluate_exactly(GAP, sheet_context(GAP, hardware, model, tp=tp, gap_ratio=f"{thousandths / 1000}"))
    gap = _num(v["gap"])
    assert (gap == 0) == (ratio == 1)
    for s in (*SHARES, "share_gpu_slow", "share_not_gpu", "eta_bw_alone"):
        assert 0 <= _num(v[s]) <= 1 + 1e-12
    if ratio == 1:
        assert isinstance(v["share_explained"], Missing) and v["share_explained"].kind == "none"
    else:
        assert 0 < _num(v["share_explained"]) <= 1 + 1e-12


@FAST
@given(st.sampled_from(MODELS), st.integers(1, 512), st.integers(1, 131072), st.sampled_from(["1", "2", "4", "8"]))
def test_breaks_are_non_negative_and_the_model_share_a_fraction(model, batch, ctx_len, tp):
    v = evaluate_exactly(LIM, sheet_context(LIM, "h200", model, batch=str(batch), context=f"{ctx_len} token", tp=tp))
    for b in BREAKS:
        assert _num(v[b]) >= 0, b
    assert 0 < _num(v["share_modelled"]) <= 1


@FAST
@given(st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"]), st.fractions(Fraction(1, 10), 1), st.fractions(Fraction(1, 10), 1))
def test_a_faster_streaming_kernel_only_shrinks_the_bandwidth_suspects(model, eta_lo, eta_hi):
    lo, hi = sorted((eta_lo, eta_hi))
    a = evaluate_exactly(GAP, sheet_context(GAP, "h100-sxm", model, eta_bw=str(float(lo))), ["t_slow_weights", "t_launch_gaps", "gap"])
    b = evaluate_exactly(GAP, sheet_context(GAP, "h100-sxm", model, eta_bw=str(float(hi))), ["t_slow_weights", "t_launch_gaps", "gap"])
    assert _num(a["t_slow_weights"]) >= _num(b["t_slow_weights"])
    assert a["t_launch_gaps"] == b["t_launch_gaps"] and a["gap"] == b["gap"]  # the measurement does not depend on the suspects


# --- claims ---

def test_claim_verdicts_at_the_defaults():
    gap = {c.text[:40]: c.holds for c in api.derive("batch1-gap").claims}
    # at the refitted profile (57 us a layer, not 86) the stated suspects reproduce 2.00x, a hair outside 2.5 within 20%
    assert gap == {"A 2.5x gap almost never comes from the G": True, "The stated suspects reproduce a 2.5x ste": False,
                   "A slow GPU alone would need streaming ke": True, "On a B200 the same software predicts a r": True}, gap
    lim = api.derive("model-limits").claims
    # twenty lines; within 30% of the measured step at the dataset's record nearest the worked setup (Llama 3.1 70B, eight A100s,
    # batch 1, gpt-fast: 18.3 ms against 17.0 ms); at least 70% accurate at the dataset's median error; inside the eight-GPU records' range
    # twenty lines no longer (26 with the serving step's prompt tokens and the MoE permutation, 30% over twenty)
    assert [c.holds for c in lim] == [False, True, True, True, True]
    record = lim[1]
    assert record.left.float == pytest.approx(0.0183, rel=0.01) and record.right.float == pytest.approx(0.01701, rel=1e-3)
    hand = api.derive("model-limits", overrides=["eta_bw=0.8", "t_fixed=0.2ms", "t_layer=0us", "ar_latency=0us", "t_seq=0us"]).claims
    # a lean engine's hand-set inputs: 10.9 ms against the record's 17.0 ms (36% fast), and too fast for what the eight-GPU records support
    assert [c.holds for c in hand] == [False, False, True, False, True]


def test_a_gpu_that_is_really_slow_breaks_the_claim():
    sheet = api.derive("batch1-gap", overrides=["eta_bw=0.4"])
    claim = next(c for c in sheet.claims if "almost never" in c.text)
    assert claim.holds is False


# --- bad input: one line, exit 2 ---

@pytest.mark.parametrize("argv, needle", [
    (["derive", "batch1-gap", "--set", "gap_ratio=0.5"], "gap_ratio: expected a ratio of at least 1"),
    (["derive", "batch1-gap", "--set", "gap_ratio=2.5ms"], "gap_ratio: expected a plain number"),
    (["derive", "batch1-gap", "--set", "eta_attention=1.5"], "eta_attention: expected a fraction in (0, 1]"),
    (["derive", "batch1-gap", "--set", "launch_gap=-1us"], "launch_gap"),
    (["derive", "batch1-gap", "--set", "launch_gap=3"], "launch_gap: expected a quantity with a unit"),
    (["derive", "batch1-gap", "--set", "kernels_per_layer=2.5"], "kernels_per_layer: expected a whole number"),
    (["derive", "model-limits", "--set", "clock_fraction=0"], "clock_fraction"),
    (["derive", "model-limits", "--set", "gap_ratio=2"], "model-limits has no input by that name"),
    (["derive", "batch1-gap", "--set", "t_step_measured=11.3"], "t_step_measured: expected a quantity with a unit"),
    (["derive", "batch1-gap", "--set", "t_step_measured=-1ms"], "t_step_measured"),
    (["derive", "batch1-gap", "--set", "t_step_observed=11.3ms"], "no input by that name (did you mean t_step_measured?)"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err, err


def test_observed_ratio_is_easy_to_give(capsys):
    assert main(["derive", "batch1-gap", "--set", "gap_ratio=3", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"gap"' in out
    v = evaluate_exactly(GAP, sheet_context(GAP, gap_ratio="3"), ["gap", "t_floor"])
    assert v["gap"] == 2 * v["t_floor"]
    import json
    for name in ("t_step_measured", "t_observed"):  # issue 40: the input's name before, an alias, sets it too
        assert main(["derive", "batch1-gap", "--set", f"{name}=11.3ms", "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["results"]["t_step_observed"]["si_value"] == pytest.approx(0.0113, rel=1e-12)
        given = doc["context"]["inputs"]
        assert given["t_step_measured"]["default"] is False and "t_observed" not in given


def test_the_validation_table_is_roofline_validate():
    """model-limits' validation table shows, for every record the default profile is fitted to, the same prediction and error as
    `roofline validate` at the default profile."""
    from roofline.derivations.physics import validation as val
    from roofline.derivations.physics.measured import record_label
    from roofline.specs.measurements import load_measurements

    label = {m.id: record_label(m) for m in load_measurements()}
    rows = {label[r.id]: r for r in val.validate(load_measurements(), val.sheet_defaults()).rows}
    (table,) = [t for t in api.derive("model-limits").tables if t.title.startswith("Against published measurements")]
    cols = [c for c, _ in table.columns]
    assert len(table.rows) == len(val.sheet_defaults().ids) >= 10
    for label, cells, why in table.rows:
        assert not why, label
        r = rows[label]
        assert r.regime == val.MEMORY_BOUND
        assert cells[cols.index("t_step")].float == pytest.approx(r.predicted, rel=1e-9)
        assert cells[cols.index("t_measured")].float == pytest.approx(r.measured, rel=1e-12)
        assert cells[cols.index("prediction_error")].float == pytest.approx(r.error, rel=1e-9, abs=1e-12)


def test_an_older_input_name_sets_its_input_everywhere_a_name_is_read():
    """Issue 40: the measured step was renamed t_step_measured (the name of the steps it feeds); its older name t_observed is an
    alias that the Python API, --over and both --set paths read as the new one, and that is never printed or stored."""
    from roofline.derivations.engine.blueprint import by_name
    from roofline.derivations.physics.measured import MEASURED_STEP

    assert MEASURED_STEP.name == "t_step_measured" and MEASURED_STEP.aliases == ("t_observed",)
    assert [e.aliases for e in GAP.blueprint.inputs if e.name == "t_step_measured"] == [("t_observed",)]
    assert by_name(GAP.inputs)["t_observed"] is by_name(GAP.inputs)["t_step_measured"]
    new = api.derive("batch1-gap", inputs={"t_step_measured": "11.3 ms"}).values["gap"].float
    assert api.derive("batch1-gap", inputs={"t_observed": "11.3 ms"}).values["gap"].float == new
    swept = api.sweep("batch1-gap", over={"t_observed": ["11.3 ms", "12 ms"]}, result="gap")
    assert swept["t_step_measured"].tolist() == [0.0113, 0.012] and "t_observed" not in swept.units
    assert swept["gap"][0] / 1e3 == pytest.approx(new, rel=1e-12) and swept.units["gap"] == "ms"
    assert parse_axis(GAP, "t_observed=1ms,2ms").input.name == "t_step_measured"

"""Each sheet at its defaults, and the closed forms (issue 26): what each answer still missed — the defaults matrix, and each new closed form against its equation and its sheet's tables.

The engine verifies every Solve symbolically and numerically when a derivation is built; these tests check the closed forms
again by substitution into the equation they solve, and against the values the sheet's own tables print.
"""

from __future__ import annotations

import pytest
from roofline.derivations.engine.sheet import FIT_STEP
from roofline.derivations.questions.registry import DERIVATIONS

from roofline import api

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# --- the defaults matrix: every sheet at its own defaults fits and values every headline ----------

@pytest.mark.parametrize("slug", [d.slug for d in DERIVATIONS])
def test_every_sheet_at_its_defaults_fits_and_values_every_headline(slug, sheets):
    """A sheet's default is a setup people run: it fits in HBM (where the sheet asks) and no headline is none or n/a."""
    sheet = next(s for s in sheets if s.derivation.slug == slug)  # api.derive(slug), derived once per session
    assert sheet.overflow is None, f"{slug}: its default setup needs {sheet.overflow.float:.0%} of HBM"
    if FIT_STEP in sheet.values:
        assert sheet.values[FIT_STEP].float <= 1
    missing = {name: v.missing.label for name, v in sheet.results.items() if v.missing is not None}
    assert not missing, f"{slug}: headlines without a value at the defaults: {missing}"


# --- speculative-decoding ----------------------------------------------------------------------------

SPEC = "speculative-decoding"


def _spec(**inputs):
    from roofline.derivations.engine.sheet import evaluate_exactly
    from roofline.derivations.questions.registry import BY_SLUG

    from tests.derivations.helpers import sheet_context

    d = BY_SLUG[SPEC]
    return evaluate_exactly(d, sheet_context(d, model="llama-3.3-70b", **{"tp": "8", **inputs}))


def test_speculative_compute_bound_limit_is_the_speedup_at_a_huge_batch_of_short_contexts():
    """tau/(k + 1 + k P_d/P_T) is the step model's speedup once every GEMM is compute-bound: no fixed time, no host time per
    sequence, no all-reduce, T = 1."""
    v = _spec(batch="1000000", context="1 token", tp="1", tp_draft="1", t_layer="0 s", t_fixed="0 s", ar_latency="0 s", t_seq="0 s", draft_length="4",
              acceptance="0.8")
    assert float(v["speedup"]) == pytest.approx(float(v["speedup_compute_bound"]), rel=2e-3)
    tau = (1 - 0.8 ** 5) / 0.2
    assert float(v["speedup_compute_bound"]) == pytest.approx(tau / (5 + 4 * float(v["drafter_param_ratio"])), rel=1e-12)
    assert float(v["speedup_compute_bound"]) == pytest.approx(2 / 3, rel=0.01)  # "costs a third"


def test_speculative_context_past_which_verification_is_never_compute_bound():
    """At T_mem the per-sequence compute of a verification equals its KV time; above it a larger batch only adds memory time."""
    v = _spec()
    t_star = float(v["T_verify_never_compute_bound"])
    at = _spec(context=f"{t_star} token")
    assert float(at["t_compute_per_sequence_verify"]) == pytest.approx(float(at["t_kv_per_sequence"]), rel=1e-9)
    # above it the verification step is memory-bound even at a batch far past any that fits; below it compute wins there
    for factor, memory_bound in ((1.2, True), (0.8, False)):
        big = _spec(context=f"{factor * t_star} token", batch="100000", draft_length="4")
        verify_memory = float(big["t_kv_per_sequence"]) * 100000
        verify_compute = float(big["t_compute_per_sequence_verify"]) * 100000
        assert (verify_memory > verify_compute) is memory_bound
    # it grows with the tokens verified q: T = a q / (b - c q), linear in q but for attention's own FLOPs (c), so 1/T is
    # exactly linear in 1/q; from q = 2 to 8 tokens it grows 5.0x, a little faster than q's 4x
    q = (2, 4, 8)
    inv_t = [1 / float(_spec(draft_length=str(k - 1))["T_verify_never_compute_bound"]) for k in q]
    slope = (inv_t[1] - inv_t[0]) / (1 / q[1] - 1 / q[0])
    assert inv_t[2] == pytest.approx(inv_t[0] + slope * (1 / q[2] - 1 / q[0]), rel=1e-9)
    assert 4 < inv_t[0] / inv_t[2] < 5.5


def test_speculative_search_runs_past_the_best_draft_length():
    """At acceptance 0.9 (batch 1, context 1,024, the sheet's engine profile) the best draft length is 9: past the old bound of 8,
    an interior maximum of the search."""
    from roofline.derivations.questions.speculative_decoding import DRAFT_LENGTHS

    v = _spec(batch="1", acceptance="0.9", context="1024 token")
    best = int(v["best_draft_length"])
    assert best == 9 and best < DRAFT_LENGTHS[-1]
    speedups = [float(v[f"speedup_g{g}"]) for g in DRAFT_LENGTHS]
    assert speedups[best] == max(speedups) and speedups[best + 1] < speedups[best] > speedups[best - 1]


# --- hardware-upgrade --------------------------------------------------------------------------------

def test_capacity_speedup_closed_form_against_its_equation_and_the_gpu_count_table():
    sheet = api.derive("hardware-upgrade")
    v = sheet.values
    beta1, beta2 = 3.35e12, 4.8e12  # specs/hardware/h100-sxm.toml, h200.toml
    share1, share2 = v["weights_share"].float, v["weights_share_new"].float
    assert v["speedup_capacity_closed"].float == pytest.approx(beta2 / beta1 * (1 - share2) / (1 - share1), rel=1e-12)
    table = next(t for t in sheet.tables if t.title == "Capacity as a function of the GPU count")
    col = [c[0] for c in table.columns]
    closed = [cells[col.index("speedup_capacity_closed")] for _, cells, _ in table.rows]
    model = [cells[col.index("speedup_capacity")] for _, cells, _ in table.rows]
    assert closed[0].missing is not None  # one GPU: the weights do not fit
    valued = [c.float for c in closed[1:]]
    assert valued == sorted(valued, reverse=True) and valued[-1] > beta2 / beta1  # falls with N, towards the bandwidth ratio
    # the closed form leaves out the engine's host time per sequence (t_seq), which a full memory multiplies: at the defaults it
    # tracks the step model within 10% on four GPUs (the sheet's claim; 2.03 against 1.99) and drifts above it with more GPUs
    # (1.63 against 1.42 on eight); with t_seq = 0, its assumption, within 10% from four GPUs on
    assert closed[2].float == pytest.approx(model[2].float, rel=0.1)
    assert all(c.float > m.float for c, m in zip(closed[3:], model[3:], strict=True))
    bare = api.derive("hardware-upgrade", inputs={"t_seq": "0 s"})
    table = next(t for t in bare.tables if t.title == "Capacity as a function of the GPU count")
    for _, cells, _ in table.rows[2:]:
        assert cells[col.index("speedup_capacity_closed")].float == pytest.approx(cells[col.index("speedup_capacity")].float, rel=0.1)


def test_a_step_with_the_memory_full_takes_the_usable_memory_over_the_bandwidth_whatever_the_context():
    sheet = api.derive("hardware-upgrade")
    table = next(t for t in sheet.tables if t.title.startswith("Capacity as a function of the context"))
    col = [c[0] for c in table.columns]
    for _, cells, _ in table.rows:
        full, at_fit = cells[col.index("t_memory_full")].float, cells[col.index("t_memory_at_capacity")].float
        assert at_fit == pytest.approx(full, rel=0.01) and at_fit <= full


def test_energy_per_token_improves_by_the_capacity_speedup_at_equal_board_power():
    v = api.derive("hardware-upgrade").values  # H100 SXM and H200 both 700 W
    assert v["energy_per_token_gain"].float == pytest.approx(v["speedup_capacity"].float, rel=1e-12)


# --- decode-floor ------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"])
def test_smallest_tp_that_fits_against_its_equation_and_the_memory_fit(model):
    sheet = api.derive("decode-floor", model=model)
    v = sheet.values
    n = v["tp_fit"].float
    assert v["memory_whole_model"].float / n == pytest.approx(v["capacity_per_gpu"].float, rel=1e-12)  # the equation it solves
    tp_min = int(v["tp_min"].float)
    assert tp_min >= max(1, n) and (tp_min == 1 or tp_min / 2 < n)
    fits = api.derive("decode-floor", model=model, inputs={"tp": tp_min}).values["memory_fraction"].float
    assert fits <= 1
    if tp_min > 1:
        assert api.derive("decode-floor", model=model, inputs={"tp": tp_min // 2}).values["memory_fraction"].float > 1
    assert v["t_floor_tp_min"].float == pytest.approx(v["t_floor"].float / tp_min, rel=1e-12)
    table = next(t for t in sheet.tables if t.title.startswith("The smallest TP degree"))
    col = [c[0] for c in table.columns]
    row = next(cells for label, cells, _ in table.rows if label == api.model(model).name)
    assert row[col.index("tp_min")].float == tp_min


def test_2n_against_2n_matmul_is_the_embedding_streamed():
    v = api.derive("decode-floor").values  # Llama 3.1 8B, BF16, H100 SXM: 128,256 x 4,096 untied embedding and the norms
    c = api.model("llama-3.1-8b").param_counts()
    assert c.total - c.matmul == 128256 * 4096 + 4096 * (2 * 32 + 1)  # the embedding and the norms: no GEMM operand
    assert v["t_floor_2n_gap"].float == pytest.approx((c.total - c.matmul) * 2 / 3.35e12, rel=1e-12)
    assert v["t_floor_2n_gap"].float == pytest.approx(v["t_floor_all_params"].float - v["t_floor"].float, rel=1e-9)
    assert v["t_floor_2n_gap"].m_as("ms") == pytest.approx(0.3138, abs=1e-4)


# --- model-limits ------------------------------------------------------------------------------------

def test_prediction_error_at_its_default_says_no_measurement_was_given():
    """Issue 26: the default (no measured step) said 'a zero denominator'; a measured step gives the signed error."""
    sheet = api.derive("model-limits")
    missing = sheet.values["prediction_error"].missing
    assert missing is not None and missing.reason.startswith("no measurement given") and "denominator" not in missing.reason
    v = api.derive("model-limits", inputs={"t_observed": "30 ms"}).values
    assert v["prediction_error"].float == pytest.approx((v["t_step"].float - 0.030) / 0.030, rel=1e-12) and v["prediction_error"].float < 0


# --- mbu-definition ----------------------------------------------------------------------------------

def test_mbu_definition_time_base_sku_and_speculation_against_their_equations():
    """The interviewer's points as derived steps: each against its closed form, at the reference server (Qwen3-235B-A22B, 8 H100 SXM)."""
    sheet = api.derive("mbu-definition")
    v = {n: x.float for n, x in sheet.values.items() if x.missing is None}
    # the time base: the kernels' summed time drops the overheads L t_layer + t_fixed; MBU rises by one over the kernels' share
    assert v["t_kernels_summed"] == pytest.approx(v["t_step"] - v["t_overhead"], rel=1e-12)
    assert v["share_step_outside_kernels"] == pytest.approx(v["t_overhead"] / v["t_step"], rel=1e-12)
    assert v["mbu_kernel_time"] == pytest.approx(v["mbu"] / (1 - v["share_step_outside_kernels"]), rel=1e-12)
    assert v["share_step_in_kernels"] == pytest.approx(1 - v["share_step_outside_kernels"], rel=1e-12)
    # another SKU's datasheet: specs/hardware/h100-sxm.toml 3.35 TB/s over h100-pcie.toml 2.0 TB/s
    assert v["mbu_wrong_sku_ratio"] == pytest.approx(3.35 / 2.0, rel=1e-12)
    assert v["mbu_wrong_sku"] == pytest.approx(v["mbu"] * 3.35 / 2.0, rel=1e-12)
    # speculation: per-token MBU is inflated by 1 + alpha + ... + alpha^gamma (0.8, 4: 3.3616)
    tau = sum(0.8 ** i for i in range(5))
    assert v["expected_tokens"] == pytest.approx(tau, rel=1e-12)
    assert v["mbu_speculative_inflation"] == pytest.approx(tau, rel=1e-12)
    assert v["mbu_speculative_per_token"] == pytest.approx(tau * v["mbu"], rel=1e-12)
    at_one = api.derive("mbu-definition", inputs={"acceptance": "1", "draft_length": "3"}).values
    assert at_one["mbu_speculative_inflation"].float == pytest.approx(4, rel=1e-12)  # every draft accepted: gamma + 1
    # MBU above 1 proves an accounting error: the check counts the slips above 1 and never flags the true MBU
    reported = [n for n in sheet.values if n.startswith("mbu_") and n not in ("mbu_above_one", "mbu_wrong_sku_ratio", "mbu_speculative_inflation")]
    assert v["slips_above_one"] == sum(1 for n in reported if v[n] > 1) >= 1
    assert v["mbu"] <= 1 and v["mbu_above_one"] == 0
    verdicts = {c.text: c.holds for c in sheet.claims}
    assert verdicts["The kernels' summed time as the time base is 30 points off."] is False  # 23.7 points here
    assert verdicts["A datasheet peak from the wrong SKU is 30 points off."] is True  # 35.0 points
    assert verdicts["Per-token MBU under speculative decoding is inflated by the expected tokens per cycle."] is True
    assert verdicts["MBU above 1 proves an accounting error: on the reference server at least one slip reads above 1, and the check "
                    "catches it."] is True


def test_the_memory_utilization_counter_is_cited_as_time_not_bandwidth():
    scoring = " ".join(api.derive("mbu-definition").derivation.scoring)
    assert "DCGM_FI_DEV_MEM_COPY_UTIL" in scoring and "nvmlUtilization_t" in scoring and "being read or written" in scoring


def test_decode_floor_fixed_latency_in_its_parts():
    """L t_layer + t_fixed + 2 L h_AR t_AR: each part against its equation, and the sum is what the step pays above bytes and FLOPs."""
    for inputs in ({}, {"tp": "8"}):
        sheet = api.derive("decode-floor", model="llama-3.1-70b" if inputs else "llama-3.1-8b", inputs=inputs)
        v = {n: x.float for n, x in sheet.values.items() if x.missing is None}
        inp = {i.name: i.value.float for i in sheet.inputs}
        layers = 80 if inputs else 32
        assert v["t_latency_layers"] == pytest.approx(layers * inp["t_layer"], rel=1e-12)
        assert v["t_latency_step"] == pytest.approx(inp["t_fixed"], rel=1e-12)
        rounds = v["allreduce_rounds"]
        assert rounds == (1 if inputs else 0)  # one-shot on NVSwitch; none on one GPU
        assert v["t_latency_allreduce"] == pytest.approx(2 * layers * rounds * inp["ar_latency"], rel=1e-12, abs=0)
        assert v["t_latency_sequences"] == pytest.approx(inp["batch"] * inp["t_seq"], rel=1e-12)
        assert v["t_latency_fixed"] + v["t_latency_sequences"] == pytest.approx(v["t_overhead"] + v["t_latency_allreduce"], rel=1e-12)
        assert (v["t_step"] - v["t_gemm"] - v["t_attention"] - v["t_comm"] + v["t_latency_allreduce"]
                == pytest.approx(v["t_latency_fixed"] + v["t_latency_sequences"], rel=1e-9))


def test_model_limits_striking_distance_is_judged_against_a_measurement():
    """Issue 26: 'within striking distance of a real server' against a dataset record at the worked setup (its model, TP degree and
    batch; the dataset has no eight-H100 record, so on A100s) and against the dataset's median error, not the model plus its breaks."""
    from roofline.derivations.physics.validation import measured_step
    from roofline.derivations.questions import model_limits as ml
    from roofline.specs.measurements import load_measurements

    record = {m.id: m for m in load_measurements()}[ml.NEAREST]
    assert (record.model.key, record.tp, record.batch) == ("llama-3.1-70b", 8, 1)
    claims = api.derive("model-limits").claims
    striking = [c for c in claims if "striking distance" in c.text]
    assert [c.right_name for c in striking] == ["t_measured", ""]
    at_record = striking[0]
    assert at_record.right.float == pytest.approx(measured_step(record), rel=1e-12)
    assert at_record.holds is (abs(at_record.left.float / at_record.right.float - 1) <= 0.3 * max(1, at_record.left.float / at_record.right.float))
    band = striking[1]
    assert band.left.float == pytest.approx(1 - float(api.derive("model-limits").values["error_median"].float), rel=1e-12)
    assert all("t_step_with_breaks" not in (c.left_name, c.right_name) for c in claims)

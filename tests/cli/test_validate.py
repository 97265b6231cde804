"""`roofline validate` and `roofline calibrate`: the shared step model against the measurements dataset."""

import dataclasses
import json
import statistics
from pathlib import Path

import pytest

from derivations import validation as v
from roofline import api
from roofline.cli import main
from specs.measurements import load_measurements, parse_measurements

RECORDS = load_measurements()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _record(rid: str) -> v.Record:
    (r,) = [r for r in v.evaluate_records(RECORDS) if r.m.id == rid]
    return r


# one record per chip, TP degree and batching style; an MoE model and an FP8 setup among them
SAMPLES = ["lmdeploy-a100-llama2-70b-tp4-b16", "nim-h100-llama3.3-70b-fp8-tp2-c5-5000-500", "vllm-h200-mixtral-8x7b-tp2-b8",
           "trtllm061-h100-llama2-7b-b768-128-128"]


@pytest.mark.parametrize("rid", SAMPLES)
def test_prediction_is_the_decode_floor_sheets_step_model(rid):
    """The validation's compiled step model gives the decode-floor sheet's t_step at the same inputs and defaults."""
    r = _record(rid)
    m = r.m
    sheet = api.derive("decode-floor", m.hardware.key, m.model.key, m.weights, m.kv, m.math,
                       [f"batch={m.batch}", f"context={v.mean_context(m)}", f"tp={m.tp}"])
    assert r.at(v.sheet_defaults()) == pytest.approx(sheet.results["t_step"].float, rel=1e-12)
    other = api.derive("decode-floor", m.hardware.key, m.model.key, m.weights, m.kv, m.math,
                       [f"batch={m.batch}", f"context={v.mean_context(m)}", f"tp={m.tp}", "eta_bw=0.55", "t_fixed=3ms", "eta_flops=1",
                        "hop_latency=5us"])
    assert r.predict(0.55, 3e-3, 1.0, 5e-6) == pytest.approx(other.results["t_step"].float, rel=1e-12)


def test_prediction_matches_roofline_derive_json(capsys):
    r = _record("vllm-h200-llama3-70b-tp4-b8")
    m = r.m
    code, out, _ = run(capsys, "derive", "decode-floor", "--hardware", "h200", "--model", "llama-3.1-70b", "--set", f"batch={m.batch}",
                       "--set", f"context={v.mean_context(m)}", "--set", "tp=4", "--format", "json")
    assert code == 0
    t_step = json.loads(out)["results"]["t_step"]["si_value"]
    assert r.at(v.sheet_defaults()) == pytest.approx(t_step, rel=1e-9)


def test_hop_latency_is_two_all_reduces_per_layer_of_log2_rounds():
    """t_hop enters the step as 2 all-reduces per layer of ceil(log2 n) rounds each; nothing on one GPU."""
    r = _record("vllm-h200-llama3-70b-tp4-b8")  # 80 layers, TP 4: 2 rounds
    assert r.predict(0.8, 0.0, None, 1e-6) - r.predict(0.8, 0.0, None, 0.0) == pytest.approx(2 * 80 * 2 * 1e-6, rel=1e-9)
    three = _record("lmdeploy-a100-llama2-70b-tp4-b1")
    assert three.predict(0.8, 0.0, None, 1e-6) - three.predict(0.8, 0.0, None, 0.0) == pytest.approx(2 * 80 * 2 * 1e-6, rel=1e-9)
    one = _record("vllm-h200-llama3.1-8b-b8")
    assert one.predict(0.8, 0.0, None, 1e-6) == one.predict(0.8, 0.0, None, 0.0)


def _synthetic(**fields):
    base = {"id": "x", "model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 1, "tp": 1, "pp": 1, "weights": "bf16", "kv": "bf16",
            "math": "bf16", "batching": "static", "batch": 4, "input_tokens": 100, "output_tokens": 11, "metric": "itl",
            "value": "10 ms", "locator": "t", "assumed": "nothing"}
    base.update(fields)
    data = {"source": "s", "url": "https://example.org", "engine": "e", "engine_version": "1", "notes": "", "record": [base]}
    return parse_measurements(data, Path("synthetic.toml"))[0]


@pytest.mark.parametrize("fields, step", [
    ({"metric": "itl", "value": "12 ms"}, 12e-3),
    ({"metric": "tokens_per_s_per_user", "value": "50 token/s"}, 1 / 50),
    ({"metric": "aggregate_tokens_per_s", "value": "800 token/s", "batch": 4}, 4 / 800),
    ({"metric": "e2e_latency", "value": "1.2 s", "ttft": "200 ms", "output_tokens": 11}, (1.2 - 0.2) / 10),
    ({"metric": "e2e_latency", "value": "1.1 s", "output_tokens": 11}, 1.1 / 11),
])
def test_measured_step_rules(fields, step):
    assert v.measured_step(_synthetic(**fields)) == pytest.approx(step, rel=1e-12)


def test_prefill_share_follows_the_batching():
    assert _record("nim-h100-llama3.3-70b-fp8-tp2-c1-5000-500").prefill_share == 0  # ITL at concurrency 1: nobody else prefills
    assert _record("nim-h100-llama3.3-70b-fp8-tp2-c50-5000-500").regime == v.OTHER_REGIME
    assert _record("trtllm05-h100-llama2-7b-b64-2048-128").prefill_share > v.PREFILL_HEAVY_SHARE  # static batch, long prompt
    assert _record("lmdeploy-a100-llama2-7b-b1").regime == v.MEMORY_BOUND


def _generated(records, eta_bw, t_fixed, t_hop):
    """The records with their measured step replaced by the step model's own prediction."""
    return [dataclasses.replace(r, measured=r.predict(eta_bw, t_fixed, None, t_hop)) for r in records]


@pytest.mark.parametrize("eta_bw, t_fixed, t_hop", [(0.63, 1.3e-3, 4e-6), (0.9, 0.0, 0.0), (0.41, 4e-3, 12e-6)])
def test_calibration_recovers_known_parameters_exactly(eta_bw, t_fixed, t_hop):
    records = _generated(v.evaluate_records(RECORDS), eta_bw, t_fixed, t_hop)  # every record, compute-bound components included
    c = v.fit(records)
    assert c.eta_bw == pytest.approx(eta_bw, rel=1e-9)
    assert c.t_fixed == pytest.approx(t_fixed, rel=1e-9, abs=1e-12)
    assert c.t_hop == pytest.approx(t_hop, rel=1e-9, abs=1e-14)


def test_one_record_fits_eta_bw_with_the_rest_held():
    (r,) = _generated([_record("vllm-h200-llama3.1-8b-b8")], 0.7, 1e-3, 0.0)
    c = v.fit([r], t_fixed=1e-3, t_hop=0.0)
    assert c.eta_bw == pytest.approx(0.7, rel=1e-9) and c.t_fixed == 1e-3 and "held" in c.how
    with pytest.raises(ValueError, match="one record"):
        v.fit([r])
    with pytest.raises(ValueError, match="tensor parallelism"):
        v.fit([r, r], t_fixed=1e-3)  # one GPU: no all-reduce, so no hop latency to fit


def test_a_record_faster_than_the_datasheet_binds_eta_bw_at_one():
    r = _record("vllm-h200-llama3.1-8b-b8")
    fast = dataclasses.replace(r, measured=0.5 * r.floor())
    c = v.fit([fast], t_fixed=0.0, t_hop=0.0)
    assert c.eta_bw == 1.0 and "bound at 1" in c.how


def test_dataset_defaults_beat_a_wrong_guess():
    d = v.dataset_defaults(RECORDS)
    assert 0 < d.eta_bw <= 1 and d.t_fixed >= 0 and d.t_hop >= 0
    fitted = v.validate(RECORDS, d).summaries
    wrong = v.validate(RECORDS, v.Calibration(0.95, 0.0, 0.0, "guess")).summaries
    assert fitted[0].median_abs_error < wrong[0].median_abs_error


def test_stored_defaults_are_a_fresh_fit(tmp_path):
    """specs/measurements/defaults.toml is what `roofline calibrate --write-defaults` writes today: a new record, a model change
    or a step-model change that moves the fit (or the summary the sheets cite) fails here until the file is rewritten."""
    from roofline.validate import write_defaults
    from specs.measurements import FITTED_DEFAULTS_PATH

    fresh = tmp_path / "defaults.toml"
    write_defaults(fresh)
    assert fresh.read_text(encoding="utf-8") == FITTED_DEFAULTS_PATH.read_text(encoding="utf-8"), \
        "the stored defaults are stale: run `roofline calibrate --write-defaults`, then `roofline build`"


def test_sheet_defaults_are_the_stored_ones():
    from specs.measurements import load_fitted_defaults

    stored = load_fitted_defaults()
    d = v.sheet_defaults()
    assert v.default_texts(d) == dict(stored.values)
    assert d.ids == stored.records and len(stored.records) >= 10


def test_mbu_range_is_ordered_and_physical():
    low, mid, high = v.measured_mbu_range(RECORDS)
    assert 0 < low <= mid <= high <= 1


def test_validate_md_lists_every_record(capsys):
    code, out, err = run(capsys, "validate")
    assert code == 0 and not err
    for m in RECORDS:
        assert f"| {m.id} |" in out
    assert "median abs error" in out and "Dataset defaults (every sheet's defaults" in out and "Stale" not in out


def test_validate_json_rows_and_summaries_agree(capsys):
    code, out, _ = run(capsys, "validate", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert {r["id"] for r in data["records"]} == {m.id for m in RECORDS}
    for regime, s in data["summary_dataset_defaults"].items():
        errs = [abs(r["error_dataset_defaults"]) for r in data["records"] if regime in ("all", r["regime"])]
        assert s["records"] == len(errs)
        assert s["median_abs_error"] == pytest.approx(statistics.median(errs))
    for r in data["records"]:
        assert r["floor_s"] < r["predicted_hand_set_s"] < r["predicted_dataset_defaults_s"]
        assert r["error_hand_set"] == pytest.approx((r["predicted_hand_set_s"] - r["measured_s"]) / r["measured_s"])


def test_calibrate_from_one_record(capsys):
    rid = "nim-h100-llama3.3-70b-fp8-tp2-c1-5000-500"
    code, out, _ = run(capsys, "calibrate", "--from", rid, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["from"] == [rid]
    fitted = [r for r in data["records"] if r["calibrated_on"]]
    assert len(fitted) == 1 and fitted[0]["error"] == pytest.approx(0, abs=1e-9)  # one record, one free input: it is met exactly
    assert data["t_fixed_s"] == pytest.approx(data["dataset_defaults"]["t_fixed_s"])
    assert len(data["records"]) == len(RECORDS)


def test_calibrate_md(capsys):
    code, out, _ = run(capsys, "calibrate", "--from", "lmdeploy-a100-llama2-7b-b1", "lmdeploy-a100-llama2-7b-b64")
    assert code == 0 and "same engine and chip" in out
    # 10.00 ms at batch 1 and 15.40 ms at batch 64 rise faster than the model's bytes: t_fixed would go negative, so it binds at 0
    assert "t\\_fixed bound at 0; eta\\_bw fitted" in out  # Markdown-escaped, as everything the report prints from a fit


def test_calibrate_unknown_record_is_one_line(capsys):
    code, out, err = run(capsys, "calibrate", "--from", "lmdeploy-a100-llama2-7b-b2")
    assert code == 2 and not out
    assert err.count("\n") == 1 and "did you mean" in err and "lmdeploy-a100-llama2-7b-b1" in err


def test_readme_figures_are_current():
    """The README's validation section quotes `roofline validate`; a new record or a model change must update it."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Validation against real servers")
    text = " ".join(readme[start:readme.index("\n## ", start + 1)].split())
    d = v.sheet_defaults()
    texts = v.default_texts(d)
    mem, other, _ = v.validate(RECORDS, d).summaries
    hand = v.validate(RECORDS, v.HAND_SET).summaries[0]
    loo = v.leave_one_out(RECORDS)
    low, mid, high = v.measured_mbu_range(RECORDS)
    assert f"{len(RECORDS)} records today" in text
    assert f"memory-bound median absolute error {hand.median_abs_error * 100:.0f}%" in text
    assert f"to the {mem.count} memory-bound records" in text
    assert (f"eta_bw = {texts['eta_bw']}, t_fixed = {texts['t_fixed']} and t_hop = {texts['hop_latency']} give a median of "
            f"{mem.median_abs_error * 100:.1f}% (worst {mem.worst_error * 100:+.0f}%") in text
    assert f"records stay at {other.median_abs_error * 100:.0f}%" in text
    assert f"leave-one-out median of {loo.one_summary[0].median_abs_error * 100:.1f}%" in text
    assert f"the group {loo.group_summary[0].median_abs_error * 100:.1f}%" in text
    assert f"0.{round(low * 100)} to 0.{round(high * 100)} (median 0.{round(mid * 100)})" in text

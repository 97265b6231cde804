"""`roofline validate` and `roofline calibrate`: the shared step model against the measurements dataset."""

import contextlib
import dataclasses
import io
import json
import statistics
from pathlib import Path

import pytest
from roofline.derivations.physics import fitting
from roofline.derivations.physics import validation as v
from roofline.specs.measurements import load_measurements, parse_measurements

from roofline import api
from roofline.cli import main

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
    served = [f"prompt_len={m.input_tokens}", f"output_len={m.output_tokens}"] if v.serving(m) else []  # a server at load: the serving step
    setup = [f"batch={v.running_batch(m)}", f"context={v.mean_context(m)}", f"tp={m.tp}", *served]
    sheet = api.derive("decode-floor", m.hardware.key, m.model.key, m.weights, m.kv, m.math, setup)
    assert r.at(v.sheet_defaults()) == pytest.approx(sheet.results["t_step"].float, rel=1e-12)
    other = api.derive("decode-floor", m.hardware.key, m.model.key, m.weights, m.kv, m.math,
                       [*setup, "eta_bw=0.55", "t_layer=40us", "t_fixed=3ms", "eta_flops=1", "ar_latency=5us", "t_seq=20us"])
    assert r.predict(0.55, 40e-6, 3e-3, 5e-6, 1.0, 20e-6) == pytest.approx(other.results["t_step"].float, rel=1e-12)


def test_prediction_matches_roofline_derive_json(capsys):
    r = _record("vllm-h200-llama3-70b-tp4-b8")
    m = r.m
    code, out, _ = run(capsys, "derive", "decode-floor", "--hardware", "h200", "--model", "llama-3.1-70b", "--set", f"batch={m.batch}",
                       "--set", f"context={v.mean_context(m)}", "--set", "tp=4", "--format", "json")
    assert code == 0
    t_step = json.loads(out)["results"]["t_step"]["si_value"]
    assert r.at(v.sheet_defaults()) == pytest.approx(t_step, rel=1e-9)


def test_all_reduce_latency_is_one_round_per_all_reduce_on_a_switch():
    """On NVSwitch (H200, A100) an all-reduce is one-shot: t_ar enters as 2 all-reduces per layer of one round each, the same at
    TP 2, 4 and 8; nothing on one GPU."""
    for rid, layers in (("vllm-h200-llama3-70b-tp4-b8", 80), ("gptfast-a100-llama2-7b-tp2", 32), ("gptfast-a100-llama2-7b-tp8", 32)):
        r = _record(rid)
        assert r.predict(0.8, 0.0, 0.0, 1e-6) - r.predict(0.8, 0.0, 0.0, 0.0) == pytest.approx(2 * layers * 1e-6, rel=1e-9)
    one = _record("vllm-h200-llama3.1-8b-b8")
    assert one.predict(0.8, 0.0, 0.0, 1e-6) == one.predict(0.8, 0.0, 0.0, 0.0)


def test_per_layer_overhead_is_paid_in_every_layer():
    for rid, layers in (("vllm-h200-llama3-70b-tp4-b8", 80), ("vllm-h200-llama3.1-8b-b8", 32)):
        r = _record(rid)
        assert r.predict(0.8, 1e-6, 0.0, 0.0) - r.predict(0.8, 0.0, 0.0, 0.0) == pytest.approx(layers * 1e-6, rel=1e-9)


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


def _generated(records, eta_bw, t_layer, t_fixed, t_ar):
    """The records with their measured step replaced by the step model's own prediction."""
    return [dataclasses.replace(r, measured=r.predict(eta_bw, t_layer, t_fixed, t_ar)) for r in records]


@pytest.mark.parametrize("eta_bw, t_layer, t_fixed, t_ar", [(0.63, 40e-6, 1.3e-3, 4e-6), (0.9, 0.0, 0.0, 0.0), (0.41, 120e-6, 0.0, 12e-6)])
def test_calibration_recovers_known_parameters_exactly(eta_bw, t_layer, t_fixed, t_ar):
    """Records the step model generated give back the four parameters it generated them with (every record, compute-bound
    components and every source weighting included)."""
    records = _generated(v.evaluate_records(RECORDS), eta_bw, t_layer, t_fixed, t_ar)
    c = fitting.fit(records)
    assert c.eta_bw == pytest.approx(eta_bw, rel=1e-9)
    assert c.t_layer == pytest.approx(t_layer, rel=1e-9, abs=1e-14)
    assert c.t_fixed == pytest.approx(t_fixed, rel=1e-9, abs=1e-12)
    assert c.t_ar == pytest.approx(t_ar, rel=1e-9, abs=1e-14)


def test_a_family_fit_recovers_its_own_parameters_and_holds_what_it_cannot_see():
    """One engine family's records generated with its own parameters give them back; records of one GPU hold t_ar."""
    fam = [r for r in v.evaluate_records(RECORDS) if r.family == "gpt-fast"]
    c = fitting.fit_distinct(_generated(fam, 0.7, 30e-6, 0.0, 9e-6), v.sheet_defaults(), "held")
    assert (c.eta_bw, c.t_layer, c.t_ar) == pytest.approx((0.7, 30e-6, 9e-6), rel=1e-9)
    single = [r for r in _generated(fam, 0.7, 30e-6, 0.0, 9e-6) if r.m.tp == 1]
    held = fitting.fit_distinct(single, v.sheet_defaults(), "held")
    assert held.t_ar == v.sheet_defaults().t_ar
    assert "t_fixed, t_seq and t_ar held" in held.how  # one GPU at batch 1: no all-reduce, and t_seq is t_fixed there


def test_one_record_fits_eta_bw_with_the_rest_held():
    (r,) = _generated([_record("vllm-h200-llama3.1-8b-b8")], 0.7, 20e-6, 1e-3, 0.0)
    c = fitting.fit([r], {"t_layer": 20e-6, "t_fixed": 1e-3, "t_ar": 0.0, "t_seq": 0.0})
    assert c.eta_bw == pytest.approx(0.7, rel=1e-9) and c.t_fixed == 1e-3 and "held" in c.how
    with pytest.raises(fitting.IndistinctError):
        fitting.fit([r])
    with pytest.raises(fitting.IndistinctError, match="tensor parallelism"):
        fitting.fit([r, r, r], {"t_layer": 0.0, "t_seq": 0.0})  # one GPU: no all-reduce, so no all-reduce latency to fit


def test_a_record_faster_than_the_datasheet_binds_eta_bw_at_one():
    r = _record("vllm-h200-llama3.1-8b-b8")
    fast = dataclasses.replace(r, measured=0.5 * r.floor())
    c = fitting.fit([fast], {"t_layer": 0.0, "t_fixed": 0.0, "t_ar": 0.0, "t_seq": 0.0})
    assert c.eta_bw == 1.0 and "bound at 1" in c.how


def test_every_source_weighs_the_same():
    rs = v.memory_bound(RECORDS)
    w = fitting.source_weights(rs)
    per_source: dict[str, float] = {}
    for r, wi in zip(rs, w, strict=True):
        per_source[r.source] = per_source.get(r.source, 0.0) + wi * r.measured ** 2
    assert all(x == pytest.approx(1.0) for x in per_source.values())


def test_dataset_defaults_beat_a_wrong_guess():
    d = fitting.dataset_defaults(RECORDS)
    assert 0 < d.eta_bw <= 1 and d.t_layer >= 0 and d.t_fixed >= 0 and d.t_ar >= 0
    fitted = v.validate(RECORDS, d).summaries
    wrong = v.validate(RECORDS, v.Calibration(0.95, 0.0, 0.0, 0.0, "guess")).summaries
    assert fitted[0].median_abs_error < wrong[0].median_abs_error


def test_stored_profiles_are_a_fresh_fit(tmp_path):
    """specs/measurements/profiles/ holds what `roofline calibrate --write-defaults` writes today: a new record, a model change
    or a step-model change that moves a fit (or the summary the sheets cite) fails here until the files are rewritten."""
    from roofline.specs.measurements import PROFILES_DIR

    for p in fitting.fresh_profiles(RECORDS):
        stored = (PROFILES_DIR / f"{p.name}.toml").read_text(encoding="utf-8")
        assert fitting.profile_file_text(p) == stored, f"the {p.name} profile is stale: run `roofline calibrate --write-defaults`, then `roofline build`"


def test_write_profiles_writes_each_file_whole(tmp_path):
    from roofline.validate import write_defaults

    out = write_defaults(tmp_path)
    names = {p.stem for p in tmp_path.glob("*.toml")}
    assert "fitted" in names and "ideal" not in names  # the hand-written profile is left alone
    assert not list(tmp_path.glob(".*tmp"))  # no temporary file left behind
    assert "wrote" in out and "fitted.toml" in out


def test_sheet_defaults_are_the_stored_fitted_profile():
    from roofline.specs.measurements import load_profiles

    stored = load_profiles()["fitted"]
    d = v.sheet_defaults()
    assert fitting.default_texts(d) == dict(stored.values)
    assert d.ids == stored.records and len(stored.records) >= 10


def test_family_profiles_have_enough_records():
    from roofline.specs.measurements import load_profiles

    for name, p in load_profiles().items():
        if name not in ("fitted", "ideal"):
            assert len(p.records) >= fitting.MIN_FAMILY_RECORDS
            assert {family for family in (v.family_name(m.engine) for m in RECORDS if m.id in p.records)} == {name}


def test_out_of_sample_fits_never_see_what_they_predict():
    oos = fitting.out_of_sample(RECORDS)
    by_id = {m.id: m for m in RECORDS}
    for src, c in oos.loso_fits.items():
        assert all(by_id[i].path.name != src for i in c.ids)
    assert oos.tp8 and all(by_id[x.id].tp == 8 for x in oos.tp8)
    assert oos.tp8_fit is not None and all(by_id[i].tp <= 4 for i in oos.tp8_fit.ids)


def test_mbu_range_is_ordered_and_physical():
    low, mid, high = v.measured_mbu_range(RECORDS)
    assert 0 < low <= mid <= high <= 1


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_validate_md_lists_every_record(capsys):
    code, out, err = run(capsys, "validate")
    assert code == 0 and not err
    for m in RECORDS:
        assert f"| {m.id} |" in out
    assert "median abs error" in out and "Default profile (every sheet's defaults" in out and "Stale" not in out


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_validate_json_rows_and_summaries_agree(validate_json):
    data = validate_json
    assert {r["id"] for r in data["records"]} == {m.id for m in RECORDS}
    for regime, s in data["summary_dataset_defaults"].items():
        errs = [abs(r["error_dataset_defaults"]) for r in data["records"] if regime in ("all", r["regime"])]
        assert s["records"] == len(errs)
        assert s["median_abs_error"] == pytest.approx(statistics.median(errs))
    for r in data["records"]:
        assert r["floor_s"] < r["predicted_hand_set_s"] < r["predicted_dataset_defaults_s"]
        assert r["error_hand_set"] == pytest.approx((r["predicted_hand_set_s"] - r["measured_s"]) / r["measured_s"])


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_calibrate_from_one_record(capsys):
    rid = "lmdeploy-a100-llama2-70b-tp4-b16"
    code, out, _ = run(capsys, "calibrate", "--from", rid, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["from"] == [rid]
    fitted = [r for r in data["records"] if r["calibrated_on"]]
    assert len(fitted) == 1 and fitted[0]["error"] == pytest.approx(0, abs=1e-9)  # one record, one free input: it is met exactly
    assert data["t_fixed_s"] == pytest.approx(data["dataset_defaults"]["t_fixed_s"])
    assert len(data["records"]) == len(RECORDS)
    # a record faster than the model at datasheet bandwidth is not met: eta_bw binds at 1 and the report says so (NIM at one user:
    # its 5,000-token prompts, run inside the serving step, already take more than the measured step at the dense peak's 70%)
    code, out, _ = run(capsys, "calibrate", "--from", "nim-h100-llama3.3-70b-fp8-tp2-c1-5000-500", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["eta_bw"] == 1.0 and "bound at 1" in data["how"]


def test_calibrate_md(capsys):
    code, out, _ = run(capsys, "calibrate", "--from", "lmdeploy-a100-llama2-7b-b1", "lmdeploy-a100-llama2-7b-b64")
    assert code == 0 and "same engine and chip" in out
    # 10.00 ms at batch 1 and 15.40 ms at batch 64 rise faster than the model's bytes: t_fixed would go negative, so it binds at 0
    assert "t\\_fixed bound at 0; eta\\_bw fitted" in out  # Markdown-escaped, as everything the report prints from a fit


def test_calibrate_unknown_record_is_one_line(capsys):
    code, out, err = run(capsys, "calibrate", "--from", "lmdeploy-a100-llama2-7b-b2")
    assert code == 2 and not out
    assert err.count("\n") == 1 and "did you mean" in err and "lmdeploy-a100-llama2-7b-b1" in err


@pytest.fixture(scope="module")
def validate_json() -> dict:
    """What `roofline validate --format json` prints, run once for the tests that read it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["validate", "--format", "json"]) == 0
    return json.loads(out.getvalue())


def _readme_section(title: str) -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"## {title}")
    return " ".join(readme[start:readme.index("\n## ", start + 1)].split())


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_readme_figures_are_current(validate_json):
    """Every figure the README's validation section quotes is what `roofline validate` prints now: a new record, a refit or a
    model change that moves one must update the README (no typed copy of a figure here)."""
    text = _readme_section("Validation against real servers")
    d = validate_json
    pct = lambda x: f"{x * 100:.1f}%"  # noqa: E731
    pct0 = lambda x: f"{x * 100:.0f}%"  # noqa: E731
    mem = v.MEMORY_BOUND
    records = {r["id"]: r for r in d["records"]}
    by_id = {m.id: m for m in RECORDS}
    assert set(records) == set(by_id)

    # the dataset
    sources = {r["source_file"] for r in records.values()}
    chips = sorted({r["hardware"].split("-")[0].upper() for r in records.values()})
    engines = sorted({r["engine"] for r in records.values()}, key=str.lower)
    batches = [m.batch for m in RECORDS]
    tps = sorted({r["tp"] for r in records.values()})
    assert (f"{len(records)} records today from {len(sources)} sources: {', '.join(chips)}; {', '.join(engines)}; batch "
            f"{min(batches)} to {max(batches)}; TP {tps[0]} to {tps[-1]}") in text
    eight = {r["source_file"] for r in records.values() if r["tp"] == 8}
    if "eight GPUs only in gpt-fast's A100 table" in text:
        assert eight == {"gpt-fast-a100-tensor-parallel.toml"}, eight

    # before and after the fit
    hand = d["summary_hand_set"][mem]
    assert f"memory-bound median absolute error {pct0(hand['median_abs_error'])} (worst {hand['worst_error'] * 100:+.0f}%)" in text
    fitted = d["profiles"]["fitted"]["values"]
    at = d["summary_dataset_defaults"]
    assert f"to the {d['profiles']['fitted']['records']} memory-bound records" in text  # the excluded ones are never fitted
    assert (f"eta_bw = {fitted['eta_bw']}, t_layer = {fitted['t_layer']}, t_fixed = {fitted['t_fixed']} and ar_latency = "
            f"{fitted['ar_latency']} give a median of {pct(at[mem]['median_abs_error'])} (worst {at[mem]['worst_error'] * 100:+.0f}%), "
            f"with t_seq = {fitted['t_seq']}") in text
    assert f"records stay at {pct0(at[v.OTHER_REGIME]['median_abs_error'])}" in text
    assert not d["stale_profiles"], "the shipped profiles are not today's fit: run roofline calibrate --write-defaults"

    # the out-of-sample figures against their targets
    targets = d["targets"]
    loso = d["leave_one_source_out"][mem]["median_abs_error"]
    per_tp = d["per_tp_dataset_defaults"]
    tp8 = d["tp8_from_tp4_fit"][mem]["median_abs_error"]
    assert f"| {pct(loso)} | {pct0(targets['loso'])} |" in text
    assert (f"| TP {' / '.join(k.removeprefix('TP ') for k in per_tp)} at the fitted profile | "
            f"{' / '.join(pct(s['median_abs_error']) for s in per_tp.values())} | {pct0(targets['per_tp'])} each |") in text
    assert f"| {pct(tp8)} | {pct0(targets['tp8_from_tp4'])} |" in text
    missed = [loso > targets["loso"], any(s["median_abs_error"] > targets["per_tp"] for s in per_tp.values()),
              tp8 > targets["tp8_from_tp4"]]
    verdict = {3: "All three are missed", 2: "Two of the three are missed", 1: "One of the three is missed", 0: "All three are met"}
    assert verdict[sum(missed)] in text

    # why: the engines' overheads differ, a cost per sequence in LLM-Inference-Bench's static batches
    profiles = d["profiles"]
    assert f"(gpt-fast {profiles['gpt-fast']['values']['t_layer']}, TensorRT-LLM {profiles['tensorrt-llm']['values']['t_layer']}," in text
    llmib = {i: r for i, r in records.items() if r["source_file"] == "llm-inference-bench-a100-tensorrt-llm.toml"}
    odd = "llmib-a100-llama2-7b-tp1-b16-128"
    assert "(Llama 2 7B, one GPU, batch 16) is slower than the same run at batch 32" in text
    assert by_id[odd].model.key == "llama-2-7b" and by_id[odd].tp == 1 and by_id[odd].batch == 16
    assert llmib[odd]["measured_s"] > llmib[odd.replace("-b16-", "-b32-")]["measured_s"]
    growth: dict[bool, list[float]] = {False: [], True: []}
    added = []
    for i, r in llmib.items():
        if "-b16-" in i and i != odd and (one := llmib.get(i.replace("-b16-", "-b1-"))):
            growth["70b" in r["model"]].append((r["measured_s"] - one["measured_s"]) * 1e3)
            added.append((r["predicted_dataset_defaults_s"] - one["predicted_dataset_defaults_s"]) * 1e3)
    contexts = {v.mean_context(by_id[i]) for i in llmib}
    (context,) = contexts
    assert (f"from batch 1 to batch 16 by {min(growth[False]):.1f} to {max(growth[False]):.1f} ms (7B and 8B models) and "
            f"{min(growth[True]):.1f} to {max(growth[True]):.1f} ms (70B) at a mean context of {context} tokens, where the model adds "
            f"at most {max(added):.1f} ms") in text

    # in sample, the leave-one-out calibrations, MBU
    fam = d["at_family_profiles_in_sample"]
    assert (f"engine-family profile the median is {pct(fam[mem]['median_abs_error'])} (TP {' / '.join(k.removeprefix('TP ') for k in fam['by_tp'])}: "
            + " / ".join(pct(s["median_abs_error"]) for s in fam["by_tp"].values()) + ")") in text
    assert f"leave-one-out median of {pct(d['leave_one_out_one_record'][mem]['median_abs_error'])}" in text
    assert f"the group {pct(d['leave_one_out_group'][mem]['median_abs_error'])}" in text
    mbu = d["implied_mbu_memory_bound"]
    assert f"{mbu['min']:.2f} to {mbu['max']:.2f} (median {mbu['median']:.2f})" in text

    # the held-out serving results: their count, median, worst and per-source medians
    held = d["held_out"]
    hs = held["summary_default_profile"]
    assert f"holds {len(held['records'])} published records" in text
    assert (f"median absolute error {pct(hs['all']['median_abs_error'])} over the {hs['all']['records']} (worst "
            f"{hs['all']['worst_error'] * 100:+.1f}%") in text
    for source, said in (("aiconfigurator-h100-llama-3.1-70b-vllm.toml", "the curve's records"),
                         ("aiconfigurator-h200-deepseek-v3-disaggregated.toml", "the H200 decode pool"),
                         ("inferencex-gb200-deepseek-r1-disaggregated.toml", "the GB200 pool"),
                         ("atom-mi355x-deepseek-v3.2-tp4.toml", "four-GPU runs by"),
                         ("atom-mi355x-deepseek-v3.2-tp8.toml", "eight-GPU runs by"),
                         ("atom-mi355x-qwen3-next-tp1-aw.toml", "one GPU (AW matrix)"),
                         ("atom-mi355x-qwen3-next-tp1-met.toml", "one GPU (MET matrix)"),
                         ("atom-mi355x-qwen3-next-tp4-met.toml", "four GPUs"),
                         ("gpustack-h200-deepseek-v3.2-vllm.toml", "H200: vLLM"),
                         ("gpustack-h200-deepseek-v3.2-sglang.toml", "SGLang DP-attention"),
                         ("sglang-cookbook-b200-deepseek-v3.2.toml", "DeepSeek-V3.2-Exp"),
                         ("sglang-cookbook-b200-qwen3-next.toml", "cookbook on B200: Qwen3-Next"),
                         ("sglang-pr10404-h200-qwen3-next.toml", "(three layouts)"),
                         ("sglang-pr18271-b200-qwen3-next.toml", "SGLang on B200"),
                         ("vllm-pr26887-h100-qwen3-next.toml", "vLLM on H100")):
        assert f"{said} {pct(hs[source]['median_abs_error'])}" in text, source
    worst = hs["atom-mi355x-deepseek-v3.2-tp4.toml"]["worst_error"]
    assert f"four-GPU runs by {pct(hs['atom-mi355x-deepseek-v3.2-tp4.toml']['median_abs_error'])} (worst {worst * 100:+.0f}% at" in text

    # the engine profiles: every row, who has one and who has not
    for name, p in profiles.items():
        x = p["values"]
        row = f"| {x['eta_bw']} | {x['t_layer']} | {x['t_fixed']} | {x['t_seq']} | {x['ar_latency']} | {p['records']} |"
        assert row in text, name
        assert f"| `{name}`" in text, name
    families = {}
    for r in records.values():
        if r["regime"] == mem and r["id"] not in d["excluded"]:
            families.setdefault(r["engine"], []).append(r["id"])
    without = sorted((e for e in families if v.family_name(e) not in profiles), key=str.lower)
    assert all(len(families[e]) < fitting.MIN_FAMILY_RECORDS for e in without)
    counts = {len(families[e]) for e in without}
    said = (f"({without[0]} has {counts.pop()})" if len(without) == 1 else f"({' and '.join(without)} have {counts.pop()} each)" if len(counts) == 1
            else "(" + ", ".join(f"{e} has {len(families[e])}" for e in without) + ")")
    assert f"at least {fitting.MIN_FAMILY_RECORDS} memory-bound records of it {said}" in text
    fitted_profiles = [p for p in profiles.values() if p["records"]]
    assert {p["values"]["eta_flops"] for p in fitted_profiles} == {v.HELD_ETA_FLOPS}
    assert f"eta_flops is {v.HELD_ETA_FLOPS} in every fitted profile, held" in text

    # by regime: the serving step's targets, each figure against its target, and the verdict
    figs, rt = d["regime_figures"], d["regime_targets"]
    for k in rt:
        assert f"| {pct(figs[k])} | {pct0(rt[k])} |" in text, k
    missed_regimes = sum(figs[k] > rt[k] for k in rt)
    assert {4: "All four are missed", 3: "Three of the four are missed", 2: "Two of the four are missed", 1: "One of the four is missed",
            0: "All four are met"}[missed_regimes] in text
    assert f"{len(d['excluded'])} records are marked `excluded`" in text

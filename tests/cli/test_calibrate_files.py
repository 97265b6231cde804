"""`roofline calibrate --from FILE`: an engine profile fitted to a user's own benchmark result files.

The files here are constructed (named so): a step model's own predictions written as vLLM results, which the fit must
recover, and broken files, which must be refused in one line. The real result files of public repositories are
tests/fixtures/results/ (test_result_fixtures.py).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from roofline.derivations.physics import validation as v
from roofline.specs.hardware import load_hardware
from roofline.specs.measurements import load_profile_file
from roofline.specs.models import load_model
from roofline.specs.results import Given, Run, to_record

from roofline.cli import main

TRUE = {"eta_bw": 0.7, "t_seq": 90e-6}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _vllm(path: Path, concurrency: int, prompt: int, output: int, tpot_s: float, **extra) -> Path:
    """A constructed vLLM `bench serve --save-result` file: 100 requests at `concurrency`, each of `prompt` and `output` tokens."""
    ttft = 0.05
    e2e = ttft + tpot_s * (output - 1)
    d = {"date": "20260101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 100,
         "max_concurrency": concurrency, "request_rate": "inf", "completed": 100, "total_input_tokens": 100 * prompt,
         "total_output_tokens": 100 * output, "request_throughput": concurrency / e2e, "mean_ttft_ms": ttft * 1e3,
         "mean_tpot_ms": tpot_s * 1e3, "mean_itl_ms": tpot_s * 1e3, "mean_e2el_ms": e2e * 1e3, **extra}
    path.write_text(json.dumps(d))
    return path


def _truth(concurrency: int, prompt: int, output: int) -> float:
    """The step model's TPOT for a run at the true engine values (TRUE), the rest at the default profile."""
    g = Given(load_hardware("h100-sxm"), load_model("llama-3.1-8b"))
    run_ = Run(Path("x.json"), "vllm", "", "mean_tpot_ms", 0.01, 100, prompt, output, 0.05, concurrency, concurrency, None, "vllm", None)
    (r,) = v.evaluate_records((to_record(run_, g, "x"),))
    return r.at(v.sheet_defaults().replaced(**TRUE))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> list[Path]:
    """Constructed: four runs of Llama 3.1 8B on one H100 at two contexts and three concurrencies, their TPOT the step model's
    own at eta_bw 0.7 and t_seq 90 us."""
    folder = tmp_path_factory.mktemp("results")
    runs = [(1, 1024, 256), (8, 1024, 256), (32, 4096, 256), (64, 512, 128)]
    return [_vllm(folder / f"vllm-c{c}-in{p}.json", c, p, o, _truth(c, p, o)) for c, p, o in runs]


def test_the_fit_recovers_the_engine_values_the_runs_were_made_with(capsys, sweep):
    code, out, err = run(capsys, "calibrate", "--from", *map(str, sweep), "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["fit"]["eta_bw"] == pytest.approx(TRUE["eta_bw"], rel=1e-3)
    assert d["fit"]["t_seq_s"] == pytest.approx(TRUE["t_seq"], rel=1e-2)
    assert d["errors"]["in_sample"]["worst_abs"] < 1e-3
    assert d["errors"]["leave_one_out"]["worst_abs"] < 1e-2  # each run predicted from the other three
    assert d["errors"]["uncalibrated"]["median_abs"] > 0.05  # the default profile is not these values
    assert [f["sha256"] for f in d["files"]] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in sweep]
    assert d["profile"] is None


def test_a_named_profile_is_written_with_its_provenance_and_every_sheet_uses_it(capsys, sweep, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PROFILES", str(tmp_path / "profiles"))
    code, out, err = run(capsys, "calibrate", "--from", *map(str, sweep), "--hardware", "h100-sxm", "--model", "llama-3.1-8b",
                         "--name", "my-cluster")
    assert code == 0, err
    path = tmp_path / "profiles" / "my-cluster.toml"
    assert f"Wrote `{path}`" in out
    p = load_profile_file(path)
    assert float(p.values["eta_bw"]) == pytest.approx(0.7)
    assert p.values["t_seq"] == "90 us"
    assert [name for name, _ in p.files] == [s.name for s in sweep]
    assert dict(p.files)[sweep[0].name] == hashlib.sha256(sweep[0].read_bytes()).hexdigest()
    assert float(p.summary["uncalibrated_error"]) > float(p.summary["loo_error"])
    assert len(p.records) == 4
    code, out, err = run(capsys, "derive", "decode-floor", "--engine", "my-cluster", "--plots", str(tmp_path / "plots"))
    assert code == 0, err
    assert "| `eta_bw` |" in out or "eta_bw = 0.7" in out
    assert "Times use your engine rates, fitted to 4 benchmark runs (profile \u201cmy-cluster\u201d): a run left out of the fit lands within" in out
    code, out, err = run(capsys, "derive", "decode-floor", "--engine", "my-clustr")
    assert code == 2 and "did you mean my-cluster?" in err and len(err.strip().splitlines()) == 1


def test_one_run_calibrates_eta_bw_and_says_there_is_no_error_out_of_sample(capsys, sweep):
    code, out, err = run(capsys, "calibrate", "--from", str(sweep[0]), "--hardware", "h100-sxm", "--model", "llama-3.1-8b")
    assert code == 0, err
    assert "one run has nothing to be predicted from" in out
    assert "Nothing written: give `--name NAME`" in out


def test_a_gzipped_file_reads_as_the_file(capsys, sweep, tmp_path):
    packed = tmp_path / "run.json.gz"
    packed.write_bytes(gzip.compress(sweep[1].read_bytes()))
    code, out, err = run(capsys, "calibrate", "--from", str(packed), "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["batch"] == 8


def _refused(capsys, *argv) -> str:
    code, out, err = run(capsys, "calibrate", *argv)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_what_a_file_does_not_say_is_asked_for_by_name(capsys, sweep):
    f = str(sweep[0])
    assert "--hardware" in _refused(capsys, "--from", f, "--model", "llama-3.1-8b")
    line = _refused(capsys, "--from", f, "--hardware", "h100-sxm")
    assert "meta-llama/Llama-3.1-8B-Instruct" in line and "--model" in line
    line = _refused(capsys, "--from", f, "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--set", "batch=4")
    assert "concurrency" in line and "the file says 1" in line
    assert "no input by that name" in _refused(capsys, "--from", f, "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--set", "eta_bw=0.5")


@pytest.mark.parametrize(("content", "expected"), [
    ("", "empty file"),
    ("{not json", "valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"hello": 1}', "expected a benchmark result of vLLM"),
    ('{"completed": 10, "mean_tpot_ms": "fast", "total_input_tokens": 10, "total_output_tokens": 10}', "mean_tpot_ms: expected a number"),
    ('{"completed": 10, "mean_tpot_ms": NaN, "total_input_tokens": 10, "total_output_tokens": 10}', "mean_tpot_ms: expected a positive finite"),
    ('{"completed": 10, "mean_tpot_ms": -3, "total_input_tokens": 10, "total_output_tokens": 10}', "mean_tpot_ms: expected a positive finite"),
    ('{"completed": 10, "mean_tpot_ms": 5000000, "total_input_tokens": 10, "total_output_tokens": 10, "max_concurrency": 4}',
     "a real decode step takes"),
    ('{"completed": 10, "mean_tpot_ms": 8, "total_input_tokens": 10, "total_output_tokens": 10}', "concurrency: missing"),
    ('{"completed": 10, "mean_tpot_ms": 8}', "total_input_tokens: missing"),
    ('{"benchmarks": []}', "benchmarks: expected a list of one or more"),
    ('{"benchmarks": [{"metrics": {"time_per_output_token_ms": {"successful": {"mean": true}}}}]}', "expected a number"),
    ('{"inter_token_latency": {"unit": "fortnights", "avg": 3}}', "inter_token_latency.unit: expected ms"),
])
def test_a_broken_result_file_is_one_line_naming_the_file_and_field(capsys, tmp_path, content, expected):
    f = tmp_path / "result.json"
    f.write_text(content)
    line = _refused(capsys, "--from", str(f), "--hardware", "h100-sxm", "--model", "llama-3.1-8b")
    assert str(f) in line and expected in line


def test_a_gzip_that_unpacks_past_the_limit_is_refused_without_unpacking_it(capsys, tmp_path, monkeypatch):
    import roofline.specs.results as results

    monkeypatch.setattr(results, "MAX_RESULT_BYTES", 1 << 20)
    f = tmp_path / "bomb.json.gz"
    f.write_bytes(gzip.compress(b" " * (8 << 20)))
    assert "once unpacked" in _refused(capsys, "--from", str(f), "--hardware", "h100-sxm", "--model", "llama-3.1-8b")


def test_options_that_do_not_go_together_are_refused(capsys, sweep):
    f = str(sweep[0])
    assert "not both" in _refused(capsys, "--from", f, "lmdeploy-a100-llama2-7b-b1", "--hardware", "h100-sxm", "--model", "llama-3.1-8b")
    assert "--hardware: goes with --from FILE" in _refused(capsys, "--from", "lmdeploy-a100-llama2-7b-b1", "--hardware", "h100-sxm")
    assert "--to: goes with --name" in _refused(capsys, "--from", f, "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--to", "/tmp")
    assert "shipped engine profile" in _refused(capsys, "--from", f, "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--name", "vllm")
    assert "expected a profile name" in _refused(capsys, "--from", f, "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--name", "../x")

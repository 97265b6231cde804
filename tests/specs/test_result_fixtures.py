"""Real benchmark result files of public repositories (tests/fixtures/results/, each cited in its SOURCES.md) read as runs.

The expected values are the files' own fields (their TPOT or ITL mean, their concurrency, their token totals over the
completed requests), checked against what specs.results makes of them; the SOURCES.md table prints the same numbers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from roofline.specs.hardware import load_hardware
from roofline.specs.models import load_model
from roofline.specs.results import Given, read_result_file, runs

from roofline.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"

# file, format, runs' (concurrency, step field, step ms, prompt tokens, output tokens, requests in flight or None)
EXPECTED = [
    ("vllm/vllm054-h100-llama31-8b-fp8-tp1-sharegpt10.json", "vllm", None, "mean_tpot_ms", 6.018531635219421, 136.9, 44.2, 2.7189),
    ("vllm/vllm0251-cpu-opt125m-c2-bench_serve.json", "vllm", 2, "mean_tpot_ms", 11.266, 32, 16, 1.9921),
    ("vllm/vllm0251-cpu-opt125m-sweep-maxseqs4-c2-run0.json", "vllm", 2, "mean_tpot_ms", 8.205, 32, 16, 1.9941),
    ("sglang/sglang055-gh200-qwen25-3b-tp1-agg-in128-out128-c8.jsonl", "sglang", 8, "mean_tpot_ms", 5.218944320881992, 61.45, 61.8,
     7.771601081305936),
    ("sglang/sglang055-gh200-qwen25-3b-tp1-agg-in512-out128-c32.jsonl", "sglang", 32, "mean_tpot_ms", 8.544, 265.0, 61.8, 28.45),
    ("sglang/sglang-pd-1p2d-qwen25-3b-in2048-out512-c128.jsonl", "sglang", 128, "mean_tpot_ms", 9.376471181613141, 1089.29, 258.83,
     95.03425128599206),
    ("genai-perf/genaiperf-oldcfg-gptoss20b-c1.json", "genai-perf", 1, "inter_token_latency.avg", 7.503, 152.5, 124.4, 0.978),
    ("genai-perf/genaiperf-newcfg-telemetry-gptoss20b-c1.json", "genai-perf", 1, "inter_token_latency.avg", 7.753, 152.7, 73.5, 0.979),
    ("genai-perf/aiperf-early-a100-gptoss20b-c1.json", "genai-perf", 1, "inter_token_latency.avg", 18.032, 196.4, 283.5, 0.995),
    ("genai-perf/aiperf0100-rtx5090-qwen36-35b-a3b-nvfp4-sharegpt-c8.json", "genai-perf", 8, "inter_token_latency.avg", 9.05, 467.5, 228.2, 7.38),
    ("guidellm/guidellm-v0.2-tests-benchmarks_stripped.json", "guidellm", 1, "metrics.time_per_output_token_ms.successful.mean", 4.903,
     257, 128, 0.998),
    ("guidellm/guidellm050-arcb60-qwen3-30b-a3b-tp4-sync.json", "guidellm", 1, "metrics.time_per_output_token_ms.successful.mean", 38.672,
     92.1, 1024, 1.0),
    ("guidellm/guidellm050-arcb60-qwen3-4b-tp2-sync.json", "guidellm", 1, "metrics.time_per_output_token_ms.successful.mean", 19.658,
     108.3, 1024, 0.7146),
]


@pytest.mark.parametrize(("name", "fmt", "concurrency", "field", "step_ms", "prompt", "output", "in_flight"), EXPECTED,
                         ids=[e[0].split("/")[1] for e in EXPECTED])
def test_a_real_result_file_reads_as_its_own_fields_say(name, fmt, concurrency, field, step_ms, prompt, output, in_flight):
    found, digest, rs = runs(FIXTURES / name)
    assert found == fmt
    assert digest == hashlib.sha256((FIXTURES / name).read_bytes()).hexdigest()
    (r,) = rs
    assert r.concurrency == concurrency
    assert r.step_field == field
    assert r.step * 1e3 == pytest.approx(step_ms, rel=1e-3)
    assert r.input_tokens == pytest.approx(prompt, rel=2e-3)
    assert r.output_tokens == pytest.approx(output, rel=2e-3)
    assert r.in_flight == pytest.approx(in_flight, rel=2e-3)


def test_sglang_says_its_layout_and_a_disaggregated_run_is_its_decode_pool():
    g = Given(load_hardware("a100-sxm-80gb"), load_model("llama-3.1-8b"))
    (agg,) = read_result_file(FIXTURES / "sglang/sglang055-gh200-qwen25-3b-tp1-agg-in128-out128-c8.jsonl", g, set()).records
    assert (agg.tp, agg.dp, agg.ep, agg.role) == (1, 1, 1, None)
    (pd,) = read_result_file(FIXTURES / "sglang/sglang-pd-1p2d-qwen25-3b-in2048-out512-c128.jsonl", g, set()).records
    assert pd.role == "decode" and pd.tp == 1
    with pytest.raises(ValueError, match=r"server_info.tp_size: the file says 1, --set tp=2 says otherwise"):
        read_result_file(FIXTURES / "sglang/sglang055-gh200-qwen25-3b-tp1-agg-in128-out128-c8.jsonl", Given(g.hardware, g.model, fill={"tp": 2}), set())


def test_a_fit_to_a_run_slower_than_its_bytes_explain_says_so(capsys):
    """AIPerf's gpt-oss-20b run on an A100 (no MXFP4 tensor cores) takes 18 ms a token, four times the step model's: the fit's
    eta_bw would be 0.11 (its bytes: the experts of one decode, and of a prompt in the steps that carry one), which the report
    flags rather than passing on as an engine's efficiency."""
    code = main(["calibrate", "--from", str(FIXTURES / "genai-perf/aiperf-early-a100-gptoss20b-c1.json"), "--hardware", "a100-sxm-80gb",
                 "--model", "gpt-oss-20b", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["fit"]["eta_bw"] == pytest.approx(0.110, abs=0.005)
    assert d["errors"]["uncalibrated"]["median_abs"] > 0.7
    assert d["errors"]["leave_one_out"] is None
    assert any("slower than their bytes explain" in w for w in d["warnings"])


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_roofline_s_own_records_calibrate_with_an_error_out_of_sample(capsys):
    """The ML.ENERGY records (specs/measurements/ml-energy-v3-h100.toml, roofline's record format) as a user's file: every run
    predicted from a fit to the others."""
    path = Path(__file__).resolve().parents[2] / "specs" / "measurements" / "ml-energy-v3-h100.toml"
    code = main(["calibrate", "--from", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["files"][0]["format"] == "roofline" and d["files"][0]["runs"] == len(d["runs"]) > 100
    assert 0 < d["errors"]["leave_one_out"]["median_abs"] < 0.3

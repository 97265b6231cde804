"""`roofline diagnose TRACE`: real profiler traces (tests/fixtures/traces/, cited in its SOURCES.md) and constructed ones.

The constructed traces (built here, named so) fix the bucket arithmetic: steps of known kernels and gaps, whose measured
times the report must give exactly. The real ones check the readers, the classes and the buckets on what engines write.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from roofline.specs.traces import Kernel, read_trace

from roofline.cli import main
from roofline.diagnose import CLASS_NAMES, function_name, kernel_class, measure

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
H100 = TRACES / "vllm_llama70b_tp4_h100_rank0_prefill1_decode5.cut.json.gz"
SETUP = ["--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--set", "tp=4", "--set", "batch=32", "--set", "context=1005"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("name", "expected"), [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x256x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "weight GEMM"),
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x80x128_MI16x16x1_SN_LDSB1", "weight GEMM"),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "collective"),
    ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "collective"),
    ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<cute::tuple<int>>>>(flash::Params)", "attention"),
    ("void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, 256>(float const*)", "attention"),
    ("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", "grouped MoE GEMM"),
    ("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_TN_transOut_schedS", "grouped MoE GEMM"),
    # a parameter type naming a library is not what the kernel does: an activation quantizer, not attention
    ("void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, __nv_bfloat16, 32, true>"
     "(int, int, int, int, __nv_bfloat16 const*, float const*, unsigned int*, unsigned int*, flashinfer::QuantizationSFLayout)", "norm and elementwise"),
    ("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", "norm and elementwise"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp)",
     "sampling"),
    ("saxpy", "unknown"),
])
def test_a_kernel_is_classed_by_its_name_without_its_parameters(name, expected):
    assert kernel_class(Kernel(name, 0, 1, 0, 0, "kernel", None)) == expected


def test_a_copy_is_a_memory_copy_whatever_its_name():
    assert kernel_class(Kernel("Memset (Device)", 0, 1, 0, 0, "memset", None)) == "memory copy"
    assert function_name("void k<(E)2, T>(int, ns::flash)") == "void k<(E)2, T>"


def _constructed(path: Path, steps: int = 3) -> Path:
    """Constructed: `steps` host steps of 20 ms each, a step's kernels launched 0.1 ms into it: a 14 ms GEMM, a 1 ms attention
    kernel, a 0.5 ms all-reduce and a 0.25 ms norm, each 0.05 ms after the last, and a copy; a 100 ms prefill step first."""
    events: list[dict] = [{"ph": "X", "cat": "python_function", "name": "gpu_model_runner.py(1): execute_model", "ts": 0, "dur": 100_000}]
    corr = 1
    kernels = [("sm90_xmma_gemm_bf16", 90_000)]  # the prefill: one long GEMM
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 5, "args": {"correlation": corr}})
    events.append({"ph": "X", "cat": "kernel", "name": kernels[0][0], "ts": 100, "dur": kernels[0][1], "args": {"device": 0, "stream": 7, "correlation": corr}})
    for s in range(steps):
        base = 100_000 + s * 20_000
        events.append({"ph": "X", "cat": "python_function", "name": "gpu_model_runner.py(1): execute_model", "ts": base, "dur": 19_000})
        t = base + 100
        for name, dur, cat in (("sm90_xmma_gemm_bf16", 14_000, "kernel"), ("flash_fwd_splitkv_kernel", 1000, "kernel"),
                               ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 500, "kernel"), ("rms_norm_kernel", 250, "kernel"),
                               ("Memcpy DtoH (Device -> Pinned)", 50, "gpu_memcpy")):
            corr += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": base + 10, "dur": 5, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": cat, "name": name, "ts": t, "dur": dur, "args": {"device": 0, "stream": 7, "correlation": corr}})
            t += dur + 50
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}).encode()))
    return path


def test_the_constructed_trace_s_decode_steps_measure_as_built(tmp_path):
    m = measure(read_trace(_constructed(tmp_path / "t.json.gz")))
    assert [s.index for s in m.left_out] == [0]  # the prefill
    assert len(m.decode) == 3
    assert m.period == pytest.approx(20_000)
    assert m.class_time("weight GEMM") == pytest.approx(14_000)
    assert m.class_time("attention") == pytest.approx(1000)
    assert m.class_time("collective") == pytest.approx(500)
    assert m.class_time("norm and elementwise") == pytest.approx(250)
    assert m.class_time("memory copy") == pytest.approx(50)
    assert m.idle == pytest.approx(20_000 - 15_800)
    assert next(s.gaps for s in m.decode) == pytest.approx([50] * 4)
    assert m.decode[0].host_gap == pytest.approx(20_000 - 15_800 - 200)  # the next step's first kernel less this one's span


def test_the_constructed_trace_fills_the_buckets_and_they_add_up(capsys, tmp_path):
    code, out, err = run(capsys, "diagnose", str(_constructed(tmp_path / "t.json.gz")), *SETUP, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    b = {x["bucket"]: x for x in d["buckets"]}
    assert b["decode step"]["measured_s"] == pytest.approx(0.020)
    assert b["collectives"]["measured_s"] == pytest.approx(0.0005)
    assert b["streaming kernels (weight GEMMs, grouped MoE GEMMs, attention)"]["measured_s"] == pytest.approx(0.015)
    assert b["idle (no kernel running)"]["measured_s"] == pytest.approx(0.0042)
    assert b["decode step"]["predicted_s"] > 0
    mbu = d["sheets"]["mbu-diagnosis"]["buckets"]
    assert mbu["t_collective_bucket"] == pytest.approx(0.0005, rel=1e-5)
    assert mbu["t_idle"] == pytest.approx(0.0042, rel=1e-5)
    assert mbu["t_nonstream"] == pytest.approx(0.0003, rel=1e-5)  # the inputs are set to 6 significant figures
    assert mbu["t_floor"] + mbu["t_idle"] + mbu["t_collective_bucket"] + mbu["t_nonstream"] + mbu["t_bandwidth"] == pytest.approx(0.020)


def test_a_real_vllm_trace_on_h100_reads_as_five_decode_steps_beside_the_step_model(capsys):
    code, out, err = run(capsys, "diagnose", str(H100), *SETUP, "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["trace"]["gpu"] == "NVIDIA H100 80GB HBM3"
    assert d["trace"]["decode_steps"] == [1, 2, 3, 4, 5] and d["trace"]["left_out"] == [0]
    assert d["unknown_kernels"] == {}
    b = {x["bucket"]: x for x in d["buckets"]}
    assert 0.0185 < b["decode step"]["measured_s"] < 0.0205  # the host's execute_model starts are 18.9 to 20.2 ms apart
    assert b["collectives"]["measured_s"] < b["collectives"]["predicted_s"]  # vLLM's custom all-reduce in a graph beats the profile
    rows = {r["class"]: r for r in d["roofline"]}
    gemm = rows["weight GEMMs (dense and grouped MoE)"]
    assert gemm["bound"] == "memory" and 0.5 < gemm["percent_of_roof"] <= 1.0
    assert 0 < rows["attention"]["percent_of_roof"] <= 1.0
    # the small kernels sit far below the bandwidth roof (each moves one activation: latency, not bytes), the all-reduces below the link's
    assert rows["norm and elementwise"]["bound"] == "memory" and rows["norm and elementwise"]["percent_of_roof"] < 0.3
    assert rows["collective"]["bound"] == "link" and 0 < rows["collective"]["percent_of_roof"] < 1
    assert rows["sampling"]["bytes"] == 32 * 128_256 * 4
    mbu = d["sheets"]["mbu-diagnosis"]["buckets"]
    step = b["decode step"]["measured_s"]
    assert mbu["tpot"] == pytest.approx(step, rel=1e-5)
    assert sum(mbu[k] for k in ("t_floor", "t_idle", "t_collective_bucket", "t_nonstream", "t_bandwidth")) == pytest.approx(step, rel=1e-5)
    assert d["sheets"]["batch1-gap"]["buckets"]["t_step_observed"] == pytest.approx(step, rel=1e-5)


def test_markdown_names_every_class_and_the_left_out_prefill(capsys):
    code, out, err = run(capsys, "diagnose", str(H100), *SETUP)
    assert code == 0, err
    assert "1 of 6 steps left out as prefill" in out
    for c in ("weight GEMM", "attention", "collective", "norm and elementwise", "sampling"):
        assert f"| {c} |" in out
    assert "Every kernel was classed." in out


def test_amd_traces_read_and_their_moe_kernels_are_grouped_gemms(capsys):
    t = read_trace(TRACES / "tracelens_mi300_vllm_gptoss_decode_fullgraph_bs32.json.gz")
    m = measure(t)
    assert m.class_time("grouped MoE GEMM") > m.class_time("weight GEMM") > 0
    code, out, err = run(capsys, "diagnose", str(TRACES / "tracelens_mi300x_sglang_qwen3_8b_decode_bs32.json.gz"), "--hardware", "mi300x",
                         "--model", "llama-3.1-8b", "--set", "batch=32")
    assert code == 0, err
    assert "AMD Instinct MI300X" in out and "the longest gap between two kernels" in out


def test_an_nsight_export_reads_its_kernels_copies_and_gpu_and_lists_what_it_cannot_class(capsys):
    t = read_trace(TRACES / "saxpy_mpi_a100_perlmutter0.cut.sqlite.gz")
    assert t.format == "nsys" and t.gpu == "NVIDIA A100-SXM4-40GB"
    assert {k.kind for k in t.kernels} >= {"kernel", "memcpy"}
    assert sum(function_name(k.name) == "saxpy" for k in t.kernels) == 5
    code, out, err = run(capsys, "diagnose", str(TRACES / "saxpy_mpi_a100_perlmutter0.cut.sqlite.gz"), "--hardware", "a100-sxm-40gb",
                         "--model", "llama-3.2-1b", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["unknown_kernels"] == {"saxpy": 5}
    assert set(CLASS_NAMES) >= {"unknown", "memory copy"}


def _refused(capsys, path: Path) -> str:
    code, out, err = run(capsys, "diagnose", str(path), *SETUP)
    assert code == 2 and out == "", (out, err)
    assert len(err.strip().splitlines()) == 1, err
    assert str(path) in err
    return err


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "expected a PyTorch profiler trace"),
    (b'{"hello": 1}', "traceEvents"),
    (b'{"traceEvents": []}', "expected GPU kernels in the trace, found none"),
    (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1}]}', "ts: expected a number"),
    (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -4}]}', "dur: expected a finite non-negative time"),
    (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": 7, "ts": 1, "dur": 4}]}', "name: expected text"),
    (b"\x1f\x8b\x08\x00garbage", "expected a gzip file, found a damaged"),
    (b"SQLite format 3\x00" + b"\x00" * 100, "SQLite"),
])
def test_a_broken_trace_is_one_line_naming_the_file(capsys, tmp_path, content, expected):
    f = tmp_path / "trace.json"
    f.write_bytes(content)
    assert expected in _refused(capsys, f)


def test_an_sqlite_file_without_kernels_is_refused_naming_the_table(capsys, tmp_path):
    f = tmp_path / "other.sqlite"
    db = sqlite3.connect(f)
    db.execute("CREATE TABLE StringIds (id INTEGER, value TEXT)")
    db.commit()
    db.close()
    assert "CUPTI_ACTIVITY_KIND_KERNEL" in _refused(capsys, f)


def test_a_trace_that_unpacks_past_the_limit_is_refused(capsys, tmp_path, monkeypatch):
    import roofline.specs.traces as traces

    monkeypatch.setattr(traces, "MAX_TRACE_BYTES", 1 << 20)
    f = tmp_path / "bomb.json.gz"
    f.write_bytes(gzip.compress(b" " * (8 << 20)))
    assert "once unpacked" in _refused(capsys, f)


def test_a_setup_the_step_model_does_not_take_is_one_line_naming_set(capsys):
    code, out, err = run(capsys, "diagnose", str(H100), "--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--set", "bogus=3")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--set: bogus: decode-floor has no input by that name" in err

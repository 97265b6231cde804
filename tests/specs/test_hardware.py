import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.specs.catalog import HARDWARE_DIR, hardware_names
from roofline.specs.errors import SpecError
from roofline.specs.hardware import FIELDS, load_hardware, parse_hardware

REQUIRED = ["a100-sxm-80gb", "a100-sxm-40gb", "h100-sxm", "h100-pcie", "h200", "h800", "h20", "b200", "gb200", "l40s", "l4", "mi300x", "mi325x",
            "tpu-v5e", "tpu-v5p", "tpu-v6e", "b300", "gb300", "mi355x", "tpu7x", "trn2", "trn3", "gaudi3"]
H100 = (HARDWARE_DIR / "h100-sxm.toml").read_text()


@pytest.mark.parametrize("name", REQUIRED)
def test_every_required_chip_loads(name):
    hw = load_hardware(name)
    assert hw.memory_bandwidth.to("B/s").magnitude > 0
    assert "bf16" in hw.peak_dense
    assert hw.source and hw.notes


def test_every_shipped_file_loads():
    assert set(REQUIRED) <= set(hardware_names())
    for name in hardware_names():
        load_hardware(name)


def test_unconfirmed_figures_say_so():
    """hardware.md marks GB200 per-GPU figures unconfirmed; the spec must say so."""
    gb200 = load_hardware("gb200")
    assert gb200.status == "U"
    assert "U" in gb200.notes or "unconfirmed" in gb200.notes.lower()


def test_h100_dense_peaks_are_half_the_sparse_headline():
    """NVIDIA H100 SXM datasheet: 1,979 TFLOPS BF16 'shown with sparsity' (hardware.md, HPCtech copy)."""
    hw = load_hardware("h100-sxm")
    assert float(hw.peak("bf16").to("Tflop/s").magnitude) == pytest.approx(1979 / 2, rel=1e-3)
    assert float(hw.memory_bandwidth.to("TB/s").magnitude) == 3.35


def _tera(q) -> float:
    return float(q.to("Tflop/s").magnitude)


def test_h800_nvlink_is_400_gb_s_total_and_its_tensor_cores_are_the_h100s():
    """DeepSeek (arXiv 2505.09343, 4.1): 'the NVLink bandwidth in H800 SXM nodes is reduced from 900 GB/s to 400 GB/s'; Hopper like the H100."""
    h800, h100 = load_hardware("h800"), load_hardware("h100-sxm")
    assert float(h800.scaleup_bandwidth_per_direction.to("GB/s").magnitude) * 2 == 400
    assert float(h100.scaleup_bandwidth_per_direction.to("GB/s").magnitude) * 2 == 900
    assert {k: _tera(v) for k, v in h800.peak_dense.items()} == {k: _tera(v) for k, v in h100.peak_dense.items()}
    assert h800.memory_bandwidth == h100.memory_bandwidth and h800.scaleup_topology == "switch"


def test_h20_compute_is_far_below_the_h100s_and_its_memory_above():
    """H20 spec table (Tom's Hardware, from retail listings): BF16 148, FP8 296 TFLOPS dense, 96 GB HBM3 at 4.0 TB/s."""
    h20, h100 = load_hardware("h20"), load_hardware("h100-sxm")
    assert (_tera(h20.peak("bf16")), _tera(h20.peak("fp8"))) == (148, 296)
    assert _tera(h20.peak("bf16")) / _tera(h100.peak("bf16")) == pytest.approx(0.15, abs=0.005)  # 'about 15% of the H100'
    assert float(h20.memory_capacity.to("GB").magnitude) == 96 and float(h20.memory_bandwidth.to("TB/s").magnitude) == 4.0
    assert float(h20.scaleup_bandwidth_per_direction.to("GB/s").magnitude) * 2 == 900


def test_a100_40gb_is_the_80gb_part_with_less_and_slower_memory():
    """NVIDIA A100 datasheet (via Lockwood): 40 GB HBM2 at 1,555 GB/s against 80 GB HBM2e at 2,039 GB/s; FLOPS and power the same."""
    a40, a80 = load_hardware("a100-sxm-40gb"), load_hardware("a100-sxm-80gb")
    assert float(a40.memory_bandwidth.to("GB/s").magnitude) == 1555 and float(a40.memory_capacity.to("GB").magnitude) == 40
    assert {k: _tera(v) for k, v in a40.peak_dense.items()} == {k: _tera(v) for k, v in a80.peak_dense.items()}
    assert a40.tdp == a80.tdp and a40.scaleup_bandwidth_per_direction == a80.scaleup_bandwidth_per_direction


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "chip.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("edit, field, message", [
    (lambda t: t.replace('memory_bandwidth = "3.35 TB/s"\n', ""), "memory_bandwidth", "missing required field"),
    (lambda t: 'hbm_bandwith = "1 TB/s"\n' + t, "hbm_bandwith", "unknown field"),
    (lambda t: t.replace('"3.35 TB/s"', '"3.35 Tflop/s"'), "memory_bandwidth", "expected units convertible to B/s"),
    (lambda t: t.replace('"3.35 TB/s"', '"0 TB/s"'), "memory_bandwidth", "positive"),
    (lambda t: t.replace('"3.35 TB/s"', '"-3.35 TB/s"'), "memory_bandwidth", "positive"),
    (lambda t: t.replace('"3.35 TB/s"', '"nan TB/s"'), "memory_bandwidth", "expected a number"),
    (lambda t: t.replace('"3.35 TB/s"', '"1e999 TB/s"'), "memory_bandwidth", "finite"),
    (lambda t: t.replace('"3.35 TB/s"', "3.35"), "memory_bandwidth", "bare number"),
    (lambda t: t.replace('bf16 = "989.4 Tflop/s"', 'bf16 = "989.4 TB/s"'), "peak_dense.bf16", "flop/s"),
    (lambda t: t.replace("[peak_dense]", "[peak_dense]\nfp12 = \"1 Tflop/s\""), "peak_dense.fp12", "unknown precision"),
    (lambda t: t.replace('scaleup_topology = "switch"', 'scaleup_topology = "nvswitch"'), "scaleup_topology", "expected one of switch, mesh, torus, pcie"),
    (lambda t: t + '\n[field_status]\nmemory_bandwith = "C"\n', "field_status.memory_bandwith", "not a figure this file stores"),
    (lambda t: t + '\n[field_status]\n"peak_dense.fp4" = "C"\n', "field_status.peak_dense.fp4", "not a figure this file stores"),
    (lambda t: t + '\n[field_status]\nmemory_bandwidth = "primary"\n', "field_status.memory_bandwidth", "expected one of C, S, D, U"),
    (lambda t: t.replace('status = "', 'field_status = "C"\nstatus = "', 1), "field_status", "expected a table"),
])
def test_bad_fields_give_one_line_naming_file_and_field(tmp_path, edit, field, message):
    path = _write(tmp_path, edit(H100))
    with pytest.raises(SpecError) as err:
        load_hardware(str(path))
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert err.value.field == field
    assert message in text


def test_toml_syntax_error(tmp_path):
    path = _write(tmp_path, H100 + "\nthis is = = not toml\n")
    with pytest.raises(SpecError, match="valid TOML"):
        load_hardware(str(path))


def test_unknown_name_suggests_closest():
    with pytest.raises(SpecError, match="did you mean h100-sxm"):
        load_hardware("h100-smx")


def test_missing_path():
    with pytest.raises(SpecError, match="no such hardware file"):
        load_hardware("/nonexistent/chip.toml")


BASE = tomllib.loads(H100)
values = st.one_of(st.text(max_size=30), st.integers(), st.floats(allow_nan=True), st.booleans(), st.none(),
                   st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.text(max_size=10), max_size=3))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from([*FIELDS, "extra"]), values, max_size=6), st.sets(st.sampled_from(list(FIELDS)), max_size=3))
def test_fuzz_hardware_loader_gives_a_spec_or_a_spec_error(changes, removals):
    data = {**BASE, **changes}
    for r in removals:
        data.pop(r, None)
    try:
        parse_hardware(data, Path("fuzz.toml"))
    except SpecError as err:
        assert "\n" not in str(err)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_hardware_toml_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fz") / "x.toml"
    path.write_text(text, encoding="utf-8")
    try:
        load_hardware(str(path))
    except SpecError:
        pass


# --- shared memory per SM (flash-attention-io's block rule) ---

@pytest.mark.parametrize(("name", "kib"), [
    ("h100-sxm", 228), ("h100-pcie", 228), ("h200", 228), ("b200", 228), ("gb200", 228), ("a100-sxm-80gb", 164), ("l4", 100), ("l40s", 100),
])
def test_shared_memory_per_sm_is_binary_kib(name, kib):
    """NVIDIA's "228 KB" of shared memory per SM is KiB: cudaDevAttrMaxSharedMemoryPerMultiprocessor is 233,472 on H100."""
    hw = load_hardware(name)
    assert hw.shared_memory_per_sm.to("B").magnitude == kib * 1024
    assert "shared memory per sm" in hw.notes.lower()


def test_h100_shared_memory_is_233472_bytes_not_228000():
    assert load_hardware("h100-sxm").shared_memory_per_sm.to("B").magnitude == 233_472


@pytest.mark.parametrize("name", ["tpu-v5e", "tpu-v5p", "tpu-v6e", "mi300x", "mi325x"])
def test_shared_memory_per_sm_left_out_where_unsourced_or_meaningless(name):
    assert load_hardware(name).shared_memory_per_sm is None


def test_shared_memory_per_sm_must_be_bytes(tmp_path):
    path = _write(tmp_path, H100.replace('shared_memory_per_sm = "228 KiB"', 'shared_memory_per_sm = "228"'))
    with pytest.raises(SpecError) as err:
        load_hardware(str(path))
    assert err.value.field == "shared_memory_per_sm"


@pytest.mark.parametrize("name, topology", [("h100-sxm", "switch"), ("mi300x", "mesh"), ("tpu-v5e", "torus"), ("l40s", "pcie"), ("h100-pcie", "pcie")])
def test_scaleup_topology_is_read_from_the_spec(name, topology):
    """The all-reduce latency law follows the link's topology (issue 20): it is a sourced spec field, never guessed."""
    assert load_hardware(name).scaleup_topology == topology


def test_a_figures_status_is_read_per_field(tmp_path):
    """[field_status]: each stored figure's status (C primary, S secondary, D derived, U unconfirmed), shown by `show hardware`."""
    path = _write(tmp_path, H100 + '\n[field_status]\nmemory_bandwidth = "C"\n"peak_dense.fp8" = "D"\n')
    hw = load_hardware(str(path))
    assert hw.field_status == {"memory_bandwidth": "C", "peak_dense.fp8": "D"}
    assert load_hardware("h100-sxm").field_status is None


def test_the_2026_chips_keep_their_datasheet_traps():
    """Blackwell Ultra cut INT8 to about 0.15 POPS dense (aiconfigurator's b300_sxm.yaml: 307 TOPS sparse); Trainium3's MXFP4
    runs at its MXFP8 peak (AWS Neuron docs: '2,517 MXFP8/MXFP4'); Gaudi 3's FP8 equals its BF16 (1,835 TFLOPS); TPU7x and
    Trainium capacities are quoted in GiB (TPU7x: 192 GiB); GB300's NVLink domain is the 72-GPU rack."""
    b300, gb300 = load_hardware("b300"), load_hardware("gb300")
    for chip in (b300, gb300):
        assert 100 < _tera(chip.peak("int8")) < 200 and _tera(chip.peak("int8")) < _tera(chip.peak("fp8")) / 20
        assert _tera(chip.peak("fp4")) > _tera(load_hardware("b200").peak("fp4"))
    assert gb300.scaleup_domain == 72 and b300.scaleup_domain == 8
    trn3, gaudi3, tpu7x = load_hardware("trn3"), load_hardware("gaudi3"), load_hardware("tpu7x")
    assert _tera(trn3.peak("fp4")) == _tera(trn3.peak("fp8"))
    assert _tera(gaudi3.peak("fp8")) == _tera(gaudi3.peak("bf16")) == 1835
    assert tpu7x.memory_capacity.to("B").magnitude == 192 * 2**30
    assert load_hardware("trn2").memory_capacity.to("B").magnitude == 96 * 2**30
    assert all(load_hardware(n).field_status for n in ("b300", "gb300", "mi355x", "tpu7x", "trn2", "trn3", "gaudi3"))


@pytest.mark.parametrize("hardware, math, words", [
    ("trn3", "fp4", "fp4 runs no faster than fp8: 2,517 against 2,517 Tflop/s"),
    ("gaudi3", "fp8", "fp8 runs no faster than bf16: 1,835 against 1,835 Tflop/s"),
    ("b300", "int8", "int8 runs slower than (7% of) bf16: 154 against 2,250 Tflop/s"),
    ("b300", "fp6", "fp6 runs no faster than fp8: 4,500 against 4,500 Tflop/s"),  # NVIDIA's "FP8/FP6" row
    ("gb300", "fp6", "fp6 runs no faster than fp8: 5,000 against 5,000 Tflop/s"),
])
def test_a_math_precision_a_chip_runs_no_faster_than_a_wider_one_is_said(hardware, math, words):
    """Issue 37: precisions a chip runs no faster than another are said as such, on the sheet's Math line."""
    from roofline import api

    facts = dict(api.derive("decode-floor", hardware=hardware, math=math).spec_facts)
    assert words in facts["Math"]
    assert "runs" not in dict(api.derive("decode-floor", hardware="h100-sxm", math="fp8").spec_facts)["Math"]

"""The measurements dataset: every record loads and cites a source; malformed records are refused in one line."""

from pathlib import Path

import pytest
from roofline.specs.errors import SpecError
from roofline.specs.measurements import MEASUREMENTS_DIR, METRICS, load_measurement_file, load_measurements, measurement_files

GOOD = '''
source = "A benchmark page"
url = "https://example.org/bench"
engine = "vLLM"
engine_version = "0.6.0"
notes = ""

[common]
hardware = "h100-sxm"
pp = 1
weights = "bf16"
kv = "bf16"
math = "bf16"
batching = "static"

[[record]]
id = "one"
model = "llama-3.1-8b"
gpus = 1
tp = 1
batch = 8
input_tokens = 128
output_tokens = 128
metric = "itl"
value = "7.5 ms"
locator = "Table 1, row 1"
assumed = "nothing"
'''


def _write(tmp_path: Path, text: str, name: str = "bench.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_shipped_dataset_size_and_spread():
    """Issue 16: at least 20 records across at least 3 GPU types and 3 engines."""
    records = load_measurements()
    assert len(records) >= 20
    assert len({m.hardware.key for m in records}) >= 3
    assert len({m.engine for m in records}) >= 3
    assert len({m.id for m in records}) == len(records)


@pytest.mark.parametrize("path", measurement_files(), ids=lambda p: p.stem)
def test_every_record_loads_and_cites_a_source(path):
    records = load_measurement_file(path)
    assert records
    for m in records:
        assert m.url.startswith("https://")
        assert m.source.strip() and m.locator.strip() and m.assumed.strip()
        assert m.engine.strip() and m.engine_version.strip()
        assert m.value.magnitude > 0
        assert m.tp * m.pp == m.gpus


def test_every_shipped_file_is_in_the_package_data():
    text = (MEASUREMENTS_DIR.parent.parent / "pyproject.toml").read_text()
    assert '"measurements/*.toml"' in text
    assert '"measurements/held-out/*.toml"' in text  # the serving sheets read the held-out records when they are built


def test_a_good_file_loads_with_common_fields(tmp_path):
    (m,) = load_measurement_file(_write(tmp_path, GOOD))
    assert m.hardware.key == "h100-sxm" and m.model.key == "llama-3.1-8b"
    assert float(m.value.to("s").magnitude) == pytest.approx(7.5e-3)
    assert m.ttft is None


def test_a_record_overrides_a_common_field(tmp_path):
    (m,) = load_measurement_file(_write(tmp_path, GOOD.replace('id = "one"', 'id = "one"\nhardware = "h200"')))
    assert m.hardware.key == "h200"


@pytest.mark.parametrize("edit, field, message", [
    (lambda t: t.replace('value = "7.5 ms"', 'value = "7.5 token/s"'), "record one.value", "convertible to s"),
    (lambda t: t.replace('value = "7.5 ms"', "value = 7.5"), "record one.value", "bare number"),
    (lambda t: t.replace('metric = "itl"', 'metric = "aggregate_tokens_per_s"'), "record one.value", "convertible to token/s"),
    (lambda t: t.replace('metric = "itl"', 'metric = "latency"'), "record one.metric", "unknown metric"),
    (lambda t: t.replace('locator = "Table 1, row 1"\n', ""), "record one.locator", "missing required field"),
    (lambda t: t.replace('assumed = "nothing"', 'assumed = " "'), "record one.assumed", "empty"),
    (lambda t: t.replace('url = "https://example.org/bench"', 'url = "example.org"'), "url", "https://"),
    (lambda t: t.replace('source = "A benchmark page"\n', ""), "source", "missing required field"),
    (lambda t: t.replace('model = "llama-3.1-8b"', 'model = "llama-3.1-8bb"'), "record one.model", "did you mean llama-3.1-8b"),
    (lambda t: t.replace('hardware = "h100-sxm"', 'hardware = "h1000"'), "record one.hardware", "shipped hardware name"),
    (lambda t: t.replace('weights = "bf16"', 'weights = "bf17"'), "record one.weights", "bf16"),
    (lambda t: t.replace("batch = 8", "batch = 0"), "record one.batch", "whole number"),
    (lambda t: t.replace("batch = 8", "batch = 8.5"), "record one.batch", "whole number"),
    (lambda t: t.replace("gpus = 1", "gpus = 2"), "record one.gpus", "tp x pp"),
    (lambda t: t.replace('batching = "static"', 'batching = "dynamic"'), "record one.batching", "static, continuous"),
    (lambda t: t.replace('id = "one"', 'id = "one"\nbatchsize = 4'), "record one.batchsize", "unknown field"),
    (lambda t: t.replace('id = "one"', 'id = "one"\nttft = "20 ms"'), "record one.ttft", "e2e_latency"),
    (lambda t: t.replace("[[record]]", "[record]"), "record", "[[record]]"),
    (lambda t: t.replace('id = "one"', 'id = "one"\nrole = "prefill"'), "record one.role", "expected one of decode"),
    (lambda t: t.replace('id = "one"', 'id = "one"\nrole = "decode"'), "record one.role", "batching continuous and metric itl"),
])
def test_malformed_records_are_refused_in_one_line(tmp_path, edit, field, message):
    path = _write(tmp_path, edit(GOOD))
    with pytest.raises(SpecError) as err:
        load_measurement_file(path)
    text = str(err.value)
    assert "\n" not in text
    assert str(path) in text and f": {field}:" in text
    assert message in text


def test_duplicate_ids_across_files_are_refused(tmp_path):
    _write(tmp_path, GOOD, "a.toml")
    _write(tmp_path, GOOD, "b.toml")
    with pytest.raises(SpecError, match=r"b\.toml: record one\.id: duplicate id; also in .*a\.toml"):
        load_measurements(tmp_path)


def test_every_metric_has_a_unit():
    assert set(METRICS) == {"itl", "tokens_per_s_per_user", "aggregate_tokens_per_s", "e2e_latency"}


# --- engine profiles (specs/measurements/profiles/) ---

def test_the_shipped_profiles_load_and_are_not_measurement_files():
    from roofline.specs.measurements import DEFAULT_PROFILE, DEFAULT_SUMMARY, PROFILE_INPUTS, PROFILE_SUMMARY, PROFILES_DIR, load_profiles

    profiles = load_profiles()
    assert {DEFAULT_PROFILE, "ideal"} <= set(profiles)
    for p in profiles.values():
        assert set(p.values) == set(PROFILE_INPUTS) and p.description and p.provenance
        assert 0 < float(p.quantity("eta_bw").magnitude) <= 1
        assert {m.id for m in load_measurements()} >= set(p.records)
    assert set(profiles[DEFAULT_PROFILE].summary) == set(DEFAULT_SUMMARY)  # the rest are a user's fit's (calibrate --from FILE)
    assert set(DEFAULT_SUMMARY) < set(PROFILE_SUMMARY)
    ideal = profiles["ideal"]
    assert dict(ideal.values) == {"eta_bw": "1", "eta_flops": "1", "t_layer": "0 s", "t_fixed": "0 s", "t_seq": "0 s", "ar_latency": "0 s"} and not ideal.records
    assert PROFILES_DIR not in {p.parent for p in measurement_files()}


PROFILE = """description = "test"
provenance = "test"
records = ["a"]
eta_bw = "0.8"
eta_flops = "0.7"
t_layer = "40 us"
t_fixed = "2 ms"
t_seq = "30 us"
ar_latency = "5 us"
[summary]
median_error = "0.1"
mbu_high = "0.7"
"""


@pytest.mark.parametrize("old, new, words", [
    ('t_fixed = "2 ms"', 't_fixed = "2 GB"', "t_fixed"),
    ('eta_bw = "0.8"', 'eta_bw = "1.5"', "fraction"),
    ('t_layer = "40 us"', 't_layer = "-4 us"', "t_layer"),
    ('ar_latency = "5 us"\n', "", "missing required field"),
    ('t_seq = "30 us"\n', "", "missing required field"),
    ('t_seq = "30 us"', 't_seq = "-30 us"', "t_seq"),
    ('description = "test"', 'description = "test"\nextra = 1', "unknown field"),
    ('mbu_high = "0.7"', 'mbu_high = "0.7"\nmbu_max = "1"', "unknown field"),
])
def test_bad_profiles_are_one_line(tmp_path, old, new, words):
    from roofline.specs.measurements import load_profile_file

    assert load_profile_file(_write(tmp_path, PROFILE, "good.toml")).values["t_fixed"] == "2 ms"
    path = _write(tmp_path, PROFILE.replace(old, new), "bad.toml")
    with pytest.raises(SpecError, match=words) as err:
        load_profile_file(path)
    assert "\n" not in str(err.value)


def test_a_profile_folder_needs_the_default_profile(tmp_path):
    from roofline.specs.measurements import load_profiles

    _write(tmp_path, PROFILE, "other.toml")
    with pytest.raises(SpecError, match="default engine profile is missing"):
        load_profiles.__wrapped__(tmp_path)
    _write(tmp_path, PROFILE, "fitted.toml")
    with pytest.raises(SpecError, match=r"fitted\.toml: summary\.worst_error: missing required field"):
        load_profiles.__wrapped__(tmp_path)


def test_an_unknown_profile_is_one_line_with_the_closest_names():
    from roofline.specs.measurements import profile

    with pytest.raises(SpecError, match=r"--engine: unknown engine profile 'fited' \(did you mean fitted") as err:
        profile("fited")
    assert "\n" not in str(err.value) and "ideal" in str(err.value)

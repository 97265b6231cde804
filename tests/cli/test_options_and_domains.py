"""Options are never silently ignored; inputs outside their physical domain get one line (issue 9, derivation side)."""

from __future__ import annotations

import json

import pytest
from roofline.specs.catalog import HARDWARE_DIR

from roofline.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, first_line", [
    (["derive", "decode-floor", "--set", "eta_bw=2"], "roofline: error: --set: eta_bw: expected a fraction in (0, 1], found '2'"),
    (["derive", "decode-floor", "--set", "batch=2.5"], "roofline: error: --set: batch: expected a whole number of at least 1"),
    (["derive", "decode-floor", "--set", "batch=1e308"], "roofline: error: --set: batch: expected a number from 1e-30 to 1e30 (the range every value is read in), found '1e308'"),
    (["derive", "decode-floor", "--set", "batch=5ms"], "roofline: error: --set: batch: expected a plain number"),
    (["derive", "decode-floor", "--set", "tp=0"], "roofline: error: --set: tp: expected a positive quantity"),
    (["derive", "ridge-coincidence", "--math", "int4"], "roofline: error: --math: 'int4' is a storage format, not a math precision"),
    (["derive", "decode-floor", "--weights", "fp4"], "peak_dense.fp4: --weights fp4 (whose math is fp4): NVIDIA H100 SXM5 80GB lists no dense fp4 peak"),
    (["derive", "ridge-coincidence", "--hardware", "tpu-v5e", "--math", "fp8"], "peak_dense.fp8: --math fp8: Google TPU v5e (per chip) lists no dense fp8 peak"),
    (["derive", "flash-attention-io", "--set", "query_block=0.5"], "roofline: error: --set: query_block: expected a whole number"),
])
def test_bad_option_is_one_line_and_exit_2(capsys, argv, first_line):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert first_line in err


def test_tensor_parallelism_past_the_kv_heads_is_modelled(capsys):
    code, out, _ = run(capsys, "derive", "decode-floor", "--model", "llama-3.1-70b", "--set", "tp=3", "--format", "json")
    assert code == 0
    assert json.loads(out)["results"]["t_step"]["value"] > 0


def test_defaulted_math_is_printed_as_defaulted(capsys):
    _, out, _ = run(capsys, "derive", "ridge-coincidence", "--weights", "int4")
    assert "| Math | bf16 tensor-core peak (default: the math of int4 weights) |" in out
    _, out, _ = run(capsys, "derive", "ridge-coincidence", "--math", "fp8")
    assert "fp8 tensor-core peak (set with --math)" in out


def test_a_setup_that_does_not_fit_is_marked_in_every_format(capsys):
    _, md, _ = run(capsys, "derive", "decode-floor", "--model", "llama-3.1-70b")
    assert "**Does not fit:" in md and "(does not fit)" in md
    _, tex, _ = run(capsys, "derive", "decode-floor", "--model", "llama-3.1-70b", "--format", "tex")
    assert r"\textbf{Does not fit:" in tex
    _, js, _ = run(capsys, "derive", "decode-floor", "--model", "llama-3.1-70b", "--format", "json")
    doc = json.loads(js)
    assert doc["fits"] is False and any(r.get("fits") is False for t in doc["tables"] for r in t["rows"])
    _, js, _ = run(capsys, "derive", "decode-floor", "--format", "json")
    assert json.loads(js)["fits"] is True


def test_implausible_custom_chip_warns_once(capsys, tmp_path):
    chip = tmp_path / "slow.toml"
    chip.write_text((HARDWARE_DIR / "h100-sxm.toml").read_text().replace('bf16 = "989.4 Tflop/s"', 'bf16 = "0.001 Tflop/s"'))
    code, out, err = run(capsys, "derive", "ridge-coincidence", "--hardware", str(chip), "--format", "json")
    assert code == 0 and err.startswith("roofline: warning: ") and "peak_dense.bf16" in err and err.count("\n") == 1
    t_max = json.loads(out)["results"]["T_max"]
    assert t_max["value"] is None and "at or above the ridge" in t_max["none"]


def test_fixed_comparison_rows_never_abort_the_users_sheet(capsys):
    code, out, _ = run(capsys, "derive", "attention-intensity", "--hardware", "b200", "--weights", "fp4")
    assert code == 0 and "n/a" in out


def test_no_non_finite_number_reaches_json(capsys):
    code, out, _ = run(capsys, "derive", "decode-floor", "--set", "batch=1000000000", "--set", "context=1", "--format", "json")
    assert code == 0 and "Infinity" not in out and "NaN" not in out
    json.loads(out)


# --- every input, drawn across and beyond its domain: one clean error, or a sheet of finite numbers in their domains ---

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from roofline.derivations.engine.context import parse_overrides  # noqa: E402
from roofline.derivations.engine.sheet import Missing, evaluate  # noqa: E402
from roofline.derivations.questions.registry import DERIVATIONS  # noqa: E402
from roofline.units import RooflineError  # noqa: E402

from tests.derivations.helpers import context  # noqa: E402

INPUTS = [(d, i) for d in DERIVATIONS for i in d.inputs]
NUMBERS = st.one_of(
    st.sampled_from(["0", "-1", "0.5", "1", "2", "1e308", "-0", "nan", "inf", "1e-300", "4096", "131072", "999999999999"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**12, 10**12).map(str),
)
SUFFIXES = st.sampled_from(["", " token", " ms", " s", " B", " GB", " flop/s", " Tflop/s", " kB", "%", " parsec"])


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(INPUTS), NUMBERS, SUFFIXES)
def test_any_input_value_gives_one_clean_error_or_a_finite_sheet(pair, number, suffix):
    d, inp = pair
    try:
        overrides = parse_overrides([f"{inp.name}={number}{suffix}"], d.inputs, d.slug)
    except RooflineError as err:
        assert str(err).count("\n") == 0 and inp.name in str(err)
        return
    ctx = context()
    values = evaluate(d, type(ctx)(**{**ctx.__dict__, "overrides": overrides}))
    for name, v in values.items():
        if isinstance(v, Missing):
            assert v.reason
            continue
        x = float(v)
        assert x == x and abs(x) != float("inf"), (d.slug, inp.name, number, name, x)
        assert x >= 0 or d.step(name).signed, (d.slug, inp.name, number, name, x)

"""Issue 35, family 9: noise and small slips. Each warning once per run, naming only options the command has; a checkpoint's
quant_method beside the groups it quantized; an empty folder option refused; a number in an error line shown whole or visibly
shortened; a plain number's example is a number; a unit roofline lacks is named as such."""

from __future__ import annotations

import json
import os

import pytest
from roofline.specs.models import load_model

from roofline.cli import main


def _lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x]


def test_quiz_warns_once_per_model_and_names_no_flag_it_lacks(capsys):
    assert main(["quiz", "--count", "60"]) == 0
    warned = [x for x in _lines(capsys.readouterr().err) if x.startswith("roofline: warning:")]
    assert len(warned) == len(set(warned)), warned
    assert not [x for x in warned if "--weights" in x], warned


@pytest.mark.parametrize(("model", "formats"), [("gpt-oss-20b", "bf16,experts_routed=mxfp4"), ("deepseek-v3", "fp8,router=bf16,embedding=bf16,lm_head=bf16")])
def test_derive_computes_the_checkpoint_as_stored_and_says_so(model, formats, capsys):
    assert main(["derive", "decode-floor", "--model", model, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert _lines(err) == []
    assert json.loads(out)["context"]["weights"] == formats
    assert main(["derive", "decode-floor", "--model", model, "--weights", formats, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["context"]["weights"] == formats  # the name reads back to the same formats


@pytest.mark.parametrize(("model", "quantized"), [("gpt-oss-20b", "mxfp4"), ("gpt-oss-120b", "mxfp4"), ("deepseek-v3", "fp8"), ("kimi-k2", "fp8")])
def test_the_quant_method_goes_with_the_quantized_groups(model, quantized):
    parts = load_model(model).quantization_summary().split("; ")
    with_method = [p for p in parts if "quant_method" in p]
    assert len(with_method) == 1 and f" in {quantized} (quant_method {quantized}" in with_method[0], parts
    assert parts[-1].endswith(" in bf16"), parts


@pytest.mark.parametrize(("case", "argv", "line"), [
    ("calibrate-to", ["calibrate", "--write-defaults", "--to", ""], "roofline: error: --to: expected a folder path, found an empty string"),
    ("quiz-out", ["quiz", "--count", "1", "--out", ""], "roofline: error: --out: expected a folder path, found an empty string"),
    ("quiz-out-spaces", ["quiz", "--count", "1", "--out", "  "], "roofline: error: --out: expected a folder path, found an empty string"),
    ("build-out", ["build", "--out", ""], "roofline: error: --out: expected a folder path, found an empty string"),
    ("quiz-ask-empty-out", ["quiz", "--ask", "--out", ""], "roofline: error: --ask: asks the questions at a terminal; not with --out"),
])
def test_an_empty_folder_option_is_refused(case, argv, line, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == line + "\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("case", "argv", "shown"), [
    ("seed-10-to-50", ["quiz", "--seed", str(10**50)], repr(10**50)),
    ("seed-2-to-63", ["quiz", "--seed", str(2**63)], repr(2**63)),
    ("seed-negative", ["quiz", "--seed", "-1"], "-1"),
    ("count-10-to-30", ["quiz", "--count", str(10**30)], repr(10**30)),
    ("seed-10-to-100", ["quiz", "--seed", str(10**100)], repr(10**100)[:57] + "..."),
])
def test_a_number_in_an_error_line_is_whole_or_visibly_shortened(case, argv, shown, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"found {shown}\n"), err


@pytest.mark.parametrize("value", ["1_0", "8x", "1e3q", "ten", "1 1 1"])
def test_a_plain_numbers_example_is_a_number(value, capsys):
    assert main(["derive", "decode-floor", "--set", f"batch={value}"]) == 2
    err = capsys.readouterr().err
    assert '"1 1"' not in err and "convertible to 1" not in err
    assert err.startswith("roofline: error: --set: batch: expected a plain number (") and err.endswith(f"found {value!r}\n"), err


@pytest.mark.parametrize(("case", "argv", "unit"), [
    ("set-parsec", ["derive", "decode-floor", "--set", "t_fixed=1parsec"], "parsec"),
    ("set-furlong", ["derive", "decode-floor", "--set", "t_fixed=2 furlong"], "furlong"),
    ("expect-parsec", ["check", "1/beta", "--expect", "parsec"], "parsec"),
    ("symbol-lightyear", ["check", "x_my", "--symbol", "x_my=lightyear"], "lightyear"),
    ("sweep-set-parsec", ["sweep", "decode-floor", "t_step", "--over", "batch=1,2", "--set", "t_fixed=1 parsec"], "parsec"),
])
def test_a_unit_roofline_lacks_is_named_as_such(case, argv, unit, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{unit!r} is not one of roofline's units: s, min, h, B" in err and "pint's" not in err and len(_lines(err)) == 1, err

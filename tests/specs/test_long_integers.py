"""Integers of more than MAX_INT_DIGITS digits in any file roofline reads are one line naming the file and the field (issue 35,
family 4).

Python refuses to convert a decimal literal of more than 4,300 digits (a ValueError traceback from deep inside the JSON or TOML
parser), and a hex literal converts to an int too long to print. Every loader parses through specs.catalog.parse_toml or
parse_json, which bound integer literals before converting them (JSON: parse_int) or where the parser stops on one (TOML).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from roofline.specs.catalog import HARDWARE_DIR, MAX_INT_DIGITS, MODELS_DIR, parse_json, parse_toml
from roofline.specs.errors import SpecError
from roofline.specs.measurements import MEASUREMENTS_DIR, PROFILES_DIR, load_measurement_file, load_profile_file

from roofline.cli import main

#: Integer literals too long to read: (TOML spelling, JSON spelling or None where JSON has no such literal, digits shown)
LONG = [
    ("1" * 5000, "1" * 5000, "5,000 digits"),
    ("-" + "9" * 4301, "-" + "9" * 4301, "4,301 digits"),
    ("7" * (MAX_INT_DIGITS + 1), "7" * (MAX_INT_DIGITS + 1), f"{MAX_INT_DIGITS + 1:,} digits"),  # Python converts it; still refused
    ("1" + "_1" * 4400, None, "4,401 digits"),
    ("0x" + "f" * 4000, None, "4,817 digits"),
    ("0o" + "7" * 5000, None, "4,516 digits"),
    ("0b" + "1" * 20000, None, "6,021 digits"),
]


def _derive_fails(capsys, argv: list[str], path: Path, field: str, digits: str) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"roofline: error: {path}: {field}: expected at most {MAX_INT_DIGITS:,} digits"), lines[0]
    assert digits in lines[0]


def _chip(tmp_path: Path, literal: str, where: str) -> tuple[Path, str]:
    text = (HARDWARE_DIR / "h100-sxm.toml").read_text(encoding="utf-8")
    if where == "top":
        text, field = text.replace("compute_units = 132", f"compute_units = {literal}"), "compute_units"
    else:
        text, field = text.replace('bf16 = "989.4 Tflop/s"', f"bf16 = {literal}"), "peak_dense.bf16"
    p = tmp_path / "chip.toml"
    p.write_text(text, encoding="utf-8")
    return p, field


@pytest.mark.parametrize(("toml", "json_literal", "digits"), LONG)
@pytest.mark.parametrize("where", ["top", "table"])
def test_a_chip_file(tmp_path, capsys, toml, json_literal, digits, where) -> None:
    p, field = _chip(tmp_path, toml, where)
    _derive_fails(capsys, ["derive", "decode-floor", "--hardware", str(p)], p, field, digits)


@pytest.mark.parametrize(("toml", "json_literal", "digits"), [x for x in LONG if x[1] is not None])
@pytest.mark.parametrize("field", ["hidden_size", "rope_scaling.factor", "eos_token_id[1]"])
def test_a_config_json(tmp_path, capsys, toml, json_literal, digits, field) -> None:
    text = (MODELS_DIR / "llama-3.1-8b.json").read_text(encoding="utf-8")
    if field == "hidden_size":
        text = re.sub(r'"hidden_size": \d+', f'"hidden_size": {json_literal}', text)
    elif field == "rope_scaling.factor":
        text = re.sub(r'"factor": [\d.]+', f'"factor": {json_literal}', text)
    else:
        text = re.sub(r'"eos_token_id": (\d+),', rf'"eos_token_id": [\1, {json_literal}],', text)
    assert json_literal in text
    p = tmp_path / "m.json"
    p.write_text(text, encoding="utf-8")
    shutil.copy(MODELS_DIR / "llama-3.1-8b.toml", tmp_path / "m.toml")
    _derive_fails(capsys, ["derive", "decode-floor", "--model", str(p)], p, field, digits)


@pytest.mark.parametrize(("toml", "json_literal", "digits"), LONG)
@pytest.mark.parametrize(("where", "field"), [("step", "steps[1].rounds"), ("top", "slug"), ("row", "tables[0].rows[0].set.batch")])
def test_a_derivation_file(tmp_path, capsys, toml, json_literal, digits, where, field) -> None:
    body = ['title = "T"', 'question = "Q"', 'results = ["t_x"]']
    body.insert(0, f"slug = {toml}" if where == "top" else 'slug = "tiny"')
    body += ["[[steps]]", 'name = "t_x"', 'formula = "1 / beta"', 'unit = "s/B"', 'why = "w"']
    body += ["[[steps]]", 'name = "t_y"', 'formula = "2 / beta"', 'unit = "s/B"', 'why = "w"']
    if where == "step":
        body.append(f"rounds = {toml}")
    body += ["[[tables]]", 'title = "T"', 'columns = ["t_x"]', "[[tables.rows]]", "[tables.rows.set]", f"batch = {toml if where == 'row' else 1}"]
    p = tmp_path / "tiny.toml"
    p.write_text("\n".join(body) + "\n", encoding="utf-8")
    _derive_fails(capsys, ["derive", str(p)], p, field, digits)


@pytest.mark.parametrize(("toml", "json_literal", "digits"), LONG)
@pytest.mark.parametrize(("kind", "load", "source"), [
    ("engine profile", load_profile_file, PROFILES_DIR / "ideal.toml"),
    ("measurement file", load_measurement_file, MEASUREMENTS_DIR / "vllm-h200-latency.toml"),
])
def test_an_engine_profile_and_a_measurement_file(tmp_path, toml, json_literal, digits, kind, load: Callable, source: Path) -> None:
    p = tmp_path / "x.toml"
    p.write_text(f"extra = {toml}\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        load(p)
    assert str(err.value).startswith(f"{p}: extra: expected at most {MAX_INT_DIGITS:,} digits") and digits in str(err.value), kind


@pytest.mark.parametrize("literal", ["1" * MAX_INT_DIGITS, "-" + "1" * MAX_INT_DIGITS, "0x" + "f" * 100, "123"])
def test_an_integer_within_the_bound_still_parses(literal) -> None:
    assert parse_toml(f"a = {literal}", "x.toml")["a"] == int(literal.replace("_", ""), 0)
    if not literal.startswith("0x"):
        assert parse_json(f'{{"a": [{literal}]}}', "x.json")["a"] == [int(literal)]

"""Issue 22, families 4 and 7: every value has a finite domain, checked where it is read; deep nesting is one clean line.

Family 4: a value past 1e30 (or below 1e-30) in its field's unit is refused where it is read (a spec field, a scenario
input, a swept value, a derivation file's default); a step a derivation file computes past 1e300 has no value ("none",
with the reason) instead of overflowing a float.
Family 7: a TOML or JSON file nested past specs.catalog.MAX_NESTING is refused before anything walks it.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from roofline.renderers.numbers import display, plain
from roofline.specs.catalog import HARDWARE_DIR, MAX_NESTING, MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.measurements import MEASUREMENTS_DIR, load_measurement_file
from roofline.units import unit

from roofline import api
from roofline.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kv-offload.toml"


def _error(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err and len(captured.err.splitlines()) == 1, captured.err
    return captured.err.strip()


def _chip(tmp: Path, old: str, new: str) -> str:
    text = (HARDWARE_DIR / "h100-sxm.toml").read_text()
    assert old in text
    (tmp / "chip.toml").write_text(text.replace(old, new, 1))
    return str(tmp / "chip.toml")


def _file(tmp: Path, old: str, new: str) -> str:
    text = EXAMPLE.read_text()
    assert old in text
    (tmp / "x.toml").write_text(text.replace(old, new, 1))
    return str(tmp / "x.toml")


#: (id, argv with tmp, what the one error line says)
OUT_OF_DOMAIN = [
    ("t-fixed-1e308-seconds", lambda t: ["derive", "decode-floor", "--set", "t_fixed=1e308s"],
     "--set: t_fixed: expected a quantity from 1e-30 to 1e30 s"),
    ("claimed-tokens-1e300", lambda t: ["derive", "headline-check", "--set", "claimed_tokens_per_s=1e300"],
     "--set: claimed_tokens_per_s: expected a quantity from 1e-30 to 1e30 token/s"),
    ("bandwidth-1e300-tb-per-s", lambda t: ["show", "hardware", _chip(t, 'memory_bandwidth = "3.35 TB/s"', 'memory_bandwidth = "1e300 TB/s"')],
     "chip.toml: memory_bandwidth: expected a quantity from 1e-30 to 1e30 B/s"),
    ("capacity-below-1e-30", lambda t: ["show", "hardware", _chip(t, 'memory_capacity = "80 GB"', 'memory_capacity = "1e-45 GB"')],
     "chip.toml: memory_capacity: expected a quantity from 1e-30 to 1e30 B"),
    ("peak-1e40-flops", lambda t: ["show", "hardware", _chip(t, 'bf16 = "989.4 Tflop/s"', 'bf16 = "1e40 Pflop/s"')],
     "chip.toml: peak_dense.bf16: expected a quantity from 1e-30 to 1e30 flop/s"),
    ("swept-value-1e300-seconds", lambda t: ["sweep", "decode-floor", "t_step", "--over", "t_fixed=1ms,1e300s"],
     "--over: t_fixed: expected a quantity from 1e-30 to 1e30 s"),
    ("swept-range-end-1e300", lambda t: ["sweep", "decode-floor", "t_step", "--over", "ar_latency=1us:1e300s:log2"],
     "expected a quantity from 1e-30 to 1e30 s"),
    ("file-input-default-1e300", lambda t: ["derive", _file(t, 'default = "64 GB/s"', 'default = "1e300 GB/s"')],
     "inputs[1].default: expected a quantity from 1e-30 to 1e30 B/s"),
    ("check-symbol-1e40", lambda t: ["check", "P_active*b_w/beta", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--set", "beta=1e40 TB/s"],
     "expected a quantity from 1e-30 to 1e30 B/s"),
]


@pytest.mark.parametrize(("case", "argv", "message"), OUT_OF_DOMAIN, ids=[c[0] for c in OUT_OF_DOMAIN])
def test_a_value_outside_its_finite_domain_is_one_line(case, argv, message, tmp_path, capsys):
    assert main(argv(tmp_path)) == 2
    assert message in _error(capsys)


def test_a_step_past_1e300_has_no_value_instead_of_overflowing(tmp_path, capsys):
    """A derivation file's power of a power: 'none' with its reason in every format, never an OverflowError."""
    path = tmp_path / "huge.toml"
    path.write_text('title = "t"\nquestion = "q"\nresults = ["big", "ok"]\n'
                    '[[inputs]]\nname = "x"\nunit = "1"\ndefault = "1e20"\nmeaning = "m"\n'
                    '[[steps]]\nname = "big"\nformula = "x**64"\nunit = "1"\nwhy = "w"\n'
                    '[[steps]]\nname = "ok"\nformula = "x*2"\nunit = "1"\nwhy = "w"\n')
    for fmt in ("md", "tex", "json"):
        assert main(["derive", str(path), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "big is out of range here" in out
    doc = json.loads(api.render(api.derive(str(path)), "json"))
    assert doc["results"]["big"]["value"] is None and doc["results"]["ok"]["value"] == 2e20


@pytest.mark.parametrize(("value", "preferred"), [(Fraction(10) ** 299, "ns"), (Fraction(1, 10**299), "EB"), (Fraction(3) ** 600, None)])
def test_the_renderer_shows_any_exact_value_without_overflowing(value, preferred):
    u = unit("s") if preferred in ("ns", None) else unit("B")
    assert plain(value, u, preferred)  # no OverflowError, whatever the unit conversion does to it
    assert display(value, u, preferred).number.mantissa


# --- family 7: nesting -------------------------------------------------------------------------------

DEEP = 5000


def _deep_toml(key: str = "a") -> str:
    return f"{key} = " + "[" * DEEP + "]" * DEEP + "\n"


#: (id, file name, text, how it is loaded)
NESTED = [
    ("toml-arrays-in-a-chip", "chip.toml", _deep_toml("name"), lambda p: ["show", "hardware", str(p)]),
    ("toml-inline-tables-in-a-chip", "chip.toml", "name = " + "{a=" * DEEP + "1" + "}" * DEEP + "\n", lambda p: ["show", "hardware", str(p)]),
    ("toml-dotted-keys-in-a-chip", "chip.toml", ".".join(["k"] * (MAX_NESTING + 5)) + " = 1\n", lambda p: ["show", "hardware", str(p)]),
    ("json-arrays-in-a-config", "config.json", "[" * 100_000 + "]" * 100_000, lambda p: ["show", "model", str(p)]),
    ("json-objects-in-a-config", "config.json", '{"a":' * DEEP + "1" + "}" * DEEP, lambda p: ["show", "model", str(p)]),
    ("toml-in-a-derivation-file", "x.toml", 'title = "t"\n' + _deep_toml("question"), lambda p: ["derive", str(p)]),
    ("toml-in-a-model-metadata-file", "config.toml", _deep_toml("name"), lambda p: ["show", "model", str(p.with_suffix(".json"))]),
]


@pytest.mark.parametrize(("case", "name", "text", "argv"), NESTED, ids=[c[0] for c in NESTED])
def test_deep_nesting_is_one_line_not_a_recursion_error(case, name, text, argv, tmp_path, capsys):
    path = tmp_path / name
    path.write_text(text)
    if name == "config.toml":
        (tmp_path / "config.json").write_text((MODELS_DIR / "llama-3.1-8b.json").read_text())
    assert main(argv(path)) == 2
    assert f"nested more than {MAX_NESTING} deep" in _error(capsys)


def test_a_deeply_nested_measurement_file_is_one_line(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(_deep_toml("deep") + (MEASUREMENTS_DIR / "vllm-h200-latency.toml").read_text())
    with pytest.raises(SpecError, match=f"nested more than {MAX_NESTING} deep"):
        load_measurement_file(path)

"""Issue 35, family 8: an empty or invisible name is refused in one line (specs.text.check_name), on the command line, on the
light path (which read `--model ""` as the default), in the Python API and in a file where a name is read."""

from __future__ import annotations

import json
import shutil

import pytest
from roofline.specs.catalog import HARDWARE_DIR, MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.text import MAX_MARKS, name_problem

from roofline import api
from roofline.cli import main

MARKS = "\u0301" * 1500

#: (id, text, what name_problem says, or None where the name is fine)
PROBLEMS = [
    ("empty", "", "an empty string"),
    ("a-space", " ", "only spaces"),
    ("tabs-and-ideographic-space", "\t\u3000", "only spaces"),
    ("hangul-filler", "\u3164", "only an invisible character, U+3164 (HANGUL FILLER)"),
    ("braille-blank", "\u2800\u2800", "only invisible characters: U+2800 (BRAILLE PATTERN BLANK) and 1 more"),
    ("halfwidth-hangul-filler", "\uffa0", "only an invisible character, U+FFA0 (HALFWIDTH HANGUL FILLER)"),
    ("zero-width-space", "\u200b", "only an invisible character, U+200B (ZERO WIDTH SPACE)"),
    ("combining-marks-alone", MARKS, "only invisible characters: U+0301 (COMBINING ACUTE ACCENT) and 1,499 more"),
    ("combining-marks-on-a-letter", "h" + MARKS, f"1,500 combining marks stacked on one character (at most {MAX_MARKS})"),
    ("filler-and-spaces", " \u3164 ", "only invisible characters: U+3164 (HANGUL FILLER) and 2 more"),
    ("a-name", "h100-sxm", None),
    ("accents", "Ti\u1ebfng Vi\u1ec7t", None),
    ("a-few-marks", "x\u0301\u0302\u0303", None),
    ("cjk", "\u65e5\u672c", None),
    ("filler-beside-a-letter", "\u3164a", None),
]


@pytest.mark.parametrize(("case", "text", "why"), PROBLEMS, ids=[c[0] for c in PROBLEMS])
def test_name_problem(case, text, why):
    assert name_problem(text) == why


_FOUND = {"": "an empty string", "\u3164": "only an invisible character, U+3164 (HANGUL FILLER)", "\u2800": "only an invisible character, U+2800 (BRAILLE PATTERN BLANK)"}
_MODEL = "model: expected a shipped name (`roofline list models`) or a path"
_HARDWARE = "hardware: expected a shipped name (`roofline list hardware`) or a path"
_PRECISION = "expected a precision name such as 'bf16'"

#: (id, argv without the name, the option, the line's start before ', found ...')
OPTIONS = [
    ("derive-model", ["derive", "decode-floor"], "--model", _MODEL),
    ("derive-hardware", ["derive", "decode-floor"], "--hardware", _HARDWARE),
    ("derive-engine", ["derive", "decode-floor"], "--engine", "--engine: expected an engine profile name such as 'fitted'"),
    ("derive-weights", ["derive", "decode-floor"], "--weights", f"--weights: {_PRECISION}"),
    ("derive-kv", ["derive", "decode-floor"], "--kv", f"--kv: {_PRECISION}"),
    ("derive-math", ["derive", "decode-floor"], "--math", f"--math: {_PRECISION}"),
    ("derive-second-hardware", ["derive", "hardware-upgrade"], "--second-hardware", _HARDWARE),
    ("derive-second-model", ["derive", "speculative-decoding"], "--second-model", _MODEL),
    ("sweep-model", ["sweep", "decode-floor", "t_step", "--over", "batch=1,2"], "--model", _MODEL),
    ("sweep-engine", ["sweep", "decode-floor", "t_step", "--over", "batch=1,2"], "--engine", "--engine: expected an engine profile name such as 'fitted'"),
    ("check-hardware", ["check", "1/beta"], "--hardware", _HARDWARE),
    ("check-kv", ["check", "b_kv"], "--kv", f"--kv: {_PRECISION}"),
    ("show-model", ["show", "model"], None, _MODEL),
]


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache of this module's own that holds the compiled sheets the derive cases read on the light path."""
    mp = pytest.MonkeyPatch()
    mp.delenv("ROOFLINE_CACHE", raising=False)
    mp.setenv("ROOFLINE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    for slug in ("decode-floor", "hardware-upgrade", "speculative-decoding"):
        assert main(["derive", slug, "--format", "json"]) == 0
    yield
    mp.undo()


@pytest.mark.parametrize("name", list(_FOUND), ids=["empty", "hangul-filler", "braille-blank"])
@pytest.mark.parametrize(("case", "argv", "option", "line"), OPTIONS, ids=[c[0] for c in OPTIONS])
def test_an_empty_or_invisible_name_is_one_line_on_either_path(case, argv, option, line, name, warm_cache, capsys):
    capsys.readouterr()
    full = [*argv, *((option,) if option else ()), name]
    for light in (False, True) if argv[0] == "derive" else (False,):
        assert main(full, light=light) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == f"roofline: error: {line}, found {_FOUND[name]}\n", (light, err)


@pytest.mark.parametrize(("case", "call"), [
    ("api-model", lambda: api.derive("decode-floor", model="")),
    ("api-hardware", lambda: api.derive("decode-floor", hardware="\u2800")),
    ("api-engine", lambda: api.derive("decode-floor", engine="\u3164")),
    ("api-weights", lambda: api.derive("decode-floor", weights=" ")),
    ("api-sweep-model", lambda: api.sweep("decode-floor", "t_step", {"batch": [1]}, model=["llama-3.1-8b", ""])),
], ids=lambda x: x if isinstance(x, str) else "")
def test_the_python_api_refuses_them_too(case, call):
    with pytest.raises(SpecError, match="expected .*, found (an empty string|only)"):
        call()


def _chip(tmp_path, name):
    text = (HARDWARE_DIR / "h100-sxm.toml").read_text()
    path = tmp_path / "chip.toml"
    path.write_text(text.replace('name = "NVIDIA H100 SXM5 80GB"', f"name = {json.dumps(name)}"))
    return path


def _model_metadata(tmp_path, name):
    shutil.copy(MODELS_DIR / "llama-3.1-8b.json", tmp_path / "m.json")
    (tmp_path / "m.toml").write_text(f'name = {json.dumps(name)}\nstatus = "user"\nsource = "mine"\n')
    return tmp_path / "m.json"


def _model_stem(tmp_path, name):
    path = tmp_path / f"{name}.json"
    shutil.copy(MODELS_DIR / "llama-3.1-8b.json", path)
    return path


#: (id, kind, file maker, name, the field the line names, what it expected)
FILES = [
    ("chip-hangul-filler", "hardware", _chip, "\u3164", "name", "the chip's name"),
    ("chip-braille-blank", "hardware", _chip, "\u2800\u2800\u2800", "name", "the chip's name"),
    ("chip-combining-marks", "hardware", _chip, "\u0301" * 1500, "name", "the chip's name"),
    ("chip-spaces", "hardware", _chip, "   ", "name", "the chip's name"),
    ("model-metadata-empty", "model", _model_metadata, "", "name", "the model's name"),
    ("model-metadata-filler", "model", _model_metadata, "\uffa0", "name", "the model's name"),
    ("model-file-named-a-filler", "model", _model_stem, "\u3164", "name", "the model's name"),
]


@pytest.mark.parametrize(("case", "kind", "make", "name", "field", "expected"), FILES, ids=[c[0] for c in FILES])
def test_a_name_in_a_file_is_checked(case, kind, make, name, field, expected, tmp_path, capsys):
    path = make(tmp_path, name)
    assert main(["show", kind, str(path)]) == 2
    out, err = capsys.readouterr()
    prefix = f"roofline: error: {path.with_suffix('.toml') if case.startswith('model-metadata') else path}: {field}: expected {expected}"
    assert out == "" and err.startswith(prefix) and len(err.splitlines()) == 1, err


def test_a_derivation_file_names_an_empty_chip(tmp_path, capsys):
    text = (MODELS_DIR.parents[1] / "examples" / "kv-offload.toml").read_text().replace('hardware = ["h100-sxm", "h200"]', 'hardware = ["h100-sxm", ""]')
    path = tmp_path / "kv-offload.toml"
    path.write_text(text)
    assert main(["derive", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"roofline: error: {path}: hardware[1]: expected a shipped hardware name or a path, found an empty string\n", err

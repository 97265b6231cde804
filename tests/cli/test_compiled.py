"""The light path of `roofline derive` (roofline/compiled.py): a shipped sheet printed from its compiled form is the full
path's output byte for byte, imports neither sympy, pint nor numpy, misses when any file it is made from changes, and
leaves to the full path everything it cannot answer as the full path would (an error, an unknown name, a path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine import store

from roofline import api, compiled
from roofline.cli import _parser, main
from tests import cache_entries

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of this test's own, on, and nothing shipped."""
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ROOFLINE_SHIPPED", "off")  # the user's folder alone: a first run is cold (the shipped entries: test_shipped_entries.py)
    return tmp_path / "cache"


def _run(capsys, argv, light):
    try:
        code = main(list(argv), light=light)
    except SystemExit as stop:  # the parser's own exit on a malformed command line
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def _light(argv):
    """The light path's answer to a command line: its text, or None where it leaves the run to the full path."""
    return compiled.derive(_parser().parse_args(argv))


CASES = [
    ["derive", "decode-floor", "--hardware", "h100-sxm", "--model", "llama-2-7b", "--format", "json"],
    ["derive", "decode-floor", "--model", "deepseek-v3", "--set", "batch=64", "--set", "tp=8"],  # the checkpoint's own formats
    ["derive", "decode-floor", "--model", "gpt-oss-120b", "--hardware", "b200", "--weights", "fp8,experts_routed=nvfp4", "--format", "json"],
    ["derive", "prefill-decode-crossover", "--format", "tex", "--fragment", "--set", "prompt_len=4096"],
    ["derive", "speculative-decoding", "--second-model", "llama-3.1-8b", "--set", "batch=32", "--format", "tex"],
    ["derive", "hardware-upgrade", "--hardware", "a100-sxm-80gb", "--second-hardware", "b200", "--format", "json"],
    ["derive", "int4-flip", "--weights", "int4-g128", "--engine", "ideal"],
    ["derive", "model-limits", "--format", "md"],
    ["derive", "moe-experts", "--model", "qwen3-235b-a22b", "--set", "batch=16", "--set", "t_fixed=0.25ms"],
    ["derive", "batch-knee", "--hardware", "tpu-v5e", "--model", "llama-3.1-8b", "--format", "json"],
    ["derive", "attention-kinds", "--model", "olmo-3-7b", "--set", "context=131072"],  # past the model's trained positions
]


@pytest.mark.parametrize("argv", CASES, ids=[f"{a[1]}-{i}" for i, a in enumerate(CASES)])
def test_the_light_path_prints_what_the_full_path_prints(argv, cache, capsys, monkeypatch):
    full = _run(capsys, argv, light=False)  # the full path, which stores what the light path reads
    assert full[0] == 0 and full[1]
    monkeypatch.setattr(api, "derive", lambda *a, **k: pytest.fail("the light path did not answer"))
    assert _run(capsys, argv, light=True) == full
    if "deepseek-v3" in argv:
        assert full[2] == "" and "as the checkpoint stores them" in full[1]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(-2, 4096), context=st.sampled_from(["0", "1", "2048", "131072", "1e400", "8k", "4096 token", "2e3", "0x10"]),
       t_fixed=st.sampled_from(["0", "1ms", "2.5 us", "-1 ms", "1e-40 s", "3 B", "1/2 ms"]))
def test_light_equals_full_for_any_value_and_leaves_every_refusal_to_the_full_path(batch, context, t_fixed, cache, capsys):
    argv = ["derive", "decode-floor", "--format", "json", "--set", f"batch={batch}", "--set", f"context={context}", "--set", f"t_fixed={t_fixed}"]
    full = _run(capsys, argv, light=False)
    _run(capsys, ["derive", "decode-floor", "--format", "json"], light=False)  # stores the compiled form, whatever argv does
    light = _light(argv)
    if full[0] != 0:
        assert light is None, "a refusal is the full path's to say"
    else:
        assert light == full[1], "an input the full path reads, the light path reads alike"


def test_what_it_cannot_answer_as_the_full_path_would_is_left_to_it(cache, capsys, tmp_path):
    _run(capsys, ["derive", "decode-floor"], light=False)
    assert _light(["derive", "decode-floor"]) is not None
    own = tmp_path / "chip.toml"
    shutil.copy(ROOT / "specs" / "hardware" / "h100-sxm.toml", own)
    for argv in (["derive", "decode-floor", "--plots", str(tmp_path / "figs")],  # it writes files
                 ["derive", "decode-floor", "--hardware", str(own)],  # a file of your own the full path has not read yet
                 ["derive", "decode-floor", "--hardware", "h100"],  # an unknown name: the full path suggests the closest
                 ["derive", "decode-floor", "--set", "batch=8", "--set", "batch=9"],  # set twice
                 ["derive", "decode-floor", "--set", "bach=8"],
                 ["derive", "decode-floor", "--weights", "fp4"],  # no FP4 peak on an H100: refused
                 ["derive", "decode-floor", "--second-model", "llama-3.1-8b"],  # a sheet with no second model
                 ["derive", "decode-floor", "--format", "md", "--fragment"],
                 ["derive", str(ROOT / "examples" / "kv-offload.toml")],  # a derivation file
                 ["derive", "flops-per-token"]):  # not compiled yet: the full path runs and stores it
        assert _light(argv) is None, argv


def test_a_spoilt_or_missing_entry_is_a_miss_and_the_cache_off_is_the_full_path(cache, capsys, monkeypatch):
    argv = ["derive", "ridge-coincidence", "--format", "json"]
    full = _run(capsys, argv, light=False)
    assert _light(argv) == full[1]
    for entry in cache.glob("*.json"):
        data = cache_entries.value(entry)
        if isinstance(data, dict) and "blueprint" in data:
            data["plan"]["steps"][0]["expr"]["nodes"].append(["Function", "eval", 0])  # a node outside the whitelist
            cache_entries.rewrite(entry, data)  # a well-formed entry for its key, with a node it must refuse
    assert _light(argv) is None
    assert _run(capsys, argv, light=True) == full, "the full path answers"
    monkeypatch.setenv("ROOFLINE_CACHE", "off")
    assert _light(argv) is None and _run(capsys, argv, light=True) == full


def test_every_entry_is_data_keyed_by_every_file_it_is_made_from(tmp_path):
    """Entries are JSON (nothing loading can execute); the key changes with any byte of a spec, a template or a source file."""
    copy = tmp_path / "src"
    for package in compiled.PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(copy)}

    def key() -> str:
        r = subprocess.run([sys.executable, "-c", "from roofline import compiled; print(compiled.base_key())"], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    keys = [key()]
    for edited in ("specs/hardware/h100-sxm.toml", "specs/measurements/profiles/fitted.toml", "renderers/templates/sheet.md.j2",
                   "derivations/questions/decode_floor.py", "units/definitions.txt"):
        path = copy / edited
        assert path.is_file(), edited
        path.write_bytes(path.read_bytes() + b"\n")
        keys.append(key())
    assert len(set(keys)) == len(keys), "each edit is a new key"


def _modules_code(marker: Path, fmt: str) -> str:
    return ("import json, sys\n"
            f"sys.argv = ['roofline', 'derive', 'decode-floor', '--hardware', 'h100-sxm', '--model', 'llama-2-7b', '--format', {fmt!r}, "
            "'--set', 'batch=24']\n"
            "from roofline.cli import main\n"
            "code = main()\n"
            "sys.stdout.flush()\n"
            "top = sorted({m.split('.')[0] for m in sys.modules if not m.startswith('_')} - set(sys.stdlib_module_names))\n"
            f"open({str(marker)!r}, 'w').write(json.dumps([code, top]))\n")


@pytest.mark.parametrize("fmt", ["json", "md"])
def test_the_light_path_imports_no_sympy_pint_or_numpy_and_keys_every_library_the_full_path_imports(fmt, tmp_path):
    from importlib.metadata import packages_distributions

    env = {**os.environ, "ROOFLINE_CACHE_DIR": str(tmp_path / "cache"), "ROOFLINE_SHIPPED": "off"}
    env.pop("ROOFLINE_CACHE", None)
    marker = tmp_path / "modules.json"
    runs = []
    for _ in range(2):  # the first runs the full path and stores the compiled form; the second reads it
        r = subprocess.run([sys.executable, "-c", _modules_code(marker, fmt)], cwd=ROOT, capture_output=True, env=env, timeout=300)
        runs.append((r, json.loads(marker.read_text())))
    (full, (full_code, full_modules)), (light, (light_code, light_modules)) = runs
    assert full.returncode == light.returncode == full_code == light_code == 0, full.stderr
    assert full.stdout == light.stdout and full.stderr == light.stderr
    assert {"sympy", "pint", "numpy"} <= set(full_modules), "the first run took the full path"
    assert not {"sympy", "pint", "numpy", "mpmath", "matplotlib"} & set(light_modules), light_modules
    dists = packages_distributions()
    imported = {d.lower().replace("-", "_") for m in set(full_modules) - set(compiled.PACKAGES) for d in dists.get(m, [])}
    assert {"sympy", "pint", "numpy"} <= imported
    assert imported <= {d.lower() for d in compiled.DISTRIBUTIONS}, "a library the full path imports is not keyed"
    entries = [cache_entries.value(p) for p in (tmp_path / "cache").rglob("*.json")]
    assert any(isinstance(e, dict) and "blueprint" in e for e in entries)
    assert {p.suffix for p in (tmp_path / "cache").rglob("*") if p.is_file()} <= {".json", ".bin"}  # data only, never code


def test_bad_input_is_the_full_paths_one_line(cache, capsys):
    _run(capsys, ["derive", "decode-floor"], light=False)
    for argv, message in ((["derive", "decode-floor", "--set", "batch=-1"], "roofline: error: --set: batch"),
                          (["derive", "decode-floor", "--set", "batch=\udcff"], "roofline: error: --set: batch"),
                          (["derive", "decode-floor", "--hardware", "h100"], "roofline: error: hardware 'h100': unknown hardware name")):
        code, out, err = _run(capsys, argv, light=True)
        assert code == 2 and out == "" and err.startswith(message) and err.count("\n") == 1, (argv, err)
    assert store.directory() is not None


def test_a_file_of_your_own_is_read_by_its_bytes_with_the_warnings_the_full_path_gives(cache, capsys, tmp_path, monkeypatch):
    """A chip TOML (here one whose bandwidth is 1000 times any shipped chip's: a warning) and a config.json of your own: the
    full path stores them as it reads them; the light path then prints the same sheet and the same warning, and an edited
    file is a miss."""
    chip = tmp_path / "fast.toml"
    chip.write_text((ROOT / "specs" / "hardware" / "h100-sxm.toml").read_text().replace('"3.35 TB/s"', '"3350 TB/s"'))
    config = tmp_path / "mine" / "config.json"
    config.parent.mkdir()
    shutil.copy(ROOT / "specs" / "models" / "llama-3.1-8b.json", config)
    argv = ["derive", "decode-floor", "--hardware", str(chip), "--model", str(config), "--format", "json"]
    assert _light(argv) is None
    full = _run(capsys, argv, light=False)
    assert full[0] == 0 and full[2].startswith("roofline: warning: ") and "memory_bandwidth" in full[2]
    real = api.derive
    monkeypatch.setattr(api, "derive", lambda *a, **k: pytest.fail("the light path did not answer"))
    assert _run(capsys, argv, light=True) == full
    monkeypatch.setattr(api, "derive", real)
    config.write_text(config.read_text().replace('"num_hidden_layers": 32', '"num_hidden_layers": 30'))
    assert _light(argv) is None, "an edited file is a miss"
    assert _run(capsys, argv, light=True) != full

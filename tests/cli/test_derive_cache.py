"""The derive cache (roofline/derive_cache.py): a cached `derive` is the normal path's output byte for byte, imports no
sympy, pint or numpy, misses when anything it reads changes, and never stores or answers a failed or unkeyable run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roofline.cli as cli_mod
from derivations import store
from roofline import derive_cache
from roofline.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "kv-offload.toml"


@pytest.fixture
def fresh(monkeypatch):
    """Keys no earlier session stored (an environment variable of roofline's own is part of every key), the cache on, and
    a count of the normal path's runs."""
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    monkeypatch.setenv("ROOFLINE_TEST_SESSION", uuid.uuid4().hex)
    calls: list[object] = []
    real = cli_mod.run
    monkeypatch.setattr(cli_mod, "run", lambda argv=None: calls.append(argv) or real(argv))
    return calls


def _run(capsys, argv, **options):
    try:
        code = main(list(argv), **options)
    except SystemExit as stop:  # the parser's own exit on a malformed command line, as in the normal path
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


CASES = [
    ["derive", "decode-floor", "--hardware", "h100-sxm", "--model", "llama-2-7b", "--format", "json"],
    ["derive", "decode-floor", "--model", "gpt-oss-20b"],  # a warning on stderr, kept with the output
    ["derive", "prefill-decode-crossover", "--format", "tex", "--fragment", "--set", "prompt_len=4096"],
    ["derive", str(EXAMPLE), "--format", "md", "--set", "offload_fraction=0.25"],
]


@pytest.mark.parametrize("argv", CASES, ids=["json", "md-warning", "tex-fragment-set", "derivation-file"])
def test_a_cached_derive_is_the_normal_path_byte_for_byte(argv, fresh, capsys, monkeypatch):
    normal = _run(capsys, argv)  # argv given from Python: no cache
    assert len(fresh) == 1 and normal[0] == 0 and normal[1]
    miss = _run(capsys, argv, result_cache=True)
    assert len(fresh) == 2, "the first cached call is a miss: the normal path runs"
    hit = _run(capsys, argv, result_cache=True)
    assert len(fresh) == 2, "the second is a hit: the normal path does not run"
    assert normal == miss == hit
    monkeypatch.setenv("ROOFLINE_TEST_SESSION", uuid.uuid4().hex)
    assert _run(capsys, argv, result_cache=True) == normal and len(fresh) == 3, "a changed environment variable is a miss"
    if "gpt-oss-20b" in argv:
        assert hit[2].startswith("roofline: warning: gpt-oss-20b: its checkpoint stores")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(-2, 4096), context=st.sampled_from(["0", "1", "2048", "131072", "1e400", "8k"]))
def test_cached_equals_uncached_for_any_set_value_and_errors_are_never_stored(batch, context, fresh, capsys):
    argv = ["derive", "decode-floor", "--format", "json", "--set", f"batch={batch}", "--set", f"context={context}"]
    normal = _run(capsys, argv)
    first = _run(capsys, argv, result_cache=True)
    after_first = len(fresh)
    second = _run(capsys, argv, result_cache=True)
    assert normal == first == second
    if first[0] == 0:
        assert len(fresh) == after_first and json.loads(first[1])["slug"] == "decode-floor", "the second call is a hit"
    else:  # a failed run is one line, and it is not stored: the normal path runs again and says it again
        assert len(fresh) == after_first + 1 and first[1] == "" and re.fullmatch(r"roofline: error: [^\n]+\n", first[2])


def _key(argv: list[str]) -> str | None:
    args = cli_mod._parsed(argv)
    assert args is not None
    return derive_cache.key(vars(args))


def test_the_key_changes_with_every_option_set_value_and_environment_variable(monkeypatch):
    base = ["derive", "decode-floor", "--format", "json", "--set", "batch=8"]
    k = _key(base)
    assert k is not None and k == _key(base)
    others = [_key(["derive", "decode-floor", "--format", "json", "--set", "batch=9"]),
              _key(["derive", "decode-floor", "--format", "md", "--set", "batch=8"]),
              _key([*base, "--set", "context=2048"]), _key([*base, "--engine", "ideal"]), _key([*base, "--weights", "fp8"]),
              _key(["derive", "decode-floor", "--set", "batch=8", "--format", "json", "--hardware", "h200"])]
    monkeypatch.setenv("ROOFLINE_SOMETHING", "1")
    others.append(_key(base))
    monkeypatch.delenv("ROOFLINE_SOMETHING")
    assert _key(base) == k
    for name, value in (("SOURCE_DATE_EPOCH", "1"), ("HOME", "/elsewhere"), ("SYMPY_GROUND_TYPES", "python"), ("PYTHONHASHSEED", "1")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            others.append(_key(base))
    assert len({k, *others}) == len(others) + 1, "every change is a new key"


def test_what_cannot_be_keyed_is_not_cached(tmp_path):
    assert _key(["derive", "decode-floor", "--plots", str(tmp_path)]) is None  # it writes files
    assert _key(["derive", "decode-floor", "--hardware", str(tmp_path / "missing.toml")]) is None
    assert _key(["derive", "decode-floor", "--hardware", str(tmp_path)]) is None  # a folder
    os.mkfifo(tmp_path / "fifo.toml")
    assert _key(["derive", "decode-floor", "--hardware", str(tmp_path / "fifo.toml")]) is None  # not opened for reading: never blocks
    (tmp_path / "bad.toml").write_text("slug = [")
    assert _key(["derive", str(tmp_path / "bad.toml")]) is None
    args = vars(cli_mod._parsed(["derive", "decode-floor"]))
    assert derive_cache.key({**args, "an_option_added_later": "x"}) is None


def test_the_key_changes_with_each_user_file_named(tmp_path):
    chip = tmp_path / "chip.toml"
    shutil.copy(ROOT / "specs" / "hardware" / "h100-sxm.toml", chip)
    model = tmp_path / "model.json"
    shutil.copy(ROOT / "specs" / "models" / "llama-3.1-8b.json", model)
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(EXAMPLE.read_text(encoding="utf-8").replace('hardware = ["h100-sxm", "h200"]', 'hardware = ["h100-sxm", "chip.toml"]'),
                     encoding="utf-8")
    argv = ["derive", str(sheet), "--hardware", str(chip), "--model", str(model)]
    keys = [_key(argv)]
    chip.write_text(chip.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    keys.append(_key(argv))
    model.with_suffix(".toml").write_text('name = "Mine"\nstatus = "estimated"\nsource = "me"\n', encoding="utf-8")  # the metadata beside it
    keys.append(_key(argv))
    sheet.write_text(sheet.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    keys.append(_key(argv))
    assert None not in keys and len(set(keys)) == len(keys)
    # a file the derivation file names, relative to its folder, is keyed though the command line does not name it
    short = ["derive", str(sheet)]
    k = _key(short)
    chip.write_text(chip.read_text(encoding="utf-8") + "# again\n", encoding="utf-8")
    assert _key(short) not in (None, k)


_KEY_CODE = ("import sys\nfrom roofline import cli, derive_cache\n"
             "assert derive_cache.__file__.startswith(sys.argv[1]), derive_cache.__file__\n"
             "print(derive_cache.key(vars(cli._parsed(['derive', 'decode-floor', '--format', 'json']))))\n")


def test_the_key_changes_with_any_byte_of_a_spec_template_or_source_file(tmp_path):
    copy = tmp_path / "src"
    for package in derive_cache.PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(copy)}

    def key() -> str:
        r = subprocess.run([sys.executable, "-c", _KEY_CODE, str(copy)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    keys = [key()]
    for edited in ("specs/hardware/h100-sxm.toml", "specs/measurements/profiles/fitted.toml", "renderers/templates/sheet.md.j2",
                   "derivations/questions/decode_floor.py"):
        path = copy / edited
        assert path.is_file(), edited
        path.write_bytes(path.read_bytes() + b"\n")
        keys.append(key())
    assert len(set(keys)) == len(keys), "each edit is a new key"


def _modules_code(marker: Path) -> str:
    return ("import json, sys\n"
            "sys.argv = ['roofline', 'derive', 'decode-floor', '--hardware', 'h100-sxm', '--model', 'llama-2-7b', '--format', 'json']\n"
            "from roofline.cli import main\n"
            "code = main()\n"
            "sys.stdout.flush()\n"
            "top = sorted({m.split('.')[0] for m in sys.modules if not m.startswith('_')} - set(sys.stdlib_module_names))\n"
            f"open({str(marker)!r}, 'w').write(json.dumps([code, top]))\n")


def test_a_cached_derive_imports_no_sympy_pint_or_numpy_and_keys_every_library_a_derive_imports(tmp_path):
    from importlib.metadata import packages_distributions

    env = {**os.environ, "ROOFLINE_TEST_SESSION": uuid.uuid4().hex}
    env.pop("ROOFLINE_CACHE", None)
    marker = tmp_path / "modules.json"
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _modules_code(marker)], cwd=ROOT, capture_output=True, env=env, timeout=300)
        runs.append((r, json.loads(marker.read_text())))
    (miss, (miss_code, miss_modules)), (hit, (hit_code, hit_modules)) = runs
    assert miss.returncode == hit.returncode == miss_code == hit_code == 0, miss.stderr
    assert miss.stdout == hit.stdout and miss.stderr == hit.stderr and json.loads(hit.stdout)["slug"] == "decode-floor"
    assert {"sympy", "pint", "numpy"} <= set(miss_modules), "the miss ran the normal path"
    assert not {"sympy", "pint", "numpy", "jinja2"} & set(hit_modules), hit_modules
    ours = set(derive_cache.PACKAGES)
    dists = packages_distributions()
    # every installed distribution a derive imports (a module of no distribution, such as the interpreter's sitecustomize, has no version to key)
    imported = {d.lower().replace("-", "_") for m in set(miss_modules) - ours for d in dists.get(m, [])}
    assert {"sympy", "pint", "numpy"} <= imported
    assert imported <= {d.lower() for d in derive_cache.DISTRIBUTIONS}, "a library a derive imports is not keyed"
    entry = subprocess.run([sys.executable, "-m", "roofline", *["derive", "decode-floor", "--hardware", "h100-sxm", "--model", "llama-2-7b",
                            "--format", "json"]], cwd=ROOT, capture_output=True, env=env, timeout=300)
    assert entry.returncode == 0 and entry.stdout == hit.stdout


def test_the_environment_variables_the_code_reads_are_keyed():
    read = set()
    for package in derive_cache.PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            read |= set(re.findall(r"""(?:environ\.get\(|environ\[|getenv\()\s*["']([A-Z0-9_]+)["']""", text))
            if "expanduser" in text:
                read.add("HOME")
    assert {"ROOFLINE_CACHE", "ROOFLINE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"} <= read
    unkeyed = [n for n in read if not (n.startswith(derive_cache.ENV_PREFIXES) or n in derive_cache.ENV_NAMES)]
    assert unkeyed == []


def test_bad_input_is_the_normal_paths_one_line_and_never_stored(fresh, capsys, tmp_path):
    folder = store.directory()
    assert folder is not None
    entries = set(folder.iterdir())
    for argv, message in ((["derive", "decode-floor", "--bogus"], "roofline: error: unrecognized arguments: --bogus"),
                          (["derive", "decode-flor"], "roofline: error: question 'decode-flor': unknown question"),
                          (["derive", "decode-floor", "--set", "batch=-1"], "roofline: error: --set: batch"),
                          (["derive", "decode-floor", "--hardware", str(tmp_path / "none.toml")], "roofline: error: "),
                          (["derive", "decode-floor", "--set", "batch=\udcff"], "roofline: error: --set: batch")):
        for _ in range(2):
            code, out, err = _run(capsys, argv, result_cache=True)
            assert code == 2 and out == "" and err.startswith(message) and err.count("\n") == 1, (argv, err)
    assert set(folder.iterdir()) == entries, "nothing was stored"


def test_plots_and_other_commands_always_run_and_a_spoilt_entry_is_a_miss(fresh, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        code, out, _ = _run(capsys, ["derive", "decode-floor", "--plots", "figs"], result_cache=True)
        assert code == 0 and "figs/" in out and list((tmp_path / "figs").iterdir())
        shutil.rmtree(tmp_path / "figs")
    assert len(fresh) == 2, "--plots writes files: never answered from the cache"
    assert _run(capsys, ["list", "questions"], result_cache=True)[0] == 0 and len(fresh) == 3
    argv = ["derive", "ridge-coincidence", "--format", "json"]
    first = _run(capsys, argv, result_cache=True)
    entry = store.directory() / f"{_key(argv)}.json"
    assert entry.is_file() and len(fresh) == 4
    entry.write_text('{"format": 1, "output": [["out", 3]]}')
    assert _run(capsys, argv, result_cache=True) == first and len(fresh) == 5, "an entry of the wrong shape is a miss"
    monkeypatch.setenv("ROOFLINE_CACHE", "off")
    assert _run(capsys, argv, result_cache=True) == first and len(fresh) == 6, "ROOFLINE_CACHE=off bypasses it"

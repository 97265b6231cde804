"""Robustness regressions (issue 22): one test per reported bug (hostile text, cache, bounds, build, Ctrl-C), named after it, on its own example.

The family tests (tests/cli/test_untrusted_text.py, test_bounded_values.py, test_sweep_streaming.py, test_reliability.py,
test_records_and_defaults.py, test_interrupts_and_encodings.py, tests/derivations/engine/test_cache_safety.py, test_work_bounds.py,
test_exprjson.py, tests/renderers/test_site.py and test_latex_compile.py) cover the other members of each family. The
examples that take seconds are tested once, there: the `check` solve that took 70 s
(test_work_bounds.py::test_a_check_solve_that_does_not_finish_is_refused_with_its_reason), a truncated defaults file
(test_records_and_defaults.py::test_a_broken_defaults_file_is_one_line_and_calibrate_mends_it), 1,000 records in
quadratic time (test_records_and_defaults.py::test_the_leave_one_out_is_linear_in_the_records), the script in Chromium
(test_site.py::test_no_script_runs_and_no_event_handler_survives_from_user_text, slow) and the README's example in
pdflatex (test_latex_compile.py, slow).
"""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import pytest
from roofline.derivations.engine import cache
from roofline.specs.catalog import HARDWARE_DIR
from roofline.specs.errors import SpecError
from roofline.specs.measurements import load_measurement_file

from roofline import api
from roofline import build as build_mod
from roofline import out_folder as out_folder_mod
from roofline.cli import main
from tests.specs.test_measurements import GOOD

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "kv-offload.toml"


def _err(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err and len(captured.err.splitlines()) == 1, captured.err
    return captured.err


def test_script_in_text_math_of_a_derivation_file_reached_markdown(tmp_path, capsys):
    path = tmp_path / "x.toml"
    path.write_text(EXAMPLE.read_text().replace('title = "Offloading', "title = 'Q $\\text{<script>document.title=1</script>}$'\n#", 1))
    assert main(["derive", str(path), "--format", "md"]) == 2
    assert "<script>" not in capsys.readouterr().out


def test_escape_sequences_in_a_chip_name_retitled_the_terminal(tmp_path, capsys):
    text = (HARDWARE_DIR / "h100-sxm.toml").read_text().replace('name = "NVIDIA H100 SXM5 80GB"', 'name = "\\u001b]0;PWNED\\u0007\\u001b[2J"')
    (tmp_path / "esc.toml").write_text(text)
    assert main(["show", "hardware", str(tmp_path / "esc.toml")]) == 2
    assert "\x1b" not in _err(capsys)


def test_a_pickle_in_the_cache_ran_on_the_next_derive(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    marker = tmp_path / "PWNED"
    evil = pickle.dumps(_Payload(marker))
    for k in ("a" * 64, "b" * 64):
        (tmp_path / f"{k}.pickle").write_bytes(evil)
        (tmp_path / f"{k}.json").write_bytes(evil)
        (tmp_path / f"{k}.bin").write_bytes(evil)
        assert cache.load_json(k) is None and cache.load_expr(k) is None
    assert not marker.exists()


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


def test_a_fifo_in_the_cache_hung_forever(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    os.mkfifo(tmp_path / f"{'c' * 64}.json")
    assert cache.load_json("c" * 64) is None


def test_a_world_writable_cache_folder_was_trusted(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(shared))
    monkeypatch.delenv("ROOFLINE_CACHE", raising=False)
    with pytest.warns(cache.CacheWarning, match="can be written by others"):
        assert cache.directory() is None


@pytest.mark.parametrize("argv", [["derive", "decode-floor", "--set", "t_fixed=1e308s"],
                                  ["derive", "headline-check", "--set", "claimed_tokens_per_s=1e300"]])
def test_an_overflowing_input_was_a_traceback(argv, capsys):
    assert main(argv) == 2
    assert "from 1e-30 to 1e30" in _err(capsys)


def test_a_bandwidth_of_1e300_tb_per_s_crashed_show_hardware(tmp_path, capsys):
    (tmp_path / "big.toml").write_text((HARDWARE_DIR / "h100-sxm.toml").read_text().replace('"3.35 TB/s"', '"1e300 TB/s"'))
    assert main(["show", "hardware", str(tmp_path / "big.toml")]) == 2
    assert "memory_bandwidth: expected a quantity from 1e-30 to 1e30 B/s" in _err(capsys)


def test_200_chained_squarings_ran_for_minutes(tmp_path, capsys):
    text = 'title = "t"\nquestion = "q"\nresults = ["s_199"]\n[[inputs]]\nname = "s_0"\nunit = "1"\ndefault = "2"\nmeaning = "m"\n'
    text += "".join(f'[[steps]]\nname = "s_{k}"\nformula = "s_{k - 1}*s_{k - 1}"\nunit = "1"\nwhy = "w"\n' for k in range(1, 200))
    (tmp_path / "chain.toml").write_text(text)
    assert main(["derive", str(tmp_path / "chain.toml")]) == 2
    assert "degree above 4,096" in _err(capsys)


def test_an_838_kb_file_of_100_tables_took_three_minutes(tmp_path, capsys):
    (tmp_path / "big.toml").write_text(EXAMPLE.read_text() + "\n# padding\n" * 80_000)
    assert main(["derive", str(tmp_path / "big.toml")]) == 2
    assert "expected a file of at most 200,000 bytes" in _err(capsys)


def test_a_sweep_over_13_chips_took_10_times_its_point_cap(capsys):
    from roofline.specs.catalog import hardware_names

    assert main(["sweep", "decode-floor", "t_step", "--over", "batch=1:1000000:1", "--over", "context=1024:10240:1024",
                 "--hardware", ",".join(hardware_names())]) == 2
    assert "at most 10,000,000 per command" in _err(capsys)


def test_deep_nesting_was_a_recursion_error(tmp_path, capsys):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["show", "model", str(tmp_path / "deep.json")]) == 2
    assert "nested more than 32 deep" in _err(capsys)


def test_build_deleted_a_plain_file_named_site(tmp_path, built, monkeypatch, capsys):
    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(built))
    out = tmp_path / "out"
    assert main(["build", "--out", str(out)]) == 0
    capsys.readouterr()
    import shutil

    shutil.rmtree(out / "site")
    (out / "site").write_text("my notes")
    assert main(["build", "--out", str(out)]) == 2
    assert "site: is a file where the build writes a folder" in _err(capsys)
    assert (out / "site").read_text() == "my notes"


def test_a_kill_between_the_two_renames_left_no_out(tmp_path, built, monkeypatch, capsys):
    """The swap is now one exchange: there is no moment with neither folder at out/."""
    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(built))
    out = tmp_path / "out"
    assert main(["build", "--out", str(out)]) == 0
    seen = []
    real = out_folder_mod.exchange
    monkeypatch.setattr(out_folder_mod, "exchange", lambda a, b: seen.append(b.is_dir()) or real(a, b))
    assert main(["build", "--out", str(out)]) == 0
    assert seen == [True] and out.is_dir()


def test_write_defaults_followed_a_symbolic_link(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    (tmp_path / "profiles").mkdir()
    os.symlink(victim, tmp_path / "profiles" / "fitted.toml")
    assert main(["calibrate", "--write-defaults", "--to", str(tmp_path / "profiles")]) == 0
    assert victim.read_text() == "not yours\n"


@pytest.mark.parametrize(("old", "new", "words"), [
    ('metric = "itl"', 'metric = "e2e_latency"\nttft = "3 s"', "cannot come after the whole request"),  # TTFT above the latency
    ('value = "7.5 ms"', 'value = "1e-300 s"', "from 1e-30 to 1e30 s"),  # a division by zero
])
def test_a_record_gave_a_negative_step_or_divided_by_zero(old, new, words, tmp_path):
    text = GOOD.replace(old, new)
    if "e2e" in new:
        text = text.replace('value = "7.5 ms"', 'value = "2 s"')
    (tmp_path / "r.toml").write_text(text)
    with pytest.raises(SpecError, match=re.escape(words)):
        load_measurement_file(tmp_path / "r.toml")


def test_the_latex_of_a_minimal_file_had_an_empty_itemize(tmp_path):
    (tmp_path / "m.toml").write_text('title = "M"\nquestion = "q"\nresults = ["t"]\n[[steps]]\nname = "t"\nformula = "P_active*b_w/beta"\nunit = "s"\nwhy = "w"\n')
    tex = api.render(api.derive(str(tmp_path / "m.toml")), "tex")
    assert not re.search(r"\\begin\{itemize\}\s*\\end\{itemize\}", tex)


def test_ctrl_c_printed_a_keyboard_interrupt_traceback(monkeypatch, capsys):
    monkeypatch.setattr(api, "derive", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["derive", "decode-floor"]) == 130
    assert capsys.readouterr().err == "roofline: error: interrupted\n"

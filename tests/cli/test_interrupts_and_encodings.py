"""Issue 22, polish: Ctrl-C is one line and exit 130; an encoding that cannot write the output is one line; a full disk under
`--plots` names the file and leaves nothing behind."""

from __future__ import annotations

import io
import os
import sys

import pytest
from roofline.specs import files as files_mod

from roofline import api
from roofline import cli as cli_mod
from roofline.cli import main


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


#: (id, what is interrupted, argv)
INTERRUPTS = [
    ("derive", "derive", ["derive", "decode-floor"]),
    ("sweep", "sweep_pieces", ["sweep", "decode-floor", "t_step", "--over", "batch=1,2"]),
    ("check", "check", ["check", "P_active*b_w/beta"]),
]


@pytest.mark.parametrize(("case", "target", "argv"), INTERRUPTS, ids=[c[0] for c in INTERRUPTS])
def test_ctrl_c_is_one_line_and_exit_130(case, target, argv, monkeypatch, capsys):
    if target == "check":
        monkeypatch.setattr(cli_mod, "_check", _interrupt)
    else:
        monkeypatch.setattr(api, target, _interrupt)
    assert main(argv) == cli_mod.EXIT_INTERRUPTED == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "roofline: error: interrupted\n"


@pytest.mark.parametrize("argv", [["derive", "decode-floor"], ["show", "hardware", "h100-sxm", "--format", "json"], ["list", "symbols"]])
def test_an_output_the_encoding_cannot_write_is_one_line_and_nothing_printed(argv, monkeypatch, capsys):
    """`PYTHONIOENCODING=ascii`: the sheet has a `·` and a `µ`; say so instead of a traceback, and print nothing."""
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    monkeypatch.setattr(sys, "stdout", ascii_out)
    code = main(argv)
    err = capsys.readouterr().err
    if code == 0:  # this output happens to be ASCII: then it is all there
        assert raw.getvalue()
        return
    assert code == 2 and raw.getvalue() == b""
    assert err.startswith("roofline: error: stdout's encoding (ascii) cannot write ") and "PYTHONIOENCODING=utf-8" in err
    assert len(err.splitlines()) == 1


def test_an_error_line_the_encoding_cannot_write_is_written_in_ascii(monkeypatch, tmp_path):
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True))
    assert main(["show", "hardware", str(tmp_path / "puce\u00b5.toml")]) == 2
    assert raw.getvalue().decode("ascii").startswith("roofline: error: ") and b"\\xb5" in raw.getvalue()


def test_a_full_disk_under_plots_names_the_file_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    calls = []

    def full(file, *args, **kwargs):  # specs.files writes every file the user names through its module's open
        calls.append(file)
        if len(calls) == 2:  # the PDF, after the SVG was written
            raise OSError(28, "No space left on device")
        return open(file, *args, **kwargs)

    monkeypatch.setattr(files_mod, "open", full, raising=False)
    assert main(["derive", "batch-knee", "--plots", "figs/deep"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("roofline: error: --plots figs/deep/") and "cannot write it (No space left on device)" in captured.err
    assert len(captured.err.splitlines()) == 1
    assert os.listdir(tmp_path) == [], "the folders and files of the failed run are removed"


def test_plots_already_there_keep_their_bytes_when_the_disk_fills(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["derive", "batch-knee", "--plots", "figs"]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in (tmp_path / "figs").iterdir()}
    (tmp_path / "figs" / "mine.txt").write_text("mine")
    monkeypatch.setattr(files_mod, "open", lambda *a, **k: (_ for _ in ()).throw(OSError(28, "No space left on device")), raising=False)
    assert main(["derive", "batch-knee", "--plots", "figs"]) == 2
    after = {p.name: p.read_bytes() for p in (tmp_path / "figs").iterdir() if p.name != "mine.txt"}
    assert after == before and (tmp_path / "figs" / "mine.txt").read_text() == "mine"

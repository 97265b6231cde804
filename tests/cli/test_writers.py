"""Issue 35, family 6: every writer of a path the user names (quiz --out, calibrate --to, derive --plots, SweepTable.to_csv,
build --out) goes through specs.files: a link where a file goes is replaced, never followed, and a set of files is written
whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from roofline.specs import files as files_mod
from roofline.specs.files import WriteError, replace_files, write_new

from roofline import api
from roofline.cli import main


def _quiz(folder: Path) -> list[str]:
    return ["quiz", "--count", "1", "--out", str(folder)]


def _calibrate(folder: Path) -> list[str]:
    return ["calibrate", "--write-defaults", "--to", str(folder)]


def _plots(folder: Path) -> list[str]:
    return ["derive", "batch-knee", "--plots", os.path.relpath(folder)]


# (id, argv for the folder, the file a link is planted at)
LINKED = [
    ("quiz-paper.md", _quiz, "paper.md"),
    ("quiz-key.tex", _quiz, "key.tex"),
    ("quiz-quiz.json", _quiz, "quiz.json"),
    ("calibrate-fitted.toml", _calibrate, "fitted.toml"),
    ("plots-svg", _plots, "batch-knee-throughput.svg"),
    ("plots-pdf", _plots, "batch-knee-throughput.pdf"),
]


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
@pytest.mark.parametrize(("case", "argv", "name"), LINKED, ids=[c[0] for c in LINKED])
def test_a_link_where_a_file_goes_is_replaced_not_followed(case, argv, name, dangling, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "dir"
    folder.mkdir()
    victim = tmp_path / "victim"
    if not dangling:
        victim.write_text("the victim's own bytes\n")
    os.symlink(victim, folder / name)
    assert main(argv(folder)) == 0, capsys.readouterr().err
    assert not (folder / name).is_symlink() and (folder / name).is_file() and (folder / name).stat().st_size > 0
    if dangling:
        assert not victim.exists(), "a dangling link's target is not created"
    else:
        assert victim.read_text() == "the victim's own bytes\n"
    assert not [p for p in folder.iterdir() if p.name.startswith(".")], "no temporary file is left"


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_sweep_table_to_csv_replaces_a_link(dangling, tmp_path):
    victim = tmp_path / "victim.csv"
    if not dangling:
        victim.write_text("mine\n")
    link = tmp_path / "t.csv"
    os.symlink(victim, link)
    text = api.sweep("decode-floor", "t_step", {"batch": [1, 2]}).to_csv(link)
    assert not link.is_symlink() and link.read_text() == text
    assert (not victim.exists()) if dangling else victim.read_text() == "mine\n"


def test_sweep_table_to_csv_into_a_missing_folder_is_one_error(tmp_path):
    with pytest.raises(WriteError, match=r"nowhere/t.csv: .*nowhere does not exist; nothing was changed"):
        api.sweep("decode-floor", "t_step", {"batch": [1, 2]}).to_csv(tmp_path / "nowhere" / "t.csv")
    assert list(tmp_path.iterdir()) == []


def test_quiz_out_fails_whole_one_line_and_changes_nothing(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "a" / "b"
    calls = []

    def third_fails(file, *args, **kwargs):
        calls.append(file)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return open(file, *args, **kwargs)

    monkeypatch.setattr(files_mod, "open", third_fails, raising=False)
    assert main(_quiz(folder)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert captured.err.startswith(f"roofline: error: --out {folder}/") and "cannot write it (No space left on device); nothing was changed" in captured.err
    assert list(tmp_path.iterdir()) == [], "the folders this run made are removed"


# what is at a path before a failed replace_files, and how to make it
BEFORE = [
    ("nothing", lambda p, v: None),
    ("a-file", lambda p, v: p.write_text("old\n")),
    ("a-link", lambda p, v: os.symlink(v, p)),
    ("a-dangling-link", lambda p, v: os.symlink(v.parent / "absent", p)),
]


def _state(path: Path) -> tuple[str, str] | None:
    if path.is_symlink():
        return ("link", os.readlink(path))
    return ("file", path.read_text()) if path.exists() else None


@pytest.mark.parametrize(("case", "make"), BEFORE, ids=[c[0] for c in BEFORE])
def test_a_failed_rename_puts_back_what_was_there(case, make, tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_text("victim\n")
    folder = tmp_path / "d"
    folder.mkdir()
    first, second = folder / "first", folder / "second"
    make(first, victim)
    before = _state(first)
    real, calls = os.replace, []

    def second_fails(a, b):
        calls.append(b)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        return real(a, b)

    monkeypatch.setattr(files_mod.os, "replace", second_fails)
    with pytest.raises(WriteError, match=r"second: cannot write it \(Input/output error\); nothing was changed"):
        replace_files({first: "new first\n", second: "new second\n"})
    assert _state(first) == before and not os.path.lexists(second)
    assert victim.read_text() == "victim\n" and sorted(p.name for p in folder.iterdir()) == (["first"] if before else [])


@pytest.mark.parametrize(("case", "make"), [c for c in BEFORE if c[0] != "nothing"], ids=[c[0] for c in BEFORE if c[0] != "nothing"])
def test_write_new_never_writes_over_or_through_anything(case, make, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("victim\n")
    path = tmp_path / "new"
    make(path, victim)
    before = _state(path)
    with pytest.raises(FileExistsError):
        write_new(path, "data")
    assert _state(path) == before and victim.read_text() == "victim\n" and not (tmp_path / "absent").exists()


def test_a_folder_where_a_file_goes_is_one_error(tmp_path):
    (tmp_path / "x.md").mkdir()
    with pytest.raises(WriteError, match=r"x.md: is a folder, expected a file; nothing was changed"):
        replace_files({tmp_path / "y.md": "y", tmp_path / "x.md": "x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.md"]

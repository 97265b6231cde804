"""Reliability (issue 9): bad output paths, bad spec paths, bad API arguments.

Every refusal is one line on stderr (`roofline: error: ...`) with exit code 2, or
one SpecError from the API, and writes nothing: the folders involved are
snapshotted byte for byte before and after. One real build is shared by the
whole module; the build tests reuse its files instead of rendering again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tomllib
from pathlib import Path

import pytest
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.specs import files as files_mod
from roofline.specs.catalog import MODELS_DIR, shown_path
from roofline.specs.errors import SpecError
from roofline.specs.hardware import FIELDS, load_hardware
from roofline.specs.model_families import SUPPORTED_TYPES
from roofline.specs.models import load_model

from roofline import api
from roofline import build as build_mod
from roofline import out_folder as out_folder_mod
from roofline import pdfs as pdfs_mod
from roofline.build_outputs import BuildError
from roofline.cli import main

ROOT = os.geteuid() == 0
README = Path(__file__).resolve().parents[2] / "README.md"
LONG_JSON = "a" * 300 + ".json"
LONG_TOML = "b" * 300 + ".toml"


def snapshot(root: Path) -> dict[str, object]:
    """Every path under root (hidden ones too): file bytes, link targets, 'dir', 'fifo'."""
    found: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                found[rel] = ("link", os.readlink(p))
            elif stat.S_ISFIFO(p.stat().st_mode):
                found[rel] = ("fifo",)  # never opened: a FIFO blocks its reader
            elif p.is_dir():
                found[rel] = ("dir", p.stat().st_mode & 0o777)
            else:
                found[rel] = p.read_bytes()
    return found


def one_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def layout(tmp: Path, files: dict[str, str]) -> None:
    """tmp/file (a regular file), tmp/out (a build from before manifests), tmp/out-readme (the same plus a user's README),
    tmp/out-dir (a folder where a sheet goes), tmp/out-sub (a build plus a user's subfolder)."""
    (tmp / "file").write_text("keep me\n")
    for name in ("out", "out-readme", "out-dir", "out-sub"):
        (tmp / name).mkdir()
        for fname, text in files.items():
            (tmp / name / fname).parent.mkdir(exist_ok=True)  # plots/ holds the plot files
            if isinstance(text, bytes):
                (tmp / name / fname).write_bytes(text)
            else:
                (tmp / name / fname).write_text(text, encoding="utf-8")
    (tmp / "out-readme" / "README.txt").write_text("mine\n")
    (tmp / "out-dir" / "flops-per-token.md").unlink()
    (tmp / "out-dir" / "flops-per-token.md").mkdir()
    (tmp / "out-dir" / "flops-per-token.md" / "notes.txt").write_text("mine\n")
    (tmp / "out-sub" / "figures").mkdir()
    (tmp / "out-sub" / "figures" / "plot.png").write_bytes(b"\x89PNG")


NOT_ROOT = pytest.mark.skipif(ROOT, reason="running as root: root writes into a 0o555 folder, so chmod cannot make one unwritable (the /proc cases cover an unwritable place)")

#: how every refusal to touch a file no build wrote ends
KEEP = "a build replaces --out as a whole and deletes only what a build wrote, so move it away or use another --out"
# (id, argv with {tmp}, exit code, first stderr line with {tmp}, {pid}, {shown} = shown_path(last argv item))
BUILD_CASES = [
    ("out-is-a-file", ["build", "--out", "{tmp}/file"], 2,
     "roofline: error: --out {tmp}/file: is a file, expected a folder (the build replaces the folder with fresh sheets)"),
    ("out-under-a-file", ["build", "--out", "{tmp}/file/sub"], 2,
     "roofline: error: --out {tmp}/file/sub: {tmp}/file is not a folder"),
    ("out-empty", ["build", "--out", ""], 2,
     "roofline: error: --out: expected a folder path, found an empty string"),
    ("check-out-empty", ["build", "--check", "--out", ""], 2,
     "roofline: error: --out: expected a folder path, found an empty string"),
    ("out-is-cwd", ["build", "--out", "."], 2,
     "roofline: error: --out .: is the current folder or holds it; a build replaces its --out folder as a whole, so name a subfolder such as out"),
    ("out-has-a-folder-where-a-sheet-goes", ["build", "--out", "{tmp}/out-dir"], 2,
     "roofline: error: {tmp}/out-dir/flops-per-token.md: is a folder where the build writes a file; " + KEEP),
    ("out-has-a-user-subfolder", ["build", "--out", "{tmp}/out-sub"], 2,
     "roofline: error: {tmp}/out-sub/figures: is a folder no build wrote; " + KEEP),
    ("out-has-a-users-readme", ["build", "--out", "{tmp}/out-readme"], 2,
     "roofline: error: {tmp}/out-readme/README.txt: is not a file a build writes; " + KEEP),
    ("out-long-name", ["build", "--out", "{tmp}/" + "x" * 300], 2,
     "roofline: error: --out {shown}: cannot use it as the output folder (File name too long)"),
    ("out-under-proc", ["build", "--out", "/proc/x"], 2,
     "roofline: error: --out /proc/x: cannot write the output folder (No such file or directory)" if ROOT
     else "roofline: error: --out /proc/x: cannot create it, /proc is not writable"),
    ("out-under-proc-self", ["build", "--out", "/proc/self/out"], 2,
     "roofline: error: --out /proc/self/out: cannot create it, /proc/{pid} is not writable"),
    ("out-unwritable-folder", ["build", "--out", "{tmp}/ro"], 2,
     "roofline: error: --out {tmp}/ro: folder is not writable"),
    ("out-in-unwritable-folder", ["build", "--out", "{tmp}/ro/out"], 2,
     "roofline: error: --out {tmp}/ro/out: cannot create it, {tmp}/ro is not writable"),
]
NEEDS_NON_ROOT = {"out-unwritable-folder", "out-in-unwritable-folder"}


@pytest.mark.parametrize(("case", "argv", "code", "expected"), [pytest.param(*c, id=c[0], marks=NOT_ROOT if c[0] in NEEDS_NON_ROOT else ()) for c in BUILD_CASES])
def test_build_refuses_bad_out(case, argv, code, expected, tmp_path, fast_build, monkeypatch, capsys):
    layout(tmp_path, fast_build)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    monkeypatch.chdir(tmp_path)
    argv = [a.format(tmp=tmp_path) for a in argv]
    before = snapshot(tmp_path)
    try:
        assert main(argv) == code
        out, err = capsys.readouterr()
        assert out == ""
        assert one_line(err) == expected.format(tmp=tmp_path, pid=os.getpid(), shown=shown_path(argv[-1]))
        assert snapshot(tmp_path) == before
    finally:
        ro.chmod(0o755)
    assert not Path("/proc/x").exists()


# (id, argv, exit code, first stderr line)
SPEC_CASES = [
    ("derive-long-model-path", ["derive", "decode-floor", "--model", LONG_JSON], 2,
     f"roofline: error: {shown_path(LONG_JSON)}: cannot read this model file: File name too long"),
    ("derive-long-hardware-path", ["derive", "decode-floor", "--hardware", LONG_TOML], 2,
     f"roofline: error: {shown_path(LONG_TOML)}: cannot read this hardware file: File name too long"),
    ("show-long-model-path", ["show", "model", LONG_JSON], 2,
     f"roofline: error: {shown_path(LONG_JSON)}: cannot read this model file: File name too long"),
    ("show-long-hardware-path", ["show", "hardware", LONG_TOML], 2,
     f"roofline: error: {shown_path(LONG_TOML)}: cannot read this hardware file: File name too long"),
    ("set-twice", ["derive", "decode-floor", "--set", "batch=8", "--set", "batch=16"], 2,
     "roofline: error: --set: batch: set twice ('batch=8' and 'batch=16'); give each input once"),
    ("empty-model", ["derive", "decode-floor", "--model", ""], 2,
     "roofline: error: model: expected a shipped name (`roofline list models`) or a path, found an empty string"),
    ("empty-hardware", ["derive", "decode-floor", "--hardware", ""], 2,
     "roofline: error: hardware: expected a shipped name (`roofline list hardware`) or a path, found an empty string"),
    ("show-empty-model", ["show", "model", ""], 2,
     "roofline: error: model: expected a shipped name (`roofline list models`) or a path, found an empty string"),
    ("show-empty-hardware", ["show", "hardware", ""], 2,
     "roofline: error: hardware: expected a shipped name (`roofline list hardware`) or a path, found an empty string"),
    ("empty-weights", ["derive", "decode-floor", "--weights", ""], 2,
     "roofline: error: --weights: expected a precision name such as 'bf16', found an empty string"),
]


@pytest.mark.parametrize(("case", "argv", "code", "expected"), SPEC_CASES, ids=[c[0] for c in SPEC_CASES])
def test_bad_spec_arguments_give_one_line(case, argv, code, expected, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == ""
    assert one_line(err) == expected
    assert len(expected) < 200
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def sheet():
    return api.derive("decode-floor")


# (id, call, message of the SpecError)
API_CASES = [
    ("derive-none", lambda s: api.derive(None),
     "question: expected a question slug such as 'decode-floor' (`roofline list questions`), found None"),
    ("override-not-a-string", lambda s: api.derive("decode-floor", overrides=[8]),
     "--set: expected a NAME=VALUE string, found int 8"),
    ("overrides-bare-string", lambda s: api.derive("decode-floor", overrides="batch=8"),
     "overrides: expected a list of NAME=VALUE strings, found one string 'batch=8'; wrap it in a list: ['batch=8']"),
    ("overrides-a-number", lambda s: api.derive("decode-floor", overrides=8),
     "overrides: expected a list of NAME=VALUE strings, found int 8"),
    ("override-twice", lambda s: api.derive("decode-floor", overrides=["batch=8", "batch = 16"]),
     "--set: batch: set twice ('batch=8' and 'batch = 16'); give each input once"),
    ("render-format-none", lambda s: api.render(s, None),
     "--format: expected one of md, tex, json, found None"),
    ("render-not-a-sheet", lambda s: api.render("decode-floor", "md"),
     "sheet: expected a Sheet from api.derive, found str"),
    ("model-a-list", lambda s: api.derive("decode-floor", model=["llama-3.1-8b"]),
     "model: expected a shipped name or a path (str or pathlib.Path), found list ['llama-3.1-8b']"),
    ("hardware-a-list", lambda s: api.derive("decode-floor", hardware=["h100-sxm"]),
     "hardware: expected a shipped name or a path (str or pathlib.Path), found list ['h100-sxm']"),
    ("hardware-empty", lambda s: api.derive("decode-floor", hardware=""),
     "hardware: expected a shipped name (`roofline list hardware`) or a path, found an empty string"),
    ("api-hardware-int", lambda s: api.hardware(3),
     "hardware: expected a shipped name or a path (str or pathlib.Path), found int 3"),
    ("api-model-bytes", lambda s: api.model(b"llama-3.1-8b"),
     "model: expected a shipped name or a path (str or pathlib.Path), found bytes b'llama-3.1-8b'"),
    ("api-model-none", lambda s: api.model(None),
     "model: expected a shipped name or a path (str or pathlib.Path), found None"),
    ("api-model-dict", lambda s: api.model({}),
     "model: expected a shipped name or a path (str or pathlib.Path), found dict {}"),
    ("weights-a-number", lambda s: api.derive("decode-floor", weights=8),
     "--weights: expected a precision name such as 'bf16', found 8"),
]


@pytest.mark.parametrize(("case", "call", "message"), API_CASES, ids=[c[0] for c in API_CASES])
def test_api_raises_one_error_type(case, call, message, sheet):
    with pytest.raises(SpecError) as info:
        call(sheet)
    assert str(info.value) == message


def test_api_still_takes_paths_and_none(sheet):
    shipped = Path(load_hardware("h100-sxm").path)
    assert api.hardware(shipped).name == api.hardware("h100-sxm").name
    assert api.derive("decode-floor", overrides=None).derivation.slug == "decode-floor"


# --- the atomic swap -----------------------------------------------------------------


def _with_manifest(tmp: Path, files: dict[str, str | bytes]) -> Path:
    """tmp/out as a build writes it (manifest included)."""
    out = tmp / "out"
    assert main(["build", "--out", str(out)]) == 0
    assert (out / out_folder_mod.MANIFEST).is_file()
    return out


def _fifo(out: Path) -> None:
    os.mkfifo(out / "pipe")


NOT_LISTED = "is not in the manifest (.roofline-manifest.json) of the build that wrote this folder"
#: (id, what is put into a previous build's out/, the path the refusal names, why)
FOREIGN = [
    ("a-users-readme", lambda o: (o / "README.txt").write_text("mine\n"), "README.txt", NOT_LISTED),
    ("a-gitignore", lambda o: (o / ".gitignore").write_text("*.pdf\n"), ".gitignore", NOT_LISTED),
    ("a-symbolic-link", lambda o: os.symlink("decode-floor.md", o / "link.md"), "link.md", "is a symbolic link, which no build writes"),
    ("a-fifo", _fifo, "pipe", "is not a regular file (a FIFO, socket or device), which no build writes"),
    ("a-plain-file-named-site", lambda o: (shutil.rmtree(o / "site"), (o / "site").write_text("mine")), "site", "is a file where the build writes a folder"),
    ("a-plain-file-named-plots", lambda o: (shutil.rmtree(o / "plots"), (o / "plots").write_text("mine")), "plots", "is a file where the build writes a folder"),
    ("a-users-folder", lambda o: (o / "figures").mkdir(), "figures", "is a folder no build wrote"),
    ("a-stray-file-in-plots", lambda o: (o / "plots" / "mine.png").write_bytes(b"\x89PNG"), "plots/mine.png", NOT_LISTED),
    ("a-sheet-name-no-build-wrote", lambda o: (o / "old-question.md").write_text("mine"), "old-question.md", NOT_LISTED),
]


@pytest.mark.parametrize(("case", "put", "name", "why"), FOREIGN, ids=[c[0] for c in FOREIGN])
def test_build_never_deletes_a_file_it_did_not_write(case, put, name, why, tmp_path, fast_build, capsys):
    out = _with_manifest(tmp_path, fast_build)
    capsys.readouterr()
    put(out)
    before = snapshot(tmp_path)
    assert main(["build", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert one_line(captured.err) == f"roofline: error: {out / name}: {why}; {KEEP}"
    assert snapshot(tmp_path) == before


def test_a_build_replaces_a_previous_builds_files_and_drops_its_stale_pdfs(tmp_path, fast_build, monkeypatch, capsys):
    # these stand-in PDFs must not reach the real cache: they did, under the real PDFs' keys, and a later `build --pdf`
    # (tests/cli/test_build.py::test_build_pdf, on the same machine) wrote 20-byte PDFs taken from it
    monkeypatch.setenv("ROOFLINE_CACHE", "off")
    monkeypatch.setattr(pdfs_mod, "compile_pdf", lambda tex, name, graphics=None: b"%PDF-1.5 " + name.encode())
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--pdf"]) == 0
    assert list(out.glob("*.pdf"))
    (out / "decode-floor.md").write_text("an older sheet")
    assert main(["build", "--out", str(out)]) == 0
    after = snapshot(out)
    manifest = json.loads(after.pop(out_folder_mod.MANIFEST))
    assert manifest["files"] == sorted(fast_build)
    # plots/, site/ and the folders inside them (site/api/): their files are compared
    folders = {str(parent) for n in fast_build for parent in Path(n).parents if str(parent) != "."}
    assert {k: v for k, v in after.items() if k not in folders} == {n: t if isinstance(t, bytes) else t.encode() for n, t in fast_build.items()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no hidden folder left beside it


def test_a_folder_built_before_manifests_is_a_builds_when_every_name_is(tmp_path, fast_build, capsys):
    layout(tmp_path, fast_build)
    assert not (tmp_path / "out" / out_folder_mod.MANIFEST).exists()
    assert main(["build", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / out_folder_mod.MANIFEST).is_file()


def test_the_swap_is_one_exchange_of_the_two_folders(tmp_path, fast_build, monkeypatch, capsys):
    """Where the system has it (Linux's renameat2), the old and the new folder trade places in one call: never no out/."""
    out = _with_manifest(tmp_path, fast_build)
    calls = []
    real = out_folder_mod.exchange

    def spy(a, b):
        calls.append((a.name, b.name, b.exists()))
        done = real(a, b)
        assert done, "renameat2(RENAME_EXCHANGE) works on this file system"
        return done

    monkeypatch.setattr(out_folder_mod, "exchange", spy)
    monkeypatch.setattr(out_folder_mod.os, "rename", lambda *a: pytest.fail("a two-rename swap where the exchange works"))
    assert main(["build", "--out", str(out)]) == 0
    assert len(calls) == 1 and calls[0][1] == "out" and calls[0][2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_two_rename_swap_interrupted_between_its_renames_is_recovered(tmp_path, fast_build, monkeypatch, capsys):
    """Without the exchange (another OS, another file system) the swap is two renames. A kill between them leaves the old
    folder at its hidden name and no out/: the next build puts it back before anything else, so nothing is lost."""
    out = _with_manifest(tmp_path, fast_build)
    (out / "decode-floor.md").write_text("the old sheet")
    old = snapshot(out)
    os.rename(out, tmp_path / ".out.roofline-old-0123abcd")  # the state a kill between the two renames leaves
    (tmp_path / ".out.roofline-new-4567cdef").mkdir()
    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: pytest.fail("the old folder must be back before rendering"))
    with pytest.warns(out_folder_mod.BuildWarning, match="put back the old folder"), pytest.raises(pytest.fail.Exception):
        build_mod.build(out)
    assert snapshot(out) == old
    monkeypatch.setattr(build_mod, "render_all", lambda *args, **kwargs: dict(fast_build))
    monkeypatch.setattr(out_folder_mod, "exchange", lambda a, b: False)  # the fallback swap, to its end this time
    assert main(["build", "--out", str(out)]) == 0
    assert (out / "decode-floor.md").read_text(encoding="utf-8") == fast_build["decode-floor.md"]


def test_a_file_added_while_the_build_runs_is_kept(tmp_path, fast_build, monkeypatch, capsys):
    out = _with_manifest(tmp_path, fast_build)

    real = out_folder_mod.manifest_text

    def write_and_meanwhile_add(files):  # runs while the new folder is written: after every check, before the swap
        (out / "notes.txt").write_text("written while the build ran")
        return real(files)

    monkeypatch.setattr(out_folder_mod, "manifest_text", write_and_meanwhile_add)
    with pytest.warns(out_folder_mod.BuildWarning, match="notes.txt is not in the manifest"):
        build_mod.build(out)
    kept = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert len(kept) == 1 and (kept[0] / "notes.txt").read_text() == "written while the build ran"


def test_build_creates_missing_parents(tmp_path, fast_build, capsys):
    out = tmp_path / "a" / "b" / "out"
    assert main(["build", "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {n.split("/")[0] for n in fast_build} | {out_folder_mod.MANIFEST}


def _fail_swap(monkeypatch):
    def exchange(a, b):
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(out_folder_mod, "exchange", exchange)


def _fail_fifth_write(monkeypatch):
    calls = []

    def fake_open(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 5:
            raise OSError(28, "No space left on device")
        return open(path, *args, **kwargs)

    monkeypatch.setattr(files_mod, "open", fake_open, raising=False)  # build writes each file through specs.files.write_new


def _fail_pdf(monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE", "off")  # no compiled PDF from an earlier build: this one must compile, and fail

    def compile_pdf(tex, name, graphics=None):
        raise BuildError(f"{name}.tex: pdflatex failed: ! Undefined control sequence.")

    monkeypatch.setattr(pdfs_mod, "compile_pdf", compile_pdf)


# (id, how it fails, argv tail, first stderr line with {out})
FAILURE_CASES = [
    ("swap-rename-fails", _fail_swap, [],
     "roofline: error: --out {out}: cannot write the output folder (Device or resource busy); the old folder is unchanged"),
    ("disk-full-mid-write", _fail_fifth_write, [],
     "roofline: error: --out {out}: cannot write the output folder (No space left on device); the old folder is unchanged"),
    ("pdf-fails", _fail_pdf, ["--pdf"],
     "roofline: error: decode-floor.tex: pdflatex failed: ! Undefined control sequence."),
]


@pytest.mark.parametrize(("case", "fail", "extra", "expected"), FAILURE_CASES, ids=[c[0] for c in FAILURE_CASES])
def test_failed_build_leaves_old_out_byte_identical(case, fail, extra, expected, tmp_path, fast_build, monkeypatch, capsys):
    layout(tmp_path, fast_build)
    out = tmp_path / "out"
    (out / "decode-floor.md").write_text("an older sheet")
    before = snapshot(tmp_path)
    fail(monkeypatch)
    assert main(["build", "--out", str(out), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert one_line(captured.err) == expected.format(out=out)
    assert snapshot(tmp_path) == before


def test_failed_build_removes_the_parents_it_made(tmp_path, fast_build, monkeypatch, capsys):
    _fail_fifth_write(monkeypatch)
    assert main(["build", "--out", str(tmp_path / "a" / "b" / "out")]) == 2
    assert one_line(capsys.readouterr().err).endswith("cannot write the output folder (No space left on device)")
    assert list(tmp_path.iterdir()) == []


def test_pdfs_go_in_the_same_swap(tmp_path, fast_build, monkeypatch, capsys):
    monkeypatch.setenv("ROOFLINE_CACHE", "off")  # these stand-in PDFs must not reach the real cache
    monkeypatch.setattr(pdfs_mod, "compile_pdf", lambda tex, name, graphics=None: b"%PDF-1.5 " + name.encode())
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--pdf"]) == 0
    pdfs = {p.name: p.read_bytes() for p in out.glob("*.pdf")}
    assert pdfs == {f"{d.slug}.pdf": b"%PDF-1.5 " + d.slug.encode() for d in DERIVATIONS} | {"book.pdf": b"%PDF-1.5 book"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- spec files -----------------------------------------------------------------------


def test_config_json_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + (MODELS_DIR / "llama-3.1-8b.json").read_bytes())
    assert load_model(str(path)).param_counts() == load_model("llama-3.1-8b").param_counts()


def test_hardware_toml_with_a_byte_order_mark_loads(tmp_path):
    shipped = load_hardware("h100-sxm")
    path = tmp_path / "h100.toml"
    path.write_bytes(b"\xef\xbb\xbf" + shipped.path.read_bytes())
    assert load_hardware(str(path)).peak_dense == shipped.peak_dense


# --- README: the hardware schema matches the code ------------------------------------------


def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Your own hardware and models")
    return text[start:text.index("\n## ", start + 1)]


def test_readme_documents_every_hardware_field_and_whether_it_is_required():
    rows = {}
    for line in _readme_section().splitlines():
        m = re.match(r"^\| `\[?(\w+)\]?` \| ([^|]+) \| ([^|]+) \|", line)
        if m:
            rows[m.group(1)] = m.group(3).strip().startswith("yes")
    for field, (_, required) in FIELDS.items():
        assert field in rows, f"README does not document {field}"
        assert rows[field] == required, f"README says {field} is {'' if rows[field] else 'not '}required"


def test_readme_example_toml_loads_and_model_types_match(tmp_path):
    section = _readme_section()
    example = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    path = tmp_path / "my-gpu.toml"
    path.write_text(example)
    assert tomllib.loads(example)["name"] == "My GPU"
    hw = load_hardware(str(path))
    assert api.derive("decode-floor", hardware=str(path)).context.hardware.name == hw.name
    for model_type in SUPPORTED_TYPES:
        assert f"`{model_type}`" in section


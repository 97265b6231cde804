"""TeX's caret notation never reaches a .tex (issue 35, family 2).

`^^5c` is TeX's spelling of a backslash (`^^M` a carriage return, `^^^^005c` a backslash again in XeTeX/LuaTeX): math
holding it would let a derivation file run `\\input` or `\\openout` when the .tex is compiled. Math with two carets in a
row is refused at load, in every field a file writes math in, with one line naming the file; text fields escape every
caret; and every value a LaTeX template writes passes one guard (`renderers.escape.latex_math`), so no caret pair reaches
a .tex whatever its source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from roofline.derivations.engine import prose
from roofline.renderers import escape
from roofline.renderers.targets import LATEX
from roofline.renderers.templates import LATEX_ENV

from roofline.cli import main

#: Math that spells a command, or a character TeX cannot compile, with caret notation.
CARET_MATH = ("x^^5cinput{secret}", "^^^^005c", "x^^00", "a^^M", "b^^J^^5cimmediate^^5cwrite", "y^{2}^^5copenout")

BASE = '''slug = "tiny"
title = {title}
question = {question}
results = ["t_x"]
assumptions = [{assumption}]

[[inputs]]
name = "share"
unit = "1"
default = "0.5"
domain = "fraction"
meaning = "a share"
{input_latex}

[[steps]]
name = "t_x"
formula = "share / beta"
unit = "s/B"
why = {why}
{step_latex}

[[tables]]
title = {table_title}
columns = ["t_x"]
rows = [{{ label = {label}, set = {{ share = "0.25" }} }}]
'''

PLAIN = {"title": "'Tiny'", "question": "'How long?'", "assumption": "'One GPU.'", "input_latex": "", "why": "'Because.'",
         "step_latex": "", "table_title": "'Shares'", "label": "'a quarter'"}

#: Where a derivation file writes math: its prose (several fields), a symbol's `latex`, and math after `\sym{...}`.
MATH_FIELDS = {
    "why": lambda m: {"why": f"'Streams $ {m} $ bytes.'"},
    "question": lambda m: {"question": f"'How long is $ {m} $?'"},
    "assumptions": lambda m: {"assumption": f"'Holds for $ {m} $.'"},
    "step latex": lambda m: {"step_latex": f"latex = '{m}'"},
    "input latex": lambda m: {"input_latex": f"latex = '{m}'"},
    "after sym": lambda m: {"why": "'See $\\sym{t_x}" + m.lstrip("xaby") + "$.'"},
}


def _file(tmp_path: Path, **fields: str) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(BASE.format(**{**PLAIN, **fields}), encoding="utf-8")
    return p


def _derive(path: Path, capsys, fmt: str = "tex") -> tuple[int, str, str]:
    rc = main(["derive", str(path), "--format", fmt])
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_plain_file_renders(tmp_path, capsys) -> None:
    rc, out, err = _derive(_file(tmp_path), capsys)
    assert rc == 0 and r"\begin{document}" in out, err


@pytest.mark.parametrize("field", list(MATH_FIELDS))
@pytest.mark.parametrize("math", CARET_MATH)
def test_caret_notation_in_math_is_refused_in_one_line(tmp_path, capsys, field: str, math: str) -> None:
    path = _file(tmp_path, **MATH_FIELDS[field](math))
    rc, out, err = _derive(path, capsys)
    assert rc == 2 and out == "", (field, math, out[:200])
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "^^, TeX's notation for a character by its code" in err


@pytest.mark.parametrize("field", ["title", "table_title", "label", "assumption"])
@pytest.mark.parametrize("text", ["x^^5cinput secret", "^^^^005c", "a^^M^^J", "~^^5c_#&%", "^^5cimmediate^^5cwrite18"])
def test_caret_notation_in_text_is_escaped(tmp_path, capsys, field: str, text: str) -> None:
    rc, out, err = _derive(_file(tmp_path, **{field: repr(text)}), capsys)
    assert rc == 0, err
    assert "^^" not in out
    assert out.count(r"\textasciicircum{}") >= text.count("^")


@pytest.mark.parametrize("math", CARET_MATH)
def test_every_math_span_of_a_tex_passes_the_caret_guard(math: str) -> None:
    """The output side: whatever math reaches the LaTeX target or a LaTeX template (a cache entry, a future field), no two
    carets in a row come out."""
    for written in (LATEX.inline_math(math), LATEX.math(math), escape.latex_math(math),
                    LATEX_ENV.from_string(r"a \VAR{x} b \VAR{y}").render(x=math, y=[math])):
        assert not re.search(r"\^\^", written), written
    assert escape.latex_math("x^{2} y_{k}^{3}") == "x^{2} y_{k}^{3}"  # single carets are math, untouched


@pytest.mark.parametrize("math", [*CARET_MATH, r"\frac{a}{b}^{2}", r"\beta_{\mathrm{PCIe}}", r"x\,y\cdot z"])
def test_a_files_latex_is_rebuilt_from_its_tokens(math: str) -> None:
    rebuilt = prose.rebuild(math)
    assert "^^" not in rebuilt
    if "^^" not in math:
        assert rebuilt == math  # the same TeX for any math the whitelist accepts


def test_the_readme_compile_command_keeps_files_out_of_reach() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if "pdflatex" in line and "openin_any=p" in line and "mktemp -d" in line]
    assert commands and all("openout_any=p" in c and "-no-shell-escape" in c for c in commands)

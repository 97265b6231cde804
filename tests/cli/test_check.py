"""`roofline check`, the Python API behind it, `roofline derive FILE.toml` and LaTeX fragments."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from roofline.derivations.engine import formula as fm

import roofline
from roofline import api, userfile
from roofline.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "kv-offload.toml"
README = ROOT / "README.md"
ISSUE_EXAMPLE = ["P_active*b_w/beta + B*T*e_kv*b_kv/beta", "--expect", "ms", "--hardware", "h100-sxm", "--model", "llama-3.1-70b",
                 "--set", "batch=8", "--set", "context=4096"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- the Python API -----------------------------------------------------------------------------------------------

def test_check_returns_the_inferred_unit():
    assert str(roofline.check("P_active*b_w/beta", expect="ms")) == "second"
    assert str(roofline.check("kappa*P_active*B*q/pi")) == "second"
    assert roofline.check("b_w*pi/(beta*kappa*q)").dimensionless


def test_glossary_and_declared_symbols():
    names = {i.name: i for i in roofline.glossary()}
    assert names["beta"].unit_text == "B/s" and names["P_active"].latex == r"P_{\mathrm{act}}"
    table = roofline.symbols(beta_pcie="B/s")
    roofline.declare(table, "f_off", "1", latex=r"\phi")
    assert str(roofline.check("f_off*B*T*e_kv*b_kv/beta_pcie", symbols=table)) == "second"
    assert roofline.latex("f_off*beta_pcie", symbols=table) in (r"\beta_{\mathrm{pcie}} \cdot \phi", r"\phi \cdot \beta_{\mathrm{pcie}}")
    with pytest.raises(fm.UnknownNameError):
        roofline.check("f_off*beta_pcie")  # declared in that table only


def test_latex_uses_the_glossary_names():
    assert roofline.latex("P_active*b_w/beta") == r"\frac{P_{\mathrm{act}} \cdot b_{w}}{\beta}"


def test_solve_is_unit_checked_and_verified():
    sol = roofline.solve("P_active*b_w/beta", "kappa*P_active*B*q/pi", for_="B")
    assert sol.verified == "symbolic"
    assert roofline.latex(sol) == r"\frac{b_{w} \cdot \pi}{\beta \cdot \kappa \cdot q}"
    with pytest.raises(fm.FormulaUnitError):
        roofline.solve("P_active*b_w/beta", "T", for_="T")


def test_evaluate_equals_the_decode_floor_sheet():
    """The same quantity through `evaluate` and through the shipped sheet: the floor and the KV bytes of one step."""
    sheet = api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-70b", overrides=["batch=8", "context=4096 token"])
    floor = roofline.evaluate("P_active*b_w/beta", hardware="h100-sxm", model="llama-3.1-70b")
    assert float(floor.to("s").magnitude) == pytest.approx(sheet.results["t_floor"].float, rel=1e-12)
    kv = roofline.evaluate("B*T*e_kv*b_kv", hardware="h100-sxm", model="llama-3.1-70b", batch=8, context="4096")
    kv_step = next(s for s in sheet.steps if s.step.name == "kv_bytes_step").value
    assert float(kv.to("B").magnitude) == pytest.approx(kv_step.float, rel=1e-12)


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_check_takes_an_engine_profile_as_derive_does(capsys, engine):
    """The audit defect of issue 40: `check` had no --engine. The engine inputs take the named profile's values, as the sheet's
    own step does, and the grader compares with the sheet under the same profile."""
    formula = "P_active*b_w/(eta_bw*beta) + L*t_layer + t_fixed"
    code, out, _ = run(capsys, "check", formula, "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--engine", engine, "--format", "json")
    assert code == 0
    symbols = json.loads(out)["symbols"]
    sheet = api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-8b", engine=engine)
    profile = sheet.context.engine.values
    for name in ("eta_bw", "t_layer", "t_fixed"):
        assert f"engine profile {engine}" in symbols[name]["from"]
        assert roofline.evaluate(name, engine=engine) == roofline.evaluate(name, **{name: profile[name]})  # the Python API too
    assert symbols["eta_bw"]["value"] == pytest.approx(float(profile["eta_bw"]))
    code, out, _ = run(capsys, "check", f"{sheet.results['t_step'].float * 1000!r} ms", "--against", "decode-floor:t_step",
                       "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--engine", engine)
    assert code == 0 and out.startswith("within"), out


def test_evaluate_in_other_units_gives_the_same_time():
    a = roofline.evaluate("P_active*b_w/beta", hardware="h100-sxm", model="llama-3.1-8b", expect="ms")
    b = roofline.evaluate("P_active*b_w/beta", hardware="h100-sxm", model="llama-3.1-8b", beta="3350 GB/s")
    assert str(a.units) == "millisecond" and a.to("s").magnitude == b.to("s").magnitude


def test_evaluate_names_what_is_missing():
    with pytest.raises(roofline.RooflineError, match="give --hardware"):
        roofline.evaluate("P_active*b_w/beta", model="llama-3.1-8b")
    with pytest.raises(roofline.RooflineError, match="give --set beta_pcie=VALUE"):
        roofline.evaluate("T*b_kv/beta_pcie", symbols={"beta_pcie": "B/s"}, context="10")


# --- the CLI ------------------------------------------------------------------------------------------------------------

def test_the_issue_example_prints_formula_unit_and_value(capsys):
    code, out, err = run(capsys, "check", *ISSUE_EXAMPLE)
    assert code == 0 and err == ""
    assert re.search(r"^unit\s+s \(checked against ms", out, re.M)
    value = float(re.search(r"^value\s+([\d.,]+) ms", out, re.M).group(1))
    t = roofline.evaluate("P_active*b_w/beta + B*T*e_kv*b_kv/beta", hardware="h100-sxm", model="llama-3.1-70b", batch=8, context=4096)
    assert value == pytest.approx(float(t.to("ms").magnitude), rel=1e-3)
    assert r"\frac{P_{\mathrm{act}} \cdot b_{w}}{\beta}" in out


@pytest.mark.parametrize("fmt", ["md", "tex", "json"])
def test_the_issue_example_in_every_format(capsys, fmt):
    code, out, _ = run(capsys, "check", *ISSUE_EXAMPLE, "--format", fmt)
    assert code == 0
    if fmt == "json":
        data = json.loads(out)
        assert data["unit"] == "s" and data["expect"] == "ms" and data["value"]["unit"] == "ms"
        assert data["symbols"]["B"] == {"value": 8.0, "unit": "1", "from": "set (batch)"}
    elif fmt == "md":
        assert out.startswith("$$\n\\begin{aligned}") and r"44.7\,\mathrm{ms}" in out
    else:
        assert out.startswith(r"\documentclass") and r"\qty{44.7}{\milli\second}" in out


def test_check_solve_for(capsys):
    code, out, _ = run(capsys, "check", "P_active*b_w/beta", "--solve-for", "B", "--equals", "kappa*P_active*B*q/pi",
                       "--hardware", "h100-sxm", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["solve"] == {"for": "B", "equals": "kappa*P_active*B*q/pi", "verified": "symbolic"}
    assert data["value"]["value"] == pytest.approx(989.4e12 * 2 / (3.35e12 * 2), rel=1e-9)  # pi*b_w/(beta*kappa*q), H100 datasheet


REFUSED_ON_THE_CLI = [
    (["P_act*b_w/beta"], "unknown name 'P_act' (did you mean P_active"),
    (["P_active*b_w/beta + B*T"], "unit mismatch"),
    (["__import__('os').system('touch /tmp/roofline-pwned')"], "attribute access"),
    (["x[0]"], "subscripts"),
    (["lambda: 1"], "lambda"),
    (["T**1000"], "exponent 1000 too large"),
    (["T+" * 1100 + "T"], "formula too large"),
    (["P_active*b_w/beta", "--expect", "token"], "expected a result in token"),
    (["P_active*b_w/beta", "--expect", "parsecs per furlong"], "is not one of roofline's units"),
    (["T", "--symbol", "beta=B/s"], "already a glossary symbol"),
    (["T", "--symbol", "x"], "expected NAME=UNIT"),
    (["T", "--solve-for", "T"], "go together"),
    (["T", "--set", "context=4096", "--set", "context=1"], "given twice"),
    (["T", "--set", "contxt=4096"], "did you mean context"),
    (["P_active*b_w/beta", "--model", "llama-3.1-8b"], "give --hardware"),
    (["T", "--format", "md", "--fragment"], "LaTeX only"),
    (["L*t_layer", "--model", "llama-3.1-8b", "--engine", "vlm"], "unknown engine profile 'vlm'"),
]


@pytest.mark.parametrize(("argv", "message"), REFUSED_ON_THE_CLI)
def test_refused_input_is_one_clean_error(capsys, argv, message):
    code, out, err = run(capsys, "check", *argv)
    assert code == 2 and out == ""
    first = err.splitlines()[0]
    assert first.startswith("roofline: error: ") and message in first
    assert len(err.splitlines()) in (1, 3) and "Traceback" not in err
    assert not Path("/tmp/roofline-pwned").exists()


def test_list_symbols(capsys):
    code, out, _ = run(capsys, "list", "symbols")
    assert code == 0 and re.search(r"^P_active\s+parameter\s", out, re.M)


# --- your own derivation file ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["md", "tex", "json"])
def test_the_example_file_renders_like_a_sheet(capsys, fmt):
    code, out, err = run(capsys, "derive", str(EXAMPLE), "--format", fmt)
    assert code == 0 and err == ""
    if fmt == "json":
        data = json.loads(out)
        assert data["slug"] == "kv-offload"
        assert set(data["results"]) == {"t_step", "T_equal", "f_equal", "memory_fraction"}
    elif fmt == "md":
        assert out.startswith("# Offloading the KV cache to host memory") and "(checked symbolically and numerically)" in out
        assert "## Answer" in out and "## The argument" in out and "## Appendix" in out
    else:
        assert out.startswith(r"\documentclass") and out.rstrip().endswith(r"\end{document}")


def test_the_example_file_crossover_meets_its_equation():
    """At T_equal the PCIe and HBM read times agree: the file's closed form, evaluated per spec, solves its own equation."""
    d = userfile.load(EXAMPLE)
    sheet = api.derive(str(EXAMPLE))
    t_equal = sheet.results["T_equal"].float
    again = api.derive(str(EXAMPLE), overrides=[f"context={round(t_equal)}"])
    steps = {s.step.name: s.value.float for s in again.steps}
    assert steps["t_pcie"] == pytest.approx(steps["t_hbm"], rel=5e-3)
    assert d.step("T_equal").verified == "symbolic"


def test_the_example_file_takes_sets_and_specs(capsys):
    code, out, _ = run(capsys, "derive", str(EXAMPLE), "--hardware", "b200", "--set", "offload_fraction=0.02", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["context"]["hardware"] == "b200"
    # on a B200 at 2% offloaded, PCIe still sets the step: 0.02 * B*T*e_kv*b_kv / 64 GB/s (Llama 3.1 8B: e_kv = 2*32*8*128)
    assert data["results"]["t_step"]["si_value"] == pytest.approx(0.02 * 8 * 32768 * (2 * 32 * 8 * 128) * 2 / 64e9, rel=1e-12)


BAD_FILES = [
    ("missing-title", lambda s: s.replace('title = "Offloading the KV cache to host memory"\n', ""), "title: missing (required)"),
    ("wrong-unit", lambda s: s.replace('formula = "P_active*b_w"\nunit = "B"', 'formula = "P_active*b_w"\nunit = "s"'),
     "steps[2].formula: the formula is in B but the step declares s"),
    ("scaled-unit", lambda s: s.replace('unit = "s"\ndisplay = "ms"\nlatex = \'t_{\\mathrm{HBM}}\'', 'unit = "ms"\nlatex = \'t_{\\mathrm{HBM}}\''),
     "declare unit = \"s\" and show it in ms"),
    ("unknown-name", lambda s: s.replace('formula = "e_kv*b_kv"', 'formula = "e_kv*b_kvv"'), "unknown name 'b_kvv' (did you mean b_kv"),
    ("refused-syntax", lambda s: s.replace('formula = "e_kv*b_kv"', 'formula = "__import__(\'os\').getcwd()"'), "attribute access"),
    ("unknown-field", lambda s: s.replace('name = "kv_bytes_per_token"', 'name = "kv_bytes_per_token"\nformla = "x"'), "steps[0].formla: unknown field"),
    ("bad-input-default", lambda s: s.replace('default = "64 GB/s"', 'default = "64 GB"'), "inputs[1].default: expected units convertible to B/s"),
    ("hostile-latex", lambda s: s.replace("latex = 's_{\\mathrm{kv}}'", "latex = '\\input{/etc/passwd}'"), "steps[0].latex"),
    ("hostile-prose", lambda s: s.replace('why = "Each cached token holds K and V of every layer."',
                                          'why = "$\\\\write18{rm -rf /}$ gone"'), "prose math does not allow"),
    ("control-chars", lambda s: s.replace('title = "Offloading', 'title = "\\u001b[31mOffloading'), "title: holds U+001B (ESCAPE) at character 1, a control character"),
    ("bad-solve", lambda s: s.replace('solve = "t_pcie = t_hbm"\nfor = "T"', 'solve = "t_pcie = t_nope"\nfor = "T"'), "'t_nope' is not an earlier step"),
    ("bad-result", lambda s: s.replace('results = ["t_step"', 'results = ["t_stepp"'), "results[0]: 't_stepp' is not a step"),
    ("bad-hardware", lambda s: s.replace('hardware = ["h100-sxm", "h200"]', 'hardware = ["h100-sxn"]'), "did you mean h100-sxm"),
    ("not-toml", lambda s: s + "\n[[[", "not valid TOML"),
    ("misplaced-key", lambda s: s.replace('results = ["t_step", "T_equal", "f_equal", "memory_fraction"]\n', "")
     + '\nresults = ["t_step"]\n', "belongs to that"),
    ("hostile-claim", lambda s: s.replace('right = "t_hbm"', 'right = "9**9**9**9 ms"'), "claims[0].right: expected a step name or a number and a unit"),
    ("bad-row-input", lambda s: s.replace('{ set = { offload_fraction = "0.01" } }', '{ set = { offload_fractoin = "0.01" } }'),
     "tables[0].rows[0].set.offload_fractoin: not an input of this sheet (did you mean offload_fraction"),
    ("bad-row-value", lambda s: s.replace('{ set = { offload_fraction = "0.01" } }', '{ set = { offload_fraction = "2" } }'), "expected a fraction in (0, 1]"),
    ("bad-display", lambda s: s.replace('display = "kB/token"', 'display = "kB"'), "steps[0].display: expected a unit convertible to B/token"),
    ("duplicate-step", lambda s: s.replace('name = "kv_bytes_step"', 'name = "kv_bytes_per_token"'), "is already an earlier step"),
    ("glossary-shadow", lambda s: s.replace('symbol = "beta_pcie"', 'symbol = "beta"'), "already a glossary symbol"),
    ("bad-link", lambda s: s.replace('"Real offload engines prefetch', '"See @no-such-sheet. Real offload engines prefetch'), "@no-such-sheet"),
]


@pytest.mark.parametrize(("name", "edit", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_malformed_file_is_refused_in_one_line_with_no_output(capsys, tmp_path, name, edit, message):
    text = EXAMPLE.read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text, f"{name}: the edit did not apply"
    path = tmp_path / f"{name}.toml"
    path.write_text(changed, encoding="utf-8")
    code, out, err = run(capsys, "derive", str(path))
    assert code == 2 and out == "", err
    first = err.splitlines()[0]
    assert first.startswith(f"roofline: error: {path}") and message in err, err
    assert "Traceback" not in err and len(err.splitlines()) in (1, 3)


def test_a_missing_file_is_one_line(capsys, tmp_path):
    code, out, err = run(capsys, "derive", str(tmp_path / "nope.toml"))
    assert code == 2 and out == "" and "no such file" in err


# --- LaTeX fragments --------------------------------------------------------------------------------------------------

def test_fragment_is_the_body_only(capsys):
    code, out, _ = run(capsys, "derive", str(EXAMPLE), "--format", "tex", "--fragment")
    assert code == 0
    assert r"\documentclass" not in out and r"\begin{document}" not in out and r"\end{document}" not in out
    assert out.startswith(r"\section*{Offloading the KV cache to host memory}")
    whole = run(capsys, "derive", str(EXAMPLE), "--format", "tex")[1]
    assert out.split(r"\section*{Answer}")[1] == whole.split(r"\section*{Answer}")[1].replace("\\end{document}\n", "")


def test_preamble_comes_from_the_sheet_template(capsys):
    code, out, _ = run(capsys, "tex-preamble")
    template = (ROOT / "renderers" / "templates" / "sheet.tex.j2").read_text(encoding="utf-8")
    assert code == 0
    for line in out.splitlines():
        if line.startswith(r"\usepackage") or line.startswith(r"\newcommand") or line.startswith(r"\sisetup"):
            assert line in template
    for needed in (r"\usepackage{siunitx}", r"\usepackage{booktabs}", r"\usepackage{longtable}", r"\DeclareSIUnit\flop{flop}", r"\newcommand{\fitwidth}"):
        assert needed in out
    assert r"\documentclass" not in out and "geometry" not in out


def _user_document(preamble: str, body_name: str) -> str:
    return "\n".join([r"\documentclass{article}", preamble, r"\begin{document}", "My own writeup.", rf"\input{{{body_name}}}", r"\end{document}", ""])


@pytest.mark.slow
def test_a_fragment_compiles_inside_a_minimal_user_document(capsys, tmp_path):
    assert shutil.which("pdflatex"), "pdflatex is needed for the slow tests"
    from roofline.pdfs import safe_tex_env

    preamble = run(capsys, "tex-preamble")[1]
    (tmp_path / "sheet.tex").write_text(run(capsys, "derive", str(EXAMPLE), "--format", "tex", "--fragment")[1], encoding="utf-8")
    (tmp_path / "check.tex").write_text(run(capsys, "check", *ISSUE_EXAMPLE, "--format", "tex", "--fragment")[1], encoding="utf-8")
    for body in ("sheet", "check"):
        (tmp_path / f"doc-{body}.tex").write_text(_user_document(preamble, body), encoding="utf-8")
        for _ in range(2):
            done = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", f"doc-{body}.tex"],
                                  cwd=tmp_path, env=safe_tex_env(), capture_output=True, text=True, timeout=120, check=False)
            assert done.returncode == 0, next((x for x in done.stdout.splitlines() if x.startswith("!")), done.stdout[-400:])
        assert (tmp_path / f"doc-{body}.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.slow
def test_every_glossary_symbol_latex_compiles(tmp_path):
    assert shutil.which("pdflatex"), "pdflatex is needed for the slow tests"
    from roofline.pdfs import compile_pdf

    lines = [rf"${roofline.latex(i.name)}$ \par" for i in roofline.glossary()]
    doc = "\n".join([r"\documentclass{article}", r"\usepackage{amsmath}", r"\begin{document}", *lines, r"\end{document}"])
    assert compile_pdf(doc, "glossary").startswith(b"%PDF")


# --- the README's own examples run ---------------------------------------------------------------------------------

def _readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_readme_python_example_runs():
    code = re.findall(r"```python\n(.*?)```", _readme_section("Check your own derivation"), re.S)
    assert code, "the README section has a Python example"
    for block in code:
        exec(compile(block, "README.md", "exec"), {})  # the README's own text, not user input


def test_readme_derivation_file_builds(capsys, tmp_path):
    blocks = re.findall(r"```toml\n(.*?)```", _readme_section("Check your own derivation"), re.S)
    assert len(blocks) == 1
    path = tmp_path / "readme-example.toml"
    path.write_text(blocks[0], encoding="utf-8")
    code, out, err = run(capsys, "derive", str(path), "--format", "json")
    assert code == 0, err
    assert set(json.loads(out)["results"]) == {"t_step", "T_equal"}


def test_readme_check_commands_run(capsys):
    commands = [line[len("roofline "):] for block in re.findall(r"```sh\n(.*?)```", _readme_section("Check your own derivation"), re.S)
                for line in block.splitlines() if line.startswith("roofline ")]
    assert len(commands) >= 3
    import shlex

    for command in commands:
        argv = [str(ROOT / a) if a.startswith("examples/") else a for a in shlex.split(command.split("  #")[0].split(" > ")[0])]
        code, _, err = run(capsys, *argv)
        assert code == 0, f"{command}: {err}"

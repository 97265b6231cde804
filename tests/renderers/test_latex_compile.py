"""Compile every sheet, and one with hostile names, with pdflatex (slow: select with -m slow)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.specs.catalog import HARDWARE_DIR, MODELS_DIR

from roofline import api
from roofline.pdfs import compile_pdf, compile_pdf_with_log

pytestmark = pytest.mark.slow
HOSTILE = r"x_{1}&%$#\input{/etc/hostname}"


def _pdf_text(pdf: bytes, tmp_path: Path) -> str:
    p = tmp_path / "x.pdf"
    p.write_bytes(pdf)
    return subprocess.run(["pdftotext", str(p), "-"], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("slug", [d.slug for d in DERIVATIONS])
def test_every_sheet_compiles_without_overfull_boxes(slug):
    assert shutil.which("pdflatex"), "pdflatex is needed for the slow tests (.ci/run installs it)"
    tex = api.render(api.derive(slug), "tex")
    pdf, log = compile_pdf_with_log(tex, slug)
    assert pdf.startswith(b"%PDF")
    overfull = [line for line in log.splitlines() if line.startswith("Overfull")]
    assert overfull == [], f"{slug}: {len(overfull)} Overfull boxes, first: {overfull[0]}"


@pytest.mark.parametrize("slug", [d.slug for d in DERIVATIONS])
def test_every_step_is_one_unbreakable_block(slug):
    """A step's heading, text and equation sit in one minipage (the \\rooflinestep macro), so a page break never splits them."""
    from roofline.renderers import view
    from roofline.renderers.targets import LATEX

    sheet = api.derive(slug)
    tex = api.render(sheet, "tex")
    macro = tex[tex.index(r"\newcommand{\rooflinestep}"):].split("\n\\newsavebox")[0]
    assert r"\begin{minipage}" in macro and r"\begin{aligned}" in macro and r"\end{minipage}" in macro
    v = view.build(sheet, LATEX)
    printed = [s for s in (*v["argument"], *v["steps"]) if s["kind"] == "step"]
    assert tex.count(r"\rooflinestep{") == len(printed)  # each printed step once (the definition reads \rooflinestep})


def test_hostile_names_render_as_literal_text_and_compile(tmp_path):
    (tmp_path / "evil.json").write_text((MODELS_DIR / "llama-3.1-8b.json").read_text())
    (tmp_path / "evil.toml").write_text(f'name = {json.dumps(HOSTILE)}\nstatus = "U"\nsource = {json.dumps(HOSTILE)}\n')
    chip = (HARDWARE_DIR / "h100-sxm.toml").read_text().replace('name = "NVIDIA H100 SXM5 80GB"', f"name = {json.dumps(HOSTILE)}")
    (tmp_path / "evil-chip.toml").write_text(chip)
    sheet = api.derive("decode-floor", hardware=str(tmp_path / "evil-chip.toml"), model=str(tmp_path / "evil.json"))
    md = api.render(sheet, "md")
    assert "\\input{/etc/hostname}" not in md and "x\\_\\{1\\}&amp;%\\$\\#\\\\input\\{/etc/hostname\\}" in md
    text = _pdf_text(compile_pdf(api.render(sheet, "tex"), "evil"), tmp_path)
    assert "x_{1}&%$#\\input{/etc/hostname}" in text.replace("\n", "")
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else None
    if hostname and len(hostname) >= 6:
        assert hostname not in text.replace(HOSTILE, "")


# --- issue 22, family 11: a minimal derivation file compiles ----------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"
MINIMAL = 'title = "Minimal"\nquestion = "How long does one read take?"\nresults = ["t"]\n[[steps]]\nname = "t"\nformula = "P_active*b_w/beta"\nunit = "s"\nwhy = "w"\n'


def _readme_example() -> str:
    """The README's complete derivation file (the TOML block of 'Your own sheet, without Python')."""
    section = README.read_text(encoding="utf-8").split("### Your own sheet, without Python", 1)[1]
    return section.split("```toml\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize(("case", "text"), [("minimal-file", MINIMAL), ("readme-example", None),
                                           ("only-takeaways", 'takeaways = ["A read takes {t}."]\n' + MINIMAL)],
                         ids=["minimal-file", "readme-example", "only-takeaways"])
def test_a_derivation_file_without_takeaways_scoring_or_limits_compiles(case, text, tmp_path):
    """An empty itemize (no takeaways, no scoring, no limits) stopped pdflatex; such a section is now left out."""
    path = tmp_path / "x.toml"
    path.write_text(text if text is not None else _readme_example())
    tex = api.render(api.derive(str(path)), "tex")
    assert not re.search(r"\\begin\{itemize\}\s*\\end\{itemize\}", tex)
    assert compile_pdf(tex, "x").startswith(b"%PDF")

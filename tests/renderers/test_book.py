"""The book: every sheet a chapter in registry order, conventions, glossary, hardware and model appendices; it compiles (slow)."""

import re
import shutil
import subprocess

import pytest

from derivations.conventions import CONVENTIONS
from derivations.glossary import GLOSSARY
from derivations.registry import DERIVATIONS
from renderers import book, escape, latex
from roofline import api
from roofline.build import compile_pdf_with_log
from specs.catalog import hardware_names, model_names

_CHAPTER = re.compile(r"\\chapter\{(.*)\}\\label\{([^}]*)\}")


@pytest.fixture(scope="module")
def tex(sheets):
    return book.render(sheets, [api.hardware(n) for n in hardware_names()], [api.model(n) for n in model_names()])


def test_every_sheet_is_a_chapter_in_registry_order(tex):
    labels = [label for _, label in _CHAPTER.findall(tex)]
    sheets = [label.removeprefix("sheet:") for label in labels if label.startswith("sheet:")]
    assert sheets == [d.slug for d in DERIVATIONS]
    assert labels[0] == "conventions" and labels[-3:] == ["glossary", "hardware", "models"]
    assert tex.index(r"\tableofcontents") < tex.index(r"\chapter{Conventions}") < tex.index(r"\appendix") < tex.index(r"\chapter{Glossary")


def test_a_chapter_is_the_sheets_own_body(sheets, tex):
    """The chapter is cut from the standalone sheet: its answer, argument and appendix, with the title page replaced by the chapter heading."""
    for sheet in sheets[:3]:
        _, body = book.split_sheet(latex.render(sheet), sheet.derivation.slug)
        start = tex.index(rf"\label{{sheet:{sheet.derivation.slug}}}")
        chapter = tex[start:tex.index(r"\chapter{", start)]
        argument = body[body.index(r"\section*{Answer}"):body.index(r"\section*{Results across hardware and models}")]
        appendix = body[body.index(r"\section*{Appendix}"):]
        assert argument in chapter and appendix in chapter
        assert r"\maketitle" not in chapter and r"\documentclass" not in chapter


def test_conventions_glossary_and_appendices_are_complete(tex):
    assert tex.count(r"\begin{document}") == 1 and tex.count(r"\end{document}") == 1
    conventions = tex[tex.index(r"\chapter{Conventions}"):tex.index(r"\chapter{", tex.index(r"\chapter{Conventions}") + 1)]
    assert conventions.count(r"\item ") == len(CONVENTIONS)
    glossary = tex[tex.index(r"\chapter{Glossary"):tex.index(r"\chapter{Hardware}")]
    for info in GLOSSARY:
        assert escape.latex_code(info.name) in glossary, info.name
    hardware = tex[tex.index(r"\chapter{Hardware}"):tex.index(r"\chapter{Models}")]
    for n in hardware_names():
        hw = api.hardware(n)
        assert rf"\section{{{escape.latex(hw.name)}}}" in hardware and rf"\texttt{{{escape.latex(n)}}}" in hardware
    assert hardware.count("\nsource & ") == len(hardware_names())
    models = tex[tex.index(r"\chapter{Models}"):]
    for n in model_names():
        assert rf"\section{{{escape.latex(api.model(n).name)}}}" in models
    assert models.count("\nsource & ") == len(model_names())


def test_links_between_sheets_point_at_chapters(tex):
    refs = set(re.findall(r"\\hyperref\[sheet:([^\]]+)\]", tex))
    assert refs and refs <= {d.slug for d in DERIVATIONS}


def test_long_sources_may_break_but_short_words_do_not():
    assert book.breakable("1,513 TB/s") == "1,513 TB/s"
    url = "https://example.com/a_very_long_path/0123456789abcdef0123456789"
    broken = book.breakable(url)
    assert broken.count(r"\allowbreak{}") >= 6 and broken.replace(r"\allowbreak{}", "") == escape.latex(url)


def test_a_sheet_without_a_title_page_is_refused():
    with pytest.raises(book.BookError, match="no-title.tex"):
        book.split_sheet("\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n", "no-title")


def test_plot_names_are_the_included_files():
    tex = "\\includegraphics[width=\\linewidth]{plots/a-b.pdf}\nx \\includegraphics{plots/c.pdf} \\includegraphics{plots/a-b.pdf}"
    assert book.plot_names(tex) == ["plots/a-b.pdf", "plots/c.pdf"]


@pytest.mark.slow
def test_book_compiles_without_overfull_boxes(sheets, tmp_path):
    assert shutil.which("pdflatex"), "pdflatex is needed for the slow tests (.ci/run installs it)"
    files = {}
    tex_by_slug = {}
    for sheet in sheets:
        files.update(api.plot_files(sheet, "plots"))
        tex_by_slug[sheet.derivation.slug] = api.render(sheet, "tex", plots="plots")
    tex = book.render(sheets, [api.hardware(n) for n in hardware_names()], [api.model(n) for n in model_names()], tex_by_slug)
    graphics = {n: files[n] for n in book.plot_names(tex)}
    pdf, log = compile_pdf_with_log(tex, "book", graphics)
    overfull = [line for line in log.splitlines() if line.startswith("Overfull")]
    assert overfull == [], f"book: {len(overfull)} Overfull boxes, first: {overfull[0]}"
    assert "Label(s) may have changed" not in log  # two passes settle the contents and the links
    path = tmp_path / "book.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    contents = " ".join(text[text.index("Contents"):text.index("Conventions", text.index("Glossary of symbols"))].replace("\u2019", "'").split())
    for d in DERIVATIONS:
        assert " ".join(d.title.split()[:3]) in contents, d.slug
    pages = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    assert int(re.search(r"Pages:\s+(\d+)", pages).group(1)) > len(DERIVATIONS) * 3

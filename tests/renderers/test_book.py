"""The book: a title page, a shared conventions chapter, every sheet a chapter in its part, shared given values, glossary,
hardware and model appendices; it compiles, with its metadata and no page holding only a line or two (slow)."""

import re
import shutil
import subprocess

import pytest
from roofline.derivations.physics.conventions import CONVENTIONS
from roofline.derivations.physics.glossary import GLOSSARY
from roofline.derivations.questions import registry
from roofline.derivations.questions.registry import DERIVATIONS, PARTS
from roofline.renderers import book, escape, latex, view
from roofline.renderers.targets import LATEX
from roofline.specs.catalog import hardware_names, model_names

from roofline import api
from roofline import build as build_mod
from roofline.build_outputs import BuildError
from roofline.pdfs import compile_pdf_with_log

_CHAPTER = re.compile(r"\\chapter\{(.*)\}\\label\{([^}]*)\}")
VERSION, DATE = "9.8.7", "3 March 2031"
#: The fewest lines of text (besides its number) a page of the compiled book may hold: none holds only a line or two.
MIN_LINES = 3


@pytest.fixture(scope="module")
def tex(sheets):
    return book.render(sheets, [api.hardware(n) for n in hardware_names()], [api.model(n) for n in model_names()], "plots", VERSION, DATE)


def _chapter(tex: str, slug: str) -> str:
    start = tex.index(rf"\label{{sheet:{slug}}}")
    return tex[start:tex.index(r"\chapter{", start)]


def test_every_sheet_is_a_chapter_in_its_part(tex):
    """Five parts in the registry's order, each opening before its first chapter; the chapters by part, the registry's order inside one."""
    labels = [label for _, label in _CHAPTER.findall(tex)]
    sheets = [label.removeprefix("sheet:") for label in labels if label.startswith("sheet:")]
    groups = registry.by_part([d.slug for d in DERIVATIONS])
    assert sheets == [slug for _, members in groups for slug in members] and sorted(sheets) == sorted(d.slug for d in DERIVATIONS)
    assert labels[:1] == ["conventions"] and labels[-4:] == ["given", "glossary", "hardware", "models"]
    opens = [tex.index(rf"\rooflinepart{{{escape.latex(p.title)}}}") for p in PARTS]
    assert opens == sorted(opens) and tex.count(r"\rooflinepart{") == len(PARTS) == 5
    for (part, members), start, end in zip(groups, opens, [*opens[1:], tex.index(r"\appendix")], strict=True):
        assert all(start < tex.index(rf"\label{{sheet:{slug}}}") < end for slug in members), part.key
    assert tex.index(r"\tableofcontents") < tex.index(r"\chapter{Conventions}") < opens[0] < tex.index(r"\appendix") < tex.index(r"\chapter{Glossary")


def _as_float(tex: str) -> str:
    """A sheet's in-place answer figure written as the book's float (renderers/templates/sheet.tex.j2, answer_figure), its
    claims and figure unwrapped from the block that orders them on page 1 (the book's chapters flow on: claims, then float)."""
    block = re.search(r"\\rooflineanswerblock\{(.*?\n)\}\{(\\rooflinefigurefit.*?\n)\}\n", tex, re.S)
    if block:
        tex = tex[:block.start()] + block.group(1) + "\n\n" + block.group(2) + "\n" + tex[block.end():]
    return tex.replace("\\par\\medskip\\noindent\\begin{minipage}{\\linewidth}\\centering\n", "\\begin{figure}[!ht]\\centering\n").replace(
        "\\usebox{\\rooflinecaptionbox}\\end{minipage}\\par\\medskip", "\\usebox{\\rooflinecaptionbox}\\end{figure}")


def test_a_chapter_is_the_sheets_own_body_with_numbered_sections(sheets, tex):
    """The chapter is the standalone sheet's body (its answer, argument, results and full derivation) with numbered sections,
    no title page and no page break before its appendix."""
    for sheet in sheets[:3]:
        _, body = book.split_sheet(latex.render(sheet, plots="plots"), sheet.derivation.slug)
        chapter = _chapter(tex, sheet.derivation.slug)
        numbered = book._linked(body, [d.slug for d in DERIVATIONS]).replace(r"\section*{", r"\section{").replace(r"\subsection*{The full derivation}", r"\subsection{The full derivation}")
        argument = numbered[numbered.index(r"\section{Answer}"):numbered.index(r"\section{Appendix}")].replace("\\clearpage\n", "")
        # the one difference: a sheet sets its answer figure in place, the book as a float (its chapters flow on)
        argument = _as_float(argument)
        derivation = numbered[numbered.index(r"\subsection{The full derivation}"):numbered.index(r"\subsection*{Setup}")]
        assert argument in chapter and derivation in chapter
        assert r"\maketitle" not in chapter and r"\documentclass" not in chapter and r"\clearpage" not in chapter
        assert r"\section*{" not in chapter and chapter.count(r"\section{") == body.count(r"\section*{") - body.count(r"\section*{Answer}") + 1


def test_given_values_shared_by_two_chapters_are_printed_once(sheets, tex):
    """Every given value of every chapter is printed once: in the chapter's own table, or (shared by two or more chapters) in
    the shared appendix, which names the chapter; the chapter then says where."""
    appendix = tex[tex.index(r"\chapter{Given values shared by the chapters}"):tex.index(r"\chapter{Glossary")]
    shared_rows = 0
    for sheet in sheets:
        slug = sheet.derivation.slug
        chapter = _chapter(tex, slug)
        given = chapter[chapter.index(r"\subsection{Given values}"):chapter.index(r"\subsection{", chapter.index(r"\subsection{Given values}") + 1)]
        rows = view.build(sheet, LATEX, "plots")["given"]
        shared = [g for g in rows if f"{g['symbol']} & {g['value']} & {g['meaning']} & " in appendix]
        for g in rows:
            own = f"{g['symbol']} & {g['value']} & {g['meaning']} \\\\" in given
            assert own != (g in shared), f"{slug}: {g['symbol']} = {g['value']} printed {'twice' if own else 'nowhere'}"
        if shared:
            assert r"Appendix~\ref{given}" in given, slug
        shared_rows += len(shared)
    lines = [line for line in appendix.splitlines() if line.endswith("\\\\") and r"\hyperref[sheet:" in line]
    assert lines and all(line.count(r"\hyperref[sheet:") >= 2 for line in lines)  # shared means two chapters or more
    numbers = {label.removeprefix("sheet:"): n for n, (_, label) in enumerate(_CHAPTER.findall(tex), 1)}  # the chapter numbers it prints are the chapters'
    assert all(numbers[slug] == int(n) for line in lines for slug, n in re.findall(r"\\hyperref\[sheet:([^\]]+)\]\{(\d+)\}", line))
    assert shared_rows > 3 * len(lines)  # the appendix saves far more rows than it prints


def test_conventions_are_one_chapter_not_a_list_in_every_chapter(sheets, tex):
    for sheet in sheets:
        own = [c for c in sheet.conventions if c not in CONVENTIONS]
        assert (r"\subsection{Conventions}" in _chapter(tex, sheet.derivation.slug)) == bool(own), sheet.derivation.slug


def test_title_page_and_pdf_metadata(tex):
    title_page = tex[tex.index(r"\begin{titlepage}"):tex.index(r"\end{titlepage}")]
    assert f"roofline {VERSION}" in title_page and DATE in title_page and escape.latex(book.TITLE) in title_page
    meta = re.search(r"\\hypersetup\{(.*)\}", tex).group(1)
    assert f"pdftitle={{{escape.latex(book.TITLE)}}}" in meta and f"pdfauthor={{{book.AUTHOR}}}" in meta and f"pdfsubject={{{book.SUBJECT}}}" in meta


def test_the_books_date_comes_from_the_version_or_source_date_epoch(monkeypatch):
    """Never the clock: the version's release date, or the day SOURCE_DATE_EPOCH names (reproducible builds)."""
    import roofline
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    year, _, day = (int(x) for x in roofline.RELEASE_DATE.split("-"))
    assert build_mod.book_date().startswith(f"{day} ") and build_mod.book_date().endswith(f" {year}")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC
    assert build_mod.book_date() == "14 November 2023"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(BuildError, match="SOURCE_DATE_EPOCH"):
        build_mod.book_date()


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
    for sheet in sheets:
        files.update(api.plot_files(sheet, "plots"))
    tex = book.render(sheets, [api.hardware(n) for n in hardware_names()], [api.model(n) for n in model_names()], "plots", VERSION, DATE)
    graphics = {n: files[n] for n in book.plot_names(tex)}
    pdf, log = compile_pdf_with_log(tex, "book", graphics)
    overfull = [line for line in log.splitlines() if line.startswith("Overfull")]
    assert overfull == [], f"book: {len(overfull)} Overfull boxes, first: {overfull[0]}"
    assert "Label(s) may have changed" not in log  # the passes settle the contents and the links (pdfs.MAX_PASSES at most)
    path = tmp_path / "book.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    contents = " ".join(text[text.index("Contents"):text.index("Conventions", text.index("Glossary of symbols"))].replace("\u2019", "'").split())
    for d in DERIVATIONS:
        assert " ".join(d.title.split()[:3]) in contents, d.slug
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    assert pages > len(DERIVATIONS) * 3
    meta = dict(re.findall(r"^(\w+):\s+(.*)$", info, re.M))
    assert (meta["Title"], meta["Author"], meta["Subject"]) == (book.TITLE, book.AUTHOR, book.SUBJECT)
    first = _page_text(path, 1)
    assert f"roofline {VERSION}" in first and DATE in first
    for p in PARTS:  # the contents list the parts and their chapters, not the seven sections every chapter has (issue 40)
        assert p.title in contents, p.key
    assert "2.1 Answer" not in contents and "The argument" not in contents
    short = {}
    for n in range(1, pages + 1):
        lines = [line for line in _page_text(path, n).splitlines() if line.strip() and not re.fullmatch(r"\s*[0-9ivxlc]+\s*", line)]
        if len(lines) < MIN_LINES:
            short[n] = lines
    assert short == {}, f"book: pages holding only a line or two: {short}"


def _page_text(path, n: int) -> str:
    return subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout


def test_spec_appendices_give_one_source_line_and_the_status_in_words(tex):
    """The appendices print each spec's figures and one line saying where they come from; the research notes and the full
    source lists stay in the spec files, and no bare status letter reaches the reader."""
    specs = tex[tex.index(r"\chapter{Hardware}"):]
    assert "notes &" not in specs and not re.search(r"^status & [CSDU] \\\\", specs, re.M)
    sources = re.findall(r"^source & (.*) \\\\$", specs, re.M)
    assert len(sources) == len(hardware_names()) + len(model_names())
    assert all(" ; " not in s and len(s.replace(r"\allowbreak{}", "")) < 300 for s in sources)
    assert book.source_line("https://a.example/x (a note) ; https://b.example ; https://c.example") == \
        "https://a.example/x, and 2 more sources in the spec file"

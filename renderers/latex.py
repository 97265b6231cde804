"""A solved sheet as a standalone LaTeX article (amsmath, booktabs, siunitx), or as a fragment for your own document."""

from collections.abc import Mapping
from typing import Any

from ..derivations.engine.run import Sheet
from .targets import LATEX
from .templates import LATEX_ENV, TEMPLATES
from .unitfmt import SIUNITX_DECLARATIONS
from .view import build

#: Preamble lines of the standalone sheet that a fragment leaves to the user's document: class, page, fonts, title, spacing.
STANDALONE_ONLY = (r"\documentclass", r"\usepackage[utf8]{inputenc}", r"\usepackage{lmodern}", r"\usepackage[margin", r"\title",
                   r"\date", r"\setlength", r"\sloppy", r"\allowdisplaybreaks", "% A last page", r"\makeat", r"\AtBeginDocument",
                   r"\AtEndDocument", r"  \@ifundefined")


def render(sheet: Sheet, fragment: bool = False, plots: str | None = None) -> str:
    """The sheet as a document; with `fragment`, only its body (title as a section), for `\\input` after `preamble()`.

    With `plots` (a folder relative to the .tex, e.g. "plots"), its figures as `\\includegraphics` of the vector PDFs there.
    """
    return LATEX_ENV.get_template("sheet.tex.j2").render(siunitx_declarations=SIUNITX_DECLARATIONS, fragment=fragment, book=False,
                                                         **SHEET_HEADINGS, shared_given="", **build(sheet, LATEX, plots))


#: A standalone sheet's headings are unnumbered; a book chapter's are numbered sections (in the contents) and subsections.
SHEET_HEADINGS = {"sec": r"\section*", "subsec": r"\subsection*"}
CHAPTER_HEADINGS = {"sec": r"\section", "subsec": r"\subsection"}


def chapter(v: Mapping[str, Any], shared_given: str = "") -> str:
    """A sheet's body as a book chapter, from its view (`renderers.view.build` with the LaTeX target): no preamble and no
    title (the book sets the `\\chapter`), numbered sections, the appendix straight after the body (no page break); `v`'s
    `given` and `conventions` are what the chapter prints (the book leaves out what its shared chapters hold), and
    `shared_given` is the line that says where the rest is."""
    return LATEX_ENV.get_template("sheet.tex.j2").render(siunitx_declarations=SIUNITX_DECLARATIONS, fragment=False, book=True,
                                                         **CHAPTER_HEADINGS, shared_given=shared_given, **v)


def preamble() -> str:
    """The `\\usepackage` lines and macros a fragment needs, taken from the sheet template's own preamble so they stay in step."""
    source = (TEMPLATES / "sheet.tex.j2").read_text(encoding="utf-8")
    head = source.split(r"\begin{document}", 1)[0].split("\n", 2)[2]  # past the template's `if book` and `elif not fragment` lines
    text = LATEX_ENV.from_string(head).render(siunitx_declarations=SIUNITX_DECLARATIONS, title="")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(STANDALONE_ONLY)]
    return "% roofline fragments need these lines in your preamble (roofline tex-preamble)\n" + "\n".join(lines) + "\n"

"""A solved sheet as a standalone LaTeX article (amsmath, booktabs, siunitx)."""

from derivations.sheet import Sheet
from renderers.targets import LATEX
from renderers.templates import LATEX_ENV
from renderers.unitfmt import SIUNITX_DECLARATIONS
from renderers.view import build


def render(sheet: Sheet) -> str:
    return LATEX_ENV.get_template("sheet.tex.j2").render(siunitx_declarations=SIUNITX_DECLARATIONS, **build(sheet, LATEX))

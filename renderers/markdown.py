"""A solved sheet as GitHub-flavoured Markdown (math in $$)."""

from ..derivations.engine.run import Sheet
from .targets import MARKDOWN
from .templates import MARKDOWN_ENV
from .view import build


def render(sheet: Sheet, plots: str | None = None) -> str:
    """The sheet; with `plots` (a folder relative to the sheet, e.g. "plots"), its figures as SVG image links into that folder."""
    return MARKDOWN_ENV.get_template("sheet.md.j2").render(**build(sheet, MARKDOWN, plots))

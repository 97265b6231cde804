"""A solved sheet as GitHub-flavoured Markdown (math in $$)."""

from derivations.sheet import Sheet
from renderers.targets import MARKDOWN
from renderers.templates import MARKDOWN_ENV
from renderers.view import build


def render(sheet: Sheet) -> str:
    return MARKDOWN_ENV.get_template("sheet.md.j2").render(**build(sheet, MARKDOWN))

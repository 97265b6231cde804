"""jinja2 environments: StrictUndefined everywhere, LaTeX-safe delimiters for .tex."""

from __future__ import annotations

from pathlib import Path

import jinja2

from .escape import tex_document

TEMPLATES = Path(__file__).with_name("templates")


def _align_first(line: str) -> str:
    """Put the alignment point after the first `=` of a step's first line."""
    head, sep, tail = line.partition(" = ")
    return f"{head} &= {tail}" if sep else line


MARKDOWN_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
)
LATEX_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    block_start_string=r"\BLOCK{",
    block_end_string="}",
    variable_start_string=r"\VAR{",
    variable_end_string="}",
    comment_start_string=r"\#{",
    comment_end_string="}",
    line_statement_prefix=None,
    trim_blocks=True,
    lstrip_blocks=True,
    # every value a .tex template writes: no TeX caret notation (^^5c is a backslash), whatever field it came from
    finalize=tex_document,
)
LATEX_ENV.filters["align_first"] = _align_first
MARKDOWN_ENV.filters["align_first"] = _align_first

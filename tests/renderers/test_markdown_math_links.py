"""Link and image syntax in prose math never becomes a link or an image in the Markdown (issue 35, family 3).

A viewer that does not render `$...$` math shows it as text, and a Markdown reader would then act on `[x](javascript:...)`
or `![x](http://host/beacon.png)` inside it. Every math span of a Markdown output passes `renderers.escape.markdown_math`,
which breaks link, image and autolink syntax without changing the typeset math.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown2
import pytest
from roofline.renderers import escape
from roofline.renderers.targets import MARKDOWN

from roofline.cli import main
from tests.renderers.test_tex_carets import BASE, PLAIN

#: Math the prose whitelist accepts that a Markdown reader would read as a link, an image or an autolink.
LINK_MATH = (
    "[x](javascript:alert(1))",
    "![x](http://host/beacon.png)",
    "a [b](c) d",
    "[x](//host/y)",
    "![a]([b](javascript:z))",
    "http://host/beacon.png",
    "www.host.com",
    "[x]:(y)",
)

#: Where a derivation file writes math (as tests/renderers/test_tex_carets.py), the Markdown side.
FIELDS = {
    "why": lambda m: {"why": f"'Streams $ {m} $ bytes.'"},
    "question": lambda m: {"question": f"'How long is $ {m} $?'"},
    "assumptions": lambda m: {"assumption": f"'Holds for $ {m} $.'"},
    "step latex": lambda m: {"step_latex": f"latex = '{m}'"},
    "input latex": lambda m: {"input_latex": f"latex = '{m}'"},
}


def _html(md: str) -> str:
    return markdown2.markdown(md, extras=["tables", "fenced-code-blocks"])


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("math", LINK_MATH)
def test_link_syntax_in_math_is_no_link_in_the_markdown(tmp_path: Path, capsys, field: str, math: str) -> None:
    p = tmp_path / "tiny.toml"
    p.write_text(BASE.format(**{**PLAIN, **FIELDS[field](math)}), encoding="utf-8")
    assert main(["derive", str(p), "--format", "md"]) == 0
    md = capsys.readouterr().out
    spans = re.findall(r"\$[^$\n]+\$", md)
    assert spans
    for span in spans:
        assert "](" not in span and "://" not in span and "www." not in span.lower(), span
    html = _html(md)
    assert "<img" not in html
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert not [h for h in hrefs if "javascript" in h or "host" in h], hrefs


@pytest.mark.parametrize("math", LINK_MATH)
def test_every_markdown_math_span_passes_the_link_guard(math: str) -> None:
    for written in (MARKDOWN.inline_math(math), MARKDOWN.math(math), escape.markdown_math(math)):
        html = _html(f"text {written} text")
        assert "<a " not in html and "<img" not in html, (written, html)


def test_math_without_link_syntax_is_unchanged() -> None:
    for math in (r"[0, 1]", r"f(x)", r"\left[ a \right] (b)", r"a : b", r"w_{k}"):
        assert escape.markdown_math(math) == math

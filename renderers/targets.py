"""How one output language writes text, numbers with units, and math.

`MARKDOWN` and `LATEX` are the two targets; the view builder is written once
against this interface.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import escape
from .numbers import Number, Shown, number_text, readable_unit, unit_word
from .unitfmt import mathrm, siunitx


@dataclass(frozen=True)
class Target:
    name: str
    text: Callable[[str], str]
    quantity_math: Callable[[Shown], str]
    quantity_text: Callable[[Shown], str]
    inline_math: Callable[[str], str]
    code: Callable[[str], str]
    #: a unit on its own, typeset like the units of the numbers (a symbol table's unit column)
    unit: Callable[[Any], str]
    #: a link to another answer sheet by slug
    link: Callable[[str], str]
    #: a web address (a spec's source), as a link
    url: Callable[[str], str] = lambda u: u
    #: display math (a step's lines) as this language carries it: TeX with no character its reader takes for markup
    math: Callable[[str], str] = lambda m: m


def _md_number(n: Number) -> str:
    if n.exponent is None:
        return number_text(n).replace(",", "{,}")
    return rf"{n.mantissa} \times 10^{{{n.exponent}}}"


def plural(n: Number) -> bool:
    """A count unit after `n` is plural ("8,192 tokens") unless `n` is 1."""
    return not (n.exponent is None and n.mantissa in ("1", "-1"))


def _md_quantity(s: Shown) -> str:
    unit = mathrm(s.unit, plural(s.number))
    return _md_number(s.number) + (rf"\,{unit}" if unit else "")


def _md_quantity_text(s: Shown) -> str:
    u = s.unit.text
    return escape.markdown(number_text(s.number) + ("" if u == "1" else f" {readable_unit(unit_word(u, s.number))}"))


def _tex_number_literal(n: Number) -> str:
    return n.mantissa if n.exponent is None else f"{n.mantissa}e{n.exponent}"


def _tex_quantity(s: Shown) -> str:
    unit = siunitx(s.unit, plural(s.number))
    number = _tex_number_literal(s.number)
    return rf"\qty{{{number}}}{{{unit}}}" if unit else rf"\num{{{number}}}"


def _md_unit(u: Any) -> str:
    text = mathrm(u)
    return f"${text}$" if text else "1"


def _tex_unit(u: Any) -> str:
    text = siunitx(u)
    return rf"\si{{{text}}}" if text else "1"


MARKDOWN = Target(
    name="md",
    text=escape.markdown,
    quantity_math=_md_quantity,
    quantity_text=_md_quantity_text,
    inline_math=lambda m: f"${escape.markdown_math(m)}$",
    code=escape.markdown_code,
    unit=_md_unit,
    link=lambda slug: f"[{escape.markdown(slug)}]({slug}.md)",
    url=escape.markdown_url,
    math=escape.markdown_math,
)

LATEX = Target(
    name="tex",
    text=escape.latex,
    quantity_math=_tex_quantity,
    quantity_text=_tex_quantity,
    inline_math=lambda m: f"${escape.latex_math(m)}$",
    code=escape.latex_code,
    unit=_tex_unit,
    link=lambda slug: escape.latex_code(slug),
    url=escape.latex_url,
    math=escape.latex_math,
)

"""How one output language writes text, numbers with units, and math.

`MARKDOWN` and `LATEX` are the two targets; the view builder is written once
against this interface.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import pint
import sympy as sp
from sympy.printing.latex import LatexPrinter

from renderers import escape
from renderers.numbers import Number, Shown, number_text
from renderers.unitfmt import mathrm, siunitx


@dataclass(frozen=True)
class Target:
    name: str
    text: Callable[[str], str]
    quantity_math: Callable[[Shown], str]
    quantity_text: Callable[[Shown], str]
    inline_math: Callable[[str], str]
    code: Callable[[str], str]
    #: a unit on its own, typeset like the units of the numbers (a symbol table's unit column)
    unit: Callable[[pint.Unit], str]
    #: a link to another answer sheet by slug
    link: Callable[[str], str]
    #: display math (a step's lines) as this language carries it: TeX with no character its reader takes for markup
    math: Callable[[str], str] = lambda m: m


class _Printer(LatexPrinter):
    """sympy's LaTeX printer, but a symbol printed as a number with a unit is
    parenthesised when raised to a power: (295.3 token)^2, not 295.3 token^2."""

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> str:
        """sympy's sum, with a positive term first: a - b + c reads as a + c - b, never -b + a + c."""
        terms = list(self._as_ordered_terms(expr, order=order))
        ranks = getattr(self, "ranks", {})
        if ranks:
            terms.sort(key=lambda t: min((ranks.get(s, len(ranks)) for s in t.free_symbols), default=len(ranks)))
        terms = [t for t in terms if not t.could_extract_minus_sign()] + [t for t in terms if t.could_extract_minus_sign()]
        tex = ""
        for i, term in enumerate(terms):
            if i and term.could_extract_minus_sign():
                tex += " - "
                term = -term
            elif i:
                tex += " + "
            term_tex = self._print(term)
            if self._needs_add_brackets(term):
                term_tex = rf"\left({term_tex}\right)"
            tex += term_tex
        return tex

    def _print_Pow(self, expr: sp.Pow) -> str:
        base, exponent = expr.as_base_exp()
        name = self._settings["symbol_names"].get(base, "") if isinstance(base, sp.Symbol) else ""
        if (" " in name or "\\qty" in name or "\\mathrm" in name) and exponent.is_Rational and exponent > 0 and exponent.q == 1:
            return rf"\left({name}\right)^{{{self._print(exponent)}}}"
        return super()._print_Pow(expr)


def latex_math(expr: sp.Expr, names: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int] | None = None) -> str:
    """sympy's LaTeX with our symbol names (its default for `BW_HBM` is wrong-looking).

    `ranks` orders the terms of a sum (lowest first) instead of sympy's alphabetical order; see `term_ranks`.
    """
    printer = _Printer({"symbol_names": dict(names), "mul_symbol": "dot"})
    printer.ranks = dict(ranks or {})
    return printer.doprint(expr)


def term_ranks(symbols: Sequence[sp.Symbol], steps: Collection[str]) -> dict[sp.Symbol, int]:
    """Ranks that print a sum in the order of the derivation: terms holding steps first, in step order; inputs after, in glossary order."""
    ordered = [s for s in symbols if s.name in steps] + [s for s in symbols if s.name not in steps]
    return {s: i for i, s in enumerate(ordered)}


def _md_number(n: Number) -> str:
    if n.exponent is None:
        return number_text(n).replace(",", "{,}")
    return rf"{n.mantissa} \times 10^{{{n.exponent}}}"


def _md_quantity(s: Shown) -> str:
    unit = mathrm(s.unit)
    return _md_number(s.number) + (rf"\,{unit}" if unit else "")


def _md_quantity_text(s: Shown) -> str:
    from units import unit_text

    u = unit_text(s.unit)
    return escape.markdown(number_text(s.number) + ("" if u == "1" else f" {u}"))


def _tex_number_literal(n: Number) -> str:
    return n.mantissa if n.exponent is None else f"{n.mantissa}e{n.exponent}"


def _tex_quantity(s: Shown) -> str:
    unit = siunitx(s.unit)
    number = _tex_number_literal(s.number)
    return rf"\qty{{{number}}}{{{unit}}}" if unit else rf"\num{{{number}}}"


def _md_unit(u: pint.Unit) -> str:
    text = mathrm(u)
    return f"${text}$" if text else "1"


def _tex_unit(u: pint.Unit) -> str:
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
    math=escape.markdown_math,
)

LATEX = Target(
    name="tex",
    text=escape.latex,
    quantity_math=_tex_quantity,
    quantity_text=_tex_quantity,
    inline_math=lambda m: f"${m}$",
    code=escape.latex_code,
    unit=_tex_unit,
    link=lambda slug: escape.latex_code(slug),
)

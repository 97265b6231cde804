"""How one output language writes text, numbers with units, and math.

`MARKDOWN` and `LATEX` are the two targets; the view builder is written once
against this interface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import pint
import sympy as sp
from sympy.printing.latex import LatexPrinter

from renderers import escape
from renderers.numbers import Number, Shown, number_text, readable_unit, unit_word
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
    #: a web address (a spec's source), as a link
    url: Callable[[str], str] = lambda u: u
    #: display math (a step's lines) as this language carries it: TeX with no character its reader takes for markup
    math: Callable[[str], str] = lambda m: m


class _Printer(LatexPrinter):
    """sympy's LaTeX printer, but a symbol printed as a number with a unit is
    parenthesised when raised to a power: (295.3 token)^2, not 295.3 token^2."""

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> str:
        """sympy's sum, with a positive term first: a - b + c reads as a + c - b, never -b + a + c."""
        terms = self._ordered_terms(expr)
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

    def _ordered_terms(self, expr: sp.Add) -> list[sp.Expr]:
        """The terms of a sum in print order: by the derivation's ranks, positive terms first."""
        terms = list(self._as_ordered_terms(expr))
        ranks = getattr(self, "ranks", {})
        if ranks:
            terms.sort(key=lambda t: min((ranks.get(s, len(ranks)) for s in t.free_symbols), default=len(ranks)))
        return [t for t in terms if not t.could_extract_minus_sign()] + [t for t in terms if t.could_extract_minus_sign()]

    def _print(self, expr: object, **kwargs: object) -> str:
        """sympy's printer, but `nan` (a Piecewise's "no value otherwise") in words: its own `_latex` says NaN."""
        if expr is sp.nan:
            return r"\text{no value}"
        return super()._print(expr, **kwargs)

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        """Cases, as a textbook writes them: 'value if condition', the last 'otherwise'."""
        rows = []
        for e, c in expr.args:
            cond = r"\text{otherwise}" if c == sp.true else r"\text{if } " + self._print(c)
            rows.append(f"{self._print(e)} & {cond}")
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"

    def _print_Pow(self, expr: sp.Pow) -> str:
        base, exponent = expr.as_base_exp()
        name = self._settings["symbol_names"].get(base, "") if isinstance(base, sp.Symbol) else ""
        if (" " in name or "\\qty" in name or "\\mathrm" in name) and exponent.is_Rational and exponent > 0 and exponent.q == 1:
            return rf"\left({name}\right)^{{{self._print(exponent)}}}"
        return super()._print_Pow(expr)


def latex_math(expr: sp.Expr, names: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int] | None = None, dots: bool = True) -> str:
    """sympy's LaTeX with our symbol names (its default for `BW_HBM` is wrong-looking).

    `ranks` orders the terms of a sum (lowest first) instead of sympy's alphabetical order; see `term_ranks`.
    `dots`: a product with a centred dot between factors (numbers with units need it); without, symbols side by side
    as a textbook writes them ($2 \\kappa P$), a dot only between two numbers.
    """
    return _printer(names, ranks, dots).doprint(expr)


def _printer(names: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int] | None, dots: bool) -> _Printer:
    printer = _Printer({"symbol_names": dict(names), "mul_symbol": "dot" if dots else None})
    printer.ranks = dict(ranks or {})
    return printer


#: The widest right-hand side a displayed equation prints on one line, in `math_width` units (about one character of
#: 11 pt math; the text block is 16.6 cm): a longer sum is broken after a term, never shrunk.
LINE_WIDTH = 62
#: The widest a displayed line may be and still print (`math_width` is an estimate, so a line may run 15% past LINE_WIDTH):
#: a wider formula is said, and a wider numbers line left out, never shrunk.
MAX_LINE_WIDTH = LINE_WIDTH * 1.15


def latex_lines(expr: sp.Expr, names: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int] | None = None, dots: bool = True,
                width: float = LINE_WIDTH) -> list[str]:
    """`expr` as one line of LaTeX, or, when a sum is wider than `width`, as several: each after the first starts with + or -.

    A wider case split (a closed form over a window, min(T, W)) is printed a case at a time, its value on one line and its
    condition on the next: `value`, `if condition`, then `or value`, `if condition`, ..., `or value`, `otherwise`.
    """
    key = _print_key(expr, names, ranks, dots, width)
    hit = _LINES.get(key)
    if hit is None:
        if len(_LINES) > 16384:
            _LINES.clear()
        hit = _LINES[key] = tuple(_lines(expr, _printer(names, ranks, dots), width))
    return list(hit)


#: printed lines by what they are printed from (`_print_key`): a sheet's formulas print once for its four formats and its chapter
_LINES: dict[tuple[object, ...], tuple[str, ...]] = {}


def _print_key(expr: sp.Expr, names: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int] | None, dots: bool, width: float
               ) -> tuple[object, ...]:
    """What printing `expr` reads: the expression, the names and ranks of its symbols (and how many ranks there are, an
    unranked symbol's place), the product style and the line width."""
    free = sorted(expr.free_symbols, key=lambda s: s.name)
    ranks = ranks or {}
    return (expr, tuple(names.get(s) for s in free), tuple(ranks.get(s) for s in free), len(ranks), dots, width)


def _lines(expr: sp.Expr, printer: _Printer, width: float) -> list[str]:
    whole = printer.doprint(expr)
    if isinstance(expr, sp.Piecewise) and math_width(whole) > width:
        return _case_lines(expr, printer, width)
    if not expr.is_Add or math_width(whole) <= width:
        return [whole]
    lines: list[str] = []
    current = ""
    for i, term in enumerate(printer._ordered_terms(expr)):
        if i and term.could_extract_minus_sign():
            piece = "- " + printer._print(-term)
        else:
            piece = ("+ " if i else "") + printer._print(term)
        if current and math_width(current + piece) > width:
            lines.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    lines.append(current)
    return lines


def _case_lines(expr: sp.Piecewise, printer: _Printer, width: float) -> list[str]:
    """A case split a case a line and its condition on the next; cases too wide for a line are counted in their place, not
    printed (the JSON holds the whole closed form, and the value is always the case that applies)."""
    lines: list[str] = []
    left_out = 0

    def flush() -> None:
        nonlocal left_out
        if left_out:
            more = "one more case" if left_out == 1 else f"{left_out} more cases"
            lines.append(r"\text{" + ("or " if lines else "") + more + r" (too wide to print; the JSON holds the closed form)}")
            left_out = 0

    for value, cond in expr.args:
        shown, when = printer._print(value), (r"\text{otherwise}" if cond == sp.true else r"\text{if } " + printer._print(cond))
        if math_width(shown) > width or math_width(when) > width:
            left_out += 1
            continue
        flush()
        lines += [(r"\text{or } " if lines else "") + shown, r"\qquad " + when]
    flush()
    return lines


_WIDE = {"frac", "dfrac", "tfrac"}
_ZERO = {"left", "right", "big", "Big", "bigg", ",", ";", "!", " ", "quad", "qquad", "displaystyle", "mathrm", "text", "mathit",
         "operatorname", "textbf", "textit", "texttt", "qty", "num", "si", "per", "squared", "tothe", "begin", "end"}


def math_width(latex: str) -> float:
    """About how many characters wide `latex` sets (a fraction as its wider part, scripts at 0.7, units as their names)."""
    return _width(latex, 0)[0]


def _group(text: str, i: int) -> tuple[str, int]:
    """The braced group starting at text[i] (or one character), and the index after it."""
    if i < len(text) and text[i] == "{":
        depth, j = 0, i
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return text[i + 1:j], j + 1
            j += 1
        return text[i + 1:], len(text)
    return text[i:i + 1], i + 1


#: How wide siunitx sets each unit macro, in characters (\\params is "parameters", \\per a slash).
_SI_WIDTHS = {"params": 10, "param": 5, "tokens": 6, "token": 5, "flop": 4, "byte": 1, "second": 1, "watt": 1, "joule": 1, "hertz": 2,
              "per": 1, "squared": 0.7, "percent": 1, "minute": 3, "hour": 1, "bit": 3}


def _si_width(units: str) -> float:
    """A siunitx unit's width: its words and symbols (prefixes one letter each)."""
    return sum(_SI_WIDTHS.get(m, 1.0) for m in re.findall(r"\\([A-Za-z]+)", units))


def _number_width(digits: str) -> float:
    """A siunitx number's width: its digits with a comma every three from four on, or a mantissa times a power of ten."""
    mantissa, _, exponent = digits.partition("e")
    whole = mantissa.split(".")[0].lstrip("-")
    groups = (len(whole) - 1) // 3 if len(whole) >= 4 else 0
    return len(mantissa) + groups + (4 + 0.7 * len(exponent) if exponent else 0)


def _width(text: str, i: int) -> tuple[float, int]:
    w = 0.0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", text[i:])
            name = m.group(1) if m else ""
            i += len(name) + 1
            if name in _WIDE:
                a, i = _group(text, i)
                b, i = _group(text, i)
                w += max(math_width(a), math_width(b))
            elif name in ("mathrm", "text", "operatorname", "mathit", "texttt"):
                a, i = _group(text, i)
                w += 0.85 * len(a.replace("\\,", "").replace("{,}", ","))
            elif name in ("qty",):
                a, i = _group(text, i)
                b, i = _group(text, i)
                w += _number_width(a) + 0.5 + _si_width(b)
            elif name in ("num", "si"):
                a, i = _group(text, i)
                w += _number_width(a) if name == "num" else _si_width(a)
            elif name in ("cdot", "times", "leq", "geq", "le", "ge", "approx", "ne"):
                w += 2.0  # a binary operator or relation with its spacing
            elif name not in _ZERO:
                w += 1.0
        elif ch in "_^":
            a, i = _group(text, i + 1)
            w += 0.7 * math_width(a)
        elif ch in "{}& ":
            i += 1
        else:
            w += 2.0 if ch in "+-=<>" else 1.0  # binary operators and relations carry space on both sides
            i += 1
    return w, i


def term_ranks(symbols: Sequence[sp.Symbol], steps: Collection[str]) -> dict[sp.Symbol, int]:
    """Ranks that print a sum in the order of the derivation: terms holding steps first, in step order; inputs after, in glossary order."""
    ordered = [s for s in symbols if s.name in steps] + [s for s in symbols if s.name not in steps]
    return {s: i for i, s in enumerate(ordered)}


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
    from units import unit_text

    u = unit_text(s.unit)
    return escape.markdown(number_text(s.number) + ("" if u == "1" else f" {readable_unit(unit_word(u, s.number))}"))


def _tex_number_literal(n: Number) -> str:
    return n.mantissa if n.exponent is None else f"{n.mantissa}e{n.exponent}"


def _tex_quantity(s: Shown) -> str:
    unit = siunitx(s.unit, plural(s.number))
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
    url=escape.markdown_url,
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
    url=escape.latex_url,
)

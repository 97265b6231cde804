"""A formula printed once, its symbols left as slots: the LaTeX of a step for any names or numbers, without sympy.

sympy's LaTeX printer (renderers.printer) writes a step's formula the same way whatever its symbols print as, with one
exception: a symbol raised to a power, whose printed form decides the brackets around it ("(8,192 tokens)^2", not
"8,192 tokens^2"). So a formula is printed once with a marker in place of each symbol (`Printed`), and filled with
strings per use: the symbol names for the formula line, the numbers with their units for the numbers line. A power of
a symbol stays a slot of its own that brackets its base exactly as the printer would (`_power`).

`Printed.lines` breaks a long sum after a term and a wide case split a case a line; the widths are `math_width`'s estimate of the filled text. Everything here is plain data and plain Python:
a `Printed` is stored in the compiled form of a sheet (roofline.compiled) and filled on the light path, where neither
sympy nor pint is imported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

#: The widest right-hand side a displayed equation prints on one line, in `math_width` units (about one character of
#: 11 pt math; the text block is 16.6 cm): a longer sum is broken after a term, never shrunk.
LINE_WIDTH = 62
#: The widest a displayed line may be and still print (`math_width` is an estimate, so a line may run 15% past LINE_WIDTH):
#: a wider formula is said, and a wider numbers line left out, never shrunk.
MAX_LINE_WIDTH = LINE_WIDTH * 1.15

#: A piece of a printed formula: literal LaTeX, a symbol ("s", name), a symbol raised to a positive whole power
#: ("p", name, exponent LaTeX), a symbol guarded against a superscript of its own ("u", name: sympy's parenthesize_super),
#: or a symbol inside an exponent ("e", name: filled without a unit, since an exponent is a pure number).
Piece = str | tuple[str, ...]
Pieces = tuple[Piece, ...]
#: When a term is zero: alternatives, each the names of symbols that make it zero when every one of them is.
ZeroWhen = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Printed:
    """A formula's LaTeX with its symbols as slots.

    `whole` is the formula on one line. `terms` (a sum) is each term with its sign ("", "+ ", "- "), in print order;
    `cases` (a case split) is each case as (value, condition), the condition already "\\text{if } ..." or
    "\\text{otherwise}". `lines` breaks the formula from them. `zeros` holds, per term, when it is zero: alternatives,
    each a set of symbols that make it zero when all are; `lines` leaves a term out when told which symbols are zero.
    """

    whole: Pieces
    terms: tuple[Pieces, ...] = ()
    cases: tuple[tuple[Pieces, Pieces], ...] = ()
    zeros: tuple[ZeroWhen, ...] = ()

    def fill(self, names: Mapping[str, str]) -> str:
        """The formula on one line with each symbol printed as `names` says (every symbol it holds must be there)."""
        return fill(self.whole, names)

    def lines(self, names: Mapping[str, str], width: float = LINE_WIDTH, zero: frozenset[str] = frozenset()) -> list[str]:
        """The formula as one line, or, when wider than `width`, a sum a term at a time (each line after the first starts
        with + or -) and a case split a case at a time (`value`, `if condition`, then `or value`, ...). The terms of a sum
        that are zero where the symbols in `zero` are (see `zeros`) are left out, unless every term is."""
        terms = self.terms
        kept = [t for t, z in zip(self.terms, self.zeros, strict=True) if not any(zero.issuperset(a) for a in z)] \
            if zero and self.zeros else terms
        if kept and len(kept) < len(terms):
            first = kept[0]
            lead = first[0] if first and isinstance(first[0], str) else ""
            if lead.startswith("+ "):  # the first term kept loses its plus; a minus stays
                first = (lead[2:], *first[1:])
            terms = (first, *kept[1:])
            whole = " ".join(fill(t, names) for t in terms)
        else:
            whole = self.fill(names)
        if self.cases and math_width(whole) > width:
            return _case_lines(self.cases, names, width)
        if not terms or math_width(whole) <= width:
            return [whole]
        out: list[str] = []
        current = ""
        for term in terms:
            piece = fill(term, names)
            if current and math_width(current + piece) > width:
                out.append(current)
                current = piece
            else:
                current = f"{current} {piece}" if current else piece
        out.append(current)
        return out

    @property
    def symbols(self) -> frozenset[str]:
        """The names of the symbols it prints."""
        return frozenset(p[1] for p in self.whole if isinstance(p, tuple))

    def to_json(self) -> dict[str, Any]:
        return {"whole": pieces_json(self.whole), "terms": [pieces_json(t) for t in self.terms],
                "cases": [[pieces_json(v), pieces_json(c)] for v, c in self.cases], "zeros": [[list(a) for a in z] for z in self.zeros]}

    @classmethod
    def from_json(cls, data: Any) -> Printed:
        """A Printed from `to_json`'s data; ValueError for anything else."""
        if not isinstance(data, dict):
            raise ValueError("expected a printed formula")
        zeros = data["zeros"]
        if not isinstance(zeros, list) or not all(isinstance(z, list) and all(isinstance(a, list) and all(isinstance(x, str) for x in a)
                                                                         for a in z) for z in zeros):
            raise ValueError("expected when each term is zero")
        return cls(_pieces(data["whole"]), tuple(_pieces(t) for t in data["terms"]),
                   tuple((_pieces(v), _pieces(c)) for v, c in data["cases"]), tuple(tuple(tuple(a) for a in z) for z in zeros))


def fill(pieces: Pieces, names: Mapping[str, str]) -> str:
    out = []
    for p in pieces:
        if isinstance(p, str):
            out.append(p)
        elif p[0] == "s":
            out.append(names[p[1]])
        elif p[0] == "p":
            out.append(_power(names[p[1]], p[2]))
        elif p[0] == "e":
            out.append(bare(names[p[1]]))
        else:
            out.append(parenthesize_super(names[p[1]]))
    return "".join(out)


#: a number's unit as the numbers line prints it ("8{,}192\\,\\mathrm{token}"), at the end of a filled slot
_UNIT = re.compile(r"\\,\\mathrm\{(?:[^{}]|\{[^{}]*\})*\}$")
#: a number with its unit as siunitx sets it in the LaTeX ("\\qty{8192}{\\token}")
_QTY = re.compile(r"\\qty\{([^{}]*)\}\{(?:[^{}]|\{[^{}]*\})*\}")


def bare(filled: str) -> str:
    """A filled slot without its unit, for a slot inside an exponent: "8{,}192" of "8{,}192\\,\\mathrm{token}", and
    "\\num{8192}" of siunitx's "\\qty{8192}{\\token}"; a name or a plain number as it is."""
    m = _QTY.fullmatch(filled)
    if m:
        return rf"\num{{{m.group(1)}}}"
    return _UNIT.sub("", filled)


def _power(base: str, exponent: str) -> str:
    """A symbol printed as `base` raised to a positive whole power: a number with its unit (or any printed form holding a
    space) in brackets, as renderers.printer does; else as sympy does (brackets only around a superscript of its own)."""
    if " " in base or "\\qty" in base or "\\mathrm" in base:
        return rf"\left({base}\right)^{{{exponent}}}"
    return f"{parenthesize_super(base)}^{{{exponent}}}"


def parenthesize_super(s: str) -> str:
    """sympy's LatexPrinter.parenthesize_super (with its default parenthesize_super=True): brackets around a printed base
    that holds a superscript of its own."""
    return rf"\left({s}\right)" if "^" in s else s


def _case_lines(cases: Sequence[tuple[Pieces, Pieces]], names: Mapping[str, str], width: float) -> list[str]:
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

    for value, cond in cases:
        shown, when = fill(value, names), fill(cond, names)
        if math_width(shown) > width or math_width(when) > width:
            left_out += 1
            continue
        flush()
        lines += [(r"\text{or } " if lines else "") + shown, r"\qquad " + when]
    flush()
    return lines


class _Digit(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "0"


def least_width(pieces: Pieces) -> float:
    """The narrowest `pieces` set, in `math_width` units, whatever fills their slots: each slot filled with one digit, the
    narrowest anything fills it with (a number, with or without its unit, or a symbol's name)."""
    return math_width(fill(pieces, _Digit()))


def pieces_json(pieces: Pieces) -> list[Any]:
    return [p if isinstance(p, str) else list(p) for p in pieces]


def _pieces(data: Any) -> Pieces:
    if not isinstance(data, list):
        raise ValueError("expected a list of pieces")
    out: list[Piece] = []
    for p in data:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, list) and p and p[0] in ("s", "u", "e") and len(p) == 2 and all(isinstance(x, str) for x in p):
            out.append(tuple(p))
        elif isinstance(p, list) and p and p[0] == "p" and len(p) == 3 and all(isinstance(x, str) for x in p):
            out.append(tuple(p))
        else:
            raise ValueError("not a piece of a printed formula")
    return tuple(out)


def number_latex(x: Fraction | int | float) -> str:
    """A number as sympy's LaTeX printer writes it: an integer as digits, a ratio as \\frac{p}{q} (signed), a float as
    its shortest repr with a power of ten as `\\cdot 10^{n}` (what an identity reduces to: renderers.view.left_out)."""
    if isinstance(x, float):
        text = repr(x)
        if "e" in text:
            mantissa, exponent = text.split("e")
            return rf"{mantissa} \cdot 10^{{{int(exponent)}}}"
        return text
    q = Fraction(x)
    if q.denominator == 1:
        return str(q.numerator)
    sign = "- " if q < 0 else ""
    return rf"{sign}\frac{{{abs(q.numerator)}}}{{{q.denominator}}}"


# --- widths ---------------------------------------------------------------------------------------------------------

_WIDE = {"frac", "dfrac", "tfrac"}
_ZERO = {"left", "right", "big", "Big", "bigg", ",", ";", "!", " ", "quad", "qquad", "displaystyle", "mathrm", "text", "mathit",
         "operatorname", "textbf", "textit", "texttt", "qty", "num", "si", "per", "squared", "tothe", "begin", "end"}


def width_rules() -> dict[str, Any]:
    """`math_width`'s rules as data, for a script that measures a line as it does (roofline/live.js; siunitx's macros, which
    only the LaTeX target writes, aside)."""
    return {"line": LINE_WIDTH, "max": MAX_LINE_WIDTH, "wide": sorted(_WIDE), "zero": sorted(_ZERO), "worded": list(_WORDED),
            "operators": list(_OPERATORS)}


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


_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
#: Commands whose braced argument sets as words, and binary operators and relations (each with its spacing).
_WORDED = ("mathrm", "text", "operatorname", "mathit", "texttt")
_OPERATORS = ("cdot", "times", "leq", "geq", "le", "ge", "approx", "ne")


def _width(text: str, i: int) -> tuple[float, int]:
    w = 0.0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            m = _COMMAND.match(text, i)
            name = m.group(1) if m else ""
            i += len(name) + 1
            if name in _WIDE:
                a, i = _group(text, i)
                b, i = _group(text, i)
                w += max(math_width(a), math_width(b))
            elif name in _WORDED:
                a, i = _group(text, i)
                w += 0.85 * len(a.replace("\\,", "").replace("{,}", ","))
            elif name in ("qty",):
                a, i = _group(text, i)
                b, i = _group(text, i)
                w += _number_width(a) + 0.5 + _si_width(b)
            elif name in ("num", "si"):
                a, i = _group(text, i)
                w += _number_width(a) if name == "num" else _si_width(a)
            elif name in _OPERATORS:
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

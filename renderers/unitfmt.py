"""Units in LaTeX: siunitx macros for the .tex sheets, \\mathrm for Markdown math."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..units import pintless
from .numbers import PLURALS, as_unit

_SI_PREFIX = {
    "exa": r"\exa", "peta": r"\peta", "tera": r"\tera", "giga": r"\giga", "mega": r"\mega", "kilo": r"\kilo",
    "milli": r"\milli", "micro": r"\micro", "nano": r"\nano", "pico": r"\pico",
    "kibi": r"\kibi", "mebi": r"\mebi", "gibi": r"\gibi", "tebi": r"\tebi", "pebi": r"\pebi",
}
_SI_UNIT = {
    "byte": r"\byte", "bit": r"\bit", "second": r"\second", "watt": r"\watt", "joule": r"\joule",
    "hertz": r"\hertz", "flop": r"\flop", "token": r"\token", "parameter": r"\param",
    "minute": r"\minute", "hour": r"\hour", "percent": r"\percent", "dollar": r"\USD",
}
#: Declarations the LaTeX preamble needs for our own units.
SIUNITX_DECLARATIONS = (
    r"\DeclareSIUnit\flop{flop}",
    r"\DeclareSIUnit\token{token}",
    r"\DeclareSIUnit\tokens{tokens}",
    r"\DeclareSIUnit\param{param}",
    r"\DeclareSIUnit\params{parameters}",
    r"\DeclareSIUnit\USD{USD}",
)
#: The plural of a count unit after a number other than 1 (numbers.PLURALS in siunitx's terms).
_SI_PLURAL = {"token": r"\tokens", "parameter": r"\params"}


def siunitx(u: Any, plural: bool = False) -> str:
    """`kB/token` -> `\\kilo\\byte\\per\\token`; '' for dimensionless. `plural`: a leading count unit in the plural (`\\tokens\\per\\second`)."""
    parts = []
    items = sorted(as_unit(u).items, key=lambda kv: (kv[1] < 0, kv[0]))
    numerator = [name for name, exp in items if exp > 0]
    for name, exp in items:
        prefix, base = pintless.split_name(name)
        macro = _SI_PREFIX.get(prefix, "") + _SI_UNIT[base]
        if plural and numerator == [name] and exp == 1 and not prefix and base in _SI_PLURAL:
            macro = _SI_PLURAL[base]
        e = Fraction(exp)
        per = r"\per" if e < 0 else ""
        power = abs(e)
        suffix = "" if power == 1 else (r"\squared" if power == 2 else rf"\tothe{{{power}}}")
        parts.append(f"{per}{macro}{suffix}")
    return "".join(parts)


def mathrm(u: Any, plural: bool = False) -> str:
    """Plain unit text for Markdown math: `\\mathrm{kB/token}`; '' for dimensionless. `plural` as in `siunitx`."""
    text = as_unit(u).text
    head, sep, rest = text.partition("/")
    if plural and head in PLURALS:
        text = PLURALS[head] + sep + rest
    if text == "1":
        return ""
    if head == "1" and sep:  # a rate of things counted: 16.8 /s
        text = sep + rest
    text = text.replace("*", r"\cdot ").replace("µ", r"\mu ").replace("%", r"\%")
    return rf"\mathrm{{{text}}}"

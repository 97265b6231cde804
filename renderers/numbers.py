"""Rounding, significant figures and display units: the one place numbers are shaped.

A renderer never rounds anywhere else. Values arrive exact (a Fraction) or as a
float, with their unit; `display` picks the unit to show (the derivation's choice,
or an SI prefix that puts the mantissa in [1, 1000)) and `digits` the text. Units are
units.pintless's (pint-free, read from the same definitions), so numbers are shaped on
the light path too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..units import pintless

SIGNIFICANT_FIGURES = 3
#: Figures print shorter numbers: a value marked on a plot or filled into its title.
FIGURE_SIGNIFICANT_FIGURES = 3
#: exact integers up to this are printed in full (parameter counts, token counts)
MAX_EXACT_INTEGER = 10**13
#: A value this close to a whole number (relatively) is that whole number as printed: 0.99984 flop/B is 1, 7.9922 is 8.
WHOLE_TOLERANCE = 1e-3
#: A float this close (relatively) to a whole number is that whole number: the noise of float64 arithmetic (the compiled
#: evaluation, derivations.engine.numeric, gives 8,030,261,248.000002 parameters where the exact one gives 8,030,261,248).
FLOAT_NOISE = 1e-12
#: Unit words that take a plural after a number other than 1 ("8,192 tokens", "70,553,706,496 parameters", "tokens/s").
PLURALS = {"token": "tokens", "parameter": "parameters"}
_PREFIXES = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0))
_TIME_PREFIXES = (("", 0), ("m", -3), ("µ", -6), ("n", -9))
_PREFIXABLE = {"byte": "B", "flop": "flop", "watt": "W", "joule": "J"}
#: Ratios read as one number, never prefixed: an intensity is 1,167 flop/B, not 1.167 kflop/B.
_UNPREFIXED_RATIOS = {"1/B", "1/flop"}


@dataclass(frozen=True)
class Number:
    """A number ready to typeset: mantissa digits and an optional power of ten."""

    mantissa: str
    exponent: int | None = None


@dataclass(frozen=True)
class Shown:
    number: Number
    unit: pintless.Unit


def as_unit(u: Any) -> pintless.Unit:
    """A unit as units.pintless's: one already, a unit string, or a pint Unit (a renderer holding one of the glossary's)."""
    if isinstance(u, pintless.Unit):
        return u
    if isinstance(u, str):
        return pintless.unit(u)
    from ..units import unit_text  # a pint Unit: only a caller that already imported pint passes one

    return pintless.unit(unit_text(u))


def display(exact: Any, u: Any, preferred: str | None = None, figures: int = SIGNIFICANT_FIGURES, exact_unit: bool = False) -> Shown:
    """The value as it should be shown (`_display`); `u` is a light Unit, a unit string or a pint Unit."""
    return _display(_fraction(exact), as_unit(u), preferred, figures, exact_unit)


@lru_cache(maxsize=8192)
def _display(value: Fraction | float, u: pintless.Unit, preferred: str | None = None, figures: int = SIGNIFICANT_FIGURES,
             exact_unit: bool = False) -> Shown:
    """The value as it should be shown: an SI prefix that puts the mantissa in [1, 1000).

    `preferred` (a sheet's display unit) names the unit family and wins when
    its mantissa is already in range, or when no prefix applies (counts).
    `figures`: significant figures (see `digits`): more where a point needs them (the argument of a floor: 161.99, not 162).
    `exact_unit`: always in `preferred` (a table column shows one unit on every row).
    Memoized: a sheet shows the same value in its steps, tables and JSON.
    """
    if exact_unit and preferred:
        target = pintless.unit(preferred)
        return Shown(digits(pintless.convert(value, u, target), figures), target)
    if preferred:
        target = pintless.unit(preferred)
        converted = pintless.convert(value, u, target)
        magnitude = abs(converted)  # exact: a Fraction past a float's range compares without overflowing
        if magnitude == 0 or 1 <= magnitude < 1000:
            return Shown(digits(converted, figures), target)
        value, u = converted, target
    target = _auto_unit(value, u)
    if preferred and target == u.base():
        # no prefixed unit fits (0.56 J/token has no prefix below 1 here): the sheet's unit reads better than base units (s*W/token)
        target = pintless.unit(preferred)
    return Shown(digits(pintless.convert(value, u, target), figures), target)


def digits(value: Fraction | int | float, figures: int = SIGNIFICANT_FIGURES) -> Number:
    """Three significant figures, trailing zeros dropped; whole numbers whole; powers of ten outside [1e-3, 1e6).

    An exact integer prints in full (8,030,261,248 parameters), and so does a float within FLOAT_NOISE of one (the
    same value from the compiled evaluation). Below 100, where three figures would show decimals, a value within
    WHOLE_TOLERANCE of a whole number prints as that number (0.99984 -> 1, 7.9922 -> 8).
    """
    if isinstance(value, (int, Fraction)) and Fraction(value).denominator == 1 and abs(value) < MAX_EXACT_INTEGER:
        return Number(str(int(value)))
    whole_float = float_whole(value)
    if whole_float is not None:
        return Number(str(whole_float))
    x = float(value)
    if x == 0:
        return Number("0")
    whole = round(x)
    if figures == SIGNIFICANT_FIGURES and whole != 0 and abs(x - whole) <= WHOLE_TOLERANCE * abs(x) and abs(x) < 10 ** (figures - 1):
        return Number(str(int(whole)))
    magnitude = abs(x)
    if 1e-3 <= magnitude < 1e6:
        places = figures - 1 - math.floor(math.log10(magnitude))
        rounded = round(x, places)
        if abs(rounded) >= 10.0 ** (figures - places):  # 9.996 rounds up to 10.0: one figure fewer after the point
            places -= 1
            rounded = round(x, places)
        if places <= 0:
            return Number(str(int(rounded)))
        text = f"{rounded:.{places}f}".rstrip("0").rstrip(".")
        return Number(text)
    mantissa, exponent = f"{x:.{figures - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return Number(mantissa, int(exponent))


def float_whole(value: object) -> int | None:
    """The whole number a float stands for when it is one up to float noise (FLOAT_NOISE) and below MAX_EXACT_INTEGER; else None."""
    if not isinstance(value, float) or not math.isfinite(value) or abs(value) >= MAX_EXACT_INTEGER:
        return None
    nearest = round(value)
    return int(nearest) if abs(value - nearest) <= FLOAT_NOISE * abs(value) else None


def is_whole(value: object) -> bool:
    """Whether a value is a whole number: an exact integer (sympy, int, Fraction), or a float within float noise of one."""
    if isinstance(value, float):
        return float_whole(value) is not None
    if isinstance(value, int | Fraction):
        return Fraction(value).denominator == 1
    return bool(getattr(value, "is_Integer", False))


def unit_word(text: str, number: Number) -> str:
    """A unit as words after `number`: its leading count noun plural unless the number is 1 ("tokens/s", "parameters"); a
    rate of things counted, "1/s", as "/s" (16.8 /s)."""
    head, sep, rest = text.partition("/")
    if head == "1" and sep:
        return sep + rest
    if head in PLURALS and not _is_one(number):
        return PLURALS[head] + sep + rest
    return text


#: A unit as running text reads with a centred dot and superscripts: `flop/(parameter·token)`, `token²`.
#: A unit's plain spelling as running text shows it (the site's and a live page's: roofline/live.js)
READABLE = (("*", "·"), ("^2", "²"), ("^3", "³"))


def readable_unit(text: str) -> str:
    for plain_, shown in READABLE:
        text = text.replace(plain_, shown)
    return text


def _is_one(n: Number) -> bool:
    return n.exponent is None and n.mantissa in ("1", "-1")


def _fraction(exact: Any) -> Fraction | float:
    if isinstance(exact, float):
        whole = float_whole(exact)
        return exact if whole is None else Fraction(whole)  # a float count stays exact through the unit conversion
    if isinstance(exact, Fraction):
        return exact
    if isinstance(exact, int):
        return Fraction(exact)
    if getattr(exact, "is_Rational", False):  # a sympy Rational (a caller of the exact evaluation: the quiz, a check)
        return Fraction(int(exact.p), int(exact.q))
    return float(exact)


def _auto_unit(value: Fraction | float, u: pintless.Unit) -> pintless.Unit:
    base = u.base()
    magnitude = abs(pintless.convert(value, u, base))
    if magnitude == 0:
        return u  # zero has no scale to prefix: 0 s, not the smallest prefix's 0 ns
    positive = [(n, e) for n, e in base.items if e > 0]
    if len(positive) != 1 or positive[0][1] != 1:
        return base
    name = positive[0][0]
    rest = (base / pintless.Unit(((name, 1),))).text
    if name == "second" and rest == "1":
        for prefix, power in _TIME_PREFIXES:
            if magnitude >= Fraction(10) ** power or prefix == "n":
                return pintless.unit(f"{prefix}s")
    if name in _PREFIXABLE and magnitude > 0 and rest not in _UNPREFIXED_RATIOS:
        for prefix, power in _PREFIXES:
            if magnitude >= Fraction(10) ** power:
                symbol = _PREFIXABLE[name]
                return pintless.unit(f"{prefix}{symbol}" if rest == "1" else f"{prefix}{symbol}*({rest})")
    return base


def plain(exact: Any, u: Any, preferred: str | None = None, figures: int = SIGNIFICANT_FIGURES) -> str:
    """'4.48 ms': plain text, for the CLI's `show` (and a figure's marks); a count unit in the plural ('8,192 tokens')."""
    s = display(exact, u, preferred, figures)
    text = s.unit.text
    return number_text(s.number) if text == "1" else f"{number_text(s.number)} {unit_word(text, s.number)}"


def number_text(n: Number) -> str:
    """Plain text: integer digits grouped in threes with commas from four digits on (decimals never grouped)."""
    if n.exponent is None:
        whole, dot, frac = n.mantissa.partition(".")
        sign = "-" if whole.startswith("-") else ""
        digits_ = whole.lstrip("-")
        return sign + (f"{int(digits_):,}" if len(digits_) >= 4 else digits_) + dot + frac
    return f"{n.mantissa}e{n.exponent}"


def whole_count(counts: str, rounds: str | None, x: float) -> int | None:
    """A count's value as the whole number a reader runs: None when it is not a count (`counts`, the step's noun, is empty);
    the nearest whole number when it is one to rounding error; else rounded as the step says (`rounds`: "up", "down")."""
    if not counts or not math.isfinite(x):
        return None
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * max(1.0, abs(x)):
        return int(nearest)
    return {"up": math.ceil, "down": math.floor}.get(rounds or "", round)(x)


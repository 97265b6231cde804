"""Units without pint: parse, print and convert the project's units from `definitions.txt` alone.

`units.registry` builds a pint registry, and importing pint costs about 0.15 s. A hot code path that only
needs to read a unit string, print it, or convert a number between two units can use this module instead:
it reads the same `definitions.txt` with a small parser of its own (the file's simple grammar, nothing else
of pint's), imports only the standard library, and keeps every factor an exact `fractions.Fraction`.

Everything here answers as the pint registry does (`tests/units/test_light.py` checks it against pint):

- `unit(text)` parses what `units.registry.unit(text)` parses, to the same full unit names
  ("TB" -> terabyte, "us" -> microsecond), and `Unit.text` prints what `units.registry.unit_text` prints;
- `parse_quantity(text)` reads "3.35 TB/s" to the same exact magnitude pint's `ureg.Quantity(text)` gives.

It understands less than pint does, on purpose: anything outside its small grammar raises `LightUnitError`
(a `ValueError`), and the caller then asks pint, whose answer (or error) is the reference. It never
evaluates text as Python.

Grammar of a unit string: names (a unit's name, symbol or alias, optionally after one prefix's name,
symbol or alias: "TB", "terabyte", "Tbyte", "µs", "us"; a unit's name or alias of two or more letters
also in the plural with "s": "tokens", "mins"), "%", the number 1 and "dimensionless"; `*` and `/`
(left to right, as in Python); `**N` or `^N` with a nonzero integer N, optionally signed and optionally
in parentheses (`s**-1`, `s^(-1)`), or a fraction of two whole numbers in parentheses (`s^(1/2)`, as pint's
unit text writes a root); parentheses. Spaces and tabs around these are ignored (other
whitespace, such as a line break, is refused); a space between two names (pint reads it as a product) is
refused, as are chains of powers (`s**2**2`), a fraction outside parentheses, and other numbers than 1. The empty
string and "1" are dimensionless.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from pathlib import Path
from typing import NamedTuple

from .errors import RooflineError

__all__ = ["DEFINITIONS", "LightUnitError", "Unit", "convert", "factor", "parse_quantity", "split_name", "symbol", "unit"]

#: The project's unit definitions: the same file `units.registry` gives pint.
DEFINITIONS = Path(__file__).with_name("definitions.txt")

#: An exponent: an int, or a Fraction for a fractional power (`Unit ** Fraction(1, 2)`).
Exponent = int | Fraction
#: (name, exponent) pairs, sorted by name, no zero exponents.
Items = tuple[tuple[str, Exponent], ...]


class LightUnitError(RooflineError, ValueError):
    """Anything the light parser does not understand (or a conversion between different dimensions).

    The light path (roofline.compiled) then leaves the run to the full path, whose answer or error is the reference;
    where a renderer meets one (a unit no sheet has), the command says it in one line.
    """


class _Prefix(NamedTuple):
    name: str  # "tera"; "" for no prefix
    symbol: str  # "T"
    factor: Fraction


class _Definition(NamedTuple):
    name: str  # "byte"
    symbol: str  # "B" ("flop" when the file gives none)
    factor: Fraction  # of this unit in base units
    base: tuple[tuple[str, int], ...]  # base units and exponents: joule -> (("second", 1), ("watt", 1))


@dataclass(frozen=True)
class _Registry:
    prefixes: dict[str, _Prefix]  # every spelling (name, symbol, alias; "" first) -> prefix, in the file's order
    units: dict[str, _Definition]  # every spelling (name, symbol, alias) -> unit, in the file's order
    dimensions: dict[str, str]  # base unit name -> its dimension ("byte" -> "[information]")


# -- expressions -------------------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""[ \t]*(?:
        (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[\w.]*)  # a decimal literal, with whatever is glued to it
      | (?P<name>[^\W\d]\w*)                                      # an identifier
      | (?P<op>\*\*|[*/^()+\-%])
    )""",
    re.VERBOSE,
)
_INTEGER = re.compile(r"[1-9][0-9]*")


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs: kind is "number", "name" or "op"; LightUnitError on any other character."""
    out = []
    pos, end = 0, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if not text[pos:].strip(" \t"):
                break
            raise LightUnitError(f"unit expression {text!r}: cannot read {text[pos:pos + 10]!r}")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


#: A parsed term: an exact scale and unit names (full names, or base names in definitions) with exponents.
_Term = tuple[Fraction, dict[str, Exponent]]
#: How a parser turns a name into a term.
_NameResolver = Callable[[str], _Term]


class _Parser:
    """Recursive descent over `_tokens`: products, quotients, integer powers, parentheses.

    `numbers`: any decimal number is a factor (the definitions file: "1e3", "60 * second"); otherwise
    only the number 1 is (a unit string: "1/s"). `name` turns a name into a term.
    """

    def __init__(self, text: str, numbers: bool, name: _NameResolver) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0
        self.numbers = numbers
        self.name = name

    def error(self, why: str) -> LightUnitError:
        return LightUnitError(f"unit expression {self.text!r}: {why}")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise self.error("ends too early")
        self.pos += 1
        return token

    def parse(self) -> _Term:
        if not self.tokens:
            return Fraction(1), {}
        result = self.expression()
        left = self.peek()
        if left is not None:
            raise self.error(f"unexpected {left[1]!r} (a product needs `*`)")
        return result

    def expression(self) -> _Term:
        scale, items = self.power()
        while (token := self.peek()) is not None and token in (("op", "*"), ("op", "/")):
            self.pos += 1
            other_scale, other = self.power()
            sign = 1 if token[1] == "*" else -1
            scale = scale * other_scale if sign == 1 else scale / other_scale
            items = _combine(items, other, sign)
        return scale, items

    def power(self) -> _Term:
        scale, items = self.atom()
        token = self.peek()
        if token in (("op", "**"), ("op", "^")):
            self.pos += 1
            exponent = self.exponent()
            if self.peek() in (("op", "**"), ("op", "^")):
                raise self.error("a chain of powers")
            scale, items = scale**exponent, {n: e * exponent for n, e in items.items()}
        return scale, items

    def exponent(self) -> Exponent:
        """A nonzero integer, or in parentheses a fraction of two (`s^(1/2)`, as pint's unit text writes a root)."""
        parenthesized = self.peek() == ("op", "(")
        if parenthesized:
            self.pos += 1
        sign = 1
        if self.peek() in (("op", "-"), ("op", "+")):
            sign = -1 if self.take()[1] == "-" else 1
        kind, text = self.take()
        if kind != "number" or not _INTEGER.fullmatch(text):
            raise self.error(f"exponent {text!r} is not a nonzero integer")
        value: Exponent = int(text)
        if parenthesized and self.peek() == ("op", "/"):
            self.pos += 1
            kind, below = self.take()
            if kind != "number" or not _INTEGER.fullmatch(below):
                raise self.error(f"exponent {text}/{below} is not a fraction of whole numbers")
            value = _exponent(Fraction(int(text), int(below)))
        if parenthesized and self.take() != ("op", ")"):
            raise self.error("unbalanced parentheses")
        return sign * value

    def atom(self) -> _Term:
        kind, text = self.take()
        if (kind, text) == ("op", "("):
            result = self.expression()
            if self.take() != ("op", ")"):
                raise self.error("unbalanced parentheses")
            return result
        if (kind, text) == ("op", "%"):
            return self.name("%")
        if kind == "name":
            return self.name(text)
        if kind == "number":
            if text == "1":
                return Fraction(1), {}
            if self.numbers:
                try:
                    return Fraction(text), {}
                except ValueError:
                    pass
            raise self.error(f"the number {text!r} (a unit string has no numbers but 1)")
        raise self.error(f"unexpected {text!r}")


def _combine(a: dict[str, Exponent], b: dict[str, Exponent], sign: int) -> dict[str, Exponent]:
    out = dict(a)
    for name, exp in b.items():
        total = out.get(name, 0) + sign * exp
        if total:
            out[name] = total
        else:
            out.pop(name, None)
    return out


# -- the definitions file ----------------------------------------------------------------------------------------------


def _read_definitions(lines: Iterable[str]) -> _Registry:
    """Parse the definitions grammar: prefixes `name- = factor = symbol- [= alias-]`, base units
    `name = [dimension] [= symbol [= alias]]`, derived units `name = expression [= symbol [= alias]]`."""
    prefixes: dict[str, _Prefix] = {"": _Prefix("", "", Fraction(1))}
    units: dict[str, _Definition] = {}
    dimensions: dict[str, str] = {}

    def known(name: str) -> _Term:
        definition = units.get(name)
        if definition is None:
            raise LightUnitError(f"{DEFINITIONS.name}: {name!r} is used before it is defined")
        return definition.factor, dict(definition.base)

    def add(table: dict, spellings: list[str], value: object) -> None:
        for spelling in spellings:
            if spelling in table:
                raise LightUnitError(f"{DEFINITIONS.name}: {spelling!r} is defined twice")
            table[spelling] = value

    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [p.strip() for p in line.split("=")]
        if len(parts) < 2 or not all(parts) or line.startswith("@"):
            raise LightUnitError(f"{DEFINITIONS.name}:{number}: cannot read {raw.strip()!r}")
        name, value, names = parts[0], parts[1], parts[2:]
        if name.endswith("-"):  # a prefix
            spellings = [name, *names]
            if not all(s.endswith("-") for s in spellings):
                raise LightUnitError(f"{DEFINITIONS.name}:{number}: a prefix's symbol and aliases end with '-'")
            spellings = [s[:-1] for s in spellings]
            scale, items = _Parser(value, numbers=True, name=known).parse()
            if items:
                raise LightUnitError(f"{DEFINITIONS.name}:{number}: a prefix is a number")
            symbol = spellings[1] if len(spellings) > 1 and spellings[1] != "_" else ""
            add(prefixes, [s for s in spellings if s != "_"], _Prefix(spellings[0], symbol, scale))
            continue
        symbol = names[0] if names and names[0] != "_" else name
        if re.fullmatch(r"\[\w+\]", value):  # a base unit
            if value in dimensions.values():
                raise LightUnitError(f"{DEFINITIONS.name}:{number}: dimension {value} has two base units")
            dimensions[name] = value
            definition = _Definition(name, symbol, Fraction(1), ((name, 1),))
        else:
            scale, items = _Parser(value, numbers=True, name=known).parse()
            definition = _Definition(name, symbol, scale, tuple(sorted((n, int(e)) for n, e in items.items())))
        add(units, [s for s in (name, *names) if s != "_"], definition)
    return _Registry(prefixes, units, dimensions)


@lru_cache(maxsize=1)
def _registry() -> _Registry:
    """The definitions, read on first use (an unreadable file raises LightUnitError on every call, never at import)."""
    try:
        text = DEFINITIONS.read_text(encoding="utf-8")
    except OSError as err:
        raise LightUnitError(f"cannot read {DEFINITIONS}: {err}") from err
    return _read_definitions(text.splitlines())


# -- names -------------------------------------------------------------------------------------------------------------

#: pint's plural suffixes: "" and "s" (a stem of one character takes no plural: "Bs" is not bytes).
_SUFFIXES = ("", "s")


@lru_cache(maxsize=4096)
def _candidates(spelling: str) -> tuple[tuple[_Prefix, _Definition], ...]:
    """Every reading of `spelling` as prefix + unit + plural suffix, in pint's order (`ureg.parse_unit_name`):
    suffixes "" then "s", prefixes in the file's order, and a prefixed reading preferred to an unprefixed unit
    of the same full name."""
    reg = _registry()
    found: dict[tuple[str, str], tuple[_Prefix, _Definition]] = {}
    for suffix in _SUFFIXES:
        if not spelling.endswith(suffix):
            continue
        for prefix_spelling, prefix in reg.prefixes.items():
            if not spelling.startswith(prefix_spelling):
                continue
            stem = spelling[len(prefix_spelling):]
            if suffix:
                stem = stem[: -len(suffix)]
                if len(stem) == 1:
                    continue
            definition = reg.units.get(stem)
            if definition is not None:
                found.setdefault((prefix.name, definition.name), (prefix, definition))
    for prefix_name, unit_name in list(found):
        if prefix_name:
            found.pop(("", prefix_name + unit_name), None)
    return tuple(found.values())


def _reading(spelling: str) -> tuple[_Prefix, _Definition]:
    candidates = _candidates(spelling)
    if not candidates:
        raise LightUnitError(f"{spelling!r} is not a unit of {DEFINITIONS.name}")
    return candidates[0]


@lru_cache(maxsize=4096)
def _full_name(spelling: str) -> str:
    """pint's canonical name of one unit token (`ureg.get_name`): "TB" -> "terabyte", "%" -> "percent"."""
    definition = _registry().units.get(spelling)
    if definition is not None:
        return definition.name
    prefix, definition = _reading(spelling)
    return prefix.name + definition.name


@lru_cache(maxsize=4096)
def _parts(name: str) -> tuple[_Prefix, _Definition]:
    """The prefix and unit of a full unit name ("terabyte"); LightUnitError for anything that is not one."""
    prefix, definition = _reading(name)
    if prefix.name + definition.name != name:
        raise LightUnitError(f"{name!r} is not a full unit name (its full name is {prefix.name + definition.name!r})")
    return prefix, definition


def split_name(name: str) -> tuple[str, str]:
    """(prefix name, unit name) of a unit name, as pint's `ureg.parse_unit_name(name)[0][:2]`.

    "terabyte" -> ("tera", "byte"); "TB" -> ("tera", "byte"); "second" -> ("", "second").
    """
    prefix, definition = _reading(name)
    return prefix.name, definition.name


def symbol(name: str) -> str:
    """A unit's symbol, as pint's `ureg.get_symbol(name)`: "terabyte" -> "TB", "microsecond" -> "µs",
    "teraflop" -> "Tflop" (a unit without a symbol prints its name: "parameter")."""
    prefix, definition = _reading(name)
    return prefix.symbol + definition.symbol


# -- units -------------------------------------------------------------------------------------------------------------


def _exponent(exp: Exponent) -> Exponent:
    exp = Fraction(exp)
    return exp.numerator if exp.denominator == 1 else exp


@dataclass(frozen=True)
class Unit:
    """A product of unit powers, as pint's `Unit._units`: (full unit name, exponent) pairs sorted by name.

    Built by `unit("kB/token")` or from other Units with `*`, `/` and `**`. Construction sorts the pairs,
    merges repeated names and drops zero exponents; a name must be a full unit name ("terabyte", not "TB").
    """

    items: Items = ()

    def __post_init__(self) -> None:
        merged: dict[str, Exponent] = {}
        for name, exp in self.items:
            if not isinstance(name, str) or isinstance(exp, bool) or not isinstance(exp, int | Fraction):
                raise LightUnitError(f"unit item {(name, exp)!r}: expected (full unit name, int or Fraction exponent)")
            _parts(name)
            merged[name] = merged.get(name, 0) + exp
        items = tuple(sorted((n, _exponent(e)) for n, e in merged.items() if e != 0))
        object.__setattr__(self, "items", items)

    @cached_property
    def text(self) -> str:
        """Plain text, exactly as `units.registry.unit_text`: "B/s", "flop/(parameter*token)", "µs", "token^2", "1"."""
        pos = [(name, exp) for name, exp in self.items if exp > 0]
        neg = [(name, -exp) for name, exp in self.items if exp < 0]

        def term(name: str, exp: Exponent) -> str:
            shown = symbol(name)
            if exp == 1:
                return shown
            e = Fraction(exp)
            return f"{shown}^{e.numerator}" if e.denominator == 1 else f"{shown}^({e})"

        num = "*".join(term(n, e) for n, e in pos) or "1"
        if not neg:
            return num
        den = "*".join(term(n, e) for n, e in neg)
        return f"{num}/({den})" if len(neg) > 1 else f"{num}/{den}"

    @cached_property
    def _base_items(self) -> dict[str, Exponent]:
        out: dict[str, Exponent] = {}
        for name, exp in self.items:
            _, definition = _parts(name)
            out = _combine(out, {base: e * exp for base, e in definition.base}, 1)
        return out

    @cached_property
    def dimensionality(self) -> tuple[tuple[str, Exponent], ...]:
        """(dimension, exponent) pairs sorted by dimension, as pint's `dict(u.dimensionality)`: "J/token" ->
        (("[power]", 1), ("[time]", 1), ("[token]", -1)); () when dimensionless (percent too)."""
        dimensions = _registry().dimensions
        return tuple(sorted((dimensions[base], _exponent(exp)) for base, exp in self._base_items.items()))

    @cached_property
    def factor(self) -> Fraction:
        """The exact factor of this unit in base units: 1 TB = 10**12 B, 1 min = 60 s, 1 b = 1/8 B, 1 % = 1/100; a root of
        a unit where it is exact (s^(1/2) is 1, (MB)^(1/2) is 1000 B^(1/2)), else LightUnitError."""
        out = Fraction(1)
        for name, exp in self.items:
            prefix, definition = _parts(name)
            f = prefix.factor * definition.factor
            if isinstance(exp, int):
                out *= f**exp
            else:
                out *= _exact_root(f**exp.numerator, exp.denominator, self.text)
        return out

    def base(self) -> Unit:
        """The base units of this unit, as pint's `Quantity(1, u).to_base_units().units`: kB/token -> B/token, J -> s*W."""
        return Unit(tuple(self._base_items.items()))

    @property
    def dimensionless(self) -> bool:
        """Whether the unit has no dimension ("1", "%", "B/kB")."""
        return not self.dimensionality

    def __mul__(self, other: object) -> Unit:
        if not isinstance(other, Unit):
            return NotImplemented
        return Unit(self.items + other.items)

    def __truediv__(self, other: object) -> Unit:
        if not isinstance(other, Unit):
            return NotImplemented
        return Unit(self.items + tuple((n, -e) for n, e in other.items))

    def __pow__(self, exp: object) -> Unit:
        if isinstance(exp, bool) or not isinstance(exp, int | Fraction):
            return NotImplemented
        return Unit(tuple((n, e * exp) for n, e in self.items))

    def __str__(self) -> str:
        return self.text


def _exact_root(x: Fraction, k: int, text: str) -> Fraction:
    """The rational k-th root of x, where it has one; LightUnitError where it has none (pint would give a float)."""
    def root(n: int) -> int:
        r = round(n ** (1.0 / k)) if n > 0 else 0
        for c in (r - 1, r, r + 1):
            if c >= 0 and c**k == n:
                return c
        raise LightUnitError(f"{text}: a root with no exact factor")

    if x < 0:
        raise LightUnitError(f"{text}: a root of a negative factor")
    return Fraction(root(x.numerator), root(x.denominator))


def _token_term(spelling: str) -> _Term:
    if spelling == "dimensionless":
        return Fraction(1), {}
    return Fraction(1), {_full_name(spelling): 1}


#: Whitespace other than spaces and tabs: pint reads a line break as Python's tokenizer does (indentation and all).
_OTHER_SPACE = re.compile(r"[^\S \t]")


def _check_spaces(text: object) -> None:
    if not isinstance(text, str):
        raise LightUnitError(f"expected a string, found {type(text).__name__}")
    if _OTHER_SPACE.search(text):
        raise LightUnitError(f"{text!r}: only spaces and tabs are read as whitespace")


@lru_cache(maxsize=4096)
def unit(text: str) -> Unit:
    """Parse a unit string as `units.registry.unit` does: "B/s", "flop/(parameter*token)", "µs", "us", "1", "".

    LightUnitError for anything outside this module's grammar (see the module's docstring); the caller then
    asks pint. Each distinct string is parsed once.
    """
    _check_spaces(text)
    scale, items = _Parser(text, numbers=False, name=_token_term).parse()
    if scale != 1:  # only the number 1 is read, so this cannot happen; kept as pint's own rule
        raise LightUnitError(f"unit expression {text!r} has a scaling factor")
    return Unit(tuple(items.items()))


def factor(src: Unit, dst: Unit) -> Fraction:
    """The exact factor from `src` to `dst`: x src == x * factor(src, dst) dst. LightUnitError when the
    dimensions differ ("B" to "s")."""
    if src.dimensionality != dst.dimensionality:
        raise LightUnitError(f"cannot convert from {src.text} to {dst.text}: different dimensions")
    return src.factor / dst.factor


def convert(value: int | Fraction | float, src: Unit, dst: Unit) -> Fraction | float:
    """`value` in `src` as a number in `dst`.

    An int or a Fraction gives an exact Fraction. A float is converted with ONE rounding: the exact product
    `Fraction(value) * factor` rounded once to the nearest float (pint multiplies by the factor rounded to a
    float first, so its answer can differ from this one in the last bit). A product past the float range is
    ±inf; an inf or nan stays itself (every factor is positive).
    """
    f = factor(src, dst)
    if isinstance(value, float):
        if not math.isfinite(value):
            return value
        try:
            return float(Fraction(value) * f)
        except OverflowError:
            return math.copysign(math.inf, value)
    if isinstance(value, bool) or not isinstance(value, int | Fraction):
        raise TypeError(f"convert: expected an int, Fraction or float, found {type(value).__name__}")
    return Fraction(value) * f


#: A plain decimal literal: optional sign, ASCII digits (no leading zeros: pint's tokenizer reads "08" as 0 times 8),
#: an optional fraction with digits after the point, an optional exponent.
_LITERAL = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?P<exponent>[eE][+-]?[0-9]+)?")


def parse_quantity(text: str) -> tuple[Fraction, Unit]:
    """Read "3.35 TB/s", "0.5ms", "1e-3 s", "8", "2 flop/(parameter*token)" as (exact magnitude, unit).

    Only a plain decimal literal (optional sign, digits, optional fraction, optional exponent) followed by an
    optional unit string (see `unit`), with or without a space between them; the magnitude is `Fraction(literal)`,
    the value pint's `ureg.Quantity(text)` gives with this project's registry. Anything else ("1/2 ms",
    "1,000 s", "nan", "inf", "0x10", "1_000 s", "- 3 s", ".5 s", "") raises LightUnitError, and so does a literal
    with an exponent glued to a unit starting with j or J ("1e3J": Python's tokenizer, which pint uses, reads
    an imaginary number there).
    """
    _check_spaces(text)
    stripped = text.strip(" \t")
    m = _LITERAL.match(stripped)
    if m is None:
        raise LightUnitError(f"quantity {text!r}: expected a decimal number first")
    rest = stripped[m.end():]
    if rest and rest[0] not in " \t":
        glued = rest[0]
        if not (glued.isalpha() or glued in "%("):
            raise LightUnitError(f"quantity {text!r}: cannot read {rest[:10]!r} after the number")
        if m.group("exponent") and glued in "jJ":
            raise LightUnitError(f"quantity {text!r}: a number with an exponent glued to {glued!r} (pint reads an imaginary number)")
    return Fraction(m.group()), unit(rest.strip(" \t"))

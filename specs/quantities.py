"""Parse spec values: a string with a unit, checked for dimension, sign and finiteness."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pint

from specs.errors import SpecError, shown
from units import Quantity, unit, unit_text, ureg

MAX_VALUE_LENGTH = 100
#: Every value read (a spec field, a scenario input, a measurement) lies within this magnitude of 1 in its field's unit (the
#: base units s, B, B/s, flop/s, token, W, ...), or is zero where zero is allowed: past any real chip, model or scenario by many
#: orders, and far inside a float, so no product a sheet forms or unit it converts to overflows. "1e300 TB/s" is refused here.
MAX_MAGNITUDE = Fraction(10**30)
MIN_MAGNITUDE = 1 / MAX_MAGNITUDE
# A spec value is a plain decimal number then a unit; pint never evaluates the number.
_NUMBER_AND_UNIT = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?)\s*([A-Za-z%µ][A-Za-z0-9_*/()^. µ%-]*)?$")


def parse_quantity(value: object, expected: str, where: str | Path, field: str, *, allow_zero: bool = False) -> pint.Quantity:
    """`value` (e.g. "3.35 TB/s") as a Quantity in units convertible to `expected`.

    Raises SpecError naming `where` and `field` for a non-string, a parse
    error, a wrong dimension, a zero or negative value, NaN or inf.
    """
    want = unit(expected)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SpecError(where, field, f"expected a quantity in {unit_text(want)}, found {shown(value)}")
    if isinstance(value, (int, float)):
        if not want.dimensionless:
            raise SpecError(where, field, f"expected a string with a unit convertible to {unit_text(want)} (e.g. \"{_example(want)}\"), found the bare number {shown(value)}")
        text = repr(value)
    else:
        text = value.strip()
    if len(text) > MAX_VALUE_LENGTH:
        raise SpecError(where, field, f"expected a quantity in {unit_text(want)}, found a {len(text)}-character string")
    match = _NUMBER_AND_UNIT.match(text)
    if not match:
        raise SpecError(where, field, f"expected a number and a unit convertible to {unit_text(want)} (e.g. \"{_example(want)}\"), found {shown(value)}")
    number, unit_part = match.group(1), (match.group(2) or "").strip()
    if not math.isfinite(float(number)):
        raise SpecError(where, field, f"expected a finite quantity in {unit_text(want)}, found {shown(value)}")
    try:
        units_found = ureg.parse_units(unit_part) if unit_part else ureg.dimensionless
    except (pint.errors.PintError, ValueError, TypeError, SyntaxError, AssertionError, AttributeError, KeyError, IndexError) as err:
        raise SpecError(where, field, f"expected units convertible to {unit_text(want)}, found {shown(value)} ({_reason(err)})") from None
    q = Quantity(Fraction(Decimal(number)), units_found)
    if not isinstance(q, pint.Quantity):
        q = Quantity(q, ureg.dimensionless)
    if q.dimensionality != want.dimensionality:
        raise SpecError(where, field, f"expected units convertible to {unit_text(want)}, found {shown(value)} ({unit_text(q.units)})")
    check_sign(q.magnitude, want, where, field, shown(value), allow_zero=allow_zero)
    q = q.to(want)
    if q.magnitude != 0 and not MIN_MAGNITUDE <= abs(Fraction(q.magnitude)) <= MAX_MAGNITUDE:
        what = "a number from 1e-30 to 1e30" if want.dimensionless else f"a quantity from 1e-30 to 1e30 {unit_text(want)}"
        raise SpecError(where, field, f"expected {what} (the range every value is read in), found {shown(value)}")
    return q


def check_sign(magnitude: object, want: pint.Unit, where: str | Path, field: str, found: str, *, allow_zero: bool = False) -> None:
    """Refuse a negative magnitude (and zero unless `allow_zero`): the sign rule of every spec value and user input."""
    if magnitude < 0 or (magnitude == 0 and not allow_zero):  # type: ignore[operator]
        raise SpecError(where, field, f"expected a positive quantity in {unit_text(want)}, found {found}")


def _reason(err: Exception) -> str:
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return text[:80]


def _example(want: pint.Unit) -> str:
    return f"1 {unit_text(want)}"

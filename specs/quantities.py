"""Parse spec values: a string with a unit, checked for dimension, sign and finiteness."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pint

from ..units import Quantity, unit, unit_text, ureg
from ..units.errors import unknown_unit
from .errors import SpecError, shown
from .literal import MAX_MAGNITUDE, MAX_VALUE_LENGTH, MIN_MAGNITUDE, NUMBER_AND_UNIT, rate_units


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
            raise SpecError(where, field, f"expected a string with a unit convertible to {unit_text(want)} (e.g. \"1 {unit_text(want)}\"), found the bare number {shown(value)}")
        text = repr(value)
    else:
        text = value.strip()
    if len(text) > MAX_VALUE_LENGTH:
        raise SpecError(where, field, f"expected a quantity in {unit_text(want)}, found a {len(text)}-character string")
    match = NUMBER_AND_UNIT.match(text)
    if not match:
        raise SpecError(where, field, f"expected {_expected(want)}, found {shown(value)}")
    number, unit_part = match.group(1), rate_units((match.group(2) or "").strip())
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
    if isinstance(err, pint.errors.UndefinedUnitError) and len(err.unit_names) == 1:
        return unknown_unit(str(next(iter(err.unit_names)))[:40])
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return text[:80]


def _expected(want: pint.Unit) -> str:
    """What a value must be, with an example: 'a number and a unit convertible to ms (e.g. "1 ms")', or for a plain number
    (a count, a ratio) 'a plain number (e.g. "8")', never a unit of '1'."""
    if want.dimensionless:
        return 'a plain number (e.g. "8")'
    text = unit_text(want)
    return f'a number and a unit convertible to {text} (e.g. "{text if text.startswith("1/") else "1 " + text}")'

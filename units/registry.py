"""The one unit registry of the project, built from `definitions.txt`.

Magnitudes parse as `fractions.Fraction`, so "3.35 TB/s" is exactly 67/20 TB/s
and conversions stay exact until a renderer rounds.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pint

DEFINITIONS = Path(__file__).with_name("definitions.txt")

ureg = pint.UnitRegistry(
    str(DEFINITIONS),
    non_int_type=Fraction,
    autoconvert_offset_to_baseunit=False,
    auto_reduce_dimensions=False,
)
Quantity = ureg.Quantity
Unit = ureg.Unit

#: Base units of every dimension the project knows; `si_value` in JSON uses them.
BASE_UNITS: dict[str, str] = {
    "[information]": "B",
    "[compute]": "flop",
    "[token]": "token",
    "[parameter]": "parameter",
    "[time]": "s",
    "[length]": "m",
    "[mass]": "kg",
}


def unit(text: str) -> pint.Unit:
    """Parse a unit string such as "B/s" or "flop/(parameter*token)"."""
    return ureg.parse_units(text) if text not in ("1", "") else ureg.dimensionless


def to_base(q: pint.Quantity) -> pint.Quantity:
    """Express `q` in the project's base units (B, flop, token, parameter, s, kg, m)."""
    return q.to_base_units()

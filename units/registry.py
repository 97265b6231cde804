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


def unit(text: str) -> pint.Unit:
    """Parse a unit string such as "B/s" or "flop/(parameter*token)"."""
    return ureg.parse_units(text) if text not in ("1", "") else ureg.dimensionless

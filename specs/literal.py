"""What a value read from a spec or an input looks like before its unit is parsed: one rule, imported by the pint parser
(specs.quantities) and by the light path (roofline.compiled), which reads inputs without pint. Standard library only."""

from __future__ import annotations

import re
from fractions import Fraction

MAX_VALUE_LENGTH = 100
#: Every value read (a spec field, a scenario input, a measurement) lies within this magnitude of 1 in its field's unit (the
#: base units s, B, B/s, flop/s, token, W, ...), or is zero where zero is allowed: past any real chip, model or scenario by many
#: orders, and far inside a float, so no product a sheet forms or unit it converts to overflows. "1e300 TB/s" is refused here.
MAX_MAGNITUDE = Fraction(10**30)
MIN_MAGNITUDE = 1 / MAX_MAGNITUDE
#: A spec value is a plain decimal number then a unit; pint never evaluates the number.
def rate_units(unit_part: str) -> str:
    """A unit part as read: a rate written "/s" ("2/s", "2 /s": 2 per second) is "1/s"; anything else unchanged."""
    return "1" + unit_part if unit_part.startswith("/") else unit_part


NUMBER_AND_UNIT = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?)\s*((?:/\s*)?[A-Za-z%µ][A-Za-z0-9_*/()^. µ%-]*)?$")

"""Units: the pint registry with our own dimensions, and unit inference for sympy.

The sympy half (`check_unit`, `infer_unit`) is imported on first use, so that
code needing only pint (loading a spec, `roofline show`) never imports sympy.
"""

from typing import Any

from units.errors import RooflineError, UnitMismatchError
from units.registry import Quantity, Unit, loads, same_unit, unit, unit_text, ureg

_SYMBOLIC = ("check_unit", "infer_unit")

__all__ = [
    "Quantity",
    "RooflineError",
    "Unit",
    "UnitMismatchError",
    "check_unit",
    "infer_unit",
    "loads",
    "same_unit",
    "unit",
    "unit_text",
    "ureg",
]


def __getattr__(name: str) -> Any:
    if name in _SYMBOLIC:
        from units import symbolic

        return getattr(symbolic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

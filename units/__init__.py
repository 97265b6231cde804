"""Units: the pint registry with our own dimensions, and unit inference for sympy."""

from units.errors import RooflineError, UnitMismatchError
from units.registry import Quantity, Unit, unit, ureg
from units.symbolic import check_unit, infer_unit, same_unit, unit_text

__all__ = [
    "Quantity",
    "RooflineError",
    "Unit",
    "UnitMismatchError",
    "check_unit",
    "infer_unit",
    "same_unit",
    "unit",
    "unit_text",
    "ureg",
]

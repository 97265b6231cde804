"""Units: the pint registry with our own dimensions, and unit inference for sympy.

Only the errors are imported with the package: the pint half (`ureg`,
`unit`, ...) is imported on first use, so that the errors alone (and a
`roofline derive` answered by the light path, roofline.compiled) never import pint; the
sympy half (`check_unit`, `infer_unit`) likewise, so that code needing only
pint (loading a spec, `roofline show`) never imports sympy.
"""

from typing import TYPE_CHECKING, Any

from .errors import RooflineError, UnitMismatchError

if TYPE_CHECKING:
    from .registry import Quantity, Unit, loads, same_unit, unit, unit_text, ureg
    from .symbolic import check_unit, infer_unit

#: where each lazily imported name lives
_LAZY = {**dict.fromkeys(("Quantity", "Unit", "loads", "same_unit", "unit", "unit_text", "ureg"), ".registry"),
         **dict.fromkeys(("check_unit", "infer_unit"), ".symbolic")}

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
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # loaded once; later lookups find it here
    return value

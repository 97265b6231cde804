"""roofline: the physics of LLM inference as unit-checked sympy derivations.

The front door, loaded on first use so that `import roofline` stays light:

- `derive` a sheet for a chip and a model, with inputs as Python values; every
  value of the sheet converts to a pint Quantity (`sheet.results["t_step"].to("us")`);
- `sweep` one result over a grid of inputs, as named numpy arrays with units;
- `hardware` and `model`: the specs, their figures pint Quantities;
- `render` a sheet as Markdown, LaTeX or JSON;
- check your own derivation: `check`, `solve`, `evaluate`, `latex`, `symbols`,
  `declare`, `glossary` (see `roofline.formulas`);
- `grade` an answer (a formula or a number) against a sheet's result (see `roofline.grading.answer`);
- `ureg`, the project's pint registry (bytes, flops, tokens and parameters are
  dimensions of their own); build Quantities for `inputs` with it.

Errors are `RooflineError`s (also `ValueError`s): one line naming the input,
file or field.

>>> import roofline
>>> sheet = roofline.derive("decode-floor", hardware="h200", model="llama-3.1-8b",
...                         inputs={"batch": 16})
>>> str(sheet.results["t_floor"]), round(sheet.results["t_floor"].m_as("us"))
('3.13 ms', 3127)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
#: The day this version was cut (ISO 8601): the book's title page prints it, so two builds of one version print the same date.
#: Bump it with `__version__` (and pyproject.toml's version).
RELEASE_DATE = "2026-12-01"

#: The layers below the front door. Installed, each is a folder inside this one (roofline/units/, ...), so roofline claims
#: no import name but its own; in a checkout they are the folders beside it (units/, ...), which `_Checkout` maps.
LAYERS = ("units", "specs", "derivations", "renderers")


class _Checkout:
    """Finds `roofline.units` and the other layers in the folders beside roofline/ in a checkout (a meta path finder:
    https://docs.python.org/3/reference/import.html#the-meta-path); installed, they are inside roofline/ and it is not used."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if fullname.startswith("roofline.") and fullname[9:] in LAYERS:
            from importlib.machinery import PathFinder

            return PathFinder.find_spec(fullname, [self.root])
        return None


def _in_a_checkout() -> None:
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if not os.path.isdir(os.path.join(here, "units")) and all(os.path.isfile(os.path.join(root, layer, "__init__.py")) for layer in LAYERS):
        if not any(isinstance(f, _Checkout) for f in sys.meta_path):
            sys.meta_path.insert(0, _Checkout(root))


_in_a_checkout()

if TYPE_CHECKING:  # for type checkers and readers; at run time each name loads on first use (`__getattr__`)
    from .api import InputValue, derive, hardware, model, render, render_sweep, sweep
    from .derivations.engine.run import Missing, NoValueError, Sheet, Value
    from .formulas import check, declare, evaluate, glossary, latex, solve, symbols
    from .grading.answer import grade
    from .renderers.sweep_table import SweepTable
    from .units import RooflineError, ureg

#: where each lazily loaded name lives
_LAZY = {
    **dict.fromkeys(("derive", "sweep", "hardware", "model", "render", "render_sweep", "InputValue"), "roofline.api"),
    **dict.fromkeys(("check", "declare", "evaluate", "glossary", "latex", "solve", "symbols"), "roofline.formulas"),
    **dict.fromkeys(("Sheet", "Value", "Missing", "NoValueError"), "roofline.derivations.engine.run"),
    "SweepTable": "roofline.renderers.sweep_table",
    "grade": "roofline.grading.answer",
    **dict.fromkeys(("ureg", "RooflineError"), "roofline.units"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # loaded once; later lookups (and pdoc, which reads the module's namespace) find it here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# in reading order, not sorted: pdoc's API page lists the members in this order
__all__ = [  # noqa: RUF022
    "derive", "sweep", "hardware", "model", "render", "render_sweep",
    "check", "solve", "evaluate", "latex", "symbols", "declare", "glossary", "grade",
    "Sheet", "Value", "Missing", "NoValueError", "SweepTable", "InputValue", "ureg", "RooflineError", "__version__",
]

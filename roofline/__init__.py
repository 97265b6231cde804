"""roofline: the physics of LLM inference as unit-checked sympy derivations.

Check your own derivation (see roofline.formulas): `glossary()`, `symbols()`,
`declare()`, `check()`, `solve()`, `latex()`, `evaluate()`; grade an answer
against a sheet's result (see roofline.grader): `grade()`; errors are
`RooflineError`s. They load on first use, so `import roofline` stays light.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: the formula front door (roofline.formulas), re-exported here on first use
_FORMULAS = ("check", "declare", "evaluate", "glossary", "latex", "solve", "symbols")


def __getattr__(name: str) -> Any:
    if name in _FORMULAS:
        from roofline import formulas

        return getattr(formulas, name)
    if name == "grade":
        from roofline.grader import grade

        return grade
    if name == "RooflineError":
        from units import RooflineError

        return RooflineError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RooflineError", "__version__", "check", "declare", "evaluate", "glossary", "grade", "latex", "solve", "symbols"]

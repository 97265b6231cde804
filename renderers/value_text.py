"""Values as running text for one target: a value with its unit, a count as the whole number a reader runs (with its
noun), why a value is missing; and a path or unit LaTeX may break after a slash.

Plain data only, like renderers.view: a sheet's values and its blueprint's entries, no sympy and no pint.
"""

from __future__ import annotations

import re

from ..derivations.engine import prose
from ..derivations.engine.blueprint import StepEntry
from ..derivations.engine.numeric import Missing
from ..derivations.engine.run import Value
from ..units import pintless
from .numbers import Number, Shown, display, float_whole, whole_count
from .targets import Target


def shown(v: Value) -> Shown:
    return display(v.exact, v.unit, v.display_unit)


DIMENSIONLESS = pintless.unit("1")
#: Crossovers in these symbols (glossary names) are physically whole numbers: what the crossover is.
COUNTS = {"B": "batch", "S": "prompt", "T": "context", "q": "number of tokens per step"}
#: How a count was made whole, said once where counts are printed.
ROUNDING_WORDS = {"up": "rounded up", "down": "rounded down", "nearest": "rounded to the nearest whole number"}


def value_text(v: Value, target: Target) -> str:
    """A value as running text: the number with its unit, or 'none: reason' / 'n/a: reason' (a table's or a claim's note)."""
    return missing_text(v.missing, target) if v.missing else target.quantity_text(shown(v))


def missing_text(m: Missing, target: Target) -> str:
    """'none: reason': a closed form's reason is the derivation's prose (it may hold math); a spec's is literal text."""
    return target.text(f"{m.kind}: ") + reason_text(m, target)


def reason_text(m: Missing, target: Target) -> str:
    """Why a value is missing, as text for `target`."""
    if m.prose:
        return prose.render(m.reason, target.text, target.inline_math, {}, None, target.link)
    return target.text(m.reason)


# --- counts ---------------------------------------------------------------------------------------------


def whole(step: StepEntry, v: Value) -> int | None:
    """A count's value as the whole number a reader runs (None when the step is not a count or has no value)."""
    if not step.counts or v.exact is None:
        return None
    return whole_count(step.counts, step.rounds, v.float)


def is_count(n: int | None, x: object) -> bool:
    """Whether the value `x` is the whole number `n` (a float from the compiled evaluation: up to its noise)."""
    return n is not None and (x == n or (isinstance(x, float) and float_whole(x) == n))


def count_shown(step: StepEntry, v: Value) -> Shown | None:
    """A count shown as a whole number in its display unit; None for anything else."""
    n = whole(step, v)
    if n is None:
        return None
    s = shown(v)
    if s.unit.text == v.unit:
        return Shown(Number(str(n)), s.unit)
    return Shown(Number(str(n)), pintless.unit(v.unit))


def count_noun(step: StepEntry, v: Value) -> str:
    """The noun a dimensionless count takes after its number ("242 sequences"); '' when its unit says it already (tokens)."""
    if not step.counts or v.unit != "1":
        return ""
    n = whole(step, v)
    return step.counts[:-1] if n == 1 and step.counts.endswith("s") else step.counts


def step_value_text(step: StepEntry, v: Value, target: Target) -> str:
    """A step's value as running text: a count whole, with its noun."""
    c = count_shown(step, v)
    if c is None:
        return value_text(v, target)
    noun = count_noun(step, v)
    return target.quantity_text(c) + (target.text(" " + noun) if noun else "")


def breakable_paths(text: str, target: Target) -> str:
    """LaTeX may break a long path or a unit after each slash (specs/measurements/profiles/fitted.toml in a narrow column)."""
    return re.sub(r"/(?=\w)", r"/\\allowbreak{}", text) if target.name == "tex" else text

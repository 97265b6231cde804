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
from .numbers import Number, Shown, display, float_whole, number_text, plain, unit_word, whole_count
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


#: The fewest significant figures a count's value prints to where it is not whole, so the fraction a reader rounds shows:
#: "295.3, so 296 sequences".
COUNT_FIGURES = 4
#: The most: a value within 1e-6 of a whole number that is not one prints to this many figures ("295.000001").
COUNT_MOST_FIGURES = 12


def unrounded(step: StepEntry, v: Value) -> Shown | None:
    """A count's value before it is made whole, to as many figures as show it is not ("295.3", "1,079.6", "295.02",
    "1,113,429.9"): how every place that gives the fraction prints it (a step's result line, a claim). None for a whole count
    or any other value."""
    figures = unrounded_figures(step, v)
    if figures is None:
        return None
    s = display(v.exact, v.unit, v.display_unit, figures=figures)
    if s.number.exponent is None:
        return s
    # a count of a million or more: in full, its decimals after it (a power of ten would hide the whole number it rounds to)
    x = float(pintless.convert(v.exact, pintless.unit(v.unit), s.unit))  # type: ignore[arg-type]
    text = next((t for k in range(1, 7) if (t := f"{x:.{k}f}").rstrip("0")[-1] != "."), f"{x:.7f}")
    return Shown(Number(text), s.unit)


def unrounded_figures(step: StepEntry, v: Value) -> int | None:
    """The significant figures `unrounded` prints a count that is not whole to; None for a whole count or any other value."""
    n = whole(step, v)
    if n is None or is_count(n, v.exact):
        return None
    size = len(str(int(abs(v.float))))
    for figures in range(max(COUNT_FIGURES, size + 1), max(COUNT_MOST_FIGURES, size + 6) + 1):
        s = display(v.exact, v.unit, v.display_unit, figures=figures)
        if s.number.exponent or "." in s.number.mantissa:
            return figures
    return max(COUNT_MOST_FIGURES, size + 6)


def count_plain(step: StepEntry, v: Value) -> str:
    """A step's value as plain text the way its equation ends: '4.48 ms'; a count '296 sequences', or '295.3, so 296
    sequences' where it is not whole (the terminal, the JSON's `shown`)."""
    c = count_shown(step, v)
    if c is None:
        return plain(v.exact, v.unit, v.display_unit)
    noun = count_noun(step, v)
    text = _plain_shown(c) + (f" {noun}" if noun else "")
    fraction = unrounded(step, v)
    return text if fraction is None else f"{_plain_shown(fraction)}, so {text}"


def _plain_shown(s: Shown) -> str:
    return number_text(s.number) + ("" if s.unit.text == "1" else f" {unit_word(s.unit.text, s.number)}")


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

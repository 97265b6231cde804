"""A step as printed: its displayed equation (symbol = formula = numbers = result), the lead-in after its sentence (how a
closed form was found and checked, the whole count a reader runs, or why it has no value), and its sentence without an
opening that repeats its heading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..derivations.engine.blueprint import StepEntry
from ..derivations.engine.run import SolvedStep, Value
from .figure_refs import step_title
from .forms import StepForm, at_latex, structural
from .numbers import Shown, display, is_whole
from .printed import MAX_LINE_WIDTH, Pieces, Printed, fill, math_width
from .targets import Target
from .value_text import COUNTS, ROUNDING_WORDS, count_noun, count_shown, reason_text, shown, unrounded


def equation(step: SolvedStep, form: StepForm, names: Mapping[str, str], target: Target) -> tuple[str, list[dict[str, str]]]:
    """(left side, rows) of a step's displayed equation: symbol = formula (= numbers) (= result).

    Each row is {"op": "=", "math": ...} or, for a long sum broken over lines, {"op": "", "math": "+ ..."}. A numbers line
    that would not fit even broken is left out (the given values are in the appendix); nothing is shrunk.
    """
    at = step.step.kind == "at"
    # a term of a sum with a factor that is zero here (a dense model's routed experts, L_MoE = 0) is not printed
    zero = frozenset(n for n, v in step.operands.items() if not v.missing and v.exact == 0)
    if at:
        rows = [{"op": "=", "math": at_latex(form, names)}]
    else:
        rows = _rows(equation_lines(form, zero))
    formula = rows[0]["math"] if len(rows) == 1 else None
    if step.value.missing:
        return step.latex, rows
    rounded = set(form.rounded)
    numbers = {n: names[n] if v.missing else target.quantity_math(_operand_shown(v, n in rounded)) for n, v in step.operands.items()}
    result = result_math(step, target)
    # the numbers line without the terms an operand at 0 removes or the factors one at a plain 1 makes identities: the formula with
    # those values put in (renderers.forms.StepForm.numbers_at), so no "(1 - 0)", "0 · 4,096" or "1 · x" is printed
    zeros, ones = structural(step)
    shown_numbers = form.numbers_at(zeros, ones) if (zeros or ones) and not at else form.numbers
    live = live_cases(shown_numbers)
    if at:
        substituted = [at_latex(form, numbers)]
    elif len(live) == 1 and shown_numbers.symbols:
        # a case split with one case that has a value: the step has one, so that case applies, and only it is printed
        substituted = [fill(live[0], numbers)]
    elif shown_numbers.symbols and not (form.formula.cases and len(rows) > 1):
        # a case split printed a case a line reads its value in the case that applies: no numbers line of every case
        substituted = shown_numbers.lines(numbers)
    else:
        substituted = []
    substituted = [whole_roundings(line) for line in substituted]
    fits = all(math_width(line) <= MAX_LINE_WIDTH for line in substituted)
    if substituted and fits and substituted[0] not in (result, formula) and len(substituted) <= 4:
        rows += _rows(substituted)
    rows.append({"op": "=", "math": result})
    return step.latex, rows


#: The line a formula too wide to print (one term, with no sum to break) is said by.
TOO_WIDE = r"\text{a formula too wide to print here (the JSON holds it)}"


def equation_lines(form: StepForm, zero: frozenset[str] = frozenset()) -> list[str]:
    """A step's formula as its equation prints it, the terms that are zero where the symbols in `zero` are left out: a
    line, a long sum a term a line, a wide case split a case a line; one term too wide for the line, with no sum to break
    (a fraction, a product), said, not shrunk."""
    lines = form.formula.lines({}, zero=zero)
    return [TOO_WIDE] if len(lines) == 1 and math_width(lines[0]) > MAX_LINE_WIDTH else lines


def result_math(step: SolvedStep, target: Target) -> str:
    """A step's value as its equation's last line: the value; for a count that is not whole, where the whole number a reader
    runs comes from, once ("295.3, so 296 sequences")."""
    fraction = unrounded(step.step, step.value)
    if fraction is None:
        return target.quantity_math(shown(step.value))
    count = count_shown(step.step, step.value)
    assert count is not None  # a count that is not whole has a whole number
    noun = count_noun(step.step, step.value)
    return (target.quantity_math(fraction) + r",\ \text{so}\ " + target.quantity_math(count)
            + (rf"\ \text{{{noun}}}" if noun else ""))


#: The value of a case that has none ("no value otherwise"), as renderers.printer prints it.
NO_VALUE = r"\text{no value}"


def live_cases(p: Printed) -> list[Pieces]:
    """The values of a case split's cases that have one (a solved step with a value is in one of them)."""
    return [value for value, _ in p.cases if "".join(x for x in value if isinstance(x, str)).strip() != NO_VALUE]


#: a whole number as a numbers line prints it (digits grouped with "{,}" or ",", no decimals, no unit)
_WHOLE = r"-?\d+(?:(?:\{,\}|,)\d{3})*"
_ROUNDED_WHOLE = re.compile(r"\\left\\l(ceil|floor)\{(" + _WHOLE + r")\}\\right\\r\1")
_ROUNDED_FRACTION = re.compile(r"\\left\\l(ceil|floor)\{\\frac\{(" + _WHOLE + r")\}\{(" + _WHOLE + r")\}\}\\right\\r\1")


def whole_roundings(line: str) -> str:
    """A numbers line without the identity roundings its numbers make: the ceiling or floor of a whole number is that number,
    and of a fraction of whole numbers that divides exactly, that fraction ("⌈8⌉" prints 8, "⌈8/2⌉" prints 8/2)."""
    def fraction(m: re.Match[str]) -> str:
        a, b = (int(re.sub(r"\D", "", x)) * (-1 if x.startswith("-") else 1) for x in (m.group(2), m.group(3)))
        return rf"\frac{{{m.group(2)}}}{{{m.group(3)}}}" if b and a % b == 0 else m.group(0)
    return _ROUNDED_WHOLE.sub(lambda m: m.group(2), _ROUNDED_FRACTION.sub(fraction, line))


#: Significant figures of a value inside a floor or ceiling, where three would hide which side of a whole number it is.
ROUNDING_FIGURES = 6


def _operand_shown(v: Value, more: bool) -> Shown:
    if more and v.exact is not None and not is_whole(v.exact):
        return display(v.exact, v.unit, v.display_unit, figures=ROUNDING_FIGURES)
    return shown(v)


def _rows(lines: Sequence[str]) -> list[dict[str, str]]:
    return [{"op": "=" if i == 0 else "", "math": line} for i, line in enumerate(lines)]


def step_lead(step: SolvedStep, form: StepForm, names: Mapping[str, str], target: Target) -> str:
    """What comes after a step's sentence: how a closed form was found and checked, its whole count; or why it has no value."""
    s = step.step
    if step.value.missing:
        return target.text("No value here: ") + reason_text(step.value.missing, target) + target.text(".")
    figures = target.text(f" Inside the {form.rounding} the value has {ROUNDING_FIGURES} significant figures, to show which side of a "
                          "whole number it falls.") if _rounds_an_operand(step, form) else ""
    if s.kind != "solve":
        return (_whole_lead(step, target) + figures).lstrip()
    how = "symbolically and numerically" if s.verified == "symbolic" else "numerically at random points"
    lead = target.text("Set ") + target.inline_math(f"{names[s.lhs]} = {names[s.rhs]}") \
        + target.text(" and solve for ") + target.inline_math(names[s.for_]) + target.text(f" (checked {how}).")
    return lead + _whole_lead(step, target) + figures


def _rounds_an_operand(step: SolvedStep, form: StepForm) -> bool:
    """Whether the step's numbers line shows an operand of a floor or ceiling with more figures (it is not whole)."""
    if step.value.missing:
        return False
    inside = set(form.rounded)
    return any(v.exact is not None and not is_whole(v.exact) for n, v in step.operands.items() if n in inside)


def _whole_lead(step: SolvedStep, target: Target) -> str:
    """For a count whose value is not whole: how the whole number a reader runs was made (the number itself is on the
    equation's last line, result_math)."""
    s, v = step.step, step.value
    if unrounded(s, v) is None:
        return ""
    what = COUNTS.get(s.for_) if s.kind == "solve" else None
    if what and s.rounds == "down":
        return target.text(f" Rounded down to a whole number: the largest {what} within it.")
    if what:
        return target.text(f" Rounded up to a whole number: the first {what} at or past it.")
    words = ROUNDING_WORDS[s.rounds]
    return target.text(f" {words.capitalize()}{'' if 'whole' in words else ' to a whole number'}.")


def step_lines(step: SolvedStep, form: StepForm, names: Mapping[str, str], target: Target) -> tuple[str, list[str]]:
    """(lead-in text, math lines): 'symbol = formula', then each further right-hand side (broken sums joined)."""
    lhs, rows = equation(step, form, names, target)
    lines: list[str] = []
    for row in rows:
        if row["op"] or not lines:
            lines.append(row["math"])
        else:
            lines[-1] += " " + row["math"]
    lines[0] = f"{lhs} = {lines[0]}"
    return step_lead(step, form, names, target), lines


def step_why(step: StepEntry) -> str:
    """The step's sentence, without an opening that only repeats its heading ("Step time. The step time: ..." reads "... ")."""
    title = _words(step_title(step))
    m = re.match(r"(?:The |A )?([^.:;]*)[.:;]\s+", step.why)
    if m and _words(m.group(1)) == title and m.end() < len(step.why):
        rest = step.why[m.end():]
        return rest[:1].upper() + rest[1:]
    return step.why


def _words(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()

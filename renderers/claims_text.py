"""Each claim as text: its verdict, its two sides as read, where another reading of it holds, and where its verdict
changes on the other step of the step model; and the 'Worked for' line that says which step a sheet is worked on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..derivations.engine.blueprint import Blueprint
from ..derivations.engine.run import Sheet, Value
from .numbers import PLURALS, SIGNIFICANT_FIGURES, Shown, display
from .sheet_prose import Prose, either_words
from .targets import Target
from .value_text import breakable_paths, reason_text, shown, step_value_text, unrounded_figures, value_text


def claim_items(sheet: Sheet, target: Target, p: Prose, names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each claim's verdict with its two sides; a claim that fails where another reading of it holds says under which."""
    d = sheet.blueprint
    holding: dict[tuple[str, str, bool], list[str]] = {}
    for c, decl in zip(sheet.claims, d.claims, strict=True):
        if c.holds and decl.where is not None and p(decl.where.label):
            holding.setdefault((c.left_name, decl.right, decl.at_least), []).append(p(decl.where.label))
    out = []
    t = target.text
    for c, decl in zip(sheet.claims, d.claims, strict=True):
        verdict = {True: "holds", False: "does not hold", None: "cannot be checked"}[c.holds]
        only = holding.get((c.left_name, decl.right, decl.at_least), []) if c.holds is False else []
        detail = _claim_detail(c, decl, target, p, names)
        other = _other_step_note(sheet, c, target, names)
        # the claim's reading as sentences after it: where it is read and its two sides, where else its verdict changes
        sentence = _capital(detail, target) + t(".") + (t(" ") + _capital(other, target) + t(".") if other else "")
        if only:
            sentence += t(" It holds at ") + either_words(only, target) + t(".")
        out.append({"text": breakable_paths(p(c.text), target), "holds": c.holds, "verdict": verdict, "sentence": sentence})
    return out


def _capital(text: str, target: Target) -> str:
    """A clause as a sentence's start: its first letter in capitals where it opens with a lower-case word (not with math)."""
    return text[0].upper() + text[1:] if text[:1].islower() else text


def _serving_words(sheet: Sheet, output_len: Value, target: Target) -> str:
    """'each sequence's 2,048-token prompt computed within its 700 output tokens', from the sheet's prompt length."""
    prompt = next(i.value for i in sheet.inputs if i.name == "prompt_len")
    return (target.text("each sequence's ") + target.quantity_text(shown(prompt)) + target.text(" of prompt computed within its ")
            + target.quantity_text(shown(output_len)) + target.text(" of output"))


def step_label_text(sheet: Sheet, target: Target) -> str:
    """Which step a step-model sheet is worked on, as the 'Worked for' line says it; '' for a sheet without the step model."""
    t = target.text
    if sheet.step == "decode-only":
        label = t("on the decode-only step (no prompt joins the batch while it decodes; an output length above 0 gives the serving step)")
        other = next((c.other_step.output_len for c in sheet.claims if c.other_step is not None and c.other_step.output_len), None)
        if other is not None:  # the claims' other reading, said once here rather than in every claim
            label += t("; the claims are read on the serving step too, with ") + _serving_words(sheet, Value(other, "token"), target)
        return label
    if sheet.step == "serving":
        output = next(i.value for i in sheet.inputs if i.name == "output_len")
        label = t("on the serving step (") + _serving_words(sheet, output, target) + t(")")
        if any(c.other_step is not None for c in sheet.claims):
            label += t("; the claims are read on the decode-only step too (no prompt in the batch, the context held)")
        return label
    return ""


def positions_text(sheet: Sheet, target: Target) -> str:
    """Where the sheet's context is longer than its model was trained for, what the 'Worked for' line says of it; ''
    otherwise."""
    if sheet.past_positions is None:
        return ""
    context, limit = sheet.past_positions
    t = target.text
    return (t("at a context of ") + target.quantity_text(shown(context)) + t(f", past the {limit:,} positions ")
            + t(f"{sheet.setup.model.name} was trained for: its bytes and FLOPs are counted as if it ran there"))


def _other_step_note(sheet: Sheet, c: Any, target: Target, names: Mapping[str, str]) -> str:
    """Where a claim's verdict changes on the other step of the step model (its context held): which step it holds on and
    the value there; '' where both steps agree or one has no value."""
    o = c.other_step
    if o is None or o.holds is None or c.holds is None or o.holds == c.holds:
        return ""
    t = target.text
    other = t("the serving step") if o.output_len else t("the decode-only step")  # the 'Worked for' line says what each holds
    return t("on ") + other + t(" it holds: " if o.holds else " it does not hold: ") + _sides(o, sheet.blueprint, target, names)


def _claim_detail(c: Any, decl: Any, target: Target, p: Prose, names: Mapping[str, str]) -> str:
    """'at α = 0.8: σ* = 1.71, not the claimed 3' or, without a value, why it cannot be checked (once)."""
    t = target.text
    gone = next((v.missing for v in (c.left, c.right) if v.missing), None)
    at = p(c.where)
    convert = PLURALS.get(c.convert, c.convert)  # "read as numbers in tokens"
    where = ", ".join(x for x in (t("at ") + at if at else "", t(f"read as numbers in {convert}") if c.convert else "") if x)
    if gone is not None:
        return reason_text(gone, target) + (t(" (") + where + t(")") if where else "")
    return (where + t(": ") if where else "") + _sides(c, p.d, target, names)


#: the most significant figures a claim's sides are printed to, to tell apart two sides a failed claim says differ
MOST_FIGURES = 6


def _sides(c: Any, d: Blueprint, target: Target, names: Mapping[str, str]) -> str:
    """'σ* = 2.97 against the claimed 3' (it holds), 'σ = 2.03, not σ' = 1.99' (it does not): a claim's two sides as read."""
    t = target.text
    # a side that is a count not yet whole prints as its step's result line does, the fraction a reader rounds shown ("B* = 295.3
    # against I* = 295.3 flop/B", where the step says "295.3, so 296 sequences"), and the other side to as many figures
    counts = [f for n, v in ((c.left_name, c.left), (c.right_name, c.right)) if n and v.missing is None
              and (f := unrounded_figures(d.step(n), v)) is not None]
    figures = max([figures_apart(c), *counts])
    left = target.inline_math(names[c.left_name]) + t(" = ") + _read(d, c.left_name, c.left, target, figures)
    # a claim that holds reads its value against the claim; one that does not, its value and not the claim's
    versus = t(", not ") if c.holds is False else t(" against ")
    if c.right_name:
        return left + versus + target.inline_math(names[c.right_name]) + t(" = ") + _read(d, c.right_name, c.right, target, figures)
    return left + versus + t("the claimed ") + target.quantity_text(_shown(c.right, figures))


def figures_apart(c: Any) -> int:
    """The significant figures a claim's two sides print to: three, or as many as it takes (up to MOST_FIGURES) to show two
    sides apart that three figures print alike for a claim that does not hold (1.003 against the claimed 1, not 1 against 1)."""
    a, b = c.left, c.right
    if c.holds is not False or any(v is None or v.missing is not None or v.exact is None for v in (a, b)):
        return SIGNIFICANT_FIGURES
    for figures in range(SIGNIFICANT_FIGURES, MOST_FIGURES + 1):
        if _shown(a, figures) != _shown(b, figures):
            return figures
    return SIGNIFICANT_FIGURES


def _shown(v: Value, figures: int) -> Shown:
    return shown(v) if figures == SIGNIFICANT_FIGURES else display(v.exact, v.unit, v.display_unit, figures)


def _read(d: Blueprint, name: str, v: Value, target: Target, figures: int = SIGNIFICANT_FIGURES) -> str:
    """A side of a claim as the claim reads it: a count with its noun where it is whole, else the value itself (a threshold of
    1.006 tokens is checked as 1.01 against a claimed 1, not as the 2 tokens a reader runs), to `figures` figures."""
    if v.missing is None and v.float is not None and float(v.float).is_integer():
        return step_value_text(d.step(name), v, target)
    if figures != SIGNIFICANT_FIGURES and v.missing is None:
        return target.quantity_text(_shown(v, figures))
    return value_text(v, target)

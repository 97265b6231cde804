"""Turn a solved sheet into plain strings for one target; templates only lay them out."""

from __future__ import annotations

from typing import Any

import sympy as sp

from derivations.engine import Solve
from derivations.sheet import Sheet, SolvedStep, Value
from renderers.numbers import Shown, display
from renderers.targets import Target, latex_math
from units import unit_text


def shown(v: Value) -> Shown:
    return display(v.exact, v.unit, v.display_unit)


def value_text(v: Value, target: Target) -> str:
    """A value as running text: the number with its unit, or 'none: reason' / 'n/a: reason'."""
    return target.text(v.missing.label) if v.missing else target.quantity_text(shown(v))


def step_lines(step: SolvedStep, names: dict[sp.Symbol, str], target: Target) -> tuple[str, list[str]]:
    """(lead-in text, math lines) for one step: symbol = formula = numbers = result."""
    s = step.step
    formula = latex_math(s.expr, names)
    lines = [f"{step.latex} = {formula}"]
    if step.value.missing:
        lead = target.text(f"No value here ({step.value.missing.label}).")
        return lead, lines
    numbers = {sym: names[sym] if v.missing else target.quantity_math(shown(v)) for sym, v in step.operands.items()}
    substituted = latex_math(s.expr, numbers)
    result = target.quantity_math(shown(step.value))
    if s.expr.free_symbols and substituted != result:
        lines.append(substituted)
    lines.append(result)
    lead = ""
    if isinstance(s, Solve):
        lead = target.text("Set ") + target.inline_math(f"{names[sp.Symbol(s.lhs, positive=True)]} = {names[sp.Symbol(s.rhs, positive=True)]}") \
            + target.text(" and solve for ") + target.inline_math(names[s.for_]) \
            + target.text(f" (closed form checked against the equation {'symbolically and ' if s.verified == 'symbolic' else ''}numerically at random points):")
    return lead, lines


def build(sheet: Sheet, target: Target) -> dict[str, Any]:
    d = sheet.derivation
    names = dict(sheet.latex_names)
    values = {n: value_text(v, target) for n, v in _all_values(sheet).items()}
    t = target.text
    steps = []
    for st in sheet.steps:
        lead, lines = step_lines(st, names, target)
        steps.append({"name": target.code(st.step.name), "why": t(st.step.why), "lead": lead, "lines": lines})
    symbols = []
    seen = set()
    for info in d.symbols:
        if info.symbol in _used_symbols(sheet) and info.name not in seen:
            seen.add(info.name)
            symbols.append({"symbol": target.inline_math(info.latex), "unit": t(unit_text(info.unit)), "meaning": t(info.meaning)})
    return {
        "slug": target.code(d.slug),
        "title": t(d.title),
        "question": t(d.question),
        "context_label": t(sheet.context_label),
        "facts": [{"label": t(k), "value": t(v)} for k, v in sheet.spec_facts],
        "conventions": [t(c) for c in sheet.conventions],
        "assumptions": [t(a) for a in d.assumptions],
        "given": [
            {"symbol": target.inline_math(info.latex), "value": value_text(v, target), "meaning": t(info.meaning)}
            for info, v in sheet.bound
        ],
        "inputs": [
            {"name": target.code(i.name), "symbol": target.inline_math(i.info.latex), "value": target.quantity_text(shown(i.value)),
             "status": "set" if i.is_set else "default", "meaning": t(i.meaning)}
            for i in sheet.inputs
        ],
        "symbols": symbols,
        "steps": steps,
        "results": [
            {"name": target.code(n), "symbol": target.inline_math(d.symbols[n].latex), "value": value_text(v, target), "meaning": t(d.symbols[n].meaning)}
            for n, v in sheet.results.items()
        ],
        "claims": [
            {"text": t(c.text), "holds": c.holds, "verdict": {True: "holds", False: "does not hold", None: "cannot be checked"}[c.holds],
             "left": target.inline_math(names[sp.Symbol(c.left_name, positive=True)]) + " = " + value_text(c.left, target),
             "right": (target.inline_math(names[sp.Symbol(c.right_name, positive=True)]) + " = " if c.right_name else target.text("claimed ")) + value_text(c.right, target),
             "where": t(c.where + (f"; read as numbers in {c.convert}" if c.convert else ""))}
            for c in sheet.claims
        ],
        "tables": [
            {"title": t(tb.title), "note": t(tb.note),
             "headers": [target.inline_math(latex) for _, latex in tb.columns],
             "header_names": [t(n) for n, _ in tb.columns],
             "rows": [{"label": t(label), "cells": [_cell(c, target) for c in cells], "why": t(_row_why(cells, why))}
                      for label, cells, why in tb.rows]}
            for tb in sheet.tables
        ],
        "takeaways": [target.prose(x, values) for x in d.takeaways],
        "scoring": [t(x) for x in d.scoring],
        "limits": [t(x) for x in d.limits],
    }


def _cell(c: Value | None, target: Target) -> str:
    if c is None:
        return target.text("n/a")
    return target.text(c.missing.kind) if c.missing else target.quantity_text(shown(c))


def _row_why(cells: tuple[Value | None, ...], why: str) -> str:
    """The reasons a row has no value in some cells, each once."""
    reasons = [why] if why else []
    for c in cells:
        if c is not None and c.missing and c.missing.label not in reasons:
            reasons.append(c.missing.label)
    return "; ".join(reasons)


def _all_values(sheet: Sheet) -> dict[str, Value]:
    out = {st.step.name: st.value for st in sheet.steps}
    out.update({i.name: i.value for i in sheet.inputs})
    return out


def _used_symbols(sheet: Sheet) -> set[sp.Symbol]:
    used = {info.symbol for info, _ in sheet.bound} | {i.info.symbol for i in sheet.inputs}
    used |= {st.step.s for st in sheet.steps}
    return used

"""The data a sheet's page recomputes itself from in the browser (`site/plan.js`, `site/live.js`): the sheet's numeric plan, the
values its setup binds, its inputs with their units, domains and defaults, and how each step's value is printed.

`live.js` reads the inputs a reader types (each a form field named after its input, `name="batch"`), binds them as
`derivations.engine.run.input_magnitude` and `input_values` do (an input that follows another takes its value unless set; the
context of the serving step is the prompt plus half the output, `conventions.serving_context`), evaluates the plan with
`plan.js` (the same float64 rules as `derivations.engine.numeric`) and prints each step's value as `renderers.value_text.count_plain`
does: the unit each decade of a value is shown in (`display`) is carried here as a ladder, so the script only picks a rung and
rounds (`renderers.numbers.digits`). The chip, the model, the formats and the parallel layout's dp and ep stay the page's.
"""

from __future__ import annotations

import json
from fractions import Fraction
from importlib import resources
from typing import Any

from markupsafe import Markup

from .build_outputs import LIVE_SCRIPTS as SCRIPTS
from .derivations.engine import prose, run
from .derivations.engine.blueprint import BARE_NUMBER_UNITS, DOMAINS
from .derivations.engine.numeric import Missing, Plan
from .derivations.engine.run import Sheet, Value
from .grading import values as grading_values
from .practice import unit_table
from .renderers import site
from .renderers.figure_refs import step_title
from .renderers.numbers import digits, display, number_text, plain
from .renderers.value_text import count_plain
from .units import pintless

#: Decades of a step's value (in its own unit) whose display unit the ladder holds: 10^-LADDER_DECADES to 10^LADDER_DECADES.
LADDER_DECADES = 40
#: The layout inputs a live page does not offer: a data- or expert-parallel degree needs the model's layout check.
FIXED_INPUTS = ("dp", "ep")


def _plan_and_defaults(slug: str) -> tuple[Plan, dict[str, Fraction]]:
    """The sheet's plan and its inputs' defaults: stored (the light path's entry), else made from the derivation."""
    from . import compiled

    found = compiled.stored_plan(slug)
    if found is not None:
        return found
    from .derivations.engine.planning import plan_of
    from .derivations.engine.sheet import defaults_of
    from .derivations.questions import registry

    d = registry.get(slug)
    return plan_of(d), defaults_of(d)


def _value(v: Fraction | Missing) -> Any:
    return {"missing": True, "kind": v.kind, "reason": v.reason} if isinstance(v, Missing) else float(v)


def ladder(unit: str, preferred: str | None) -> dict[str, Any]:
    """How a value of `unit` is shown, by decade: [unit text, factor from `unit`] for 2·10^k, k from -LADDER_DECADES up, and
    for zero."""
    own = pintless.unit(unit)

    def rung(x: Fraction) -> list[Any]:
        s = display(x, unit, preferred)
        return [s.unit.text, float(pintless.factor(own, s.unit))]

    return {"from": -LADDER_DECADES, "rungs": [rung(2 * Fraction(10) ** k) for k in range(-LADDER_DECADES, LADDER_DECADES + 1)],
            "zero": rung(Fraction(0))}


def live_data(sheet: Sheet) -> dict[str, Any]:
    """What the page's scripts need to recompute `sheet` for other inputs (see the module docstring)."""
    bp, s = sheet.blueprint, sheet.setup
    plan, defaults = _plan_and_defaults(bp.slug)
    base = run.input_values(bp, s, plan.inputs, defaults)
    inputs = []
    for inp in bp.inputs:
        if inp.symbol not in plan.inputs or inp.name in FIXED_INPUTS:
            continue
        magnitude, given = run.input_magnitude(inp, s, defaults, bp.inputs)
        inputs.append({"name": inp.name, "symbol": inp.symbol, "unit": inp.unit, "meaning": inp.meaning,
                       "factor": float(run._factor(inp.unit, bp.symbol(inp.symbol).unit)), "value": float(magnitude), "set": given,
                       "follows": inp.follows or "", "domain": inp.domain, "domain_text": DOMAINS[inp.domain],
                       "bare": inp.unit in BARE_NUMBER_UNITS, "units": unit_table(inp.unit),
                       "integer": inp.domain in ("count", "whole")})
    ladders: dict[str, Any] = {}
    steps = {}
    for st in sheet.steps:
        key = f"{st.value.unit}|{st.value.display_unit or ''}"
        if key not in ladders:
            ladders[key] = ladder(st.value.unit, st.value.display_unit)
        steps[st.step.name] = {"counts": st.step.counts, "rounds": st.step.rounds or "", "ladder": key}
    return {"slug": bp.slug, "plan": plan.to_json(), "values": {k: _value(v) for k, v in base.items()}, "inputs": inputs,
            "steps": steps, "ladders": ladders, "results": list(bp.results), "number_pattern": grading_values._NUMBER.pattern,
            "claims": _claims(sheet), "fit": run.FIT_STEP if run.FIT_STEP in steps else ""}


def _claims(sheet: Sheet) -> list[dict[str, Any]]:
    """Each claim read at the sheet's own setup, as `run._read_claim` reads it: its sides' steps (or the claimed quantity), the
    factors that put both in one unit (`run.claim_sides`, linear in each side), the tolerance and whether it says "at least".
    A claim read at another setup (its `where`) is not recomputed."""
    out = []
    title = {st.step.name: prose.plain(step_title(st.step), sheet.blueprint.latex_names) for st in sheet.steps}
    for i, (c, decl) in enumerate(zip(sheet.claims, sheet.blueprint.claims, strict=True)):
        if decl.where is not None or c.left.missing or c.right.missing:
            continue
        left_factor, right_factor = run.claim_sides(decl, Value(1, c.left.unit), Value(1, c.right.unit))
        out.append({"index": i, "left": decl.left, "right": c.right_name,
                    "left_title": title.get(decl.left, decl.left), "right_title": title.get(c.right_name, ""), "constant": 0.0 if c.right_name else float(c.right.float),
                    "constant_text": "" if c.right_name else decl.right, "left_factor": float(left_factor),
                    "right_factor": float(right_factor), "at_least": decl.at_least, "rel_tol": decl.rel_tol})
    return out


def field_text(inp: dict[str, Any]) -> str:
    """An input's value on the page as its form field shows it: '64', '8,192', '55 µs' (a unit where a bare number is not one)."""
    if not inp["bare"]:
        return plain(inp["value"], inp["unit"], figures=6)
    return number_text(digits(Fraction(inp["value"]).limit_denominator(10**12) if inp["integer"] else inp["value"], 6))


def live_page(sheet: Sheet) -> site.Live:
    """A shipped sheet's page's live part: its data (a JSON block no text in it can close), its form's fields and its results."""
    data = live_data(sheet)
    bp = sheet.blueprint
    blob = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).replace("<", "\\u003c")
    fields = tuple((i["name"], field_text(i), i["meaning"]) for i in data["inputs"])
    by_name = bp.latex_names
    steps = {st.step.name: st for st in sheet.steps}
    results = tuple((name, prose.plain(step_title(steps[name].step), by_name), _text(steps[name])) for name in bp.results if name in steps)
    return site.Live(Markup(blob), fields, results, SCRIPTS)


def _text(st: Any) -> str:
    v = st.value
    if v.missing:
        return f"{v.missing.kind}: {v.missing.reason}"
    return count_plain(st.step, v)


def scripts() -> dict[str, str]:
    """The live pages' two scripts, by file name, as shipped beside this module."""
    return {name: resources.files(__package__).joinpath(name).read_text(encoding="utf-8") for name in SCRIPTS}


__all__ = ["LADDER_DECADES", "SCRIPTS", "field_text", "ladder", "live_data", "live_page", "scripts"]


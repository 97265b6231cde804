"""A solved sheet as JSON, in the stable contract of DESIGN.md.

`value` is in the unit a sheet shows (`unit`); `si_value` in base units (s, B,
flop, token, parameter, W, J). Floats are not rounded here. A step's value also
says how the sheet prints it (`shown`) and, for a count, the whole number every
mention of it uses (`whole`).
"""

from __future__ import annotations

import json
from typing import Any

from ..derivations.engine import prose
from ..derivations.engine.blueprint import StepEntry
from ..derivations.engine.run import FIT_STEP, Sheet, Value
from ..units import pintless
from . import forms as printed_forms
from .figure_refs import step_title
from .numbers import display
from .value_text import count_plain, whole

#: A product of power and time reads as energy.
_WATT_SECOND = pintless.unit("W*s")
_ENERGY = dict(_WATT_SECOND.items)
_JOULE = pintless.unit("J") / _WATT_SECOND


def si_unit_text(v: Value) -> str:
    base = pintless.unit(v.unit).base()
    exponents = dict(base.items)
    if all(exponents.get(k, 0) >= e for k, e in _ENERGY.items()):
        return (base * _JOULE).text
    return base.text


def quantity_json(v: Value) -> dict[str, Any]:
    """Value in the shown unit and in base units; `null` with the reason when there is none here. A value is converted
    from its own unit exactly and rounded once (units.pintless.convert)."""
    if v.missing:
        s_unit = pintless.unit(v.unit).text if v.display_unit is None else v.display_unit
        return {"value": None, "unit": s_unit, "si_value": None, "si_unit": si_unit_text(v), v.missing.kind: v.missing.reason}
    s = display(v.exact, v.unit, v.display_unit)
    own = pintless.unit(v.unit)
    return {
        "value": float(pintless.convert(v.exact, own, s.unit)),  # type: ignore[arg-type]
        "unit": s.unit.text,
        "si_value": float(pintless.convert(v.exact, own, own.base())),  # type: ignore[arg-type]
        "si_unit": si_unit_text(v),
    }


def shown_json(step: StepEntry, v: Value) -> dict[str, Any]:
    """A step's value as the sheets print it (`shown`: "4.48 ms", "295.3, so 296 sequences") and, for a count, the whole
    number a reader runs (`whole`), the one every other mention of it uses; nothing where it has no value."""
    if v.missing:
        return {}
    n = whole(step, v)
    return {"shown": count_plain(step, v), **({"whole": n} if n is not None else {})}


def sheet_json(sheet: Sheet) -> dict[str, Any]:
    d = sheet.blueprint
    f = printed_forms.of(sheet)
    ctx = sheet.setup
    by_name = d.latex_names

    def text(x: str) -> str:
        return prose.plain(x, by_name)

    def result(name: str, v: Value) -> dict[str, Any]:
        return {**quantity_json(v), **shown_json(d.step(name), v), "latex": f[name].latex, "expr": f[name].text}

    return {
        "slug": d.slug,
        "title": d.title,
        "question": d.question,
        "context": {
            "hardware": ctx.hardware.key,
            "hardware_name": ctx.hardware.name,
            "model": ctx.model.key,
            "model_name": ctx.model.name,
            **({"second_hardware": ctx.second_hardware.key, "second_hardware_name": ctx.second_hardware.name} if ctx.second_hardware else {}),
            **({"second_model": ctx.second_model.key, "second_model_name": ctx.second_model.name} if ctx.second_model else {}),
            "weights": ctx.weights.name,
            "weight_formats": {c: p.name for c, p in ctx.weights.formats},
            "kv": ctx.kv.name,
            "math": ctx.math.math,
            "engine": ctx.engine.name if ctx.engine is not None else "",
            **({"step": sheet.step} if sheet.step else {}),
            **({"past_positions": {"context": quantity_json(sheet.past_positions[0]), "max_position_embeddings": sheet.past_positions[1]}}
               if sheet.past_positions else {}),
            "inputs": {i.name: {**quantity_json(i.value), "default": not i.is_set} for i in sheet.inputs},
            "given": {info.name: quantity_json(v) for info, v in sheet.bound},
        },
        "fits": None if FIT_STEP not in d.step_names else sheet.overflow is None,
        "results": {n: result(n, v) for n, v in sheet.results.items()},
        "answer": [text(x) for x in d.answer],
        "argument": list(d.argument),
        "families": [list(f) for f in d.families],
        "steps": [
            {"name": st.step.name, "kind": st.step.kind, "title": text(step_title(st.step)), "why": text(st.step.why), "unit": st.value.unit,
             **({"verified": st.step.verified} if st.step.kind == "solve" else {}),
             **({"counts": st.step.counts, "rounds": st.step.rounds} if st.step.counts else {}),
             "printed": st.applies, **({"identity": st.identity.plain} if st.identity is not None else {}),
             "result": result(st.step.name, st.value)}
            for st in sheet.steps
        ],
        "sources": {what: list(links) for what, links in sheet.sources},
        "claims": [
            {"text": text(c.text), "holds": c.holds, "left": {"name": c.left_name, **quantity_json(c.left)},
             "right": {"name": c.right_name, **quantity_json(c.right)}, "where": c.where, **({"convert": c.convert} if c.convert else {}),
             **({"other_step": {"step": "serving" if c.other_step.output_len else "decode-only", "output_len": float(c.other_step.output_len),
                                "holds": c.other_step.holds, "left": quantity_json(c.other_step.left), "right": quantity_json(c.other_step.right)}}
                if c.other_step is not None else {})}
            for c in sheet.claims
        ],
        "tables": [
            {"title": t.title, "note": t.note, "columns": [n for n, _ in t.columns],
             "rows": [{"label": label, "values": {n: (quantity_json(c) if c is not None else None) for (n, _), c in zip(t.columns, cells, strict=True)},
                       **({"inputs": {name: quantity_json(v) for name, _, v in setting}} if setting else {}),
                       **({"fits": False} if over else {}),
                       **({"unavailable": why} if why else {})}
                      for (label, cells, why), setting, over in zip(t.rows, t.settings or [()] * len(t.rows),
                                                                    t.overflows or [False] * len(t.rows), strict=True)]}
            for t in sheet.tables
        ],
        "conventions": [text(x) for x in sheet.conventions],
        "assumptions": [text(x) for x in d.assumptions],
        "takeaways": [text(x) for x in d.takeaways],
        "scoring": [text(x) for x in d.scoring],
        "limits": [text(x) for x in d.limits],
    }


def render(sheet: Sheet) -> str:
    return json.dumps(sheet_json(sheet), indent=2, ensure_ascii=False, sort_keys=False) + "\n"

"""A grading verdict (`roofline.grading.verdict.Verdict`) as words: one line, then the details; or JSON.

The line says which verdict holds and why in a sentence a person would say
("off by a constant factor: 2*pi/beta is 2 x ridge_point; likely a 2:4-sparse
datasheet peak used as the dense one"); the details give the sheet's value in
the context, what the comparison assumed (identities, inputs held at the
context's values, the side each max() takes) and where an approximation stops
holding. Numbers are rounded here, in renderers.numbers, and nowhere else.
"""

from __future__ import annotations

import json
from typing import Any

import sympy as sp

from ..renderers.numbers import display, number_text, plain
from ..units import Quantity, unit, unit_text
from .verdict import Boundary, Cause, Term, Verdict

FORMATS = ("text", "json")
#: How each level of comparison is said (roofline.grading.formula.LEVELS).
SCOPES = {
    "general": "as written",
    "architecture": "for this model family",
    "pinned": "with the inputs it leaves out at this context's values",
    "context": "for this chip, model and precision",
}


def render(v: Verdict, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(as_json(v), indent=2, ensure_ascii=False) + "\n"
    return "\n".join([line(v), *details(v)]) + "\n"


# --- pieces ---------------------------------------------------------------------------------------------------------

def _value(x: sp.Expr | None, u: Any, preferred: str | None = None) -> str:
    return "no value" if x is None else plain(x, u, preferred)


def _sheet_value(v: Verdict) -> str:
    return _value(v.value, v.unit, v.display_unit)


def _lower(title: str) -> str:
    """A title inside a sentence: 'Step time' -> 'step time', but 'KV-cache bytes' and 'MBU of ...' keep their capitals."""
    return title[:1].lower() + title[1:] if title[1:2].islower() else title


def _named(v: Verdict) -> str:
    return f"{v.result} ({_lower(v.title)})" if v.title and v.title != v.result else v.result


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.1%}" if abs(x) < 10 else f"{x + 1:.3g} times"


def _ratio(x: float) -> str:
    return f"{x:.4g}"


def _factor(f: sp.Expr) -> str:
    if f.is_Rational:
        return str(f) if f.q < 1000 else _ratio(float(f))
    if f.is_Number:
        return _ratio(float(f))
    return sp.sstr(f)


def _meaning(v: Verdict, s: sp.Symbol) -> str:
    if v.table is None or s.name not in v.table:
        return s.name
    return v.table[s.name].meaning.replace("$", "")


def _term(v: Verdict, t: Term) -> str:
    """'the KV-cache bytes per step, kv_bytes_step/(beta*eta_bw)': the step it comes from (or what its own symbols mean), then its formula."""
    if t.title:
        return f"the {_lower(t.title)}, {sp.sstr(t.expr)}"
    meanings = " and ".join(_meaning(v, s) for s in t.symbols[:2])
    return f"the {meanings}, {sp.sstr(t.expr)}" if meanings else sp.sstr(t.expr)


def _term_value(v: Verdict, t: Term) -> str:
    if t.value is None:
        return _term(v, t)
    share = f", {float(t.value / v.value):.1%} of {v.result}" if v.value not in (None, 0) else ""
    return f"{_term(v, t)}: {_value(t.value, v.unit, v.display_unit)} here{share}"


def _cause(c: Cause) -> str:
    return f"{c.slip.text} ({_ratio(c.ratio)})"


def _causes(v: Verdict) -> str:
    if not v.causes:
        return ""
    return "; likely " + _cause(v.causes[0]) + "".join(f", or {_cause(c)}" for c in v.causes[1:2])


def _boundary(b: Boundary) -> str:
    way = "≥" if b.direction == "up" else "≤"
    u = unit(b.input.unit)
    value = plain(b.value, u) if b.input.unit not in ("1",) else number_text(display(b.value, u).number)
    err = f" ({b.error:.0%})" if b.error is not None else ""
    return f"{b.input.name} {way} {value}{err}"


def _passes(v: Verdict) -> str:
    past = [b for b in v.boundaries if b.value is not None]
    if not v.boundaries:
        return ""
    if not past:
        return f"; it holds within {v.tolerance:.0%} over every input's whole domain"
    return f"; the error passes {v.tolerance:.0%} at " + ", ".join(_boundary(b) for b in past)


def _regimes(v: Verdict) -> str:
    return ", ".join(f"{r.step} on its {r.side} side" for r in v.regimes)


def _families(v: Verdict) -> str:
    families = list(dict.fromkeys(i.family for i in v.identities if i.family != "the sheets' conventions"))
    return " and ".join(families)


# --- the line -------------------------------------------------------------------------------------------------------

def line(v: Verdict) -> str:
    """The verdict in one sentence."""
    a = v.answer.strip()
    if v.form == "number":
        if v.kind == "within":
            return f"within tolerance: {a} for {_named(v)}, whose value is {_sheet_value(v)} here ({_pct(v.error)}; tolerance {v.tolerance:.0%})"
        if v.kind == "unit":
            return f"different unit: {a} is in {unit_text(v.answer_unit)}, {v.result} is in {unit_text(v.unit)} ({_sheet_value(v)} here)"
        missing = f"; it matches {v.result} without {' and '.join(_term(v, t) for t in v.missing)}" if v.missing else ""
        return f"off by a ratio: {a} is {_ratio(float(v.factor))} times {_named(v)}, whose value is {_sheet_value(v)} here{_causes(v) or missing}" \
            + (missing if v.causes and missing else "") + ("" if v.causes or missing else "; no known slip gives that ratio")
    if v.kind == "equivalent":
        scope = SCOPES[v.scope]
        if v.scope == "architecture" and _families(v):
            scope = f"for {_families(v)}"
        if v.scope == "context" and v.pinned:
            scope += " at " + ", ".join(f"{i.name} = {plain(x, unit(i.unit))}" for i, x in v.pinned)
        return f"equivalent: {a} is {_named(v)} {scope}"
    if v.kind == "factor":
        held = " at " + ", ".join(f"{i.name} = {plain(x, unit(i.unit))}" for i, x in v.pinned) if v.pinned else ""
        if v.scope == "pinned":
            kind = "off by a factor" + held
        elif v.scope == "context":
            kind = "off by a factor for this chip, model and precision" + held
        else:
            kind = "off by a constant factor" if v.factor.is_Number else "off by a factor"
        return f"{kind}: {a} is {_factor(v.factor)} times {_named(v)}{_causes(v)}"
    if v.kind == "terms":
        parts = []
        if v.missing:
            parts.append("leaves out " + "; and ".join(_term(v, t) for t in v.missing))
        if v.extra:
            parts.append("adds " + "; and ".join(_term(v, t) for t in v.extra))
        kind = "missing terms" if v.missing and not v.extra else "extra terms" if v.extra and not v.missing else "missing and extra terms"
        regime = f" (with {_regimes(v)}, as at this context)" if v.regimes else ""
        return f"{kind} against {_named(v)}{regime}: {a} {'; it '.join(parts)}"
    if v.kind == "approximation":
        how = "exact at this context" if v.error is not None and abs(v.error) < 1e-12 else f"within {v.tolerance:.0%} at this context ({_pct(v.error)})"
        regime = f" (with {_regimes(v)})" if v.regimes else ""
        return f"an approximation: {a} is {_named(v)} {how}{regime}{_passes(v)}"
    if v.kind == "unit":
        text = f"different unit: {a} is in {unit_text(v.answer_unit)}, {v.result} is in {unit_text(v.unit)}"
        lacks = unit_text(v.unit / v.answer_unit)
        if v.suggestions:
            s, power, _ = v.suggestions[0]
            text += f"; it lacks {lacks}, the unit of {'' if power == 1 else '1/'}{s.name} ({_meaning(v, s)})"
        return text
    err = f"{_pct(v.error)} at this context" if v.error is not None else "no value at this context"
    return f"different: {a} is not {_named(v)}: {err}; no constant factor, left-out term or known slip explains it{_causes(v)}"


# --- the details ----------------------------------------------------------------------------------------------------

def details(v: Verdict) -> list[str]:
    rows: list[tuple[str, str]] = [("sheet", f"{v.slug}:{v.result} = {_sheet_value(v)}" + (f"  ({v.context_label})" if v.context_label else ""))]
    if v.form == "formula":
        shown = f"{v.answer.strip()}  [{unit_text(v.answer_unit)}]"
        if v.answer_value is not None and v.kind != "unit":
            shown += f" = {_value(v.answer_value, v.unit, v.display_unit)} here"
        rows.append(("answer", shown))
    else:
        converted = _value(v.answer_value, v.unit, v.display_unit) if v.answer_value is not None else ""
        rows.append(("answer", v.answer.strip() + (f" = {converted}" if converted and converted != v.answer.strip() else "")))
    if v.implicit is not None:
        rows.append(("units", f"the answer is in {unit_text(v.answer_unit)}: read with its bare numbers carrying {unit_text(v.implicit)}, "
                              f"as a count of FLOPs, tokens or parameters, it is in {unit_text(v.unit)}"))
    if v.kind == "equivalent":
        how = "symbolically (the difference simplifies to zero) and" if v.proof == "symbolic" else "(sympy found no proof within its time limit)"
        rows.append(("shown", f"{how} numerically at {v.points} random points inside the inputs' domains"))
    if v.identities and v.kind in ("equivalent", "factor", "terms", "approximation"):
        by_family: dict[str, list[str]] = {}
        for i in v.identities:
            by_family.setdefault(i.family, []).append(f"{i.symbol.name} = {sp.sstr(i.expr)}")
        rows.append(("using", "; ".join(f"{', '.join(xs)} ({fam})" for fam, xs in by_family.items())))
    if v.pinned:
        rows.append(("held", ", ".join(f"{i.name} = {plain(x, unit(i.unit))}" for i, x in v.pinned) + " as here: the answer does not use them"))
    for t in v.missing:
        rows.append(("left out", _term_value(v, t)))
    for t in v.extra:
        rows.append(("added", _term_value(v, t)))
    if v.regimes:
        rows.append(("regime", "; ".join(f"{r.step} on its {r.side} side" for r in v.regimes) + ", as at this context"))
    for c in v.causes:
        rows.append(("slip", f"{_cause(c)} [{c.slip.source}]"))
    if v.error is not None and v.kind in ("terms", "approximation", "different", "factor", "off", "within"):
        rows.append(("error", f"{_pct(v.error)} at this context"))
    holds = [b for b in v.boundaries if b.value is None]
    if v.boundaries:
        past = [b for b in v.boundaries if b.value is not None]
        if past:
            rows.append(("stops", f"the error passes {v.tolerance:.0%} at " + ", ".join(_boundary(b) for b in past)
                         + " (each input alone, the others as here)"))
        if holds:
            ways: dict[str, set[str]] = {}
            for b in holds:
                ways.setdefault(b.input.name, set()).add(b.direction)
            said = [name if len(w) == 2 else f"{name} {'above' if 'up' in w else 'below'} its value here" for name, w in ways.items()]
            rows.append(("holds", f"within {v.tolerance:.0%} for any " + ", ".join(said)))
    for s, _power, sub in v.suggestions:
        rows.append((f"with {s.name}", f"{sub.answer}: {line(sub).split(': ', 1)[0]}" + (f" ({_families(sub)})" if sub.kind == "equivalent" and _families(sub) else "")))
    width = max(len(k) for k, _ in rows)
    return [f"  {k:<{width}}  {text}" for k, text in rows]


def as_json(v: Verdict) -> dict[str, Any]:
    def q(x: sp.Expr | None) -> dict[str, Any] | None:
        if x is None:
            return None
        s = display(x, v.unit, v.display_unit)
        base = Quantity(float(x), v.unit).to_base_units()
        return {"value": float(Quantity(float(x), v.unit).to(unit_text(s.unit)).magnitude), "unit": unit_text(s.unit),
                "si_value": float(base.magnitude), "si_unit": unit_text(base.units)}

    out: dict[str, Any] = {
        "kind": v.kind, "line": line(v), "slug": v.slug, "result": v.result, "title": v.title, "answer": v.answer, "form": v.form,
        "context": v.context_label, "value": q(v.value), "answer_value": q(v.answer_value),
        "answer_unit": unit_text(v.answer_unit) if v.answer_unit is not None else None, "unit": unit_text(v.unit),
        "error": v.error, "tolerance": v.tolerance,
    }
    if v.scope:
        out["scope"] = v.scope
    if v.proof:
        out["proof"] = {"how": v.proof, "points": v.points}
    if v.factor is not None:
        out["factor"] = {"expr": sp.sstr(v.factor), "value": float(v.factor) if v.factor.is_Number else None}
    out["causes"] = [{"slip": c.slip.key, "text": c.slip.text, "ratio": c.ratio, "source": c.slip.source} for c in v.causes]
    out["missing"] = [{"expr": sp.sstr(t.expr), "step": t.step, "title": t.title, "value": q(t.value)} for t in v.missing]
    out["extra"] = [{"expr": sp.sstr(t.expr), "symbols": [s.name for s in t.symbols], "value": q(t.value)} for t in v.extra]
    out["identities"] = [{"symbol": i.symbol.name, "equals": sp.sstr(i.expr), "family": i.family} for i in v.identities]
    out["pinned"] = {i.name: {"value": float(x), "unit": i.unit} for i, x in v.pinned}
    out["regimes"] = [{"step": r.step, "side": r.side} for r in v.regimes]
    out["boundaries"] = [{"input": b.input.name, "direction": b.direction, "unit": b.input.unit,
                          "value": None if b.value is None else float(b.value), "error": b.error} for b in v.boundaries]
    if v.implicit is not None:
        out["implicit_unit"] = unit_text(v.implicit)
    out["suggestions"] = [{"symbol": s.name, "power": p, "kind": sub.kind, "line": line(sub)} for s, p, sub in v.suggestions]
    return out

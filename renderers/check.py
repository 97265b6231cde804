"""`roofline check` output: a checked formula as text, Markdown, LaTeX (a document or a fragment) or JSON."""

from __future__ import annotations

import json
from typing import Any

import sympy as sp

from ..derivations.engine import prose
from ..derivations.engine.formula import Checked
from ..units import Quantity, unit_text
from . import escape
from .numbers import Shown, display, plain
from .printer import latex_math, term_ranks
from .targets import LATEX, MARKDOWN, Target
from .unitfmt import SIUNITX_DECLARATIONS

FORMATS = ("text", "md", "tex", "json")


def render(checked: Checked, fmt: str, fragment: bool = False) -> str:
    if fmt == "json":
        return json.dumps(as_json(checked), indent=2, ensure_ascii=False) + "\n"
    if fmt == "text":
        return _text(checked)
    if fmt == "md":
        return _markdown(checked)
    return _latex(checked, fragment)


def _expected(c: Checked) -> str | None:
    return unit_text(c.expect) if c.expect is not None else None


def _shown(c: Checked) -> Shown:
    return display(c.value, c.unit, _expected(c))


def _names(c: Checked) -> dict[sp.Symbol, str]:
    return dict(c.symbols.latex_names())


def math_lines(c: Checked, target: Target) -> list[str]:
    """symbol-free formula = numbers = result; a solved form starts with its symbol."""
    names = _names(c)
    ranks = term_ranks(list(names), ())  # sums in glossary order, as on a sheet
    head = f"{names[c.solution.for_]} = " if c.solution else ""
    lines = [head + latex_math(c.expr, names, ranks)]
    if c.value is not None:
        numbers = {o.symbol: target.quantity_math(display(o.value, o.unit)) for o in c.operands}
        if c.expr.free_symbols:
            lines.append(latex_math(c.expr, numbers, ranks))
        lines.append(target.quantity_math(_shown(c)))
    return lines


def _unit_line(c: Checked) -> str:
    text = unit_text(c.unit)
    if c.expect is not None and unit_text(c.expect) != text:
        text += f" (checked against {unit_text(c.expect)}: same dimension)"
    return text


def _text(c: Checked) -> str:
    rows = [("formula", c.formula.text)]
    if c.solution:
        rows += [("solved", f"{c.solution.for_.name} = {sp.sstr(c.solution.expr)}"),
                 ("verified", f"{c.solution.verified} (closed form checked against the equation)")]
    rows += [("latex", math_lines(c, LATEX)[0]), ("unit", _unit_line(c))]
    if c.value is not None:
        rows.append(("value", plain(c.value, c.unit, _expected(c)) + (f"  ({c.context_label})" if c.context_label else "")))
    out = [f"{k:<9} {v}" for k, v in rows]
    for o in c.operands:
        info = c.symbols.info(o.symbol)
        out.append(f"  {o.symbol.name:<12} = {plain(o.value, o.unit)}  [{o.source}] {info.meaning.replace('$', '')}")
    return "\n".join(out) + "\n"


def _aligned(c: Checked, target: Target, indent: str = "") -> str:
    """The lines of `math_lines`, aligned at their `=` (after the solved symbol, or before the first continuation)."""
    lines = math_lines(c, target)
    head, sep, tail = lines[0].partition(" = ")
    first = f"{head} &= {tail}" if sep and c.solution else f"&{lines[0]}"
    return first + "".join(f" \\\\\n{indent}&= {x}" for x in lines[1:])


def _markdown(c: Checked) -> str:
    out = ["$$", r"\begin{aligned}", _aligned(c, MARKDOWN), r"\end{aligned}", "$$", "", f"Unit: {escape.markdown(_unit_line(c))}"]
    if c.solution:
        out.append(f"Closed form checked against the equation {'symbolically and ' if c.solution.verified == 'symbolic' else ''}numerically.")
    if c.context_label:
        out.append(f"Worked for {escape.markdown(c.context_label)}.")
    out += ["", "| symbol | unit | meaning | value |", "|---|---|---|---:|"]
    values = {o.symbol: o for o in c.operands}
    for s in sorted(c.expr.free_symbols | {o.symbol for o in c.operands}, key=lambda s: s.name):
        info = c.symbols.info(s)
        v = values.get(s)
        shown = f"${MARKDOWN.quantity_math(display(v.value, v.unit))}$ ({escape.markdown(v.source)})" if v else ""
        meaning = prose.render(info.meaning, escape.markdown, MARKDOWN.inline_math, {i.name: i.latex for i in c.symbols})
        out.append(f"| ${info.latex}$ | {MARKDOWN.unit(info.unit)} | {meaning} | {shown} |")
    return "\n".join(out) + "\n"


def _latex(c: Checked, fragment: bool) -> str:
    body = [r"\begin{align*}", _aligned(c, LATEX, "  "), r"\end{align*}"]
    note = f"Unit: {escape.latex(_unit_line(c))}."
    if c.context_label:
        note += f" Worked for {escape.latex(c.context_label)}."
    body.append(note)
    if not fragment:
        pre = [r"\documentclass[11pt]{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{amsmath}", r"\usepackage{siunitx}",
               r"\sisetup{group-minimum-digits=4, group-digits=integer, group-separator={,}, exponent-product=\times, per-mode=symbol}",
               *SIUNITX_DECLARATIONS, r"\begin{document}"]
        body = [*pre, *body, r"\end{document}"]
    return "\n".join(body) + "\n"


def as_json(c: Checked) -> dict[str, Any]:
    out: dict[str, Any] = {"formula": c.formula.text, "expr": sp.sstr(c.expr), "latex": math_lines(c, LATEX)[0], "unit": unit_text(c.unit)}
    if c.expect is not None:
        out["expect"] = unit_text(c.expect)
    if c.solution:
        out["solve"] = {"for": c.solution.for_.name, "equals": c.solution.rhs.text, "verified": c.solution.verified}
    if c.value is not None:
        s = _shown(c)
        q = Quantity(float(c.value), c.unit)
        out["value"] = {"value": float(q.to(unit_text(s.unit)).magnitude), "unit": unit_text(s.unit), "si_value": float(q.to_base_units().magnitude),
                        "si_unit": unit_text(q.to_base_units().units)}
        out["context"] = c.context_label
        out["symbols"] = {o.symbol.name: {"value": float(o.value), "unit": unit_text(o.unit), "from": o.source} for o in c.operands}
    return out

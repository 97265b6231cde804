"""Turn a solved sheet into plain strings for one target; templates only lay them out."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import sympy as sp

from derivations import glossary as gl
from derivations import prose
from derivations.engine import At, Solve, Step
from derivations.sheet import Missing, Sheet, SolvedStep, SolvedTable, Value
from renderers.numbers import Shown, display, number_text
from renderers.plots import refs as plot_refs
from renderers.targets import Target, latex_math, term_ranks
from units import unit, unit_text


def shown(v: Value) -> Shown:
    return display(v.exact, v.unit, v.display_unit)


DIMENSIONLESS = unit("1")
#: Symbols that turn a count into a unit; as numbers they would print as "· 1 param".
UNIT_MARKERS = (gl.u_param, gl.u_token)
#: Crossovers in these symbols are physically whole numbers: (what it is, plural unit).
COUNTS = {gl.B: ("batch", "sequences"), gl.S: ("prompt", "tokens"), gl.T: ("context", "tokens"), gl.q: ("number of tokens per step", "tokens")}


def value_text(v: Value, target: Target) -> str:
    """A value as running text: the number with its unit, or 'none: reason' / 'n/a: reason'."""
    return missing_text(v.missing, target) if v.missing else target.quantity_text(shown(v))


def missing_text(m: Missing, target: Target) -> str:
    """'none: reason': a closed form's reason is the derivation's prose (it may hold math); a spec's is literal text."""
    if m.prose:
        return target.text(f"{m.kind}: ") + prose.render(m.reason, target.text, target.inline_math, {}, None, target.link)
    return target.text(m.label)


def step_lines(step: SolvedStep, names: dict[sp.Symbol, str], target: Target, ranks: dict[sp.Symbol, int] | None = None) -> tuple[str, list[str]]:
    """(lead-in text, math lines) for one step: symbol = formula = numbers = result, sums in the derivation's order."""
    s = step.step
    formula = formula_latex(s, names, ranks)
    lines = [f"{step.latex} = {formula}"]
    if step.value.missing:
        lead = target.text("No value here (") + missing_text(step.value.missing, target) + target.text(").")
        return lead, lines
    numbers = {sym: names[sym] if v.missing else target.quantity_math(shown(v)) for sym, v in step.operands.items()}
    # the unit markers (one parameter, one token) carry units in the formula; as numbers they are only "· 1 param"
    def with_numbers(expr: sp.Expr) -> str:
        return latex_math(expr.xreplace({u: sp.S.One for u in UNIT_MARKERS}), numbers, ranks)

    substituted = _at_latex(s, names, with_numbers) if isinstance(s, At) else with_numbers(s.expr)
    result = target.quantity_math(shown(step.value))
    if s.expr.free_symbols and substituted not in (result, formula):
        lines.append(substituted)
    lines.append(result)
    lead = ""
    if isinstance(s, Solve):
        lead = target.text("Set ") + target.inline_math(f"{names[sp.Symbol(s.lhs, positive=True)]} = {names[sp.Symbol(s.rhs, positive=True)]}") \
            + target.text(" and solve for ") + target.inline_math(names[s.for_]) \
            + target.text(f" (closed form checked against the equation {'symbolically and ' if s.verified == 'symbolic' else ''}numerically at random points).")
        whole = _whole_count(s, step.value)
        if whole:
            lead += target.text(f" {whole}.")
    return lead, lines


def formula_latex(s: Step, names: dict[sp.Symbol, str], ranks: dict[sp.Symbol, int] | None = None) -> str:
    """The formula a step shows: its expression; for an At step, the step it evaluates and what it replaces."""
    if isinstance(s, At):
        return _at_latex(s, names, lambda v: latex_math(v, names, ranks))
    return latex_math(s.expr, names, ranks)


_TWINS = {**gl.SECOND_CHIP, **gl.SECOND_MODEL}


def formula_text(s: Step) -> str:
    """The step's expression as plain text (JSON's `expr`); an At step as `of` with its replacements: `t_step[q=u_token*(gamma + 1)]`."""
    if not isinstance(s, At):
        return sp.sstr(s.expr)
    second = [what for what, twins in (("second chip", gl.SECOND_CHIP), ("second model", gl.SECOND_MODEL))
              if any(twins.get(k) == v for k, v in s.where)]
    subs = [f"{k}={sp.sstr(v)}" for k, v in s.where if _TWINS.get(k) != v]
    return f"{s.of}[{', '.join(second + subs)}]"


def _at_latex(s: At, names: dict[sp.Symbol, str], value: Callable[[sp.Expr], str]) -> str:
    """`t_step|_{q = k + 1}`; primed (`t_step'`) when it reads the second chip's or model's symbols, which are not listed."""
    head = names[sp.Symbol(s.of, positive=True)]
    if any(_TWINS.get(k) == v for k, v in s.where):
        head = "{" + head + "}'"
    subs = [f"{names[k]} = {value(v)}" for k, v in s.where if _TWINS.get(k) != v]
    return head + (r"\big|_{" + r",\ ".join(subs) + "}" if subs else "")


def _whole_count(s: Solve, v: Value) -> str:
    """For a crossover in a physical count (a batch, a prompt, a context): the whole number you would run."""
    what = COUNTS.get(s.for_)
    if what is None or v.exact is None or v.exact == int(v.exact):
        return ""
    if s.rounds == "down":
        return f"In whole numbers, the largest {what[0]} within it is {math.floor(v.float):,} {what[1]}"
    return f"In whole numbers, the first {what[0]} at or past it is {math.ceil(v.float):,} {what[1]}"


def step_title(step: Step) -> str:
    """The step's heading in words: its title, else its meaning, else its name."""
    text = step.title or step.meaning or step.name
    return text[:1].upper() + text[1:]


def build(sheet: Sheet, target: Target, plots: str | None = None) -> dict[str, Any]:
    """The template's variables; with `plots` (a folder, relative to the sheet), figures linking each declared plot's file there."""
    d = sheet.derivation
    names = dict(sheet.latex_names)
    ranks = term_ranks(list(names), set(d.expanded))
    values = {n: value_text(v, target) for n, v in _all_values(sheet).items()}
    by_name = {info.name: info.latex for info in d.symbols}

    def p(text: str) -> str:
        return prose.render(text, target.text, target.inline_math, by_name, values, target.link)

    t = target.text
    steps = []
    for st in sheet.steps:
        lead, lines = step_lines(st, names, target, ranks)
        steps.append({"name": target.code(st.step.name), "title": p(step_title(st.step)), "symbol": target.inline_math(st.latex),
                      "why": p(st.step.why), "lead": lead, "lines": [target.math(x) for x in lines]})
    symbols = []
    seen = set()
    for info in d.symbols:
        if info.symbol in _used_symbols(sheet) and info.name not in seen:
            seen.add(info.name)
            symbols.append({"symbol": target.inline_math(info.latex), "unit": target.unit(info.unit), "meaning": p(info.meaning)})
    return {
        "slug": target.code(d.slug),
        "title": p(d.title),
        "question": p(d.question),
        "context_label": t(sheet.context_label),
        "facts": [{"label": t(k), "value": t(v)} for k, v in sheet.spec_facts],
        "conventions": [p(c) for c in sheet.conventions],
        "assumptions": [p(a) for a in d.assumptions],
        "given": [
            {"symbol": target.inline_math(info.latex), "value": value_text(v, target), "meaning": p(info.meaning)}
            for info, v in sheet.bound if not v.missing  # a symbol this model or chip lacks; the steps that need it say why
        ],
        "inputs": [
            {"name": target.code(i.name), "symbol": target.inline_math(i.info.latex), "value": target.quantity_text(shown(i.value)),
             "status": "set" if i.is_set else "default", "meaning": p(i.meaning)}
            for i in sheet.inputs
        ],
        "symbols": symbols,
        "steps": steps,
        "results": [
            {"name": target.code(n), "symbol": target.inline_math(d.symbols[n].latex), "value": value_text(v, target), "title": p(step_title(d.step(n))), "meaning": p(d.symbols[n].meaning)}
            for n, v in sheet.results.items()
        ],
        "claims": [
            {"text": p(c.text), "holds": c.holds, "verdict": {True: "holds", False: "does not hold", None: "cannot be checked"}[c.holds],
             "left": target.inline_math(names[sp.Symbol(c.left_name, positive=True)]) + " = " + value_text(c.left, target),
             "right": (target.inline_math(names[sp.Symbol(c.right_name, positive=True)]) + " = " if c.right_name else target.text("claimed ")) + value_text(c.right, target),
             "where": "; ".join(x for x in (p(c.where), t(f"read as numbers in {c.convert}" if c.convert else "")) if x)}
            for c in sheet.claims
        ],
        "tables": [part for tb in sheet.tables for part in _split(_table(tb, target, p), target)],
        "does_not_fit": t(f"Does not fit: this setup needs {_plain_ratio(sheet.overflow)} times the memory one GPU has, "
                          "so the times below describe a server that cannot be built as stated (more GPUs, a smaller batch or a shorter context).")
        if sheet.overflow else "",
        "takeaways": [p(x) for x in d.takeaways],
        "scoring": [p(x) for x in d.scoring],
        "limits": [p(x) for x in d.limits],
        "figures": [{"path": f["path"], "alt": target.text(f["alt"]), "caption": p(f["caption"])}
                    for f in plot_refs(d, plots, "svg" if target.name == "md" else "pdf")] if plots is not None else [],
    }


#: A table with more value columns than this is split into parts (labels repeated) rather than shrunk to fit the page.
MAX_VALUE_COLUMNS = 5
#: A column whose value is the same on at least this many rows moves into the table's note.
MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN = 3


def _table(tb: SolvedTable, target: Target, p: Callable[[str], str]) -> dict[str, Any]:
    """A table laid out for reading: a column's shared unit in its header, a column equal on every row said once in the note."""
    n = len(tb.rows)
    shown_cells = [[shown(c) if c is not None and not c.missing else None for c in cells] for _, cells, _ in tb.rows]
    keep, constants, headers, units = [], [], [], []
    for j, (_, latex) in enumerate(tb.columns):
        col = [row[j] for row in shown_cells]
        texts = {target.quantity_text(x) for x in col if x is not None}
        if n >= MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN and len(texts) == 1 and all(x is not None for x in col):
            constants.append(target.inline_math(latex) + " = " + texts.pop())
            continue
        keep.append(j)
        col_units = {unit_text(x.unit) for x in col if x is not None}
        shared = col[0].unit if len(col_units) == 1 and col[0] is not None and col_units != {"1"} else None
        units.append(shared)
        headers.append(target.inline_math(latex) + (f" ({target.unit(shared)})" if shared is not None else ""))
    note = p(tb.note)
    if constants:
        note = (note + " " if note else "") + target.text("On every row: ") + ", ".join(constants) + target.text(".")
    rows = []
    split = n > 0 and bool(tb.parts) and all(x is not None for x in tb.parts)
    for i, ((label, cells, why), setting, authored, over) in enumerate(zip(
            tb.rows, tb.settings or [()] * n, tb.authored or [False] * n, tb.overflows or [False] * n, strict=True)):
        fits = target.text(" (does not fit)") if over else ""
        if split:
            hw, model = tb.parts[i]
            labels = [target.text(hw), _row_label(target.text(model), setting, target) + fits]
        else:
            labels = [_row_label(p(label) if authored else target.text(label), setting, target) + fits]
        rows.append({"label": labels[-1], "labels": labels,
                     "cells": [_cell(cells[j], target, number_only=units[k] is not None) for k, j in enumerate(keep)],
                     "why": _row_why(cells, why, target)})
    return {"title": p(tb.title), "note": note, "headers": headers,
            "label_headers": [target.text("hardware"), target.text("model")] if split else [""], "header_names": [target.text(tb.columns[j][0]) for j in keep], "rows": rows}


#: A table longer than this is printed in parts of at most this many rows (a LaTeX tabular does not break across pages).
MAX_TABLE_ROWS = 20


def _split(table: dict[str, Any], target: Target) -> list[dict[str, Any]]:
    """A long table as parts of at most MAX_TABLE_ROWS rows, then a wide one as parts of at most MAX_VALUE_COLUMNS value columns
    each; the note goes with the first part."""
    rows = table["rows"]
    if len(rows) > MAX_TABLE_ROWS:
        count = -(-len(rows) // MAX_TABLE_ROWS)
        size = -(-len(rows) // count)
        return [part for k, start in enumerate(range(0, len(rows), size))
                for part in _split({**table, "title": table["title"] + target.text(f" (rows {start + 1} to {min(start + size, len(rows))} of "
                                                                                   f"{len(rows)})"),
                                    "note": table["note"] if k == 0 else "", "rows": rows[start:start + size]}, target)]
    n = len(table["headers"])
    if n <= MAX_VALUE_COLUMNS:
        return [table]
    parts_count = -(-n // MAX_VALUE_COLUMNS)
    size = -(-n // parts_count)
    parts = []
    for k, start in enumerate(range(0, n, size)):
        cols = slice(start, start + size)
        parts.append({**table, "title": table["title"] + (target.text(f" (part {k + 1} of {parts_count})")),
                      "note": table["note"] if k == 0 else "", "headers": table["headers"][cols], "header_names": table["header_names"][cols],
                      "rows": [{**r, "cells": r["cells"][cols], "why": r["why"] if k == parts_count - 1 else ""} for r in table["rows"]]})
    return parts


def _plain_ratio(v: Value) -> str:
    return number_text(shown(v).number)


def _row_label(label: str, setting: tuple[tuple[str, str, Value], ...], target: Target) -> str:
    """A row's label: its text, then the inputs it sets as math ($B = 8$, $T = 8{,}192$ token)."""
    parts = [label] if label else []
    parts += [target.inline_math(f"{latex} = {target.quantity_math(shown(v))}") for _, latex, v in setting]
    return ", ".join(parts)


def _cell(c: Value | None, target: Target, number_only: bool = False) -> str:
    if c is None:
        return target.text("n/a")
    if c.missing:
        return target.text(c.missing.kind)
    s = shown(c)
    return target.quantity_text(Shown(s.number, DIMENSIONLESS) if number_only else s)


def _row_why(cells: tuple[Value | None, ...], why: str, target: Target) -> str:
    """The reasons a row has no value in some cells, each once."""
    reasons = [target.text(why)] if why else []
    for c in cells:
        if c is not None and c.missing:
            text = missing_text(c.missing, target)
            if text not in reasons:
                reasons.append(text)
    return "; ".join(reasons)


def _all_values(sheet: Sheet) -> dict[str, Value]:
    out = {st.step.name: st.value for st in sheet.steps}
    out.update({i.name: i.value for i in sheet.inputs})
    return out


def _used_symbols(sheet: Sheet) -> set[sp.Symbol]:
    used = {info.symbol for info, _ in sheet.bound} | {i.info.symbol for i in sheet.inputs}
    used |= {st.step.s for st in sheet.steps}
    return used

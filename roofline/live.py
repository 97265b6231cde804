"""The data a sheet's page recomputes itself from in the browser (`site/plan.js`, `site/live.js`): the sheet's numeric plan, the
values its setup binds, its inputs with their units, domains and defaults, and how each step's value is printed.

`live.js` reads the inputs a reader types (each a form field named after its input, `name="batch"`), binds them as
`derivations.engine.run.input_magnitude` and `input_values` do (an input that follows another takes its value unless set; the
context of the serving step is the prompt plus half the output, `conventions.serving_context`), evaluates the plan with
`plan.js` (the same float64 rules as `derivations.engine.numeric`) and prints each step's value as `renderers.value_text.count_plain`
does: the unit each decade of a value is shown in (`display`) is carried here as a ladder, so the script only picks a rung and
rounds (`renderers.numbers.digits`).

The chip, the model, the number formats, the math precision and the engine profile are chosen from lists (`spec_choices`);
a math picked replaces the peaks (each chip's carried per math) and the math's own values, and makes a setup refused only
for the math its weights default to hold (`_vector`). A profile supplies the engine inputs it sets unless they are typed
(`_engine_values`, as `run.input_magnitude` reads them). The values a chip binds and those a model binds are carried per
chip and per model, and the values that depend on both with the formats (the peak at the math the weights run at, the
weights' widths, the KV cache's) as a table over every shipped chip, model and format choice, each made by the setup a
table row of that chip, model and formats has (`compiled.row_setup`), so the script only looks values up; a sheet's second
chip or model is a list too, its values carried per group of model and weights choices (`_second_choices`: they follow the
weights' format, and for the target's own drafter the target, not the chip). A layout's dp and ep are checked by the one
rule `derivations.engine.run.layout_problem` states, ported beside it, and a setup the sheet refuses is refused in one
line, as `roofline derive` refuses it.

The answer's sentences are filled again: the site marks each value they are filled with (`data-fill`), and the script prints
it as `renderers.sheet_prose` prints running text. Each claim is read again (`_claims`), one with a row of its own at that
row on top of the reader's setup. Each sweep (a figure over one input) is drawn again as SVG (`figure.js`): the script
evaluates the plan over the grid `renderers.figure_data.sweep_grid` makes, every other input as the reader set it, and lays
it out as `renderers.plots` does (`_sweeps` carries the words); so is each roofline (`_rooflines`), each bar figure and
stack (`_bars`: a split step as the terms of its formula, read off the plan) and each heat map (`_heatmaps`). Each result
table (`_tables`) is laid out again by `renderers.tables`' rules, ported, each row on top of the reader's setup: where the
layout is the page's (the same rows, columns, units and notes) its cells are refilled, else it keeps the page's values,
dimmed. Each step's equation is written again (`_equations`: its printed forms, which `live.js` fills and breaks by
`renderers.equations`' rules, ported, and `texmath.js` sets as MathML; the special forms that every shipped model's and
weights choice's zeros and ones need are carried, `_models_specials`), except a numbers line whose zeros and ones need a
special form the page does not carry, which is hidden. A scatter (published records, each at its own setup) stays as drawn
where every point and line stay the page's at the reader's setup (`_scatters`), else it is dimmed.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from fractions import Fraction
from importlib import resources
from typing import Any

from markupsafe import Markup

from .build_outputs import LIVE_SCRIPTS as SCRIPTS
from .derivations.engine import prose, run
from .derivations.engine.blueprint import BARE_NUMBER_UNITS, DOMAINS, MAX_COUNT, MAX_MAGNITUDE, Row
from .derivations.engine.numeric import Missing, Plan
from .derivations.engine.run import Sheet, Value, headline_grid
from .grading import values as grading_values
from .practice import unit_table
from .renderers import forms as printed_forms
from .renderers import site
from .renderers.equations import ROUNDING_FIGURES, TOO_WIDE, equation_lines, live_cases
from .renderers.figure_data import LAYOUT_DEGREES, MAX_DISCRETE_POINTS, SWEEP_POINTS
from .renderers.figure_refs import clause, shared_words, stem, step_title, term_label
from .renderers.figure_refs import name as plot_name
from .renderers.figure_refs import plain as plain_words
from .renderers.numbers import READABLE, digits, display, number_text, plain
from .renderers.printed import LINE_WIDTH, least_width, width_rules
from .renderers.printed import pieces_json as printed_pieces_json
from .renderers.sheet_prose import lower_first
from .renderers.tables import DOES_NOT_FIT, MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN, NO_VALUE, short_chip
from .renderers.value_text import count_plain
from .renderers.view import engine_band
from .specs.precisions import MATH_PRECISIONS
from .units import pintless

#: Decades of a step's value (in its own unit) whose display unit the ladder holds: 10^-LADDER_DECADES to 10^LADDER_DECADES.
LADDER_DECADES = 40
#: The weight formats a live page offers: "" is the model's own checkpoint (the default `--weights`), then one format for
#: every component; and the KV-cache formats.
WEIGHT_CHOICES = ("", "bf16", "fp8", "int8", "int4", "int4-g128", "nvfp4", "mxfp4")
KV_CHOICES = ("bf16", "fp8")
#: The math precisions a live page offers (`--math`; "" the default, the math the weights run at).
MATH_CHOICES = MATH_PRECISIONS
#: How a choice reads in its list.
FORMAT_WORDS = {"": "the model's checkpoint", "fp16": "FP16", "fp6": "FP6", "fp4": "FP4", "bf16": "BF16", "fp8": "FP8", "int8": "INT8", "int4": "INT4", "int4-g128": "INT4, groups of 128",
                "nvfp4": "NVFP4", "mxfp4": "MXFP4"}
#: The binding parts whose values depend on the chip and the model together, or on the formats (setup.Bindings.parts).
JOINT_PARTS = ("peak", "peak_kv", "weights", "kv", "math")


#: What a roofline draws each chip's roof from (renderers.plots._rooflines: the peak at the math and the bandwidth).
ROOF_SYMBOLS = ("pi", "beta")


def bound_names(bp: Any, plan: Plan) -> list[str]:
    """The symbols the page binds: the plan's inputs, and a roofline's chip peak and bandwidth where the plan reads neither."""
    extra = [n for n in ROOF_SYMBOLS if n not in plan.inputs] if any(p.kind == "roofline" for p in bp.plots) else []
    return [*plan.inputs, *extra]


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
    base = run.input_values(bp, s, bound_names(bp, plan), defaults)
    inputs = []
    ladders: dict[str, Any] = {}
    shown_values = {i.name: i.value for i in sheet.inputs}
    for inp in bp.inputs:
        if inp.symbol not in plan.inputs:
            continue
        magnitude, given = run.input_magnitude(inp, s, defaults, bp.inputs)
        inputs.append({"name": inp.name, "symbol": inp.symbol, "unit": inp.unit, "meaning": inp.meaning,
                       "factor": float(run._factor(inp.unit, bp.symbol(inp.symbol).unit)), "value": float(magnitude), "set": given,
                       "follows": inp.follows or "", "domain": inp.domain, "domain_text": DOMAINS[inp.domain],
                       "bare": inp.unit in BARE_NUMBER_UNITS, "units": unit_table(inp.unit),
                       "integer": inp.domain in ("count", "whole"), "ladder": _ladder_key(ladders, shown_values[inp.name])})
    steps = {st.step.name: {"counts": st.step.counts, "rounds": st.step.rounds or "", "ladder": _ladder_key(ladders, st.value)}
             for st in sheet.steps}
    plan_json = plan.to_json()
    return {"slug": bp.slug, "plan": plan_json, "values": {k: _value(v) for k, v in base.items()}, "inputs": inputs,
            "steps": steps, "ladders": ladders, "readable": list(READABLE), "results": list(bp.results), "number_pattern": grading_values._NUMBER.pattern,
            "limits": {"magnitude": float(MAX_MAGNITUDE), "count": MAX_COUNT},
            "claims": _claims(sheet), "fit": run.FIT_STEP if run.FIT_STEP in steps else "", "specs": spec_choices(sheet, plan, defaults),
            "sweeps": _sweeps(bp, {i["name"]: i for i in inputs}, steps), "rooflines": _rooflines(sheet, steps),
            "bars": _bars(sheet, plan_json, steps), "heatmaps": _heatmaps(sheet, plan_json, steps), "tables": _tables(sheet, steps), "scatters": _scatters(sheet, steps),
            "table_rules": {"constant_rows": MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN, "no_value": NO_VALUE, "does_not_fit": DOES_NOT_FIT},
            "grid": {"points": SWEEP_POINTS, "discrete": MAX_DISCRETE_POINTS}, "equations": _equations(sheet, ladders, plan, defaults),
            "equation_rules": {**width_rules(), "ones": sorted(printed_forms.STRUCTURAL_ONES), "rounding_figures": ROUNDING_FIGURES,
                               "too_wide": TOO_WIDE}}


def _sweeps(bp: Any, inputs: dict[str, Any], steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The sheet's sweeps as what the live script draws them from (`figure.js`, by `renderers.plots`' rules): the swept input,
    its span in its symbol's unit, the steps drawn and their names, the marked values (steps or inputs) with the symbol their
    label gives, the step that bounds what fits, the axes' words and the finding as text and `{name}` fills. A sweep over an
    input the plan does not read, or of a step it has no value for, is left the page's."""
    out = []
    words = bp.latex_names
    for p in bp.plots:
        if p.kind != "sweep" or p.x not in inputs or not all(n in steps for n in p.y):
            continue
        inp = inputs[p.x]
        entry = next(i for i in bp.inputs if i.name == p.x)
        try:
            lo, hi = (float(run.read_input(entry, t)) * inp["factor"] for t in p.span)
        except run.UnreadError:
            continue
        marks = [{"name": n, "axis": axis, "input": n not in steps, "symbol": symbol_pieces(words[n if n in steps else inputs[n]["symbol"]])}
                 for axis, names in (("x", p.vlines), ("y", p.hlines)) for n in names if n in steps or n in inputs]
        titles = [plain_words(plot_name(bp, p, n)) for n in p.y]
        out.append({"name": p.name, "stem": stem(bp.slug, p.name), "x": p.x, "y": list(p.y), "labels": titles, "lo": lo, "hi": hi,
                    "log": p.log, "whole": entry.domain in ("count", "whole"), "degrees": p.x in LAYOUT_DEGREES, "marks": marks,
                    "fit": p.fits_up_to if p.fits_up_to in steps else "",
                    "xlabel": clause(p.labels.get(p.x) or entry.meaning),
                    "ylabel": titles[0] if len(titles) == 1 else plain_words(shared_words([step_title(bp.step(n)) for n in p.y])),
                    "title": _segments(p.title, words)})
    return out


_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η", "theta": "θ",
          "kappa": "κ", "lambda": "λ", "mu": "μ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
          "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ",
          "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω"}
_COMMAND = re.compile(r"\\(?:mathrm|text|operatorname|mathit|mathbf)\{([^{}]*)\}|\\([A-Za-z]+)")
_SCRIPT = re.compile(r"([_^])(\{[^{}]*\}|.)")


def symbol_pieces(latex: str) -> list[list[str]]:
    """A symbol's LaTeX as text pieces a figure sets (figure.js): [text, ""] on the line, [text, "sub"] or [text, "sup"]
    lowered or raised; Greek letters as their characters, upright words as words ('B_{\\mathrm{knee}}' -> B, knee lowered)."""
    text = _COMMAND.sub(lambda m: m.group(1) if m.group(1) is not None else _GREEK.get(m.group(2), m.group(2)), latex)
    pieces: list[list[str]] = []
    last = 0
    for m in _SCRIPT.finditer(text):
        pieces.append([text[last:m.start()], ""])
        pieces.append([m.group(2).strip("{}"), "sub" if m.group(1) == "_" else "sup"])
        last = m.end()
    pieces.append([text[last:], ""])
    return [[t.replace("{", "").replace("}", ""), k] for t, k in pieces if t]


def _rooflines(sheet: Sheet, steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The sheet's rooflines as what the live script draws them from (`figure.js`, by `renderers.plots._rooflines`' rules):
    the chips of the sheet's grid, the intensity steps placed, at which batches (a number, or a step whose value is one,
    rounded as that step is meant), in which rows (each as a claim's row is carried: `_where`), their names, and the
    finding (each chip's peak and bandwidth are bound for it, `bound_names`). A roofline with a row the page cannot set is
    left the page's."""
    bp = sheet.blueprint
    out = []
    batch = next((i for i in bp.inputs if i.name == "batch"), None)
    for p in bp.plots:
        rows = [(_where(bp, row), plain_words(row.label)) for row in p.rows]
        if p.kind != "roofline" or any(w is None for w, _ in rows) or not all(n in steps for n in (*p.points, *p.row_points)):
            continue
        batches = []
        for b in p.batches:
            if b in steps:
                down = bp.step(b).kind == "solve" and bp.step(b).rounds == "down"
                batches.append({"step": b, "down": down, "symbol": symbol_pieces(bp.latex_names[b])})
            elif batch is not None:
                batches.append({"value": float(run.read_input(batch, b)), "symbol": symbol_pieces(bp.latex_names[batch.symbol])})
        names = dict.fromkeys((*p.points, *p.row_points))
        out.append({"name": p.name, "chips": list(bp.hardware), "points": list(p.points), "row_points": list(p.row_points or p.points),
                    "rows": [{"given": w["given"], "label": label} for w, label in rows], "batches": batches,
                    "labels": {n: plain_words(plot_name(bp, p, n)) for n in names}, "each_chip": p.each_chip,
                    "ladder": ladder("flop/s", None), "title": _segments(p.title, bp.latex_names)})
    return out


def _scatters(sheet: Sheet, steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The sheet's scatters (a table's rows placed by two of their steps: published records, each at its own setup) as what
    the script checks them by: the table (as `_tables` carries it: None where a row is one the page cannot set), the two
    steps and the steps its lines and finding give. Each row sets its own chip, model, formats and inputs, so most of a
    reader's changes leave every point where it is; the script keeps such a figure as drawn and dims one whose points or
    lines move (an engine profile's efficiencies, which the records do not set)."""
    out = []
    for p in sheet.blueprint.plots:
        names = [p.x, *p.y, *p.hlines, *(part[0] for part in _segments(p.title, sheet.blueprint.latex_names) if isinstance(part, list))]
        if p.kind == "scatter" and all(n in steps for n in names):
            out.append({"name": p.name, "table": 1 + p.table, "x": p.x, "y": p.y[0], "steps": list(dict.fromkeys(names[2:]))})
    return out


def _tables(sheet: Sheet, steps: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The result tables (0 the headline, then the sheet's own; a page's table names its own, `data-table`) as what the
    live script refills them from (`renderers.tables`' layout, ported in live.js): each row as a claim's row is carried (`_where`) with what the layout
    reads of it (the chip and model it names where it names both and no label, by which a column is dropped or the grid
    pivoted; its settings as the key that tells its layouts apart; its chip's short name and its model and settings as
    the grid groups them), and each column's step and unit. A table with a row the page cannot set, or a column it has no
    value for, is None: it stays the page's."""
    from . import compiled

    bp, cat = sheet.blueprint, compiled.shipped_catalog()
    raw = [(headline_grid(bp.hardware, bp.models), bp.results), *((t.rows, t.columns) for t in bp.tables)]
    out: list[dict[str, Any] | None] = []
    for rows, columns in raw:
        wheres = [_where(bp, row) for row in rows]
        if any(w is None for w in wheres) or not all(c in steps for c in columns):
            out.append(None)
            continue
        laid = []
        for row, where in zip(rows, wheres, strict=True):
            settings = "[]" if row.label else json.dumps([[n, where["given"][n]] for n in row.set if n in where["given"]])  # type: ignore[index]
            names = (cat.spec("hardware", row.hardware).name, cat.spec("models", row.model).name) if (
                not row.label and row.hardware and row.model) else None
            laid.append({"given": where["given"], "parts": names, "settings": settings,  # type: ignore[index]
                         "chip": short_chip(names[0]) if names else "", "group": f"{names[1]}|{settings}" if names else ""})
        out.append({"rows": laid, "columns": [{"step": c, "unit": bp.symbol(c).unit, "unit_text": pintless.unit(bp.symbol(c).unit).text}
                                              for c in columns]})
    return out


def _parts(bp: Any, plan_json: dict[str, Any], p: Any) -> list[list[str]] | None:
    """What a bar figure draws, as `renderers.plots._parts` gives it: [label, step, group] for each step of `y`, a split one as
    the terms of its formula (read off the plan: a sum of steps) in the symbol table's order; None where a split step is not
    a sum of steps (its terms would need the full path to name)."""
    steps = {st["name"]: st["expr"] for st in plan_json["steps"]}
    order = {n: i for i, n in enumerate([n for n in bp.latex_names if n in bp.step_names] + [n for n in bp.latex_names if n not in bp.step_names])}
    out = []
    for name in p.y:
        if name not in p.split:
            out.append([plot_name(bp, p, name), name, ""])
            continue
        e = steps.get(name)
        if e is None:
            return None
        root = e["nodes"][e["root"]]
        kids = [e["nodes"][i] for i in root[1:]] if root[0] == "Add" else [root]
        if any(k[0] != "Symbol" or k[1] not in bp.step_names for k in kids):
            return None
        group = plot_name(bp, p, name)
        out += [[term_label(bp, p, t), t, group] for t in sorted((k[1] for k in kids), key=lambda t: order.get(t, len(order)))]
    if any(label[:1].islower() for label, _, _ in out):  # plots._parts: one key, one case
        out = [[lower_first(label), n, g] for label, n, g in out]
    return [[plain_words(label), n, plain_words(g)] for label, n, g in out]


def _bars(sheet: Sheet, plan_json: dict[str, Any], steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The sheet's bar figures and stacks, as what the live script draws them from (`figure.js`, by `renderers.plots`'
    `_bars` and `_stack`): the parts (`_parts`), the step a bar starts at, the marked steps, the axis and the finding; a
    stack's rows (a table's, the plot's own, or the page's setup: [] ), each as a claim's row is carried (`_where`) with the
    label the figure gives it. A figure whose parts or rows the page cannot compute is left the page's."""
    bp = sheet.blueprint
    out = []
    for p in bp.plots:
        parts = _parts(bp, plan_json, p) if p.kind in ("bars", "stack") else None
        if parts is None or not all(n in steps for n in (*p.vlines, *((p.base,) if p.base else ()))):
            continue
        rows = None
        if p.kind == "stack":
            rows = _stack_rows(sheet, p)
            if rows is None:
                continue
        marks = [{"name": n, "symbol": symbol_pieces(bp.latex_names[n]), "title": plain_words(plot_name(bp, p, n))}
                 for n in ((p.base,) if p.base else ()) + p.vlines]
        axis = plain_words(plot_name(bp, p, p.base)) if p.base else (parts[0][0] if len(parts) == 1 and p.kind == "stack" else "")
        out.append({"name": p.name, "kind": p.kind, "parts": parts, "base": p.base, "marks": marks, "log": p.log, "rows": rows,
                    "ladder": steps[p.y[0]]["ladder"], "xlabel": axis[:1].upper() + axis[1:], "title": _segments(p.title, bp.latex_names)})
    return out


def _heatmaps(sheet: Sheet, plan_json: dict[str, Any], steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The sheet's heat maps as what the live script draws them from (`figure.js`, by `renderers.plots._heatmap`): the steps
    of each column, the column labels (the value an At step sets, with that symbol's meaning as the axis), the table's rows
    (`_stack_rows`), the axis over them (the input every row sets), the colour bar's words and the finding."""
    bp = sheet.blueprint
    out = []
    wheres = {st["name"]: st["where"] for st in plan_json["steps"]}
    for p in bp.plots:
        if p.kind != "heatmap" or not all(n in steps for n in p.y):
            continue
        rows = _stack_rows(sheet, p)
        if rows is None:
            continue
        sets = [wheres.get(n) or [] for n in p.y]
        constant = all(len(w) == 1 and w[0][2]["nodes"][w[0][2]["root"]][0] == "Integer" for w in sets) and len({w[0][0] for w in sets}) == 1
        if constant:
            symbol = sets[0][0][0]
            columns = [w[0][2]["nodes"][w[0][2]["root"]][1] for w in sets]
            meaning = re.split(r"[:(]", bp.symbol(symbol).meaning)[0].strip()
            xlabel = f"{meaning[:1].upper() + meaning[1:]}, {_symbol_text(bp.latex_names[symbol])}"
        else:
            columns, xlabel = [plain_words(f"${bp.latex_names[n]}$") for n in p.y], ""
        of = bp.step(p.y[0]).of or p.y[0]
        solved = sheet.tables[1 + p.table]
        names = {tuple(n for n, _, _ in x) for x in solved.settings}
        ylabel = ""
        if len(names) == 1 and len(next(iter(names))) == 1:
            inp = next(i for i in bp.inputs if i.name == next(iter(names))[0])
            ylabel = f"{plain_words(inp.meaning[:1].upper() + inp.meaning[1:])}, {_symbol_text(bp.latex_names[inp.symbol])}"
        out.append({"name": p.name, "y": list(p.y), "columns": columns, "xlabel": xlabel, "ylabel": ylabel, "rows": rows,
                    "colorbar": f"{plain_words(step_title(bp.step(of)))} {_symbol_text(bp.latex_names[of])}",
                    "title": _segments(p.title, bp.latex_names)})
    return out


def _stack_rows(sheet: Sheet, p: Any) -> list[dict[str, Any]] | None:
    """A stack's (or heat map's) rows as `renderers.plots._row_contexts` gives them: [] for the page's own setup, else each row's choices and
    inputs (`_where`) and its label as the figure's (its own, else the chip and model it changes, and the inputs it sets);
    None where a row changes what the page cannot."""
    from . import compiled

    bp = sheet.blueprint
    if p.table is not None:
        rows, solved = bp.tables[p.table].rows, sheet.tables[1 + p.table]
    elif p.rows:
        rows, solved = p.rows, None
    else:
        return []
    out = []
    cat = compiled.shipped_catalog()
    for i, row in enumerate(rows):
        where = _where(bp, row)
        if where is None:
            return None
        parts = [plain_words(row.label)] if row.label else []
        if not row.label and (row.hardware or row.model):
            parts.append(" · ".join(x for x in (short_chip(cat.spec("hardware", row.hardware).name) if row.hardware else "",
                                                cat.spec("models", row.model).name if row.model else "") if x))
        for _, latex, v in (solved.settings[i] if solved is not None and solved.settings else ()):
            parts.append(f"{plain_words('$' + latex + '$')} = {plain(v.exact, v.unit)}")
        out.append({"given": where["given"], "label": ", ".join(parts) or (solved.rows[i][0] if solved is not None else "")})
    return out


def _symbol_text(latex: str) -> str:
    """A symbol as plain text with its Greek letters (`symbol_pieces`), a lowered or raised piece after _ or ^."""
    return "".join({"": "", "sub": "_", "sup": "^"}[k] + t for t, k in symbol_pieces(latex))


def _segments(text: str, latex_names: dict[str, str]) -> list[Any]:
    """Prose as plain words in pieces: a string is text, a one-item list a `{name}` the script fills."""
    sentinel = "\x00"
    filled = prose.render(text, lambda t: t, lambda m: plain_words(f"${m}$"), latex_names, _Sentinels(sentinel))
    parts = filled.split(sentinel)
    return [part if i % 2 == 0 else [part] for i, part in enumerate(parts) if part or i % 2]


class _Sentinels(dict[str, str]):
    """Every `{name}` filled with itself between two sentinels, so the filled text splits into text and names."""

    def __init__(self, sentinel: str) -> None:
        super().__init__()
        self.sentinel = sentinel

    def __missing__(self, key: str) -> str:
        return f"{self.sentinel}{key}{self.sentinel}"


def _equations(sheet: Sheet, ladders: dict[str, Any], plan: Plan, defaults: dict[str, Fraction]) -> dict[str, Any]:
    """What the script writes each step's displayed equation again from (`renderers.equations.equation`, ported): the formula's
    lines (as printed, where no zero can drop a term of it, else its printed form), the numbers line's printed form with a slot
    per symbol (`_numbers_form`) and, by key, the special ones that the page's zeros and ones need and those every shipped
    model's need (`_models_specials`), the symbols inside a floor or ceiling, an At step's head and replacements and its
    operands; and each operand's name, ladder and whether it is a plain number (`forms.structural`), once. A step with no
    value here, or none printed, is left the page's."""
    f = printed_forms.of(sheet)
    out: dict[str, Any] = {}
    symbols: dict[str, Any] = {}
    for st in sheet.steps:
        if not st.applies or st.value.missing:
            continue
        form = f[st.step.name]
        zeros, ones = printed_forms.structural(st)
        special = {printed_forms.special_key(zeros, ones): _numbers_form(form.numbers_at(zeros, ones))} \
            if (zeros or ones) and st.step.kind != "at" else {}
        droppable = any(form.formula.zeros)
        out[st.step.name] = {
            "at": st.step.kind == "at", "unit": st.value.unit, "formula_cases": bool(form.formula.cases),
            "formula": _printed_json(form.formula) if droppable else equation_lines(form),
            "numbers": _numbers_form(form.numbers), "special": special, "rounded": list(form.rounded),
            "at_head": form.at_head, "at_where": [[k, v.to_json()] for k, v in form.at_where],
            "operands": sorted(st.operands)}
        for n, v in st.operands.items():
            symbols[n] = {"latex": sheet.latex_names[n], "ladder": _ladder_key(ladders, v), "plain": v.unit == "1"}
    for name, lines in _models_specials(sheet, plan, defaults, out, symbols).items():
        for key, form in lines.items():
            out[name]["special"].setdefault(key, _numbers_form(form))
    return {"steps": out, "symbols": symbols}


def _models_specials(sheet: Sheet, plan: Plan, defaults: dict[str, Fraction], equations: dict[str, Any],
                     symbols: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The special numbers lines (step -> key -> printed form) that the page's equations need at every shipped model and
    weights choice on its chip, at the page's other inputs: a reader who picks another model (a dense page
    switched to an MoE model, whose expert counts drop no term) sees its numbers line, not a hidden one. The zeros and ones
    are found as the script finds them (`equationRows`: the plan in floats; a 0, or a plain 1 of `forms.STRUCTURAL_ONES`),
    and the lines are the ones `roofline derive --model` prints (`compiled.special_lines`)."""
    from . import compiled
    from .specs.catalog import model_names
    from .units import RooflineError

    bp, s = sheet.blueprint, _checkpoint_rows(sheet.setup)
    names = bound_names(bp, plan)
    wanted: dict[tuple[str, str], dict[str, tuple[frozenset[str], frozenset[str]]]] = {}
    for m, w in ((m, w) for m in model_names() for w in WEIGHT_CHOICES):
        try:
            row = Row("", model=m, weights=w or None)
            exact = run.input_values(bp, compiled.row_setup(s, row), names, defaults)
            values: dict[str, Any] = {k: v if isinstance(v, Missing) else float(v) for k, v in exact.items()}
            plan.evaluate(values)
        except (compiled.MissError, RooflineError, ArithmeticError, ValueError):  # a setup the page's refuses: no lines to show
            continue
        not_here = frozenset(n for n in plan.by_name if isinstance(values.get(n), Missing) and values[n].kind == "n/a")
        if run.layout_error(exact) is not None or not_here & set(bp.results):  # a setup `run.solve` refuses
            continue
        same = compiled.identities_at(bp.slug, run.structure(bp, compiled.shipped_catalog().bindings, exact), not_here)
        for name, e in equations.items():
            ident = same.get(name)  # a step that is an identity there is not printed there (`run.solve`): no line for it
            if e["at"] or (ident is not None and not (ident.nan and not isinstance(values.get(name), Missing))):
                continue
            ops = [(n, values.get(n)) for n in e["operands"]]
            zeros = frozenset(n for n, x in ops if isinstance(x, float) and x == 0)
            ones = frozenset(n for n, x in ops if isinstance(x, float) and x == 1 and symbols[n]["plain"] and n in printed_forms.STRUCTURAL_ONES)
            key = printed_forms.special_key(zeros, ones)
            if (zeros or ones) and key not in equations[name]["special"]:
                wanted.setdefault((m, w), {})[name] = (zeros, ones)
    out: dict[str, dict[str, Any]] = {}
    for lines in wanted.values():
        for name, forms in compiled.special_lines(bp.slug, lines).items():
            out.setdefault(name, {}).update(forms)
    return out


def _numbers_form(p: Any) -> dict[str, Any]:
    """A numbers line's printed form as the script needs it: none where it prints no symbol (no numbers line), the one case
    with a value of a case split (the step's value is in it, so only it is printed), else the whole form."""
    live = live_cases(p)
    if not p.symbols:
        return {"none": True}
    if len(live) == 1:
        return {"case": printed_pieces_json(live[0])}
    return _printed_json(p)


def _printed_json(p: Any) -> dict[str, Any]:
    """A printed form as the script fills it: of a case split, the one-line form and each case too wide for a line whatever
    fills it (`printed.least_width`) as null, since `Printed.lines` never prints them (the split a case a line, that case
    counted in its place)."""
    data = p.to_json()
    if p.cases and not p.terms:
        data["whole"] = None if least_width(p.whole) > LINE_WIDTH else data["whole"]
        data["cases"] = [None if max(least_width(v), least_width(c)) > LINE_WIDTH else case for (v, c), case in zip(p.cases, data["cases"], strict=True)]
    return data


def _ladder_key(ladders: dict[str, Any], v: Value) -> str:
    """The key of the ladder a value of `v`'s unit and display unit is printed by, added to `ladders` on first use."""
    key = f"{v.unit}|{v.display_unit or ''}"
    if key not in ladders:
        ladders[key] = ladder(v.unit, v.display_unit)
    return key


def spec_choices(sheet: Sheet, plan: Plan, defaults: dict[str, Fraction]) -> dict[str, Any]:
    """The chips, models and formats a reader may pick, with the values each binds in the plan (see the module docstring):
    per chip and per model the symbols their own parts bind; for every chip, model, weights and KV choice, in that order, an
    index into `vectors`, each vector the values of the `joint` symbols (or the reason the sheet refuses that setup); and on
    a sheet with a second chip or model, for every model and weights choice an index into `twin_vectors`, the values of the
    `twins` symbols (they depend on the chip only through the formats' math, which the model and weights fix)."""
    from . import compiled
    from .specs.catalog import hardware_names, model_names

    cat, s, bp = compiled.shipped_catalog(), sheet.setup, sheet.blueprint
    parts = cat.bindings.parts
    used = [n for n in bound_names(bp, plan) if n in parts]
    own = {kind: [n for n in used if parts[n] == kind] for kind in ("hardware", "model")}
    joint = [n for n in used if parts[n] in JOINT_PARTS]
    twins = [n for n in plan.inputs if n in cat.bindings.twins]
    chips = {h: cat.spec("hardware", h) for h in hardware_names()}
    models = {m: cat.spec("models", m) for m in model_names()}
    vectors, index = _indexed(_joint_table(s, tuple(chips), tuple(models)), joint)
    second = (bp.second_hardware, bp.second_model)
    twin_vectors, twin_index = _indexed(_twin_table(s, tuple(models), second), twins) if twins else ([], [])
    choosing = _second_choices(s, bp, tuple(models), twins, twin_vectors, twin_index) if twins else None
    engines = {n: cat.engine(n) for n in cat.engine_names()}
    maths = {m: {n: _value(cat.bindings.precisions["math"][m][n]) for n in used if parts[n] == "math"} for m in MATH_CHOICES}
    peaked = [n for n in used if parts[n] in ("peak", "peak_kv")]
    twin_peaks = [t for t in twins if parts[cat.bindings.twins[t][1]] == "peak"]
    return {"math": "", "maths": maths, "peaked": peaked, "twin_peaks": twin_peaks,
            "second_chip": s.second_hardware.key if s.second_hardware is not None else "",
            "chip": s.hardware.key, "model": s.model.key, "weights": "", "kv": s.kv.name, "engine": s.engine.name if s.engine else "",
            "engines": {n: {"values": _engine_values(sheet, plan, defaults, e), "band": _band(sheet, e)} for n, e in engines.items()},
            "engine_order": list(engines),
            "weight_choices": list(WEIGHT_CHOICES), "kv_choices": list(KV_CHOICES),
            "chips": {h: {"name": c.name, "values": {n: _value(c.values[n]) for n in own["hardware"]}, "listed": _listed(c),
                          "peaks": {m: float(v) for m, v in c.peaks.items() if m in MATH_CHOICES and isinstance(v, Fraction)}}
                      for h, c in chips.items()},
            "models": {m: {"name": c.name, "experts": c.experts, "warning": c.checkpoint_warning or "",
                           "values": {n: _value(c.values[n]) for n in own["model"]}} for m, c in models.items()},
            "chip_order": list(chips), "model_order": list(models), "joint": joint, "vectors": vectors, "index": index,
            "twins": twins, "twin_vectors": twin_vectors, "twin_index": twin_index,
            "layout": [n for n in run.LAYOUT_INPUTS if n in plan.inputs], "second": choosing,
            "second_note": "" if choosing is not None else _second(s)}


def _engine_values(sheet: Sheet, plan: Plan, defaults: dict[str, Fraction], e: Any) -> dict[str, float]:
    """The magnitude each input the profile `e` supplies takes under it on the page (an input set on the page keeps its value,
    as `run.input_magnitude` reads it: a set value first, a profile's before a default)."""
    bp, s = sheet.blueprint, replace(sheet.setup, engine=e)
    return {i.name: float(run.input_magnitude(i, s, defaults, bp.inputs)[0]) for i in bp.inputs if i.symbol in plan.inputs and i.name in e.parsed}


def _band(sheet: Sheet, e: Any) -> str:
    """The answer figure's sentence on the profile's error under `e` (`renderers.view.engine_band`), "" where it has none."""
    return engine_band(replace(sheet, setup=replace(sheet.setup, engine=e))) or ""


def _indexed(table: tuple[Any, ...], names: list[str]) -> tuple[list[Any], list[int]]:
    """A table's bound values (or refusals) as distinct vectors of `names`' values, and each entry's index among them."""
    vectors: list[Any] = []
    seen: dict[str, int] = {}
    return vectors, [_intern(_vector(got, names), vectors, seen) for got in table]


def _intern(vector: Any, vectors: list[Any], seen: dict[str, int]) -> int:
    """`vector`'s index in `vectors`, added where new (`seen`: each vector's JSON, its index)."""
    key = json.dumps(vector)
    if key not in seen:
        seen[key] = len(vectors)
        vectors.append(vector)
    return seen[key]


#: How a second chip or model reads in the form.
SECOND_WORDS = {"second_hardware": "second chip", "second_model": "second model"}


def _second_choices(s: Any, bp: Any, models: tuple[str, ...], twins: list[str], vectors: list[Any], index: list[int]) -> dict[str, Any] | None:
    """The second chip (or second model) as a list, with the values each binds (the `twins`), made small: a second chip's
    values depend on the target and its weights only through the weights' format and where it comes from (the math they
    run at on that chip), a second model's through nothing else unless it is the target's own drafter (`mtp`, `eagle`), which
    follows the target too. For every model and weights choice, its group under each rule (`keys`); for every choice, an
    index into `vectors` per group (vectors added where new). None (the page's stays) where the page's own choice does not
    bear the grouping out: two setups of one group binding different values."""
    from . import compiled
    from .specs.catalog import hardware_names, model_names
    from .specs.models import DRAFTERS
    from .units import RooflineError

    drafters = {suffix[1:] for suffix, _ in DRAFTERS}
    if bp.second_hardware:
        what, page, options = "second_hardware", s.second_hardware.key, list(hardware_names())
    else:
        what, page, options = "second_model", bp.second_model, [*model_names(), *sorted(drafters)]
    setups = [(m, w) for m in models for w in WEIGHT_CHOICES]
    formats = []
    for m, w in setups:
        try:
            got = compiled.row_setup(s, Row("", model=m, weights=w or None)).weights
            formats.append((got.principal.math, got.origin))
        except (RooflineError, compiled.MissError):
            formats.append(("refused", m, w))
    keys = {"formats": formats, "target": [(m, *f) for (m, _), f in zip(setups, formats, strict=True)]}
    groups = {rule: list(dict.fromkeys(k)) for rule, k in keys.items()}
    seen = {json.dumps(v): i for i, v in enumerate(vectors)}

    def rule_of(choice: str) -> str:
        return "target" if what == "second_model" and choice in drafters else "formats"

    def bound(choice: str) -> list[int]:
        rule, out = rule_of(choice), []
        for group in groups[rule]:
            m, w = setups[keys[rule].index(group)]
            row = Row("", model=m, weights=w or None, **{what: choice})
            out.append(_intern(_vector(_row_bound(s, row, w, second=True), twins), vectors, seen))
        return out

    mine = bound(page)
    rule = rule_of(page)
    if any(index[i] != mine[groups[rule].index(k)] for i, k in enumerate(keys[rule])):
        return None
    return {"name": what, "label": SECOND_WORDS[what], "page": page, "options": options,
            "keys": {r: [groups[r].index(k) for k in ks] for r, ks in keys.items()},
            "choices": {c: {"rule": rule_of(c), "groups": mine if c == page else bound(c)} for c in options}}


def _second(s: Any) -> str:
    """What a reader's choices leave as the page has it: the second chip or model (the primed symbols)."""
    kept = [f"the second chip, {s.second_hardware.name}" if s.second_hardware is not None else "",
            f"the second model, {s.second_model.name}" if s.second_model is not None else ""]
    kept = [k for k in kept if k]
    return f"{' and '.join(kept).capitalize()} {'stay' if len(kept) > 1 else 'stays'} the page's." if kept else ""


_TABLES: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _joint_table(s: Any, chips: tuple[str, ...], models: tuple[str, ...]) -> tuple[Any, ...]:
    """For every chip, model, weights and KV choice (in that order), the bound values of the setup a table row with them
    makes from `s`, or why the sheet refuses that setup. Once per build: a row's parts replace the page's, so only a math
    precision the page set changes the table."""
    key = ("joint", chips, models, s.math_defaulted, None if s.math_defaulted else s.math.name)
    if key not in _TABLES:
        first = replace(_checkpoint_rows(s), second_hardware=None, second_model=None)
        _TABLES[key] = tuple(_row_bound(first, Row("", hardware=h, model=m, weights=w or None, kv=kv), w, second=False)
                             for h in chips for m in models for w in WEIGHT_CHOICES for kv in KV_CHOICES)
    return _TABLES[key]


def _twin_table(s: Any, models: tuple[str, ...], second: tuple[str | None, str | None]) -> tuple[Any, ...]:
    """For every model and weights choice, the bound values of the setup with the sheet's second chip and model (`second`:
    the drafter named for the target, as a row names it), or why the sheet refuses it (no peak on the second chip)."""
    key = ("twins", models, second, s.hardware.key, s.kv.name, s.math_defaulted, None if s.math_defaulted else s.math.name)
    if key not in _TABLES:
        _TABLES[key] = tuple(_row_bound(_checkpoint_rows(s), Row("", model=m, weights=w or None, second_hardware=second[0], second_model=second[1]), w,
                                        second=True) for m in models for w in WEIGHT_CHOICES)
    return _TABLES[key]


def _checkpoint_rows(s: Any) -> Any:
    """`s` as the tables are made from: a row that names no weights takes its model's own checkpoint, whatever weights the
    page was made with (`row_formats` keeps a page's --weights on such a row), so the list's first choice means the model's
    checkpoint on every page and the tables, keyed without the page's weights, are the same for every page."""
    return replace(s, weights=replace(s.weights, origin="default")) if s.weights.origin == "--weights" else s


def _row_bound(s: Any, row: Row, weights: str, second: bool) -> Any:
    """The bound values of a row's setup made from `s` (compiled.row_setup), or the line that says why the sheet refuses it:
    the row's own error, or a math with no peak on its chip (its second chip, `second`)."""
    from . import compiled
    from .units import RooflineError

    try:
        got = compiled.row_setup(s, row)
    except compiled.MissError as err:  # a drafter the catalog does not hold is one the full path refuses: its reason
        return _drafter_refusal(row) or str(err).splitlines()[0]
    except RooflineError as err:
        return str(err).splitlines()[0]
    chip = got.second_hardware if second else got.hardware
    if chip is not None and not isinstance(chip.peaks.get(got.math.math), Fraction):  # context.make_context, api's second chip
        given = f"weights {FORMAT_WORDS[weights]} (whose math is {got.math.math})" if weights else f"the checkpoint's math, {got.math.math}"
        # refused unless the reader picks a math the chip has: the values then hold with that math's peak (`_vector`)
        return f"{given}: {chip.name} lists no dense {got.math.math} peak; it lists {_listed(chip)}", got.bound
    return got.bound


def _listed(chip: Any) -> str:
    """The maths a chip lists a dense peak for, as its refusal names them."""
    return ", ".join(k for k, v in chip.peaks.items() if isinstance(v, Fraction))


def _vector(got: Any, names: list[str]) -> Any:
    """A row's bound values of `names` as the page carries them: a list; {"error"} where the sheet refuses the row's setup;
    {"error", "values"} where only the math its weights default to has no peak on the chip (a math the reader picks may)."""
    if isinstance(got, str):
        return {"error": got}
    if isinstance(got, tuple):
        return {"error": got[0], "values": [_value(got[1][n]) for n in names]}
    return [_value(got[n]) for n in names]


def _drafter_refusal(row: Row) -> str | None:
    """Why `roofline derive` refuses a row's target's own drafter (`mtp`, `eagle`) that the target has none of: its line
    without the spec file's path; None for any other second model."""
    from .specs.errors import SpecError
    from .specs.models import DRAFTERS, load_drafter, load_model

    if not row.second_model or not row.model or row.second_model not in {suffix[1:] for suffix, _ in DRAFTERS}:
        return None
    try:
        load_drafter(row.second_model, load_model(row.model))
    except SpecError as err:
        return f"{err.field}: {err.message}" if err.field else err.message
    return None


def _claims(sheet: Sheet) -> list[dict[str, Any]]:
    """Each claim as `run._read_claim` reads it: its sides' steps (or the claimed quantity), the factors that put both in one
    unit (`run.claim_sides`, linear in each side), the tolerance and whether it says "at least"; a claim read at another
    setup (its `where` row) also carries that row as choices and input magnitudes (`_where`). A claim whose page value is
    missing, or whose row changes what a live page cannot (the math, a second chip or model, a format not in its lists), is
    not recomputed."""
    out = []
    bp = sheet.blueprint
    title = {st.step.name: prose.plain(step_title(st.step), bp.latex_names) for st in sheet.steps}
    for i, (c, decl) in enumerate(zip(sheet.claims, bp.claims, strict=True)):
        where = None if decl.where is None else _where(bp, decl.where)
        if (decl.where is not None and where is None) or c.left.missing or c.right.missing:
            continue
        left_factor, right_factor = run.claim_sides(decl, Value(1, c.left.unit), Value(1, c.right.unit))
        out.append({"index": i, "left": decl.left, "right": c.right_name,
                    "left_title": title.get(decl.left, decl.left), "right_title": title.get(c.right_name, ""), "constant": 0.0 if c.right_name else float(c.right.float),
                    "constant_text": "" if c.right_name else decl.right, "left_factor": float(left_factor),
                    "right_factor": float(right_factor), "at_least": decl.at_least, "rel_tol": decl.rel_tol,
                    "where": where})
    return out


def _where(bp: Any, row: Any) -> dict[str, Any] | None:
    """A claim's row as what the live script sets on top of the reader's setup: its chip, model, formats and engine profile
    among the page's lists, and its inputs as magnitudes in their own units (`run.read_input`); None where it changes anything else."""
    if row.second_hardware or row.second_model or (row.weights and row.weights not in WEIGHT_CHOICES) or (
            row.kv and row.kv not in KV_CHOICES) or (row.math and row.math not in MATH_CHOICES):
        return None
    given: dict[str, Any] = {k: getattr(row, k) for k in ("hardware", "model", "weights", "kv", "math", "engine") if getattr(row, k)}
    named = {i.name: i for i in bp.inputs}
    for name, text in row.set.items():
        try:
            given[name] = float(run.read_input(named[name], text))
        except run.UnreadError:
            return None
    return {"given": given}


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
    sp = data["specs"]
    choices = (("hardware", "chip", tuple((k, c["name"]) for k, c in sp["chips"].items()), sp["chip"]),
               ("model", "model", tuple((k, c["name"]) for k, c in sp["models"].items()), sp["model"]),
               ("weights", "weights", tuple((w, FORMAT_WORDS.get(w, w)) for w in WEIGHT_CHOICES), sp["weights"]),
               ("kv", "KV cache", tuple((k, FORMAT_WORDS.get(k, k)) for k in KV_CHOICES), sp["kv"]),
               ("math", "math", (("", "the weights' math"), *((m, FORMAT_WORDS.get(m, m)) for m in MATH_CHOICES)), sp["math"]),
               ("engine", "engine profile", tuple((e, e) for e in sp["engine_order"]), sp["engine"]))
    if sp["second"] is not None:
        sc = sp["second"]
        names = {**{k: c["name"] for k, c in sp["chips"].items()}, **{k: c["name"] for k, c in sp["models"].items()}}
        choices += ((sc["name"], sc["label"], tuple((c, names.get(c, c)) for c in sc["options"]), sc["page"]),)
    by_name = bp.latex_names
    steps = {st.step.name: st for st in sheet.steps}
    results = tuple((name, prose.plain(step_title(steps[name].step), by_name), _text(steps[name])) for name in bp.results if name in steps)
    return site.Live(Markup(blob), fields, results, SCRIPTS, choices)


def _text(st: Any) -> str:
    v = st.value
    if v.missing:
        return f"{v.missing.kind}: {v.missing.reason}"
    return count_plain(st.step, v)


def scripts() -> dict[str, str]:
    """The live pages' two scripts, by file name, as shipped beside this module."""
    return {name: resources.files(__package__).joinpath(name).read_text(encoding="utf-8") for name in SCRIPTS}


__all__ = ["LADDER_DECADES", "SCRIPTS", "field_text", "ladder", "live_data", "live_page", "scripts", "symbol_pieces"]


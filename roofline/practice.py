"""A question set as a practice page: each question with an answer box, graded in the browser, then the key's argument.

The page is the site's (one style, MathML, the same Content-Security-Policy) with one script, `practice.js`, from the
site's own folder: `script-src 'self'`, no inline script, no `eval`. The script reads the page's grading data (a JSON block
the browser never runs) and compares an answer with it by the rules `roofline check --against` grades a number by
(`roofline.grading.compare.grade_number`):

- the number is read with the grader's own pattern (`values._NUMBER`, carried in the data), never evaluated; its unit is
  looked up in a table of the spellings the grader's unit parser accepts for the answer's dimension, each with its factor
  to the answer's unit, made here by that parser (`formula.parse_unit`);
- within the tolerance (5%, as `check`) it is right; else it is named by the slips whose ratio it is within the tolerance of
  (`compare.number_slips`, the closest four, one per slip: `compare.closest_slips`) or by the one or two terms of the step
  it leaves out (`compare.number_terms` and `left_out_terms`), the closer of the two, as `grade_number` decides.

So a slip is defined once (`roofline.grading.verdict.SLIPS`, `RATIO_SLIPS`): the page carries each one's ratio for this
answer and its words, computed here; the script only compares. With scripts off the page is a question paper whose key
opens under each question.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from .build_outputs import SITE_SCRIPT
from .derivations.engine import prose
from .grading import values as grading_values
from .grading.compare import NUMBER_TOLERANCE, number_slips, number_terms
from .quiz_paper import asks, given_text, setup_words
from .renderers import site
from .renderers.equations import equation, step_lead
from .renderers.figure_refs import step_title
from .renderers.forms import forms_of
from .renderers.templates import TEMPLATES
from .renderers.value_text import count_plain

#: Spellings of its unit an unread answer is shown (the first the table holds, in UNIT_ATOMS' order).
EXAMPLES = 4
#: The page's and the script's file names in the site folder.
PAGE = "practice.html"
SCRIPT = SITE_SCRIPT

#: Unit atoms whose spellings (alone, and each over another) the unit table tries: the grader's parser keeps the ones it reads.
UNIT_ATOMS = (
    "s", "ms", "us", "µs", "ns", "min", "h",
    "B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "byte", "bytes", "bit", "bits", "kbit", "Mbit", "Gbit", "Tbit",
    "flop", "kflop", "Mflop", "Gflop", "Tflop", "Pflop", "Eflop",
    "token", "tokens", "ktoken", "ktokens", "Mtoken", "Mtokens",
    "parameter", "parameters",
    "J", "mJ", "kJ", "W", "kW", "MW",
    "%", "percent",
)


def script() -> str:
    """The page's script, as shipped beside this module."""
    return resources.files(__package__).joinpath(SCRIPT).read_text(encoding="utf-8")


def content_security_policy() -> str:
    """The site's policy with one more permission: scripts from the site's own folder (`practice.js`), none inline."""
    return site.content_security_policy(scripts=True)


@cache
def unit_table(step_unit: str) -> dict[str, float]:
    """Each spelling of a unit of `step_unit`'s dimension the grader reads, with its factor to `step_unit` (1 ms -> 0.001 s)."""
    from .derivations.engine import formula as fm
    from .units import Quantity, unit

    target = unit(step_unit)
    out: dict[str, float] = {}
    alone = target.dimensionless  # a ratio of like units (GB/MB) is no answer's unit: a pure number takes %, or none
    # the answer's own unit first, as the sheets write it (a power of a unit, flop/token^2, is no atom over another)
    tried = ([] if alone else [step_unit, step_unit.replace("^", "**")]) + list(UNIT_ATOMS) + ([] if alone else [f"{a}/{b}" for a in UNIT_ATOMS for b in UNIT_ATOMS
                                                  if a != b and "%" not in (a + b) and "percent" not in (a + b)])
    for text in tried:
        try:
            u = fm.parse_unit(text, "answer")
        except fm.FormulaError:  # a spelling the grader does not read is left out of the table
            continue
        q = Quantity(1, u)
        if q.dimensionality == Quantity(1, target).dimensionality:
            out[text] = float(q.to(target).magnitude)
    return out


def _answer_data(q: Any, a: Any, ident: str) -> dict[str, Any]:
    d, ctx = q.derivation, q.context
    step_unit = str(a.value.unit)
    v = a.value.float
    slips = [{"key": s.key, "text": s.text, "ratio": r} for s, r in number_slips(d, a.result, ctx)]
    terms = [{"title": t.title, "value": float(t.value)} for t in number_terms(d, a.result, ctx)]
    return {"id": ident, "result": a.result, "value": v, "unit": step_unit, "shown": count_plain(a.step.step, a.value),
            "bare": step_unit == "1" or step_unit in grading_values.BARE_NUMBER_UNITS, "slips": slips, "terms": terms}


def _step_html(st: Any, q: Any) -> dict[str, Markup]:
    d = q.derivation
    names = d.blueprint.latex_names
    form = forms_of(d)[st.step.name]
    lhs, rows = equation(st, form, names, site.HTML)
    by_name = {info.name: info.latex for info in d.symbols}
    return {"title": Markup(prose.render(step_title(st.step), site.text, site.inline_math, by_name)),
            "symbol": Markup(site.inline_math(st.latex)),
            "why": Markup(prose.render(st.step.why, site.text, site.inline_math, by_name)),
            "lead": Markup(step_lead(st, form, names, site.HTML)), "equation": Markup(site.equation(lhs, rows))}


def render(quiz: Any, tolerance: float = NUMBER_TOLERANCE) -> str:
    """The practice page of `quiz`."""
    questions, data = [], []
    for q in quiz.questions:
        answers, items = [], []
        for i, (a, ask) in enumerate(zip(q.answers, asks(q), strict=True)):
            ident = f"answer-{q.number}" + (chr(97 + i) if len(q.answers) > 1 else "")
            items.append(_answer_data(q, a, ident))
            answers.append({"id": ident, "label": (f"({chr(97 + i)}) " if len(q.answers) > 1 else "") + ask[:1].upper() + ask[1:],
                            "unit": items[-1]["unit"]})
        by_name = {info.name: info.latex for info in q.derivation.symbols}
        seen: set[str] = set()
        steps = [_step_html(st, q) for st in [*(a.step for a in q.answers), *q.argument]
                 if not (st.step.name in seen or seen.add(st.step.name))]
        questions.append({"number": q.number, "id": f"q{q.number}", "setup": setup_words(q), "given": given_text(q, None),
                          "title": Markup(prose.render(q.derivation.title, site.text, site.inline_math, by_name)),
                          "answers": answers, "steps": steps})
        data.append({"number": q.number, "answers": items})
    payload = {"tolerance": tolerance, "number_pattern": grading_values._NUMBER.pattern, "questions": data,
               "units": {u: {"factors": unit_table(u), "examples": list(unit_table(u))[:EXAMPLES]}
                         for u in sorted({a["unit"] for q in data for a in q["answers"]})}}
    # a JSON block the browser never runs: "<" written as its escape, so no text in it can close the element
    blob = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).replace("<", "\\u003c")
    return _ENV.get_template("practice.html.j2").render(
        site_title=site.TITLE, style=Markup(site.STYLE), csp=content_security_policy(), seed=quiz.seed, count=len(quiz.questions),
        tolerance=f"{tolerance:.0%}", questions=questions, data=Markup(blob), script=SCRIPT)


_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined, autoescape=True,
                          keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)

__all__ = ["PAGE", "SCRIPT", "content_security_policy", "render", "script", "unit_table"]

"""Turn a solved sheet into plain strings for one target; templates only lay them out.

A sheet reads answer first (DESIGN.md, output contract):

1. the question;
2. the answer: the derivation's answer sentences with the headline values, the
   verdict on each claim, the figure marked as the answer;
3. the argument: the steps the derivation marks (`derivation(argument=...)`),
   each a title with its symbol, one sentence and one displayed equation;
4. takeaways and the results across hardware and models (tables, figures);
5. what an interviewer scores and where the model stops being true;
6. the appendix: assumptions, conventions, the full derivation (a family of
   steps that differ only by a parameter as one table), one line on what was
   left out and why, the setup, inputs, given values, sources and symbols.

Only what applies is printed: a step that is n/a for the model at hand, or an
identity for it (derivations.engine.sheet.identities), is left out of both the argument
and the full derivation, and the appendix says so once. A prose sentence whose
value has none says so once with its reason; a reason never fills a number's slot.

The view reads plain data only: the sheet's blueprint and values (derivations.engine.run)
and its formulas' printed forms (renderers.forms), so it builds the same view on the
light path (roofline.compiled), where neither sympy nor pint is imported.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from derivations.engine import prose
from derivations.engine.blueprint import Blueprint, StepEntry
from derivations.engine.numeric import Missing
from derivations.engine.run import Sheet, SolvedStep, SolvedTable, Value
from renderers import forms as printed_forms
from renderers.figure_refs import refs as plot_refs
from renderers.figure_refs import step_title
from renderers.forms import Forms, StepForm, at_latex, at_replacements
from renderers.numbers import Number, Shown, display, float_whole, is_whole, number_text, whole_count
from renderers.printed import MAX_LINE_WIDTH, math_width, number_latex
from renderers.targets import Target
from units import pintless


def shown(v: Value) -> Shown:
    return display(v.exact, v.unit, v.display_unit)


DIMENSIONLESS = pintless.unit("1")
#: Crossovers in these symbols (glossary names) are physically whole numbers: what the crossover is.
COUNTS = {"B": "batch", "S": "prompt", "T": "context", "q": "number of tokens per step"}
#: How a count was made whole, said once where counts are printed.
ROUNDING_WORDS = {"up": "rounded up", "down": "rounded down", "nearest": "rounded to the nearest whole number"}


def value_text(v: Value, target: Target) -> str:
    """A value as running text: the number with its unit, or 'none: reason' / 'n/a: reason' (a table's or a claim's note)."""
    return missing_text(v.missing, target) if v.missing else target.quantity_text(shown(v))


def missing_text(m: Missing, target: Target) -> str:
    """'none: reason': a closed form's reason is the derivation's prose (it may hold math); a spec's is literal text."""
    return target.text(f"{m.kind}: ") + reason_text(m, target)


def reason_text(m: Missing, target: Target) -> str:
    """Why a value is missing, as text for `target`."""
    if m.prose:
        return prose.render(m.reason, target.text, target.inline_math, {}, None, target.link)
    return target.text(m.reason)


# --- counts ---------------------------------------------------------------------------------------------


def whole(step: StepEntry, v: Value) -> int | None:
    """A count's value as the whole number a reader runs (None when the step is not a count or has no value)."""
    if not step.counts or v.exact is None:
        return None
    return whole_count(step.counts, step.rounds, v.float)


def _is_count(n: int | None, x: object) -> bool:
    """Whether the value `x` is the whole number `n` (a float from the compiled evaluation: up to its noise)."""
    return n is not None and (x == n or (isinstance(x, float) and float_whole(x) == n))


def count_shown(step: StepEntry, v: Value) -> Shown | None:
    """A count shown as a whole number in its display unit; None for anything else."""
    n = whole(step, v)
    if n is None:
        return None
    s = shown(v)
    if s.unit.text == v.unit:
        return Shown(Number(str(n)), s.unit)
    return Shown(Number(str(n)), pintless.unit(v.unit))


def count_noun(step: StepEntry, v: Value) -> str:
    """The noun a dimensionless count takes after its number ("242 sequences"); '' when its unit says it already (tokens)."""
    if not step.counts or v.unit != "1":
        return ""
    n = whole(step, v)
    return step.counts[:-1] if n == 1 and step.counts.endswith("s") else step.counts


def step_value_text(step: StepEntry, v: Value, target: Target) -> str:
    """A step's value as running text: a count whole, with its noun."""
    c = count_shown(step, v)
    if c is None:
        return value_text(v, target)
    noun = count_noun(step, v)
    return target.quantity_text(c) + (target.text(" " + noun) if noun else "")


# --- equations -------------------------------------------------------------------------------------------


def equation(step: SolvedStep, form: StepForm, names: Mapping[str, str], target: Target) -> tuple[str, list[dict[str, str]]]:
    """(left side, rows) of a step's displayed equation: symbol = formula (= numbers) (= result).

    Each row is {"op": "=", "math": ...} or, for a long sum broken over lines, {"op": "", "math": "+ ..."}. A numbers line
    that would not fit even broken is left out (the given values are in the appendix); nothing is shrunk.
    """
    at = step.step.kind == "at"
    if at:
        rows = [{"op": "=", "math": at_latex(form, names)}]
    else:
        rows = _rows(form.formula.lines({}))
        if len(rows) == 1 and math_width(rows[0]["math"]) > MAX_LINE_WIDTH:
            # one term (a fraction, a product) too wide for the line and with no sum to break: said, not shrunk
            rows = [{"op": "=", "math": r"\text{a formula too wide to print here (the JSON holds it)}"}]
    formula = rows[0]["math"] if len(rows) == 1 else None
    if step.value.missing:
        return step.latex, rows
    rounded = set(form.rounded)
    numbers = {n: names[n] if v.missing else target.quantity_math(_operand_shown(v, n in rounded)) for n, v in step.operands.items()}
    result = target.quantity_math(shown(step.value))
    if at:
        substituted = [at_latex(form, numbers)]
    elif form.numbers.symbols and not (form.formula.cases and len(rows) > 1):
        # a case split printed a case a line reads its value in the case that applies: no numbers line of every case
        substituted = form.numbers.lines(numbers)
    else:
        substituted = []
    fits = all(math_width(line) <= MAX_LINE_WIDTH for line in substituted)
    if substituted and fits and substituted[0] not in (result, formula) and len(substituted) <= 4:
        rows += _rows(substituted)
    rows.append({"op": "=", "math": result})
    return step.latex, rows


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
    """For a count whose value is not whole: the whole number a reader runs, and how it was rounded."""
    s, v = step.step, step.value
    n = whole(s, v)
    if n is None or _is_count(n, v.exact):
        return ""
    what = COUNTS.get(s.for_) if s.kind == "solve" else None
    text = step_value_text(s, v, target)
    if what and s.rounds == "down":
        return target.text(f" In whole numbers, the largest {what} within it: ") + text + target.text(".")
    if what:
        return target.text(f" In whole numbers, the first {what} at or past it: ") + text + target.text(".")
    return target.text(" In whole numbers: ") + text + target.text(f" ({ROUNDING_WORDS[s.rounds]}).")


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


def _why(step: StepEntry) -> str:
    """The step's sentence, without an opening that only repeats its heading ("Step time. The step time: ..." reads "... ")."""
    title = _words(step_title(step))
    m = re.match(r"(?:The |A )?([^.:;]*)[.:;]\s+", step.why)
    if m and _words(m.group(1)) == title and m.end() < len(step.why):
        rest = step.why[m.end():]
        return rest[:1].upper() + rest[1:]
    return step.why


def _words(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


# --- prose with values -------------------------------------------------------------------------------------


def _join(items: Sequence[str], target: Target) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + target.text(" and ") + items[-1]


def _either(items: Sequence[str], target: Target) -> str:
    """Alternatives that may hold commas of their own: 'a, b; c, d; or e, f'."""
    if len(items) <= 1:
        return "".join(items)
    return target.text("; ").join(items[:-1]) + target.text("; or ") + items[-1]


def _lower_first(text: str) -> str:
    """A title inside a sentence: lower-case first letter, unless the title opens with an acronym or a symbol (MBU, GEMM, KV)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper() and text[1] not in "-0123456789":
        return text[0].lower() + text[1:]
    return text


_PLACEHOLDER_WORD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\} ([a-z]+)\b")


class Prose:
    """Renders a derivation's prose for one target, filling `{step}` placeholders with values.

    A piece of prose that reads a value with none here is not printed with a reason in a number's slot: `items` replaces
    every such piece of a list by one sentence per reason, naming what has no value ("The idle share and the collective
    share have no value here: ..."), at the place of the first.
    """

    def __init__(self, sheet: Sheet, target: Target) -> None:
        d = sheet.blueprint
        self.d, self.target = d, target
        self.latex = d.latex_names
        self.values: dict[str, Value] = {st.step.name: st.value for st in sheet.steps}
        self.texts = {name: step_value_text(d.step(name), v, target) for name, v in self.values.items() if not v.missing}
        for i in sheet.inputs:
            self.values[i.name] = i.value
            self.texts[i.name] = target.quantity_text(shown(i.value))
        self.nouns = {name: count_noun(d.step(name), v) for name, v in self.values.items() if name in d.step_names and not v.missing}

    def __call__(self, text: str) -> str:
        """Prose with no values missing (a title, a note): rendered as written."""
        text = _PLACEHOLDER_WORD.sub(self._noun_once, text)
        return prose.render(text, self.target.text, self.target.inline_math, self.latex, self._filled(text), self.target.link)

    def _noun_once(self, m: re.Match[str]) -> str:
        """'{B_flip} sequences' where the value already says '8 sequences': the noun once."""
        noun = self.nouns.get(m.group(1), "")
        if noun and m.group(2) in (noun, noun.rstrip("s"), noun + "s"):
            return "{" + m.group(1) + "}"
        return m.group(0)

    def _filled(self, text: str) -> dict[str, str]:
        out = dict(self.texts)
        for name in prose.placeholders(text):
            if name not in out:  # a value with none: said by `items`; a lone string shows the kind only
                out[name] = self.target.text(self.values[name].missing.kind if self.values[name].missing else "")
        return out

    def missing(self, text: str) -> list[tuple[str, Missing]]:
        return [(n, self.values[n].missing) for n in dict.fromkeys(prose.placeholders(text)) if self.values[n].missing]

    def items(self, texts: Sequence[str]) -> list[str]:
        """A list of prose items (takeaways, answer sentences): complete ones as written, the rest said once per reason."""
        out: list[str] = []
        said: dict[str, list[str]] = {}
        slot: dict[str, int] = {}
        for text in texts:
            gone = self.missing(text)
            if not gone:
                out.append(self(text))
                continue
            for name, m in gone:
                key = m.kind + "\0" + m.reason
                if key not in said:
                    said[key], slot[key] = [], len(out)
                    out.append("")
                if name not in said[key]:
                    said[key].append(name)
        for key, names in said.items():
            m = self.values[names[0]].missing
            out[slot[key]] = self.none_sentence(names, m)
        return out

    def none_sentence(self, names: Sequence[str], m: Missing) -> str:
        """'The best draft length has no value here: no draft length beats plain decode here.'"""
        t = self.target
        titles = [self(_lower_first(step_title(self.d.step(n)))) if n in self.d.step_names else t.text(n) for n in names]
        verb = "have" if len(names) > 1 else "has"
        what = "no value here" if m.kind == "none" else "do not apply here" if len(names) > 1 else "does not apply here"
        head = _join(titles, t)
        head = head[:1].upper() + head[1:] if head[:1].isalpha() else head
        reason = reason_text(m, t).rstrip(". ")
        return head + t.text(f" {verb if m.kind == 'none' else ''}".rstrip() + f" {what}: ") + reason + t.text(".")


# --- the sheet ---------------------------------------------------------------------------------------------


def build(sheet: Sheet, target: Target, plots: str | None = None) -> dict[str, Any]:
    """The template's variables; with `plots` (a folder, relative to the sheet), figures linking each declared plot's file there.

    A view is built once per sheet, target and plots folder (the book binds the views its sheets' LaTeX files were made
    from); each call gets its own copy to change.
    """
    key = (id(sheet), id(target), plots)
    hit = _VIEWS.get(key)
    if hit is None or hit[0] is not sheet or hit[1] is not target:
        if len(_VIEWS) > 64:
            _VIEWS.clear()
        hit = _VIEWS[key] = (sheet, target, _build(sheet, target, plots))
    return copy.deepcopy(hit[2])


#: views by (sheet, target, plots folder), kept beside the sheet and target they were built for (an id is never reused for another)
_VIEWS: dict[tuple[int, int, str | None], tuple[Sheet, Target, dict[str, Any]]] = {}


def _build(sheet: Sheet, target: Target, plots: str | None) -> dict[str, Any]:
    d = sheet.blueprint
    names = sheet.latex_names
    f = printed_forms.of(sheet)
    p = Prose(sheet, target)
    t = target.text
    printed = [st for st in sheet.steps if st.applies]
    used = used_symbols(sheet, f)
    memo: dict[str, tuple[str, list[dict[str, str]], str]] = {}
    marked = d.argument or d.results  # a derivation that marks no argument (a user's file): its headline steps
    argument = [st for st in printed if st.step.name in marked]
    figures = _figures(sheet, target, p, plots)
    headline = replace(sheet.tables[0], title="Headline results")
    laid = [_tables(tb, d, target, p) for tb in (headline, *sheet.tables[1:])]
    body = [0] + [i + 1 for i in (range(len(d.tables)) if d.body_tables is None else d.body_tables)]
    more = [part for i, tbs in enumerate(laid) if i not in body for part in tbs]
    tables = [part for i in body for part in laid[i]]
    if target.name == "tex":
        tables = [part for tb in tables for part in split_to_fit(tb, target)]
        more = [part for tb in more for part in split_to_fit(tb, target)]
    return {
        "slug": target.code(d.slug),
        "title": p(d.title),
        "question": p(d.question),
        "context_label": t(sheet.context_label),
        "step_label": _step_label(sheet, target),
        "answer": p.items(d.answer) if d.answer else _default_answer(sheet, target, p),
        "does_not_fit": t(f"Does not fit: this setup needs {number_text(shown(sheet.overflow).number)} times the memory one GPU has, "
                          "so its times describe a server that cannot be built as stated (more GPUs, a smaller batch or a shorter context).")
        if sheet.overflow else "",
        "claims": _claims(sheet, target, p, names),
        "page_one_claims": PAGE_ONE_CLAIMS,
        "answer_figures": [f for f in figures if f["answer"]],
        "argument": [_step(st, i + 1, f, names, target, p, memo) for i, st in enumerate(argument)],
        "takeaways": p.items(d.takeaways),
        "tables": tables,
        "more_tables": more,
        "figures": [f for f in figures if not f["answer"]],
        "scoring": p.items(d.scoring),
        "limits": p.items(d.limits),
        "assumptions": p.items(d.assumptions),
        "conventions": [p(c) for c in sheet.conventions],
        "steps": _appendix_steps(sheet, printed, f, names, target, p, memo, {st.step.name: i + 1 for i, st in enumerate(argument)}),
        "left_out": left_out(sheet, target, p, names),
        "facts": [{"label": t(k), "value": _breakable_paths(t(v), target)} for k, v in sheet.spec_facts],
        "sources": [{"label": t(what), "urls": [target.url(u) for u in links]} for what, links in sheet.sources if links],
        "inputs": [
            {"name": target.code(i.name), "symbol": target.inline_math(i.info.latex), "value": target.quantity_text(shown(i.value)),
             "status": "set" if i.is_set else "default", "meaning": p(i.meaning)}
            for i in sheet.inputs
        ],
        "given": [
            {"symbol": target.inline_math(info.latex), "value": value_text(v, target), "meaning": p(info.meaning)}
            for info, v in sheet.bound if not v.missing and info.name in used
        ],
        "symbols": _symbols(sheet, target, p, used),
    }


def _default_answer(sheet: Sheet, target: Target, p: Prose) -> list[str]:
    """A derivation that declares no answer sentences (a user's file): one plain sentence per headline result."""
    d = sheet.blueprint
    out = []
    for name in d.results:
        title = p(step_title(d.step(name)))
        v = sheet.results[name]
        out.append(p.none_sentence([name], v.missing) if v.missing else
                   title + target.text(": ") + target.inline_math(d.symbol(name).latex) + target.text(" = ")
                   + step_value_text(d.step(name), v, target) + target.text("."))
    return out


def _step(st: SolvedStep, number: int, f: Forms, names: Mapping[str, str], target: Target, p: Prose,
          memo: dict[str, tuple[str, list[dict[str, str]], str]] | None = None) -> dict[str, Any]:
    """One printed step; `memo` keeps the equations of steps printed twice (in the argument and the appendix)."""
    memo = {} if memo is None else memo
    if st.step.name not in memo:
        form = f[st.step.name]
        memo[st.step.name] = (*equation(st, form, names, target), step_lead(st, form, names, target))
    lhs, rows, lead = memo[st.step.name]
    return {"kind": "step", "name": st.step.name, "number": number, "title": p(step_title(st.step)), "symbol": target.inline_math(st.latex), "why": p(_why(st.step)),
            "lead": lead, "lhs": target.math(lhs), "rows": [{**r, "math": target.math(r["math"])} for r in rows]}


def _appendix_steps(sheet: Sheet, printed: Sequence[SolvedStep], f: Forms, names: Mapping[str, str], target: Target, p: Prose,
                    memo: dict[str, tuple[str, list[dict[str, str]], str]], argued: Mapping[str, int]) -> list[dict[str, Any]]:
    """Every step that applies, in order; a family of steps that differ only by a parameter as one table; a step the
    argument prints in full is named with its place there (`argued`: step name -> its number in the argument)."""
    d = sheet.blueprint
    shown_names = {st.step.name for st in printed}
    family_of: dict[str, tuple[str, ...]] = {}
    for fam in d.families:
        members = tuple(n for n in fam if n in shown_names)
        if len(members) >= 3:
            family_of.update({n: members for n in members})
    by_name = {st.step.name: st for st in printed}
    out: list[dict[str, Any]] = []
    done: set[str] = set()
    for st in printed:
        name = st.step.name
        if name in done:
            continue
        if name in family_of:
            members = [by_name[n] for n in family_of[name]]
            done.update(family_of[name])
            out.append(_family(members, len(out) + 1, f, names, target, p))
        elif name in argued:
            out.append({"kind": "ref", "name": name, "number": len(out) + 1, "title": p(step_title(st.step)),
                        "symbol": target.inline_math(st.latex), "argued": argued[name]})
        else:
            out.append(_step(st, len(out) + 1, f, names, target, p, memo))
    return out


_FUNCTION_WORDS = {"of", "at", "the", "a", "an", "for", "in", "with", "by", "on", "to", "per"}


def _family(members: Sequence[SolvedStep], number: int, f: Forms, names: Mapping[str, str], target: Target, p: Prose) -> dict[str, Any]:
    """A family as one table: the part of the title they share, then one row per member (what varies, its formula, its value)."""
    titles = [step_title(m.step).split() for m in members]
    common = 0
    while all(len(w) > common and w[common] == titles[0][common] for w in titles):
        common += 1
    head = titles[0][:common]
    while len(head) > 1 and head[-1].lower() in _FUNCTION_WORDS:
        head = head[:-1]
    rows = []
    for m, words in zip(members, titles, strict=True):
        s = m.step
        form = f[s.name]
        if s.kind == "at" and form.at_where:
            label = target.inline_math(at_replacements(form, names))
        else:
            rest = " ".join(words[common:]) or step_title(s)
            label = p(rest)
        value = target.text(m.value.missing.kind) if m.value.missing else step_value_text(s, m.value, target)
        rows.append({"label": label, "equation": target.inline_math(f"{m.latex} = {form.latex}"), "value": value})
    whys = [m.step.why for m in members]
    why = max(set(whys), key=whys.count) if whys else ""
    return {"kind": "family", "names": [m.step.name for m in members], "number": number, "title": p(" ".join(head)), "why": p(why) if whys.count(why) > 1 else "", "rows": rows}


def left_out(sheet: Sheet, target: Target, p: Prose, names: Mapping[str, str]) -> str:
    """One line: the steps not printed here and why (n/a for this model or chip; identities for it)."""
    t = target.text
    na: dict[str, list[str]] = {}
    same: list[str] = []
    empty: list[str] = []
    for st in sheet.steps:
        if st.value.missing is not None and st.value.missing.kind == "n/a":
            na.setdefault(reason_text(st.value.missing, target), []).append(target.inline_math(st.latex))
        elif st.identity is not None and st.identity.nan:
            empty.append(target.inline_math(st.latex))
        elif st.identity is not None:
            reduced = names[st.identity.symbol] if st.identity.symbol else number_latex(st.identity.number)  # type: ignore[arg-type]
            same.append(target.inline_math(f"{st.latex} = {reduced}"))
    parts = []
    for reason, symbols in na.items():
        parts.append(t(f"{len(symbols)} step{'s' if len(symbols) > 1 else ''} that do{'' if len(symbols) > 1 else 'es'} not apply to "
                       f"{sheet.setup.model.name} on {sheet.setup.hardware.name} (") + reason.rstrip(".") + t("): ") + ", ".join(symbols))
    if same:
        parts.append(t(f"{len(same)} step{'s' if len(same) > 1 else ''} that reduce{'' if len(same) > 1 else 's'} to one symbol or a number here: ")
                     + ", ".join(same))
    if empty:
        parts.append(t(f"{len(empty)} step{'s' if len(empty) > 1 else ''} with nothing to compute here (a ratio of parts that are zero): ")
                     + ", ".join(empty))
    return (t("Left out: ") + t("; ").join(parts) + t(".")) if parts else ""


def used_symbols(sheet: Sheet, f: Forms) -> set[str]:
    """The spec-bound symbols the printed steps read (and what left-out identities reduce to): the given table lists only these."""
    used: set[str] = set()
    for st in sheet.steps:
        if st.identity is not None and st.identity.symbol:
            used.add(st.identity.symbol)
        if st.applies:
            used.update(f[st.step.name].used)
    return used


def _symbols(sheet: Sheet, target: Target, p: Prose, given: set[str]) -> list[dict[str, str]]:
    d = sheet.blueprint
    used = {info.name for info, _ in sheet.bound} & given
    used |= {i.info.name for i in sheet.inputs} | {st.step.name for st in sheet.steps if st.applies}
    out, seen = [], set()
    for info in d.symbols:
        if info.name in used and info.name not in seen:
            seen.add(info.name)
            name = target.code(info.name)
            if target.name == "tex":  # a long JSON name in a narrow column may break after an underscore
                name = name.replace(r"\_", r"\_\allowbreak{}")
            out.append({"symbol": target.inline_math(info.latex), "name": name, "unit": target.unit(info.unit),
                        "meaning": p(info.meaning)})
    return out


def _figures(sheet: Sheet, target: Target, p: Prose, plots: str | None) -> list[dict[str, Any]]:
    if plots is None:
        return []
    d = sheet.blueprint
    refs = plot_refs(d, plots, "pdf" if target.name == "tex" else "svg")
    return [{"path": f["path"], "alt": target.text(f["alt"]), "caption": p(f["caption"]), "answer": plot.answer}
            for plot, f in zip(d.plots, refs, strict=True)]


def _claims(sheet: Sheet, target: Target, p: Prose, names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each claim's verdict with its two sides; a claim that fails where another reading of it holds says under which."""
    d = sheet.blueprint
    holding: dict[tuple[str, str, bool], list[str]] = {}
    for c, decl in zip(sheet.claims, d.claims, strict=True):
        if c.holds and decl.where is not None:
            holding.setdefault((c.left_name, decl.right, decl.at_least), []).append(p(decl.where.label))
    out = []
    for c, decl in zip(sheet.claims, d.claims, strict=True):
        verdict = {True: "holds", False: "does not hold", None: "cannot be checked"}[c.holds]
        only = holding.get((c.left_name, decl.right, decl.at_least), []) if c.holds is False else []
        detail = _claim_detail(c, decl, target, p, names)
        other = _other_step_note(sheet, c, target, names)
        out.append({"text": _breakable_paths(p(c.text), target), "holds": c.holds, "verdict": verdict,
                    "detail": detail + (target.text("; ") + other if other else ""),
                    "only_if": _either(only, target)})
    return out


def _serving_words(sheet: Sheet, output_len: Value, target: Target) -> str:
    """'each sequence's 2,048-token prompt computed within its 700 output tokens', from the sheet's prompt length."""
    prompt = next(i.value for i in sheet.inputs if i.name == "prompt_len")
    return (target.text("each sequence's ") + target.quantity_text(shown(prompt)) + target.text(" of prompt computed within its ")
            + target.quantity_text(shown(output_len)) + target.text(" of output"))


def _step_label(sheet: Sheet, target: Target) -> str:
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
    """'σ* = 1.71 against the claimed 3; α = 0.8' or, without a value, why it cannot be checked (once)."""
    t = target.text
    gone = next((v.missing for v in (c.left, c.right) if v.missing), None)
    where = "; ".join(x for x in (p(c.where), t(f"read as numbers in {c.convert}" if c.convert else "")) if x)
    if gone is not None:
        return reason_text(gone, target) + (t("; ") + where if where else "")
    return _sides(c, p.d, target, names) + (t("; ") + where if where else "")


def _sides(c: Any, d: Blueprint, target: Target, names: Mapping[str, str]) -> str:
    """'σ* = 1.71 against the claimed 3' or 'σ = 2.03 against σ' = 1.99': a claim's two sides as read."""
    t = target.text
    left = target.inline_math(names[c.left_name]) + t(" = ") + step_value_text(d.step(c.left_name), c.left, target)
    if c.right_name:
        return left + t(" against ") + target.inline_math(names[c.right_name]) + t(" = ") + step_value_text(d.step(c.right_name), c.right, target)
    return left + t(" against the claimed ") + target.quantity_text(shown(c.right))


# --- tables ------------------------------------------------------------------------------------------------

#: A column whose value is the same on at least this many rows moves into the table's note.
MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN = 3
#: The width a LaTeX table may take before it is split into parts, in the units of `targets.math_width` (about a character
#: of small type, about 4.6 pt; the text block is 16.6 cm, 470 pt).
TABLE_WIDTH = 100
_VENDOR = re.compile(r"^(NVIDIA|AMD Instinct|AMD|Google|Intel)\s+")
_MEMORY = re.compile(r"\s+\d+\s?GB$")


def short_chip(name: str) -> str:
    """A chip's name short enough for a table column: no vendor, no memory size, no parenthetical ('NVIDIA H100 SXM5 80GB' -> 'H100 SXM5')."""
    short = _MEMORY.sub("", re.sub(r"\s*\(.*?\)", "", _VENDOR.sub("", name))).strip()
    return short or name


def _common_unit(cells: Sequence[Value | None]) -> str | None:
    """One display unit for a column whose values would otherwise show in several (ms and µs): the one most of them read best in."""
    units = [shown(c).unit.text for c in cells if c is not None and not c.missing]
    if len(set(units)) <= 1:
        return None
    best = max(dict.fromkeys(units), key=lambda u: (sum(1 for c in cells if c is not None and not c.missing and _in_range(c, u)), units.count(u)))
    return best


def _in_range(v: Value, u: str) -> bool:
    try:
        m = abs(float(pintless.convert(float(v.exact), pintless.unit(v.unit), pintless.unit(u))))  # type: ignore[arg-type]
    except (pintless.LightUnitError, TypeError, ValueError):
        return False
    return 1 <= m < 1000


def _tables(tb: SolvedTable, d: Blueprint, target: Target, p: Prose) -> list[dict[str, Any]]:
    """A table over chips and models as read: the columns no chip changes once per model; the ones a chip changes by chip,
    as a grid of models against chips when there is one such column."""
    parts = list(tb.parts) if tb.parts and all(x is not None for x in tb.parts) else None
    if parts is None or len({hw for hw, _ in parts}) < 2:
        return [_table(tb, d, target, p)]
    by_chip = [j for j in range(len(tb.columns)) if _varies_by_chip([(r[0], (r[1][j],), r[2]) for r in tb.rows], parts)]
    if not by_chip or (len(by_chip) == len(tb.columns) and len(by_chip) > 1):
        return [_table(tb, d, target, p)]
    others = [j for j in range(len(tb.columns)) if j not in by_chip]
    out = [_table(_columns(tb, others), d, target, p)] if others else []
    chip_table = _table(replace(_columns(tb, by_chip), title=tb.title + (" by chip" if others else "")), d, target, p)
    models = list(dict.fromkeys(m for _, m in parts))
    if len(by_chip) == 1 and len(models) > 1 and len(chip_table["label_headers"]) == 2:
        chip_table = _pivot(chip_table, target)
    return [*out, chip_table]


def _columns(tb: SolvedTable, keep: Sequence[int]) -> SolvedTable:
    return replace(tb, columns=tuple(tb.columns[j] for j in keep),
                   rows=tuple((label, tuple(cells[j] for j in keep), why) for label, cells, why in tb.rows))


def _varies_by_chip(rows: Sequence[tuple[str, tuple[Value | None, ...], str]], parts: Sequence[tuple[str, str]]) -> bool:
    return _depends(rows, parts)[0]


def _pivot(table: dict[str, Any], target: Target) -> dict[str, Any]:
    """A one-column table of (chip, model) rows as a grid: one row per model, one column per chip."""
    chips = list(dict.fromkeys(r["labels"][0] for r in table["rows"]))
    grid: dict[str, dict[str, str]] = {}
    reasons: dict[str, list[str]] = {}
    for r in table["rows"]:
        grid.setdefault(r["labels"][1], {})[r["labels"][0]] = r["cells"][0]
        reasons.setdefault(r["labels"][1], [])
        reasons[r["labels"][1]] += [x for x in r["reasons"] if x not in reasons[r["labels"][1]]]
    header = table["headers"][0]
    rows = [{"label": model, "labels": [model], "cells": [cells.get(c, target.text("n/a")) for c in chips], "reasons": reasons[model]}
            for model, cells in grid.items()]
    return {**table, "title": table["title"] + target.text(": ") + header, "headers": chips, "header_names": chips,
            "label_headers": [target.text("model")], "rows": rows, "whys": _whys(rows, target)}


def _table(tb: SolvedTable, d: Blueprint, target: Target, p: Prose) -> dict[str, Any]:
    """A table laid out for reading: one unit per column (in its header), a column equal on every row said once in the note,
    counts whole (the rounding said once), the hardware (or model) column dropped when no value depends on it, short chip names."""
    t = target.text
    rows_in = list(tb.rows)
    parts = list(tb.parts) if tb.parts and all(x is not None for x in tb.parts) else None
    settings = list(tb.settings or [()] * len(rows_in))
    authored = list(tb.authored or [False] * len(rows_in))
    overflows = list(tb.overflows or [False] * len(rows_in))
    keep_hw = keep_model = True
    if parts is not None:
        keep_hw, keep_model = _depends(rows_in, parts)
        if not (keep_hw and keep_model):
            key = _row_keys(parts, keep_hw, keep_model, settings)
            keep_idx = [i for i, k in enumerate(key) if k not in key[:i]]  # the first row of each key
            # a row that stands for several chips (or models) does not fit only if it fits on none of them
            overflows = [all(o for k, o in zip(key, overflows, strict=True) if k == key[i]) for i in range(len(parts))]
            rows_in = [rows_in[i] for i in keep_idx]
            parts = [parts[i] for i in keep_idx]
            settings, authored, overflows = ([x[i] for i in keep_idx] for x in (settings, authored, overflows))
    n = len(rows_in)
    steps = [d.step(c) for c, _ in tb.columns]
    keep, constants, headers, col_units, rounded = [], [], [], [], []
    for j, (_, latex) in enumerate(tb.columns):
        col = [cells[j] for _, cells, _ in rows_in]
        forced = None if steps[j].counts else _common_unit(col)
        texts = {_cell_text(c, steps[j], target, forced, with_unit=True) for c in col if c is not None and not c.missing}
        if n >= MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN and len(texts) == 1 and all(c is not None and not c.missing for c in col):
            constants.append(target.inline_math(latex) + " = " + texts.pop())
            continue
        keep.append(j)
        shown_units = {_shown_in(c, forced).unit.text for c in col if c is not None and not c.missing}
        first = next((c for c in col if c is not None and not c.missing), None)
        shared = _shown_in(first, forced).unit if first is not None and len(shown_units) == 1 and shown_units != {"1"} else None
        col_units.append(shared)
        noun = steps[j].counts if steps[j].counts and shown_units == {"1"} else ""
        header_unit = target.unit(shared) if shared is not None else (t(noun) if noun else "")
        headers.append(target.inline_math(latex) + (f" ({header_unit})" if header_unit else ""))
        if steps[j].counts and any(c is not None and not c.missing and not _is_count(whole(steps[j], c), c.exact) for c in col):
            rounded.append((steps[j], latex))
    note = p(tb.note)
    extra = []
    if constants:
        extra.append(t("On every row: ") + ", ".join(constants) + t("."))
    by_rounding: dict[str, list[str]] = {}
    for step, latex in rounded:
        by_rounding.setdefault(step.rounds, []).append(target.inline_math(latex))
    if by_rounding:
        extra.append(t("Whole numbers: ") + t("; ").join(_join(symbols, target) + t(f" {ROUNDING_WORDS[how]}") for how, symbols in by_rounding.items())
                     + t("."))
    chips = sorted({hw for hw, _ in parts}) if parts is not None and keep_hw else []
    key = [(short_chip(c), c) for c in chips if short_chip(c) != c]
    if key:
        extra.append(t("Chips: ") + t("; ").join(t(f"{s}: {c}") for s, c in key) + t("."))
    note = " ".join(x for x in (note, *extra) if x)
    rows = []
    label_headers = [x for x, on in ((t("hardware"), keep_hw), (t("model"), keep_model)) if on] if parts is not None else [""]
    for i, ((label, cells, why), setting, auth, over) in enumerate(zip(rows_in, settings, authored, overflows, strict=True)):
        fits = t(" (does not fit)") if over else ""
        if parts is not None:
            hw, model = parts[i]
            labels = [x for x, on in ((t(short_chip(hw)), keep_hw), (_row_label(t(model), setting, target), keep_model)) if on]
            labels[-1] += fits
        else:
            labels = [_row_label(p(label) if auth else t(short_chip(label)), setting, target) + fits]
        rows.append({"label": " · ".join(labels) if len(labels) > 1 else labels[-1], "labels": labels,
                     "cells": [_cell_text(cells[j], steps[j], target, _unit_name(col_units[k]), with_unit=col_units[k] is None and not _dimless_count(steps[j], cells[j]))
                               for k, j in enumerate(keep)],
                     "reasons": _row_reasons(cells, why, target)})
    return {"title": p(tb.title), "note": note, "headers": headers, "label_headers": label_headers,
            "header_names": [t(tb.columns[j][0]) for j in keep], "rows": rows, "whys": _whys(rows, target)}


def _whys(rows: Sequence[dict[str, Any]], target: Target) -> list[str]:
    """Why some cells have no value, each reason once, after the rows it applies to ("$B = 8$ and $B = 16$: ..."); the
    reasons of the same rows on one line, the rows named once."""
    by_reason: dict[str, list[str]] = {}
    for r in rows:
        for reason in r["reasons"]:
            by_reason.setdefault(reason, []).append(r["label"])
    by_rows: dict[tuple[str, ...], list[str]] = {}
    for reason, labels in by_reason.items():
        by_rows.setdefault(tuple(labels), []).append(reason)
    return [_join(list(labels), target) + target.text(": ") + target.text("; ").join(reasons) for labels, reasons in by_rows.items()]


def _unit_name(u: Any) -> str | None:
    return u.text if u is not None else None


def _dimless_count(step: StepEntry, c: Value | None) -> bool:
    return bool(step.counts) and c is not None and c.unit == "1"


def _depends(rows: Sequence[tuple[str, tuple[Value | None, ...], str]], parts: Sequence[tuple[str, str]]) -> tuple[bool, bool]:
    """(a hardware column, a model column): each only where some value differs by it; the model column when neither does."""
    def key(cells: tuple[Value | None, ...]) -> tuple[object, ...]:
        return tuple(None if c is None else (c.missing.kind if c.missing else c.exact) for c in cells)

    def varies(by: int) -> bool:
        """Whether some row differs from another that has the same model (by=0) or the same chip (by=1)."""
        groups: dict[str, set[tuple[object, ...]]] = {}
        for (_, cells, _), part in zip(rows, parts, strict=True):
            groups.setdefault(part[1 - by], set()).add(key(cells))
        return any(len(v) > 1 for v in groups.values())

    keep_hw = len({hw for hw, _ in parts}) > 1 and varies(0)
    keep_model = (len({m for _, m in parts}) > 1 and varies(1)) or not keep_hw
    return keep_hw, keep_model


def _row_keys(parts: Sequence[tuple[str, str]], keep_hw: bool, keep_model: bool, settings: Sequence[object]) -> list[tuple[object, ...]]:
    """What tells rows apart once a chip (or model) column is dropped: the kept chip and model, and the row's settings as
    (input, value) pairs (the layouts of one chip and model are different rows)."""
    return [(hw if keep_hw else "", m if keep_model else "",
             tuple((name, str(getattr(v, "exact", v))) for name, _, v in x) if isinstance(x, tuple) else ())
            for (hw, m), x in zip(parts, settings, strict=True)]


def _shown_in(c: Value, forced: str | None) -> Shown:
    if forced is None or c.exact is None:
        return shown(c)
    return display(c.exact, c.unit, forced, exact_unit=True)


def _cell_text(c: Value | None, step: StepEntry, target: Target, forced: str | None, with_unit: bool) -> str:
    if c is None:
        return target.text("n/a")
    if c.missing:
        return target.text(c.missing.kind)
    counted = count_shown(step, c)
    s = counted if counted is not None else _shown_in(c, forced)
    return target.quantity_text(s if with_unit else Shown(s.number, DIMENSIONLESS))


#: Claims printed above a sheet's answer figure on page 1; the rest follow the figure, so the figure keeps its size.
PAGE_ONE_CLAIMS = 3

#: A table longer than this is printed in parts of at most this many rows (a LaTeX tabular does not break across pages).
MAX_TABLE_ROWS = 20
#: A LaTeX label column holding labels up to this wide sets them on one line; a wider one wraps them in LABEL_WRAP.
LABEL_ONE_LINE = 36
LABEL_WRAP = "5.6cm"



def _breakable_paths(text: str, target: Target) -> str:
    """LaTeX may break a long path or a unit after each slash (specs/measurements/profiles/fitted.toml in a narrow column)."""
    return re.sub(r"/(?=\w)", r"/\\allowbreak{}", text) if target.name == "tex" else text


def split_to_fit(table: dict[str, Any], target: Target) -> list[dict[str, Any]]:
    """A table too wide for the page as parts that fit (labels repeated); one that fits stays whole.

    Also gives each label column its LaTeX column type (`label_specs`): one line where the labels are short, wrapped where not.
    A table longer than MAX_TABLE_ROWS rows is first cut into parts of at most that many rows (a LaTeX tabular does not break
    across pages); the note goes with the first part, the reasons with the last.
    """
    rows = table["rows"]
    if len(rows) > MAX_TABLE_ROWS:
        count = -(-len(rows) // MAX_TABLE_ROWS)
        size = -(-len(rows) // count)
        starts = range(0, len(rows), size)
        return [part for k, start in enumerate(starts)
                for part in split_to_fit({**table, "title": table["title"] + target.text(f" (rows {start + 1} to {min(start + size, len(rows))} of {len(rows)})"),
                                          "note": table["note"] if k == 0 else "", "rows": rows[start:start + size],
                                          "whys": table["whys"] if k == len(starts) - 1 else []}, target)]
    label_ws = [max([math_width(_plain(r["labels"][k])) for r in table["rows"]] + [math_width(_plain(h))])
                for k, h in enumerate(table["label_headers"])]
    table = {**table, "label_specs": ["l" if w <= LABEL_ONE_LINE else rf">{{\raggedright\arraybackslash}}p{{{LABEL_WRAP}}}" for w in label_ws]}
    label_w = sum(min(w, LABEL_ONE_LINE) for w in label_ws)
    widths = [max([math_width(_plain(header))] + [math_width(_plain(r["cells"][k])) for r in table["rows"]]) + 2
              for k, header in enumerate(table["headers"])]
    if label_w + sum(widths) <= TABLE_WIDTH or len(widths) <= 1:
        return [table]
    groups, cur, used = [], [], label_w
    for k, w in enumerate(widths):
        if cur and used + w > TABLE_WIDTH:
            groups.append(cur)
            cur, used = [], label_w
        cur.append(k)
        used += w
    groups.append(cur)
    if len(groups) == 1:
        return [table]
    out = []
    for i, cols in enumerate(groups):
        out.append({**table, "title": table["title"] + target.text(f" (part {i + 1} of {len(groups)})"), "note": table["note"] if i == 0 else "",
                    "headers": [table["headers"][k] for k in cols], "header_names": [table["header_names"][k] for k in cols],
                    "rows": [{**r, "cells": [r["cells"][k] for k in cols]} for r in table["rows"]],
                    "whys": table["whys"] if i == len(groups) - 1 else []})
    return out


_TAGS = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    """A cell's text without markup, math kept (for width estimates)."""
    return _TAGS.sub("", text).replace(r"\textbf", "").replace("$", "")


def _row_label(label: str, setting: tuple[tuple[str, str, Value], ...], target: Target) -> str:
    """A row's label: its text, then the inputs it sets as math ($B = 8$, $T = 8{,}192$ tokens)."""
    parts = [label] if label else []
    parts += [target.inline_math(f"{latex} = {target.quantity_math(shown(v))}") for _, latex, v in setting]
    return ", ".join(parts)


def _row_reasons(cells: tuple[Value | None, ...], why: str, target: Target) -> list[str]:
    """The reasons a row has no value in some cells (the cells say none or n/a), each once."""
    reasons = [target.text(why)] if why else []
    for c in cells:
        if c is not None and c.missing:
            text = reason_text(c.missing, target)
            if text not in reasons:
                reasons.append(text)
    return reasons

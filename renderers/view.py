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

The parts come from beside it: values and counts as text (renderers.value_text), a step's equation and lead-in
(renderers.equations), prose with values (renderers.sheet_prose), the claims (renderers.claims_text) and the tables
(renderers.tables).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..derivations.engine.run import Sheet, SolvedStep
from ..derivations.engine.setup import ProfileData
from . import forms as printed_forms
from .claims_text import claim_items, positions_text, step_label_text
from .equations import equation, step_lead, step_why
from .figure_refs import refs as plot_refs
from .figure_refs import step_title
from .forms import Forms, at_replacements
from .numbers import number_text
from .printed import number_latex
from .sheet_prose import Prose
from .tables import split_to_fit, table_items
from .targets import Target
from .value_text import breakable_paths, reason_text, shown, step_value_text, value_text

#: Claims printed on page 1, before the answer figure; the rest are checked in the appendix, so page 1 keeps its figure.
PAGE_ONE_CLAIMS = 3


def _more_claims(rest: list[dict[str, object]], target: Target) -> str:
    """The line that says where the claims past page 1 are, with how many of them hold."""
    if not rest:
        return ""
    holding = sum(1 for c in rest if c["holds"])
    return target.text(f"{len(rest)} more {'claim is' if len(rest) == 1 else 'claims are'} checked in the appendix "
                       f"({holding} of them {'holds' if holding == 1 else 'hold'}).")


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
    claims = claim_items(sheet, target, p, names)
    headline = replace(sheet.tables[0], title="Headline results")
    # each table the page prints knows which of the sheet's it lays out (`source`: 0 the headline), so a live page refills it
    laid = [[{**part, "source": i} for part in table_items(tb, d, target, p)] for i, tb in enumerate((headline, *sheet.tables[1:]))]
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
        "step_label": target.text("; ").join(part for part in (step_label_text(sheet, target), positions_text(sheet, target)) if part),
        "answer": p.items(d.answer) if d.answer else _default_answer(sheet, target, p),
        "does_not_fit": t(f"Does not fit: this setup needs {number_text(shown(sheet.overflow).number)} times the memory one GPU has, "
                          "so its times describe a server that cannot be built as stated (more GPUs, a smaller batch or a shorter context).")
        if sheet.overflow else "",
        "claims": claims,
        "page_one_claims": PAGE_ONE_CLAIMS,
        "more_claims": _more_claims(claims[PAGE_ONE_CLAIMS:], target),
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
        "facts": [{"label": t(k), "value": breakable_paths(t(v), target)} for k, v in sheet.spec_facts],
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
    return {"kind": "step", "name": st.step.name, "number": number, "title": p(step_title(st.step)), "symbol": target.inline_math(st.latex), "why": p(step_why(st.step)),
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
    band = engine_band(sheet)
    return [{"path": f["path"], "alt": target.text(f["alt"]),
             "caption": p(f["caption"]) + (target.text(" " + band) if band and plot.answer else ""), "answer": plot.answer,
             "name": plot.name, "text": p(f["caption"]), "band": target.text(band) if band and plot.answer else ""}
            for plot, f in zip(d.plots, refs, strict=True)]


def _share(text: str) -> str:
    """A stored share ("0.042") as a percentage to two significant figures ("4.2%")."""
    return f"{float(text) * 100:.2g}%"


def engine_band(sheet: Sheet) -> str | None:
    """The error its engine profile's fit leaves, for the answer figure's caption: a sheet whose times read a fitted profile
    (one of its engine inputs not set) says how far a measurement left out of the fit lands from the prediction; None for a
    sheet that reads none, or a profile that is not fitted (`ideal`)."""
    e = sheet.setup.engine
    if e is None or not any(i.name in e.parsed and not i.is_set for i in sheet.inputs):
        return None
    return profile_band(e)


def profile_band(e: ProfileData) -> str | None:
    """What a profile's fit leaves as error, in a sentence (engine_band's); None for a profile fitted to nothing."""
    if not e.records:
        return None
    s = dict(e.summary)
    many = "s" if e.records != 1 else ""
    if "loo_error" in s:
        worst = f"; {_share(s['loo_worst'])} at worst" if "loo_worst" in s else ""
        return (f"Times use your engine rates, fitted to {e.records} benchmark run{many} (profile “{e.name}”): a run left out of the fit lands "
                f"within {_share(s['loo_error'])} of the prediction (median{worst}).")
    if "loso_error" in s:
        return (f"Times use engine rates fitted to {e.records} published measurement{many} (profile “{e.name}”): a source left out "
                f"of the fit lands within {_share(s['loso_error'])} of the prediction (median).")
    if "median_error" in s:
        worst = f"; {_share(s['worst_error'])} at worst" if "worst_error" in s else ""
        return (f"Times use engine rates fitted to {e.records} published measurement{many} (profile “{e.name}”): they lie within "
                f"{_share(s['median_error'])} of its predictions (median{worst}), in sample.")
    return None

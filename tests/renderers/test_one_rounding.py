"""One rounding, shown once (issue 40 item 4): a count whose value is not whole (a crossover batch of 295.3 sequences) says
where its whole number comes from on one line, "= 295.3, so 296 sequences", and every other mention of it uses one of those
two numbers: the answer and the other prose, the claims, the figures' marks (drawn where they say), the JSON and the quiz key.
"""

from __future__ import annotations

import json
import re

import pytest
from roofline.renderers import markdown
from roofline.renderers.claims_text import claim_items
from roofline.renderers.numbers import number_text
from roofline.renderers.sheet_prose import Prose
from roofline.renderers.targets import MARKDOWN
from roofline.renderers.value_text import unrounded, whole

from roofline.quiz import draw
from roofline.quiz_paper import render


def _counts(sheet) -> list[tuple]:
    """(step, value, whole number, the value before rounding as plain text) of each count on the sheet that is not whole."""
    out = []
    for st in sheet.steps:
        fraction = unrounded(st.step, st.value) if not st.value.missing else None
        if fraction is not None:
            out.append((st.step, st.value, whole(st.step, st.value), number_text(fraction.number)))
    return out


def _md_number(text: str) -> str:
    return text.replace("{,}", ",")


def test_the_shipped_sheets_round_counts(default_sheets):
    """The rule has cases to hold to: counts that are not whole, on several sheets."""
    with_counts = [slug for slug, sheet in default_sheets.items() if _counts(sheet)]
    assert len(with_counts) >= 8, with_counts


@pytest.mark.parametrize("slug", ["ridge-coincidence", "batch-knee", "headline-check", "int4-flip", "kv-tiers", "moe-experts"])
def test_a_count_says_where_its_whole_number_comes_from_and_every_mention_agrees(default_sheets, default_figures, slug):
    sheet = default_sheets[slug]
    counts = _counts(sheet)
    assert counts, f"{slug} has no count that is not whole"
    md = markdown.render(sheet)
    data = json.loads(_json(sheet))
    steps = {s["name"]: s for s in data["steps"]}
    names = sheet.blueprint.latex_names
    prose = Prose(sheet, MARKDOWN)
    claims = claim_items(sheet, MARKDOWN, prose, names)
    marks = [line for fig in default_figures[slug] for panel in fig.panels for line in panel.lines if line.axis == "x"]
    for step, value, n, fraction in counts:
        shown = f"{n:,}"
        # the step's equation ends on one line with both numbers
        ends = [_md_number(m.group(1)) for m in re.finditer(r"^&= (.*)$", md, flags=re.M)]
        assert any(e.startswith(_md_number(fraction)) and f"so}}\\ {shown}" in e for e in ends), (step.name, fraction, shown)
        # the JSON says both, and the whole number alone
        assert steps[step.name]["result"]["whole"] == n
        assert re.match(rf"{re.escape(fraction)}( \w+)?, so {shown}\b", steps[step.name]["result"]["shown"])
        if step.name in data["results"]:
            assert data["results"][step.name]["whole"] == n
        # the prose (answer, takeaways) fills the count whole
        assert prose.texts[step.name].startswith(shown), prose.texts[step.name]
        # a claim that reads it at the sheet's own setup prints the number the step line gives, before rounding
        for item, c in zip(claims, sheet.claims, strict=True):
            if c.left_name == step.name and c.left.exact == value.exact:
                assert f"${names[step.name]}$ = {fraction}" in item["sentence"], item["sentence"]
        # a figure marks it at the whole number and labels it so
        for line in (x for x in marks if x.step == step.name):
            assert line.value == n and re.search(rf"= {shown}\b(?![.,]\d)", line.label), (line.label, line.value)
        assert value.float != n


def _json(sheet) -> str:
    from roofline.renderers import json_out

    return json_out.render(sheet)


def test_the_quiz_key_gives_a_count_as_its_sheet_does():
    """A quiz key's answer and argument give a count the way the sheet's step line does: the headline the whole number, the
    JSON the value before rounding and the whole number."""
    quiz = draw(seed=4, count=6, sheets=["ridge-coincidence", "int4-flip", "batch-knee"])
    key = json.loads(render(quiz, "json", key=True))
    md = render(quiz, "md", key=True)
    seen = 0
    for q in key["questions"]:
        for a in [*q["answers"], *q["argument"]]:
            if "whole" not in a:
                continue
            seen += 1
            n = f"{a['whole']:,}"
            assert n in a["shown"]
            if a in q["answers"]:
                assert f"**{n} " in md or f"**{n}**" in md, (a["result"], n)
    assert seen

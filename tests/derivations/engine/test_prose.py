"""Prose writes math only inside $...$: no ASCII math, no glossary names in running text."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from roofline.derivations.engine import prose
from roofline.derivations.engine.declare import DerivationError, Step, derivation, prose_strings
from roofline.derivations.engine.symbols import Symbols
from roofline.derivations.physics.conventions import CONVENTIONS
from roofline.derivations.physics.glossary import GLOSSARY
from roofline.derivations.questions.registry import DERIVATIONS, SLUGS

#: Single letters that are also plain English in our prose ("K and V" are keys and values).
ENGLISH_LETTERS = {"K", "V"}
#: Step names that are also plain English words ("throughput rises with batch" is not the step's ASCII name;
#: "a 2.5x gap" is the teaser's word for the headline `gap`).
ENGLISH_WORDS = {"throughput", "speedup", "gap"}


def _text_outside_math(text: str) -> str:
    return " ".join(part for kind, part in prose.split(text) if kind == "text")


def _offences(text: str, names: set[str]) -> list[str]:
    outside = re.sub(r"\{[A-Za-z_][A-Za-z0-9_]*\}", " ", _text_outside_math(text))  # value placeholders are fine
    outside = re.sub(r"@[a-z0-9][a-z0-9-]*", " ", outside)  # so are links to other sheets (@mbu-diagnosis is not the symbol mbu)
    found = [ch for ch in ("**", "*", "^") if ch in outside]
    for name in names:
        if name in ENGLISH_LETTERS or name in ENGLISH_WORDS:
            continue
        if re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/])", outside):
            found.append(name)
    return found


CASES = [(d.slug, where, text) for d in DERIVATIONS for where, text in prose_strings(d)]
CASES += [("conventions", f"convention {i + 1}", c) for i, c in enumerate(CONVENTIONS)]
CASES += [("conventions", f"glossary {info.name}", info.meaning) for info in GLOSSARY]
NAMES = {d.slug: {info.name for info in d.symbols} for d in DERIVATIONS}
NAMES["conventions"] = {info.name for info in GLOSSARY}


#: the prose strings by sheet ("conventions": the conventions and the glossary's meanings); each is checked, one test per sheet
BY_SHEET: dict[str, list[tuple[str, str]]] = {}
for _slug, _where, _text in CASES:
    BY_SHEET.setdefault(_slug, []).append((_where, _text))


@pytest.mark.parametrize("slug", list(BY_SHEET))
def test_prose_has_no_ascii_math(slug):
    bad = [f"{slug} {where}: write math as $...$: {text[:120]!r} ({', '.join(found)})"
           for where, text in BY_SHEET[slug] if (found := _offences(text, NAMES[slug]))]
    assert bad == [], "\n".join(bad)


def test_conventions_math_is_valid():
    names = {info.name for info in GLOSSARY}
    for c in CONVENTIONS:
        prose.check(c, names, set(), "conventions")


@pytest.mark.parametrize("bad, message", [
    (r"see $\input{/etc/passwd}$", r"\\input"),
    (r"a $x & y$ b", "whitelist"),
    (r"unbalanced $x", "unbalanced"),
    (r"$\sym{nope}$", "not a symbol"),
    (r"uses {no_such_step}", "not a step"),
    (r"$\frac{a}{b$", "unbalanced braces"),
])
def test_bad_prose_math_fails_the_build(bad, message):
    step = Step("x", GLOSSARY["B"].symbol * 1, "1", bad)
    with pytest.raises(DerivationError, match=message):
        derivation("t", "t", "t", Symbols(parent=GLOSSARY), (step,), ())


def test_sym_spells_the_glossary_latex():
    names = {info.name: info.latex for info in GLOSSARY}
    out = prose.render(r"bytes $\sym{b_w} \cdot \sym{P_active}$ in {x}", lambda s: s.upper(), lambda m: f"<{m}>", names, {"x": "8"})
    assert out == r"BYTES <{b_{w}} \cdot {P_{\mathrm{act}}}> IN 8"


@pytest.mark.parametrize("slug", list(BY_SHEET))
def test_a_sheet_named_in_prose_is_a_link(slug):
    """A sheet is referred to as @slug (a checked link), never as a bare name that may not exist (the slugs: registry.SLUGS)."""
    bad = []
    for where, text in BY_SHEET[slug]:
        outside = _text_outside_math(text)
        bare = [s for s in SLUGS if re.search(rf"(?<![@\w-]){re.escape(s)}(?![\w-])", outside)]
        if bare:
            bad.append(f"{slug} {where}: write @{bare[0]}")
    assert bad == [], "\n".join(bad)


def test_links_to_unregistered_sheets_fail_the_registry():
    from roofline.derivations.questions import registry

    d = registry.get(registry.SLUGS[0])
    registry.check_links(d)
    broken = replace(d, blueprint=replace(d.blueprint, limits=(*d.limits, "see @no-such-sheet")))
    with pytest.raises(DerivationError, match="@no-such-sheet"):
        registry.check_links(broken)

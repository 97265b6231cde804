"""A question set as an Anki deck (`roofline quiz --format apkg`): one note per argued step.

The front of a card is the question's setup and the step it asks for, its symbol and its title ("Llama 3.1 70B in BF16 on
two H200 SXM 141GB GPUs at batch 16: the step time, $t_{\\mathrm{step}}$"); the back is the step as the answer key prints
it: the sentence, then symbol = formula = numbers = value, typeset by Anki's own MathJax (`\\(...\\)` and `\\[...\\]`). Every
text is HTML-escaped; the math is the key's LaTeX, with nothing in it that HTML reads.

The package format is genanki's (a maintained library that writes Anki's SQLite collection inside the zip Anki imports).
Ids are derived from names, not drawn at random: the note type and the deck keep their ids from one set to the next, and a
note's guid is its sheet, setup and step, so importing a later set updates the cards a reader already has instead of adding
them twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import os
import tempfile
from typing import Any

from .derivations.engine import prose
from .quiz_paper import _math_block
from .renderers import site
from .renderers.equations import step_lines
from .renderers.figure_refs import step_title
from .renderers.forms import forms_of
from .renderers.targets import MARKDOWN

#: The note type's name: its id is derived from it, so every deck roofline writes shares one note type in a collection.
MODEL_NAME = "roofline argued step"
DECK_PREFIX = "roofline"

_CSS = """.card { font-family: "Latin Modern Roman", "Times New Roman", serif; font-size: 19px; text-align: left; color: #111; background: #fff; }
.setup { color: #555; font-size: 15px; }
.sheet { color: #555; font-size: 14px; font-style: italic; }
.math { overflow-x: auto; }"""


def _id(text: str) -> int:
    """A stable id from a name, in the range Anki's ids take (positive, below 2^31 for note types and decks)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") >> 1 | 1 << 30


def _text(x: str) -> str:
    return html.escape(x, quote=False)


#: The deck's target: the site's HTML text (escaped once, a name in backticks as code), the math left as TeX in `\(...\)`
#: for Anki's MathJax, escaped for HTML.
ANKI = dataclasses.replace(site.HTML, name="anki", inline_math=lambda m: _text(r"\(" + m + r"\)"), math=_text)


def _math_html(lead: str, lines: list[str]) -> str:
    r"""The step's lead-in and its displayed equation (the key's aligned block, in Anki's `\[...\]`)."""
    block = _text(r"\[" + _math_block(lines, MARKDOWN).removeprefix("$$\n").removesuffix("\n$$") + r"\]")
    return (f"<p>{lead}</p>" if lead else "") + f'<div class="math">{block}</div>'


def cards(quiz: Any) -> list[dict[str, str]]:
    """Each argued step of each question as a card: front, back and a stable key (sheet, setup, step)."""
    from .quiz_paper import command, setup_words

    out = []
    for q in quiz.questions:
        names = q.derivation.blueprint.latex_names
        by_name = {info.name: info.latex for info in q.derivation.symbols}
        setup = setup_words(q)
        title = prose.render(q.derivation.title, ANKI.text, ANKI.inline_math, by_name)
        seen = set()
        for st in [*(a.step for a in q.answers), *q.argument]:
            if st.step.name in seen:
                continue
            seen.add(st.step.name)
            lead, lines = step_lines(st, forms_of(q.derivation)[st.step.name], names, ANKI)
            step = prose.render(step_title(st.step), ANKI.text, ANKI.inline_math, by_name)
            why = prose.render(st.step.why, ANKI.text, ANKI.inline_math, by_name)
            front = (f'<div class="setup">{_text(setup)}</div><p>{step}, {ANKI.inline_math(st.latex)}?</p>'
                     f'<div class="sheet">{title}</div>')
            back = (f"<p>{why}</p>" + _math_html(lead.strip(), lines)
                    + f'<div class="sheet">{_text(command(q))}</div>')
            out.append({"front": front, "back": back, "key": f"{q.slug}|{command(q)}|{st.step.name}"})
    return out


def deck(quiz: Any) -> bytes:
    """The set as an .apkg file's bytes (genanki writes a file: a temporary one, read back and removed)."""
    import genanki  # a dependency (pyproject.toml); imported here so the rest of the quiz needs it not

    model = genanki.Model(
        _id(MODEL_NAME), MODEL_NAME,
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Key"}],
        templates=[{"name": "Step", "qfmt": "{{Front}}", "afmt": '{{FrontSide}}<hr id="answer">{{Back}}'}],
        css=_CSS,
    )
    name = f"{DECK_PREFIX}::quiz seed {quiz.seed}"
    d = genanki.Deck(_id(name), name)
    for c in cards(quiz):
        d.add_note(genanki.Note(model=model, fields=[c["front"], c["back"], _text(c["key"])], guid=genanki.guid_for(c["key"])))
    fd, path = tempfile.mkstemp(suffix=".apkg")
    os.close(fd)
    try:
        genanki.Package(d).write_to_file(path)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


__all__ = ["cards", "deck"]

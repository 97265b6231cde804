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

import hashlib
import html
import os
import tempfile
from typing import Any

from .derivations.engine import prose
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


def _math_html(lead: str, lines: list[str]) -> str:
    """The step's lead-in and its displayed equation, for Anki's MathJax."""
    head, sep, tail = lines[0].partition(" = ")
    first = f"{head} &= {tail}" if sep else lines[0]
    body = first + "".join(f" \\\\ &= {x}" for x in lines[1:])
    shown = _text(r"\[\begin{aligned}" + body + r"\end{aligned}\]")
    return (f"<p>{_markdown_text(lead)}</p>" if lead else "") + f'<div class="math">{shown}</div>'


def _markdown_text(text: str) -> str:
    """A Markdown lead-in or sentence (inline `$...$` math, backticked code) as HTML for a card: math for MathJax, code as code."""
    out = []
    for i, part in enumerate(_split_math(text)):
        if i % 2:
            out.append(_text(r"\(" + part + r"\)"))
        else:
            pieces = part.replace("\\", "").split("`")
            out.append("".join(f"<code>{_text(p)}</code>" if j % 2 else _text(p) for j, p in enumerate(pieces)))
    return "".join(out)


def _split_math(text: str) -> list[str]:
    """Text and the math between unescaped `$` signs, alternately."""
    parts, current, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if c == "$":
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    parts.append("".join(current))
    return parts if len(parts) % 2 else ["$".join(parts)]


def cards(quiz: Any) -> list[dict[str, str]]:
    """Each argued step of each question as a card: front, back and a stable key (sheet, setup, step)."""
    from .quiz_paper import command, setup_words

    out = []
    for q in quiz.questions:
        names = q.derivation.blueprint.latex_names
        by_name = {info.name: info.latex for info in q.derivation.symbols}
        setup = setup_words(q)
        title = prose.render(q.derivation.title, MARKDOWN.text, MARKDOWN.inline_math, by_name)
        seen = set()
        for st in [*(a.step for a in q.answers), *q.argument]:
            if st.step.name in seen:
                continue
            seen.add(st.step.name)
            lead, lines = step_lines(st, forms_of(q.derivation)[st.step.name], names, MARKDOWN)
            step = prose.render(step_title(st.step), MARKDOWN.text, MARKDOWN.inline_math, by_name)
            why = prose.render(st.step.why, MARKDOWN.text, MARKDOWN.inline_math, by_name)
            symbol = _text(r"\(" + st.latex + r"\)")
            front = (f'<div class="setup">{_text(setup)}</div><p>{_markdown_text(step)}, {symbol}?</p>'
                     f'<div class="sheet">{_markdown_text(title)}</div>')
            back = (f"<p>{_markdown_text(why)}</p>" + _math_html(lead.strip(), lines)
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

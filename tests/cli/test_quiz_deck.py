"""`roofline quiz --format apkg`: an Anki deck, one note per argued step, read back from the package the way Anki reads it
(the SQLite collection inside the zip)."""

from __future__ import annotations

import io
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest

from roofline.cli import main
from roofline.quiz import draw
from roofline.quiz_deck import cards, deck
from roofline.quiz_paper import as_json


def _notes(data: bytes, tmp_path: Path) -> list[tuple[str, list[str]]]:
    """(guid, fields) of each note in an .apkg's collection."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert "collection.anki2" in z.namelist()
        (tmp_path / "collection.anki2").write_bytes(z.read("collection.anki2"))
    con = sqlite3.connect(tmp_path / "collection.anki2")
    try:
        return [(guid, flds.split("\x1f")) for guid, flds in con.execute("select guid, flds from notes order by id")]
    finally:
        con.close()


@pytest.fixture(scope="module")
def quiz():
    return draw(seed=3, count=3, sheets=["decode-floor", "ridge-coincidence", "batch-knee"])


def test_a_deck_holds_one_note_per_argued_step_with_its_formula_numbers_and_value(quiz, tmp_path):
    notes = _notes(deck(quiz), tmp_path)
    key = as_json(quiz, key=True)
    steps = [(q["slug"], s) for q in key["questions"] for s in dict.fromkeys([a["result"] for a in q["answers"]] + [s["step"] for s in q["argument"]])]
    assert len(notes) == len(steps) == len(cards(quiz))
    for (_guid, (front, back, note_key)), (slug, step) in zip(notes, steps, strict=True):
        assert note_key.startswith(f"{slug}|roofline derive {slug} ") and note_key.endswith(f"|{step}")
        assert "\\(" in front and front.endswith("</div>")  # the symbol, typeset
        assert back.count("\\[\\begin{aligned}") == 1 and "&amp;=" in back  # symbol = formula (= numbers) = value
        assert "<script" not in front + back
    # the value on each card is the key's value for that step, as the sheets print it
    values = {(q["slug"], a["step"] if "step" in a else a["result"]): a for q in key["questions"] for a in [*q["answers"], *q["argument"]]}
    for (_guid, (_front, back, note_key)), _step in zip(notes, steps, strict=True):
        slug, _, step = note_key.split("|")
        item = values[(slug, step)]
        last = back.split("\\end{aligned}")[0].rsplit("&amp;= ", 1)[1]
        number = re.match(r"[\d{},.]+", last.replace("{,}", ","))
        assert number and number.group(0).rstrip(".,") in item["shown"].replace(" ", ""), (note_key, last, item["shown"])


def test_the_same_step_keeps_its_note_from_one_set_to_the_next(quiz, tmp_path):
    """A note's guid is its sheet, setup and step: the same card drawn again updates the reader's card, not a second one."""
    first = {g for g, _ in _notes(deck(quiz), tmp_path)}
    again = {g for g, _ in _notes(deck(draw(seed=3, count=3, sheets=["decode-floor", "ridge-coincidence", "batch-knee"])), tmp_path)}
    assert first == again and len(first) == len(cards(quiz))


def test_the_cli_writes_the_deck_to_a_redirected_stdout_and_into_out(tmp_path, capsysbinary):
    assert main(["quiz", "--format", "apkg", "--count", "2", "--seed", "5"]) == 0
    data = capsysbinary.readouterr().out
    assert data[:4] == b"PK\x03\x04" and _notes(data, tmp_path)
    assert main(["quiz", "--count", "2", "--seed", "5", "--out", str(tmp_path / "set")]) == 0
    assert (tmp_path / "set" / "deck.apkg").read_bytes()[:4] == b"PK\x03\x04"

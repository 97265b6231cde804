"""No code words in reader text (issue 40 item 5): what a sheet says before its appendix names things in words. A file
path, a dataset record's id, a command-line option outside a code span or "the sheet's ..." is a code word; command lines
are set as code (`--set x=1` in backticks: Markdown's code span, LaTeX's typewriter, HTML's <code>)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from roofline.renderers import escape, site
from roofline.specs.measurements import load_measurements

OUT = Path(__file__).resolve().parents[2] / "out"
CODE_WORDS = {
    "a spec or dataset path": re.compile(r"specs/"),
    "a command-line option outside code": re.compile(r"(?<![\w`-])--[a-z]"),
    "'the sheet's ...'": re.compile(r"the sheet's"),
    "an escaped backtick (code shown as text)": re.compile(r"\\`"),
}


def _reader_text(path: Path) -> str:
    """A sheet's Markdown before its appendix, code spans and math left out."""
    body = path.read_text(encoding="utf-8").split("\n## Appendix", 1)[0]
    body = re.sub(r"\$\$.*?\$\$", "", body, flags=re.S)
    return re.sub(r"(?<!\\)`[^`]*(?<!\\)`", "", body)


@pytest.mark.parametrize("name", sorted(CODE_WORDS))
def test_no_code_word_in_what_a_sheet_says_before_its_appendix(name):
    sheets = sorted(p for p in OUT.glob("*.md") if p.name != "book.md")
    assert len(sheets) > 20
    found = [f"{p.name}: ...{m.group(0)}..." for p in sheets for m in CODE_WORDS[name].finditer(_reader_text(p))]
    assert not found, found[:5]


def test_no_dataset_record_is_named_by_its_id():
    ids = {m.id for m in load_measurements()}
    found = [(p.name, i) for p in sorted(OUT.glob("*.md")) for i in ids if i in p.read_text(encoding="utf-8")]
    assert not found, found[:5]


def test_a_name_in_backticks_is_code_in_every_format():
    text = "run `roofline validate` (`--set x=<1>`) for *this*"
    assert escape.markdown(text) == r"run `roofline validate` (`--set x=<1>`) for \*this\*"
    assert escape.latex(text) == r"run \texttt{roofline validate} (\texttt{-{}-set x=\textless{}1\textgreater{}}) for *this*"
    assert site.text(text) == "run <code>roofline validate</code> (<code>--set x=&lt;1&gt;</code>) for *this*"
    assert escape.markdown("one ` tick") == r"one \` tick"


def test_a_record_named_in_words_names_one_record():
    """Table rows and claims name a dataset record by its words (measured.record_label): no two records, fitted or held out,
    share them."""
    from roofline.derivations.physics.measured import record_label
    from roofline.specs.measurements import load_held_out

    records = [*load_measurements(), *load_held_out()]
    labels = [record_label(m) for m in records]
    assert len(records) > 300 and len(set(labels)) == len(labels)

"""Printed steps hold no zero or identity terms (issue 40 item 3): a numbers line puts the operands at 0, and a model's and a
layout's counts at 1, in by value (renderers.forms.StepForm.numbers_at, STRUCTURAL_ONES), so no "(1 - 0)", "(1 - 1)" or
"0 · 4,096" reaches a sheet. A batch of 1 stays printed ("1 · 2 B"): it is the setup a reader set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.renderers import markdown
from roofline.renderers.forms import STRUCTURAL_ONES
from roofline.renderers.numbers import number_text
from roofline.renderers.value_text import shown

from roofline import api

OUT = Path(__file__).resolve().parents[2] / "out"
#: what an identity or zero term looks like on a numbers line ("1 token" and "1,280" are quantities, not identities)
PATTERNS = {
    "a factor (1 - 0)": r"\\left\(1 - 0\\right\)",
    "a factor (1 - 1)": r"\\left\(1 - 1\\right\)",
    "a zero factor": r"(?<![0-9.,}])0 \\cdot|\\cdot 0(?![0-9.,]|\\,)",
    "min(1, 0)": r"\\min\\left\(1, 0(?![.0-9])",
    # a ceiling or floor of a whole number is that number; the case that has no value is not the one a valued step is in
    "a rounding of a whole number": r"\\left\\l(?:ceil|floor)\{-?[0-9]+(?:\{,\}[0-9]{3})*\}",
    "a case without a value": r"\\text\{no value\}",
    # a power of two of a rounded logarithm, an indicator's ceiling of a min and a max: said in words
    # (with numbers in: a formula's own lines, which may continue as "&\quad", keep the math)
    "a logarithm inside a rounding": r"\\l(?:ceil|floor)\{\\log_?\{?2?\}?\{\\left\([0-9]",
    "a ceiling of min(1, max(0, x))": r"\\lceil\{\\min\\left\(1, \\max\\left\(0, [0-9]",
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_no_numbers_line_of_a_shipped_sheet_holds_a_zero_or_identity_term(name):
    lines = [(f.name, line) for f in sorted(OUT.glob("*.md")) for line in f.read_text(encoding="utf-8").splitlines()
             if line.startswith(("&= ", "&\\quad"))]
    assert len(lines) > 1000
    found = [f"{f}: {line[:120]}" for f, line in lines if re.search(PATTERNS[name], line)]
    assert not found, f"{name}: {found[:5]}"


def test_a_power_of_two_and_an_indicator_print_their_numbers_in_words():
    floor = api.derive("decode-floor", model="llama-3.1-70b")
    text = markdown.render(floor)
    assert r"\text{the next power of two at or above } 1.79" in text  # 70B weights and their cache over 80 GB of H100 HBM
    assert next(st.value.float for st in floor.steps if st.step.name == "tp_min") == 2
    mbu = markdown.render(api.derive("mbu-definition"))
    assert re.search(r"\\left\(1 \\text\{ if \} [0-9.]+ \\gt\s+1\\text\{, else \} 0\\right\)", mbu)


def test_a_numbers_line_at_a_flag_that_is_off_prints_what_is_left():
    """mbu-diagnosis without a trace's collective time: the collective bucket is the step model's all-reduces, printed as such
    (the formula keeps the flag; the numbers line is the all-reduces' time, not 't_comm · (1 - 0)')."""
    sheet = api.derive("mbu-diagnosis")
    text = api.render(sheet, "md")
    block = text[text.index("t_{\\mathrm{coll}} &= t_{\\mathrm{comm}} \\left(1 - \\delta_{\\mathrm{coll}}\\right)"):][:200]
    t_comm = number_text(shown(sheet.values["t_comm"]).number)
    assert "\\left(1 - 0\\right)" not in block and f"&= {t_comm}\\," in block


def test_the_structural_ones_are_symbols_the_sheets_have():
    """Each name a numbers line puts in at 1 is a symbol some shipped sheet's step reads (a typo would quietly never match)."""
    names = {x.name for d in DERIVATIONS for s in d.steps for x in d.expanded[s.name].free_symbols} | {s.name for d in DERIVATIONS for s in d.steps}
    assert STRUCTURAL_ONES <= names, STRUCTURAL_ONES - names


def test_whole_roundings_drop_only_the_identities():
    from roofline.renderers.equations import whole_roundings

    assert whole_roundings(r"2 \cdot \left\lceil{8}\right\rceil") == r"2 \cdot 8"
    assert whole_roundings(r"\left\lceil{\frac{8{,}192}{128}}\right\rceil") == r"\frac{8{,}192}{128}"
    for kept in (r"\left\lceil{\frac{7}{2}}\right\rceil", r"\left\lfloor{449.023}\right\rfloor", r"\left\lceil{8\,\mathrm{GB}}\right\rceil"):
        assert whole_roundings(kept) == kept


def test_a_symbol_a_unit_marker_cancels_is_filled_without_its_unit():
    """B_1/2 = log 2 u_token / (n_DP q (log E - log(E - k_E))): q's token is divided away by the formula's token marker, so
    the numbers line prints q as the count 1, not as '1 token' under a batch that has no unit (issue 40 item 3)."""
    from roofline.renderers import forms

    sheet = api.derive("moe-experts")
    form = forms.of(sheet)["B_half"]
    assert ("e", "q") in form.numbers.whole and ("s", "q") not in form.numbers.whole
    line = next(line for line in (OUT / "moe-experts.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("&= \\frac{\\log{\\left(2 \\right)}}"))
    assert "token" not in line

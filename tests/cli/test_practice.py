"""The practice page (issue 42 item 2): a question set graded in the browser by the rules `roofline check --against` grades a
number by. The data the page carries is checked here; the script is driven in Debian's chromium (Playwright, its executable
pointed at it) in the slow tests, and its verdicts compared with `grade_number`'s for the same answers."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from roofline.renderers import site

from roofline import practice
from roofline.grading.compare import grade_number, number_slips
from roofline.quiz import draw

OUT = Path(__file__).resolve().parents[2] / "out" / "site"
SHEETS = ["prefill-decode-crossover", "flops-per-token", "decode-floor", "attention-kinds"]


@pytest.fixture(scope="module")
def drawn():
    return draw(seed=2, count=4, sheets=SHEETS)


@pytest.fixture(scope="module")
def page(drawn) -> str:
    return practice.render(drawn)


def _data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="practice-data">(.*?)</script>', html, re.S).group(1))


def test_the_page_runs_one_script_from_its_own_folder_and_nothing_inline(page):
    csp = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1))
    assert "script-src 'self';" in csp and "unsafe" not in csp and "default-src 'none'" in csp and "form-action 'none'" in csp
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert scripts == ['<script type="application/json" id="practice-data">', f'<script src="{practice.SCRIPT}">']
    assert not re.search(r"<[a-z]+\b[^>]*\son[a-z]+\s*=", page)  # no inline event handler
    # the data block cannot be closed by its own text
    assert "<" not in re.search(r'id="practice-data">(.*?)</script>', page, re.S).group(1)
    # the sheets' pages stay script-free
    assert "script" not in site.content_security_policy()


def test_the_page_carries_the_graders_slips_and_number_pattern(drawn, page):
    from roofline.grading import values

    data = _data(page)
    assert data["number_pattern"] == values._NUMBER.pattern and data["tolerance"] == 0.05
    for q, dq in zip(drawn.questions, data["questions"], strict=True):
        for a, da in zip(q.answers, dq["answers"], strict=True):
            assert da["value"] == a.value.float and da["unit"] == a.value.unit
            assert [(s["key"], s["ratio"]) for s in da["slips"]] == [(s.key, r) for s, r in number_slips(q.derivation, a.result, q.context)]


def test_the_unit_table_holds_what_the_grader_reads_with_its_factor():
    table = practice.unit_table("s")
    assert table["ms"] == pytest.approx(1e-3) and table["µs"] == pytest.approx(1e-6) and table["min"] == 60
    assert practice.unit_table("B")["GiB"] == pytest.approx(2**30)
    assert practice.unit_table("token/s")["tokens/s"] == 1 and "TFLOP/s" not in practice.unit_table("flop/s")
    assert practice.unit_table("1") == {"%": 0.01, "percent": 0.01}


def test_the_site_ships_the_page_and_its_script_and_links_it():
    assert (OUT / practice.PAGE).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (OUT / practice.SCRIPT).read_text(encoding="utf-8") == practice.script()
    assert f'href="{practice.PAGE}"' in (OUT / site.INDEX).read_text(encoding="utf-8")


# --- in the browser ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser_page(page, tmp_path_factory, browser):
    folder = tmp_path_factory.mktemp("practice")
    (folder / practice.PAGE).write_text(page, encoding="utf-8")
    (folder / practice.SCRIPT).write_text(practice.script(), encoding="utf-8")
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.goto((folder / practice.PAGE).as_uri())
    yield tab, errors
    tab.close()


def _submit(tab, ident: str, text: str) -> dict:
    tab.fill(f"#{ident}", text)
    tab.click(f'form[data-answer="{ident}"] button')
    out = tab.locator(f'output[for="{ident}"]')
    return {"kind": out.get_attribute("data-kind"), "slips": (out.get_attribute("data-slips") or "").split(),
            "text": out.text_content()}


def _python(q, a, text: str) -> dict:
    v = grade_number(q.derivation, a.result, text, q.context)
    return {"kind": v.kind, "slips": [c.slip.key for c in v.causes]}


@pytest.mark.slow
def test_the_browser_grades_right_answers_and_names_three_slips_as_the_grader_does(drawn, page, browser_page):
    tab, errors = browser_page
    data = _data(page)
    named: set[str] = set()
    for q, dq in zip(drawn.questions, data["questions"], strict=True):
        for a, da in zip(q.answers, dq["answers"], strict=True):
            unit = next(iter(data["units"][da["unit"]]["examples"]), "")
            right = f"{da['value']:.6g} {da['unit'] if da['unit'] != '1' else ''}".strip()
            got = _submit(tab, da["id"], right)
            assert got["kind"] == "within" == _python(q, a, right)["kind"], (da["id"], right, got)
            # the key's argument opens under the question once an answer is checked
            assert tab.locator(f"#q{q.number}-key").evaluate("d => d.open")
            for slip in da["slips"]:
                if slip["key"] not in ("sparse-peak", "mac-one-flop", "kv-heads-as-query-heads", "bits-bytes", "binary-prefix") \
                        or abs(slip["ratio"] - 1) <= data["tolerance"]:  # a slip that moves this answer less than the tolerance is none
                    continue
                wrong = f"{da['value'] * slip['ratio']:.6g} {da['unit'] if da['unit'] != '1' else ''}".strip()
                got, want = _submit(tab, da["id"], wrong), _python(q, a, wrong)
                assert got["kind"] == want["kind"] == "off" and got["slips"] == want["slips"], (da["id"], wrong, got, want)
                assert slip["key"] in got["slips"] and slip["text"] in got["text"]
                named.add(slip["key"])
            assert unit
    assert {"bits-bytes", "binary-prefix"} <= named and len(named) >= 3, named
    assert not errors


@pytest.mark.slow
def test_the_browser_reads_a_grouped_number_and_refuses_an_unknown_unit_in_one_line(drawn, page, browser_page):
    tab, _ = browser_page
    da = _data(page)["questions"][0]["answers"][0]
    got = _submit(tab, da["id"], "1 furlong")
    assert got["kind"] == "unread" and "'furlong' is not a unit" in got["text"]
    got = _submit(tab, da["id"], "4,5 ms")
    assert got["kind"] == "unread"


@pytest.mark.slow
def test_the_page_at_a_phone_width_and_without_scripts(page, browser_page, tmp_path):
    """At 390 px nothing runs past the page's width; with scripts off the key still opens (a details element)."""
    tab, _ = browser_page
    tab.set_viewport_size({"width": 390, "height": 800})
    assert tab.evaluate("document.documentElement.scrollWidth") <= 390
    tab.set_viewport_size({"width": 1280, "height": 900})
    assert "<details" in page and "<summary>" in page

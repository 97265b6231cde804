"""`roofline quiz` and `roofline check --against` on the command line: deterministic sets, keys that are the sheets' values, one-line refusals."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from roofline import quiz as quiz_mod
from roofline import quiz_paper as quiz_text
from roofline.cli import main

SHEETS = ["decode-floor", "prefill-decode-crossover", "ridge-coincidence", "batch-knee", "moe-experts"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def drawn():
    return quiz_mod.draw(seed=11, count=5, sheets=SHEETS)


def test_same_seed_same_set(drawn):
    again = quiz_mod.draw(seed=11, count=5, sheets=SHEETS)
    assert quiz_text.as_json(again, key=True) == quiz_text.as_json(drawn, key=True)
    assert quiz_text.render(again, "md", key=True) == quiz_text.render(drawn, "md", key=True)
    other = quiz_mod.draw(seed=12, count=5, sheets=SHEETS)
    assert quiz_text.as_json(other, key=False) != quiz_text.as_json(drawn, key=False)


def test_every_answer_is_the_sheets_value_for_the_drawn_setup(drawn, capsys):
    """The key's values against the sheet that the key's own `roofline derive` command prints (its JSON): another path from the setup."""
    import shlex

    assert len({q.slug for q in drawn.questions}) == len(drawn.questions)  # one question per sheet before any repeats
    key = quiz_text.as_json(drawn, key=True)
    for q, item in zip(drawn.questions, key["questions"], strict=True):
        code, out, _ = run(capsys, *shlex.split(item["command"])[1:], "--format", "json")
        sheet = json.loads(out)
        assert code == 0
        for answer in item["answers"]:
            assert sheet["results"][answer["result"]]["si_value"] == pytest.approx(answer["si_value"], rel=1e-12), (q.slug, answer["result"])
        assert sheet["fits"] is not False  # None: the sheet has no memory step (the quiz checked the shared step model's)


def test_the_question_names_what_the_answer_depends_on(drawn):
    for q in drawn.questions:
        text = quiz_text.question_text(q)
        if "model" in q.mentions:
            assert q.context.model.name in text
        if "batch" in dict(q.drawn):
            assert f"batch {dict(q.drawn)['batch']}" in text
        assert ("what bounds it" in text) == any(a.bound is not None for a in q.answers)


def test_the_key_argues_with_the_sheets_argument_steps_only(drawn):
    """A key's argument is the sheet's marked argument (what the asked results need), none that is an identity or has no value
    here, and not the answers again: a 10-question key is about ten pages, not the 28 every step took."""
    for q in drawn.questions:
        d = q.derivation
        assert d.argument and {st.step.name for st in q.argument} <= set(d.argument)
        assert all(st.applies and st.value.missing is None for st in q.argument)
        item = quiz_text.as_json(drawn, key=True)["questions"][q.number - 1]
        assert [a["step"] for a in item["argument"]] == [st.step.name for st in q.argument]
    md = quiz_text.render(drawn, "md", key=True)
    parts = md.split("argument, up to these answers")[1:]
    assert parts and all("<sub>" not in part.split("What an interviewer scores")[0] for part in parts)  # titles, no code names
    for q in drawn.questions:
        asked = {a.result for a in q.answers}
        printed = quiz_text._question(q, quiz_text.MARKDOWN, key=True)["argument"]
        assert len(printed) == len([st for st in q.argument if st.step.name not in asked])


def test_what_bounds_a_step_time():
    q = quiz_mod.draw(seed=3, count=1, sheets=["model-limits"]).questions[0]
    (a,) = q.answers
    assert a.bound is not None and 0.99 <= sum(s for _, s in a.bound.shares) + a.bound.rest <= 1.01
    # the rest is the step model's overheads, each its own share of the step: t is linear in each of them
    assert {s.name for s, _ in a.bound.overheads} <= {"t_layer", "t_fixed", "t_ar", "t_seq"} and a.bound.overheads
    assert sum(x for _, x in a.bound.overheads) == pytest.approx(a.bound.rest, abs=1e-6)
    text = quiz_text.bound_text(a.bound)
    assert "overheads and latencies" in text and "the per-layer overhead" in text


def test_an_all_reduce_latency_answer_names_the_overheads_not_the_link():
    assert quiz_mod.bound_guess("all-reduce latency") is None
    assert quiz_mod.bound_guess("the per-layer overhead") is None
    assert quiz_mod.bound_guess("the NVLink interconnect").name == "beta_link"


def test_paper_key_and_files(capsys, tmp_path):
    code, paper, _ = run(capsys, "quiz", "--seed", "11", "--count", "2", "--sheets", "ridge-coincidence,decode-floor")
    assert code == 0 and paper.startswith("# Interview questions: 2 questions, seed 11") and "Answer key" not in paper
    code, key, _ = run(capsys, "quiz", "--seed", "11", "--count", "2", "--sheets", "ridge-coincidence,decode-floor", "--key", "--format", "json")
    data = json.loads(key)
    assert code == 0 and all("answers" in q for q in data["questions"])
    code, _out, _ = run(capsys, "quiz", "--seed", "11", "--count", "2", "--sheets", "ridge-coincidence,decode-floor", "--out", str(tmp_path / "set"))
    assert code == 0 and sorted(p.name for p in (tmp_path / "set").iterdir()) == ["deck.apkg", "key.md", "key.tex", "paper.md", "paper.tex", "practice.html", "practice.js", "quiz.json"]


@pytest.mark.parametrize("argv, message", [
    (["quiz", "--sheets", "decode-flor"], "unknown sheet 'decode-flor' (did you mean decode-floor"),
    (["quiz", "--count", "0"], "--count: expected a whole number from 1 to 200"),
    (["quiz", "--ask"], "--ask reads a candidate's answers from a terminal"),
    (["quiz", "--format", "apkg", "--key"], "--key: an Anki deck holds each answer on the back of its card"),
    (["check", "1 ms", "--against", "decode-floor:t_flor"], "its results: weight_bytes, t_floor"),
    (["check", "4.5", "--against", "decode-floor:t_floor"], "has no unit"),
    (["check", "open('x')", "--against", "decode-floor:t_floor"], "calls to 'open' not allowed"),
    (["check", "P_active", "--against", "decode-floor"], "expected SLUG:RESULT"),
    (["check", "P_active", "--against", "decode-floor:t_floor", "--expect", "ms"], "--expect: not with --against"),
])
def test_refusals_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    first, *rest = err.splitlines()
    assert message in first and all(line.startswith("    ") for line in rest)  # a formula's caret lines, as check prints them


def test_check_against_prints_one_line_then_details(capsys):
    code, out, _ = run(capsys, "check", "4.5 ms", "--against", "decode-floor:t_floor", "--hardware", "h100-sxm", "--model", "llama-3.1-8b")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("within tolerance: 4.5 ms for t_floor (the floor)") and all(x.startswith("  ") for x in lines[1:])
    code, out, _ = run(capsys, "check", "2*pi/beta", "--against", "ridge-coincidence:ridge_point", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "factor" and data["causes"][0]["slip"] == "sparse-peak"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_the_key_compiles_as_latex(tmp_path, drawn):
    (tmp_path / "key.tex").write_text(quiz_text.render(drawn, "tex", key=True), encoding="utf-8")
    (tmp_path / "paper.tex").write_text(quiz_text.render(drawn, "tex"), encoding="utf-8")
    env = {**os.environ, "openin_any": "p", "openout_any": "p"}
    for name in ("key.tex", "paper.tex"):
        done = subprocess.run(["pdflatex", "-no-shell-escape", "-halt-on-error", "-interaction=nonstopmode", name], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:]
        assert Path(tmp_path / name.replace(".tex", ".pdf")).stat().st_size > 0


def test_ask_grades_each_answer_and_shows_the_argument_for_a_miss():
    """--ask's loop with scripted answers: the sheet's own numbers pass; a skipped answer is a miss and shows the sheet's argument."""
    import io

    from roofline.renderers.numbers import plain

    from roofline.grading import words as grade_text

    q = quiz_mod.draw(seed=5, count=1, sheets=["decode-floor"])
    words = {None: "fixed overheads", "beta": "memory-bound", "pi": "compute-bound", "beta_link": "the link"}
    answers = []
    for a in q.questions[0].answers:
        answers.append(plain(a.value.exact, a.value.unit, a.value.display_unit))
        if a.bound is not None:
            answers.append(words[a.bound.binding.name if a.bound.binding is not None else None])

    def session(script: list[str]) -> tuple[int, int, str]:
        out, lines = io.StringIO(), iter(script)
        right, total = quiz_mod.ask(q, lambda prompt: next(lines, ""), out, quiz_text.question_text, quiz_text.argument_text,
                                    quiz_text.bound_text, grade_text.line)
        return right, total, out.getvalue()

    right, total, text = session(answers)
    assert right == total == len(answers) and "within tolerance" in text and "The argument" not in text
    right, total, text = session(["", *answers[1:]])
    assert right == total - 1 and "skipped" in text and "The argument (decode-floor" in text


def test_the_readme_quotes_what_check_against_prints(capsys):
    """Each `$ roofline check ...` of the README's grading section prints, as its first line, what the README quotes (up to its `...`)."""
    import shlex

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Grade an answer against a sheet", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    quoted = [(line[2:], block[i + 1]) for i, line in enumerate(block) if line.startswith("$ roofline ")]
    assert len(quoted) >= 5
    for command, first in quoted:
        code, out, _ = run(capsys, *shlex.split(command)[1:])
        assert code == 0 and out.splitlines()[0].startswith(first.removesuffix("...").rstrip()), command


def test_a_question_does_not_state_an_input_that_follows_another_at_its_value():
    """speculative-decoding's later draft positions take the acceptance rate before them, and the drafter's TP degree the
    target's: a question states the acceptance rate once, not seven positional copies of it."""
    q = quiz_mod.draw(seed=3, count=1, sheets=["speculative-decoding"]).questions[0]
    follows = {i.name for i in q.derivation.inputs if i.follows}
    assert follows and not [g.name for g in q.given if g.name in follows and not g.is_set]

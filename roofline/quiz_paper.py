"""An interview question set (`roofline.quiz.Quiz`) as a question paper and an answer key: Markdown, LaTeX, JSON; and terminal text.

The question is said the way a person would say it ("Llama 3.1 70B in BF16 on
two H200 SXM 141GB GPUs at batch 16 and 8K context: what is the step time, and
what bounds it?"), from the drawn setup and the steps' titles; the key gives
each answer with its closed form and numbers (symbol = formula = numbers =
result, as on a sheet), what bounds a roofline time, the sheet's argument for
it and the sheet's scoring points, and the command that derives the sheet for
that setup.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

from .derivations.engine import prose
from .derivations.engine.context import BLOCK_UNITS
from .derivations.engine.run import SolvedStep, Value
from .grading.compare import Bound
from .renderers.equations import step_lines
from .renderers.figure_refs import step_title
from .renderers.forms import forms_of
from .renderers.json_out import shown_json
from .renderers.numbers import display, plain
from .renderers.targets import LATEX, MARKDOWN, Target
from .renderers.templates import LATEX_ENV, MARKDOWN_ENV
from .renderers.unitfmt import SIUNITX_DECLARATIONS
from .renderers.value_text import count_plain, step_value_text, value_text
from .units import unit_text

FORMATS = ("md", "tex", "json")
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 16: "sixteen"}
#: How each resource a time can scale with is named (roofline.grading.compare.RESOURCES), and each engine overhead
#: (roofline.grading.compare.OVERHEADS: the step model's t_layer, t_fixed and ar_latency).
RESOURCE_WORDS = {"beta": "HBM bandwidth", "pi": "the tensor-core peak", "beta_link": "the GPU-to-GPU link"}
OVERHEAD_WORDS = {"t_layer": "the per-layer overhead", "t_fixed": "the per-step time", "t_ar": "all-reduce latency", "t_seq": "the per-sequence time"}
#: What no resource moves, together.
REST_WORDS = "overheads and latencies"


# --- the question in words -------------------------------------------------------------------------------------------

def _chip(hw: Any) -> str:
    """'NVIDIA H100 SXM5 80GB' -> 'H100 SXM5 80GB'; 'NVIDIA B200 (HGX/DGX, per GPU)' -> 'B200'."""
    name = hw.name.split(" (")[0]
    return name[len(hw.vendor) + 1:] if name.startswith(hw.vendor + " ") else name


def _tokens(text: str) -> str:
    n = int(float(text.split()[0]))
    return f"{n // 1024}K" if n % 1024 == 0 else f"{n:,}"


def setup_words(q: Any) -> str:
    """The setup as a person says it, naming only what the asked results depend on."""
    ctx, m = q.context, set(q.mentions)
    drawn = dict(q.drawn)
    head = ""
    if "model" in m:
        head = ctx.model.name
    if "weights" in m:
        head += f" in {ctx.weights.name.upper()}" if head else f"In {ctx.weights.name.upper()}"
    if "hardware" in m:
        n = int(drawn.get("tp", "1"))
        chip = _chip(ctx.hardware)
        kind = "GPUs" if ctx.hardware.compute_unit_kind in (*BLOCK_UNITS, None) else "chips"
        where = f"one {chip}" if n == 1 else f"{_WORDS.get(n, str(n))} {chip} {kind}"
        head = f"{head} on {where}" if head else f"On {where}"
    scenario = []
    if "batch" in drawn:
        scenario.append(f"batch {drawn['batch']}")
    if "context" in drawn:
        scenario.append(f"{_tokens(drawn['context'])} context")
    tail = []
    if scenario:
        tail.append("at " + " and ".join(scenario))
    if "prompt_len" in drawn:
        tail.append(f"with a {_tokens(drawn['prompt_len'])}-token prompt")
    if "second_hardware" in m and ctx.second_hardware is not None:
        tail.append(f"with the {_chip(ctx.second_hardware)} as the second chip")
    if "second_model" in m and ctx.second_model is not None:
        tail.append(f"with {ctx.second_model.name} as the second model")
    text = " ".join(x for x in (head, *tail) if x)
    if not text:
        return "For the sheet's own setup"
    # a model's name is written as its makers write it (gpt-oss-20b), even at the start of a sentence
    return text if "model" in m else text[:1].upper() + text[1:]


def _noun(title: str) -> str:
    if title.startswith("The "):
        return "the " + title[4:]
    return "the " + (title[:1].lower() + title[1:] if title[1:2].islower() else title)


def asks(q: Any) -> list[str]:
    """Each asked result as an instruction: 'find the step time, and say what bounds it'."""
    return [f"find {_noun(a.title)}" + (", and say what bounds it" if a.bound is not None else "") for a in q.answers]


def question_text(q: Any, numbered: bool = True, given: bool = True) -> str:
    """The question as plain text: the setup, then what to find ("... at batch 16 and 8K context: find the step time, and say what bounds it.")."""
    parts = asks(q)
    body = parts[0] + "." if len(parts) == 1 else " ".join(f"({chr(97 + i)}) {p[:1].upper() + p[1:]}." for i, p in enumerate(parts))
    taken = given_text(q, None) if given else ""
    return (f"{q.number}. " if numbered else "") + f"{setup_words(q)}: {body}" + (f" Take: {taken}." if taken else "")


def short_meaning(text: str, name: str) -> str:
    """An input's meaning up to its first aside ('fixed time per step: launches, ...' -> 'fixed time per step'); its name if math remains."""
    for mark in (" (", ":", ";"):
        text = text.split(mark)[0]
    return name if "$" in text or not text.strip() else text.strip()


def _trimmed(text: str) -> str:
    """'0.8300' -> '0.83': a given value as a person writes it (the figure is exact: the sheet's default)."""
    head, _, rest = text.partition(" ")
    if "." in head and "e" not in head:
        head = head.rstrip("0").rstrip(".")
    return f"{head} {rest}".strip()


def given_text(q: Any, target: Target | None) -> str:
    """'achieved fraction of datasheet bandwidth 0.83, ...': the inputs the results need that the setup does not draw."""
    items = []
    for g in q.given:
        meaning = short_meaning(g.info.meaning, g.name)
        value = _trimmed(plain(g.value.exact, g.value.unit))
        items.append(f"{meaning} = {value}" if target is None else f"{target.text(meaning)} = {target.text(value)}")
    return "; ".join(items)


def _latex_by_name(q: Any) -> dict[str, str]:
    return {info.name: info.latex for info in q.derivation.symbols}


def bound_text(b: Bound) -> str:
    """'HBM bandwidth: 62% of the time scales with it; then overheads and latencies 38% (the per-layer overhead 35%,
    all-reduce latency 3%), the tensor-core peak 0%'.

    The rest is what no resource moves: the step model's overheads (per layer, per step) and all-reduce latencies, each
    named with its share where the time holds it (one that is zero here, the latency on one GPU, is left out)."""
    split = sorted(((OVERHEAD_WORDS.get(s.name, s.name), share) for s, share in b.overheads if share > 1e-12), key=lambda x: -x[1])
    detail = " (" + ", ".join(f"{n} {x:.0%}" for n, x in split) + ")" if split else ""
    parts = sorted([*((RESOURCE_WORDS.get(s.name, s.name), share) for s, share in b.shares), (REST_WORDS, b.rest)], key=lambda x: -x[1])
    (top, share), others = parts[0], parts[1:]
    then = "; then " + ", ".join(f"{n} {x:.0%}" + (detail if n == REST_WORDS else "") for n, x in others) if others else ""
    if top == REST_WORDS:
        return f"{REST_WORDS}: {share:.0%} of the time{detail}{then}"
    return f"{top}: {share:.0%} of the time scales with it{then}"


def command(q: Any) -> str:
    """The command that derives the sheet for this setup."""
    ctx, m = q.context, set(q.mentions)
    parts = ["roofline", "derive", q.slug, "--hardware", ctx.hardware.key, "--model", ctx.model.key]
    if "weights" in m:
        parts += ["--weights", ctx.weights.name]
    if "second_hardware" in m and ctx.second_hardware is not None:
        parts += ["--second-hardware", ctx.second_hardware.key]
    for name, value in q.drawn:
        parts += ["--set", f"{name}={value.split()[0]}"]
    return " ".join(parts)


# --- paper and key --------------------------------------------------------------------------------------------------

def _math_block(lines: list[str], target: Target) -> str:
    head, sep, tail = lines[0].partition(" = ")
    first = f"{head} &= {tail}" if sep else lines[0]
    body = first + "".join(f" \\\\\n&= {x}" for x in lines[1:])
    if target is LATEX:
        return "\\fitwidth{$\\displaystyle\\begin{aligned}\n" + body + "\n\\end{aligned}$}"
    return "$$\n\\begin{aligned}\n" + body + "\n\\end{aligned}\n$$"


def _step(st: SolvedStep, q: Any, target: Target, brief: bool = False) -> dict[str, str]:
    """One step as the key prints it: its sentence and symbol = formula = numbers = result; `brief`, formula and result on one line."""
    names = q.derivation.blueprint.latex_names
    lead, lines = step_lines(st, forms_of(q.derivation)[st.step.name], names, target)
    lines = [target.math(x) for x in lines]
    if brief and len(lines) > 1:
        lines = [f"{lines[0]} = {lines[-1]}"]
    by_name = _latex_by_name(q)
    return {"title": prose.render(step_title(st.step), target.text, target.inline_math, by_name), "name": target.code(st.step.name),
            "symbol": target.inline_math(st.latex), "lead": lead, "math": _math_block(lines, target),
            "why": prose.render(st.step.why, target.text, target.inline_math, by_name, _values(q, target), target.link)}


def _values(q: Any, target: Target) -> dict[str, str]:
    return {n: value_text(v, target) for n, v in q.values.items()}


def _question(q: Any, target: Target, key: bool) -> dict[str, Any]:
    t = target.text
    by_name = _latex_by_name(q)
    out: dict[str, Any] = {
        "number": q.number, "text": t(question_text(q, numbered=False, given=False)),
        "given": given_text(q, target), "title": prose.render(q.derivation.title, t, target.inline_math, by_name), "slug": target.code(q.slug),
    }
    if key:
        out["answers"] = []
        for a in q.answers:
            out["answers"].append({"title": t(a.title), "name": target.code(a.result), "value": step_value_text(a.step.step, a.value, target),
                                   "step": _step(a.step, q, target), "bound": t(bound_text(a.bound)) if a.bound is not None else ""})
        asked = {a.result for a in q.answers}  # printed in full above: the key's argument is the way to them
        out["argument"] = [_step(st, q, target, brief=True) for st in q.argument if st.step.name not in asked]
        out["scoring"] = [prose.render(s, t, target.inline_math, by_name, _values(q, target), target.link) for s in q.derivation.scoring]
        out["command"] = target.code(command(q))
        out["context"] = t(f"{q.context.hardware.name} ({q.context.hardware.key}) · {q.context.model.name} ({q.context.model.key}) · "
                           f"weights {q.context.weights.name}, KV cache {q.context.kv.name}, math {q.context.math.math}")
    return out


def render(quiz: Any, fmt: str, key: bool = False) -> str:
    """The question paper (or, with `key`, the answer key) in `fmt`: md, tex or json."""
    if fmt == "json":
        return json.dumps(as_json(quiz, key), indent=2, ensure_ascii=False) + "\n"
    target = MARKDOWN if fmt == "md" else LATEX
    questions = [_question(q, target, key) for q in quiz.questions]
    n = len(quiz.questions)
    title = ("Answer key" if key else "Interview questions") + f": {n} question{'s' if n != 1 else ''}, seed {quiz.seed}"
    variables = {"title": target.text(title), "questions": questions, "key": key, "seed": quiz.seed,
                 "sheets": target.text(", ".join(quiz.sheets) if len(quiz.sheets) < 19 else "every sheet")}
    if fmt == "md":
        return re.sub(r"\n{3,}", "\n\n", MARKDOWN_ENV.get_template("quiz.md.j2").render(**variables)).rstrip("\n") + "\n"
    return LATEX_ENV.get_template("quiz.tex.j2").render(siunitx_declarations=SIUNITX_DECLARATIONS, **variables)


def _number(v: Value) -> dict[str, Any]:
    from .units import Quantity

    s = display(v.exact, v.unit, v.display_unit)
    q = Quantity(float(v.exact), v.unit)
    base = q.to_base_units()
    return {"value": float(q.to(unit_text(s.unit)).magnitude), "unit": unit_text(s.unit), "si_value": float(base.magnitude), "si_unit": unit_text(base.units),
            "exact": str(v.exact) if isinstance(v.exact, Fraction) else None}


def as_json(quiz: Any, key: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"seed": quiz.seed, "count": len(quiz.questions), "sheets": list(quiz.sheets), "questions": []}
    for q in quiz.questions:
        ctx = q.context
        item: dict[str, Any] = {
            "number": q.number, "slug": q.slug, "title": q.derivation.title, "text": question_text(q),
            "setup": {"hardware": ctx.hardware.key if "hardware" in q.mentions else None, "model": ctx.model.key if "model" in q.mentions else None,
                      "weights": ctx.weights.name if "weights" in q.mentions else None,
                      "second_hardware": ctx.second_hardware.key if ctx.second_hardware is not None and "second_hardware" in q.mentions else None,
                      "inputs": dict(q.drawn)},
            "given": {g.name: {"value": float(g.value.exact), "unit": unit_text(g.value.unit)} for g in q.given},
            "asks": [{"result": a.result, "title": a.title, "question": text, "bound": a.bound is not None} for a, text in zip(q.answers, asks(q), strict=True)],
        }
        if key:
            item["command"] = command(q)
            item["answers"] = [{"result": a.result, **_number(a.value), **shown_json(a.step.step, a.value), "formula": forms_of(q.derivation)[a.step.step.name].text,
                                "bound": None if a.bound is None else {"binding": a.bound.binding.name if a.bound.binding is not None else "fixed",
                                                                        "shares": {s.name: x for s, x in a.bound.shares}, "rest": a.bound.rest,
                                                                        "overheads": {s.name: x for s, x in a.bound.overheads}}}
                               for a in q.answers]
            item["argument"] = [{"step": st.step.name, "title": st.step.title, "formula": forms_of(q.derivation)[st.step.name].text, **_number(st.value),
                                 **shown_json(st.step, st.value)} for st in q.argument]
            item["scoring"] = [prose.plain(s, _latex_by_name(q)) for s in q.derivation.scoring]
        out["questions"].append(item)
    return out


# --- the terminal -----------------------------------------------------------------------------------------------------

def argument_text(q: Any) -> str:
    """The sheet's argument for a missed question, as plain text: each step's title, formula and value here."""
    lines = [f"The argument ({q.slug}; `{command(q)}` prints the whole sheet):"]
    for i, st in enumerate(q.argument, 1):
        lines.append(f"  {i:>2}. {step_title(st.step)}: {st.step.name} = {forms_of(q.derivation)[st.step.name].text} = {count_plain(st.step, st.value)}")
    return "\n".join(lines)



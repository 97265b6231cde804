"""Interview question sets from the sheets (`roofline quiz`), with their answer keys, and `roofline quiz --ask`.

For each question the quiz draws a sheet, one or two of its headline results,
and a setup for them: a shipped chip and model, a weight precision, and the
scenario inputs a person names (batch, context, prompt, tensor-parallel degree),
each drawn only where the asked results depend on it. A setup is kept only when
it fits in memory and every asked result has a value there; the answer key's
values are the sheet's own, evaluated in that context by the engine
(`derivations.engine.sheet.evaluate`). The same seed gives the same set: every draw
comes from one `random.Random(seed)`, over sorted lists.

    >>> from roofline import quiz
    >>> q = quiz.draw(seed=7, count=2)
    >>> [x.derivation.slug for x in q.questions]  # doctest: +SKIP
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

import sympy as sp

from .derivations.engine import run
from .derivations.engine.context import BINDINGS, Context, input_value
from .derivations.engine.declare import Derivation, needed_steps
from .derivations.engine.planning import plan_of
from .derivations.engine.sheet import (
    FIT_STEP,
    Missing,
    SolvedInput,
    SolvedStep,
    Value,
    bindings,
    defaults_of,
    evaluate,
    identities,
    input_values,
    setup_of,
)
from .derivations.physics import glossary as gl
from .derivations.questions import registry
from .formulas import CONVENTION_SYMBOLS, HARDWARE_SYMBOLS, SECOND_SYMBOLS, exact_number
from .grading import compare as grading
from .grading.answer import context as sheet_context
from .grading.verdict import Verdict
from .specs.catalog import hardware_names, model_names, shown_path
from .specs.errors import SpecError, shown, suggest
from .specs.files import replace_files
from .specs.hardware import Hardware, load_hardware
from .units import RooflineError

__all__ = ["Answer", "Question", "Quiz", "QuizError", "ask", "draw"]

#: What a setup may draw, per scenario input (a person's round numbers); an input is drawn only where an asked result uses it.
DRAWN_INPUTS: dict[str, tuple[str, ...]] = {
    "batch": ("1", "2", "4", "8", "16", "32", "64", "128", "256"),
    "context": tuple(f"{n} token" for n in (1024, 2048, 4096, 8192, 16384, 32768, 131072)),
    "prompt_len": tuple(f"{n} token" for n in (512, 1024, 2048, 4096, 8192, 16384)),
    "tp": ("1", "2", "4", "8"),
}
#: Weight precisions a setup draws from (math follows the weights; a chip without the math peak is redrawn).
WEIGHTS = ("bf16", "fp8")
#: Symbols whose value is set by the weight precision (the bytes of a weight, the tensor peak at its math).
PRECISION_SYMBOLS = frozenset({gl.b_w, gl.b_e, gl.pi})
#: Tries per question before the sheet is given up for another.
ATTEMPTS = 80
#: The most results one question asks.
MAX_ASKED = 2
DEFAULT_COUNT = 10
DEFAULT_SEED = 1


class QuizError(RooflineError, ValueError):
    """A quiz that cannot be drawn as asked: one line."""


@dataclass(frozen=True)
class Answer:
    """One asked result: its value in the drawn setup, its step, and what bounds it (for a roofline time)."""

    result: str
    title: str
    value: Value
    step: SolvedStep
    bound: grading.Bound | None


@dataclass(frozen=True)
class Question:
    number: int
    derivation: Derivation
    context: Context
    #: what the question names: "hardware", "model", "weights", "second_hardware", "second_model", and drawn input names
    mentions: tuple[str, ...]
    #: the drawn inputs, by name (value text as drawn)
    drawn: tuple[tuple[str, str], ...]
    answers: tuple[Answer, ...]
    #: the other inputs the asked results depend on, at the sheet's defaults, stated in the question
    given: tuple[SolvedInput, ...]
    #: the sheet's argument for these results: the steps its module marks as the argument (its headline steps where it marks
    #: none) that the asked results need, each solved in the setup; none that has no value or is an identity here
    argument: tuple[SolvedStep, ...]
    #: every step's and input's value here (for the sheet's prose: scoring points)
    values: dict[str, Value]

    @property
    def slug(self) -> str:
        return self.derivation.slug


@dataclass(frozen=True)
class Quiz:
    seed: int
    count: int
    sheets: tuple[str, ...]
    questions: tuple[Question, ...]


def _sheets(names: Sequence[str] | None) -> tuple[str, ...]:
    if names is None:
        return registry.SLUGS
    out = []
    for n in names:
        n = n.strip()
        if n not in registry.SLUGS:
            raise QuizError(f"--sheets: unknown sheet {n[:40]!r}{suggest(n, registry.SLUGS)}; `roofline list questions` lists them")
        if n not in out:
            out.append(n)
    if not out:
        raise QuizError("--sheets: give one or more sheet slugs, separated by commas")
    return tuple(out)


def _model_symbols() -> frozenset[sp.Symbol]:
    return frozenset(BINDINGS) - HARDWARE_SYMBOLS - CONVENTION_SYMBOLS - SECOND_SYMBOLS - PRECISION_SYMBOLS


def draw(seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT, sheets: Sequence[str] | None = None) -> Quiz:
    """`count` questions drawn with `seed` from `sheets` (default: every sheet), each with its answers run."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise QuizError(f"--seed: expected a whole number from 0, found {shown(seed)}")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 200:
        raise QuizError(f"--count: expected a whole number from 1 to 200, found {shown(count)}")
    slugs = _sheets(sheets)
    rng = random.Random(seed)
    questions: list[Question] = []
    order: list[str] = []
    given_up: set[str] = set()
    while len(questions) < count:
        if not order:
            order = [s for s in slugs if s not in given_up]
            if not order:
                raise QuizError(f"no setup of {', '.join(slugs)} fits and has every asked result valued; try other sheets")
            rng.shuffle(order)
        slug = order.pop()
        q = _question(registry.get(slug), len(questions) + 1, rng)
        if q is None:
            given_up.add(slug)
            continue
        questions.append(q)
    return Quiz(seed, count, slugs, tuple(questions))


def _question(d: Derivation, number: int, rng: random.Random) -> Question | None:
    """One question of sheet `d`, or None when no draw in ATTEMPTS fits and has every asked result valued."""
    by_name = {i.name: i for i in d.inputs}
    hardware, models = hardware_names(), model_names()
    for _ in range(ATTEMPTS):
        k = min(len(d.results), rng.choice(range(1, MAX_ASKED + 1)))
        asked = sorted(rng.sample(list(d.results), k), key=d.results.index)
        deps = set().union(*(d.symbols_of[r] for r in asked))
        mentions = []
        chip = d.hardware[0]
        if deps & HARDWARE_SYMBOLS:
            chip = rng.choice(hardware)
            mentions.append("hardware")
        model = d.models[0]
        if deps & _model_symbols():
            model = rng.choice(models)
            mentions.append("model")
        weights = None
        if deps & PRECISION_SYMBOLS:
            weights = rng.choice(WEIGHTS)
            mentions.append("weights")
        second = None
        if deps & set(gl.SECOND_CHIP.values()):
            first = load_hardware(chip)
            upgrades = [h for h in hardware if h != chip and _upgrade(first, load_hardware(h))]
            if not upgrades:
                continue  # the fastest chip has nothing to upgrade to: draw again
            second = rng.choice(upgrades)
            mentions.append("second_hardware")
        if deps & set(gl.SECOND_MODEL.values()):
            mentions.append("second_model")
        picks = [(name, rng.choice(choices)) for name, choices in DRAWN_INPUTS.items() if name in by_name and by_name[name].symbol in deps]
        try:
            ctx = sheet_context(d, chip, model, weights, None, None, [])
            if second is not None:
                ctx = replace(ctx, second_hardware=load_hardware(second))
                if ctx.math.math not in ctx.second_hardware.peak_dense:
                    continue
            # name only the inputs that move an asked result for this model (a dense model's floor ignores the batch)
            drawn = [(name, value) for name, value in picks if _moves(d, ctx, asked, name)]
            ctx = replace(ctx, overrides=sheet_context(d, chip, model, weights, None, None, [f"{n}={v}" for n, v in drawn]).overrides)
        except SpecError:
            continue  # a chip without this math's peak: draw again
        if "model" in mentions and not _fits(d, ctx, chip, model, weights, drawn):
            continue
        still = {name for name, _ in picks} - {name for name, _ in drawn}
        solved = _solve(d, ctx, asked, number, tuple(mentions) + tuple(n for n, _ in drawn), tuple(drawn), still)
        if solved is not None:
            return solved
    return None


def _upgrade(first: Hardware, second: Hardware) -> bool:
    """A second chip a question would ask about: at least the first's bandwidth and capacity, more of one (an upgrade, not a downgrade)."""
    pairs = ((first.memory_bandwidth, second.memory_bandwidth), (first.memory_capacity, second.memory_capacity))
    return all(b >= a for a, b in pairs) and any(b > a for a, b in pairs)


def _moves(d: Derivation, ctx: Context, asked: Sequence[str], name: str) -> bool:
    """True when an asked result changes between the first and last value `name` is drawn from (or has no value at one)."""
    choices = DRAWN_INPUTS[name]
    lo, hi = (evaluate(d, ctx.with_overrides(**{name: v}), only=list(asked)) for v in (choices[0], choices[-1]))
    return any(isinstance(lo[r], Missing) or isinstance(hi[r], Missing) or lo[r] != hi[r] for r in asked)


def _fits(d: Derivation, ctx: Context, chip: str, model: str, weights: str | None, drawn: Sequence[tuple[str, str]]) -> bool:
    """The setup fits in memory: the sheet's own memory step, else that of the first sheet that has one (the shared step model's)."""
    fit = d if FIT_STEP in d.expanded else next((registry.get(s) for s in registry.SLUGS if FIT_STEP in registry.get(s).expanded), None)
    if fit is None:
        return True
    if fit is not d:
        names = {i.name for i in fit.inputs}
        ctx = sheet_context(fit, chip, model, weights, None, None, [f"{n}={v}" for n, v in drawn if n in names])
    v = evaluate(fit, ctx, only=[FIT_STEP])[FIT_STEP]
    return not isinstance(v, Missing) and v <= 1


def _value(d: Derivation, name: str, v: sp.Expr | Missing, display: bool = True) -> Value:
    unit = d.blueprint.symbol(name).unit
    shown = d.display_units.get(name) if display else None
    if isinstance(v, Missing):
        return Value(None, unit, shown, v)
    return Value(exact_number(v), unit, shown)


def _solve(d: Derivation, ctx: Context, asked: Sequence[str], number: int, mentions: tuple[str, ...],
           drawn: tuple[tuple[str, str], ...], still: set[str] = frozenset()) -> Question | None:
    """The question solved in `ctx`: None when an asked result has no value there. `still`: inputs that do not move the results,
    which the question leaves unsaid."""
    results = evaluate(d, ctx)
    if any(isinstance(results[r], Missing) for r in asked):
        return None
    if any(isinstance(results[r], Missing) and results[r].kind == "n/a" for r in d.results):
        return None  # the sheet refuses a setup one of its headline results cannot apply to (a dense model for moe-experts)
    bp = d.blueprint
    bound_values = input_values(d, ctx)
    symbol_values = {**bound_values, **{sp.Symbol(n, positive=True): v for n, v in results.items()}}
    base = run.input_values(bp, setup_of(d, ctx), plan_of(d).inputs, defaults_of(d))
    structural = run.structure(bp, bindings(), base)
    not_here = frozenset(n for n, v in results.items() if isinstance(v, Missing) and v.kind == "n/a")
    same = {n: i for n, i in identities(d, structural, not_here).items() if not i.nan or isinstance(results[n], Missing)}

    def solved_step(name: str) -> SolvedStep:
        step = d.step(name)
        operands = {s.name: _value(d, s.name, symbol_values[s]) for s in step.expr.free_symbols}
        return SolvedStep(bp.step(name), bp.symbol(name).latex, _value(d, name, results[name]), operands, same.get(name))

    answers = tuple(Answer(r, d.step(r).title or r, _value(d, r, results[r]), solved_step(r),
                           grading.what_bounds(d, r, ctx) if grading.asks_bound(d, r) else None) for r in asked)
    need = needed_steps(d, asked)
    marked = set(d.argument or d.results)
    argument = tuple(st for st in (solved_step(s.name) for s in d.steps if s.name in need and s.name in marked)
                     if st.applies and st.value.missing is None)
    deps = set().union(*(d.symbols_of[r] for r in asked))
    drawn_names = {n for n, _ in drawn}
    given = []
    for inp in d.inputs:
        if inp.symbol in deps and inp.name not in drawn_names and inp.name not in still:
            _, is_set = input_value(inp, ctx, d.inputs)
            v = bound_values[inp.symbol]
            if not is_set and _plain_default(v, inp.unit):
                continue  # one token per step, no prompt, no prefix cache, no EP: what a question means unless it says otherwise
            if not is_set and inp.follows:
                continue  # it takes the value of the input it follows (a later draft position's acceptance, the drafter's TP degree)
            given.append(SolvedInput(inp.name, bp.symbol(inp.symbol.name), _value(d, inp.symbol.name, v, display=False), is_set, inp.meaning))
    values = {n: _value(d, n, v) for n, v in results.items()}
    values.update({i.name: _value(d, i.symbol.name, bound_values[i.symbol], display=False) for i in d.inputs
                   if not isinstance(bound_values[i.symbol], Missing)})
    return Question(number, d, ctx, mentions, drawn, answers, tuple(given), argument, values)


def _plain_default(v: object, unit: str) -> bool:
    """An input at a default that removes its term or leaves it as an identity (0 of anything; 1 of a count or a token), which a
    question need not state: plain decode, one token per step, nothing cached, no expert or data parallelism, no fixed time."""
    if isinstance(v, Missing):
        return False
    x = float(v)  # type: ignore[arg-type]
    return x == 0 or (x == 1 and unit in ("1", "token"))


# --- --ask: a candidate at a terminal ---------------------------------------------------------------------------------

#: Words that name what bounds a time, per resource (and None: the fixed overheads).
BOUND_WORDS: dict[sp.Symbol | None, tuple[str, ...]] = {
    gl.beta: ("memory", "bandwidth", "hbm", "bytes"),
    gl.pi: ("compute", "flop", "peak", "tensor", "math"),
    gl.beta_link: ("link", "nvlink", "all-reduce", "allreduce", "interconnect", "communication"),
    None: ("overhead", "fixed", "latency", "launch", "host", "per layer", "per-layer"),
}


def bound_guess(text: str) -> sp.Symbol | str | None:
    """The resource a free-text answer names ("memory-bound" -> beta), None for the overheads and latencies ("all-reduce
    latency" is a latency, not the link's bandwidth), "" for none it recognises."""
    t = text.lower()
    hits = [r for r, words in BOUND_WORDS.items() if any(w in t for w in words)]
    if set(hits) == {gl.beta_link, None} and "latency" in t:
        return None
    return hits[0] if len(hits) == 1 else ""


def ask(quiz: Quiz, read: Callable[[str], str], write: TextIO, question_text: Callable[[Question], str],
        argument_text: Callable[[Question], str], bound_text: Callable[[grading.Bound], str], verdict_text: Callable[[Verdict], str],
        tolerance: float = grading.NUMBER_TOLERANCE) -> tuple[int, int]:
    """Put each question, read an answer per result (and what bounds a time), grade each as `check --against` grades a number;
    show the sheet's argument for every question with a miss. Returns (right, asked). An empty answer skips (a miss)."""
    right = total = 0
    for q in quiz.questions:
        write.write(f"\n{question_text(q)}\n")
        missed = False
        for a in q.answers:
            total += 1
            unit = q.derivation.display_units.get(a.result) or str(q.derivation.symbols[a.result].unit_text)
            for _attempt in range(3):
                text = read(f"  {a.title} [{unit}]: ").strip()
                if not text:
                    write.write("  skipped\n")
                    missed = True
                    break
                try:
                    verdict = grading.grade_number(q.derivation, a.result, text, q.context, "", tolerance)
                except RooflineError as err:
                    write.write(f"  {err}\n")
                    continue
                write.write(f"  {verdict_text(verdict)}\n")
                ok = verdict.kind == "within"
                right += ok
                missed |= not ok
                break
            else:
                missed = True
            if a.bound is not None:
                total += 1
                guess = bound_guess(read("  what bounds it? "))
                ok = guess != "" and guess == a.bound.binding
                right += ok
                missed |= not ok
                write.write(f"  {'right' if ok else 'not quite'}: {bound_text(a.bound)}\n")
        if missed:
            write.write(f"\n{argument_text(q)}\n")
    write.write(f"\n{right} of {total} right\n")
    return right, total


def write_files(quiz: Quiz, folder: Path, files: dict[str, str | bytes]) -> list[Path]:
    """Every file of the set (paper and key in each format) into `folder`, written only once all of them are rendered: through
    specs.files, so all of them or none, and a link where one goes is replaced, not followed."""
    if folder.exists() and not folder.is_dir():
        raise QuizError(f"--out {shown_path(folder)}: is a file, expected a folder")
    return replace_files({folder / name: text for name, text in files.items()}, option="--out")


def terminal() -> bool:
    """stdin and stdout are a terminal (False where either is closed)."""
    return all(s is not None and s.isatty() for s in (sys.stdin, sys.stdout))

"""Steps, closed-form solves and derivations.

A Step is one named equation `symbol = expr` with a declared unit and one
sentence on why. A Solve is a step whose expression is found by sympy from an
equation between two earlier steps. `derivation(...)` assembles the steps of
one question, checks every step's unit, solves and verifies every closed form
(symbolically where sympy can, numerically at random points always) and
returns a frozen Derivation. Nothing here reads a file or formats text. Beside it: expansion (a step written out, and its
bounds), closed_forms (kinks, printed grouping, the solve cache) and declaration_checks (plots, claims, inputs, answer).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import sympy as sp

from ...units import RooflineError, UnitMismatchError, check_unit, same_unit, unit, unit_text
from ..physics import glossary as gl
from ..physics.glossary import GLOSSARY, SECOND_CHIP, SECOND_MODEL
from . import bounded, cache, closed_forms, expansion, prose
from .blueprint import Blueprint, Claim, InputEntry, Plot, Row, StepEntry, SymbolEntry, Table
from .closed_forms import (
    MAX_KINKS,
    bounded_below,
    cached_solve,
    grouped,
    kinks_of,
    leading_sign_inside,
    positive_numerator,
    solve_key,
    store_solve,
)
from .context import SCENARIO_INPUTS, Input
from .declaration_checks import DeclarationError, check_answer, check_claim_units, check_plots, check_second, inputs_used
from .expansion import ExpansionError, Measure, expand_by_cases, expand_steps
from .symbols import SHARES, Symbols, default_latex

#: Random points at which every closed form is checked against its equation.
NUMERIC_CHECK_POINTS = 8
NUMERIC_CHECK_TOLERANCE = sp.Rational(1, 10**9)
#: the code that solves and verifies (this module's, and the expansion and closed-form helpers it calls): part of every cached solve's key
_ENGINE_SOURCE = cache.source_digest(__file__, closed_forms.__file__, expansion.__file__)


class DerivationError(RooflineError):
    """A derivation is malformed: a unit clash in a step, an unsolvable or unverified closed form."""


@dataclass(frozen=True)
class Step:
    """`name = expr` in `unit`, with one sentence on why."""

    name: str
    expr: sp.Expr
    unit: str
    why: str
    latex: str | None = None
    meaning: str = ""
    #: a short heading in words ("Weight bytes per step"); the JSON name is printed beside it
    title: str = ""
    #: for a step whose value must be positive to mean anything (a headline such as the best draft length):
    #: why there is none where it is zero or below (for a `signed` step: where it is not a finite number); empty: any finite value stands
    none: str = ""
    #: a value whose sign carries meaning (a prediction's error against a measurement); every other step is zero or more
    signed: bool = False
    #: for a count of things (a batch, experts, a prompt): what it counts, plural ("sequences", "experts", "tokens");
    #: renderers print its values as whole numbers and say how they were rounded. Empty: not a count
    counts: str = ""
    #: how a count is made whole: "up" (a threshold to reach), "down" (a limit not to exceed), "nearest" (an expectation)
    rounds: str = "nearest"

    @property
    def s(self) -> sp.Symbol:
        """The symbol this step defines, for use in later steps."""
        return sp.Symbol(self.name, positive=True)

    @property
    def kind(self) -> str:
        return "define"


@dataclass(frozen=True)
class Solve(Step):
    """A closed form: the value of `for_` at which steps `lhs` and `rhs` are equal.

    `expr` is filled in by `derivation()`; pass `sp.S.Zero` or leave the default.
    `pick` chooses among several positive roots (default: there must be one).
    """

    lhs: str = ""
    rhs: str = ""
    for_: sp.Symbol | None = None
    pick: Callable[[list[sp.Expr]], sp.Expr] | None = None
    equation: tuple[sp.Expr, sp.Expr] | None = None
    verified: str = ""
    #: the closed form as printed: simplified and factored, unit markers set to 1; checked equal to `expr` (see `printed_form`)
    printed: sp.Expr | None = None
    #: why there is no value when the root is not a finite positive number in a context
    none: str = ""
    #: earlier steps that do not involve `for_` and stay as symbols in the closed form (W/(B s) rather than its expansion)
    keep: tuple[str, ...] = ()
    #: for a crossover in a whole quantity (a batch, a prompt): "up" when it is a threshold to reach or pass,
    #: "down" when it is a limit not to exceed (the largest batch that fits)
    rounds: str = "up"

    @property
    def kind(self) -> str:
        return "solve"


def solve(name: str, lhs: Step, rhs: Step, for_: sp.Symbol, unit: str, why: str, latex: str | None = None, meaning: str = "",
          pick: Callable[[list[sp.Expr]], sp.Expr] | None = None, none: str = "", title: str = "",
          keep: Sequence[Step] = (), rounds: str = "up") -> Solve:
    """A Solve step: `for_` such that `lhs` = `rhs`.

    Its domain is the finite positive numbers: in a context where the root
    falls outside it the result is "none" with the reason `none` gives.
    `rounds` says which whole number a reader runs: "up" (a threshold) or "down" (a limit).
    """
    if rounds not in ("up", "down"):
        raise DerivationError(f"{name}: rounds must be 'up' or 'down', found {rounds!r}")
    return Solve(name, sp.S.Zero, unit, why, latex, meaning, title, lhs=lhs.name, rhs=rhs.name, for_=for_, pick=pick, none=none,
                 keep=tuple(k.name for k in keep), rounds=rounds, counts=COUNT_NOUNS.get(for_, ""))


#: A crossover solved for one of these symbols is a count of whole things: the plural it counts.
COUNT_NOUNS = {gl.B: "sequences", gl.S: "tokens", gl.T: "tokens", gl.q: "tokens"}
#: Symbols that only carry a unit (one parameter, one token): a printed formula sets them to 1.
UNIT_MARKERS = (gl.u_param, gl.u_token)


@dataclass(frozen=True)
class At(Step):
    """An earlier step evaluated at other values of some of its inputs: `of` with each symbol of `where` replaced.

    The replacements are input or spec-bound symbols (the batch, the tokens per
    step, a chip's bandwidth) mapped to expressions in inputs and earlier
    steps; each must have the unit of the symbol it replaces. `expr` is filled
    in by `derivation()` with the expanded expression of `of`, so the value is
    the shared formula itself, never a copy: speculative verification is the
    step time at q = k + 1 tokens, a drafter's step the step time with the
    second model's symbols (see glossary.SECOND_MODEL).
    """

    of: str = ""
    where: tuple[tuple[sp.Symbol, sp.Expr], ...] = ()

    @property
    def kind(self) -> str:
        return "at"


def at(name: str, of: Step, where: Mapping[sp.Symbol, sp.Expr], why: str, latex: str | None = None, meaning: str = "",
       title: str = "", none: str = "") -> At:
    """An At step: `of` evaluated with the symbols of `where` replaced (its unit is that of `of`).

    `none`, if given, is the reason shown where `of` has no value at the replaced inputs (in the At step's own terms:
    "on the second chip"), and where the value is not positive.
    """
    return At(name, sp.S.Zero, of.unit, why, latex, meaning, title, none, counts=of.counts, rounds=of.rounds if of.counts else "nearest",
              of=of.name, where=tuple((k, sp.sympify(v)) for k, v in where.items()))


#: The plain fields of a derivation (slug, title, results, tables, claims, plots, ...): declared once, in Blueprint, and read
#: by a Derivation from its blueprint. symbols, steps and inputs are each twice, as sympy (here) and as plain entries (there).
PLAIN_FIELDS = frozenset(f.name for f in fields(Blueprint)) - {"symbols", "steps", "inputs"}


@dataclass(frozen=True)
class Derivation:
    """One question's derivation: its formulas (sympy: the symbol table, the steps, the inputs, every step expanded) and its
    blueprint, the plain data every sheet is made from (derivations.engine.blueprint). The blueprint's plain fields read as
    the derivation's own: `d.slug` is `d.blueprint.slug`, `d.results` `d.blueprint.results`. A new field of a sheet is declared
    in Blueprint and given by `derivation()`'s parameter of the same name."""

    blueprint: Blueprint
    symbols: Symbols
    steps: tuple[Step, ...]
    inputs: tuple[Input, ...]
    #: every step's expression with earlier steps substituted: only inputs remain
    expanded: Mapping[str, sp.Expr]
    #: the inputs and spec-bound symbols each step's value depends on (the free symbols of its expansion)
    symbols_of: Mapping[str, frozenset[sp.Symbol]] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        if name in PLAIN_FIELDS:
            return getattr(self.blueprint, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    @property
    def free_symbols(self) -> set[sp.Symbol]:
        out: set[sp.Symbol] = set()
        for name, e in self.expanded.items():
            out |= self.symbols_of[name] if name in self.symbols_of else e.free_symbols
        return out


def needed_steps(d: Derivation, names: Sequence[str]) -> set[str]:
    """The steps that `names` depend on, themselves included (an At step needs the step it evaluates)."""
    need = set(names)
    for step in reversed(d.steps):
        if step.name in need:
            need |= {s.name for s in step.expr.free_symbols if s.name in d.expanded}
            if isinstance(step, At):
                need.add(step.of)
    return need


def derivation(
    slug: str,
    title: str,
    question: str,
    symbols: Symbols,
    steps: Sequence[Step],
    results: Sequence[str],
    *,
    inputs: Sequence[Input] = (),
    assumptions: Sequence[str] = (),
    takeaways: Sequence[str] = (),
    scoring: Sequence[str] = (),
    limits: Sequence[str] = (),
    tables: Sequence[Table] = (),
    claims: Sequence[Claim] = (),
    hardware: Sequence[str] = ("h100-sxm", "h200", "b200"),
    models: Sequence[str] = ("llama-3.1-8b", "llama-3.1-70b"),
    display_units: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] | None = None,
    second_hardware: str | None = None,
    second_model: str | None = None,
    plots: Sequence[Plot] = (),
    argument: Sequence[str] = (),
    answer: Sequence[str] = (),
    body_tables: Sequence[int] | None = None,
    solve_budget: bounded.Budget | None = None,
) -> Derivation:
    """Build and check one question's derivation (see the module docstring).

    Every step's expansion is bounded (MAX_EXPANDED_TERMS, MAX_DEGREE, no exponential of an exponential). With
    `solve_budget` (a derivation file: equations from input), every closed form is solved in a child process within
    derivations.engine.bounded's limits, all of them together within the budget's CPU time; without it (a shipped sheet, whose
    equations are the project's own and measured by its tests) in this process.

    `defaults` gives this sheet its own default for shared scenario inputs
    (speculative decoding of a 70B model on eight GPUs: tp = 8); it is printed
    as the default like any other. `second_hardware` and `second_model` name
    the default second chip and model whose primed symbols the steps use.
    `argument` names the steps that carry the answer (about ten, in step order; the
    body of a sheet prints these and the appendix all); `answer` is the answer in
    sentences, prose whose `{result}` placeholders mention every headline result;
    `body_tables` picks the tables (by position) the body shows, the rest go to the appendix.
    """
    table = Symbols(parent=symbols)
    expanded: dict[str, sp.Expr] = {}
    symbols_of: dict[str, frozenset[sp.Symbol]] = {}
    measure = Measure()
    done: list[Step] = []
    for step in steps:
        if step.name in expanded:
            raise DerivationError(f"{slug}: step {step.name} is defined twice")
        if isinstance(step, Solve):
            step = _solve(slug, step, expanded, table, done, solve_budget)
        elif isinstance(step, At):
            step = _at(slug, step, expanded, table)
        units = table.units()
        _check_latex(slug, step)
        _check_known_symbols(slug, step, units)
        check_unit(step.expr, units, step.unit or "1", what=f"{slug}: step {step.name}")
        table.add(step.name, step.unit, step.latex or default_latex(step.name), step.meaning or step.title or step.why)
        expanded[step.name] = expand_by_cases(step.expr, expanded)
        try:
            symbols_of[step.name] = measure.check(slug, step.name, expanded[step.name])
        except ExpansionError as err:  # a bound of derivations.engine.expansion: this derivation's error
            raise DerivationError(str(err)) from None
        done.append(step)
    try:  # the checks in derivations.engine.declaration_checks refuse with a DeclarationError: this derivation's error
        all_inputs = inputs_used(slug, symbols_of, inputs, defaults or {})
        check_second(slug, symbols_of, second_hardware, second_model)
        missing = [r for r in results if r not in expanded]
        if missing:
            raise DerivationError(f"{slug}: headline results {missing} are not steps")
        for c in claims:
            check_claim_units(slug, c, table)
        _check_prose(slug, title, question, done, assumptions, takeaways, scoring, limits, tables, claims, inputs, table, expanded, answer)
        check_plots(slug, plots, table, expanded, all_inputs, tables)
        _check_argument(slug, argument, done, results)
        check_answer(slug, answer, results)
    except DeclarationError as err:
        raise DerivationError(str(err)) from None
    if body_tables is not None and (len(set(body_tables)) != len(body_tables) or any(not 0 <= i < len(tables) for i in body_tables)):
        raise DerivationError(f"{slug}: body_tables {tuple(body_tables)} must name each of the {len(tables)} tables at most once, by position")
    for step in done:
        if step.rounds not in ROUNDINGS:
            raise DerivationError(f"{slug}: step {step.name}: rounds must be one of {', '.join(ROUNDINGS)}, found {step.rounds!r}")
    plain = {"slug": slug, "title": title, "question": question, "results": tuple(results), "assumptions": tuple(assumptions),
             "takeaways": tuple(takeaways), "scoring": tuple(scoring), "limits": tuple(limits), "tables": tuple(tables),
             "claims": tuple(claims), "hardware": tuple(hardware), "models": tuple(models), "display_units": dict(display_units or {}),
             "second_hardware": second_hardware, "second_model": second_model, "plots": tuple(plots), "argument": tuple(argument),
             "answer": tuple(answer), "families": families(done), "body_tables": None if body_tables is None else tuple(body_tables)}
    return Derivation(_blueprint(table, tuple(done), all_inputs, plain), table, tuple(done), all_inputs, expanded, symbols_of)


def _blueprint(symbols: Symbols, steps: tuple[Step, ...], inputs: tuple[Input, ...], plain: Mapping[str, Any]) -> Blueprint:
    """The blueprint of a derivation: its symbol table, steps and inputs as plain entries, and its plain fields. An entry's
    field is its declaration's field of the same name (a field a step kind lacks keeps the entry's default), but for the
    unit and LaTeX (the symbol table's) and the symbols named (by name)."""
    def entry(s: Step) -> StepEntry:
        named = {"unit": unit_text(symbols[s.name].unit), "latex": symbols[s.name].latex,
                 "for_": s.for_.name if isinstance(s, Solve) and s.for_ is not None else ""}
        return StepEntry(**{f.name: named[f.name] if f.name in named else getattr(s, f.name) for f in fields(StepEntry)
                            if f.name in named or hasattr(s, f.name)})

    def input_entry(i: Input) -> InputEntry:
        return InputEntry(**{f.name: i.symbol.name if f.name == "symbol" else getattr(i, f.name) for f in fields(InputEntry)})

    return Blueprint(symbols=tuple(SymbolEntry(i.name, unit_text(i.unit), i.latex, i.meaning) for i in symbols),
                     steps=tuple(entry(s) for s in steps), inputs=tuple(input_entry(i) for i in inputs), **plain)


#: How a count is made whole (Step.rounds).
ROUNDINGS = ("up", "down", "nearest")
#: An argument is about ten steps: a sheet that marks more is printing its working, not its argument.
MAX_ARGUMENT_STEPS = 14
#: A family has at least this many members; two similar steps read better as two steps.
MIN_FAMILY = 3


def _check_argument(slug: str, argument: Sequence[str], steps: Sequence[Step], results: Sequence[str]) -> None:
    """The argument names steps, each once, in the order of the derivation, at most MAX_ARGUMENT_STEPS of them."""
    order = {s.name: i for i, s in enumerate(steps)}
    unknown = [n for n in argument if n not in order]
    if unknown:
        raise DerivationError(f"{slug}: argument names {unknown}, which are not steps")
    twice = next((n for i, n in enumerate(argument) if n in argument[:i]), None)
    if twice is not None:
        raise DerivationError(f"{slug}: argument names the step {twice} twice")
    early = next((i for i in range(1, len(argument)) if order[argument[i]] < order[argument[i - 1]]), None)
    if early is not None:
        raise DerivationError(f"{slug}: argument lists the step {argument[early]} after {argument[early - 1]}, but the derivation "
                              f"computes {argument[early]} first: list the argument in the derivation's order")
    if len(argument) > MAX_ARGUMENT_STEPS:
        raise DerivationError(f"{slug}: argument has {len(argument)} steps; an argument is about ten (at most {MAX_ARGUMENT_STEPS}), the rest is the appendix's working")


def families(steps: Sequence[Step]) -> tuple[tuple[str, ...], ...]:
    """Groups of at least MIN_FAMILY steps that differ only by a parameter, in step order.

    Two kinds: At steps of one earlier step with the same symbols replaced by
    numbers (the speedup at each draft length); and steps of one unit whose
    names share their first word and whose expressions are the same formula of
    the steps they read, each read step standing for its own first word
    (I_qkv = F_qkv/W_qkv and I_o = F_o/W_o), when their titles share their first
    two words ("Intensity of ..."). A headline result or argument step may be a
    member; the renderer decides how a family prints.
    """
    names = {s.name for s in steps}
    groups: dict[tuple[object, ...], list[Step]] = {}
    for s in steps:
        if isinstance(s, At):
            if s.where and all(v.is_number for _, v in s.where):
                groups.setdefault(("at", s.of, tuple(sorted(str(k) for k, _ in s.where))), []).append(s)
            continue
        if isinstance(s, Solve):
            continue
        reads = {x: sp.Symbol(x.name.split("_")[0] + "_") for x in s.expr.free_symbols if x.name in names}
        if not reads:
            continue
        shape = sp.srepr(s.expr.xreplace(reads))
        groups.setdefault(("formula", s.name.split("_")[0], s.unit, shape), []).append(s)
    out = []
    for key, members in groups.items():
        if key[0] == "formula":
            members = _shared_title(members)
        if len(members) >= MIN_FAMILY:
            out.append(tuple(m.name for m in members))
    order = {s.name: i for i, s in enumerate(steps)}
    return tuple(sorted(out, key=lambda f: order[f[0]]))


def _shared_title(members: Sequence[Step]) -> list[Step]:
    """The members whose titles begin with the two words most of them begin with."""
    heads: dict[tuple[str, ...], list[Step]] = {}
    for m in members:
        words = tuple((m.title or "").split()[:2])
        if len(words) == 2:
            heads.setdefault(words, []).append(m)
    return max(heads.values(), key=len, default=[])


def prose_strings(d: Derivation) -> list[tuple[str, str]]:
    """(where, text) for every piece of prose a derivation carries."""
    out = _prose(d.title, d.question, d.steps, d.assumptions, d.takeaways, d.scoring, d.limits, d.tables, d.claims, d.inputs)
    return out + [(f"answer {i + 1}", x) for i, x in enumerate(d.answer) if x]


def _prose(title: str, question: str, steps: Sequence[Step], assumptions: Sequence[str], takeaways: Sequence[str], scoring: Sequence[str],
           limits: Sequence[str], tables: Sequence[Table], claims: Sequence[Claim], inputs: Sequence[Input]) -> list[tuple[str, str]]:
    out = [("title", title), ("question", question)]
    for s in steps:
        out += [(f"step {s.name}: why", s.why), (f"step {s.name}: meaning", s.meaning), (f"step {s.name}: title", s.title),
                (f"step {s.name}: none", s.none)]
    for kind, texts in (("assumption", assumptions), ("takeaway", takeaways), ("scoring", scoring), ("limit", limits)):
        out += [(f"{kind} {i + 1}", x) for i, x in enumerate(texts)]
    for t in tables:
        out += [(f"table {t.title[:30]!r}", t.title), (f"table {t.title[:30]!r}: note", t.note)]
        out += [(f"table {t.title[:30]!r}: row", r.label) for r in t.rows]
    for c in claims:
        out += [(f"claim {c.text[:30]!r}", c.text)] + ([(f"claim {c.text[:30]!r}: where", c.where.label)] if c.where else [])
    out += [(f"input {i.name}", i.meaning) for i in inputs]
    return [(w, x) for w, x in out if x]


def _check_prose(slug: str, title: str, question: str, steps: Sequence[Step], assumptions: Sequence[str], takeaways: Sequence[str],
                 scoring: Sequence[str], limits: Sequence[str], tables: Sequence[Table], claims: Sequence[Claim], inputs: Sequence[Input],
                 table: Symbols, expanded: Mapping[str, sp.Expr], answer: Sequence[str] = ()) -> None:
    names = {info.name for info in table}
    values = set(expanded) | {i.name for i in (*SCENARIO_INPUTS, *inputs)}
    texts = _prose(title, question, steps, assumptions, takeaways, scoring, limits, tables, claims, inputs)
    texts += [(f"answer {i + 1}", x) for i, x in enumerate(answer) if x]
    for where, text in texts:
        try:
            prose.check(text, names, values, f"{slug}: {where}")
        except prose.ProseError as err:
            raise DerivationError(str(err)) from None


def _check_latex(slug: str, step: Step) -> None:
    """A step's symbol is LaTeX math: the prose macro \\sym{...} is not defined there (it would reach the PDF as is)."""
    if step.latex and "\\sym" in step.latex:
        raise DerivationError(f"{slug}: step {step.name}: its latex {step.latex!r} uses \\sym, which only prose expands; "
                              "write the symbol's LaTeX")


def _check_known_symbols(slug: str, step: Step, units: Mapping[sp.Symbol, object]) -> None:
    for s in step.expr.free_symbols:
        if s not in units:
            raise DerivationError(f"{slug}: step {step.name} uses {s}, which is neither a glossary symbol, an input nor an earlier step")


def _at(slug: str, step: At, expanded: Mapping[str, sp.Expr], table: Symbols) -> At:
    """Fill in an At step's expression: the expanded `of` with its `where` replacements, each unit-checked."""
    if step.of not in expanded:
        raise DerivationError(f"{slug}: {step.name} evaluates {step.of}, which is not an earlier step")
    base = expanded[step.of]
    units = table.units()
    twins = {**SECOND_CHIP, **SECOND_MODEL}
    applied = []
    for symbol, value in step.where:
        if symbol not in base.free_symbols:
            if twins.get(symbol) == value:
                continue  # a second setup's symbols are passed as a whole; this step does not read this one
            raise DerivationError(f"{slug}: {step.name}: {step.of} does not depend on {symbol}, so replacing it changes nothing")
        _check_known_symbols(slug, replace(step, expr=value), units)
        check_unit(value, units, units[symbol], what=f"{slug}: step {step.name}, the value replacing {symbol}")
        applied.append((symbol, value))
    with sp.evaluate(False):  # as in expand_steps: re-evaluating a large step model only tries to order its Max terms
        expr = base.xreplace(dict(applied))
    return replace(step, expr=expr, where=tuple(applied))


def _solve(slug: str, step: Solve, expanded: Mapping[str, sp.Expr], table: Symbols, earlier: Sequence[Step],
           budget: bounded.Budget | None = None) -> Solve:
    for side in (step.lhs, step.rhs):
        if side not in expanded:
            raise DerivationError(f"{slug}: {step.name} solves with {side}, which is not an earlier step")
    var = step.for_
    if var is None or var.name not in table:
        raise DerivationError(f"{slug}: {step.name} solves for an unknown symbol {var}")
    lhs, rhs = expanded[step.lhs], expanded[step.rhs]
    if var not in (lhs - rhs).free_symbols:
        raise DerivationError(f"{slug}: {step.name}: {var} does not appear in {step.lhs} = {step.rhs}")
    var_unit = table.info(var).unit
    if not same_unit(var_unit, unit(step.unit or "1")):
        raise UnitMismatchError(f"{slug}: step {step.name} is declared in {step.unit} but solves for {var} in {unit_text(var_unit)}")
    key = cache.key(_ENGINE_SOURCE, slug, step.name, step.lhs, step.rhs, var, step.keep, step.pick, *(solve_key(s.name, s.expr) for s in earlier))
    found = cached_solve(key)
    if found is None:
        what = f"{slug}: {step.name}: solving {step.lhs} = {step.rhs} for {var}"
        try:
            if budget is None:  # a shipped sheet's own equation: solved here, where sympy's caches carry over between solves
                found = _solve_and_verify(slug, step, expanded, earlier, var)
            else:  # an equation from input: in a child process within derivations.engine.bounded's limits and this budget
                found = bounded.run(_solve_and_verify, slug, step, expanded, earlier, var, what=what, budget=budget)
        except RooflineError:
            raise
        except (ArithmeticError, AttributeError, LookupError, NotImplementedError, RecursionError, TypeError, ValueError) as err:
            # sympy gives up on the equation in one of many ways: say so in one line
            raise DerivationError(f"{what}: sympy finds no closed form ({type(err).__name__}: {' '.join(str(err).split())[:80]})") from None
        store_solve(key, *found)
    root, verified, printed = found
    return replace(step, expr=root, equation=(lhs, rhs), verified=verified, printed=printed)


def _solve_and_verify(slug: str, step: Solve, expanded: Mapping[str, sp.Expr], earlier: Sequence[Step], var: sp.Symbol) -> tuple[sp.Expr, str, sp.Expr]:
    """The one positive root of the step's equation, how it was verified, and its printed form: the costly part, cached by `_solve`."""
    held = _expand_except(earlier, step.keep, var)
    sides = [sp.Symbol(n, positive=True) if n in step.keep else held[n] for n in (step.lhs, step.rhs)]
    kinks = kinks_of(sides[0] - sides[1], var)
    if not kinks:
        root = _one_root(slug, step, sides, var)
    else:
        root = _branch_roots(slug, step, sides, var, kinks)
    verified = _verify(slug, step.name, expanded[step.lhs], expanded[step.rhs], var, expand_steps(root, expanded))
    return root, verified, printed_form(slug, step.name, root)


def _one_root(slug: str, step: Solve, sides: Sequence[sp.Expr], var: sp.Symbol) -> sp.Expr:
    roots = [r[var] for r in sp.solve(sp.Eq(*sides), var, dict=True) if var in r]
    roots = [r for r in roots if r.is_positive is not False and not r.has(sp.I)]
    if step.pick is not None and roots:
        roots = [step.pick(roots)]
    if len(roots) != 1:
        raise DerivationError(f"{slug}: {step.name}: expected one positive root of {step.lhs} = {step.rhs} in {var}, found {len(roots)}")
    return positive_numerator(sp.simplify(roots[0]))


def _branch_roots(slug: str, step: Solve, sides: Sequence[sp.Expr], var: sp.Symbol, kinks: list[sp.Expr]) -> sp.Expr:
    """The root of an equation that is piecewise in `var` through min/max terms (min(T, W) of a windowed layer).

    Each combination of sides of the kinks is an equation sympy solves; a root counts where it is positive and the
    side it took is the one the min (max) picks at that root (the first such root, in branch order). The closed form is
    the Piecewise of the roots under those conditions, 0 where none holds, which a closed form's domain (a finite
    positive number) reads as none: a context whose windowed cache never grows to meet the other side.
    """
    if len(kinks) > MAX_KINKS:
        raise DerivationError(f"{slug}: {step.name}: {len(kinks)} min/max terms in {var}; at most {MAX_KINKS} are solved branch by branch")
    eq = sides[0] - sides[1]
    pieces: list[tuple[sp.Expr, sp.Basic]] = []
    for choice in itertools.product(*(range(len(k.args)) for k in kinks)):
        mapping = {k: k.args[i] for k, i in zip(kinks, choice, strict=True)}
        branch = eq
        for k in kinks:  # innermost first, so an outer kink's arguments are already resolved
            branch = branch.xreplace({k: mapping[k]})
        if var not in branch.free_symbols:
            continue  # flat in var on this branch: no crossing there
        roots = [r[var] for r in sp.solve(sp.Eq(branch, 0), var, dict=True) if var in r]
        roots = [r for r in roots if r.is_positive is not False and not r.has(sp.I)]
        if step.pick is not None and roots:
            roots = [step.pick(roots)]
        for found in roots:  # a quadratic branch (a windowed prefill) has two roots: the positive one on its branch counts
            root = positive_numerator(sp.simplify(found))
            conditions = []
            for k, i in zip(kinks, choice, strict=True):
                picked = k.args[i].xreplace({var: root})
                for j, other in enumerate(k.args):
                    if j != i:
                        other = other.xreplace({var: root})
                        conditions.append(picked <= other if isinstance(k, sp.Min) else picked >= other)
            if not root.is_positive and not bounded_below(conditions, root):
                conditions.append(root > 0)
            pieces.append((root, sp.And(*conditions)))
    if not pieces:
        raise DerivationError(f"{slug}: {step.name}: no branch of {step.lhs} = {step.rhs} has a root in {var}")
    return sp.Piecewise(*pieces, (sp.Integer(0), True))  # 0: no positive root, which a closed form's domain reads as none


def printed_form(slug: str, name: str, expr: sp.Expr) -> sp.Expr:
    """A closed form as a reader wants it: unit markers set to 1, common factors pulled out of every sum, the shortest of that,
    sympy's `factor` and the solver's own form. Checked equal to the solver's form (expansion, else numerically at random points)."""
    base = expr.xreplace({u: sp.S.One for u in UNIT_MARKERS})
    candidates = [base, leading_sign_inside(grouped(base))]
    try:
        candidates.append(sp.factor(base))
    except (sp.PolynomialError, TypeError, ValueError):
        pass
    best = min(candidates, key=lambda e: (len(sp.sstr(e)), candidates.index(e)))
    if best is not base and sp.expand(best - base) != 0:
        rng = random.Random(f"{slug}/{name}/printed")
        free = sorted(base.free_symbols, key=lambda s: s.name)
        for _ in range(NUMERIC_CHECK_POINTS):
            point = {s: sp.Float(sp.Rational(rng.randint(1, 999), 1000) if s.name in SHARES else sp.Rational(rng.randint(1, 10**6), rng.randint(1, 10**3)), 40)
                 for s in free}
            a, b = sp.N(best.xreplace(point), 30), sp.N(base.xreplace(point), 30)
            if abs(a - b) > NUMERIC_CHECK_TOLERANCE * max(abs(a), abs(b), sp.Integer(1)):
                return base  # the tidier form is not the same function: print the solver's
    return best


def _expand_except(earlier: Sequence[Step], keep: Sequence[str], var: sp.Symbol) -> dict[str, sp.Expr]:
    """Earlier steps expanded down to inputs, except the steps in `keep` (which must not involve `var`)."""
    out: dict[str, sp.Expr] = {}
    for s in earlier:
        mapping = {sp.Symbol(n, positive=True): e for n, e in out.items() if n not in keep}
        out[s.name] = s.expr.xreplace(mapping)
    for name in keep:
        full = expand_steps(out[name], {n: e for n, e in out.items()})
        if name not in out or var in full.free_symbols:
            raise DerivationError(f"keep={name!r}: it must be an earlier step that does not involve {var}")
    return out


def _verify(slug: str, name: str, lhs: sp.Expr, rhs: sp.Expr, var: sp.Symbol, root: sp.Expr) -> str:
    """'symbolic' when sympy proves lhs = rhs at the root; always also checked numerically."""
    left, right = lhs.xreplace({var: root}), rhs.xreplace({var: root})
    rng = random.Random(f"{slug}/{name}")
    free = sorted(left.free_symbols | right.free_symbols, key=lambda s: s.name)
    piecewise = root.has(sp.Piecewise)
    checked = tried = 0
    while checked < NUMERIC_CHECK_POINTS:
        tried += 1
        if tried > 8 * NUMERIC_CHECK_POINTS:
            raise DerivationError(f"{slug}: {name}: the closed form has a value at only {checked} of {tried} random points")
        # Floats, not Rationals: an exact rational raised to a random rational power makes sympy factor huge integers.
        point = {s: sp.Float(sp.Rational(rng.randint(1, 999), 1000) if s.name in SHARES else sp.Rational(rng.randint(1, 10**6), rng.randint(1, 10**3)), 40)
                 for s in free}
        try:
            if piecewise and not sp.N(root.xreplace(point), 30).is_positive:
                continue  # a branch-wise root (min/max in the variable) that has no value at this point: none to check
            a, b = sp.N(left.xreplace(point), 30), sp.N(right.xreplace(point), 30)
        except TypeError:
            if not piecewise:
                raise
            continue  # a branch condition compares a complex number (a random point outside the model's domain, k > E): none to check
        scale = max(abs(a), abs(b), sp.Integer(1))
        if abs(a - b) > NUMERIC_CHECK_TOLERANCE * scale:
            if a.is_real is False or b.is_real is False:
                continue  # a negative base to a huge fractional power (k > E), past 30 digits: outside the model's domain
            raise DerivationError(f"{slug}: {name}: the closed form fails its equation numerically at {point}")
        checked += 1
    if piecewise:
        return "numeric"  # sympy does not simplify a Piecewise of min/max branches to zero
    return "symbolic" if identically_zero(left - right) else "numeric"


def identically_zero(expr: sp.Expr) -> bool:
    """Whether `expr` is zero for every value of its symbols: over a common denominator, cancelled (an exact proof for a
    rational function of its atoms, in a fraction of simplify's time), else by simplify."""
    return sp.cancel(sp.together(expr)) == 0 or sp.simplify(expr) == 0


__all__ = [
    "GLOSSARY",
    "At",
    "Claim",
    "Derivation",
    "DerivationError",
    "Row",
    "Solve",
    "Step",
    "Table",
    "at",
    "derivation",
    "needed_steps",
    "solve",
]

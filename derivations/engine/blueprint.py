"""A derivation as plain data: what a sheet is built from once its formulas are compiled, without sympy or pint.

A `Derivation` (derivations.engine.declare) holds sympy expressions: the steps, solved and checked. Everything a sheet needs of
it besides its numbers and printed formulas is plain data: the question, each step's name, unit, sentence and kind, the
symbol table's names, units and LaTeX, the inputs with their defaults and domains, the tables, claims and plots as
declared. `Blueprint` is that data; `Derivation.blueprint` makes it, and `derivations.engine.run` builds every sheet from it
(with the numeric plan, derivations.engine.numeric). It round-trips through JSON (`to_json`, `from_json`), so the compiled form
of a sheet (roofline.compiled) can be stored and read back by a process that never imports sympy.

Row, Table, Claim and Plot are declared here (derivations.engine.declare re-exports them): a question module declares them as
plain data, and they stay plain data in the blueprint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from fractions import Fraction
from functools import cached_property
from typing import Any

from ...specs.literal import MAX_MAGNITUDE

#: The domains an input can declare, and how each is said in an error line.
DOMAINS = {
    "positive": "a positive quantity",
    "nonnegative": "zero or a positive quantity",
    "fraction": "a fraction in (0, 1]",
    "share": "0 or a fraction in (0, 1]",
    "count": "a whole number of at least 1",
    "whole": "a whole number, 0 or more",
    "at_least_one": "a ratio of at least 1",
}
#: Domains that admit zero (a zero value is a quantity like any other there).
ZERO_DOMAINS = ("nonnegative", "whole", "share")
#: Units in which a bare number is unambiguous (`batch=8`, `context=8192`, `claimed_tokens_per_s=500`).
BARE_NUMBER_UNITS = ("1", "token", "parameter", "token/s")
#: No count input is physical beyond this (sequences, tokens, GPUs).
MAX_COUNT = 10**9


def is_bare_number(text: str) -> bool:
    """Whether an input's value is a number with no unit (`batch=8`): read in the input's own unit where that is a count."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def within(domain: str, m: Fraction) -> bool:
    """Whether a magnitude (in an input's own unit) lies in the input's domain."""
    if domain == "positive":
        return 0 < m <= MAX_MAGNITUDE
    if domain == "nonnegative":
        return 0 <= m <= MAX_MAGNITUDE
    if domain == "fraction":
        return 0 < m <= 1
    if domain == "share":
        return 0 <= m <= 1
    if domain == "count":
        return m.denominator == 1 and 1 <= m <= MAX_COUNT
    if domain == "whole":
        return m.denominator == 1 and 0 <= m <= MAX_COUNT
    if domain == "at_least_one":
        return 1 <= m <= MAX_MAGNITUDE
    raise KeyError(domain)


@dataclass(frozen=True)
class Row:
    """One row of a table: a label and what to change from the sheet's context."""

    label: str
    hardware: str | None = None
    model: str | None = None
    weights: str | None = None
    kv: str | None = None
    math: str | None = None
    set: Mapping[str, str] = field(default_factory=dict)
    #: the second chip or model (primed symbols; see glossary.SECOND_CHIP and SECOND_MODEL)
    second_hardware: str | None = None
    second_model: str | None = None
    #: the engine profile the row is evaluated under (a shipped profile name; None: the sheet's)
    engine: str | None = None
    #: which series the row belongs to in a figure that draws it (a scatter's marker: the engine a measurement ran on)
    series: str = ""


@dataclass(frozen=True)
class Table:
    title: str
    rows: tuple[Row, ...]
    columns: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A number a teaser claims, checked: `left` against `right` (a step name or a quantity string).

    Both sides must have the same unit. A claim that two quantities are equal
    "numerically" (a batch in sequences against a ridge in flop/B) states the
    conversion: `convert` is the unit read as a plain number on whichever side
    carries it, and the sheet prints it with the claim.
    """

    text: str
    left: str
    right: str
    rel_tol: float = 0.05
    where: Row | None = None
    convert: str = ""
    #: a claim that `left` is at least `right` ("the biggest win"), not that they are equal; `rel_tol` still allows a shortfall
    at_least: bool = False


#: What a Plot can draw (renderers.plots draws each kind).
PLOT_KINDS = ("sweep", "roofline", "heatmap", "bars", "stack", "scatter")


@dataclass(frozen=True)
class Plot:
    """A figure the sheet shows, declared by the names of what it draws; `renderers.plots` draws it in the sheet's context.

    - "sweep": the steps `y` (one unit) as curves over the input `x`, from `span[0]` to `span[1]` (quantities in the
      input's unit; widened to show every mark), with `vlines` (steps or inputs in x's unit) and `hlines` (steps in y's unit)
      marked with their values; `fits_up_to` (a step in x's unit: the largest x that fits in memory) shades what lies beyond.
    - "roofline": the roofline of each accelerator of the sheet's grid (attainable FLOP/s against intensity, each ridge
      marked) with the steps `points` (intensities, flop/B) placed on the sheet's chip at each batch of `batches` (quantities,
      or steps whose value is a batch), and the steps `row_points` (default: `points`) in each context of `rows` (labelled by
      the row); `each_chip` places them on every chip's roof.
    - "heatmap": the columns `y` of the sheet's table number `table` (0 is the first of `tables=`), one cell per row.
    - "bars": one bar per step of `y` (one unit), the sheet's own values, with `vlines` (steps in that unit) marked; a bar
      starts at the step `base` when one is named (how far each step moves a value).
    - "stack": one bar per row of the sheet's table number `table` (or per row of `rows`; the sheet's own context when
      neither), each bar the steps `y` stacked; `vlines` are steps in that unit marked on every bar.
    - "scatter": the rows of the sheet's table number `table` as points, `x` against `y[0]` (steps of one unit) with the line
      where they are equal and `hlines` (unit-free steps: relative bands around it, as an error); a row's `series` picks its
      marker, the value of the input `group` its colour.

    In "bars" and "stack", a step named in `split` is drawn as the terms of its own formula (each a step, an input or a
    product of them), so a bar shows what the step is made of and follows the formula when it changes. `labels` gives short
    prose names to drawn steps (default: each step's title) and, in a sweep, to its input x (default: the input's meaning); points or bar parts with the same label are one thing to the
    reader (the tied weight GEMMs). `title` states the finding (prose with `{value}` placeholders, like a takeaway);
    `caption` is prose (checked like a table title); `log` names the axes drawn on a log scale ("x", "y", "xy" or "").
    """

    name: str
    kind: str
    caption: str
    x: str = ""
    y: tuple[str, ...] = ()
    span: tuple[str, str] = ("1", "1024")
    vlines: tuple[str, ...] = ()
    hlines: tuple[str, ...] = ()
    log: str = "xy"
    table: int | None = None
    points: tuple[str, ...] = ()
    batches: tuple[str, ...] = ()
    #: True for the figure that is the sheet's answer: shown in the Answer section, not only among the figures
    answer: bool = False
    title: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    split: tuple[str, ...] = ()
    fits_up_to: str = ""
    base: str = ""
    rows: tuple[Row, ...] = ()
    #: a roofline's points placed in each row's context (default: those of `points`)
    row_points: tuple[str, ...] = ()
    each_chip: bool = False
    group: str = ""

    def label(self, name: str) -> str:
        """The short prose name the plot gives a drawn step, or "" when it gives none."""
        return self.labels.get(name, "")


@dataclass(frozen=True)
class SymbolEntry:
    """A symbol of the sheet's table (the glossary's and the sheet's own): its name, unit (text), LaTeX and meaning."""

    name: str
    unit: str
    latex: str
    meaning: str


@dataclass(frozen=True)
class StepEntry:
    """A step as a sheet reads it: everything but its expression (its printed forms are renderers.forms')."""

    name: str
    #: "define", "solve" (a closed form) or "at" (an earlier step evaluated again)
    kind: str
    unit: str
    why: str
    #: the symbol's LaTeX (the symbol table's)
    latex: str
    meaning: str = ""
    title: str = ""
    none: str = ""
    signed: bool = False
    counts: str = ""
    rounds: str = "nearest"
    #: a closed form's: how it was checked, the two steps it equates and the symbol it solves for
    verified: str = ""
    lhs: str = ""
    rhs: str = ""
    for_: str = ""
    #: an At step's: the step it evaluates again
    of: str = ""


@dataclass(frozen=True)
class InputEntry:
    """A scenario input: its name, the symbol it sets, its default (a quantity string), unit, meaning and domain."""

    name: str
    symbol: str
    default: str
    unit: str
    meaning: str
    domain: str = "positive"
    #: the input whose value this one takes unless set (derivations.engine.context.Input.follows)
    follows: str = ""
    #: older names `--set` still reads as this input's (derivations.engine.context.Input.aliases)
    aliases: tuple[str, ...] = ()


def by_name(inputs: Any) -> dict[str, Any]:
    """Inputs (Input or InputEntry) by every name `--set` reads: each one's name, then its older names (`aliases`)."""
    named = {i.name: i for i in inputs}
    return {**{a: i for i in inputs for a in i.aliases if a not in named}, **named}


@dataclass(frozen=True)
class Blueprint:
    """A derivation's plain data (see the module docstring); `Derivation.blueprint` makes it."""

    slug: str
    title: str
    question: str
    #: the symbol table in its order (the glossary's symbols first, then the sheet's own and its steps')
    symbols: tuple[SymbolEntry, ...]
    steps: tuple[StepEntry, ...]
    results: tuple[str, ...]
    inputs: tuple[InputEntry, ...]
    assumptions: tuple[str, ...]
    takeaways: tuple[str, ...]
    scoring: tuple[str, ...]
    limits: tuple[str, ...]
    tables: tuple[Table, ...]
    claims: tuple[Claim, ...]
    hardware: tuple[str, ...]
    models: tuple[str, ...]
    display_units: Mapping[str, str]
    second_hardware: str | None = None
    second_model: str | None = None
    plots: tuple[Plot, ...] = ()
    argument: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    families: tuple[tuple[str, ...], ...] = ()
    body_tables: tuple[int, ...] | None = None

    def step(self, name: str) -> StepEntry:
        return self._steps[name]

    def symbol(self, name: str) -> SymbolEntry:
        return self._symbols[name]

    @cached_property
    def _steps(self) -> dict[str, StepEntry]:
        return {s.name: s for s in self.steps}

    @cached_property
    def _symbols(self) -> dict[str, SymbolEntry]:
        out: dict[str, SymbolEntry] = {}
        for s in self.symbols:
            out.setdefault(s.name, s)
        return out

    @cached_property
    def step_names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.steps)

    @cached_property
    def latex_names(self) -> dict[str, str]:
        """Each symbol's LaTeX by name (the first entry of a name, as the symbol table resolves it)."""
        return {name: s.latex for name, s in self._symbols.items()}

    # --- (de)serialization: plain data ---

    def to_json(self) -> dict[str, Any]:
        return {"blueprint": VERSION, **{f.name: _dump(getattr(self, f.name)) for f in fields(self)}}

    @classmethod
    def from_json(cls, data: Any) -> Blueprint:
        """A Blueprint from `to_json`'s data; ValueError for anything else."""
        try:
            if not isinstance(data, dict) or data.get("blueprint") != VERSION:
                raise ValueError("not a blueprint of this version")
            # each field as `to_json` wrote it: plain sequences back to tuples, entries and declarations back to their types
            return cls(**{f.name: _READ.get(f.name, _plain)(data[f.name]) for f in fields(cls)})
        except (KeyError, TypeError, AttributeError) as err:
            raise ValueError(f"malformed blueprint ({type(err).__name__})") from None


#: bump when the blueprint's shape changes (it is part of the compiled form's cache key)
VERSION = 3


def _plain(value: Any) -> Any:
    """A field `to_json` wrote as plain data: a list back to a tuple (of tuples), anything else as it is."""
    return tuple(_plain(v) for v in value) if isinstance(value, list) else value


def _plot(p: Mapping[str, Any]) -> Plot:
    return Plot(**{**p, **{k: tuple(p[k]) for k in ("y", "span", "vlines", "hlines", "points", "batches", "split", "row_points")},
                   "rows": tuple(_row(r) for r in p["rows"])})


#: How `from_json` reads each field that is not plain data (every other field: `_plain`).
_READ: dict[str, Any] = {
    "symbols": lambda v: tuple(SymbolEntry(**s) for s in v),
    "steps": lambda v: tuple(StepEntry(**s) for s in v),
    "inputs": lambda v: tuple(InputEntry(**{**i, "aliases": tuple(i.get("aliases", ()))}) for i in v),
    "tables": lambda v: tuple(Table(t["title"], tuple(_row(r) for r in t["rows"]), tuple(t["columns"]), t["note"]) for t in v),
    "claims": lambda v: tuple(Claim(**{**c, "where": None if c["where"] is None else _row(c["where"])}) for c in v),
    "plots": lambda v: tuple(_plot(p) for p in v),
    "display_units": dict,
}


def _dump(x: Any) -> Any:
    if isinstance(x, tuple | list):
        return [_dump(v) for v in x]
    if isinstance(x, Mapping):
        return {k: _dump(v) for k, v in x.items()}
    if hasattr(x, "__dataclass_fields__"):
        return {f.name: _dump(getattr(x, f.name)) for f in fields(x)}
    return x


def _row(data: Any) -> Row:
    return Row(**{**data, "set": dict(data["set"])})

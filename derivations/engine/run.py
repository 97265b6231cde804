"""Solved sheets from plain data: a blueprint, a numeric plan and a setup, evaluated without sympy or pint.

A derivation is solved in two halves. Its formulas are compiled once (derivations.engine.declare builds and checks them with
sympy; derivations.engine.numeric compiles each step to code; `Derivation.blueprint` is the rest as plain data). A context is
then plain data too (`Setup`, derivations.engine.setup): the values its chip, model and number formats bind (`SpecData`, in each symbol's own
unit), the engine profile's inputs, the inputs set. `solve` evaluates the one with the other: each step of the sheet's
own context in Fractions where the step is rational (exactly what sympy's substitution gives) and in float64 elsewhere
(Plan.evaluate with exact=True), each table cell and claim in float64, and assembles the `Sheet` every renderer reads.

Both paths to a sheet end here: `derivations.engine.sheet.solve_sheet` (a Derivation and a pint Context, checked against the
exact sympy evaluation) and the light path of `roofline derive` (roofline.compiled: everything read from the compiled
form, no sympy, no pint imported), so the two print the same sheet byte for byte.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from ...specs.errors import SpecError
from ...specs.literal import MAX_MAGNITUDE, MAX_VALUE_LENGTH, MIN_MAGNITUDE, NUMBER_AND_UNIT, rate_units
from ...units import pintless
from ...units.errors import RooflineError
from ..physics import conventions
from .blueprint import (
    BARE_NUMBER_UNITS,
    ZERO_DOMAINS,
    Blueprint,
    Claim,
    InputEntry,
    Row,
    StepEntry,
    SymbolEntry,
    Table,
    is_bare_number,
    within,
)
from .numeric import Missing, Number, Plan
from .setup import Bindings, Setup, context_label, sources, spec_facts

#: A step of this name is the share of HBM a setup needs: above 1, the sheet and its rows say "does not fit".
FIT_STEP = "memory_fraction"
#: The inputs whose values set the layout, checked together (layout_problem)
LAYOUT_INPUTS = ("n_tp", "n_dp", "n_ep")
#: Symbols that only carry a unit (one parameter, one token): never structural.
UNIT_MARKERS = ("u_param", "u_token")
#: Units of spec-bound counts that switch a structure off at 0 or 1 (a dense model's E = k_E = 1, L_MoE = 0, P_exp = 0).
STRUCTURAL_UNITS = ("1", "parameter")


class NoValueError(RooflineError, ValueError):
    """A value asked for as a number or a Quantity where the sheet has none: the text says which and why.

    >>> import roofline
    >>> sheet = roofline.derive("batch-knee", hardware="h200", model="deepseek-v3",
    ...                         weights="fp8")
    >>> try:
    ...     sheet.results["B_max_kv"].to("1")
    ... except roofline.NoValueError as err:
    ...     print(err.missing.kind)
    none
    """

    def __init__(self, name: str, missing: Missing | None) -> None:
        self.missing = missing
        super().__init__(f"{name or 'this value'} has no value here ({missing.label if missing else 'missing'})")


@dataclass(frozen=True)
class Value:
    """A value with its unit and the unit a renderer should show it in; or a Missing one.

    `exact` is the number in `unit`: a Fraction where the arithmetic is rational (a sheet's own step, computed exactly),
    else a float64 (a step with a log or a root, a table cell, a claim evaluated elsewhere). `unit` is its unit as text
    ("s", "B/s", "flop/(parameter*token)"); `quantity`, `to` and `m_as` give it as a pint Quantity of the project's
    registry. A Missing value (`missing` set, `exact` None) raises NoValueError with its reason there, never a NaN.

    >>> import roofline
    >>> sheet = roofline.derive("decode-floor", hardware="h200", model="llama-3.1-8b")
    >>> t = sheet.results["t_floor"]
    >>> t.exact, t.unit, t.to("us")
    (Fraction(458048, 146484375), 's', <Quantity(3126.94101, 'microsecond')>)
    """

    exact: Fraction | builtins.float | None
    """The value in `unit`: a Fraction where exact, else a float; None when missing."""
    unit: str
    """The value's own unit, as text (the step's declared unit)."""
    display_unit: str | None = None
    """The unit the sheets show it in, when not its own."""
    missing: Missing | None = None
    """Why there is no value here (None when there is one)."""
    name: str = field(default="", compare=False)
    """The step, result or input this is the value of ("" for a value that is not one)."""

    @property
    def float(self) -> builtins.float:  # builtins.: inside the class, `float` is this property
        """The value in its own `unit` as a float; raises NoValueError when it is missing."""
        if self.exact is None:
            raise NoValueError(self.name, self.missing)
        return builtins.float(self.exact)

    @property
    def quantity(self) -> Any:
        """The value as a pint Quantity of the project's registry (`units.ureg`), float magnitude, in its own `unit`.

        The exact value stays in `exact`; raises NoValueError (with the reason) when the value is missing.
        """
        from ...units import Quantity

        return Quantity(self.float, self.unit)

    def to(self, unit: Any) -> Any:
        """The value as a pint Quantity in `unit` (any unit of its dimension: "us", "GB", "token/ms")."""
        return self.quantity.to(unit)

    def m_as(self, unit: Any) -> builtins.float:
        """The value's magnitude in `unit`, a float."""
        return builtins.float(self.quantity.m_as(unit))


@dataclass(frozen=True)
class Identity:
    """What a step reduces to for this kind of model or chip (a dense model's E_read = 1): one symbol, one number, or
    nothing to compute (a ratio of parts that are zero here, 0/0)."""

    symbol: str = ""
    number: Fraction | builtins.float | None = None
    nan: bool = False

    @property
    def plain(self) -> str:
        """As JSON writes it: the symbol's name, the number, or "undefined"."""
        if self.nan:
            return "undefined"
        if self.symbol:
            return self.symbol
        return str(self.number)


@dataclass(frozen=True)
class SolvedStep:
    step: StepEntry
    latex: str
    value: Value
    #: the value of every symbol the step's formula reads, by name
    operands: Mapping[str, Value]
    #: for a step that is an identity for this model or chip: what it reduces to; a sheet leaves it out of its body and says
    #: so once. None: the step says something here
    identity: Identity | None = None

    @property
    def applies(self) -> bool:
        """False for a step a sheet does not print here: n/a for this model or chip, or an identity for it."""
        return self.identity is None and not (self.value.missing is not None and self.value.missing.kind == "n/a")


@dataclass(frozen=True)
class SolvedInput:
    name: str
    info: SymbolEntry
    value: Value
    is_set: bool
    meaning: str


@dataclass(frozen=True)
class SolvedTable:
    title: str
    note: str
    columns: tuple[tuple[str, str], ...]  # (result name, symbol latex)
    rows: tuple[tuple[str, tuple[Value | None, ...], str], ...]  # label, cells, why n/a
    #: per row, the inputs it sets as (input name, symbol LaTeX, value) when its label is left to the renderer
    settings: tuple[tuple[tuple[str, str, Value], ...], ...] = ()
    #: per row, whether its label is the derivation's prose (may hold $math$) rather than a spec's name
    authored: tuple[bool, ...] = ()
    #: per row, True when its setup does not fit in memory (sheets with a memory-fraction step)
    overflows: tuple[bool, ...] = ()
    #: per row, (hardware name, model name) when the row names both and no label: the renderer gives each its own column
    parts: tuple[tuple[str, str] | None, ...] = ()


@dataclass(frozen=True)
class SolvedClaim:
    text: str
    #: None when one side has no value here (see `left.missing` / `right.missing`)
    holds: bool | None
    left: Value
    right: Value
    left_name: str
    right_name: str
    where: str
    #: the unit read as a plain number on whichever side carries it ("" when the units match)
    convert: str = ""
    #: the same claim on the other step of a step-model sheet (conventions.other_step: the serving step from the decode-only
    #: one, the decode-only from the serving one), its context held; None on a sheet without the step model
    other_step: SolvedClaim | None = None
    #: output_len [token] of the setup this claim was read at (None on a sheet without the step model)
    output_len: Fraction | None = None


# --- values -------------------------------------------------------------------------------------------------------


def layout_problem(model: str, experts: int | None, tp: int, dp: int, ep: int) -> tuple[str, str] | None:
    """(input, reason) when tp, dp and ep do not make a layout of the model (named `model`, with `experts` routed experts per
    MoE layer, None for a dense model), else None: one rule each.

    The layout uses tp x dp GPUs (primitives.layout_gpus); the routed experts of a MoE layer are split over ep of them,
    whole experts each, so ep divides both the expert count and the GPU count. A dense model has no experts to
    split (ep = 1), and data-parallel attention in a MoE model feeds expert-parallel MoE layers (dp > 1 needs ep > 1).
    """
    gpus = tp * dp
    if experts is None:
        if ep != 1:
            return "ep", f"ep={ep}: {model} is a dense model, it has no routed experts to split (ep must be 1)"
        return None
    if experts % ep:
        return "ep", f"ep={ep} does not divide {model}'s {experts} routed experts per MoE layer"
    if gpus % ep:
        return "ep", f"ep={ep} does not divide the layout's tp x dp = {tp} x {dp} = {gpus} GPUs (each GPU holds {experts}/ep whole experts)"
    if dp > 1 and ep == 1:
        return "dp", (f"dp={dp} with ep=1: data-parallel attention feeds expert-parallel MoE layers; set ep to a divisor of "
                      f"the {gpus} GPUs and the {experts} experts (DeepSeek-V3's decode: tp=1, dp=ep=128)")
    return None


def input_magnitude(inp: InputEntry, s: Setup, defaults: Mapping[str, Fraction], inputs: Sequence[InputEntry] = ()) -> tuple[Fraction, bool]:
    """An input's magnitude in its own unit and whether it was set: --set, else the engine profile's (an engine input),
    else the magnitude of the input it follows among `inputs` (the blueprint's; same unit, checked at declaration), else
    its default."""
    if inp.name in s.overrides:
        return s.overrides[inp.name], True
    leader = next((i for i in inputs if i.name == inp.follows), None) if inp.follows else None
    if leader is not None:
        return input_magnitude(leader, s, defaults, inputs)[0], False
    if s.engine is not None and inp.name in s.engine.parsed:
        return s.engine.parsed[inp.name], False
    if inp.name == "context" and "output_len" in s.overrides:
        served = conventions.serving_context(*(s.overrides.get(k, defaults.get(k, Fraction(0))) for k in conventions.SERVING_CONTEXT_INPUTS))
        if served is not None:
            return served, False
    if inp.name not in defaults:  # an engine input, and no profile to read it from (derivations.engine.sheet.setup_of)
        raise SpecError(f"--set {inp.name}", None, "no engine profile supplies it (a profile file is broken: `roofline derive` names it); set it")
    return defaults[inp.name], False


def input_values(bp: Blueprint, s: Setup, names: Sequence[str] | frozenset[str], defaults: Mapping[str, Fraction],
                 layout: bool = True) -> dict[str, Fraction | Missing]:
    """The exact value, in each symbol's own unit, of the inputs and spec-bound symbols named; a layout that is no layout
    of the model makes its inputs Missing, with the reason as the error (the sheet's own context raises it, a row shows n/a).
    `layout=False`: the layout's inputs as they are, unchecked (a sweep over the layout checks it point by point)."""
    by_symbol = {i.symbol: i for i in bp.inputs}
    values: dict[str, Fraction | Missing] = {}
    for name in names:
        inp = by_symbol.get(name)
        if inp is None:
            values[name] = s.bound[name]
            continue
        m, _ = input_magnitude(inp, s, defaults, bp.inputs)
        values[name] = m * _factor(inp.unit, bp.symbol(name).unit)
    missing = layout_missing(bp, s, [n for n in LAYOUT_INPUTS if n in values], defaults) if layout else None
    if missing is not None:
        for n in LAYOUT_INPUTS:
            if n in values:
                values[n] = missing
    return values


def _factor(src: str, dst: str) -> Fraction:
    return Fraction(1) if src == dst else pintless.factor(pintless.unit(src), pintless.unit(dst))


def layout_missing(bp: Blueprint, s: Setup, present: Sequence[str], defaults: Mapping[str, Fraction]) -> Missing | None:
    """Why the layout of `s` is no layout of its model, as the Missing value of its inputs; None when it is one (or when
    `present`, the layout symbols read, holds neither dp nor ep: tensor parallelism alone needs no check)."""
    if not {"n_dp", "n_ep"} & set(present):
        return None
    by_symbol = {i.symbol: i for i in bp.inputs}
    degree = {n: int(input_magnitude(by_symbol[n], s, defaults, bp.inputs)[0]) if n in by_symbol else 1 for n in LAYOUT_INPUTS}
    problem = layout_problem(s.model.name, s.model.experts, degree["n_tp"], degree["n_dp"], degree["n_ep"])
    if problem is None:
        return None
    name, reason = problem
    return Missing("n/a", reason, SpecError("--set", name, reason))


def layout_error(values: Mapping[str, Fraction | Missing]) -> SpecError | None:
    """The layout's error in these input values (see input_values), or None."""
    for n in LAYOUT_INPUTS:
        v = values.get(n)
        if isinstance(v, Missing) and v.error is not None and v.error.field in ("ep", "dp"):
            return v.error
    return None


def evaluate_numbers(bp: Blueprint, plan: Plan, s: Setup, defaults: Mapping[str, Fraction], only: Sequence[str] | None = None
                     ) -> dict[str, float | Missing]:
    """Every step's value in `s` as a float64 (or Missing), by the compiled plan; with `only`, just those steps and what they
    need. Tables, claims, figures and sweeps use it."""
    values = {k: (v if isinstance(v, Missing) else float(v)) for k, v in input_values(bp, s, plan.reads(only), defaults).items()}
    return plan.evaluate(values, only)  # type: ignore[return-value]


def _value(bp: Blueprint, name: str, v: Number | Missing) -> Value:
    unit = bp.symbol(name).unit
    if isinstance(v, Missing):
        return Value(None, unit, bp.display_units.get(name), v, name=name)
    return Value(v, unit, bp.display_units.get(name), name=name)


# --- the sheet ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sheet:
    """A derivation solved in one context: what every renderer consumes.

    `results` maps each headline result's name to its Value; `values` maps every
    step's name to its Value; `inputs` holds each scenario input with its value and
    whether it was set. A Value converts to a pint Quantity (`sheet.results["t_step"].to("us")`).

    >>> import roofline
    >>> sheet = roofline.derive("decode-floor", hardware="h200", model="llama-3.1-8b")
    >>> list(sheet.results)
    ['weight_bytes', 't_floor', 'tokens_per_s_ceiling', 'kv_bytes_per_token', 't_step']
    >>> sheet.values["kv_bytes_step"].to("GiB")
    <Quantity(1.0, 'gibibyte')>
    >>> [(i.name, str(i.value), i.is_set) for i in sheet.inputs][:3]
    [('batch', '1', False), ('tokens_per_step', '1 token', False), ('context', '8,192 tokens', False)]
    """

    blueprint: Blueprint
    """The question as plain data: its steps, symbols, inputs, tables and claims."""
    setup: Setup
    """What it is evaluated for, as plain data: hardware, model, precisions and the inputs set."""
    context_label: str
    """The chip and the model as the sheets name them: "NVIDIA H200 SXM 141GB · Llama 3.1 8B"."""
    spec_facts: tuple[tuple[str, str], ...]
    """(label, text) for the specs and precisions used."""
    inputs: tuple[SolvedInput, ...]
    """Every scenario input with its value (`.value`) and whether it was set (`.is_set`)."""
    bound: tuple[tuple[SymbolEntry, Value], ...]
    """The values bound from the specs, per symbol."""
    steps: tuple[SolvedStep, ...]
    """Every step with its value (`.value`), in order; `values` maps them by name."""
    results: Mapping[str, Value]
    """The headline results by name."""
    tables: tuple[SolvedTable, ...]
    """The headline table across hardware and models, then the sheet's own tables."""
    claims: tuple[SolvedClaim, ...]
    """Each number the question's teaser claims, checked (`.holds`), and on the other step (`.other_step`)."""
    step: str = ""
    """The step a step-model sheet is worked on: "decode-only" (output_len 0, no prompt joins the batch while it decodes) or
    "serving" (a prompt of prompt_len tokens per output_len tokens of each sequence); "" for a sheet without the step model."""
    conventions: tuple[str, ...] = field(default=conventions.CONVENTIONS)
    """The conventions printed on every sheet."""
    overflow: Value | None = None
    """The share of HBM the setup needs when above 1 (it does not fit); None when it fits or the sheet does not ask."""
    past_positions: tuple[Value, int] | None = None
    """(the context, the positions the model was trained for) where the sheet's context is longer than its model's
    max_position_embeddings: the numbers count it as if the model ran there; None otherwise."""
    sources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(what, URLs) for each spec the sheet reads: where its figures come from (the specs' research notes are `roofline show`'s)."""
    derivation: Any = None
    """The Derivation (sympy) it was solved from; None on the light path (roofline.compiled), which has only the blueprint."""
    context: Any = None
    """The Context (pint quantities) it was solved in; None on the light path."""
    forms: Any = None
    """The printed forms of its formulas (renderers.forms) where the light path read them; None: renderers make them."""

    @property
    def latex_names(self) -> Mapping[str, str]:
        return self.blueprint.latex_names

    @property
    def values(self) -> Mapping[str, Value]:
        """Every step's value by step name, in step order (the headline results among them)."""
        return {st.step.name: st.value for st in self.steps}


Resolve = Callable[[Setup, Row], Setup]
#: the check of a table's row against the exact evaluation (derivations.engine.sheet): (setup, its float values, names, where, exact values if known)
Check = Callable[[Setup, Mapping[str, Any], Sequence[str], str, Mapping[str, Any] | None], None]
#: what the steps reduce to, from the structural values of the setup (spec-bound counts that are 0 or 1 here) and the steps
#: that are n/a here: Identity candidates by step (a `nan` one applies only where the step has no value)
Identities = Callable[[Mapping[str, Fraction], frozenset[str]], Mapping[str, Identity]]


def structure(bp: Blueprint, bindings: Bindings, values: Mapping[str, Fraction | Missing]) -> dict[str, Fraction]:
    """The structural values of a setup (spec-bound counts that are 0 or 1, unit markers aside): with the steps that are
    n/a here, what decides which steps are identities here (`Identities`)."""
    return {name: v for name, v in values.items()
            if (name in bindings.parts or name in bindings.twins) and not isinstance(v, Missing) and name not in UNIT_MARKERS
            and v in (0, 1) and bp.symbol(name).unit in STRUCTURAL_UNITS}


def headline_grid(hardware: Sequence[str], models: Sequence[str]) -> tuple[Row, ...]:
    """The headline table's rows: each model on each chip, the chips varying fastest."""
    return tuple(Row("", hardware=h, model=m) for m in models for h in hardware)


def solve(bp: Blueprint, plan: Plan, bindings: Bindings, s: Setup, defaults: Mapping[str, Fraction], resolve: Resolve,
          grid: tuple[Row, ...], identities: Identities, check: Check | None = None) -> Sheet:
    """The derivation evaluated in `s`, its tables and claims, and a headline grid over `grid`.

    `defaults` are the inputs' defaults, each a magnitude in its own unit; `resolve` turns a table row into its setup
    (raising SpecError where the row has none); `check`, where given, checks one row of every table against the exact
    evaluation.
    """
    base = input_values(bp, s, plan.inputs, defaults)
    bad_layout = layout_error(base)
    if bad_layout is not None:
        raise bad_layout
    results = plan.evaluate(dict(base), exact=True)
    not_applicable = [(n, results[n]) for n in bp.results if isinstance(results[n], Missing) and results[n].kind == "n/a"]
    if not_applicable:
        name, why = not_applicable[0]
        if why.error is not None:
            raise why.error
        raise SpecError(bp.slug, name, f"cannot be derived for {s.model.name} on {s.hardware.name}: {why.reason}")
    everything: dict[str, Number | Missing] = {**base, **results}
    not_here = frozenset(n for n, v in results.items() if isinstance(v, Missing) and v.kind == "n/a")
    candidates = identities(structure(bp, bindings, base), not_here)
    steps = []
    for entry in bp.steps:
        v = results[entry.name]
        same = candidates.get(entry.name)
        if same is not None and same.nan and not isinstance(v, Missing):
            same = None  # nothing to compute only where the step has no value
        operands = {n: _operand(bp, n, everything[n]) for n in _reads(plan, entry.name)}
        steps.append(SolvedStep(entry, entry.latex, _value(bp, entry.name, v), operands, same))
    inputs = []
    for inp in bp.inputs:
        m, is_set = input_magnitude(inp, s, defaults, bp.inputs)
        symbol = bp.symbol(inp.symbol)
        shown = bp.display_units.get(inp.name) or bp.display_units.get(inp.symbol)
        inputs.append(SolvedInput(inp.name, symbol, Value(m * _factor(inp.unit, symbol.unit), symbol.unit, shown, name=inp.name), is_set,
                                  inp.meaning))
    input_symbols = {i.symbol for i in bp.inputs}
    order = {e.name: i for i, e in reversed(list(enumerate(bp.symbols)))}
    bound = tuple((bp.symbol(n), _operand(bp, n, base[n], shown=False))
                  for n in sorted(set(plan.inputs) - input_symbols, key=lambda n: order.get(n, 10**6)))
    headline = Table("Headline results across hardware and models", grid, bp.results)
    tables = tuple(_solve_table(bp, plan, s, t, resolve, defaults, results, check) for t in (headline, *bp.tables))
    claims = tuple(_solve_claim(bp, plan, s, c, resolve, defaults, results) for c in bp.claims)
    fit = results.get(FIT_STEP)
    overflow = _value(bp, FIT_STEP, fit) if fit is not None and _overflows(fit) else None
    return Sheet(blueprint=bp, setup=s, context_label=context_label(s), spec_facts=spec_facts(s), inputs=tuple(inputs), bound=bound,
                 steps=tuple(steps), results={n: _value(bp, n, results[n]) for n in bp.results}, tables=tables, claims=claims,
                 step=step_kind(bp, s, defaults), overflow=overflow, past_positions=past_positions(s, inputs), sources=sources(s))


#: the inputs whose value is a context one sequence holds (conventions' names for the step model and the sheets' own)
CONTEXT_INPUTS = ("context",)


def past_positions(s: Setup, inputs: list[SolvedInput]) -> tuple[Value, int] | None:
    """(the sheet's context, the model's trained positions) where the context is longer than the model's
    max_position_embeddings (0: the config gives none, and nothing is said)."""
    limit = s.model.max_context
    for i in inputs:
        if i.name in CONTEXT_INPUTS and limit and i.value.unit == "token" and i.value.exact is not None and i.value.exact > limit:
            return i.value, limit
    return None


def step_kind(bp: Blueprint, s: Setup, defaults: Mapping[str, Fraction]) -> str:
    """"decode-only" or "serving" for a sheet with the step model's output_len input (conventions.STEP_INPUT), else ""."""
    inp = next((i for i in bp.inputs if i.name == conventions.STEP_INPUT), None)
    if inp is None:
        return ""
    return "serving" if input_magnitude(inp, s, defaults)[0] > 0 else "decode-only"


def _reads(plan: Plan, name: str) -> tuple[str, ...]:
    """The names a step's formula reads: its expression's symbols; an At step's, those of its replacements."""
    step = plan.by_name[name]
    if step.of:
        return tuple(sorted({a for _, args, _ in step.where for a in args}))
    return step.args


def _operand(bp: Blueprint, name: str, v: Number | Missing, shown: bool = True) -> Value:
    unit = bp.symbol(name).unit
    display = bp.display_units.get(name) if shown else None
    return Value(None, unit, display, v) if isinstance(v, Missing) else Value(v, unit, display)


def _overflows(v: Number | Missing) -> bool:
    return not isinstance(v, Missing) and v > 1


def _row_label(row: Row, s: Setup) -> str:
    if row.model and not row.hardware:
        return s.model.name
    if row.hardware and not row.model:
        return s.hardware.name
    return context_label(s)


def _solve_table(bp: Blueprint, plan: Plan, s: Setup, t: Table, resolve: Resolve, defaults: Mapping[str, Fraction],
                 results: Mapping[str, Number | Missing], check: Check | None) -> SolvedTable:
    """A table's rows, each evaluated by the compiled plan in floats; with `check`, one row with values is checked against
    the exact evaluation: the row worked for the sheet's own context where there is one, else the first."""
    rows: list[tuple[str, tuple[Value | None, ...], str]] = []
    settings, overflows, parts = [], [], []
    by_name = {i.name: i for i in bp.inputs}
    fit = (FIT_STEP,) if FIT_STEP in bp.step_names else ()
    names = (*t.columns, *fit)
    checked: tuple[Setup, dict[str, float | Missing], str] | None = None
    for row in t.rows:
        setting = () if row.label else tuple(_setting(bp, by_name[n], v, defaults) for n, v in row.set.items() if n in by_name)
        settings.append(setting)
        try:
            row_setup = resolve(s, row)
            values = evaluate_numbers(bp, plan, row_setup, defaults, names)
        except SpecError as err:
            rows.append((row.label or row.model or row.hardware or "?", tuple(None for _ in t.columns), err.message))
            overflows.append(False)
            parts.append(None)
            continue
        if checked is None or (checked[0] != s and row_setup == s):
            checked = (row_setup, values, row.label or _row_label(row, row_setup))
        both = not row.label and row.hardware and row.model
        parts.append((row_setup.hardware.name, row_setup.model.name) if both else None)
        overflows.append(bool(fit) and _overflows(values[FIT_STEP]))
        label = row.label or (_row_label(row, row_setup) if row.model or row.hardware or not setting else "")
        rows.append((label, tuple(_value(bp, c, values[c]) for c in t.columns), ""))
    if check is not None and checked is not None:
        row_setup, values, label = checked
        check(row_setup, values, names, f"table {t.title!r}, row {label!r}", results if row_setup == s else None)
    columns = tuple((c, bp.symbol(c).latex) for c in t.columns)
    return SolvedTable(t.title, t.note, columns, tuple(rows), tuple(settings), tuple(bool(r.label) for r in t.rows), tuple(overflows),
                       tuple(parts))


class UnreadError(ValueError):
    """A value `read_input` does not read as derivations.engine.context.Input.parse would: the full path reads it, or says why not."""


def read_input(inp: InputEntry, value: str) -> Fraction:
    """A value for `inp` (an input's text: `--set`, a table row) as `derivations.engine.context.Input.parse` reads it, without pint:
    a bare number in the input's unit where that unit is a count, the number's and the unit's grammar, sign, range and
    domain checked alike; its magnitude in the input's unit. UnreadError for anything the full path would refuse or read
    with pint's wider grammar (it is then the full path's to read or refuse, in its own words)."""
    text = value.strip()
    bare = is_bare_number(text)
    if (bare and inp.unit not in BARE_NUMBER_UNITS) or (not bare and inp.unit == "1") or len(text) > MAX_VALUE_LENGTH:
        raise UnreadError(text)
    if bare and inp.unit != "1":
        text = f"{text} {inp.unit}"
    match = NUMBER_AND_UNIT.match(text)
    if match is None:
        raise UnreadError(text)
    if match.group(2) and match.group(2).startswith("/"):  # a rate, "2/s", read as the full path reads it
        text = f"{match.group(1)} {rate_units(match.group(2).strip())}"
    try:
        m, u = pintless.parse_quantity(text)
    except pintless.LightUnitError:
        raise UnreadError(text) from None
    want = pintless.unit(inp.unit)
    if u.dimensionality != want.dimensionality or m < 0 or (m == 0 and inp.domain not in ZERO_DOMAINS):
        raise UnreadError(text)
    m = m * pintless.factor(u, want)
    if (m != 0 and not MIN_MAGNITUDE <= abs(m) <= MAX_MAGNITUDE) or not within(inp.domain, m):
        raise UnreadError(text)
    return m


def _setting(bp: Blueprint, inp: InputEntry, text: str, defaults: Mapping[str, Fraction]) -> tuple[str, str, Value]:
    symbol = bp.symbol(inp.symbol)
    return inp.name, symbol.latex, Value(read_input(inp, text) * _factor(inp.unit, symbol.unit), symbol.unit)


def _solve_claim(bp: Blueprint, plan: Plan, s: Setup, c: Claim, resolve: Resolve, defaults: Mapping[str, Fraction],
                 results: Mapping[str, Number | Missing]) -> SolvedClaim:
    """The claim read where it says (its own row, else the sheet's setup) and, on a step-model sheet, read again there on
    the other step with the context held, so a claim that holds on one step only can say so."""
    names = [n for n in (c.left, c.right) if n in bp.step_names]

    def values_in(setup: Setup) -> Mapping[str, Number | Missing]:
        try:
            return evaluate_numbers(bp, plan, setup, defaults, names)
        except SpecError as err:
            return {n: Missing("n/a", err.message) for n in (c.left, c.right)}

    try:
        here = resolve(s, c.where) if c.where else s
    except SpecError as err:
        return _read_claim(bp, c, {n: Missing("n/a", err.message) for n in (c.left, c.right)})
    values = values_in(here) if c.where else results
    step = next((i for i in bp.inputs if i.name == conventions.STEP_INPUT), None)
    if step is None:
        return _read_claim(bp, c, values)
    output = input_magnitude(step, here, defaults)[0]
    held = {i.name: input_magnitude(i, here, defaults)[0] for i in bp.inputs if i.name == "context"}
    there = replace(here, overrides={**here.overrides, **held, conventions.STEP_INPUT: conventions.other_step(output)})
    other = _read_claim(bp, c, values_in(there), output_len=conventions.other_step(output))
    return _read_claim(bp, c, values, other, output)


def _read_claim(bp: Blueprint, c: Claim, values: Mapping[str, Number | Missing], other: SolvedClaim | None = None,
                output_len: Fraction | None = None) -> SolvedClaim:
    """The claim's verdict from its two sides' values."""
    left = _value(bp, c.left, values[c.left])
    if c.right in bp.step_names:
        right = _value(bp, c.right, values[c.right])
    else:
        m, u = pintless.parse_quantity(c.right)
        right = Value(m, u.text, left.display_unit if u.text == left.unit else None)
    holds = None
    if left.exact is not None and right.exact is not None:
        lv, rv = claim_sides(c, left, right)
        slack = c.rel_tol * max(abs(lv), abs(rv))
        holds = lv >= rv - slack if c.at_least else abs(lv - rv) <= slack
    return SolvedClaim(c.text, holds, left, right, c.left, c.right if c.right in bp.step_names else "", c.where.label if c.where else "", c.convert,
                       other, output_len)


def claim_sides(c: Claim, left: Value, right: Value) -> tuple[float, float]:
    """Both sides as floats in one unit: the right side in the left's unit, or each read as a number under the claim's
    stated conversion; both in base units."""
    lu, ru = pintless.unit(left.unit), pintless.unit(right.unit)
    lv, rv = left.float, right.float
    if c.convert:
        per = pintless.unit(c.convert)
        if lu.dimensionality == per.dimensionality:
            lv, lu = pintless.convert(lv, lu, per), pintless.unit("1")
        if ru.dimensionality == per.dimensionality:
            rv, ru = pintless.convert(rv, ru, per), pintless.unit("1")
    rv = pintless.convert(rv, ru, lu)
    return pintless.convert(lv, lu, lu.base()), pintless.convert(rv, lu, lu.base())


__all__ = [
    "Identity",
    "Missing",
    "NoValueError",
    "Sheet",
    "SolvedClaim",
    "SolvedInput",
    "SolvedStep",
    "SolvedTable",
    "Value",
    "solve",
]

"""One result over a grid of inputs: compiled once to numpy, evaluated block by block, its corners checked point by point.

`parse_axis` reads `--over NAME=VALUES` (a list `1024,8192,32768`, a doubling
range `1:1024:log2`, or an arithmetic range `0.5:1:0.1`; the ends and step of a
range may carry units, `t_fixed=1ms:2ms:0.5ms`), checking every value against
its input's domain. `plan` takes the steps the result needs, in step order,
from the derivation's numeric plan (derivations.engine.numeric: each step compiled
once, here its numpy form, the constants bound), with the same domain rules
as the exact evaluation: a closed form whose root is not finite and positive,
or a step whose value is not finite or out of range, has no value there, and
neither has any step that needs it. Spec values a model or chip lacks make the
steps that need them n/a for the whole grid. The grid's first and last points
are re-evaluated one at a time by the sheet's scalar plan, in exact Fractions
wherever the arithmetic is rational (`derivations.engine.sheet.evaluate`), and must
agree to 1e-9: a float cancellation would fail loudly, never print a wrong number.
A user's derivation file, whose formulas no build has checked, is re-evaluated by
sympy instead (`evaluate_exactly`).

`Plan.blocks` evaluates the grid in blocks of at most `BLOCK_POINTS` points in
grid order, so a caller that writes each block out (`roofline sweep`) holds
memory for one block whatever the number of points; `sweep` evaluates the
whole grid at once into a `Sweep` (what plots and `api.sweep` return).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ...specs.errors import SpecError, suggest
from ...specs.quantities import parse_quantity
from ...units import RooflineError, unit_text
from ..physics.primitives import Pick
from .blueprint import by_name
from .codegen import ABSENT
from .context import BARE_NUMBER_UNITS, Context, Input, input_value
from .declare import Derivation, Solve, Step
from .numeric import Plan as NumericPlan
from .numeric import out_of_range
from .planning import plan_of
from .run import LAYOUT_INPUTS, layout_problem
from .sheet import VALUE_LIMIT, Missing, evaluate, evaluate_exactly, input_floats

#: The most points one sweep command evaluates: all its chips times its models times the grid (one bound per command).
MAX_POINTS = 10_000_000
#: the most values one axis lists or a range generates
MAX_AXIS = 1_000_000
#: Points evaluated (and, by `roofline sweep`, written) at once: memory holds one block, whatever the grid's size.
BLOCK_POINTS = 65_536
#: relative agreement required between the compiled and the exact evaluation at the checked points
AGREEMENT = 1e-9
#: the most distinct layouts (tp, dp, ep) one grid sweeps: each is checked against the exact evaluation at one point
MAX_LAYOUTS = 1_024
_LIMIT = float(VALUE_LIMIT)


class SweepError(RooflineError):
    """A sweep whose compiled values disagree with the exact ones (a bug, never shown as a number)."""


@dataclass(frozen=True)
class Axis:
    """One swept input: its values as given (text) and as numbers in the input's unit."""

    input: Input
    #: a list's texts as given; a range's made on demand (RangeTexts)
    texts: Sequence[str]
    values: np.ndarray


@dataclass(frozen=True)
class Sweep:
    """A result over the grid of `axes` (C order, last axis fastest); NaN where there is no value, with the reason."""

    result: str
    unit: str
    axes: tuple[Axis, ...]
    values: np.ndarray
    reasons: np.ndarray  # index into `reason_texts`, -1 where there is a value
    reason_texts: tuple[str, ...]
    #: the unit the sheet shows this result in (its display unit, else its own)
    display_unit: str

    def points(self) -> list[tuple[tuple[str, ...], float | None, str]]:
        """(axis texts, value or None, reason) for every point, in grid order."""
        return list(_points(self.axes, self.values.reshape(-1), self.reasons.reshape(-1), self.reason_texts, 0))


@dataclass(frozen=True)
class Block:
    """Points `start` to `start + len(values)` of a grid (in grid order): values (NaN where none) and reason codes."""

    start: int
    values: np.ndarray
    reasons: np.ndarray

    def points(self, plan: Plan) -> Iterator[tuple[tuple[str, ...], float | None, str]]:
        """(axis texts, value or None, reason) for each point of the block."""
        return _points(plan.axes, self.values, self.reasons, plan.reason_texts, self.start)


def _points(axes: Sequence[Axis], values: np.ndarray, reasons: np.ndarray, texts: Sequence[str], start: int
            ) -> Iterator[tuple[tuple[str, ...], float | None, str]]:
    shape = tuple(len(a.values) for a in axes)
    index = np.unravel_index(np.arange(start, start + len(values)), shape) if axes else ()
    columns = [[a.texts[i] for i in ix.tolist()] for a, ix in zip(axes, index, strict=True)]
    for k, (v, r) in enumerate(zip(values.tolist(), reasons.tolist(), strict=True)):
        yield tuple(c[k] for c in columns), (None if r >= 0 else v), (texts[r] if r >= 0 else "")


class RangeTexts(Sequence[str]):
    """The texts of a range's values, made when asked for: a range of a million values holds no million strings."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.whole = bool(np.all(values == np.round(values)) and np.all(np.abs(values) < 2**53))

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        v = self.values[i]
        return str(int(v)) if self.whole else repr(float(v))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def _texts(values: np.ndarray) -> RangeTexts:
    return RangeTexts(values)


def _number_in(inp: Input, text: str, what: str, allow_zero: bool) -> Fraction:
    """One end (or the step) of a range: a plain number in the input's unit, or a quantity with a unit of its dimension."""
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        pass
    q = parse_quantity(text, inp.unit, "--over", f"{inp.name} ({what})", allow_zero=allow_zero)
    return Fraction(q.magnitude)


def _as_text(inp: Input, x: Fraction) -> str:
    """A value in the input's unit as text its parser takes (a bare number only where the unit allows one)."""
    number = str(x.numerator) if x.denominator == 1 else repr(float(x))
    return number if inp.unit in BARE_NUMBER_UNITS else f"{number} {inp.unit}"


def _range(inp: Input, text: str) -> np.ndarray:
    """START:STOP:log2 or START:STOP:STEP in the input's unit (each may carry a unit); its ends (and, for a count, its step) checked."""
    name = inp.name
    start_text, stop_text, step_text = (t.strip() for t in text.split(":"))
    try:
        start, stop = _number_in(inp, start_text, "range start", True), _number_in(inp, stop_text, "range end", True)
        step = None if step_text == "log2" else _number_in(inp, step_text, "range step", True)
    except SpecError as err:
        raise SpecError("--over", name, f"a range is START:STOP:STEP or START:STOP:log2, each a number in the input's unit ({inp.unit}) "
                        f"or a quantity such as 1ms, found {text[:40]!r} ({err.message})") from None
    if start > stop:
        raise SpecError("--over", name, f"the range starts above its end: {text[:40]!r}")
    if step is None:
        if start <= 0:
            raise SpecError("--over", name, f"a doubling range starts above zero, found {text[:40]!r}")
        n = 1
        while start * 2**n <= stop and n <= MAX_AXIS:
            n += 1
    else:
        if step <= 0:
            raise SpecError("--over", name, f"the step of {text[:40]!r} must be above zero")
        n = int((stop - start) // step) + 1
    if n > MAX_AXIS:
        raise SpecError("--over", name, f"{text[:40]!r} has more than {MAX_AXIS:,} values")
    last = start * 2 ** (n - 1) if step is None else start + step * (n - 1)
    for end in (start, last):  # the domain is an interval: its ends decide
        inp.parse(_as_text(inp, end), "--over")
    if inp.domain in ("count", "whole") and step is not None and step.denominator != 1:
        raise SpecError("--over", name, f"expected whole numbers, but the step of {text[:40]!r} is not one")
    k = np.arange(n, dtype=float)
    return float(start) * 2.0**k if step is None else float(start) + float(step) * k


def parse_axis(d: Derivation, spec: str) -> Axis:
    """`NAME=VALUES` for one of the sheet's inputs, every value checked against the input's domain."""
    if not isinstance(spec, str):
        raise SpecError("--over", None, f"expected NAME=VALUES, found {type(spec).__name__}")
    name, sep, text = spec.partition("=")
    name = name.strip()
    if not sep or not name or not text.strip():
        raise SpecError("--over", None, f"expected NAME=VALUES (e.g. batch=1:1024:log2 or context=1024,8192), found {spec[:40]!r}")
    known = [i.name for i in d.inputs]
    inp = by_name(d.inputs).get(name)
    if inp is None:
        raise SpecError("--over", name[:40], f"{d.slug} has no input by that name{suggest(name, known)}; inputs: {', '.join(known)}")
    if text.count(":") == 2:
        values = _range(inp, text)
        return Axis(inp, _texts(values), values)
    texts = [t.strip() for t in text.split(",")]
    if len(texts) > MAX_AXIS:
        raise SpecError("--over", name, f"more than {MAX_AXIS:,} values")
    values = []
    for t in texts:
        if not t:
            raise SpecError("--over", name, f"an empty value in {text[:40]!r}")
        values.append(float(Fraction(inp.parse(t, "--over").to(inp.unit).magnitude)))
    return Axis(inp, tuple(texts), np.array(values))


def grid_points(axes: Sequence[Axis]) -> int:
    """How many points the grid of `axes` has."""
    return math.prod(len(a.values) for a in axes)


def check_points(total: int, what: str = "this sweep") -> None:
    """Refuse more than MAX_POINTS points (one bound per command: its chips times its models times its grid)."""
    if total > MAX_POINTS:
        raise SpecError("--over", None, f"{total:,} points in {what}; at most {MAX_POINTS:,} per command (chips x models x grid)")


# --- the compiled plan -------------------------------------------------------------------------------

@dataclass
class _Compiled:
    """One expression over the grid: the numeric plan's numpy function with the constants bound (derivations.engine.numeric)."""

    step: Step | None
    #: the names of the values that vary over the grid (swept inputs, steps that read them), in the order `function` takes them
    args: tuple[str, ...] = ()
    function: Callable[..., object] | None = None
    #: the first reason (sorted) among the missing constants it reads: every point has it where the value needs one
    missing: str = ""


@dataclass
class _Op:
    """One step of the plan: a plain or solved step, or an At step (its replacements and the steps it recomputes)."""

    step: Step
    compiled: _Compiled | None = None
    where: tuple[tuple[str, _Compiled], ...] = ()
    again: tuple[_Op, ...] = ()


@dataclass
class Plan:
    """The steps a result needs, compiled once for one chip, model and grid; evaluate it with `blocks` or `evaluate`."""

    derivation: Derivation
    result: str
    axes: tuple[Axis, ...]
    ops: tuple[_Op, ...]
    #: reason texts, indexed by the codes of every block evaluated so far (a block adds the reasons it meets)
    reasons: list[str] = field(default_factory=list)
    #: the layout rules, checked point by point where the grid sweeps a layout input (None: the context's layout, checked once)
    layout: _Layout | None = None

    @property
    def points(self) -> int:
        return grid_points(self.axes)

    @property
    def reason_texts(self) -> tuple[str, ...]:
        return tuple(self.reasons)

    @property
    def unit(self) -> str:
        return unit_text(self.derivation.symbols[self.result].unit)

    @property
    def display_unit(self) -> str:
        return self.derivation.display_units.get(self.result, self.unit)

    def evaluate(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values, reason codes) at the grid points with these flat indices (NaN where there is no value)."""
        n = len(index)
        shape = tuple(len(a.values) for a in self.axes)
        cols = np.unravel_index(index, shape) if self.axes else ()
        arrays: dict[str, np.ndarray] = {a.input.symbol.name: a.values[c] for a, c in zip(self.axes, cols, strict=True)}
        bad: dict[str, np.ndarray | None] = dict.fromkeys(arrays)  # None: no point has a reason
        if self.layout is not None:
            self.layout.apply(self.axes, cols, arrays, bad, n, self.reasons)
        for op in self.ops:
            _run_op(op, arrays, bad, n, self.reasons)
        why = bad[self.result]
        if why is None:
            return np.array(arrays[self.result]), np.full(n, -1)  # a copy: a constant step's values are a read-only view
        return np.where(why >= 0, np.nan, arrays[self.result]), np.array(why)

    def blocks(self, size: int | None = None) -> Iterator[Block]:
        """The grid in blocks of at most `size` points (default BLOCK_POINTS), in grid order."""
        size = size or BLOCK_POINTS
        for start in range(0, self.points, size):
            values, reasons = self.evaluate(np.arange(start, min(start + size, self.points)))
            yield Block(start, values, reasons)


def plan(d: Derivation, ctx: Context, result: str, axes: Sequence[Axis], exactly: bool = False) -> Plan:
    """Compile `result` over the grid of `axes` (the other inputs as in `ctx`) and check its first and last points against the
    sheet's compiled plan (`exactly`: against sympy's exact evaluation, for a user's derivation file no build has checked)."""
    if result not in d.expanded:
        raise SpecError("result", result[:40], f"{d.slug} has no step by that name{suggest(result, d.expanded)}; its results: {', '.join(d.results)}")
    names = [a.input.name for a in axes]
    if len(set(names)) != len(names):
        raise SpecError("--over", None, f"an input swept twice: {', '.join(names)}")
    check_points(grid_points(axes))
    numeric = plan_of(d)
    swept = {a.input.symbol.name for a in axes}
    reads = numeric.reads([result])
    layout = _layout(d, ctx, axes, reads)
    values = input_floats(d, ctx, reads, layout=layout is None)
    constants = {s: v for s, v in values.items() if s not in swept and (layout is None or s not in layout.read)}
    if layout is not None:
        layout.fixed.update({s: float(values[s]) for s in layout.read if s not in swept})  # type: ignore[arg-type]
    steps = {st.name: st for st in d.steps}
    ops = tuple(_plan_step(numeric, steps[ps.name], constants, steps) for ps in numeric.subset([result]))
    p = Plan(d, result, tuple(axes), ops, layout=layout)
    _check_corners(d, ctx, p, evaluate_exactly if exactly else evaluate)
    return p


def sweep(d: Derivation, ctx: Context, result: str, axes: Sequence[Axis], exactly: bool = False) -> Sweep:
    """`result` over the cartesian product of `axes`, the other inputs as in `ctx`: the whole grid at once (`exactly`: as `plan`)."""
    p = plan(d, ctx, result, axes, exactly)
    values, reasons = p.evaluate(np.arange(p.points))
    shape = tuple(len(a.values) for a in axes)
    return Sweep(result, p.unit, tuple(axes), values.reshape(shape), reasons.reshape(shape), p.reason_texts, p.display_unit)


@dataclass
class _Layout:
    """The layout rules (derivations.engine.run.layout_problem) over a grid that sweeps tp, dp or ep: as `derive` applies them to
    one context, here to each point, so a point whose layout is none of the model's has no value, with derive's reason."""

    model: str
    experts: int | None
    #: for tp, dp and ep: the position of its axis among the grid's, None where it is not swept
    positions: tuple[int | None, ...]
    #: for tp, dp and ep: its degree where it is not swept (the context's)
    degrees: tuple[int, ...]
    #: the layout symbols the result reads, each a varying value with the layout's reason where it has one
    read: tuple[str, ...]
    #: the value (in its symbol's unit) of each read layout symbol not swept
    fixed: dict[str, float] = field(default_factory=dict)
    #: reason code per layout already met (tp, dp, ep): -1 where it is one
    seen: dict[tuple[int, ...], int] = field(default_factory=dict)

    def at(self, axes: Sequence[Axis], cols: Sequence[np.ndarray], n: int) -> np.ndarray:
        """The (tp, dp, ep) of each point, one row per point."""
        columns = [np.full(n, d, dtype=np.int64) if k is None else np.rint(axes[k].values[cols[k]]).astype(np.int64)
                   for k, d in zip(self.positions, self.degrees, strict=True)]
        return np.stack(columns, axis=1)

    def codes(self, layouts: np.ndarray, reasons: list[str]) -> np.ndarray:
        """The reason code of each row of `layouts` (-1 where the layout is one of the model's)."""
        distinct, inverse = np.unique(layouts, axis=0, return_inverse=True)
        out = np.empty(len(distinct), dtype=int)
        for i, row in enumerate(distinct.tolist()):
            key = tuple(row)
            if key not in self.seen:
                problem = layout_problem(self.model, self.experts, *key)
                self.seen[key] = -1 if problem is None else _reason(reasons, f"n/a: {problem[1]}")
            out[i] = self.seen[key]
        return out[inverse.reshape(-1)]

    def apply(self, axes: Sequence[Axis], cols: Sequence[np.ndarray], arrays: dict[str, np.ndarray], bad: dict[str, np.ndarray | None],
              n: int, reasons: list[str]) -> None:
        """Each read layout symbol as a varying value, with the layout's reason at the points whose layout is none."""
        codes = self.codes(self.at(axes, cols, n), reasons)
        why = codes if (codes >= 0).any() else None
        for s in self.read:
            if s not in arrays:
                arrays[s] = np.full(n, self.fixed[s])
            bad[s] = why

    def firsts(self, axes: Sequence[Axis]) -> list[int]:
        """The flat index of the first grid point of each distinct layout the grid sweeps."""
        swept = [k for k in self.positions if k is not None]
        shape = tuple(len(a.values) for a in axes)
        choices = [np.unique(axes[k].values, return_index=True)[1] for k in swept]
        points = []
        for combo in np.stack(np.meshgrid(*choices, indexing="ij"), axis=-1).reshape(-1, len(swept)).tolist():
            index = [0] * len(axes)
            for k, i in zip(swept, combo, strict=True):
                index[k] = i
            points.append(int(np.ravel_multi_index(index, shape)))
        return points


def _layout(d: Derivation, ctx: Context, axes: Sequence[Axis], reads: frozenset[str]) -> _Layout | None:
    """The layout rules to check point by point: where the grid sweeps a layout input and the result reads dp or ep (as the
    exact evaluation, tensor parallelism alone needs no check); None where the context's layout is checked once."""
    position = {a.input.symbol.name: k for k, a in enumerate(axes)}
    read = tuple(s for s in LAYOUT_INPUTS if s in reads)
    if not set(position) & set(LAYOUT_INPUTS) or not {"n_dp", "n_ep"} & set(read):
        return None
    count = math.prod(len(np.unique(axes[position[s]].values)) for s in LAYOUT_INPUTS if s in position)
    if count > MAX_LAYOUTS:
        raise SpecError("--over", None, f"{count:,} distinct layouts (tp, dp, ep) in one grid; at most {MAX_LAYOUTS:,} "
                        "(each is checked against the exact evaluation)")
    by_symbol = {i.symbol.name: i for i in d.inputs}
    degrees = tuple(int(input_value(by_symbol[s], ctx, d.inputs)[0].magnitude) if s in by_symbol else 1 for s in LAYOUT_INPUTS)
    experts = ctx.model.moe.experts if ctx.model.moe else None
    return _Layout(ctx.model.name, experts, tuple(position.get(s) for s in LAYOUT_INPUTS), degrees, read)


def _reason(reasons: list[str], text: str) -> int:
    if text not in reasons:
        reasons.append(text)
    return reasons.index(text)


def _plan_step(numeric: NumericPlan, step: Step, constants: Mapping[str, float | Missing], steps: Mapping[str, Step]) -> _Op:
    """A step of the numeric plan over the grid: its numpy function with the constants bound; an At step with what it recomputes."""
    ps = numeric.by_name[step.name]
    if not ps.of:
        return _Op(step, _compile(step, ps.vector(), ps.scalar(), ps.args, constants))
    local_constants = dict(constants)
    where = []
    for (symbol, args, _), f, g in zip(ps.where, ps.where_functions(True), ps.where_functions(False), strict=True):
        where.append((symbol, _compile(None, f, g, args, constants)))
        local_constants.pop(symbol, None)
    again = tuple(_plan_step(numeric, steps[name], local_constants, steps) for name in ps.redo)
    return _Op(step, None, tuple(where), again)


def _compile(step: Step | None, f: Callable[..., object], scalar: Callable[..., object], args: Sequence[str],
             constants: Mapping[str, float | Missing]) -> _Compiled:
    """`f` with the constants among `args` bound (a missing one as codegen.ABSENT): a function of the others.

    A varying value that the constants make unneeded (a term multiplied by a zero constant: the MLA terms of a model
    without MLA) is passed as ABSENT, so its missing points do not reach this step, as in the exact evaluation; the
    scalar form of `f` tells which (it is called with that value absent and the others at generic values, `_PROBES`). A pick
    (primitives.Pick) reads the entry its position names, which a generic value does not say: every entry stays needed.
    """
    missing = sorted((v for a in args if isinstance(v := constants.get(a), Missing)), key=lambda m: m.reason)
    fixed = [ABSENT if isinstance(constants.get(a), Missing) else constants.get(a) for a in args]
    slots = [i for i, a in enumerate(args) if a not in constants]
    unneeded = set()
    for i in slots if step is None or not step.expr.has(Pick) else ():
        if all(_absorbed(scalar, fixed, slots, i, seed, ascending) for seed, ascending in _PROBES):
            unneeded.add(i)
    for i in unneeded:
        fixed[i] = ABSENT
    slots = [i for i in slots if i not in unneeded]
    varying = tuple(args[i] for i in slots)

    def bound(*arrays: object) -> object:
        values = list(fixed)
        for i, x in zip(slots, arrays, strict=True):
            values[i] = x
        return f(*values)

    return _Compiled(step, varying, bound, f"{missing[0].kind}: {missing[0].reason}" if missing else "")


#: generic values for the varying arguments of a probe (no two equal, none whole: a difference of two is never zero): in
#: opposite orders (a difference of two takes each sign, so max(0, a - b) is open at one probe), small and large (floor(n/2)
#: of a GPU count is zero below two). An argument is unneeded only where every probe leaves the value without it.
_PROBES = ((0.7390851332151607, True), (1.6180339887498949, False), (37.39085133215161, True), (161.80339887498949, False))


def _absorbed(scalar: Callable[..., object], fixed: Sequence[object], slots: Sequence[int], i: int, seed: float, ascending: bool) -> bool:
    """Whether `scalar` has a value with argument `i` absent and the other varying ones at generic values (growing with their
    position, or shrinking)."""
    probe = [ABSENT if k == i else (seed * (1 + 0.1 * (k if ascending else len(fixed) - k)) if k in slots else x) for k, x in enumerate(fixed)]
    try:
        return scalar(*probe) is not ABSENT
    except (ArithmeticError, ValueError, TypeError):
        return False


def _run_op(op: _Op, arrays: dict[str, np.ndarray], bad: dict[str, np.ndarray | None], n: int, reasons: list[str]) -> None:
    s = op.step.name
    if op.compiled is not None:
        arrays[s], bad[s] = _run(op.compiled, arrays, bad, n, reasons)
        return
    local_arrays, local_bad = dict(arrays), dict(bad)
    for symbol, c in op.where:
        local_arrays[symbol], local_bad[symbol] = _run(c, arrays, bad, n, reasons)
    for inner in op.again:
        _run_op(inner, local_arrays, local_bad, n, reasons)
    step = op.step
    value, why = local_arrays[step.of], local_bad[step.of]  # type: ignore[attr-defined]
    if step.none and why is not None:
        mine = _reason(reasons, f"none: {step.none}")
        why = np.where((why >= 0) & np.array([r.startswith("none:") for r in reasons] + [False])[why], mine, why)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(value)
        far = _far(value, finite)
        out = ~finite | ((value <= 0) if step.none else False)
    if far is not None:
        why = _mark(why, far, reasons, _range_text(step))
    why = _mark(why, out, reasons, f"none: {step.none}" if step.none else f"none: {step.name} is undefined here (a zero denominator)")
    arrays[s], bad[s] = value, why


def _in_range(value: np.ndarray) -> np.ndarray:
    """As derivations.engine.sheet.in_range: zero, or a magnitude from 1e-300 to 1e300."""
    a = np.abs(value)
    return (a == 0) | ((a >= 1 / _LIMIT) & (a <= _LIMIT))


def _range_text(step: Step) -> str:
    return "none: " + out_of_range(step.name, step.unit)


def _mark(why: np.ndarray | None, where: np.ndarray, reasons: list[str], text: str) -> np.ndarray | None:
    """`why` with the reason `text` at the points of `where` that have none yet (None: no point has a reason)."""
    if not where.any():
        return why
    code = _reason(reasons, text)
    if why is None:
        return np.where(where, code, -1)
    return np.where((why < 0) & where, code, why)


def _run(c: _Compiled, arrays: Mapping[str, np.ndarray], bad: Mapping[str, np.ndarray | None], n: int, reasons: list[str]
         ) -> tuple[np.ndarray, np.ndarray | None]:
    """One compiled expression's values and reason codes over `n` points, with the domain rules of its step.

    Reason codes are None where every point has a value (most steps of most sweeps: no array of codes to carry).
    """
    with np.errstate(all="ignore"):
        try:
            raw = c.function(*(arrays[s] for s in c.args))  # type: ignore[misc]
        except (ZeroDivisionError, ValueError, TypeError):  # plain floats where nothing varies: undefined, as numeric._call reads it
            raw = np.full(n, np.nan)
    if raw is ABSENT:  # a missing constant the expression cannot do without
        return np.full(n, np.nan), np.full(n, _reason(reasons, c.missing))
    why: np.ndarray | None = None
    rank = None
    for s in c.args:
        b = bad[s]
        if b is None:
            continue
        if why is None:
            why = b
            continue
        if rank is None:
            # as `evaluate` does: of several missing values a step needs, the one whose reason sorts first
            order = sorted(range(len(reasons)), key=lambda i: reasons[i].partition(": ")[2])
            rank = np.empty(len(reasons) + 1, dtype=int)
            rank[order] = np.arange(len(reasons))
            rank[-1] = len(reasons)  # index -1: no reason, ranks last
        why = np.where((b >= 0) & (rank[b] < rank[why]), b, why)
    value = np.asarray(raw, dtype=float)
    if value.ndim == 0 and why is None:
        # a step the swept inputs do not reach: one value at every point, checked once and read as a view
        value, why = _run_checks(c, value.reshape(1), why, reasons)
        return np.broadcast_to(value, (n,)), None if why is None else np.broadcast_to(why, (n,))
    if value.shape != (n,):
        value = np.broadcast_to(value, (n,)).copy()
    return _run_checks(c, value, why, reasons)


def _run_checks(c: _Compiled, value: np.ndarray, why: np.ndarray | None, reasons: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """A step's values with the reason codes of the points its domain rules give no value."""
    with np.errstate(all="ignore"):
        finite = np.isfinite(value)
        far = _far(value, finite)
    step = c.step
    if step is None:
        out = ~finite if far is None else ~finite | far
        text = "none: a replaced value is undefined here"
    else:
        if far is not None:
            why = _mark(why, far, reasons, _range_text(step))
        if isinstance(step, Solve) or step.none:
            text = "none: " + (step.none or f"{step.lhs} and {step.rhs} do not meet at a positive value here")  # type: ignore[attr-defined]
            with np.errstate(invalid="ignore"):
                out = ~(finite & (value > 0))
        else:
            out = ~finite
            text = f"none: {step.name} is undefined here (a zero denominator)"
    return value, _mark(why, out, reasons, text)


def _far(value: np.ndarray, finite: np.ndarray) -> np.ndarray | None:
    """The finite points out of range (as derivations.engine.sheet.in_range), or None when there is none (checked in two passes)."""
    a = np.abs(value)
    top = np.max(a, where=finite, initial=0.0)
    low = np.min(a, where=finite & (a > 0), initial=np.inf)
    if top <= _LIMIT and low >= 1 / _LIMIT:
        return None
    return finite & ~_in_range(value)


def _check_corners(d: Derivation, ctx: Context, p: Plan, reference: Callable[..., Mapping[str, object]]) -> None:
    """The first and last point of the grid, and the first point of each distinct layout it sweeps, evaluated one at a time by
    `reference` (the sheet's scalar plan, or sympy's exact evaluation), agree with the grid's values: a value where the
    reference has one, no value (with its reason) where it has none."""
    last = p.points - 1
    corners = sorted({0, last, *(p.layout.firsts(p.axes) if p.layout is not None else ())})
    values, codes = p.evaluate(np.array(corners))
    shape = tuple(len(a.values) for a in p.axes)
    for flat, got, code in zip(corners, values.tolist(), codes.tolist(), strict=True):
        index = np.unravel_index(flat, shape) if p.axes else ()
        # the point the compiled grid was evaluated at: each axis's float, read exactly as the decimal it prints as
        point = {a.input.name: a.input.value(float(a.values[i]), "--over") for a, i in zip(p.axes, index, strict=True)}
        exact = reference(d, ctx.with_overrides(**point), only=[p.result])[p.result]
        where = ", ".join(f"{a.input.name}={a.texts[i]}" for a, i in zip(p.axes, index, strict=True)) or "the sheet's inputs"
        if isinstance(exact, Missing):
            if not math.isnan(got):
                raise SweepError(f"{d.slug}: sweep of {p.result} has a value at {where} where the exact evaluation has none ({exact.reason})")
            if exact.kind == "n/a" and code >= 0 and p.reasons[code] != f"n/a: {exact.reason}":
                raise SweepError(f"{d.slug}: sweep of {p.result} at {where} says {p.reasons[code]!r}, the exact evaluation {exact.reason!r}")
            continue
        want = float(exact)
        if math.isnan(got) or abs(got - want) > AGREEMENT * max(abs(want), 1e-300):
            raise SweepError(f"{d.slug}: sweep of {p.result} gives {got!r} at {where}, the exact evaluation {want!r}")

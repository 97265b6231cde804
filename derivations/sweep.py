"""One result over a grid of inputs: compiled once to numpy, checked against the exact evaluation.

`parse_axis` reads `--over NAME=VALUES` (a list `1024,8192,32768`, a doubling
range `1:1024:log2`, or an arithmetic range `0.5:1:0.1`), checking every value
against its input's domain. `sweep` evaluates the steps the result needs, in
step order, each compiled once with `sympy.lambdify` over numpy arrays that
broadcast across the grid, and applies the same domain rules as the exact
evaluation: a closed form whose root is not finite and positive, or a step
whose value is not finite, has no value there, and neither has any step that
needs it. Spec values a model or chip lacks make the steps that need them n/a
for the whole grid. Corners of the grid are re-evaluated exactly
(`derivations.sheet.evaluate`) and must agree to 1e-9: a float cancellation
would fail loudly, never print a wrong number.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp

from derivations.context import Context, Input
from derivations.engine import At, Derivation, Solve, Step
from derivations.sheet import Missing, evaluate, input_values, needed_steps
from specs.errors import SpecError, suggest
from units import RooflineError, unit_text

#: the most points one sweep evaluates
MAX_POINTS = 10_000_000
#: the most values one axis lists or a range generates
MAX_AXIS = 1_000_000
#: relative agreement required between the compiled and the exact evaluation at the checked points
AGREEMENT = 1e-9


class SweepError(RooflineError):
    """A sweep whose compiled values disagree with the exact ones (a bug, never shown as a number)."""


@dataclass(frozen=True)
class Axis:
    """One swept input: its values as given (text) and as numbers in the input's unit."""

    input: Input
    texts: tuple[str, ...]
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
        out = []
        for index in itertools.product(*(range(len(a.values)) for a in self.axes)):
            v, r = float(self.values[index]), int(self.reasons[index])
            texts = tuple(a.texts[i] for a, i in zip(self.axes, index, strict=True))
            out.append((texts, None if r >= 0 else v, self.reason_texts[r] if r >= 0 else ""))
        return out


def _texts(values: np.ndarray) -> tuple[str, ...]:
    if np.all(values == np.round(values)) and np.all(np.abs(values) < 2**53):
        return tuple(map(str, values.astype(np.int64).tolist()))
    return tuple(map(repr, values.tolist()))


def _range(inp: Input, text: str) -> np.ndarray:
    """START:STOP:log2 or START:STOP:STEP in the input's unit; its ends (and, for a count, its step) checked against the domain."""
    name = inp.name
    start_text, stop_text, step_text = (t.strip() for t in text.split(":"))
    try:
        start, stop = Fraction(start_text), Fraction(stop_text)
        step = None if step_text == "log2" else Fraction(step_text)
    except (ValueError, ZeroDivisionError):
        raise SpecError("--over", name, f"a range is START:STOP:STEP or START:STOP:log2 with plain numbers in the input's unit, found {text[:40]!r}") from None
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
        inp.parse(str(end.numerator) if end.denominator == 1 else repr(float(end)), "--over")
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
    by_name = {i.name: i for i in d.inputs}
    if name not in by_name:
        raise SpecError("--over", name[:40], f"{d.slug} has no input by that name{suggest(name, by_name)}; inputs: {', '.join(by_name)}")
    inp = by_name[name]
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


def sweep(d: Derivation, ctx: Context, result: str, axes: Sequence[Axis]) -> Sweep:
    """`result` over the cartesian product of `axes`, the other inputs as in `ctx`."""
    if result not in d.expanded:
        raise SpecError("result", result[:40], f"{d.slug} has no step by that name{suggest(result, d.expanded)}; its results: {', '.join(d.results)}")
    names = [a.input.name for a in axes]
    if len(set(names)) != len(names):
        raise SpecError("--over", None, f"an input swept twice: {', '.join(names)}")
    shape = tuple(len(a.values) for a in axes)
    if math.prod(shape) > MAX_POINTS:
        raise SpecError("--over", None, f"{math.prod(shape):,} points; at most {MAX_POINTS:,} per sweep")
    swept = {a.input.symbol: a.values.reshape([-1 if i == k else 1 for i in range(len(axes))])
             for k, a in enumerate(axes)}
    constants = {s: v for s, v in input_values(d, ctx).items() if s not in swept}
    reasons: list[str] = []
    arrays: dict[sp.Symbol, np.ndarray] = dict(swept)
    bad: dict[sp.Symbol, np.ndarray] = {s: np.full(shape, -1) for s in swept}
    need = needed_steps(d, [result])
    for step in d.steps:
        if step.name not in need:
            continue
        value, why = _step_array(d, step, constants, arrays, bad, shape, reasons)
        arrays[step.s] = value
        bad[step.s] = why
        if step.name == result:
            break
    own = unit_text(d.symbols[result].unit)
    r = sp.Symbol(result, positive=True)
    out = Sweep(result, own, tuple(axes), np.where(bad[r] >= 0, np.nan, arrays[r]), bad[r], tuple(reasons), d.display_units.get(result, own))
    _check_corners(d, ctx, out)
    return out


def _reason(reasons: list[str], text: str) -> int:
    if text not in reasons:
        reasons.append(text)
    return reasons.index(text)


def _step_array(d: Derivation, step: Step, constants: Mapping[sp.Symbol, sp.Expr | Missing], arrays: Mapping[sp.Symbol, np.ndarray],
                bad: Mapping[sp.Symbol, np.ndarray], shape: tuple[int, ...], reasons: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One step's values and reason codes over the grid."""
    if isinstance(step, At):
        return _at_array(d, step, constants, arrays, bad, shape, reasons)
    return _expr_array(step, step.expr, constants, arrays, bad, shape, reasons)


def _at_array(d: Derivation, step: At, constants: Mapping[sp.Symbol, sp.Expr | Missing], arrays: Mapping[sp.Symbol, np.ndarray],
              bad: Mapping[sp.Symbol, np.ndarray], shape: tuple[int, ...], reasons: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """An At step as `evaluate` does it: the steps its earlier step needs, again, with the replaced symbols at their new values."""
    local_arrays, local_bad = dict(arrays), dict(bad)
    local_constants = dict(constants)
    replaced = set()
    for symbol, expr in step.where:
        local_arrays[symbol], local_bad[symbol] = _expr_array(None, expr, constants, arrays, bad, shape, reasons)
        local_constants.pop(symbol, None)
        replaced.add(symbol)
    need = needed_steps(d, [step.of])
    for s in d.steps:
        if s.name == step.name:
            break
        if s.name in need and d.symbols_of[s.name] & replaced:
            local_arrays[s.s], local_bad[s.s] = _step_array(d, s, local_constants, local_arrays, local_bad, shape, reasons)
    of = sp.Symbol(step.of, positive=True)
    value, why = local_arrays[of], local_bad[of]
    if step.none:
        mine = _reason(reasons, f"none: {step.none}")
        why = np.where((why >= 0) & np.array([r.startswith("none:") for r in reasons] + [False])[why], mine, why)
    with np.errstate(invalid="ignore"):
        out = ~np.isfinite(value) | ((value <= 0) if step.none else False)
    if out.any():
        code = _reason(reasons, f"none: {step.none}" if step.none else f"none: {step.name} is undefined here (a zero denominator)")
        why = np.where((why < 0) & out, code, why)
    return value, why


def _expr_array(step: Step | None, expr: sp.Expr, constants: Mapping[sp.Symbol, sp.Expr | Missing], arrays: Mapping[sp.Symbol, np.ndarray],
                bad: Mapping[sp.Symbol, np.ndarray], shape: tuple[int, ...], reasons: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """`expr` over the grid, with the domain rules of `step` (none: a plain value, finite or missing)."""
    free = expr.free_symbols
    known = {s: v for s, v in constants.items() if s in free and not isinstance(v, Missing)}
    expr = expr.xreplace(known)
    missing = [constants[s] for s in expr.free_symbols if isinstance(constants.get(s), Missing)]
    if missing:
        m = sorted(missing, key=lambda m: m.reason)[0]
        return np.full(shape, np.nan), np.full(shape, _reason(reasons, f"{m.kind}: {m.reason}"))
    args = sorted(expr.free_symbols, key=lambda s: s.name)
    why = np.full(shape, -1)
    # as `evaluate` does: of several missing values a step needs, the one whose reason sorts first
    order = sorted(range(len(reasons)), key=lambda i: reasons[i].partition(": ")[2])
    rank = np.empty(len(reasons) + 1, dtype=int)
    rank[order] = np.arange(len(reasons))
    rank[-1] = len(reasons)  # index -1: no reason, ranks last
    for s in args:
        why = np.where((bad[s] >= 0) & (rank[bad[s]] < rank[why]), bad[s], why)
    with np.errstate(all="ignore"):
        custom = {type(f).__name__: type(f).numpy for f in expr.atoms(sp.Function) if hasattr(type(f), "numpy")}
        f = sp.lambdify(args, expr, modules=[custom, "numpy"])
        value = np.broadcast_to(np.asarray(f(*(arrays[s] for s in args)), dtype=float), shape).copy()
    finite = np.isfinite(value)
    if step is None:
        out = ~finite
        code = _reason(reasons, "none: a replaced value is undefined here") if out.any() else -1
    elif isinstance(step, Solve) or step.none:
        text = step.none or f"{step.lhs} and {step.rhs} do not meet at a positive value here"  # type: ignore[attr-defined]
        with np.errstate(invalid="ignore"):
            out = ~(finite & (value > 0))
        code = _reason(reasons, f"none: {text}") if out.any() else -1
    else:
        out = ~finite
        code = _reason(reasons, f"none: {step.name} is undefined here (a zero denominator)") if out.any() else -1
    why = np.where((why < 0) & out, code, why)
    return value, why


def _check_corners(d: Derivation, ctx: Context, s: Sweep) -> None:
    """The first and last point of the grid, evaluated exactly, agree with the compiled values."""
    corners = sorted({tuple(0 for _ in s.axes), tuple(len(a.values) - 1 for a in s.axes)})
    for index in corners:
        # the point the compiled grid was evaluated at: each axis's float, read exactly as the decimal it prints as
        point = {a.input.name: a.input.value(float(a.values[i]), "--over") for a, i in zip(s.axes, index, strict=True)}
        exact = evaluate(d, ctx.with_overrides(**point), only=[s.result])[s.result]
        got = float(s.values[index])
        where = ", ".join(f"{a.input.name}={a.texts[i]}" for a, i in zip(s.axes, index, strict=True)) or "the sheet's inputs"
        if isinstance(exact, Missing):
            if not math.isnan(got):
                raise SweepError(f"{d.slug}: sweep of {s.result} has a value at {where} where the exact evaluation has none ({exact.reason})")
            continue
        want = float(exact)
        if math.isnan(got) or abs(got - want) > AGREEMENT * max(abs(want), 1e-300):
            raise SweepError(f"{d.slug}: sweep of {s.result} gives {got!r} at {where}, the exact evaluation {want!r}")

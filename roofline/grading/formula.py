"""A candidate's formula beside the step: the levels it is compared at, the step's additive terms, where it stops holding.

The working state of one formula's grading at each level of `LEVELS` (`Formula`),
the step split into additive terms, each named by the step it comes from
(`split_terms`), and, for an approximation, the first value of each input, up and
down from the sheet's, where the error passes the tolerance (`boundaries`: a
search over the input's domain, compiled once and run with no clock, so the
answer does not depend on how loaded the machine is).
`roofline.grading.compare` grades with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..derivations.engine.context import MAX_COUNT, Context, Input
from ..derivations.engine.declare import At, Derivation, Solve
from .values import CHECK_POINTS, DIGITS, Identity, apply_identities, caught, free_after_identities, inputs, num, points
from .verdict import Boundary

#: The most additive terms a step is split into, and the most of them (and of the candidate's) one explanation names.
MAX_TERMS = 12
MAX_CHANGED_TERMS = 5


# --- the step split into additive terms ----------------------------------------------------------------------------

def _steps_of(d: Derivation) -> dict[str, object]:
    return {s.name: s for s in d.steps}


def split_terms(d: Derivation, name: str) -> list[tuple[sp.Expr, tuple[str, ...]]]:
    """The step as a sum of terms, each distributed through the steps it multiplies, with the path of steps it came through.

    t_memory = bytes_per_gpu/(eta_bw beta) splits into weight_bytes_gpu/(eta_bw beta) and kv_bytes_step/(eta_bw beta);
    max() terms, closed forms and At steps stay whole. Deeper splits are tried first, shallower ones when there are
    more than MAX_TERMS terms.
    """
    steps = _steps_of(d)

    def split(expr: sp.Expr, path: tuple[str, ...], depth: int) -> list[tuple[sp.Expr, tuple[str, ...]]]:
        if isinstance(expr, sp.Add):
            return [t for a in expr.args for t in split(a, path, depth)]
        if depth <= 0:
            return [(expr, path)]
        if isinstance(expr, sp.Symbol) and expr.name in steps:
            step = steps[expr.name]
            if isinstance(step, Solve | At):
                return [(expr, path)]
            inner = split(step.expr, (*path, expr.name), depth - 1)
            return inner if len(inner) > 1 else [(expr, path)]
        if isinstance(expr, sp.Mul):
            for f in expr.args:
                if isinstance(f, sp.Symbol) and f.name in steps and not isinstance(steps[f.name], Solve | At):
                    inner = split(f, path, depth)
                    if len(inner) > 1:
                        rest = expr / f
                        return [(rest * t, p) for t, p in inner]
        return [(expr, path)]

    root = steps[name]
    top = root.expr if not isinstance(root, Solve | At) else sp.Symbol(name, positive=True)
    for depth in range(8, -1, -1):
        terms = split(top, (name,), depth)
        if len(terms) <= MAX_TERMS:
            return terms
    return [(top, (name,))]


def term_step(expr: sp.Expr, path: tuple[str, ...], d: Derivation) -> str:
    """The step that names a term: the one step it is, else the innermost step of its path."""
    own = [s for s in expr.free_symbols if s.name in d.expanded]
    if len(own) == 1:
        return own[0].name
    return path[-1] if path else ""


# --- a formula at each level ---------------------------------------------------------------------------------------

#: The levels at which a formula is compared, from the most general: see the module docstring.
LEVELS = ("general", "architecture", "pinned", "context")


@dataclass
class Formula:
    """The working state of one formula's grading."""

    d: Derivation
    name: str
    ctx: Context
    text: str
    tolerance: float
    ids: tuple[Identity, ...]
    ctxvals: dict[sp.Symbol, sp.Expr]
    seed: str
    sheet0: sp.Expr
    answer0: sp.Expr
    parsed: sp.Expr
    spec_values: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)
    #: inputs the sheet's formula uses and the answer does not, held at their values in the context at the "pinned" level
    pinned: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)

    def level(self, scope: str, sheet: sp.Expr | None = None, answer: sp.Expr | None = None) -> tuple[sp.Expr, sp.Expr]:
        """The sheet's formula and the answer (or the given parts of them) at one level of LEVELS."""
        s, a = (self.sheet0 if sheet is None else sheet), (self.answer0 if answer is None else answer)
        n = LEVELS.index(scope)
        if n >= 1:
            s, a = apply_identities(s, self.ids), apply_identities(a, self.ids)
        if n >= 2:
            with sp.evaluate(False):
                s, a = s.xreplace(self.pinned), a.xreplace(self.pinned)
        if n >= 3:
            with sp.evaluate(False):
                s, a = s.xreplace(self.spec_values), a.xreplace(self.spec_values)
        return s, a

    def points(self, exprs: Sequence[sp.Expr], tag: str) -> list[dict[sp.Symbol, sp.Expr]]:
        free = set().union(*(e.free_symbols for e in exprs))
        return points(self.d, free, self.ctxvals, f"{self.seed}/{tag}", CHECK_POINTS)


# --- where an approximation stops holding ------------------------------------------------------------------------

def _grid(inp: Input, v0: float, direction: str) -> list[float]:
    """Values of `inp` from its sheet value outward, doubling (or halving) to the ends of its domain."""
    if inp.domain in ("count", "whole"):
        lo = 1 if inp.domain == "count" else 0
        if direction == "up":
            out, v = [], max(v0, 1)
            while v < MAX_COUNT:
                v = min(v * 2, MAX_COUNT)
                out.append(v)
            return out
        out, v = [], v0
        while v > lo:
            v = max(math.floor(v / 2), lo)
            out.append(v)
        return out
    if inp.domain == "fraction":
        steps = [v0 + (1 - v0) * (1 - 0.5**k) for k in range(1, 12)] + [1.0] if direction == "up" else [v0 * 0.5**k for k in range(1, 14)]
        return [s for s in steps if 0 < s <= 1]
    lo = 1.0 if inp.domain == "at_least_one" else 0.0
    if direction == "up":
        start = v0 if v0 > 0 else 1e-9
        return [start * 2**k for k in range(1, 41)]
    if v0 <= lo:
        return []
    out = [max(v0 * 0.5**k, lo) for k in range(1, 41)]
    return [*(x for x in out if x > lo), *([lo] if inp.domain in ("nonnegative", "at_least_one") else [])]


def boundaries(work: Formula) -> tuple[Boundary, ...]:
    """For each input the difference depends on: the first value, up and down from the sheet's, where the error passes the tolerance."""
    d = work.d
    s1, a1 = work.level("architecture")
    by_symbol = inputs(d)
    moving = free_after_identities(work.sheet0, work.ids) | free_after_identities(work.answer0, work.ids)
    varying = sorted((s for s in moving if s in by_symbol), key=lambda s: s.name)
    diff_free = caught(lambda: (s1 - a1).free_symbols)
    out = []
    for s in varying:
        if isinstance(diff_free, set) and s not in diff_free:
            continue
        inp = by_symbol[s]
        others = {k: v for k, v in work.ctxvals.items() if k != s}
        with sp.evaluate(False):
            fs, fa = s1.xreplace(others), a1.xreplace(others)
        error_at = _error_function(fs, fa, s)
        if error_at is None:
            continue
        v0 = float(work.ctxvals[s])
        for direction in ("up", "down"):
            grid = _grid(inp, v0, direction)
            if not grid:
                continue
            errors = error_at(np.array(grid, dtype=float))
            past = [i for i, e in enumerate(errors) if np.isfinite(e) and e > work.tolerance]
            if not past:
                if np.all(np.isfinite(errors)):
                    out.append(Boundary(inp, direction, None, None))
                continue
            i = past[0]
            ok = v0 if i == 0 else grid[i - 1]
            value, err = _refine(inp, fs, fa, s, ok, grid[i], work.tolerance)
            out.append(Boundary(inp, direction, value, err))
    return tuple(out)


def _error_function(fs: sp.Expr, fa: sp.Expr, s: sp.Symbol) -> Callable[[np.ndarray], np.ndarray] | None:
    """|answer - sheet|/|sheet| as a function of one input over numpy arrays (compiled once; confirmed exactly where it matters)."""
    def compile_() -> Callable[[np.ndarray], np.ndarray]:
        custom = {type(f).__name__: type(f).numpy for e in (fs, fa) for f in e.atoms(sp.Function) if hasattr(type(f), "numpy")}
        f_s = sp.lambdify([s], fs, modules=[custom, "numpy"])
        f_a = sp.lambdify([s], fa, modules=[custom, "numpy"])

        def err(x: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                a = np.broadcast_to(np.asarray(f_a(x), dtype=float), x.shape)
                b = np.broadcast_to(np.asarray(f_s(x), dtype=float), x.shape)
                return np.abs(a - b) / np.abs(b)
        return err

    return caught(compile_)  # type: ignore[return-value]  # linear in the formula's size: no clock, so the search is the same under load


def _exact_error(fs: sp.Expr, fa: sp.Expr, s: sp.Symbol, x: sp.Expr) -> float | None:
    a, b = num(fa, {s: x}), num(fs, {s: x})
    if a is None or b in (None, 0):
        return None
    return float(abs(a - b) / abs(b))


def _refine(inp: Input, fs: sp.Expr, fa: sp.Expr, s: sp.Symbol, ok: float, bad: float, tol: float) -> tuple[sp.Expr, float | None]:
    """The first value past `ok` toward `bad` where the exact error passes `tol`: a whole number for counts, else 3 figures."""
    whole = inp.domain in ("count", "whole")
    lo, hi = ok, bad
    for _ in range(64):
        if whole and abs(hi - lo) <= 1:
            break
        if not whole and abs(hi - lo) <= 1e-3 * max(abs(hi), abs(lo)):
            break
        mid = (lo + hi) / 2
        mid = math.floor(mid) if whole and hi > lo else (math.ceil(mid) if whole else mid)
        err = _exact_error(fs, fa, s, sp.Integer(mid) if whole else sp.Float(mid, DIGITS))
        if err is None:
            break
        if err > tol:
            hi = mid
        else:
            lo = mid
    value = sp.Integer(int(hi)) if whole else sp.Float(float(f"{hi:.3g}"), DIGITS)
    return value, _exact_error(fs, fa, s, value)


__all__ = ["LEVELS", "Formula", "boundaries", "split_terms"]

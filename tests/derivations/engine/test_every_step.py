"""Every step of every registered derivation: unit check, closed forms vs their equations."""

import random

import mpmath
import pytest
import sympy as sp
from roofline.derivations.engine.declare import Solve, identically_zero
from roofline.derivations.engine.sheet import value_at
from roofline.derivations.engine.symbols import SHARES
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.units import check_unit

STEPS = [(d, s) for d in DERIVATIONS for s in d.steps]
SOLVES = [(d, s) for d, s in STEPS if isinstance(s, Solve)]


@pytest.mark.parametrize("d, step", STEPS, ids=[f"{d.slug}:{s.name}" for d, s in STEPS])
def test_step_unit(d, step):
    check_unit(step.expr, d.symbols.units(), step.unit or "1", what=f"{d.slug}:{step.name}")
    check_unit(d.expanded[step.name], d.symbols.units(), step.unit or "1", what=f"{d.slug}:{step.name} (expanded)")


@pytest.mark.parametrize("d, step", SOLVES, ids=[f"{d.slug}:{s.name}" for d, s in SOLVES])
def test_closed_form_solves_its_equation(d, step):
    lhs, rhs = step.equation
    closed = d.expanded[step.name]  # the closed form down to inputs (a Solve may keep earlier steps as symbols)
    if step.verified == "symbolic":
        assert identically_zero((lhs - rhs).xreplace({step.for_: closed}))
    rng = random.Random(step.name)
    symbols = sorted(lhs.free_symbols | rhs.free_symbols | closed.free_symbols, key=lambda s: s.name)  # drawn in a fixed order
    rough = sp.lambdify(symbols, closed, modules="math")  # float64, to pass over points with no root before the exact value
    fine = sp.lambdify(symbols, closed, modules="mpmath")  # 50 digits: the root itself, far faster than sympy's evalf
    checked = 0
    for _ in range(200):
        if checked == 20:
            break
        # 50-digit floats: an exact rational to a random rational power (experts touched) makes sympy factor huge integers
        # a share (a hit rate, SHARES) inside (0, 1), where 1 - h stays a share; every other symbol over three decades
        point = {s: sp.Float(_share(u) if s.name in SHARES else 10 ** u, 50) for s in symbols for u in [rng.uniform(-1.5, 1.5)]}
        try:
            r = rough(*(float(point[s]) for s in symbols))
        except (ArithmeticError, NameError, TypeError, ValueError):
            r = 1.0  # float code cannot evaluate it here: the exact value decides
        if isinstance(r, complex) or not r > 0:
            continue  # no real positive root in float64 (the exact check below still rejects what slips through)
        root = _root(closed, fine, point, symbols)
        if root is None or not root.is_positive:
            continue
        a = sp.N(lhs.xreplace({**point, step.for_: root}), 30)
        b = sp.N(rhs.xreplace({**point, step.for_: root}), 30)
        assert abs(a - b) <= 1e-20 * max(abs(a), abs(b), 1)
        checked += 1
    assert checked, f"{step.name}: no sample point gave a positive root"


def _share(u: float) -> float:
    """A draw of [-1.5, 1.5] mapped into (0, 1)."""
    return 0.001 + 0.998 * (u + 1.5) / 3


def _root(closed: sp.Expr, fine, point: dict, symbols: list) -> sp.Expr | None:
    """The closed form at `point`: in mpmath at 50 digits where its code evaluates it (None where the value is complex
    there: no real root), else as a sheet evaluates it (`value_at`: a Piecewise, a root per branch of min(T, W), takes
    the branch that holds)."""
    with mpmath.workdps(50):
        try:
            v = fine(*(mpmath.mpf(point[s]._mpf_) for s in symbols))
        except (ArithmeticError, NameError, TypeError, ValueError, ZeroDivisionError):
            return value_at(closed, point)
        if isinstance(v, mpmath.mpc):
            return None
        return sp.Float(v, 50) if isinstance(v, mpmath.mpf) and mpmath.isfinite(v) else value_at(closed, point)


def test_registry_slugs_are_unique_and_in_question_order():
    slugs = [d.slug for d in DERIVATIONS]
    assert len(set(slugs)) == len(slugs)
    assert slugs[:1] == ["decode-floor"]

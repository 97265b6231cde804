"""Unit inference for plain sympy expressions.

Expressions stay unit-free sympy; the unit of every symbol lives in a mapping
beside them. `infer_unit` walks the tree and returns the unit of the whole, or
raises `UnitMismatchError` naming the offending subexpression and both units.
Wrapping symbols in pint Quantities is fragile (`Max`, `sqrt`, operand order),
so we never do it.

Scale rule: terms that are added, compared or passed to Max/Min must have the
same unit, not merely the same dimension (s + ms would be numerically wrong
when magnitudes are substituted), so the project declares symbols in coherent
base units and converts values on the way in.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import pint
import sympy as sp

from .errors import UnitMismatchError
from .registry import same_unit, unit_text, ureg

UnitMap = Mapping[sp.Symbol, pint.Unit]
#: the units of the subexpressions met so far in one inference (a closed form or a step evaluated again repeats its parts)
_Memo = dict[sp.Basic, pint.Unit]

_DIMENSIONLESS_FUNCTIONS = (
    sp.log,
    sp.exp,
    sp.sin,
    sp.cos,
    sp.tanh,
    sp.erf,
)
_SAME_UNIT_FUNCTIONS = (sp.Max, sp.Min)
_UNIT_PRESERVING = (sp.ceiling, sp.floor, sp.Abs)


def infer_unit(expr: sp.Basic, units: UnitMap) -> pint.Unit:
    """The unit of `expr`, given the unit of each of its symbols."""
    return _infer(sp.sympify(expr), units, {})


def check_unit(expr: sp.Basic, units: UnitMap, expected: pint.Unit | str, what: str = "expression") -> None:
    """Raise `UnitMismatchError` unless `expr` comes out in `expected`."""
    want = ureg.parse_units(expected) if isinstance(expected, str) and expected not in ("", "1") else (
        ureg.dimensionless if isinstance(expected, str) else expected
    )
    got = infer_unit(expr, units)
    if not same_unit(got, want):
        raise UnitMismatchError(
            f"{what} must come out in {unit_text(want)} but {sp.sstr(expr)} is in {unit_text(got)}"
        )


def _mismatch(expr: sp.Basic, a: sp.Basic, ua: pint.Unit, b: sp.Basic, ub: pint.Unit) -> UnitMismatchError:
    return UnitMismatchError(
        f"unit clash in {sp.sstr(expr)}: {sp.sstr(a)} is in {unit_text(ua)} but {sp.sstr(b)} is in {unit_text(ub)}"
    )


def _require_dimensionless(expr: sp.Basic, arg: sp.Basic, units: UnitMap, memo: _Memo) -> None:
    u = _infer(arg, units, memo)
    if not u.dimensionless or not same_unit(u, ureg.dimensionless):
        raise UnitMismatchError(
            f"{sp.sstr(expr)} needs a dimensionless argument but {sp.sstr(arg)} is in {unit_text(u)}"
        )


def _all_same(expr: sp.Basic, args: tuple[sp.Basic, ...], units: UnitMap, memo: _Memo) -> pint.Unit:
    """The one unit all `args` share; an exact zero takes the others' unit (max(0, t) is a time), and so does NaN,
    "no value" (the branch of a piecewise closed form where no root holds)."""
    nonzero = tuple(a for a in args if not (a.is_Number and (a == 0 or a is sp.nan))) or args
    first = nonzero[0]
    u_first = _infer(first, units, memo)
    for other in nonzero[1:]:
        u_other = _infer(other, units, memo)
        if not same_unit(u_first, u_other):
            raise _mismatch(expr, first, u_first, other, u_other)
    return u_first


def _infer(expr: sp.Basic, units: UnitMap, memo: _Memo) -> pint.Unit:
    u = memo.get(expr)
    if u is None:
        u = memo[expr] = _infer_node(expr, units, memo)
    return u


def _infer_node(expr: sp.Basic, units: UnitMap, memo: _Memo) -> pint.Unit:
    if isinstance(expr, sp.Symbol):
        try:
            return units[expr]
        except KeyError:
            raise UnitMismatchError(f"symbol {expr.name} has no declared unit") from None
    if expr.is_Number or expr in (sp.pi, sp.E) or isinstance(expr, sp.NumberSymbol):
        return ureg.dimensionless
    if isinstance(expr, sp.Add):
        return _all_same(expr, expr.args, units, memo)
    if isinstance(expr, sp.Mul):
        result = ureg.dimensionless
        for arg in expr.args:
            result = result * _infer(arg, units, memo)
        return result
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        u_base = _infer(base, units, memo)
        if u_base.dimensionless:
            _require_dimensionless(expr, exponent, units, memo)
            return ureg.dimensionless
        if not exponent.is_Rational:
            raise UnitMismatchError(
                f"{sp.sstr(expr)} raises {unit_text(u_base)} to a non-rational power {sp.sstr(exponent)}"
            )
        return u_base ** Fraction(int(exponent.p), int(exponent.q))
    if isinstance(expr, _SAME_UNIT_FUNCTIONS):
        return _all_same(expr, expr.args, units, memo)
    if isinstance(expr, _UNIT_PRESERVING):
        return _infer(expr.args[0], units, memo)
    if isinstance(expr, _DIMENSIONLESS_FUNCTIONS):
        for arg in expr.args:
            _require_dimensionless(expr, arg, units, memo)
        return ureg.dimensionless
    if isinstance(expr, sp.Piecewise):
        values = tuple(branch.expr for branch in expr.args)
        for branch in expr.args:
            _infer(branch.cond, units, memo)
        return _all_same(expr, values, units, memo)
    if isinstance(expr, sp.core.relational.Relational):
        _all_same(expr, expr.args, units, memo)
        return ureg.dimensionless
    if getattr(expr, "unit_rule", None) == "dimensionless":
        # a function of plain numbers that gives a plain number (the rounds of an all-reduce, ceil(log2 n))
        for arg in expr.args:
            _require_dimensionless(expr, arg, units, memo)
        return ureg.dimensionless
    if getattr(expr, "unit_rule", None) == "index":
        # the position of one argument among arguments of one unit (argmax): a plain number
        _all_same(expr, expr.args, units, memo)
        return ureg.dimensionless
    if getattr(expr, "unit_rule", None) == "pick":
        # one of the values, by a position that is a plain number (pick): the values' one unit
        _require_dimensionless(expr, expr.args[0], units, memo)
        return _all_same(expr, expr.args[1:], units, memo)
    if isinstance(expr, (sp.logic.boolalg.BooleanAtom,)):
        return ureg.dimensionless
    if isinstance(expr, (sp.And, sp.Or, sp.Not, sp.ITE)):  # sympy writes a condition over a Piecewise as ITE(c, a, b)
        for arg in expr.args:
            _infer(arg, units, memo)
        return ureg.dimensionless
    raise UnitMismatchError(f"cannot infer the unit of {sp.sstr(expr)} ({type(expr).__name__})")

"""The one unit registry of the project, built from `definitions.txt`.

Magnitudes parse as `fractions.Fraction`, so "3.35 TB/s" is exactly 67/20 TB/s
and conversions stay exact until a renderer rounds.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import pint

DEFINITIONS = Path(__file__).with_name("definitions.txt")

ureg = pint.UnitRegistry(
    str(DEFINITIONS),
    non_int_type=Fraction,
    autoconvert_offset_to_baseunit=False,
    auto_reduce_dimensions=False,
)
Quantity = ureg.Quantity
Unit = ureg.Unit


def loads(data: bytes) -> object:
    """`pickle.loads` for data this process's own child wrote (derivations.engine.bounded): pint rebuilds a pickled Quantity or
    Unit in its application registry, so that registry is ours while the data is read, and the caller's again after."""
    import pickle

    previous = pint.get_application_registry().get()
    pint.set_application_registry(ureg)
    try:
        return pickle.loads(data)
    finally:
        pint.set_application_registry(previous)


@lru_cache(maxsize=4096)
def unit(text: str) -> pint.Unit:
    """Parse a unit string such as "B/s" or "flop/(parameter*token)" (each distinct string once)."""
    return ureg.parse_units(text) if text not in ("1", "") else ureg.dimensionless


def unit_text(u: object) -> str:
    """Plain-text unit, e.g. "B/s", "flop/(parameter*token)", "1" for none: of a pint Unit, a units.pintless Unit (the
    renderers' numbers carry those) or a unit string (a sheet's Value carries its unit as text), all written alike."""
    from . import pintless

    if isinstance(u, pintless.Unit):
        return u.text
    if isinstance(u, str):
        return pintless.unit(u).text
    return _pint_text(u)  # type: ignore[arg-type]


@lru_cache(maxsize=4096)
def _pint_text(u: pint.Unit) -> str:
    items = sorted(u._units.items(), key=lambda kv: kv[0])
    pos = [(name, exp) for name, exp in items if exp > 0]
    neg = [(name, -exp) for name, exp in items if exp < 0]

    def term(name: str, exp: Fraction | int) -> str:
        symbol = ureg.get_symbol(name)
        return symbol if exp == 1 else f"{symbol}^{_exp_text(exp)}"

    num = "*".join(term(n, e) for n, e in pos) or "1"
    if not neg:
        return num
    den = "*".join(term(n, e) for n, e in neg)
    return f"{num}/({den})" if len(neg) > 1 else f"{num}/{den}"


def _exp_text(exp: Fraction | int) -> str:
    exp = Fraction(exp)
    return str(exp.numerator) if exp.denominator == 1 else f"({exp})"


@lru_cache(maxsize=4096)
def same_unit(a: pint.Unit, b: pint.Unit) -> bool:
    """True when `a` and `b` are the same unit (same dimension, factor exactly 1)."""
    if a.dimensionality != b.dimensionality:
        return False
    return ureg.Quantity(Fraction(1), a).to(b).magnitude == 1


"""Closed forms around their solving: their shape, their printed grouping and their cache.

derivations.engine.declare solves each Solve step for its one positive root and
verifies it; what that needs beside the step itself is here: the min/max kinks
of an equation in the solved-for symbol (solved branch by branch, at most
MAX_KINKS of them), a root written with a positive numerator, a sum with its
common factors pulled out (`grouped`, for the printed form), and the on-disk
cache of solved closed forms (keyed by declare from the source of the solving
code, this module's included).
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from . import cache, exprjson

#: At most this many Min/Max kinks in the solved-for symbol (2**n branches are solved).
MAX_KINKS = 3


def kinks_of(expr: sp.Expr, var: sp.Symbol) -> list[sp.Expr]:
    """The Min and Max terms of `expr` whose arguments involve `var` (a windowed layer's min(T, W)), innermost first."""
    found = [a for a in expr.atoms(sp.Min, sp.Max) if var in a.free_symbols]
    return sorted(found, key=lambda a: (sp.count_ops(a), sp.default_sort_key(a)))


def bounded_below(conditions: list[sp.Basic], root: sp.Expr) -> bool:
    """Whether a condition already says `root` is at least a positive quantity (W <= root): then root > 0 goes without saying."""
    for c in conditions:
        if isinstance(c, sp.LessThan | sp.StrictLessThan) and c.rhs == root and c.lhs.is_positive:
            return True
        if isinstance(c, sp.GreaterThan | sp.StrictGreaterThan) and c.lhs == root and c.rhs.is_positive:
            return True
    return False


def positive_numerator(root: sp.Expr) -> sp.Expr:
    """Write -a/(b - c) as a/(c - b): the same value, easier to read."""
    num, den = sp.fraction(sp.together(root))
    return (-num) / (-den) if num.could_extract_minus_sign() else root


def grouped(expr: sp.Expr) -> sp.Expr:
    """Every sum with its common factors pulled out, greedily: the factor most of its terms share first (L w_c (T + gamma + 1) + ...)."""
    if expr.is_Atom or not expr.args:
        return expr
    args = [grouped(a) for a in expr.args]
    expr = expr.func(*args)
    return _group_sum(expr) if expr.is_Add else expr


def _factors(term: sp.Expr) -> list[sp.Expr]:
    return [f for f in sp.Mul.make_args(term) if not f.is_Number]


def _group_sum(expr: sp.Expr) -> sp.Expr:
    terms = list(sp.Add.make_args(expr))
    if len(terms) < 2:
        return expr
    counts: dict[sp.Expr, int] = {}
    for t in terms:
        for f in set(_factors(t)):
            counts[f] = counts.get(f, 0) + 1
    shared = [(n, len(sp.sstr(f)), sp.sstr(f), f) for f, n in counts.items() if n >= 2]
    if not shared:
        return expr
    f = max(shared, key=lambda x: (x[0], x[1], x[2]))[3]
    inside = [t for t in terms if f in _factors(t)]
    rest = [t for t in terms if f not in _factors(t)]
    common = [g for g in _factors(inside[0]) if all(g in _factors(t) for t in inside)]
    factor = sp.Mul(*common)
    inner = _group_sum(sp.Add(*[sp.cancel(t / factor) for t in inside]))
    if inner.is_Add:
        inner = sp.factor_terms(inner)  # 2 a + 2 b as 2 (a + b)
    out = -factor * -inner if inner.could_extract_minus_sign() else factor * inner
    return out + _group_sum(sp.Add(*rest)) if rest else out


def leading_sign_inside(expr: sp.Expr) -> sp.Expr:
    """-(a + b)/c as (-a - b)/c regrouped: a closed form reads with its sign inside the numerator, positive terms first."""
    if not expr.could_extract_minus_sign():
        return expr
    num, den = sp.fraction(-expr)
    return grouped(sp.expand(-num)) / den if sp.expand(num).is_Add else expr


#: How a closed form was checked against its equation (the numeric check always runs; "symbolic" when sympy also proves it).
VERIFICATIONS = ("symbolic", "numeric")


@lru_cache(maxsize=8192)
def solve_key(name: str, expr: sp.Expr) -> str:
    """An earlier step's part of a solve's key, made once per step (a sheet's later solves read every earlier step)."""
    return cache.key(name, expr)


def cached_solve(key: str) -> tuple[sp.Expr, str, sp.Expr] | None:
    """A solve's cached root, verification and printed form (one entry: the printed form as exprjson text); None for a miss."""
    found = cache.load_expr(key, ("verified", "printed"))
    if found is None or found[1]["verified"] not in VERIFICATIONS:
        return None
    try:
        printed = exprjson.loads(found[1]["printed"])
    except exprjson.RefusedError:
        return None
    return found[0], found[1]["verified"], printed


def store_solve(key: str, root: sp.Expr, verified: str, printed: sp.Expr) -> None:
    try:
        text = exprjson.dumps(printed)
    except exprjson.RefusedError:
        return  # a form outside the whitelist is not stored: solved again next time
    cache.store_expr(key, root, verified=verified, printed=text)

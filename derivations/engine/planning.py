"""Making a derivation's numeric plan (`derivations.engine.numeric.Plan`): its steps written as exprjson data with the rule each
follows, and the cache that keeps plans between runs. This side needs sympy and the derivation; the plan it makes runs
without either (`derivations.engine.numeric`).
"""

from __future__ import annotations

from . import cache, codegen, exprjson, numeric
from .codegen import PlanError
from .declare import At, Derivation, Solve, needed_steps
from .numeric import VERSION, Plan, PlanStep


def plan_of(d: Derivation) -> Plan:
    """The numeric plan of `d`: from this process's memory, the cache, or made now (and stored)."""
    hit = _PLANS.get(id(d))
    if hit is not None and hit[0] is d:
        return hit[1]
    k = plan_key(d)
    plan = None
    data = cache.load_json(k, f"plan {d.slug}")
    if data is not None:
        try:
            plan = Plan.from_json(data)
        except (PlanError, KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, RecursionError, NameError,
                SyntaxError):
            plan = None  # any failure while reading an entry is a miss
    if plan is None:
        plan = make_plan(d)
        cache.store_json(k, plan.to_json(), f"plan {d.slug}")
    _PLANS[id(d)] = (d, plan)
    return plan


_PLANS: dict[int, tuple[Derivation, Plan]] = {}


def plan_key(d: Derivation) -> str:
    """The cache key of `d`'s plan: everything it is made from (each step's expression, kind, rule, At data), this module and the
    plan's runtime."""
    # this module and the format it stores; the rule that picks the steps a result needs (its code)
    parts: list[object] = ["numeric-plan", VERSION, cache.source_digest(__file__, numeric.__file__, codegen.__file__, exprjson.__file__), needed_steps, d.slug]
    for s in d.steps:
        parts += [s.name, type(s).__name__, s.unit, s.none, s.signed, isinstance(s, Solve) and (s.lhs, s.rhs)]
        # an At step is its `of` step evaluated again at `where` (its `expr`, the expansion of `of`, is not what it runs)
        parts += [s.of, *(x for pair in s.where for x in pair)] if isinstance(s, At) else [s.expr]
    return cache.key(*parts)


def make_plan(d: Derivation) -> Plan:
    """Compile `d`'s steps: each expression written as exprjson data, the At steps' re-evaluation lists, the needs."""
    steps = []
    names = [s.name for s in d.steps]
    for i, s in enumerate(d.steps):
        if isinstance(s, Solve):
            rule, none, prose = "solve", s.none or f"{s.lhs} and {s.rhs} do not meet at a positive value here", bool(s.none)
        elif s.none and s.signed:
            # a signed step (an error against a measurement) may be negative; its `none` says why it has no value at all
            rule, none, prose = "finite_named", s.none, True
        elif s.none:
            rule, none, prose = "positive", s.none, True
        else:
            rule, none, prose = "finite", "", False
        if isinstance(s, At):
            replaced = {sym for sym, _ in s.where}
            need = needed_steps(d, [s.of])
            redo = tuple(x.name for x in d.steps[:i] if x.name in need and d.symbols_of[x.name] & replaced)
            where = tuple((sym.name, tuple(sorted(e.name for e in expr.free_symbols)), exprjson.dump(expr)) for sym, expr in s.where)
            steps.append(PlanStep(s.name, s.unit, (), None, rule, s.none if s.none else none, bool(s.none) or prose, s.of, where, redo))
            continue
        args = tuple(sorted(e.name for e in s.expr.free_symbols))
        steps.append(PlanStep(s.name, s.unit, args, exprjson.dump(s.expr), rule, none, prose))
    needs = {n: frozenset(needed_steps(d, [n])) for n in names}
    return Plan(d.slug, tuple(steps), needs, tuple(sorted(x.name for x in d.free_symbols)))


__all__ = ["make_plan", "plan_key", "plan_of"]

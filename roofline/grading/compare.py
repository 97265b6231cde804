"""Grade an answer against a sheet: a candidate's formula or number, compared with the engine's own step.

A formula (in the formula language, `derivations.engine.formula`) is expanded down to
glossary symbols and the sheet's inputs, as the step itself is
(`Derivation.expanded`; the candidate may use step names too), and compared at
three levels of generality:

1. as written: the two expansions over free symbols;
2. for the context's architecture: the identities that hold for this model
   family (`IDENTITIES`: e_kv = 2 L K H for GQA, P_base = P_active for a dense
   model, ...), each checked against the context's own values before it is used,
   and the conventions (kappa = 2 flop per weight per token, ...);
3. for the context's chip, model and precisions: every spec-bound symbol at its
   value, the inputs still free.

At each level the two sides are first compared numerically at random points
inside the inputs' domains (40 digits), then, where they agree, the difference
is simplified to zero. Where they differ the verdict is, in this order: off by a
constant factor (with the known slips that give that factor: `SLIPS`, and ratios
such as 8 or 1.024^3), off by a factor of one symbol, missing or extra additive
terms (the step distributed through its own steps, each term named by the step it
comes from), an approximation that holds within a tolerance at the context (the
sheet's max() terms on the side they take there; where the error passes the
tolerance is found by a search over each input's domain), or different.

A number with its unit is compared with the step's value in the context: within
a tolerance, or off by a ratio, with the slips and the left-out terms that give
that ratio.

Every sympy operation on a candidate whose cost can grow faster than its size
(expanding, simplifying, evaluating symbolically) runs under a time limit
(`SYMPY_SECONDS`), and the formula language bounds the input's size before any
of it runs. Walking and compiling a formula, linear in that size, run without a
clock, so where an approximation stops holding does not depend on how loaded
the machine is. Nothing
here reads a file or formats text: a `Verdict` is data, `roofline.grading.words` words it.

The values, the time limits and the identities are in `roofline.grading.values`; the
verdict's types and the known slips in `roofline.grading.verdict`; a formula's working
state, the step's additive terms and where an approximation stops holding in
`roofline.grading.formula`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pint
import sympy as sp

from ..derivations.engine import formula as fm
from ..derivations.engine.context import Context
from ..derivations.engine.declare import At, Derivation, Solve, needed_steps
from ..derivations.engine.sheet import Missing, evaluate
from ..derivations.physics import glossary as gl
from ..specs.errors import shown
from ..units import Quantity, unit, unit_text
from . import formula
from .formula import MAX_CHANGED_TERMS, Formula, split_terms, term_step
from .values import (
    DIGITS,
    GradeError,
    apply_identities,
    bounded,
    context_values,
    exact,
    expand,
    free_after_identities,
    identities,
    inputs,
    num,
    parse_answer,
    target,
    title,
    values_at,
)
from .verdict import APPROXIMATION_TOLERANCE, RATIO_SLIPS, SLIPS, Boundary, Cause, Regime, Slip, Term, Verdict

#: A number within this relative error of the step's value is right (an interview answer carries two or three figures).
NUMBER_TOLERANCE = 0.05
#: Two values at a random point are equal when they agree to this relative precision (far above 40-digit rounding).
EQUAL_RTOL = sp.Float("1e-25", DIGITS)
#: The dimensions a person leaves implicit in a bare number: "2 P" FLOPs for kappa P, "B q" for a count of tokens.
COUNT_DIMENSIONS = frozenset({"[compute]", "[token]", "[parameter]"})


# --- comparing two expressions -------------------------------------------------------------------------------------

def _equal(a: sp.Float, b: sp.Float) -> bool:
    """Equal within EQUAL_RTOL; a NaN or an infinity (a ratio at a point where a factor is zero, a hit rate of 0) equals nothing."""
    if any(isinstance(x, sp.Expr) and x.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for x in (a, b)):
        return False
    return bool(abs(a - b) <= EQUAL_RTOL * max(abs(a), abs(b), sp.Float("1e-300")))


@dataclass(frozen=True)
class _Level:
    scope: str
    sheet: sp.Expr
    answer: sp.Expr
    rows: list[list[sp.Float]] | None  # [sheet, answer] per point


def _is_zero(expr: sp.Expr) -> bool | None:
    """True when sympy shows `expr` is zero within the time limit; None when it cannot tell."""
    if expr == 0:
        return True
    for op in (sp.expand, lambda e: sp.cancel(sp.together(e)), sp.simplify):
        got = bounded(op, expr)
        if got is not None and got == 0:
            return True
    return None


def _constant_ratio(rows: list[list[sp.Float]], i: int = 1, j: int = 0) -> sp.Float | None:
    ratios = [r[i] / r[j] for r in rows if r[j] != 0]
    if len(ratios) < 2 or any(not _equal(x, ratios[0]) for x in ratios):
        return None
    return ratios[0]


def _nice(r: sp.Float) -> sp.Expr:
    """A ratio as an exact number where one is close (1/2, 8, 134217728/125000000), else the float."""
    got = bounded(lambda: sp.nsimplify(r, tolerance=sp.Float("1e-20"), rational=True))
    if isinstance(got, sp.Rational) and max(abs(got.p), got.q) < 10**12:
        return got
    return r


# --- grading a formula ---------------------------------------------------------------------------------------------

def _side(expr: sp.Expr) -> str:
    """Which side of a roofline max() an argument is: over a bandwidth (memory) or a peak (compute)."""
    free = expr.free_symbols
    bandwidths = {gl.beta, *(v for k, v in gl.SECOND_CHIP.items() if k == gl.beta)}
    peaks = {gl.pi, gl.pi_bf16, gl.pi_fp8, *(v for k, v in gl.SECOND_CHIP.items() if k == gl.pi)}
    if free & bandwidths and not free & peaks:
        return "memory"
    if free & peaks and not free & bandwidths:
        return "compute"
    return ""


def _resolve_max(expr: sp.Expr, ctxvals: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """Every max() and min() replaced by the argument it takes at the context."""
    def pick(e: sp.Expr) -> sp.Expr:
        values = [(num(a, ctxvals), a) for a in e.args]
        known = [(v, a) for v, a in values if v is not None]
        if not known:
            return e
        chooser = max if isinstance(e, sp.Max) else min
        return chooser(known, key=lambda va: va[0])[1]

    got = bounded(lambda: expr.replace(lambda e: isinstance(e, sp.Max | sp.Min), pick))
    return got if isinstance(got, sp.Expr) else expr


def regimes(d: Derivation, name: str, values: Mapping[str, sp.Expr | Missing], ctxvals: Mapping[sp.Symbol, sp.Expr]) -> tuple[Regime, ...]:
    """The sheet's max() steps that `name` needs, each with the side it takes at the context (from the exact step values)."""
    need = needed_steps(d, [name])
    out = []
    symbol_values = {**ctxvals, **{sp.Symbol(n, positive=True): v for n, v in values.items() if not isinstance(v, Missing)}}
    for step in d.steps:
        if step.name not in need or isinstance(step, Solve | At):
            continue
        # The step a max() or min(), or a sum with one per kernel (attention's): each that is not zero at the context.
        terms = [step.expr] if isinstance(step.expr, sp.Max | sp.Min) else \
            [t for t in step.expr.args if isinstance(t, sp.Max | sp.Min)] if isinstance(step.expr, sp.Add) else []
        for term in terms:
            args = [(num(a, symbol_values), a) for a in term.args]
            if any(v is None for v, _ in args) or all(v == 0 for v, _ in args):
                continue
            chooser = max if isinstance(term, sp.Max) else min
            _, arg = chooser(args, key=lambda va: va[0])
            side = _side(expand(d, arg)) or f"branch {term.args.index(arg) + 1}"
            if Regime(step.name, side) not in out:
                out.append(Regime(step.name, side))
    return tuple(out)




def grade_formula(d: Derivation, name: str, text: str, ctx: Context, context_label: str = "",
                  tolerance: float = APPROXIMATION_TOLERANCE) -> Verdict:
    """Compare the formula `text` with step `name` of `d` (see the module docstring)."""
    name = target(d, name)
    _check_tolerance(tolerance)
    parsed = fm.parse(text, d.symbols)
    step_unit = d.symbols[name].unit
    answer0 = expand(d, parsed.expr)
    sheet0 = d.expanded[name]
    free = sheet0.free_symbols | answer0.free_symbols
    values = evaluate(d, ctx, only=[name])
    v = values[name]
    ctxvals = context_values(d, ctx, free, unused=not isinstance(v, Missing))
    ids = identities(ctx)
    seed = f"{d.slug}/{name}/{text}"
    base = dict(kind="", slug=d.slug, result=name, title=title(d, name), table=d.symbols, answer=text, form="formula", value=None, unit=step_unit,
                display_unit=d.display_units.get(name), context_label=context_label, answer_unit=parsed.unit, tolerance=tolerance,
                expr=parsed.expr)
    base["value"] = None if isinstance(v, Missing) else v
    work = Formula(d, name, ctx, text, tolerance, ids, ctxvals, seed, sheet0, answer0, parsed.expr)
    work.spec_values = {s: val for s, val in ctxvals.items() if s not in inputs(d)}
    # the identities' right-hand sides may bring in symbols the two sides did not name (K, H for e_kv)
    extra_free = set().union(*(apply_identities(e, ids).free_symbols for e in (sheet0, answer0))) - set(ctxvals)
    if extra_free:
        more = context_values(d, ctx, extra_free, unused=not isinstance(v, Missing))
        ctxvals.update(more)
        work.spec_values.update({s: val for s, val in more.items() if s not in inputs(d)})

    by_symbol = inputs(d)
    sheet1, answer1 = apply_identities(sheet0, ids), apply_identities(answer0, ids)
    work.pinned = {s: ctxvals[s] for s in sheet1.free_symbols - answer1.free_symbols if s in by_symbol}
    if not _same(parsed.unit, step_unit):
        ratio = step_unit / parsed.unit
        dims = set(Quantity(1, ratio).dimensionality)
        if Quantity(1, ratio).dimensionless:
            factor = exact(Quantity(1, parsed.unit), step_unit)
            work.answer0 = answer0 = answer0 * factor
        elif dims <= COUNT_DIMENSIONS:
            base["implicit"] = unit(unit_text(ratio))
        else:
            return _different_unit(work, base, ratio)
    return _compare(work, base)


def _check_tolerance(tolerance: float) -> None:
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 < tolerance < 1:
        raise GradeError(f"--tolerance: expected a fraction between 0 and 1 (0.1 for 10%), found {shown(tolerance)}")


def _different_unit(work: Formula, base: dict, ratio: pint.Unit) -> Verdict:
    """A unit the step is not in: say both, and which of the step's symbols has the unit the answer lacks."""
    d = work.d
    suggestions = []
    answer_free = work.parsed.free_symbols
    # the symbols left once the model's identities apply first (b_w, not b_e, where one format holds throughout), then the rest
    reduced = apply_identities(work.sheet0, work.ids).free_symbols
    for s in sorted(work.sheet0.free_symbols | reduced, key=lambda s: (s not in reduced, s.name)):
        if s in answer_free or s.name not in d.symbols:
            continue
        u = d.symbols.info(s).unit
        for power in (1, -1):
            if _same(u**power, ratio):
                fixed = replace_answer(work, work.answer0 * s**power)
                sub = _compare(fixed, {**base, "answer": f"({work.text})*{s.name}" if power == 1 else f"({work.text})/{s.name}"})
                suggestions.append((s, power, sub))
    return Verdict(**{**base, "kind": "unit", "suggestions": tuple(suggestions[:3])})


def _same(a: pint.Unit, b: pint.Unit) -> bool:
    q = Quantity(1, a) / Quantity(1, b)
    return bool(q.dimensionless) and q.to("").magnitude == 1


def replace_answer(work: Formula, answer0: sp.Expr) -> Formula:
    new = Formula(work.d, work.name, work.ctx, work.text, work.tolerance, work.ids, work.ctxvals, work.seed, work.sheet0, answer0, work.parsed)
    new.spec_values, new.pinned = work.spec_values, work.pinned
    return new


def _compare(work: Formula, base: dict) -> Verdict:
    """The verdict, trying each kind in the order of the module docstring."""
    d, name = work.d, work.name
    levels: dict[str, _Level] = {}

    def at(scope: str) -> _Level:
        if scope not in levels:
            s, a = work.level(scope)
            levels[scope] = _Level(scope, s, a, values_at([s, a], work.points([s, a], scope)))
        return levels[scope]

    def equal(lv: _Level) -> bool:
        return lv.rows is not None and all(_equal(r[0], r[1]) for r in lv.rows)

    used = tuple(i for i in work.ids if i.symbol in _chained(work))
    for scope in ("general", "architecture"):
        lv = at(scope)
        if equal(lv):
            return Verdict(**{**base, "kind": "equivalent", "scope": scope, "proof": "symbolic" if _is_zero(lv.sheet - lv.answer) else "numeric",
                              "identities": used if scope != "general" else (), "points": len(lv.rows), "error": 0.0, "answer_value": base["value"]})
    context = at("context")
    answer_value, sheet_value = num(context.answer, work.ctxvals), num(context.sheet, work.ctxvals)
    error = float((answer_value - sheet_value) / sheet_value) if answer_value is not None and sheet_value not in (None, 0) else None
    near = error is not None and abs(error) <= work.tolerance
    pinned = tuple((inputs(d)[s], work.pinned[s]) for s in sorted(work.pinned, key=lambda s: s.name))
    base = {**base, "answer_value": answer_value, "error": error, "identities": used}

    def boundaries() -> tuple[Boundary, ...]:
        return formula.boundaries(work) if near else ()

    def factor_or_terms(scope: str, extra: dict) -> Verdict | None:
        lv = at(scope)
        if lv.rows is None:
            return None
        r = _constant_ratio(lv.rows)
        if r is not None:
            return Verdict(**{**base, **extra, "kind": "factor", "scope": scope, "factor": _nice(r), "points": len(lv.rows),
                              "causes": _formula_causes(work, float(r))})
        monomial = _monomial_factor(work, lv)
        if monomial is not None:
            return Verdict(**{**base, **extra, "kind": "factor", "scope": scope, "factor": monomial, "points": len(lv.rows)})
        return _terms_or_regime(scope, extra)

    def _terms_or_regime(scope: str, extra: dict) -> Verdict | None:
        """Left-out and added terms, as written or with the sheet's max() on the side it takes here: the explanation that changes less."""
        plain = _terms(work, scope, resolve=False)
        resolved_equal = _resolved_equivalent(work, scope)
        resolved = None if resolved_equal else _terms(work, scope, resolve=True)
        size = lambda found: len(found[0]) + len(found[1])  # noqa: E731
        values = evaluate(d, work.ctx, only=[name])
        if resolved_equal and (plain is None or size(plain) > 1):
            return Verdict(**{**base, **extra, "kind": "approximation", "scope": scope, "regimes": regimes(d, name, values, work.ctxvals),
                              "boundaries": boundaries()})
        found, regime = (resolved, regimes(d, name, values, work.ctxvals)) if resolved is not None and (plain is None or size(resolved) < size(plain)) \
            else (plain, ())
        if found is None:
            return None
        held = {"pinned": tuple(p for p in extra.get("pinned", ()) if p[0].symbol in found[2])}
        return Verdict(**{**base, **extra, **held, "kind": "terms", "scope": scope, "missing": found[0], "extra": found[1], "regimes": regime,
                          "boundaries": boundaries(), "causes": _context_causes(work, error)})

    verdict = factor_or_terms("architecture", {})
    if verdict is not None:
        return verdict
    if work.pinned:
        lv = at("pinned")
        if equal(lv):
            # the sheet's max() terms the answer writes one side of: name the sides they take here (the sampled points may all fall there)
            sides = regimes(d, name, evaluate(d, work.ctx, only=[name]), work.ctxvals) \
                if lv.sheet.has(sp.Max, sp.Min) and not lv.answer.has(sp.Max, sp.Min) else ()
            return Verdict(**{**base, "kind": "approximation", "scope": "pinned", "pinned": pinned, "regimes": sides, "boundaries": boundaries()})
        verdict = factor_or_terms("pinned", {"pinned": pinned})
        if verdict is not None:
            return verdict
    if equal(context):
        return Verdict(**{**base, "kind": "equivalent", "scope": "context", "proof": "symbolic" if _is_zero(context.sheet - context.answer) else "numeric",
                          "points": len(context.rows), "pinned": pinned})
    if context.rows is not None and (r := _constant_ratio(context.rows)) is not None:
        return Verdict(**{**base, "kind": "factor", "scope": "context", "factor": _nice(r), "points": len(context.rows),
                          "causes": _formula_causes(work, float(r)), "pinned": pinned})
    if near:
        return Verdict(**{**base, "kind": "approximation", "scope": "context", "boundaries": boundaries(), "pinned": pinned})
    return Verdict(**{**base, "kind": "different", "causes": _context_causes(work, error)})


def _context_causes(work: Formula, error: float | None) -> tuple[Cause, ...]:
    """The slips that give the answer's ratio to the step at the context exactly (a P_total for P_active, say)."""
    if error is None or error == 0:
        return ()
    return tuple(c for c in _formula_causes(work, 1 + error) if c.slip.symbol is not None)


def _chained(work: Formula) -> set[sp.Symbol]:
    """Every symbol the two sides reach through the identities (P_total reaches P_matmul, then P_active)."""
    seen = set(work.sheet0.free_symbols | work.answer0.free_symbols)
    by_symbol = {i.symbol: i for i in work.ids}
    frontier = set(seen)
    while frontier:
        nxt = set()
        for s in frontier:
            if s in by_symbol:
                nxt |= by_symbol[s].expr.free_symbols - seen
        seen |= nxt
        frontier = nxt
    return seen


def _monomial_factor(work: Formula, lv: _Level) -> sp.Expr | None:
    """answer/sheet = c * s**k for one symbol s and k in (1, -1, 2, -2): a factor the answer has too many or too few of."""
    if lv.rows is None:
        return None
    free = sorted(lv.sheet.free_symbols | lv.answer.free_symbols, key=lambda s: s.name)
    pts = work.points([lv.sheet, lv.answer], "architecture")
    rows = [(p, num(lv.sheet, p), num(lv.answer, p)) for p in pts]
    rows = [(p, s, a) for p, s, a in rows if s not in (None, 0) and a is not None]
    if len(rows) < 3:
        return None
    for s in free:
        for k in (1, -1, 2, -2):
            ratios = [a / (sv * p[s] ** k) for p, sv, a in rows]
            if all(_equal(x, ratios[0]) for x in ratios):
                return _nice(sp.Float(ratios[0], DIGITS)) * s**k
    return None


def _slip_ratio(work: Formula, slip: Slip, values: Mapping[sp.Symbol, sp.Expr], base: tuple[sp.Expr, set, sp.Expr | None] | None = None) -> float | None:
    """answer/sheet that `slip` gives at `values`: the sheet's own formula with the slip applied, over the formula. `base`: the
    formula with the identities applied, the sheet's free symbols and the formula's value at `values`, where the caller has
    them (one formula, every slip: `number_slips`)."""
    sheet0 = work.sheet0
    plain, free, b = base if base is not None else (apply_identities(sheet0, work.ids), sheet0.free_symbols, None)
    if slip.symbol in free:
        with sp.evaluate(False):
            slipped = apply_identities(sheet0.xreplace({slip.symbol: slip.replace}), work.ids)
    else:
        if slip.symbol not in plain.free_symbols:
            return None
        with sp.evaluate(False):
            slipped = plain.xreplace({slip.symbol: slip.replace})
    missing = (slipped.free_symbols | plain.free_symbols) - set(values)
    if missing:
        values = {**values, **context_values(work.d, work.ctx, missing, unused=True)}
    a = num(slipped, values)
    b = num(plain, values) if b is None else b
    if a is None or b in (None, 0):
        return None
    return float(a / b)


def _formula_causes(work: Formula, ratio: float) -> tuple[Cause, ...]:
    """The slips that give exactly `ratio` (at the context and at one other point): the sheet's formula with each applied."""
    out = []
    present = work.parsed.free_symbols | expand(work.d, work.parsed).free_symbols
    for slip in SLIPS:
        r = _slip_ratio(work, slip, work.ctxvals)
        if r is not None and math.isclose(r, ratio, rel_tol=1e-9):
            out.append(Cause(slip, r, absent=slip.symbol not in present))
    if not any(c.absent for c in out):  # a slip on a symbol the answer lacks explains it better than a unit read wrong
        out += [Cause(slip, r) for slip in RATIO_SLIPS for r in _ratio_matches(slip, ratio, 1e-9)]
    return tuple(sorted(out, key=lambda c: not c.absent))


def _ratio_matches(slip: Slip, ratio: float, rtol: float) -> list[float]:
    return [r for base in slip.ratios for r in (base, 1 / base) if math.isclose(ratio, r, rel_tol=rtol)][:1]


def _terms(work: Formula, scope: str, resolve: bool) -> tuple[tuple[Term, ...], tuple[Term, ...], set[sp.Symbol]] | None:
    """The fewest terms of the step left out and of the answer added that make the two equal; None when no such set exists."""
    d = work.d
    parts = split_terms(d, work.name)
    sheet_terms = []
    for expr, path in parts:
        s1, _ = work.level(scope, sheet=expand(d, expr), answer=sp.S.Zero)
        if resolve:
            s1 = _resolve_max(s1, work.ctxvals)
        sheet_terms.append((expr, path, s1))
    _, answer1 = work.level(scope)
    if resolve:
        answer1 = _resolve_max(answer1, work.ctxvals)
    expanded = bounded(sp.expand, answer1)
    answer_parts = list(sp.Add.make_args(expanded)) if isinstance(expanded, sp.Expr) and len(sp.Add.make_args(expanded)) <= 8 \
        else list(sp.Add.make_args(answer1))
    exprs = [t for _, _, t in sheet_terms] + answer_parts
    pts = work.points(exprs, f"terms-{scope}-{resolve}")
    rows = values_at(exprs, pts)
    if rows is None:
        return None
    # points x terms, each point scaled by its largest term (a float64 cannot hold every 40-digit value)
    m = np.array([[float(v / max(max(abs(x) for x in row), sp.Float("1e-300"))) for v in row] for row in rows])
    n_sheet = len(sheet_terms)
    zero = np.all(m == 0, axis=0)
    scale = np.sum(np.abs(m), axis=1, keepdims=True) + 1e-300
    sheet_idx = [i for i in range(n_sheet) if not zero[i]]
    answer_idx = [j for j in range(n_sheet, m.shape[1]) if not zero[j]]
    total_sheet = m[:, sheet_idx].sum(axis=1)
    total_answer = m[:, answer_idx].sum(axis=1)
    for size in range(1, MAX_CHANGED_TERMS + 1):
        for k in range(size + 1):
            for left_out in itertools.combinations(sheet_idx, k):
                if len(left_out) == len(sheet_idx):
                    continue
                kept_sheet = total_sheet - m[:, list(left_out)].sum(axis=1)
                for added in itertools.combinations(answer_idx, size - k):
                    if len(added) == len(answer_idx):
                        continue
                    kept_answer = total_answer - m[:, list(added)].sum(axis=1)
                    if np.all(np.abs(kept_sheet - kept_answer) <= 1e-9 * scale[:, 0]):
                        return _named_terms(work, sheet_terms, answer_parts, left_out, [j - n_sheet for j in added])
    return None


def _named_terms(work: Formula, sheet_terms: list, answer_parts: list, left_out: Sequence[int],
                 added: Sequence[int]) -> tuple[tuple[Term, ...], tuple[Term, ...], set[sp.Symbol]]:
    """The left-out terms (merged into their step where all of a step's terms are left out) and the added ones, with values here;
    and the symbols the kept terms of the sheet use (an input held at its value matters only if they do)."""
    d = work.d
    # a step all of whose terms are left out is named once
    by_step: dict[str, list[int]] = {}
    for i, (_, path, _) in enumerate(sheet_terms):
        for p in path[1:]:
            by_step.setdefault(p, []).append(i)
    merged: list[tuple[sp.Expr, str]] = []
    used: set[int] = set()
    for stepname, members in sorted(by_step.items(), key=lambda kv: -len(kv[1])):
        if len(members) > 1 and set(members) <= set(left_out) and not set(members) & used:
            merged.append((sum((sheet_terms[i][0] for i in members), sp.S.Zero), stepname))
            used |= set(members)
    for i in left_out:
        if i not in used:
            expr, path, _ = sheet_terms[i]
            merged.append((expr, term_step(expr, path, d)))
    others = set().union(*(t[2].free_symbols for j, t in enumerate(sheet_terms) if j not in left_out)) if sheet_terms else set()
    missing = []
    for expr, stepname in merged:
        full = apply_identities(expand(d, expr), work.ids)
        own = tuple(sorted(full.free_symbols - others, key=lambda s: s.name))
        missing.append(Term(expr, stepname, own, num(full, work.ctxvals), title(d, stepname)))
    sheet_free = set().union(*(t[2].free_symbols for t in sheet_terms))
    extra = []
    for j in added:
        expr = answer_parts[j]
        own = tuple(sorted(expr.free_symbols - sheet_free, key=lambda s: s.name))
        extra.append(Term(expr, "", own, num(expr, work.ctxvals)))
    kept = set().union(*(free_after_identities(expand(d, t[0]), work.ids) for j, t in enumerate(sheet_terms) if j not in left_out))
    return tuple(missing), tuple(extra), kept



def _resolved_equivalent(work: Formula, scope: str) -> bool:
    """True when the answer equals the step with its max() terms on the sides they take at the context."""
    s1, a1 = work.level(scope)
    if not (s1.has(sp.Max, sp.Min) or a1.has(sp.Max, sp.Min)):
        return False
    s1, a1 = _resolve_max(s1, work.ctxvals), _resolve_max(a1, work.ctxvals)
    rows = values_at([s1, a1], work.points([s1, a1], "resolved"))
    return rows is not None and all(_equal(r[0], r[1]) for r in rows)


# --- grading a number ----------------------------------------------------------------------------------------------

def grade_number(d: Derivation, name: str, text: str, ctx: Context, context_label: str = "", tolerance: float = NUMBER_TOLERANCE) -> Verdict:
    """Compare a number with its unit with step `name`'s value in `ctx`: within `tolerance`, or off by a ratio with its likely slip."""
    name = target(d, name)
    _check_tolerance(tolerance)
    step_unit = d.symbols[name].unit
    q = parse_answer(text, step_unit, name)
    if q.magnitude < 0 and not d.step(name).signed:
        raise GradeError(f"answer: {text.strip()[:40]} is negative, and {name} is zero or more")
    base = dict(slug=d.slug, result=name, title=title(d, name), table=d.symbols, answer=text, form="number", unit=step_unit, display_unit=d.display_units.get(name),
                context_label=context_label, answer_unit=q.units, tolerance=tolerance)
    v = evaluate(d, ctx, only=[name])[name]
    if isinstance(v, Missing):
        raise GradeError(f"{d.slug}:{name} has no value for this setup ({v.label}); nothing to grade against")
    base["value"] = v
    if q.dimensionality != Quantity(1, step_unit).dimensionality:
        return Verdict(**{**base, "kind": "unit"})
    answer = exact(q, step_unit)
    base["answer_value"] = answer
    if v == 0:
        return Verdict(**{**base, "kind": "within" if answer == 0 else "off", "error": None})
    ratio = float(answer / v)
    error = ratio - 1
    base["error"] = error
    if abs(error) <= tolerance:
        return Verdict(**{**base, "kind": "within"})
    missing = _number_missing(d, name, ctx, v, ratio, tolerance)
    causes = _number_causes(d, name, ctx, v, ratio, tolerance)
    if missing and causes:
        # the closer explanation first: a left-out term, or a slip
        left = 1 - float(sum(t.value for t in missing) / v)
        if abs(math.log(ratio / left)) < abs(math.log(ratio / causes[0].ratio)):
            causes = ()
        else:
            missing = ()
    return Verdict(**{**base, "kind": "off", "factor": sp.Float(ratio, 6), "causes": causes, "missing": missing})


def number_slips(d: Derivation, name: str, ctx: Context) -> list[tuple[Slip, float]]:
    """Every slip a number answer to step `name` in `ctx` can be named by, with the ratio to the step's value it gives: each of
    SLIPS applied to the sheet's own formula (where it changes the value), and each of RATIO_SLIPS both ways. `grade_number`
    names the ones an answer's ratio is within the tolerance of (`closest_slips`); a practice page carries this list."""
    sheet0 = d.expanded[name]
    ids = identities(ctx)
    plain = apply_identities(sheet0, ids)
    ctxvals = context_values(d, ctx, sheet0.free_symbols | plain.free_symbols, unused=True)
    work = Formula(d, name, ctx, "", NUMBER_TOLERANCE, ids, ctxvals, "", sheet0, sp.S.Zero, sp.S.Zero)
    base = (plain, sheet0.free_symbols, num(plain, ctxvals))
    singles = [(slip, r) for slip in SLIPS if (r := _slip_ratio(work, slip, ctxvals, base)) is not None and not math.isclose(r, 1, rel_tol=1e-12)]
    singles += [(slip, r) for slip in RATIO_SLIPS for base in slip.ratios for r in (base, 1 / base)]
    return singles


def closest_slips(singles: Sequence[tuple[Slip, float]], ratio: float, tol: float) -> tuple[Cause, ...]:
    """The slips whose ratio is within `tol` of the answer's `ratio`, closest first, one per slip, at most four."""
    found = [Cause(slip, r) for slip, r in singles if math.isclose(ratio, r, rel_tol=tol)]
    best: dict[str, Cause] = {}
    for c in sorted(found, key=lambda c: abs(math.log(ratio / c.ratio))):
        best.setdefault(c.slip.key, c)
    return tuple(best.values())[:4]


def _number_causes(d: Derivation, name: str, ctx: Context, v: sp.Expr, ratio: float, tol: float) -> tuple[Cause, ...]:
    """The slips whose ratio at the context is within the tolerance of the answer's, closest first."""
    return closest_slips(number_slips(d, name, ctx), ratio, tol)


def _number_missing(d: Derivation, name: str, ctx: Context, v: sp.Expr, ratio: float, tol: float) -> tuple[Term, ...]:
    """One or two of the step's terms whose leaving out gives the answer's ratio (within the tolerance)."""
    return left_out_terms(number_terms(d, name, ctx), v, ratio, tol)


def number_terms(d: Derivation, name: str, ctx: Context) -> tuple[Term, ...]:
    """The additive terms of step `name` in `ctx`, each with its value (none where the step is one term, or a term has no value
    here): what a number answer that leaves one or two out is named by (`left_out_terms`); a practice page carries them."""
    ids = identities(ctx)
    parts = split_terms(d, name)
    if len(parts) < 2:
        return ()
    fulls = [apply_identities(expand(d, e), ids) for e, _ in parts]
    ctxvals = context_values(d, ctx, set().union(*(f.free_symbols for f in fulls)), unused=True)
    values = [num(f, ctxvals) for f in fulls]
    if any(x is None for x in values):
        return ()
    return tuple(Term(e, step, (), x, title(d, step)) for (e, part), x in zip(parts, values, strict=True) for step in [term_step(e, part, d)])


def left_out_terms(terms: Sequence[Term], v: sp.Expr | float, ratio: float, tol: float) -> tuple[Term, ...]:
    """The one term (else the two) of `terms` whose leaving out gives `ratio` to the step's value `v` within `tol`, the closest."""
    best = None
    for k in (1, 2):
        for combo in itertools.combinations(range(len(terms)), k):
            left = 1 - float(sum(terms[i].value for i in combo) / v)
            if left > 0 and math.isclose(ratio, left, rel_tol=tol) and (best is None or abs(left - ratio) < best[0]):
                best = (abs(left - ratio), combo)
        if best:
            break
    return () if best is None else tuple(terms[i] for i in best[1])


# --- what bounds a time --------------------------------------------------------------------------------------------

#: The resources a step time can scale with: the symbol whose value a faster part would raise.
RESOURCES = (gl.beta, gl.pi, gl.beta_link)
#: The step model's engine overheads, which no resource moves: the per-layer overhead, the per-step time, the all-reduce latency, the
#: time per sequence.
OVERHEADS = (gl.t_layer, gl.t_fixed, gl.t_ar, gl.t_seq)


@dataclass(frozen=True)
class Bound:
    """How a time splits over what it scales with: the share that falls as each resource grows (d ln t / d ln x), and the rest."""

    shares: tuple[tuple[sp.Symbol, float], ...]
    #: the share that no resource moves (the engine's overheads and latencies)
    rest: float
    #: the rest by engine overhead the time holds (d ln t / d ln t_x: the share of the time each overhead term is)
    overheads: tuple[tuple[sp.Symbol, float], ...] = ()

    @property
    def binding(self) -> sp.Symbol | None:
        """The resource with the largest share, or None when the fixed part is larger than any."""
        top = max(self.shares, key=lambda x: x[1], default=None)
        return None if top is None or top[1] < self.rest else top[0]


def asks_bound(d: Derivation, name: str) -> bool:
    """True for a time whose formula holds a roofline (a max of a memory side and a compute side): "what bounds it?" has an answer."""
    if unit_text(d.symbols[name].unit) != "s":
        return False
    maxes = d.expanded[name].atoms(sp.Max)
    return any({_side(a) for a in m.args} >= {"memory", "compute"} for m in maxes)


def what_bounds(d: Derivation, name: str, ctx: Context) -> Bound | None:
    """The elasticity of the step's time with respect to each resource at the context (exact values, a 1e-8 relative step)."""
    expr = d.expanded[name]
    if isinstance(evaluate(d, ctx, only=[name])[name], Missing):
        return None
    ctxvals = context_values(d, ctx, expr.free_symbols, unused=True)
    t0 = num(expr, ctxvals)
    if t0 in (None, 0):
        return None
    eps = sp.Rational(1, 10**8)
    shares = []
    for r in RESOURCES:
        if r not in expr.free_symbols:
            continue
        t1 = num(expr, {**ctxvals, r: ctxvals[r] * (1 + eps)})
        if t1 is None:
            return None
        shares.append((r, max(0.0, float(-(t1 - t0) / t0 / eps))))
    rest = max(0.0, 1 - sum(s for _, s in shares))
    overheads = []
    for o in OVERHEADS:
        if o not in expr.free_symbols or ctxvals[o] == 0:
            continue
        t1 = num(expr, {**ctxvals, o: ctxvals[o] * (1 + eps)})
        if t1 is None:
            return None
        overheads.append((o, max(0.0, float((t1 - t0) / t0 / eps))))
    return Bound(tuple(shares), rest, tuple(overheads))


__all__ = ["NUMBER_TOLERANCE", "Bound", "asks_bound", "grade_formula", "grade_number", "what_bounds"]

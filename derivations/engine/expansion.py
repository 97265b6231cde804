"""A step written out over every earlier step, and the bounds on what that may grow to.

`derivation()` (derivations.engine.declare) keeps every step's expansion: its
expression with each earlier step replaced by that step's expansion, down to
inputs and spec-bound symbols. `expand_steps` substitutes without re-evaluating;
`expand_by_cases` writes a step that reads one chosen label (a best draft
length) case by case, so the argmax appears once. `Measure` sizes each
expansion once per distinct subexpression and refuses one past
MAX_EXPANDED_TERMS or MAX_DEGREE, or an exponential of an exponential, with an
ExpansionError (declare reports it as a DerivationError).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import sympy as sp

from ...units import RooflineError
from ..physics.primitives import ArgMax, Pick

#: The most terms a step may expand to (its expression with every earlier step written out, each occurrence counted): the
#: largest shipped expansion has about 189,000 (speculative-decoding's throughput at the peak batch: the serving step's prompt,
#: grouped-GEMM, permutation, sparse-indexer and recurrent-state terms inside seventeen draft lengths, for the target and the
#: drafter); the bound keeps three times that. Past it, unit inference, sweeps and solves would take minutes.
MAX_EXPANDED_TERMS = 600_000
#: The highest degree a step may expand to: the exponents along a product of powers, multiplied as in the formula language
#: (formula.MAX_TOTAL_EXPONENT), over every earlier step it uses (the shipped maximum is 172). `s_k = s_(k-1)**2` passes it at k = 13.
MAX_DEGREE = 4096


class ExpansionError(RooflineError):
    """A step's expansion is past a bound: its size, its degree, or an exponential of an exponential."""


def expand_steps(expr: sp.Expr, expanded: Mapping[str, sp.Expr]) -> sp.Expr:
    """`expr` with earlier steps replaced by their expansions, which are not re-evaluated.

    Re-evaluating would make sympy try to prove an ordering between large
    expansions (a Max or Piecewise over several step times: minutes, and it
    never succeeds); the values decide when a context is evaluated.
    """
    mapping = {sp.Symbol(n, positive=True): e for n, e in expanded.items()}
    with sp.evaluate(False):
        return expr.xreplace(mapping)


@lru_cache(maxsize=8192)
def _choice(expr: sp.Expr) -> tuple[ArgMax, sp.Expr, sp.Expr] | None:
    """For a chosen label, first + stride * argmax(...) (`primitives.best_of`): the argmax, first and stride; else None."""
    first, rest = _split_numbers(expr) if isinstance(expr, sp.Add) else (sp.S.Zero, expr)
    stride, am = _split_numbers(rest) if isinstance(rest, sp.Mul) else (sp.S.One, rest)
    if isinstance(am, ArgMax):
        return am, first, stride
    return None


def _split_numbers(expr: sp.Add | sp.Mul) -> tuple[sp.Expr, sp.Expr | None]:
    """A sum or product as (its numbers combined, the one argument that is not a number), or (its numbers, None) when
    not exactly one is: by structure, so a large step model is never searched for an argmax."""
    numbers = [a for a in expr.args if a.is_number]
    rest = [a for a in expr.args if not a.is_number]
    return expr.func(*numbers), (rest[0] if len(rest) == 1 else None)


def expand_by_cases(expr: sp.Expr, expanded: Mapping[str, sp.Expr]) -> sp.Expr:
    """`expand_steps`, except that a step reading one chosen label (a best draft length) is written case by case.

    Substituting the label's expansion, an argmax over whole step models, at every place it appears multiplies the size
    by the number of places (speculative-decoding's throughput at the low-load draft length reads it a dozen times); written
    as pick(argmax, value at the first label, ..., value at the last) the argmax appears once, and inside each case a step
    already written by cases on the same argmax is its own case. The value is the same; only the expansion's size differs.
    A step reading two chosen labels is expanded plainly.
    """
    chosen = [(sym, c) for sym in expr.free_symbols if sym.name in expanded and (c := _choice(expanded[sym.name])) is not None]
    if len(chosen) != 1:
        return expand_steps(expr, expanded)
    label, (am, first, stride) = chosen[0]
    reads = {sym: expanded[sym.name] for sym in expr.free_symbols if sym.name in expanded and sym != label}
    picks = {sym: [p for p in e.atoms(Pick) if p.args[0] == am] for sym, e in reads.items()}  # found once, used for every case
    cases = []
    for k in range(len(am.args)):
        mapping: dict[sp.Basic, sp.Expr] = {label: first + stride * k}
        for sym, e in reads.items():
            own = {p: p.args[1 + k] for p in picks[sym]}
            with sp.evaluate(False):
                mapping[sym] = e.xreplace(own) if own else e
        with sp.evaluate(False):
            cases.append(expr.xreplace(mapping))
    return Pick(am, *cases, evaluate=False)


class Measure:
    """Size, degree and free symbols of expanded steps, each distinct subexpression measured once (expansions share them)."""

    def __init__(self) -> None:
        self.size: dict[sp.Basic, int] = {}
        self.degree: dict[sp.Basic, int] = {}
        #: holds an exponential: exp(...) or a power with a symbol in its exponent
        self.grows: dict[sp.Basic, bool] = {}
        self.free: dict[sp.Basic, frozenset[sp.Symbol]] = {}

    def check(self, slug: str, name: str, expr: sp.Basic) -> frozenset[sp.Symbol]:
        """The free symbols of one expanded step; a ExpansionError when it is past a bound."""
        stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if node in self.size:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((a, False) for a in node.args if a not in self.size)
                continue
            args = node.args
            self.size[node] = min(1 + sum(self.size[a] for a in args), 2 * MAX_EXPANDED_TERMS)
            if isinstance(node, sp.Symbol):
                self.free[node] = frozenset((node,))
            elif type(node).free_symbols is not sp.Basic.free_symbols:
                self.free[node] = frozenset(node.free_symbols)
            else:
                self.free[node] = frozenset().union(*(self.free[a] for a in args)) if args else frozenset()
            exp_like = isinstance(node, sp.exp) or (isinstance(node, sp.Pow) and bool(self.free[node.exp]))
            if isinstance(node, sp.exp) and any(self.grows[a] for a in args):
                raise ExpansionError(f"{slug}: step {name} takes an exponential of an exponential, which no number can hold; "
                                      "write the exponent as a step of its own and bound it")
            self.grows[node] = exp_like or any(self.grows[a] for a in args)
            self.degree[node] = min(self._degree(node), 2 * MAX_DEGREE)
        if self.size[expr] > MAX_EXPANDED_TERMS:
            raise ExpansionError(f"{slug}: step {name} expands to more than {MAX_EXPANDED_TERMS:,} terms (with every earlier step "
                                  "written out); the bound keeps unit checks, solves and sweeps fast")
        if self.degree[expr] > MAX_DEGREE:
            raise ExpansionError(f"{slug}: step {name} has degree above {MAX_DEGREE:,} in its inputs (powers of earlier steps "
                                  "multiply); the bound keeps exact values and solves finite")
        return self.free[expr]

    def _degree(self, node: sp.Basic) -> int:
        if isinstance(node, sp.Symbol):
            return 1
        if not self.free[node]:
            return 0
        if isinstance(node, sp.Pow):
            e = node.exp
            if e.is_Rational:
                return self.degree[node.base] * max(abs(int(e.p)), 1) * int(e.q)
            return self.degree[node.base] + self.degree[e]
        if isinstance(node, sp.Mul):
            return sum(self.degree[a] for a in node.args)
        return max((self.degree[a] for a in node.args), default=0)

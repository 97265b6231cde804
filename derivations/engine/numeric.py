"""Compiled evaluation: every step of a derivation as plain float code, one numeric plan for cells, claims, marks and sweeps.

`derivations.engine.sheet.evaluate` evaluates steps exactly, by sympy substitution: right, and slow (a table row costs
milliseconds of sympy object construction). A **numeric plan** is the same evaluation compiled once per derivation:

- per step, in order: its expression as `derivations.engine.exprjson` data (the whitelisted node list, never code), the
  names it reads (inputs, spec-bound symbols, earlier steps) and its domain rule, the same as `sheet._in_domain`:
  a closed form (Solve) or a step with a `none` reason has a value only where it is finite and positive; every
  other step only where it is finite; any value beyond 1e300 (or nonzero below 1e-300) is out of range;
- an At step as `sheet._at_value` does it: its replacements evaluated, then the steps that read a replaced
  symbol evaluated again, in order (the list is fixed when the plan is made), and the step it names read back;
- Missing propagates as in the exact evaluation: a step that reads a missing value is missing for the first
  reason (sorted), unless the value does not need it (a term multiplied by zero: the all-reduce on one GPU does
  not need a link bandwidth). The compiled code sees a missing value as `codegen.ABSENT`, which a zero factor absorbs
  and everything else passes on.

From the plan, `derivations.engine.codegen` writes one Python function per step: scalar floats (one context: a sheet's
table row, a claim, a plot mark) or numpy arrays (a sweep, a curve); `compile()` turns the text, generated there from the
validated node list, into code in memory. Nothing executable is stored: a plan is cached (derivations.engine.cache,
`<key>.json`) as data, keyed by everything it is made from, and read back through the same validation.

Floats carry noise a Rational does not: 8 experts come out 7.999999999999999. A floor or a ceiling snaps a value
within `codegen.SNAP` (relative) of a whole number to it before rounding, so a count is the count the exact evaluation
gives; renderers.numbers prints a float within its noise of a whole number as that whole number. The exact
evaluation stays the reference: `derivations.engine.sheet` checks one row of every table against it (`CHECK_TOLERANCE`).

This module imports neither sympy nor pint: a plan read from the cache evaluates without them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .codegen import ABSENT, MIXED, AbsentError, PlanError, compile_function, compile_functions

if TYPE_CHECKING:
    from ...specs.errors import SpecError

#: bump when the plan's shape or the generated code changes (it is part of every plan's cache key)
VERSION = 1
#: Float and exact evaluation agree to this relative tolerance on the checked row of every table (else the build fails).
CHECK_TOLERANCE = 1e-9
#: A step's value beyond 10**VALUE_LIMIT_EXPONENT in its own unit (or nonzero below its inverse) is out of range: no sheet
#: needs it, and no float could hold it in another unit (the one rule; derivations.engine.sheet and derivations.engine.sweep read it here).
VALUE_LIMIT_EXPONENT = 300
VALUE_LIMIT = 10.0**VALUE_LIMIT_EXPONENT
_EXACT_LIMIT = Fraction(10**VALUE_LIMIT_EXPONENT)
_EXACT_LIMIT_LOW = 1 / _EXACT_LIMIT
#: A value of the compiled evaluation: a float, or (exact evaluation, Plan.evaluate with exact=True) a Fraction.
Number = float | Fraction


def out_of_range(name: str, unit: str) -> str:
    """Why a step's value is out of range (the reason of its Missing)."""
    return (f"{name} is out of range here (its magnitude is beyond 1e{VALUE_LIMIT_EXPONENT} or below 1e-{VALUE_LIMIT_EXPONENT} "
            f"in {unit or '1'})")


@dataclass(frozen=True)
class Missing:
    """A value that does not exist in this context, and why.

    `none`: a closed form has no root in its domain (no such context, batch...).
    `n/a`: the step does not apply to this model or chip (a spec lacks what it needs).

    >>> import roofline
    >>> sheet = roofline.derive("batch-knee", hardware="h200", model="deepseek-v3",
    ...                         weights="fp8")
    >>> sheet.results["B_max_kv"].missing.kind
    'none'
    >>> sheet.results["B_max_kv"].to("1")
    Traceback (most recent call last):
    ...
    derivations.engine.sheet.NoValueError: B_max_kv has no value here (none: the weights alone fill the usable memory, leaving no room for a cache: more GPUs (a larger TP degree) or fewer bytes per weight)
    """

    kind: str
    """ "none" or "n/a"."""
    reason: str
    """Why, in one sentence."""
    error: SpecError | None = field(default=None, compare=False)
    """The spec error behind an n/a, re-raised when the sheet's own context needs the value."""
    prose: bool = False
    """True when `reason` is the derivation's prose (a Solve's `none`, which may hold $math$)."""

    @property
    def label(self) -> str:
        return f"{self.kind}: {self.reason}"


# --- the plan ------------------------------------------------------------------------------------------------------

_UNCOMPILED = object()
#: the domain rules a plan step may have (`PlanStep.rule`)
RULES = ("solve", "positive", "finite", "finite_named")

@dataclass
class PlanStep:
    """One step of a plan: what it reads, how it is computed, and its domain rule."""

    name: str
    unit: str
    #: the names its expression reads, in the order the compiled function takes them
    args: tuple[str, ...]
    #: exprjson data of its expression (for an At step: unused; see `where`)
    expr: Mapping[str, Any] | None
    #: "solve" (finite and positive), "positive" (a step with a `none` reason: finite and positive), "finite", "finite_named"
    #: (a signed step with a `none` reason: finite, of either sign)
    rule: str
    #: the reason when the rule fails ("" for "finite": the step is undefined here)
    none: str = ""
    #: whether `none` is the derivation's prose
    prose: bool = False
    #: for an At step: the step it evaluates, its replacements (symbol name, names read, exprjson), the steps evaluated again
    of: str = ""
    where: tuple[tuple[str, tuple[str, ...], Mapping[str, Any]], ...] = ()
    redo: tuple[str, ...] = ()
    _scalar: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    _numpy: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    _where_scalar: tuple[Callable[..., Any], ...] | None = field(default=None, repr=False, compare=False)
    _where_numpy: tuple[Callable[..., Any], ...] | None = field(default=None, repr=False, compare=False)
    _exact: Any = field(default=None, repr=False, compare=False)
    _where_exact: tuple[Callable[..., Any] | None, ...] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._exact = _UNCOMPILED

    def exact(self) -> Callable[..., Any] | None:
        """The step's code over Fractions, or None where its expression is not rational code (a log, a float, a power with a
        symbol in its exponent: `expression_source`)."""
        if self._exact is _UNCOMPILED:
            try:
                self._exact = compile_function(self.expr or {}, self.args, numpy=False, exact=MIXED)
            except (PlanError, RecursionError):
                self._exact = None
        return self._exact

    def exact_where(self) -> tuple[Callable[..., Any] | None, ...]:
        """An At step's replacements as code over Fractions (None for one that is not rational code)."""
        if self._where_exact is None:
            out = []
            for _, args, doc in self.where:
                try:
                    out.append(compile_function(doc, args, False, exact=MIXED))
                except (PlanError, RecursionError):
                    out.append(None)
            self._where_exact = tuple(out)
        return self._where_exact

    def scalar(self) -> Callable[..., Any]:
        if self._scalar is None:
            self._scalar = compile_function(self.expr or {}, self.args, numpy=False)
        return self._scalar

    def vector(self) -> Callable[..., Any]:
        if self._numpy is None:
            self._numpy = compile_function(self.expr or {}, self.args, numpy=True)
        return self._numpy

    def where_functions(self, numpy: bool) -> tuple[Callable[..., Any], ...]:
        if numpy:
            if self._where_numpy is None:
                self._where_numpy = tuple(compile_function(doc, args, True) for _, args, doc in self.where)
            return self._where_numpy
        if self._where_scalar is None:
            self._where_scalar = tuple(compile_function(doc, args, False) for _, args, doc in self.where)
        return self._where_scalar


@dataclass
class Plan:
    """A derivation's steps compiled for numbers: `evaluate` one context in floats; `arrays` a grid in numpy."""

    def prepare(self, mode: str) -> None:
        """Compile every step's code for `mode` ("scalar", "numpy" or "exact") in one go, where not compiled yet."""
        if mode in self._prepared:
            return
        numpy, exact = mode == "numpy", MIXED if mode == "exact" else False
        slot, where_slot = {"scalar": ("_scalar", "_where_scalar"), "numpy": ("_numpy", "_where_numpy"), "exact": ("_exact", "_where_exact")}[mode]
        items: list[tuple[Mapping[str, Any], Sequence[str]]] = []
        for s in self.steps:
            if not s.of:
                items.append((s.expr or {}, s.args))
            items.extend((doc, args) for _, args, doc in s.where)
        functions = iter(compile_functions(items, numpy, exact, refuse=mode != "exact"))
        for s in self.steps:
            if not s.of:
                setattr(s, slot, next(functions))
            setattr(s, where_slot, tuple(next(functions) for _ in s.where))
        self._prepared.add(mode)

    slug: str
    steps: tuple[PlanStep, ...]
    #: per step, the steps it needs (itself included), as `engine.needed_steps`
    needs: Mapping[str, frozenset[str]]
    #: the names of the inputs and spec-bound symbols the derivation reads
    inputs: tuple[str, ...]
    _subsets: dict[tuple[str, ...], tuple[PlanStep, ...]] = field(default_factory=dict, repr=False)
    _reads: dict[tuple[str, ...], frozenset[str]] = field(default_factory=dict, repr=False)
    by_name: dict[str, PlanStep] = field(default_factory=dict, repr=False)
    _prepared: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self.by_name = {s.name: s for s in self.steps}

    def subset(self, only: Sequence[str] | None) -> tuple[PlanStep, ...]:
        """The steps `only` needs (all of them for None), in order."""
        key = tuple(only) if only is not None else ()
        if only is None:
            return self.steps
        hit = self._subsets.get(key)
        if hit is None:
            need: set[str] = set()
            for name in only:
                need |= self.needs[name]
            hit = self._subsets[key] = tuple(s for s in self.steps if s.name in need)
        return hit

    def reads(self, only: Sequence[str] | None) -> frozenset[str]:
        """The input and spec-bound names the steps `only` needs read (every input for None)."""
        key = tuple(only) if only is not None else ()
        hit = self._reads.get(key)
        if hit is None:
            steps = self.subset(only)
            own = {s.name for s in self.steps}
            names: set[str] = set()
            for s in steps:
                names.update(s.args)
                for _, args, _ in s.where:
                    names.update(args)
            hit = self._reads[key] = frozenset(n for n in names if n not in own) if only is not None else frozenset(self.inputs)
        return hit

    def evaluate(self, values: dict[str, Number | Missing], only: Sequence[str] | None = None, exact: bool = False
                 ) -> dict[str, Number | Missing]:
        """Every step's value (or Missing) from `values` (the inputs it reads, by name); with `only`, those steps and what they need.

        A float64 each, unless `exact`: then a step whose inputs are all Fractions and whose expression is rational code is
        computed in Fractions (exactly the Rational sympy's substitution gives), and any other in float64 (a log, a power
        with a symbol in its exponent, or a step that reads a float). A sheet's own steps are evaluated so
        (derivations.engine.run); tables, claims and sweeps in floats. `values` gains the steps' values (so At steps and later
        steps read them).
        """
        out: dict[str, Number | Missing] = {}
        self.prepare("exact" if exact else "scalar")
        for s in self.subset(only):
            v = self._step(s, values, exact)
            values[s.name] = v
            out[s.name] = v
        return out

    def _step(self, s: PlanStep, values: Mapping[str, Number | Missing], exact: bool = False) -> Number | Missing:
        if s.of:
            return self._at(s, values, exact)
        if exact:
            f = s.exact()
            if f is not None:
                v = _call_exact(f, s.args, values)
                if v is not None:
                    return v if isinstance(v, Missing) else in_domain(s, v)
        v = _call(s.scalar(), s.args, _floats(values, s.args) if exact else values)
        return v if isinstance(v, Missing) else in_domain(s, v)

    def _at(self, s: PlanStep, values: Mapping[str, Number | Missing], exact: bool = False) -> Number | Missing:
        local = dict(values)
        exact_where = s.exact_where() if exact else (None,) * len(s.where)
        for (symbol, args, _), f, fx in zip(s.where, s.where_functions(False), exact_where, strict=True):
            v = _call_exact(fx, args, values) if fx is not None else None
            local[symbol] = v if v is not None else _call(f, args, _floats(values, args) if exact else values)
        for name in s.redo:
            local[name] = self._step(self.by_name[name], local, exact)
        v = local[s.of]
        if isinstance(v, Missing):
            return Missing(v.kind, s.none, v.error, prose=True) if s.none and v.kind == "none" else v
        return in_domain(s, v)

    # --- (de)serialization: plain data ---

    def to_json(self) -> dict[str, Any]:
        return {"plan": VERSION, "slug": self.slug, "inputs": list(self.inputs),
                "needs": {k: sorted(v) for k, v in self.needs.items()},
                "steps": [{"name": s.name, "unit": s.unit, "args": list(s.args), "expr": s.expr, "rule": s.rule, "none": s.none,
                           "prose": s.prose, "of": s.of, "where": [[sym, list(args), doc] for sym, args, doc in s.where],
                           "redo": list(s.redo)} for s in self.steps]}

    @classmethod
    def from_json(cls, data: object) -> Plan:
        """A plan from `to_json`'s data; PlanError for anything else (each expression is compiled, so it is validated here)."""
        try:
            if not isinstance(data, dict) or data.get("plan") != VERSION:
                raise PlanError("not a numeric plan of this version")
            steps = []
            for raw in data["steps"]:
                where = tuple((_text(w[0]), tuple(_text(a) for a in w[1]), w[2]) for w in raw["where"])
                step = PlanStep(_text(raw["name"]), _text(raw["unit"]), tuple(_text(a) for a in raw["args"]), raw["expr"],
                                _text(raw["rule"]), _text(raw["none"]), bool(raw["prose"]), _text(raw["of"]), where,
                                tuple(_text(a) for a in raw["redo"]))
                if step.rule not in RULES:
                    raise PlanError(f"{step.name}: unknown rule")
                steps.append(step)
            names = {s.name for s in steps}
            needs = {_text(k): frozenset(_text(x) for x in v) for k, v in data["needs"].items()}
            if set(needs) != names or any(not v <= names for v in needs.values()) \
                    or any(r not in names for s in steps for r in (*s.redo, *((s.of,) if s.of else ()))):
                raise PlanError("the steps' needs name steps the plan does not have")
            plan = cls(_text(data["slug"]), tuple(steps), needs, tuple(_text(x) for x in data["inputs"]))
            plan.prepare("scalar")  # every expression is written through the whitelist and compiled here: validated
            return plan
        except (KeyError, TypeError, IndexError, AttributeError, SyntaxError, RecursionError, MemoryError) as err:
            raise PlanError(f"malformed plan ({type(err).__name__})") from None


def _text(x: object) -> str:
    if not isinstance(x, str) or len(x) > 2000:
        raise PlanError("expected a string")
    return x


def _call(f: Callable[..., Any], args: Sequence[str], values: Mapping[str, float | Missing]) -> float | Missing:
    """`f` at the values of `args`: a float (nan where the arithmetic is undefined), or the first Missing it cannot do without."""
    vals = [values[a] for a in args]
    missing = [v for v in vals if isinstance(v, Missing)]
    if missing:
        vals = [ABSENT if isinstance(v, Missing) else v for v in vals]
    try:
        v = f(*vals)
    except AbsentError:
        v = ABSENT
    except (ZeroDivisionError, ValueError, TypeError):
        return math.nan
    except OverflowError:
        return OVERFLOW
    if v is ABSENT:
        return sorted(missing, key=lambda m: m.reason)[0]
    if isinstance(v, complex):
        return math.nan
    return float(v)


def _floats(values: Mapping[str, Number | Missing], args: Sequence[str]) -> dict[str, float | Missing]:
    """The values of `args` in float64 (a step the exact code cannot compute is computed in floats throughout)."""
    return {a: float(values[a]) if isinstance(values[a], Fraction) else values[a] for a in args}


def _call_exact(f: Callable[..., Any], args: Sequence[str], values: Mapping[str, Number | Missing]) -> Fraction | Missing | None:
    """`f`, code over Fractions, at the values of `args`: a Fraction, the first Missing it cannot do without, or None where
    the exact code cannot say (a value that is a float, a zero denominator, no branch holding) and float code decides."""
    vals = [values[a] for a in args]
    if any(isinstance(v, float) for v in vals):
        return None
    missing = [v for v in vals if isinstance(v, Missing)]
    if missing:
        vals = [ABSENT if isinstance(v, Missing) else v for v in vals]
    try:
        v = f(*vals)
    except (ArithmeticError, TypeError, ValueError):  # InexactError, AbsentError, a zero denominator: the float code says
        return None
    if v is ABSENT:
        return sorted(missing, key=lambda m: m.reason)[0]
    if isinstance(v, bool) or not isinstance(v, Fraction | int):
        return None
    return Fraction(v)


class _Overflow(float):
    """An overflow in the arithmetic (a power of a power): a value out of range, not an undefined one (it reads as inf)."""


OVERFLOW = _Overflow("inf")


def in_domain(s: PlanStep, v: Number) -> Number | Missing:
    """The value, or Missing when it is not finite (or, for a closed form or a step with a `none` reason, not positive) or out of range."""
    if isinstance(v, Fraction):
        finite = True
        in_range = v == 0 or _EXACT_LIMIT_LOW <= abs(v) <= _EXACT_LIMIT
    else:
        finite = math.isfinite(v)
        in_range = v == 0 or 1 / VALUE_LIMIT <= abs(v) <= VALUE_LIMIT
    if v is OVERFLOW or (finite and not in_range):
        return Missing("none", out_of_range(s.name, s.unit))
    if s.rule in ("solve", "positive"):
        if not finite or not v > 0:
            return Missing("none", s.none, prose=s.prose)
    elif not finite:
        if s.rule == "finite_named":
            return Missing("none", s.none, prose=s.prose)
        return Missing("none", f"{s.name} is undefined here (a zero denominator)")
    return v


__all__ = ["CHECK_TOLERANCE", "VALUE_LIMIT", "VALUE_LIMIT_EXPONENT", "Missing", "Plan", "PlanStep", "out_of_range"]

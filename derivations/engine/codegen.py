"""Code generation: exprjson data (`derivations.engine.exprjson`) written as Python source and compiled against a whitelisted
namespace, for the numeric plan (`derivations.engine.numeric`) and the exact evaluation (`derivations.engine.sheet`).

`expression_source` writes one expression from the validated node list, never from stored code: scalar floats (one
context: a sheet's table row, a claim, a plot mark), numpy arrays (a sweep, a curve), or Fractions (`exact`: the Rational
sympy's substitution gives; `MIXED`: float code inside a floor, a ceiling or a comparison). `compile_functions` turns the
text into functions in memory, each run against its namespace of helpers (below: scalar, numpy, exact), with no builtins
beyond `abs` and `float`.

A missing value is `ABSENT` inside the compiled code: a zero factor absorbs it and everything else passes it on.
Floats carry noise a Rational does not: 8 experts come out 7.999999999999999. A floor or a ceiling snaps a value
within `SNAP` (relative) of a whole number to it before rounding, so a count is the count the exact evaluation gives.

This module imports neither sympy nor pint: a plan read from the cache compiles without them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

#: A floor or ceiling of a value this close (relatively) to a whole number takes that whole number: float noise, not a fraction.
SNAP = 1e-9


class AbsentError(ArithmeticError):
    """A missing value decided a comparison or a branch: the step cannot do without it."""


class _Absent:
    """A missing value inside compiled code: absorbed by a zero factor, passed on by everything else."""

    __slots__ = ()
    __array_ufunc__ = None  # numpy hands every operation with an array to the methods below
    __array_priority__ = 1000

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        raise AbsentError("a missing value decides a branch")

    def __float__(self) -> float:
        raise AbsentError("a missing value read as a number")

    def _same(self, *_: object) -> _Absent:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __neg__ = __pos__ = __abs__ = _same
    __lt__ = __le__ = __gt__ = __ge__ = _same
    __truediv__ = _same

    def __eq__(self, other: object) -> Any:  # a relational on a missing value is itself missing
        return self

    def __ne__(self, other: object) -> Any:
        return self

    __hash__ = object.__hash__

    def __mul__(self, other: object) -> Any:
        return _zero_like(other) if _is_zero(other) else self

    __rmul__ = __mul__

    def __rtruediv__(self, other: object) -> Any:  # 0 / x is 0 for a positive x
        return _zero_like(other) if _is_zero(other) else self

    def __pow__(self, other: object) -> Any:  # x**0 is 1
        return _one_like(other) if _is_zero(other) else self

    def __rpow__(self, other: object) -> Any:  # 1**x is 1, 0**x is 0 for a positive x
        if _is_one(other):
            return _one_like(other)
        return _zero_like(other) if _is_zero(other) else self


ABSENT = _Absent()


def _is_zero(x: object) -> bool:
    if isinstance(x, _Absent):
        return False
    if isinstance(x, float | int | Fraction):
        return x == 0
    try:
        import numpy as np

        return bool(np.all(np.asarray(x) == 0))
    except (TypeError, ValueError):
        return False


def _is_one(x: object) -> bool:
    if isinstance(x, float | int | Fraction):
        return x == 1
    if isinstance(x, _Absent):
        return False
    import numpy as np

    return bool(np.all(np.asarray(x) == 1))


def _zero_like(x: object) -> Any:
    if isinstance(x, Fraction):  # exact code (Plan.evaluate with exact=True): a zero stays exact
        return Fraction(0)
    return 0.0 if isinstance(x, float | int) else x * 0.0  # an array keeps its shape


def _one_like(x: object) -> Any:
    if isinstance(x, Fraction):
        return Fraction(1)
    return 1.0 if isinstance(x, float | int) else x * 0.0 + 1.0


# --- the generated code's helpers, scalar and numpy -----------------------------------------------------------------


def _snap(x: float) -> float:
    r = round(x)
    return float(r) if abs(x - r) <= SNAP * max(1.0, abs(x)) else x


def _s_ceiling(x: Any) -> Any:
    return x if isinstance(x, _Absent) else float(math.ceil(_snap(x)))


def _s_floor(x: Any) -> Any:
    return x if isinstance(x, _Absent) else float(math.floor(_snap(x)))


def _s_max(*args: Any) -> Any:
    if any(isinstance(a, _Absent) for a in args):
        return ABSENT
    if any(a != a for a in args):  # sympy's Max of a nan is nan; Python's max would skip it by its position
        return math.nan
    return max(args)


def _s_min(*args: Any) -> Any:
    if any(isinstance(a, _Absent) for a in args):
        return ABSENT
    if any(a != a for a in args):
        return math.nan
    return min(args)


def _s_argmax(*args: Any) -> Any:
    if any(isinstance(a, _Absent) for a in args):
        return ABSENT
    return float(max(range(len(args)), key=lambda i: (args[i], -i)))


def _s_pick(index: Any, *values: Any) -> Any:
    if isinstance(index, _Absent):
        return ABSENT
    if index != index or not 0 <= round(index) < len(values):
        return math.nan  # no such position (a draft length past the list): no value, the step's own reason
    return values[round(index)]


def _s_log(x: Any) -> Any:
    return x if isinstance(x, _Absent) else math.log(x)


def _s_exp(x: Any) -> Any:
    if isinstance(x, _Absent):
        return x
    try:
        return math.exp(x)
    except OverflowError:  # inf, as numpy's: min(x, exp(1000)) is x, exactly as well; a value that stays inf is out of range
        return math.inf


def _undefined() -> float:
    raise ZeroDivisionError("complex infinity")


SCALAR_NAMESPACE: dict[str, Any] = {
    "_ceiling": _s_ceiling, "_floor": _s_floor, "_max": _s_max, "_min": _s_min, "_argmax": _s_argmax, "_pick": _s_pick,
    "_log": _s_log, "_exp": _s_exp, "_undefined": _undefined, "NAN": math.nan, "INF": math.inf, "PI": math.pi, "EULER": math.e,
    "__builtins__": {"abs": abs, "float": float},
}


def numpy_namespace() -> dict[str, Any]:
    """The helpers of the numpy code (imported on first use: a single context needs no numpy)."""
    import numpy as np

    def snap(x: Any) -> Any:
        r = np.round(x)
        return np.where(np.abs(x - r) <= SNAP * np.maximum(1.0, np.abs(x)), r, x)

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def g(*args: Any) -> Any:
            return ABSENT if any(isinstance(a, _Absent) for a in args) else f(*args)
        return g

    def argmax(*args: Any) -> Any:
        return np.argmax(np.stack(np.broadcast_arrays(*args)), axis=0).astype(float)

    def pick(index: Any, *values: Any) -> Any:
        if isinstance(index, _Absent):
            return ABSENT
        shape = np.broadcast(*[np.asarray(a, dtype=float) for a in (index, *values) if not isinstance(a, _Absent)]).shape
        at = np.broadcast_to(np.asarray(np.round(index), dtype=int), shape)
        out = np.full(shape, np.nan)
        for k, v in enumerate(values):
            if (at == k).any():
                if isinstance(v, _Absent):
                    return ABSENT
                out = np.where(at == k, v, out)
        return out

    def piecewise(*args: Any) -> Any:
        """(e1, c1, e2, c2, ...): the first expression whose condition holds, element by element; nan where none does."""
        exprs, conds = args[0::2], args[1::2]
        if any(isinstance(a, _Absent) for a in conds):
            return ABSENT
        out = np.full(np.broadcast(*[np.asarray(a, dtype=float) if not isinstance(a, _Absent) else 0.0 for a in args]).shape, np.nan)
        taken = np.zeros(out.shape, dtype=bool)
        for e, c in zip(exprs, conds, strict=True):
            c = np.broadcast_to(np.asarray(c, dtype=bool), out.shape)
            now = c & ~taken
            if now.any():
                if isinstance(e, _Absent):
                    return ABSENT
                out = np.where(now, np.broadcast_to(np.asarray(e, dtype=float), out.shape), out)
            taken |= c
        return out

    def logical(f: Callable[..., Any]) -> Callable[..., Any]:
        def g(*args: Any) -> Any:
            if any(isinstance(a, _Absent) for a in args):
                return ABSENT
            out = args[0]
            for a in args[1:]:
                out = f(out, a)
            return out
        return g

    return {
        "_ceiling": wrap(lambda x: np.ceil(snap(x))), "_floor": wrap(lambda x: np.floor(snap(x))),
        "_max": wrap(lambda *a: np.maximum.reduce(np.broadcast_arrays(*[np.asarray(x, dtype=float) for x in a]))),
        "_min": wrap(lambda *a: np.minimum.reduce(np.broadcast_arrays(*[np.asarray(x, dtype=float) for x in a]))),
        "_argmax": wrap(argmax), "_pick": pick, "_log": wrap(np.log), "_exp": wrap(np.exp),
        "_undefined": lambda: np.inf, "NAN": np.nan, "INF": np.inf, "PI": np.pi, "EULER": np.e,
        "_piecewise": piecewise, "_and": logical(np.logical_and), "_or": logical(np.logical_or),
        "_not": wrap(np.logical_not), "_ite": lambda c, a, b: piecewise(a, c, b, True),
        "__builtins__": {"abs": abs, "float": float},
    }


# --- code generation from exprjson data ----------------------------------------------------------------------------

class PlanError(ValueError):
    """A plan document (derivations.engine.numeric) or an expression that is not the format written here (for the cache: a miss)."""


_BINARY = {"Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=", "Eq": "==", "Ne": "!="}
_FUNCTIONS = {"ceiling": "_ceiling", "floor": "_floor", "Max": "_max", "Min": "_min", "log": "_log", "exp": "_exp", "Abs": "abs"}
_PROJECT = {"ArgMax": "_argmax", "Pick": "_pick"}
_NUMBER_TAGS = ("Integer", "Rational", "Float")


def _literal(node: list[Any]) -> tuple[str, float | int]:
    """A number's literal in float code. A whole number or a ratio beyond float64's range is +-INF there (a user's
    `((1e3)**64)**2`): the step's value is then out of range, as the exact evaluation finds it, never a crash."""
    tag = node[0]
    try:
        if tag == "Integer":
            n = int(node[1])
            if abs(n) < 2**53:
                return repr(n), n
            x = _beyond_range(lambda: float(n), n)
        elif tag == "Rational":
            p, q = int(node[1]), int(node[2])
            x = _beyond_range(lambda: p / q, p * q)
        else:
            x = float(node[1])
    except (ValueError, TypeError, OverflowError, IndexError, ZeroDivisionError):
        raise PlanError(f"{tag}: not a number") from None
    if math.isnan(x):
        raise PlanError(f"{tag}: not a number (NaN)")
    return ("INF" if x > 0 else "(-INF)") if math.isinf(x) else repr(x), x


def _beyond_range(convert: Callable[[], float], sign: int) -> float:
    """convert(), or an infinity of `sign`'s sign where the number is beyond float64's range."""
    try:
        return convert()
    except OverflowError:
        return math.inf if sign > 0 else -math.inf


def expression_source(doc: Mapping[str, Any], names: Mapping[str, str], numpy: bool, exact: bool | str = False) -> str:
    """A Python expression for an exprjson document; `names` maps each symbol's name to its variable in the code.

    Only the tags below are written; anything else is a PlanError. Symbols must be in `names`. With `exact` the code
    computes in `fractions.Fraction` (EXACT_NAMESPACE): only what stays rational is written (no float literal, no
    constant such as pi, no log or exp; a power whose exponent is not a whole literal is exact where its value is
    rational, `_x_pow`); anything else is a PlanError. With `exact=MIXED`, float code may sit inside a floor, a ceiling
    or a comparison (`_mixed_source`).
    """
    nodes = doc.get("nodes") if isinstance(doc, Mapping) else None
    root = doc.get("root") if isinstance(doc, Mapping) else None
    if not isinstance(nodes, list) or not nodes or isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < len(nodes):
        raise PlanError("expected an exprjson document")
    if exact == MIXED:
        return _mixed_source(nodes, root, names)
    text: list[str] = []
    values: list[float | int | None] = []
    for i, node in enumerate(nodes):
        tag = _tag(i, node)
        value: float | int | None = None
        if tag in _NUMBER_TAGS:
            src, value = _exact_literal(node) if exact else _literal(node)
        elif tag == "Symbol":
            src = _symbol(i, node, names)
        elif exact and tag in _CONSTANTS and tag not in ("true", "false"):
            raise PlanError(f"node {i}: {tag} is not a rational number")
        elif tag in _CONSTANTS:
            src = _CONSTANTS[tag]
        else:
            refs = _children(i, node, tag)
            kids = [text[r] for r in refs]
            src = _exact_operator(tag, node, refs, kids, values) if exact else _operator(tag, node, refs, kids, values, numpy)
        text.append(src)
        values.append(value)
    return text[root]


#: the constants code writes, by exprjson tag
_CONSTANTS = {"nan": "NAN", "oo": "INF", "-oo": "(-INF)", "zoo": "_undefined()", "pi": "PI", "E": "EULER", "true": "True", "false": "False"}


def _tag(i: int, node: object) -> str:
    if not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise PlanError(f"node {i}: expected [TAG, ...]")
    return node[0]


def _symbol(i: int, node: list[Any], names: Mapping[str, str]) -> str:
    if len(node) < 2 or node[1] not in names:
        raise PlanError(f"node {i}: a symbol the step does not read")
    return names[node[1]]


def _children(i: int, node: list[Any], tag: str) -> list[int]:
    """The node's children: indices of earlier nodes (a Function's come after its name)."""
    refs = node[2 if tag == "Function" else 1:]
    if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < i for r in refs):
        raise PlanError(f"node {i}: children are indices of earlier nodes")
    return refs


#: `expression_source`'s mode for a sheet's own steps (Plan.evaluate with exact=True): Fractions where the step is rational,
#: and float64 inside a floor or ceiling, or a comparison, whose argument is not (ceiling(log(n)/log(2)) is a whole number).
MIXED = "mixed"


def _mixed_source(nodes: list[Any], root: int, names: Mapping[str, str]) -> str:
    """The exact code of MIXED mode: each node is written twice, as float code (its symbols read as floats) and, where it
    stays rational, as exact code; a floor or ceiling of float code is a whole Fraction again (`_x_ceiling_f`), a comparison
    of float code a bool, a case split of branches some of which are float code exact where the branch taken is exact. A root
    that is float code only is a PlanError (the step is computed in floats)."""
    exact: list[str | None] = []
    floats: list[str] = []
    values: list[float | int | None] = []
    for i, node in enumerate(nodes):
        tag = _tag(i, node)
        value: float | int | None = None
        ex: str | None
        if tag in _NUMBER_TAGS:
            fl, value = _literal(node)
            ex = _exact_literal(node)[0] if tag != "Float" else None
        elif tag == "Symbol":
            ex = _symbol(i, node, names)
            fl = f"_fl({ex})"
        elif tag in _CONSTANTS:
            fl = _CONSTANTS[tag]
            ex = {"nan": "_x_none()", "true": "True", "false": "False"}.get(tag)
        else:
            refs = _children(i, node, tag)
            fl = _operator(tag, node, refs, [floats[r] for r in refs], values, False)
            kids = [exact[r] for r in refs]
            either = [exact[r] if exact[r] is not None else floats[r] for r in refs]
            if tag in ("ceiling", "floor") and len(kids) == 1 and kids[0] is None:
                ex = f"_x_{tag}_f({floats[refs[0]]})"
            elif tag in _BINARY or tag in ("And", "Or", "Not"):  # a truth value, however its sides are computed
                sides = kids if all(k is not None for k in kids) else [floats[r] for r in refs]
                ex = _operator(tag, node, refs, sides, values, False)  # type: ignore[arg-type]
            elif tag == "Piecewise" and kids and len(kids) % 2 == 0:
                ex = "_x_none()"
                for k in range(len(kids) - 2, -1, -2):
                    ex = f"({kids[k] if kids[k] is not None else '_x_inexact()'} if {either[k + 1]} else {ex})"
            elif tag == "ITE" and len(kids) == 3:
                ex = f"({kids[1] or '_x_inexact()'} if {either[0]} else {kids[2] or '_x_inexact()'})"
            elif any(k is None for k in kids):
                ex = None
            else:
                try:
                    ex = _exact_operator(tag, node, refs, kids, values)  # type: ignore[arg-type]
                except PlanError:
                    ex = None
        exact.append(ex)
        floats.append(fl)
        values.append(value)
    if exact[root] is None:
        raise PlanError("the expression is not rational code")
    return exact[root]


def _operator(tag: str, node: list[Any], refs: list[int], kids: list[str], values: list[float | int | None], numpy: bool) -> str:
    if tag == "Add" and kids:
        return "(" + " + ".join(kids) + ")"
    if tag == "Mul" and kids:
        return "(" + " * ".join(kids) + ")"
    if tag == "Pow" and len(kids) == 2:
        exponent = values[refs[1]]
        if exponent == -1:
            return f"(1.0 / {kids[0]})"
        return f"({kids[0]} ** {kids[1]})"
    if tag in _FUNCTIONS and kids:
        return f"{_FUNCTIONS[tag]}({', '.join(kids)})"
    if tag == "Function" and len(node) > 1 and node[1] in _PROJECT and kids:
        return f"{_PROJECT[node[1]]}({', '.join(kids)})"
    if tag in _BINARY and len(kids) == 2:
        return f"({kids[0]} {_BINARY[tag]} {kids[1]})"
    if tag == "Piecewise" and kids and len(kids) % 2 == 0:
        if numpy:
            return f"_piecewise({', '.join(kids)})"
        out = "NAN"
        for k in range(len(kids) - 2, -1, -2):
            out = f"({kids[k]} if {kids[k + 1]} else {out})"
        return out
    if tag in ("And", "Or") and len(kids) >= 2:
        return f"_{tag.lower()}({', '.join(kids)})" if numpy else "(" + f" {tag.lower()} ".join(kids) + ")"
    if tag == "Not" and len(kids) == 1:
        return f"_not({kids[0]})" if numpy else f"(not {kids[0]})"
    if tag == "ITE" and len(kids) == 3:
        return f"_ite({kids[0]}, {kids[1]}, {kids[2]})" if numpy else f"({kids[1]} if {kids[0]} else {kids[2]})"
    raise PlanError(f"cannot compile a {tag[:40]} node")


def _exact_literal(node: list[Any]) -> tuple[str, int | None]:
    tag = node[0]
    try:
        if tag == "Integer":
            n = int(node[1])
            return f"_F({n})", n
        if tag == "Rational":
            return f"_F({int(node[1])}, {int(node[2])})", None
    except (ValueError, TypeError, IndexError):
        raise PlanError(f"{tag}: not a number") from None
    raise PlanError(f"{tag}: not a rational number")


def _exact_operator(tag: str, node: list[Any], refs: list[int], kids: list[str], values: list[float | int | None]) -> str:
    if tag == "Pow" and len(kids) == 2:
        exponent = values[refs[1]]
        if isinstance(exponent, int) and abs(exponent) <= EXACT_MAX_EXPONENT:
            return f"(_F(1) / {kids[0]})" if exponent == -1 else f"({kids[0]} ** {exponent})"
        return f"_x_pow({kids[0]}, {kids[1]})"  # a symbol or a fraction in the exponent: exact where the power is rational
    if tag in ("log", "exp"):
        raise PlanError(f"{tag} is not rational")
    if tag == "Piecewise" and kids and len(kids) % 2 == 0:  # the first branch that holds; none holding has no value
        out = "_x_none()"
        for k in range(len(kids) - 2, -1, -2):
            out = f"({kids[k]} if {kids[k + 1]} else {out})"
        return out
    if tag in _EXACT_FUNCTIONS and kids:
        return f"{_EXACT_FUNCTIONS[tag]}({', '.join(kids)})"
    if tag == "Function" and len(node) > 1 and node[1] in _PROJECT and kids:
        return f"{_EXACT_PROJECT[node[1]]}({', '.join(kids)})"
    return _operator(tag, node, refs, kids, values, False)


#: The largest whole exponent the exact code raises to (sympy's exact evaluation goes as far: derivations.engine.sheet).
EXACT_MAX_EXPONENT = 512


class InexactError(ArithmeticError):
    """The exact code met a value that is not a rational number (a branch with no value, a float): sympy evaluates it."""


def _x_rational(x: Any) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return Fraction(x)
    raise InexactError("not a rational number")


def _x_pow(base: Any, exponent: Any) -> Any:
    """`base ** exponent` where it is a rational number that sympy's substitution gives exactly: a base of 1, or of 0 to a
    positive exponent; a whole exponent up to EXACT_MAX_EXPONENT, or p/q where base is the q-th power of a rational
    (sqrt(9/4) = 3/2); else InexactError."""
    if isinstance(base, _Absent) or isinstance(exponent, _Absent):
        return base ** exponent  # x**0 is 1, 1**x is 1 (_Absent's own rules); else missing
    b, e = _x_rational(base), _x_rational(exponent)
    if b == 1 or (b == 0 and e > 0):  # whatever the exponent (a dense model's (1 - 1/1)^(B q)): as the exact evaluation has it
        return b
    if abs(e.numerator) > EXACT_MAX_EXPONENT * e.denominator:
        raise InexactError("an exponent beyond the exact range")
    if e.denominator == 1:
        return b ** e.numerator
    if b < 0:
        raise InexactError("a root of a negative number")
    root = Fraction(_int_root(b.numerator, e.denominator), _int_root(b.denominator, e.denominator))
    if root ** e.denominator != b:
        raise InexactError("an irrational power")
    return root ** e.numerator


def _int_root(n: int, k: int) -> int:
    """The whole k-th root of n where there is one (else a number whose k-th power is not n)."""
    if n < 2:
        return n
    if k >= n.bit_length():  # 2**k > n: no whole root but 1, and 1**k is not n (a huge denominator of the exponent, checked in no time)
        return 1
    r = round(n ** (1.0 / k)) if n.bit_length() < 1000 else 1 << (n.bit_length() // k)
    for _ in range(200):  # Newton's method from the float guess, on integers
        nxt = ((k - 1) * r + n // r ** (k - 1)) // k
        if nxt >= r:
            break
        r = nxt
    for c in (r - 1, r, r + 1):
        if c > 0 and c ** k == n:
            return c
    return r


def _absent(args: Sequence[Any]) -> bool:
    """Whether a missing value is among `args` (the function is then missing too, as in the float code)."""
    return any(isinstance(a, _Absent) for a in args)


def _x_none() -> Fraction:
    raise InexactError("no branch holds")


def _x_inexact() -> Fraction:
    raise InexactError("the branch taken is not rational")


def _x_ceiling(x: Any) -> Any:
    return x if isinstance(x, _Absent) else Fraction(math.ceil(_x_rational(x)))


def _x_floor(x: Any) -> Any:
    return x if isinstance(x, _Absent) else Fraction(math.floor(_x_rational(x)))


def _x_ceiling_f(x: Any) -> Any:
    """The ceiling of a float (MIXED code): the whole number, snapped as the float code snaps (SNAP)."""
    return x if isinstance(x, _Absent) else Fraction(math.ceil(_snap(x)))


def _x_floor_f(x: Any) -> Any:
    return x if isinstance(x, _Absent) else Fraction(math.floor(_snap(x)))


def _x_max(*args: Any) -> Any:
    return ABSENT if _absent(args) else max(_x_rational(a) for a in args)


def _x_min(*args: Any) -> Any:
    return ABSENT if _absent(args) else min(_x_rational(a) for a in args)


def _x_abs(x: Any) -> Any:
    return x if isinstance(x, _Absent) else abs(_x_rational(x))


def _x_argmax(*args: Any) -> Any:
    if _absent(args):
        return ABSENT
    values = [_x_rational(a) for a in args]
    return Fraction(max(range(len(values)), key=lambda i: (values[i], -i)))  # the first on a tie, as primitives.ArgMax


def _fl(x: Any) -> Any:
    """A value read by float code inside MIXED code: a Fraction as a float; a missing value as it is."""
    return float(x) if isinstance(x, Fraction | int) and not isinstance(x, bool) else x


def _x_pick(index: Any, *values: Any) -> Any:
    if isinstance(index, _Absent):
        return ABSENT
    k = _x_rational(index)
    if k.denominator != 1 or not 0 <= k < len(values):
        raise InexactError("no such position")
    return values[int(k)]


_EXACT_FUNCTIONS = {"ceiling": "_x_ceiling", "floor": "_x_floor", "Max": "_x_max", "Min": "_x_min", "Abs": "_x_abs"}
_EXACT_PROJECT = {"ArgMax": "_x_argmax", "Pick": "_x_pick"}
EXACT_NAMESPACE: dict[str, Any] = {
    "_F": Fraction, "_x_ceiling": _x_ceiling, "_x_floor": _x_floor, "_x_max": _x_max, "_x_min": _x_min, "_x_abs": _x_abs,
    "_x_argmax": _x_argmax, "_x_pick": _x_pick, "_x_none": _x_none, "_x_pow": _x_pow, "__builtins__": {},
}
#: MIXED code: the exact helpers, the float code's, and the bridges between them
MIXED_NAMESPACE: dict[str, Any] = {**SCALAR_NAMESPACE, **EXACT_NAMESPACE, "_x_inexact": _x_inexact, "_x_ceiling_f": _x_ceiling_f,
                                   "_x_floor_f": _x_floor_f, "_fl": _fl, "__builtins__": SCALAR_NAMESPACE["__builtins__"]}


def compile_function(doc: Mapping[str, Any], args: Sequence[str], numpy: bool, exact: bool | str = False) -> Callable[..., Any]:
    """The function of `args` (in order) that an exprjson document computes, as generated, compiled Python (with `exact`,
    in Fractions: `expression_source`)."""
    return compile_functions([(doc, args)], numpy, exact, refuse=True)[0]  # type: ignore[return-value]


def compile_functions(items: Sequence[tuple[Mapping[str, Any], Sequence[str]]], numpy: bool, exact: bool | str = False,
                      refuse: bool = False) -> list[Callable[..., Any] | None]:
    """`compile_function` for many documents at once (one `compile` of one module: a plan's steps compile in a fraction of
    the time one call each takes); an expression the mode cannot write is None, or with `refuse` its PlanError."""
    src, out = [], []
    for i, (doc, args) in enumerate(items):
        names = {a: f"a{k}" for k, a in enumerate(args)}
        try:
            body = expression_source(doc, names, numpy, exact)
        except (PlanError, RecursionError):
            if refuse:
                raise
            out.append(None)
            continue
        src.append(f"def f{i}({', '.join(names.values())}):\n    return {body}\n")
        out.append(i)
    namespace = dict(MIXED_NAMESPACE if exact == MIXED else EXACT_NAMESPACE if exact else numpy_namespace() if numpy else SCALAR_NAMESPACE)
    exec(compile("".join(src), "<roofline numeric plan>", "exec"), namespace)  # the source is generated above from whitelisted nodes
    return [None if i is None else namespace[f"f{i}"] for i in out]



__all__ = ["ABSENT", "EXACT_MAX_EXPONENT", "MIXED", "SNAP", "AbsentError", "InexactError", "PlanError", "compile_function", "compile_functions",
           "expression_source"]

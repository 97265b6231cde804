"""Sympy expressions as JSON data that loading cannot execute: a whitelist of node types, both ways.

The solve cache stores closed forms on disk, where another process (or
another user, on a shared machine) could put a file; issue 25 will store
compiled forms the same way. A pickle runs whatever it holds when it is
loaded, so entries are this format instead: `dumps` writes an expression as a
list of nodes, and `loads` builds only the node types below, from plain
numbers and names, and refuses anything else (`RefusedError`). Nothing here calls
`eval`, `sympify`, `pickle` or any constructor named by the data: every type
is looked up in `NODES` or, for the project's own functions, in
`PROJECT_FUNCTIONS`.

The document: `{"exprjson": VERSION, "nodes": [NODE, ...], "root": INDEX}`.
Each node is a list `[TAG, ...]` whose children are indices of earlier nodes
(so a shared subexpression is written once and the reader needs no
recursion); the last is usually the root. Tags:

- numbers: `["Integer", "123"]`, `["Rational", "p", "q"]` (decimal strings),
  `["Float", "1.25", PREC]` (the decimal that reads back to the same binary
  value, and the binary precision); constants `["nan"]`, `["oo"]`, `["-oo"]`,
  `["zoo"]`, `["pi"]`, `["E"]`, `["true"]`, `["false"]`;
- `["Symbol", NAME, {ASSUMPTION: BOOL, ...}]` with the assumptions it was made
  with (a symbol's identity in sympy: `x` positive is not `x`);
- operators and functions over child indices: `Add`, `Mul`, `Pow`, `Max`,
  `Min`, `Abs`, `ceiling`, `floor`, `log`, `exp`, `Piecewise` (children in
  expression, condition pairs), the relationals `Eq`, `Ne`, `Lt`, `Le`, `Gt`,
  `Ge`, the logic `And`, `Or`, `Not`, `ITE` (which sympy writes in a nested Piecewise's conditions), and `["Function", NAME, ...]` for the
  project's own functions (`PROJECT_FUNCTIONS`: derivations.physics.primitives'
  ArgMax and Pick).

Every node is rebuilt with `evaluate=False`, so `loads(dumps(e)) == e`
structurally (tests/derivations/engine/test_exprjson.py checks it for every
expression of every shipped sheet).
"""

from __future__ import annotations

import importlib
import json
import math
from typing import Any

import mpmath
import sympy as sp
from sympy.core.assumptions import _assume_defined

#: bump when the format changes (an older reader refuses a newer document, and the cache keys change with it)
VERSION = 1
#: Most nodes one document may hold (the largest expansion of a shipped step has about 3,000 distinct nodes).
MAX_NODES = 200_000
#: Longest decimal string of an Integer, a Rational's part or a Float (Python refuses to read integers past 4,300 digits).
MAX_DIGITS = 4000
#: Why a Float is neither written nor read: the numeric plan evaluates in float64, where it would be infinity (or NaN).
FLOAT_OUT_OF_RANGE = "Float: out of range (a float64 reads it as infinity)"
#: Largest binary precision of a Float (sympy's default is 53; the sheets evaluate at up to 80 decimal digits, about 270 bits).
MAX_FLOAT_PRECISION = 4096
#: Longest symbol name and function-name text.
MAX_NAME = 100
#: The project's own sympy functions, by name: the only functions `["Function", NAME, ...]` may name.
PROJECT_FUNCTIONS = ("ArgMax", "Pick")


class RefusedError(ValueError):
    """An expression `dumps` cannot write, or a document `loads` will not read (for the cache: a miss)."""


_CONSTANTS: dict[str, sp.Basic] = {"nan": sp.nan, "oo": sp.oo, "-oo": -sp.oo, "zoo": sp.zoo, "pi": sp.pi, "E": sp.E,
                                    "true": sp.true, "false": sp.false}
_RELATIONALS: dict[str, type] = {"Eq": sp.Equality, "Ne": sp.Unequality, "Lt": sp.StrictLessThan, "Le": sp.LessThan,
                                 "Gt": sp.StrictGreaterThan, "Ge": sp.GreaterThan}
#: tag -> (sympy class, fewest children, most children or None for any)
NODES: dict[str, tuple[type, int, int | None]] = {
    "Add": (sp.Add, 2, None), "Mul": (sp.Mul, 2, None), "Pow": (sp.Pow, 2, 2), "Max": (sp.Max, 2, None), "Min": (sp.Min, 2, None),
    "Abs": (sp.Abs, 1, 1), "ceiling": (sp.ceiling, 1, 1), "floor": (sp.floor, 1, 1), "log": (sp.log, 1, 1), "exp": (sp.exp, 1, 1),
    "And": (sp.And, 2, None), "Or": (sp.Or, 2, None), "Not": (sp.Not, 1, 1), "ITE": (sp.ITE, 3, 3),
    **{tag: (cls, 2, 2) for tag, cls in _RELATIONALS.items()},
}
_TAG_OF: dict[type, str] = {cls: tag for tag, (cls, _, _) in NODES.items()}


def project_functions() -> dict[str, type]:
    """PROJECT_FUNCTIONS, looked up in derivations.physics.primitives (each must be a sympy Function class defined there)."""
    primitives = importlib.import_module("..physics.primitives", __package__)
    out = {}
    for name in PROJECT_FUNCTIONS:
        cls = getattr(primitives, name, None)
        if not (isinstance(cls, type) and issubclass(cls, sp.Function) and cls.__module__ == primitives.__name__):
            raise RefusedError(f"derivations.physics.primitives has no sympy function {name}")
        out[name] = cls
    return out


# --- writing --------------------------------------------------------------------------------------------

def _float_text(f: sp.Float) -> tuple[str, int]:
    prec = f._prec
    return mpmath.libmp.to_str(f._mpf_, mpmath.libmp.repr_dps(prec)), prec


def _node(e: sp.Basic, index: dict[sp.Basic, int], functions: dict[str, type]) -> list[Any]:
    """One node's list, its children already written (their indices in `index`)."""
    if e.is_Integer:
        return ["Integer", str(int(e))]
    if e.is_Rational:
        return ["Rational", str(int(e.p)), str(int(e.q))]
    if e.is_Float:
        if not math.isfinite(float(e)):  # what the reader refuses is never written (exp(710.0) is past a float64)
            raise RefusedError(FLOAT_OUT_OF_RANGE)
        text, prec = _float_text(e)
        return ["Float", text, prec]
    for tag, const in _CONSTANTS.items():
        if e is const:
            return [tag]
    if type(e) is sp.Symbol:
        orig = getattr(e, "_assumptions_orig", None)
        if orig is None:  # older sympy: the facts it holds, which build the same symbol
            orig = {k: v for k, v in e.assumptions0.items() if v is not None}
        return ["Symbol", e.name, {str(k): bool(v) for k, v in sorted(orig.items())}]
    if isinstance(e, sp.Piecewise):
        return ["Piecewise", *(index[x] for pair in e.args for x in pair.args)]
    kids = [index[a] for a in e.args]
    tag = _TAG_OF.get(type(e))
    if tag is not None:
        return [tag, *kids]
    name = type(e).__name__
    if name in functions and type(e) is functions[name]:
        return ["Function", name, *kids]
    raise RefusedError(f"cannot write a {name} node (not in derivations.engine.exprjson's whitelist)")


def dump(expr: sp.Basic) -> dict[str, Any]:
    """`expr` as the JSON-ready document (see the module docstring); RefusedError for a node type outside the whitelist."""
    if not isinstance(expr, sp.Basic):
        raise RefusedError(f"expected a sympy expression, found {type(expr).__name__}")
    functions = project_functions()
    index: dict[sp.Basic, int] = {}
    nodes: list[list[Any]] = []
    stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
    while stack:
        e, ready = stack.pop()
        if e in index:
            continue
        children = [x for pair in e.args for x in pair.args] if isinstance(e, sp.Piecewise) else list(e.args)
        if not ready and any(c not in index for c in children):
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(children) if c not in index)
            continue
        index[e] = len(nodes)
        nodes.append(_node(e, index, functions))
        if len(nodes) > MAX_NODES:
            raise RefusedError(f"more than {MAX_NODES:,} distinct nodes")
    return {"exprjson": VERSION, "nodes": nodes, "root": index[expr]}


def dumps(expr: sp.Basic) -> str:
    """`expr` as compact JSON text."""
    return json.dumps(dump(expr), separators=(",", ":"), ensure_ascii=True)


# --- reading --------------------------------------------------------------------------------------------

def _digits(text: object, what: str) -> int:
    if not isinstance(text, str) or not 0 < len(text) <= MAX_DIGITS or not text.lstrip("-").isdigit() or text.startswith("+"):
        raise RefusedError(f"{what}: expected a decimal integer string of at most {MAX_DIGITS} digits")
    return int(text)


def _symbol(node: list[Any]) -> sp.Symbol:
    if len(node) != 3 or not isinstance(node[1], str) or not 0 < len(node[1]) <= MAX_NAME or not isinstance(node[2], dict):
        raise RefusedError("Symbol: expected [\"Symbol\", NAME, {ASSUMPTION: BOOL}]")
    facts = node[2]
    for k, v in facts.items():
        if k not in _assume_defined or not isinstance(v, bool):
            raise RefusedError(f"Symbol: unknown assumption {str(k)[:40]!r}")
    try:
        return sp.Symbol(node[1], **facts)
    except (ValueError, TypeError) as err:  # inconsistent assumptions (positive and negative)
        raise RefusedError(f"Symbol: {err}") from None


def _number(node: list[Any]) -> sp.Basic:
    tag = node[0]
    if tag == "Integer":
        if len(node) != 2:
            raise RefusedError("Integer: expected [\"Integer\", DIGITS]")
        return sp.Integer(_digits(node[1], "Integer"))
    if tag == "Rational":
        if len(node) != 3:
            raise RefusedError("Rational: expected [\"Rational\", P, Q]")
        p, q = _digits(node[1], "Rational"), _digits(node[2], "Rational")
        if q <= 0:
            raise RefusedError("Rational: the denominator must be positive")
        return sp.Rational(p, q)
    if len(node) != 3 or not isinstance(node[1], str) or len(node[1]) > MAX_DIGITS + 20 or isinstance(node[2], bool) \
            or not isinstance(node[2], int) or not 1 <= node[2] <= MAX_FLOAT_PRECISION:
        raise RefusedError("Float: expected [\"Float\", DECIMAL, PRECISION]")
    if not all(c in "0123456789.-+e" for c in node[1]):
        raise RefusedError("Float: expected a decimal number")
    try:
        value = sp.Float(node[1], precision=node[2])
    except (ValueError, TypeError):
        raise RefusedError("Float: not a decimal number") from None
    if not value.is_finite or not math.isfinite(float(value)):
        raise RefusedError(FLOAT_OUT_OF_RANGE)
    return value


def _build(tag: str, node: list[Any], built: list[sp.Basic], i: int, functions: dict[str, type]) -> sp.Basic:
    if tag in _CONSTANTS:
        if len(node) != 1:
            raise RefusedError(f"{tag}: takes nothing")
        return _CONSTANTS[tag]
    if tag in ("Integer", "Rational", "Float"):
        return _number(node)
    if tag == "Symbol":
        return _symbol(node)
    start = 2 if tag == "Function" else 1
    if tag == "Function" and (len(node) < 2 or node[1] not in functions):
        raise RefusedError(f"Function: not one of the project's functions ({', '.join(PROJECT_FUNCTIONS)})")
    refs = node[start:]
    if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < i for r in refs):
        raise RefusedError(f"{tag}: children are indices of earlier nodes")
    args = [built[r] for r in refs]
    if tag == "Function":
        return functions[node[1]](*args, evaluate=False)
    if tag == "Piecewise":
        if not args or len(args) % 2:
            raise RefusedError("Piecewise: children come in (expression, condition) pairs")
        pairs = [(args[k], args[k + 1]) for k in range(0, len(args), 2)]
        return sp.Piecewise(*pairs, evaluate=False)
    spec = NODES.get(tag)
    if spec is None:
        raise RefusedError(f"unknown node type {str(tag)[:40]!r}")
    cls, fewest, most = spec
    if len(args) < fewest or (most is not None and len(args) > most):
        raise RefusedError(f"{tag}: wrong number of children ({len(args)})")
    return cls(*args, evaluate=False)


def load(doc: object) -> sp.Basic:
    """The expression a document (as `json.loads` gives it) describes; RefusedError for anything outside the format."""
    if not isinstance(doc, dict) or set(doc) != {"exprjson", "nodes", "root"}:
        raise RefusedError("expected {\"exprjson\", \"nodes\", \"root\"}")
    if doc["exprjson"] != VERSION or isinstance(doc["exprjson"], bool):
        raise RefusedError(f"expected format version {VERSION}, found {str(doc['exprjson'])[:20]}")
    nodes, root = doc["nodes"], doc["root"]
    if not isinstance(nodes, list) or not 0 < len(nodes) <= MAX_NODES:
        raise RefusedError(f"expected 1 to {MAX_NODES:,} nodes")
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < len(nodes):
        raise RefusedError("the root is not a node")
    functions = project_functions()
    built: list[sp.Basic] = []
    for i, node in enumerate(nodes):
        if not isinstance(node, list) or not node or not isinstance(node[0], str):
            raise RefusedError(f"node {i}: expected [TAG, ...]")
        try:
            built.append(_build(node[0], node, built, i, functions))
        except RefusedError:
            raise
        except (ValueError, TypeError, AttributeError, ArithmeticError, RecursionError) as err:
            raise RefusedError(f"node {i} ({node[0][:20]}): sympy could not build it ({type(err).__name__})") from None
    return built[root]


def loads(text: str | bytes) -> sp.Basic:
    """The expression a JSON text describes; RefusedError for malformed JSON or anything outside the format."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise RefusedError("not JSON") from None
    return load(doc)


__all__ = ["MAX_NODES", "PROJECT_FUNCTIONS", "VERSION", "RefusedError", "dump", "dumps", "load", "loads"]

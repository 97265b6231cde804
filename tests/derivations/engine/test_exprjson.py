"""derivations.engine.exprjson: sympy expressions as data that loading cannot execute, read back as the same expressions.

The round trip is checked on every expression of every shipped sheet (each step's own expression, solved roots included,
and its expansion) and as a property over expressions built from the whitelist; the reader refuses anything else.
"""

from __future__ import annotations

import json
import math

import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine import exprjson
from roofline.derivations.physics import validation
from roofline.derivations.physics.primitives import ArgMax, Pick
from roofline.derivations.questions.registry import DERIVATIONS
from sympy.core.evalf import PrecisionExhausted


def test_every_shipped_expression_round_trips():
    """Every step of every shipped sheet (and of the validation step model): its expression and its expansion."""
    count = 0
    for d in (*DERIVATIONS, validation.STEP_MODEL):
        for e in (*(s.expr for s in d.steps), *d.expanded.values()):
            back = exprjson.loads(exprjson.dumps(e))
            assert back == e, (d.slug, str(e)[:80])
            count += 1
    assert count > 1000


def test_symbols_keep_their_assumptions_and_floats_their_bits():
    x = sp.Symbol("x", positive=True)
    assert exprjson.loads(exprjson.dumps(x)) == x != sp.Symbol("x")
    f = sp.Float("0.1", 40) * x + sp.Float(1 / 3)
    back = exprjson.loads(exprjson.dumps(f))
    assert back == f and [a._mpf_ for a in back.atoms(sp.Float)] == [a._mpf_ for a in f.atoms(sp.Float)]


_X, _Y = sp.Symbol("x", positive=True), sp.Symbol("y", nonnegative=True, integer=True)
_LEAVES = st.one_of(st.sampled_from([_X, _Y, sp.Symbol("z"), sp.pi, sp.E]),
                    st.integers(-10**30, 10**30).map(sp.Integer),
                    st.fractions(max_denominator=10**6).map(lambda f: sp.Rational(f.numerator, f.denominator)),
                    st.floats(allow_nan=False, allow_infinity=False, width=64).map(sp.Float))
def _safe(build):
    """A node builder for the strategy: its first operand where sympy itself refuses the combination (a NaN or zoo compared;
    a floor, ceiling or comparison of a float and pi so close that evalf cannot tell their sign: PrecisionExhausted)."""
    def make(args):
        try:
            return build(*args)
        except (TypeError, ValueError, ZeroDivisionError, PrecisionExhausted):
            return args[0]
    return make


def _pair(build):
    return lambda inner: st.tuples(inner, inner).map(_safe(build))


_EXPRS = st.recursive(_LEAVES, lambda inner: st.one_of(
    _pair(lambda a, b: sp.Add(a, b, evaluate=False))(inner),
    _pair(lambda a, b: sp.Mul(a, b, evaluate=False))(inner),
    st.tuples(inner, st.sampled_from([2, -1, sp.Rational(1, 2), sp.Rational(-3, 7)])).map(_safe(lambda a, k: sp.Pow(a, k, evaluate=False))),
    _pair(lambda a, b: sp.Max(a, b, evaluate=False))(inner),
    _pair(lambda a, b: sp.Min(a, b, evaluate=False))(inner),
    st.tuples(st.sampled_from([sp.ceiling, sp.floor, sp.log, sp.exp, sp.Abs]), inner).map(_safe(lambda f, a: f(a, evaluate=False))),
    _pair(lambda a, b: sp.Piecewise((a, sp.Lt(a, b, evaluate=False)), (b, True), evaluate=False))(inner),
    _pair(lambda a, b: ArgMax(a, b, evaluate=False))(inner),
    _pair(lambda a, b: Pick(ArgMax(a, b, evaluate=False), a, b, evaluate=False))(inner),
), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(_EXPRS)
@example(sp.Mul(sp.exp(sp.Float(710.0)), _X, evaluate=False))  # exp(710.0) evaluates past a float64: refused both ways
def test_any_whitelisted_expression_round_trips(e):
    if any(not math.isfinite(float(f)) for f in e.atoms(sp.Float)):
        with pytest.raises(exprjson.RefusedError, match="out of range"):
            exprjson.dumps(e)
        return
    assert exprjson.loads(exprjson.dumps(e)) == e


def _doc(*nodes, root=None):
    return json.dumps({"exprjson": exprjson.VERSION, "nodes": list(nodes), "root": len(nodes) - 1 if root is None else root})


#: (id, document, what the refusal says): each a file someone could put in the cache
REFUSED = [
    ("not-json", "{", "not JSON"),
    ("a-pickle", b"\x80\x04\x95\x1e\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94.", "not JSON"),
    ("wrong-version", json.dumps({"exprjson": 99, "nodes": [["Integer", "1"]], "root": 0}), "format version"),
    ("extra-key", json.dumps({"exprjson": 1, "nodes": [["Integer", "1"]], "root": 0, "code": "x"}), "expected"),
    ("unknown-node", _doc(["Integer", "1"], ["__import__", 0]), "unknown node type"),
    ("a-function-outside-the-project", _doc(["Integer", "1"], ["Function", "system", 0]), "not one of the project's functions"),
    ("forward-reference", _doc(["Add", 1, 1], ["Integer", "1"], root=0), "children are indices of earlier nodes"),
    ("self-reference", _doc(["Integer", "1"], ["Add", 1, 0]), "children are indices of earlier nodes"),
    ("boolean-index", _doc(["Integer", "1"], ["Add", True, 0]), "children are indices of earlier nodes"),
    ("huge-integer", _doc(["Integer", "9" * (exprjson.MAX_DIGITS + 1)]), "decimal integer string"),
    ("integer-as-expression", _doc(["Integer", "__import__('os')"]), "decimal integer string"),
    ("float-as-expression", _doc(["Float", "1e3; import os", 53]), "Float: expected a decimal number"),
    ("float-precision-huge", _doc(["Float", "1.0", 10**9]), "Float: expected"),
    ("unknown-assumption", _doc(["Symbol", "x", {"__class__": True}]), "unknown assumption"),
    ("inconsistent-assumptions", _doc(["Symbol", "x", {"positive": True, "negative": True}]), "Symbol: "),
    ("zero-denominator", _doc(["Rational", "1", "0"]), "denominator must be positive"),
    ("no-nodes", json.dumps({"exprjson": 1, "nodes": [], "root": 0}), "nodes"),
    ("too-many-nodes", json.dumps({"exprjson": 1, "nodes": [["Integer", "1"]] * (exprjson.MAX_NODES + 1), "root": 0}), "nodes"),
    ("odd-piecewise", _doc(["Integer", "1"], ["Piecewise", 0]), "pairs"),
    ("add-of-one", _doc(["Integer", "1"], ["Add", 0]), "wrong number of children"),
]


@pytest.mark.parametrize(("case", "doc", "message"), REFUSED, ids=[c[0] for c in REFUSED])
def test_the_reader_refuses_anything_outside_the_format(case, doc, message):
    with pytest.raises(exprjson.RefusedError, match=message.replace("(", r"\(").replace(")", r"\)")):
        exprjson.loads(doc)


@pytest.mark.parametrize("expr", [sp.Dummy("d"), sp.Function("f")(sp.Symbol("x")), sp.LambertW(sp.Symbol("x")), sp.Matrix([1])])
def test_the_writer_refuses_nodes_outside_the_whitelist(expr):
    with pytest.raises(exprjson.RefusedError):
        exprjson.dumps(expr)

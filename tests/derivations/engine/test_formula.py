"""The formula language: the whitelist, the limits, unit errors with a caret, solving, and fuzzing."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine import formula as fm
from roofline.derivations.physics import glossary as gl
from roofline.units import UnitMismatchError

# --- the whitelist: every refused construct gives its own one-line message ---------------------------------------

REFUSED = [
    ("os.system", "attribute access"),
    ("P_active.real", "attribute access"),
    ("__import__('os').system('ls')", "attribute access"),
    ("x[0]", "subscripts"),
    ("T[1:2]", "subscripts"),
    ("lambda: 1", "lambda"),
    ("[T for T in T]", "comprehensions"),
    ("{T for T in T}", "comprehensions"),
    ("(T for T in T)", "comprehensions"),
    ("{T: T for T in T}", "comprehensions"),
    ("'abc'", "strings"),
    ("b'abc'", "not a number"),
    ("f'{T}'", "f-strings"),
    ("T == T", "comparisons"),
    ("T < beta", "comparisons"),
    ("T and T", "boolean operators"),
    ("T if T else T", "conditional expressions"),
    ("(T, T)", "tuples"),
    ("[T]", "lists"),
    ("{T}", "sets"),
    ("{T: T}", "dicts"),
    ("(x := T)", "assignment expressions"),
    ("max(*T)", "starred"),
    ("max(T, key=T)", "keyword arguments"),
    ("eval('1')", "calls to 'eval'"),
    ("open('/etc/passwd')", "calls to 'open'"),
    ("T(1)", "calls to 'T'"),
    ("T // 2", "floor division"),
    ("T % 2", "modulo"),
    ("T @ T", "matrix product"),
    ("T ^ 2", "bitwise xor"),
    ("T | T", "bitwise or"),
    ("T & T", "bitwise and"),
    ("T << 2", "shift"),
    ("~T", "~ is not allowed"),
    ("not T", "not is not allowed"),
    ("1j", "complex"),
    ("True", "not a number"),
    ("None", "not a number"),
    ("...", "not a number"),
    ("max", "is a function"),
    ("T**T", "exponent must be a constant"),
    ("T**beta", "exponent must be a constant"),
    ("x = 1", "not a formula"),
    ("import os", "not a formula"),
    ("T +", "not a formula"),
    ("T\n+ T", "one line of ASCII"),
    ("T\x00", "one line of ASCII"),
    ("", "empty formula"),
]


@pytest.mark.parametrize(("text", "what"), REFUSED)
def test_every_refused_construct_has_its_message(text, what):
    with pytest.raises(fm.FormulaError) as err:
        fm.parse(text)
    assert what in err.value.message
    lines = str(err.value).splitlines()
    assert lines[0].startswith("formula: ") and what in lines[0]
    assert len(lines) in (1, 3)  # the message, then the formula and its caret where there is a place to point at


def test_caret_sits_under_the_offending_part():
    with pytest.raises(fm.FormulaError) as err:
        fm.parse("P_active*b_w/beta + T*x.y")
    _, echo, caret = str(err.value).splitlines()
    start = caret.index("^")
    assert echo[start:start + caret.count("^")] == "x.y"


def test_unknown_name_suggests_the_glossary_names():
    with pytest.raises(fm.UnknownNameError) as err:
        fm.parse("P_act*b_w/beta")
    assert "P_active" in err.value.message and "did you mean" in err.value.message
    caret = str(err.value).splitlines()[2]
    assert caret.strip() == "^" * len("P_act")


def test_unknown_name_is_not_a_python_builtin():
    for name in ("abs", "pow", "sum", "len", "print", "__builtins__", "globals"):
        with pytest.raises(fm.UnknownNameError):
            fm.parse(f"{name} + T")


def test_unit_mismatch_names_both_sides_and_their_units():
    with pytest.raises(fm.FormulaUnitError) as err:
        fm.parse("P_active*b_w/beta + B*T")
    msg = err.value.message
    assert "P_active*b_w/beta is in s" in msg and "B*T is in token" in msg
    assert isinstance(err.value, UnitMismatchError) and isinstance(err.value, TypeError)
    caret = str(err.value).splitlines()[2]
    assert caret.strip() == "^" * len("P_active*b_w/beta + B*T")


def test_unit_mismatch_inside_max_and_exp():
    with pytest.raises(fm.FormulaUnitError, match=r"max\(\): T is in token but beta is in B/s"):
        fm.parse("max(T, beta)")
    with pytest.raises(fm.FormulaUnitError, match=r"exp\(\) needs a dimensionless argument but T is in token"):
        fm.parse("exp(T)")
    with pytest.raises(fm.FormulaUnitError, match=r"log\(\) needs a dimensionless"):
        fm.parse("log(beta)")


def test_expected_unit_of_another_dimension_is_refused_and_same_dimension_accepted():
    assert fm.parse("P_active*b_w/beta", expect="ms").unit_text == "s"
    with pytest.raises(fm.FormulaUnitError, match="expected a result in token, but the formula is in s"):
        fm.parse("P_active*b_w/beta", expect="token")


def test_allowed_constructs_build_the_expected_sympy():
    T, q, B = gl.T, gl.q, gl.B
    assert fm.parse("T*2 - T").expr == T
    assert fm.parse("-T + 3*T").expr == 2 * T
    assert fm.parse("(T/q)**(1/2)").expr == sp.sqrt(T / q)
    assert fm.parse("sqrt(T/q)").expr == sp.sqrt(T / q)
    assert fm.parse("0.5*B").expr == sp.Rational(1, 2) * B  # exact: no float
    assert fm.parse("1e3*B").expr == 1000 * B
    assert fm.parse("ceil(T/u_token) + floor(T/u_token) + log(B) + exp(B)").unit_text == "1"
    assert fm.parse("max(T, q, T*B) - min(T, q)").unit_text == "token"
    assert fm.parse("T - T + beta").unit_text == "B/s"  # an exact zero has any unit


def test_declared_symbols_carry_their_units():
    table = fm.symbol_table({"beta_pcie": "B/s", "f_off": "1"})
    f = fm.parse("f_off*B*T*e_kv*b_kv/beta_pcie", table)
    assert f.unit_text == "s"
    assert table["beta_pcie"].latex == r"\beta_{\mathrm{pcie}}"
    with pytest.raises(fm.FormulaError, match="already a glossary symbol"):
        fm.symbol_table({"beta": "B/s"})
    with pytest.raises(fm.FormulaError, match="reserved"):
        fm.symbol_table({"sqrt": "1"})
    with pytest.raises(fm.FormulaError, match="is not one of roofline's units"):
        fm.symbol_table({"x": "furlongs per fortnight"})


# --- limits: nothing can hang ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "what"), [
    ("T+" * 1001 + "T", "characters"),
    ("+".join(["T"] * 600), "more than 500"),
    ("-" * 100 + "T", "nested more than 50"),
    ("(" * 300 + "T" + ")" * 300, "nested"),
    ("T**65", "exponent 65 too large"),
    ("T**(1/65)", "too large"),
    ("((((T**8)**8)**8)**8)**8", "exponents multiply to 32768"),
    ("1e101*T", "power of ten"),
    ("1" * 41, "number too long"),
    ("exp(exp(1))", "exp() inside exp()"),
    ("((9**64)**64)**4", "nested too high"),
    ("-(" * 60 + "T" + ")" * 60, "nested more than 50"),
])
def test_size_limits(text, what):
    start = time.perf_counter()
    with pytest.raises(fm.FormulaError) as err:
        fm.parse(text)
    assert what in str(err.value)
    assert time.perf_counter() - start < 1


def test_a_formula_at_the_limits_is_still_accepted():
    assert fm.parse("(T**8)**8").unit_text == "token^64"
    assert fm.parse("+".join(["T"] * 200)).expr == 200 * gl.T  # a long chain is one level deep, and walked without recursion
    assert fm.parse("*".join(["B"] * 240)).expr == gl.B ** 240


# --- solve: the engine's solver, unit-checked and verified ----------------------------------------------------------

def test_solve_gives_the_ridge_batch_and_verifies_it():
    lhs, rhs = fm.parse("P_active*b_w/beta"), fm.parse("kappa*P_active*B*q/pi")
    sol = fm.solve(lhs, rhs, "B")
    assert sp.simplify(sol.expr - gl.pi * gl.b_w / (gl.beta * gl.kappa * gl.q)) == 0
    assert sol.verified == "symbolic" and str(sol.unit) == "dimensionless"


def test_solve_refuses_sides_in_different_units_and_unknown_targets():
    with pytest.raises(fm.FormulaUnitError, match="differ in unit"):
        fm.solve(fm.parse("P_active*b_w/beta"), fm.parse("T"), "T")
    with pytest.raises(fm.UnknownNameError, match="did you mean T"):
        fm.solve(fm.parse("T/q"), fm.parse("B"), "Tx")
    with pytest.raises(fm.FormulaError, match="does not appear"):
        fm.solve(fm.parse("T/q"), fm.parse("B"), "beta")
    with pytest.raises(fm.FormulaError, match="max, min"):
        fm.solve(fm.parse("max(T, S)/q"), fm.parse("B"), "T")


# --- fuzzing -------------------------------------------------------------------------------------------------------

NAMES = ["T", "S", "q", "B", "beta", "pi", "P_active", "b_w", "e_kv", "b_kv", "kappa", "L", "D"]
UNITS = {n: gl.GLOSSARY[n].unit for n in NAMES}


def _terms() -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(NAMES), st.integers(1, 99).map(str), st.sampled_from(["0.5", "1e3", "2.25"]))

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(inner, st.sampled_from(["2", "-1", "(1/2)", "3"])).map(lambda t: f"({t[0]})**{t[1]}"),
            st.tuples(st.sampled_from(["max", "min"]), inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            st.tuples(st.sampled_from(["sqrt", "ceil", "floor"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
        )

    return st.recursive(leaves, grow, max_leaves=12)


def _unit_or_none(text: str):
    """Ground truth from the grammar, without the parser: the unit, or None when some + - max min mixes units."""
    import ast

    from roofline.units import same_unit, ureg

    def u(node):
        if isinstance(node, ast.Constant):
            return ureg.dimensionless
        if isinstance(node, ast.Name):
            return UNITS[node.id]
        if isinstance(node, ast.UnaryOp):
            return u(node.operand)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                base = u(node.left)
                exponents = {"2": 2, "-1": -1, "1 / 2": Fraction(1, 2), "3": 3}
                return None if base is None else base ** exponents[ast.unparse(node.right)]
            a, b = u(node.left), u(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add | ast.Sub):
                return a if same_unit(a, b) else None
            return a * b if isinstance(node.op, ast.Mult) else a / b
        if isinstance(node, ast.Call):
            args = [u(a) for a in node.args]
            if any(a is None for a in args):
                return None
            if node.func.id in ("max", "min"):
                return args[0] if all(same_unit(args[0], a) for a in args) else None
            return args[0] ** Fraction(1, 2) if node.func.id == "sqrt" else args[0]
        raise AssertionError(node)

    return u(ast.parse(text, mode="eval").body)


def _same_value(a: object, b: object) -> bool:
    """Two sides the parser reads as the same expression ('1' and '(1)**2'): their difference is 0 before units are checked."""
    import ast

    try:
        return bool(fm.parse(ast.unparse(a)).expr == fm.parse(ast.unparse(b)).expr)  # type: ignore[arg-type]
    except Exception:
        return False


def _cancels(text: str) -> bool:
    import ast

    for node in ast.walk(ast.parse(text, mode="eval")):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and (
                ast.dump(node.left) == ast.dump(node.right) or _same_value(node.left, node.right)):
            return True
        if isinstance(node, ast.Call) and len({ast.dump(a) for a in node.args}) < len(node.args):
            return True
    return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_terms())
def test_grammar_formulas_check_when_well_typed_and_raise_the_mismatch_error_when_not(text):
    from roofline.units import same_unit

    want = _unit_or_none(text)
    start = time.perf_counter()
    try:
        f = fm.parse(text)
    except fm.FormulaUnitError:
        assert want is None, f"{text}: refused, but its units agree ({want})"
    except fm.FormulaSyntaxError as err:
        assert "division by zero" in err.message or "negative" in err.message
    else:
        if want is None:
            # accepted although some sum mixes units: only where a term cancels exactly (x - x has any unit) or max(x, x) is x
            assert _cancels(text), f"{text}: accepted with {f.unit_text}, but its units clash"
        else:
            assert same_unit(f.unit, want) or f.expr.is_number, f"{text}: {f.unit_text} vs {want}"
    assert time.perf_counter() - start < 1


ALPHABET = "TSqBbetapi_kvw0123456789.e+-*/()[]{}<>=!%&|^~@,:;'\" \\xj"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(alphabet=ALPHABET, max_size=80), st.text(max_size=40)))
def test_random_strings_raise_only_the_formula_error_and_fast(text):
    start = time.perf_counter()
    try:
        fm.parse(text)
    except fm.FormulaError as err:
        assert str(err).splitlines()[0].startswith("formula: ")
    assert time.perf_counter() - start < 1


def test_parsing_never_executes_anything(tmp_path):
    marker = tmp_path / "ran"
    for text in (f"__import__('os').system('touch {marker}')", f"open('{marker}', 'w')", f"exec(\"open('{marker}', 'w')\")",
                 f"[open('{marker}', 'w') for _ in T]", f"max(open('{marker}', 'w'), T)"):
        with pytest.raises(fm.FormulaSyntaxError):
            fm.parse(text)
    assert not marker.exists()


def test_every_glossary_symbol_parses_and_prints_its_latex():
    from roofline.renderers.printer import latex_math

    names = gl.GLOSSARY.latex_names()
    for info in gl.GLOSSARY:
        f = fm.parse(info.name)
        assert f.unit == info.unit
        assert latex_math(f.expr, names) == info.latex

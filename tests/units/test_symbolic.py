import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.units import UnitMismatchError, check_unit, infer_unit, same_unit, unit, unit_text

P, b, beta, B, pi, q, t = sp.symbols("P b_w beta B pi q t", positive=True)
x = sp.Symbol("x", positive=True)
UNITS = {P: unit("parameter"), b: unit("B/parameter"), beta: unit("B/s"), B: unit("1"), pi: unit("flop/s"),
         q: unit("token"), t: unit("s"), x: unit("1")}


def u(expr):
    return unit_text(infer_unit(expr, UNITS))


def test_mul_and_div():
    assert u(P * b / beta) == "s"


def test_add_of_same_unit():
    assert u(P * b / beta + t) == "s"


def test_add_of_different_units_names_the_subexpression_and_both_units():
    with pytest.raises(UnitMismatchError) as err:
        infer_unit(P * b + beta, UNITS)
    text = str(err.value)
    assert "beta" in text and "B/s" in text and "P*b_w" in text and "B" in text


def test_number_plus_dimensional_fails():
    with pytest.raises(UnitMismatchError):
        infer_unit(P * b + 1, UNITS)


def test_rational_power():
    assert u(sp.sqrt(P * b)) == "B^(1/2)"
    assert u((P * b) ** 2) == "B^2"


def test_symbolic_power_of_dimensional_base_fails():
    with pytest.raises(UnitMismatchError):
        infer_unit((P * b) ** x, UNITS)


def test_max_min():
    assert u(sp.Max(P * b / beta, t)) == "s"
    assert u(sp.Min(P * b / beta, t)) == "s"
    with pytest.raises(UnitMismatchError):
        infer_unit(sp.Max(P * b, t), UNITS)


def test_piecewise_branches_and_conditions():
    assert u(sp.Piecewise((t, P * b / beta > t), (P * b / beta, True))) == "s"
    with pytest.raises(UnitMismatchError):
        infer_unit(sp.Piecewise((t, P > t), (2 * t, True)), UNITS)
    with pytest.raises(UnitMismatchError):
        infer_unit(sp.Piecewise((t, x > 1), (P, True)), UNITS)


def test_ceiling_floor_keep_the_unit():
    assert u(sp.ceiling(q)) == "token"
    assert u(sp.floor(x)) == "1"


def test_dimensionless_functions():
    assert u(sp.log(x)) == "1"
    assert u(sp.exp(B)) == "1"
    with pytest.raises(UnitMismatchError):
        infer_unit(sp.log(t), UNITS)


def test_declared_unit_check():
    check_unit(P * b / t, UNITS, "B/s")
    with pytest.raises(UnitMismatchError, match="must come out in B/s"):
        check_unit(P * b, UNITS, "B/s", what="bandwidth")


def test_same_unit_requires_scale_one():
    assert same_unit(unit("B/s"), unit("byte/second"))
    assert not same_unit(unit("GB/s"), unit("B/s"))


def test_undeclared_symbol_is_an_error():
    with pytest.raises(UnitMismatchError, match="no declared unit"):
        infer_unit(sp.Symbol("zz"), UNITS)


# Expression trees whose unit is known by construction: each leaf carries a
# symbol with a unit; products multiply units; sums only join equal units.
LEAVES = [(P, unit("parameter")), (b, unit("B/parameter")), (beta, unit("B/s")), (pi, unit("flop/s")),
          (q, unit("token")), (t, unit("s")), (B, unit("1"))]


@st.composite
def trees(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        expr, un = draw(st.sampled_from(LEAVES))
        return expr, un
    kind = draw(st.sampled_from(["mul", "div", "pow", "add", "max"]))
    a, ua = draw(trees(depth=depth - 1))
    if kind == "mul":
        c, uc = draw(trees(depth=depth - 1))
        return a * c, ua * uc
    if kind == "div":
        c, uc = draw(trees(depth=depth - 1))
        return a / c, ua / uc
    if kind == "pow":
        n = draw(st.sampled_from([2, 3, -1, sp.Rational(1, 2)]))
        from fractions import Fraction
        return a ** n, ua ** Fraction(int(sp.Rational(n).p), int(sp.Rational(n).q))
    other = draw(st.integers(min_value=2, max_value=9))
    if kind == "add":
        return a + other * a * B, ua
    return sp.Max(a, other * a), ua


@settings(max_examples=150, deadline=None)
@given(trees())
def test_inferred_unit_matches_construction(tree):
    expr, expected = tree
    assert same_unit(infer_unit(expr, UNITS), expected)


@settings(max_examples=80, deadline=None)
@given(trees(), trees())
def test_adding_different_units_always_raises(t1, t2):
    (e1, u1), (e2, u2) = t1, t2
    expr = e1 + e2
    if same_unit(u1, u2) or not isinstance(expr, sp.Add):
        return
    with pytest.raises(UnitMismatchError):
        infer_unit(expr, UNITS)


def test_an_exact_zero_takes_the_unit_of_what_it_is_compared_with():
    t = sp.Symbol("t_zero_test", positive=True)
    units = {t: unit("s")}
    assert same_unit(infer_unit(sp.Max(0, t), units), unit("s"))
    with pytest.raises(UnitMismatchError):
        infer_unit(sp.Max(1, t), units)  # a non-zero plain number is not a time

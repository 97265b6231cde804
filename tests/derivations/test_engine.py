import pytest
import sympy as sp

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.engine import DerivationError, Step, derivation, solve
from derivations.symbols import Symbols
from units import UnitMismatchError


def _d(steps, results=()):
    return derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), steps, results)


def test_a_step_with_the_wrong_unit_names_the_step():
    with pytest.raises(UnitMismatchError, match="step bad"):
        _d((Step("bad", gl.P_active * gl.b_w, "s", "why"),))


def test_a_step_adding_bytes_to_seconds_names_both():
    with pytest.raises(UnitMismatchError, match=r"t_fixed is in s but P_active\*b_w is in B"):
        _d((Step("bad", gl.P_active * gl.b_w + gl.t_fixed, "B", "why"),))


def test_unbound_symbol_is_rejected():
    with pytest.raises(DerivationError, match="neither a glossary symbol"):
        _d((Step("x", sp.Symbol("mystery", positive=True), "1", "why"),))


def test_solve_verifies_and_keeps_the_closed_form():
    t_mem = Step("t_mem", pr.memory_time(pr.weight_bytes()), "s", "w")
    t_cmp = Step("t_cmp", pr.compute_time(pr.gemm_flops()), "s", "c")
    d = _d((t_mem, t_cmp, solve("B_star", t_cmp, t_mem, gl.B, "1", "eq")), ("B_star",))
    star = d.step("B_star")
    assert star.verified == "symbolic"
    assert sp.simplify(star.expr - gl.pi * gl.b_w / (gl.kappa * gl.q * gl.beta)) == 0


def test_solve_for_a_symbol_with_the_wrong_unit():
    t_mem = Step("t_mem", pr.memory_time(pr.weight_bytes()), "s", "w")
    t_cmp = Step("t_cmp", pr.compute_time(pr.gemm_flops()), "s", "c")
    with pytest.raises(UnitMismatchError, match="declared in token"):
        _d((t_mem, t_cmp, solve("B_star", t_cmp, t_mem, gl.B, "token", "eq")))


def test_solve_without_the_variable_fails():
    a = Step("a", gl.t_fixed, "s", "w")
    b = Step("b", 2 * gl.t_fixed, "s", "w")
    with pytest.raises(DerivationError, match="does not appear"):
        _d((a, b, solve("x", a, b, gl.B, "1", "eq")))


def test_headline_must_be_a_step():
    with pytest.raises(DerivationError, match="not steps"):
        _d((Step("a", gl.t_fixed, "s", "w"),), ("nope",))


def test_roofline_time_is_at_least_each_term():
    e = pr.roofline_time(gl.kappa * gl.P_active * gl.B * gl.q, gl.P_active * gl.b_w)
    vals = {gl.kappa: 2, gl.P_active: 10**9, gl.B: 3, gl.q: 1, gl.b_w: 2, gl.pi: 10**15, gl.beta: 3 * 10**12}
    assert e.xreplace(vals) >= (gl.kappa * gl.P_active * gl.B * gl.q / gl.pi).xreplace(vals)
    assert e.xreplace(vals) >= (gl.P_active * gl.b_w / gl.beta).xreplace(vals)

import pytest
import sympy as sp
from roofline.derivations.engine.declare import DerivationError, Step, derivation, solve
from roofline.derivations.engine.symbols import Symbols
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.units import UnitMismatchError


def _d(steps, results=()):
    return derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), steps, results)


def test_a_step_with_the_wrong_unit_names_the_step():
    with pytest.raises(UnitMismatchError, match="step bad"):
        _d((Step("bad", gl.P_active * gl.b_w, "s", "why"),))


def test_a_step_adding_bytes_to_seconds_names_both():
    with pytest.raises(UnitMismatchError, match=r"t_fixed is in s but P_active\*b_w is in B"):
        _d((Step("bad", gl.P_active * gl.b_w + gl.t_fixed, "B", "why"),))


def test_a_steps_latex_may_not_use_the_prose_macro():
    with pytest.raises(DerivationError, match=r"step split: its latex .* uses \\sym"):
        _d((Step("split", gl.P_active / gl.n_tp, "1", "w", latex=r"P/\sym{n_tp}"),))


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


# --- issue 21: the argument, the answer, families, printed closed forms -----------------------------------------------


def _two_steps():
    t_mem = Step("t_mem", pr.memory_time(pr.weight_bytes()), "s", "w")
    t_cmp = Step("t_cmp", pr.compute_time(pr.gemm_flops()), "s", "c")
    return t_mem, t_cmp


def test_the_argument_names_steps_in_order_and_is_about_ten():
    t_mem, t_cmp = _two_steps()
    with pytest.raises(DerivationError, match="not steps"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), (), argument=("t_mem", "nope"))
    with pytest.raises(DerivationError, match="lists the step t_mem after t_cmp, but the derivation computes t_mem first"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), (), argument=("t_cmp", "t_mem"))
    with pytest.raises(DerivationError, match="names the step t_mem twice"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), (), argument=("t_mem", "t_mem"))
    many = tuple(Step(f"s{i}", gl.t_fixed * (i + 1), "s", "w") for i in range(16))
    with pytest.raises(DerivationError, match="about ten"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), many, (), argument=tuple(s.name for s in many))


def test_the_answer_must_mention_every_headline_result():
    t_mem, t_cmp = _two_steps()
    with pytest.raises(DerivationError, match=r"do not mention the headline results \['t_cmp'\]"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), ("t_mem", "t_cmp"), answer=("Memory takes {t_mem}.",))
    d = derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), ("t_mem", "t_cmp"),
                   answer=("Memory takes {t_mem}, compute {t_cmp}.",))
    assert d.answer == ("Memory takes {t_mem}, compute {t_cmp}.",)
    with pytest.raises(DerivationError, match="not a step"):  # placeholders are checked like any prose
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), (), answer=("It takes {t_nope}.",))


def test_body_tables_are_named_by_position_once():
    t_mem, _ = _two_steps()
    with pytest.raises(DerivationError, match="body_tables"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem,), (), body_tables=(0,))


def test_a_step_at_each_value_of_a_parameter_is_a_family():
    from roofline.derivations.engine.declare import at, families

    t_mem, t_cmp = _two_steps()
    each = tuple(at(f"t_cmp_b{b}", t_cmp, {gl.B: b}, f"At batch {b}.", title=f"Compute time at batch {b}") for b in (1, 2, 4))
    lone = at("t_cmp_q2", t_cmp, {gl.q: 2 * gl.u_token}, "Two tokens.", title="Compute time at two tokens")
    assert families((t_mem, t_cmp, *each, lone)) == (("t_cmp_b1", "t_cmp_b2", "t_cmp_b4"),)


def test_the_same_formula_over_parallel_steps_is_a_family_only_with_a_shared_title():
    from roofline.derivations.engine.declare import families

    fl = [Step(f"flops_{k}", gl.kappa * gl.P_active * gl.B * gl.q * (i + 1), "flop", "f") for i, k in enumerate("abc")]
    by = [Step(f"bytes_{k}", gl.P_active * gl.b_w * (i + 1), "B", "b") for i, k in enumerate("abc")]
    shared = [Step(f"intensity_{k}", pr.intensity(f.s, b.s), "flop/B", "i", title=f"Intensity of kernel {k}") for k, f, b in zip("abc", fl, by, strict=True)]
    assert families((*fl, *by, *shared)) == (("intensity_a", "intensity_b", "intensity_c"),)
    unrelated = [Step(f"intensity_{k}", pr.intensity(f.s, b.s), "flop/B", "i", title=t) for k, f, b, t in
                 zip("abc", fl, by, ("GEMM intensity", "Attention intensity", "Router intensity"), strict=True)]
    assert families((*fl, *by, *unrelated)) == ()


def test_printed_closed_forms_equal_the_solvers_and_carry_no_unit_markers():
    """The form a sheet prints is simplified and factored, never the solver's raw output, and is the same function."""
    import random

    from roofline.derivations.engine.declare import UNIT_MARKERS, Solve
    from roofline.derivations.questions.registry import DERIVATIONS

    rng = random.Random(21)
    for d in DERIVATIONS:
        for s in d.steps:
            if not isinstance(s, Solve):
                continue
            assert s.printed is not None and not (s.printed.free_symbols & set(UNIT_MARKERS)), (d.slug, s.name)
            solver = s.expr.xreplace({u: 1 for u in UNIT_MARKERS})
            checked = 0
            for _ in range(20):  # a closed form over a window (min(T, W)) is not real at every random point: its cases compare a root
                point = {x: sp.Rational(rng.randint(1, 999), rng.randint(1, 99)) for x in sorted(solver.free_symbols, key=str)}
                try:
                    a, b = sp.N(s.printed.xreplace(point), 30), sp.N(solver.xreplace(point), 30)
                except TypeError:  # "Invalid comparison of non-real": a case's condition compares a complex root at this point
                    continue
                assert abs(a - b) <= 1e-20 * max(abs(a), abs(b), 1), (d.slug, s.name)
                checked += 1
                if checked == 3:
                    break
            assert checked, (d.slug, s.name, "no random point gave a comparable closed form")


def test_printed_form_factors_a_sum_and_keeps_the_sign_inside():
    from roofline.derivations.engine.declare import printed_form

    a, b, c, x = sp.symbols("a b c x", positive=True)
    e = -(a * x + b * x - c) / (a * b * x + a * c * x)
    shown = printed_form("t", "t", e)
    assert sp.simplify(shown - e) == 0
    assert not shown.could_extract_minus_sign()
    assert len(sp.sstr(shown)) < len(sp.sstr(e))


def test_an_input_that_shadows_a_shared_one_is_named():
    from roofline.derivations.engine.context import Input

    t_mem, t_cmp = _two_steps()
    own = Input("batch", gl.B, "1", "1", "sequences", "count")
    with pytest.raises(DerivationError, match="input batch is declared twice or shadows a shared scenario input"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), (), inputs=(own,))


def test_an_older_name_that_is_another_inputs_name_is_refused():
    """Issue 40: an alias sets exactly one input, so it may be no input's name and no other input's alias."""
    from roofline.derivations.engine.context import Input

    t_mem, t_cmp = _two_steps()
    for aliases in (("context",), ("tp",)):
        own = Input("seqs", gl.B, "1", "1", "sequences", "count", aliases=aliases)
        with pytest.raises(DerivationError, match=f"the older name {aliases[0]} is another input's name or older name"):
            derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (t_mem, t_cmp), (), inputs=(own,))

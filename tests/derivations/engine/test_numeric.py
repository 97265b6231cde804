"""The compiled evaluation (derivations.engine.numeric) against the exact one, its Missing rules, its stored plan and its check."""

from __future__ import annotations

import json
import math

import pytest
import sympy as sp
from roofline.derivations.engine import cache, codegen, numeric, planning
from roofline.derivations.engine.codegen import ABSENT, PlanError, compile_function
from roofline.derivations.engine.numeric import Missing, Plan
from roofline.derivations.engine.planning import make_plan, plan_of
from roofline.derivations.engine.sheet import NumericMismatchError, evaluate_exactly, evaluate_numbers
from roofline.derivations.questions.registry import DERIVATIONS

from roofline import api


def _agree(exact: object, got: object) -> bool:
    if isinstance(exact, Missing) or isinstance(got, Missing):
        return isinstance(exact, Missing) and isinstance(got, Missing) and (exact.kind, exact.reason) == (got.kind, got.reason)
    want = float(exact)  # type: ignore[arg-type]
    return abs(got - want) <= numeric.CHECK_TOLERANCE * max(abs(want), abs(got))  # type: ignore[operator]


def test_every_step_of_every_sheet_agrees_with_the_exact_values(sheets):
    """Every step of every shipped sheet at its defaults: the compiled float equals the exact value (or the same Missing)."""
    for sheet in sheets:
        got = evaluate_numbers(sheet.derivation, sheet.context)
        for st in sheet.steps:
            exact = st.value.missing if st.value.missing else st.value.exact
            assert _agree(exact, got[st.step.name]), f"{sheet.derivation.slug}: {st.step.name}: {exact} exactly, {got[st.step.name]} compiled"


@pytest.mark.parametrize(("slug", "hardware", "model", "inputs"), [
    ("decode-op-ranking", "h100-sxm", "llama-3.1-70b", {}),  # MLA terms n/a, absorbed by a zero factor
    ("batch-knee", "h200", "deepseek-v3", {"context": "131072 token"}),  # MLA and MoE at a long context: closed forms with no root (none)
    ("speculative-decoding", "h100-sxm", "llama-3.1-8b", {"context": "131072 token"}),  # At steps (the drafter, verification)
    ("hardware-upgrade", "a100-sxm-80gb", "mixtral-8x7b", {"tp": "2"}),  # a second chip, experts touched
])
def test_contexts_with_missing_values_agree(slug, hardware, model, inputs):
    d = next(x for x in DERIVATIONS if x.slug == slug)
    ctx = api.context(d, hardware=hardware, model=model, inputs=inputs)
    exact, got = evaluate_exactly(d, ctx), evaluate_numbers(d, ctx)
    assert set(exact) == set(got)
    bad = [n for n in exact if not _agree(exact[n], got[n])]
    assert bad == [], f"{slug}: {[(n, exact[n], got[n]) for n in bad]}"


def _doc(expr_text: str):
    import sympy as sp
    from roofline.derivations.engine import exprjson

    return exprjson.dump(sp.sympify(expr_text, locals={n: sp.Symbol(n, positive=True) for n in "xyz"}))


def test_a_zero_factor_absorbs_a_missing_value_and_nothing_else_does():
    f = compile_function(_doc("x*y + z"), ("x", "y", "z"), numpy=False)
    assert f(0.0, ABSENT, 2.0) == 2.0  # 0 * missing = 0, as sympy's 0*y
    assert f(1.0, ABSENT, 2.0) is ABSENT
    g = compile_function(_doc("Max(x, y)"), ("x", "y"), numpy=False)
    assert g(1.0, ABSENT) is ABSENT
    assert math.isnan(g(math.nan, 1.0))  # sympy's Max of a nan is nan (Python's max would depend on the order)


def test_floor_and_ceiling_snap_float_noise_to_the_whole_number():
    f = compile_function(_doc("ceiling(x)"), ("x",), numpy=False)
    assert f(8.000000000000002) == 8.0  # noise: the exact value is 8
    assert f(8.001) == 9.0
    g = compile_function(_doc("floor(x)"), ("x",), numpy=True)
    import numpy as np

    assert g(np.array([7.999999999999999, 7.5])).tolist() == [8.0, 7.0]


def test_pick_takes_the_value_at_the_argmax_in_both_codes():
    import numpy as np
    import sympy as sp
    from roofline.derivations.engine import exprjson
    from roofline.derivations.physics.primitives import ArgMax, Pick

    x, y, z = (sp.Symbol(n, positive=True) for n in "xyz")
    doc = exprjson.dump(Pick(ArgMax(x, y, evaluate=False), z, 2 * z, evaluate=False))
    f, g = compile_function(doc, ("x", "y", "z"), numpy=False), compile_function(doc, ("x", "y", "z"), numpy=True)
    assert (f(1.0, 3.0, 5.0), f(3.0, 1.0, 5.0), f(ABSENT, 1.0, 5.0)) == (10.0, 5.0, ABSENT)
    assert g(np.array([1.0, 3.0]), np.array([3.0, 1.0]), 5.0).tolist() == [10.0, 5.0]


def test_every_shipped_plan_reads_back_model_limits_signed_steps_included():
    """Regression: a signed step with a reason (model-limits' prediction error, rule "finite_named") made Plan.from_json refuse
    the plan, so it was never read back from the cache (and the light path could not print the sheet)."""
    for d in DERIVATIONS:
        plan = make_plan(d)
        back = Plan.from_json(json.loads(json.dumps(plan.to_json())))
        assert back.to_json() == plan.to_json(), d.slug
        assert [s.rule for s in back.steps] == [s.rule for s in plan.steps], d.slug


def test_a_stored_plan_reads_back_and_evaluates_the_same(sheets):
    sheet = next(s for s in sheets if s.derivation.slug == "speculative-decoding")
    d = sheet.derivation
    plan = make_plan(d)
    back = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    from roofline.derivations.engine.sheet import input_floats

    a = plan.evaluate(input_floats(d, sheet.context, plan.reads(None)))
    b = back.evaluate(input_floats(d, sheet.context, back.reads(None)))
    assert a == b


@pytest.mark.parametrize("tamper", [
    lambda p: p["steps"][0]["expr"]["nodes"].append(["Function", "eval", 0]),  # a function outside the whitelist
    lambda p: p["steps"][0]["expr"]["nodes"].__setitem__(0, ["Symbol", "__import__", {}]),  # a name the step does not read
    lambda p: p["steps"][0]["expr"]["nodes"].__setitem__(0, ["Lambda", 0]),  # an unknown node
    lambda p: p.__setitem__("plan", 999),  # another version
    lambda p: p["steps"][0].__setitem__("rule", "anything"),
])
def test_a_tampered_plan_is_refused(tamper):
    d = next(x for x in DERIVATIONS if x.slug == "decode-floor")
    data = make_plan(d).to_json()
    tamper(data)
    if data["steps"][0]["expr"]["nodes"][-1][0] == "Function":
        data["steps"][0]["expr"]["root"] = len(data["steps"][0]["expr"]["nodes"]) - 1
    with pytest.raises(PlanError):
        Plan.from_json(data)


def test_the_plan_is_cached_as_json_data(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(planning, "_PLANS", {})
    d = next(x for x in DERIVATIONS if x.slug == "decode-floor")
    plan_of(d)
    stored = cache.load_json(planning.plan_key(d), "plan decode-floor")
    assert stored is not None and stored["plan"] == numeric.VERSION and stored["slug"] == "decode-floor"
    monkeypatch.setattr(planning, "_PLANS", {})
    monkeypatch.setattr(planning, "make_plan", lambda d: pytest.fail("the stored plan was not read"))
    assert plan_of(d).slug == "decode-floor"


def test_a_table_whose_compiled_numbers_disagree_fails_loudly(monkeypatch):
    d = next(x for x in DERIVATIONS if x.slug == "decode-floor")
    plan = plan_of(d)
    plan.prepare("scalar")  # compiled now, so the evaluation's own prepare keeps the tampered function below (alone, it replaced it)
    step = plan.by_name["t_floor"]
    f = step.scalar()
    monkeypatch.setattr(step, "_scalar", lambda *a: f(*a) * (1 + 1e-6))
    with pytest.raises(NumericMismatchError, match=r"decode-floor: table .*: t_floor is .* compiled but .* exactly"):
        api.derive("decode-floor", check=True)  # as a build derives it
    assert api.derive("decode-floor").results["t_floor"].missing is None  # a run is the plan's alone: sympy evaluates nothing


# --- the exact code over Fractions (sheet._rational_value): the Rational sympy's substitution gives, or no answer ------


def test_exact_code_is_rational_or_refuses():
    from fractions import Fraction

    f = compile_function(_doc("ceiling(x/3) + Max(x, y)**2 / z"), ("x", "y", "z"), numpy=False, exact=True)
    assert f(Fraction(7), Fraction(5, 2), Fraction(3)) == Fraction(3) + Fraction(49, 3)
    for text in ("log(x)", "x + 0.5", "pi*x"):  # not rational code: sympy evaluates these
        with pytest.raises(PlanError):
            compile_function(_doc(text), ("x", "y"), numpy=False, exact=True)
    # a power whose exponent is a symbol or a fraction is exact where its value is rational, as sympy's substitution is
    power = compile_function(_doc("x**y"), ("x", "y"), numpy=False, exact=True)
    root = compile_function(_doc("sqrt(x)"), ("x",), numpy=False, exact=True)
    assert power(Fraction(2, 3), Fraction(3)) == Fraction(8, 27) and root(Fraction(9, 4)) == Fraction(3, 2)
    for irrational in (lambda: power(Fraction(2), Fraction(1, 2)), lambda: root(Fraction(2)), lambda: power(Fraction(2), Fraction(10**6))):
        with pytest.raises(codegen.InexactError):  # sqrt(2) is not rational; 2**(10**6) is past the exact range: sympy says
            irrational()
    with pytest.raises(ZeroDivisionError):  # sympy's zoo: the caller falls back to sympy
        compile_function(_doc("1/(x - y)"), ("x", "y"), numpy=False, exact=True)(Fraction(2), Fraction(2))
    with pytest.raises(codegen.InexactError):  # a float never enters the exact code
        compile_function(_doc("ceiling(x)"), ("x",), numpy=False, exact=True)(0.5)


@pytest.mark.parametrize("slug", ["decode-floor", "moe-experts", "speculative-decoding", "flash-attention-io"])
def test_every_step_computed_in_fractions_equals_sympys_substitution(slug, sheets):
    """At the sheet's own values, each step the Fraction code computes is the Rational that sympy's substitution gives."""
    from roofline.derivations.engine import sheet as sheet_mod

    s = next(x for x in sheets if x.derivation.slug == slug)
    d = s.derivation
    values = sheet_mod.input_values(d, s.context)
    values.update({sp.Symbol(name, positive=True): v for name, v in evaluate_exactly(d, s.context).items()})
    computed = 0
    for step in s.derivation.steps:
        free = sheet_mod._free_symbols(step.expr)
        known = {x: values[x] for x in free}
        if isinstance(step, sheet_mod.At) or any(isinstance(v, Missing) for v in known.values()):
            continue
        fast = sheet_mod._rational_value(step.expr, known)
        if fast is not None:
            assert fast == sheet_mod._substitute(step.expr, known), step.name
            computed += 1
    assert computed > 10


def test_a_root_of_huge_degree_is_inexact_at_once():
    """Regression: a power whose exponent has a huge denominator (batch-knee's experts at the knee, 3/4 to a knee of denominator
    about 10^9) looked for a whole 10^9-th root by raising candidates to that power: minutes for one value. A root of degree at
    least the bit length of the number is never whole (2**k > n), so it is inexact at once."""
    from fractions import Fraction

    from roofline.derivations.engine.codegen import InexactError, _int_root, _x_pow

    assert _int_root(2**64, 64) == 2 and _int_root(10**30, 3) == 10**10
    assert _int_root(12345, 10**9) ** 1 != 12345
    with pytest.raises(InexactError, match="irrational"):
        _x_pow(Fraction(3, 4), Fraction(7, 10**9))
    assert _x_pow(Fraction(9, 4), Fraction(1, 2)) == Fraction(3, 2)

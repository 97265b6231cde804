"""Grading an answer against a sheet (roofline.grading.compare): each verdict on a known case, equivalence under rewrites, the refusals.

Every expected value here is the sheet's own (evaluated in the context); the slips
are checked by the cause the engine names, not by a typed factor.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine import formula as fm
from roofline.derivations.engine.sheet import evaluate
from roofline.derivations.questions import registry
from roofline.renderers.numbers import plain

from roofline.grading import values as grading
from roofline.grading.answer import context, grade

H100, LLAMA_8B, MIXTRAL = "h100-sxm", "llama-3.1-8b", "mixtral-8x7b"


def _value(slug: str, result: str, **kw) -> sp.Expr:
    d = registry.get(slug)
    return evaluate(d, context(d, kw.get("hardware", H100), kw.get("model", LLAMA_8B), overrides=kw.get("overrides", ())), only=[result])[result]


def _in(value: sp.Expr, unit_text: str, unit: str) -> str:
    """`value` (in the step's unit `unit_text`) written as a number in `unit`, six figures: what a candidate would type."""
    from roofline.units import Quantity

    return f"{float(Quantity(float(value), unit_text).to(unit).magnitude):.6g} {unit}"


def _eta_bw() -> float:
    """The default engine profile's achieved bandwidth fraction (fitted to measurements: it moves with the dataset)."""
    from roofline.derivations.engine.context import DEFAULT_ENGINE

    return float(DEFAULT_ENGINE.values["eta_bw"])


# --- each verdict on a known case ------------------------------------------------------------------------------------

def test_equivalent_as_written():
    v = grade("beta**-1*pi", "ridge-coincidence:ridge_point")
    assert (v.kind, v.scope, v.proof) == ("equivalent", "general", "symbolic")


def test_equivalent_for_the_model_family_names_the_identities():
    v = grade("P_active*b_w/beta", "decode-floor:t_floor", H100, LLAMA_8B)
    assert (v.kind, v.scope) == ("equivalent", "architecture")
    assert {i.symbol.name for i in v.identities} >= {"P_base", "L_moe"}
    gqa = grade("2*L*K*H*b_kv", "decode-floor:kv_bytes_per_token", H100, LLAMA_8B)
    assert gqa.kind == "equivalent" and any(i.family == "GQA attention" for i in gqa.identities)


def test_factor_two_flop_slip_formula_and_number():
    """Counting a multiply-add as one FLOP: half the sheet's FLOPs, and the slip named is kappa's."""
    v = grade("kappa*P_active/2", "flops-per-token:flops_per_token_params")
    assert v.kind == "factor" and v.factor == sp.Rational(1, 2) and v.causes[0].slip.key == "mac-one-flop"
    bare = grade("P_active/u_token", "flops-per-token:flops_per_token_params")
    assert bare.kind == "factor" and bare.implicit is not None and bare.causes[0].slip.key == "mac-one-flop" and bare.causes[0].absent
    half = _value("flops-per-token", "flops_per_token_params") / 2
    n = grade(_in(half, "flop/token", "Gflop/token"), "flops-per-token:flops_per_token_params")
    assert n.kind == "off" and "mac-one-flop" in {c.slip.key for c in n.causes}


def test_missing_kv_term_is_named_by_its_step():
    v = grade("P_active*b_w/(eta_bw*beta)", "decode-floor:t_memory", H100, LLAMA_8B, overrides=["batch=8"])
    assert v.kind == "terms" and not v.extra
    assert [t.step for t in v.missing] == ["kv_bytes_step"] and v.missing[0].title == "KV-cache bytes per step"
    assert v.missing[0].value == pytest.approx(float(_value("decode-floor", "kv_bytes_step", overrides=["batch=8"])) / (_eta_bw() * 3.35e12), rel=1e-9)
    # the number without the cache: the left-out term is named
    without = _value("decode-floor", "t_memory", overrides=["batch=8"]) - v.missing[0].value
    n = grade(_in(without, "s", "ms"), "decode-floor:t_memory", H100, LLAMA_8B, overrides=["batch=8"])
    assert n.kind == "off" and [t.step for t in n.missing] == ["kv_bytes_step"]


def test_extra_terms_name_what_they_add():
    v = grade("P_total*b_w/beta", "decode-floor:t_floor", H100, LLAMA_8B)
    assert v.kind == "terms" and not v.missing
    assert {s.name for t in v.extra for s in t.symbols} == {"P_emb", "P_norm"}
    assert "all-parameters" in {c.slip.key for c in v.causes}


def test_gib_for_gb():
    weights = _value("decode-floor", "weight_bytes")
    in_gib = Fraction(int(weights.p), int(weights.q)) / 2**30  # the bytes counted in GiB, then called GB
    v = grade(f"{float(in_gib):.6g} GB", "decode-floor:weight_bytes", H100, LLAMA_8B)
    assert v.kind == "off" and v.causes[0].slip.key == "binary-prefix"
    f = grade("P_active*b_w/beta*1.073741824", "decode-floor:t_floor", H100, LLAMA_8B)
    assert f.kind == "factor" and f.causes[0].slip.key == "binary-prefix"


def test_ridge_with_a_sparse_peak():
    v = grade("2*pi/beta", "ridge-coincidence:ridge_point", H100)
    assert v.kind == "factor" and v.factor == 2 and v.causes[0].slip.key == "sparse-peak"
    doubled = 2 * _value("ridge-coincidence", "ridge_point")
    n = grade(f"{float(doubled):.4g} flop/B", "ridge-coincidence:ridge_point", H100)
    assert n.kind == "off" and n.causes[0].slip.key == "sparse-peak"


def test_approximation_says_where_it_stops_holding():
    """The dense floor for a MoE model holds at batch 1 (top-k experts) and breaks as the batch touches more experts."""
    v = grade("P_active*b_w/beta", "decode-floor:t_floor", H100, MIXTRAL)
    assert v.kind == "approximation" and abs(v.error) < 1e-12
    batch = [b for b in v.boundaries if b.input.name == "batch" and b.direction == "up"]
    assert batch and batch[0].value == 2 and batch[0].error > 0.1, [(b.input.name, b.direction, b.value, b.error) for b in v.boundaries]
    d = registry.get("decode-floor")
    ctx = context(d, H100, MIXTRAL, overrides=["batch=2"])
    at2 = evaluate(d, ctx, only=["t_floor"])["t_floor"]
    assert float(abs(v.answer_value - at2) / at2) == pytest.approx(batch[0].error, rel=1e-6)


def test_approximation_with_the_roofline_on_one_side():
    v = grade("P_active*b_w/(eta_bw*beta) + B*T*e_kv*b_kv/(eta_bw*beta) + L*t_layer + t_fixed + B*t_seq", "decode-floor:t_step", H100, LLAMA_8B)
    assert v.kind == "approximation"
    assert {(r.step, r.side) for r in v.regimes} == {("t_gemm", "memory"), ("t_attention", "memory")}
    assert any(b.input.name == "tp" and b.value == 2 for b in v.boundaries)


def test_different_unit_says_both_and_what_is_missing():
    v = grade("P_active/beta", "decode-floor:t_floor", H100, LLAMA_8B)
    assert v.kind == "unit" and str(v.answer_unit) != str(v.unit)
    (symbol, power, sub), *_ = v.suggestions
    assert (symbol.name, power, sub.kind) == ("b_w", 1, "equivalent")
    n = grade("16 GB", "decode-floor:t_floor")
    assert n.kind == "unit"


def test_within_tolerance_in_any_prefix():
    value = _value("decode-floor", "t_floor")
    for unit in ("s", "ms", "us", "ns"):
        assert grade(_in(value, "s", unit), "decode-floor:t_floor").kind == "within"


def test_different():
    v = grade("B*T*e_kv*b_kv/beta", "decode-floor:t_floor", H100, LLAMA_8B)
    assert v.kind == "different" and v.error is not None


# --- equivalent forms in other algebra ------------------------------------------------------------------------------

WEIGHTS = ("weight_bytes_gpu", "weight_bytes/n_tp", "b_w*params_read/n_tp", "params_read*b_w/n_tp")
CACHE = ("kv_bytes_step", "B*T*kv_bytes_per_token_gpu", "T*kv_bytes_per_token_gpu*B", "B*T*L*w_c*b_kv*ceil(n_kv/n_tp)")
DENOMINATORS = ("(eta_bw*beta)", "(beta*eta_bw)")


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(w=st.sampled_from(WEIGHTS), kv=st.sampled_from(CACHE), den=st.sampled_from(DENOMINATORS), shape=st.sampled_from(range(5)),
       scale=st.sampled_from(("", "*(2/2)", "*(beta/beta)", "*1000/1e3")))
def test_rewrites_are_equivalent(w, kv, den, shape, scale):
    """Distribution, factoring, reordering and a unit written in other prefixes (1000/1e3) leave t_memory as it is."""
    kv = f"{kv} + kv_bytes_prompt + permute_bytes_gpu"  # the cache the serving step's prompts write, the MoE permutation (both 0 here)
    forms = (f"({w} + {kv})/{den}", f"{w}/{den} + ({kv})/{den}", f"({kv} + {w})/{den}", f"1/eta_bw*({w} + {kv})/beta",
             f"({w})*(1/{den}) + ({kv})/{den}")
    v = grade(forms[shape] + scale, "decode-floor:t_memory", H100, LLAMA_8B)
    assert v.kind == "equivalent" and v.scope in ("general", "architecture")


# --- refusals and bounds ----------------------------------------------------------------------------------------------

def test_unknown_result_lists_the_results():
    with pytest.raises(grading.GradeError, match="its results: weight_bytes, t_floor, tokens_per_s_ceiling"):
        grade("1 ms", "decode-floor:t_flor")


def test_a_formula_outside_the_language_is_refused_as_check_refuses_it():
    with pytest.raises(fm.FormulaSyntaxError) as err:
        grade("__import__('os').system('true')", "decode-floor:t_floor")
    with pytest.raises(fm.FormulaSyntaxError) as direct:
        fm.parse("__import__('os').system('true')")
    assert str(err.value) == str(direct.value)


def test_a_number_without_its_unit_is_refused():
    with pytest.raises(grading.GradeError, match="has no unit"):
        grade("4.5", "decode-floor:t_floor")
    assert grade("8", "ridge-coincidence:B_cross").form == "number"  # a count needs none


def test_every_sympy_operation_is_bounded():
    """The limit interrupts the call: each bounded call returns within its limit and a margin for a loaded machine, far
    short of what the work would take unbounded (a 5 s sleep, a simplify of this size)."""
    start = time.monotonic()
    assert grading.bounded(lambda: time.sleep(5), seconds=0.2) is None
    assert time.monotonic() - start < 2.5
    x = sp.Symbol("x", positive=True)
    huge = sum(sp.sqrt(x + i) ** 3 / (x + i + 1) for i in range(60))
    difference = huge - huge.expand()  # built outside the limit: only the simplify is bounded
    start = time.monotonic()
    assert grading.bounded(sp.simplify, difference, seconds=0.3) in (None, 0)
    assert time.monotonic() - start < 2.5


def test_an_alarm_swallowed_in_a_finalizer_never_reaches_the_hosts_hook(monkeypatch):
    """An alarm that lands in a `__del__` is unraisable: the limit drops its own report, hands any other to the
    host's hook after the clock has stopped, and the next alarm still interrupts the block (CI once failed when an
    alarm landed inside pytest's hook while it formatted such a report)."""
    seen: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    class Broken:
        def __del__(self):
            raise ValueError("a finalizer's own error")

    class Slow:
        def __del__(self):
            time.sleep(2)  # the first alarm lands here

    def work():
        Broken()  # first, long before any alarm: its report is held, never lost
        Slow()
        time.sleep(5)

    start = time.monotonic()
    assert grading.bounded(work, seconds=0.5) is None
    assert time.monotonic() - start < 2.5
    assert [type(r.exc_value) for r in seen] == [ValueError]
    assert sys.unraisablehook == seen.append


def test_identities_hold_for_every_shipped_model():
    """Each identity of a model's families holds at its values: none is skipped for any shipped model."""
    from roofline.specs.catalog import model_names

    d = registry.get("decode-floor")
    for name in model_names():
        ctx = context(d, H100, name)
        families = {"mla" if ctx.model.mla else "gqa", "moe" if ctx.model.moe else "dense", "params"}
        families |= {"attention"} if not ctx.model.recurrent_layers else set()
        families |= {"dense_attention"} if not ctx.model.sparse_layers else set()
        families |= {"formats"} if ctx.weights.uniform is not None else set()  # b_e = b_w: one format throughout
        expected = sum(len(grading.IDENTITIES[f]) for f in families)
        got = [i for i in grading.identities(ctx) if i.family != "the sheets' conventions"]
        assert len(got) == expected, (name, sorted(i.symbol.name for i in got))


def test_verdict_words(capsys):
    from roofline.grading.words import line, render

    v = grade("P_active*b_w/(eta_bw*beta)", "decode-floor:t_memory", overrides=["batch=8"])
    assert line(v).startswith("missing terms against t_memory (memory time): P_active*b_w/(eta_bw*beta) leaves out the KV-cache bytes per step")
    text = render(v, "text")
    assert text.count("\n") > 2 and plain(v.value, v.unit, v.display_unit) in text


def test_a_halved_attention_names_both_slips_that_give_it():
    """The audit defect of issue 40: the causal T/2 of a prefill, used at decode, was named only as multiply-adds counted as one
    FLOP; the two give the same factor on attention, so the verdict names both."""
    v = grade("kappa_attn*L*N*H*T/2", "flops-per-token:attention_flops", H100, LLAMA_8B)
    assert v.kind == "factor" and v.factor == pytest.approx(0.5)
    assert {c.slip.key for c in v.causes} == {"attention-mac-one-flop", "attention-causal-half"}


@pytest.mark.parametrize("text, number", [("2,140 tokens/s", "2140"), ("1,234,567.5 B", "1234567.5"), ("2140 tokens/s", "2140")])
def test_a_number_with_thousands_grouped_as_roofline_prints_it_reads_as_that_number(text, number):
    """An answer copied from a sheet ("2,140 tokens/s", as renderers.numbers.plain prints it) reads as the number, not as a formula."""
    assert grading.is_number(text) and grading.parse_answer(text, fm.parse_unit("B", "t"), "x").magnitude == Fraction(number)


@pytest.mark.parametrize("text", ["12,34 ms", "1,2345 B", ",123 B"])
def test_commas_outside_groups_of_three_are_no_number(text):
    assert not grading.is_number(text)


# --- the numeric walk: a pick, an argmax and a case split in mpmath, a near tie left to sympy's exact evaluation ------

_A, _B, _C, _K = sp.symbols("a b c k", positive=True)
_RATIONALS = st.fractions(min_value=Fraction(1, 1000), max_value=1000, max_denominator=1000)


def _exact(expr: sp.Expr, values: dict[sp.Symbol, sp.Expr]) -> sp.Expr:
    return sp.N(expr.xreplace(values).doit(), grading.DIGITS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=_RATIONALS, b=_RATIONALS, c=_RATIONALS, k=st.integers(1, 3))
def test_the_numeric_walk_reads_a_pick_an_argmax_and_a_case_split_as_sympy_does(a, b, c, k):
    from roofline.derivations.physics.primitives import ArgMax, Pick

    values = {_A: sp.Rational(a.numerator, a.denominator), _B: sp.Rational(b.numerator, b.denominator),
              _C: sp.Rational(c.numerator, c.denominator), _K: sp.Integer(k)}
    best = ArgMax(_A * _B, _B + _C, _A / _C)
    for expr in (best, Pick(best, _A, 2 * _B, _C**2) * _A, Pick(_K - 1, _A, _B, _C) + 1,
                 sp.Piecewise((_A, sp.Eq(_K, 1)), (_B * _C, True)), sp.Piecewise((_A, _B < _C), (_C, True))):
        got = grading.num(expr, values)
        assert got is not None and abs(got - _exact(expr, values)) <= sp.Float(10) ** -30 * max(1, abs(got)), expr


def test_a_tie_the_walk_cannot_tell_from_rounding_is_sympys_exact_first_index():
    from roofline.derivations.physics.primitives import ArgMax

    third = {_A: sp.Rational(1, 3), _B: sp.Integer(1)}
    assert float(grading.num(ArgMax(_A, _B / 3), third)) == 0  # an exact tie: the first
    assert float(grading.num(ArgMax(_B / 3, _A), third)) == 0
    assert float(grading.num(ArgMax(_A, _B / 3 + sp.Rational(1, 10**35)), third)) == 1  # within the walk's rounding: sympy tells them apart
    case = sp.Piecewise((_C, sp.Lt(_A, _B / 3 + sp.Rational(1, 10**35))), (2 * _C, True))
    assert float(grading.num(case, {**third, _C: sp.Integer(5)})) == 5

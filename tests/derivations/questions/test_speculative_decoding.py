"""speculative-decoding: target and drafter from one step model, a draft length per batch.

The issue's properties (speedup at draft length 0 is exactly 1; a
compute-bound target never speeds up more than a memory-bound one), the
closed forms against their definitions (Leviathan et al. 2023's expected
tokens; verification is the shared step at q = k + 1 tokens; the drafter's
step is the shared step of the second model), and one test per claim's number.
"""

from fractions import Fraction
from functools import cache

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine import expansion
from roofline.derivations.engine.declare import At, DerivationError, Step, at, derivation
from roofline.derivations.engine.sheet import Missing, context_values, evaluate_exactly, substitute
from roofline.derivations.engine.symbols import Symbols
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics.primitives import ArgMax, Pick
from roofline.derivations.questions import speculative_decoding as sd_module
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.errors import SpecError
from roofline.units import UnitMismatchError

from roofline import api
from tests.derivations.helpers import HAND_SET, context

SD = BY_SLUG["speculative-decoding"]
DF = BY_SLUG["decode-floor"]
FAST = settings(max_examples=40, deadline=None)
TARGET, DRAFTER = "llama-3.3-70b", "llama-3.2-1b"
DENSE = ("llama-3.1-8b", "llama-3.3-70b", "qwen2.5-72b", "mistral-7b")


def spec(model: str = TARGET, drafter: str = DRAFTER, hardware: str = "h100-sxm", only=("speedup",), **inputs: str) -> dict:
    inputs.setdefault("tp", "8")
    return evaluate_exactly(SD, context(hardware, model, second_model=drafter, **inputs), only)


@FAST
@given(st.sampled_from(DENSE), st.integers(1, 4096), st.integers(1, 131072), st.integers(1, 16),
       st.fractions(Fraction(1, 100), Fraction(1)))
def test_speedup_at_draft_length_zero_is_exactly_one(model, batch, ctx_len, tp, acceptance):
    v = spec(model, batch=str(batch), context=f"{ctx_len} token", tp=str(tp), acceptance=str(float(acceptance)), draft_length="0")
    assert v["speedup"] == 1


def test_speedup_at_draft_length_zero_is_one_for_moe_at_large_batch():
    """MoE steps past 4,096 tokens are evaluated to 40 digits, not exactly; the ratio is still 1 to those digits."""
    v = spec("deepseek-v3", batch="4096", draft_length="0")
    assert abs(float(v["speedup"]) - 1) < 1e-30


@FAST
@given(st.sampled_from((*DENSE, "mixtral-8x7b", "deepseek-v3")), st.integers(1, 4096), st.integers(1, 131072), st.integers(0, 8),
       st.sampled_from(["0.5", "0.8", "0.95", "1"]))
def test_a_compute_bound_target_never_speeds_up_more_than_a_memory_bound_one(model, batch, ctx_len, draft, acceptance):
    """Verification of k + 1 tokens costs at least a plain step; only a memory-bound target gets it for that price."""
    v = spec(model, only=("speedup", "speedup_memory_bound", "t_verify", "t_step"), batch=str(batch), context=f"{ctx_len} token",
             draft_length=str(draft), acceptance=acceptance)
    assert v["t_verify"] >= v["t_step"]
    assert v["speedup"] <= v["speedup_memory_bound"] * (1 + sp.Rational(1, 10**30))  # exact: a float 1 + 1e-30 is 1.0


def test_compute_bound_verification_loses_what_memory_bound_verification_keeps():
    """Llama 3.3 70B on eight H100s, short context: at batch 1 the verification costs nearly a plain step; at batch 1,024 the GEMMs are compute-bound."""
    low = spec(only=("speedup", "speedup_memory_bound"), batch="1", context="1024 token")
    high = spec(only=("speedup", "speedup_memory_bound"), batch="1024", context="1024 token")
    assert float(low["speedup"]) == pytest.approx(float(low["speedup_memory_bound"]), rel=0.01)
    assert high["speedup"] < 1 < high["speedup_memory_bound"]


@FAST
@given(st.fractions(Fraction(1, 100), Fraction(1)), st.integers(0, 16))
def test_expected_tokens_is_the_geometric_sum(acceptance, draft):
    v = spec(only=("expected_tokens",), acceptance=str(float(acceptance)), draft_length=str(draft))
    a = Fraction(str(float(acceptance)))
    assert v["expected_tokens"] == sum(a**i for i in range(draft + 1))


@FAST
@given(st.lists(st.fractions(Fraction(1, 100), Fraction(1)), min_size=1, max_size=8), st.integers(0, 16))
def test_expected_tokens_with_a_rate_per_position(rates, draft):
    """One rate per position: 1 + a1 + a1 a2 + ..., every position past the list at the last rate."""
    text = [str(float(r)) for r in rates]
    names = ["acceptance", *(f"acceptance_{i}" for i in range(2, len(text) + 1))]
    v = spec(only=("expected_tokens",), draft_length=str(draft), **dict(zip(names, text, strict=True)))
    a = [Fraction(t) for t in text]
    rate = [a[min(i, len(a)) - 1] for i in range(1, draft + 1)]
    want, run = Fraction(1), Fraction(1)
    for r in rate:
        run *= r
        want += run
    assert v["expected_tokens"] == want


def test_one_rate_at_every_position_is_the_textbook_closed_form():
    """The per-position count at one rate is Leviathan et al.'s (1 - a^(g+1))/(1 - a), symbolically, at every draft length."""
    from roofline.derivations.physics import primitives as pr
    a = sp.Symbol("a", positive=True)
    for g in sd_module.DRAFT_LENGTHS:
        assert sp.expand(pr.expected_tokens_at((a,), g) * (1 - a) - (1 - a ** (g + 1))) == 0
    with pytest.raises(ValueError):
        pr.expected_tokens_at((), 3)


def test_a_comma_list_sets_one_rate_per_position_and_the_rest_follow():
    listed = api.derive("speculative-decoding", overrides=["acceptance=0.8,0.5", "draft_length=3"])
    by_name = {i.name: i for i in listed.inputs}
    assert by_name["acceptance_2"].is_set and not by_name["acceptance_3"].is_set
    assert by_name["acceptance_3"].value.float == pytest.approx(0.5)
    assert listed.values["expected_tokens"].float == pytest.approx(1 + 0.8 + 0.4 + 0.2)
    with pytest.raises(SpecError, match="at most 8 values, one per draft position"):
        api.derive("speculative-decoding", overrides=["acceptance=" + ",".join(["0.5"] * 9)])
    with pytest.raises(SpecError, match="takes one value here"):
        api.derive("mbu-definition", overrides=["acceptance=0.8,0.5"])
    with pytest.raises(SpecError, match="acceptance_2: expected a fraction"):
        api.derive("speculative-decoding", overrides=["acceptance=0.8,1.5"])


def test_the_drafter_runs_at_the_targets_tensor_parallel_degree_unless_set():
    four = api.derive("speculative-decoding", overrides=["tp=4"])
    tp_draft = next(i for i in four.inputs if i.name == "tp_draft")
    assert tp_draft.value.float == 4 and not tp_draft.is_set
    both = api.derive("speculative-decoding", overrides=["tp=4", "tp_draft=4"])
    assert four.values["t_draft"].float == both.values["t_draft"].float
    assert api.derive("speculative-decoding", overrides=["tp=4", "tp_draft=1"]).values["t_draft"].float != four.values["t_draft"].float


def test_the_mtp_module_is_the_targets_own_layer_and_head():
    """DeepSeek-V3's MTP module: one MoE layer of its shape, eh_proj and two norms; 11.5B parameters besides the shared embedding
    and head (the model card, README_WEIGHTS.md: 11.5B unique), within 1%."""
    from roofline.specs.models import mtp_module
    target = api.model("deepseek-v3")
    mtp = mtp_module(target)
    counts = mtp.param_counts()
    assert mtp.num_layers == 1 and mtp.moe is not None and mtp.moe.moe_layers == (0,)
    D = target.hidden_size
    assert counts.projection == 2 * D * D and counts.embedding == 0 and counts.lm_head == target.param_counts().lm_head
    assert (counts.total - counts.lm_head) == pytest.approx(11.5e9, rel=0.01)
    sheet = api.derive("speculative-decoding", model="deepseek-v3", hardware="h200", second_model="mtp", overrides=["batch=1", "draft_length=1"])
    assert sheet.context.second_model.key == "deepseek-v3:mtp"
    assert 0 < sheet.values["draft_cost_ratio"].float < 0.1
    with pytest.raises(SpecError, match="num_nextn_predict_layers"):
        api.derive("speculative-decoding", second_model="mtp")  # Llama 3.3 70B has none
    with pytest.raises(SpecError, match="num_nextn_predict_layers"):
        api.derive("speculative-decoding", second_model="kimi-k2:mtp")  # its config says 0


def test_an_eagle_head_is_one_layer_of_the_targets_shape_and_its_head():
    from roofline.specs.models import eagle_head
    target = api.model("llama-3.1-8b")
    head = eagle_head(target)
    counts, layer = head.param_counts(), target.param_counts()
    D, L = target.hidden_size, target.num_layers
    assert head.num_layers == 1 and counts.projection == 2 * D * D and counts.lm_head == layer.lm_head and counts.embedding == 0
    assert counts.attention == layer.attention // L and counts.mlp_dense == layer.mlp_dense // L
    rate = float(sd_module.rate_for_length("2.29", 3))
    assert sum(rate**i for i in range(4)) == pytest.approx(2.29, abs=1e-5)
    with pytest.raises(ValueError):
        sd_module.rate_for_length("4.5", 3)
    with pytest.raises(SpecError, match="not a dense transformer"):
        api.derive("speculative-decoding", model="mixtral-8x7b", second_model="eagle")


def test_verification_is_the_shared_step_at_k_plus_one_tokens():
    v = spec(only=("t_verify", "t_draft"), batch="32", draft_length="5")
    plain = evaluate_exactly(DF, context("h100-sxm", TARGET, batch="32", tokens_per_step="6 token", tp="8"), ["t_step"])
    assert v["t_verify"] == plain["t_step"]


@pytest.mark.parametrize("tp_draft", ["1", "8"])
def test_the_drafter_step_is_the_shared_step_of_the_second_model(tp_draft):
    v = spec(only=("t_draft",), batch="16", tp_draft=tp_draft)
    alone = evaluate_exactly(DF, context("h100-sxm", DRAFTER, batch="16", tp=tp_draft), ["t_step"])
    assert v["t_draft"] == alone["t_step"]


@FAST
@given(st.integers(1, 512), st.sampled_from(["1024 token", "8192 token"]), st.sampled_from(["0.6", "0.8", "0.9"]))
def test_best_draft_length_is_the_argmax_of_the_table(batch, ctx_len, acceptance):
    from roofline.derivations.questions.speculative_decoding import DRAFT_LENGTHS

    names = [f"speedup_g{g}" for g in DRAFT_LENGTHS]
    v = spec(only=(*names, "best_draft_length", "best_speedup"), batch=str(batch), context=ctx_len, acceptance=acceptance)
    speedups = [v[n] for n in names]
    best = max(DRAFT_LENGTHS, key=lambda g: (speedups[g], -g))
    assert v["best_speedup"] == speedups[best]
    if best == 0:
        assert isinstance(v["best_draft_length"], Missing) and "do not speculate" in v["best_draft_length"].reason
    else:
        assert v["best_draft_length"] == best


def test_the_table_shifts_with_context():
    """At batch 128 a long context keeps the verification memory-bound, so a longer draft still pays."""
    short = spec(only=("best_draft_length",), batch="128", context="1024 token")
    long = spec(only=("best_draft_length",), batch="128", context="8192 token")
    assert short["best_draft_length"] < long["best_draft_length"]


# --- one test per claim's number (Llama 3.3 70B, TP 8, H100 SXM, Llama 3.2 1B drafter at TP 8), at the default (fitted) engine profile ---

@pytest.mark.parametrize("acceptance, best, low_speedup", [("0.8", 5, 2.270), ("0.7", 4, 1.848)])
def test_claim_triples_at_low_load(acceptance, best, low_speedup):
    v = spec(only=("best_draft_length_low_load", "best_speedup_low_load"), acceptance=acceptance)
    assert v["best_draft_length_low_load"] == best
    assert float(v["best_speedup_low_load"]) == pytest.approx(low_speedup, abs=1e-3)


@pytest.mark.parametrize("ctx_len, ratio", [(1024, 0.7271), (8192, 1.2905)])
def test_claim_costs_a_third_of_peak_throughput(ctx_len, ratio):
    v = spec(only=("peak_throughput_ratio",), context=f"{ctx_len} token")
    assert float(v["peak_throughput_ratio"]) == pytest.approx(ratio, abs=1e-3)


@cache
def default_sheet():
    return api.derive("speculative-decoding")


def test_claim_verdicts_on_the_sheet():
    sheet = default_sheet()
    # the drafter pays the fitted per-layer overhead for its 16 layers: the teaser's numbers fail at the default profile; on the
    # textbook roofline (the ideal profile) the speedup overshoots 3 (3.70) and "a third" holds
    # the two issue-26 claims first: the compute-bound limit is "a third", and at acceptance 0.9 the best length is past 8. With the
    # search past 8, the ideal profile's low-load best is 16 (the speedup still rising), which left on at the peak keeps 0.51 of it:
    # more than "a third" is lost, so the last claim no longer holds within 10%
    # at the refitted profile (t_seq in the step) "a third" at 6 p.m. for short chats holds: the drafter keeps 0.729 of the peak
    # then issue 39's: vLLM's per-position rates give its printed accepted length; three published MTP speedups within 10%
    # (the sheet reads 1.70 against 1.8, 1.58 against 1.63, 1.72 against 1.76); vLLM's EAGLE head at 3 drafted reads 1.82
    # against 1.65, within the claim's 10% of the larger (the head's step is cheaper in the model than in vLLM)
    assert [c.holds for c in sheet.claims] == [True, True, False, False, True, False, False, False] + [True] * 5
    assert sheet.results["speedup"].float == pytest.approx(2.240, abs=1e-3)
    assert sheet.results["best_draft_length"].float == 5


def test_the_best_draft_length_follows_the_batch_at_the_defaults():
    """The sheet's lesson at its defaults: long drafts at low load, shorter ones once the verification's GEMMs turn compute-bound."""
    (table,) = [t for t in default_sheet().tables if t.title.startswith("Speedup by draft length")]
    best = [row[1][-1].float for row in table.rows]
    assert best[0] > best[-1] and len(set(best)) > 1


def test_the_teasers_numbers_at_the_hand_set_inputs():
    """Physics pinned: at the old hand-set inputs (no all-reduce latency) the drafter triples speed at batch 1 and costs a third at 1K."""
    v = spec(only=("best_draft_length_low_load", "best_speedup_low_load"), acceptance="0.8", **HAND_SET)
    assert v["best_draft_length_low_load"] == 8 and float(v["best_speedup_low_load"]) == pytest.approx(3.098, abs=1e-3)
    assert float(spec(only=("peak_throughput_ratio",), context="1024 token", **HAND_SET)["peak_throughput_ratio"]) == pytest.approx(0.6231, abs=1e-3)


def test_the_drafter_is_a_choice():
    eight_b = api.derive("speculative-decoding", second_model="llama-3.1-8b")
    assert eight_b.context.second_model.key == "llama-3.1-8b"
    assert eight_b.results["speedup"].float < default_sheet().results["speedup"].float
    with pytest.raises(SpecError, match="no second model"):
        api.derive("decode-floor", second_model=DRAFTER)


def test_sheet_defaults_are_printed_as_defaults():
    tp = next(i for i in default_sheet().inputs if i.name == "tp")
    assert tp.value.exact == 8 and not tp.is_set


# --- the engine pieces the sheet added: At, sheet defaults, ArgMax ---

def _tiny(*steps: Step, **kw):
    return derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), steps, (), **kw)


def test_at_checks_what_it_replaces():
    t = Step("t", gl.B * gl.q / gl.beta, "token*s/B", "t")
    _tiny(t, at("t2", t, {gl.q: 2 * gl.u_token}, "t at two tokens"))
    with pytest.raises(DerivationError, match="does not depend on T"):
        _tiny(t, at("t2", t, {gl.T: gl.u_token}, "t"))
    with pytest.raises(UnitMismatchError):
        _tiny(t, at("t2", t, {gl.q: sp.Integer(2)}, "t"))


def test_at_evaluates_the_step_again_with_new_inputs():
    t = Step("t", gl.B * gl.q, "token", "t")
    d = _tiny(t, at("t2", t, {gl.B: 3 * gl.B}, "t at three times the batch"))
    assert isinstance(d.step("t2"), At)
    v = evaluate_exactly(d, context(batch="5"))
    assert v["t2"] == 3 * v["t"] == 15


def test_defaults_must_name_an_input_of_the_sheet_within_its_domain():
    t = Step("t", gl.B * gl.q, "token", "t")
    assert _tiny(t, defaults={"batch": "4"}).inputs[0].default == "4"
    with pytest.raises(DerivationError, match="not inputs"):
        _tiny(t, defaults={"tp": "8"})
    with pytest.raises(SpecError):
        _tiny(t, defaults={"batch": "0"})


def test_argmax_picks_the_first_largest_and_waits_for_numbers():
    x = sp.Symbol("x", positive=True)
    assert isinstance(ArgMax(x, 2), ArgMax)
    assert ArgMax(1, 3, 3, 2) == 1
    assert ArgMax(sp.Rational(1, 2), sp.Float("0.4")) == 0


def test_pick_takes_the_value_at_a_whole_position_and_waits_for_one():
    x = sp.Symbol("x", positive=True)
    assert isinstance(Pick(x, 1, 2), Pick)
    assert Pick(1, x, 2 * x, 3) == 2 * x
    assert Pick(ArgMax(1, 3, 2), 10, 20, 30) == 20
    assert Pick(ArgMax(x, 2), 10, 20).xreplace({x: 3}) == 10


@pytest.mark.parametrize("name", ["speedup_left_alone", "B_peak_spec_left_alone", "throughput_peak_spec_left_alone"])
@pytest.mark.parametrize("batch", ["1", "64"])
def test_a_step_reading_the_chosen_draft_length_is_written_by_cases_with_the_plain_value(name, batch):
    """At the low-load draft length the expansion is pick(argmax, one case per draft length): the plain substitution's value, the sheet's."""
    by_cases, plain = SD.expanded[name], expansion.expand_steps(SD.step(name).expr, SD.expanded)
    assert isinstance(by_cases, Pick) and len(by_cases.args) == 1 + len(sd_module.DRAFT_LENGTHS)
    ctx = context("h100-sxm", TARGET, second_model=DRAFTER, tp="8", batch=batch)
    point = context_values(SD, ctx, set(plain.free_symbols))
    sheet = evaluate_exactly(SD, ctx, [name])[name]
    a, b = sp.N(substitute(by_cases, point), 30), sp.N(substitute(plain, point), 30)
    assert a.is_positive and abs(a - b) <= 1e-20 * b and abs(a - sheet) <= 1e-12 * a

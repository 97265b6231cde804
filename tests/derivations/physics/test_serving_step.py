"""The serving step of the shared step model (issue 34): prompts in every step at load, a cost per sequence, MoE experts as
grouped GEMMs, and the power model."""

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import context_values, evaluate_exactly
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.physics import stepmodel as sm
from roofline.derivations.physics.validation import STEP_MODEL
from roofline.derivations.questions.registry import get
from roofline.specs.power import load_power

import roofline
from roofline import api
from tests.derivations.helpers import context

NAMES = ("prompt_tokens_step", "tokens_per_step", "t_step", "t_overhead", "flops_gemm_gpu", "kv_bytes_step", "kept_context")


def _f(v) -> float:
    return float(v)


def _eval(model: str = "llama-3.1-8b", hardware: str = "h100-sxm", **inputs: str) -> dict[str, float]:
    values = evaluate_exactly(STEP_MODEL, context(hardware, model, **inputs), NAMES)
    return {k: _f(v) for k, v in values.items()}


@pytest.mark.parametrize("model, hardware, layout", [("llama-3.1-8b", "h100-sxm", {}), ("llama-3.1-70b", "h100-sxm", {"tp": "4"}),
                                                     ("mixtral-8x7b", "h100-sxm", {"tp": "2"}), ("deepseek-v3", "h800", {"tp": "8", "dp": "4", "ep": "32"})])
def test_the_serving_step_reduces_to_the_decode_only_step_without_prompts(model, hardware, layout):
    """output_len unset (N = 0) is today's decode-only step whatever the prompt length; a vanishing prompt share (S/N -> 0)
    tends to it."""
    common = {"batch": "64", "context": "3000 token", **layout}
    decode = _eval(model, hardware, **common)
    assert decode["prompt_tokens_step"] == 0
    assert _eval(model, hardware, output_len="0 token", prompt_len="5000 token", **common) == decode
    vanishing = _eval(model, hardware, prompt_len="1 token", output_len=f"{10**9} token", **common)
    assert vanishing["prompt_tokens_step"] == pytest.approx(64e-9)
    assert vanishing["t_step"] == pytest.approx(decode["t_step"], rel=1e-6)
    served = _eval(model, hardware, prompt_len="2000 token", output_len="200 token", **common)
    assert served["t_step"] > decode["t_step"]


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 2048), s=st.integers(1, 32_000), n=st.integers(1, 8_000))
def test_prompt_tokens_per_step_follow_b_s_over_n(b, s, n):
    """B/N requests finish per step and as many prompts of S tokens arrive: B S/N prompt tokens, exactly; none at N = 0; with
    a share h of each prompt in the prefix cache, B S (1 - h)/N."""
    expr = pr.prompt_tokens_per_step()
    at = {gl.B: b, gl.S: s, gl.N_out: n, gl.u_token: 1, gl.h_pfx: 0}
    assert sp.Rational(expr.xreplace(at)) == sp.Rational(b * s, n)
    assert expr.xreplace({**at, gl.N_out: 0}) == 0
    assert sp.Rational(expr.xreplace({**at, gl.h_pfx: sp.Rational(1, 4)})) == sp.Rational(3 * b * s, 4 * n)


def test_the_serving_context_defaults_to_prompt_plus_half_the_output():
    served = _eval(batch="8", prompt_len="1000 token", output_len="400 token")
    assert served["kept_context"] == 1200
    assert served["prompt_tokens_step"] == pytest.approx(8 * 1000 / 400)
    assert served["tokens_per_step"] == pytest.approx(8 + 20)
    told = _eval(batch="8", prompt_len="1000 token", output_len="400 token", context="5000 token")
    assert told["kept_context"] == 5000


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mixtral-8x7b"])
def test_the_cost_per_sequence_is_linear_in_the_batch(model):
    """t_seq adds B t_seq to the step and nothing else: the overhead at t_seq = 10 us minus at 0 is B x 10 us at every batch."""
    for b in (1, 7, 64, 512):
        on = _eval(model, batch=str(b), t_seq="10 us", t_layer="0 s", t_fixed="0 s")
        off = _eval(model, batch=str(b), t_seq="0 s", t_layer="0 s", t_fixed="0 s")
        assert on["t_overhead"] == pytest.approx(b * 10e-6, rel=1e-12)
        assert on["t_step"] - off["t_step"] == pytest.approx(b * 10e-6, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(tokens=st.integers(1, 100_000), experts=st.integers(1, 256), k=st.integers(1, 8), tile=st.sampled_from([16, 64, 128]))
def test_grouped_gemm_rows_equal_the_dense_count_once_every_expert_sees_a_tile(tokens, experts, k, tile):
    """The grouped GEMMs compute touched x max(tile, tokens k/touched) rows: at least the dense count tokens k, equal to it
    exactly when every expert read sees a tile or more, and one tile per expert below that."""
    k = min(k, experts)
    touched = sp.Rational(experts)  # every expert read: the large-batch case
    rows = pr.grouped_expert_rows(sp.Integer(tokens), touched, sp.Integer(k), sp.Integer(tile)).xreplace({gl.u_token: 1})
    dense = tokens * k
    assert rows >= dense
    if Fraction(dense, experts) >= tile:
        assert rows == dense
    else:
        assert rows == experts * tile


def _dense_flops(model: str, batch: str) -> float:
    ctx = context(model=model, batch=batch, tp="1")
    return _f(sm.FLOPS_GEMM_DENSE.xreplace(context_values(STEP_MODEL, ctx, sm.FLOPS_GEMM_DENSE.free_symbols)))


def test_the_grouped_gemm_flops_equal_the_dense_flops_for_a_dense_model_and_at_a_large_batch():
    """A dense model has no routed term; a MoE batch large enough that every expert sees a tile pays no padding; at batch 1 each
    expert read computes a whole tile."""
    for model in ("llama-3.1-8b", "mixtral-8x7b"):
        big = _eval(model, batch="8192", tp="1")["flops_gemm_gpu"]
        assert big == pytest.approx(_dense_flops(model, "8192"), rel=1e-9)
    assert _eval("llama-3.1-8b", batch="1")["flops_gemm_gpu"] == pytest.approx(_dense_flops("llama-3.1-8b", "1"), rel=1e-9)
    assert _eval("mixtral-8x7b", batch="1")["flops_gemm_gpu"] > 10 * _dense_flops("mixtral-8x7b", "1")


@pytest.mark.parametrize("batch", ["1", "16", "256", "2048"])
@pytest.mark.parametrize("model, hardware, tp", [("llama-3.1-8b", "h100-sxm", "1"), ("llama-3.1-70b", "h200", "4"), ("mixtral-8x7b", "mi300x", "1")])
def test_the_power_model_stays_between_idle_and_the_tdp(model, hardware, tp, batch):
    """The board power the model gives lies between the idle share and the TDP at any batch, decode-only or at load."""
    idle = float(load_power().family_of(hardware)[0].shares["idle_share"])
    for served in ({}, {"output_len": "400 token", "prompt_len": "600 token"}):
        ctx = context(hardware, model, batch=batch, tp=tp, **served)
        share = _f(evaluate_exactly(get("joules-per-token"), ctx, ("power_share_model",))["power_share_model"])
        assert idle <= share <= 1


# --- which step a sheet is worked on, and its claims on the other step (issue 34, item 7) ---------------------------


@pytest.mark.parametrize("slug", ["batch-knee", "model-limits"])
def test_a_claim_on_the_other_step_is_the_sheet_read_there_with_the_context_held(slug):
    """Each claim of a decode-only sheet is read again on the serving step (conventions.SERVING_OUTPUT_LEN, the context
    of the claim's own setup held), and its value there is what the sheet gives with those inputs set."""
    from roofline.derivations.physics import conventions

    import roofline

    sheet = roofline.derive(slug)
    assert sheet.step == "decode-only"
    for c in sheet.claims:
        o = c.other_step
        assert o is not None and o.output_len == conventions.SERVING_OUTPUT_LEN and c.output_len == 0
        assert (o.left_name, o.right_name, o.text) == (c.left_name, c.right_name, c.text)
    own = [c for c, decl in zip(sheet.claims, sheet.blueprint.claims, strict=True) if decl.where is None]
    assert own, "every sheet tested has a claim read at its own setup"
    context_text = next(str(i.value.exact) for i in sheet.inputs if i.name == "context")
    there = roofline.derive(slug, overrides=[f"output_len={conventions.SERVING_OUTPUT_LEN} token", f"context={context_text} token"])
    assert there.step == "serving"
    for c in own:
        assert c.other_step.left.float == pytest.approx(there.values[c.left_name].float, rel=1e-12)
        back = next(x for x in there.claims if x.text == c.text)
        assert back.holds == c.other_step.holds and back.other_step.output_len == 0
        assert back.other_step.holds == c.holds  # and back again: the decode-only step, the context still held


def test_the_sheet_says_which_step_it_is_worked_on_and_where_a_claim_holds_on_one_only():
    from roofline.renderers.markdown import render

    import roofline

    lines = render(roofline.derive("moe-experts")).splitlines()
    worked = next(line for line in lines if line.startswith("*Worked for"))
    assert "on the decode-only step (no prompt joins the batch while it decodes" in worked
    # the claims' other reading is said once, in the 'Worked for' line, not in every claim that differs
    assert "the claims are read on the serving step too, with each sequence's 2,048 tokens of prompt computed within its" in worked
    # at batch 1 a decode step reads exactly the active experts; with prompts in the step it reads more
    claim = next(line for line in lines if line.startswith("- **") and "Active parameters describe one token" in line)
    assert claim.startswith("- **Holds.**") and "On the serving step it does not hold" in claim
    # a claim whose verdict is the same on both steps says nothing of the other
    assert sum("on the serving step" in line.lower() for line in lines if line.startswith("- **")) == 1
    served = render(roofline.derive("moe-experts", overrides=["output_len=500 token"])).splitlines()
    worked = next(line for line in served if line.startswith("*Worked for"))
    assert "on the serving step (each sequence's 2,048 tokens of prompt computed within its 500 tokens of output)" in worked
    claim = next(line for line in served if line.startswith("- **") and "Active parameters describe one token" in line)
    assert "the claims are read on the decode-only step too (no prompt in the batch, the context held)" in worked
    assert claim.startswith("- **Does not hold.**") and "On the decode-only step it holds" in claim


def test_the_json_names_the_step_and_each_claim_on_the_other_step():
    import json

    from roofline.renderers.json_out import render

    import roofline

    d = json.loads(render(roofline.derive("joules-per-token")))
    assert d["context"]["step"] == "decode-only"
    for c in d["claims"]:
        assert c["other_step"]["step"] == "serving" and c["other_step"]["output_len"] == 700
        assert isinstance(c["other_step"]["holds"], bool)
    assert "step" not in json.loads(render(roofline.derive("flash-attention-io")))["context"]


# --- Experts read at load: prompts arrive whole, so the count is an expectation over steps ---

def _binomial_sum(decode: int, seqs: int, finish: Fraction, prompt: int, E: int, k: int) -> float:
    """The expected count summed term by term over K ~ Binomial(seqs, finish) prompts in a step: the equation the closed form
    solves, evaluated without it."""
    miss = Fraction(E - k, E)
    total = Fraction(0)
    for n in range(seqs + 1):
        p = sp.binomial(seqs, n) * finish**n * (1 - finish) ** (seqs - n)
        total += Fraction(int(p.p), int(p.q)) * E * (1 - miss ** (decode + n * prompt))
    return float(total)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 24), st.integers(0, 3), st.integers(1, 20), st.integers(1, 400), st.sampled_from([(8, 2), (64, 6), (256, 8)]))
def test_experts_read_at_load_is_the_expectation_over_the_prompts_each_step_carries(seqs, q, n_out, prompt, ek):
    E, k = ek
    finish = Fraction(1, n_out)
    got = float(pr.experts_touched_serving(q, seqs, sp.Rational(1, n_out), prompt, E, k))
    assert got == pytest.approx(_binomial_sum(seqs * q, seqs, finish, prompt, E, k), rel=1e-9, abs=1e-9)
    # Jensen: no more than the count at the step's mean tokens, no fewer than the decodes' own
    mean_tokens = seqs * q + seqs * prompt / n_out
    assert float(pr.experts_touched(seqs * q, E, k)) - 1e-9 <= got <= float(pr.experts_touched(sp.Rational(mean_tokens).limit_denominator(10**6), E, k)) + 1e-9


def test_experts_read_at_load_is_the_decode_count_without_prompts_symbolically():
    n, b, s, k, m = sp.symbols("n b s k m", positive=True)  # E = k + m experts: a miss has a positive probability
    got = pr.experts_touched_serving(n, b, 0, s, k + m, k)
    assert sp.simplify(sp.powsimp(got - pr.experts_touched(n * b, k + m, k))) == 0


def test_a_server_at_load_reads_the_experts_of_its_decodes_and_of_the_steps_with_a_prompt():
    """DeepSeek-V3.2 on four MI355X, 4 requests of 1000-token prompts and 100-token outputs (AMD's ATOM dashboard): about 4% of
    steps carry a prompt, which reads nearly all 256 experts; the rest read the decodes' 30.5. Spread over every step, the
    prompts would read 190 each step, 128 GB per GPU: more than the chip streams in the measured 15.7 ms."""
    ctx = context("mi355x", "deepseek-v3.2", batch="4", tp="4", prompt_len="1000 token", output_len="100 token")
    got = float(evaluate_exactly(STEP_MODEL, ctx, ["experts_touched"])["experts_touched"])
    decode_only = float(pr.experts_touched(4, 256, 8))
    steps_with_prompt = 1 - (1 - sp.Rational(1, 100)) ** 4
    assert got == pytest.approx(decode_only + float(steps_with_prompt) * (256 - decode_only), rel=0.01)
    assert 35 < got < 45 < float(pr.experts_touched(44, 256, 8))


@pytest.mark.parametrize("model, output_len, expected, compiled_exact", [("llama-3.1-8b", "700 token", 1, True),
                                                                         ("mixtral-8x7b", "0 token", 2, False)])
def test_experts_read_stay_exact_whatever_the_prompt_length(model, output_len, expected, compiled_exact):
    """A dense model's (1 - 1/1)^(B q) is 0 and a decode-only step's prompt factor is 1: both exact at a 32K-token prompt,
    where an exponent of 32,768 would otherwise send the step to 40-digit floats. The compiled evaluation keeps the dense
    model's exact too; for the MoE's it computes (3/4)^32768 before the zero that cancels it, so its value is a float of 2."""
    from roofline.derivations.engine.sheet import evaluate

    ctx = context("h100-sxm", model, batch="1", prompt_len="32768 token", output_len=output_len)
    got = evaluate_exactly(STEP_MODEL, ctx, ["experts_touched"])["experts_touched"]
    assert got == expected and isinstance(got, sp.Integer)
    compiled = evaluate(STEP_MODEL, ctx, ["experts_touched"])["experts_touched"]
    assert float(compiled) == expected
    assert isinstance(compiled, sp.Integer) == compiled_exact


@pytest.mark.parametrize("n", [0, 1, 2, 7, 700, 100_000])
def test_the_chance_a_sequence_finishes_is_the_request_rate_per_token(n):
    tokens = sp.Integer(n) * gl.u_token
    assert sp.simplify(pr.finish_chance(tokens) - pr.request_rate_per_token(tokens) * gl.u_token) == 0
    assert pr.finish_chance(tokens).subs(gl.u_token, 1) == (sp.Rational(1, n) if n else 0)


def test_a_context_past_the_model_s_trained_positions_is_said_where_the_setup_is_named():
    """Olmo 3 7B was trained for 65,536 positions: at 131,072 tokens the sheet says so on its 'Worked for' line and in the
    JSON's context, and counts the bytes as it would there; within the limit nothing is said."""
    import json

    far = roofline.derive("decode-floor", model="olmo-3-7b", inputs={"context": 131072})
    near = roofline.derive("decode-floor", model="olmo-3-7b", inputs={"context": 65536})
    assert far.past_positions is not None and far.past_positions[1] == 65536 and near.past_positions is None
    assert "past the 65,536 positions Olmo 3 7B was trained for" in api.render(far, "md")
    assert "trained for" not in api.render(near, "md")
    assert json.loads(api.render(far, "json"))["context"]["past_positions"]["max_position_embeddings"] == 65536

"""slo-goodput: the largest batch within an inter-token target, the TTFT queues, Little's law and goodput, each checked by hand
against the sheet's own steps."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.numeric import Missing
from roofline.derivations.engine.sheet import evaluate_exactly, evaluate_numbers
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.errors import SpecError
from roofline.units import RooflineError

from roofline import api

from ..helpers import context

SLO = BY_SLUG["slo-goodput"]
FAST = settings(max_examples=25, deadline=None)


def _sheet_values(**inputs: str) -> dict:
    ctx = context("h100-sxm", "llama-3.1-8b", **{"prompt_len": "1024 token", "output_len": "512 token", "context": "1280 token", **inputs})
    return evaluate_exactly(SLO, ctx)


def test_the_target_batch_is_the_line_inverted_and_the_cache_can_stop_it():
    v = _sheet_values()
    assert v["B_slo"] == (Fraction(50, 1000) - v["t_zero"]) / v["t_per_sequence"]
    assert v["t_zero"] + v["B_slo"] * v["t_per_sequence"] == Fraction(50, 1000)  # the target met exactly at B_slo
    assert v["B_served"] == min(int(v["B_slo"]), v["B_max_kv"])
    assert v["t_step_served"] <= Fraction(50, 1000)
    assert v["tokens_per_user"] == 1 / v["t_step_served"]
    assert v["tokens_per_gpu"] == v["B_served"] / v["t_step_served"]  # one GPU


def test_a_burst_waits_half_of_b_plus_one_prefills():
    v = _sheet_values(burst="8")
    assert v["ttft_burst"] == Fraction(9, 2) * v["t_prefill"]


@FAST
@given(st.sampled_from(["0.5/s", "2/s", "10/s", "30/s"]))
def test_poisson_ttft_is_m_d_1_and_its_closed_form_meets_the_target(rate):
    v = _sheet_values(arrival_rate=rate)
    t, rho = v["t_prefill"], v["prefill_utilisation"]
    if rho < 1:
        assert v["ttft_poisson"] == t + rho * t / (2 * (1 - rho))  # Pollaczek-Khinchine, deterministic service
    T = Fraction(1)
    lam = v["lambda_ttft"]
    assert lam == 2 * (T - t) / (t * (2 * T - t))
    assert t + lam * t * t / (2 * (1 - lam * t)) == T  # the rate it allows gives the target exactly


def test_the_utilisation_the_ttft_target_allows_solves_the_m_d_1_wait_symbolically():
    import sympy as sp

    t, w = sp.symbols("t w", positive=True)
    rho = 2 * w / (t + 2 * w)  # the sheet's utilisation_at_ttft_target
    assert sp.simplify(rho * t / (2 * (1 - rho)) - w) == 0 and sp.simplify(1 - rho).is_positive
    expr = SLO.expanded["utilisation_at_ttft_target"]
    assert sp.simplify(expr - 2 * SLO.expanded["wait_budget"] / (SLO.expanded["t_prefill"] + 2 * SLO.expanded["wait_budget"])) == 0


def test_littles_law_and_goodput_is_the_smaller_rate():
    v = _sheet_values()
    assert v["lambda_tpot"] == v["B_served"] / (512 * v["t_step_served"])
    assert v["goodput_requests"] == min(v["lambda_tpot"], v["lambda_ttft"])
    assert v["concurrency_needed"] == 2 * (v["ttft_poisson"] + 512 * v["t_step_served"])  # L = lambda W at 2 requests/s


def test_a_target_below_the_intercept_has_no_batch_and_says_why():
    v = evaluate_numbers(SLO, context("h100-sxm", "llama-3.1-70b", tp="4", tpot_slo="1 ms", output_len="512 token"))
    assert isinstance(v["B_slo"], Missing) and "intercept" in v["B_slo"].reason


def test_a_ttft_target_below_one_prefill_allows_no_rate():
    v = evaluate_numbers(SLO, context("h100-sxm", "llama-3.1-8b", ttft_slo="1 ms", output_len="512 token"))
    assert v["wait_budget"] == 0 and isinstance(v["lambda_ttft"], Missing) and "prefill alone" in v["lambda_ttft"].reason
    assert isinstance(v["goodput_requests"], Missing)


@pytest.mark.parametrize(("name", "value"), [("tpot_slo", "-5 ms"), ("tpot_slo", "3 B"), ("arrival_rate", "0/s"), ("burst", "2.5")])
def test_bad_targets_are_one_line(name, value):
    with pytest.raises(SpecError) as err:
        api.derive("slo-goodput", inputs={name: value})
    assert name in str(err.value) and "\n" not in str(err.value)


def test_a_rate_reads_as_per_second():
    sheet = api.derive("slo-goodput", inputs={"arrival_rate": "4/s"})
    assert sheet.values["prefill_utilisation"].float == pytest.approx(4 * sheet.values["t_prefill"].float)


def test_a_token_costs_nothing_until_a_price_is_stated_and_then_the_price_over_the_goodput():
    v = _sheet_values()
    assert isinstance(v["cost_per_token"], Missing) and "gpu_hour_price" in v["cost_per_token"].reason
    priced = _sheet_values(gpu_hour_price="2.5 USD/h")
    # USD per GPU-hour over the tokens one GPU delivers within both targets in that hour
    assert priced["cost_per_token"] == Fraction(5, 2) / 3600 / priced["goodput_tokens_per_gpu"]
    doubled = _sheet_values(gpu_hour_price="5 USD/h")
    assert doubled["cost_per_token"] == 2 * priced["cost_per_token"]


@pytest.mark.parametrize("text, message", [("2.5 EUR/h", "'EUR' is not one of roofline's units"), ("2.5 USD", "convertible to USD/h"),
                                           ("-1 USD/h", "gpu_hour_price")])
def test_a_price_in_another_currency_or_unit_is_refused_in_one_line(text, message):
    with pytest.raises(RooflineError) as err:
        api.context(SLO, "h100-sxm", "llama-3.1-8b", inputs={"gpu_hour_price": text})
    assert "\n" not in str(err.value) and message in str(err.value) and "gpu_hour_price" in str(err.value)

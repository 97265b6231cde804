"""prefix-cache: the prompt a hit leaves to compute, the time to first token it saves alone and under load, the hit rate
past which decode binds, and the batch the held prefixes take, each by hand against the sheet's own steps; and the shared
serving step, which computes only the uncached share of each prompt."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.numeric import Missing
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG
from roofline.units import RooflineError

from roofline import api

from ..helpers import context

PC = BY_SLUG["prefix-cache"]
SERVING = {"prompt_len": "1024 token", "output_len": "512 token", "context": "1280 token"}
FAST = settings(max_examples=20, deadline=None)


def _values(hardware="h100-sxm", model="llama-3.1-8b", **inputs):
    return evaluate_exactly(PC, context(hardware, model, **{**SERVING, "prefix_hit_rate": "0.5", **inputs}))


def test_a_hit_leaves_the_uncached_share_to_compute_and_reads_the_cached_prefix():
    v = _values()
    assert v["prompt_tokens_computed"] == 512
    none = _values(prefix_hit_rate="0")
    assert none["t_prefill_cached"] == none["t_prefill_no_hit"] == v["t_prefill_no_hit"]
    assert isinstance(none["ttft_saved"], Missing) and "the hit rate is 0" in none["ttft_saved"].reason
    # Llama 3.1 8B on one GPU: the whole prompt's keys and values (131,072 B a token) move once, written or read back
    assert v["prefill_bytes_cached_gpu"] == none["prefill_bytes_cached_gpu"] == v["prefill_weight_bytes_gpu"] + 1024 * 131072
    assert v["ttft_saved"] == v["t_prefill_no_hit"] - v["t_prefill_cached"] > 0


@FAST
@given(st.sampled_from(["0.1", "0.3", "0.5", "0.7", "0.9"]), st.sampled_from(["1/s", "4/s", "10/s"]))
def test_under_load_a_hit_saves_at_least_its_own_prefill(h, rate):
    v = _values(prefix_hit_rate=h, arrival_rate=rate)
    if isinstance(v["ttft_saved_load"], Missing):
        assert v["prefill_utilisation"] >= 1  # saturated without the cache: no finite mean to compare
        return
    t, lam = v["t_prefill_cached"], Fraction(rate.removesuffix("/s"))
    assert v["ttft_poisson_cached"] == t + lam * t * t / (2 * (1 - lam * t))  # M/D/1 at the shorter prefill
    assert v["ttft_saved_load"] >= v["ttft_saved"]


LONG = {"prompt_len": "8192 token", "output_len": "256 token", "context": "8320 token"}  # the sheet's default: long prompts, short answers


def test_past_the_crossover_a_request_decode_costs_more_than_its_prompt():
    v = _values(**LONG)
    h = v["h_decode_bound"]
    assert 0 < h < 1
    assert (1 - h) * v["t_prompt_compute_whole"] == v["t_decode_per_request"]  # the closed form meets its equation exactly
    assert v["t_prompt_compute"] == (1 - Fraction(1, 2)) * v["t_prompt_compute_whole"]  # GEMM time falls as 1 - h
    for past, binds in ((h / 2, "prefill"), ((1 + h) / 2, "decode")):
        w = _values(**LONG, prefix_hit_rate=str(float(past)))
        assert (w["t_prompt_compute"] > w["t_decode_per_request"]) == (binds == "prefill")
        assert (w["prefill_share"] > Fraction(1, 2)) == (binds == "prefill")


def test_where_a_request_decode_outweighs_its_whole_prompt_no_hit_rate_is_the_crossover_and_the_sheet_says_why():
    v = _values()  # 1,024-token prompts, 512 output tokens: a request's decode costs more than its whole prompt
    assert v["t_decode_per_request"] > v["t_prompt_compute_whole"]
    assert isinstance(v["h_decode_bound"], Missing) and "decode binds at every hit rate" in v["h_decode_bound"].reason


def test_the_held_prefixes_take_their_bytes_of_cache_from_the_batch():
    v = _values(cached_prefixes="16")
    assert v["prefix_pool_bytes_gpu"] == 16 * 512 * 131072
    # Llama 3.1 8B keeps every token (no window): a sequence holds T + q = 1,281 tokens of cache
    assert v["B_lost"] == Fraction(16 * 512, 1281)
    assert v["B_lost_share"] == v["B_lost"] / v["B_fit"]


def test_the_serving_step_computes_only_the_uncached_share_of_each_prompt():
    """The hit rate lives in the shared step model: every serving-step sheet reads it (slo-goodput here)."""
    d = BY_SLUG["slo-goodput"]
    base = evaluate_exactly(d, context("h100-sxm", "llama-3.1-8b", **SERVING, batch="64"))
    half = evaluate_exactly(d, context("h100-sxm", "llama-3.1-8b", **SERVING, batch="64", prefix_hit_rate="0.5"))
    assert half["prompt_tokens_step"] == base["prompt_tokens_step"] / 2 == Fraction(64 * 1024, 512) / 2
    assert half["kv_bytes_prompt"] == base["kv_bytes_prompt"]  # half written, half read back: a whole prompt's cache each
    assert half["flops_attention_prompt_gpu"] < base["flops_attention_prompt_gpu"]
    assert half["t_step"] < base["t_step"]


@pytest.mark.parametrize("text", ["1.5", "-0.1", "half"])
def test_a_hit_rate_outside_zero_to_one_is_refused_in_one_line(text):
    with pytest.raises(RooflineError) as err:
        api.context(PC, "h100-sxm", "llama-3.1-8b", inputs={"prefix_hit_rate": text})
    assert "\n" not in str(err.value) and "prefix_hit_rate" in str(err.value)

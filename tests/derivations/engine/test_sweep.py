"""Sweeps: compiled grids agree with the exact single-point evaluation; bad axes are refused in one line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.engine.sweep import parse_axis, sweep
from roofline.derivations.questions.registry import QUESTIONS, get
from roofline.specs.errors import SpecError

from tests.derivations.helpers import context, sheet_context

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3", "qwen3-235b-a22b")
HARDWARE = ("h100-sxm", "h200", "mi300x", "tpu-v5e", "l4")


def _batch_axis(d):
    names = {i.name for i in d.inputs}
    for name, spec in (("batch", "batch=1,7,64,512"), ("context", "context=512,8192,131072"), ("tp", "tp=1,2,8")):
        if name in names:
            return [parse_axis(d, spec)]
    return []


@pytest.mark.parametrize("slug", [q.slug for q in QUESTIONS])
def test_every_headline_result_sweeps_to_the_exact_values(slug: str) -> None:
    """Every point of the grid (not only the corners the sweep checks itself) equals `evaluate` there."""
    d = get(slug)
    axes = _batch_axis(d)
    for model in ("llama-3.1-70b", "deepseek-v3"):
        ctx = sheet_context(d, "h200", model)
        for result in d.results:
            s = sweep(d, ctx, result, axes)
            for texts, value, reason in s.points():
                point = {a.input.name: a.input.parse(t) for a, t in zip(axes, texts, strict=True)}
                exact = evaluate_exactly(d, ctx.with_overrides(**point), only=[result])[result]
                if isinstance(exact, Missing):
                    assert value is None and exact.reason in reason, (slug, result, texts)
                else:
                    assert value == pytest.approx(float(exact), rel=1e-9), (slug, result, texts)
                    assert reason == ""


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MODELS), st.sampled_from(HARDWARE), st.integers(0, 12), st.sampled_from(("1", "2", "4", "8")))
def test_decode_step_sweep_matches_single_points(model: str, hardware: str, log_batch: int, tp: str) -> None:
    d = get("decode-floor")
    ctx = sheet_context(d, hardware, model, tp=tp)
    s = sweep(d, ctx, "t_step", [parse_axis(d, f"batch={2**log_batch}:{2**(log_batch + 3)}:log2"), parse_axis(d, "context=1024,32768")])
    assert s.values.shape == (4, 2)
    b = 2 ** (log_batch + 1)
    exact = evaluate_exactly(d, ctx.with_overrides(batch=str(b), context="32768 token"), only=["t_step"])["t_step"]
    assert s.values[1, 1] == pytest.approx(float(exact), rel=1e-9)
    assert np.all(np.diff(s.values[:, 0]) >= 0)  # a larger batch never steps faster


def test_ranges_and_lists() -> None:
    d = get("decode-floor")
    assert parse_axis(d, "batch=1:1024:log2").values.tolist() == [2.0**k for k in range(11)]
    assert parse_axis(d, "batch=1:9:4").texts == ("1", "5", "9")
    assert parse_axis(d, "eta_bw=0.5:1:0.25").values.tolist() == [0.5, 0.75, 1.0]
    assert parse_axis(d, "context=1024, 8192 token").values.tolist() == [1024.0, 8192.0]
    assert parse_axis(d, "t_fixed=0.1 ms,1 ms").values.tolist() == pytest.approx([1e-4, 1e-3])


@pytest.mark.parametrize(("spec", "message"), [
    ("batch=0,1", "expected"),
    ("batch=1:5:0.5", "whole numbers"),
    ("eta_bw=0.5:1.5:0.5", "fraction"),
    ("bach=1", "did you mean batch"),
    ("batch=", "NAME=VALUES"),
    ("batch=1,,2", "empty value"),
    ("batch=9:1:1", "starts above its end"),
    ("batch=1:1e9:1", "more than"),
    ("batch=0:8:log2", "above zero"),
    ("batch=1:8:x", "START:STOP:STEP"),
    ("context=__import__('os')", "expected"),
])
def test_bad_axes_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_axis(get("decode-floor"), spec)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_result_outside_its_domain_is_empty_with_the_reason() -> None:
    d = get("batch-knee")
    s = sweep(d, context("h200", "deepseek-v3", weights="fp8"), "B_max_kv", [parse_axis(d, "tp=1,8")])  # 671 GB of FP8 weights: 8 GPUs hold them
    (_, one, why_one), (_, eight, why_eight) = s.points()
    assert one is None and "weights alone" in why_one and math.isnan(s.values[0])
    assert why_eight == "" and eight is not None and eight > 0


def test_a_missing_spec_value_is_na_for_the_whole_grid() -> None:
    d = get("mla-absorption")
    s = sweep(d, sheet_context(d, "h100-sxm", "llama-3.1-8b"), d.results[0], [parse_axis(d, "context=1024,2048")])
    assert all(v is None and r.startswith("n/a:") for _, v, r in s.points())

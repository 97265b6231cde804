"""The published serving results held out of every fit (specs/measurements/held-out/): they load, no fit sees them, a decode
pool's record runs the decode-only step, and the sheets and `roofline validate` print the same prediction for each."""

import json
import math
import statistics

import pytest
from roofline.derivations.engine.context import fitted
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.physics import measured as ms
from roofline.derivations.physics import validation as v
from roofline.derivations.physics.measured import record_label
from roofline.derivations.questions import slo_goodput
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.measurements import HELD_OUT_DIR, load_held_out, load_measurements

from roofline import api

HELD = load_held_out()


def test_held_out_records_load_cite_and_are_never_fitted():
    assert len(HELD) >= 10
    assert {m.role for m in HELD} == {None, "decode"}  # an interactivity curve and disaggregated decode pools
    ids = {m.id for m in HELD}
    assert not ids & {m.id for m in load_measurements()}
    assert not ids & set(fitted().records)
    for m in HELD:
        assert m.path.parent == HELD_OUT_DIR
        assert m.url.startswith("https://") and m.locator.strip() and m.assumed.strip()


def test_a_decode_pool_runs_the_decode_only_step_and_a_server_at_load_the_serving_step():
    pool = next(m for m in HELD if m.role == "decode")
    curve = next(m for m in HELD if m.role is None)
    assert not v.serving(pool) and v.record_inputs(pool)["output_len"] == "0 token"
    assert v.serving(curve) and v.record_inputs(curve)["output_len"] == f"{curve.output_tokens} token"
    d = BY_SLUG["slo-goodput"]
    # on a sheet whose own default is a server at load, the pool's row still carries no prompts
    row = ms.record_row(pool)
    ctx = api.context(d, hardware=row.hardware, model=row.model, weights=row.weights, kv=row.kv, math=row.math, inputs=dict(row.set))
    assert float(evaluate_exactly(d, ctx, ["prompt_tokens_step"])["prompt_tokens_step"]) == 0
    row = ms.record_row(curve)
    ctx = api.context(d, hardware=row.hardware, model=row.model, weights=row.weights, kv=row.kv, math=row.math, inputs=dict(row.set))
    assert float(evaluate_exactly(d, ctx, ["prompt_tokens_step"])["prompt_tokens_step"]) == pytest.approx(curve.batch * curve.input_tokens / curve.output_tokens)


@pytest.mark.parametrize("slug, keep", [("slo-goodput", lambda m: m.path.name == slo_goodput.INTERACTIVITY_CURVE),
                                        ("disaggregation", lambda m: m.role == "decode")])
def test_the_sheets_tables_are_the_held_out_records_at_validates_prediction(slug, keep):
    d = BY_SLUG[slug]
    table = next(t for t in d.tables if "held out of every fit" in t.title)
    picked = [m for m in HELD if keep(m)]
    assert picked
    assert [r.label for r in table.rows] == [record_label(m) for m in picked]  # each named in words, never by its id
    label = {m.id: record_label(m) for m in HELD}
    by_id = {label[x.id]: x for x in v.validate(HELD, v.sheet_defaults()).rows}
    for row in table.rows[:2] + table.rows[-1:]:  # the first, the second and the last: a few cells, not the whole table
        ctx = api.context(d, hardware=row.hardware, model=row.model, weights=row.weights, kv=row.kv, math=row.math, inputs=dict(row.set))
        got = evaluate_exactly(d, ctx, ["t_step", "prediction_error"])
        assert float(got["prediction_error"]) == pytest.approx(by_id[row.label].error, rel=1e-6, abs=1e-9)
        assert float(got["t_step"]) == pytest.approx(by_id[row.label].predicted, rel=1e-6)


@pytest.mark.slow  # a whole build, validation or calibration run: in the full selection (-m 'slow or not slow'), as CI runs it
def test_validate_reports_the_held_out_records():
    from roofline.validate import held_out_summaries, render_validate, report
    r = report()
    data = json.loads(render_validate(r, "json"))
    held = data["held_out"]
    assert [x["id"] for x in held["records"]] == [m.id for m in HELD]
    errors = [abs(x["error"]) for x in held["records"]]
    assert held["summary_default_profile"]["all"]["median_abs_error"] == pytest.approx(statistics.median(errors))
    assert all(math.isfinite(x["predicted_dataset_defaults_s"]) and x["predicted_dataset_defaults_s"] > 0 for x in held["records"])
    assert held_out_summaries(r)[-1].count == len(HELD)
    assert "## Held out: published serving results no fit has seen" in render_validate(r, "md")

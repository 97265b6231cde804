"""roofline/plan.js, the numeric plan evaluated in a browser (issue 42 item 1's evaluator): in Debian's chromium it gives every
step of every shipped sheet the value the Python plan gives (derivations.engine.numeric, float64), to 1e-12 relative, and
every missing value with the same kind and reason, at each sheet's default setup and at drawn chips, models, batches,
contexts and TP degrees."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from roofline.derivations.engine import run
from roofline.derivations.engine.numeric import Missing
from roofline.derivations.engine.planning import plan_of
from roofline.derivations.engine.sheet import defaults_of, setup_of
from roofline.derivations.questions import registry
from roofline.specs.catalog import hardware_names, model_names
from roofline.specs.errors import SpecError

from roofline import api

PLAN_JS = Path(__file__).resolve().parents[2] / "roofline" / "plan.js"


def _json(v):
    return {"missing": True, "kind": v.kind, "reason": v.reason} if isinstance(v, Missing) else float(v)


def _cases() -> list[tuple[str, dict, dict, dict]]:
    """(label, plan, input values, the Python plan's values) at each sheet's default setup and at two drawn ones."""
    rng = random.Random(42)
    chips, models = hardware_names(), model_names()
    out = []
    for slug in registry.SLUGS:
        d = registry.get(slug)
        plan = plan_of(d)
        names = {i.name for i in d.inputs}
        setups = [({}, [])]
        for _ in range(2):
            sets = [f"{n}={rng.choice(choices)}" for n, choices in (("batch", (1, 7, 64, 512)), ("context", (1, 4096, 131072, 1000000)),
                                                                   ("tp", (1, 2, 8))) if n in names]
            setups.append(({"hardware": rng.choice(chips), "model": rng.choice(models)}, sets))
        for kw, sets in setups:
            try:
                sheet = api.derive(slug, overrides=sets, **kw)
            except SpecError:
                continue  # a setup the sheet refuses (a model it does not apply to, a layout that does not divide)
            base = run.input_values(d.blueprint, setup_of(d, sheet.context), plan.inputs, defaults_of(d))
            values = {k: (v if isinstance(v, Missing) else float(v)) for k, v in base.items()}
            python = plan.evaluate(dict(values))
            out.append((f"{slug} {kw} {sets}", plan.to_json(), {k: _json(v) for k, v in values.items()}, {k: _json(v) for k, v in python.items()}))
    return out


@pytest.mark.slow
def test_the_browser_evaluates_every_plan_as_python_does(browser):
    cases = _cases()
    assert len(cases) >= 2 * len(registry.SLUGS)
    checked = missing = 0
    tab = browser.new_page()
    tab.set_content("<p>plan</p>")
    tab.add_script_tag(content=PLAN_JS.read_text(encoding="utf-8"))
    for label, plan, values, python in cases:
        js = tab.evaluate("([plan, values]) => RooflinePlan.evaluate(plan, values)", [plan, values])
        for name, want in python.items():
            got = js[name]
            if isinstance(want, dict):
                missing += 1
                assert isinstance(got, dict) and (got["kind"], got["reason"]) == (want["kind"], want["reason"]), (label, name, got, want)
            else:
                assert not isinstance(got, dict) and abs(got - want) <= 1e-12 * max(abs(got), abs(want)), (label, name, got, want)
            checked += 1
    tab.close()
    assert checked > 3000 and missing > 50, (checked, missing)


def test_the_evaluator_builds_no_code_from_data():
    """No eval, no Function constructor, no timer with a string: each node's tag picks an operation."""
    text = PLAN_JS.read_text(encoding="utf-8")
    for word in ("eval(", "Function(", "setTimeout(", "setInterval(", "innerHTML", "import("):
        assert word not in text, word

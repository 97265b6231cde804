"""A sweep over a layout (tp, dp, ep) applies derive's layout rules at every point (issue 35, family 1).

Every point of each grid below is compared with `roofline.derive` at that point: where derive refuses the layout, the
sweep's row is empty with derive's reason in `missing`; where derive answers, the row has derive's value.
"""

from __future__ import annotations

import itertools

import pytest
from roofline.derivations.engine.sweep import MAX_LAYOUTS, parse_axis, plan
from roofline.derivations.questions.registry import get
from roofline.specs.errors import SpecError

import roofline
from tests.derivations.helpers import sheet_context

#: (sheet, result, model, inputs set for the whole grid, the grid: input -> values)
GRIDS = [
    ("decode-floor", "t_step", "mixtral-8x7b", {}, {"ep": [1, 3, 1], "batch": [1, 2]}),
    ("decode-floor", "t_step", "mixtral-8x7b", {"dp": 8, "tp": 1}, {"ep": [1, 2, 8]}),
    ("decode-floor", "t_step", "mixtral-8x7b", {}, {"tp": [1, 2], "dp": [1, 2, 4], "ep": [1, 4]}),
    ("decode-floor", "t_floor", "deepseek-v3", {"tp": 1, "dp": 32}, {"ep": [3, 32, 256]}),
    ("decode-floor", "t_step", "llama-3.1-8b", {}, {"ep": [1, 2], "dp": [1, 2]}),
    ("batch-knee", "B_max_kv", "deepseek-v3", {"dp": 4}, {"tp": [1, 2, 4, 8], "ep": [4, 8]}),
    ("moe-experts", "bytes_per_step", "qwen3-235b-a22b", {"tp": 2}, {"ep": [1, 2, 3], "dp": [1, 2]}),
    # the second chip's link terms: max(0, gpus - n_dom) and floor(tp/2) are zero at small generic values, which once made the
    # compiled grid drop its scale-out bandwidth and torus degree as unneeded (found by the live page's sweep, issue 42)
    ("hardware-upgrade", "speedup_capacity", "deepseek-v3", {"dp": 8, "ep": 8}, {"tp": [1, 2, 4, 8, 16]}),
]


def _derive(slug: str, result: str, model: str, inputs: dict[str, object]) -> tuple[float | None, str]:
    try:
        sheet = roofline.derive(slug, model=model, inputs=inputs)
    except SpecError as err:
        return None, err.message
    v = sheet.values[result]
    return (None, v.missing.reason) if v.missing is not None else (float(v.to(v.unit).magnitude), "")


@pytest.mark.parametrize(("slug", "result", "model", "fixed", "grid"), GRIDS, ids=[f"{g[0]}-{g[2]}-{'x'.join(g[4])}" for g in GRIDS])
def test_every_point_of_a_layout_sweep_is_what_derive_says(slug, result, model, fixed, grid) -> None:
    table = roofline.sweep(slug, result, over=grid, model=model, inputs=fixed)
    unit = table.units[result]
    names = list(grid)
    points = list(itertools.product(*grid.values()))
    assert len(table[result]) == len(points)
    refused = answered = 0
    for k, values in enumerate(points):
        inputs = {**fixed, **dict(zip(names, values, strict=True))}
        want, why = _derive(slug, result, model, inputs)
        got, missing = table[result][k], str(table["missing"][k])
        assert [int(table[n][k]) for n in names] == list(values)
        if want is None:
            refused += 1
            assert missing.endswith(why) and got != got, (inputs, missing, why)  # NaN: no value
        else:
            answered += 1
            q = roofline.derive(slug, model=model, inputs=inputs).values[result]
            assert missing == "", (inputs, missing)
            assert got == pytest.approx(float(q.to(unit).magnitude), rel=1e-9), inputs
    assert refused and answered, "each grid holds layouts derive refuses and layouts it answers"


def test_the_exact_check_covers_every_distinct_layout(monkeypatch) -> None:
    """Each distinct layout of the grid is evaluated exactly once, not only the grid's first and last points."""
    from roofline.derivations.engine import sweep as sweep_module

    d = get("decode-floor")
    ctx = sheet_context(d, "h100-sxm", "mixtral-8x7b")
    seen: list[tuple[int, int]] = []
    real = sweep_module.evaluate

    def counting(d, ctx, only=None):
        seen.append((int(ctx.overrides["tp"].magnitude), int(ctx.overrides["ep"].magnitude)))
        return real(d, ctx, only)

    monkeypatch.setattr(sweep_module, "evaluate", counting)
    axes = [parse_axis(d, "batch=1:64:log2"), parse_axis(d, "tp=1,2,2,1"), parse_axis(d, "ep=1,2,8"), parse_axis(d, "context=1024,2048")]
    plan(d, ctx, "t_step", axes)
    assert set(seen) == {(t, e) for t in (1, 2) for e in (1, 2, 8)}
    assert len(seen) <= 6 + 2  # one point per layout, and the grid's first and last


def test_a_grid_of_too_many_layouts_is_refused_in_one_line() -> None:
    d = get("decode-floor")
    ctx = sheet_context(d, "h100-sxm", "mixtral-8x7b")
    axes = [parse_axis(d, f"tp=1:{MAX_LAYOUTS}:1"), parse_axis(d, "ep=1,2")]
    with pytest.raises(SpecError, match="distinct layouts"):
        plan(d, ctx, "t_step", axes)


def test_the_issue_reproducers_through_the_cli(capsys) -> None:
    from roofline.cli import main

    assert main(["sweep", "decode-floor", "t_step", "--over", "ep=1,3,1", "--over", "batch=1,2", "--model", "mixtral-8x7b"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    three = [r for r in rows if r.split(",")[2] == "3"]
    assert len(three) == 2 and all(",,n/a: ep=3 does not divide Mixtral 8x7B v0.1's 8 routed experts" in r for r in three)
    assert main(["sweep", "decode-floor", "t_step", "--over", "ep=8", "--model", "mixtral-8x7b", "--set", "dp=8", "--set", "tp=1"]) == 0
    out = capsys.readouterr().out.splitlines()
    derived = roofline.derive("decode-floor", model="mixtral-8x7b", inputs={"ep": "8", "dp": "8", "tp": "1"}).results["t_step"].float
    cells = out[1].split(",")
    assert cells[:3] == ["h100-sxm", "mixtral-8x7b", "8"] and float(cells[3]) == pytest.approx(derived * 1e3, rel=1e-9) and out[1].endswith(",")

"""The shared step model's overheads and all-reduce latency law (issue 20), and the engine profiles that supply them."""

from pathlib import Path

import pytest
import sympy as sp
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.physics.validation import STEP_MODEL
from roofline.specs.errors import SpecError

from roofline import api
from tests.derivations.helpers import context, sheet_context


def _t(v) -> float:
    return float(v)


@pytest.mark.parametrize("model, layers", [("llama-3.1-8b", 32), ("llama-3.1-70b", 80), ("llama-3.2-1b", 16)])
def test_per_layer_overhead_is_proportional_to_depth(model, layers):
    base = evaluate_exactly(STEP_MODEL, context(model=model, t_layer="0 s", t_fixed="0 s", t_seq="0 s"), ("t_overhead", "t_step"))
    more = evaluate_exactly(STEP_MODEL, context(model=model, t_layer="10 us", t_fixed="0 s", t_seq="0 s"), ("t_overhead", "t_step"))
    assert _t(more["t_overhead"]) == pytest.approx(layers * 10e-6, rel=1e-12)
    assert _t(more["t_step"]) - _t(base["t_step"]) == pytest.approx(layers * 10e-6, rel=1e-9)


def _latency(hardware: str, tp: int, model: str = "llama-3.1-70b") -> tuple[float, float]:
    """The all-reduces' latency part of one step: t_comm at ar_latency = 1 us minus t_comm at 0."""
    on = evaluate_exactly(STEP_MODEL, context(hardware, model, tp=str(tp), ar_latency="1 us"), ("t_comm", "allreduce_rounds"))
    off = evaluate_exactly(STEP_MODEL, context(hardware, model, tp=str(tp), ar_latency="0 s"), ("t_comm",))
    return _t(on["t_comm"]) - _t(off["t_comm"]), _t(on["allreduce_rounds"])


@pytest.mark.parametrize("hardware", ["h100-sxm", "b200", "mi300x"])  # NVSwitch, NVSwitch, a full Infinity Fabric mesh
def test_one_shot_latency_is_flat_in_the_gpu_count_on_a_switched_or_meshed_chip(hardware):
    for tp in (2, 4, 8):
        latency, rounds = _latency(hardware, tp)
        assert rounds == 1 and latency == pytest.approx(2 * 80 * 1e-6, rel=1e-9)
    assert _latency(hardware, 1) == (0.0, 0.0)


def test_pcie_pays_a_ring_of_two_n_minus_one_steps():
    for tp in (1, 2, 4, 8):
        latency, rounds = _latency("h100-pcie", tp)
        assert rounds == 2 * (tp - 1) and latency == pytest.approx(2 * 80 * 2 * (tp - 1) * 1e-6, rel=1e-9, abs=1e-15)


def test_a_torus_pays_a_bidirectional_ring():
    for tp, hops in ((1, 0), (2, 2), (3, 2), (4, 4), (8, 8)):
        assert _latency("tpu-v5e", tp, "llama-3.1-8b")[1] == hops


def test_the_rounds_law_is_exact_and_unit_free_symbolically():
    n = gl.n_tp
    law = pr.allreduce_rounds()
    assert law.xreplace({gl.d_1shot: 1, gl.d_ring: 0, gl.d_torus: 0}).xreplace({n: 8}) == 1
    assert law.xreplace({gl.d_1shot: 0, gl.d_ring: 1, gl.d_torus: 0}).xreplace({n: 8}) == 14
    assert law.xreplace({gl.d_1shot: 0, gl.d_ring: 0, gl.d_torus: 1}).xreplace({n: 7}) == 6
    assert law.xreplace({n: 1}) == 0  # one GPU: no all-reduce on any topology
    assert sp.simplify(law.xreplace({gl.d_1shot: 1, gl.d_ring: 0, gl.d_torus: 0}).xreplace({n: 16}) - 1) == 0


def test_a_chip_without_a_topology_makes_tensor_parallel_steps_na_but_not_one_gpu(tmp_path):
    text = (api.hardware("h100-sxm").path.read_text(encoding="utf-8")).replace('scaleup_topology = "switch"\n', "")
    path = tmp_path / "no-topology.toml"
    path.write_text(text, encoding="utf-8")
    one = evaluate_exactly(STEP_MODEL, context(str(path), "llama-3.1-8b", tp="1"), ("t_step",))
    assert not isinstance(one["t_step"], Missing)
    eight = evaluate_exactly(STEP_MODEL, context(str(path), "llama-3.1-8b", tp="8"), ("t_step",))
    assert isinstance(eight["t_step"], Missing) and "scaleup_topology" in eight["t_step"].reason


def test_the_drafter_pays_the_per_layer_overhead_for_its_own_depth():
    d = api.get("speculative-decoding")
    names = ("t_draft", "t_step")
    lean = evaluate_exactly(d, sheet_context(d, "h100-sxm", "llama-3.3-70b", tp="8", t_layer="0 s"), names)
    full = evaluate_exactly(d, sheet_context(d, "h100-sxm", "llama-3.3-70b", tp="8", t_layer="50 us"), names)
    assert _t(full["t_draft"]) - _t(lean["t_draft"]) == pytest.approx(16 * 50e-6, rel=1e-9)  # Llama 3.2 1B: 16 layers
    assert _t(full["t_step"]) - _t(lean["t_step"]) == pytest.approx(80 * 50e-6, rel=1e-9)  # the target: 80


def test_the_ideal_profile_is_the_textbook_roofline():
    sheet = api.derive("decode-floor", "h100-sxm", "llama-3.1-8b", overrides=["batch=1"], engine="ideal")
    v = evaluate_exactly(sheet.derivation, sheet.context, ("t_step", "t_gemm", "t_attention", "t_overhead", "t_comm"))
    assert _t(v["t_overhead"]) == 0 and _t(v["t_comm"]) == 0
    assert _t(v["t_step"]) == pytest.approx(_t(v["t_gemm"]) + _t(v["t_attention"]), rel=1e-12)
    inputs = {i.name: i for i in sheet.inputs}
    assert float(inputs["eta_bw"].value.exact) == 1 and not inputs["eta_bw"].is_set
    assert dict(sheet.spec_facts)["Engine profile"].startswith("ideal: ")


def test_set_overrides_one_input_of_the_profile():
    a = api.derive("decode-floor", overrides=["t_layer=10us"], engine="ideal")
    v = evaluate_exactly(a.derivation, a.context, ("t_overhead", "t_step"))
    assert _t(v["t_overhead"]) == pytest.approx(32 * 10e-6, rel=1e-12)
    assert {i.name: i.is_set for i in a.inputs}["t_layer"]


def test_a_table_row_can_name_an_engine_profile():
    (table,) = [t for t in api.derive("speculative-decoding").tables if "each engine profile" in t.title]
    labels = [r[0] for r in table.rows]
    assert "fitted" in labels and "ideal" in labels
    ideal = table.rows[labels.index("ideal")][1]
    fitted = table.rows[labels.index("fitted")][1]
    assert ideal[0].float < fitted[0].float  # no overhead: the ideal step is shorter


def test_an_unknown_engine_is_one_line():
    with pytest.raises(SpecError, match="unknown engine profile 'turbo'") as err:
        api.derive("decode-floor", engine="turbo")
    assert "\n" not in str(err.value) and "fitted" in str(err.value)


def test_a_derivation_file_cannot_default_an_engine_input(tmp_path):
    example = Path(api.__file__).resolve().parents[1] / "examples" / "kv-offload.toml"
    text = example.read_text(encoding="utf-8")
    assert "\n[defaults]\n" in text
    path = tmp_path / "mine.toml"
    path.write_text(text.replace("\n[defaults]\n", '\n[defaults]\nt_fixed = "1 ms"\n'), encoding="utf-8")
    with pytest.raises(SpecError, match=r"defaults\.t_fixed: is supplied by the engine profile") as err:
        api.derive(str(path))
    assert "\n" not in str(err.value)

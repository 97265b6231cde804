"""mbu-diagnosis and mbu-definition: the exact identities, symbolically and across the catalogue, and the slips in points.

mbu-diagnosis splits the missing time outside in (idle, collectives, non-streaming
kernels, bandwidth inside streaming kernels); the bandwidth factor is derived, so
the factors multiply to the MBU and the bucket times add to the missing time for
any inputs. mbu-definition sizes each dashboard slip against the shared step
model's reference server. Anchors: Llama 3.1 70B (80 layers, 8 KV heads of 128,
config.json), H100 SXM 3.35 TB/s (spec file).
"""

from __future__ import annotations

import functools

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import Missing, evaluate_exactly, evaluate_numbers
from roofline.derivations.physics import glossary as gl
from roofline.derivations.questions.registry import get
from roofline.specs.catalog import hardware_names, model_names

from roofline import api
from roofline.cli import main
from tests.derivations.helpers import context

DIAG = get("mbu-diagnosis")
DEF = get("mbu-definition")
HARDWARE = hardware_names()
MODELS = model_names()
FACTORS = ("f_busy", "f_collective", "f_stream", "f_bandwidth")
BUCKETS = ("t_idle", "t_collective_bucket", "t_nonstream", "t_bandwidth")
U = DIAG.symbols["U_mbu"].symbol
FAST = settings(max_examples=60, deadline=None)


def _down(d, expr: sp.Expr, names: tuple[str, ...]) -> sp.Expr:
    """`expr` with the named steps replaced by their own expressions (a Piecewise by its in-domain branch), repeatedly."""
    defs = {}
    for n in names:
        e = d.step(n).expr
        defs[sp.Symbol(n, positive=True)] = e.args[0].expr if isinstance(e, sp.Piecewise) else e
    for _ in range(len(names) + 1):
        expr = expr.xreplace(defs)
    return expr


# --- the identities, symbolically -----------------------------------------------------------------

INNER = ("t_floor", "tpot", "gap", "f_busy", "t_busy", "f_collective", "t_kernels", "f_stream", "t_stream", "f_bandwidth",
         "t_idle", "t_collective_bucket", "t_nonstream", "t_bandwidth")


def test_factors_multiply_to_the_mbu_symbolically():
    product = sp.Mul(*(sp.Symbol(f, positive=True) for f in FACTORS))
    assert sp.simplify(_down(DIAG, product, INNER) - U) == 0


def test_buckets_add_to_the_missing_time_symbolically():
    total = sp.Add(*(sp.Symbol(b, positive=True) for b in BUCKETS))
    assert sp.simplify(_down(DIAG, total - sp.Symbol("gap", positive=True), INNER)) == 0


def test_the_derived_factor_is_the_floor_over_the_streaming_time_symbolically():
    eta, floor_over_stream = (_down(DIAG, sp.Symbol(n, positive=True), INNER) for n in ("f_bandwidth", "t_floor"))
    stream = _down(DIAG, sp.Symbol("t_stream", positive=True), INNER)
    assert sp.simplify(eta - floor_over_stream / stream) == 0


def test_mbu_times_step_time_times_bandwidth_is_the_bytes_symbolically():
    tpot = _down(DIAG, sp.Symbol("tpot", positive=True), INNER)
    assert sp.simplify(U * tpot * gl.beta - sp.Symbol("bytes_per_gpu", positive=True)) == 0
    mbu = DEF.step("mbu").expr  # the definition sheet's MBU, over its step time
    assert sp.simplify(mbu * sp.Symbol("t_step", positive=True) * gl.beta - sp.Symbol("bytes_per_gpu", positive=True)) == 0


# --- the identities, numerically across every shipped model and chip -------------------------------

@pytest.mark.parametrize("mbu, share_with_room", [("0.3", 0.8), ("0.6", 0.5)])
def test_identities_hold_for_every_model_and_chip(mbu, share_with_room):
    checked = 0
    for h in HARDWARE:
        for m in MODELS:
            # the all-reduce latency pinned at a one-shot kernel's figure: the share of servers with room depends on it
            v = evaluate_numbers(DIAG, context(h, m, tp="8", batch="16", mbu=mbu, ar_latency="5 us"), (*FACTORS, *BUCKETS, "gap", "tpot", "bytes_per_gpu"))
            beta = float(api.hardware(h).memory_bandwidth.to("B/s").magnitude)
            assert float(mbu) * float(v["tpot"]) * beta == pytest.approx(float(v["bytes_per_gpu"]), rel=1e-12)
            if isinstance(v["f_collective"], Missing):
                # a small model on a fast chip: the ring's hops alone outlast the busy time this MBU leaves
                assert v["f_collective"].kind == "none" and "all-reduces" in v["f_collective"].reason
                continue
            if isinstance(v["f_bandwidth"], Missing):
                # none only where the stated shares and the modelled collectives leave no room for this MBU
                assert v["f_bandwidth"].kind == "none" and "inconsistent" in v["f_bandwidth"].reason
                assert float(mbu) > v["f_busy"] * v["f_collective"] * v["f_stream"]
                continue
            product = v["f_busy"] * v["f_collective"] * v["f_stream"] * v["f_bandwidth"]
            assert float(product) == pytest.approx(float(mbu), rel=1e-12), (h, m)
            assert float(sum(v[b] for b in BUCKETS)) == pytest.approx(float(v["gap"]), rel=1e-12), (h, m)
            assert all(0 < float(v[f]) <= 1 for f in FACTORS), (h, m)
            assert all(float(v[b]) >= 0 for b in BUCKETS), (h, m)
            checked += 1
    assert checked > share_with_room * len(HARDWARE) * len(MODELS)  # at a low MBU nearly every server has room


# --- hypothesis: each factor in (0, 1]; the missing time is zero exactly when the MBU is 1 ---------

@FAST
@given(st.sampled_from(MODELS), st.sampled_from(["h100-sxm", "h200", "b200", "mi300x", "l4", "tpu-v5e"]),
       st.integers(1, 1000), st.integers(0, 90), st.integers(0, 90), st.integers(0, 5), st.sampled_from(["1", "2", "8"]),
       st.integers(1, 256), st.integers(1, 65536))
def test_factors_are_fractions_and_the_buckets_add_up(model, hardware, permille, idle, nonstream, latency, tp, batch, ctx_len):
    mbu = permille / 1000
    v = evaluate_exactly(DIAG, context(hardware, model, mbu=str(mbu), idle_share=str(idle / 100), nonstreaming_share=str(nonstream / 100),
                               ar_latency=f"{latency * 10} us", tp=tp, batch=str(batch), context=f"{ctx_len} token"))
    for f in ("f_busy", "f_stream"):
        assert 0 < float(v[f]) <= 1
    if isinstance(v["f_collective"], Missing):
        assert v["f_collective"].kind == "none"
        return
    assert 0 < float(v["f_collective"]) <= 1
    room = v["f_busy"] * v["f_collective"] * v["f_stream"]
    if isinstance(v["f_bandwidth"], Missing):
        assert mbu > float(room) * (1 - 1e-12)
        assert isinstance(v["t_bandwidth"], Missing)  # the bucket is none with its factor, never negative
        return
    assert 0 < float(v["f_bandwidth"]) <= 1
    assert float(v["mbu_rebuilt"]) == pytest.approx(mbu, rel=1e-12)
    assert float(v["gap_rebuilt"]) == pytest.approx(float(v["gap"]), rel=1e-12, abs=1e-18)
    assert (v["gap"] == 0) == (mbu == 1)
    for share in ("share_idle", "share_collective", "share_nonstream", "share_bandwidth"):
        assert isinstance(v[share], Missing) or 0 <= float(v[share]) <= 1


def test_shares_are_none_not_above_one_when_the_inputs_contradict():
    """Found by running Mixtral 8x7B at TP 8, batch 1 on H200: the collective share of the missing time read 1.2 while the
    bandwidth bucket was none; every share is now taken of the buckets' sum, so all are none together. An MBU above what the
    default shares leave room for (0.95 x 0.9) makes the bandwidth factor none again."""
    v = evaluate_exactly(DIAG, context("h200", "mixtral-8x7b", tp="8", batch="1", mbu="0.95"))
    assert isinstance(v["f_bandwidth"], Missing)
    assert all(isinstance(v[s], Missing) for s in ("share_idle", "share_collective", "share_nonstream", "share_bandwidth"))


@FAST
@given(st.integers(1, 1000), st.sampled_from(MODELS))
def test_missing_time_is_zero_exactly_when_the_mbu_is_one(permille, model):
    v = evaluate_exactly(DIAG, context("h100-sxm", model, mbu=str(permille / 1000)), ["gap", "missing_share"])
    assert (v["gap"] == 0) == (permille == 1000)
    assert float(v["gap"]) >= 0
    assert float(v["missing_share"]) == pytest.approx(1 - permille / 1000, abs=1e-12)


def test_mbu_of_one_with_no_idle_or_small_kernels_on_one_gpu_leaves_every_factor_at_one():
    v = evaluate_exactly(DIAG, context("h100-sxm", "llama-3.1-8b", mbu="1", idle_share="0", nonstreaming_share="0", tp="1"))
    assert [v[f] for f in FACTORS] == [1, 1, 1, 1]
    assert [v[b] for b in BUCKETS] == [0, 0, 0, 0]
    assert isinstance(v["share_idle"], Missing)  # a share of no missing time has no value


# --- anchors -------------------------------------------------------------------------------------

def test_floor_and_implied_step_llama_70b_tp8_h100():
    """Llama 3.1 70B, TP 8, batch 16, 8K context: weights/8 plus 16 x 8192 tokens x 80 layers x 1 KV head x 256 x 2 B per GPU."""
    active = api.model("llama-3.1-70b").param_counts().active_matmul
    nbytes = active * 2 / 8 + 16 * 8192 * 80 * 256 * 2
    v = evaluate_exactly(DIAG, context("h100-sxm", "llama-3.1-70b", tp="8", batch="16", ar_latency="1 us"), ["t_floor", "tpot", "gap", "t_collective"])
    assert float(v["t_floor"]) == pytest.approx(nbytes / 3.35e12, rel=1e-12)
    assert float(v["tpot"]) == pytest.approx(nbytes / 3.35e12 / 0.6, rel=1e-12)
    # collectives: 160 all-reduces of 16 x 8192 x 2 B, ring bytes over 450 GB/s, plus one one-shot round of 1 us each (NVSwitch)
    assert float(v["t_collective"]) == pytest.approx(160 * (2 * 7 / 8 * 16 * 8192 * 2 / 450e9 + 1e-6), rel=1e-12)


def test_one_gpu_has_no_collective_bucket():
    v = evaluate_exactly(DIAG, context("h100-sxm", "llama-3.1-8b", tp="1"), ["t_collective_bucket", "f_collective"])
    assert v["t_collective_bucket"] == 0 and v["f_collective"] == 1


def test_default_sheets_claims():
    diag = api.derive("mbu-diagnosis")
    # at the defaults (70B on eight H100s, one-shot all-reduces) every bucket has its value and the identity is checked there
    assert [c.holds for c in diag.claims] == [True, True]
    assert all(not isinstance(diag.results[r].missing, Missing) for r in ("t_floor", "tpot", "gap"))
    steps = {s.step.name: s.value for s in diag.steps}
    assert all(steps[b].exact is not None for b in BUCKETS)
    defn = {c.left_name: c.holds for c in api.derive("mbu-definition").claims}
    # the largest slip a dashboard shows without reading above 1 reaches 30 points (another SKU's peak: 34.7); a binary prefix
    # (7% of MBU) and the achievable peak (1/0.8 - 1 = 25% of MBU) never can
    assert defn["points_worst_unflagged"] is True and defn["points_tp_one_gpu"] is True
    steps = {st.step.name: st.value for st in api.derive("mbu-definition").steps}
    below_one = [steps[f"points_{w}"].exact for w in ("all_params", "no_kv", "binary", "weight_width", "achievable_peak", "prefill_in_time",
                                                     "tp_one_gpu", "tp_cache_once", "kernel_time", "wrong_sku", "speculative_per_token")
                 if steps[{"all_params": "mbu_all_params"}.get(w, f"mbu_{w}")].exact <= 1]
    assert steps["points_worst_unflagged"].exact == max(below_one) < steps["points_worst"].exact
    assert defn["points_binary"] is False and defn["points_achievable_peak"] is False


# --- mbu-definition: each slip against an independent count -----------------------------------

@functools.cache
def _def(model="llama-3.1-70b", **kw):
    return evaluate_exactly(DEF, context("h100-sxm", model, tp="8", batch="16", **kw))


def test_definition_mbu_is_bytes_over_step_time_and_datasheet_bandwidth():
    v = _def()
    assert 0 < v["mbu"] < 1
    assert float(v["mbu"]) == pytest.approx(float(v["bytes_per_gpu"]) / (float(v["t_step"]) * 3.35e12), rel=1e-12)


def test_each_slip_moves_the_mbu_by_its_factor():
    v = _def(eta_bw="0.8")
    mbu = float(v["mbu"])
    assert float(v["mbu_binary"]) == pytest.approx(mbu * 1e9 / 2**30, rel=1e-12)
    assert float(v["mbu_achievable_peak"]) == pytest.approx(mbu / 0.8, rel=1e-12)
    assert float(v["mbu_no_kv"]) == pytest.approx(mbu * float(v["weight_bytes_gpu"]) / float(v["bytes_per_gpu"]), rel=1e-12)
    # Llama 3.1 70B has 8 KV heads: at TP 8 the cache splits evenly, so the server's bytes over the server's bandwidth is right
    # and the server's bytes over one GPU is exactly 8 times too high
    assert v["mbu_tp_cache_once"] == v["mbu"]
    assert float(v["mbu_tp_one_gpu"]) == pytest.approx(8 * mbu, rel=1e-12)
    # 8 bits per weight on a BF16 server: the weights count half
    half = (float(v["weight_bytes_gpu"]) / 2 + float(v["kv_bytes_step"])) / float(v["bytes_per_gpu"])
    assert float(v["mbu_weight_width"]) == pytest.approx(mbu * half, rel=1e-12)
    for p, wrong in (("points_binary", "mbu_binary"), ("points_no_kv", "mbu_no_kv"), ("points_tp_one_gpu", "mbu_tp_one_gpu")):
        assert float(v[p]) == pytest.approx(100 * abs(float(v[wrong]) - mbu), rel=1e-12)


def test_replicated_cache_counted_once_reads_low():
    """Qwen3-235B-A22B has 4 KV heads: at TP 8 each is on two GPUs, and DeepSeek-V3's latent is on all eight."""
    for model in ("qwen3-235b-a22b", "deepseek-v3"):
        v = _def(model)
        assert v["mbu_tp_cache_once"] < v["mbu"]


def test_every_parameter_overcounts_a_moe_model_far_more_than_a_dense_one():
    moe, dense = _def("qwen3-235b-a22b"), _def()
    assert float(moe["points_all_params"]) > 10 * float(dense["points_all_params"])
    # at a large batch every expert is read and the slip shrinks to the embedding
    big = evaluate_exactly(DEF, context("h100-sxm", "qwen3-235b-a22b", tp="8", batch="256"), ["points_all_params"])
    assert float(big["points_all_params"]) < 1


@FAST
@given(st.sampled_from(MODELS), st.sampled_from(["h100-sxm", "h200", "b200", "mi300x"]), st.integers(1, 256), st.integers(1, 65536),
       st.sampled_from(["1", "2", "8"]))
def test_true_mbu_is_a_fraction_and_slips_go_the_stated_way(model, hardware, batch, ctx_len, tp):
    v = evaluate_exactly(DEF, context(hardware, model, batch=str(batch), context=f"{ctx_len} token", tp=tp))
    assert 0 < v["mbu"] < 1
    assert v["mbu_no_kv"] < v["mbu"] < v["mbu_achievable_peak"]
    assert v["mbu_binary"] < v["mbu"] and v["mbu_prefill_in_time"] < v["mbu"]
    assert v["mbu_all_params"] >= v["mbu"] and v["mbu_tp_cache_once"] <= v["mbu"]


# --- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, first_line", [
    (["derive", "mbu-diagnosis", "--set", "mbu=1.5"], "roofline: error: --set: mbu: expected a fraction in (0, 1], found '1.5'"),
    (["derive", "mbu-diagnosis", "--set", "mbu=0"], "roofline: error: --set: mbu: "),
    (["derive", "mbu-diagnosis", "--set", "mbu=60%"], "roofline: error: --set: mbu: expected a plain number"),
    (["derive", "mbu-diagnosis", "--set", "idle_share=-0.1"], "roofline: error: --set: idle_share: "),
    (["derive", "mbu-definition", "--set", "output_tokens=0"], "roofline: error: --set: output_tokens: "),
    (["derive", "mbu-definition", "--set", "mbu=0.6"], "roofline: error: --set: mbu: mbu-definition has no input by that name"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, first_line):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(first_line) and err.count("\n") == 1


def test_an_idle_share_of_one_is_none_not_negative():
    v = evaluate_exactly(DIAG, context("h100-sxm", "llama-3.1-8b", idle_share="1"), ["f_busy", "t_idle", "f_bandwidth"])
    assert isinstance(v["f_busy"], Missing) and "idle share" in v["f_busy"].reason
    assert isinstance(v["f_bandwidth"], Missing)

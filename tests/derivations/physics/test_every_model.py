"""Every shipped model on every shipped chip on every sheet: finite, positive, or 'none'/'n/a' with a reason.

The generality issue (MoE experts touched, MLA, tensor parallelism, compute
in the step time, closed forms outside their domain) is pinned here: a matrix
over the whole catalogue at default inputs, hypothesis draws across batch,
context and TP, the physics properties of the shared step model, and one
regression test per bug found, with its numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.declare import Claim, Step, derivation
from roofline.derivations.engine.sheet import Missing, evaluate_exactly, evaluate_numbers
from roofline.derivations.engine.symbols import Symbols
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.questions.registry import BY_SLUG, DERIVATIONS
from roofline.specs.catalog import hardware_names, model_names
from roofline.units import UnitMismatchError

from roofline import api
from tests.derivations.helpers import context, sheet_context

HARDWARE = hardware_names()
MODELS = model_names()
MLA_MODELS = {m for m in MODELS if api.model(m).mla is not None}
#: (sheet, model) pairs where the physics has no meaning and the sheet refuses, with one line
REFUSALS_ALLOWED = {("mla-absorption", m) for m in MODELS if m not in MLA_MODELS}
# a dense model has no routed experts: moe-experts refuses it in one line
REFUSALS_ALLOWED |= {("moe-experts", m) for m in MODELS if api.model(m).moe is None}
# linear-attention, Mamba-2 and sparse-attention layers run kernels the per-layer ranking does not list: decode-op-ranking refuses them
REFUSALS_ALLOWED |= {("decode-op-ranking", m) for m in MODELS if api.model(m).recurrent_layers or api.model(m).sparse_layers}
#: (sheet, chip) pairs refused for the chip: joules-per-token bounds power by the TDP, which the TPU specs do not give
CHIP_REFUSALS_ALLOWED = {("joules-per-token", h) for h in HARDWARE if api.hardware(h).tdp is None} | {
    ("disaggregation", h) for h in HARDWARE if api.hardware(h).scaleout_bandwidth_per_direction is None} | {
    ("kv-tiers", h) for h in HARDWARE if api.hardware(h).host_link_bandwidth_per_direction is None}  # no published host link (TPU7x, Trainium)
#: sheets whose capacity results (the largest batch that fits) are 'none' where not even one sequence fits at the defaults
FIT_SHEETS = {"batch-knee", "joules-per-token", "hardware-upgrade", "slo-goodput", "prefix-cache"}
#: sheets that read batch, context or tensor parallelism
DRAWN = settings(max_examples=60, deadline=None)


def _headline(d, hardware: str, model: str, **inputs: str) -> dict[str, object]:
    """The headline results by the compiled evaluation (derivations.engine.numeric): the matrix covers every cell cheaply;
    `test_matrix_sample_agrees_with_the_exact_evaluation` holds the compiled values to the exact ones on a sample."""
    return evaluate_numbers(d, sheet_context(d, hardware, model, **inputs), d.results)


def _check_value(where: str, name: str, v: object, headline: bool) -> str:
    """'ok', 'none' or 'n/a'; fails on a negative, NaN or infinite number or an empty reason."""
    if isinstance(v, Missing):
        assert v.reason.strip(), f"{where}: {name} is {v.kind} without a reason"
        return v.kind
    x = float(v)
    assert math.isfinite(x), f"{where}: {name} = {x}"
    assert x > 0 if headline else x >= 0, f"{where}: {name} = {x}"
    return "ok"


def _does_not_fit(d, hardware: str, model: str) -> bool:
    """At the sheet's defaults the weights and one sequence's cache (the shared memory fit) exceed the usable memory: no batch fits."""
    v = evaluate_exactly(d, sheet_context(d, hardware, model), ["memory_per_gpu", "usable_memory"])
    return v["memory_per_gpu"] > v["usable_memory"]


def test_matrix_every_sheet_model_and_chip_at_defaults():
    cells: Counter[str] = Counter()
    for d in DERIVATIONS:
        for h in HARDWARE:
            for m in MODELS:
                values = _headline(d, h, m)
                kinds = {r: _check_value(f"{d.slug} {h} {m}", r, values[r], headline=True) for r in d.results}
                if "n/a" in kinds.values():
                    assert (d.slug, m) in REFUSALS_ALLOWED or (d.slug, h) in CHIP_REFUSALS_ALLOWED, f"{d.slug} refuses {m} on {h}: " + next(
                        values[r].reason for r, k in kinds.items() if k == "n/a")
                    cells["refused"] += 1
                elif "none" in kinds.values():
                    cells["does not fit" if d.slug in FIT_SHEETS and _does_not_fit(d, h, m) else "none"] += 1
                else:
                    cells["produced"] += 1
    # every cell the physics applies to produces numbers; 'none' (a closed form outside its domain) is rare
    assert cells["refused"] == len(REFUSALS_ALLOWED) * len(HARDWARE) + len(CHIP_REFUSALS_ALLOWED) * len(MODELS)
    assert cells["produced"] > 0.95 * (cells["produced"] + cells["none"])


#: one model of each kind (dense GQA, dense with tied embeddings, MoE, MLA with MoE) on a GPU and on a TPU (no TDP)
SAMPLE_MODELS = ("llama-3.1-8b", "llama-3.2-1b", "mixtral-8x7b", "deepseek-v3")
SAMPLE_CHIPS = ("h100-sxm", "tpu-v5e")


@pytest.mark.parametrize("slug", [d.slug for d in DERIVATIONS])
def test_matrix_sample_agrees_with_the_exact_evaluation(slug):
    """The matrix's compiled headline values equal the exact ones (or the same Missing) on one model of each kind."""
    d = BY_SLUG[slug]
    for h in SAMPLE_CHIPS:
        for m in SAMPLE_MODELS:
            if (slug, m) in REFUSALS_ALLOWED:
                continue
            ctx = sheet_context(d, h, m)
            exact, got = evaluate_exactly(d, ctx, d.results), evaluate_numbers(d, ctx, d.results)
            for r in d.results:
                e, f = exact[r], got[r]
                if isinstance(e, Missing) or isinstance(f, Missing):
                    assert isinstance(e, Missing) and isinstance(f, Missing) and (e.kind, e.reason) == (f.kind, f.reason), f"{slug} {h} {m} {r}"
                else:
                    assert f == pytest.approx(float(e), rel=1e-9), f"{slug} {h} {m} {r}"


@DRAWN
@given(st.sampled_from([d.slug for d in DERIVATIONS]), st.sampled_from(MODELS), st.sampled_from(HARDWARE),
       st.integers(1, 4096), st.integers(1, 131072), st.integers(1, 16))
def test_every_step_is_finite_and_non_negative_at_drawn_inputs(slug, model, hardware, batch, ctx_len, tp):
    d = BY_SLUG[slug]
    if (slug, model) in REFUSALS_ALLOWED:
        return
    values = evaluate_exactly(d, sheet_context(d, hardware, model, batch=str(batch), context=f"{ctx_len} token", tp=str(tp)))
    for name, v in values.items():
        _check_value(f"{slug} {hardware} {model} B={batch} T={ctx_len} TP={tp}", name, v, headline=name in d.results)


# --- the shared step model (decode-floor carries it whole) ---

DF = BY_SLUG["decode-floor"]


@DRAWN
@given(st.sampled_from(MODELS), st.sampled_from(["h100-sxm", "h200", "b200", "mi300x", "tpu-v5e", "l4"]),
       st.integers(1, 4096), st.integers(1, 131072), st.integers(1, 16))
def test_step_time_is_at_least_its_compute_and_its_memory_time(model, hardware, batch, ctx_len, tp):
    v = evaluate_exactly(DF, context(hardware, model, batch=str(batch), context=f"{ctx_len} token", tp=str(tp)))
    assert v["t_step"] >= v["t_compute"] and v["t_step"] >= v["t_memory"]
    assert v["t_step"] >= v["t_gemm"] + v["t_attention"]


@DRAWN
@given(st.sampled_from(MODELS), st.integers(1, 2048), st.integers(1, 2048))
def test_experts_touched_is_between_top_k_and_all_and_rises_with_batch(model, b1, b2):
    lo, hi = sorted((b1, b2))
    a = evaluate_exactly(DF, context(model=model, batch=str(lo)), ["experts_touched"])["experts_touched"]
    b = evaluate_exactly(DF, context(model=model, batch=str(hi)), ["experts_touched"])["experts_touched"]
    moe = api.model(model).moe
    k, experts = (moe.top_k, moe.experts) if moe else (1, 1)
    assert k - 1e-9 <= a <= b <= experts + 1e-9
    if lo == 1:
        assert a == pytest.approx(k, rel=1e-12)


@DRAWN
@given(st.sampled_from(MODELS), st.integers(1, 512), st.integers(1, 65536), st.integers(1, 16))
def test_kv_bytes_per_gpu_never_fall_below_the_replicated_share(model, batch, ctx_len, tp):
    m = api.model(model)
    v = evaluate_exactly(DF, context(model=model, batch=str(batch), context=f"{ctx_len} token", tp=str(tp)),
                 ["kv_bytes_step", "kv_bytes_per_token", "kept_context", "read_context"])
    streams = 1 if m.mla else m.num_kv_heads
    per_stream = v["kv_bytes_per_token"] / streams  # one cached stream of every layer
    kept = v["kept_context"]  # the tokens a layer keeps, averaged over layers: ctx_len without windows, less with them
    read = v["read_context"]  # the tokens a layer reads per query: what it keeps, or a sparse layer's top-k
    assert read <= kept <= ctx_len and (kept == ctx_len or any(w for _, w in m.attention_windows))
    assert read == kept or m.sparse_layers
    assert v["kv_bytes_step"] >= batch * read * per_stream * Fraction(-(-streams // tp)) - 1e-6
    assert v["kv_bytes_step"] >= batch * read * v["kv_bytes_per_token"] / tp - 1e-6


# --- regression tests, one per bug in the generality issue, with its numbers ---

def test_decode_floor_has_a_compute_term_llama_8b_batch_1024():
    """Before: 9.6 ms and about 106,000 token/s at B=1024, T=128 on H100 SXM, above the chip's compute ceiling."""
    v = evaluate_exactly(DF, context("h100-sxm", "llama-3.1-8b", batch="1024", context="128 token"))
    compute_at_peak = 2 * 7_504_658_432 * 1024 / 989.4e12  # kappa * P_act * B / pi, about 15.5 ms
    assert float(v["t_step"]) > compute_at_peak
    assert float(v["throughput"]) < 1024 / compute_at_peak  # below the compute ceiling, about 66,000 token/s
    assert float(v["t_gemm"]) == pytest.approx(float(v["flops_gemm_gpu"]) / (0.7 * 989.4e12))  # compute-bound GEMMs


def test_mixtral_decode_reads_the_experts_the_batch_touches():
    """Before: t_step at B=64 read the top-2 experts only."""
    one = evaluate_exactly(DF, context("h100-sxm", "mixtral-8x7b", batch="1"))
    many = evaluate_exactly(DF, context("h100-sxm", "mixtral-8x7b", batch="64"))
    assert one["experts_touched"] == 2
    assert float(many["experts_touched"]) == pytest.approx(8 * (1 - (6 / 8) ** 64))
    assert float(many["weight_bytes"]) > 3 * float(one["weight_bytes"])


def test_mixtral_prefill_crossover_reads_every_expert():
    """Before: T_cross 295 tokens and ttft_at_cross 7.6 ms (top-2 weights); with all experts about 1,080 tokens and 28 ms."""
    v = evaluate_exactly(BY_SLUG["prefill-decode-crossover"], context("h100-sxm", "mixtral-8x7b"))
    assert float(v["T_cross"]) == pytest.approx(1079, abs=1)
    assert float(v["ttft_at_cross"]) == pytest.approx(28.1e-3, rel=0.01)
    assert float(v["expert_coverage_at_cross"]) == pytest.approx(1, abs=1e-9)


def test_deepseek_latent_is_on_every_gpu():
    """Before: DeepSeek-V3 at TP=8, B=64 divided the latent by 8 (4.6 GB of KV per GPU instead of 36.8 GB)."""
    v = evaluate_exactly(DF, context("h100-sxm", "deepseek-v3", batch="64", tp="8"))
    assert v["kv_bytes_step"] == 64 * 8192 * 61 * 576 * 2


def test_kv_heads_replicate_beyond_their_count():
    """Llama 3.1 70B has 8 KV heads: at TP=16 each GPU still holds one whole head per layer."""
    tp8 = evaluate_exactly(DF, context("h100-sxm", "llama-3.1-70b", tp="8"), ["kv_bytes_per_token_gpu"])
    tp16 = evaluate_exactly(DF, context("h100-sxm", "llama-3.1-70b", tp="16"), ["kv_bytes_per_token_gpu"])
    tp3 = evaluate_exactly(DF, context("h100-sxm", "llama-3.1-70b", tp="3"), ["kv_bytes_per_token_gpu"])
    assert tp8["kv_bytes_per_token_gpu"] == tp16["kv_bytes_per_token_gpu"] == 80 * 256 * 2
    assert tp3["kv_bytes_per_token_gpu"] == 80 * 256 * 2 * 3  # ceil(8/3) heads on the busiest GPU


def test_mla_models_derive_on_every_sheet():
    for slug in ("flops-per-token", "prefill-decode-crossover", "ridge-coincidence", "decode-floor", "attention-intensity"):
        for m in sorted(MLA_MODELS):
            values = _headline(BY_SLUG[slug], "h100-sxm", m)
            assert not any(isinstance(v, Missing) and v.kind == "n/a" for v in values.values()), (slug, m)


def test_flops_per_token_knows_deepseek_params_total():
    sheet = api.derive("flops-per-token", model="deepseek-v3")
    assert sheet.results["params_total"].float == api.model("deepseek-v3").param_counts().total


def test_moe_rebuild_from_the_config_matches_the_exact_count():
    for m in ("mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b"):
        v = evaluate_exactly(BY_SLUG["flops-per-token"], context(model=m), ["params_matmul_rebuilt", "params_matmul"])
        assert v["params_matmul_rebuilt"] == v["params_matmul"], m


def test_ridge_t_max_is_none_when_attention_reaches_the_ridge():
    """Before: ridge-coincidence --set tokens_per_step=40 printed T_max = -688,177 tokens (Llama 3.1 70B row)."""
    v = evaluate_exactly(BY_SLUG["ridge-coincidence"], context("h100-sxm", "llama-3.1-70b", tokens_per_step="40 token"))
    assert isinstance(v["T_max"], Missing) and v["T_max"].kind == "none"
    assert "at or above the ridge" in v["T_max"].reason
    sheet = api.derive("ridge-coincidence", model="llama-3.1-70b", overrides=["tokens_per_step=40"])
    doc = api.render(sheet, "json")
    assert '"T_max": {\n      "value": null' in doc and "-6" not in doc.split('"T_max"')[1][:200]


def test_moe_expert_gemms_turn_compute_bound_e_over_k_times_later():
    v = evaluate_exactly(BY_SLUG["ridge-coincidence"], context("h100-sxm", "mixtral-8x7b"))
    assert v["B_cross_expert"] == v["B_cross"] * 8 / 2


def test_a_claim_across_units_needs_a_stated_conversion():
    ridge = Step("ridge", pr.ridge_point(), "flop/B", "r")
    batch = Step("b", gl.B * 1, "1", "b")
    with pytest.raises(UnitMismatchError, match="state the conversion"):
        derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (ridge, batch), (), claims=(Claim("equal", "b", "ridge"),))
    derivation("t", "t", "t", Symbols(parent=gl.GLOSSARY), (ridge, batch), (), claims=(Claim("equal", "b", "ridge", convert="flop/B"),))


def test_single_gpu_step_needs_no_link_bandwidth():
    """A chip without a GPU-to-GPU link still has a step time on one GPU; with TP > 1 the all-reduce is n/a with the reason."""
    from dataclasses import replace

    from roofline.derivations.engine.context import make_context

    hw = replace(api.hardware("h100-sxm"), scaleup_bandwidth_per_direction=None)
    ctx = make_context(hw, api.model("llama-3.1-8b"))
    assert evaluate_exactly(DF, ctx)["t_comm"] == 0
    two = evaluate_exactly(DF, ctx.with_overrides(tp="2"))
    assert isinstance(two["t_comm"], Missing) and "scaleup_bandwidth_per_direction" in two["t_comm"].reason


def test_experts_touched_closed_form():
    n = sp.Symbol("n", positive=True)
    e = pr.experts_touched(n, sp.Integer(256), sp.Integer(8))
    assert e.subs(n, 1) == 8
    assert float(e.subs(n, 64)) == pytest.approx(256 * (1 - (1 - 8 / 256) ** 64))

"""decode-op-ranking: every kernel of one decode step, for dense GQA, MoE and MLA models.

Anchors from the configs (Llama 3.1 70B: D 8192, F 28672, N 64, K 8, H 128;
Mixtral 8x7B: D 4096, 8 experts of 14336, top-2; Qwen3-235B-A22B: D 4096, 128
experts of 1536, top-8; DeepSeek-V3: D 7168, N 128, q_lora_rank 1536, r_kv 512,
d_R 64, d_nope 128, d_v 128, 256 experts of 2048, top-8, one shared, 3 dense
layers of 18432), closed forms against their equations, and the roofline as
hypothesis properties.
"""

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.sheet import Missing, context_values, evaluate_exactly, evaluate_numbers
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.questions.decode_op_ranking import KERNELS
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.catalog import model_names

from roofline import api
from tests.derivations.helpers import context

DOR = BY_SLUG["decode-op-ranking"]
FAST = settings(max_examples=50, deadline=None)
#: models whose layers are attention (GQA or MLA) plus an MLP: the kernels the ranking lists; a model with linear-attention,
#: Mamba-2 or sparse-attention layers runs kernels it does not list and is refused (test_layers_it_does_not_list_are_refused)
MODELS = tuple(m for m in model_names() if not (api.model(m).recurrent_layers or api.model(m).sparse_layers))
UNLISTED = tuple(m for m in model_names() if m not in MODELS)
GQA_KERNELS = ("qkv", "o", "gate_up", "down", "lm_head", "attn", "ew")
MLA_KERNELS = ("dqkv", "uq", "uk", "uv")
MOE_KERNELS = ("router", "experts", "ew_moe")
ATTN_LLAMA_70B = evaluate_exactly(DOR, context(model="llama-3.1-70b"), ["intensity_attn"])["intensity_attn"]


def _swiglu(d: int, f: int) -> int:
    return 3 * d * f


# --- dense GQA: the teaser's numbers ------------------------------------------------------------

@pytest.mark.parametrize(("model", "kv", "flip"), [
    ("llama-3.1-70b", "bf16", 8), ("llama-3.1-70b", "fp8", 16), ("llama-3.1-8b", "bf16", 4), ("llama-3.1-8b", "fp8", 8),
])
def test_b_flip_anchors(model, kv, flip):
    assert evaluate_exactly(DOR, context(model=model, kv=kv))["B_flip"] == flip


def test_b_flip_closed_forms_meet_their_equations():
    for name in ("B_flip", "B_flip_experts", "B_flip_time"):
        step = DOR.step(name)
        lhs, rhs = step.equation
        assert sp.simplify(lhs.xreplace({gl.B: step.expr}) - rhs.xreplace({gl.B: step.expr})) == 0
    gqa = {gl.w_k: gl.H, gl.w_v: gl.H, gl.w_c: 2 * gl.H, gl.n_kv: gl.K}
    flip = DOR.step("B_flip").expr
    assert sp.simplify(flip.xreplace(gqa) - gl.kappa_attn * gl.N * gl.b_w / (2 * gl.kappa * gl.K * gl.b_kv)) == 0
    assert sp.simplify(DOR.step("B_flip_experts").expr - flip * gl.E / gl.k_E) == 0
    flip_time = DOR.step("B_flip_time").expr
    kept = pr.read_context()  # T without windows; windowed layers read min(T, W)
    assert sp.simplify(flip_time - gl.N * gl.h_v * gl.D * gl.u_param * gl.b_w / (kept * gl.n_kv * gl.w_c * gl.b_kv)) == 0
    # a model without windows (L_win = 0) has exactly the closed form it had before windows
    assert sp.simplify(flip_time.xreplace({gl.L_win: 0}) - gl.N * gl.h_v * gl.D * gl.u_param * gl.b_w / (gl.T * gl.n_kv * gl.w_c * gl.b_kv)) == 0


def test_time_flip_for_llama_70b_is_4_at_8k_and_8_at_4k():
    assert evaluate_exactly(DOR, context(model="llama-3.1-70b"))["B_flip_time"] == 4
    assert evaluate_exactly(DOR, context(model="llama-3.1-70b", context="4096 token"))["B_flip_time"] == 8


def test_dense_llama_70b_runs_todays_kernels_and_keeps_b_flip_8():
    v = evaluate_exactly(DOR, context(model="llama-3.1-70b"))
    assert v["B_flip"] == 8 and v["B_flip_experts"] == 8
    assert v["flops_qkv"] == 2 * 8192 * (64 + 2 * 8) * 128
    assert v["flops_gate_up"] == 2 * 8192 * 2 * 28672 and v["flops_down"] == 2 * 28672 * 8192
    assert v["flops_o"] == 2 * 64 * 128 * 8192
    for k in (*MLA_KERNELS, *MOE_KERNELS):
        assert isinstance(v[f"t_{k}"], Missing) and v[f"t_{k}"].kind == "n/a", k
    assert v["t_shared"] == 0  # no shared experts: nothing to run
    assert v["t_attn_block"] == v["t_qkv"] + v["t_attn"] + v["t_o"] + v["t_ew"]
    assert v["t_mlp_dense"] == v["t_gate_up"] + v["t_down"] + v["t_ew_mlp"]
    assert v["t_step"] == 80 * (v["t_attn_block"] + v["t_mlp_dense"]) + v["t_lm_head"]
    assert v["small_kernels"] == 80 * 6


def test_every_kernel_is_memory_bound_at_batch_1():
    v = evaluate_exactly(DOR, context(model="llama-3.1-70b"))
    for k in GQA_KERNELS:
        assert v[f"intensity_{k}"] < v["intensity_gemm_limit"] * 10


@FAST
@given(st.integers(1, 1024))
def test_decode_weight_gemms_tie_and_attention_does_not_move(batch):
    """The tie holds while B*q is well below D (at B*q = D the O projection's activations equal its weights)."""
    names = [f"intensity_{k}" for k in ("qkv", "o", "gate_up", "down", "lm_head", "attn", "ew")] + ["intensity_gemm_limit"]
    v = evaluate_exactly(DOR, context(model="llama-3.1-70b", batch=str(batch)), names)
    gemms = [v[f"intensity_{k}"] for k in ("qkv", "o", "gate_up", "down", "lm_head")]
    assert max(gemms) < v["intensity_gemm_limit"]
    assert min(gemms) > v["intensity_gemm_limit"] * sp.Rational(3, 4)
    assert v["intensity_attn"] == ATTN_LLAMA_70B
    assert v["intensity_ew"] < 1


@FAST
@given(st.integers(1, 64))
def test_attention_outranks_the_gemms_exactly_below_b_flip(batch):
    v = evaluate_exactly(DOR, context(model="llama-3.1-70b", batch=str(batch)), ["intensity_gemm_limit", "intensity_attn_limit", "B_flip"])
    assert (v["intensity_gemm_limit"] < v["intensity_attn_limit"]) == (batch < v["B_flip"])


# --- MoE ----------------------------------------------------------------------------------------

def test_mixtral_routed_experts_read_top_2_at_batch_1_and_nearly_all_8_at_64():
    expert = _swiglu(4096, 14336) * 2  # bytes of one expert's gate, up and down in BF16
    one = evaluate_exactly(DOR, context(model="mixtral-8x7b", batch="1"))
    many = evaluate_exactly(DOR, context(model="mixtral-8x7b", batch="64"))
    assert one["experts_touched"] == 2
    assert one["weight_bytes_experts"] == 2 * expert
    assert one["flops_experts"] == 2 * 2 * _swiglu(4096, 14336)  # kappa * top-2 experts * one token
    # (1 - 6/8)**64 is about 1e-8: the engine's exact-number step may snap 7.99999992 experts to 8
    assert float(many["weight_bytes_experts"]) == pytest.approx(8 * (1 - (6 / 8) ** 64) * expert, rel=1e-7)
    assert float(evaluate_exactly(DOR, context(model="mixtral-8x7b", batch="8"))["experts_touched"]) == pytest.approx(8 * (1 - (6 / 8) ** 8))
    assert float(many["weight_bytes_experts"]) > 7.99 * expert
    assert many["flops_experts"] == 64 * one["flops_experts"]  # each token still multiplies by its top 2 only
    assert isinstance(one["t_mlp_dense"], Missing)  # every Mixtral layer is MoE
    assert one["t_shared"] == 0
    assert one["t_step"] == 32 * (one["t_attn_block"] + one["t_mlp_moe"]) + one["t_lm_head"]


def test_routed_experts_sit_k_over_e_read_below_the_tie():
    v = evaluate_exactly(DOR, context(model="mixtral-8x7b", batch="64"))
    assert float(v["intensity_experts"]) < float(v["intensity_experts_limit"]) < float(v["intensity_gemm_limit"]) / 3.9
    assert v["B_flip_experts"] == 4 * v["B_flip"] == 16  # E/k_E = 4 times the tied GEMMs' flip


def test_qwen3_expert_gemm_uses_moe_intermediate_size_not_intermediate_size():
    v = evaluate_exactly(DOR, context(model="qwen3-235b-a22b", batch="1"))
    assert v["weight_bytes_experts"] == 8 * _swiglu(4096, 1536) * 2
    assert v["flops_experts"] == 2 * 8 * _swiglu(4096, 1536)
    for k in ("gate_up", "down", "ew_mlp"):  # intermediate_size 12288 is used by no layer
        assert isinstance(v[f"t_{k}"], Missing) and "no dense-MLP layer" in v[f"t_{k}"].reason
    assert v["t_step"] == 94 * (v["t_attn_block"] + v["t_mlp_moe"]) + v["t_lm_head"]
    assert v["flops_router"] == 2 * 4096 * 128


def test_deepseek_v3_shared_expert_router_and_dense_layers():
    v = evaluate_exactly(DOR, context(model="deepseek-v3", weights="bf16", batch="1"))
    assert v["experts_touched"] == 8
    assert v["flops_shared"] == 2 * _swiglu(7168, 2048)
    assert v["flops_router"] == 2 * 7168 * 256
    assert v["flops_gate_up"] == 2 * 7168 * 2 * 18432  # the first three layers are dense
    assert v["t_step"] == 61 * v["t_attn_block"] + 3 * v["t_mlp_dense"] + 58 * v["t_mlp_moe"] + v["t_lm_head"]


# --- MLA ----------------------------------------------------------------------------------------

def test_deepseek_v3_derives_with_mla_kernel_shapes():
    sheet = api.derive("decode-op-ranking", model="deepseek-v3", weights="bf16")  # the numbers below in BF16 (the checkpoint stores FP8)
    assert all(not r.missing for r in sheet.results.values())
    v = evaluate_exactly(DOR, context(model="deepseek-v3", weights="bf16", batch="1"))
    kv_down = 7168 * (512 + 64)  # D x (r_kv + d_R) = 7168 * 576
    q_down = 7168 * 1536
    assert v["flops_dqkv"] == 2 * (q_down + kv_down)  # fused: one GEMM reads the hidden state for both latents
    assert v["bytes_dqkv"] == 2 * (q_down + kv_down) + 2 * (7168 + 1536 + 576)
    assert v["flops_uq"] == 2 * 1536 * 128 * (128 + 64)
    assert v["flops_uk"] == 2 * 128 * 128 * 512
    assert v["flops_uv"] == 2 * 128 * 512 * 128
    assert v["flops_o"] == 2 * 128 * 128 * 7168
    assert v["bytes_attn_cache"] == 8192 * 576 * 2  # one latent and its RoPE key per cached token
    assert v["flops_attn"] == 2 * 128 * 8192 * (576 + 512)
    assert isinstance(v["t_qkv"], Missing) and v["t_qkv"].kind == "n/a"
    assert v["t_attn_block"] == v["t_dqkv"] + v["t_uq"] + v["t_uk"] + v["t_attn"] + v["t_uv"] + v["t_o"] + v["t_ew"]
    assert v["small_kernels"] == 61 * 5 + 3 * 3 + 58 * 6


def test_deepseek_v2_lite_projects_its_query_from_the_hidden_state():
    v = evaluate_exactly(DOR, context(model="deepseek-v2-lite", batch="1"))
    assert v["flops_dqkv"] == 2 * 2048 * (512 + 64)  # no query latent: the KV down-projection alone
    assert v["flops_uq"] == 2 * 2048 * 16 * (128 + 64)  # q_proj, D x N(d_nope + d_R)
    assert v["flops_shared"] == 2 * 2 * _swiglu(2048, 1408)


def test_mla_flip_is_attentions_constant_and_the_time_flip_uses_the_o_projection():
    v = evaluate_exactly(DOR, context(model="deepseek-v3", weights="bf16"))
    assert v["B_flip"] == sp.Rational(128 * (2 * 512 + 64), 576)  # kappa_attn*N*(2r + d_R)*b_w/(2*kappa*(r + d_R)*b_kv), about 242
    assert v["intensity_attn_limit"] == v["B_flip"]  # in BF16 weights, one flop/B per sequence
    assert v["B_flip_time"] == sp.Rational(128 * 128 * 7168, 8192 * 576)  # N*d_v*D weights vs T*(r + d_R) cache per sequence


def test_mla_absorbed_up_projections_never_reach_the_tie():
    v = evaluate_exactly(DOR, context(model="deepseek-v3", weights="bf16", batch="4096"))
    limit = sp.Rational(2 * 128 * 512, (128 + 512) * 2)  # kappa*d_nope*r_kv/((d_nope + r_kv)*b_a)
    assert v["intensity_uk"] < limit and v["intensity_uv"] < limit < v["intensity_o"]


# --- every model, every chip --------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS)
def test_every_headline_is_finite_and_positive(model):
    for hardware in ("h100-sxm", "b200", "mi300x", "tpu-v5e"):
        for batch in (1, 64, 4096):
            values = evaluate_numbers(DOR, context(hardware, model, batch=str(batch)), DOR.results)  # compiled: every cell cheaply
            for name in DOR.results:
                v = values[name]
                assert not isinstance(v, Missing), (model, hardware, batch, name, v)
                assert math.isfinite(float(v)) and float(v) > 0, (model, hardware, batch, name, v)


@pytest.mark.parametrize("model", UNLISTED)
def test_layers_it_does_not_list_are_refused(model):
    """A linear-attention, Mamba-2 or sparse-attention layer runs kernels the ranking does not list: the step the kernels add up
    to, and each share of it, are n/a with one line naming the layers, rather than every layer ranked as GQA or MLA. One
    attention layer's kernels, and where the GEMMs' intensity meets attention's (B_flip), still hold for the attention layers
    such a model has."""
    names = ["t_step", "attention_share"]
    values = evaluate_numbers(DOR, context("h100-sxm", model), names)
    for name in names:
        v = values[name]
        assert isinstance(v, Missing) and "the per-layer ranking does not list" in v.reason, (model, name, v)
    flip = evaluate_numbers(DOR, context("h100-sxm", model), ["B_flip"])["B_flip"]
    assert not isinstance(flip, Missing) and math.isfinite(float(flip)) and float(flip) > 0


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), st.sampled_from(["h100-sxm", "b200", "mi300x", "tpu-v5e", "l4"]),
       st.integers(1, 4096), st.integers(1, 131072))
def test_every_kernel_takes_at_least_its_memory_and_its_compute_time(model, hardware, batch, ctx_len):
    ctx = context(hardware, model, batch=str(batch), context=f"{ctx_len} token")
    v = evaluate_exactly(DOR, ctx)
    machine = context_values(DOR, ctx, {gl.pi, gl.beta})
    ran = 0
    for k in KERNELS:
        t, f, b = v[f"t_{k}"], v[f"flops_{k}"], v[f"bytes_{k}"]
        if isinstance(t, Missing):
            continue
        ran += 1
        bound = max(b / machine[gl.beta], f / machine[gl.pi])
        # exact where the algebra is exact; 40 significant digits where experts touched is a large power
        assert abs(t - bound) <= sp.Float(10) ** -30 * bound, k
    assert ran >= 8
    parts = [v["t_attn_block"], v["t_lm_head"]]
    assert v["t_step"] >= sum(parts)


def test_sheets_render_for_moe_and_mla():
    for model, overrides in (("deepseek-v3", []), ("mixtral-8x7b", ["batch=64"])):
        sheet = api.derive("decode-op-ranking", model=model, overrides=overrides)
        md = api.render(sheet, "md")
        assert "## Takeaways" in md and "n/a" in md  # the kernels this model does not run are marked, not dropped
        assert all(not t.rows or any(cells for _, cells, _ in t.rows) for t in sheet.tables)

"""The attention sheets: attention-intensity, decode-op-ranking, mla-absorption, flash-attention-io.

Anchors from the configs (Llama 3.1 70B: N 64, K 8, H 128; DeepSeek-V3: N 128,
r_kv 512, d_R 64, d_nope 128, d_v 128), closed forms against their equations,
and the physics as hypothesis properties.
"""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.registry import BY_SLUG
from derivations.sheet import evaluate
from roofline import api
from tests.derivations.helpers import context

AI, DOR, MLA, FA = (BY_SLUG[s] for s in ("attention-intensity", "decode-op-ranking", "mla-absorption", "flash-attention-io"))
FAST = settings(max_examples=50, deadline=None)


def expanded(d, name):
    return d.expanded[name]


# --- attention-intensity -------------------------------------------------------------------------

def test_gqa_attention_intensity_is_the_group_size_for_llama_70b():
    v = evaluate(AI, context(model="llama-3.1-70b"))
    assert v["group_size"] == 8
    assert v["intensity_attention"] == 8  # 2*G*q/b_kv in flop/B with q = 1 token, b_kv = 2 B/token
    assert v["intensity_attention_equal_widths"] == v["intensity_attention"]  # d_k = d_v is exact for GQA


def test_mla_attention_intensity_exact_and_equal_widths_for_deepseek_v3():
    v = evaluate(AI, context(model="deepseek-v3"))
    assert v["group_size"] == 128
    assert v["intensity_attention"] == sp.Rational(128 * (4 * 512 + 2 * 64), (512 + 64) * 2)  # 241.78 flop/B
    assert v["intensity_attention_equal_widths"] == 256  # 4N/b_kv with d_k = d_v = r_kv + d_R
    assert v["ridge_point"] == sp.Rational(9894, 10) * 10**12 / (sp.Rational(335, 100) * 10**12)


def test_mla_conventions_fp8_doubles_q_multiplies_tp_divides():
    base = evaluate(AI, context(model="deepseek-v3"))["intensity_attention"]
    assert evaluate(AI, context(model="deepseek-v3", kv="fp8"))["intensity_attention"] == 2 * base
    assert evaluate(AI, context(model="deepseek-v3", tokens_per_step="2 token"))["intensity_attention"] == 2 * base
    assert evaluate(AI, context(model="deepseek-v3", tp="8"))["intensity_attention"] == base / 8


def test_tp_does_not_change_gqa_intensity_until_it_exceeds_the_kv_heads():
    base = evaluate(AI, context(model="llama-3.1-70b"))["intensity_attention"]
    assert evaluate(AI, context(model="llama-3.1-70b", tp="8"))["intensity_attention"] == base
    assert evaluate(AI, context(model="llama-3.1-70b", tp="16"))["intensity_attention"] == base / 2


def test_intensity_attention_is_flops_over_cache_bytes():
    """The closed form shown on the sheet equals F_att / W_cache symbolically: B and T cancel."""
    ratio = expanded(AI, "flops_attention") / expanded(AI, "bytes_attention_cache")
    assert sp.simplify(ratio - expanded(AI, "intensity_attention")) == 0
    assert gl.B not in expanded(AI, "intensity_attention").free_symbols
    assert gl.T not in expanded(AI, "intensity_attention").free_symbols


def test_attention_ridge_q_closed_form_meets_its_equation():
    step = AI.step("q_attention_ridge")
    lhs, rhs = step.equation
    assert sp.simplify(lhs.xreplace({gl.q: step.expr}) - rhs) == 0
    v = evaluate(AI, context(model="deepseek-v3"))
    at = evaluate(AI, context(model="deepseek-v3", tokens_per_step=f"{float(v['q_attention_ridge'])} token"))
    assert float(at["attention_over_ridge"]) == pytest.approx(1, rel=1e-9)


def test_within_a_hair_holds_only_under_flashmlas_reading():
    """'Within a hair' is 2%: MLA meets it only as FlashMLA reads it (d_k = d_v, throttled 865 Tflop/s ridge)."""
    sheet = api.derive("attention-intensity")
    verdicts = {c.text: c for c in sheet.claims}
    hair = [t for t in verdicts if "within a hair" in t]
    assert [t for t in hair if verdicts[t].holds] == [t for t in hair if "FlashMLA" in t]
    flashmla = next(verdicts[t] for t in hair if "FlashMLA" in t)
    assert flashmla.left.float == pytest.approx(256)  # 2 * h_q, h_q = 128 (FlashMLA deep-dive)
    assert flashmla.right.float == pytest.approx(865e12 / 3.35e12)


@FAST
@given(st.integers(1, 8192), st.integers(1, 8192), st.sampled_from(["llama-3.1-70b", "llama-3.1-8b", "deepseek-v3"]))
def test_attention_intensity_does_not_change_with_batch(b1, b2, model):
    a = evaluate(AI, context(model=model, batch=str(b1)))
    b = evaluate(AI, context(model=model, batch=str(b2)))
    assert a["intensity_attention"] == b["intensity_attention"]
    assert a["intensity_attention_at_T"] == b["intensity_attention_at_T"]


@FAST
@given(st.integers(1, 4096), st.integers(1, 4096))
def test_gemm_intensity_rises_with_batch_and_stays_below_its_limit(b1, b2):
    lo, hi = sorted((b1, b2))
    a = evaluate(AI, context(model="llama-3.1-70b", batch=str(lo)))
    b = evaluate(AI, context(model="llama-3.1-70b", batch=str(hi)))
    assert a["intensity_gemm"] < a["intensity_gemm_limit"]
    assert b["intensity_gemm"] < b["intensity_gemm_limit"]
    assert (a["intensity_gemm"] < b["intensity_gemm"]) if lo < hi else (a["intensity_gemm"] == b["intensity_gemm"])


@FAST
@given(st.integers(1, 2**20), st.integers(1, 2**20))
def test_attention_intensity_rises_with_context_towards_its_limit(t1, t2):
    lo, hi = sorted((t1, t2))
    a = evaluate(AI, context(model="deepseek-v3", context=f"{lo} token"))
    b = evaluate(AI, context(model="deepseek-v3", context=f"{hi} token"))
    assert a["intensity_attention_at_T"] <= b["intensity_attention_at_T"] < b["intensity_attention"]


# --- decode-op-ranking ---------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "kv", "flip"), [
    ("llama-3.1-70b", "bf16", 8), ("llama-3.1-70b", "fp8", 16), ("llama-3.1-8b", "bf16", 4), ("llama-3.1-8b", "fp8", 8),
])
def test_b_flip_anchors(model, kv, flip):
    assert evaluate(DOR, context(model=model, kv=kv))["B_flip"] == flip


def test_b_flip_closed_forms_meet_their_equations():
    for name in ("B_flip", "B_flip_time"):
        step = DOR.step(name)
        lhs, rhs = step.equation
        assert sp.simplify(lhs.xreplace({gl.B: step.expr}) - rhs.xreplace({gl.B: step.expr})) == 0
    assert sp.simplify(DOR.step("B_flip").expr - gl.kappa_attn * gl.N * gl.b_w / (2 * gl.kappa * gl.K * gl.b_kv)) == 0


def test_time_flip_for_llama_70b_is_4_at_8k_and_8_at_4k():
    assert evaluate(DOR, context(model="llama-3.1-70b"))["B_flip_time"] == 4
    assert evaluate(DOR, context(model="llama-3.1-70b", context="4096 token"))["B_flip_time"] == 8


def test_every_kernel_is_memory_bound_at_batch_1_and_times_add_up():
    v = evaluate(DOR, context(model="llama-3.1-70b"))
    for k in ("qkv", "o", "gate_up", "down", "lm_head", "attn", "ew"):
        assert v[f"intensity_{k}"] < v["intensity_gemm_limit"] * 10
    layer = sum(v[f"t_{k}"] for k in ("qkv", "attn", "o", "gate_up", "down", "ew"))
    assert v["t_layer"] == layer
    assert v["t_step"] == 80 * layer + v["t_lm_head"]


@FAST
@given(st.integers(1, 1024))
def test_decode_weight_gemms_tie_and_attention_does_not_move(batch):
    """The tie holds while B*q is well below D (at B*q = D the O projection's activations equal its weights)."""
    v = evaluate(DOR, context(model="llama-3.1-70b", batch=str(batch)))
    gemms = [v[f"intensity_{k}"] for k in ("qkv", "o", "gate_up", "down", "lm_head")]
    assert max(gemms) < v["intensity_gemm_limit"]
    assert min(gemms) > v["intensity_gemm_limit"] * sp.Rational(3, 4)
    assert v["intensity_attn"] == evaluate(DOR, context(model="llama-3.1-70b"))["intensity_attn"]
    assert v["intensity_ew"] < 1


@FAST
@given(st.integers(1, 64))
def test_attention_outranks_the_gemms_exactly_below_b_flip(batch):
    v = evaluate(DOR, context(model="llama-3.1-70b", batch=str(batch)))
    assert (v["intensity_gemm_limit"] < v["intensity_attn_limit"]) == (batch < v["B_flip"])


# --- mla-absorption ------------------------------------------------------------------------------

def test_mla_per_cached_token_anchors_deepseek_v3():
    v = evaluate(MLA, context(model="deepseek-v3"))
    assert v["bytes_per_cached_token"] == (512 + 64) * 2
    assert v["flops_per_cached_token_absorbed"] == 128 * (4 * 512 + 2 * 64)
    assert v["flops_per_cached_token_naive"] == 2 * 512 * 128 * (128 + 128) + 2 * 128 * (128 + 64) + 2 * 128 * 128
    assert v["intensity_mla"] == sp.Rational(128 * 2176, 1152)
    assert v["intensity_materialised"] == 1
    assert v["absorbed_over_materialised"] > 1  # attention gets more expensive per cached token


def test_mla_generic_attention_equals_the_absorbed_formula():
    for model in ("deepseek-v3", "deepseek-v2-lite"):
        v = evaluate(MLA, context(model=model))
        assert v["intensity_attention"] == v["intensity_mla"]
        assert v["flops_per_cached_token_attention"] == v["flops_per_cached_token_absorbed"]


def test_mla_sheet_compares_with_gqa_through_the_generic_steps():
    """A GQA model cannot bind r_kv; the table and claim rows evaluate only the steps they need."""
    v = evaluate(MLA, context(model="llama-3.1-70b"), ["intensity_attention", "group_size"])
    assert v["intensity_attention"] == v["group_size"] == 8
    sheet = api.derive("mla-absorption")
    gqa = next(t for t in sheet.tables if "GQA" in t.title)
    assert all(not why for _, _, why in gqa.rows)


def test_t_absorb_closed_form_meets_its_equation():
    """T_absorb is written as F_q / (f_naive - f_abs); check it solves T*f_naive = T*f_abs + F_q."""
    T_abs = expanded(MLA, "T_absorb")
    naive = expanded(MLA, "flops_step_naive").xreplace({gl.T: T_abs})
    absorbed = expanded(MLA, "flops_step_absorbed").xreplace({gl.T: T_abs})
    assert sp.simplify(naive - absorbed) == 0
    assert gl.T not in T_abs.free_symbols


@FAST
@given(st.sampled_from(["deepseek-v3", "deepseek-v2-lite"]), st.sampled_from(["h100-sxm", "h200", "b200"]))
def test_mla_intensity_doubles_when_latent_bytes_halve(model, hardware):
    bf16 = evaluate(MLA, context(hardware, model, kv="bf16"))
    fp8 = evaluate(MLA, context(hardware, model, kv="fp8"))
    assert fp8["bytes_per_cached_token"] * 2 == bf16["bytes_per_cached_token"]
    assert fp8["intensity_mla"] == 2 * bf16["intensity_mla"]


@FAST
@given(st.integers(1, 64), st.integers(1, 64), st.integers(1, 4096), st.integers(1, 4096))
def test_mla_intensity_primitive_halving_bytes_doubles_it(r, d_r, n_heads, q):
    """The primitive itself: halving bytes per element doubles the intensity, for any widths."""
    flops = pr.mla_absorbed_flops_per_cached_token(q, n_heads, r, d_r).xreplace({gl.kappa_attn: 4})
    for b in (2, 1):
        assert sp.simplify(flops / pr.mla_latent_bytes_per_cached_token(r, d_r, b) * b - flops / pr.mla_latent_bytes_per_cached_token(r, d_r, 1)) == 0


# --- flash-attention-io --------------------------------------------------------------------------

def test_flash_anchors_at_8k_d128():
    v = evaluate(FA, context(model="llama-3.1-8b"))
    n, d, b = 8192, 128, 2
    assert v["io_naive"] == (4 * n * d + 4 * n * n) * b
    assert v["io_textbook"] == (2 * n * d + 2 * n * d * n // 128) * b
    assert v["io_l2"] == 4 * n * d * b
    assert v["ratio_textbook"] == 2
    assert v["ratio_l2"] == 65
    assert v["B_q_2x"] == d
    assert v["smem_2x"] == 4 * d * d * b
    assert v["block_rows_fa1"] == d  # 228 kB per SM


def test_flash_ratio_closed_forms_equal_the_ratios_of_the_counts():
    naive, text, l2 = (expanded(FA, k) for k in ("io_naive", "io_textbook", "io_l2"))
    assert sp.simplify(naive / text - expanded(FA, "ratio_textbook")) == 0
    assert sp.simplify(naive / l2 - expanded(FA, "ratio_l2")) == 0


def test_flash_2x_closed_forms_meet_their_equations():
    for name, var in (("B_q_2x", "B_q"), ("smem_2x", "M_smem"), ("n_l2_max", "n")):
        step = FA.step(name)
        lhs, rhs = step.equation
        sym = sp.Symbol(var, positive=True)
        assert sp.simplify(lhs.xreplace({sym: step.expr}) - rhs.xreplace({sym: step.expr})) == 0


@FAST
@given(st.integers(0, 2**18), st.integers(64, 1024), st.sampled_from(["llama-3.1-8b", "llama-3.2-1b"]))
def test_textbook_and_l2_traffic_never_exceed_naive(extra, block, model):
    """For any query block of at least d/2 rows (d = 64 or 128 here) and no longer than the sequence: L2 <= textbook <= naive."""
    n = block + extra
    v = evaluate(FA, context(model=model, seq_len=str(n), query_block=str(block)))
    assert v["io_l2"] <= v["io_textbook"] <= v["io_naive"]
    assert v["ratio_l2"] >= v["ratio_textbook"]


@FAST
@given(st.integers(1, 2**18), st.integers(1, 2**18))
def test_l2_ratio_grows_with_the_sequence(n1, n2):
    lo, hi = sorted((n1, n2))
    a = evaluate(FA, context(model="llama-3.1-8b", seq_len=str(lo)))
    b = evaluate(FA, context(model="llama-3.1-8b", seq_len=str(hi)))
    assert a["ratio_l2"] <= b["ratio_l2"]
    assert a["io_l2"] <= a["io_naive"]


@FAST
@given(st.integers(1, 2**18))
def test_textbook_ratio_is_exactly_2_whenever_the_block_equals_d(n):
    assert evaluate(FA, context(model="llama-3.1-8b", seq_len=str(n), query_block="128"))["ratio_textbook"] == 2

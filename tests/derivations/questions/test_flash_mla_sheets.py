"""mla-absorption and flash-attention-io: anchors from the configs and the specs, closed forms, and the physics as properties.

Anchors: DeepSeek-V3 (N 128, r_kv 512, d_R 64, d_nope 128, d_v 128; DeepSeek's reference
inference code caches k_cache [heads x 192] and v_cache [heads x 128] when attn_impl = "naive");
H100 SXM shared memory 228 KiB per SM = 233,472 B (cudaDevAttrMaxSharedMemoryPerMultiprocessor),
50 MB L2, 132 SMs; Llama 3.1 8B d = 128, Llama 3.2 1B d = 64.
"""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.context import BINDINGS
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.questions.registry import BY_SLUG
from roofline.specs.errors import SpecError

from roofline import api
from tests.derivations.helpers import context

MLA, FA = BY_SLUG["mla-absorption"], BY_SLUG["flash-attention-io"]
FAST = settings(max_examples=50, deadline=None)
GPUS = ["h100-sxm", "h200", "b200", "a100-sxm-80gb", "l4", "mi300x"]


def expanded(d, name):
    return d.expanded[name]


# --- mla-absorption ------------------------------------------------------------------------------

def test_naive_is_the_reference_cache_81920_flops_per_cached_token_deepseek_v3():
    """Issue 7: the non-absorbed baseline attends over per-head K (d_nope + d_R) and V (d_v): 2*128*(192 + 128) = 81,920."""
    v = evaluate_exactly(MLA, context(model="deepseek-v3"))
    assert v["flops_per_cached_token_naive"] == 81_920 == 2 * 128 * (128 + 64 + 128)
    assert v["bytes_per_cached_token_naive"] == 128 * (128 + 64 + 128) * 2  # BF16 k_cache + v_cache, B/token
    assert v["intensity_naive"] == 1  # multi-head attention: 2q/b_kv flop/B


def test_mla_per_cached_token_anchors_deepseek_v3():
    v = evaluate_exactly(MLA, context(model="deepseek-v3"))
    assert v["bytes_per_cached_token"] == (512 + 64) * 2
    assert v["flops_per_cached_token_absorbed"] == 128 * (4 * 512 + 2 * 64) == 278_528
    assert v["flops_upproject_per_cached_token"] == 2 * 512 * 128 * (128 + 128)
    assert v["flops_per_cached_token_decompress"] == 2 * 512 * 128 * (128 + 128) + 81_920
    assert v["intensity_mla"] == sp.Rational(128 * 2176, 1152)
    assert v["absorbed_over_naive"] == sp.Rational(278_528, 81_920)


@pytest.mark.parametrize("model", ["deepseek-v3", "deepseek-v2-lite"])
def test_three_variants_ordered_reference_then_absorbed_then_decompress(model):
    """FLOPs per cached token: the reference kernel < absorbed (the bill) < decompress every step; bytes: latent << per-head K and V."""
    v = evaluate_exactly(MLA, context(model=model))
    assert v["flops_per_cached_token_naive"] < v["flops_per_cached_token_absorbed"] < v["flops_per_cached_token_decompress"]
    assert v["bytes_per_cached_token"] < v["bytes_per_cached_token_naive"]
    assert v["absorbed_over_naive"] > 1 and v["absorbed_over_naive_bytes"] < 1 and v["decompress_over_absorbed"] > 1


@FAST
@given(st.integers(1, 170), st.sampled_from(["deepseek-v3", "deepseek-v2-lite"]))
def test_absorbed_beats_decompress_and_loses_to_the_reference_in_flops_at_decode(q, model):
    """Below q = r_kv (d_nope + d_v) / (2 r_kv - d_nope - d_v) = 170.7 tokens per step, absorbed < decompress per cached token."""
    v = evaluate_exactly(MLA, context(model=model, tokens_per_step=f"{q} token"))
    assert v["flops_per_cached_token_naive"] < v["flops_per_cached_token_absorbed"] < v["flops_per_cached_token_decompress"]
    assert v["T_absorb"] > 0


def test_t_absorb_solves_absorbed_against_decompress():
    step = MLA.step("T_absorb")
    assert (step.lhs, step.rhs) == ("flops_step_decompress", "flops_step_absorbed")
    T_abs = expanded(MLA, "T_absorb")
    assert sp.simplify(expanded(MLA, "flops_step_decompress").xreplace({gl.T: T_abs})
                       - expanded(MLA, "flops_step_absorbed").xreplace({gl.T: T_abs})) == 0
    assert gl.T not in T_abs.free_symbols
    v = evaluate_exactly(MLA, context(model="deepseek-v3"))
    assert float(v["T_absorb"]) == pytest.approx(2 * 512 * 128 * 256 / (2 * 512 * 128 * 256 + 81_920 - 278_528))


def test_t_absorb_is_none_with_a_reason_at_prefill_sized_steps():
    v = evaluate_exactly(MLA, context(model="deepseek-v3", tokens_per_step="171 token"))
    assert isinstance(v["T_absorb"], Missing) and v["T_absorb"].kind == "none"
    assert "prefill" in v["T_absorb"].reason


def test_reference_kernel_time_over_absorbed_is_the_byte_ratio_on_h100():
    """Both memory-bound on H100 at 8K: t_naive / t_abs = s_naive / s_lat = 81,920 / 1,152."""
    v = evaluate_exactly(MLA, context("h100-sxm", "deepseek-v3"))
    assert v["naive_over_absorbed_time"] == sp.Rational(81_920, 1_152)
    assert v["time_step_absorbed"] < v["time_step_naive"] < v["time_step_decompress"]


def test_mla_generic_attention_equals_the_absorbed_formula():
    for model in ("deepseek-v3", "deepseek-v2-lite"):
        v = evaluate_exactly(MLA, context(model=model))
        assert v["intensity_attention"] == v["intensity_mla"]
        assert v["flops_per_cached_token_attention"] == v["flops_per_cached_token_absorbed"]


def test_mla_sheet_compares_with_gqa_through_the_generic_steps():
    """A GQA model cannot bind r_kv; the table and claim rows evaluate only the steps they need."""
    v = evaluate_exactly(MLA, context(model="llama-3.1-70b"), ["intensity_attention", "group_size"])
    assert v["intensity_attention"] == v["group_size"] == 8
    sheet = api.derive("mla-absorption")
    gqa = next(t for t in sheet.tables if "GQA" in t.title)
    assert all(not why for _, _, why in gqa.rows)


def test_mla_claims_hold_on_the_default_sheet_and_compare_like_units():
    sheet = api.derive("mla-absorption")
    assert all(c.holds for c in sheet.claims), [c.text for c in sheet.claims if not c.holds]
    text = api.render(sheet, "md")
    assert "82 kflop/token" in text  # 81.92: within 0.1% of a whole number below 100, printed whole (numbers.WHOLE_TOLERANCE)


@FAST
@given(st.sampled_from(["deepseek-v3", "deepseek-v2-lite"]), st.sampled_from(["h100-sxm", "h200", "b200"]))
def test_mla_intensity_doubles_when_latent_bytes_halve(model, hardware):
    bf16 = evaluate_exactly(MLA, context(hardware, model, kv="bf16"))
    fp8 = evaluate_exactly(MLA, context(hardware, model, kv="fp8"))
    assert fp8["bytes_per_cached_token"] * 2 == bf16["bytes_per_cached_token"]
    assert fp8["intensity_mla"] == 2 * bf16["intensity_mla"]


@FAST
@given(st.integers(1, 64), st.integers(1, 64), st.integers(1, 4096), st.integers(1, 4096))
def test_mla_intensity_primitive_halving_bytes_doubles_it(r, d_r, n_heads, q):
    flops = pr.mla_absorbed_flops_per_cached_token(q, n_heads, r, d_r).xreplace({gl.kappa_attn: 4})
    for b in (2, 1):
        assert sp.simplify(flops / pr.mla_latent_bytes_per_cached_token(r, d_r, b) * b - flops / pr.mla_latent_bytes_per_cached_token(r, d_r, 1)) == 0


# --- flash-attention-io --------------------------------------------------------------------------

def test_flash_anchors_at_8k_d128():
    v = evaluate_exactly(FA, context(model="llama-3.1-8b"))
    n, d, b = 8192, 128, 2
    assert v["head_width"] == d
    assert v["io_naive"] == (4 * n * d + 4 * n * n) * b
    assert v["io_textbook"] == (2 * n * d + 2 * n * d * n // 128) * b
    assert v["io_l2"] == 4 * n * d * b
    assert v["ratio_textbook"] == 2
    assert v["ratio_l2"] == 65
    assert v["B_q_2x"] == d
    assert v["smem_2x"] == 4 * d * d * b  # 128 KiB
    assert v["block_rows_fa1"] == d


def test_h100_shared_memory_binds_228_kib():
    """Issue 7: 228 KiB per SM, binary: 233,472 B, not 228,000."""
    ctx = context("h100-sxm", "llama-3.1-8b")
    assert BINDINGS[gl.M_smem](ctx).to("B").magnitude == 233_472
    v = evaluate_exactly(FA, ctx)
    assert v["block_cols_fa1"] == sp.Rational(233_472, 4 * 128 * 2) == 228


def test_shared_memory_comes_from_each_chip():
    rows = {h: evaluate_exactly(FA, context(h, "llama-3.1-8b"), ["block_rows_fa1"])["block_rows_fa1"] for h in ("a100-sxm-80gb", "b200", "l4")}
    assert rows == {"a100-sxm-80gb": 128, "b200": 128, "l4": 100}  # 164 KiB, 228 KiB, 100 KiB: ceil(102400 / 1024) = 100


def test_tpu_has_no_l2_and_no_sms_but_the_counts_hold():
    v = evaluate_exactly(FA, context("tpu-v5e", "llama-3.1-8b"))
    for name in ("block_cols_fa1", "block_rows_fa1", "io_textbook_fa1", "l2_size", "n_l2_max", "heads_in_flight", "l2_working_set", "l2_fraction"):
        assert isinstance(v[name], Missing) and v[name].kind == "n/a", name
        assert "has no SMs" in v[name].reason or "has no L2" in v[name].reason
    assert "VMEM" in v["l2_size"].reason
    for name in FA.results:
        assert not isinstance(v[name], Missing)
    assert v["ratio_textbook"] == 2 and v["ratio_l2"] == 65
    sheet = api.derive("flash-attention-io", hardware="tpu-v5e")
    text = api.render(sheet, "md")
    # the steps a TPU has no value for are left out, said once with the reason (issue 21), not printed as n/a
    assert "do not apply to Llama 3.1 8B on Google TPU v5e (per chip) (Google TPU v5e (per chip) has no L2" in text
    assert "\n" not in v["l2_size"].reason


def test_amd_uses_the_infinity_cache_and_says_why_the_block_rule_is_missing():
    v = evaluate_exactly(FA, context("mi300x", "llama-3.1-8b"))
    assert v["l2_size"] == 256 * 10**6
    assert v["heads_in_flight"] == 5  # ceil(304 CUs / 64 blocks per head)
    assert isinstance(v["block_rows_fa1"], Missing) and "shared_memory_per_sm" in v["block_rows_fa1"].reason


def test_working_set_counts_every_in_flight_head_whole_h100_8k():
    """132 SMs, 64 query blocks per head: the resident blocks span ceil(132/64) = 3 heads, each with all of its K and V."""
    v = evaluate_exactly(FA, context("h100-sxm", "llama-3.1-8b"))
    assert v["heads_in_flight"] == 3
    assert v["l2_working_set"] == 3 * 2 * 8192 * 128 * 2
    assert v["l2_fraction"] == sp.Rational(3 * 2 * 8192 * 128 * 2, 50 * 10**6)


def test_seq_len_64_textbook_never_below_reading_qkvo_once():
    """Issue 9: a 128-row block on a 64-token sequence is clamped to 64 rows; the textbook count is then exactly 4nd."""
    v = evaluate_exactly(FA, context(model="llama-3.1-8b", seq_len="64"))
    assert v["query_block_used"] == 64
    assert v["io_textbook"] >= 4 * 64 * 128 * 2
    assert v["io_textbook"] == v["io_l2"]


def test_d64_block_rule_llama_3_2_1b():
    """FlashAttention-1's rule at d = 64 on H100: min(ceil(233472 / (4*64*2)), 64) = 64 = d, so its count is exactly 2x."""
    v = evaluate_exactly(FA, context("h100-sxm", "llama-3.2-1b"))
    assert v["head_width"] == 64
    assert v["block_rows_fa1"] == 64 == v["B_q_2x"]
    assert v["ratio_textbook_fa1"] == 2
    # the headline count uses the query_block input (default 128 rows, FlashAttention-2's tile), stated on the sheet
    assert v["query_block_used"] == 128 and v["ratio_textbook"] == sp.Rational(2 * (8192 + 64) * 128, 64 * (8192 + 128))
    assert evaluate_exactly(FA, context("h100-sxm", "llama-3.2-1b", query_block="64"))["ratio_textbook"] == 2
    sheet = api.derive("flash-attention-io", model="llama-3.2-1b")
    rule = next(c for c in sheet.claims if "block rule" in c.text)
    assert rule.holds


def test_mla_models_prefill_over_the_mean_of_key_and_value_widths():
    v = evaluate_exactly(FA, context(model="deepseek-v3", weights="bf16"))  # BF16 math: BF16 activations
    assert v["head_width"] == (192 + 128) // 2
    assert v["kv_bytes_per_head"] == 8192 * (192 + 128) * 2


def test_flash_ratio_closed_forms_equal_the_ratios_of_the_counts():
    naive, text, l2, fa1 = (expanded(FA, k) for k in ("io_naive", "io_textbook", "io_l2", "io_textbook_fa1"))
    assert sp.simplify(naive / text - expanded(FA, "ratio_textbook")) == 0
    assert sp.simplify(naive / l2 - expanded(FA, "ratio_l2")) == 0
    assert sp.simplify(naive / fa1 - expanded(FA, "ratio_textbook_fa1")) == 0


def test_flash_2x_block_meets_its_equation():
    n, d, b = sp.symbols("n d b", positive=True)
    assert sp.simplify(pr.attention_io_textbook(n, d, d, b) - pr.attention_io_naive(n, d, b) / 2) == 0
    assert expanded(FA, "B_q_2x") == expanded(FA, "head_width")


def test_flash_solves_meet_their_equations():
    for name in ("smem_2x", "n_l2_max"):
        step = FA.step(name)
        lhs, rhs = step.equation
        assert sp.simplify(lhs.xreplace({step.for_: step.expr}) - rhs.xreplace({step.for_: step.expr})) == 0


@pytest.mark.parametrize("pair", ["seq_len=1.5", "seq_len=0", "query_block=0", "query_block=2.5"])
def test_seq_len_and_query_block_are_counts(pair):
    assert {i.name: i.domain for i in FA.inputs} == {"seq_len": "count", "query_block": "count"}
    with pytest.raises(SpecError) as err:
        api.derive("flash-attention-io", overrides=[pair])
    assert err.value.field == pair.split("=")[0] and "\n" not in str(err.value)


def test_teaser_claims_keep_their_meaning_when_inputs_change():
    """The 2x and 65x claims name their setting and are evaluated there; the sheet's own inputs do not flip them."""
    for overrides in ([], ["seq_len=64"], ["seq_len=131072", "query_block=256"]):
        sheet = api.derive("flash-attention-io", model="llama-3.2-1b", overrides=overrides)
        teaser = [c for c in sheet.claims if c.text.startswith("The teaser's")]
        assert len(teaser) == 2 and all(c.holds for c in teaser)


@FAST
@given(st.integers(1, 131072), st.data())
def test_textbook_and_naive_never_below_reading_each_once(n, data):
    """For any sequence and any block of 1..n rows (and blocks past n, clamped): Q_text >= Q_L2 and Q_naive >= Q_L2."""
    block = data.draw(st.integers(1, 2 * n))
    model = data.draw(st.sampled_from(["llama-3.1-8b", "llama-3.2-1b", "deepseek-v3"]))
    v = evaluate_exactly(FA, context(model=model, seq_len=str(n), query_block=str(block)), ["io_naive", "io_textbook", "io_l2", "query_block_used"])
    assert v["query_block_used"] == min(block, n)
    assert v["io_textbook"] >= v["io_l2"]
    assert v["io_naive"] >= v["io_l2"]


@FAST
@given(st.integers(1, 131072), st.integers(1, 1024), st.sampled_from(GPUS))
def test_working_set_is_at_least_one_whole_head(n, block, hardware):
    v = evaluate_exactly(FA, context(hardware, "llama-3.1-8b", seq_len=str(n), query_block=str(block)),
                 ["heads_in_flight", "l2_working_set", "kv_bytes_per_head"])
    assert 1 <= v["heads_in_flight"] <= 32 and v["heads_in_flight"] == int(v["heads_in_flight"])
    assert v["l2_working_set"] == v["heads_in_flight"] * v["kv_bytes_per_head"] >= v["kv_bytes_per_head"]


@FAST
@given(st.integers(1, 2**18), st.integers(1, 2**18))
def test_l2_ratio_grows_with_the_sequence(n1, n2):
    lo, hi = sorted((n1, n2))
    a = evaluate_exactly(FA, context(model="llama-3.1-8b", seq_len=str(lo)), ["ratio_l2", "io_l2", "io_naive"])
    b = evaluate_exactly(FA, context(model="llama-3.1-8b", seq_len=str(hi)), ["ratio_l2"])
    assert a["ratio_l2"] <= b["ratio_l2"]
    assert a["io_l2"] <= a["io_naive"]


@FAST
@given(st.integers(128, 2**18))
def test_textbook_ratio_is_exactly_2_whenever_the_block_equals_d(n):
    assert evaluate_exactly(FA, context(model="llama-3.1-8b", seq_len=str(n), query_block="128"), ["ratio_textbook"])["ratio_textbook"] == 2

"""Issue 24, physics: windowed attention (one primitive) and parallelism as a layout (tp, dp, ep).

Each rule with its numbers, worked by hand from the configs; the GPU-count checks as one line and a
non-zero exit; property tests over layouts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.context import input_value
from roofline.derivations.engine.sheet import Missing, evaluate_exactly
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.physics import stepmodel as sm
from roofline.derivations.questions.registry import BY_SLUG

from roofline import api
from tests.derivations.helpers import context

DECODE = BY_SLUG["decode-floor"]
README = Path(__file__).resolve().parents[3] / "README.md"


def _values(model: str, hardware: str = "h100-sxm", weights: str | None = None, **inputs: str) -> dict[str, object]:
    return evaluate_exactly(DECODE, context(hardware, model, weights, **inputs))


def _kv_per_layer_token(model: str) -> int:
    """K and V bytes (BF16) one token leaves in one layer: 2 * KV heads * head_dim * 2 B."""
    m = api.model(model)
    return 2 * m.num_kv_heads * m.head_dim * 2


# --- windowed attention ---------------------------------------------------------------------------------------------

def test_mistral_sliding_window_caps_the_cache_at_32k():
    """Mistral 7B v0.1 (sliding_window 4096 on all 32 layers, 8 KV heads of 128): 32 * 4096 * 4096 B = 0.537 GB per sequence at
    32K, against 32 * 32768 * 4096 B = 4.29 GB if every layer kept the whole context (the figure before windows)."""
    v = _values("mistral-7b", context="32768 token")
    per_layer = _kv_per_layer_token("mistral-7b")
    assert per_layer == 4096
    assert v["kept_context"] == 4096
    assert v["kv_bytes_step"] == 32 * 4096 * per_layer == 536_870_912
    assert v["read_context"] == 4096
    full = sm.kv_step.expr.xreplace({sm.read.s: gl.T})  # every layer reading all T tokens
    decode_only = {gl.N_out: 0, gl.u_token: 1}  # no prompts in the step
    assert float(full.xreplace({gl.B: 1, gl.T: 32768, sm.kv_tok_gpu.s: 32 * per_layer, **decode_only})) == pytest.approx(4.295e9, rel=1e-3)


@pytest.mark.parametrize(("model", "T", "full_layers", "window_layers", "window"), [
    ("gemma-3-27b", 32768, 10, 52, 1024),    # sliding_window_pattern 6 over 62 layers: every sixth full
    ("gemma-3-27b", 131072, 10, 52, 1024),
    ("gpt-oss-120b", 32768, 18, 18, 128),    # alternating 128-token windows over 36 layers
    ("gpt-oss-120b", 131072, 18, 18, 128),
    ("gpt-oss-20b", 32768, 12, 12, 128),
    ("llama-4-maverick", 32768, 12, 36, 8192),  # chunked attention (chunk 8192) on the RoPE layers, taken as a window
])
def test_windowed_kv_per_sequence_by_hand(model, T, full_layers, window_layers, window):
    v = _values(model, context=f"{T} token")
    expected = (full_layers * T + window_layers * min(T, window)) * _kv_per_layer_token(model)
    assert v["kv_bytes_step"] == expected
    assert v["kept_context"] == Fraction(full_layers * T + window_layers * min(T, window), full_layers + window_layers)


def test_gemma3_and_gpt_oss_figures_the_readme_quotes():
    gemma = [float(_values("gemma-3-27b", context=f"{t} token")["kv_bytes_step"]) for t in (32768, 131072)]
    oss = [float(_values("gpt-oss-120b", context=f"{t} token")["kv_bytes_step"]) for t in (32768, 131072)]
    assert gemma == pytest.approx([3.121e9, 11.17e9], rel=1e-3)
    assert oss == pytest.approx([1.213e9, 4.837e9], rel=1e-3)
    text = README.read_text()
    for figure in ("0.537 GB", "3.12 GB at 32K and 11.2 GB at 128K", "1.21 GB and 4.84 GB"):
        assert figure in text


def test_a_model_without_windows_has_exactly_the_full_context_expressions():
    """L_win = 0 turns every windowed expression into the full-context one (as MoE's E = 1 does for experts)."""
    assert sp.simplify(pr.kept_context().xreplace({gl.L_drop: 0}) - gl.T) == 0
    assert sp.simplify(pr.read_context().xreplace({gl.L_win: 0}) - gl.T) == 0
    assert sp.simplify(pr.attended_pairs().xreplace({gl.L_win: 0}) - gl.S**2 / 2) == 0
    v = _values("llama-3.1-8b", context="32768 token")
    assert v["kept_context"] == 32768
    assert v["kv_bytes_step"] == 32768 * 32 * _kv_per_layer_token("llama-3.1-8b")


def test_windowed_prefill_pairs_are_the_sum_of_min_t_w():
    for S, W in ((10, 4), (4, 10), (4096, 128), (7, 7)):
        m = sp.Min(S, W)
        by_hand = sum(min(t, W) for t in range(1, S + 1)) - Fraction(min(S, W), 2)  # sum of min(t, W) less the m/2 diagonal half
        assert m * (S - m / 2) == by_hand
        assert pr.attended_pairs(sp.Integer(S), 1, 1, sp.Integer(W)) == m * (S - m / 2)


def test_context_where_the_cache_matches_the_weights_is_none_when_every_layer_has_a_window():
    """Mistral's cache never grows past 4096 tokens a layer, so it never costs as much as its 14.5 GB of weights at batch 1;
    at batch 64 it does, inside the window: 14.5 GB / (64 * 131 kB)."""
    one = _values("mistral-7b")["T_kv_equal"]
    assert isinstance(one, Missing) and one.kind == "none"
    many = _values("mistral-7b", batch="64")
    assert float(many["T_kv_equal"]) == pytest.approx(float(many["weight_bytes_gpu"]) / (64 * 131072), rel=1e-9)
    assert float(many["T_kv_equal"]) < 4096


def test_gemma_context_where_the_cache_matches_the_weights_is_on_the_global_branch():
    v = _values("gemma-3-27b", "h200", batch="8")
    T = float(v["T_kv_equal"])
    assert T > 1024  # past the window: only the 10 global layers still grow
    per_layer = _kv_per_layer_token("gemma-3-27b")
    assert 8 * (10 * T + 52 * 1024) * per_layer == pytest.approx(float(v["weight_bytes_gpu"]), rel=1e-9)


# --- parallelism as a layout ----------------------------------------------------------------------------------------

DEEPSEEK = {"model": "deepseek-v3", "hardware": "h800", "weights": "fp8"}
DEEPSEEK_LAYOUT = {"tp": "1", "dp": "128", "ep": "128", "batch": "128", "context": "4096 token"}


def test_ep_weight_bytes_per_gpu_are_the_held_experts_touched():
    """EP128 over 128 GPUs, one replica each: a GPU holds 256/128 = 2 routed experts of each of the 58 MoE layers; the group's
    128 * 128 tokens touch each with probability 1 - (1 - 8/256)^16384, so it reads 2 * that experts' weights per layer, plus
    its full copy of the always-read weights."""
    m = api.model("deepseek-v3")
    v = _values(**DEEPSEEK, **DEEPSEEK_LAYOUT)
    held = Fraction(m.moe.experts, 128)
    touched_share = 1 - (1 - Fraction(m.moe.top_k, m.moe.experts)) ** (128 * 128)
    counts = m.param_counts()
    p_exp = 3 * m.hidden_size * m.moe.expert_ffn
    base = counts.active_matmul - counts.experts_routed_active
    expected = (base + len(m.moe.moe_layers) * p_exp * held * touched_share) * 1  # FP8: one byte a weight
    assert float(v["weight_bytes_gpu"]) == pytest.approx(float(expected), rel=1e-12)
    assert held == 2 and len(m.moe.moe_layers) == 58


def test_dp_attention_kv_per_gpu_is_its_own_sequences_only():
    """dp replicas each hold their own batch: the KV a GPU reads does not grow with dp (128 sequences of 4096 tokens of
    61 * 576 latent elements at 2 B = 36.8 GB), where tensor parallelism over 128 GPUs would put every latent on every GPU."""
    m = api.model("deepseek-v3")
    own = 128 * 4096 * m.num_layers * (m.mla.kv_rank + m.mla.rope_dim) * 2
    for dp in ("8", "32", "128"):
        v = _values(**DEEPSEEK, **{**DEEPSEEK_LAYOUT, "dp": dp, "ep": dp})
        assert v["kv_bytes_step"] == own
        assert v["gpus"] == int(dp)


def test_default_layout_is_exactly_tensor_parallelism():
    """dp = ep = 1 gives today's TP figures: weights over tp, no all-to-all; the symbolic forms agree at dp = ep = 1."""
    v = _values("mixtral-8x7b", "h100-sxm", tp="2", batch="16")
    assert v["weight_bytes_gpu"] == v["weight_bytes"] / 2
    assert v["t_alltoall"] == 0
    assert sp.simplify(sm.weights_gpu.expr.xreplace({gl.n_dp: 1}) - pr.tp_split(sm.weight_bytes.expr)) == 0
    plain = {gl.n_dp: 1, gl.s_idx: 0, gl.s_st: 0}  # one replica; no indexer, no recurrent state
    resident = pr.tp_split(pr.mixed_weight_bytes(gl.P_total - sm.ROUTED_ALL, sm.ROUTED_ALL))
    assert sm.memory_gpu.expr.xreplace(plain).equals(resident + gl.B * (sm.kept.s + gl.q) * sm.kv_tok_gpu.s)
    # one format throughout (b_e = b_w): every weight over tp
    uniform = sm.memory_gpu.expr.xreplace({**plain, gl.b_e: gl.b_w})
    assert uniform.equals(pr.tp_split(gl.P_total * gl.b_w) + gl.B * (sm.kept.s + gl.q) * sm.kv_tok_gpu.s)


def test_alltoall_bytes_and_link_by_hand():
    """Per all-to-all a GPU sends its 128 tokens' rows to their 8 experts, 127/128 of them elsewhere: 128 * 8 * 7168 * 1 B * 127/128
    (FP8 activations); 128 GPUs do not fit in an 8-GPU NVSwitch node, so they cross the 50 GB/s InfiniBand NIC."""
    latency = next(i for i in DECODE.inputs if i.name == "ar_latency")
    t_round = float(input_value(latency, context(**DEEPSEEK, **DEEPSEEK_LAYOUT))[0].to("s").magnitude)
    v = _values(**DEEPSEEK, **DEEPSEEK_LAYOUT)
    assert v["alltoall_bytes"] == 128 * 8 * 7168 * Fraction(127, 128)
    assert float(v["t_alltoall"]) == pytest.approx(2 * 58 * (float(v["alltoall_bytes"]) / 50e9 + t_round), rel=1e-12)
    inside = _values(**DEEPSEEK, **{**DEEPSEEK_LAYOUT, "dp": "8", "ep": "8"})  # 8 GPUs: one node, NVLink at 200 GB/s
    assert inside["alltoall_bytes"] == 128 * 8 * 7168 * Fraction(7, 8)
    assert float(inside["t_alltoall"]) == pytest.approx(2 * 58 * (float(inside["alltoall_bytes"]) / 200e9 + t_round), rel=1e-12)


def test_ep_beyond_the_scale_up_domain_needs_a_scale_out_figure():
    """MI355X's spec gives an 8-GPU scale-up domain and no scale-out NIC: EP16 is n/a naming the field, EP8 inside the node is not;
    A100's spec gives neither (the line names one of them); ep = 1 needs neither."""
    wide = evaluate_exactly(DECODE, context("mi355x", "deepseek-v3", "fp8", dp="16", ep="16", batch="16"), ("t_alltoall",))["t_alltoall"]
    assert isinstance(wide, Missing) and "scaleout_bandwidth_per_direction" in wide.reason
    node = evaluate_exactly(DECODE, context("mi355x", "deepseek-v3", "fp8", dp="8", ep="8", batch="16"), ("t_alltoall",))["t_alltoall"]
    assert not isinstance(node, Missing) and node > 0
    a100 = evaluate_exactly(DECODE, context("a100-sxm-80gb", "mixtral-8x7b", tp="8", ep="8", batch="16"), ("t_alltoall",))["t_alltoall"]
    assert isinstance(a100, Missing) and ("scaleup_domain" in a100.reason or "scaleout_bandwidth_per_direction" in a100.reason)
    plain = evaluate_exactly(DECODE, context("a100-sxm-80gb", "mixtral-8x7b", tp="8", batch="16"), ("t_alltoall", "t_step"))
    assert plain["t_alltoall"] == 0 and not isinstance(plain["t_step"], Missing)


def test_readme_ep_example_matches_the_sheet():
    v = _values(**DEEPSEEK, **DEEPSEEK_LAYOUT)
    text = README.read_text()
    for name, unit, scale, digits in (("weight_bytes_gpu", "GB", 1e9, 3), ("kv_bytes_step", "GB", 1e9, 3), ("t_step", "ms", 1e-3, 3)):
        shown = f"{float(v[name]) / scale:.{digits}g} {unit}"
        assert shown in text, (name, shown)
    assert f"{float(v['throughput']):,.0f} tokens/s" in text
    assert "--set tp=1 --set dp=128 --set ep=128 --set batch=128" in text


@pytest.mark.parametrize(("inputs", "field", "words"), [
    ({"model": "deepseek-v3", "ep": "7"}, "ep", "does not divide DeepSeek-V3's 256 routed experts"),
    ({"model": "deepseek-v3", "ep": "8"}, "ep", "does not divide the layout's tp x dp = 1 x 1 = 1 GPUs"),
    ({"model": "deepseek-v3", "dp": "4"}, "dp", "data-parallel attention feeds expert-parallel MoE layers"),
    ({"model": "llama-3.1-8b", "ep": "2"}, "ep", "dense model"),
])
def test_inconsistent_layouts_are_one_line_and_a_nonzero_exit(inputs, field, words):
    model = inputs.pop("model")
    args = [sys.executable, "-m", "roofline", "derive", "decode-floor", "--model", model, "--hardware", "h800"]
    for k, val in inputs.items():
        args += ["--set", f"{k}={val}"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert run.stdout == ""
    errors = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and f"--set: {field}: " in errors[0] and words in errors[0], run.stderr
    assert "Traceback" not in run.stderr


def test_an_inconsistent_table_row_is_na_not_an_error():
    """The EP rows of a sheet's tables are DeepSeek-V3's; a row whose layout does not fit its model shows n/a with the reason."""
    sheet = api.derive("decode-floor", model="llama-3.1-8b")
    table = next(t for t in sheet.tables if t.title.startswith("Parallelism as a layout"))
    assert all(why == "" for _, _, why in table.rows)  # DeepSeek's own rows are consistent
    assert len(table.rows) == 3


def test_rows_of_one_chip_and_model_with_other_settings_are_all_printed():
    """The renderer drops a chip or model column no value depends on, and merges rows that differ only by it: never rows
    that differ by their settings (the three layouts of one chip and model)."""
    text = api.render(api.derive("decode-floor"), "md")
    table = text[text.index("#### Parallelism as a layout"):].split("\n\n")[2]
    assert [line.count(r"n_{\mathrm{EP}} = ") for line in table.splitlines()[2:]] == [1, 1, 1]


# --- properties over layouts ----------------------------------------------------------------------------------------

LAYOUTS = st.sampled_from([(1, 1, 1), (2, 1, 1), (8, 1, 1), (8, 1, 8), (1, 8, 8), (2, 4, 8), (1, 32, 32), (1, 128, 128), (4, 16, 64),
                           (1, 256, 256), (2, 32, 64)])


@settings(max_examples=25, deadline=None)
@given(layout=LAYOUTS, batch=st.integers(1, 512), context_tokens=st.integers(1, 65536))
def test_bytes_per_gpu_between_the_replicated_share_and_the_whole_model(layout, batch, context_tokens):
    """A GPU reads at least its tp share of the always-read weights and at most every weight of the model (all experts)."""
    tp, dp, ep = layout
    m = api.model("deepseek-v3")
    counts = m.param_counts()
    base = counts.active_matmul - counts.experts_routed_active
    whole = counts.matmul
    v = evaluate_exactly(DECODE, context("h800", "deepseek-v3", "fp8", tp=str(tp), dp=str(dp), ep=str(ep), batch=str(batch),
                                 context=f"{context_tokens} token"), ("weight_bytes_gpu", "memory_per_gpu"))
    w = Fraction(str(v["weight_bytes_gpu"]))
    assert Fraction(base, tp) <= w * (1 + Fraction(1, 10**12))
    assert w <= whole
    resident = float(v["memory_per_gpu"])
    assert resident >= counts.total / (tp * dp) and resident >= float(w) * (1 - 1e-12)


@settings(max_examples=25, deadline=None)
@given(layout=LAYOUTS, model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x7b", "deepseek-v3"]),
       batch=st.integers(1, 512), context_tokens=st.integers(1, 65536))
def test_the_step_is_compared_with_the_floor_of_its_own_layout(layout, model, batch, context_tokens):
    """The answer's ratio is the step over the floor of the same layout (each GPU streaming its own weights at datasheet
    bandwidth), never over the single-GPU floor: a modelled step with its cache, shortfall and overheads is at least that
    floor on every layout. Before, Llama 3.1 70B at tp 2 read "34.1 ms, 0.821 times the floor" (the single-GPU 41.5 ms)."""
    tp, dp, ep = layout
    if model != "deepseek-v3":
        dp = ep = 1  # dp and ep are MoE layouts; a dense model runs tensor parallelism alone
    v = evaluate_exactly(DECODE, context("h800", model, tp=str(tp), dp=str(dp), ep=str(ep), batch=str(batch), context=f"{context_tokens} token"),
                 ("weight_bytes_gpu", "t_floor", "t_floor_layout", "t_step", "step_over_floor"))
    beta = float(api.hardware("h800").memory_bandwidth.to("B/s").magnitude)
    assert float(v["t_floor_layout"]) == pytest.approx(float(v["weight_bytes_gpu"]) / beta, rel=1e-12)
    assert float(v["t_floor_layout"]) <= float(v["t_floor"]) * (1 + 1e-12)
    assert float(v["step_over_floor"]) == pytest.approx(float(v["t_step"]) / float(v["t_floor_layout"]), rel=1e-12)
    assert float(v["step_over_floor"]) >= 1
    if (tp, dp, ep) == (1, 1, 1):
        assert v["t_floor_layout"] == v["t_floor"]


@settings(max_examples=20, deadline=None)
@given(dp=st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]), batch=st.integers(1, 256))
def test_more_replicas_never_read_more_weights_per_gpu(dp, batch):
    """Spreading the experts over more GPUs (ep = dp) never raises a GPU's weight bytes, nor changes its own KV."""
    base = evaluate_exactly(DECODE, context("h800", "deepseek-v3", "fp8", dp=str(dp), ep=str(dp), batch=str(batch)), ("weight_bytes_gpu", "kv_bytes_step"))
    wider = evaluate_exactly(DECODE, context("h800", "deepseek-v3", "fp8", dp=str(2 * dp), ep=str(2 * dp), batch=str(batch)),
                     ("weight_bytes_gpu", "kv_bytes_step"))
    assert float(wider["weight_bytes_gpu"]) <= float(base["weight_bytes_gpu"]) * (1 + 1e-12)
    assert wider["kv_bytes_step"] == base["kv_bytes_step"]


def test_docs_name_the_chunked_approximation():
    doc = (pr.kept_context.__doc__ or "") + (pr.read_context.__doc__ or "")
    assert re.search(r"ChunkedLocalAttentionSpec", doc) and "C/2" in doc


def test_a_table_row_on_another_chip_runs_the_math_roofline_derive_runs_there():
    """A row that changes only the chip, on a setup whose math follows its weights, takes the weights' default math on that
    chip, as `roofline derive --hardware` does: DeepSeek-V3's FP8 checkpoint on an A100 (no FP8 peak) is widened to BF16.
    Both paths agree (the full path's resolve_row, the compiled path's row_setup); the row once kept FP8 and had no value."""
    from roofline.derivations.engine.blueprint import Row

    from roofline import api, compiled

    sheet = api.derive("moe-experts", model="deepseek-v3")
    assert sheet.setup.math.math == "fp8"
    direct = api.derive("moe-experts", hardware="a100-sxm-80gb", model="deepseek-v3")
    assert direct.setup.math.math == "bf16"
    row = Row("", hardware="a100-sxm-80gb")
    assert compiled.row_setup(sheet.setup, row).math.math == "bf16"
    ctx = api.context(BY_SLUG["moe-experts"], None, "deepseek-v3")
    assert api.resolve_row(ctx, row).math.math == "bf16"
    # an explicit --math stays on every row, and a row on the chip the setup has keeps its math
    pinned = api.derive("moe-experts", model="deepseek-v3", math="fp8")
    assert compiled.row_setup(pinned.setup, row).math.math == "fp8"
    assert compiled.row_setup(sheet.setup, Row("", hardware=sheet.setup.hardware.key)).math.math == "fp8"

"""kv-tiers: the host link from the chip files, the step with an offloaded share, the context, batch and share past which the
link binds (each closed form against its equation, exactly), the batch the tiers hold, and a stored prompt fetched against
recomputed, by hand against the sheet's own steps."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.derivations.engine.numeric import Missing
from roofline.derivations.engine.sheet import evaluate_exactly
from roofline.derivations.questions.registry import BY_SLUG

from roofline import api

from ..helpers import context

KV = BY_SLUG["kv-tiers"]
FAST = settings(max_examples=20, deadline=None)
#: host links per direction as the chip files store them (PCIe Gen4 x16 32, Gen5 x16 64, Gen6 x16 128 GB/s; a GB300's share of
#: its Grace's 900 GB/s NVLink-C2C, 225 GB/s)
LINKS = {"a100-sxm-80gb": 32e9, "h100-sxm": 64e9, "h200": 64e9, "b200": 64e9, "b300": 128e9, "gb300": 225e9, "mi300x": 64e9}


def _values(hardware="h100-sxm", model="llama-3.1-70b", **inputs):
    return evaluate_exactly(KV, context(hardware, model, **{"tp": "8", "batch": "32", "context": "32768 token", **inputs}))


@pytest.mark.parametrize("chip,rate", sorted(LINKS.items()))
def test_the_host_link_is_the_chip_files_rate_per_direction(chip, rate):
    assert api.hardware(chip).host_link_bandwidth_per_direction.to("B/s").magnitude == rate


def test_a_chip_with_no_published_host_link_has_no_host_tier():
    assert api.hardware("trn2").host_link_bandwidth_per_direction is None
    v = _values(hardware="trn2")
    assert isinstance(v["t_link"], Missing) and "host_link_bandwidth_per_direction" in v["t_link"].reason


def test_the_step_is_the_longer_of_the_step_and_the_link():
    v = _values()
    assert v["t_link"] == Fraction(1, 2) * v["kv_bytes_step"] / (Fraction(4, 5) * 64 * 10**9)
    assert v["t_step_tiered"] == max(v["t_step"], v["t_link"])
    none = _values(offload_fraction="0")
    assert none["t_link"] == 0 and none["t_step_tiered"] == none["t_step"]
    assert isinstance(none["T_offload_bound"], Missing)


@FAST
@given(st.sampled_from(["0.05", "0.1", "0.25", "0.5", "1"]), st.sampled_from(["1", "8", "32", "128"]))
def test_each_bound_meets_its_equation(f, batch):
    """At the context (and the batch, and the share) each solve returns, the link's line equals the step's, exactly."""
    v = _values(offload_fraction=f, batch=batch)
    t = v["T_offload_bound"]
    if not isinstance(t, Missing):
        at_t = _values(offload_fraction=f, batch=batch, context=f"{t} token")
        assert at_t["t_link_line"] == at_t["t_step_line"]
    b = v["B_offload_bound"]
    if not isinstance(b, Missing):
        at_b = _values(offload_fraction=f, batch=str(b))
        assert at_b["t_link_line"] == at_b["t_step_line"]
    share = v["f_offload_max"]
    if not isinstance(share, Missing) and share <= 1:
        at_f = _values(offload_fraction=str(share), batch=batch)
        assert at_f["t_link_line"] == at_f["t_step_line"]


def test_more_on_the_host_binds_sooner():
    bounds = [_values(offload_fraction=f)["T_offload_bound"] for f in ("0.1", "0.25", "0.5", "1")]
    assert bounds == sorted(bounds, reverse=True) and bounds[-1] > 0
    # NVLink-C2C on a GB300 carries 225 GB/s, 3.5 times a PCIe Gen5 x16 link: the same share binds at a longer context
    assert _values(hardware="gb300")["T_offload_bound"] > _values(hardware="b200")["T_offload_bound"]


def test_the_tiers_hold_the_batch_of_the_tier_that_fills_first():
    v = _values()
    room, seq, host = v["hbm_room_for_cache"], v["sequence_bytes_gpu"], 250 * 10**9
    assert v["B_fit_tiered"] == min(room / (Fraction(1, 2) * seq), host / (Fraction(1, 2) * seq))
    assert _values(offload_fraction="0")["B_fit_tiered"] == room / seq
    assert _values(offload_fraction="1")["B_fit_tiered"] == host / seq


def test_a_stored_prompt_fetched_or_recomputed():
    v = _values(prompt_len="32768 token")
    per_token = v["kv_bytes_per_token_gpu"]
    assert v["t_fetch_host"] == 32768 * per_token / (Fraction(4, 5) * 64 * 10**9)
    assert v["t_fetch_ssd"] == 32768 * per_token / (7 * 10**9)
    assert v["t_fetch_host"] < v["t_fetch_ssd"] < v["t_recompute"]  # Llama 3.1 70B: a token's cache is cheap next to its FLOPs
    assert isinstance(v["S_fetch_recompute"], Missing) and "every length" in v["S_fetch_recompute"].reason
    # Llama 2 7B keeps every head's keys and values (no GQA): from SSD a token's cache comes back slower than its GEMMs run, and
    # only attention's growing share makes fetching win, past the crossover, where the two costs per token meet
    fat = _values(model="llama-2-7b", tp="1")
    s = fat["S_fetch_recompute"]
    assert s > 0
    at_s = _values(model="llama-2-7b", tp="1", prompt_len=f"{s} token")
    assert at_s["t_recompute_per_token"] == at_s["t_fetch_ssd_per_token"]


def test_the_sheet_answers_first():
    """The default, Llama 3.1 8B on one B200 at batch 32: half of a 32K cache over PCIe Gen5 binds past 127 tokens, and a B200
    recomputes a prompt faster than one Gen4 SSD returns its cache up to 55K tokens."""
    sheet = api.derive("kv-tiers")
    assert sheet.results["T_offload_bound"].float == pytest.approx(126.9, abs=0.1)
    assert sheet.values["S_fetch_recompute"].float == pytest.approx(55244, rel=1e-3)
    assert sheet.results["fetch_speedup_ssd"].float == pytest.approx(sheet.values["t_recompute"].float / sheet.values["t_fetch_ssd"].float)
    assert sheet.values["t_fetch_host"].float < sheet.values["t_recompute"].float < sheet.values["t_fetch_ssd"].float

"""Derived figures for `roofline show`, in pint alone.

`roofline show` must not import sympy, so the two figures it derives are
written here on quantities: the ridge point (`primitives.ridge_point`, peak
over bandwidth) and KV bytes per token (`primitives.kv_bytes_per_token`,
elements times bytes each). tests/derivations/physics/test_facts.py checks both
against the primitives, so the definitions cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import pint

from ...specs.hardware import Hardware
from ...specs.models import Architecture
from ...specs.precisions import PRECISIONS
from ...units import Quantity


def hardware_facts(hw: Hardware) -> dict[str, pint.Quantity]:
    """Spec values and the ridge point for every precision the chip lists."""
    facts: dict[str, pint.Quantity] = {
        "memory_capacity": hw.memory_capacity,
        "memory_bandwidth": hw.memory_bandwidth,
    }
    for name in ("on_chip_memory", "tdp", "scaleup_bandwidth_per_direction"):
        if getattr(hw, name) is not None:
            facts[name] = getattr(hw, name)
    if hw.compute_units is not None:
        facts["compute_units"] = Quantity(hw.compute_units, "")
    for precision, peak in hw.peak_dense.items():
        facts[f"peak_dense_{precision}"] = peak
    for precision, peak in hw.peak_dense.items():
        facts[f"ridge_point_{precision}"] = (peak / hw.memory_bandwidth).to("flop/B")
    return facts


def model_facts(m: Architecture) -> dict[str, Any]:
    """Architecture, parameters by component and KV bytes per token per precision."""
    c = m.param_counts()
    p = lambda n: Quantity(n, "parameter")  # noqa: E731
    facts: dict[str, Any] = {
        "params_total": p(c.total),
        "params_matmul": p(c.matmul),
        "params_no_arithmetic": p(c.no_arithmetic),
        "params_active": p(c.active),
        "params_active_matmul": p(c.active_matmul),
        "params_attention": p(c.attention),
        "params_mlp_dense": p(c.mlp_dense),
        "params_experts_routed": p(c.experts_routed),
        "params_experts_shared": p(c.experts_shared),
        "params_router": p(c.router),
        "params_embedding": p(c.embedding),
        "params_lm_head": p(c.lm_head),
        "params_norms": p(c.norms),
        "params_biases": p(c.biases),
    }
    elements = Quantity(m.kv_elements_per_token(), "")
    for name in ("bf16", "fp8"):
        b_kv = Quantity(PRECISIONS[name].bytes_per_element, "B/token")
        facts[f"kv_bytes_per_token_{name}"] = elements * b_kv
    if m.state_bytes_per_sequence():
        facts["state_bytes_per_sequence"] = Quantity(m.state_bytes_per_sequence(), "B")
    if m.index_bytes_per_token():
        facts["index_bytes_per_token"] = Quantity(m.index_bytes_per_token(), "B/token")
    return facts

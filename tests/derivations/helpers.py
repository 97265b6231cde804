"""Contexts for derivation tests, built through the public API's loaders."""

from dataclasses import replace

from roofline.derivations.engine.context import Context, make_context
from roofline.derivations.engine.declare import Derivation

from roofline import api

#: The hand-set engine inputs every sheet defaulted to before they came from engine profiles fitted to measurements
#: (specs/measurements/profiles/), with no per-layer overhead and no all-reduce latency: tests that check physics against numbers
#: worked by hand pin them, so a refit does not move them.
HAND_SET = {"eta_bw": "0.8", "eta_flops": "0.7", "t_layer": "0 s", "t_fixed": "0.2 ms", "ar_latency": "0 s", "t_seq": "0 s"}


def context(hardware: str = "h100-sxm", model: str = "llama-3.1-8b", weights: str | None = None, kv: str | None = None,
            second_hardware: str | None = None, second_model: str | None = None, **inputs: str) -> Context:
    ctx = make_context(api.hardware(hardware), api.model(model), weights, kv)
    if second_hardware is not None:
        ctx = replace(ctx, second_hardware=api.hardware(second_hardware))
    if second_model is not None:
        ctx = replace(ctx, second_model=api.model(second_model))
    return ctx.with_overrides(**inputs) if inputs else ctx


def sheet_context(d: Derivation, hardware: str = "h100-sxm", model: str = "llama-3.1-8b", **inputs: str) -> Context:
    """`context` with the sheet's default second chip and second model (the chip compared with, a drafter), as `roofline derive` gives them."""
    return context(hardware, model, second_hardware=d.second_hardware, second_model=d.second_model, **inputs)

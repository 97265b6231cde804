"""Contexts for derivation tests, built through the public API's loaders."""

from derivations.context import Context, make_context
from roofline import api


def context(hardware: str = "h100-sxm", model: str = "llama-3.1-8b", weights: str | None = None, kv: str | None = None, **inputs: str) -> Context:
    ctx = make_context(api.hardware(hardware), api.model(model), weights, kv)
    return ctx.with_overrides(**inputs) if inputs else ctx

"""Grade an answer against a sheet (`roofline check ANSWER --against SLUG:RESULT`, `roofline.grade`).

    >>> import roofline
    >>> v = roofline.grade("P_active*b_w/beta", against="decode-floor:t_floor", hardware="h100-sxm", model="llama-3.1-8b")
    >>> v.kind, v.scope
    ('equivalent', 'architecture')
    >>> roofline.grade("4.5 ms", against="decode-floor:t_floor", hardware="h100-sxm", model="llama-3.1-8b").kind
    'within'

The answer is a formula in the formula language (`roofline check`'s) or a
number with its unit; the engine's comparison is `derivations.grading`, the
words `renderers.grade`. The context is built here from the engine's pieces:
the sheet's default chip and model unless given, its own inputs for `overrides`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from derivations import grading, registry
from derivations.context import Context, make_context, parse_overrides
from derivations.engine import Derivation
from derivations.grading import GradeError, Verdict
from derivations.sheet import context_label
from derivations.userfile import is_derivation_file
from derivations.userfile import load as load_derivation_file
from specs.errors import SpecError, shown, suggest
from specs.hardware import load_hardware
from specs.models import load_model

__all__ = ["GradeError", "Verdict", "context", "grade", "sheet_and_result"]


def sheet_and_result(against: str) -> tuple[Derivation, str]:
    """`SLUG:RESULT` (or `my-question.toml:RESULT`) as the derivation and the result name, checked."""
    if not isinstance(against, str) or ":" not in against:
        raise GradeError(f"--against: expected SLUG:RESULT such as decode-floor:t_floor, found {shown(against, 40)}")
    slug, _, result = against.rpartition(":")
    slug, result = slug.strip(), result.strip()
    if is_derivation_file(slug):
        d = load_derivation_file(slug)
    elif slug in registry.SLUGS:
        d = registry.get(slug)
    else:
        raise GradeError(f"--against: unknown sheet {slug[:40]!r}{suggest(slug, registry.SLUGS)}; `roofline list questions` lists them")
    return d, grading.target(d, result)


def context(d: Derivation, hardware: str | Path | None = None, model: str | Path | None = None, weights: str | None = None,
            kv: str | None = None, math: str | None = None, overrides: Iterable[str] = ()) -> Context:
    """The sheet's context: the chip and model given (else its first defaults), precisions, its own inputs set by NAME=VALUE."""
    for where, value in (("--weights", weights), ("--kv", kv), ("--math", math)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise SpecError(where, None, f"expected a precision name such as 'bf16', found {shown(value)}")
    if isinstance(overrides, str | bytes):
        raise SpecError("overrides", None, f"expected a list of NAME=VALUE strings, found one string {shown(overrides)}")
    pairs = list(overrides)
    names = [p.partition("=")[0].strip() if isinstance(p, str) else p for p in pairs]
    twice = sorted({n for n in names if names.count(n) > 1}, key=str)
    if twice:
        raise SpecError("--set", str(twice[0])[:40], "given twice; give each input once")
    ctx = make_context(load_hardware(hardware if hardware is not None else d.hardware[0]),
                       load_model(model if model is not None else d.models[0]), weights, kv, math)
    ctx = replace(ctx, overrides=parse_overrides([str(p) for p in pairs], d.inputs, d.slug))
    if d.second_hardware is not None:
        ctx = replace(ctx, second_hardware=load_hardware(d.second_hardware))
    if d.second_model is not None:
        ctx = replace(ctx, second_model=load_model(d.second_model))
    return ctx


def grade(answer: str, against: str, hardware: str | Path | None = None, model: str | Path | None = None, *, weights: str | None = None,
          kv: str | None = None, math: str | None = None, overrides: Iterable[str] = (), tolerance: float | None = None) -> Verdict:
    """The verdict on `answer` (a formula, or a number with its unit) for the sheet's result `against` ("decode-floor:t_floor").

    `tolerance` is the relative error within which a number is right (default 5%) or a formula an
    approximation (default 10%). Raises a one-line RooflineError for anything it cannot grade.
    """
    if not isinstance(answer, str) or not answer.strip():
        raise GradeError(f"answer: expected a formula or a number with its unit, found {shown(answer, 40)}")
    d, result = sheet_and_result(against)
    ctx = context(d, hardware, model, weights, kv, math, overrides)
    label = context_label(ctx)
    if grading.is_number(answer):
        return grading.grade_number(d, result, answer, ctx, label, grading.NUMBER_TOLERANCE if tolerance is None else tolerance)
    return grading.grade_formula(d, result, answer, ctx, label, grading.APPROXIMATION_TOLERANCE if tolerance is None else tolerance)

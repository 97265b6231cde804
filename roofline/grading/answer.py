"""Grade an answer against a sheet (`roofline check ANSWER --against SLUG:RESULT`, `roofline.grade`).

    >>> import roofline
    >>> v = roofline.grade("P_active*b_w/beta", against="decode-floor:t_floor", hardware="h100-sxm", model="llama-3.1-8b")
    >>> v.kind, v.scope
    ('equivalent', 'architecture')
    >>> roofline.grade("4.5 ms", against="decode-floor:t_floor", hardware="h100-sxm", model="llama-3.1-8b").kind
    'within'

The answer is a formula in the formula language (`roofline check`'s) or a
number with its unit; the engine's comparison is `roofline.grading.compare`, the
words `roofline.grading.words`. The context is built here from the engine's pieces:
the sheet's default chip and model unless given, its own inputs for `overrides`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import api
from ..derivations.engine import bounded
from ..derivations.engine.context import Context
from ..derivations.engine.declare import Derivation
from ..derivations.engine.sheet import context_label
from ..derivations.questions import registry
from ..specs.errors import shown, suggest
from ..userfile import is_derivation_file
from ..userfile import load as load_derivation_file
from . import compare as grading
from .values import GradeError, is_number, target
from .verdict import APPROXIMATION_TOLERANCE, Verdict

#: The most CPU time grading one formula may take (each sympy operation inside also has a soft limit, roofline.grading.values.SYMPY_SECONDS).
GRADE_CPU_SECONDS = 30

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
    return d, target(d, result)


def context(d: Derivation, hardware: str | Path | None = None, model: str | Path | None = None, weights: str | None = None,
            kv: str | None = None, math: str | None = None, overrides: Iterable[str] = (),
            inputs: Mapping[str, object] | None = None, engine: str | None = None) -> Context:
    """The sheet's context, built as `roofline derive` builds it (`api.context`)."""
    return api.context(d, hardware, model, weights, kv, math, overrides, inputs=inputs, engine=engine)


def grade(answer: str, against: str, hardware: str | Path | None = None, model: str | Path | None = None, *, weights: str | None = None,
          kv: str | None = None, math: str | None = None, overrides: Iterable[str] = (), inputs: Mapping[str, object] | None = None,
          tolerance: float | None = None, engine: str | None = None) -> Verdict:
    """The verdict on `answer` (a formula, or a number with its unit) for the sheet's result `against` ("decode-floor:t_floor").

    `inputs` (or the older `overrides`, "NAME=VALUE" strings) set the sheet's inputs as `roofline.derive` takes them.
    `engine` names the engine profile the sheet's engine inputs take (default: fitted), as `derive --engine` does.
    `tolerance` is the relative error within which a number is right (default 5%) or a formula an
    approximation (default 10%). Raises a one-line RooflineError for anything it cannot grade.

    >>> import roofline
    >>> roofline.grade("4.5 ms", against="decode-floor:t_floor", hardware="h100-sxm", model="llama-3.1-8b").kind
    'within'
    """
    if not isinstance(answer, str) or not answer.strip():
        raise GradeError(f"answer: expected a formula or a number with its unit, found {shown(answer, 40)}")
    d, result = sheet_and_result(against)
    ctx = context(d, hardware, model, weights, kv, math, overrides, inputs=inputs, engine=engine)
    label = context_label(ctx)
    if is_number(answer):
        return grading.grade_number(d, result, answer, ctx, label, grading.NUMBER_TOLERANCE if tolerance is None else tolerance)
    tol = APPROXIMATION_TOLERANCE if tolerance is None else tolerance
    # a stranger's formula: the whole comparison runs in a child the kernel bounds (CPU time, memory), as every solve of input does
    return bounded.run(grading.grade_formula, d, result, answer, ctx, label, tol, what="grading the answer",
                       cpu_seconds=GRADE_CPU_SECONDS)

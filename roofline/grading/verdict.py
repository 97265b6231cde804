"""A grading verdict as data (`Verdict`, of one of `KINDS`), and the parts it names.

Terms of the step left out or added (`Term`), the known slips that give a ratio
(`Slip`, `SLIPS`, `RATIO_SLIPS`; a `Cause` is one of them here), where an
approximation stops holding (`Boundary`) and the side a max() takes (`Regime`).
`roofline.grading.compare` reaches a verdict, `roofline.grading.words` words it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pint
import sympy as sp

from ..derivations.engine.context import Input
from ..derivations.engine.symbols import Symbols
from ..derivations.physics import glossary as gl
from .values import Identity

#: A formula within this relative error of the step at the sheet's context is an approximation there; past it, it stops holding.
APPROXIMATION_TOLERANCE = 0.10


# --- known slips ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Slip:
    """A mistake candidates make, as what it does to the step: a symbol replaced (`symbol` -> `replace`), or a fixed ratio."""

    key: str
    text: str
    source: str
    symbol: sp.Symbol | None = None
    replace: sp.Expr | None = None
    ratios: tuple[float, ...] = ()


#: Symbol slips: each is applied to the sheet's own formula, so the factor it gives is the sheet's, not a typed number.
SLIPS: tuple[Slip, ...] = (
    Slip("sparse-peak", "a 2:4-sparse datasheet peak used as the dense one (sparse headlines are twice the dense peak)",
         "/work/shared/reference/hardware.md (H100 SXM: 989.4 dense, 1,979 sparse BF16 TFLOP/s)", gl.pi, 2 * gl.pi),
    Slip("mac-one-flop", "a multiply-add counted as one FLOP (the convention is two)", "derivations/physics/conventions.py FLOPS_PER_WEIGHT_PER_TOKEN",
         gl.kappa, gl.kappa / 2),
    Slip("attention-mac-one-flop", "attention multiply-adds counted as one FLOP each", "derivations/physics/conventions.py ATTENTION_FLOPS_PER_CHANNEL",
         gl.kappa_attn, gl.kappa_attn / 2),
    Slip("attention-causal-half", "the context halved as a causal mask averages it over a prefill (T/2), where a decode token attends "
         "to all T cached tokens", "derivations/physics/primitives.py attention_flops_per_token (decode reads the whole context)",
         gl.T, gl.T / 2),
    Slip("attention-flops-doubled", "attention FLOPs doubled (QK and PV counted twice)", "DESIGN.md, known bugs in peer tools",
         gl.kappa_attn, 2 * gl.kappa_attn),
    Slip("kv-heads-as-query-heads", "the query heads counted where the KV heads belong (MHA for a GQA model)",
         "Ainslie et al., GQA, arXiv:2305.13245, section 2", gl.K, gl.N),
    Slip("head-dim-from-hidden", "the head dimension taken as hidden/heads where the config sets it", "DESIGN.md, known bugs in peer tools",
         gl.H, gl.D / gl.N),
    Slip("datasheet-bandwidth", "the datasheet bandwidth used where the achieved fraction belongs", "derivations/physics/stepmodel.py", gl.eta_bw, sp.S.One),
    Slip("datasheet-peak", "the datasheet peak used where the achieved fraction belongs", "derivations/physics/stepmodel.py", gl.eta_flops, sp.S.One),
    Slip("no-tp-split", "the tensor-parallel split left out (the whole model on one GPU)", "derivations/physics/stepmodel.py", gl.n_tp, sp.S.One),
    Slip("one-sequence", "one sequence counted where the batch belongs", "derivations/physics/stepmodel.py", gl.B, sp.S.One),
    Slip("all-parameters", "every parameter streamed (the embedding gather and norms, every expert) where only the GEMM weights a token uses belong",
         "derivations/physics/conventions.py (the embedding is a gather)", gl.P_active, gl.P_total),
)
#: Ratios that are slips whatever the formula: units read wrong.
RATIO_SLIPS: tuple[Slip, ...] = (
    Slip("bits-bytes", "bits and bytes mixed up", "one byte is 8 bits", ratios=(8.0,)),
    Slip("binary-prefix", "a binary prefix read as a decimal one (GiB for GB: 1.074; KiB 1.024, MiB 1.049, TiB 1.100)",
         "IEC 80000-13 binary prefixes: Ki = 2^10, Mi = 2^20, Gi = 2^30, Ti = 2^40", ratios=(1.024, 1.024**2, 1.024**3, 1.024**4)),
    Slip("prefix-1000", "a unit prefix off by a step or more (ms for s, GB for MB)", "SI prefixes", ratios=(1e3, 1e6, 1e9)),
)


# --- the verdict ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Term:
    """One additive term of the step (or of the answer): its expression in the sheet's symbols, the step it belongs to, its value here."""

    expr: sp.Expr
    #: the step this term is (or is a part of), whose title names it; "" for a term of the candidate's own
    step: str = ""
    #: glossary symbols that only this term uses, which name it when no step does
    symbols: tuple[sp.Symbol, ...] = ()
    value: sp.Expr | None = None
    #: the title of `step` ("KV-cache bytes per step")
    title: str = ""


@dataclass(frozen=True)
class Cause:
    slip: Slip
    #: the ratio the slip gives here (answer over sheet)
    ratio: float
    #: True when the answer lacks the slip's symbol while the sheet has it: the slip is then the likely one
    absent: bool = False


@dataclass(frozen=True)
class Boundary:
    """Where an approximation stops holding: the input, which way from the sheet's value, the first value past the tolerance."""

    input: Input
    direction: str  # "up" or "down"
    value: sp.Expr | None  # None: within the tolerance over the whole domain that way
    error: float | None


@dataclass(frozen=True)
class Regime:
    """A max() of the sheet taken on one side: the step, which side ("memory", "compute" or the branch), at the context."""

    step: str
    side: str


@dataclass(frozen=True)
class Verdict:
    """What `roofline check --against` reports. `kind` is one of KINDS."""

    kind: str
    slug: str
    result: str
    #: the step's title in words ("The floor")
    title: str
    answer: str
    #: "formula" or "number"
    form: str
    #: the step's value in the context (exact, in `unit`), or None
    value: sp.Expr | None
    unit: pint.Unit
    display_unit: str | None
    context_label: str
    #: the answer's unit (a formula's inferred one, a number's given one)
    answer_unit: pint.Unit | None = None
    #: the answer's value in the step's unit at the context, when it has one
    answer_value: sp.Expr | None = None
    #: equivalent: "general", "architecture" or "context"; and how: "symbolic" or "numeric"
    scope: str = ""
    proof: str = ""
    identities: tuple[Identity, ...] = ()
    #: answer over sheet: a number, or a number times a power of one symbol
    factor: sp.Expr | None = None
    causes: tuple[Cause, ...] = ()
    missing: tuple[Term, ...] = ()
    extra: tuple[Term, ...] = ()
    #: relative error (answer - sheet)/sheet at the context
    error: float | None = None
    tolerance: float = APPROXIMATION_TOLERANCE
    boundaries: tuple[Boundary, ...] = ()
    regimes: tuple[Regime, ...] = ()
    #: inputs the answer does not use, held at their values in the context for the comparison (tp = 1 for an answer without n_tp)
    pinned: tuple[tuple[Input, sp.Expr], ...] = ()
    #: for a formula whose unit differs only in counts (flop, token, parameter): the unit its bare numbers were read in
    implicit: pint.Unit | None = None
    #: for a different unit: symbols of the step whose unit (or inverse) the answer lacks, and the verdict with each put in
    suggestions: tuple[tuple[sp.Symbol, int, Verdict], ...] = ()
    points: int = 0
    #: the answer as parsed, in the sheet's symbols (a formula)
    expr: sp.Expr | None = None
    #: the sheet's symbol table (units, LaTeX and meanings of every symbol a verdict names)
    table: Symbols | None = None


KINDS = ("equivalent", "factor", "terms", "approximation", "different", "unit", "within", "off")


__all__ = ["APPROXIMATION_TOLERANCE", "KINDS", "RATIO_SLIPS", "SLIPS", "Verdict"]

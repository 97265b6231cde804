"""Which engine inputs does the dataset give? The fits of the step model's engine inputs to the published records (each
predicted as derivations.physics.validation does), the engine profiles they make, and the power model's fit.

A fit gives four of them to a set of memory-bound decode records: the achieved
bandwidth fraction eta_bw, the overhead per layer t_layer, the small time per
step t_fixed and the latency of one all-reduce round t_ar, by least squares on
relative error with every source weighing the same (its records share one
engine, harness and conversion rule, so their errors are not independent). The
step time is linear in t_layer, t_fixed and t_ar and piecewise linear in
1/eta_bw, so the fit is a closed-form linear solve (with eta_bw <= 1 and the
times at or above zero as bounds, an active set by enumeration) repeated until
the set of memory-bound components stops changing: exact for records the model
itself generated. eta_flops is held (memory-bound records cannot see it).

The engine profiles (specs/measurements/profiles/) come from here: `fitted` to
every memory-bound record, one per engine family with at least
MIN_FAMILY_RECORDS of them (what its records cannot tell apart held at
`fitted`'s values), and the hand-written `ideal`. The honest figures are
out-of-sample: leave one source out (all records of a source held out together),
per TP degree, and the eight-GPU records predicted from a fit to TP <= 4 only.
The power model's shares of the TDP (specs/measurements/power/) are fitted to
the records with measured board power (fit_power).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product

import numpy as np

from ...specs.measurements import DEFAULT_PROFILE, PROFILE_SUMMARY, Measurement, Profile
from ...units import Quantity
from .validation import (
    HELD_ETA_FLOPS,
    MEMORY_BOUND,
    Calibration,
    PowerFit,
    Record,
    Row,
    StepFunction,
    evaluate_records,
    measured_mbu_range,
    memo,
    memory_bound,
    memory_summary,
    profile_calibration,
    row,
    start,
    summarise,
    summary,
)

_MAX_FIT_ROUNDS = 50
#: An engine family gets its own profile when the dataset holds at least this many memory-bound decode records of it.
MIN_FAMILY_RECORDS = 8


# --- fitting -------------------------------------------------------------------------------------

_FAST = "eta_bw bound at 1 (the records are faster than the model at datasheet bandwidth)"
#: the fitted parameters (x = 1/eta_bw), their lower bounds and their names in words
PARAMS = ("x", "t_layer", "t_fixed", "t_ar", "t_seq")
BOUNDS = {"x": 1.0, "t_layer": 0.0, "t_fixed": 0.0, "t_ar": 0.0, "t_seq": 0.0}
NAMES = {"x": "eta_bw", "t_layer": "t_layer", "t_fixed": "t_fixed", "t_ar": "t_ar", "t_seq": "t_seq"}
#: the order in which a fit that cannot tell its parameters apart holds them (the small per-step time first)
_HOLD_ORDER = ("t_fixed", "t_seq", "t_ar", "t_layer")


def local_line(r: Record, x: float, eta_flops: float) -> tuple[float, dict[str, float], float]:
    """t_step near x = 1/eta_bw as slope*x + sum(coefficient*parameter) + intercept: piecewise linear in x, linear in the times."""
    h = 1e-6 * x
    g0 = float(r.step(1 / x, eta_flops, 0.0, 0.0, 0.0, 0.0))
    g1 = float(r.step(1 / (x + h), eta_flops, 0.0, 0.0, 0.0, 0.0))
    slope = (g1 - g0) / h
    return slope, _time_coefficients(r.step, eta_flops), g0 - slope * x


@lru_cache(maxsize=8192)
def _time_coefficients(step: StepFunction, eta_flops: float) -> dict[str, float]:
    """What one second of each time adds to a record's step. The times enter t_step as a sum outside every max()
    (stepmodel.t_step), so these do not depend on eta_bw: one evaluation per record, not one per round of every fit."""
    g0 = float(step(1.0, eta_flops, 0.0, 0.0, 0.0, 0.0))
    return {"t_layer": float(step(1.0, eta_flops, 1.0, 0.0, 0.0, 0.0)) - g0, "t_fixed": 1.0,
            "t_ar": float(step(1.0, eta_flops, 0.0, 0.0, 1.0, 0.0)) - g0, "t_seq": float(step(1.0, eta_flops, 0.0, 0.0, 0.0, 1.0)) - g0}


def solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None for a (numerically) singular system."""
    n = len(b)
    m = [[*row, bi] for row, bi in zip(a, b, strict=True)]
    scale = max((abs(v) for row in a for v in row), default=0.0)
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(m[k][i]))
        if abs(m[p][i]) <= 1e-12 * scale:
            return None
        m[i], m[p] = m[p], m[i]
        for k in range(i + 1, n):
            f = m[k][i] / m[i][i]
            for j in range(i, n + 1):
                m[k][j] -= f * m[i][j]
    out = [0.0] * n
    for i in reversed(range(n)):
        out[i] = (m[i][n] - sum(m[i][j] * out[j] for j in range(i + 1, n))) / m[i][i]
    return out


#: how a fit out of sample says where the times it cannot tell apart are held
HELD_AT_DEFAULTS = "held at the sheets' defaults"


class IndistinctError(ValueError):
    """The records cannot tell the free parameters apart: hold one."""


def _least_squares(cols: dict[str, list[float]], ys: Sequence[float], w: Sequence[float], free: Sequence[str],
                   values: dict[str, float]) -> tuple[dict[str, float], tuple[str, ...]]:
    """Weighted least squares of y = sum(col * param) over the `free` parameters (the others at `values`), each at or above
    its bound: the best feasible solution over every choice of bounds that bind. Returns the parameters and those bound."""
    col = {p: np.asarray(cols[p], dtype=float) for p in PARAMS}
    col["y"] = np.asarray(ys, dtype=float)
    w_all = np.asarray(w, dtype=float)
    names = (*PARAMS, "y")
    return least_squares_gram({(p, q): float(np.dot(w_all * col[p], col[q])) for p in names for q in names}, free, values)


def least_squares_gram(gram: Mapping[tuple[str, str], float], free: Sequence[str], values: Mapping[str, float]
                       ) -> tuple[dict[str, float], tuple[str, ...]]:
    """`_least_squares` from the weighted sums of the records (their Gram matrix, `(p, q)` and `(p, "y")` and `("y", "y")`):
    what leave-one-out calibration updates record by record without the records."""
    best: tuple[float, dict[str, float], tuple[str, ...]] | None = None
    for binds in product((False, True), repeat=len(free)):
        bound = tuple(p for p, b in zip(free, binds, strict=True) if b)
        fit_these = [p for p in free if p not in bound]
        vals = {**values, **{p: BOUNDS[p] for p in bound}}
        fixed = [p for p in PARAMS if p not in fit_these]
        if fit_these:
            a = [[gram[(p, q)] for q in fit_these] for p in fit_these]
            b = [gram[(p, "y")] - sum(vals[f] * gram[(p, f)] for f in fixed) for p in fit_these]
            sol = solve(a, b)
            if sol is None:
                if not bound:
                    raise IndistinctError(f"these records cannot tell {' from '.join(NAMES[p] for p in fit_these)} apart; hold one")
                continue
            vals.update(zip(fit_these, sol, strict=True))
            if any(vals[p] < BOUNDS[p] for p in fit_these):
                continue
        cost = (gram[("y", "y")] - 2 * sum(vals[p] * gram[(p, "y")] for p in PARAMS)
                + sum(vals[p] * vals[q] * gram[(p, q)] for p in PARAMS for q in PARAMS))
        if best is None or cost < best[0] * (1 - 1e-12):
            best = (cost, vals, bound)
    assert best is not None  # every parameter at its bound is always feasible
    return best[1], best[2]


def source_weights(records: Sequence[Record]) -> list[float]:
    """Least-squares weights on relative error with every source weighing the same: 1/measured^2, divided by the number of the
    fitted records that share the record's source."""
    count: dict[str, int] = {}
    for r in records:
        count[r.source] = count.get(r.source, 0) + 1
    return [1 / (r.measured ** 2 * count[r.source]) for r in records]


def fit(records: Sequence[Record], held: Mapping[str, float] | None = None, eta_flops: float | None = None,
        held_as: str = "held") -> Calibration:
    """Least squares on relative error, each source weighing the same, for eta_bw and every time parameter not in `held`
    (t_layer, t_fixed, t_ar; held ones stay at their given value), over `records`.

    eta_bw stays in (0, 1], the times at or above zero: a bound that binds is held there and the others refitted, and `how`
    says so. Records that cannot tell the free parameters apart raise IndistinctError (see fit_distinct); records with no tensor
    parallelism cannot fit t_ar.
    """
    if not records:
        raise ValueError("fit needs at least one record")
    held = dict(held or {})
    unknown = set(held) - set(PARAMS[1:])
    if unknown:
        raise ValueError(f"only t_layer, t_fixed, t_ar and t_seq can be held, not {sorted(unknown)}")
    ef = start().eta_flops if eta_flops is None else eta_flops
    free = ["x"] + [p for p in PARAMS[1:] if p not in held]
    if len(free) > len(records):
        raise IndistinctError(f"{len(records)} record(s) cannot fix {len(free)} parameters: hold some")
    w = source_weights(records)
    x = 1 / start().eta_bw
    if "t_ar" in free and not any(local_line(r, x, ef)[1]["t_ar"] > 0 for r in records):
        raise IndistinctError("no record has tensor parallelism, so t_ar cannot be fitted: hold it")
    vals: dict[str, float] = {}
    bound: tuple[str, ...] = ()
    for _ in range(_MAX_FIT_ROUNDS):
        lines = [local_line(r, x, ef) for r in records]
        cols = {"x": [a for a, _, _ in lines], **{p: [c[p] for _, c, _ in lines] for p in PARAMS[1:]}}
        ys = [r.measured - c for r, (_, _, c) in zip(records, lines, strict=True)]
        if free == ["x"] and len(records) == 1 and lines[0][0] > 0:  # one record, eta_bw alone: the least squares is one division
            y = ys[0] - sum(lines[0][1][p] * held[p] for p in PARAMS[1:])
            vals, bound = ({**held, "x": y / lines[0][0]}, ()) if y / lines[0][0] >= BOUNDS["x"] else ({**held, "x": BOUNDS["x"]}, ("x",))
        else:
            vals, bound = _least_squares(cols, ys, w, free, {**held, "x": x})
        done = abs(vals["x"] - x) <= 1e-12 * x
        x = vals["x"]
        if done:
            break
    fitted = [NAMES[p] for p in free if p not in bound]
    parts = [f"{NAMES[p]} bound at 0" for p in free if p in bound and p != "x"]
    if fitted:
        parts.append(_and(fitted) + (" fitted together" if len(fitted) > 1 else " fitted"))
    if held:
        parts.append(f"{_and(list(held))} {held_as}")
    if "x" in bound:
        parts.append(_FAST)
    return Calibration(1 / x, float(vals["t_layer"]), float(vals["t_fixed"]), float(vals["t_ar"]), "; ".join(parts),
                       tuple(r.m.id for r in records), ef, float(vals["t_seq"]))


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def fit_distinct(records: Sequence[Record], fallback: Calibration, held_as: str) -> Calibration:
    """fit(), holding parameters at `fallback`'s values in _HOLD_ORDER until the records can tell the rest apart."""
    held: dict[str, float] = {}
    for p in (None, *_HOLD_ORDER):
        if p is not None:
            held[p] = getattr(fallback, p)
        try:
            return fit(records, held, held_as=held_as)
        except IndistinctError:
            continue
    raise ValueError("the records cannot fit eta_bw even with every time held")


# --- the dataset defaults, and the values a profile file stores -----------------------------------

def dataset_defaults(records: Sequence[Measurement], classify: Calibration | None = None) -> Calibration:
    """eta_bw, t_layer, t_fixed and t_ar fitted to every memory-bound decode record of the dataset, the regimes judged at
    `classify` (None: the sheets' defaults)."""
    rs = memory_bound(records, classify)
    c = fit(rs)
    return replace(c, how=f"fitted to the {len(rs)} memory-bound decode records of {len({r.source for r in rs})} sources "
                          f"(least squares on relative error, each source weighing the same; {c.how}; eta_flops {HELD_ETA_FLOPS} held)")


#: significant figures the stored profiles keep
DEFAULT_FIGURES = 2


def figures_text(v: float, figures: int = DEFAULT_FIGURES) -> str:
    """`v` to `figures` significant figures as a plain decimal (no exponent)."""
    r = float(f"{v:.{figures}g}")
    return f"{r:f}".rstrip("0").rstrip(".") or "0"


def default_texts(c: Calibration) -> dict[str, str]:
    """A fit as the unit strings a profile file stores (engine-input name -> value)."""
    return {"eta_bw": figures_text(c.eta_bw), "eta_flops": figures_text(c.eta_flops), "t_layer": f"{figures_text(c.t_layer * 1e6)} us",
            "t_fixed": f"{figures_text(c.t_fixed * 1e3)} ms", "ar_latency": f"{figures_text(c.t_ar * 1e6)} us", "t_seq": f"{figures_text(c.t_seq * 1e6)} us"}


def from_texts(texts: Mapping[str, str], how: str, ids: tuple[str, ...]) -> Calibration:
    si = {k: float(Quantity(v).to_base_units().magnitude) for k, v in texts.items()}
    return Calibration(si["eta_bw"], si["t_layer"], si["t_fixed"], si["ar_latency"], how, ids, si["eta_flops"], si["t_seq"])


#: a regime change can move a record across the line and the refit back: give up after this many rounds
_MAX_DEFAULT_ROUNDS = 10


def fresh_defaults(records: Sequence[Measurement]) -> tuple[Calibration, dict[str, str]]:
    """The `fitted` profile the dataset gives today: fitted with the regimes judged at the stored profile, rounded, and refitted
    with the regimes judged at the rounded values until the rounded values stop changing (a fixed point: the stored profile
    classifies the records that fit it). Returns the unrounded fit and the rounded texts."""
    classify = start()
    for _ in range(_MAX_DEFAULT_ROUNDS):
        c = dataset_defaults(records, classify)
        texts = default_texts(c)
        if texts == default_texts(classify):
            return c, texts
        classify = from_texts(texts, c.how, c.ids)
    raise ValueError("the dataset defaults do not settle: a record keeps crossing between regimes as they change")


# --- out of sample: leave one source out, per TP degree, eight GPUs from TP <= 4 -------------------

@dataclass(frozen=True)
class OutOfSample:
    """Memory-bound decode records predicted from fits that did not see them (regimes judged at the sheets' defaults).

    - `loso`: each source's records predicted from a fit to every other source's (leave one source out);
    - `tp8`: the eight-GPU records predicted from a fit to the records of four GPUs or fewer.
    Each fit holds what its records cannot tell apart at the sheets' defaults (fit_distinct).
    """

    loso: tuple[Row, ...]
    loso_fits: Mapping[str, Calibration]
    tp8: tuple[Row, ...]
    tp8_fit: Calibration | None


@memo
def out_of_sample(records: Sequence[Measurement], classify: Calibration | None = None) -> OutOfSample:
    rs = memory_bound(records, classify)
    defaults = classify or start()
    loso, fits = [], {}
    for src in sorted({r.source for r in rs}):
        c = fit_distinct([r for r in rs if r.source != src], defaults, HELD_AT_DEFAULTS)
        fits[src] = c
        loso += [row(r, c) for r in rs if r.source == src]
    loso.sort(key=lambda x: [r.m.id for r in rs].index(x.id))
    small, eight = [r for r in rs if r.m.tp <= 4], [r for r in rs if r.m.tp == 8]
    c8 = fit_distinct(small, defaults, HELD_AT_DEFAULTS) if small and eight else None
    return OutOfSample(tuple(loso), fits, tuple(row(r, c8) for r in eight) if c8 else (), c8)


def at_family_profiles(records: Sequence[Measurement], profiles: Mapping[str, Profile]) -> tuple[Row, ...]:
    """Every record predicted at its own engine family's profile where one exists, else at the default profile. In sample: a
    family profile is fitted to these very records, so this is what a profile reaches, not what it predicts."""
    return tuple(row(r, profile_calibration(profiles.get(r.family, profiles[DEFAULT_PROFILE]))) for r in evaluate_records(records))


# --- engine profiles ----------------------------------------------------------------------------

@dataclass(frozen=True)
class FittedProfile:
    """A profile `roofline calibrate --write-defaults` writes: its name, description, the unrounded fit and the stored texts."""

    name: str
    description: str
    calibration: Calibration
    texts: dict[str, str]
    summary: dict[str, str]


def family_profiles(records: Sequence[Measurement], fitted: Calibration) -> list[FittedProfile]:
    """One profile per engine family with at least MIN_FAMILY_RECORDS memory-bound decode records (regimes judged at `fitted`),
    what its records cannot tell apart held at `fitted`'s values."""
    rs = memory_bound(records, fitted)
    out = []
    for fam in sorted({r.family for r in rs}):
        mine = [r for r in rs if r.family == fam]
        if len(mine) < MIN_FAMILY_RECORDS or fam in (DEFAULT_PROFILE, "ideal"):
            continue
        c = fit_distinct(mine, fitted, f"held at the {DEFAULT_PROFILE} profile's values (these records cannot tell them apart)")
        engines = sorted({r.m.engine for r in mine})
        sources = len({r.source for r in mine})
        c = replace(c, how=f"fitted to the {len(mine)} memory-bound decode records of {', '.join(engines)} ({sources} source"
                           f"{'s' if sources > 1 else ''}; least squares on relative error, each source weighing the same; {c.how}; "
                           f"eta_flops {HELD_ETA_FLOPS} held)")
        rows = [row(r, c) for r in mine]
        s = summary(MEMORY_BOUND, rows, lambda x: x.error)
        out.append(FittedProfile(fam, f"{', '.join(engines)} as the dataset measured it ({len(mine)} records)", c, default_texts(c),
                                 {"median_error": figures_text(s.median_abs_error), "worst_error": figures_text(abs(s.worst_error))}))
    return out


def summary_texts(records: Sequence[Measurement], c: Calibration, classify: Calibration | None = None) -> dict[str, str]:
    """What the dataset says at `c` (regimes judged at `classify`, None: the sheets' defaults), as the plain numbers stored in
    the default profile's [summary] table (specs.measurements.PROFILE_SUMMARY)."""
    rs = evaluate_records(records, classify)
    rows = [row(r, c) for r in rs]
    mem = summarise(rows)[0]
    low, mid, high = measured_mbu_range(records, classify)
    low8, _, high8 = measured_mbu_range(records, classify, tp=8)
    loso = memory_summary(out_of_sample(records, classify).loso)
    return {"median_error": figures_text(mem.median_abs_error), "worst_error": figures_text(abs(mem.worst_error)),
            "loso_error": figures_text(loso.median_abs_error), "mbu_low": figures_text(low), "mbu_median": figures_text(mid), "mbu_high": figures_text(high),
            "tp8_mbu_low": figures_text(low8), "tp8_mbu_high": figures_text(high8)}


def fresh_profiles(records: Sequence[Measurement]) -> list[FittedProfile]:
    """Every profile the dataset gives today: `fitted` (to every memory-bound record) and one per engine family."""
    fresh, texts = fresh_defaults(records)
    rounded = from_texts(texts, fresh.how, fresh.ids)
    fitted = FittedProfile(DEFAULT_PROFILE, "fitted to every memory-bound decode record of the published measurements in roofline's dataset",
                           fresh, texts, summary_texts(records, rounded, rounded))
    return [fitted, *family_profiles(records, rounded)]


def profile_file_text(p: FittedProfile) -> str:
    """A fitted profile's file (`roofline calibrate --write-defaults`)."""
    ids = "".join(f'    "{i}",\n' for i in p.calibration.ids)
    table = "".join(f'{k} = "{p.summary[k]}"\n' for k in PROFILE_SUMMARY if k in p.summary)
    values = "".join(f'{k} = "{p.texts[k]}"\n' for k in ("eta_bw", "eta_flops", "t_layer", "t_fixed", "t_seq", "ar_latency"))
    return (
        f"# Engine profile {p.name!r}: the step model's engine inputs fitted to published measurements in specs/measurements/, and what\n"
        "# the dataset says at them. Written by `roofline calibrate --write-defaults`; a test fails when a fresh fit rounds to other values.\n"
        f'description = "{p.description}"\n'
        f'provenance = "{p.calibration.how}; rounded to {DEFAULT_FIGURES} significant figures"\n'
        f"{values}"
        f"records = [\n{ids}]\n"
        "\n"
        "# At these values, regimes judged at the default profile (`roofline validate`); each a plain number, to two significant figures.\n"
        "[summary]\n"
        f"{table}"
    )


# --- the power model's fit: board power against the step's utilisation -----------------------------

def metered(records: Sequence[Record]) -> list[Record]:
    """The records with a measured board power, on a chip whose spec gives a TDP, and not excluded."""
    return [r for r in records if getattr(r.m, "power", None) is not None and r.tdp and getattr(r.m, "excluded", None) is None]


def fit_power(records: Sequence[Measurement]) -> PowerFit:
    """Least squares of measured board power per GPU over the TDP against the step's utilisation at the measured step time:
    share = idle + memory * U_mem + compute * U_flop, each share at or above zero (an active set by enumeration)."""
    rs = metered(evaluate_records(records))
    if len(rs) < 3:
        raise ValueError("the power model needs at least three records with measured board power")
    ys = [float(r.m.power.to("W").magnitude) / (r.gpus * r.tdp) for r in rs]
    cols = {"idle": [1.0] * len(rs), "memory": [r.utilisation(r.measured)[0] for r in rs], "compute": [r.utilisation(r.measured)[1] for r in rs]}
    best: tuple[float, dict[str, float]] | None = None
    names = tuple(cols)
    for binds in product((False, True), repeat=len(names)):
        free = [n for n, b in zip(names, binds, strict=True) if not b]
        vals = dict.fromkeys(names, 0.0)
        if free:
            sol = solve([[sum(cols[a][i] * cols[b][i] for i in range(len(rs))) for b in free] for a in free],
                         [sum(cols[a][i] * ys[i] for i in range(len(rs))) for a in free])
            if sol is None or any(v < 0 for v in sol):
                continue
            vals.update(zip(free, sol, strict=True))
        cost = sum((y - sum(vals[n] * cols[n][i] for n in names)) ** 2 for i, y in enumerate(ys))
        if best is None or cost < best[0]:
            best = (cost, vals)
    assert best is not None
    v = best[1]
    fit_ = PowerFit(v["idle"], v["memory"], v["compute"], tuple(r.m.id for r in rs))
    errs = [abs(r.power_share(r.measured, fit_) * r.gpus * r.tdp / float(r.m.power.to("W").magnitude) - 1) for r in rs]
    return replace(fit_, median_error=statistics.median(errs))


def power_file_text(p: PowerFit, chips: Sequence[str]) -> str:
    """The power model's file (`roofline calibrate --write-defaults`)."""
    ids = "".join(f'    "{i}",\n' for i in p.ids)
    return (
        "# The power model's shares of the TDP, fitted to measured board power. Written by `roofline calibrate --write-defaults`.\n"
        'source = "least squares of measured board power per GPU over the TDP against the step model\'s bandwidth and compute utilisation '
        'at the measured step time, over every record with a meter (specs/measurements)"\n'
        'default = "hopper"\n\n[[family]]\nname = "hopper"\n'
        f"chips = [{', '.join(repr(c).replace(chr(39), chr(34)) for c in chips)}]\n"
        f'idle_share = "{figures_text(p.idle, 3)}"\nmemory_share = "{figures_text(p.memory, 3)}"\ncompute_share = "{figures_text(p.compute, 3)}"\n'
        f'median_error = "{figures_text(p.median_error or 0.0)}"\n'
        f'provenance = "fitted to the {len(p.ids)} records with measured board power (ML.ENERGY v3 on H100 SXM); other chips are assumed to draw '
        'the same shares of their own TDP; rounded to 3 significant figures"\n'
        f"records = [\n{ids}]\n"
    )


__all__ = [
    "DEFAULT_FIGURES",
    "MIN_FAMILY_RECORDS",
    "FittedProfile",
    "IndistinctError",
    "OutOfSample",
    "at_family_profiles",
    "dataset_defaults",
    "default_texts",
    "family_profiles",
    "figures_text",
    "fit",
    "fit_distinct",
    "fit_power",
    "fresh_defaults",
    "fresh_profiles",
    "from_texts",
    "out_of_sample",
    "power_file_text",
    "profile_file_text",
    "source_weights",
    "summary_texts",
]

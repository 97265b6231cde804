"""Calibration on a few records (`roofline calibrate --from`), and leave-one-out over the dataset: each record predicted
from the other memory-bound records of its engine and chip, with the dataset defaults refitted without it
(derivations.physics.fitting's fit). Linear in the number of records: each refit without one record is the dataset's
least-squares sums less that record's (`_Linearised`).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ...specs.errors import SpecError, suggest
from ...specs.measurements import Measurement
from .fitting import HELD_AT_DEFAULTS, PARAMS, IndistinctError, fit, fit_distinct, least_squares_gram, local_line
from .validation import MEMORY_BOUND, Calibration, Record, Row, Summary, evaluate_records, memo, row, start, summarise

# --- calibration on a few records, and leave-one-out -----------------------------------------------

@dataclass(frozen=True)
class LeaveOneOut:
    """Leave-one-out over the dataset. For each record, the dataset defaults are refitted without it; then

    - `one`: eta_bw is calibrated on one other memory-bound record of the same engine and chip (the times held at those
      defaults), the record predicted, and the median absolute error over the choices of that record kept (unsigned:
      `Row.error` is that median, not a signed error);
    - `group`: eta_bw and t_fixed are calibrated on all other memory-bound records of the same engine and chip, t_layer and
      t_ar held (eta_bw alone, t_fixed held too, when they cannot tell the two apart).

    A record with no such peer is left out (`skipped`). Regimes are judged at the sheets' defaults.
    """

    one: tuple[Row, ...]
    group: tuple[Row, ...]
    one_summary: tuple[Summary, ...]
    group_summary: tuple[Summary, ...]
    skipped: tuple[str, ...]


def calibrate(records: Sequence[Measurement], ids: Sequence[str], defaults: Calibration) -> Calibration:
    """Fit on the named records: eta_bw and t_fixed from two or more, eta_bw alone from one; the rest held at `defaults`."""
    by_id = {r.m.id: r for r in evaluate_records(records)}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise SpecError("--from", unknown[0][:60], f"no record with this id{suggest(unknown[0], by_id)}; `roofline validate` lists them")
    chosen = [by_id[i] for i in dict.fromkeys(ids)]
    return _calibrate(chosen, defaults)


def _calibrate(chosen: Sequence[Record], defaults: Calibration) -> Calibration:
    times = {"t_layer": defaults.t_layer, "t_ar": defaults.t_ar, "t_seq": defaults.t_seq}
    if len(chosen) == 1:
        return fit(chosen, {**times, "t_fixed": defaults.t_fixed}, held_as="held at the dataset defaults")
    try:
        return fit(chosen, times, held_as="held at the dataset defaults")
    except IndistinctError:
        return fit(chosen, {**times, "t_fixed": defaults.t_fixed},
                   held_as="held at the dataset defaults (the records cannot tell eta_bw from t_fixed)")


#: A user's own records (a sweep of one model on one layout) cannot tell the per-layer time from the fixed one, nor fit the
#: all-reduce's latency from one TP degree: those are held at the profile calibrated from. Of the rest, what the records cannot
#: tell apart is held too: first the fixed time or the time per sequence (whichever fit leaves the smaller error: a sweep over
#: the batch at one context cannot tell the time per sequence from the KV cache's bytes, each growing with the batch), then both.
_OWN_HOLD = ((("t_layer", "t_ar"),), (("t_layer", "t_ar", "t_fixed"), ("t_layer", "t_ar", "t_seq")), (("t_layer", "t_ar", "t_seq", "t_fixed"),))


def fit_own(records: Sequence[Record], base: Calibration) -> Calibration:
    """eta_bw, t_fixed and t_seq fitted to a user's records (least squares on relative error, each file weighing the same),
    the other times held at `base`, the profile calibrated from (`_OWN_HOLD`)."""
    for tier in _OWN_HOLD:
        fits = []
        for held in tier:
            try:
                fits.append(fit(records, {p: getattr(base, p) for p in held}, held_as="held at the profile calibrated from"))
            except IndistinctError:
                continue
        if fits:
            return min(fits, key=lambda c: sum(_error(r, c) ** 2 for r in records))
    raise ValueError("the records cannot fit eta_bw even with every time held")


@dataclass(frozen=True)
class OwnFit:
    """A fit to a user's records, with each record's error at the fit, at the profile calibrated from, and left out."""

    calibration: Calibration
    records: tuple[Record, ...]
    #: signed relative errors, in the records' order: at the fit (in sample), at `base`, and each predicted from a fit to the
    #: others (None for all where there is one record: nothing to predict it from)
    fitted: tuple[float, ...]
    uncalibrated: tuple[float, ...]
    left_out: tuple[float, ...] | None


def own_fit(records: Sequence[Measurement], base: Calibration) -> OwnFit:
    """`fit_own` on every record, and leave-one-out: each record predicted from a fit to the others."""
    rs = evaluate_records(records, base)
    c = fit_own(rs, base)
    loo = tuple(_error(r, fit_own([s for s in rs if s is not r], base)) for r in rs) if len(rs) > 1 else None
    return OwnFit(c, tuple(rs), tuple(_error(r, c) for r in rs), tuple(_error(r, base) for r in rs), loo)


def _error(r: Record, c: Calibration) -> float:
    return (r.at(c) - r.measured) / r.measured


#: The most peers (memory-bound records of the same engine and chip) a record's one-record calibration is tried with in the
#: leave-one-out, the first in the dataset's order (the shipped dataset's largest group, TensorRT-LLM on the A100 of
#: LLM-Inference-Bench and TensorRT-LLM 0.6.1, has 26 records, so its records use 16 of their 25 peers): it keeps the
#: leave-one-out linear.
MAX_LOO_PEERS = 16
#: Two local lines are the same piece of the step model when they agree to this relative tolerance (a finite difference's noise
#: is about 1e-10; a component crossing the ridge changes a line by far more).
_SAME_LINE = 1e-7
_GRAM_KEYS = (*PARAMS, "y")

Line = tuple[float, dict[str, float], float]


def _same_line(a: Line, b: Line, x: float, scale: float) -> bool:
    """Two local lines (slope, coefficients, intercept) near x agree: slope*x and the intercept to _SAME_LINE of `scale` (the
    record's measured step), each time's coefficient to _SAME_LINE of itself."""
    return (abs(a[0] - b[0]) * x <= _SAME_LINE * scale and abs(a[2] - b[2]) <= _SAME_LINE * scale
            and all(abs(a[1][p] - b[1][p]) <= _SAME_LINE * max(abs(a[1][p]), abs(b[1][p]), 1.0) for p in a[1]))


class _Linearised:
    """Records' local lines at one x (= 1/eta_bw), their least-squares sums (a Gram matrix per record and per source, each
    source weighing the same as in `fit`), and the interval of x around it over which each record's line stays the same (the
    step model is piecewise linear in x).

    A fit of all but one record is then the sums less that record's (its source's weight rescaled for one record fewer),
    solved in O(1) (`fit_without`); it is exact when its x lands where every other record's line is still the one it was
    linearised with, since `fit` would stop there too.
    """

    def __init__(self, records: Sequence[Record], x: float, eta_flops: float) -> None:
        self.records = list(records)
        self.x, self.eta_flops = x, eta_flops
        self.lines = [local_line(r, x, eta_flops) for r in self.records]
        self.grams = []
        for r, (slope, coef, intercept) in zip(self.records, self.lines, strict=True):
            w = 1 / r.measured**2
            col = {"x": slope, **coef, "y": r.measured - intercept}
            self.grams.append({(a, b): w * col[a] * col[b] for a in _GRAM_KEYS for b in _GRAM_KEYS})
        self.count: dict[str, int] = {}
        self.by_source: dict[str, dict[tuple[str, str], float]] = {}
        for r, g in zip(self.records, self.grams, strict=True):
            self.count[r.source] = self.count.get(r.source, 0) + 1
            s = self.by_source.setdefault(r.source, dict.fromkeys(g, 0.0))
            for k, v in g.items():
                s[k] += v
        keys = [(a, b) for a in _GRAM_KEYS for b in _GRAM_KEYS]
        self.total = {k: sum(s[k] / self.count[src] for src, s in self.by_source.items()) for k in keys}
        self.spans = [self._span(r, line) for r, line in zip(self.records, self.lines, strict=True)]
        self.index = {id(r): i for i, r in enumerate(self.records)}
        # the two tightest ends of the spans, so the common interval without any one record takes O(1)
        self.lows = sorted(range(len(self.records)), key=lambda k: -self.spans[k][0])[:2]
        self.highs = sorted(range(len(self.records)), key=lambda k: self.spans[k][1])[:2]
        self.with_tp = sum(1 for line in self.lines if line[1]["t_ar"] > 0)

    def _span(self, r: Record, line: Line) -> tuple[float, float]:
        """The x interval around self.x (within a factor 2, and x >= 1) where `r`'s line is `line`."""
        def same(at: float) -> bool:
            return _same_line(local_line(r, at, self.eta_flops), line, at, r.measured)

        def edge(limit: float) -> float:
            inside, d = self.x, 1e-6 * self.x * (1 if limit > self.x else -1)
            while abs(d) < abs(limit - self.x) and same(self.x + d):
                inside, d = self.x + d, d * 8
            outside = self.x + d if abs(d) < abs(limit - self.x) else limit
            if outside == limit and same(limit):
                return limit
            for _ in range(40):
                mid = (inside + outside) / 2
                if same(mid):
                    inside = mid
                else:
                    outside = mid
            return inside
        return edge(max(1.0, self.x / 2)) if self.x > 1.0 else 1.0, edge(2 * self.x)

    def without(self, r: Record | None) -> tuple[dict[tuple[str, str], float], tuple[float, float], int, int]:
        """The weighted sums, the common interval, the number of records and of those with tensor parallelism, of the set less
        `r` (None, or a record not in the set: the whole set)."""
        i = self.index.get(id(r)) if r is not None else None
        lo = next((self.spans[k][0] for k in self.lows if k != i), 1.0)
        hi = next((self.spans[k][1] for k in self.highs if k != i), float("inf"))
        if i is None:
            return self.total, (lo, hi), len(self.records), self.with_tp
        src, n = self.records[i].source, self.count[self.records[i].source]
        s, g = self.by_source[src], self.grams[i]
        gram = {k: v - s[k] / n + ((s[k] - g[k]) / (n - 1) if n > 1 else 0.0) for k, v in self.total.items()}
        return gram, (lo, hi), len(self.records) - 1, self.with_tp - (self.lines[i][1]["t_ar"] > 0)

    def fit_without(self, r: Record | None, held: Mapping[str, float]) -> Calibration | None:
        """The least-squares fit of the set less `r` with `held` times fixed, or None where `fit` itself must run: the result
        leaves the lines it was linearised with, or the records cannot tell the free parameters apart (`fit` says so)."""
        gram, (lo, hi), count, with_tp = self.without(r)
        free = ["x"] + [p for p in PARAMS[1:] if p not in held]
        if count < len(free) or ("t_ar" in free and not with_tp):
            return None
        try:
            vals, _ = least_squares_gram(gram, free, {**held, "x": self.x})
        except IndistinctError:
            return None
        x = vals["x"]
        if not lo <= x <= hi:
            return None
        return Calibration(1 / x, float(vals["t_layer"]), float(vals["t_fixed"]), float(vals["t_ar"]), "", (), self.eta_flops, float(vals["t_seq"]))


@memo
def leave_one_out(records: Sequence[Measurement], classify: Calibration | None = None) -> LeaveOneOut:
    """See LeaveOneOut. Linear in the number of records: each refit without one record is the dataset's sums less that record's
    (`_Linearised`), falling back to a full fit only where that would leave the lines the sums were taken at."""
    rs = evaluate_records(records, classify)
    defaults = classify or start()
    memory = [s for s in rs if s.regime == MEMORY_BOUND and getattr(s.m, "excluded", None) is None]  # what every fit uses
    ef = start().eta_flops  # what `fit` holds
    everything = _Linearised(memory, 1 / fit_distinct(memory, defaults, HELD_AT_DEFAULTS).eta_bw, ef) if memory else None
    groups: dict[tuple[str, str], list[Record]] = {}
    for s in memory:
        groups.setdefault(s.group, []).append(s)
    group_fits: dict[tuple[str, str], _Linearised | None] = {}
    one, group, skipped = [], [], []
    for r in rs:
        peers = [s for s in groups.get(r.group, []) if s is not r]
        if not peers:
            skipped.append(r.m.id)
            continue
        held = ((everything.fit_without(r, {}) if everything is not None else None)
                or fit_distinct([s for s in memory if s is not r], defaults, HELD_AT_DEFAULTS))
        errs = [abs(_error(r, _calibrate([s], held))) for s in peers[:MAX_LOO_PEERS]]
        cg = _group_calibration(r, peers, held, groups[r.group], group_fits, ef)
        one.append(replace(row(r, cg), error=statistics.median(errs)))
        group.append(row(r, cg))
    return LeaveOneOut(tuple(one), tuple(group), summarise(one), summarise(group), tuple(skipped))


def _group_calibration(r: Record, peers: list[Record], held: Calibration, members: list[Record],
                       cache_: dict[tuple[str, str], _Linearised | None], ef: float) -> Calibration:
    """`_calibrate(peers, held)`, from the group's sums less `r` where that is exact."""
    if len(peers) == 1:
        return _calibrate(peers, held)
    times = {"t_layer": held.t_layer, "t_ar": held.t_ar, "t_seq": held.t_seq}
    if r.group not in cache_:
        try:
            cache_[r.group] = _Linearised(members, 1 / _calibrate(members, held).eta_bw, ef)
        except ValueError:
            cache_[r.group] = None
    lin = cache_[r.group]
    c = lin.fit_without(r, times) if lin is not None else None
    return c if c is not None else _calibrate(peers, held)


__all__ = [
    "MAX_LOO_PEERS",
    "LeaveOneOut",
    "OwnFit",
    "calibrate",
    "fit_own",
    "leave_one_out",
    "own_fit",
]

"""`roofline validate` and `roofline calibrate`: the step model against published measurements, as Markdown or JSON."""

from __future__ import annotations

import json
import os
import site
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .derivations.engine.context import PROFILES
from .derivations.physics import fitting, leave_one_out
from .derivations.physics import validation as v
from .renderers.escape import markdown as md
from .specs.catalog import shown_path
from .specs.files import replace_files
from .specs.measurements import DEFAULT_PROFILE, MEASUREMENTS_DIR, PROFILES_DIR, Measurement, Profile, load_held_out, load_measurements
from .specs.power import POWER_FILE
from .units import RooflineError


@dataclass(frozen=True)
class Report:
    records: tuple[Measurement, ...]
    #: the hand-set defaults before the dataset, without overheads per layer or all-reduce latency (the starting point)
    before: v.Validation
    #: the sheets' defaults: the `fitted` profile (specs/measurements/profiles/fitted.toml)
    dataset: v.Validation
    defaults: v.Calibration
    #: today's fits, unrounded, with the texts they round to (`fitted` first, then one per engine family)
    fresh: tuple[fitting.FittedProfile, ...]
    #: every shipped profile
    profiles: tuple[Profile, ...]
    loo: leave_one_out.LeaveOneOut
    oos: fitting.OutOfSample
    mbu: tuple[float, float, float]
    #: every record at its own engine family's profile (in sample)
    family: tuple[v.Row, ...]
    #: the default profile's errors by batch band, dense or MoE, chip, engine and energy; and the leave-one-source-out rows' by the same
    regimes: dict[str, tuple[v.Summary, ...]]
    loso_regimes: dict[str, tuple[v.Summary, ...]]
    #: the published serving results held out of every fit (specs/measurements/held-out/), at the default profile
    held_out_records: tuple[Measurement, ...] = ()
    held_out: v.Validation | None = None


def report(directory: Path = MEASUREMENTS_DIR) -> Report:
    """Every record against the step model at the hand-set defaults it started from and at the default profile, with the
    out-of-sample figures (leave one source out, per TP degree, eight GPUs from a fit to four or fewer)."""
    records = load_measurements(directory)
    defaults = v.sheet_defaults()
    dataset = v.validate(records, defaults)
    oos = fitting.out_of_sample(records)
    held = load_held_out()
    return Report(records, v.validate(records, v.HAND_SET), dataset, defaults, tuple(fitting.fresh_profiles(records)),
                  tuple(PROFILES.values()), leave_one_out.leave_one_out(records), oos, v.measured_mbu_range(records),
                  fitting.at_family_profiles(records, PROFILES), v.breakdown(dataset.rows, records), v.breakdown(oos.loso, records),
                  held, v.validate(held, defaults))


def held_out_summaries(r: Report) -> tuple[v.Summary, ...]:
    """The held-out serving results' errors at the default profile: per source file, then all together."""
    if r.held_out is None:
        return ()
    rows = r.held_out.rows
    per = tuple(v.summary(f, [x for x in rows if x.source == f], lambda x: x.error) for f in sorted({x.source for x in rows}))
    return (*per, v.summary("all", list(rows), lambda x: x.error))


def _interactivity(m: Measurement, step_s: float) -> tuple[float, float]:
    """A user's tokens per second and the GPUs' (each per GPU) at a step of `step_s`: one token per sequence per step, the
    running batch of each of the dp attention replicas."""
    return 1 / step_s, v.running_batch(m) * m.dp / (step_s * m.gpus)


def _held_out_lines(r: Report) -> list[str]:
    if r.held_out is None or not r.held_out.rows:
        return []
    out = ["## Held out: published serving results no fit has seen", "",
           f"{len(r.held_out.rows)} records of servers at load (specs/measurements/held-out/: an interactivity curve, disaggregated "
           "decode pools, and runs of the hybrid and sparse-attention models of 2026), each predicted at the "
           "default profile, which was fitted without them; the sheets slo-goodput and disaggregation print the first two. "
           "A user's speed is one token per step; the GPUs' is the running batch per step "
           "over the GPUs.", "",
           "| record | setup | measured ms | predicted ms | error | tokens/s per user, measured / predicted | tokens/s per GPU, measured / predicted |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for m, x in zip(r.held_out_records, r.held_out.rows, strict=True):
        (um, gm), (up, gp) = _interactivity(m, x.measured), _interactivity(m, x.predicted)
        role = ", decode pool" if m.role == "decode" else ""
        out.append(f"| {md(x.id)} | {md(x.model)} on {md(x.hardware)}, {md(x.engine)}{role}: {md(x.setup)} | {_ms(x.measured)} | "
                   f"{_ms(x.predicted)} | {_pct(x.error)} | {um:.0f} / {up:.0f} | {gm:.0f} / {gp:.0f} |")
    return [*out, "", *_summary_lines("held out, at the default profile", held_out_summaries(r)), ""]


class DefaultsError(RooflineError):
    """The fitted engine profiles cannot be written where asked."""


def installed_package(path: Path) -> bool:
    """True when `path` lies inside an installed package (site-packages), not a source checkout or an editable install."""
    real = Path(os.path.realpath(path))
    roots = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")} | set(site.getsitepackages()) | {site.getusersitepackages()}
    return any(r and (real == Path(r).resolve() or Path(r).resolve() in real.parents) for r in roots)


def write_defaults(directory: Path | None = None) -> str:
    """Refit the fitted engine profiles to the dataset, write them into `directory` atomically, and say what was written.

    `directory` None: the profiles folder the sheets read (specs/measurements/profiles/), unless that lies inside an installed
    package, which is refused (a reinstall would undo it and every user of that Python would share it; name it with --to to
    write it all the same). Each file is written to a temporary file beside it, and only when every one is written are they
    renamed over the old ones, so a failure changes nothing and a reader never sees a truncated file; a symbolic link there is
    replaced, not followed. A fitted profile the dataset no longer supports is removed; hand-written ones (`ideal`) are kept.
    """
    target = PROFILES_DIR if directory is None else Path(directory)
    if directory is None and installed_package(target):
        raise DefaultsError(f"{shown_path(target)}: is inside the installed roofline package; write the refit elsewhere with --to DIR, "
                            f"or name this folder with --to {shown_path(target)} to overwrite it")
    if not target.is_dir():
        raise DefaultsError(f"{shown_path(target)}: is not a folder; --to names the folder the engine profiles are written to")
    records = load_measurements()
    written = fitting.fresh_profiles(records)
    texts = {target / f"{p.name}.toml": fitting.profile_file_text(p) for p in written}
    power = None
    if directory is None:  # the power model beside the profiles, fitted to every record with a meter
        power = fitting.fit_power(records)
        chips = sorted({r.hardware.key for r in records if getattr(r, "power", None) is not None})
        texts[POWER_FILE] = fitting.power_file_text(power, chips)
    gone = [q.path for q in PROFILES.values() if q.records and q.path.parent.resolve() == target.resolve()
            and q.path.name not in {path.name for path in texts}]
    replace_files(texts, gone, make_folders=False)
    lines = [f"wrote {shown_path(target / f'{p.name}.toml')}: " + ", ".join(f"{k} = {x}" for k, x in p.texts.items())
             + f" ({len(p.calibration.ids)} records)" for p in written]
    lines += [f"removed {shown_path(path)}: the dataset no longer has enough records of that engine" for path in gone]
    if power is not None:
        lines.append(f"wrote {shown_path(POWER_FILE)}: idle {power.idle:.3g}, memory {power.memory:.3g}, compute {power.compute:.3g} of the TDP "
                     f"({len(power.ids)} records, median board-power error {power.median_error:.1%})")
    return "\n".join(lines) + "\nrebuild the sheets with `roofline build`\n"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:+.1f}%"


def _abs_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{abs(x) * 100:.1f}%"


def _params(c: v.Calibration) -> str:
    return (f"eta_bw = {c.eta_bw:.3f}, eta_flops = {c.eta_flops:.2f}, t_layer = {c.t_layer * 1e6:.1f} us, t_fixed = {c.t_fixed * 1e3:.3f} ms, "
            f"t_ar = {c.t_ar * 1e6:.2f} us, t_seq = {c.t_seq * 1e6:.1f} us")


def _calibration_json(c: v.Calibration) -> dict[str, float]:
    return {"eta_bw": c.eta_bw, "eta_flops": c.eta_flops, "t_layer_s": c.t_layer, "t_fixed_s": c.t_fixed, "t_ar_s": c.t_ar}


def _summary_lines(title: str, summaries: Sequence[v.Summary], signed: bool = True) -> list[str]:
    lines = [f"| {title} | records | median abs error | worst error | worst record |", "|---|---:|---:|---:|---|"]
    for s in summaries:
        worst = _pct(s.worst_error) if signed else _abs_pct(s.worst_error)
        lines.append(f"| {md(s.regime)} | {s.count} | {_abs_pct(s.median_abs_error)} | {worst} | {md(s.worst_id)} |")
    return lines


def _summary_json(summaries: Sequence[v.Summary]) -> dict[str, object]:
    return {s.regime: {"records": s.count, "median_abs_error": s.median_abs_error, "worst_error": s.worst_error, "worst_record": s.worst_id}
            for s in summaries}


def _row_json(row: v.Row, prediction_key: str = "predicted_s") -> dict[str, object]:
    return {"id": row.id, "engine": row.engine, "hardware": row.hardware, "model": row.model, "setup": row.setup, "regime": row.regime,
            "tp": row.tp, "source_file": row.source, "measured_s": row.measured, "floor_s": row.floor, prediction_key: row.predicted,
            "error": row.error, "implied_mbu": row.implied_mbu, "prefill_share": row.prefill_share, "rule": row.rule, "source": row.source_title,
            "url": row.url}


@dataclass(frozen=True)
class Figures:
    """The issue's validation figures (item 4), each with its target and verdict."""

    loso: v.Summary
    per_tp: tuple[v.Summary, ...]
    loso_per_tp: tuple[v.Summary, ...]
    tp8_from_tp4: v.Summary


def figures(r: Report) -> Figures:
    return Figures(v.memory_summary(r.oos.loso), v.by_tp(r.dataset.rows), v.by_tp(r.oos.loso), v.memory_summary(r.oos.tp8))


def _verdict(value: float | None, target: float) -> str:
    if value is None:
        return "n/a (no records)"
    return "met" if value <= target else f"missed by {(value - target) * 100:.1f} points"


def _target_lines(f: Figures) -> list[str]:
    worst_tp = max((s for s in f.per_tp if s.median_abs_error is not None), key=lambda s: s.median_abs_error, default=None)
    t = v.TARGETS
    return [
        "| figure | value | target | verdict |", "|---|---:|---:|---|",
        f"| leave one source out, memory-bound median | {_abs_pct(f.loso.median_abs_error)} | {t['loso']:.0%} | {_verdict(f.loso.median_abs_error, t['loso'])} |",
        *(f"| {s.regime}, memory-bound median at the default profile | {_abs_pct(s.median_abs_error)} | {t['per_tp']:.0%} | "
          f"{_verdict(s.median_abs_error, t['per_tp'])} |" for s in f.per_tp),
        f"| eight GPUs predicted from a fit to TP <= 4 | {_abs_pct(f.tp8_from_tp4.median_abs_error)} | {t['tp8_from_tp4']:.0%} | "
        f"{_verdict(f.tp8_from_tp4.median_abs_error, t['tp8_from_tp4'])} |",
    ] + (["", f"Worst TP degree at the default profile: {worst_tp.regime}, {_abs_pct(worst_tp.median_abs_error)}."] if worst_tp else [])


def regime_figures(r: Report) -> dict[str, float | None]:
    """The serving-step targets' figures (v.REGIME_TARGETS): leave-one-source-out median, batch 65 and above and MoE at the
    default profile (every regime, excluded records left out), energy per token against the meter."""
    rows = v._fitted_rows(r.dataset.rows, r.records)
    high = [x for x in rows if x.batch >= 65]
    moe = [x for x in rows if x.moe]
    energy = r.regimes["energy"][0]
    med = lambda sel: v.summary("", sel, lambda x: x.error).median_abs_error  # noqa: E731
    return {"loso": v.memory_summary(r.oos.loso).median_abs_error, "batch_65_up": med(high), "moe": med(moe), "energy": energy.median_abs_error}


def _regime_lines(r: Report) -> list[str]:
    figs = regime_figures(r)
    t = v.REGIME_TARGETS
    names = {"loso": "leave one source out, memory-bound median", "batch_65_up": "batch 65 and above, median at the default profile",
             "moe": "MoE models, median at the default profile", "energy": "energy per output token against the meter, median"}
    excluded = sum(1 for m in r.records if getattr(m, "excluded", None) is not None)
    out = ["| figure | value | target | verdict |", "|---|---:|---:|---|",
           *(f"| {names[k]} | {_abs_pct(figs[k])} | {t[k]:.0%} | {_verdict(figs[k], t[k])} |" for k in t), "",
           f"Every scored record (each regime; the {excluded} records marked `excluded` in their files, a host bottleneck or a saturated "
           "run, are left out), at the default profile and from a fit that never saw the record's source:", ""]
    for key, title in (("batch", "by batch band"), ("model", "dense against MoE"), ("chip", "by chip"), ("engine", "by engine")):
        out += [f"{title.capitalize()}:", "", *_summary_lines("at the default profile", r.regimes[key]), "",
                *_summary_lines("leave one source out", r.loso_regimes[key]), ""]
    out += ["Energy per output token (the power model at the predicted step, every GPU's board power over the running batch) against "
            "the measured (in sample: the power model is fitted to these meters):", "", *_summary_lines("energy", r.regimes["energy"])]
    return out


def render_validate(r: Report, fmt: str) -> str:
    f = figures(r)
    stale = [p.name for p in r.fresh if p.name not in {q.name for q in r.profiles}
             or p.texts != {k: x for k, x in next(q for q in r.profiles if q.name == p.name).values.items()}]
    if fmt == "json":
        before_by_id = {x.id: x for x in r.before.rows}
        loso_by_id = {x.id: x for x in r.oos.loso}
        tp8_by_id = {x.id: x for x in r.oos.tp8}
        rows = []
        for x in r.dataset.rows:
            d = _row_json(x, "predicted_dataset_defaults_s")
            d["error_dataset_defaults"] = d.pop("error")
            d["predicted_hand_set_s"] = before_by_id[x.id].predicted
            d["error_hand_set"] = before_by_id[x.id].error
            d["error_leave_one_source_out"] = loso_by_id[x.id].error if x.id in loso_by_id else None
            d["error_tp8_from_tp4_fit"] = tp8_by_id[x.id].error if x.id in tp8_by_id else None
            rows.append(d)
        return json.dumps({
            "hand_set_defaults": {**_calibration_json(r.before.calibration), "how": r.before.label},
            "dataset_defaults": {**_calibration_json(r.defaults), "how": r.defaults.how,
                                 "fresh_fit": {**_calibration_json(r.fresh[0].calibration), "how": r.fresh[0].calibration.how,
                                               "rounded": r.fresh[0].texts}},
            "profiles": {p.name: {"description": p.description, "provenance": p.provenance, "values": dict(p.values),
                                  "records": len(p.records)} for p in r.profiles},
            "stale_profiles": stale,
            "summary_hand_set": _summary_json(r.before.summaries),
            "summary_dataset_defaults": _summary_json(r.dataset.summaries),
            "leave_one_source_out": _summary_json([f.loso]),
            "at_family_profiles_in_sample": {**_summary_json([v.memory_summary(r.family)]), "by_tp": _summary_json(v.by_tp(r.family))},
            "per_tp_dataset_defaults": _summary_json(f.per_tp),
            "per_tp_leave_one_source_out": _summary_json(f.loso_per_tp),
            "tp8_from_tp4_fit": {**_summary_json([f.tp8_from_tp4]), "fit": _calibration_json(r.oos.tp8_fit) if r.oos.tp8_fit else None,
                                 "how": r.oos.tp8_fit.how if r.oos.tp8_fit else None},
            "targets": v.TARGETS,
            "leave_one_out_one_record": _summary_json(r.loo.one_summary),
            "leave_one_out_group": _summary_json(r.loo.group_summary),
            "leave_one_out_skipped": list(r.loo.skipped),
            "implied_mbu_memory_bound": {"min": r.mbu[0], "median": r.mbu[1], "max": r.mbu[2]},
            "prefill_heavy_share": v.PREFILL_HEAVY_SHARE,
            "rules": v.RULES,
            "by_regime_default_profile": {k: _summary_json(x) for k, x in r.regimes.items()},
            "by_regime_leave_one_source_out": {k: _summary_json(x) for k, x in r.loso_regimes.items() if k != "energy"},
            "regime_targets": v.REGIME_TARGETS,
            "regime_figures": regime_figures(r),
            "excluded": {m.id: m.excluded for m in r.records if getattr(m, "excluded", None) is not None},
            "records": rows,
            "held_out": {"summary_default_profile": _summary_json(held_out_summaries(r)),
                         "records": [{**_row_json(x, "predicted_dataset_defaults_s"), "role": m.role}
                                     for m, x in zip(r.held_out_records, r.held_out.rows if r.held_out else (), strict=True)]},
        }, indent=2, ensure_ascii=False) + "\n"
    s, d = r.before, r.dataset
    engines = sorted({m.engine for m in r.records})
    chips = sorted({m.hardware.key for m in r.records})
    sources = sorted({m.path.name for m in r.records})
    stale_line = (f" **Stale**: today's fit rounds to other values for {md(', '.join(stale))}; run `roofline calibrate --write-defaults`."
                  if stale else "")
    out = [
        "# The step model against published measurements",
        "",
        f"{len(r.records)} records from {len(sources)} sources, {len(chips)} chips ({md(', '.join(chips))}), {len(engines)} engines "
        f"({md(', '.join(engines))}), TP {', '.join(str(n) for n in sorted({m.tp for m in r.records}))}; files under specs/measurements/.",
        "",
        f"- Hand-set (before the dataset): {_params(s.calibration)}: the sheets' old defaults, no per-layer overhead, no all-reduce latency.",
        f"- Default profile (every sheet's defaults, specs/measurements/profiles/{DEFAULT_PROFILE}.toml): "
        f"{_params(d.calibration)}; today's fit {_params(r.fresh[0].calibration)} ({md(r.fresh[0].calibration.how)}), rounded to "
        f"{fitting.DEFAULT_FIGURES} significant figures.{stale_line}",
        "- Floor: the same step model at the `ideal` profile (eta_bw = eta_flops = 1, no overheads, no all-reduce latency; all-reduce bytes "
        "at link rate kept).",
        "- Error = (predicted - measured) / measured: negative means the model is too fast.",
        "- Implied MBU: the model's bytes per GPU over the measured step, as a share of datasheet bandwidth.",
        f"- Prefill share: prefill FLOPs folded into each measured step over the predicted step; at {v.PREFILL_HEAVY_SHARE:.0%} or more "
        "(or when the step's FLOPs outlast its bytes) a record is 'compute-bound or prefill-heavy' (judged at the default profile).",
        "- LOSO: the record predicted from a fit to every other source's memory-bound records (its whole source held out).",
        "",
        "## Engine profiles",
        "",
        "| profile | eta_bw | eta_flops | t_layer | t_fixed | t_seq | ar_latency | records | provenance |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
        *(f"| {md(p.name)} | {md(p.values['eta_bw'])} | {md(p.values['eta_flops'])} | {md(p.values['t_layer'])} | {md(p.values['t_fixed'])} | "
          f"{md(p.values.get('t_seq', '0 s'))} | {md(p.values['ar_latency'])} | {len(p.records)} | {md(p.provenance)} |" for p in r.profiles),
        "",
        "## Targets",
        "",
        *_target_lines(f),
        "",
        "## By regime",
        "",
        *_regime_lines(r),
        "",
        *_held_out_lines(r),
        "## Records",
        "",
        "| record | setup | regime | measured ms | floor ms | hand-set err | default ms | default err | LOSO err | MBU | prefill |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    loso_by_id = {x.id: x for x in r.oos.loso}
    for a, b in zip(s.rows, d.rows, strict=True):
        lo = _pct(loso_by_id[b.id].error) if b.id in loso_by_id else ""
        out.append(f"| {md(b.id)} | {md(b.model)} on {md(b.hardware)}, {md(b.engine)}: {md(b.setup)} | {b.regime} | {_ms(b.measured)} | "
                   f"{_ms(b.floor)} | {_pct(a.error)} | {_ms(b.predicted)} | {_pct(b.error)} | {lo} | {b.implied_mbu:.2f} | {b.prefill_share:.2f} |")
    out += ["", *_summary_lines("at the hand-set defaults", s.summaries), "", *_summary_lines("at the default profile", d.summaries), ""]
    out += ["Memory-bound decode records by tensor-parallel degree:", "", *_summary_lines("at the default profile", f.per_tp), "",
            *_summary_lines("leave one source out", f.loso_per_tp), ""]
    out += [f"Leave one source out ({len(r.oos.loso_fits)} sources, each fit holding what its records cannot tell apart at the default profile):",
            "", *_summary_lines("memory-bound decode", [f.loso]), ""]
    out += ["At each record's own engine-family profile, where the dataset has one (else the default profile); in sample, since a family "
            "profile is fitted to these very records:", "", *_summary_lines("memory-bound decode", [v.memory_summary(r.family)]), "",
            *_summary_lines("by TP degree", v.by_tp(r.family)), ""]
    if r.oos.tp8_fit is not None:
        out += [f"Eight GPUs from a fit to TP <= 4 ({_params(r.oos.tp8_fit)}; {md(r.oos.tp8_fit.how)}):", "",
                *_summary_lines("eight-GPU records", [f.tp8_from_tp4]), ""]
    out += ["Leave-one-out calibration (defaults refitted without the record; calibration only on memory-bound records of the same engine "
            "and chip, t_layer and t_ar held at the refitted default):", ""]
    out += _summary_lines("eta_bw from one record (median over the choices)", r.loo.one_summary, signed=False)
    out += ["", *_summary_lines("eta_bw and t_fixed from all other records of the group", r.loo.group_summary), ""]
    if r.loo.skipped:
        out += [f"No memory-bound peer of the same engine and chip, so not in the leave-one-out: {md(', '.join(r.loo.skipped))}.", ""]
    out += [f"Implied MBU of the memory-bound decode records: {r.mbu[0]:.2f} to {r.mbu[2]:.2f} (median {r.mbu[1]:.2f}).", ""]
    out += ["Conversion rules:", "", *(f"- `{k}`: {text}" for k, text in v.RULES.items()), ""]
    return "\n".join(out)


def render_calibrate(ids: Sequence[str], fmt: str, directory: Path = MEASUREMENTS_DIR) -> str:
    records = load_measurements(directory)
    defaults = v.sheet_defaults()
    c = leave_one_out.calibrate(records, ids, defaults)
    val = v.validate(records, c)
    used = set(c.ids)
    groups = {(m.engine, m.hardware.key) for m in records if m.id in used}
    by_id = {m.id: m for m in records}
    rest = [x for x in val.rows if x.id not in used and (by_id[x.id].engine, by_id[x.id].hardware.key) in groups]
    others = [x for x in val.rows if x.id not in used]
    if fmt == "json":
        return json.dumps({
            "from": list(c.ids), **_calibration_json(c), "how": c.how,
            "dataset_defaults": _calibration_json(defaults),
            "summary_same_engine_and_chip": _summary_json(v.summarise(rest)),
            "summary_all_other_records": _summary_json(v.summarise(others)),
            "records": [{**_row_json(x), "calibrated_on": x.id in used, "same_engine_and_chip": x in rest} for x in val.rows],
        }, indent=2, ensure_ascii=False) + "\n"
    out = [
        "# Calibrated on " + md(", ".join(c.ids)),
        "",
        f"- Fitted: {_params(c)} ({md(c.how)}).",
        f"- Default profile for comparison: {_params(defaults)}.",
        "",
        "| record | use | regime | measured ms | predicted ms | error | MBU |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for x in val.rows:
        use = "fitted" if x.id in used else ("same engine and chip" if x in rest else "other")
        out.append(f"| {md(x.id)} | {use} | {x.regime} | {_ms(x.measured)} | {_ms(x.predicted)} | {_pct(x.error)} | {x.implied_mbu:.2f} |")
    out += ["", *_summary_lines("same engine and chip, not fitted", v.summarise(rest)), "",
            *_summary_lines("every record not fitted", v.summarise(others)), ""]
    return "\n".join(out)


__all__ = ["DefaultsError", "Figures", "Report", "figures", "installed_package", "render_calibrate", "render_validate", "report", "write_defaults"]

"""`roofline validate` and `roofline calibrate`: the step model against published measurements, as Markdown or JSON."""

from __future__ import annotations

import json
import os
import site
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from derivations import validation as v
from renderers.escape import markdown as md
from specs.catalog import shown_path
from specs.measurements import FITTED_DEFAULTS_PATH, MEASUREMENTS_DIR, Measurement, load_measurements
from units import RooflineError


@dataclass(frozen=True)
class Report:
    records: tuple[Measurement, ...]
    #: the hand-set defaults before the dataset, without all-reduce latency (the starting point)
    before: v.Validation
    #: the sheets' defaults, fitted to the dataset and stored in specs/measurements/defaults.toml
    dataset: v.Validation
    defaults: v.Calibration
    #: today's fit, unrounded, and the stored texts it rounds to
    fresh: v.Calibration
    fresh_texts: dict[str, str]
    loo: v.LeaveOneOut
    mbu: tuple[float, float, float]


def report(directory: Path = MEASUREMENTS_DIR) -> Report:
    """Every record against the step model at the hand-set defaults it started from and at the defaults fitted to the dataset."""
    records = load_measurements(directory)
    defaults = v.sheet_defaults()
    fresh, texts = v.fresh_defaults(records)
    return Report(records, v.validate(records, v.HAND_SET), v.validate(records, defaults), defaults, fresh, texts,
                  v.leave_one_out(records), v.measured_mbu_range(records))


class DefaultsError(RooflineError):
    """The fitted defaults cannot be written where asked."""


def installed_package(path: Path) -> bool:
    """True when `path` lies inside an installed package (site-packages), not a source checkout or an editable install."""
    real = Path(os.path.realpath(path))
    roots = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")} | set(site.getsitepackages()) | {site.getusersitepackages()}
    return any(r and (real == Path(r).resolve() or Path(r).resolve() in real.parents) for r in roots)


def write_defaults(path: Path | None = None) -> str:
    """Refit the defaults to the dataset, write them to `path` atomically, and say what was written.

    `path` None: the defaults file the sheets read (specs/measurements/defaults.toml), unless that lies inside an installed
    package, which is refused (a reinstall would undo it and every user of that Python would share it; name it with a
    path to write it all the same). The file is written to a temporary file beside it and renamed over it in one step, so
    a reader sees the old file or the new one, never a truncated one, and a symbolic link there is replaced, not followed.
    """
    target = FITTED_DEFAULTS_PATH if path is None else Path(path)
    if path is None and installed_package(target):
        raise DefaultsError(f"{shown_path(target)}: is inside the installed roofline package; write the refit elsewhere with --to FILE, "
                            f"or name this file with --to {shown_path(target)} to overwrite it")
    records = load_measurements()
    fresh, texts = v.fresh_defaults(records)
    rounded = v.from_texts(texts, fresh.how, fresh.ids)
    text = v.defaults_file_text(fresh, texts, v.summary_texts(records, rounded, rounded))
    _replace_file(target, text)
    return (f"wrote {shown_path(target)}: eta_bw = {texts['eta_bw']}, t_fixed = {texts['t_fixed']}, hop_latency = {texts['hop_latency']} "
            f"({fresh.how}); rebuild the sheets with `roofline build`\n")


def _replace_file(target: Path, text: str) -> None:
    """`target` holds `text` after one rename: a temporary file in its folder, written, flushed to disk, renamed over it."""
    where = shown_path(target)
    tmp = None
    try:
        if target.is_dir():
            raise DefaultsError(f"{where}: is a folder, expected a file")
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        tmp = None
    except OSError as err:
        raise DefaultsError(f"{where}: cannot write it ({err.strerror or err}); nothing was changed") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:+.1f}%"


def _abs_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{abs(x) * 100:.1f}%"


def _params(c: v.Calibration | v.Validation) -> str:
    return f"eta_bw = {c.eta_bw:.3f}, t_fixed = {c.t_fixed * 1e3:.3f} ms, t_hop = {c.t_hop * 1e6:.2f} us"


def _calibration_json(c: v.Calibration | v.Validation) -> dict[str, float]:
    return {"eta_bw": c.eta_bw, "t_fixed_s": c.t_fixed, "t_hop_s": c.t_hop}


def _summary_lines(title: str, summaries: Sequence[v.Summary], signed: bool = True) -> list[str]:
    lines = [f"| {title} | records | median abs error | worst error | worst record |", "|---|---:|---:|---:|---|"]
    for s in summaries:
        worst = _pct(s.worst_error) if signed else _abs_pct(s.worst_error)
        lines.append(f"| {s.regime} | {s.count} | {_abs_pct(s.median_abs_error)} | {worst} | {md(s.worst_id)} |")
    return lines


def _summary_json(summaries: Sequence[v.Summary]) -> dict[str, object]:
    return {s.regime: {"records": s.count, "median_abs_error": s.median_abs_error, "worst_error": s.worst_error, "worst_record": s.worst_id}
            for s in summaries}


def _row_json(row: v.Row, prediction_key: str = "predicted_s") -> dict[str, object]:
    return {"id": row.id, "engine": row.engine, "hardware": row.hardware, "model": row.model, "setup": row.setup, "regime": row.regime,
            "measured_s": row.measured, "floor_s": row.floor, prediction_key: row.predicted, "error": row.error,
            "implied_mbu": row.implied_mbu, "prefill_share": row.prefill_share, "rule": row.rule, "source": row.source, "url": row.url}


def render_validate(r: Report, fmt: str) -> str:
    if fmt == "json":
        before_by_id = {x.id: x for x in r.before.rows}
        rows = []
        for x in r.dataset.rows:
            d = _row_json(x, "predicted_dataset_defaults_s")
            d["error_dataset_defaults"] = d.pop("error")
            d["predicted_hand_set_s"] = before_by_id[x.id].predicted
            d["error_hand_set"] = before_by_id[x.id].error
            rows.append(d)
        return json.dumps({
            "hand_set_defaults": {**_calibration_json(r.before), "eta_flops": r.before.eta_flops, "how": r.before.label},
            "dataset_defaults": {**_calibration_json(r.defaults), "eta_flops": r.dataset.eta_flops, "how": r.defaults.how,
                                 "fresh_fit": {**_calibration_json(r.fresh), "how": r.fresh.how, "rounded": r.fresh_texts}},
            "summary_hand_set": _summary_json(r.before.summaries),
            "summary_dataset_defaults": _summary_json(r.dataset.summaries),
            "leave_one_out_one_record": _summary_json(r.loo.one_summary),
            "leave_one_out_group": _summary_json(r.loo.group_summary),
            "leave_one_out_skipped": list(r.loo.skipped),
            "implied_mbu_memory_bound": {"min": r.mbu[0], "median": r.mbu[1], "max": r.mbu[2]},
            "prefill_heavy_share": v.PREFILL_HEAVY_SHARE,
            "rules": v.RULES,
            "records": rows,
        }, indent=2, ensure_ascii=False) + "\n"
    s, d = r.before, r.dataset
    engines = sorted({m.engine for m in r.records})
    chips = sorted({m.hardware.key for m in r.records})
    stale = "" if r.fresh_texts == v.default_texts(r.defaults) else (
        f" **Stale**: today's fit rounds to eta_bw {r.fresh_texts['eta_bw']}, t_fixed {r.fresh_texts['t_fixed']}, "
        f"hop_latency {r.fresh_texts['hop_latency']}; run `roofline calibrate --write-defaults`.")
    out = [
        "# The step model against published measurements",
        "",
        f"{len(r.records)} records, {len(chips)} chips ({md(', '.join(chips))}), {len(engines)} engines ({md(', '.join(engines))}); "
        "files under specs/measurements/.",
        "",
        f"- Hand-set (before the dataset): {_params(s)}, eta_flops = {s.eta_flops:.2f}: the sheets' old defaults, no all-reduce latency.",
        f"- Dataset defaults (every sheet's defaults, specs/measurements/defaults.toml): {_params(d)}, eta_flops = {d.eta_flops:.2f}; "
        f"today's fit {_params(r.fresh)} ({md(r.fresh.how)}), rounded to {v.DEFAULT_FIGURES} significant figures.{stale}",
        "- Floor: the same step model at eta_bw = eta_flops = 1 and t_fixed = t_hop = 0 (all-reduce bytes at link rate kept).",
        "- Error = (predicted - measured) / measured: negative means the model is too fast.",
        "- Implied MBU: the model's bytes per GPU over the measured step, as a share of datasheet bandwidth.",
        f"- Prefill share: prefill FLOPs folded into each measured step over the predicted step; at {v.PREFILL_HEAVY_SHARE:.0%} or more "
        "(or when the step's FLOPs outlast its bytes) a record is 'compute-bound or prefill-heavy' (judged at the dataset defaults).",
        "",
        "| record | setup | regime | measured ms | floor ms | hand-set ms | hand-set err | dataset ms | dataset err | MBU | prefill |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a, b in zip(s.rows, d.rows, strict=True):
        out.append(f"| {md(b.id)} | {md(b.model)} on {md(b.hardware)}, {md(b.engine)}: {md(b.setup)} | {b.regime} | {_ms(b.measured)} | {_ms(b.floor)} | "
                   f"{_ms(a.predicted)} | {_pct(a.error)} | {_ms(b.predicted)} | {_pct(b.error)} | {b.implied_mbu:.2f} | {b.prefill_share:.2f} |")
    out += ["", *_summary_lines("at the hand-set defaults", s.summaries), "", *_summary_lines("at the dataset defaults", d.summaries), ""]
    out += ["Leave-one-out calibration (defaults refitted without the record; calibration only on memory-bound records of the same engine "
            "and chip, t_hop held at the refitted default):", ""]
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
    c = v.calibrate(records, ids, defaults)
    val = v.validate(records, c)
    used = set(c.ids)
    groups = {(m.engine, m.hardware.key) for m in records if m.id in used}
    by_id = {m.id: m for m in records}
    rest = [x for x in val.rows if x.id not in used and (by_id[x.id].engine, by_id[x.id].hardware.key) in groups]
    others = [x for x in val.rows if x.id not in used]
    if fmt == "json":
        return json.dumps({
            "from": list(c.ids), **_calibration_json(c), "eta_flops": val.eta_flops, "how": c.how,
            "dataset_defaults": _calibration_json(defaults),
            "summary_same_engine_and_chip": _summary_json(v.summarise(rest)),
            "summary_all_other_records": _summary_json(v.summarise(others)),
            "records": [{**_row_json(x), "calibrated_on": x.id in used, "same_engine_and_chip": x in rest} for x in val.rows],
        }, indent=2, ensure_ascii=False) + "\n"
    out = [
        "# Calibrated on " + md(", ".join(c.ids)),
        "",
        f"- Fitted: {_params(c)} ({md(c.how)}); eta_flops = {val.eta_flops:.2f} (sheet default).",
        f"- Dataset defaults for comparison: {_params(defaults)}.",
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


__all__ = ["Report", "render_calibrate", "render_validate", "report", "write_defaults"]

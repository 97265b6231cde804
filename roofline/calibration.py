"""`roofline calibrate --from FILE...`: an engine profile fitted to a user's own benchmark result files.

The files are read by specs.results (vLLM, SGLang, genai-perf or AIPerf, guidellm, or roofline's own TOML records), each run a
record of a server at load; what a file does not say comes from the command line (the chip, the model, the layout, the number
formats). The fit (derivations.physics.leave_one_out.own_fit) starts from an engine profile (`--engine`, default the fitted
one), fits eta_bw, t_fixed and t_seq where the runs can tell them apart, and predicts each run from a fit to the others. With
`--name NAME` the profile is written, atomically, to the user's profile folder (specs.measurements.user_profiles_dir, or
`--to DIR`) with its provenance: every file's name and SHA-256, the fit, and its errors; `--engine NAME` then uses it on
every sheet, which prints its leave-one-out error beside the answer's figure.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path

from .derivations.engine.context import SCENARIO_INPUTS, check_override_names, parse_overrides
from .derivations.physics import fitting
from .derivations.physics import validation as v
from .derivations.physics.leave_one_out import OwnFit, own_fit
from .renderers.escape import markdown as md
from .specs import text as text_rule
from .specs.catalog import shown_path
from .specs.errors import SpecError
from .specs.files import replace_files
from .specs.hardware import load_hardware
from .specs.measurements import DEFAULT_PROFILE, PROFILE_NAME, Measurement, load_profiles, parse_profile, profile, user_profiles_dir
from .specs.models import load_model
from .specs.results import Given, ResultFile, read_result_files

#: what `--set` may give for a result file: the layout, and the batch and lengths a file may not state
GIVEN_INPUTS = ("tp", "dp", "ep", "batch", "prompt_len", "output_len")


def looks_like_file(arg: str) -> bool:
    """A `--from` argument names a result file (a path, or a name with a result file's suffix), not a dataset record id."""
    return "/" in arg or arg.endswith((".json", ".jsonl", ".toml", ".gz")) or Path(arg).is_file()


def given(hardware: str | None, model: str | None, sets: Sequence[str], weights: str | None, kv: str | None, math: str | None) -> Given:
    """What the files do not say, from the command line, each checked as the sheets check it."""
    inputs = tuple(i for i in SCENARIO_INPUTS if i.name in GIVEN_INPUTS)
    check_override_names({p.partition("=")[0].strip(): None for p in sets}, inputs, "calibrate --from FILE")
    values = {k: int(q.to("token" if k in ("prompt_len", "output_len") else "").magnitude) for k, q in parse_overrides(list(sets), inputs, "calibrate").items()}
    return Given(load_hardware(hardware) if hardware else None, load_model(model) if model else None, weights, kv, math, values)


def _summary(errors: Sequence[float] | None) -> tuple[float, float] | None:
    if not errors:
        return None
    a = [abs(e) for e in errors]
    return statistics.median(a), max(a)


def profile_text(name: str, files: Sequence[ResultFile], fit: OwnFit, base: str) -> str:
    """The profile file (specs.measurements.parse_profile reads it back before it is written)."""
    c = fit.calibration
    texts = fitting.default_texts(c)
    n = len(fit.records)
    names = ", ".join(_name(f.path) for f in files)
    summary = {"median_error": _summary(fit.fitted)[0], "worst_error": _summary(fit.fitted)[1],
               "uncalibrated_error": _summary(fit.uncalibrated)[0]}
    if fit.left_out is not None:
        summary.update(loo_error=_summary(fit.left_out)[0], loo_worst=_summary(fit.left_out)[1])
    provenance = (f"fitted by roofline calibrate to {n} run{'s' if n != 1 else ''} of {len(files)} result file{'s' if len(files) != 1 else ''} "
                  f"({names}) from the {base} profile: least squares on relative error, each file weighing the same; {c.how}; "
                  f"rounded to {fitting.DEFAULT_FIGURES} significant figures")
    lines = [f"# Engine profile {json.dumps(name)}: written by `roofline calibrate --from FILE... --name {name}`.",
             f"description = {_toml(f'fitted to your {n} benchmark run' + ('s' if n != 1 else '') + f' ({names})')}",
             f"provenance = {_toml(provenance)}",
             *(f"{k} = {_toml(texts[k])}" for k in ("eta_bw", "eta_flops", "t_layer", "t_fixed", "t_seq", "ar_latency")),
             "records = [" + ", ".join(_toml(r.m.id) for r in fit.records) + "]",
             "files = [" + ", ".join(f"{{ name = {_toml(_name(f.path))}, sha256 = {_toml(f.sha256)} }}" for f in files) + "]",
             "", "[summary]", *(f"{k} = {_toml(fitting.figures_text(x))}" for k, x in summary.items())]
    return "\n".join(lines) + "\n"


def _name(path: Path) -> str:
    """A file's name as a profile stores it: characters a one-line field refuses written as visible escapes, at most 120."""
    return text_rule.escaped(path.name, keep="")[:120]


def _toml(s: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL, which JSON leaves as it is, is escaped too."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def calibrate_files(paths: Sequence[str], g: Given, name: str | None, to: Path | None, base_engine: str | None, fmt: str) -> str:
    """Read the files, fit, write the profile where `name` is given, and report (Markdown or JSON)."""
    base_name = base_engine or DEFAULT_PROFILE
    base = v.profile_calibration(profile(base_name))
    if name is not None:
        if not PROFILE_NAME.match(name):
            raise SpecError("--name", None, f"expected a profile name of letters, digits, '-' and '_' (at most 40, starting with a letter "
                                            f"or digit), found {name[:40]!r}")
        if name in load_profiles():
            raise SpecError("--name", None, f"{name!r} is a shipped engine profile; choose another name for yours")
    files = read_result_files([Path(p) for p in paths], g)
    records: list[Measurement] = [m for f in files for m in f.records]
    fit = own_fit(tuple(records), base)
    written = None
    if name is not None:
        folder = to if to is not None else user_profiles_dir()
        target = folder / f"{name}.toml"
        text = profile_text(name, files, fit, base_name)
        from .specs.catalog import parse_toml

        parse_profile(parse_toml(text, target), target)  # what is written reads back, or nothing is written
        replace_files({target: text}, option="--name")
        written = target
    return (_json if fmt == "json" else _markdown)(files, fit, base_name, name, written)


def _rows(fit: OwnFit) -> list[tuple[Measurement, float, float, float, float, float | None]]:
    """Per record: measured, predicted uncalibrated and calibrated [s], and the signed errors (left out: None for one record)."""
    c = fit.calibration
    out = []
    for i, r in enumerate(fit.records):
        out.append((r.m, r.measured, r.measured * (1 + fit.uncalibrated[i]), r.at(c), fit.fitted[i],
                    None if fit.left_out is None else fit.left_out[i]))
    return out


#: The lowest eta_bw a fit of the published dataset's engines gives for memory-bound decode (the lmdeploy and vLLM records sit
#: near 0.55 at their worst): a fit below it is the runs being slower than their bytes explain.
LOW_ETA_BW = 0.3


def warnings(fit: OwnFit) -> list[str]:
    """What makes a fit suspect, in words: an efficiency no engine reaches in the dataset, or one pinned at the datasheet."""
    c = fit.calibration
    out = []
    if c.eta_bw < LOW_ETA_BW:
        out.append(f"the runs are slower than their bytes explain: eta_bw {c.eta_bw:.2g} is far below any engine of the published dataset; "
                   "a host bottleneck, a slow kernel path for these number formats (--weights) or another chip than --hardware would do it")
    if c.eta_bw >= 1 - 1e-9:
        out.append("the runs are faster than the step model at the datasheet bandwidth (eta_bw pinned at 1): check --hardware, --model, "
                   "--weights and the layout (--set tp=...)")
    return out


def _path(p: Path) -> str:
    """A path in Markdown: a code span, as it is (escaped text where it holds a backquote or a line break)."""
    text = shown_path(p)
    return f"`{text}`" if "`" not in text and "\n" not in text else md(text)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:+.1f}%"


def _markdown(files: Sequence[ResultFile], fit: OwnFit, base: str, name: str | None, written: Path | None) -> str:
    c = fit.calibration
    unc, loo, ins = _summary(fit.uncalibrated), _summary(fit.left_out), _summary(fit.fitted)
    out = [f"# Calibrated on {len(fit.records)} run{'s' if len(fit.records) != 1 else ''} of your result files", ""]
    out += [f"- {_path(f.path)}: {f.format}, {len(f.records)} run{'s' if len(f.records) != 1 else ''}, SHA-256 {f.sha256[:16]}..."
            for f in files]
    out += ["", f"- Fitted from the {md(base)} profile: eta_bw {c.eta_bw:.3g}, t_fixed {c.t_fixed * 1e3:.3g} ms, t_seq {c.t_seq * 1e6:.3g} us, "
                f"t_layer {c.t_layer * 1e6:.3g} us, ar_latency {c.t_ar * 1e6:.3g} us ({md(c.how)}).",
            f"- Error at the {md(base)} profile (uncalibrated): {unc[0]:.1%} median, {unc[1]:.1%} worst.",
            f"- Error at the fit (in sample): {ins[0]:.1%} median, {ins[1]:.1%} worst."]
    out.append(f"- Each run predicted from a fit to the others (leave one out): {loo[0]:.1%} median, {loo[1]:.1%} worst." if loo else
               "- Leave one out: one run has nothing to be predicted from; give two or more for an error out of sample.")
    out += [f"- **Check before use**: {md(w)}" for w in warnings(fit)]
    out += ["", "| run | setup | measured ms | uncalibrated ms | error | calibrated ms | error | left out |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for m, measured, before, after, e_in, e_out in _rows(fit):
        e_before = (before - measured) / measured
        out.append(f"| {md(m.id)} | {md(m.model.name)} on {md(m.hardware.name)}: {md(v.setup_text(m))} | {measured * 1e3:.2f} | {before * 1e3:.2f} | "
                   f"{_pct(e_before)} | {after * 1e3:.2f} | {_pct(e_in)} | {_pct(e_out)} |")
    out.append("")
    if written is not None:
        out.append(f"Wrote {_path(written)}: use it with `--engine {name}` on any sheet.")
    else:
        out.append("Nothing written: give `--name NAME` to keep this profile and use it with `--engine NAME`.")
    return "\n".join(out) + "\n"


def _json(files: Sequence[ResultFile], fit: OwnFit, base: str, name: str | None, written: Path | None) -> str:
    c = fit.calibration
    return json.dumps({
        "files": [{"path": shown_path(f.path), "format": f.format, "sha256": f.sha256, "runs": len(f.records)} for f in files],
        "base_profile": base,
        "fit": {"eta_bw": c.eta_bw, "eta_flops": c.eta_flops, "t_layer_s": c.t_layer, "t_fixed_s": c.t_fixed, "t_seq_s": c.t_seq,
                "ar_latency_s": c.t_ar, "how": c.how},
        "errors": {k: None if s is None else {"median_abs": s[0], "worst_abs": s[1]}
                   for k, s in (("uncalibrated", _summary(fit.uncalibrated)), ("in_sample", _summary(fit.fitted)),
                                ("leave_one_out", _summary(fit.left_out)))},
        "runs": [{"id": m.id, "batch": m.batch, "mean_running": None if m.mean_batch is None else float(m.mean_batch), "prompt_tokens": m.input_tokens,
                  "output_tokens": m.output_tokens, "measured_s": measured, "uncalibrated_s": before, "calibrated_s": after,
                  "error_calibrated": e_in, "error_left_out": e_out} for m, measured, before, after, e_in, e_out in _rows(fit)],
        "warnings": warnings(fit),
        "profile": None if written is None else {"name": name, "path": shown_path(written)},
    }, indent=2, ensure_ascii=False) + "\n"


__all__ = ["GIVEN_INPUTS", "calibrate_files", "given", "looks_like_file", "profile_text"]

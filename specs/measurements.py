"""Published measurements of real inference servers: `specs/measurements/*.toml`.

One TOML file per source (a benchmark table, a docs page). Its top level names
the source; each `[[record]]` is one measured figure with the setup it was
measured on. A `[common]` table holds record fields shared by every record of
the file (a record's own value wins). Every record is checked at load: known
fields only, the model and hardware shipped spec names, precisions known,
counts whole, the figure's unit right for its metric, a source URL and a
locator. Numbers are copied exactly as the source prints them; what the source
does not say goes into `assumed`.

Metrics (what `value` holds) and the unit each must convert to:

- `itl`: mean inter-token latency (or TPOT) of one sequence [s];
- `tokens_per_s_per_user`: output tokens per second of one sequence [token/s];
- `aggregate_tokens_per_s`: output tokens per second of all `batch` sequences together [token/s];
- `e2e_latency`: end-to-end latency of one request (a batch run together) [s]; `ttft` optional.

Engine profiles (`specs/measurements/profiles/NAME.toml`, loaded by `load_profiles`) hold
the step model's engine inputs (eta_bw, eta_flops, t_layer, t_fixed, ar_latency) of one
engine with their provenance: `fitted` to the whole dataset (the default), `ideal` (the
textbook roofline), and one per engine family the dataset has enough records of.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from pathlib import Path

import pint

from ..units import Quantity
from .catalog import SPECS_DIR, hardware_names, model_names, parse_toml, read_text, shown_path
from .errors import SpecError, shown, suggest
from .hardware import Hardware, load_hardware
from .literal import MAX_MAGNITUDE, MAX_VALUE_LENGTH, MIN_MAGNITUDE
from .models import Architecture, load_model
from .precisions import precision
from .quantities import parse_quantity
from .text import check as check_text
from .text import check_name

MEASUREMENTS_DIR = SPECS_DIR / "measurements"
#: Engine profiles (specs/measurements/profiles/NAME.toml): not measurement files, so kept in a sub-folder the record loader does not read.
PROFILES_DIR = MEASUREMENTS_DIR / "profiles"
#: Published serving results held out of every fit (specs/measurements/held-out/*.toml, the dataset's format): the serving
#: sheets and `roofline validate` predict them at the default profile; nothing is fitted to them.
HELD_OUT_DIR = MEASUREMENTS_DIR / "held-out"
#: The profile every sheet uses unless --engine names another.
DEFAULT_PROFILE = "fitted"
#: engine input -> (unit its value must convert to, domain); the names are the scenario inputs' CLI names
PROFILE_INPUTS: dict[str, tuple[str, str]] = {
    "eta_bw": ("1", "fraction"),
    "eta_flops": ("1", "fraction"),
    "t_layer": ("s", "nonnegative"),
    "t_fixed": ("s", "nonnegative"),
    "t_seq": ("s", "nonnegative"),
    "ar_latency": ("s", "nonnegative"),
}
#: a profile file's other fields -> required
PROFILE_FIELDS = {"description": True, "provenance": True, "records": False, "summary": False, "files": False}
#: The folder a user's own profiles (`roofline calibrate --from FILE --name NAME`) are written to and `--engine NAME` reads
#: after the shipped ones: this environment variable, else $XDG_CONFIG_HOME/roofline/profiles, else ~/.config/roofline/profiles.
USER_PROFILES_ENV = "ROOFLINE_PROFILES"
#: the [summary] table: what the dataset says at a fitted profile (`roofline validate`), each a plain number the sheets cite
PROFILE_SUMMARY: dict[str, str] = {
    "median_error": "median absolute error of the memory-bound decode records at the profile",
    "worst_error": "largest absolute error of the memory-bound decode records at the profile",
    "loso_error": "median absolute error of the memory-bound decode records, each source predicted from a fit to the others",
    "mbu_low": "lowest implied MBU of the memory-bound decode records",
    "mbu_median": "median implied MBU of the memory-bound decode records",
    "mbu_high": "highest implied MBU of the memory-bound decode records",
    "tp8_mbu_low": "lowest implied MBU of the memory-bound decode records on eight GPUs",
    "tp8_mbu_high": "highest implied MBU of the memory-bound decode records on eight GPUs",
    # a profile fitted to a user's own result files (`roofline calibrate --from FILE`) has these (and the first two)
    "loo_error": "median absolute error of the records it was fitted to, each predicted from a fit to the others (leave one out)",
    "loo_worst": "largest absolute error of the records it was fitted to, each predicted from a fit to the others",
    "uncalibrated_error": "median absolute error of the same records at the profile it was calibrated from",
}

#: what the default profile's summary must hold (the sheets cite each)
DEFAULT_SUMMARY = ("median_error", "worst_error", "loso_error", "mbu_low", "mbu_median", "mbu_high", "tp8_mbu_low", "tp8_mbu_high")

#: metric -> the unit its value must convert to
METRICS: dict[str, str] = {
    "itl": "s",
    "tokens_per_s_per_user": "token/s",
    "aggregate_tokens_per_s": "token/s",
    "e2e_latency": "s",
}
#: how the batch was formed: all sequences start together (a static batch), or requests arrive and leave (continuous batching)
BATCHING = ("static", "continuous")
#: what a record's GPUs ran of a disaggregated server: "decode", a decode pool whose prompts are prefilled on other GPUs (its
#: step carries none: the decode-only step). Absent: the GPUs ran the whole request.
ROLES = ("decode",)
#: source-level fields -> required
SOURCE_FIELDS = {"source": True, "url": True, "engine": True, "engine_version": True, "notes": True, "common": False, "record": True}
#: record fields -> (kind, required); kinds: text, name, precision, count, quantity unit
RECORD_FIELDS: dict[str, tuple[str, bool]] = {
    "id": ("text", True),
    "model": ("model", True),
    "hardware": ("hardware", True),
    "gpus": ("count", True),
    "tp": ("count", True),
    "pp": ("count", True),
    "weights": ("precision", True),
    "kv": ("precision", True),
    "math": ("precision", True),
    "batching": ("text", True),
    "batch": ("count", True),
    "input_tokens": ("count", True),
    "output_tokens": ("count", True),
    "metric": ("text", True),
    "value": ("metric", True),
    "ttft": ("s", False),
    "locator": ("text", True),
    "assumed": ("text", True),
    # optional, for sources that publish them (ML.ENERGY); absent, ep and dp are 1 and the rest None
    #: the layout (derivations.physics.primitives.layout_gpus): dp attention replicas of tp GPUs each, gpus = tp x dp x pp; routed experts over ep GPUs
    "dp": ("count", False),
    "ep": ("count", False),
    #: time-averaged number of running sequences, a plain decimal as the source prints it (0 < mean_batch <= batch)
    "mean_batch": ("decimal", False),
    #: mean output tokens per request, a plain decimal as the source prints it
    "mean_output_tokens": ("decimal", False),
    #: measured average board power of all the record's GPUs together
    "power": ("W", False),
    #: measured energy per output token (all the record's GPUs)
    "energy_per_token": ("J/token", False),
    #: why the record is kept but not fitted (a host bottleneck, a saturated cache), in words with the numbers
    "excluded": ("text", False),
    #: one of ROLES, for a disaggregated server's pool
    "role": ("text", False),
}
MAX_TEXT = 4000
MAX_COUNT = 10**9
#: Text fields that may span lines (the rest are one line).
MULTI_LINE_FIELDS = ("source", "notes", "assumed", "locator")
#: A record's id: what `roofline calibrate --from ID` takes and the validation table prints.
RECORD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


@dataclass(frozen=True)
class Measurement:
    """One published figure and the setup it was measured on."""

    id: str
    path: Path
    source: str
    url: str
    locator: str
    engine: str
    engine_version: str
    model: Architecture
    hardware: Hardware
    gpus: int
    tp: int
    pp: int
    #: the number formats it was measured in (None, a user's result file: as the checkpoint stores them, the sheets' default)
    weights: str | None
    kv: str | None
    math: str | None
    batching: str
    #: sequences decoded together: the static batch, or the client's concurrency
    batch: int
    input_tokens: int
    output_tokens: int
    metric: str
    value: pint.Quantity
    ttft: pint.Quantity | None
    assumed: str
    notes: str
    #: data-parallel attention replicas (of tp GPUs each) and the expert-parallel degree; 1 and 1 is plain tensor parallelism
    dp: int = 1
    ep: int = 1
    #: time-averaged running sequences and mean output tokens per request, exact as printed (None where the source gives none)
    mean_batch: Fraction | None = None
    mean_output_tokens: Fraction | None = None
    #: measured average power of all the record's GPUs [W] and energy per output token [J/token]
    power: pint.Quantity | None = None
    energy_per_token: pint.Quantity | None = None
    #: why the record is kept but not fitted; None for a record that is fitted
    excluded: str | None = None
    #: one of ROLES (a disaggregated server's decode pool), None where the GPUs ran the whole request
    role: str | None = None

    @property
    def where(self) -> str:
        return f"{shown_path(self.path)}: {self.id}"


def measurement_files(directory: Path = MEASUREMENTS_DIR) -> list[Path]:
    return sorted(directory.glob("*.toml"))


@cache
def load_measurements(directory: Path = MEASUREMENTS_DIR) -> tuple[Measurement, ...]:
    """Every record of every file in `directory`, validated; ids are unique across files."""
    records: list[Measurement] = []
    seen: dict[str, Path] = {}
    for path in measurement_files(directory):
        for m in load_measurement_file(path):
            if m.id in seen:
                raise SpecError(shown_path(path), f"record {m.id}.id", f"duplicate id; also in {shown_path(seen[m.id])}")
            seen[m.id] = path
            records.append(m)
    return tuple(records)


def load_held_out() -> tuple[Measurement, ...]:
    """The held-out serving results (HELD_OUT_DIR), validated like the dataset; ids unique across both."""
    fitted_ids = {m.id: m for m in load_measurements()}
    records = load_measurements(HELD_OUT_DIR)
    for m in records:
        if m.id in fitted_ids:
            raise SpecError(shown_path(m.path), f"record {m.id}.id", f"duplicate id; also in {shown_path(fitted_ids[m.id].path)}")
    return records


def load_measurement_file(path: Path) -> tuple[Measurement, ...]:
    return parse_measurements(parse_toml(read_text(path), path), path)


def parse_measurements(data: Mapping[str, object], path: Path) -> tuple[Measurement, ...]:
    """Validate one parsed file into its records."""
    where = shown_path(path)
    unknown = sorted(set(data) - set(SOURCE_FIELDS))
    if unknown:
        raise SpecError(where, unknown[0][:60], f"unknown field{suggest(unknown[0], SOURCE_FIELDS)}; known: {', '.join(SOURCE_FIELDS)}")
    for field, required in SOURCE_FIELDS.items():
        if required and field not in data:
            raise SpecError(where, field, "missing required field")
    head = {f: _text(data[f], where, f) for f in ("source", "url", "engine", "engine_version", "notes")}
    _url(head["url"], where, "url")
    common = data.get("common", {})
    if not isinstance(common, Mapping):
        raise SpecError(where, "common", f"expected a table of record fields, found {shown(common)}")
    records = data["record"]
    if not isinstance(records, list) or not records or not all(isinstance(r, Mapping) for r in records):
        raise SpecError(where, "record", "expected one or more [[record]] tables")
    return tuple(_record({**common, **r}, i, path, head) for i, r in enumerate(records))


def _record(raw: Mapping[str, object], index: int, path: Path, head: Mapping[str, str]) -> Measurement:
    where = shown_path(path)
    rid = raw.get("id")
    label = f"record {rid}" if isinstance(rid, str) and rid.strip() and len(rid) <= 80 else f"record[{index}]"
    unknown = sorted(set(raw) - set(RECORD_FIELDS))
    if unknown:
        raise SpecError(where, f"{label}.{unknown[0][:60]}", f"unknown field{suggest(unknown[0], RECORD_FIELDS)}; known: {', '.join(RECORD_FIELDS)}")
    values: dict[str, object] = {}
    for field, (kind, required) in RECORD_FIELDS.items():
        name = f"{label}.{field}"
        if field not in raw:
            if required:
                raise SpecError(where, name, "missing required field")
            values[field] = None
            continue
        v = raw[field]
        if kind == "text":
            values[field] = _text(v, where, name)
        elif kind == "count":
            values[field] = _count(v, where, name)
        elif kind == "precision":
            text = _text(v, where, name)
            try:
                precision(text, name)
            except SpecError as err:
                raise SpecError(where, name, err.message) from None
            values[field] = text
        elif kind == "model":
            values[field] = _shipped(v, where, name, model_names(), "models", _shipped_model)
        elif kind == "hardware":
            values[field] = _shipped(v, where, name, hardware_names(), "hardware", _shipped_hardware)
        elif kind == "metric":
            values[field] = v  # checked below, once the metric is known
        elif kind == "decimal":
            values[field] = _decimal(v, where, name)
        else:
            values[field] = parse_quantity(v, kind, where, name, allow_zero=field == "ttft")
    if not RECORD_ID.match(values["id"]):
        raise SpecError(where, f"{label}.id", f"expected letters, digits, '.', '_' and '-' (at most 80, starting with a letter or digit), found {shown(values['id'])}")
    metric = values["metric"]
    if metric not in METRICS:
        raise SpecError(where, f"{label}.metric", f"unknown metric {shown(metric)}{suggest(str(metric), METRICS)}; known: {', '.join(METRICS)}")
    values["value"] = parse_quantity(values["value"], METRICS[metric], where, f"{label}.value")
    if values["batching"] not in BATCHING:
        raise SpecError(where, f"{label}.batching", f"expected one of {', '.join(BATCHING)}, found {shown(values['batching'])}")
    for field in ("dp", "ep"):
        if values[field] is None:
            values[field] = 1
    tp, pp, dp, ep, gpus = values["tp"], values["pp"], values["dp"], values["ep"], values["gpus"]
    if tp * pp * dp != gpus:
        raise SpecError(where, f"{label}.gpus", f"expected tp x pp x dp = {tp * pp * dp} GPUs (tp {tp}, pp {pp}, dp {dp}), found {gpus}")
    if gpus % ep:
        raise SpecError(where, f"{label}.ep", f"expected an expert-parallel degree that divides the record's {gpus} GPUs, found {ep}")
    if values["mean_batch"] is not None and values["mean_batch"] > values["batch"]:
        raise SpecError(where, f"{label}.mean_batch", f"expected a mean batch at most the batch ({values['batch']}), found {shown(raw['mean_batch'])}")
    if values["role"] is not None and values["role"] not in ROLES:
        raise SpecError(where, f"{label}.role", f"expected one of {', '.join(ROLES)} (or no role: the GPUs ran the whole request), "
                                                f"found {shown(values['role'])}")
    if values["role"] == "decode" and (values["batching"] != "continuous" or metric != "itl"):
        raise SpecError(where, f"{label}.role", "a decode pool's record is a server at load: expected batching continuous and metric itl")
    if values["excluded"] is not None and not values["excluded"].strip():
        raise SpecError(where, f"{label}.excluded", "expected the reason the record is not fitted, found an empty string")
    if values["pp"] != 1:
        raise SpecError(where, f"{label}.pp", "pipeline parallelism is not modelled by the step model; only pp = 1 records are accepted")
    if values["ttft"] is not None and metric != "e2e_latency":
        raise SpecError(where, f"{label}.ttft", f"ttft is used only with metric e2e_latency (to take the first token out); this record's metric is {metric}")
    if metric == "e2e_latency" and values["output_tokens"] < 2:
        raise SpecError(where, f"{label}.output_tokens", "an end-to-end latency needs at least 2 output tokens to give a decode step")
    if not values["assumed"].strip():
        raise SpecError(where, f"{label}.assumed", "expected what was assumed where the source is silent (or 'nothing'), found an empty string")
    m = Measurement(path=path, source=head["source"], url=head["url"], engine=head["engine"], engine_version=head["engine_version"],
                    notes=head["notes"], **values)
    check_physics(m, where, label)
    return m


#: A plain decimal number as a source prints it (`7.957983193277311`, `1.2e-05`): no sign, no unit, never evaluated.
DECIMAL = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?$")


def _decimal(v: object, where: str, name: str) -> Fraction:
    """A positive plain decimal string, exactly (a Fraction): the text is matched, then read by Decimal, never evaluated."""
    if not isinstance(v, str) or len(v) > MAX_VALUE_LENGTH or not DECIMAL.match(v.strip()):
        raise SpecError(where, name, f"expected a plain decimal number as a string (e.g. \"7.96\"), found {shown(v)}")
    q = Fraction(Decimal(v.strip()))
    if not MIN_MAGNITUDE <= q <= MAX_MAGNITUDE:
        raise SpecError(where, name, f"expected a positive number from 1e-30 to 1e30, found {shown(v)}")
    return q


#: A decode step (one output token of one sequence) a record may imply: no server streams a model's weights in under 0.1 ms
#: (the fastest published decode of a small model is above 1 ms), and a step of a minute is a typo for a whole request.
MIN_DECODE_STEP_S = Fraction(1, 10_000)
MAX_DECODE_STEP_S = Fraction(60)


def decode_step(m: Measurement) -> pint.Quantity:
    """The record's figure as one decode step time [s] (exact), under the rule of its metric (derivations.physics.validation.RULES)."""
    v = m.value
    if m.metric == "itl":
        q = v
    elif m.metric == "tokens_per_s_per_user":
        q = Quantity(1, "token") / v
    elif m.metric == "aggregate_tokens_per_s":
        q = Quantity(m.batch, "token") / v
    elif m.ttft is not None:
        q = (v - m.ttft) / (m.output_tokens - 1)
    else:
        q = v / m.output_tokens
    return q.to("s")


def check_physics(m: Measurement, where: str, label: str) -> None:
    """What a real measurement must satisfy: a TTFT inside its end-to-end latency, a decode step a server can take."""
    if m.ttft is not None and m.ttft.to("s").magnitude >= m.value.to("s").magnitude:
        raise SpecError(where, f"{label}.ttft", f"the first token ({m.ttft:~P}) cannot come after the whole request ({m.value:~P}): "
                                                "expected a TTFT below the end-to-end latency")
    step = Fraction(decode_step(m).magnitude)
    if not MIN_DECODE_STEP_S <= step <= MAX_DECODE_STEP_S:
        raise SpecError(where, f"{label}.value", f"{shown(str(m.value))} gives a decode step of {float(step):.3g} s; a real decode step takes "
                                                 f"{float(MIN_DECODE_STEP_S * 1000):g} ms to {float(MAX_DECODE_STEP_S):g} s (check the unit and the metric)")


# --- engine profiles: the efficiency and overhead inputs of one engine -----------------------------

@dataclass(frozen=True, eq=False)
class Profile:
    """An engine profile: the values of the step model's engine inputs (PROFILE_INPUTS), with their provenance.

    `fitted` is fitted to the whole dataset and is every sheet's default; `ideal` is the textbook roofline (datasheet
    bandwidth and peak, no overhead); the others are fitted to one engine family's records (`roofline calibrate
    --write-defaults` writes the fitted ones).
    """

    name: str
    path: Path
    #: one line: what the profile stands for
    description: str
    #: where its values come from, in words (the fit, its records, what was held)
    provenance: str
    #: input name -> value as written (e.g. "0.79", "45 us")
    values: Mapping[str, str]
    #: the ids of the records a fitted profile was fitted to (empty for a profile that is not fitted)
    records: tuple[str, ...]
    #: PROFILE_SUMMARY name -> plain number as written; what the dataset says at this profile (the default profile has all)
    summary: Mapping[str, str]
    #: a profile fitted to a user's result files: each file's name and SHA-256, as it was when fitted
    files: tuple[tuple[str, str], ...] = ()

    def quantity(self, name: str) -> pint.Quantity:
        return parse_quantity(self.values[name], PROFILE_INPUTS[name][0], shown_path(self.path), name, allow_zero=True)

    @property
    def where(self) -> str:
        return shown_path(self.path)


def profile_files(directory: Path = PROFILES_DIR) -> list[Path]:
    return sorted(directory.glob("*.toml"))


@cache
def load_profiles(directory: Path = PROFILES_DIR) -> Mapping[str, Profile]:
    """Every engine profile in `directory`, by name (the file stem), validated; the default profile must be among them."""
    profiles = {p.stem: load_profile_file(p) for p in profile_files(directory)}
    if DEFAULT_PROFILE not in profiles:
        raise SpecError(shown_path(directory), None, f"no {DEFAULT_PROFILE}.toml: the default engine profile is missing")
    missing = [k for k in DEFAULT_SUMMARY if k not in profiles[DEFAULT_PROFILE].summary]
    if missing:
        raise SpecError(profiles[DEFAULT_PROFILE].where, f"summary.{missing[0]}", "missing required field (the default profile's summary is cited by the sheets)")
    return profiles


def user_profiles_dir() -> Path:
    """Where a user's own profiles live (USER_PROFILES_ENV)."""
    env = os.environ.get(USER_PROFILES_ENV, "").strip()
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".config") / "roofline" / "profiles"


#: a user's profile name: what `--name` takes and `--engine` finds in user_profiles_dir()
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")


def user_profile_names() -> list[str]:
    try:
        return sorted(p.stem for p in user_profiles_dir().glob("*.toml") if PROFILE_NAME.match(p.stem))
    except OSError:
        return []


def profile(name: str, directory: Path = PROFILES_DIR) -> Profile:
    """An engine profile by name: a shipped one, else a user's own (user_profiles_dir(), written by `roofline calibrate --from
    FILE --name NAME`); an unknown name is one line with the closest names."""
    if isinstance(name, str):
        check_name(name, "--engine", None, "an engine profile name such as 'fitted'")
    profiles = load_profiles(directory)
    if isinstance(name, str) and name in profiles:
        return profiles[name]
    if isinstance(name, str) and PROFILE_NAME.match(name) and (user_profiles_dir() / f"{name}.toml").is_file():
        return load_profile_file(user_profiles_dir() / f"{name}.toml")
    text = name if isinstance(name, str) else shown(name)
    shown_name = text if len(text) <= 40 else text[:37] + "..."
    known = [*profiles, *user_profile_names()]
    hint = suggest(text, known) if isinstance(name, str) else ""
    raise SpecError("--engine", None, f"unknown engine profile {shown_name!r}{hint}; profiles: {', '.join(known)}")


def load_profile_file(path: Path) -> Profile:
    """One profile file, validated: every engine input present with its unit and in its domain, the provenance stated."""
    return parse_profile(parse_toml(read_text(path), path), path)


def parse_profile(data: Mapping[str, object], path: Path) -> Profile:
    """A parsed profile file, validated (`path`: where it is or will be, for its name and error lines)."""
    where = shown_path(path)
    known = {**PROFILE_FIELDS, **dict.fromkeys(PROFILE_INPUTS, True)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise SpecError(where, unknown[0][:60], f"unknown field{suggest(unknown[0], known)}; known: {', '.join(known)}")
    for field, required in known.items():
        if required and field not in data:
            raise SpecError(where, field, "missing required field")
    values = {}
    for name, (want, domain) in PROFILE_INPUTS.items():
        text = _text(data[name], where, name)
        q = parse_quantity(text, want, where, name, allow_zero=True)
        m = q.to(want).magnitude
        if (domain == "fraction" and not 0 < m <= 1) or m < 0:
            raise SpecError(where, name, f"expected {'a fraction in (0, 1]' if domain == 'fraction' else 'zero or more'}, found {shown(text)}")
        values[name] = text.strip()
    ids = data.get("records", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) and i.strip() for i in ids):
        raise SpecError(where, "records", f"expected a list of record ids, found {shown(ids)}")
    table = data.get("summary", {})
    if not isinstance(table, Mapping):
        raise SpecError(where, "summary", f"expected a table of {', '.join(PROFILE_SUMMARY)}, found {shown(table)}")
    extra = sorted(set(table) - set(PROFILE_SUMMARY))
    if extra:
        raise SpecError(where, f"summary.{extra[0][:60]}", f"unknown field{suggest(extra[0], PROFILE_SUMMARY)}; known: {', '.join(PROFILE_SUMMARY)}")
    summary = {}
    for name in PROFILE_SUMMARY:
        if name in table:
            text = _text(table[name], where, f"summary.{name}")
            parse_quantity(text, "1", where, f"summary.{name}", allow_zero=True)
            summary[name] = text.strip()
    return Profile(path.stem, path, _text(data["description"], where, "description"), _text(data["provenance"], where, "provenance"),
                   values, tuple(ids), summary, _profile_files(data.get("files", []), where))


_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _profile_files(v: object, where: str) -> tuple[tuple[str, str], ...]:
    """A user profile's `files`: the result files it was fitted to, each `{name = "...", sha256 = "..."}`."""
    if not isinstance(v, list) or not all(isinstance(f, Mapping) for f in v):
        raise SpecError(where, "files", f"expected a list of tables with name and sha256, found {shown(v)}")
    out = []
    for i, f in enumerate(v):
        if set(f) != {"name", "sha256"}:
            raise SpecError(where, f"files[{i}]", f"expected the fields name and sha256, found {', '.join(sorted(map(str, f))) or 'none'}")
        name, digest = _text(f["name"], where, f"files[{i}].name"), f["sha256"]
        if not isinstance(digest, str) or not _SHA256.match(digest):
            raise SpecError(where, f"files[{i}].sha256", f"expected 64 lowercase hex digits, found {shown(digest)}")
        out.append((name, digest))
    return tuple(out)


def _text(v: object, where: str, name: str) -> str:
    if not isinstance(v, str) or len(v) > MAX_TEXT:
        raise SpecError(where, name, f"expected text, found {shown(v)}")
    return check_text(v, where, name, multiline=name.rpartition(".")[2] in MULTI_LINE_FIELDS)


def _url(v: str, where: str, name: str) -> None:
    if not v.startswith(("https://", "http://")) or any(c.isspace() for c in v):
        raise SpecError(where, name, f"expected a source URL starting with https://, found {shown(v)}")


def _count(v: object, where: str, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_COUNT:
        raise SpecError(where, name, f"expected a whole number from 1 to {MAX_COUNT:,}, found {shown(v)}")
    return v


@cache
def _shipped_model(name: str) -> Architecture:
    """A shipped model, loaded once per process (a dataset of a thousand records names a few)."""
    return load_model(name)


@cache
def _shipped_hardware(name: str) -> Hardware:
    return load_hardware(name)


def _shipped(v: object, where: str, name: str, names: list[str], listing: str, load: Callable[[str], object]) -> object:
    if not isinstance(v, str) or v not in names:
        hint = suggest(v, names) if isinstance(v, str) else ""
        raise SpecError(where, name, f"expected a shipped {listing} name (`roofline list {listing}`), found {shown(v)}{hint}")
    return load(v)


__all__ = [
    "BATCHING",
    "DEFAULT_PROFILE",
    "DEFAULT_SUMMARY",
    "HELD_OUT_DIR",
    "MAX_DECODE_STEP_S",
    "MEASUREMENTS_DIR",
    "METRICS",
    "MIN_DECODE_STEP_S",
    "PROFILES_DIR",
    "PROFILE_INPUTS",
    "PROFILE_SUMMARY",
    "RECORD_ID",
    "USER_PROFILES_ENV",
    "Measurement",
    "Profile",
    "check_physics",
    "decode_step",
    "load_held_out",
    "load_measurement_file",
    "load_measurements",
    "load_profile_file",
    "load_profiles",
    "parse_measurements",
    "parse_profile",
    "profile",
    "profile_files",
    "user_profiles_dir",
]

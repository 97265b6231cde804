"""Benchmark result files a user already has, read into the dataset's records (`roofline calibrate --from FILE`).

A result file is a stranger's data: it is read whole only up to MAX_RESULT_BYTES (gzipped or not), parsed as JSON without
evaluating anything, and every field used is checked for its type and range; what a file cannot give is one line naming the
file and the field. Its format is told by its content, not its name:

- `vllm`: the JSON `vllm bench serve --save-result` writes (and vLLM's older `benchmarks/benchmark_serving.py`): one run,
  `completed`, `total_input_tokens`, `total_output_tokens`, `mean_tpot_ms`, `mean_ttft_ms`, `max_concurrency`, ...;
- `sglang`: the JSON lines `python -m sglang.bench_serving --output-file` appends, one run per line, the same `*_ms` keys
  and its own `concurrency` (the mean number of requests in flight);
- `genai-perf`: NVIDIA genai-perf's and AIPerf's `profile_export_*.json`: one run, each metric a table with its `unit` and
  `avg`, the concurrency in `input_config`;
- `guidellm`: guidellm's `benchmarks.json`: a run per entry of `benchmarks`, each metric with its `successful` statistics;
- `roofline`: the dataset's own TOML (specs/measurements/*.toml), read by specs.measurements.

Each run becomes one record of a server at load (continuous batching, metric `itl`): its step is the mean time per output
token after the first (the mean TPOT; where a file has none, its mean inter-token latency), its running batch the mean
number of requests in flight where the file says how many requests it completed per second and how long each took (Little's
law, at most the client's concurrency), else the concurrency; its prompt and output the mean tokens per request. The chip,
the model, the layout and the number formats a result file does not say are given on the command line (`Given`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..units import Quantity
from .catalog import decoded, parse_json, read_bytes, shown_path, unpacked
from .errors import SpecError, shown
from .hardware import Hardware
from .measurements import RECORD_ID, Measurement, check_physics, parse_measurements
from .models import Architecture

#: The largest result file read (a vLLM result with every request's token times is a few MB for thousands of requests).
MAX_RESULT_BYTES = 64 * 1024 * 1024
#: The most runs one file may hold (a guidellm sweep or an SGLang file appended to for a year holds dozens).
MAX_RUNS = 1000
FORMATS = ("vllm", "sglang", "genai-perf", "guidellm", "roofline")


@dataclass(frozen=True)
class Run:
    """One benchmark run as its file states it (times in seconds, token counts as means per request)."""

    file: Path
    format: str
    #: where in the file (a line, an index), for records' ids and error lines; "" for a file of one run
    label: str
    #: the field the step time was read from, and its value [s]
    step_field: str
    step: float
    requests: int
    input_tokens: float
    output_tokens: float
    ttft: float | None
    #: the client's concurrency limit (None: unlimited, requests sent at a rate)
    concurrency: int | None
    #: the mean number of requests in flight, by Little's law or as the file prints it (None: the file cannot say)
    in_flight: float | None
    #: the served model as the file names it, the engine and its version
    model_id: str | None
    engine: str
    engine_version: str | None
    #: the layout where the file states it (SGLang's server_info: tp_size, dp_size, ep_size), by the --set names tp, dp, ep
    layout: Mapping[str, int] = field(default_factory=dict)
    #: "decode": the run measured a disaggregated server whose decode pool the layout describes (its prompts prefilled elsewhere)
    role: str | None = None

    @property
    def where(self) -> str:
        return shown_path(self.file) + (f": {self.label}" if self.label else "")


@dataclass(frozen=True)
class Given:
    """What a result file does not say, from the command line: the chip, the model, the layout, the number formats (None: as
    the checkpoint stores them), and the batch and lengths for files that lack them."""

    hardware: Hardware | None
    model: Architecture | None
    weights: str | None = None
    kv: str | None = None
    math: str | None = None
    #: what --set gives: tp, dp, ep (the layout; 1 where neither the file nor the command line says), batch (the concurrency),
    #: prompt_len and output_len [tokens]
    fill: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ResultFile:
    path: Path
    format: str
    sha256: str
    records: tuple[Measurement, ...]


# --- reading values out of a stranger's JSON ---------------------------------------------------------------


def _number(data: Mapping[str, object], key: str, where: str, *, required: bool = True, positive: bool = True) -> float | None:
    """A finite number at `key` (an int or float, not a bool or a string), above zero where `positive`; None where absent and
    not required."""
    if key not in data or data[key] is None:
        if required:
            raise SpecError(where, key, "missing: the file does not say it")
        return None
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise SpecError(where, key, f"expected a number, found {shown(v)}")
    x = float(v)
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        raise SpecError(where, key, f"expected a {'positive' if positive else 'non-negative'} finite number, found {shown(v)}")
    return x


def _count(data: Mapping[str, object], key: str, where: str, *, required: bool = True) -> int | None:
    x = _number(data, key, where, required=required)
    if x is None:
        return None
    if x != int(x) or x > 10**9:
        raise SpecError(where, key, f"expected a whole number from 1 to 1,000,000,000, found {shown(data[key])}")
    return int(x)


def _text(data: Mapping[str, object], key: str) -> str | None:
    v = data.get(key)
    return v.strip()[:200] if isinstance(v, str) and v.strip() else None


def _ms(data: Mapping[str, object], key: str, where: str, required: bool = True) -> float | None:
    x = _number(data, key, where, required=required)
    return None if x is None else x / 1000


def _in_flight(throughput: float | None, latency: float | None) -> float | None:
    """Little's law: the mean number of requests in flight is the rate they complete at times the time each spends."""
    return throughput * latency if throughput and latency else None


def _concurrency(data: Mapping[str, object], key: str, where: str) -> int | None:
    """A client's concurrency limit; absent, null or 0 is unlimited (requests sent at a rate)."""
    if data.get(key) in (None, 0):
        return None
    return _count(data, key, where)


# --- the formats -------------------------------------------------------------------------------------------


def _vllm_like(data: Mapping[str, object], path: Path, fmt: str, label: str, where: str) -> Run:
    """vLLM's and SGLang's results share their `*_ms` keys; SGLang also prints the mean requests in flight (`concurrency`)."""
    completed = _count(data, "completed", where)
    tpot = _ms(data, "mean_tpot_ms", where, required=False)
    step_field = "mean_tpot_ms"
    if tpot is None:
        tpot, step_field = _ms(data, "mean_itl_ms", where), "mean_itl_ms"
    ttft = _ms(data, "mean_ttft_ms", where, required=False)
    inputs = _number(data, "total_input_tokens", where) / completed
    outputs = _number(data, "total_output_tokens", where) / completed
    e2e = next((_ms(data, k, where, required=False) for k in ("mean_e2el_ms", "mean_e2e_latency_ms", "mean_latency_ms") if data.get(k) is not None), None)
    if e2e is None and ttft is not None:
        e2e = ttft + tpot * max(outputs - 1, 0)
    printed = _number(data, "concurrency", where, required=False) if fmt == "sglang" else None
    in_flight = printed or _in_flight(_number(data, "request_throughput", where, required=False), e2e)
    engine = _text(data, "backend") or fmt
    server = data.get("server_info") if isinstance(data.get("server_info"), Mapping) else {}
    role = None
    if isinstance(server.get("decode"), list) and server["decode"] and isinstance(server["decode"][0], Mapping):
        server, role = server["decode"][0], "decode"  # a disaggregated server (SGLang's router): its decode pool's layout
    layout = {k: _count(server, f"{k}_size", f"{where}: server_info") for k in ("tp", "dp", "ep") if server.get(f"{k}_size") is not None}
    if server.get("pp_size") not in (None, 1):
        raise SpecError(where, "server_info.pp_size", f"pipeline parallelism is not modelled by the step model; found {shown(server['pp_size'])}")
    return Run(path, fmt, label, step_field, tpot, completed, inputs, outputs, ttft, _concurrency(data, "max_concurrency", where),
               in_flight, _text(data, "model_id") or _text(server, "model_path") or _text(data, "model"), engine if engine != "openai" else fmt,
               _text(data, "version") or _text(server, "version") or _text(data, "vllm_version"), layout, role)


def _stat(data: Mapping[str, object], key: str, where: str, unit: str | None, required: bool = True) -> float | None:
    """genai-perf's metric table `{unit, avg, ...}`: its mean, converted from its unit (ms, s or ns) to seconds where `unit`
    is "s", as printed otherwise."""
    table = data.get(key)
    if table is None:
        if required:
            raise SpecError(where, key, "missing: the file does not say it")
        return None
    if not isinstance(table, Mapping):
        raise SpecError(where, key, f"expected a table with 'unit' and 'avg', found {shown(table)}")
    x = _number(table, "avg", f"{where}: {key}", required=required)
    if x is None or unit != "s":
        return x
    scale = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "us": 1e-6, "ns": 1e-9}.get(str(table.get("unit", "")).strip().lower())
    if scale is None:
        raise SpecError(where, f"{key}.unit", f"expected ms, s, us or ns, found {shown(table.get('unit'))}")
    return x * scale


def _genai_perf(data: Mapping[str, object], path: Path) -> list[Run]:
    where = shown_path(path)
    config = data.get("input_config") if isinstance(data.get("input_config"), Mapping) else {}
    perf = config.get("perf_analyzer") if isinstance(config.get("perf_analyzer"), Mapping) else {}
    stim = perf.get("stimulus") if isinstance(perf.get("stimulus"), Mapping) else {}
    loadgen = config.get("loadgen") if isinstance(config.get("loadgen"), Mapping) else {}
    phases = [t for t in config.get("phases", []) if isinstance(t, Mapping) and not t.get("exclude_from_results")] \
        if isinstance(config.get("phases"), list) else []
    concurrency = next((_concurrency(t, "concurrency", f"{where}: input_config") for t in (stim, loadgen, config, *phases)
                        if t.get("concurrency")), None)
    itl = _stat(data, "inter_token_latency", where, "s")
    ttft = _stat(data, "time_to_first_token", where, "s", required=False)
    latency = _stat(data, "request_latency", where, "s", required=False)
    throughput = _stat(data, "request_throughput", where, None, required=False)
    count = _stat(data, "request_count", where, None, required=False)
    endpoint = config.get("endpoint") if isinstance(config.get("endpoint"), Mapping) else {}
    tokenizer = config.get("tokenizer") if isinstance(config.get("tokenizer"), Mapping) else {}
    model = next((m for m in (_first(config.get("model_names")), _first(config.get("model")), _first(endpoint.get("model_names")),
                              tokenizer.get("name")) if isinstance(m, str) and m.strip()), None)
    return [Run(path, "genai-perf", "", "inter_token_latency.avg", itl, int(count) if count else 0,
                _stat(data, "input_sequence_length", where, None), _stat(data, "output_sequence_length", where, None), ttft,
                concurrency, _in_flight(throughput, latency), model, "genai-perf", None)]


def _first(v: object) -> object:
    """A name, or the first of a list of names."""
    return v[0] if isinstance(v, list) and v else v


def _successful(metrics: Mapping[str, object], key: str, where: str, required: bool = True) -> float | None:
    table = metrics.get(key)
    if table is None:
        if required:
            raise SpecError(where, f"metrics.{key}", "missing: the file does not say it")
        return None
    stats = table.get("successful") if isinstance(table, Mapping) else None
    if not isinstance(stats, Mapping):
        raise SpecError(where, f"metrics.{key}", f"expected a table with 'successful' statistics, found {shown(table)}")
    return _number(stats, "mean", f"{where}: metrics.{key}.successful", required=required)


def _guidellm(data: Mapping[str, object], path: Path) -> list[Run]:
    benchmarks = data["benchmarks"]
    if not isinstance(benchmarks, list) or not benchmarks:
        raise SpecError(shown_path(path), "benchmarks", "expected a list of one or more benchmarks")
    runs = []
    for i, b in enumerate(benchmarks[:MAX_RUNS + 1]):
        where = f"{shown_path(path)}: benchmarks[{i}]"
        if not isinstance(b, Mapping) or not isinstance(b.get("metrics"), Mapping):
            raise SpecError(where, "metrics", f"expected a benchmark with its metrics, found {shown(b)}")
        m = b["metrics"]
        tpot = _successful(m, "time_per_output_token_ms", where, required=False)
        step_field = "time_per_output_token_ms"
        if tpot is None:
            tpot, step_field = _successful(m, "inter_token_latency_ms", where), "inter_token_latency_ms"
        totals = b.get("request_totals") if isinstance(b.get("request_totals"), Mapping) else {}
        strategy = _strategy(b)
        streams = strategy.get("streams") if strategy.get("type_") in ("concurrent", "synchronous") else None
        concurrency = 1 if strategy.get("type_") == "synchronous" else streams if isinstance(streams, int) and streams > 0 else None
        in_flight = _successful(m, "request_concurrency", where, required=False) or _in_flight(
            _successful(m, "requests_per_second", where, required=False), _successful(m, "request_latency", where, required=False))
        ttft = _successful(m, "time_to_first_token_ms", where, required=False)
        runs.append(Run(path, "guidellm", f"benchmarks[{i}]", f"metrics.{step_field}.successful.mean", tpot / 1000,
                        int(totals.get("successful", 0)) if isinstance(totals.get("successful"), int) else 0,
                        _successful(m, "prompt_token_count", where), _successful(m, "output_token_count", where),
                        None if ttft is None else ttft / 1000, concurrency, in_flight, _guidellm_model(b), "guidellm", None))
    return runs


def _strategy(b: Mapping[str, object]) -> Mapping[str, object]:
    """A guidellm benchmark's scheduling strategy, where its version keeps it (`args.strategy`, `scheduler.strategy`, `config.strategy`)."""
    for outer in ("args", "scheduler", "config"):
        t = b.get(outer)
        if isinstance(t, Mapping) and isinstance(t.get("strategy"), Mapping):
            return t["strategy"]
    return {}


def _guidellm_model(b: Mapping[str, object]) -> str | None:
    for outer in ("worker", "backend", "config"):
        t = b.get(outer)
        if isinstance(t, Mapping):
            for key in ("backend_model", "model"):
                if isinstance(t.get(key), str):
                    return t[key][:200]
    return None


# --- a file's format, and its runs as records -----------------------------------------------------------------------


def detect(text: str, path: Path) -> tuple[str, list[tuple[str, Mapping[str, object]]]]:
    """The format of a result file and its documents (label, parsed object): JSON lines for SGLang, one JSON object else."""
    where = shown_path(path)
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise SpecError(where, None, "expected a benchmark result file, found an empty file")
    if len(lines) > 1 and lines[0][1].lstrip().startswith("{") and lines[0][1].rstrip().endswith("}"):
        try:
            json.loads(lines[0][1])
            many = True
        except (json.JSONDecodeError, RecursionError):
            many = False
        if many:
            if len(lines) > MAX_RUNS:
                raise SpecError(where, None, f"expected at most {MAX_RUNS:,} runs (lines), found {len(lines):,}")
            docs = []
            for n, ln in lines:
                doc = parse_json(ln, f"{where}: line {n}")
                if not isinstance(doc, Mapping):
                    raise SpecError(where, f"line {n}", f"expected a JSON object (one run), found {type(doc).__name__}")
                docs.append((f"line {n}", doc))
            return _kind(docs[0][1], where), docs
    doc = parse_json(text, where)
    if not isinstance(doc, Mapping):
        raise SpecError(where, None, f"expected a JSON object (a benchmark result), found {type(doc).__name__}")
    return _kind(doc, where), [("", doc)]


def _kind(doc: Mapping[str, object], where: str) -> str:
    if "benchmarks" in doc:
        return "guidellm"
    if "inter_token_latency" in doc or "time_to_first_token" in doc:
        return "genai-perf"
    if "completed" in doc and ("mean_tpot_ms" in doc or "mean_itl_ms" in doc):
        return "sglang" if "concurrency" in doc or "server_info" in doc or str(doc.get("backend", "")).startswith("sglang") else "vllm"
    raise SpecError(where, None, "expected a benchmark result of vLLM (`vllm bench serve --save-result`), SGLang (bench_serving), "
                                 "genai-perf or AIPerf (profile_export*.json), guidellm (benchmarks.json) or roofline (TOML); "
                                 f"found a JSON object with keys {shown(sorted(doc)[:6], 100)}")


def runs(path: Path) -> tuple[str, str, list[Run]]:
    """A result file's format, its SHA-256 and its runs."""
    data = read_bytes(path, MAX_RESULT_BYTES)
    digest = hashlib.sha256(data).hexdigest()
    text = decoded(unpacked(data, path, MAX_RESULT_BYTES), path)
    fmt, docs = detect(text, path)
    readers: dict[str, Callable[..., list[Run]]] = {
        "guidellm": lambda d, label: _guidellm(d, path),
        "genai-perf": lambda d, label: _genai_perf(d, path),
        "vllm": lambda d, label: [_vllm_like(d, path, "vllm", label, shown_path(path) + (f": {label}" if label else ""))],
        "sglang": lambda d, label: [_vllm_like(d, path, "sglang", label, shown_path(path) + (f": {label}" if label else ""))],
    }
    out = [r for label, d in docs for r in readers[fmt](d, label)]
    if len(out) > MAX_RUNS:
        raise SpecError(shown_path(path), None, f"expected at most {MAX_RUNS:,} runs, found more")
    return fmt, digest, out


_ID_PART = re.compile(r"[^A-Za-z0-9._-]+")


def record_id(path: Path, label: str, taken: set[str]) -> str:
    """A record id (specs.measurements.RECORD_ID) from the file's name and the run's place in it, unique among `taken`."""
    stem = _ID_PART.sub("-", path.name.removesuffix(".gz").rsplit(".", 1)[0]).strip("-._") or "run"
    tail = _ID_PART.sub("-", label).strip("-")
    base = f"{stem[:60]}-{tail}" if tail else stem[:70]
    base = base if base[0].isalnum() else "r" + base
    rid, n = base, 2
    while rid in taken:
        rid, n = f"{base}-{n}", n + 1
    assert RECORD_ID.match(rid)
    taken.add(rid)
    return rid


def _resolve(run: Run, given: Given, key: str, from_file: float | None, field_name: str, default: int | None = None) -> int:
    """A whole number of the run: the file's, else the command line's (`--set KEY=N`), else `default`; the file's and the
    command line's both, and they differ: refused."""
    set_value = given.fill.get(key)
    if from_file is None:
        if set_value is None and default is not None:
            return default
        if set_value is None:
            raise SpecError(run.where, field_name, f"missing: the file does not say it; give it with --set {key}=N")
        return set_value
    value = max(1, round(from_file))
    if set_value is not None and set_value != value:
        raise SpecError(run.where, field_name, f"the file says {value}, --set {key}={set_value} says otherwise; drop --set {key}")
    return value


def to_record(run: Run, given: Given, rid: str) -> Measurement:
    """One run as a record of a server at load (see the module's docstring), checked as a dataset record is."""
    where = run.where
    if given.model is None:
        named = f" (it names {run.model_id!r})" if run.model_id else ""
        raise SpecError(where, "model", f"the file does not say which roofline model ran{named}; name it with --model")
    if given.hardware is None:
        raise SpecError(where, "hardware", "a result file does not say which chip ran it; name it with --hardware")
    tp, dp, ep = (_resolve(run, given, k, run.layout.get(k), f"server_info.{k}_size", default=1) for k in ("tp", "dp", "ep"))
    if run.concurrency is None and run.in_flight is not None and "batch" not in given.fill:
        batch = max(1, math.ceil(run.in_flight))  # unlimited concurrency: the requests in flight on average, rounded up
    else:
        batch = _resolve(run, given, "batch", run.concurrency, "concurrency")
    prompt = _resolve(run, given, "prompt_len", run.input_tokens or None, "input tokens")
    output = _resolve(run, given, "output_len", run.output_tokens or None, "output tokens")
    mean_batch = None
    if run.in_flight is not None:
        mean_batch = Fraction(min(run.in_flight, batch)).limit_denominator(1000) or None
    gpus = tp * dp
    if gpus % ep:
        raise SpecError(where, "ep", f"expected an expert-parallel degree that divides the {gpus} GPUs (tp x dp), found {ep}")
    m = Measurement(
        id=rid, path=run.file, source=f"{run.format} result file {run.file.name}", url=f"file:{run.file.name}",
        locator=f"{run.label or 'the file'}: {run.step_field}", engine=run.engine, engine_version=run.engine_version or "not stated",
        model=given.model, hardware=given.hardware, gpus=gpus, tp=tp, pp=1, weights=given.weights, kv=given.kv, math=given.math,
        batching="continuous", batch=batch, input_tokens=prompt, output_tokens=output, metric="itl",
        value=Quantity(Fraction(run.step).limit_denominator(10**9), "s"), ttft=None,
        assumed=("the running batch is the mean number of requests in flight (Little's law: requests per second x mean latency), "
                 "at most the concurrency" if mean_batch is not None else "the running batch is the client's concurrency"),
        notes="", dp=dp, ep=ep, mean_batch=mean_batch, role=run.role,
        mean_output_tokens=Fraction(run.output_tokens).limit_denominator(1000) if run.output_tokens else None)
    check_physics(m, where, run.step_field)
    return m


def read_result_file(path: Path, given: Given, taken: set[str]) -> ResultFile:
    """A user's result file as records (`taken`: the ids already used, which this adds to)."""
    if path.name.endswith(".toml"):
        data = read_bytes(path, MAX_RESULT_BYTES)
        from .catalog import parse_toml

        records = parse_measurements(parse_toml(decoded(data, path), path), path)
        for m in records:
            if m.id in taken:
                raise SpecError(shown_path(path), f"record {m.id}.id", "duplicate id; another file given to --from has it")
            taken.add(m.id)
        return ResultFile(path, "roofline", hashlib.sha256(data).hexdigest(), records)
    fmt, digest, found = runs(path)
    return ResultFile(path, fmt, digest, tuple(to_record(r, given, record_id(path, r.label, taken)) for r in found))


def read_result_files(paths: Sequence[Path], given: Given) -> tuple[ResultFile, ...]:
    taken: set[str] = set()
    return tuple(read_result_file(p, given, taken) for p in paths)


__all__ = ["FORMATS", "MAX_RESULT_BYTES", "MAX_RUNS", "Given", "ResultFile", "Run", "detect", "read_result_file", "read_result_files",
           "record_id", "runs", "to_record"]

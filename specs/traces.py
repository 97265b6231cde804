"""Profiler traces a user already has, read into the GPU's kernels and the steps the host marked (`roofline diagnose TRACE`).

A trace is a stranger's data: read only up to its size limit (gzipped or not, the unpacked size bounded too), parsed as JSON
or opened read-only as SQLite, never executed; every field used is checked for its type, and what a trace cannot give is one
line naming the file and the field. Two formats, told by their first bytes:

- `pytorch`: the Chrome trace JSON the PyTorch profiler writes (`torch.profiler`, and vLLM's and SGLang's profilers through
  it): `traceEvents` with the GPU's work as complete events (`ph` "X") of category `kernel`, `gpu_memcpy` and `gpu_memset`,
  the host's launches (`cuda_runtime`, `cuda_driver`) joined to them by `args.correlation`, and the host's ranges
  (`python_function`, `user_annotation`, `cpu_op`); the GPU's name in `deviceProperties`. Python's json module, the
  standard library: the format is plain JSON and a streaming reader would buy nothing the size limit does not.
- `nsys`: an Nsight Systems SQLite export (`nsys export --type sqlite`, gzipped or not): CUPTI_ACTIVITY_KIND_KERNEL (and MEMCPY, MEMSET)
  with their names in StringIds, CUPTI_ACTIVITY_KIND_RUNTIME for the launches, NVTX_EVENTS for the host's ranges,
  TARGET_INFO_GPU for the chip. Python's sqlite3, opened read-only and immutable, every query bounded in rows and time.

The steps are the host's ranges whose names mark one forward step of an engine (STEP_MARKERS: vLLM's `execute_model`, the
profiler's `ProfilerStep#N`, SGLang's and TensorRT-LLM's step annotations), outermost first; a kernel belongs to the step
during which the host launched it (a CUDA graph's kernels share their graph launch). A trace with no such range is one step.
"""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from .catalog import decoded, read_bytes, shown_path, unpacked
from .errors import SpecError, shown

#: The largest trace read, packed or unpacked (a decode profile of a few steps is a few MB; a whole benchmark's, hundreds).
MAX_TRACE_BYTES = 256 * 1024 * 1024
#: The most GPU activities read, and the most seconds a SQLite query may run.
MAX_KERNELS = 2_000_000
MAX_QUERY_SECONDS = 60.0
#: Host ranges that mark one forward step of an engine.
STEP_MARKERS = re.compile(r"execute_model|ProfilerStep#\d+|^step\[|^execute_\d+_context|model_runner.*forward|run_batch|forward_batch_generation")
KINDS = ("kernel", "memcpy", "memset")
_CHROME_KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
_LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
_HOST_CATEGORIES = ("python_function", "user_annotation", "cpu_op")


@dataclass(frozen=True)
class Kernel:
    """One activity of the GPU: its name, its interval on the GPU's clock [us], its device and stream, what kind (KINDS), and
    when the host launched it [us on the host's clock; the same clock in both formats] (None: the trace does not say)."""

    name: str
    start: float
    end: float
    device: int
    stream: int
    kind: str
    launched: float | None


@dataclass(frozen=True)
class Trace:
    path: Path
    format: str
    #: the GPU's name as the trace prints it (None: not stated)
    gpu: str | None
    kernels: tuple[Kernel, ...]
    #: the host's step ranges (start, end [us], name), outermost, in order; empty where the trace marks none
    steps: tuple[tuple[float, float, str], ...]


def _field(e: Mapping[str, object], key: str, where: str, kinds: tuple[type, ...] = (int, float)) -> object:
    v = e.get(key)
    if isinstance(v, bool) or not isinstance(v, kinds):
        raise SpecError(where, key, f"expected {'a number' if float in kinds else 'text'}, found {shown(v)}")
    return v


def _time(e: Mapping[str, object], key: str, where: str) -> float:
    x = float(_field(e, key, where))  # type: ignore[arg-type]
    if x != x or x in (float("inf"), float("-inf")) or (key == "dur" and x < 0):
        raise SpecError(where, key, f"expected a finite {'non-negative ' if key == 'dur' else ''}time in microseconds, found {shown(e.get(key))}")
    return x


def _outermost(ranges: list[tuple[float, float, str]]) -> tuple[tuple[float, float, str], ...]:
    """The ranges not inside another, in order of start."""
    out: list[tuple[float, float, str]] = []
    for r in sorted(ranges, key=lambda r: (r[0], -r[1])):
        if out and r[0] >= out[-1][0] and r[1] <= out[-1][1]:
            continue
        out.append(r)
    return tuple(out)


def _chrome(text: str, path: Path) -> Trace:
    where = shown_path(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SpecError(where, None, f"expected a PyTorch profiler trace (JSON), found a syntax error at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise SpecError(where, None, "expected a PyTorch profiler trace, found JSON nested too deep") from None
    events = data.get("traceEvents") if isinstance(data, Mapping) else data if isinstance(data, list) else None
    if not isinstance(events, list):
        raise SpecError(where, "traceEvents", "expected a PyTorch profiler trace: a JSON object with a list of traceEvents")
    launches: dict[int, float] = {}
    raw: list[tuple[Mapping[str, object], str, int]] = []
    ranges: list[tuple[float, float, str]] = []
    for i, e in enumerate(events):
        if not isinstance(e, Mapping) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in _CHROME_KINDS:
            if len(raw) >= MAX_KERNELS:
                raise SpecError(where, "traceEvents", f"expected at most {MAX_KERNELS:,} GPU activities, found more; cut the trace to a few steps")
            raw.append((e, _CHROME_KINDS[cat], i))  # type: ignore[index]
        elif cat in _LAUNCH_CATEGORIES:
            args = e.get("args")
            corr = args.get("correlation") if isinstance(args, Mapping) else None
            if isinstance(corr, int) and not isinstance(corr, bool):
                launches[corr] = _time(e, "ts", f"{where}: traceEvents[{i}]")
        elif cat in _HOST_CATEGORIES and isinstance(e.get("name"), str) and STEP_MARKERS.search(e["name"]):  # type: ignore[arg-type]
            at = f"{where}: traceEvents[{i}]"
            start = _time(e, "ts", at)
            ranges.append((start, start + _time(e, "dur", at), str(e["name"])[:200]))
    kernels = []
    for e, kind, i in raw:
        at = f"{where}: traceEvents[{i}]"
        name = _field(e, "name", at, (str,))
        start = _time(e, "ts", at)
        args = e.get("args") if isinstance(e.get("args"), Mapping) else {}
        device, stream, corr = (args.get(k) for k in ("device", "stream", "correlation"))  # type: ignore[union-attr]
        kernels.append(Kernel(str(name)[:2000], start, start + _time(e, "dur", at), device if isinstance(device, int) else 0,
                              stream if isinstance(stream, int) else 0, kind, launches.get(corr) if isinstance(corr, int) else None))
    props = data.get("deviceProperties") if isinstance(data, Mapping) else None
    gpu = props[0].get("name") if isinstance(props, list) and props and isinstance(props[0], Mapping) else None
    return Trace(path, "pytorch", gpu[:200] if isinstance(gpu, str) and gpu.strip() else None, tuple(sorted(kernels, key=lambda k: k.start)),
                 _outermost(ranges))


class _Deadline:
    """A SQLite progress handler that stops a query past MAX_QUERY_SECONDS."""

    def __init__(self) -> None:
        self.until = time.monotonic() + MAX_QUERY_SECONDS

    def __call__(self) -> int:
        return 1 if time.monotonic() > self.until else 0


def _sqlite(path: Path) -> Trace:
    where = shown_path(path)
    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as err:
        raise SpecError(where, None, f"expected an Nsight Systems SQLite export, found a file SQLite cannot open ({err})") from None
    db.set_progress_handler(_Deadline(), 10_000)
    try:
        return _nsys(db, path)
    except sqlite3.OperationalError as err:
        why = "took too long" if "interrupted" in str(err) else str(err)
        raise SpecError(where, None, f"expected an Nsight Systems SQLite export, found one SQLite cannot read ({why})") from None
    except sqlite3.DatabaseError as err:
        raise SpecError(where, None, f"expected an Nsight Systems SQLite export, found a damaged database ({err})") from None
    finally:
        db.close()


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}  # table: one of our own names, never the file's


def _nsys(db: sqlite3.Connection, path: Path) -> Trace:
    where = shown_path(path)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables or "StringIds" not in tables:
        raise SpecError(where, "CUPTI_ACTIVITY_KIND_KERNEL", "expected an Nsight Systems SQLite export with its kernels (nsys profile "
                                                              "--trace cuda, then nsys export --type sqlite); the table is missing")
    launches: dict[int, float] = {}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for corr, start in db.execute("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT ?", (4 * MAX_KERNELS,)):
            if isinstance(corr, int) and isinstance(start, int):
                launches[corr] = start / 1000
    cols = _columns(db, "CUPTI_ACTIVITY_KIND_KERNEL")
    name_col = "demangledName" if "demangledName" in cols else "shortName"
    queries = [("kernel", f"SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                          f"LEFT JOIN StringIds s ON s.id = k.{name_col} LIMIT ?")]
    queries += [(kind, f"SELECT start, end, deviceId, streamId, correlationId, '[{kind}]' FROM {table} LIMIT ?")
                for kind, table in (("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"), ("memset", "CUPTI_ACTIVITY_KIND_MEMSET")) if table in tables]
    kernels = []
    for kind, sql in queries:
        for start, end, device, stream, corr, name in db.execute(sql, (MAX_KERNELS + 1,)):
            if not all(isinstance(x, int) for x in (start, end)) or end < start:
                raise SpecError(where, f"{kind}.start", f"expected whole nanoseconds with end at or after start, found {shown((start, end))}")
            kernels.append(Kernel(str(name)[:2000] if isinstance(name, str | bytes) and name else "[unnamed]", start / 1000, end / 1000,
                                  device if isinstance(device, int) else 0, stream if isinstance(stream, int) else 0, kind,
                                  launches.get(corr) if isinstance(corr, int) else None))
            if len(kernels) > MAX_KERNELS:
                raise SpecError(where, kind, f"expected at most {MAX_KERNELS:,} GPU activities, found more; export a few steps")
    ranges: list[tuple[float, float, str]] = []
    if "NVTX_EVENTS" in tables:
        ncols = _columns(db, "NVTX_EVENTS")
        text = "COALESCE(n.text, s.value)" if "textId" in ncols else "n.text"
        join = "LEFT JOIN StringIds s ON s.id = n.textId" if "textId" in ncols else ""
        for start, end, name in db.execute(f"SELECT n.start, n.end, {text} FROM NVTX_EVENTS n {join} WHERE n.end IS NOT NULL "
                                           "AND n.eventType IN (59, 60) LIMIT ?", (MAX_KERNELS,)):
            if isinstance(name, str) and isinstance(start, int) and isinstance(end, int) and STEP_MARKERS.search(name):
                ranges.append((start / 1000, end / 1000, name[:200]))
    gpu = None
    if "TARGET_INFO_GPU" in tables and "name" in _columns(db, "TARGET_INFO_GPU"):
        row = db.execute("SELECT name FROM TARGET_INFO_GPU LIMIT 1").fetchone()
        gpu = row[0][:200] if row and isinstance(row[0], str) and row[0].strip() else None
    return Trace(path, "nsys", gpu, tuple(sorted(kernels, key=lambda k: k.start)), _outermost(ranges))


_SQLITE = b"SQLite format 3\x00"


def read_trace(path: Path) -> Trace:
    """A trace file as its GPU's activities and the host's steps; one line naming the file where it is not a trace."""
    data = unpacked(read_bytes(path, MAX_TRACE_BYTES), path, MAX_TRACE_BYTES)
    if data.startswith(_SQLITE):
        if data is not None and not read_bytes(path, MAX_TRACE_BYTES).startswith(_SQLITE):  # a gzipped export: opened from a private copy
            with tempfile.TemporaryDirectory() as folder:
                copy = Path(folder) / "trace.sqlite"
                copy.write_bytes(data)
                del data
                trace = replace(_sqlite(copy), path=path)
        else:
            del data
            trace = _sqlite(path)
    else:
        trace = _chrome(decoded(data, path), path)
    if not trace.kernels:
        raise SpecError(shown_path(path), "kernel", "expected GPU kernels in the trace, found none (profile with the CUDA activities on)")
    return trace


__all__ = ["KINDS", "MAX_KERNELS", "MAX_TRACE_BYTES", "STEP_MARKERS", "Kernel", "Trace", "read_trace"]

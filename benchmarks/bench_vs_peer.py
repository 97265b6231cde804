"""roofline against the numeric calculator a user would pick instead, paired, medians: a table for the README.

    python benchmarks/bench_vs_peer.py [--runs N] [--peer PYTHON] [--baseline DIR] [--pdf] [--tests] [--out FILE.md]

Each row runs its command N times (default 7). The peer row (llm-analysis's `infer`, the same model and chip)
runs interleaved with roofline's `derive`, one after the other in each round, so both see the same machine load.
Wall time is the median of `time.perf_counter` around the process; CPU time is the child's user + system time
(`os.wait4`), also the median. "warm" runs with a cache directory filled by a first run (for `derive`, the sheet's
compiled form: roofline/compiled.py); "cold" with a new, empty one (and a new output folder for `build`). The `derive`
rows set inputs no earlier run has seen (`--set batch=N`, a new N each time), so nothing answers them from an earlier
identical run. `--peer` is a Python that can import llm_analysis (e.g. a venv made with `pip install llm-analysis==0.2.2`);
without it the peer rows are left out and the table says so.

Child processes run with Python's bytecode cache on, as on a user's machine: PYTHONDONTWRITEBYTECODE is removed from their
environment, and a first run of each command writes roofline's .pyc files (the peer, installed by pip, has its own).
`--baseline DIR` also times another checkout of roofline (an older commit: `git worktree add DIR COMMIT`) in the
same rounds, each of its rows beside this tree's, so a before/after comparison sees one machine load.

Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER_ARGS = ("-m", "llm_analysis.analysis", "infer", "--model_name", "NousResearch_Llama-2-7b-hf", "--gpu_name", "h100-sxm-80gb",
             "--log_level", "ERROR")
DERIVE_ARGS = ("-m", "roofline", "derive", "decode-floor", "--hardware", "h100-sxm", "--model", "llama-2-7b", "--format", "json")
#: the batch each timed derive sets: a new one each run (the count goes up), never one an earlier run used
_BATCHES = iter(range(2, 10**6))


def derive_args(fmt: str = "json") -> list[str]:
    """`roofline derive` of decode-floor for llama-2-7b on an H100 SXM, in `fmt`, at a batch no earlier run has set."""
    return [*DERIVE_ARGS[:-1], fmt, "--set", f"batch={next(_BATCHES)}"]


#: the environment of every child: this one with Python's bytecode cache on, as a user's machine has it
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(argv: Sequence[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process; its output is discarded, a failure stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**BASE_ENV, **env}, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}: {err.strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime


def median_pair(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--peer", help="a Python that can import llm_analysis")
    ap.add_argument("--baseline", help="another roofline checkout to time in the same rounds (its rows say 'before')")
    ap.add_argument("--pdf", action="store_true", help="also time `build --pdf` (needs pdflatex)")
    ap.add_argument("--tests", action="store_true", help="also time the test suite: the default selection and the README's "
                    "command (pytest -n auto -m 'slow or not slow')")
    ap.add_argument("--out", help="also write the table to this Markdown file")
    args = ap.parse_args()
    n = max(1, args.runs)
    py = sys.executable
    trees = [("", ROOT)] + ([(" (before)", Path(args.baseline).resolve())] if args.baseline else [])
    temporary: list[str] = []

    def tmp(prefix: str) -> str:
        temporary.append(tempfile.mkdtemp(prefix=prefix))
        return temporary[-1]

    env = {tag: {"ROOFLINE_CACHE_DIR": tmp("roofline-bench-cache-"), "PYTHONPATH": str(where)} for tag, where in trees}
    out = {tag: tmp("roofline-bench-out-") for tag, _ in trees}
    for tag, where in trees:
        run_once([py, "-m", "roofline", "build", "--out", out[tag]], env[tag], where)  # fills the cache (and writes the .pyc files)
        run_once([py, *derive_args()], env[tag], where)
        run_once([py, *derive_args("md")], env[tag], where)

    rows: list[tuple[str, float, float]] = []
    derive: dict[str, list[tuple[float, float]]] = {tag: [] for tag, _ in trees}
    derive_md: dict[str, list[tuple[float, float]]] = {tag: [] for tag, _ in trees}
    peer: list[tuple[float, float]] = []
    for _ in range(n):
        for tag, where in trees:
            derive[tag].append(run_once([py, *derive_args()], env[tag], where))
            derive_md[tag].append(run_once([py, *derive_args("md")], env[tag], where))
        if args.peer:
            peer.append(run_once([args.peer, *PEER_ARGS], {}))
    for tag, _ in trees:
        rows.append((f"roofline derive decode-floor (h100-sxm, llama-2-7b) --format json --set batch=N (new N), warm{tag}", *median_pair(derive[tag])))
        rows.append((f"the same, --format md{tag}", *median_pair(derive_md[tag])))
    if peer:
        rows.append(("llm-analysis infer (h100-sxm-80gb, Llama-2-7b), same rounds", *median_pair(peer)))
    for label, argv in (("roofline --help", ["--help"]), ("roofline build, warm", ["build", "--out", "{out}"])):
        samples: dict[str, list[tuple[float, float]]] = {tag: [] for tag, _ in trees}
        for _ in range(n):
            for tag, where in trees:
                samples[tag].append(run_once([py, "-m", "roofline", *(a.replace("{out}", out[tag]) for a in argv)], env[tag], where))
        rows += [(label + tag, *median_pair(samples[tag])) for tag, _ in trees]

    cold: dict[str, list[tuple[float, float]]] = {tag: [] for tag, _ in trees}
    for _ in range(max(1, n // 2)):
        for tag, where in trees:
            cache, fresh = tempfile.mkdtemp(prefix="roofline-bench-cold-"), tempfile.mkdtemp(prefix="roofline-bench-fresh-")
            cold[tag].append(run_once([py, "-m", "roofline", "build", "--out", str(Path(fresh) / "out")],
                                      {"ROOFLINE_CACHE_DIR": cache, "PYTHONPATH": str(where)}, where))
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(fresh, ignore_errors=True)
    rows += [(f"roofline build, cold (empty cache, new folder){tag}", *median_pair(cold[tag])) for tag, _ in trees]

    sweep = ("import time; from roofline import api; "
             # a first, small sweep loads the sheet and compiles its plan: the figure is the evaluation of 10^6 points
             "api.sweep('decode-floor', 't_step', ['batch=1:2:1'], hardware=['h100-sxm'], model=['llama-3.1-70b']); "
             "import statistics; times = []\n"
             "for _ in range(5):\n"
             "    t = time.perf_counter()\n"
             "    api.sweep('decode-floor', 't_step', ['batch=1:1000000:1'], hardware=['h100-sxm'], model=['llama-3.1-70b'])\n"
             "    times.append(time.perf_counter() - t)\n"
             "print(statistics.median(times))")
    for tag, where in trees:
        times = [float(subprocess.run([py, "-c", sweep], capture_output=True, text=True, check=True, cwd=where,
                                      env={**BASE_ENV, **env[tag]}).stdout) for _ in range(max(1, n // 2))]
        rows.append((f"api.sweep decode-floor t_step, 10^6 points (in-process, evaluation only, median of 5 in each process){tag}", statistics.median(times), float("nan")))

    if args.pdf:
        for tag, where in trees:
            rows.append((f"roofline build --pdf, warm cache, new folder{tag}",
                         *run_once([py, "-m", "roofline", "build", "--pdf", "--out", tmp("roofline-bench-pdf-")], env[tag], where)))
        for tag, where in trees:  # the PDFs of the run above are unchanged: a build that recompiles only what changed reuses them
            rows.append((f"roofline build --pdf again, nothing changed{tag}",
                         *run_once([py, "-m", "roofline", "build", "--pdf", "--out", tmp("roofline-bench-pdf-")], env[tag], where)))
    if args.tests:
        for selection in ("not slow", "slow or not slow"):
            for tag, where in trees:
                rows.append((f"pytest -n auto -m '{selection}'{tag}",
                             *run_once([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto", "-m", selection],
                                       {"PYTHONPATH": str(where)}, where)))

    cpu = platform.processor() or platform.machine()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"Machine: {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()} {platform.release()}; "
             f"medians of {n} runs (cold build and sweep: {max(1, n // 2)}); Python's bytecode cache on (.pyc files written by a first run); "
             f"load average {load:.1f} at the end.", "",
             "| command | wall (s) | CPU (s) |", "|---|---:|---:|"]
    lines += [f"| {label} | {wall:.2f} | {'' if cpu_s != cpu_s else f'{cpu_s:.2f}'} |" for label, wall, cpu_s in rows]
    if not args.peer:
        lines += ["", "(no --peer given: llm-analysis not timed)"]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)
    for folder in temporary:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

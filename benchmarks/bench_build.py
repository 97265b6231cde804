"""Time what users wait for: start-up, one sheet, the build, and sweeps. Run: python benchmarks/bench_build.py [--quick]

Speed is measured here, not asserted in tests. Each figure is the median of N
runs (wall clock, seconds). "cold" runs with the solve cache off
(ROOFLINE_CACHE=off), "warm" with a cache directory filled by a first run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable


def median_time(f: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cli(argv: list[str], env: dict[str, str]) -> Callable[[], object]:
    def run() -> None:
        subprocess.run([sys.executable, "-m", "roofline", *argv], check=True, stdout=subprocess.DEVNULL, env={**os.environ, **env})

    return run


def main() -> int:
    n = 1 if "--quick" in sys.argv else 5
    cache_dir = tempfile.mkdtemp(prefix="roofline-bench-cache-")
    cold, warm = {"ROOFLINE_CACHE": "off"}, {"ROOFLINE_CACHE_DIR": cache_dir}
    out = tempfile.mkdtemp(prefix="roofline-bench-out-")
    cli(["build", "--out", out], warm)()  # fills the cache
    print(f"median of {n} runs, seconds")
    t = median_time(lambda: subprocess.run([sys.executable, "-c", "import sympy"], check=True), n)
    print(f"  python -c 'import sympy'                  {t:7.3f}")
    for label, argv, env in (
        ("roofline --help", ["--help"], cold),
        ("roofline list models", ["list", "models"], cold),
        ("roofline show model deepseek-v3", ["show", "model", "deepseek-v3"], cold),
        ("derive decode-floor --format json (cold)", ["derive", "decode-floor", "--format", "json"], cold),
        ("derive batch-knee --format json (cold)", ["derive", "batch-knee", "--format", "json"], cold),
        ("derive batch-knee --format json (warm)", ["derive", "batch-knee", "--format", "json"], warm),
        ("build (cold)", ["build", "--out", out], cold),
        ("build (warm)", ["build", "--out", out], warm),
    ):
        print(f"  {label:<42}{median_time(cli(argv, env), n):7.3f}")

    os.environ.update(warm)
    sys.path.insert(0, ".")
    from derivations.engine.sweep import parse_axis, sweep
    from derivations.questions.registry import get
    from roofline import api

    d = get("decode-floor")
    ctx = api.make_context(api.hardware("h100-sxm"), api.model("llama-3.1-70b"))
    for points in (1_000, 1_000_000):
        axes = [parse_axis(d, f"batch=1:{points}:1")]
        t = median_time(lambda axes=axes: sweep(d, ctx, "t_step", axes), max(1, n // 2))
        print(f"  sweep decode-floor t_step, {points:>9,} points  {t:7.3f}  ({t / points * 1e6:.3f} µs per point)")
    t = median_time(lambda: api.render_sweep(api.sweep("decode-floor", "t_step", ["batch=1:100000:1"]), "csv"), max(1, n // 2))
    print(f"  api.sweep + CSV, 100,000 points            {t:7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

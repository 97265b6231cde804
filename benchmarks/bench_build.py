"""Time the main job and its parts. Run: python benchmarks/bench_build.py

Speed is measured here, not asserted in tests. Prints one line per stage
(best of N wall-clock runs, seconds).
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable


def best(f: Callable[[], object], n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    t = time.perf_counter()
    registry = importlib.import_module("derivations.registry")
    print(f"import + build + verify all derivations: {time.perf_counter() - t:.3f} s ({len(registry.DERIVATIONS)} sheets)")
    from derivations.sheet import evaluate
    from roofline import api
    from roofline.build import render_all
    from tests.derivations.helpers import context

    ctx = context()
    for d in registry.DERIVATIONS:
        c = context(model=d.models[0], hardware=d.hardware[0])
        print(f"  evaluate {d.slug:<26} {best(lambda d=d, c=c: evaluate(d, c), 20) * 1e3:7.2f} ms")
    sheet = api.derive("decode-floor")
    for fmt in ("md", "tex", "json"):
        print(f"  render decode-floor .{fmt:<4}          {best(lambda fmt=fmt: api.render(sheet, fmt)) * 1e3:7.2f} ms")
    print(f"  derive decode-floor (grid of 6)       {best(lambda: api.derive('decode-floor')) * 1e3:7.2f} ms")
    print(f"render_all (every sheet, md+tex+json): {best(render_all, 3):.3f} s")
    del ctx
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ".")
    raise SystemExit(main())

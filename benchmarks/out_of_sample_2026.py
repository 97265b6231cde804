"""The step model against candidate measurements of the 2026 families it was not fitted to (issue 37).

Reads specs/measurements/candidates/hybrid-and-sparse-2026.toml (one source per `# ----` document) and predicts each mean
TPOT or ITL record with decode-floor's serving step (batch = the client's concurrency, prompt and output lengths as run,
the record's layout and formats) at the default engine profile; prints each record's error and the median absolute error
by model and chip. A median TPOT or an aggregate figure is left out (the step model predicts a mean step).

    python benchmarks/out_of_sample_2026.py
"""

from __future__ import annotations

import re
import statistics
import tomllib
import warnings
from pathlib import Path

from roofline import api

CANDIDATES = Path(__file__).resolve().parents[1] / "specs" / "measurements" / "candidates" / "hybrid-and-sparse-2026.toml"
CHIPS = ("h100-sxm", "h200", "b200", "mi355x")


def records() -> list[tuple[dict, dict, dict]]:
    docs = [tomllib.loads(text) for text in CANDIDATES.read_text().split("\n# ----\n")]
    return [(doc, doc.get("common", {}), r) for doc in docs for r in doc.get("record", [])]


def main() -> None:
    warnings.filterwarnings("ignore")
    rows = []
    for doc, common, r in records():
        def get(k: str, r: dict = r, common: dict = common) -> object:
            return r.get(k, common.get(k))
        value = str(r["value"])
        if get("metric") not in ("tpot", "itl") or get("hardware") not in CHIPS or not re.fullmatch(r"[\d.]+ ms", value):
            continue
        inputs = {"batch": str(r["batch"]), "tp": str(r.get("tp", 1)), "prompt_len": f"{get('input_tokens')} token",
                  "output_len": f"{get('output_tokens')} token"}
        sheet = api.derive("decode-floor", hardware=get("hardware"), model=r["model"], weights=get("weights"), kv=get("kv"),
                           math=get("math"), inputs=inputs)
        predicted = float(sheet.results["t_step"].float) * 1e3
        measured = float(value.split()[0])
        rows.append((doc["engine"], r["id"], get("hardware"), r["model"], predicted, measured, (predicted - measured) / measured))
    for engine, rid, chip, _, predicted, measured, err in rows:
        print(f"{engine:8s} {rid[:52]:52s} {chip:8s} measured {measured:7.2f} ms  predicted {predicted:7.2f} ms  {err:+.0%}")
    groups: dict[tuple[str, str], list[float]] = {}
    for _, _, chip, model, _, _, err in rows:
        groups.setdefault((model, chip), []).append(abs(err))
    for (model, chip), errs in sorted(groups.items()):
        print(f"{model} on {chip}: {len(errs)} records, median |error| {statistics.median(errs):.0%}")
    print(f"all: {len(rows)} records, median |error| {statistics.median(abs(r[-1]) for r in rows):.0%}")


if __name__ == "__main__":
    main()

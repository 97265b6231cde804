"""Issue 22, family 6: a sweep has one point cap per command, streams its output block by block (CSV, JSON lines, JSON) so memory
does not grow with the number of points, and sweeps time inputs as ranges with units."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc

import pytest
from roofline.derivations.engine import sweep as sweep_mod
from roofline.specs.catalog import hardware_names

from roofline import api
from roofline.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["sweep", *argv])
    out, err = capsys.readouterr()
    return code, out, err


#: (id, argv, the one error line's text): each refused before a point is evaluated
TOO_MANY = [
    ("every-chip-on-a-ten-million-grid", ["decode-floor", "t_step", "--over", "batch=1:1000000:1", "--over", "context=1024,2048,4096,8192,16384,32768,65536,131072,262144,524288",
                                        "--hardware", ",".join(hardware_names())],
     f"{len(hardware_names()) * 10_000_000:,} points in this sweep ({len(hardware_names())} chips x 1 model x 10,000,000 grid points); at most 10,000,000 per command"),
    ("chips-times-models", ["decode-floor", "t_step", "--over", "batch=1:1000000:1", "--over", "context=1024,2048,4096,8192,16384,32768",
                            "--hardware", "h100-sxm,h200", "--model", "llama-3.1-8b,llama-3.1-70b"],
     "24,000,000 points in this sweep (2 chips x 2 models x 6,000,000 grid points)"),
    ("one-grid-past-the-cap", ["decode-floor", "t_step", "--over", "batch=1:1000000:1", "--over", "context=1024:12288:1024"],
     "12,000,000 points in this sweep (1 chip x 1 model x 12,000,000 grid points)"),
]


@pytest.mark.parametrize(("case", "argv", "message"), TOO_MANY, ids=[c[0] for c in TOO_MANY])
def test_one_point_cap_per_command(case, argv, message, capsys):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(sweep_mod, "BLOCK_POINTS", 7)


GRID = ["batch=1:40:1", "context=1024,8192,32768"]


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_the_output_is_written_block_by_block_and_equals_the_whole(fmt, small_blocks):
    pieces = list(api.sweep_pieces("decode-floor", "t_step", GRID, hardware=["h100-sxm", "h200"], fmt=fmt))
    whole = api.render_sweep(api.sweep("decode-floor", "t_step", GRID, hardware=["h100-sxm", "h200"]), fmt)
    assert len(pieces) > 2 * (40 * 3 // 7), "a piece per block of 7 points, for each chip"
    assert "".join(pieces) == whole


def test_json_is_the_same_document_as_before_streaming(small_blocks):
    results = api.sweep("batch-knee", "B_max_kv", ["tp=1,8"], model=["deepseek-v3"], hardware=["h200"], weights="fp8")
    text = api.render_sweep(results, "json")
    s = results.sweeps[0].sweep  # api.sweep returns a SweepTable (issue 28); its sweeps are what render_sweep writes
    doc = {"sheet_result": "B_max_kv", "unit": s.display_unit, "inputs": {"tp": "1"},
           "points": [{"hardware": "h200", "model": "deepseek-v3", "tp": t[0], "value": None if v is None else (int(v) if float(v).is_integer() else v),
                       **({"missing": why} if why else {})} for t, v, why in s.points()]}
    assert json.loads(text) == doc
    assert text == json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def test_json_lines_are_one_object_per_point_with_its_unit(capsys):
    code, out, _ = _run(capsys, "decode-floor", "t_step", "--over", "batch=1,8", "--over", "context=1024,8192", "--format", "jsonl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 4
    assert all(set(p) == {"hardware", "model", "batch", "context", "value", "unit"} and p["unit"] == "ms" for p in lines)


def _peak(points: int) -> int:
    sink = io.StringIO()
    tracemalloc.start()
    try:
        for piece in api.sweep_pieces("decode-floor", "t_step", [f"batch=1:{points}:1"], fmt="jsonl"):
            sink.write(piece)
            sink.seek(0)
            sink.truncate()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


#: What a point may add to a sweep's peak memory: its axis value and the arrays that make the range (a few floats). Holding
#: every point's text and value, as the sweep did before it streamed, costs about 500 bytes a point.
BYTES_PER_POINT = 64


def test_memory_does_not_grow_with_the_number_of_points(monkeypatch):
    """Twenty times the points, about the same peak: the grid is evaluated and written a block at a time."""
    monkeypatch.setattr(sweep_mod, "BLOCK_POINTS", 250)
    _peak(100)  # compile caches and imports, so both runs start warm
    small, large = _peak(1_000), _peak(20_000)
    assert large - small < BYTES_PER_POINT * (20_000 - 1_000), (small, large)


#: (id, --over, the texts of its values, in the input's unit)
TIME_RANGES = [
    ("t-fixed-by-half-milliseconds", "t_fixed=1ms:2ms:0.5ms", ["0.001", "0.0015", "0.002"]),
    ("all-reduce-latency-doubling", "ar_latency=1us:8us:log2", ["1e-06", "2e-06", "4e-06", "8e-06"]),
    ("mixed-units", "t_fixed=1ms:0.002s:500us", ["0.001", "0.0015", "0.002"]),
    ("plain-numbers-in-seconds", "t_fixed=0.001:0.002:0.0005", ["0.001", "0.0015", "0.002"]),
]


@pytest.mark.parametrize(("case", "over", "texts"), TIME_RANGES, ids=[c[0] for c in TIME_RANGES])
def test_time_inputs_sweep_as_ranges_with_units(case, over, texts, capsys):
    code, out, err = _run(capsys, "decode-floor", "t_step", "--over", over, "--set", "tp=2")
    rows = list(csv.reader(io.StringIO(out)))
    name = over.partition("=")[0]
    assert code == 0, err
    assert rows[0][2] == f"{name} [s]" and [r[2] for r in rows[1:]] == texts
    values = [float(r[3]) for r in rows[1:]]
    assert values == sorted(values) and values[0] < values[-1]  # more fixed time, a longer step


@pytest.mark.parametrize(("over", "message"), [
    ("t_fixed=1ms:2ms:1GB", "t_fixed: a range is START:STOP:STEP or START:STOP:log2"),
    ("t_fixed=2ms:1ms:0.5ms", "the range starts above its end"),
    ("t_fixed=1ms:2ms:0ms", "must be above zero"),
    ("t_fixed=-1ms:2ms:1ms", "expected a positive quantity"),
])
def test_a_bad_time_range_is_one_line(over, message, capsys):
    code, out, err = _run(capsys, "decode-floor", "t_step", "--over", over)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err, err

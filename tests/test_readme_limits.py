"""Every bound on input is a named constant, and the README's Limits table states it with its value."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from roofline.derivations.engine import bounded, cache, expansion, exprjson, formula, prose, sheet, sweep
from roofline.derivations.engine import context as ctx
from roofline.derivations.physics import leave_one_out, validation
from roofline.specs import catalog, derivation_files, measurements, models, quantities

from roofline import out_folder, userfile

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
LIMITS = README.split("## Limits", 1)[1].split("\n## ", 1)[0]

#: (the constant's name as the table gives it, its value, how the table writes the value)
BOUNDS = [
    ("specs.catalog.MAX_SPEC_BYTES", catalog.MAX_SPEC_BYTES, "1,000,000 bytes"),
    ("specs.derivation_files.MAX_DERIVATION_FILE_BYTES", derivation_files.MAX_DERIVATION_FILE_BYTES, "200,000 bytes"),
    ("specs.catalog.MAX_NESTING", catalog.MAX_NESTING, "32 levels"),
    ("specs.catalog.MAX_INT_DIGITS", catalog.MAX_INT_DIGITS, "4,000 digits"),
    ("specs.quantities.MAX_MAGNITUDE", quantities.MAX_MAGNITUDE, "1e-30 to 1e30"),
    ("specs.models.MAX_DIMENSION", models.MAX_DIMENSION, "10^7"),
    ("derivations.engine.context.MAX_COUNT", ctx.MAX_COUNT, "10^9"),
    ("derivations.engine.sheet.VALUE_LIMIT", sheet.VALUE_LIMIT, "1e-300 to 1e300"),
    ("derivations.engine.formula.MAX_CHARS", formula.MAX_CHARS, "2,000 characters"),
    ("`MAX_NODES`", formula.MAX_NODES, "500 nodes"),
    ("`MAX_DEPTH`", formula.MAX_DEPTH, "50 levels"),
    ("`MAX_EXPONENT`", formula.MAX_EXPONENT, "exponents up to 64"),
    ("`MAX_TOTAL_EXPONENT`", formula.MAX_TOTAL_EXPONENT, "nested exponents up to 4,096"),
    ("derivations.engine.prose.MAX_MATH_LENGTH", prose.MAX_MATH_LENGTH, "400 characters"),
    ("roofline.userfile.MAX_ITEMS", userfile.MAX_ITEMS, "200 each"),
    ("`MAX_TEXT`", userfile.MAX_TEXT, "2,000 characters"),
    ("roofline.userfile.MAX_TABLE_CELLS", userfile.MAX_TABLE_CELLS, "| 2,000 |"),
    ("derivations.engine.expansion.MAX_EXPANDED_TERMS", expansion.MAX_EXPANDED_TERMS, "600,000 terms"),
    ("`MAX_DEGREE`", expansion.MAX_DEGREE, "degree 4,096"),
    ("derivations.engine.bounded.SOLVE_CPU_SECONDS", bounded.SOLVE_CPU_SECONDS, "5 s of CPU time"),
    ("`SOLVE_MEMORY_BYTES`", bounded.SOLVE_MEMORY_BYTES, "2 GiB of memory"),
    ("derivations.engine.bounded.FILE_SOLVE_CPU_SECONDS", bounded.FILE_SOLVE_CPU_SECONDS, "20 s of CPU time"),
    ("derivations.engine.bounded.WALL_SECONDS", bounded.WALL_SECONDS, "120 s"),
    ("derivations.engine.sweep.MAX_POINTS", sweep.MAX_POINTS, "10,000,000"),
    ("derivations.engine.sweep.MAX_AXIS", sweep.MAX_AXIS, "1,000,000"),
    ("derivations.engine.sweep.BLOCK_POINTS", sweep.BLOCK_POINTS, "65,536"),
    ("derivations.engine.sweep.MAX_LAYOUTS", sweep.MAX_LAYOUTS, "1,024 layouts"),
    ("derivations.engine.cache.MAX_ENTRY_BYTES", cache.MAX_ENTRY_BYTES, "8 MiB"),
    ("derivations.engine.exprjson.MAX_NODES", exprjson.MAX_NODES, "200,000 nodes"),
    ("`MAX_DIGITS`", exprjson.MAX_DIGITS, "numbers of 4,000 digits"),
    ("specs.measurements.MIN_DECODE_STEP_S", measurements.MIN_DECODE_STEP_S, "0.1 ms to 60 s"),
    ("derivations.physics.validation.MAX_IMPLIED_MBU", validation.MAX_IMPLIED_MBU, "implied MBU at most 1"),
    ("derivations.physics.leave_one_out.MAX_LOO_PEERS", leave_one_out.MAX_LOO_PEERS, "| 16 |"),
    ("roofline.out_folder.MAX_OLD_ENTRIES", out_folder.MAX_OLD_ENTRIES, "10,000"),
]

#: what each constant's value must be for the table's text to be true
VALUES = {
    "1,000,000 bytes": 1_000_000, "200,000 bytes": 200_000, "32 levels": 32, "1e-30 to 1e30": 10**30, "10^7": 10**7, "10^9": 10**9,
    "1e-300 to 1e300": 10**300, "2,000 characters": 2000, "500 nodes": 500, "50 levels": 50, "exponents up to 64": 64,
    "nested exponents up to 4,096": 4096, "400 characters": 400, "200 each": 200, "| 2,000 |": 2000, "600,000 terms": 600_000,
    "degree 4,096": 4096, "5 s of CPU time": 5, "2 GiB of memory": 2 * 2**30, "20 s of CPU time": 20, "120 s": 120,
    "10,000,000": 10_000_000, "1,000,000": 1_000_000, "65,536": 65_536, "1,024 layouts": 1024, "4,000 digits": 4000, "8 MiB": 8 * 2**20, "200,000 nodes": 200_000,
    "numbers of 4,000 digits": 4000, "0.1 ms to 60 s": Fraction(1, 10_000), "implied MBU at most 1": 1, "| 16 |": 16, "10,000": 10_000,
    "4 MiB": 4 * 2**20, "256 files": 256,
}


@pytest.mark.parametrize(("name", "value", "text"), BOUNDS, ids=[b[0].strip("`") for b in BOUNDS])
def test_the_readme_states_every_bound_with_its_value(name, value, text):
    row = next((line for line in LIMITS.splitlines() if name in line and text in line), None)
    assert row is not None, f"the Limits table has no row naming {name} with {text!r}"
    assert value == VALUES[text], f"{name} is {value}, the README says {text}"

"""`roofline show`'s figures are computed in pint alone; they must equal the primitives."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from roofline.derivations.physics import glossary as gl
from roofline.derivations.physics import primitives as pr
from roofline.derivations.physics.facts import hardware_facts, model_facts
from roofline.specs.catalog import hardware_names, model_names
from roofline.specs.hardware import load_hardware
from roofline.specs.models import load_model
from roofline.specs.precisions import PRECISIONS


def _value(expr: sp.Expr, values: dict[sp.Symbol, Fraction]) -> Fraction:
    out = expr.xreplace({s: sp.Rational(v.numerator, v.denominator) for s, v in values.items()})
    return Fraction(int(out.p), int(out.q))


@pytest.mark.parametrize("name", hardware_names())
def test_ridge_point_equals_the_primitive(name: str) -> None:
    hw = load_hardware(name)
    facts = hardware_facts(hw)
    for precision, peak in hw.peak_dense.items():
        expected = _value(pr.ridge_point(), {gl.pi: Fraction(peak.to("flop/s").magnitude), gl.beta: Fraction(hw.memory_bandwidth.to("B/s").magnitude)})
        assert Fraction(facts[f"ridge_point_{precision}"].to("flop/B").magnitude) == expected


@pytest.mark.parametrize("name", model_names())
def test_kv_bytes_per_token_equals_the_primitive(name: str) -> None:
    m = load_model(name)
    facts = model_facts(m)
    for precision in ("bf16", "fp8"):
        b = Fraction(PRECISIONS[precision].bytes_per_element)
        expected = _value(pr.kv_bytes_per_token(), {gl.e_kv: Fraction(m.kv_elements_per_token()), gl.b_kv: b})
        assert Fraction(facts[f"kv_bytes_per_token_{precision}"].to("B/token").magnitude) == expected
        assert expected > 0

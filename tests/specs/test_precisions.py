from fractions import Fraction

import pytest
from roofline.specs.errors import SpecError
from roofline.specs.precisions import precision


@pytest.mark.parametrize("name, nbytes", [("bf16", 2), ("fp16", 2), ("fp8", 1), ("int8", 1), ("int4", Fraction(1, 2)), ("fp4", Fraction(1, 2))])
def test_bytes_per_element(name, nbytes):
    assert precision(name).bytes_per_element == nbytes


def test_int4_group_scale_overhead_is_explicit():
    assert precision("int4").bytes_per_element == Fraction(1, 2)
    assert precision("int4-g128").bytes_per_element == Fraction(1, 2) + Fraction(2, 128)
    assert "scale per 128" in precision("int4-g128").description


def test_weight_only_int4_runs_bf16_math():
    assert precision("int4").math == "bf16"
    assert precision("fp8").math == "fp8"


def test_unknown_precision_suggests():
    with pytest.raises(SpecError, match="did you mean bf16"):
        precision("bf61")

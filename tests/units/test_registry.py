import pint
import pytest
from roofline.units import Quantity, unit, ureg


def test_byte_is_its_own_dimension():
    assert unit("B").dimensionality == ureg.parse_units("byte").dimensionality
    assert not unit("B").dimensionless
    with pytest.raises(pint.DimensionalityError):
        Quantity("1 B") + 1


@pytest.mark.parametrize("a, b", [("B/s", "parameter/s"), ("flop", "B"), ("token", "parameter"), ("J", "W")])
def test_project_dimensions_are_distinct(a, b):
    assert unit(a).dimensionality != unit(b).dimensionality


def test_bandwidth_is_not_convertible_to_flops():
    with pytest.raises(pint.DimensionalityError):
        Quantity("3.35 TB/s").to("Tflop/s")


def test_decimal_prefixes_by_default_binary_by_name():
    assert Quantity("1 TB/s").to("B/s").magnitude == 10**12
    assert Quantity("1 GB").to("B").magnitude == 10**9
    assert Quantity("1 GiB").to("B").magnitude == 2**30
    assert Quantity("1 KiB").to("B").magnitude == 1024


def test_B_is_byte_not_bel_and_there_is_no_decibyte():
    """Collision check: pint's default B can be bel, and dB would shadow decibel."""
    assert ureg.get_name("B") == "byte"
    for name in ("bel", "decibel", "dB"):
        with pytest.raises(pint.UndefinedUnitError):
            ureg.parse_units(name)


def test_magnitudes_are_exact_fractions():
    q = Quantity("3.35 TB/s")
    assert q.to("B/s").magnitude == 3_350_000_000_000


def test_energy_is_power_times_time():
    assert Quantity("1 J").to("W*s").magnitude == 1
    assert (Quantity("700 W") / Quantity("100 token/s")).to("J/token").magnitude == 7

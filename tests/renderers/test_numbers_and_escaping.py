import pytest
import sympy as sp

from renderers import escape
from renderers.numbers import display, number_text
from units import unit, unit_text


def shown(value, u, preferred=None):
    s = display(sp.sympify(value), unit(u), preferred)
    return number_text(s.number), unit_text(s.unit)


def test_four_significant_figures_and_prefixes():
    assert shown(sp.Rational(14657536, 3271484375), "s") == ("4.480", "ms")
    assert shown(3_350_000_000_000, "B/s") == ("3.350", "TB/s")
    assert shown(989_400_000_000_000, "flop/s") == ("989.4", "Tflop/s")
    assert shown(sp.Rational(19788, 67), "flop/B") == ("295.3", "flop/B")


def test_exact_integers_in_full():
    assert shown(8_030_261_248, "parameter") == ("8,030,261,248", "parameter")


def test_preferred_unit_wins():
    assert shown(131_072, "B/token", "kB/token") == ("131.1", "kB/token")


def test_large_dimensionless_uses_powers_of_ten():
    assert shown(sp.Rational(3, 2) * 10**20, "1") == ("1.500e20", "1")


HOSTILE = r"x_{1}&%$#\input{/etc/hostname}"


def test_latex_escape_makes_hostile_text_literal():
    out = escape.latex(HOSTILE)
    assert "\\input" not in out.replace("\\textbackslash{}input", "")
    for ch in "&%$#_{}":
        assert f"\\{ch}" in out
    assert escape.latex("a\nb") == "a b" and escape.latex("é") == "?"


def test_markdown_escape_makes_hostile_text_literal():
    out = escape.markdown(HOSTILE + " <script> | *x*")
    assert "<script>" not in out and "\\|" in out and "\\*x\\*" in out and "\\$" in out


def test_code_span_cannot_be_closed_early():
    assert escape.markdown_code("a`b|c") == "`a'b\\|c`"


@pytest.mark.parametrize("value, u, preferred, expected", [
    (sp.Rational(1517, 10**8), "s", None, ("15.17", "µs")),
    (524_300, "flop", None, ("524.3", "kflop")),  # prefixable units take a prefix even when exact
    (sp.Float(524_300.0), "flop", None, ("524.3", "kflop")),
    (sp.Float(2.101e9), "flop", None, ("2.101", "Gflop")),
    (sp.Rational(1988, 1000), "s", None, ("1.988", "s")),
    (sp.Rational(2142, 10000), "1", None, ("0.2142", "1")),  # never grouped after the point
    (sp.Float(5.86e11), "flop", "Tflop", ("586.0", "Gflop")),  # the mantissa stays in [1, 1000): the sheet's unit yields
    (sp.Float(1.169e12), "B", "GB", ("1.169", "TB")),
    (sp.Float(35552.94), "token/s", None, ("35,553", "token/s")),  # no prefix for tokens: integer digits grouped
    (sp.Float(2.7e-5), "s", "ms", ("27.00", "µs")),  # four significant figures, trailing zeros kept
    (sp.Rational(19788, 67), "1", None, ("295.3", "1")),
])
def test_number_format_table(value, u, preferred, expected):
    assert shown(value, u, preferred) == expected

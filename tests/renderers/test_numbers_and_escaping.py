import pytest
import sympy as sp
from roofline.renderers import escape
from roofline.renderers.numbers import display, number_text
from roofline.units import unit, unit_text


def shown(value, u, preferred=None):
    s = display(sp.sympify(value), unit(u), preferred)
    return number_text(s.number), unit_text(s.unit)


def test_three_significant_figures_and_prefixes():
    assert shown(sp.Rational(14657536, 3271484375), "s") == ("4.48", "ms")
    assert shown(3_350_000_000_000, "B/s") == ("3.35", "TB/s")
    assert shown(989_400_000_000_000, "flop/s") == ("989", "Tflop/s")
    assert shown(sp.Rational(19788, 67), "flop/B") == ("295", "flop/B")


def test_exact_integers_in_full():
    assert shown(8_030_261_248, "parameter") == ("8,030,261,248", "parameter")


def test_preferred_unit_wins():
    assert shown(131_072, "B/token", "kB/token") == ("131", "kB/token")


def test_large_dimensionless_uses_powers_of_ten():
    assert shown(sp.Rational(3, 2) * 10**20, "1") == ("1.5e20", "1")


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


def test_a_link_is_made_only_of_a_safe_address():
    good = "https://example.com/a%20b?x=1&y=2#frag"
    assert escape.latex_url(good) == rf"\url{{{good}}}" and escape.markdown_url(good) == f"<{good}>"
    for bad in (r"https://x/}\input{/etc/hostname}", "https://x/a|b", "https://x/a>b", "https://x/a b", "javascript:alert(1)"):
        assert "\\url" not in escape.latex_url(bad) and "\\input" not in escape.latex_url(bad).replace("\\textbackslash{}input", "")
        assert not escape.markdown_url(bad).startswith("<")


def test_code_span_cannot_be_closed_early():
    assert escape.markdown_code("a`b|c") == "`a'b\\|c`"


@pytest.mark.parametrize("value, u, preferred, expected", [
    (sp.Rational(1517, 10**8), "s", None, ("15.2", "µs")),
    (524_300, "flop", None, ("524", "kflop")),  # prefixable units take a prefix even when exact
    (sp.Float(524_300.0), "flop", None, ("524", "kflop")),
    (sp.Float(2.101e9), "flop", None, ("2.1", "Gflop")),  # trailing zeros dropped: 2.10 reads 2.1
    (sp.Rational(1988, 1000), "s", None, ("1.99", "s")),
    (sp.Rational(2142, 10000), "1", None, ("0.214", "1")),  # never grouped after the point
    (sp.Float(5.86e11), "flop", "Tflop", ("586", "Gflop")),  # the mantissa stays in [1, 1000): the sheet's unit yields
    (sp.Float(1.169e12), "B", "GB", ("1.17", "TB")),
    (sp.Float(35552.94), "token/s", None, ("35,600", "token/s")),  # three figures, integer digits grouped from four on
    (sp.Float(1234.5), "1", None, ("1,230", "1")),
    (sp.Float(2.7e-5), "s", "ms", ("27", "µs")),
    (sp.Rational(19788, 67), "1", None, ("295", "1")),
    (sp.Float(0.99984), "flop/B", None, ("1", "flop/B")),  # whole to three figures prints whole (issue 21: 0.9999 flop/B)
    (sp.Float(7.9922), "flop/B", None, ("8", "flop/B")),  # and 7.992 that is 8 prints 8
    (sp.Float(7.95), "flop/B", None, ("7.95", "flop/B")),  # not within 0.1% of 8: three figures
    (sp.Float(9.996), "1", None, ("10", "1")),  # rounding up a decade: 10, not 10.0
    (sp.Float(0.83), "1", None, ("0.83", "1")),  # 0.8300 reads 0.83
    (sp.Float(9.243e-128), "1", None, ("9.24e-128", "1")),
    (sp.Float(0.0004), "1", None, ("4e-4", "1")),
])
def test_number_format_table(value, u, preferred, expected):
    assert shown(value, u, preferred) == expected


@pytest.mark.parametrize("value, u, expected_md, expected_tex", [
    (8192, "token", "8,192 tokens", r"\qty{8192}{\tokens}"),
    (1, "token", "1 token", r"\qty{1}{\token}"),
    (70_553_706_496, "parameter", "70,553,706,496 parameters", r"\qty{70553706496}{\params}"),
    (2, "B/parameter", "2 B/parameter", r"\qty{2}{\byte\per\param}"),
    (45.5, "token/s", "45.5 tokens/s", r"\qty{45.5}{\tokens\per\second}"),
    (2, "flop/(parameter*token)", "2 flop/(parameter·token)", r"\qty{2}{\flop\per\param\per\token}"),
])
def test_count_units_take_a_plural(value, u, expected_md, expected_tex):
    """Plural unit names after a number other than 1 (issue 21: "8,192 token"), in each format."""
    from roofline.renderers.targets import LATEX, MARKDOWN

    s = display(sp.nsimplify(value) if isinstance(value, float) else sp.Integer(value), unit(u))
    assert MARKDOWN.quantity_text(s) == expected_md
    assert LATEX.quantity_text(s) == expected_tex


def test_one_thousands_separator_per_format():
    """Text and Markdown write 8,192; the LaTeX sheets set siunitx to the same comma; Markdown math groups with {,}."""
    from roofline.renderers.targets import MARKDOWN
    from roofline.renderers.templates import TEMPLATES

    assert "group-separator={,}" in (TEMPLATES / "sheet.tex.j2").read_text()
    assert MARKDOWN.quantity_math(display(sp.Integer(8192), unit("token"))) == r"8{,}192\,\mathrm{tokens}"

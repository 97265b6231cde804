"""units.pintless against pint: the same names, texts, dimensions and exact factors, and no pint on import."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from functools import cache

import pint
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from roofline.units import Quantity, pintless, unit, unit_text, ureg

FIXED = (
    "ns", "µs", "us", "ms", "s", "sec", "second", "min", "h", "hour",
    "B", "kB", "MB", "GB", "TB", "PB", "EB", "KiB", "MiB", "GiB", "TiB", "PiB", "terabyte", "gibibyte",
    "flop", "kflop", "Mflop", "Gflop", "Tflop", "Pflop", "Eflop", "teraflop",
    "W", "kW", "J", "kJ", "Hz", "kHz", "%", "percent", "b", "kb", "Gb", "bit",
    "token", "tokens", "parameter", "parameters", "token/s", "tokens/s", "kB/token", "Tflop/s", "GB/s", "TB/s", "J/token",
    "flop/B", "B/(parameter)", "B/parameter", "flop/(parameter*token)", "flop/token**2", "W*s", "s*W", "token^2", "token**2",
    "1/s", "s^-1", "s**-1", "s**(-1)", "s^(+2)", "(B/s)**2", "B/s/token", "B/s*token", "B*B/B", "B/B", "%/%", "1", "", " ",
    "dimensionless", "B*dimensionless", "1/(s*B)", " B / s ", "kB / token", "s ** -1", "mmin", "Tis", "uB", "Eb", "pflop", "1**2/s",
)


def pint_facts(u: pint.Unit) -> dict:
    """What pint says of a unit, in the terms light answers in."""
    base = Quantity(Fraction(1), u).to_base_units()
    return {
        "items": dict(u._units),
        "text": unit_text(u),
        "dimensionality": dict(u.dimensionality),
        "factor": base.magnitude,
        "base": unit_text(base.units),
        "base_items": dict(base.units._units),
        "dimensionless": u.dimensionless,
    }


def light_facts(u: pintless.Unit) -> dict:
    return {
        "items": dict(u.items),
        "text": u.text,
        "dimensionality": dict(u.dimensionality),
        "factor": u.factor,
        "base": u.base().text,
        "base_items": dict(u.base().items),
        "dimensionless": u.dimensionless,
    }


def check_same(text: str) -> pintless.Unit:
    """pintless.unit(text) says what pint's unit(text) says; its text reads back to it; its names print as pint's."""
    lu = pintless.unit(text)
    facts = light_facts(lu)
    assert facts == pint_facts(unit(text)), text
    assert isinstance(lu.factor, Fraction)
    assert str(lu) == lu.text
    assert list(lu.items) == sorted(lu.items) and all(e != 0 for _, e in lu.items)
    assert list(lu.dimensionality) == sorted(lu.dimensionality)
    if pint_unit(lu.text) is not None:
        assert pintless.unit(lu.text) == lu, text
    else:  # a prefixed percent prints as "E%", which neither reads back ("E percent" to pint)
        with pytest.raises(pintless.LightUnitError):
            pintless.unit(lu.text)
    for name, _ in lu.items:
        assert pintless.symbol(name) == ureg.get_symbol(name)
        assert pintless.split_name(name) == ureg.parse_unit_name(name)[0][:2]
    return lu


@pytest.mark.parametrize("text", FIXED)
def test_fixed_units_match_pint(text):
    check_same(text)


@cache
def project_unit_strings() -> tuple[str, ...]:
    """Every unit string the project uses: symbols' units, sheets' display units, inputs' units."""
    from roofline.derivations.engine.context import SCENARIO_INPUTS
    from roofline.derivations.physics import glossary
    from roofline.derivations.questions import registry

    texts = {info.unit_text for info in glossary.GLOSSARY}
    texts |= {i.unit for i in SCENARIO_INPUTS}
    for d in registry.DERIVATIONS:
        texts |= {info.unit_text for info in d.symbols}
        texts |= set(d.display_units.values())
        texts |= {i.unit for i in d.inputs}
    return tuple(sorted(texts))


@pytest.mark.parametrize("text", ["s^(1/2)", "1/B^(1/2)", "MB^(1/2)", "flop/s^(3/2)", "token^(2/3)*W", "s**(1/2)", "s^(-1/2)"])
def test_a_root_of_a_unit_matches_pint(text):
    """A derivation file's formula may take a root of a unit (a step in s^(1/2)): pint's unit text writes it `s^(1/2)`, and
    the renderers read that text back (the build of such a file failed on it: tests/derivations/engine/test_work_bounds.py)."""
    check_same(text)


def test_a_root_with_no_exact_factor_is_refused():
    with pytest.raises(pintless.LightUnitError, match="no exact factor"):
        pintless.unit("kB^(1/2)").factor  # noqa: B018


def test_every_project_unit_matches_pint():
    texts = project_unit_strings()
    assert len(texts) > 20 and "flop/(parameter*token)" in texts
    for text in texts:
        check_same(text)


# -- random unit expressions -------------------------------------------------------------------------------------------

#: Unit spellings of definitions.txt (name, symbol, alias), read from pint; pint's `_units` also caches every prefixed
#: name it has parsed ("terabyte"), which are left out here.
UNIT_SPELLINGS = sorted(k for k, d in ureg._units.items() if k != "%" and ureg.parse_unit_name(d.name)[0][0] == "")
PREFIX_SPELLINGS = sorted(ureg._prefixes)


@st.composite
def unit_names(draw) -> str:
    """A prefix (or none) and a unit, by name, symbol or alias, sometimes plural: "kB", "terabyte", "usec", "Tis", "kBs"."""
    if draw(st.integers(0, 12)) == 0:
        return draw(st.sampled_from(("%", "dimensionless", "1")))
    prefix = draw(st.sampled_from(PREFIX_SPELLINGS))
    name = draw(st.sampled_from(UNIT_SPELLINGS))
    return prefix + name + draw(st.sampled_from(("", "", "", "s")))


@st.composite
def unit_expressions(draw) -> str:
    """Products and quotients of 1 to 3 powers (-3..3) of unit names, sometimes grouped: "kB/(s*token^2)"."""
    terms, ops = [], []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(unit_names())
        exp = draw(st.sampled_from((1, 1, 2, 3, -1, -2, -3)))
        if exp != 1 or draw(st.integers(0, 4)) == 0:
            name += draw(st.sampled_from(("**{}", "^{}", "**({})", "^({})", " ** {}"))).format(exp)
        terms.append(name)
        ops.append(draw(st.sampled_from(("*", "/", " * ", " / "))))
    if len(terms) == 3 and draw(st.booleans()):
        return f"{terms[0]}{ops[1]}({terms[1]}{ops[2]}{terms[2]})"
    return terms[0] + "".join(op + t for op, t in zip(ops[1:], terms[1:], strict=True))


def pint_unit(text: str) -> pint.Unit | None:
    try:
        return unit(text)
    except (pint.errors.PintError, ValueError, KeyError, AttributeError, TypeError):
        return None


def undefined_names(text: str) -> list[str]:
    """The names in a unit expression that pint does not know on their own."""
    return [name for name in re.findall(r"[^\W\d]\w*", text) if pint_unit(name) is None]


@settings(max_examples=200, deadline=None)
@given(unit_expressions(), unit_expressions(), st.integers(-3, 3))
def test_random_expressions_match_pint(a, b, n):
    pa, pb = pint_unit(a), pint_unit(b)
    for text, pu in ((a, pa), (b, pb)):
        if pu is None or undefined_names(text):
            # pint cancels names before it looks them up ("GiBs/GiBs" is dimensionless to pint); light refuses them
            with pytest.raises(pintless.LightUnitError):
                pintless.unit(text)
        else:
            check_same(text)
    if pa is None or pb is None or undefined_names(a) or undefined_names(b):
        return
    la, lb = pintless.unit(a), pintless.unit(b)
    for lu, pu in ((la * lb, pa * pb), (la / lb, pa / pb), (la**n, pa**n)):
        # pint's `u**0` keeps every name with exponent 0 ({'kilobyte': 0, 'second': 0}); light drops them
        assert dict(lu.items) == {name: e for name, e in pu._units.items() if e != 0}
        assert lu.text == unit_text(pu)
    if pa.dimensionality == pb.dimensionality:
        f = pintless.factor(la, lb)
        assert isinstance(f, Fraction) and f == Quantity(Fraction(1), pa).to(pb).magnitude
        assert pintless.convert(Fraction(3, 7), la, lb) == Fraction(3, 7) * f
    else:
        with pytest.raises(pintless.LightUnitError):
            pintless.factor(la, lb)
        with pytest.raises(pint.DimensionalityError):
            Quantity(Fraction(1), pa).to(pb)


@pytest.mark.parametrize("text", [
    "s**0", "s**-0", "s**0.5", "s**2.0", "s**02", "s**2**2", "s^2^2", "s^1/2)", "s^(1/0)", "s^(1/-2)", "s^(1.5/2)", "B s", "kB token", "2/s", "1.0/s", "10**3*B", "%s", "k%", "B%",
    "%%", "1%", "Bs", "kBs", "hs", "-s", "+s", "s**", "(B", "B)", "()", "B//s", "B per s", "B squared", "sq B", "s²", "μs", "B·s", "B×s",
    "1s", "s1", "B,s", "kilomillisecond", "terabyte2", "Ki", "kiB", "Kb", "nan", "inf", "B*nan", "2*s/2", "s/1e0", "B[", "[information]", "_",
    "B # s", "B;s", "B\\s", "s**-", "s**(2", "s**(-2))", "B\n/s", "s\n", "\xa0s", "B/\u2003s", "३",
])
def test_unit_refuses(text):
    with pytest.raises(pintless.LightUnitError):
        pintless.unit(text)


def test_names_and_symbols_match_pint():
    for prefix in PREFIX_SPELLINGS:
        for name in [*UNIT_SPELLINGS, "%"]:
            for suffix in ("", "s"):
                spelling = prefix + name + suffix
                candidates = ureg.parse_unit_name(spelling)
                if not candidates:
                    with pytest.raises(pintless.LightUnitError):
                        pintless.split_name(spelling)
                    with pytest.raises(pintless.LightUnitError):
                        pintless.symbol(spelling)
                    continue
                assert pintless.split_name(spelling) == candidates[0][:2], spelling
                assert pintless.symbol(spelling) == ureg.get_symbol(spelling), spelling
    assert pintless.symbol("terabyte") == "TB" and pintless.symbol("microsecond") == "µs" and pintless.symbol("teraflop") == "Tflop"
    assert pintless.symbol("parameter") == "parameter" and pintless.symbol("percent") == "%"
    assert pintless.split_name("terabyte") == ("tera", "byte") and pintless.split_name("second") == ("", "second")


def test_unit_items_are_full_names():
    assert pintless.Unit((("second", 1), ("terabyte", 1), ("second", -1))) == pintless.unit("TB")
    assert pintless.Unit((("byte", Fraction(2)),)).items == (("byte", 2),)
    for bad in ((("TB", 1),), (("kiloterabyte", 1),), (("nope", 1),), (("byte", 1.5),)):
        with pytest.raises(pintless.LightUnitError):
            pintless.Unit(bad)
    assert hash(pintless.unit("kB/token")) == hash(pintless.unit("kilobyte/token"))
    assert (pintless.unit("B") ** Fraction(1, 2)).text == unit_text(unit("B") ** Fraction(1, 2)) == "B^(1/2)"


# -- quantities --------------------------------------------------------------------------------------------------------

QUANTITY_UNITS = (
    "", "s", "ms", "µs", "us", "ns", "min", "h", "B", "kB", "EB", "exabyte", "Eflop", "Tflop/s", "TB/s", "GiB", "J", "kJ", "J/token", "W",
    "Hz", "%", "b", "Eb", "token", "tokens/s", "flop/(parameter*token)", "(B/s)", "1/s", "1", "dimensionless", "s^-1", "token**2",
)

decimals = st.decimals(allow_nan=False, allow_infinity=False).filter(
    lambda d: -40 <= d.adjusted() <= 40 and len(d.as_tuple().digits) <= 40 and abs(d.as_tuple().exponent) <= 80)


def literal_texts(d: Decimal) -> list[str]:
    return [str(d), f"{d:f}", f"{d:e}", f"{d:E}"]


@settings(max_examples=200, deadline=None)
@given(decimals, st.integers(0, 3), st.sampled_from(QUANTITY_UNITS), st.sampled_from(("", " ", "  ")))
def test_parse_quantity_matches_pint(d, form, unit_text_, sep):
    literal = literal_texts(d)[form]
    text = literal + sep + unit_text_
    glued_digit = sep == "" and unit_text_[:1].isdigit()  # "1" + "1/s" is the literal 11 and "/s"
    try:
        magnitude, lu = pintless.parse_quantity(text)
    except pintless.LightUnitError:
        exponent = any(c in literal for c in "eE")
        # the only refusals among these: a unit glued to a number it lengthens, or j/J glued to an exponent
        assert glued_digit or (sep == "" and exponent and unit_text_[:1] in ("j", "J")), text
        return
    q = Quantity(text)
    assert isinstance(magnitude, Fraction) and magnitude == q.magnitude, text
    assert glued_digit or magnitude == Fraction(literal), text
    assert dict(lu.items) == dict(q._units), text


@pytest.mark.parametrize("text, magnitude, unit_text_", [
    ("3.35 TB/s", Fraction(67, 20), "TB/s"), ("0.5ms", Fraction(1, 2), "ms"), ("86us", 86, "µs"), ("1e-3 s", Fraction(1, 1000), "s"),
    ("8", 8, "1"), ("4.7 µs", Fraction(47, 10), "µs"), ("4.7µs", Fraction(47, 10), "µs"), ("2 flop/(parameter*token)", 2, "flop/(parameter*token)"),
    ("-3 s", -3, "s"), ("+3 s", 3, "s"), (" 3 s ", 3, "s"), ("2%", 2, "%"), ("1e3Eflop", 1000, "Eflop"), ("1.5EB", Fraction(3, 2), "EB"),
    ("3(s)", 3, "s"), ("3 1/s", 3, "1/s"), ("1e400 B", 10**400, "B"), ("0.0 s", 0, "s"), ("1E+3 J", 1000, "J"), ("3J", 3, "J"),
])
def test_parse_quantity_examples(text, magnitude, unit_text_):
    m, u = pintless.parse_quantity(text)
    assert m == magnitude and isinstance(m, Fraction) and u.text == unit_text_
    q = Quantity(text)
    assert q.magnitude == m and dict(q._units) == dict(u.items)


@pytest.mark.parametrize("text", [
    "1/2 ms", "1,000 s", "nan", "inf", "-inf", "NaN s", "infinity", "0x10 s", "0b101 s", "1_000 s", "", "   ", "ms", "s 3", "- 3 s", "08 s", "007",
    "00.5 s", ".5 s", "1. s", "1.e3 s", "1e3J", "1e3j", "1.5e3J/s", "3 B s", "3 s per token", "2 * 3 s", "2**3 s", "2*s", "3e s", "3 s**0.5",
    "3 s**2**2", "3 (s", "3 s)", "3 µ%", "3 km", "3 μs", "3 s²", "3 B·s", "3 B×s", "3 ‰", "1e3 s#", "3+4 s", "3 1e3 s", "2 2 s", "3 s/2",
    "31/s", "3/s", "3 dimensionless s", "3 1s", "1e", "1e+", "--3 s", "+-3 s", "3..5 s", "3.5.5 s", "३ s", "1३ s", "3_s", "3 s_", "3\ns", "\n3 s", "3 s\n", "3\xa0s",
])
def test_parse_quantity_refuses(text):
    with pytest.raises(pintless.LightUnitError):
        pintless.parse_quantity(text)


# -- conversion --------------------------------------------------------------------------------------------------------

SAME_DIMENSION = (("s", "ms", "µs", "ns", "min", "h"), ("B", "kB", "GiB", "EB", "b", "Pb"), ("J/token", "W*s/token", "kJ/token"),
                  ("1", "%", "B/kB"), ("Tflop/s", "flop/s", "kflop/ms"))


@settings(max_examples=200, deadline=None)
@given(st.data(), st.floats(allow_nan=False, allow_infinity=False))
def test_convert_float_rounds_once(data, x):
    group = data.draw(st.sampled_from(SAME_DIMENSION))
    a, b = pintless.unit(data.draw(st.sampled_from(group))), pintless.unit(data.draw(st.sampled_from(group)))
    f = pintless.factor(a, b)
    got = pintless.convert(x, a, b)
    assert isinstance(got, float)
    try:
        want = float(Fraction(x) * f)
    except OverflowError:
        want = math.copysign(math.inf, x)
    assert got == want
    pint_value = Quantity(x, unit(a.text)).to(unit(b.text)).magnitude  # pint rounds the factor first: one ulp apart at most
    assert not math.isfinite(pint_value) or abs(got - pint_value) <= 2 * math.ulp(got), (got, pint_value)


def test_convert_exact_and_edges():
    s, ms, EB, B = pintless.unit("s"), pintless.unit("ms"), pintless.unit("EB"), pintless.unit("B")
    assert pintless.convert(Fraction(1, 3), s, ms) == Fraction(1000, 3)
    assert pintless.convert(3, s, ms) == 3000 and isinstance(pintless.convert(3, s, ms), Fraction)
    assert pintless.convert(0.1, s, ms) == float(Fraction(0.1) * 1000)
    assert pintless.convert(1e308, EB, B) == math.inf and pintless.convert(-1e308, EB, B) == -math.inf
    assert pintless.convert(math.inf, s, ms) == math.inf and math.isnan(pintless.convert(math.nan, s, ms))
    assert pintless.convert(5e-324, ms, s) == 0.0
    with pytest.raises(pintless.LightUnitError):
        pintless.convert(1.0, s, B)
    with pytest.raises(TypeError):
        pintless.convert("1", s, ms)  # type: ignore[arg-type]


def test_import_needs_no_pint_sympy_or_numpy():
    code = ("import sys, roofline.units.pintless as L; L.unit('kB/token').text; L.parse_quantity('3.35 TB/s'); "
            "print(sorted(m for m in ('pint', 'sympy', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="kMGTPEmunpµiKBbsecflopWJHzhr%*/^()1 \t\n\xa0-+2.e३", max_size=14))
def test_whatever_light_reads_pint_reads_the_same(text):
    """Random strings: the few light accepts, pint reads to the same unit (as a unit string and after a number)."""
    try:
        lu = pintless.unit(text)
    except pintless.LightUnitError:
        return
    assert light_facts(lu) == pint_facts(unit(text)), text
    try:
        magnitude, qu = pintless.parse_quantity("2 " + text)
    except pintless.LightUnitError:
        return
    q = Quantity("2 " + text)
    assert magnitude == q.magnitude == 2 and dict(qu.items) == dict(q._units), text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789.eE+-_, \t\n\xa0sBkMJjµu%()/*^xn३", max_size=12))
def test_whatever_quantity_light_reads_pint_reads_the_same(text):
    """Random strings of digits, signs, exponents and units: what light reads, pint reads to the same quantity."""
    try:
        magnitude, lu = pintless.parse_quantity(text)
    except pintless.LightUnitError:
        return
    q = Quantity(text)
    assert isinstance(magnitude, Fraction) and magnitude == q.magnitude and dict(lu.items) == dict(q._units), text

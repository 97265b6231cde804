"""A formula printed once with slots and filled per use is exactly what sympy's printer gives with those names.

renderers.printer prints each formula with a marker per symbol (renderers.printed.Printed) and fills it with names or
numbers; the light path stores the forms and fills them without sympy. These tests print every step of every shipped
sheet both ways, with the symbols' names and with the strings numbers print as (units, powers of ten, a superscript),
and compare the whole formula, each term of a sum and each case of a case split.
"""

import json
import random

import pytest
import sympy as sp
from roofline.derivations.engine.declare import UNIT_MARKERS, At, Solve
from roofline.derivations.questions import registry
from roofline.renderers.forms import Forms, forms_of
from roofline.renderers.printed import Printed, number_latex
from roofline.renderers.printer import _Printer, printed, term_ranks

#: what a symbol prints as on a numbers line, in both targets: numbers with units, powers of ten, a missing value's name
NUMBER_STRINGS = (r"\qty{8192}{\token}", r"8{,}192\,\mathrm{tokens}", "0.8", r"1.2 \times 10^{-5}", r"\qty{3.35}{\tera\byte\per\second}",
                  r"x^{2}", "B", r"\num{2}", "12", r"b_{\mathrm{w}}")


def _direct(expr: sp.Expr, names: dict, ranks: dict, dots: bool) -> tuple[str, list[str], list[tuple[str, str]]]:
    """sympy's printer itself, with the names: the whole, each term of a sum with its sign, each case with its condition.
    A symbol in a symbolic exponent prints as its name without a unit (an exponent is a pure number): a twin of it, named as
    the slot printer tags it, stands there."""
    from roofline.renderers.printed import bare
    from roofline.renderers.printer import _EXPONENT

    if dots:
        twins: dict[sp.Symbol, sp.Symbol] = {}

        def tag(p: sp.Pow) -> sp.Pow:
            for x in p.exp.free_symbols:
                twins[x] = sp.Symbol(_EXPONENT + x.name, **x.assumptions0)
            return sp.Pow(p.base, p.exp.xreplace(twins), evaluate=False)

        expr = expr.replace(lambda e: isinstance(e, sp.Pow) and bool(e.exp.free_symbols) and not e.exp.is_Rational, tag)
        names = {**names, **{t: bare(names[x]) for x, t in twins.items()}}
    printer = _Printer({"symbol_names": names, "mul_symbol": "dot" if dots else None})
    printer.ranks = ranks
    terms = []
    if expr.is_Add:
        for i, term in enumerate(printer._ordered_terms(expr)):
            terms.append("- " + printer._print(-term) if i and term.could_extract_minus_sign() else ("+ " if i else "") + printer._print(term))
    cases = []
    if isinstance(expr, sp.Piecewise):
        cases = [(printer._print(v), r"\text{otherwise}" if c == sp.true else r"\text{if } " + printer._print(c)) for v, c in expr.args]
    return printer.doprint(expr), terms, cases


def _worded(expr: sp.Expr) -> bool:
    """Whether the numbers form of `expr` says part of it in words: a power of two of a rounded base-2 logarithm, or the
    ceiling of min(1, max(0, x)) (renderers.printer._SlotPrinter)."""
    from roofline.renderers.printer import _indicated

    return any((isinstance(e, sp.Pow) and e.base == 2 and isinstance(e.exp, sp.ceiling) and e.exp.has(sp.log))
               or (isinstance(e, sp.ceiling) and _indicated(e.args[0]) is not None) for e in sp.preorder_traversal(expr))


def _filled(form: Printed, names: dict[str, str]) -> tuple[str, list[str], list[tuple[str, str]]]:
    from roofline.renderers.printed import fill

    return form.fill(names), [fill(t, names) for t in form.terms], [(fill(v, names), fill(c, names)) for v, c in form.cases]


def _formulas(d):
    markers = {u: sp.S.One for u in UNIT_MARKERS}
    for s in d.steps:
        if isinstance(s, At):
            yield from (v.xreplace(markers) for _, v in s.where)
        else:
            yield (s.printed if isinstance(s, Solve) and s.printed is not None else s.expr).xreplace(markers)


@pytest.mark.parametrize("slug", registry.SLUGS)
def test_every_formula_filled_is_what_sympy_prints(slug: str) -> None:
    d = registry.get(slug)
    names = dict(d.symbols.latex_names())
    ranks = term_ranks(list(names), set(d.expanded))
    rng = random.Random(slug)
    for expr in _formulas(d):
        by_name = {s.name: v for s, v in names.items()}
        assert _filled(printed(expr, names, ranks, dots=False), {}) == _direct(expr, names, ranks, dots=False)
        if _worded(expr):
            continue  # its numbers line says a power of two or an indicator in words (test_printed_terms), not as sympy does
        assert _filled(printed(expr, ranks=ranks), by_name) == _direct(expr, names, ranks, dots=True)
        for _ in range(3):
            numbers = {s: rng.choice(NUMBER_STRINGS) for s in expr.free_symbols}
            assert _filled(printed(expr, ranks=ranks), {s.name: v for s, v in numbers.items()}) == _direct(expr, numbers, ranks, dots=True)


def test_a_power_brackets_its_base_by_what_fills_it() -> None:
    x = sp.Symbol("x", positive=True)
    form = printed(x**2 / 3)
    assert form.fill({"x": "x"}) == r"\frac{x^{2}}{3}"
    assert form.fill({"x": r"\qty{2}{\second}"}) == r"\frac{\left(\qty{2}{\second}\right)^{2}}{3}"
    assert form.fill({"x": "y^{3}"}) == r"\frac{\left(y^{3}\right)^{2}}{3}"


@pytest.mark.parametrize("slug", ["decode-floor", "speculative-decoding", "prefill-decode-crossover"])
def test_forms_round_trip_through_json(slug: str) -> None:
    f = forms_of(registry.get(slug))
    assert Forms.from_json(json.loads(json.dumps(f.to_json()))) == f


@pytest.mark.parametrize("x", [1, 0, -3, sp.Rational(1, 2), sp.Rational(-7, 3), 10**20])
def test_a_number_prints_as_sympy_prints_it(x) -> None:
    from fractions import Fraction

    r = sp.Rational(x)
    assert number_latex(Fraction(int(r.p), int(r.q))) == sp.latex(r)


def test_a_term_is_left_out_where_it_is_zero_and_kept_where_it_may_not_be():
    """A product is zero where one factor is; a sum, a max() or a min() where every part is (a roofline of zero bytes and
    zero flops); a term that is zero only where every part is stays while one part is not."""
    a, b, c, d, beta, pi = sp.symbols("a b c d beta pi", positive=True)
    expr = sp.Max(a / beta, b / pi) + sp.Max((c + d) / beta, c * d / pi) + a * c
    form = printed(expr)
    names = {s.name: s.name for s in expr.free_symbols}
    whole = form.lines(names, width=1e9)
    assert len(whole) == 1 and whole[0].count(r"\max") == 2
    dropped = form.lines(names, width=1e9, zero=frozenset({"c", "d"}))  # the second max() and the product a c are zero
    assert dropped[0].count(r"\max") == 1 and "c" not in dropped[0].replace(r"\frac", "")
    kept = form.lines(names, width=1e9, zero=frozenset({"c"}))  # (c + d)/beta is not zero: the second max() stays, a c goes
    assert kept[0].count(r"\max") == 2
    assert form.lines(names, width=1e9, zero=frozenset({"a", "b", "c", "d"})) == whole  # every term zero: the formula stays whole
    assert Printed.from_json(json.loads(json.dumps(form.to_json()))) == form


def test_a_symbol_in_an_exponent_is_filled_without_its_unit() -> None:
    """An exponent is a pure number: q / u_token prints as q with the marker set to 1, so its value goes in bare."""
    x, q, b = sp.symbols("x q B", positive=True)
    form = printed((1 - x) ** (b * q) * q)
    filled = form.fill({"x": "0.25", "q": r"1\,\mathrm{token}", "B": "64"})
    assert filled.count(r"\mathrm{token}") == 1 and r"^{64 \cdot 1}" in filled
    latex = form.fill({"x": r"\num{0.25}", "q": r"\qty{1}{\token}", "B": r"\num{64}"})  # as siunitx sets them
    assert latex.count(r"\token") == 1 and r"^{\num{64} \cdot \num{1}}" in latex

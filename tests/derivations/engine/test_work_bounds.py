"""Issue 22, family 5: a derivation file and `check` have a bound on work: the size of what is built and the time of every solve.

Each bound is a named constant (derivations.engine.expansion, derivations.engine.bounded, roofline.userfile, specs.derivation_files)
stated in the README. A file past one is refused in one line naming the file and the step; a solve past its CPU time is
refused with its reason; and a property test checks that any derivation file the parser accepts renders in bounded time.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofline.derivations.engine import bounded, expansion
from roofline.derivations.engine import formula as fm
from roofline.derivations.engine.sheet import NumericMismatchError
from roofline.derivations.engine.sweep import SweepError
from roofline.specs.catalog import shown_path
from roofline.specs.derivation_files import MAX_DERIVATION_FILE_BYTES
from roofline.specs.errors import SpecError
from roofline.units import RooflineError

from roofline import api, userfile
from roofline.cli import main

HEAD = 'title = "t"\nquestion = "q"\nresults = ["{result}"]\n[[inputs]]\nname = "x"\nunit = "1"\ndefault = "2"\nmeaning = "m"\n'


def _chain(n: int, formula: str, first: str = "x") -> str:
    text = HEAD.format(result=f"s_{n}") + f'[[steps]]\nname = "s_0"\nformula = "{first}"\nunit = "1"\nwhy = "w"\n'
    for k in range(1, n + 1):
        text += f'[[steps]]\nname = "s_{k}"\nformula = "{formula.format(p=f"s_{k - 1}")}"\nunit = "1"\nwhy = "w"\n'
    return text


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err and len(captured.err.splitlines()) == 1, captured.err
    return captured.err.strip()


#: (id, file text, what the error line says): each was minutes of work (or forever) before the bound
TOO_MUCH = [
    ("200-chained-squarings", _chain(199, "{p}*{p}"), f"has degree above {expansion.MAX_DEGREE:,} in its inputs"),
    ("chained-sums-that-double", _chain(40, "{p} + {p}*x"), f"expands to more than {expansion.MAX_EXPANDED_TERMS:,} terms"),
    ("a-power-of-a-power", _chain(3, "{p}**64"), f"has degree above {expansion.MAX_DEGREE:,}"),
    ("exp-of-exp-across-steps", _chain(2, "exp({p})"), "takes an exponential of an exponential"),
    ("a-file-past-its-size", "# " + "x" * MAX_DERIVATION_FILE_BYTES + "\n", f"expected a file of at most {MAX_DERIVATION_FILE_BYTES:,} bytes"),
    ("too-many-table-cells", HEAD.format(result="a") + '[[steps]]\nname = "a"\nformula = "x"\nunit = "1"\nwhy = "w"\n'
     + "".join(f'[[tables]]\ntitle = "t{i}"\ncolumns = ["a"]\n' + '[[tables.rows]]\nlabel = "r"\n' * 200 for i in range(11)),
     f"at most {userfile.MAX_TABLE_CELLS:,}"),
]


@pytest.mark.parametrize(("case", "text", "message"), TOO_MUCH, ids=[c[0] for c in TOO_MUCH])
def test_a_file_past_a_bound_is_refused_quickly_in_one_line(case, text, message, tmp_path, capsys):
    path = tmp_path / "x.toml"
    path.write_text(text)
    start = time.perf_counter()
    assert main(["derive", str(path)]) == 2
    assert time.perf_counter() - start < 30
    line = _one_line(capsys)
    assert str(path) in line and message in line, line


@pytest.fixture
def quick_bounds(monkeypatch):
    """The solve bounds at one second, so a test of them does not wait five."""
    monkeypatch.setattr(bounded, "SOLVE_CPU_SECONDS", 1)
    monkeypatch.setattr(bounded, "FILE_SOLVE_CPU_SECONDS", 1.5)


def test_a_check_solve_that_does_not_finish_is_refused_with_its_reason(quick_bounds, capsys):
    """`B**(1/11) + B**(1/2) = 3` took 70 s; now it stops at the CPU bound and says so."""
    start = time.perf_counter()
    assert main(["check", "B**(1/11) + B**(1/2)", "--solve-for", "B", "--equals", "3"]) == 2
    assert time.perf_counter() - start < bounded.WALL_SECONDS
    line = _one_line(capsys)
    assert "the solve for B in B**(1/11) + B**(1/2) = 3 did not finish within 1 s of CPU time" in line


def test_a_derivation_file_solve_that_does_not_finish_is_refused_naming_its_step(quick_bounds, tmp_path, capsys):
    path = tmp_path / "slow.toml"
    path.write_text('title = "t"\nquestion = "q"\nresults = ["B_x"]\n'
                    '[[steps]]\nname = "lhs"\nformula = "B**(1/11) + B**(1/2)"\nunit = "1"\nwhy = "w"\n'
                    '[[steps]]\nname = "rhs"\nformula = "3"\nunit = "1"\nwhy = "w"\n'
                    '[[steps]]\nname = "B_x"\nsolve = "lhs = rhs"\nfor = "B"\nunit = "1"\nwhy = "w"\n')
    assert main(["derive", str(path)]) == 2
    line = _one_line(capsys)
    assert "B_x: solving lhs = rhs for B did not finish within 1 s of CPU time" in line


def _grab(n: int) -> bytes:
    return bytearray(n)


@pytest.mark.parametrize(("fn", "args", "kwargs", "message"), [
    (_grab, (3 * 2**30,), {"memory_bytes": 256 * 2**20}, "needs more than 0.25 GiB of memory"),
    (time.sleep, (0.01,), {"budget": bounded.Budget(0.0)}, "was not started"),
])
def test_the_bounded_child_reports_each_limit(fn, args, kwargs, message):
    with pytest.raises(bounded.LimitExceededError, match=message):
        bounded.run(fn, *args, what="the test", **kwargs)


def test_the_bounded_child_returns_values_and_raises_what_it_raised():
    assert bounded.run(sum, [1, 2, 3]) == 6
    with pytest.raises(SpecError, match="from the child"):
        bounded.run(_raise, "from the child")


def _raise(message: str) -> None:
    raise SpecError("x", None, message)


def test_shipped_sheets_stay_well_inside_the_bounds():
    """The bounds leave room: the largest shipped expansion, and its degree, are far below them."""
    from roofline.derivations.questions.registry import DERIVATIONS

    measure = expansion.Measure()
    for d in DERIVATIONS:
        for name, e in d.expanded.items():
            measure.check(d.slug, name, e)
    assert max(measure.size.values()) < expansion.MAX_EXPANDED_TERMS / 3
    assert max(measure.degree.values()) < expansion.MAX_DEGREE / 20


# --- property: any file the parser accepts renders in bounded time -------------------------------------

#: Formulas over the file's inputs (x, y) and glossary symbols, of any shape the language allows.
_FORMULA_PARTS = st.recursive(
    # mostly dimensionless leaves (so most formulas pass the unit check and get rendered), a few with units
    st.sampled_from(["x", "B", "2", "0.5", "1e3", "(y/y)", "(T/T)", "x*B", "x", "B", "y", "T", "beta", "P_active*b_w"]),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from([" + ", " - ", "*", "/"]), inner).map("".join),
        st.tuples(inner, st.sampled_from(["**2", "**(1/2)", "**64", "**-3"])).map(lambda t: f"({t[0]}){t[1]}"),
        st.tuples(st.sampled_from(["max", "min"]), inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(st.sampled_from(["sqrt", "log", "exp", "ceil", "floor"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
    ),
    max_leaves=8,
)
#: A rendered file of this kind takes about a second; the bound is generous for a loaded machine.
RENDER_SECONDS = 60


def _file(formulas: list[str], units: list[str], solve: bool) -> str:
    text = ('title = "Generated"\nquestion = "What does $x$ do?"\nresults = ["s0"]\n'
            '[[inputs]]\nname = "x"\nunit = "1"\ndefault = "3"\nmeaning = "m"\n'
            '[[inputs]]\nname = "y"\nunit = "s"\ndefault = "2 ms"\nmeaning = "n"\n')
    for i, (f, u) in enumerate(zip(formulas, units, strict=True)):
        text += f'[[steps]]\nname = "s{i}"\nformula = "{f}"\nunit = "{u}"\nwhy = "Step {i}: $\\\\frac{{a}}{{b}} < 1$."\n'
    if solve and len(formulas) > 1:
        text += '[[steps]]\nname = "root"\nsolve = "s0 = s1"\nfor = "x"\nunit = "1"\nwhy = "w"\nnone = "no root"\n'
    return text


def _unit_of(formula: str) -> str:
    """The unit the formula comes out in (so most generated files declare it right and get rendered), else "1"."""
    try:
        return fm.parse(formula, fm.symbol_table({"x": "1", "y": "s"})).unit_text
    except RooflineError:
        return "1"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_FORMULA_PARTS, st.booleans()), min_size=1, max_size=4), st.booleans())
def test_any_derivation_file_the_parser_accepts_renders_in_bounded_time(tmp_path, steps, solve):
    """Random formulas (powers up to 64, max, min, sqrt, log, exp, ceil, floor) in steps that declare their unit (or, one time
    in two, "1": often wrong), and a closed form between the first two: refused in one line, or rendered in bounded time."""
    path = tmp_path / "generated.toml"
    path.write_text(_file([f for f, _ in steps], [_unit_of(f) if right else "1" for f, right in steps], solve))
    start = time.perf_counter()
    try:
        sheet = api.derive(str(path))
    except RooflineError as err:  # refused: one line, naming the file
        assert "\n" not in str(err).split("\n    ")[0] and str(path) in str(err)
        return
    for fmt in ("md", "tex", "json"):
        assert api.render(sheet, fmt)
    assert time.perf_counter() - start < RENDER_SECONDS


def test_the_property_generator_makes_files_that_render(tmp_path):
    """The generator's simplest file is accepted and renders (so the property test is not refusing everything)."""
    path = tmp_path / "generated.toml"
    path.write_text(_file(["x*2", "x + 1"], ["1", "1"], True))
    sheet = api.derive(str(path))
    assert "s0" in sheet.results and "none" not in api.render(sheet, "md").split("## Headline results")[1].split("\n\n")[1]


@pytest.mark.parametrize("formula", ["(floor(0.5))**-3", "(floor(x/6))**-3"])
def test_a_zero_denominator_left_unevaluated_is_a_step_with_no_value(tmp_path, formula):
    """A file the property above found in CI: floor(1/2)**-3 is 1/0, which sympy's substitution left unevaluated and its
    40-digit evaluation raised as a ZeroDivisionError (a traceback). The step has no value here, and the sheet says why."""
    path = tmp_path / "generated.toml"
    path.write_text(_file([formula], ["1"], False))
    sheet = api.derive(str(path))
    assert sheet.results["s0"].missing and "zero denominator" in sheet.results["s0"].missing.reason
    assert "s0 is undefined here (a zero denominator)" in api.render(sheet, "md")


def test_a_step_in_a_root_of_a_unit_renders(tmp_path):
    """A file the property above found on a fresh clone: a step in s^(1/2) (a root of the input y, in s). The renderers read
    the step's unit from its text, and the pint-free units (units.pintless) refused `s^(1/2)`; they read a root now."""
    path = tmp_path / "generated.toml"
    path.write_text(_file(["(y)**(1/2)"], [_unit_of("(y)**(1/2)")], False))
    sheet = api.derive(str(path))
    assert sheet.results["s0"].unit == "s^(1/2)"
    for fmt in ("md", "tex", "json"):
        assert api.render(sheet, fmt)


@pytest.mark.parametrize("formula, value", [("max(x, x/log(B))", None), ("min(x, exp(1e3))", 3)])
def test_an_undefined_or_overflowing_operand_of_max_and_min(tmp_path, formula, value):
    """Two files the property above found: a max over x / log(1) (sympy cannot order its zoo) has no value, and
    min(x, exp(1000)) is x, in the compiled evaluation (whose exp overflows to inf) as in the exact one."""
    path = tmp_path / "generated.toml"
    path.write_text(_file([formula], [_unit_of(formula)], False))
    s0 = api.derive(str(path)).results["s0"]
    if value is None:
        assert s0.missing is not None and "undefined here" in s0.missing.reason
    else:
        assert s0.missing is None and s0.exact == value


def test_a_formula_the_two_evaluations_disagree_on_is_refused_naming_the_file(tmp_path):
    """sqrt(x**2 + 1e-192) - x cancels to 0 in float64 but not exactly: the table check, and a sweep's, refuse it in
    one line that names the user's file (it named only the derivation's slug)."""
    path = tmp_path / "generated.toml"
    path.write_text(_file(["sqrt(x**2 + (1e3)**-64) - x"], ["1"], False))
    with pytest.raises(NumericMismatchError) as err:
        api.derive(str(path))
    assert str(err.value).startswith(f"{shown_path(path)}: ") and "\n" not in str(err.value)
    with pytest.raises(SweepError) as swept:  # a sweep checks its first and last points the same way
        api.sweep(str(path), "s0", ["x=1:3:1"])
    assert str(swept.value).startswith(f"{shown_path(path)}: ") and "\n" not in str(swept.value)


def test_a_constant_beyond_float_range_is_one_line_naming_the_file(tmp_path):
    """Hypothesis found `((1e3)**64)**2` (10^384): the float code's literal overflowed and derive ended in a PlanError
    traceback. The literal is now infinite in float code, so the compiled and the exact evaluation are compared and the file
    is refused in one line (or its step has no value), never a traceback."""
    path = tmp_path / "generated.toml"
    path.write_text(_file(["((1e3)**64)**2"], ["1"], False))
    try:
        sheet = api.derive(str(path))
    except RooflineError as err:
        assert str(err).startswith(f"{shown_path(path)}: ") and "\n" not in str(err)
    else:
        assert sheet.results["s0"].missing is not None


def test_a_whole_part_too_large_to_find_is_out_of_range_on_both_paths(tmp_path):
    """A file the property above found in CI: ceil(exp(1e3)) (about 2e434) made sympy's evaluation give up finding its whole part
    (PrecisionExhausted, a traceback); the compiled evaluation overflowed. Both now say the step is out of range."""
    path = tmp_path / "generated.toml"
    path.write_text(_file(["ceil(exp(1e3))"], ["1"], False))
    sheet = api.derive(str(path))
    assert sheet.results["s0"].missing and "out of range" in sheet.results["s0"].missing.reason
    assert "s0 is out of range here" in api.render(sheet, "md")

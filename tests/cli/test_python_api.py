"""The Python API (issue 28): inputs as values, results as pint Quantities, sweeps as named arrays, the lazy front door,
the docstrings' examples, the API reference pages and the example notebook."""

from __future__ import annotations

import csv
import doctest
import importlib
import io
import re
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pint
import pytest
from roofline.derivations.engine.context import Input
from roofline.derivations.engine.sheet import NoValueError
from roofline.specs.errors import SpecError
from roofline.units import unit, ureg

import roofline
from roofline import api, apidoc, build_outputs

ROOT = Path(__file__).resolve().parents[2]
KV_OFFLOAD = str(ROOT / "examples" / "kv-offload.toml")
NOTEBOOK = ROOT / "examples" / "capacity-planning.ipynb"
HW, MODEL = "h100-sxm", "llama-3.1-8b"


def _every_input() -> list[tuple[str, Input]]:
    """Every input of decode-floor (the shared scenario and step-model inputs), and the two kv-offload.toml declares itself."""
    shared = api.get("decode-floor").inputs
    own = [i for i in api.user_derivation(KV_OFFLOAD).inputs if i.name not in {s.name for s in shared}]
    return [("decode-floor", i) for i in shared] + [(KV_OFFLOAD, i) for i in own]


def _another_value(inp: Input) -> Fraction:
    """A value in the input's domain other than its default, in the input's own unit."""
    m = Fraction(inp.parse(inp.default, "default").to(unit(inp.unit)).magnitude)
    if inp.domain in ("count", "whole", "at_least_one"):
        return m + 1
    return m * 3 / 4 if m else Fraction(1, 1000)


def _four_ways(inp: Input, m: Fraction) -> dict[str, object]:
    number = int(m) if m.denominator == 1 else float(m)
    assert Fraction(repr(number)) == m, "the test's value prints as the decimal it is"
    text = repr(number) if inp.unit == "1" else f"{number!r} {inp.unit}"
    # the Quantity in another unit of the same dimension, so the conversion is part of what is checked
    quantity = ureg.Quantity(m * 100, "percent") if inp.unit == "1" else ureg.Quantity(m / 1000, f"k{inp.unit}")
    return {"number": number, "quantity": quantity, "text": text, "old list": [f"{inp.name}={text}"]}


#: The layout's inputs are checked together (issue 24: ep divides the experts and the tp x dp GPUs; dp > 1 needs ep > 1), so
#: each is given on a MoE model beside the rest of a layout that its other value keeps consistent: (model, the rest, the
#: default sheet's whole layout).
LAYOUT = {"ep": ("mixtral-8x7b", {"dp": "4"}, {"dp": "4", "ep": "4"}), "dp": ("mixtral-8x7b", {"ep": "2"}, {"ep": "2", "dp": "4"})}


@pytest.mark.parametrize(("slug", "inp"), _every_input(), ids=lambda x: getattr(x, "name", Path(str(x)).stem))
def test_every_input_given_four_ways_gives_the_same_sheet(slug: str, inp: Input) -> None:
    m = _another_value(inp)
    model, rest, default_layout = LAYOUT.get(inp.name, (MODEL, {}, {}))
    sheets = {}
    for way, value in _four_ways(inp, m).items():
        given = {"overrides": [*(f"{k}={v}" for k, v in rest.items()), *value]} if way == "old list" else {"inputs": {**rest, inp.name: value}}
        sheets[way] = api.derive(slug, HW, model, **given)
    first = sheets["number"]
    # the whole solved sheet compares equal (a derivation file is loaded afresh each time: its symbol table is a new object)
    same = {way: replace(s, derivation=first.derivation) == first for way, s in sheets.items()}
    assert all(same.values()), same
    assert api.render(sheets["old list"], "json") == api.render(first, "json")
    solved = next(i for i in first.inputs if i.name == inp.name)
    assert solved.is_set and solved.value.exact == m  # exactly the value given, in the input's unit
    default = _default_sheet(slug) if not default_layout else api.derive(slug, HW, model, inputs=default_layout)
    assert replace(default, derivation=first.derivation) != first, "the comparison can tell a changed input from the default"


@cache
def _default_sheet(slug: str) -> api.Sheet:
    return api.derive(slug, HW, MODEL)


def test_inputs_and_the_old_list_combine_but_never_name_an_input_twice() -> None:
    both = api.derive("decode-floor", HW, MODEL, overrides=["batch=8"], inputs={"context": 4096})
    assert both == api.derive("decode-floor", HW, MODEL, overrides=["batch=8", "context=4096"])
    with pytest.raises(SpecError, match=r"^inputs: batch: given in both inputs and overrides"):
        api.derive("decode-floor", HW, MODEL, overrides=["batch=8"], inputs={"batch": 8})


@pytest.mark.parametrize(("slug", "name", "value", "expected"), [
    ("decode-floor", "context", ureg("2 ms"), "found 2 ms"),
    ("decode-floor", "t_fixed", ureg("8 token"), "found 8 token"),
    ("decode-floor", "batch", ureg("3 GB"), "found 3 GB"),
    (KV_OFFLOAD, "pcie_bandwidth", ureg("64 GB"), "found 64 GB"),
])
def test_a_quantity_of_the_wrong_dimension_is_refused_with_one_line_naming_the_input(slug: str, name: str, value: pint.Quantity, expected: str) -> None:
    with pytest.raises(SpecError) as err:
        api.derive(slug, inputs={name: value})
    text = str(err.value)
    assert text.startswith(f"inputs: {name}: expected a quantity convertible to ") and text.endswith(expected)
    assert "\n" not in text


def test_a_quantity_of_another_registry_is_refused() -> None:
    """Refused, not converted: pint's default registry has no byte dimension, so its units cannot be trusted to mean ours."""
    other = pint.UnitRegistry()
    with pytest.raises(SpecError, match=r"^inputs: t_fixed: a Quantity from another pint registry .*build it with roofline's registry"):
        api.derive("decode-floor", inputs={"t_fixed": other("0.5 ms")})
    with pytest.raises(SpecError, match="another pint registry"):
        roofline.evaluate("B*T*e_kv*b_kv", model=MODEL, context=other("4096 dimensionless"))


@pytest.mark.parametrize(("name", "number", "text"), [
    ("batch", 0, "0"), ("batch", 2.5, "2.5"), ("tp", -2, "-2"), ("eta_bw", 1.5, "1.5"), ("context", 0.5, "0.5"),
    ("t_fixed", -0.001, "-1 ms"), ("batch", 2 * 10**9, "2000000000"),
])
def test_numbers_are_refused_exactly_as_set_refuses_their_text(name: str, number: float, text: str) -> None:
    """One code path: the same check and the same words, only the value found is shown as given."""
    with pytest.raises(SpecError) as by_number:
        api.derive("decode-floor", inputs={name: number})
    with pytest.raises(SpecError) as by_text:
        api.derive("decode-floor", overrides=[f"{name}={text}"])
    assert by_number.value.field == by_text.value.field == name
    assert by_number.value.where == "inputs" and by_text.value.where == "--set"
    assert by_number.value.message.rsplit(", found ", 1)[0] == by_text.value.message.rsplit(", found ", 1)[0]


@pytest.mark.parametrize("value", [True, None, [8], {"b": 8}, float("nan"), float("inf"), ureg.Quantity(np.array([1, 2]), "token")],
                         ids=repr)
def test_values_that_are_not_one_number_are_refused_with_one_line(value: object) -> None:
    with pytest.raises(SpecError) as err:
        api.derive("decode-floor", inputs={"context": value})
    assert str(err.value).startswith("inputs: context: ") and "\n" not in str(err.value)


def test_a_mapping_is_required_and_its_names_are_checked() -> None:
    with pytest.raises(SpecError, match=r"^inputs: expected a mapping NAME -> value"):
        api.derive("decode-floor", inputs=["batch=8"])  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"^inputs: bach: decode-floor has no input by that name \(did you mean batch\?\)"):
        api.derive("decode-floor", inputs={"bach": 8})


def _units_of_the_same_dimension(u: pint.Unit) -> set[pint.Unit]:
    """The unit in base units, with each of its units prefixed (kB/ks, GB/Gs, ...), and in percent when it is a plain number."""
    out = {ureg.Quantity(1, u).to_base_units().units}
    if u.dimensionless:
        return out | {ureg.Unit("percent")}
    for prefix in ("k", "G", "m", "u"):
        v = ureg.dimensionless
        for name, exp in u._units.items():
            v = v * ureg.Unit(prefix + name) ** exp
        out.add(v)
    return out


@pytest.mark.parametrize("slug", ["decode-floor", "batch-knee", "flops-per-token", "prefill-decode-crossover", "moe-experts"])
def test_results_and_steps_convert_to_any_unit_of_their_dimension(slug: str, sheets: list) -> None:
    sheet = next(s for s in sheets if s.derivation.slug == slug)  # api.derive(slug), derived once per session
    values = {**sheet.values, **sheet.results}
    assert set(sheet.results) <= set(sheet.values) == {s.step.name for s in sheet.steps}
    for name, v in values.items():
        if v.missing:
            continue
        q = v.quantity
        assert isinstance(v.unit, str)  # the unit as text; pint's Unit of it is unit(v.unit)
        assert isinstance(q, pint.Quantity) and q._REGISTRY is ureg and q.units == unit(v.unit) and q.magnitude == float(v.exact)
        if v.display_unit:
            assert v.to(v.display_unit).units == unit(v.display_unit)
        for target in _units_of_the_same_dimension(unit(v.unit)):
            factor = Fraction(ureg.Quantity(Fraction(1), v.unit).to(target).magnitude)  # exact
            got = v.to(target)
            assert got.units == target and got.magnitude == pytest.approx(float(v.exact * factor), rel=1e-12), (name, target)
            assert v.m_as(target) == got.magnitude
        wrong = "B" if ureg.Quantity(1, v.unit).dimensionality == ureg.Quantity(1, "token").dimensionality else "token"
        with pytest.raises(pint.DimensionalityError):
            v.to(wrong)


def test_a_missing_value_raises_with_its_reason_never_a_nan() -> None:
    sheet = api.derive("batch-knee", hardware="h200", model="deepseek-v3", weights="fp8")
    v = sheet.results["B_max_kv"]
    assert v.missing is not None and v.missing.kind == "none" and v.exact is None
    for read in (lambda: v.quantity, lambda: v.to("1"), lambda: v.m_as("1"), lambda: v.float):
        with pytest.raises(NoValueError) as err:
            read()
        assert str(err.value) == f"B_max_kv has no value here ({v.missing.label})"
        assert isinstance(err.value, ValueError) and isinstance(err.value, roofline.RooflineError)
    assert str(v) == v.missing.label  # the notebook's text says why


def test_a_sweep_is_named_arrays_with_units_that_match_its_csv() -> None:
    hardware = ["h100-sxm", "h200"]
    table = api.sweep("decode-floor", "t_step", over={"batch": [1, 2, 8], "context": np.array([1024, 32768])}, hardware=hardware, model=MODEL)
    assert isinstance(table, api.SweepTable) and list(table) == list(table.columns)
    assert table.columns == ("hardware", "model", "batch", "context", "t_step", "missing")
    assert table.units == {"hardware": None, "model": None, "batch": "1", "context": "token", "t_step": "ms", "missing": None}
    assert table.size == 2 * 3 * 2 and table["batch"].dtype.kind == "i" and table["t_step"].dtype == np.float64
    rows = list(csv.reader(io.StringIO(table.to_csv())))
    assert rows[0] == ["hardware", "model", "batch", "context [token]", "t_step [ms]", "missing"]
    for i, row in enumerate(rows[1:]):
        assert row == [table["hardware"][i], table["model"][i], str(table["batch"][i]), str(table["context"][i]), repr(float(table["t_step"][i])), ""]
    i = int(np.flatnonzero((table["hardware"] == "h200") & (table["batch"] == 8) & (table["context"] == 32768))[0])
    exact = api.derive("decode-floor", "h200", MODEL, inputs={"batch": 8, "context": 32768}).results["t_step"]
    assert table.m_as("t_step", "s")[i] == pytest.approx(exact.float, rel=1e-9)
    assert table.m_as("t_step", "us")[i] == pytest.approx(exact.m_as("us"), rel=1e-9)
    old = api.sweep("decode-floor", "t_step", ["batch=1,2,8", "context=1024,32768"], hardware=hardware, model=MODEL)
    assert old.to_csv() == table.to_csv() == api.render_sweep(table, "csv")
    records = table.to_numpy()
    assert records.dtype.names == table.columns and records["t_step"].tolist() == table["t_step"].tolist()
    with pytest.raises(ValueError, match="read-only"):
        table["t_step"][0] = 0.0


def test_sweep_values_take_every_form_and_are_checked_like_inputs() -> None:
    forms = [{"t_fixed": [0.001, ureg("2 ms"), "3 ms"]}, {"t_fixed": ureg.Quantity(np.array([1, 2, 3]), "ms")}, ["t_fixed=1ms,2ms,3ms"]]
    texts = {api.sweep("decode-floor", "t_step", over=f, model=MODEL)["t_step"].tobytes() for f in forms}
    assert len(texts) == 1
    assert api.sweep("decode-floor", "t_step", over={"batch": "1:8:log2"})["batch"].tolist() == [1, 2, 4, 8]
    with pytest.raises(SpecError, match=r"^over: batch: expected a whole number of at least 1"):
        api.sweep("decode-floor", "t_step", over={"batch": [1, 2.5]})
    with pytest.raises(SpecError, match=r"^over: batch: expected a positive quantity in 1, found 0"):
        api.sweep("decode-floor", "t_step", over={"batch": [1, 0]})
    with pytest.raises(SpecError, match=r"^over: batch: expected a list, range or array of values"):
        api.sweep("decode-floor", "t_step", over={"batch": 8})
    with pytest.raises(SpecError, match=r"^--set: batch: is also swept"):
        api.sweep("decode-floor", "t_step", over={"batch": [1, 2]}, inputs={"batch": 4})


def test_a_missing_point_is_nan_in_the_array_with_its_reason_beside_it() -> None:
    table = api.sweep("batch-knee", "B_max_kv", over={"tp": [1, 8]}, model="deepseek-v3", hardware="h200", weights="fp8")
    assert np.isnan(table["B_max_kv"][0]) and "weights alone" in table["missing"][0]
    assert table["B_max_kv"][1] > 0 and table["missing"][1] == ""


LAZY = ("import sys, roofline\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'pint', 'numpy') or m.split('.')[:2][-1] in roofline.LAYERS))\n")


def test_the_front_door_is_lazy_and_complete() -> None:
    r = subprocess.run([sys.executable, "-c", LAZY], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
    for name in ("derive", "sweep", "check", "hardware", "model"):
        assert name in roofline.__all__ and callable(getattr(roofline, name))
    assert roofline.derive is api.derive and roofline.ureg is ureg and set(roofline.__all__) <= set(dir(roofline))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        roofline.nope  # noqa: B018


PUBLIC_MODULES = ("roofline", "roofline.api", "roofline.formulas", "roofline.renderers.sweep_table", "roofline.derivations.engine.run", "roofline.apidoc",
                  "roofline.units.errors")


def test_every_public_name_has_a_docstring_with_an_example_and_type_hints() -> None:
    import inspect

    for module_name in ("roofline", "roofline.api"):
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            assert obj.__doc__ and ">>> " in obj.__doc__, f"{module_name}.{name}: no docstring example"
            if inspect.isfunction(obj):
                hints = obj.__annotations__
                assert "return" in hints and set(inspect.signature(obj).parameters) <= set(hints), f"{module_name}.{name}: type hints"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_the_docstring_examples_run(module_name: str) -> None:
    result = doctest.testmod(importlib.import_module(module_name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_the_api_reference_builds_and_the_site_links_it(built: dict[str, str | bytes]) -> None:
    folder = f"{build_outputs.SITE_DIR}/{build_outputs.API_DIR}"
    pages = {name[len(folder) + 1:]: text for name, text in built.items() if name.startswith(f"{folder}/")}
    assert set(pages) == {"index.html", "roofline.html", "roofline/api.html"}
    assert pages == apidoc.pages()  # the same bytes again: nothing in them depends on the run
    front = str(pages["roofline.html"])
    for name in roofline.__all__:
        assert f'id="{name}"' in front, f"{name} is not on the API page"
    assert front.count('<span class="gp">&gt;&gt;&gt; </span>') > 20, "the docstrings' examples, highlighted"
    assert not re.search(r" at 0x[0-9a-f]+", front) and "search.js" not in front
    index = str(built[f"{build_outputs.SITE_DIR}/index.html"])
    assert 'href="api/index.html"' in index
    assert "url=./roofline.html" in str(pages["index.html"])


def test_the_readme_python_section_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks
    scope: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), scope)  # the README's own text, not user input
    assert isinstance(scope["table"], api.SweepTable)


@pytest.mark.slow
def test_the_example_notebook_runs() -> None:
    """CI executes the notebook (nbclient and ipykernel, the `test` extra) as a user would, offline; it is committed without outputs."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code"), "commit it without outputs"
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plot cell draws a figure"
    text = "".join(o.get("text", "") for o in outputs)
    assert "t_step" in text and "fits" in text and "expected a quantity convertible to token" in text
    nbformat.validate(nb)

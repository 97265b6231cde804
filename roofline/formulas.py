"""Check your own derivation (`roofline.check` and friends): the glossary, unit inference, the solver and the LaTeX printer, as functions.

    >>> import roofline
    >>> roofline.check("P_active*b_w/beta", expect="ms")          # the inferred unit
    <Unit('second')>
    >>> t = roofline.evaluate("P_active*b_w/beta", hardware="h100-sxm", model="llama-3.1-8b")
    >>> round(float(t.to("ms").magnitude), 2)               # an exact Fraction magnitude
    4.48

A formula is a string in the formula language (`derivations.engine.formula`):
numbers, glossary names (`roofline list symbols`) or names you declare with a
unit, `+ - * / **`, parentheses and max, min, sqrt, log, exp, ceil, floor.
It is parsed by a whitelist over Python's `ast`, never evaluated as Python.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pint
import sympy as sp

from .derivations.engine import formula as fm
from .derivations.engine.context import BINDINGS, ENGINE_INPUTS, SCENARIO_INPUTS, input_value, make_context
from .derivations.engine.symbols import SymbolInfo, Symbols
from .derivations.physics import glossary as gl
from .renderers.printer import latex_math
from .specs.errors import SpecError, suggest
from .specs.hardware import load_hardware
from .specs.measurements import DEFAULT_PROFILE
from .specs.models import load_model
from .specs.quantities import parse_quantity
from .units import Quantity, unit_text, ureg

__all__ = ["Symbols", "check", "check_formula", "declare", "evaluate", "glossary", "latex", "solve", "symbols"]

#: Glossary symbols bound from the hardware spec (the rest of the spec-bound ones come from the model, or are conventions).
HARDWARE_SYMBOLS = frozenset({gl.pi, gl.beta, gl.C_mem, gl.M_sram, gl.beta_link, gl.n_SM, gl.M_smem, gl.M_llc, gl.n_blk,
                              gl.pi_bf16, gl.pi_fp8, gl.P_tdp})
#: Glossary symbols whose value is a number format or a convention: they need neither a chip nor a model.
CONVENTION_SYMBOLS = frozenset({gl.b_w, gl.b_kv, gl.b_a, gl.b_bf16, gl.b_fp8, gl.kappa, gl.kappa_attn, gl.u_param, gl.u_token, gl.u_bit})
#: The primed symbols of a second chip or model, which a check has no second spec to bind from.
SECOND_SYMBOLS = frozenset({*gl.SECOND_CHIP.values(), *gl.SECOND_MODEL.values()})
#: Used where a check needs a context but not the chip (or the model): never shown, since no value is read from it.
PLACEHOLDER_HARDWARE, PLACEHOLDER_MODEL = "h100-sxm", "llama-3.1-8b"


def glossary() -> tuple[SymbolInfo, ...]:
    """Every glossary symbol: name, unit, LaTeX and meaning.

    >>> import roofline
    >>> beta = next(s for s in roofline.glossary() if s.name == "beta")
    >>> beta.unit, beta.meaning
    (<Unit('byte / second')>, 'HBM bandwidth (datasheet)')
    """
    return tuple(gl.GLOSSARY)


def symbols(declared: Mapping[str, str] | None = None, **more: str) -> Symbols:
    """The glossary plus your own symbols, NAME -> unit: `symbols(beta_pcie="B/s", f_off="1")`.

    >>> import roofline
    >>> table = roofline.symbols(beta_pcie="B/s", f_off="1")
    >>> roofline.check("f_off*B*T*e_kv*b_kv/beta_pcie", symbols=table)
    <Unit('second')>
    """
    return fm.symbol_table({**(declared or {}), **more}, where="symbols")


def declare(table: Symbols, name: str, unit: str, latex: str | None = None, meaning: str = "") -> sp.Symbol:
    r"""Add one symbol with its unit (and optional LaTeX) to a table made by `symbols()`.

    >>> import roofline
    >>> table = roofline.symbols()
    >>> roofline.declare(table, "t_sync", "s", latex=r"t_{\mathrm{sync}}")
    t_sync
    >>> roofline.check("L*t_sync", symbols=table)
    <Unit('second')>
    """
    return fm.declare(table, name, unit, latex, meaning, where="declare")


def _table(table: Symbols | Mapping[str, str] | None) -> Symbols:
    if table is None:
        return gl.GLOSSARY
    if isinstance(table, Symbols):
        return table
    if isinstance(table, Mapping):
        return symbols(table)
    raise fm.FormulaError(f"expected symbols() or a mapping NAME -> UNIT, found {type(table).__name__}", where="symbols")


def parse(expr: str, table: Symbols | Mapping[str, str] | None = None, expect: str | None = None) -> fm.Formula:
    """The parsed, unit-checked formula."""
    return fm.parse(expr, _table(table), expect=expect)


def check(expr: str, expect: str | None = None, symbols: Symbols | Mapping[str, str] | None = None) -> pint.Unit:
    """The unit `expr` comes out in; raises FormulaError (with a caret) on an unknown name, refused syntax or a unit mismatch.

    `expect` ("ms", "B/s") must have the same dimension as the result.

    >>> import roofline
    >>> roofline.check("P_active*b_w/beta", expect="ms")
    <Unit('second')>
    """
    return parse(expr, symbols, expect).unit


def solve(lhs: str, rhs: str, for_: str, symbols: Symbols | Mapping[str, str] | None = None) -> fm.Solution:
    """`for_` such that lhs = rhs, in closed form: both sides unit-checked, the root checked against the equation.

    >>> import roofline
    >>> crossover = roofline.solve("P_active*b_w/beta", "kappa*P_active*B*q/pi",
    ...                            for_="B")
    >>> crossover.expr, crossover.verified
    (b_w*pi/(beta*kappa*q), 'symbolic')
    """
    table = _table(symbols)
    return fm.solve(fm.parse(lhs, table, where="lhs"), fm.parse(rhs, table, where="rhs"), for_, where="solve")


def latex(expr: str | fm.Formula | fm.Solution | sp.Expr, symbols: Symbols | Mapping[str, str] | None = None) -> str:
    """The formula in LaTeX, with the glossary's names (`P_active` is `P_{\\mathrm{act}}`).

    >>> import roofline
    >>> print(roofline.latex("P_active*b_w/beta"))
    \\frac{P_{\\mathrm{act}} \\cdot b_{w}}{\\beta}
    """
    table = _table(symbols)
    if isinstance(expr, str):
        expr = parse(expr, table).expr
    elif isinstance(expr, fm.Formula | fm.Solution):
        table = expr.symbols if isinstance(expr, fm.Formula) else expr.lhs.symbols
        expr = expr.expr
    return latex_math(expr, table.latex_names())


def evaluate(expr: str, hardware: str | Path | None = None, model: str | Path | None = None, *, weights: str | None = None,
             kv: str | None = None, math: str | None = None, symbols: Symbols | Mapping[str, str] | None = None,
             expect: str | None = None, engine: str | None = None, **inputs: Any) -> pint.Quantity:
    """The formula's value as a pint Quantity (in `expect` when given).

    Spec symbols come from `hardware` and `model` (a shipped name or a path);
    scenario inputs take their defaults unless given as keyword arguments by
    input name or symbol (`batch=8`, `context="4096"`, `T=4096`), and declared
    symbols must be given (`beta_pcie="64 GB/s"`); the engine inputs (eta_bw, t_layer, ...)
    take the values of the engine profile `engine` (default: fitted). Values are strings parsed by
    pint, numbers, or Quantities of `roofline.ureg`; a scenario input given by
    name is read and checked as `derive`'s inputs are (a number in its own unit).

    >>> import roofline
    >>> roofline.evaluate("B*T*e_kv*b_kv", model="llama-3.1-8b", batch=8, context=4096,
    ...                   expect="GB")
    <Quantity(8388608/1953125, 'gigabyte')>
    """
    checked = check_formula(expr, symbols, expect=expect, hardware=hardware, model=model, weights=weights, kv=kv, math=math,
                            inputs=inputs, evaluate=True, engine=engine)
    q = Quantity(exact_number(checked.value), checked.unit)
    return q.to(checked.expect) if checked.expect is not None else q


def check_formula(expr: str, symbols: Symbols | Mapping[str, str] | None = None, *, expect: str | None = None, solve_for: str | None = None,
                  equals: str | None = None, hardware: str | Path | None = None, model: str | Path | None = None,
                  weights: str | None = None, kv: str | None = None, math: str | None = None, inputs: Mapping[str, Any] | None = None,
                  evaluate: bool | None = None, engine: str | None = None) -> fm.Checked:
    """Everything `roofline check` prints: the formula or its solution, unit, and (with a context, or `evaluate=True`) its value.
    `engine` names the engine profile whose values the engine inputs (eta_bw, t_layer, ...) take where not set (default: fitted)."""
    table = _table(symbols)
    if (solve_for is None) != (equals is None):
        raise fm.FormulaError("--solve-for NAME and --equals EXPR go together", where="--solve-for")
    formula = fm.parse(expr, table)
    solution = None
    if solve_for is not None:
        solution = fm.solve(formula, fm.parse(equals, table, where="--equals"), solve_for)
    result_unit = solution.unit if solution else formula.unit
    want = None
    if expect is not None:
        want = fm.parse_unit(expect, "--expect")
        if want.dimensionality != result_unit.dimensionality:
            text = formula.text if solution is None else f"{solve_for} (solved)"
            raise fm.FormulaUnitError(f"expected a result in {unit_text(want)}, but {text[:60]} is in {unit_text(result_unit)}",
                                      formula.text if solution is None else "", 0, len(formula.text) if solution is None else None, "--expect")
    inputs = dict(inputs or {})
    if evaluate is None:
        evaluate = bool(hardware is not None or model is not None or inputs or any(p is not None for p in (weights, kv, math, engine)))
    if not evaluate:
        return fm.Checked(formula, solution, want)
    result = solution.expr if solution else formula.expr
    operands, label = _bind(result, table, hardware, model, weights, kv, math, inputs, engine)
    value = fm.substitute(result, {o.symbol: o.value for o in operands}, formula.text)
    return fm.Checked(formula, solution, want, value, operands, label)


def _bind(expr: sp.Expr, table: Symbols, hardware: str | Path | None, model: str | Path | None, weights: str | None, kv: str | None,
          math: str | None, inputs: Mapping[str, Any], engine: str | None = None) -> tuple[tuple[fm.Operand, ...], str]:
    """Each free symbol's exact value: given, a scenario default, or bound from the specs; one clean line when one is missing."""
    by_input = {i.name: i for i in SCENARIO_INPUTS}
    input_of = {i.symbol: i for i in SCENARIO_INPUTS}
    given: dict[sp.Symbol, tuple[pint.Quantity, str]] = {}
    for name, raw in inputs.items():
        if name in by_input:
            inp = by_input[name]
            symbol, q = inp.symbol, inp.value(raw, "--set")  # as derive's inputs: a number in the input's unit, a string, a Quantity
        elif name in table:
            symbol = table[name].symbol
            u = unit_text(table[name].unit)
            q = _as_quantity(raw, lambda text, u=u, name=name: parse_quantity(text, u, "--set", name, allow_zero=True), u, name)
        else:
            known = [*by_input, *(i.name for i in table)]
            raise SpecError("--set", str(name)[:40], f"neither a scenario input nor a symbol{suggest(str(name), known)}; "
                            f"inputs: {', '.join(by_input)}; or any symbol name")
        if symbol in given:
            raise SpecError("--set", name, f"given twice ({given[symbol][1]} and {name}); give each value once")
        given[symbol] = (q, name)
    needed = sorted(expr.free_symbols, key=lambda s: _order(table, s))
    hw_needed = [s for s in needed if s in HARDWARE_SYMBOLS and s not in given]
    model_needed = [s for s in needed if s in BINDINGS and s not in HARDWARE_SYMBOLS | CONVENTION_SYMBOLS | SECOND_SYMBOLS and s not in given]
    for what, option, missing in (("hardware", "--hardware", hw_needed if hardware is None else []),
                                  ("model", "--model", model_needed if model is None else [])):
        if missing:
            names = ", ".join(s.name for s in missing)
            raise SpecError(option, None, f"{names} {'comes' if len(missing) == 1 else 'come'} from the {what} spec: give {option} NAME "
                            f"(or --set {missing[0].name}=VALUE)")
    hw = load_hardware(_spec(hardware, "hardware") if hardware is not None else PLACEHOLDER_HARDWARE)
    mdl = load_model(_spec(model, "model") if model is not None else PLACEHOLDER_MODEL)
    if engine is not None and not isinstance(engine, str):
        raise SpecError("--engine", None, f"expected an engine profile name such as 'fitted', found {str(engine)[:40]!r}")
    ctx = make_context(hw, mdl, weights, kv, math, engine)
    operands = []
    for s in needed:
        u = table.info(s).unit
        if s in given:
            q, name = given[s]
            source = f"set ({name})"
        elif s in input_of and input_of[s].name in ENGINE_INPUTS:
            q = input_value(input_of[s], ctx)[0]
            source = f"engine profile {ctx.engine.name if ctx.engine is not None else DEFAULT_PROFILE} ({input_of[s].name})"
        elif s in input_of:
            q, source = input_of[s].parse(input_of[s].default, "default"), f"default ({input_of[s].name})"
        elif s in SECOND_SYMBOLS:
            raise SpecError("--set", s.name, "is a second chip's or model's symbol, which check does not bind; give it with --set")
        elif s in BINDINGS:
            q = BINDINGS[s](ctx)
            source = ("hardware" if s in HARDWARE_SYMBOLS else "convention" if s in CONVENTION_SYMBOLS else "model")
            if s in (gl.b_w, gl.b_bf16, gl.b_fp8, gl.b_kv, gl.b_a):
                source = "precision"
        else:
            raise SpecError("--set", s.name, f"has no value: give --set {s.name}=VALUE (in {unit_text(u)})")
        operands.append(fm.Operand(s, _exact(q, u), u, source))
    used_hw = hardware is not None and any(o.source == "hardware" for o in operands)
    used_model = model is not None and any(o.source == "model" for o in operands)
    label = " · ".join(x for x in (hw.name if used_hw else "", mdl.name if used_model else "") if x)
    return tuple(operands), label


def _spec(value: object, kind: str) -> str | Path:
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return Path(value)
    raise SpecError(kind, None, f"expected a shipped name or a path, found {type(value).__name__}")


def _as_quantity(raw: Any, parse_text: Any, unit: str, name: str) -> pint.Quantity:
    if isinstance(raw, pint.Quantity):
        if raw._REGISTRY is not ureg:
            raise SpecError("--set", name, f"a Quantity from another pint registry ({raw}); build it with roofline's registry (`from roofline import ureg`) or give a string")
        if raw.dimensionality != Quantity(1, unit).dimensionality:
            raise SpecError("--set", name, f"expected units convertible to {unit}, found {raw.units}")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, str | int | float | Fraction):
        raise SpecError("--set", name, f"expected a value such as \"8\" or \"64 GB/s\", found {type(raw).__name__}")
    return parse_text(str(raw))


def _exact(q: pint.Quantity, u: pint.Unit) -> sp.Expr:
    """A value in its symbol's unit as an exact sympy number (a float Quantity from Python is taken at its binary value)."""
    m = Fraction(q.to(u).magnitude)
    return sp.Rational(m.numerator, m.denominator)


def exact_number(v: sp.Expr) -> Fraction | float:
    """An exact value as a sheet's Value holds it: a Fraction where it is rational, else a float."""
    return Fraction(int(v.p), int(v.q)) if v.is_Rational else float(v)


def _order(table: Symbols, s: sp.Symbol) -> int:
    for i, info in enumerate(table):
        if info.symbol == s:
            return i
    return 10**6

"""Your own sheet, without Python: a derivation file in TOML, built into a real `Derivation`.

`roofline derive ./my-question.toml` reads the file with `tomllib`, checks
every field (one line naming the file and the field on any error, before
anything is printed), parses each step's formula with the formula language
(`derivations.engine.formula`, never `eval`) and hands the steps to the engine's
`derivation(...)`, so the sheet is unit-checked, its closed forms solved and
verified, and rendered exactly like a shipped one. `examples/kv-offload.toml`
is a complete file; the README documents the format.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .derivations.engine import bounded, prose
from .derivations.engine import formula as fm
from .derivations.engine.blueprint import by_name
from .derivations.engine.context import DOMAINS, ENGINE_INPUTS, SCENARIO_INPUTS, Input
from .derivations.engine.declare import Claim, Derivation, Row, Step, Table, derivation, solve
from .derivations.engine.symbols import Symbols
from .derivations.physics.glossary import GLOSSARY
from .specs import text as text_rule
from .specs.derivation_files import read_derivation_file
from .specs.errors import SpecError, shown, suggest
from .units import RooflineError, same_unit, unit_text

#: Most steps, inputs, tables, rows and list items (assumptions, ...) a file may hold.
MAX_ITEMS = 200
#: Longest prose string (a why, a question) in characters.
MAX_TEXT = 2000
#: Most table cells a file's sheet evaluates: its tables' rows times their columns, plus the headline table (the file's
#: chips times its models times its results). Each row is one exact evaluation of the sheet.
MAX_TABLE_CELLS = 2000

#: The headline table's chips and models when a file names none.
DEFAULT_HARDWARE = ("h100-sxm",)
DEFAULT_MODELS = ("llama-3.1-8b",)

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
_SOLVE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*=\s*([A-Za-z][A-Za-z0-9_]*)\s*$")

TOP_FIELDS = {
    "slug": False, "title": True, "question": True, "inputs": False, "defaults": False, "steps": True, "results": True,
    "assumptions": False, "takeaways": False, "scoring": False, "limits": False, "claims": False, "tables": False,
    "hardware": False, "models": False, "answer": False, "argument": False,
}
INPUT_FIELDS = {"name": True, "symbol": False, "unit": True, "default": True, "meaning": True, "domain": False, "latex": False}
STEP_FIELDS = {"name": True, "formula": False, "solve": False, "for": False, "keep": False, "rounds": False, "unit": True, "why": True,
               "title": False, "latex": False, "meaning": False, "none": False, "display": False}
CLAIM_FIELDS = {"text": True, "left": True, "right": True, "rel_tol": False, "convert": False, "at_least": False}
TABLE_FIELDS = {"title": True, "columns": True, "rows": True, "note": False}
ROW_FIELDS = {"label": False, "hardware": False, "model": False, "weights": False, "kv": False, "math": False, "set": False}


class UserFileError(SpecError):
    """A derivation file that cannot be built: the file, the field, what was expected and what was found."""


def is_derivation_file(slug_or_path: object) -> bool:
    """True for an argument of `roofline derive` that names a derivation file rather than a shipped sheet."""
    return isinstance(slug_or_path, str | Path) and str(slug_or_path).endswith(".toml")


def load(path: str | Path) -> Derivation:
    """Read (in the specs layer), check and build one derivation file."""
    data = read_derivation_file(path, UserFileError)
    return build(data, str(path), default_slug=_slug_from(Path(path).stem))


def _slug_from(stem: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
    return slug if _SLUG.match(slug) else "my-derivation"


def build(data: Mapping[str, Any], where: str, default_slug: str = "my-derivation") -> Derivation:
    """A Derivation from a parsed TOML table; `where` names the file in every error."""
    f = _Fields(where)
    f.table(data, "", TOP_FIELDS)
    slug = f.string(data, "slug", default=default_slug, limit=60)
    if not _SLUG.match(slug):
        raise UserFileError(where, "slug", f"expected lowercase words joined by '-' (e.g. 'kv-offload'), found {shown(slug)}")
    own = Symbols(parent=GLOSSARY)  # the file's inputs; the engine adds the steps to a child table of its own
    inputs = [_input(f, item, f"inputs[{i}]", own) for i, item in enumerate(f.array(data, "inputs", dict))]
    symbols = Symbols(parent=own)  # inputs and the steps so far, for parsing each next formula
    defaults = {str(k): f.string(f.table(data.get("defaults", {}), "defaults", None), str(k), path="defaults")
                for k in f.table(data.get("defaults", {}), "defaults", None)}
    for name in defaults:
        if name not in {i.name for i in SCENARIO_INPUTS}:
            raise UserFileError(where, f"defaults.{name[:40]}", f"not a shared scenario input{suggest(name, [i.name for i in SCENARIO_INPUTS])}; "
                                "give your own inputs their default in [[inputs]]")
        if name in ENGINE_INPUTS:
            raise UserFileError(where, f"defaults.{name[:40]}", "is supplied by the engine profile (--engine); pick a profile or --set it")
    steps: list[Step] = []
    display: dict[str, str] = {}
    for i, item in enumerate(f.array(data, "steps", dict, required=True)):
        step = _step(f, item, f"steps[{i}]", symbols, steps)
        steps.append(step)
        symbols.add(step.name, step.unit, step.latex, step.meaning or step.title or step.why)
        if "display" in item:
            display[step.name] = _display(f, item, f"steps[{i}]", step)
    names = [s.name for s in steps]
    results = f.array(data, "results", str, required=True)
    for j, r in enumerate(results):
        if r not in names:
            raise UserFileError(where, f"results[{j}]", f"{shown(r)} is not a step{suggest(r, names)}")
    claims = [_claim(f, item, f"claims[{i}]", names) for i, item in enumerate(f.array(data, "claims", dict))]
    tables = [_table(f, item, f"tables[{i}]", names, inputs) for i, item in enumerate(f.array(data, "tables", dict))]
    hardware = tuple(_spec_name(f, x, f"hardware[{j}]", "hardware") for j, x in enumerate(f.array(data, "hardware", str))) or DEFAULT_HARDWARE
    models = tuple(_spec_name(f, x, f"models[{j}]", "model") for j, x in enumerate(f.array(data, "models", str))) or DEFAULT_MODELS
    cells = len(hardware) * len(models) * len(results) + sum(len(t.rows) * len(t.columns) for t in tables)
    if cells > MAX_TABLE_CELLS:
        raise UserFileError(where, "tables", f"{cells:,} table cells (rows times columns, with the headline table's chips times models "
                            f"times results); at most {MAX_TABLE_CELLS:,}")
    texts = {k: tuple(f.array(data, k, str)) for k in ("assumptions", "takeaways", "scoring", "limits", "answer")}
    argument = tuple(f.array(data, "argument", str))
    for k, items in texts.items():
        for j, x in enumerate(items):
            _prose_links(where, f"{k}[{j}]", x)
    try:
        return derivation(slug, f.string(data, "title", required=True, limit=200), f.string(data, "question", required=True),
                          own, steps, results,
                          inputs=inputs, claims=claims, tables=tables, hardware=hardware, models=models,
                          display_units=display, defaults=defaults, argument=argument,
                          solve_budget=bounded.Budget(bounded.FILE_SOLVE_CPU_SECONDS), **texts)
    except fm.FormulaError as err:
        raise err.located(where) from None
    except UserFileError:
        raise  # already names the file and the field (a title or question read in the call above)
    except RooflineError as err:
        raise UserFileError(where, None, str(err)) from None


def _input(f: _Fields, item: Mapping[str, Any], path: str, symbols: Symbols) -> Input:
    f.table(item, path, INPUT_FIELDS)
    name = f.identifier(item, "name", path)
    if name in {i.name for i in SCENARIO_INPUTS}:
        raise UserFileError(f.where, f"{path}.name", f"{name!r} is a shared scenario input; set its default under [defaults] instead")
    symbol_name = f.identifier(item, "symbol", path, default=name)
    unit_str = f.string(item, "unit", path=path, required=True, limit=60)
    u = _unit(f, unit_str, f"{path}.unit")
    domain = f.string(item, "domain", path=path, default="positive")
    if domain not in DOMAINS:
        raise UserFileError(f.where, f"{path}.domain", f"expected one of {', '.join(DOMAINS)}, found {shown(domain)}")
    if domain in ("count", "whole", "fraction") and not u.dimensionless and unit_str not in ("token", "parameter"):
        raise UserFileError(f.where, f"{path}.domain", f"{domain!r} needs a plain number or a count of tokens or parameters, found unit {unit_str!r}")
    meaning = f.string(item, "meaning", path=path, required=True)
    latex = _latex(f, item, path)
    try:
        symbol = fm.declare(symbols, symbol_name, unit_str, latex, meaning, where=f"{f.where}: {path}.symbol")
    except fm.FormulaError as err:
        raise UserFileError(f.where, f"{path}.symbol", err.message) from None
    inp = Input(name, symbol, "", unit_text(u), meaning, domain)
    default = f.string(item, "default", path=path, required=True, limit=100)
    try:
        inp.parse(default, f"{f.where}: {path}.default")
    except SpecError as err:
        raise UserFileError(f.where, f"{path}.default", err.message) from None
    return Input(name, symbol, default, unit_text(u), meaning, domain)


def _step(f: _Fields, item: Mapping[str, Any], path: str, symbols: Symbols, earlier: list[Step]) -> Step:
    f.table(item, path, STEP_FIELDS)
    name = f.identifier(item, "name", path)
    if name in symbols:
        what = "an earlier step" if name in {s.name for s in earlier} else "a glossary symbol or an input"
        raise UserFileError(f.where, f"{path}.name", f"{name!r} is already {what}; one name means one thing everywhere")
    unit_str = f.string(item, "unit", path=path, required=True, limit=60)
    u = _unit(f, unit_str, f"{path}.unit")
    why = f.string(item, "why", path=path, required=True)
    title = f.string(item, "title", path=path, default="", limit=200)
    meaning = f.string(item, "meaning", path=path, default="", limit=400)
    none = f.string(item, "none", path=path, default="")
    latex = _latex(f, item, path)
    has_formula, has_solve = "formula" in item, "solve" in item
    if has_formula == has_solve:
        raise UserFileError(f.where, path, "a step has either `formula` or `solve` (with `for`), not " + ("both" if has_formula else "neither"))
    if has_formula:
        for k in ("for", "keep", "rounds"):
            if k in item:
                raise UserFileError(f.where, f"{path}.{k}", "only a `solve` step takes this field")
        text = f.string(item, "formula", path=path, limit=fm.MAX_CHARS + 1)
        try:
            parsed = fm.parse(text, symbols, where=f"{f.where}: {path}.formula")
        except fm.FormulaError as err:
            raise err from None
        if not same_unit(parsed.unit, u):
            same_dim = parsed.unit.dimensionality == u.dimensionality
            hint = (f"; declare unit = \"{parsed.unit_text}\" and show it in {unit_str} with display = \"{unit_str}\"" if same_dim else "")
            raise fm.FormulaUnitError(f"the formula is in {parsed.unit_text} but the step declares {unit_str}{hint}", text, 0, len(text),
                                      f"{f.where}: {path}.formula")
        return Step(name, parsed.expr, unit_text(u), why, latex, meaning, title, none)
    equation = f.string(item, "solve", path=path, limit=100)
    m = _SOLVE.match(equation)
    names = [s.name for s in earlier]
    if not m:
        raise UserFileError(f.where, f"{path}.solve", f"expected \"STEP = STEP\" naming two earlier steps, found {shown(equation)}")
    sides = []
    for side in m.groups():
        if side not in names:
            raise UserFileError(f.where, f"{path}.solve", f"{side!r} is not an earlier step{suggest(side, names)}")
        sides.append(earlier[names.index(side)])
    var_name = f.string(item, "for", path=path, required=True, limit=40)
    if var_name not in symbols:
        raise UserFileError(f.where, f"{path}.for", f"unknown symbol {shown(var_name)}{suggest(var_name, [i.name for i in symbols])}")
    var = symbols[var_name].symbol
    keep = []
    for j, k in enumerate(f.array(item, "keep", str, path=path)):
        if k not in names:
            raise UserFileError(f.where, f"{path}.keep[{j}]", f"{shown(k)} is not an earlier step{suggest(k, names)}")
        keep.append(earlier[names.index(k)])
    rounds = f.string(item, "rounds", path=path, default="up")
    if rounds not in ("up", "down"):
        raise UserFileError(f.where, f"{path}.rounds", f"expected \"up\" or \"down\", found {shown(rounds)}")
    var_unit = symbols[var_name].unit
    if not same_unit(var_unit, u):
        raise UserFileError(f.where, f"{path}.unit", f"solves for {var_name} in {unit_text(var_unit)}, so the unit must be {unit_text(var_unit)}; found {unit_str!r}")
    return solve(name, sides[0], sides[1], var, unit_text(u), why, latex, meaning, none=none, title=title, keep=keep, rounds=rounds)


def _display(f: _Fields, item: Mapping[str, Any], path: str, step: Step) -> str:
    """The unit a step is shown in: any unit of the step's dimension (`ms` for a step in `s`)."""
    text = f.string(item, "display", path=path, limit=40)
    u = _unit(f, text, f"{path}.display")
    if u.dimensionality != fm.parse_unit(step.unit).dimensionality:
        raise UserFileError(f.where, f"{path}.display", f"expected a unit convertible to {step.unit}, found {shown(text)}")
    return text


def _claim(f: _Fields, item: Mapping[str, Any], path: str, names: list[str]) -> Claim:
    f.table(item, path, CLAIM_FIELDS)
    left = f.string(item, "left", path=path, required=True, limit=40)
    if left not in names:
        raise UserFileError(f.where, f"{path}.left", f"{shown(left)} is not a step{suggest(left, names)}")
    right = f.string(item, "right", path=path, required=True, limit=100)
    if right not in names:
        _claimed_quantity(f, right, f"{path}.right")
    rel_tol = item.get("rel_tol", 0.05)
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, int | float) or not 0 <= rel_tol <= 1:
        raise UserFileError(f.where, f"{path}.rel_tol", f"expected a number from 0 to 1, found {shown(rel_tol)}")
    at_least = item.get("at_least", False)
    if not isinstance(at_least, bool):
        raise UserFileError(f.where, f"{path}.at_least", f"expected true or false, found {shown(at_least)}")
    return Claim(f.string(item, "text", path=path, required=True), left, right, float(rel_tol), None,
                 f.string(item, "convert", path=path, default="", limit=40), at_least)


#: A claimed quantity: a plain decimal number, then a unit (pint's unit parser only; it never evaluates an expression).
_CLAIMED = re.compile(r"^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?\s*([A-Za-z%µ][A-Za-z0-9_*/(). µ%-]*)?\s*$")


def _claimed_quantity(f: _Fields, text: str, path: str) -> None:
    m = _CLAIMED.match(text)
    if not m:
        raise UserFileError(f.where, path, f"expected a step name or a number and a unit such as \"10 ms\", found {shown(text)}")
    if m.group(1):
        _unit(f, m.group(1), path)


def _table(f: _Fields, item: Mapping[str, Any], path: str, names: list[str], inputs: list[Input]) -> Table:
    f.table(item, path, TABLE_FIELDS)
    columns = f.array(item, "columns", str, path=path, required=True)
    for j, c in enumerate(columns):
        if c not in names:
            raise UserFileError(f.where, f"{path}.columns[{j}]", f"{shown(c)} is not a step{suggest(c, names)}")
    input_names = [i.name for i in (*SCENARIO_INPUTS, *inputs)]
    named = by_name((*SCENARIO_INPUTS, *inputs))  # an input's older name sets it, as `--set` reads it
    rows = []
    for j, row in enumerate(f.array(item, "rows", dict, path=path, required=True)):
        rp = f"{path}.rows[{j}]"
        f.table(row, rp, ROW_FIELDS)
        settings = f.table(row.get("set", {}), f"{rp}.set", None)
        for k, v in settings.items():
            if k not in named:
                raise UserFileError(f.where, f"{rp}.set.{k[:40]}", f"not an input of this sheet{suggest(k, input_names)}")
            if not isinstance(v, str | int) or isinstance(v, bool):
                raise UserFileError(f.where, f"{rp}.set.{k[:40]}", f"expected a value as a string such as \"8\" or \"64 GB/s\", found {shown(v)}")
            inp = named[k]
            try:
                inp.parse(str(v), f"{f.where}: {rp}.set")
            except SpecError as err:
                raise UserFileError(f.where, f"{rp}.set.{k[:40]}", err.message) from None
        spec = {k: f.string(row, k, path=rp, default="", limit=200) or None for k in ("hardware", "model", "weights", "kv", "math")}
        for k in ("hardware", "model"):
            if spec[k]:
                spec[k] = _spec_name(f, spec[k], f"{rp}.{k}", k)
        rows.append(Row(f.string(row, "label", path=rp, default="", limit=200), set={named[k].name: str(v) for k, v in settings.items()}, **spec))
    return Table(f.string(item, "title", path=path, required=True, limit=200), tuple(rows), tuple(columns),
                 f.string(item, "note", path=path, default=""))


def _spec_name(f: _Fields, value: str, path: str, kind: str) -> str:
    """A shipped hardware or model name as it is; a path (a `/`, or a .toml / .json name) relative to the derivation file's folder."""
    from .specs.catalog import hardware_names, model_names
    from .specs.text import check_name

    check_name(value, f.where, path, f"a shipped {kind} name or a path")
    if "/" in value or value.endswith((".toml", ".json")):
        return str(Path(f.where).parent / value)
    known = hardware_names() if kind == "hardware" else model_names()
    if value not in known:
        raise UserFileError(f.where, path, f"unknown {kind} {shown(value)}{suggest(value, known)}; `roofline list {kind if kind == 'hardware' else 'models'}` lists them")
    return value


def _unit(f: _Fields, text: str, path: str) -> Any:
    try:
        return fm.parse_unit(text, path)
    except fm.FormulaError as err:
        raise UserFileError(f.where, path, err.message) from None


def _latex(f: _Fields, item: Mapping[str, Any], path: str) -> str | None:
    """A symbol's LaTeX, in the prose-math whitelist (no \\input, no catcode tricks, no ^^), rebuilt from its tokens."""
    if "latex" not in item:
        return None
    text = f.string(item, "latex", path=path, limit=100)
    if "$" in text or "\\sym" in text:
        raise UserFileError(f.where, f"{path}.latex", f"expected LaTeX math without $ or \\sym, found {shown(text)}")
    try:
        prose.check(f"${text}$", (), (), f"{path}.latex")
    except prose.ProseError as err:
        raise UserFileError(f.where, f"{path}.latex", str(err).split(": ", 1)[-1]) from None
    return prose.rebuild(text)


def _prose_links(where: str, path: str, text: str) -> None:
    """An @slug in the file's prose names a shipped sheet."""
    from .derivations.questions import registry

    shipped = registry.SLUGS if hasattr(registry, "SLUGS") else tuple(registry.BY_SLUG)
    try:
        slugs = prose.links(text)
    except prose.ProseError as err:
        raise UserFileError(where, path, str(err)) from None
    for slug in slugs:
        if slug not in shipped:
            raise UserFileError(where, path, f"links to @{slug}, which is not a shipped sheet{suggest(slug, shipped)}")


class _Fields:
    """Typed reads of a TOML table: each error names the file and the dotted field."""

    def __init__(self, where: str) -> None:
        self.where = where

    def table(self, value: object, path: str, fields: Mapping[str, bool] | None) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise UserFileError(self.where, path or None, f"expected a table, found {shown(value)}")
        if fields is not None:
            for k in value:
                if k not in fields:
                    raise UserFileError(self.where, _join(path, str(k)[:40]), f"unknown field{suggest(str(k), fields)}; fields: {', '.join(fields)}")
            for k, required in fields.items():
                if required and k not in value:
                    raise UserFileError(self.where, _join(path, k), "missing (required)" + _misplaced(value, k))
        elif len(value) > MAX_ITEMS:
            raise UserFileError(self.where, path, f"too many entries: {len(value)}, at most {MAX_ITEMS}")
        return value

    def string(self, data: Mapping[str, Any], key: str, path: str = "", *, required: bool = False, default: str | None = None,
               limit: int = MAX_TEXT) -> str:
        field = _join(path, key)
        if key not in data:
            if required or default is None:
                raise UserFileError(self.where, field, "missing (required)")
            return default
        value = data[key]
        if not isinstance(value, str):
            raise UserFileError(self.where, field, f"expected a string, found {shown(value)}")
        if len(value) > limit:
            raise UserFileError(self.where, field, f"too long: {len(value):,} characters, at most {limit:,}")
        why = text_rule.problem(value)
        if why is not None:
            raise UserFileError(self.where, field, why)
        return value

    def identifier(self, data: Mapping[str, Any], key: str, path: str, default: str | None = None) -> str:
        value = self.string(data, key, path=path, required=default is None, default=default, limit=40)
        if not _NAME.match(value) or value in fm.RESERVED:
            raise UserFileError(self.where, _join(path, key), f"expected a name of letters, digits and _ that starts with a letter "
                                f"(not a function name or keyword), found {shown(value)}")
        return value

    def array(self, data: Mapping[str, Any], key: str, kind: type, *, path: str = "", required: bool = False) -> list[Any]:
        field = _join(path, key)
        if key not in data:
            if required:
                raise UserFileError(self.where, field, "missing (required)")
            return []
        value = data[key]
        if not isinstance(value, list):
            raise UserFileError(self.where, field, f"expected a list, found {shown(value)}")
        if len(value) > MAX_ITEMS:
            raise UserFileError(self.where, field, f"too many entries: {len(value)}, at most {MAX_ITEMS}")
        if required and not value:
            raise UserFileError(self.where, field, "empty; give at least one")
        for j, x in enumerate(value):
            if not isinstance(x, kind):
                what = "a table" if kind is dict else "a string"
                raise UserFileError(self.where, f"{field}[{j}]", f"expected {what}, found {shown(x)}")
            if kind is str:
                self.string({key: x}, key, path=path, limit=MAX_TEXT)
        return value


def _misplaced(data: Mapping[str, Any], key: str) -> str:
    """A hint when a top-level key sits under a [[section]] (TOML puts a key after a header into that table)."""
    for section, items in data.items():
        if isinstance(items, list) and any(isinstance(x, dict) and key in x for x in items):
            return f"; a `{key} = ...` line after a [[{section}]] header belongs to that {section} entry: put top-level keys before the first [section]"
    return ""


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


__all__ = ["UserFileError", "build", "is_derivation_file", "load"]

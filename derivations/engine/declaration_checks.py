"""Checks of what a derivation declares beside its steps.

Its figures (every name a plot draws is a step, or an input where a mark may
be one, of the unit its axis shows), its claims (like compared with like), its
inputs (each bound to a spec or declared once, its defaults inside their
domains), its second chip or model (named exactly when primed symbols are
used) and its answer (its sentences mention every headline result).
`derivation()` (derivations.engine.declare) runs them when a sheet is built;
each refuses with a DeclarationError, which it reports as a DerivationError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import sympy as sp

from ...units import Quantity, RooflineError, UnitMismatchError, same_unit, unit, unit_text
from ..physics.glossary import SECOND_CHIP, SECOND_MODEL
from . import prose
from .blueprint import PLOT_KINDS, Claim, Plot, Table
from .context import BINDINGS, ENGINE_INPUTS, SCENARIO_INPUTS, Input
from .symbols import Symbols


class DeclarationError(RooflineError):
    """A plot, claim, input, default, second chip or model, or answer of a derivation is malformed."""


def check_claim_units(slug: str, c: Claim, table: Symbols) -> None:
    """A claim compares like with like: the same dimension on both sides, after its stated conversion."""
    if c.left not in table:
        raise DeclarationError(f"{slug}: claim {c.text[:40]!r} compares {c.left}, which is not a step")
    left = table[c.left].unit
    right = table[c.right].unit if c.right in table else Quantity(c.right).units
    if c.convert:
        per = unit(c.convert)
        left, right = (unit("1") if u.dimensionality == per.dimensionality else u for u in (left, right))
    if left.dimensionality != right.dimensionality:
        raise UnitMismatchError(f"{slug}: claim {c.text[:40]!r} compares {c.left} in {unit_text(left)} with {c.right} in {unit_text(right)}; "
                                "state the conversion (Claim.convert) or compare like with like")


def inputs_used(slug: str, symbols_of: Mapping[str, frozenset[sp.Symbol]], own: Sequence[Input], defaults: Mapping[str, str]) -> tuple[Input, ...]:
    used: set[sp.Symbol] = set().union(*symbols_of.values())
    by_symbol = {i.symbol: i for i in (*SCENARIO_INPUTS, *own)}
    unbound = [s for s in used if s not in BINDINGS and s not in by_symbol]
    if unbound:
        raise DeclarationError(f"{slug}: symbols {sorted(map(str, unbound))} have no binding to a spec and are not inputs")
    names = [i.name for i in own]
    clash = next((n for i, n in enumerate(names) if n in names[:i] or n in {x.name for x in SCENARIO_INPUTS}), None)
    if clash is not None:
        raise DeclarationError(f"{slug}: input {clash} is declared twice or shadows a shared scenario input; input names must be unique")
    every = [n for i in (*SCENARIO_INPUTS, *own) for n in (i.name, *i.aliases)]
    twice = next((n for i in (*SCENARIO_INPUTS, *own) for n in i.aliases if every.count(n) > 1), None)
    if twice is not None:
        raise DeclarationError(f"{slug}: the older name {twice} is another input's name or older name; each name sets one input")
    ordered = [i for i in SCENARIO_INPUTS if i.symbol in used] + [i for i in own if i.symbol in used]
    engine = sorted(set(defaults) & ENGINE_INPUTS)
    if engine:
        raise DeclarationError(f"{slug}: defaults for {engine}, which the engine profile supplies (--engine); a sheet does not override them")
    unknown = sorted(set(defaults) - {i.name for i in ordered})
    if unknown:
        raise DeclarationError(f"{slug}: defaults for {unknown}, which are not inputs of this sheet")
    for name, text in defaults.items():
        inp = next(i for i in ordered if i.name == name)
        inp.parse(text, f"{slug} default")  # a default outside the input's domain fails the build
    final = {i.name: replace(i, default=defaults[i.name]) if i.name in defaults else i for i in ordered}
    for i in ordered:
        if not i.follows:
            continue
        leader = final.get(i.follows)
        if leader is None or leader.unit != i.unit:
            raise DeclarationError(f"{slug}: input {i.name} follows {i.follows}, which is not an input of this sheet in {i.unit}")
        if i.name in defaults:
            raise DeclarationError(f"{slug}: a default for {i.name}, which follows {i.follows}; set the default of {i.follows}")
        seen = {i.name}
        while leader.follows:  # a chain's default is its head's
            if leader.name in seen:
                raise DeclarationError(f"{slug}: inputs {sorted(seen)} follow each other round a circle")
            seen.add(leader.name)
            leader = final[leader.follows]
        final[i.name] = replace(i, default=leader.default)
    return tuple(final.values())


def check_second(slug: str, symbols_of: Mapping[str, frozenset[sp.Symbol]], hardware: str | None, model: str | None) -> None:
    """A sheet that uses primed symbols names its default second chip or model; one that does not, names none."""
    used: set[sp.Symbol] = set().union(*symbols_of.values())
    for kind, twins, default in (("second_hardware", SECOND_CHIP, hardware), ("second_model", SECOND_MODEL, model)):
        uses = bool(used & set(twins.values()))
        if uses and default is None:
            raise DeclarationError(f"{slug}: its steps use primed symbols of a second chip or model; name the default with {kind}=")
        if default is not None and not uses:
            raise DeclarationError(f"{slug}: {kind}={default!r}, but no step uses its primed symbols")


def check_answer(slug: str, answer: Sequence[str], results: Sequence[str]) -> None:
    """The answer's sentences mention every headline result by placeholder: the reader meets each number on page one."""
    if not answer:
        return
    named = {n for text in answer for n in prose.placeholders(text)}
    missing = [r for r in results if r not in named]
    if missing:
        raise DeclarationError(f"{slug}: the answer's sentences do not mention the headline results {missing} (write {{name}} where each belongs)")


def check_plots(slug: str, plots: Sequence[Plot], table: Symbols, expanded: Mapping[str, sp.Expr], inputs: Sequence[Input],
                 tables: Sequence[Table]) -> None:
    """Every name a plot draws is a step (or, where a mark may be one, an input of the sheet) of the unit its axis shows."""
    names = {info.name for info in table}
    values = set(expanded) | {i.name for i in (*SCENARIO_INPUTS, *inputs)}
    by_name = {i.name: i for i in inputs}
    seen: set[str] = set()

    def unit_of(name: str) -> object:
        return table.info(by_name[name].symbol).unit if name in by_name and name not in expanded else table[name].unit

    for p in plots:
        where = f"{slug}: plot {p.name!r}"
        if not p.name or not all(c.isascii() and (c.isalnum() or c == "-") for c in p.name) or p.name in seen:
            raise DeclarationError(f"{where}: a plot name is unique and made of letters, digits and '-' (it names the file)")
        seen.add(p.name)
        if p.kind not in PLOT_KINDS:
            raise DeclarationError(f"{where}: kind {p.kind!r}; expected one of {', '.join(PLOT_KINDS)}")
        if set(p.log) - {"x", "y"}:
            raise DeclarationError(f"{where}: log={p.log!r}; expected 'x', 'y', 'xy' or ''")
        if not p.title:
            raise DeclarationError(f"{where}: a plot states its finding in a title")
        texts = [("caption", p.caption), ("title", p.title), *((f"label of {n}", t) for n, t in p.labels.items()),
                 *((f"row {r.label[:30]!r}", r.label) for r in p.rows)]
        for what, text in texts:
            try:
                prose.check(text, names, values, f"{where}: {what}")
            except prose.ProseError as err:
                raise DeclarationError(str(err)) from None
        drawn = (*p.y, *p.hlines, *p.points, *p.row_points, *((p.base,) if p.base else ()), *((p.x,) if p.kind == "scatter" else ()),
                 *((p.fits_up_to,) if p.fits_up_to else ()))
        marks = [n for n in p.vlines if not (p.kind == "sweep" and n in by_name)]
        batch_steps = [b for b in p.batches if b in expanded]
        unknown = [n for n in (*drawn, *marks, *batch_steps) if n not in expanded]
        if unknown:
            raise DeclarationError(f"{where}: draws {unknown}, which are not steps")
        stray = sorted((set(p.labels) - {*drawn, *p.vlines, *((p.x,) if p.kind == "sweep" else ())}) | (set(p.split) - set(p.y)))
        if stray and p.kind not in ("bars", "stack"):
            raise DeclarationError(f"{where}: labels or splits {stray} name nothing the plot draws")
        if set(p.split) - set(p.y):
            raise DeclarationError(f"{where}: splits {sorted(set(p.split) - set(p.y))}, which it does not draw")
        if p.kind == "sweep":
            _check_sweep(where, p, table, by_name, unit_of)
        elif p.kind == "roofline":
            _check_roofline(where, p, table, inputs, expanded)
        elif p.kind == "heatmap":
            if p.table is None or not 0 <= p.table < len(tables) or not p.y or set(p.y) - set(tables[p.table].columns):
                raise DeclarationError(f"{where}: a heat map draws columns of one of the sheet's tables")
        else:
            _check_bars(where, p, table, tables, by_name)


def _same(where: str, what: str, name: str, found: object, axis: object) -> None:
    if not same_unit(found, axis):
        raise UnitMismatchError(f"{where}: {what} {name} is in {unit_text(found)}, the axis in {unit_text(axis)}")


def _check_sweep(where: str, p: Plot, table: Symbols, by_name: Mapping[str, Input], unit_of: Callable[[str], object]) -> None:
    if p.x not in by_name:
        raise DeclarationError(f"{where}: sweeps {p.x!r}, which is not an input of this sheet")
    x_unit = table.info(by_name[p.x].symbol).unit
    if not p.y or len({table[n].unit for n in p.y}) != 1:
        raise DeclarationError(f"{where}: a sweep draws one or more steps of one unit")
    for name in (*p.vlines, *((p.fits_up_to,) if p.fits_up_to else ())):
        _same(where, "vertical line", name, unit_of(name), x_unit)
    for name in p.hlines:
        _same(where, "horizontal line", name, table[name].unit, table[p.y[0]].unit)
    for text in p.span:
        if by_name[p.x].parse(text, f"{where}: span").magnitude <= 0 and "x" in p.log:
            raise DeclarationError(f"{where}: span starts at {text}, which a log x axis cannot show: start above 0, or draw x linear (log='y' or '')")


def _check_roofline(where: str, p: Plot, table: Symbols, inputs: Sequence[Input], expanded: Mapping[str, sp.Expr]) -> None:
    if not p.points:
        raise DeclarationError(f"{where}: a roofline places one or more intensity steps")
    for name in p.points:
        _same(where, "point", name, table[name].unit, unit("flop/B"))
    for name in p.row_points:
        _same(where, "point", name, table[name].unit, unit("flop/B"))
    if p.batches:
        batch = next((i for i in inputs if i.name == "batch"), None)
        if batch is None:
            raise DeclarationError(f"{where}: batches are values of the sheet's batch input, which it has none of")
        for text in p.batches:
            if text in expanded:
                _same(where, "batch", text, table[text].unit, unit("1"))
            else:
                batch.parse(text, f"{where}: batches")


def _check_bars(where: str, p: Plot, table: Symbols, tables: Sequence[Table], by_name: Mapping[str, Input]) -> None:
    if not p.y:
        raise DeclarationError(f"{where}: a {p.kind} plot draws one or more steps")
    if p.kind in ("stack", "scatter") and p.table is not None and not 0 <= p.table < len(tables):
        raise DeclarationError(f"{where}: table {p.table}; the sheet has {len(tables)} tables")
    if p.kind == "scatter":
        if p.table is None:
            raise DeclarationError(f"{where}: a scatter draws the rows of one of the sheet's tables")
        _same(where, "x", p.x, table[p.x].unit, table[p.y[0]].unit)
        for name in p.hlines:
            _same(where, "band", name, table[name].unit, unit("1"))
        if p.group and p.group not in by_name:
            raise DeclarationError(f"{where}: groups by {p.group!r}, which is not an input of this sheet")
        return
    axis = table[p.y[0]].unit
    for name in (*p.y, *p.vlines, *((p.base,) if p.base else ())):
        _same(where, "bar" if name in p.y else "mark", name, table[name].unit, axis)
    if p.kind == "bars" and p.table is not None:
        raise DeclarationError(f"{where}: bars draw the sheet's own values; a stack draws a table's rows")

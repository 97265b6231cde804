"""Symbol tables: each symbol's unit, LaTeX form and one-line meaning, beside plain sympy."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pint
import sympy as sp

from ...units import RooflineError, unit, unit_text


@dataclass(frozen=True)
class SymbolInfo:
    symbol: sp.Symbol
    unit: pint.Unit
    latex: str
    meaning: str

    @property
    def name(self) -> str:
        return self.symbol.name

    @property
    def unit_text(self) -> str:
        return unit_text(self.unit)


def default_latex(name: str) -> str:
    """`t_mem` -> `t_{\\mathrm{mem}}`; `B_star` -> `B^{*}`; single letters stay."""
    if name.endswith("_star"):
        return default_latex(name[: -len("_star")]) + "^{*}"
    head, _, tail = name.partition("_")
    if not tail:
        return head if len(head) == 1 else rf"\mathrm{{{head}}}"
    tail_tex = tail.replace("_", r"\_")
    head_tex = head if len(head) == 1 else rf"\mathrm{{{head}}}"
    return rf"{head_tex}_{{\mathrm{{{tail_tex}}}}}"


_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


#: Names of the symbols whose values are shares, between 0 and 1 (Symbols.add's `share`): a closed form is checked at random
#: points inside (0, 1) for them, where the model holds, and at any positive value for every other symbol.
SHARES: set[str] = set()


class Symbols:
    """An ordered symbol table; a child table sees its parent's symbols (the glossary)."""

    def __init__(self, parent: Symbols | None = None) -> None:
        self.parent = parent
        self._own: dict[str, SymbolInfo] = {}

    def add(self, name: str, unit_str: str, latex: str | None, meaning: str, share: bool = False) -> sp.Symbol:
        """A new symbol (positive); `share`: its values lie between 0 and 1 (a hit rate), where `1 - x` stays nonnegative, and
        the closed forms are checked at such values (SHARES)."""
        if not _NAME.match(name):
            raise RooflineError(f"symbol name {name!r} is not an identifier")
        if name in self:
            raise RooflineError(f"symbol {name!r} is already defined; one name means one thing everywhere")
        symbol = sp.Symbol(name, positive=True)
        if share:
            SHARES.add(name)
        self._own[name] = SymbolInfo(symbol, unit(unit_str), latex or default_latex(name), meaning)
        return symbol

    def __contains__(self, name: object) -> bool:
        return name in self._own or (self.parent is not None and name in self.parent)

    def __getitem__(self, name: str) -> SymbolInfo:
        if name in self._own:
            return self._own[name]
        if self.parent is not None:
            return self.parent[name]
        raise KeyError(name)

    def info(self, symbol: sp.Symbol) -> SymbolInfo:
        return self[symbol.name]

    def __iter__(self) -> Iterator[SymbolInfo]:
        if self.parent is not None:
            yield from self.parent
        yield from self._own.values()

    def units(self) -> Mapping[sp.Symbol, pint.Unit]:
        return {i.symbol: i.unit for i in self}

    def latex_names(self) -> Mapping[sp.Symbol, str]:
        return {i.symbol: i.latex for i in self}

"""Solved sheets and their values that display themselves in Jupyter.

`api.derive` returns a `NotebookSheet`: the solved sheet itself (a subclass,
so everything that takes a Sheet takes it) with IPython's rich-display hooks.

- `_repr_markdown_`: the whole answer sheet as Markdown, the same text as
  `roofline derive --format md` (JupyterLab and VS Code render its `$` math).
- `_repr_latex_`: the derivation as one display-math block, every step as
  symbol = formula = numbers = result and the headline results (Markdown-style
  math: MathJax and nbconvert's LaTeX export need no siunitx).
- `sheet.results[name]` (and each step's and input's `.value`) is a `NotebookValue`: the number with its unit, rounded
  in the one place numbers are shaped (renderers.numbers), as text, Markdown
  and LaTeX; `str()` gives "4.48 ms". As every sheet value, it converts to a
  pint Quantity (`.to("us")`, `.quantity`; derivations.engine.sheet.Value).

The derivations layer stays free of rendering: the hooks live here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from ..derivations.engine.run import Sheet, Value
from . import forms as printed_forms
from . import markdown
from .equations import step_lines
from .targets import MARKDOWN
from .value_text import shown, value_text


@dataclass(frozen=True)
class NotebookValue(Value):
    """A sheet value (or its absence, with the reason) that prints with its unit."""

    def __str__(self) -> str:
        return _plain(self)

    def _repr_markdown_(self) -> str:
        return value_text(self, MARKDOWN)

    def _repr_latex_(self) -> str:
        if self.missing:
            return f"$\\text{{{self.missing.kind}}}$"
        return f"${MARKDOWN.quantity_math(shown(self))}$"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(_plain(self))


def _plain(v: Value) -> str:
    if v.missing:
        return v.missing.label
    from .numbers import plain

    return plain(v.exact, v.unit, v.display_unit)


@dataclass(frozen=True)
class NotebookSheet(Sheet):
    """A solved sheet (see derivations.engine.sheet.Sheet) that Jupyter shows as its answer sheet."""

    def _repr_markdown_(self) -> str:
        return markdown.render(self)

    def _repr_latex_(self) -> str:
        names = self.latex_names
        f = printed_forms.of(self)
        lines = []
        for st in self.steps:
            _, math_lines = step_lines(st, f[st.step.name], names, MARKDOWN)
            lines.append(" &= ".join(_split_first(math_lines[0])) + "".join(f" = {m}" for m in math_lines[1:]))
        for name, v in self.results.items():
            lines.append(f"{self.blueprint.symbol(name).latex} &= " + (f"\\text{{{v.missing.kind}}}" if v.missing else MARKDOWN.quantity_math(shown(v))))
        # the same TeX with no character a notebook's HTML front end could read as markup
        return "$$\n\\begin{aligned}\n" + " \\\\\n".join(MARKDOWN.math(x) for x in lines) + "\n\\end{aligned}\n$$"


def _split_first(line: str) -> tuple[str, str]:
    head, sep, tail = line.partition(" = ")
    return (head, tail) if sep else (line, "")


def wrap(sheet: Sheet) -> NotebookSheet:
    """The same solved sheet, with display hooks on it and on its headline values."""
    if isinstance(sheet, NotebookSheet):
        return sheet
    values = {f.name: getattr(sheet, f.name) for f in fields(Sheet)}
    values["results"] = {name: _value(v) for name, v in sheet.results.items()}
    values["steps"] = tuple(replace(st, value=_value(st.value)) for st in sheet.steps)
    values["inputs"] = tuple(replace(i, value=_value(i.value)) for i in sheet.inputs)
    return NotebookSheet(**values)


def _value(v: Value) -> NotebookValue:
    return NotebookValue(v.exact, v.unit, v.display_unit, v.missing, v.name)


__all__ = ["NotebookSheet", "NotebookValue", "wrap"]

"""What a sheet links for each of its figures, without drawing them: the file, the alt text, the caption.

Read from the derivation's plain data (derivations.engine.blueprint), so the light path (roofline.compiled) links a sheet's
figures without sympy, numpy or matplotlib; renderers.plots draws them.
"""

from __future__ import annotations

import re
from typing import Any

from ..derivations.engine.blueprint import Blueprint, Plot, StepEntry

_INLINE_MATH = re.compile(r"\$[^$]*\$")


def stem(slug: str, name: str) -> str:
    return f"{slug}-{name}"


def refs(d: Blueprint, folder: str, fmt: str) -> list[dict[str, Any]]:
    """What a sheet links for each of its plots, without drawing: path (`folder/<stem>.<fmt>`), alt text, caption (prose),
    and whether the figure is the sheet's answer."""
    return [{"path": f"{folder}/{stem(d.slug, p.name)}.{fmt}", "alt": alt_text(d, p), "caption": p.caption, "answer": p.answer}
            for p in d.plots]


def alt_text(d: Blueprint, p: Plot) -> str:
    """A plain-words description of a plot (Markdown alt text)."""
    names = ", ".join(plain(name(d, p, n)) for n in p.y)
    if p.kind == "sweep":
        inp = next(i for i in d.inputs if i.name == p.x)
        return f"{names} against {plain(inp.meaning)}"
    if p.kind == "roofline":
        return f"Roofline of each accelerator with {', '.join(plain(name(d, p, n)) for n in p.points)} placed on it"
    if p.kind == "bars":
        return f"Bars: {names}"
    if p.kind == "stack":
        return f"Stacked bars, one per setup: {names}"
    if p.kind == "scatter":
        return f"{names} against {plain(name(d, p, p.x))}, one point per row"
    return f"Heat map of {plain(name(d, p, p.y[0]))} and the rest of its table row by row"


def plain(text: str) -> str:
    """Prose as plain words: inline math without its markup, brackets as parentheses."""
    return _INLINE_MATH.sub(lambda m: m.group(0).strip("$").replace("\\", "").replace("{", "").replace("}", ""), text).replace("[", "(").replace("]", ")")


def name(d: Blueprint, p: Plot, step: str) -> str:
    """What a figure calls a step: the plot's label for it, else the step's title."""
    return p.label(step) or step_title(d.step(step))


def step_title(step: StepEntry) -> str:
    """The step's heading in words: its title, else its meaning, else its name."""
    text = step.title or step.meaning or step.name
    return text[:1].upper() + text[1:]

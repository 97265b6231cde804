"""What a sheet links for each of its figures, without drawing them: the file, the alt text, the caption.

Read from the derivation's plain data (derivations.engine.blueprint), so the light path (roofline.compiled) links a sheet's
figures without sympy, numpy or matplotlib; renderers.plots draws them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
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
    """A plain-words description of a plot (Markdown alt text): what each curve, bar or point is in words (a label set in math
    gives way to its step's title), each named once, against what (an input's meaning up to its first clause)."""
    text = _alt(d, p)
    return text[:1].upper() + text[1:]


def _alt(d: Blueprint, p: Plot) -> str:
    names = _listed(dict.fromkeys(_words(d, p, n) for n in p.y))
    if p.kind == "sweep":
        inp = next(i for i in d.inputs if i.name == p.x)
        return f"{names} against {clause(inp.meaning)}"
    if p.kind == "roofline":
        counted = Counter(_words(d, p, n) for n in p.points)
        points = _listed(f"{w} ({k})" if k > 1 else w for w, k in counted.items())
        return f"Roofline of each accelerator with {points} placed on it"
    if p.kind == "bars":
        return f"Bars: {names}"
    if p.kind == "stack":
        return f"Stacked bars, one per setup: {names}"
    if p.kind == "scatter":
        return f"{names} against {_words(d, p, p.x)}, one point per row"
    return f"Heat map of {_words(d, p, p.y[0])} and the rest of its table row by row"


def _words(d: Blueprint, p: Plot, step: str) -> str:
    """A step as words: the plot's label for it unless that is math, else the step's title (lower-case unless an acronym)."""
    label = p.label(step)
    if label and "$" not in label:
        return plain(label)
    title = plain(step_title(d.step(step)))
    return title[0].lower() + title[1:] if len(title) > 1 and title[0].isupper() and not title[1].isupper() else title


def _listed(items: Iterable[str]) -> str:
    """Names in a list: separated by commas, or by semicolons where a name holds a comma of its own."""
    names = list(items)
    return ("; " if any("," in n for n in names) else ", ").join(names)


def clause(text: str) -> str:
    """An input's meaning up to its first clause ("prompt tokens prefilled at once; with output_len, ..." -> its first part)."""
    return plain(text.split(";")[0].split(":")[0].strip())


def plain(text: str) -> str:
    """Prose as plain words: inline math without its markup, brackets as parentheses."""
    def words(m: re.Match[str]) -> str:
        math = re.sub(r"\\(?:mathrm|text|operatorname|mathit|mathbf)\{([^{}]*)\}", r"\1", m.group(0).strip("$"))
        return math.replace("\\", "").replace("{", "").replace("}", "")

    return _INLINE_MATH.sub(words, text).replace("[", "(").replace("]", ")")


def term_label(d: Blueprint, p: Plot, symbol: str) -> str:
    """A term of a split step that is one symbol, as prose: a step by the plot's label or its title, an input by the plot's
    label or its meaning up to its first clause."""
    if symbol in d.step_names:
        return name(d, p, symbol)
    if p.label(symbol):
        return p.label(symbol)
    meaning = re.split(r"[;(]", d.symbol(symbol).meaning)[0].strip()
    return meaning[:1].upper() + meaning[1:]


_CONNECTIVES = {"when", "of", "at", "per", "in", "for", "the", "a", "an", "with", "on", "to"}


def shared_words(titles: Iterable[str]) -> str:
    """What several curves' titles have in common, for their axis: the words they all start with ("Speedup" of "Speedup when
    compute-bound" and "Speedup when bandwidth-bound"), math and a trailing connective left out; "" where they share none."""
    common: list[str] = []
    for words in zip(*(t.split() for t in titles), strict=False):
        if len({w.lower() for w in words}) != 1 or "$" in words[0]:
            break
        common.append(words[0])
    while common and common[-1].lower() in _CONNECTIVES:
        common.pop()
    return " ".join(common)


def name(d: Blueprint, p: Plot, step: str) -> str:
    """What a figure calls a step: the plot's label for it, else the step's title."""
    return p.label(step) or step_title(d.step(step))


def step_title(step: StepEntry) -> str:
    """The step's heading in words: its title, else its meaning, else its name."""
    text = step.title or step.meaning or step.name
    return text[:1].upper() + text[1:]

"""Every sheet as one LaTeX book: a chapter per sheet, conventions, glossary, hardware and model appendices.

A chapter is the sheet's own LaTeX (`renderers.latex.render`, the same template
the standalone `.tex` sheets use) with its title page swapped for a
`\\chapter`; the book's preamble is the sheets' preamble, so a package or unit
declaration a sheet needs is there without being listed twice. The book never
solves or reads specs: it gets solved sheets and loaded specs from the build.

Plots: a sheet that draws plots includes them with `\\includegraphics{NAME}`
(file names relative to the `.tex`); the book's chapters keep those lines, and
`plot_names` lists the files the book then needs beside `book.tex`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pint

from derivations import conventions, prose
from derivations.facts import hardware_facts, model_facts
from derivations.glossary import GLOSSARY
from derivations.sheet import Sheet
from renderers import escape, latex
from renderers.numbers import display
from renderers.targets import LATEX
from renderers.templates import LATEX_ENV
from specs.hardware import Hardware
from specs.models import Architecture
from units import RooflineError

TITLE = "roofline: the physics of LLM inference"
_DOCUMENT = re.compile(r"\\begin\{document\}\n(?P<body>.*)\\end\{document\}\s*\Z", re.S)
#: The sheet's title block, replaced in the book by the chapter heading.
_TITLE_BLOCK = "\\rooflinetitle\n"
_INCLUDE = re.compile(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}")
#: Characters after which a long source or note (a URL) may break across lines.
_BREAK_AFTER = frozenset("/.-_?&=#,;:")
#: A word this long may break (a URL); shorter ones never do (no break inside 1,513).
LONG_WORD = 20
#: A run of this many characters with no break point gets one (a hash in a URL).
BREAK_EVERY = 12


class BookError(RooflineError):
    """A sheet's LaTeX does not have the shape the book cuts its chapter from."""


def split_sheet(tex: str, slug: str) -> tuple[str, str]:
    """(preamble, body) of a standalone sheet: the preamble between `\\documentclass` and `\\title`, the body without its title block."""
    head, sep, _ = tex.partition("\\title{")
    m = _DOCUMENT.search(tex)
    if not sep or m is None or not head.startswith("\\documentclass") or _TITLE_BLOCK not in m.group("body"):
        raise BookError(f"{slug}.tex: expected \\documentclass, \\title, \\rooflinetitle and \\begin{{document}}...\\end{{document}}; the book cannot cut a chapter from it")
    preamble = head.partition("\n")[2]
    return preamble, m.group("body").replace(_TITLE_BLOCK, "", 1)


def _linked(body: str, slugs: Sequence[str]) -> str:
    """A sheet's `@slug` links (typewriter names in a standalone sheet) become links to the chapter."""
    for slug in slugs:
        code = escape.latex_code(slug)
        body = body.replace(code, rf"\hyperref[sheet:{slug}]{{{code}}}")
    return body


def breakable(text: str) -> str:
    """Literal text (escaped) whose long words (URLs, hashes) may break after `/`, `.`, `-` ... or every few characters."""
    return "".join(_breakable_word(w) if len(w) >= LONG_WORD else escape.latex(w) for w in re.split(r"(\s+)", text))


def _breakable_word(word: str) -> str:
    out, run = [], 0
    for ch in word:
        run = 0 if ch in _BREAK_AFTER else run + 1
        out.append(escape.latex(ch))
        if ch in _BREAK_AFTER or run % BREAK_EVERY == 0:
            out.append(r"\allowbreak{}")
    return "".join(out)


def _lines(text: str) -> str:
    """A spec's notes: hard-wrapped lines flow together; a blank line or a list item (`- `) starts a new line."""
    paragraphs: list[list[str]] = [[]]
    for line in text.strip().splitlines():
        line = line.strip()
        if not line or line.startswith(("- ", "* ")):
            paragraphs.append([])
        if line:
            paragraphs[-1].append(line)
    return r" \newline ".join(breakable(" ".join(p)) for p in paragraphs if p)


def _quantity(q: pint.Quantity) -> str:
    return LATEX.quantity_text(display(q.magnitude, q.units))


def _prose(text: str) -> str:
    return prose.render(text, escape.latex, LATEX.inline_math, {i.name: i.latex for i in GLOSSARY})


def _fact_rows(facts: dict[str, Any]) -> list[dict[str, str]]:
    return [{"label": escape.latex(k.replace("_", " ")), "value": _quantity(v)} for k, v in facts.items()]


def _text_row(label: str, value: str) -> dict[str, str]:
    return {"label": escape.latex(label), "value": breakable(value.strip())}


def hardware_section(hw: Hardware) -> dict[str, Any]:
    rows = [_text_row("vendor", hw.vendor), _text_row("status", hw.status)]
    rows += [_text_row(k.replace("_", " "), v) for k, v in (("on_chip_memory_kind", hw.on_chip_memory_kind), ("compute_unit_kind", hw.compute_unit_kind),
                                                            ("scaleup_interconnect", hw.scaleup_interconnect),
                                                            ("scaleup_topology", hw.scaleup_topology)) if v]
    rows += _fact_rows(hardware_facts(hw))
    return {"key": escape.latex(hw.key), "name": escape.latex(hw.name), "rows": rows, "source": breakable(hw.source), "notes": _lines(hw.notes)}


def model_section(m: Architecture) -> dict[str, Any]:
    shape = {"model type": m.model_type, "layers": m.num_layers, "hidden size": m.hidden_size, "query heads": m.num_heads,
             "KV heads": m.num_kv_heads, "vocabulary": m.vocab_size, "tied embeddings": "yes" if m.tie_embeddings else "no"}
    if m.mla:
        shape.update({"MLA KV rank": m.mla.kv_rank, "MLA query rank": m.mla.q_rank, "MLA RoPE width": m.mla.rope_dim})
    else:
        shape.update({"head dim": m.head_dim, "MLP width": m.intermediate_size})
    if m.moe:
        shape.update({"routed experts": m.moe.experts, "top-k": m.moe.top_k, "shared experts": m.moe.shared_experts,
                      "expert MLP width": m.moe.expert_ffn, "MoE layers": len(m.moe.moe_layers)})
    rows = [_text_row("status", m.status)]
    rows += [{"label": escape.latex(k), "value": escape.latex(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v))}
             for k, v in shape.items() if v is not None]
    rows += _fact_rows(model_facts(m))
    return {"key": escape.latex(m.key), "name": escape.latex(m.name), "rows": rows, "source": breakable(m.source), "notes": _lines(m.notes)}


def glossary_rows() -> list[dict[str, str]]:
    return [{"symbol": LATEX.inline_math(i.latex), "name": escape.latex_code(i.name), "unit": LATEX.unit(i.unit), "meaning": _prose(i.meaning)}
            for i in GLOSSARY]


def plot_names(tex: str) -> list[str]:
    """The files a LaTeX text includes with `\\includegraphics`, in order, each once."""
    return list(dict.fromkeys(_INCLUDE.findall(tex)))


def render(sheets: Sequence[Sheet], hardware: Sequence[Hardware], models: Sequence[Architecture], tex: Mapping[str, str] | None = None) -> str:
    """The book's LaTeX: sheets in the order given (the registry's), then glossary and appendices.

    `tex` maps a slug to the sheet's standalone LaTeX as the build wrote it (with its plots); a sheet not in it is rendered here.
    """
    if not sheets:
        raise BookError("book.tex: no sheets to bind")
    slugs = [s.derivation.slug for s in sheets]
    chapters, preamble = [], None
    for sheet in sheets:
        slug = sheet.derivation.slug
        head, body = split_sheet(tex[slug] if tex and slug in tex else latex.render(sheet), slug)
        preamble = preamble or head
        title = prose.render(sheet.derivation.title, escape.latex, LATEX.inline_math, {i.name: i.latex for i in sheet.derivation.symbols})
        chapters.append({"slug": slug, "title": title, "body": _linked(body, slugs)})
    return LATEX_ENV.get_template("book.tex.j2").render(
        title=escape.latex(TITLE),
        preamble=preamble,
        conventions=[_prose(c) for c in conventions.CONVENTIONS],
        chapters=chapters,
        glossary=glossary_rows(),
        hardware=[hardware_section(h) for h in hardware],
        models=[model_section(m) for m in models],
    )

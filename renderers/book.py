"""Every sheet as one LaTeX book: a title page, a shared conventions chapter, the sheets by part, then the shared given
values, the glossary and the hardware and model appendices.

A chapter is the sheet's own LaTeX (the template the standalone `.tex` sheets
use, `renderers.latex.chapter`) with numbered sections and no title page: what
the book holds once is left out of it (the conventions every sheet shares, the
given values two or more chapters share: `shared_given`), and the chapter
says where they are. The book's preamble is the sheets' preamble, so a package
or unit declaration a sheet needs is there without being listed twice. The
parts are the registry's (`derivations.questions.registry.PARTS`). The book never
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

from ..derivations.engine import prose
from ..derivations.engine.run import Sheet
from ..derivations.physics import conventions
from ..derivations.physics.facts import hardware_facts, model_facts
from ..derivations.physics.glossary import GLOSSARY
from ..derivations.questions import registry
from ..specs.catalog import STATUS_WORDS
from ..specs.hardware import Hardware
from ..specs.models import Architecture
from ..units import RooflineError
from . import escape, latex, view
from .numbers import display
from .sheet_prose import Prose
from .targets import LATEX
from .templates import LATEX_ENV

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


def source_line(source: str) -> str:
    """A spec's sources as one line: the first source named, up to its first parenthesis or sentence end, and how many more
    the spec file cites (the file keeps every source and the research notes in full)."""
    sources = [s.strip() for s in source.split(" ; ") if s.strip()]
    if not sources:
        return ""
    first = sources[0]
    for stop in (" (", ". ", ": "):
        cut = first.find(stop)
        if cut > 0:
            first = first[:cut]
    more = len(sources) - 1
    return first + (f", and {more} more source{'s' if more > 1 else ''} in the spec file" if more else "")


def _quantity(q: pint.Quantity) -> str:
    return LATEX.quantity_text(display(q.magnitude, q.units))


def _prose(text: str) -> str:
    return prose.render(text, escape.latex, LATEX.inline_math, {i.name: i.latex for i in GLOSSARY})


def _fact_rows(facts: dict[str, Any]) -> list[dict[str, str]]:
    return [{"label": escape.latex(k.replace("_", " ")), "value": _quantity(v)} for k, v in facts.items()]


def _text_row(label: str, value: str) -> dict[str, str]:
    return {"label": escape.latex(label), "value": breakable(value.strip())}


def hardware_section(hw: Hardware) -> dict[str, Any]:
    rows = [_text_row("vendor", hw.vendor), _text_row("status", STATUS_WORDS.get(hw.status, hw.status))]
    rows += [_text_row(k.replace("_", " "), v) for k, v in (("on_chip_memory_kind", hw.on_chip_memory_kind), ("compute_unit_kind", hw.compute_unit_kind),
                                                            ("scaleup_interconnect", hw.scaleup_interconnect),
                                                            ("scaleup_topology", hw.scaleup_topology)) if v]
    rows += _fact_rows(hardware_facts(hw))
    return {"key": escape.latex(hw.key), "name": escape.latex(hw.name), "rows": rows, "source": breakable(source_line(hw.source))}


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
    rows = [_text_row("status", STATUS_WORDS.get(m.status, m.status))]
    rows += [{"label": escape.latex(k), "value": escape.latex(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v))}
             for k, v in shape.items() if v is not None]
    rows += _fact_rows(model_facts(m))
    source = f"{m.hf_repo} on Hugging Face; the spec file names the copy of its config.json read" if m.hf_repo else source_line(m.source)
    return {"key": escape.latex(m.key), "name": escape.latex(m.name), "rows": rows, "source": breakable(source)}


def glossary_rows() -> list[dict[str, str]]:
    return [{"symbol": LATEX.inline_math(i.latex), "name": escape.latex_code(i.name), "unit": LATEX.unit(i.unit), "meaning": _prose(i.meaning)}
            for i in GLOSSARY]


def plot_names(tex: str) -> list[str]:
    """The files a LaTeX text includes with `\\includegraphics`, in order, each once."""
    return list(dict.fromkeys(_INCLUDE.findall(tex)))


def shared_given(views: Mapping[str, Mapping[str, Any]]) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """The given values the book prints once (its shared appendix) instead of in every chapter, and their (symbol, value) keys.

    A value is shared when two or more chapters give the symbol that same value (the chips' peaks, bytes per weight, the
    FLOPs per multiply-add): for each symbol the value most chapters use, if at least two do. A chapter keeps the rows that
    are its own (a symbol only it uses, or a value that differs from the shared one). Each shared row names its chapters.
    """
    users: dict[tuple[str, str], list[str]] = {}
    rows: dict[tuple[str, str], Mapping[str, str]] = {}
    for slug, v in views.items():
        for g in v["given"]:
            key = (g["symbol"], g["value"])
            users.setdefault(key, []).append(slug)
            rows.setdefault(key, g)
    best: dict[str, tuple[str, str]] = {}
    for key, slugs in users.items():  # first come (the book's order) wins a tie
        if len(slugs) >= 2 and (key[0] not in best or len(slugs) > len(users[best[key[0]]])):
            best[key[0]] = key
    keys = set(best.values())
    number = {slug: FIRST_SHEET_CHAPTER + i for i, slug in enumerate(views)}
    # the numbers as text, linked (not \ref, whose "??" on the first pass would move the pages after this table)
    shared = [{**rows[k], "chapters": ", ".join(rf"\hyperref[sheet:{slug}]{{{number[slug]}}}" for slug in users[k])} for k in users if k in keys]
    return shared, keys


#: The book's first sheet chapter: chapter 1 is the conventions (book.tex.j2), then the sheets in `views`' order.
FIRST_SHEET_CHAPTER = 2


#: What a chapter says where the given values it shares with other chapters are.
SHARED_GIVEN_LINE = r"The values this chapter shares with others are listed once, in Appendix~\ref{given}; the table holds its own."
ALL_SHARED_LINE = r"Every value this chapter is given is one it shares with other chapters: they are listed once, in Appendix~\ref{given}."


def render(sheets: Sequence[Sheet], hardware: Sequence[Hardware], models: Sequence[Architecture], plots: str | None = None,
           version: str = "", date: str = "") -> str:
    """The book's LaTeX: a conventions chapter, then the sheets by part (the registry's parts, its order inside a part), then
    the shared given values, the glossary and the hardware and model appendices.

    `plots`: the folder (relative to `book.tex`) holding the sheets' plot PDFs (`plot_names` lists those the book includes).
    `version` and `date` go on the title page and into the PDF's metadata. The same as `bind` of every sheet's `chapter_input`.
    """
    if not sheets:
        raise BookError("book.tex: no sheets to bind")
    preamble = split_sheet(latex.render(sheets[0]), sheets[0].blueprint.slug)[0]
    return bind([chapter_input(s, plots) for s in sheets], preamble, hardware, models, version, date)


def chapter_input(sheet: Sheet, plots: str | None = None) -> dict[str, Any]:
    """What the book takes from one sheet, as plain data (a build makes it in the process that rendered the sheet): its
    slug, title, LaTeX view (`renderers.view.build`, figures linking `plots`) and the conventions it states beyond the
    book's own chapter of them."""
    shared_conventions = set(conventions.CONVENTIONS)
    p = Prose(sheet, LATEX)
    d = sheet.blueprint
    return {"slug": d.slug, "view": view.build(sheet, LATEX, plots),
            "conventions": [p(c) for c in sheet.conventions if c not in shared_conventions],
            "title": prose.render(d.title, escape.latex, LATEX.inline_math, d.latex_names)}


def bind(chapters: Sequence[Mapping[str, Any]], preamble: str, hardware: Sequence[Hardware], models: Sequence[Architecture],
         version: str = "", date: str = "") -> str:
    """The book from each sheet's `chapter_input` (in the registry's order) and a sheet's LaTeX preamble (`split_sheet`)."""
    if not chapters:
        raise BookError("book.tex: no sheets to bind")
    slugs = [c["slug"] for c in chapters]
    by_slug = {c["slug"]: c for c in chapters}
    groups = registry.by_part(slugs)
    views = {slug: by_slug[slug]["view"] for _, members in groups for slug in members}  # in the book's order
    shared, keys = shared_given(views)
    parts = []
    for part, members in groups:
        out = []
        for slug in members:
            own = [g for g in views[slug]["given"] if (g["symbol"], g["value"]) not in keys]
            line = "" if len(own) == len(views[slug]["given"]) else SHARED_GIVEN_LINE if own else ALL_SHARED_LINE
            v = {**views[slug], "given": own, "conventions": by_slug[slug]["conventions"]}
            out.append({"slug": slug, "title": by_slug[slug]["title"], "body": _linked(latex.chapter(v, line), slugs)})
        parts.append({"title": escape.latex(part.title if part else "Other sheets"), "about": escape.latex(part.about) if part else "",
                      "chapters": out})
    return LATEX_ENV.get_template("book.tex.j2").render(
        title=escape.latex(TITLE),
        pdf_title=escape.latex(TITLE),
        subject=escape.latex(SUBJECT),
        author=escape.latex(AUTHOR),
        version=escape.latex(version),
        date=escape.latex(date),
        preamble=preamble,
        conventions=[_prose(c) for c in conventions.CONVENTIONS],
        parts=parts,
        shared_given=shared,
        glossary=glossary_rows(),
        hardware=[hardware_section(h) for h in hardware],
        models=[model_section(m) for m in models],
    )


#: The PDF's metadata (hyperref's pdfauthor and pdfsubject); the title is TITLE.
AUTHOR = "The roofline authors"
SUBJECT = "Answer sheets on LLM inference cost, derived as unit-checked expressions and evaluated from hardware and model spec files"

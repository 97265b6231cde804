"""Every sheet as an HTML page, math as MathML: `site/index.html` plus `site/<slug>.html`.

Browsers render MathML Core without JavaScript, so the pages carry no script:
the equations of each step are the lines the Markdown sheet prints (symbol =
formula = numbers = result, broken at the same places, cases as cases),
converted by latex2mathml like the prose math of a sheet (its `$...$` spans,
with `\\sym{...}` already spelled by `derivations.engine.prose`). Everything else is text escaped once: by the target's `text`
(html.escape) for what the view builds, by jinja2's autoescape for what the
templates add. `@slug` links become relative links between pages.

Plots: `render_sheet(..., plots=[...])` embeds SVG files (names relative to
the page) as images with their captions; the build passes the sheet's SVG
plots and writes the files beside the pages.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from xml.etree import ElementTree

import jinja2
import pint
from latex2mathml.converter import convert
from markupsafe import Markup

from ..derivations.engine import prose
from ..derivations.engine.run import Sheet
from ..derivations.physics import conventions
from ..derivations.physics.glossary import GLOSSARY
from ..derivations.questions import registry
from ..units import unit_text
from . import escape, view
from .numbers import Shown, number_text, readable_unit, unit_word
from .sheet_prose import Prose
from .targets import MARKDOWN, Target
from .templates import TEMPLATES
from .unitfmt import mathrm

TITLE = "roofline: the physics of LLM inference"
INDEX = "index.html"
STYLE = """
body { font-family: 'Latin Modern Roman', 'LM Roman 10', 'STIX Two Text', 'Cambria', Georgia, serif; max-width: 52rem; margin: 1rem auto 2rem;
  padding: 0 1rem; line-height: 1.5; color: #111; }
math { font-family: 'Latin Modern Math', 'STIX Two Math', 'Cambria Math', math; font-size: 1em; }
nav.top { font-size: 0.9rem; margin-bottom: 0.5rem; }
h1 { line-height: 1.2; margin: 0.5rem 0; }
blockquote { font-style: italic; margin: 0.5rem 0 0.5rem 1rem; }
.scroll { overflow-x: auto; max-width: 100%; }
a { overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.92rem; }
th, td { border-bottom: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
.step { margin: 1rem 0; }
.eq { overflow-x: auto; }
math[display="block"] { margin: 0.4rem 0; }
mtable { math-style: normal; }
mtd { padding: 0.15rem 0; }
mtd.lhs { text-align: right; }
mtd.rhs { text-align: left; }
figure { margin: 1rem 0; }
figure img { display: block; width: 100%; max-width: 100%; height: auto; }
figure a { display: block; }
[hidden] { display: none !important; }
.verdict { font-weight: bold; }
code, .name { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.85em; }
form.answer { margin: 0.6rem 0; }
form.answer label { display: block; }
form.answer input { font: inherit; width: 14rem; max-width: 60%; }
form.answer button { font: inherit; }
form.answer output { display: block; margin-top: 0.3rem; }
output[data-kind="within"] { color: #1a6b35; }
output[data-kind="off"], output[data-kind="unread"] { color: #9a4a00; }
details.key { margin: 0.5rem 0 1.5rem; }
form.live { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 0.3rem 1.2rem; margin: 0.6rem 0; }
form.live label { display: flex; justify-content: space-between; align-items: baseline; gap: 0.5rem; font-size: 0.92rem; }
form.live input { font: inherit; width: 8rem; }
form.live select { font: inherit; width: 11rem; min-width: 0; }
[data-hide] { display: none; }
[data-stale] { opacity: 0.45; }
figure[data-stale] figcaption::before { content: "The page's own setup, not yours. "; font-weight: bold; }
form.live button, form.live output { grid-column: 1 / -1; justify-self: start; font: inherit; }
aside.contents { font-size: 0.88rem; border: 1px solid #ddd; background: #fafafa; padding: 0.5rem 0.8rem; margin: 1rem 0; }
aside.contents h2 { font-size: 1rem; margin: 0 0 0.3rem; }
aside.contents ol, aside.contents ul { margin: 0.2rem 0; padding-left: 1.2rem; }
aside.contents p { margin: 0.3rem 0; }
@media (min-width: 68rem) {
  body.sheet { max-width: 72rem; }
  body.sheet main { display: grid; grid-template-columns: 15rem minmax(0, 1fr); column-gap: 2rem; }
  body.sheet main > * { grid-column: 2; }
  body.sheet main > aside.contents { grid-column: 1; grid-row: 1 / span 40; align-self: start; position: sticky; top: 0.5rem;
    max-height: calc(100vh - 1rem); overflow-y: auto; margin: 0; }
}
@media (max-width: 30rem) {
  body { padding: 0 0.6rem; margin-top: 0.5rem; }
  h1 { font-size: 1.45rem; }
  blockquote { margin-left: 0.5rem; }
}
""".strip()


#: The style element's text exactly as the templates write it (`<style>` newline, STYLE, newline `</style>`): the policy names its hash.
STYLE_ELEMENT_TEXT = "\n" + STYLE + "\n"


def content_security_policy(scripts: bool = False) -> str:
    """What a page lets the browser do: nothing but show its own style and the plots beside it.

    No script of any kind runs (`default-src 'none'` with no `script-src`), no inline event handler, no form submission, no
    plugin, no frame and no other base URL; the one style allowed is the page's own, by its SHA-256. With `scripts` (a live
    sheet, the practice page), scripts from the site's own folder run too, and still nothing inline.
    """
    digest = base64.b64encode(hashlib.sha256(STYLE_ELEMENT_TEXT.encode("utf-8")).digest()).decode("ascii")
    script = "script-src 'self'; " if scripts else ""
    return f"default-src 'none'; {script}style-src 'sha256-{digest}'; img-src 'self'; base-uri 'none'; form-action 'none'"


@dataclass(frozen=True)
class Live:
    """What a live sheet page carries (roofline/live.py makes it): its data as a JSON block's text, the fields of its form
    (name, the page's value as text, the meaning), its results (title, the page's value as text), the scripts' names and
    its lists (name, label, the options as value and text, the page's value)."""

    data: str
    fields: tuple[tuple[str, str, str], ...]
    results: tuple[tuple[str, str, str], ...]
    scripts: tuple[str, ...]
    choices: tuple[tuple[str, str, tuple[tuple[str, str], ...], str], ...] = ()


def text(s: str) -> str:
    """Literal text for an HTML body; a `name` in backticks (a command, a file) as code."""
    return "".join(f"<code>{html.escape(p, quote=True)}</code>" if code else html.escape(p, quote=True) for code, p in escape.code_spans(s))


_ONE_LETTER_ROMAN = re.compile(r"\\mathrm\{([A-Za-z])\}")
_OPERATOR_NAME = re.compile(r"\\operatorname\{([^{}]*)\}")
#: latex2mathml spells \mathrm{flop} as four upright one-letter identifiers; a word is one <mi> (upright by default).
_ROMAN_LETTER = re.compile(r'<mi mathvariant="normal">([^<&])</mi>')
_ROMAN_RUN = re.compile(r'(?:<mi mathvariant="normal">[^<&]</mi>){2,}')
_COMMA = "<mrow><mo>,</mo></mrow>"
_GROUPED_NUMBER = re.compile(r"<mn>\d+</mn>(?:" + re.escape(_COMMA) + r"<mn>[\d.]+</mn>)+")


@cache
def mathml_inner(latex: str) -> str:
    """latex2mathml's MathML for a LaTeX fragment, without the `<math>` wrapper.

    Upright words come back as one `<mi>` each, not one per letter. Digit groups (`3{,}350`) come back from latex2mathml as numbers around a
    comma operator; they are joined into one `<mn>3,350</mn>` so the comma is
    not spaced like punctuation.
    """
    latex = re.sub(r"(?<!\\)%", r"\\%", latex)  # a unit of percent is text, not a LaTeX comment
    latex = _ONE_LETTER_ROMAN.sub(r"\\text{\1}", latex)  # latex2mathml drops \mathrm from one letter (B would print as a variable)
    # latex2mathml spells an operator name as an empty <mo/> and loose letters: a word, upright, reads the same
    latex = _OPERATOR_NAME.sub(lambda m: r"\mathrm{" + m.group(1).replace(r"\,", " ") + "}", latex)
    out = convert(latex, display="inline")
    inner = _chars(out[out.index(">") + 1: out.rindex("</math>")])
    inner = _ROMAN_RUN.sub(lambda m: "<mi>" + "".join(_ROMAN_LETTER.findall(m.group(0))) + "</mi>", inner)
    inner = _GROUPED_NUMBER.sub(lambda m: "<mn>" + re.sub(r"</?mn>", "", m.group(0).replace(_COMMA, ",")) + "</mn>", inner)
    return inner if _only_mathml(inner) else f"<merror><mtext>{text(latex)}</mtext></merror>"


#: The presentation MathML a page may hold: what latex2mathml and sympy's printer write, and nothing that can link, load or run
#: (no `semantics`/`annotation-xml`, which may carry HTML; no `maction`).
MATHML_ELEMENTS = frozenset({
    "math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot", "mstyle", "merror", "mpadded", "mphantom",
    "menclose", "msub", "msup", "msubsup", "munder", "mover", "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd",
})
#: The attributes those elements may carry: layout only (no `href`, no `style`, no `on...` handler).
MATHML_ATTRIBUTES = frozenset({
    "accent", "accentunder", "close", "columnalign", "columnlines", "columnspacing", "depth", "display", "displaystyle", "fence", "form",
    "height", "largeop", "linethickness", "lspace", "mathsize", "mathvariant", "maxsize", "minsize", "movablelimits", "notation", "open",
    "rowalign", "rowlines", "rowspacing", "rspace", "scriptlevel", "separator", "separators", "stretchy", "symmetric", "width",
})
_MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"


def _only_mathml(inner: str) -> bool:
    """True when a converted fragment is well-formed and holds only the whitelisted elements and attributes.

    The converter copies text-mode content (`\\text{...}`) into the output as it is; derivations.engine.prose refuses `<` and `>`
    there, and this check keeps anything else that would be markup out of a page: such a fragment is shown as its TeX, escaped.
    """
    try:
        root = ElementTree.fromstring(f'<math xmlns="http://www.w3.org/1998/Math/MathML">{inner}</math>')
    except ElementTree.ParseError:
        return False
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag.removeprefix(_MATHML_NS) not in MATHML_ELEMENTS or not element.tag.startswith(_MATHML_NS):
            return False
        if set(element.attrib) - MATHML_ATTRIBUTES:
            return False
    return True


_CHAR_REF = re.compile(r"&#(x[0-9A-Fa-f]+|[0-9]+);")


def _chars(mathml: str) -> str:
    """Numeric character references as the characters themselves (the pages are UTF-8), except markup's own characters."""
    def char(m: re.Match[str]) -> str:
        code = m.group(1)
        ch = chr(int(code[1:], 16) if code.startswith("x") else int(code))
        return m.group(0) if ch in "<>&\"'" else ch

    return _CHAR_REF.sub(char, mathml)


def inline_math(latex: str) -> str:
    return f"<math>{mathml_inner(latex)}</math>"


def _unit(u: pint.Unit) -> str:
    t = mathrm(u)
    return inline_math(t) if t else "1"


def _quantity_text(s: Shown) -> str:
    u = readable_unit(unit_word(unit_text(s.unit), s.number))
    return text(number_text(s.number) + ("" if u == "1" else f" {u}"))


HTML = Target(
    name="html",
    text=text,
    quantity_math=MARKDOWN.quantity_math,
    quantity_text=_quantity_text,
    inline_math=inline_math,
    code=lambda s: f'<code class="name">{text(s)}</code>',
    unit=_unit,
    link=lambda slug: f'<a href="{text(slug)}.html">{text(slug)}</a>',
    url=lambda u: f'<a href="{text(u)}">{text(u)}</a>',
)


def equation(lhs: str, rows: list[dict[str, str]], live: str = "") -> str:
    """One step's displayed equation (the view's rows, Markdown-target LaTeX) as a block of MathML, rows aligned at `=`.

    The same lines the LaTeX and Markdown sheets print, broken at the same places: a row whose op is "=" starts a new
    right-hand side, one whose op is empty continues a long sum, indented.
    """
    out = []
    last = len(rows) - 1
    for i, row in enumerate(rows):
        left = f"<mrow>{mathml_inner(lhs)}</mrow>" if i == 0 else ""
        op = "<mo>=</mo>" if row["op"] else '<mspace width="1em" />'
        # `live`, a step's name: a live page (roofline/live.js) writes its value into the last row and hides the numbers rows
        numbers = ' data-numbers=""' if live and 0 < i < last else ""
        value = f' data-live="{text(live)}"' if live and i == last and i > 0 else ""
        out.append(f'<mtr{numbers}><mtd class="lhs">{left}</mtd><mtd class="rhs"{value}><mrow>{op}{mathml_inner(row["math"])}</mrow></mtd></mtr>')
    return f'<math display="block"><mtable displaystyle="true">{"".join(out)}</mtable></math>'


ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    undefined=jinja2.StrictUndefined,
    autoescape=True,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _markup(value: Any) -> Any:
    """The view's strings are HTML already (built by the HTML target, which escapes text): mark them so autoescape keeps them."""
    if isinstance(value, str):
        return Markup(value)
    if isinstance(value, list):
        return [_markup(v) for v in value]
    if isinstance(value, dict):
        return {k: _markup(v) for k, v in value.items()}
    return value


def page_name(slug: str) -> str:
    return f"{slug}.html"


@dataclass(frozen=True)
class Downloads:
    """Where a page links the sheet's files and the book: `folder` (the sheets' folder relative to the page, e.g. ".."),
    `book` (the book's file name without suffix) and `pdf` (whether this build compiled the PDFs: without them the pages link
    the Markdown, LaTeX and JSON files every build writes, and say how to get the PDFs)."""

    folder: str
    book: str
    pdf: bool


#: The sections of a sheet's page, by their stable ids, in order; the appendix's parts after them.
SECTIONS = (("answer", "Answer"), ("argument", "The argument"), ("takeaways", "Takeaways"), ("results", "Results across hardware and models"),
            ("scoring", "What an interviewer scores"), ("limits", "Where the model stops being true"), ("appendix", "Appendix"))
APPENDIX_SECTIONS = (("more-claims", "More claims, checked"), ("more-results", "More results"), ("assumptions", "Assumptions"), ("conventions", "Conventions"),
                     ("derivation", "The full derivation"), ("setup", "Setup"), ("inputs", "Inputs"), ("given", "Given values"),
                     ("sources", "Sources"), ("symbols", "Symbols"))
_NOT_ID = re.compile(r"[^a-z0-9_]+")
_TAG = re.compile(r"<[^>]*>")


class Anchors:
    """Stable, unique ids for one page: made from a section's, step's or table's name (lower case, runs of other characters
    as one `-`), the first of a name keeps it, a repeat gets `-2`, `-3`; the fixed section ids are taken first."""

    def __init__(self) -> None:
        self.taken = {i for i, _ in (*SECTIONS, *APPENDIX_SECTIONS)}

    def __call__(self, prefix: str, name: str) -> str:
        base = f"{prefix}-" + (_NOT_ID.sub("-", name.lower()).strip("-") or "x")
        out, n = base, 1
        while out in self.taken:
            n += 1
            out = f"{base}-{n}"
        self.taken.add(out)
        return out


def _heading_text(markup: str) -> str:
    """The words of a heading the view built as HTML (tags dropped, references read): what a table's id is made from."""
    return html.unescape(_TAG.sub(" ", markup))


def _plain(s: str, names: Mapping[str, str]) -> str:
    """Prose as one line of plain text for a page's title and description: math and symbols as their letters, no markup."""
    out = prose.plain(s, names).replace("$", "")
    out = re.sub(r"\\(?:mathrm|text|operatorname|mathit|mathbf)\{([^{}]*)\}", r"\1", out)
    out = re.sub(r"\\([A-Za-z]+)", r"\1", out)
    return " ".join(out.replace("{", "").replace("}", "").replace("\\", "").split())


def _downloads(slug: str, downloads: Downloads | None) -> dict[str, Any] | None:
    if downloads is None:
        return None
    here = [("Markdown", "md"), ("LaTeX", "tex"), ("JSON", "json")]
    if downloads.pdf:
        here.insert(0, ("PDF", "pdf"))
    book_suffix = "pdf" if downloads.pdf else "tex"
    return {"sheet": [{"label": label, "href": f"{downloads.folder}/{slug}.{suffix}"} for label, suffix in here],
            "book": {"label": "PDF" if downloads.pdf else "LaTeX", "href": f"{downloads.folder}/{downloads.book}.{book_suffix}"},
            "pdf": downloads.pdf}


def _contents(v: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The contents panel: every section the page prints (the argument's steps and the result tables under theirs)."""
    present = {"takeaways": bool(v["takeaways"]), "scoring": bool(v["scoring"]), "limits": bool(v["limits"]),
               "more-claims": len(v["claims"]) > v["page_one_claims"], "more-results": bool(v["more_tables"]), "assumptions": bool(v["assumptions"]), "conventions": bool(v["conventions"]),
               "inputs": bool(v["inputs"]), "sources": bool(v["sources"])}
    children = {"argument": [{"id": s["id"], "label": s["title"], "children": []} for s in v["argument"]],
                "results": [{"id": t["id"], "label": t["title"], "children": []} for t in v["tables"]],
                "appendix": [{"id": i, "label": label, "children": [{"id": t["id"], "label": t["title"]} for t in v["more_tables"]] if i == "more-results" else []}
                             for i, label in APPENDIX_SECTIONS if present.get(i, True)]}
    return [{"id": i, "label": label, "children": children.get(i, [])} for i, label in SECTIONS if present.get(i, True)]


def render_sheet(sheet: Sheet, slugs: Sequence[str], plots: str | None = None, downloads: Downloads | None = None,
                 live: Live | None = None) -> str:
    """One sheet's page; `slugs` (the registry's order) gives the previous and next pages.

    With `plots` (the folder of the plot files relative to the page, e.g. "../plots"), the sheet's SVG plots as images; with
    `downloads`, links to the sheet's files and the book. Every section, step and table has a stable id, listed in the contents panel.
    With `live` (a shipped sheet's page on the site: roofline/live.py), the page carries the data and the two scripts that
    recompute its steps for a reader's inputs, and its policy allows scripts from the site's own folder; without (a page of
    a reader's derivation file), no script at all.
    """
    d = sheet.blueprint
    v = view.build(sheet, HTML, plots)
    if live is not None and d.answer:  # each value in the answer's sentences marked for the live script to fill again
        v = {**v, "answer": Prose(sheet, HTML, mark=lambda name, t: f'<span data-fill="{text(name)}">{t}</span>').items(d.answer)}
    anchor = Anchors()
    for s in (*v["argument"], *v["steps"]):
        if s["kind"] == "step":
            s["equation"] = equation(s["lhs"], s["rows"], s["name"] if live is not None else "")
            s["id"] = anchor("step", s["name"])
        elif s["kind"] == "family":
            s["id"] = anchor("step", s["names"][0])
    argued = {s["name"]: s["id"] for s in v["argument"]}
    for s in v["steps"]:
        if s["kind"] == "ref":
            s["id"], s["href"] = anchor("ref", s["name"]), "#" + argued[s["name"]]
    for t in (*v["tables"], *v["more_tables"]):
        t["id"] = anchor("table", _heading_text(t["title"]))
    i = list(slugs).index(d.slug)
    by_name = d.latex_names
    nav = {"prev": slugs[i - 1] if i > 0 else None, "next": slugs[i + 1] if i + 1 < len(slugs) else None}
    contents = _contents(v)
    return ENV.get_template("site-sheet.html.j2").render(site_title=TITLE, style=Markup(STYLE),
                                                         csp=content_security_policy(scripts=live is not None), nav=nav, live=live,
                                                         plain_slug=d.slug, plain_title=_plain(d.title, by_name),
                                                         description=_plain(d.question, by_name), downloads=_downloads(d.slug, downloads),
                                                         contents=_markup(contents), **_markup(v))


def render_index(sheets: Sequence[Sheet], api_reference: str | None = None, downloads: Downloads | None = None) -> str:
    """The index: every sheet with its question, grouped by the book's parts (the registry's order inside a part), the
    conventions and the glossary.

    `api_reference`: the link (relative to the index) to the Python API reference, when the site has one; `downloads` as in
    `render_sheet` (the index links the book). The same as `index_page` of every sheet's `index_entry`.
    """
    return index_page([index_entry(s) for s in sheets], api_reference, downloads)


def _prose_markup(s: str, names: Mapping[str, str]) -> Markup:
    return Markup(prose.render(s, text, inline_math, names, None, HTML.link))


def index_entry(sheet: Sheet) -> dict[str, str]:
    """What the index says of one sheet, as plain data (a build makes it in the process that rendered the sheet): its
    page, slug, title and question as HTML."""
    d = sheet.blueprint
    names = d.latex_names
    return {"href": page_name(d.slug), "slug": d.slug, "title": str(_prose_markup(d.title, names)), "question": str(_prose_markup(d.question, names))}


def index_page(entries: Sequence[Mapping[str, str]], api_reference: str | None = None, downloads: Downloads | None = None,
               practice: str | None = None) -> str:
    """The index page from each sheet's `index_entry` (in the registry's order); the rest as in `render_index`."""
    glossary_names = {i.name: i.latex for i in GLOSSARY}
    by_slug = {e["slug"]: {**e, "title": Markup(e["title"]), "question": Markup(e["question"])} for e in entries}
    parts, start = [], 1
    for part, members in registry.by_part(list(by_slug)):
        parts.append({"title": part.title if part else "Other sheets", "about": part.about if part else "", "start": start,
                      "id": f"part-{part.key}" if part else "part-other", "sheets": [by_slug[slug] for slug in members]})
        start += len(members)
    glossary = [{"symbol": Markup(inline_math(i.latex)), "name": i.name, "unit": Markup(_unit(i.unit)),
                 "meaning": _prose_markup(i.meaning, glossary_names)} for i in GLOSSARY]
    book = _downloads("", downloads)
    return ENV.get_template("site-index.html.j2").render(site_title=TITLE, style=Markup(STYLE), csp=content_security_policy(), parts=parts,
                                                         conventions=[_prose_markup(c, glossary_names) for c in conventions.CONVENTIONS],
                                                         glossary=glossary, api_reference=api_reference, book=book["book"] if book else None,
                                                         description=INDEX_DESCRIPTION, practice=practice)


#: The index page's description (its `<meta name="description">`).
INDEX_DESCRIPTION = ("Answer sheets for the questions people ask about LLM inference cost, each derived as unit-checked sympy expressions "
                     "and evaluated from hardware and model spec files.")


def render(sheets: Sequence[Sheet], plots: str | None = None, api_reference: str | None = None, downloads: Downloads | None = None) -> dict[str, str]:
    """File name (relative to the site folder) -> page, for the index and every sheet; `plots` and `downloads` as in
    `render_sheet`, `api_reference` as in `render_index`."""
    slugs = [s.blueprint.slug for s in sheets]
    pages = {INDEX: render_index(sheets, api_reference, downloads)}
    for sheet in sheets:
        pages[page_name(sheet.blueprint.slug)] = render_sheet(sheet, slugs, plots, downloads)
    return pages

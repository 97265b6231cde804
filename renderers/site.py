"""Every sheet as an HTML page, math as MathML: `site/index.html` plus `site/<slug>.html`.

Browsers render MathML Core without JavaScript, so the pages carry no script:
the equations of each step are printed by sympy's presentation-MathML printer
(symbol = formula = numbers = result, from the same sympy expressions the
LaTeX sheets print), and the prose math of a sheet (its `$...$` spans, with
`\\sym{...}` already spelled by `derivations.prose`) is converted by
latex2mathml. Everything else is text escaped once: by the target's `text`
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
from functools import cache
from typing import Any
from xml.dom import minidom
from xml.etree import ElementTree

import jinja2
import pint
import sympy as sp
from latex2mathml.converter import convert
from markupsafe import Markup
from sympy.printing.mathml import MathMLPresentationPrinter

from derivations import conventions, prose
from derivations import glossary as gl
from derivations.engine import At
from derivations.glossary import GLOSSARY
from derivations.sheet import Sheet, SolvedStep
from renderers import view
from renderers.numbers import Shown, number_text
from renderers.plots import refs as plot_refs
from renderers.targets import MARKDOWN, Target
from renderers.templates import TEMPLATES
from renderers.unitfmt import mathrm
from units import unit_text

TITLE = "roofline: the physics of LLM inference"
INDEX = "index.html"
STYLE = """
body { font-family: Georgia, 'Times New Roman', serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #111; }
nav { font-size: 0.9rem; margin-bottom: 1rem; }
h1 { line-height: 1.2; }
blockquote { font-style: italic; margin-left: 1rem; }
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
figure img { width: 100%; height: auto; }
.verdict { font-weight: bold; }
code, .name { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.85em; }
""".strip()


#: The style element's text exactly as the templates write it (`<style>` newline, STYLE, newline `</style>`): the policy names its hash.
STYLE_ELEMENT_TEXT = "\n" + STYLE + "\n"


def content_security_policy() -> str:
    """What every page lets the browser do: nothing but show its own style and the plots beside it.

    No script of any kind runs (`default-src 'none'` with no `script-src`), no inline event handler, no form, no plugin,
    no frame and no other base URL; the one style allowed is the page's own, by its SHA-256.
    """
    digest = base64.b64encode(hashlib.sha256(STYLE_ELEMENT_TEXT.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'self'; base-uri 'none'; form-action 'none'"


def text(s: str) -> str:
    """Literal text for an HTML body."""
    return html.escape(s, quote=True)


_ONE_LETTER_ROMAN = re.compile(r"\\mathrm\{([A-Za-z])\}")
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

    The converter copies text-mode content (`\\text{...}`) into the output as it is; derivations.prose refuses `<` and `>`
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


#: A unit as running text: `flop/(parameter·token)`, `token²`.
_UNIT_TEXT = (("*", "·"), ("^2", "²"), ("^3", "³"))


def _quantity_text(s: Shown) -> str:
    u = unit_text(s.unit)
    for plain, shown in _UNIT_TEXT:
        u = u.replace(plain, shown)
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
)


#: The minus sign (U+2212), as latex2mathml writes it; MathML Core draws `-` as a hyphen.
MINUS = "\u2212"


class EquationPrinter(MathMLPresentationPrinter):
    """sympy's presentation MathML with our symbols spelled as given (MathML fragments),
    sums in the derivation's order and a number with a unit parenthesised under a power."""

    def __init__(self, fragments: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int], quantities: frozenset[sp.Symbol] = frozenset()) -> None:
        super().__init__({"mul_symbol": "dot"})
        self.fragments = fragments
        self.ranks = ranks
        self.quantities = quantities

    def _fragment(self, sym: sp.Symbol) -> minidom.Element:
        node = _parsed(self.fragments[sym])
        return self.dom.importNode(node, True)

    def _print_Symbol(self, sym: sp.Symbol, style: str = "plain") -> minidom.Element:
        if sym in self.fragments:
            return self._fragment(sym)
        return super()._print_Symbol(sym, style)

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> minidom.Element:
        terms = list(self._as_ordered_terms(expr, order=order))
        if self.ranks:
            n = len(self.ranks)
            terms.sort(key=lambda t: min((self.ranks.get(s, n) for s in t.free_symbols), default=n))
        terms = [t for t in terms if not t.could_extract_minus_sign()] + [t for t in terms if t.could_extract_minus_sign()]
        mrow = self.dom.createElement("mrow")
        for i, term in enumerate(terms):
            if i:
                mo = self.dom.createElement("mo")
                mo.appendChild(self.dom.createTextNode(MINUS if term.could_extract_minus_sign() else "+"))
                mrow.appendChild(mo)
                if term.could_extract_minus_sign():
                    term = -term
            mrow.appendChild(self._print(term))
        return mrow

    def _print_Pow(self, e: sp.Pow) -> minidom.Element:
        base, exponent = e.as_base_exp()
        if base in self.quantities and exponent.is_Integer and exponent > 0:
            msup = self.dom.createElement("msup")
            row = self.dom.createElement("mrow")
            for part in ("(", None, ")"):
                if part is None:
                    row.appendChild(self._fragment(base))
                else:
                    mo = self.dom.createElement("mo")
                    mo.appendChild(self.dom.createTextNode(part))
                    row.appendChild(mo)
            msup.appendChild(row)
            msup.appendChild(self._print(exponent))
            return msup
        return super()._print_Pow(e)


@cache
def _parsed(fragment: str) -> minidom.Element:
    return minidom.parseString(f'<math xmlns="http://www.w3.org/1998/Math/MathML">{fragment}</math>').documentElement.firstChild


def _print(expr: sp.Expr, fragments: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int], quantities: frozenset[sp.Symbol] = frozenset()) -> str:
    return _chars(EquationPrinter(fragments, ranks, quantities).doprint(expr))


_TWINS = {**gl.SECOND_CHIP, **gl.SECOND_MODEL}


def _at(s: At, fragments: Mapping[sp.Symbol, str], value: Any) -> str:
    """`t_step|_{q = k + 1}` as MathML; primed when it reads the second chip's or model's symbols (as view._at_latex)."""
    head = fragments[sp.Symbol(s.of, positive=True)]
    if any(_TWINS.get(k) == v for k, v in s.where):
        head = f"<msup><mrow>{head}</mrow><mo>&#x2032;</mo></msup>"
    subs = [f"{fragments[k]}<mo>=</mo>{value(v)}" for k, v in s.where if _TWINS.get(k) != v]
    if not subs:
        return head
    return f'<msub><mrow>{head}<mo stretchy="false">|</mo></mrow><mrow>{"<mo>,</mo>".join(subs)}</mrow></msub>'


def equation(step: SolvedStep, names: Mapping[sp.Symbol, str], ranks: Mapping[sp.Symbol, int], count: int) -> str:
    """One step as a block of MathML: symbol = formula (= numbers) (= result), rows aligned at `=`.

    `count` is how many lines the LaTeX sheets print for this step (view.step_lines), so both agree on when the
    substituted line is left out.
    """
    s = step.step
    fragments = {sym: mathml_inner(tex) for sym, tex in names.items()}
    formula = _at(s, fragments, lambda v: _print(v, fragments, ranks)) if isinstance(s, At) else _print(s.expr, fragments, ranks)
    lines = [formula]
    if count > 1:
        numbers = {sym: fragments[sym] if v.missing else mathml_inner(MARKDOWN.quantity_math(view.shown(v))) for sym, v in step.operands.items()}
        numbers.update({u: "<mn>1</mn>" for u in view.UNIT_MARKERS if u not in numbers})
        quantities = frozenset(sym for sym, v in step.operands.items() if not v.missing)
        merged = {**fragments, **numbers}

        def with_numbers(expr: sp.Expr) -> str:
            return _print(expr.xreplace({u: sp.S.One for u in view.UNIT_MARKERS}), merged, ranks, quantities)

        result = mathml_inner(MARKDOWN.quantity_math(view.shown(step.value)))
        if count > 2:
            lines.append(_at(s, fragments, with_numbers) if isinstance(s, At) else with_numbers(s.expr))
        lines.append(result)
    rows = [f'<mtr><mtd class="lhs"><mrow>{mathml_inner(step.latex)}</mrow></mtd><mtd class="rhs"><mrow><mo>=</mo>{lines[0]}</mrow></mtd></mtr>']
    rows += [f'<mtr><mtd class="lhs"></mtd><mtd class="rhs"><mrow><mo>=</mo>{line}</mrow></mtd></mtr>' for line in lines[1:]]
    return f'<math display="block"><mtable displaystyle="true">{"".join(rows)}</mtable></math>'


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


def render_sheet(sheet: Sheet, slugs: Sequence[str], plots: str | None = None) -> str:
    """One sheet's page; `slugs` (the registry's order) gives the previous and next pages.

    With `plots` (the folder of the plot files relative to the page, e.g. "../plots"), the sheet's SVG plots as images.
    """
    d = sheet.derivation
    v = view.build(sheet, HTML)
    names = dict(sheet.latex_names)
    ranks = view.term_ranks(list(names), set(d.expanded))
    for st, shown_step in zip(sheet.steps, v["steps"], strict=True):
        shown_step["equation"] = equation(st, names, ranks, len(shown_step["lines"]))
    i = list(slugs).index(d.slug)
    by_name = {info.name: info.latex for info in d.symbols}
    nav = {"prev": slugs[i - 1] if i > 0 else None, "next": slugs[i + 1] if i + 1 < len(slugs) else None}
    figures = [{"file": f["path"], "alt": f["alt"], "caption": Markup(prose.render(f["caption"], text, inline_math, by_name, None, HTML.link))}
               for f in (plot_refs(d, plots, "svg") if plots is not None else [])]
    return ENV.get_template("site-sheet.html.j2").render(site_title=TITLE, style=Markup(STYLE), csp=content_security_policy(), nav=nav, plain_slug=d.slug,
                                                         plain_title=prose.plain(d.title, by_name).replace("$", ""),
                                                         plots=figures, **_markup(v))


def render_index(sheets: Sequence[Sheet], api_reference: str | None = None) -> str:
    """The index: every sheet in the registry's order with its question, the conventions and the glossary.

    `api_reference`: the link (relative to the index) to the Python API reference, when the site has one.
    """
    glossary_names = {i.name: i.latex for i in GLOSSARY}

    def p(s: str, names: Mapping[str, str]) -> Markup:
        return Markup(prose.render(s, text, inline_math, names, None, HTML.link))

    entries = []
    for sheet in sheets:
        d = sheet.derivation
        names = {info.name: info.latex for info in d.symbols}
        entries.append({"href": page_name(d.slug), "slug": d.slug, "title": p(d.title, names), "question": p(d.question, names)})
    glossary = [{"symbol": Markup(inline_math(i.latex)), "name": i.name, "unit": Markup(_unit(i.unit)), "meaning": p(i.meaning, glossary_names)}
                for i in GLOSSARY]
    return ENV.get_template("site-index.html.j2").render(site_title=TITLE, style=Markup(STYLE), csp=content_security_policy(), sheets=entries,
                                                         conventions=[p(c, glossary_names) for c in conventions.CONVENTIONS], glossary=glossary,
                                                         api_reference=api_reference)


def render(sheets: Sequence[Sheet], plots: str | None = None, api_reference: str | None = None) -> dict[str, str]:
    """File name (relative to the site folder) -> page, for the index and every sheet; `plots` as in `render_sheet`, `api_reference` as in `render_index`."""
    slugs = [s.derivation.slug for s in sheets]
    pages = {INDEX: render_index(sheets, api_reference)}
    for sheet in sheets:
        pages[page_name(sheet.derivation.slug)] = render_sheet(sheet, slugs, plots)
    return pages

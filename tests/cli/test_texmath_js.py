"""roofline/texmath.js, a step's LaTeX as MathML in the browser (a live page's numbers line): in Debian's chromium, its tree of
every displayed equation's LaTeX is the MathML that renderers/site.py's `mathml_inner` (latex2mathml and its post-processing)
makes of the same LaTeX, for every row and left side that site.py's `equation` converts on every shipped sheet's page at its
default setup and at other models (dense and MoE), another chip and batches 1 and 64. It refuses LaTeX outside its subset
(null), and `build` makes no element or attribute outside site.py's whitelist.

The two are compared in a canonical form (`_canonical`), each element as (tag, attributes, text, children):
- an `mrow` is spliced into its parent: it only groups, so `<mrow><mi>a</mi></mrow>` and `<mi>a</mi>` read the same;
- except that each child of a positional element (mfrac, msub, msup, msubsup, mroot, munder, mover, munderover) is kept as one
  group, the tuple of its own spliced content, and msqrt's content is one group (its single argument);
- text is stripped (latex2mathml's no-break space with it), character references resolved (ElementTree reads them);
- of the attributes only those that change what is shown: mathvariant, stretchy, fence, form, width, columnalign.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from roofline.derivations.questions import registry
from roofline.renderers import site
from roofline.specs.errors import SpecError

from roofline import api

TEXMATH_JS = Path(__file__).resolve().parents[2] / "roofline" / "texmath.js"
MATHML = "http://www.w3.org/1998/Math/MathML"
#: (hardware and model, inputs set) beside each sheet's default setup; an input a sheet does not read is left out
SETUPS = (({"model": "llama-3.1-8b", "hardware": "a100-sxm-80gb"}, ("batch=1",)), ({"model": "deepseek-v3"}, ("batch=64",)),
          ({"model": "mixtral-8x7b", "hardware": "a100-sxm-80gb"}, ("batch=64",)))
KEPT = ("mathvariant", "stretchy", "fence", "form", "width", "columnalign")
POSITIONAL = frozenset({"mfrac", "msub", "msup", "msubsup", "mroot", "munder", "mover", "munderover"})


@functools.cache
def _corpus() -> dict[str, frozenset[str]]:
    """Every LaTeX line the sheets' pages show as a displayed equation -> its roles there: "lhs" (a left side), "formula" (a
    step's first row), "numbers" (a row after the first that is not the result: what a live page prints) and "result"."""
    lines: dict[str, set[str]] = {}
    real = site.equation

    def record(lhs, rows, live=""):
        lines.setdefault(lhs, set()).add("lhs")
        for i, row in enumerate(rows):
            lines.setdefault(row["math"], set()).add("formula" if i == 0 else "result" if i == len(rows) - 1 else "numbers")
        return real(lhs, rows, live)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(site, "equation", record)
        for slug in registry.SLUGS:
            names = {i.name for i in registry.get(slug).inputs}
            for kw, sets in (({}, ()), *SETUPS):
                try:
                    sheet = api.derive(slug, overrides=[s for s in sets if s.split("=")[0] in names], **kw)
                except SpecError:
                    continue  # a model or chip the sheet does not apply to
                site.render_sheet(sheet, registry.SLUGS)
    return {latex: frozenset(roles) for latex, roles in lines.items()}


def _canonical(tag: str, attrs: dict, text: str, kids: list) -> list:
    if tag == "mrow":
        return [x for k in kids for x in _canonical(*k)]
    spliced = [x for k in kids for x in _canonical(*k)]
    if tag in POSITIONAL:
        children = tuple(tuple(_canonical(*k)) for k in kids)
    elif tag == "msqrt":
        children = (tuple(spliced),)
    else:
        children = tuple(spliced)
    return [(tag, tuple((a, attrs[a]) for a in KEPT if a in attrs), text.strip(), children)]


def _from_xml(e: ElementTree.Element) -> tuple:
    return e.tag.removeprefix("{" + MATHML + "}"), dict(e.attrib), e.text or "", [_from_xml(c) for c in e]


def _from_tree(node: list) -> tuple:
    return node[0], node[1], "".join(c for c in node[2:] if isinstance(c, str)), [_from_tree(c) for c in node[2:] if not isinstance(c, str)]


def _python(latex: str) -> list:
    return _canonical(*_from_xml(ElementTree.fromstring(f'<math xmlns="{MATHML}">{site.mathml_inner(latex)}</math>')))


def _js(tree: list | None) -> list | None:
    return None if tree is None else _canonical("math", {}, "", [_from_tree(tree)])


#: every line's tree, whether `build` made exactly that tree of MathML elements, and what the built DOM holds outside the whitelist
CONVERT = """lines => {
  const NS = "http://www.w3.org/1998/Math/MathML";
  function back(el) {
    const out = [el.localName, {}];
    for (const a of el.attributes) { out[1][a.name] = a.value; }
    for (const c of el.childNodes) { out.push(c.nodeType === Node.TEXT_NODE ? c.data : back(c)); }
    return out;
  }
  return lines.map(latex => {
    const tree = RooflineTexMath.tree(latex);
    if (tree === null) { return [null, true]; }
    const el = RooflineTexMath.build(tree, document);
    const all = el === null ? [] : [el, ...el.querySelectorAll("*")];
    return [tree, el !== null && all.every(e => e.namespaceURI === NS) && JSON.stringify(back(el)) === JSON.stringify(tree)];
  });
}"""


@pytest.fixture(scope="module")
def tab(browser):
    page = browser.new_page()
    page.set_content("<html><body><div id='here'></div></body></html>")
    page.add_script_tag(content=TEXMATH_JS.read_text(encoding="utf-8"))
    yield page
    page.close()


def _mismatches(tab, lines: list[str]) -> dict[str, str]:
    """The lines the browser converts otherwise than mathml_inner -> what differs."""
    out = {}
    for latex, (tree, built) in zip(lines, tab.evaluate(CONVERT, lines), strict=True):
        if not built:
            out[latex] = f"{latex!r}: build does not make the tree"
        elif _js(tree) != _python(latex):
            out[latex] = f"{latex!r}:\n  python {site.mathml_inner(latex)}\n  js     {tree}"
    return out


@pytest.mark.slow
def test_the_browser_converts_every_displayed_equation_as_the_site_does(tab):
    corpus = _corpus()
    lines = sorted(corpus)
    numbers = [latex for latex in lines if "numbers" in corpus[latex]]
    assert len(lines) > 3000 and len(numbers) > 1500, (len(lines), len(numbers))
    bad = _mismatches(tab, lines)
    bad_numbers = [bad[latex] for latex in numbers if latex in bad]
    assert not bad_numbers, f"{len(bad_numbers)} of {len(numbers)} numbers lines differ, the first:\n" + "\n".join(bad_numbers[:5])
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, the first:\n" + "\n".join(list(bad.values())[:5])


#: the subset beyond what the sheets print today: every symbol the script knows, bare and upright, and each construction
SYMBOLS = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa varkappa lambda mu nu xi pi varpi rho varrho "
           "sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega pm neg lnot "
           "ldots ell prime dprime trprime qprime log ln lg exp sin cos tan sinh cosh tanh arcsin arccos arctan sec csc cot cdot times div "
           "ast lt gt dots cdots vdots ddots wedge land vee lor leq le geq ge neq ne ll gg approx simeq equiv propto to rightarrow "
           "leftarrow Rightarrow Leftrightarrow mapsto infty partial nabla sum prod int circ star in notin mp mid max min lim sup inf "
           "quad qquad enspace").split()
PROBES = [f"\\{s}" for s in SYMBOLS] + [f"\\mathrm{{\\{s} x}}" for s in SYMBOLS] + [
    r"a + b - c * d / e = f, g? h! i < j > k. l", r"(a) [b] |c| \{d\} \|e\|", r"a\,b\:c\>d\;e\!f\ g~h", r"\% \# \$ \& \_",
    r"x_{1}^{2}", r"x^{2}_{1}", r"x_1^2", r"a^b_c", r"{a}_{b}", r"x'", r"x''", r"x'''", r"x''''", r"x'''''", r"x'^{2}", r"t_{a}'",
    r"x^\prime", r"\frac12", r"\frac{1}{2}", r"\frac{a+b}{c}", r"\sqrt{x}", r"\sqrt[3]{x}", r"\sqrt[n+1]{x}", r"\sqrt[]{x}",
    r"\hat{x}", r"\widehat{x}", r"\bar{x}", r"\tilde{x}", r"\widetilde{x}", r"\vec{x}", r"\dot{x}", r"\ddot{x}", r"\check{x}",
    r"\acute{x}", r"\grave{x}", r"\breve{x}", r"\overline{x}", r"\underline{x}", r"\hat P_{\mathrm{mm}}",
    r"\left( x \right)", r"\left[ x \right]", r"\left| x \right|", r"\left\{ x \right\}", r"\left\| x \right\|", r"\left. x \right|",
    r"\left\lceil x \right\rceil", r"\left\lfloor x \right\rfloor", r"\left\langle x \right\rangle", r"\left\vert x \right\Vert",
    r"\left\lvert x \right\rvert", r"\left/ x \right.", r"\left(\left[x\right]\right)_{2}", r"\left(a\right)^{2}",
    r"\big| x \Big( y \bigg] z \Bigg/", r"\bigl( x \bigr)", r"\bigm| \Bigl[ \Biggr.", r"f\big|_{x = 1}",
    r"\text{a b}", r"\text{a  b}", r"\textrm{x}", r"\textup{x}", r"\textnormal{x}", r"\textmd{x}", r"\textit{x}", r"\textbf{x}",
    r"\textsf{x}", r"\texttt{x}", r"\text{}", r"\mathrm{GB}/\mathrm{s}", r"\mathrm{tokens/s}", r"\mathrm{\mu s}", r"\mathrm{\%}", r"50%",
    r"\mathrm{B\cdot token}", r"\mathrm{B}", r"\mathrm{x_{ab}}", r"\mathrm{kv2}", r'\mathrm{a"b}', r"\mathrm{\&b}", r"\mathrm{a\%}",
    r"\mathrm{(a)}", r"\mathrm{\log}", r"\mathrm{\max}", r"\mathrm x", r"\mathrm{\text{a}}", r"\operatorname{arg\,max}",
    r"\operatorname{d}", r"\mathrm{\operatorname{d}}", r"\operatorname{sign}{\left(x \right)}", r"8{,}192", r"1{,}234{,}567.5",
    r"\mathrm{1{,}234}", r"1{,}2.5{,}3", r"1.5{,}3", r"12{,}", r"1.", r".5", r"2mm", r"2 pt", r"-3 em", r"\min\left(a, b\right)",
    r"\max_{i} x_{i}", r"\log_{2}{\left(n\right)}", r"\sum_{i} x", r"e^{-x}", r"1.5 \times 10^{-5}",
    r"\begin{cases} a & \text{if } b \leq 1 \\ \text{no value} & \text{otherwise} \end{cases}", r"\begin{cases} a \\ \end{cases}",
    r"\begin{cases} a \\ b & \end{cases}", r"\begin{cases}\end{cases}", r"\begin{cases} {x} & y \end{cases}",
    r"x_{\left[\min\left(8, \gamma\right)\right]}", r"P{:}D", r"a;b@c`d", "\u03bc \u2264 \u2192 \u00e9", "\U0001d465 y", r"{}", r"x^{}",
    r"_{a}", r"\frac{\left(a\right)}{b}^{2}",
    r"\left\lceil{\frac{2 \cdot 8{,}192\,\mathrm{token} \cdot 1.5 \times 10^{5}\,\mathrm{B}}{3{,}350\,\mathrm{GB}/\mathrm{s}}}\right\rceil",
]


@pytest.mark.slow
def test_the_browser_converts_the_whole_subset_as_the_site_does(tab):
    bad = _mismatches(tab, PROBES)
    assert not bad, f"{len(bad)} of {len(PROBES)} differ, the first:\n" + "\n".join(list(bad.values())[:5])


#: what the script refuses: LaTeX outside its subset (where latex2mathml guesses, raises or writes markup the site refuses)
MALFORMED = [r"\frac{1}", r"\unknowncommand", "{", "}", "{a", "a}", r"\left( x", r"x \right)", r"\left( x \right", r"x_1_2", r"x^1^2",
             r"x'^2^3", r"a \\ b", "a & b", r"\sqrt", "x^", "_", "", "   ", r"\mathbf{x}", r"\operatorname*{x}", r"\\%x",
             r"\begin{matrix} a \end{matrix}", r"\begin{cases} a", r"\end{cases}", r"\big\{", r"\left< x \right>", r"\text",
             r"\href{x}{y}", r"\frac{a}}", r"{\frac{a}}", r"\sqrt[3", r"\begin{cases}[l] a \end{cases}", r"\begin{cases}{lc} a \end{cases}",
             "x#", "$x$", r"\color{red}x", r"\style{color:red}{x}", "{" * 20000 + "x"]


@pytest.mark.slow
def test_the_browser_refuses_latex_outside_the_subset(tab):
    got = tab.evaluate("xs => xs.map(x => RooflineTexMath.tree(x))", [*MALFORMED, None, 42, ["x"]])
    assert [x for x, t in zip([*MALFORMED, None, 42, ["x"]], got, strict=True) if t is not None] == []


@pytest.mark.slow
def test_text_stays_text_and_build_makes_nothing_outside_the_whitelist(tab):
    markup = "<script>document.title='x'</script><b onclick=\"x()\">b</b>"
    got = tab.evaluate("""latex => {
      const tree = RooflineTexMath.tree(latex), el = RooflineTexMath.build(tree, document);
      document.getElementById("here").appendChild(el);
      return {tree: tree, all: [el, ...el.querySelectorAll("*")].map(e => [e.namespaceURI, e.localName, e.getAttributeNames()]),
              text: el.textContent, scripts: document.querySelectorAll("script").length, title: document.title};
    }""", f"\\text{{{markup}}} + \\text{{<b>}}")
    assert got["tree"] == ["mrow", {}, ["mtext", {}, markup.replace(" ", "\u00a0")], ["mo", {}, "+"], ["mtext", {}, "<b>"]]
    assert got["all"] == [[MATHML, "mrow", []], [MATHML, "mtext", []], [MATHML, "mo", []], [MATHML, "mtext", []]]
    assert got["text"] == markup.replace(" ", "\u00a0") + "+<b>"
    assert got["scripts"] == 1 and got["title"] == ""  # the script tag holding texmath.js, and nothing ran

    refused = [["script", {}, "x"], ["mi", {"href": "https://example.com"}, "x"], ["mi", {"onclick": "alert(1)"}, "x"],
               ["mi", {"style": "color: red"}, "x"], ["mi", {"xlink:href": "x"}, "x"], ["mi", {"constructor": "x"}, "x"],
               ["mrow", {}, ["mi", {}, "a"], ["script", {}, "x"]], ["mrow", {}, ["mi", {"onload": "x"}, "a"]], ["semantics", {}],
               ["annotation-xml", {}, "x"], ["maction", {}], ["mi", {"mathvariant": 1}, "x"], ["mi", {}, 1], ["mi", {}, None], ["mi"],
               ["mi", None], ["mi", []], "mi", None, {"0": "mi", "1": {}}]
    assert tab.evaluate("nodes => nodes.map(n => RooflineTexMath.build(n, document))", refused) == [None] * len(refused)
    built = tab.evaluate("""n => { const el = RooflineTexMath.build(n, document);
      return [el.namespaceURI, el.localName, el.getAttribute("mathvariant"), el.textContent]; }""", ["mi", {"mathvariant": "normal"}, "B"])
    assert built == [MATHML, "mi", "normal", "B"]


def test_the_converter_builds_no_code_and_no_markup_from_text():
    text = TEXMATH_JS.read_text(encoding="utf-8")
    for word in ("eval(", "Function(", "innerHTML", "outerHTML", "insertAdjacentHTML", "DOMParser", "document.write", "createElement(",
                 "setTimeout(", "setInterval(", "import("):
        assert word not in text, word
    # the script's whitelist is site.py's
    for name, whitelist in (("MATHML_ELEMENTS", site.MATHML_ELEMENTS), ("MATHML_ATTRIBUTES", site.MATHML_ATTRIBUTES)):
        words = re.search(rf"var {name} = set\((.*?)\);", text, re.S).group(1)
        assert set(" ".join(re.findall(r'"([^"]*)"', words)).split()) == whitelist, name

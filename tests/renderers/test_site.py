"""The HTML site: well-formed pages, one per sheet, links that resolve, math as MathML; rendered in headless Chromium (slow)."""

import html
import json
import posixpath
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from roofline.derivations.questions import registry
from roofline.derivations.questions.registry import DERIVATIONS
from roofline.renderers import site, view
from roofline.renderers.figure_refs import refs as plot_refs
from roofline.specs.catalog import HARDWARE_DIR

from roofline import api
from roofline.build_outputs import BOOK, SITE_DIR, output_names
from tests import untrusted

PLOTS = "../plots"
#: Where the slow test leaves a screenshot of every page (look at them).
SCREENSHOTS = Path("/tmp/roofline-site-screenshots")
SCREENSHOT_WIDTH = 1000
MAX_SCREENSHOT_HEIGHT = 16000
#: HTML's void elements (no end tag) and MathML's empty ones written as `<x />`.
VOID = {"meta", "br", "img", "hr", "link", "input", "mspace"}
RAW_TEX = ("\\frac", "\\sym", "\\mathrm", "\\cdot", "$")


class _Page(HTMLParser):
    """Checks nesting and collects links, text outside math, and the characters inside math."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self.math_text: list[str] = []
        self.math_count = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("href", "src"):
            if key in a:
                self.links.append(a[key])
        if tag == "math":
            self.math_count += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID:
            self.errors.append(f"<{tag}/> is not an empty element")

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        if "style" in self.stack or "title" in self.stack:
            return
        (self.math_text if "math" in self.stack else self.text).append(data)


def parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    return p


#: The pages as `roofline build` writes them without --pdf: they link the sheets' files one folder up, and the book's LaTeX.
DOWNLOADS = site.Downloads("..", BOOK, pdf=False)


@pytest.fixture(scope="module")
def pages(sheets):
    return site.render(sheets, PLOTS, downloads=DOWNLOADS)


def test_every_sheet_has_a_page_and_the_index_lists_them_by_part(pages):
    assert set(pages) == {site.INDEX} | {f"{d.slug}.html" for d in DERIVATIONS}
    index = pages[site.INDEX]
    links = [link for link in parse(index).links if link.endswith(".html")]
    by_part = registry.by_part([d.slug for d in DERIVATIONS])
    assert links == [f"{slug}.html" for _, members in by_part for slug in members] and sorted(links) == sorted(f"{d.slug}.html" for d in DERIVATIONS)
    assert [p.key for p, _ in by_part] == [p.key for p in registry.PARTS]  # every part holds a sheet; none is left without one
    positions = [index.index(f'<h3 id="part-{p.key}">{html.escape(p.title)}</h3>') for p in registry.PARTS]
    assert positions == sorted(positions)


def test_every_question_names_a_part():
    keys = [p.key for p in registry.PARTS]
    assert len(set(keys)) == len(keys) == 5
    assert all(q.part in keys for q in registry.QUESTIONS), [q.slug for q in registry.QUESTIONS if q.part not in keys]
    assert registry.by_part(["decode-floor", "my-own-sheet"]) == [(registry.PARTS[0], ["decode-floor"]), (None, ["my-own-sheet"])]


def test_pages_are_well_formed(pages):
    for name, page in pages.items():
        p = parse(page)
        assert p.errors == [] and p.stack == [], f"{name}: {p.errors[:3]} open: {p.stack}"
        assert page.startswith("<!DOCTYPE html>") and "<script" not in page, name


_ID = re.compile(r'\sid="([^"]*)"')


def _out_files(sheets, pdf: bool) -> set[str]:
    """What a build writes in out/ that a page may link: the sheets' files and the book (PDFs only when built), the plots, the pages."""
    files = {n for n in output_names() if pdf or not n.endswith(".pdf")}
    files |= {posixpath.normpath(posixpath.join(SITE_DIR, f["path"])) for s in sheets for f in plot_refs(s.blueprint, PLOTS, "svg")}
    return files


def test_links_resolve_and_anchors_are_unique(pages, sheets):
    """Every id on a page is unique; every in-page link finds its id; every other link is a file the build writes beside it."""
    files = _out_files(sheets, pdf=False) | {f"{SITE_DIR}/{p}" for p in pages}
    for name, page in pages.items():
        ids = _ID.findall(page)
        assert len(ids) == len(set(ids)), f"{name}: ids used twice: {sorted({i for i in ids if ids.count(i) > 1})[:5]}"
        for link in parse(page).links:
            if link.startswith("https://"):  # a spec's source, printed in the appendix
                continue
            if link.startswith("#"):  # a section of the same page
                assert link[1:] in ids, f"{name}: no section {link!r}"
                continue
            assert posixpath.normpath(posixpath.join(SITE_DIR, link)) in files, f"{name}: link {link!r} goes nowhere"


def test_every_step_and_section_has_a_stable_anchor(sheets, pages):
    """Each printed step's id is made from its name (step-<name>), each section's from its own; rendering again gives the same ids."""
    sheet = next(s for s in sheets if s.derivation.slug == "speculative-decoding")
    page = pages["speculative-decoding.html"]
    v = view.build(sheet, site.HTML)
    for s in (*v["argument"], *v["steps"]):
        if s["kind"] == "step":
            assert f'<div class="step" id="step-{s["name"].lower().replace("_", "_")}">' in page, s["name"]
    for i, _ in site.SECTIONS:
        if i not in ("takeaways", "scoring", "limits") or v[i]:
            assert f'<section id="{i}">' in page, i
    assert _ID.findall(page) == _ID.findall(site.render_sheet(sheet, [d.slug for d in DERIVATIONS], PLOTS, DOWNLOADS))


def test_the_contents_panel_lists_every_section_step_and_table(pages):
    """The panel (after the answer, so a phone shows the answer first) links every section and heading id of the page's main
    column and every step of the argument, in page order."""
    for name, page in pages.items():
        if name == site.INDEX:
            continue
        panel = re.search(r'<aside class="contents"[^>]*>(.*?)</aside>', page, re.S)
        assert panel, name
        listed = re.findall(r'<a href="#([^"]+)">', panel.group(1))
        rest = page.replace(panel.group(0), "")
        headed = re.findall(r'<(?:section|h[2-4]) id="([^"]+)"', rest)
        argued = re.findall(r'<div class="step" id="([^"]+)">', rest[rest.index('<section id="argument">'):rest.index("</section>", rest.index('<section id="argument">'))])
        assert set(listed) == set(headed) | set(argued), f"{name}: missing {sorted((set(headed) | set(argued)) - set(listed))[:4]}, extra {sorted(set(listed) - set(headed) - set(argued))[:4]}"
        order = [rest.index(f'id="{i}"') for i in listed]
        assert order == sorted(order), f"{name}: the contents are not in page order"
        assert page.index('<section id="answer">') < page.index('<aside class="contents"') < page.index('<section id="argument">'), name


def test_title_and_description_say_the_question(sheets, pages):
    for sheet in sheets:
        d = sheet.derivation
        page = pages[f"{d.slug}.html"]
        title = html.unescape(re.search(r"<title>(.*?)</title>", page).group(1))
        description = html.unescape(re.search(r'<meta name="description" content="([^"]*)">', page).group(1))
        names = {i.name: i.latex for i in d.symbols}
        assert title.startswith(site._plain(d.title, names)) and description == site._plain(d.question, names), d.slug
        assert description.split()[:6] == d.question.split()[:6] and "\\" not in title + description and "$" not in description, d.slug
    index = pages[site.INDEX]
    assert re.search(r'<meta name="description" content="[^"]{40,}">', index) and "<title>" in index


def test_every_table_scrolls_inside_its_own_wrapper(pages):
    """On a phone a wide table scrolls inside its container, not the page: every <table> is the one child of a .scroll block."""
    assert ".scroll { overflow-x: auto;" in site.STYLE
    for name, page in pages.items():
        tables = len(re.findall(r"<table[ >]", page))
        assert tables > 0 and len(re.findall(r'<div class="scroll">\n<table[ >]', page)) == tables, name
        assert len(re.findall(r"</table>\n</div>", page)) == tables, name


def test_pages_link_the_pdfs_only_when_the_build_makes_them(sheets, pages):
    """Without --pdf a page links the sheet's Markdown, LaTeX and JSON and the book's LaTeX, and says how to get PDFs; with
    --pdf it links the sheet's PDF and the book's."""
    sheet = sheets[0]
    slug = sheet.derivation.slug
    plain = parse(pages[f"{slug}.html"]).links
    assert f"../{slug}.tex" in plain and f"../{BOOK}.tex" in plain and not [x for x in plain if x.endswith(".pdf")]
    assert "roofline build --pdf</code> writes them" in pages[f"{slug}.html"]
    with_pdf = site.render_sheet(sheet, [d.slug for d in DERIVATIONS], PLOTS, site.Downloads("..", BOOK, pdf=True))
    links = parse(with_pdf).links
    assert f"../{slug}.pdf" in links and f"../{BOOK}.pdf" in links and "--pdf</code>" not in with_pdf
    files = _out_files(sheets, pdf=True)
    assert all(posixpath.normpath(posixpath.join(SITE_DIR, x)) in files for x in links if x.startswith("../"))
    assert f"../{BOOK}.pdf" in parse(site.render_index(sheets, None, site.Downloads("..", BOOK, pdf=True))).links


def test_sheet_links_in_prose_become_page_links(pages):
    """A sheet whose prose says @slug links to that page."""
    linked = {d.slug: re.findall(r"@([a-z0-9]+(?:-[a-z0-9]+)+)", " ".join(d.takeaways + d.limits + d.assumptions)) for d in DERIVATIONS}
    slug, targets = next((s, t) for s, t in linked.items() if t)
    assert all(f'<a href="{t}.html">{t}</a>' in pages[f"{slug}.html"] for t in targets)


def test_no_raw_tex_anywhere(pages):
    """Prose math and equations are MathML: no TeX outside math, no backslash command inside it."""
    for name, page in pages.items():
        p = parse(page)
        text = "".join(p.text)
        assert not [t for t in RAW_TEX if t in text], f"{name}: raw TeX in the text: {[t for t in RAW_TEX if t in text]}"
        inside = "".join(p.math_text)
        assert "\\" not in inside, f"{name}: a TeX command left in MathML near {inside[max(0, inside.index(chr(92)) - 40):][:80]!r}"
        assert p.math_count > 0


def test_every_printed_step_is_one_block_equation(sheets, pages):
    """Each printed step's equation (the argument's, then the appendix's) is a block of MathML whose rows are symbol = formula
    (= numbers) = result; a family of steps is one table, and a step that does not apply is not printed."""
    sheet = sheets[0]
    page = pages[f"{sheet.derivation.slug}.html"]
    blocks = re.findall(r'<math display="block">(.*?)</math>', page)
    v = view.build(sheet, site.HTML)
    printed = [s for s in (*v["argument"], *v["steps"]) if s["kind"] == "step"]
    assert len(blocks) == len(printed) < len(sheet.steps) + len(v["argument"])
    first = blocks[0]
    assert first.count("<mtr>") == 3  # W = P_base b_w = numbers = result (a dense model: its zero routed term not printed)
    assert "<mfrac>" in "".join(blocks)  # a division as a fraction


def test_user_text_is_escaped(tmp_path):
    chip = (HARDWARE_DIR / "h100-sxm.toml").read_text().replace('name = "NVIDIA H100 SXM5 80GB"', 'name = "<script>alert(1)</script> & <b>x</b>"')
    (tmp_path / "evil-chip.toml").write_text(chip)
    sheet = api.derive("decode-floor", hardware=str(tmp_path / "evil-chip.toml"))
    page = site.render_sheet(sheet, [d.slug for d in DERIVATIONS])
    assert "<script>" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;x&lt;/b&gt;" in page


def test_pages_are_deterministic(sheets, pages):
    assert site.render(sheets, PLOTS, downloads=DOWNLOADS) == pages


def test_digit_groups_stay_one_number():
    assert site.mathml_inner(r"1{,}234{,}567.5\,\mathrm{GB}").startswith("<mrow><mn>1,234,567.5</mn>")
    assert '<mi mathvariant="normal">%</mi>' in site.mathml_inner(r"5\,\mathrm{%}")  # a percent unit is a character, not a TeX comment
    assert "<mo>&#x0003C;</mo>" in site.mathml_inner("a < b")  # markup's own characters stay references
    assert site.mathml_inner(r"\mathrm{B}") == "<mrow><mtext>B</mtext></mrow>"  # the byte upright, not the batch B


# --- in a browser -----------------------------------------------------------------------------------

#: Test-only: appended to a copy of each page, it writes every <math>'s laid-out size and the page's visible text into the DOM,
#: which `chromium --dump-dom` then prints. The shipped pages carry no script.
PROBE = """<script>
window.addEventListener('load', () => {
  const sizes = [...document.querySelectorAll('math')].map(m => { const r = m.getBoundingClientRect(); return [r.width, r.height]; });
  const imgs = [...document.querySelectorAll('img')].map(i => [i.naturalWidth, i.naturalHeight]);
  const pre = document.createElement('pre');
  pre.id = 'roofline-probe';
  pre.textContent = JSON.stringify({sizes, imgs, text: document.body.innerText, height: document.documentElement.scrollHeight});
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is needed for the slow site test (.ci/run installs it)"
    return exe


def _run(args: list[str]) -> str:
    return subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
                          capture_output=True, text=True, timeout=120, check=True).stdout


_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">\n?')


def _without_policy(page: str) -> str:
    assert _POLICY.search(page), "every page sends a Content-Security-Policy"
    return _POLICY.sub("", page)


def _dump(path: Path) -> tuple[str, str]:
    """The DOM after load (scripts, if any ran, have run) and the browser's console log (policy violations)."""
    run = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    return run.stdout, run.stderr


def _title(dom: str) -> str:
    return html.unescape(re.search(r"<title>(.*?)</title>", dom, re.S).group(1))


@pytest.mark.slow
def test_no_script_runs_and_no_event_handler_survives_from_user_text(tmp_path):
    """A derivation file, chip and model whose every text field carries a script, handlers and tags (tests/untrusted.py):
    in Chromium no payload runs (each would retitle the page), the live DOM holds no script, handler or tag from them,
    with the page's policy and without it (escaping alone holds); and the policy itself stops a script that got in."""
    sheet = api.derive(str(untrusted.write_files(tmp_path)))
    page = site.render_sheet(sheet, [sheet.derivation.slug])
    folder = tmp_path / "site"
    folder.mkdir()
    for name, text in (("shipped.html", page), ("no-policy.html", _without_policy(page))):
        (folder / name).write_text(text, encoding="utf-8")
        dom, log = _dump(folder / name)
        assert _title(dom).startswith("Hostile <script>"), f"{name}: a payload retitled the page: {_title(dom)!r}"
        assert untrusted.html_markup_found(dom) == [], name
        assert "Content Security Policy" not in log, f"{name}: the page broke its own policy (nothing should even try): {log[:300]}"
    injected = page.replace("</body>", f"<script>document.title='{untrusted.PWNED}'</script><img src=x onerror=\"document.title='{untrusted.PWNED}'\"></body>")
    (folder / "injected.html").write_text(injected, encoding="utf-8")
    dom, log = _dump(folder / "injected.html")
    assert _title(dom) != untrusted.PWNED and "violates the following Content Security Policy directive" in log
    (folder / "injected-no-policy.html").write_text(_without_policy(injected), encoding="utf-8")
    assert _title(_dump(folder / "injected-no-policy.html")[0]) == untrusted.PWNED  # the probe itself works: a script that runs is seen


@pytest.mark.slow
def test_shipped_pages_keep_their_own_policy(sheets, pages, tmp_path):
    """Every shipped page, with its plots beside it, loads its style and images without one violation of its policy."""
    root = tmp_path / "out"
    (root / "site").mkdir(parents=True)
    for sheet in sheets:
        for name, data in api.plot_files(sheet, "plots").items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
    for name in (site.INDEX, "batch-knee.html", "speculative-decoding.html"):
        (root / "site" / name).write_text(pages[name], encoding="utf-8")
        _, log = _dump(root / "site" / name)
        assert "Content Security Policy" not in log, f"{name}: {log[:300]}"


#: every page of the site: one browser test each, so the runners share them out
PAGE_NAMES = [site.INDEX, *(f"{d.slug}.html" for d in DERIVATIONS)]


@pytest.fixture(scope="module")
def site_root(sheets, pages, tmp_path_factory) -> Path:
    """A built site on disk, `out/site/*.html` beside `out/plots/`, written once for the module's browser tests."""
    root = tmp_path_factory.mktemp("site") / "out"
    (root / "site").mkdir(parents=True)
    for sheet in sheets:
        for name, data in api.plot_files(sheet, "plots").items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
    for name, page in pages.items():
        (root / "site" / name).write_text(page, encoding="utf-8")
    SCREENSHOTS.mkdir(exist_ok=True)
    return root


def test_every_page_has_a_browser_test(pages):
    assert sorted(PAGE_NAMES) == sorted(pages)


@pytest.mark.slow
@pytest.mark.parametrize("name", PAGE_NAMES)
def test_math_renders_in_chromium(name, pages, site_root):
    """Every <math> has a nonzero laid-out size, no TeX is visible, every plot loads; a screenshot of each page is kept."""
    page = pages[name]
    probe = site_root / "site" / f"probe-{name}"
    # the probe is a script, which the page's own policy forbids: the test's copy drops the policy to let it run
    probe.write_text(_without_policy(page).replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _run(["--virtual-time-budget=5000", "--dump-dom", probe.as_uri()])
    found = re.search(r'<pre id="roofline-probe">(.*?)</pre>', dom, re.S)
    assert found, f"{name}: the probe did not run"
    data = json.loads(html.unescape(found.group(1)))
    assert len(data["sizes"]) == parse(page).math_count > 0, name
    empty = [i for i, (w, h) in enumerate(data["sizes"]) if w <= 0 or h <= 0]
    assert empty == [], f"{name}: {len(empty)} math elements laid out with no size"
    block_heights = sorted(h for w, h in data["sizes"])
    assert block_heights[-1] > 2 * block_heights[0], f"{name}: math laid out flat (no fractions or rows): MathML not rendered?"
    visible = [t for t in RAW_TEX if t in data["text"]]
    assert visible == [], f"{name}: raw TeX visible: {visible}"
    assert all(w > 0 and h > 0 for w, h in data["imgs"]), f"{name}: a plot did not load"
    height = min(int(data["height"]), MAX_SCREENSHOT_HEIGHT)  # the whole page, up to a height Chromium can capture
    _run([f"--window-size={SCREENSHOT_WIDTH},{height}", f"--screenshot={SCREENSHOTS / (name[:-5] + '.png')}", (site_root / "site" / name).as_uri()])
    assert (SCREENSHOTS / (name[:-5] + ".png")).stat().st_size > 10_000


#: Test-only, like PROBE: where the answer's first headline sentence ends, and whether anything makes the page itself scroll sideways.
FOLD_PROBE = """<script>
window.addEventListener('load', () => {
  const first = document.querySelector('#answer li');
  const pre = document.createElement('pre');
  pre.id = 'roofline-probe';
  pre.textContent = JSON.stringify({answer_bottom: first.getBoundingClientRect().bottom, inner: [innerWidth, innerHeight],
    page_width: document.documentElement.scrollWidth, client_width: document.documentElement.clientWidth,
    wide_tables: [...document.querySelectorAll('.scroll')].filter(d => d.scrollWidth > d.clientWidth).length});
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1200, 900), (390, 844)])
def test_the_answer_is_above_the_fold_and_only_tables_scroll_sideways(pages, site_root, size):
    """On a laptop (1200x900) and a phone (390x844) the answer's first headline sentence is on the first screen, and the
    page never scrolls sideways: a table wider than the phone scrolls inside its wrapper. A screenshot of each is kept."""
    root = site_root
    for name in ("speculative-decoding.html", "decode-op-ranking.html", "mbu-diagnosis.html"):
        probe = root / "site" / f"probe-fold-{size[0]}-{name}"
        probe.write_text(_without_policy(pages[name]).replace("</body>", FOLD_PROBE + "</body>"), encoding="utf-8")
        dom = _run([f"--window-size={size[0]},{size[1]}", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()])
        data = json.loads(html.unescape(re.search(r'<pre id="roofline-probe">(.*?)</pre>', dom, re.S).group(1)))
        assert data["answer_bottom"] <= size[1], f"{name} at {size}: the answer's first sentence ends at {data['answer_bottom']:.0f} px"
        assert data["page_width"] <= data["client_width"], f"{name} at {size}: the page scrolls sideways ({data})"
        shot = SCREENSHOTS / f"{name[:-5]}-{size[0]}x{size[1]}.png"
        _run([f"--window-size={size[0]},{size[1]}", f"--screenshot={shot}", (root / "site" / name).as_uri()])
        assert shot.stat().st_size > 10_000


def test_every_figure_opens_full_size_and_text_and_math_share_one_typeface(pages):
    """Issue 40 item 6: a figure on a phone is a link to itself at full size; the body and the math name the same family first
    (Latin Modern, the figures' and the PDF's), and math is set at the text's size."""
    for name, page in pages.items():
        for img in re.findall(r"<img src=\"([^\"]+)\"", page):
            assert f'<a href="{img}"' in page, f"{name}: {img} is not a link to itself"
    body = re.search(r"body \{ font-family: '([^']+)'", site.STYLE).group(1)
    math = re.search(r"math \{ font-family: '([^']+)'[^}]*font-size: 1em", site.STYLE).group(1)
    assert body.split()[:2] == math.split()[:2] == ["Latin", "Modern"]

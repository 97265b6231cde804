"""Files from strangers, for the tests of issue 22: a derivation file, a chip and a model whose every text field carries markup.

Each payload, if it ever became markup, would act: retitle the page, set a global, or run a handler. The tests assert that
none of them reaches any output as markup (Markdown, the notebook's Markdown and LaTeX, the site in Chromium).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from roofline.specs.catalog import HARDWARE_DIR, MODELS_DIR

#: What a page's title becomes, and the global a script sets, if any payload ran.
PWNED = "PWNED"
#: Markup in plain text fields: a script, event handlers on an image and an SVG, a javascript: link, a raw tag.
TEXT_PAYLOADS = (
    f"<script>document.title='{PWNED}';window.roofline_pwned=1</script>",
    f"<img src=x onerror=\"document.title='{PWNED}'\">",
    "<svg onload=\"window.roofline_pwned=1\"></svg>",
    f"[click](javascript:document.title='{PWNED}')",
    "<b>bold</b> & <i onmouseover=alert(1)>x</i>",
)
#: Markup in math that prose math accepts (math-mode relations, which every output writes as math, never as a tag).
MATH_PAYLOADS = (
    r"$a<b>c$",
    r"$x < \frac{1}{2} > y$",
    r"$|a| < b$",
)
#: Everything refused at load: markup inside text-mode math, and \text without its brace.
REFUSED_MATH = (
    rf"$\text{{<script>document.title='{PWNED}'</script>}}$",
    r"$\text{<img src=x onerror=alert(1)>}$",
    r"$\text <b>$",
)
#: A single payload string that carries one of each kind of text payload.
ALL_TEXT = " ".join(TEXT_PAYLOADS)
#: Source addresses (a chip's `source`, which the sheets print as links) that would close the link and read a file, or break a
#: Markdown table, if copied as they are.
URL_PAYLOADS = (
    r"https://example.com/a}\input{/etc/hostname}\url{x",
    "https://example.com/b|c`d",
)


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a TOML basic string for this text (no control characters)


def write_files(folder: Path) -> Path:
    """A chip, a model (config.json with its metadata) and a derivation file using both, each text field hostile; the file's path."""
    chip = "\n" + (HARDWARE_DIR / "h100-sxm.toml").read_text()
    for field in ("name", "vendor", "source"):
        start = chip.index(f"\n{field} = ") + 1
        end = chip.index("\n", start)
        value = ALL_TEXT + (" " + " ".join(URL_PAYLOADS) if field == "source" else "")
        chip = chip[:start] + f"{field} = {_toml_string(value)}" + chip[end:]
    (folder / "evil-chip.toml").write_text(chip, encoding="utf-8")
    (folder / "evil-model.json").write_text((MODELS_DIR / "llama-3.1-8b.json").read_text(), encoding="utf-8")
    (folder / "evil-model.toml").write_text(
        f"name = {_toml_string(ALL_TEXT)}\nstatus = \"U\"\nsource = {_toml_string(ALL_TEXT)}\nnotes = {_toml_string(ALL_TEXT)}\n", encoding="utf-8")
    prose = f"{ALL_TEXT} {' '.join(MATH_PAYLOADS)}"
    lines = [
        'slug = "hostile"',
        f"title = {_toml_string('Hostile ' + TEXT_PAYLOADS[0])}",
        f"question = {_toml_string(prose)}",
        'hardware = ["./evil-chip.toml"]',
        'models = ["./evil-model.json"]',
        'results = ["t_read", "T_equal"]',
        f"assumptions = [{_toml_string(prose)}]",
        f"takeaways = [{_toml_string(prose + ' {t_read}')}]",
        f"answer = [{_toml_string(prose + ' {t_read} and {T_equal}')}]",
        f"scoring = [{_toml_string(prose)}]",
        f"limits = [{_toml_string(prose)}]",
        "[[inputs]]",
        'name = "share"',
        'unit = "1"',
        'default = "0.5"',
        'domain = "fraction"',
        r"latex = '\phi_{<b>}'",
        f"meaning = {_toml_string(prose)}",
        "[[steps]]",
        'name = "t_read"',
        f"title = {_toml_string(TEXT_PAYLOADS[1])}",
        'formula = "share*P_active*b_w/beta"',
        'unit = "s"',
        'display = "ms"',
        r"latex = 't_{<i>}'",
        f"meaning = {_toml_string(ALL_TEXT)}",
        f"why = {_toml_string(prose)}",
        "[[steps]]",
        'name = "t_kv"',
        'formula = "B*T*e_kv*b_kv/beta"',
        'unit = "s"',
        f"why = {_toml_string(prose)}",
        "[[steps]]",
        'name = "T_equal"',
        'solve = "t_kv = t_read"',
        'for = "T"',
        'unit = "token"',
        f"why = {_toml_string(prose)}",
        f"none = {_toml_string(ALL_TEXT)}",
        "[[claims]]",
        f"text = {_toml_string(prose)}",
        'left = "t_read"',
        'right = "1 ms"',
        "[[tables]]",
        f"title = {_toml_string(TEXT_PAYLOADS[0])}",
        'columns = ["t_read"]',
        f"note = {_toml_string(prose)}",
        "[[tables.rows]]",
        f"label = {_toml_string(TEXT_PAYLOADS[2] + TEXT_PAYLOADS[3])}",
        'set = { share = "0.25" }',
        "[[tables.rows]]",
        'hardware = "./evil-chip.toml"',
        'model = "./evil-model.json"',
    ]
    path = folder / "hostile.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_LIVE = re.compile(r"<(?:script|img|svg|b|i)\b|(?<!\\)\]\(javascript:|<a href=\"javascript", re.I)


def markup_found(markdown: str) -> list[str]:
    """The payloads (or pieces of them) that appear in Markdown as live markup: a raw tag, a javascript: link."""
    return sorted(set(_LIVE.findall(markdown)))


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "img", "svg", "b", "i", "iframe", "object", "embed"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}>")

    handle_startendtag = handle_starttag


def html_markup_found(page: str) -> list[str]:
    """Elements and attributes in an HTML page that could run or load something: script-like tags, on* handlers, javascript: URLs."""
    p = _Elements()
    p.feed(page)
    p.close()
    return p.found

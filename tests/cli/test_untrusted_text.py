"""Issue 22, families 1 and 2: text from a file someone sent you never becomes markup, and never acts on a terminal.

Family 1: a derivation file (or a chip or model it names) whose every text field carries markup renders in every output
as text: Markdown (`--format md`), the notebook's `_repr_markdown_` and `_repr_latex_`, and the site (whose pages also send a
Content-Security-Policy that forbids script; tests/renderers/test_site.py opens them in Chromium). Markup inside text-mode
math, which no output could spell as math, is refused at load.

Family 2: controls, bidirectional marks and zero-width characters in any file's text are refused with one line naming the
file and field, and no error line carries a raw control character to the terminal.
"""

from __future__ import annotations

import base64
import hashlib
import html as html_module
import json
import re
from pathlib import Path

import pytest
from roofline.renderers import site
from roofline.specs.catalog import HARDWARE_DIR, MODELS_DIR
from roofline.specs.errors import SpecError
from roofline.specs.measurements import MEASUREMENTS_DIR, parse_measurements
from roofline.specs.models import parse_config
from roofline.specs.text import escaped, problem

from roofline import api
from roofline.cli import main
from tests import untrusted

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kv-offload.toml"


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --- family 1: markup ---------------------------------------------------------------------------------

#: (id, how the example file is changed, what the one error line says)
REFUSED_MARKUP = [
    ("script-in-text-in-the-question", lambda s: s.replace('title = "Offloading', 'title = "Off $\\\\text{<script>document.title=1</script>}$ loading'),
     "has < or > inside \\text{...}"),
    ("image-handler-in-text-in-a-why", lambda s: s.replace('why = "Each cached token', 'why = "$\\\\text{<img src=x onerror=alert(1)>}$ Each cached token'),
     "has < or > inside \\text{...}"),
    ("tag-in-a-step-latex", lambda s: s.replace("latex = 's_{\\mathrm{kv}}'", "latex = 's_{\\text{<b>}}'"),
     "steps[0].latex: "),
    ("text-without-its-brace", lambda s: s.replace("latex = 's_{\\mathrm{kv}}'", "latex = 's_{\\text <b>}'"),
     "\\text without a brace"),
    ("tag-in-an-input-latex", lambda s: s.replace("latex = '\\phi_{\\mathrm{host}}'", "latex = '\\phi_{\\text{<svg onload=x>}}'"),
     "inputs[0].latex: "),
]


@pytest.mark.parametrize(("case", "change", "message"), REFUSED_MARKUP, ids=[c[0] for c in REFUSED_MARKUP])
def test_markup_in_text_mode_math_is_refused_in_one_line(case, change, message, tmp_path, capsys):
    text = change(EXAMPLE.read_text())
    assert text != EXAMPLE.read_text(), "the change must apply"
    path = tmp_path / "x.toml"
    path.write_text(text)
    assert main(["derive", str(path), "--format", "md"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    line = _one_error_line(captured.err)
    assert str(path) in line and message in line


@pytest.fixture(scope="module")
def hostile_sheet(tmp_path_factory):
    return api.derive(str(untrusted.write_files(tmp_path_factory.mktemp("hostile"))))


def test_no_text_from_a_stranger_becomes_markup_in_any_output(hostile_sheet):
    """Scripts, handlers, tags and javascript: links in every text field of the file, the chip and the model: text everywhere."""
    md = api.render(hostile_sheet, "md")
    assert untrusted.markup_found(md) == []
    assert untrusted.markup_found(hostile_sheet._repr_markdown_()) == []
    assert untrusted.markup_found(hostile_sheet._repr_latex_()) == []
    assert "&lt;script" in md and "\\lt " in md  # text escaped, math-mode < written as \lt
    page = site.render_sheet(hostile_sheet, [hostile_sheet.derivation.slug])
    assert untrusted.html_markup_found(page) == []
    assert "&lt;script&gt;" in page
    head = page[:page.index("</head>")]  # the title and description say the question as text: escaped, no tag, no attribute break-out
    assert re.search(r'<meta name="description" content="[^"<>]*&lt;script[^"<>]*">', head) and "<title>Hostile &lt;script" in head
    tex = api.render(hostile_sheet, "tex")
    assert "\\textless{}script\\textgreater{}" in tex
    assert "\\input{" not in tex and "\\url{https://example.com/a}" in tex  # a source's address is linked up to its first brace
    assert "<https://example.com/a>" in md and "<https://example.com/b>" in md and "}\\input" not in md
    doc = json.loads(api.render(hostile_sheet, "json"))
    assert untrusted.TEXT_PAYLOADS[0] in doc["title"]  # JSON carries the text as written: a string, for scripts to escape themselves


def test_math_in_markdown_holds_no_tag_opener_or_cell_border(hostile_sheet):
    md = api.render(hostile_sheet, "md")
    blocks = re.findall(r"\$\$(.*?)\$\$", md, re.S)
    spans = re.findall(r"(?<!\\)\$([^$]+?)(?<!\\)\$", re.sub(r"\$\$.*?\$\$", "", md, flags=re.S))
    assert blocks and spans
    for math in (*blocks, *spans):
        assert "<" not in math and ">" not in math and "|" not in math, math


def test_pages_send_a_policy_that_forbids_script_and_names_their_style(hostile_sheet):
    page = site.render_sheet(hostile_sheet, [hostile_sheet.derivation.slug])
    index = site.render_index([hostile_sheet])
    for html in (page, index):
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
        assert policy, "every page sends a Content-Security-Policy"
        rules = dict(r.strip().split(" ", 1) for r in html_module.unescape(policy.group(1)).split(";"))
        assert rules["default-src"] == "'none'" and "script-src" not in rules  # no script, no inline handler
        style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert rules["style-src"] == f"'sha256-{digest}'"  # the page's own style, and only it


@pytest.mark.parametrize("latex", [r"\text{<script>alert(1)</script>}", r"\text{a&b}", r"\text{<b onclick=x>}"])
def test_converted_math_outside_the_mathml_whitelist_is_shown_as_escaped_text(latex):
    """Defence in depth: whatever the converter writes that is not whitelisted MathML becomes its TeX, escaped."""
    inner = site.mathml_inner(latex)
    assert inner.startswith("<merror><mtext>") and "<script" not in inner and "onclick=" not in inner.replace("onclick=x&gt;", "")
    assert untrusted.html_markup_found(f"<math>{inner}</math>") == []


# --- family 2: controls ---------------------------------------------------------------------------------

def _chip(tmp: Path, field: str, value: str) -> Path:
    text = "\n" + (HARDWARE_DIR / "h100-sxm.toml").read_text()
    start = text.index(f"\n{field} = ") + 1
    end = text.index("\n", start)
    path = tmp / "chip.toml"
    path.write_text(text[:start] + f"{field} = {json.dumps(value)}" + text[end:])
    return path


#: (id, argv builder, what the error line names)
CONTROL_CASES = [
    ("terminal-title-and-clear-in-a-chip-name", lambda t: ["show", "hardware", str(_chip(t, "name", "\x1b]0;PWNED\x07\x1b[2J"))],
     "chip.toml: name: holds U+001B (ESCAPE) at character 1"),
    ("right-to-left-override-in-a-vendor", lambda t: ["show", "hardware", str(_chip(t, "vendor", "NVIDIA\u202e"))],
     "chip.toml: vendor: holds U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("carriage-return-in-a-source", lambda t: ["show", "hardware", str(_chip(t, "source", "ok\rfake line"))],
     "chip.toml: source: holds U+000D"),
    ("line-break-in-a-one-line-name", lambda t: ["show", "hardware", str(_chip(t, "name", "a\nb"))],
     "chip.toml: name: holds U+000A (LINE FEED) at character 2, a line break in a one-line field"),
    ("nul-in-a-model-metadata-name", lambda t: ["show", "model", str(_model(t, 'name = "a\\u0000b"'))],
     "config.toml: name: holds U+0000"),
    ("zero-width-space-in-a-model-source", lambda t: ["show", "model", str(_model(t, 'source = "x\\u200by"'))],
     "config.toml: source: holds U+200B (ZERO WIDTH SPACE)"),
    ("escape-in-a-path", lambda t: ["show", "model", str(t / "a\x1b[2Jb.json")],
     "the path holds U+001B (ESCAPE)"),
    ("escape-in-a-derivation-file-title", lambda t: ["derive", str(_derivation(t, '"Offloading\\u001b[31m'))],
     "x.toml: title: holds U+001B (ESCAPE)"),
    ("escape-in-an-unknown-field-name", lambda t: ["show", "hardware", str(_extra_key(t))],
     "chip.toml: \\x1b[2J: unknown field"),
]


def _model(tmp: Path, extra: str) -> Path:
    (tmp / "config.json").write_text((MODELS_DIR / "llama-3.1-8b.json").read_text())
    (tmp / "config.toml").write_text(f'{extra}\n' + ('name = "n"\n' if not extra.startswith("name") else "")
                                     + ('status = "U"\n') + ('source = "s"\n' if not extra.startswith("source") else ""))
    return tmp / "config.json"


def _derivation(tmp: Path, title_start: str) -> Path:
    path = tmp / "x.toml"
    path.write_text(EXAMPLE.read_text().replace('title = "Offloading', f"title = {title_start}", 1))
    return path


def _extra_key(tmp: Path) -> Path:
    path = tmp / "chip.toml"
    path.write_text((HARDWARE_DIR / "h100-sxm.toml").read_text().replace('name = "', '"\\u001b[2J" = 1\nname = "', 1))
    return path


@pytest.mark.parametrize(("case", "argv", "message"), CONTROL_CASES, ids=[c[0] for c in CONTROL_CASES])
def test_control_characters_in_files_are_refused_and_never_reach_the_terminal(case, argv, message, tmp_path, capsys):
    assert main(argv(tmp_path)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    line = _one_error_line(captured.err)
    assert message in line, line
    assert problem(line, multiline=False) is None, f"a raw control reached the terminal: {line!r}"


def test_a_measurement_record_with_a_control_character_is_refused():
    record = {"source": "s", "url": "https://x", "engine": "e", "engine_version": "1", "notes": "",
              "record": [{"id": "a", "model": "llama-2-7b", "hardware": "a100-sxm-80gb", "gpus": 1, "tp": 1, "pp": 1, "weights": "fp16",
                          "kv": "fp16", "math": "fp16", "batching": "static", "batch": 1, "input_tokens": 128, "output_tokens": 128,
                          "metric": "itl", "value": "10 ms", "locator": "table 1\x1b[2J", "assumed": "nothing"}]}
    with pytest.raises(SpecError, match=r"record a\.locator: holds U\+001B"):
        parse_measurements(record, MEASUREMENTS_DIR / "x.toml")


def test_a_config_json_file_named_with_a_control_is_refused(tmp_path):
    with pytest.raises(SpecError, match="holds U\\+001B"):
        parse_config(json.loads((MODELS_DIR / "llama-3.1-8b.json").read_text()), tmp_path / "a\x1bb.json")


def test_escaped_writes_every_refused_character_visibly():
    assert escaped("a\x1b]0;x\x07\u202eb\n") == "a\\x1b]0;x\\x07\\u202eb\n"
    assert escaped("tab\tok") == "tab\\x09ok"

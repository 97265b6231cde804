"""Escaping of every piece of text that comes from a spec, a user or a derivation.

One function per output language; templates and renderers call only these.
A model named `x_{1}&%$#\\input{/etc/hostname}` must come out as literal text.
"""

from __future__ import annotations

import re

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "\"": "''",
    "`": r"\textasciigrave{}",
}
#: Non-ASCII characters our own prose uses, mapped to LaTeX; any other is replaced.
_LATEX_UNICODE = {
    "·": r"\textperiodcentered{}",
    "×": r"\texttimes{}",
    "µ": r"\textmu{}",
    "–": "--",
    "—": "---",
    "’": "'",
    "“": "``",
    "”": "''",
    "≈": r"$\approx$",
    "→": r"$\to$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "√": r"$\surd$",
    "✓": "yes",
    "✗": "no",
}
#: Characters that can start Markdown structure inline; `.`, `-`, `+` only matter
#: at the start of a line, and our text never starts one.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]#|$~>])")


def code_spans(text: str) -> list[tuple[bool, str]]:
    """Text as (is code, part) runs: a `name` in paired backticks (a command, a file) is code; unpaired backticks are text."""
    parts = text.split("`")
    if len(parts) > 2 and len(parts) % 2 == 1:
        return [(bool(i % 2), p) for i, p in enumerate(parts)]
    return [(False, text)]


def latex(text: str) -> str:
    """Literal text for a LaTeX document body; a `name` in backticks (a command, a file) in typewriter type."""
    return "".join(latex_code(p) if code else _latex(p) for code, p in code_spans(text))


def _latex(text: str) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch == "-" and text[i + 1:i + 2] == "-":
            out.append("-{}")  # an option's two hyphens (--set) stay two: TeX would set -- as an en dash
        elif ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[ch])
        elif ch == "\n" or ch == "\t":
            out.append(" ")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


#: TeX's caret notation (`^^5c` is a backslash, `^^J` a newline): a caret followed by another.
_CARETS = re.compile(r"\^(?=\^)")


def latex_math(math: str) -> str:
    """Math for a `.tex` file, the one way every math span reaches LaTeX: the same TeX with no two carets in a row.

    Two carets make TeX read the next characters as a character code (`^^5cinput` is `\\input`), so an empty group goes
    between them (`^{}{}^`, which typesets as an empty superscript); every other character TeX could turn into a command
    (`\\`, `{`, `}`, `$`, `&`, `#`, `%`, `~`, `_`) reaches math only from text that derivations.engine.prose has checked.
    `tex_document` applies the same rule to every value a LaTeX template writes.
    """
    return _CARETS.sub("^{}{}", math)


def tex_document(value: object) -> str:
    """Every value a LaTeX template writes (jinja's finalize), as the text it writes: no TeX caret notation (see `latex_math`)."""
    return latex_math(value if isinstance(value, str) else str(value))


def markdown(text: str) -> str:
    """Literal text for GitHub-flavoured Markdown (also safe inside table cells); a `name` in backticks as a code span."""
    return "".join(markdown_code(p) if code else _markdown(p) for code, p in code_spans(text))


def _markdown(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace("\r", " ").replace("\n", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


#: Math characters a Markdown reader could take for markup (an HTML tag, a table's cell border), and the TeX that means the same.
_MARKDOWN_MATH = {"<": r"\lt ", ">": r"\gt ", "|": r"\vert "}


#: Link and image syntax a Markdown reader that does not render math would act on: `](` closes a link's or an image's text
#: and opens its address (`[x](javascript:...)`, `![x](http://host/beacon.png)`); `://` and `www.` make a bare address an
#: autolink (GitHub's extension).
_MARKDOWN_MATH_LINKS = re.compile(r"\](?=\()|:(?=//)|(?i:w)(?=(?i:ww\.))")


def markdown_math(latex: str) -> str:
    """Math for a `$...$` or `$$...$$` span of Markdown: the same TeX, with no character a Markdown or HTML parser reads as markup.

    `<` and `>` (which open an HTML tag when a renderer reads the page before its math) become `\\lt` and `\\gt`, and `|`
    (a table cell's border) `\\vert`; MathJax and KaTeX read all three. Text mode (`\\text{...}`) may hold none of them
    (derivations.engine.prose refuses them there). A viewer that shows `$...$` as text would still read link and image syntax
    in it: an empty group `{}` goes between `]` and `(`, between `:` and `//` and after the first `w` of `www.` (TeX
    typesets `]{}(` as `](`), so
    `$[x](javascript:alert(1))$` and `$![x](http://host/beacon.png)$` are never a link or an image.
    """
    text = "".join(_MARKDOWN_MATH.get(ch, ch) for ch in latex)
    return _MARKDOWN_MATH_LINKS.sub(lambda m: m.group(0) + "{}", text)


#: A web address the outputs may link as it is: RFC 3986's characters, none of which a LaTeX `\url`, a Markdown autolink or
#: an HTML attribute reads as markup (no braces, backslash, backtick, bar, caret, angle brackets, quotes or spaces).
SAFE_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&()*+,;=%]+")


def latex_url(url: str) -> str:
    r"""A source's web address as a LaTeX `\url`; anything else (`https://x/}\input{...}`) as literal text."""
    return rf"\url{{{url}}}" if SAFE_URL.fullmatch(url) else latex(url)


def markdown_url(url: str) -> str:
    """A source's web address as a Markdown autolink; anything else as literal text."""
    return f"<{url}>" if SAFE_URL.fullmatch(url) else markdown(url)


def markdown_code(text: str) -> str:
    """A code span: backticks cannot be escaped inside one, so they are replaced; `|` keeps tables intact."""
    return "`" + text.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


def latex_code(text: str) -> str:
    """Typewriter text; a run of hyphens stays hyphens (T1 fonts join `--` into a dash: `--set` would print as `–set`)."""
    return r"\texttt{" + re.sub(r"-(?=-)", "-{}", _latex(text)) + "}"

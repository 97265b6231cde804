"""The one way prose writes math: inline `$...$` in a small, safe LaTeX subset.

A sheet's prose (why-texts, titles, assumptions, takeaways, notes, claims)
is plain text with two kinds of inserts:

- `$...$`: inline math, checked against a whitelist of characters and
  commands (no `\\input`, no `\\write`, no catcode tricks), so every renderer
  can pass it through: LaTeX and Markdown as `$...$`, JSON as written. Inside
  math, `\\sym{P_active}` spells a glossary or sheet symbol the way the symbol
  table does, so prose and equations cannot drift apart.
- `{step_name}` outside math: the value of a step, filled in by the renderer.
- `@slug` outside math: a link to another answer sheet (a Markdown link, a
  typewriter name in LaTeX); the registry checks that every one exists.

Everything else is literal text that renderers escape. `check` runs when a
derivation is built, so a bad insert fails the build, not a reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from ...units import RooflineError

#: LaTeX commands allowed in prose math (a backslash followed by letters).
ALLOWED_COMMANDS = frozenset({
    "cdot", "times", "frac", "tfrac", "dfrac", "sqrt", "min", "max", "log", "exp", "ln",
    "lceil", "rceil", "lfloor", "rfloor", "left", "right", "mathrm", "text", "mathit", "operatorname",
    "le", "ge", "leq", "geq", "ne", "approx", "sim", "ll", "gg", "to", "infty", "sum", "ldots", "dots", "quad", "propto",
    "hat", "bar", "tilde", "top", "prime", "in", "lvert", "rvert", "mid",
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "eta", "theta", "kappa", "lambda", "mu", "nu", "pi",
    "rho", "sigma", "tau", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Pi", "Sigma",
    "Phi", "Psi", "Omega",
    "sym",
})
#: Non-letter control symbols allowed after a backslash: thin spaces and literal braces.
ALLOWED_CONTROL_SYMBOLS = frozenset({",", ";", "!", " ", "{", "}", "%"})
_MATH_CHARS = re.compile(r"^[A-Za-z0-9 +\-*/=(),.:;<>|'!_^{}\[\]\\]*$")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
#: One TeX token of prose math: a control word, a control symbol, or one character.
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|.", re.DOTALL)
#: TeX's caret notation: `^^5c` is a backslash, `^^M` a carriage return; two carets in a row spell a character by its code.
CARETS = re.compile(r"\^(?=\^)")
_SYM = re.compile(r"\\sym\{([A-Za-z][A-Za-z0-9_]*)\}")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_LINK = re.compile(r"@([a-z0-9]+(?:-[a-z0-9]+)+)")
MAX_MATH_LENGTH = 400


class ProseError(RooflineError):
    """A prose string with malformed or unsafe math."""


def split(text: str) -> list[tuple[str, str]]:
    """[('text', ...), ('math', ...), ...]: the prose cut at its `$` delimiters (an odd count is an error)."""
    parts = text.split("$")
    if len(parts) % 2 == 0:
        raise ProseError(f"unbalanced $ in prose: {text[:60]!r}")
    return [("math" if i % 2 else "text", p) for i, p in enumerate(parts) if p]


def check(text: str, symbols: Collection[str], steps: Collection[str], where: str) -> None:
    """Raise ProseError unless every math insert is in the whitelist, names known symbols and every placeholder a step."""
    for kind, part in split(text):
        if kind == "text":
            for name in _PLACEHOLDER.findall(part):
                if name not in steps:
                    raise ProseError(f"{where}: prose refers to {{{name}}}, which is not a step")
            continue
        if len(part) > MAX_MATH_LENGTH:
            raise ProseError(f"{where}: math ${part[:40]}$ uses characters outside the prose-math whitelist")
        check_math(part, where)
        for name in _SYM.findall(part):
            if name not in symbols:
                raise ProseError(f"{where}: \\sym{{{name}}} is not a symbol of this sheet")
        if part.count("{") != part.count("}"):
            raise ProseError(f"{where}: math ${part[:40]}$ has unbalanced braces")
        if re.search(r"\\text(?!\{)", part):
            raise ProseError(f"{where}: math ${part[:40]}$ has \\text without a brace; write \\text{{...}}")
        for inside in text_groups(part):
            if set(inside) & TEXT_MODE_REFUSED:
                raise ProseError(f"{where}: math ${part[:40]}$ has < or > inside \\text{{...}}, where every output would print them as markup; "
                                 "write them in math, outside \\text")


def check_math(part: str, where: str) -> None:
    """Raise ProseError unless `part` (TeX math, without its `$`) keeps to the whitelist's characters and commands and has no
    TeX caret notation: what every math insert of prose passes, and what math read back from the cache must pass."""
    if not _MATH_CHARS.match(part):
        raise ProseError(f"{where}: math ${part[:40]}$ uses characters outside the prose-math whitelist")
    if CARETS.search(part):
        raise ProseError(f"{where}: math ${part[:40]}$ has ^^, TeX's notation for a character by its code (^^5c is a backslash); "
                         "write one ^ and its superscript in braces, x^{2}")
    for cmd in _COMMAND.findall(part):
        if cmd not in ALLOWED_COMMANDS and cmd not in ALLOWED_CONTROL_SYMBOLS:
            raise ProseError(f"{where}: math ${part[:40]}$ uses \\{cmd}, which prose math does not allow")


#: What printed formulas add to prose math (renderers.forms: sympy's LaTeX, aligned): `&`, a line break, `\\begin{cases}`,
#: `\\end{cases}`, `\\big`, `\\wedge`. Their pieces are checked one by one (a piece need not balance its braces).
_FORM_CHARS = re.compile(r"^[A-Za-z0-9 +\-*/=(),.:;<>|'!_^{}\[\]\\&]*$")
FORM_COMMANDS = ALLOWED_COMMANDS | {"begin", "end", "big", "wedge", "vee", "\\"}
_ENVIRONMENT = re.compile(r"\\(?:begin|end)(?!\{cases\})")


def check_form(piece: str, where: str) -> None:
    """Raise ProseError unless a piece of a printed formula read back from the cache keeps to prose math's whitelist and
    what printed formulas add to it (`FORM_COMMANDS`; the only environment is `cases`), with no TeX caret notation."""
    if not _FORM_CHARS.match(piece) or CARETS.search(piece) or _ENVIRONMENT.search(piece):
        raise ProseError(f"{where}: a printed formula {piece[:40]!r} uses characters or commands outside the whitelist")
    for cmd in _COMMAND.findall(piece):
        if cmd not in FORM_COMMANDS and cmd not in ALLOWED_CONTROL_SYMBOLS:
            raise ProseError(f"{where}: a printed formula {piece[:40]!r} uses \\{cmd}, which printed formulas do not")


def check_prose_math(text: str, where: str) -> None:
    """Raise ProseError unless every math insert of a prose string passes `check_math` (symbols and steps not looked up)."""
    for kind, part in split(text):
        if kind == "math":
            check_math(part, where)


#: Characters refused inside `\\text{...}`: in text mode no output can spell them as math (`\\lt`), and the site's
#: MathML converter copies text-mode content into the page as it is.
TEXT_MODE_REFUSED = frozenset("<>")
_TEXT_COMMAND = "\\text{"


def text_groups(math: str) -> list[str]:
    """The contents of every `\\text{...}` group in a math insert (braces balanced inside)."""
    out = []
    start = math.find(_TEXT_COMMAND)
    while start >= 0:
        i, depth = start + len(_TEXT_COMMAND), 1
        begin = i
        while i < len(math) and depth:
            if math[i] == "\\":
                i += 2
                continue
            depth += {"{": 1, "}": -1}.get(math[i], 0)
            i += 1
        out.append(math[begin:i - 1 if depth == 0 else i])
        start = math.find(_TEXT_COMMAND, i)
    return out


def tokens(math: str) -> list[str]:
    """The TeX tokens of a math insert: control words (`\\cdot`), control symbols (`\\,`) and single characters, in order."""
    return _TOKEN.findall(math)


def rebuild(math: str) -> str:
    """Math rebuilt from its tokens, never copied: the same TeX for any insert `check` accepts, and no two carets in a row
    (TeX's ^^ notation, which can spell a backslash) for any other: an empty group goes between them."""
    out: list[str] = []
    for t in tokens(math):
        if t == "^" and out and out[-1] == "^":
            out.append("{}{}")
        out.append(t)
    return "".join(out)


def placeholders(text: str) -> list[str]:
    """The step and input names a prose string fills in with `{name}`, in order."""
    return [m for kind, part in split(text) if kind == "text" for m in _PLACEHOLDER.findall(part)]


def links(text: str) -> list[str]:
    """The sheet slugs a prose string links to with `@slug`."""
    return [m for kind, part in split(text) if kind == "text" for m in _LINK.findall(part)]


def render(text: str, escape: Callable[[str], str], math: Callable[[str], str], latex_names: Mapping[str, str],
           values: Mapping[str, str] | None = None, link: Callable[[str], str] | None = None) -> str:
    """Prose for one target: literal text escaped, math passed to `math` with symbols spelled, placeholders and links filled."""
    out = []
    for kind, part in split(text):
        if kind == "math":
            out.append(math(_SYM.sub(lambda m: "{" + latex_names[m.group(1)] + "}", part)))
            continue
        out.append(_fill_text(part, escape, values, link))
    return "".join(out)


def _fill_text(part: str, escape: Callable[[str], str], values: Mapping[str, str] | None, link: Callable[[str], str] | None) -> str:
    pattern = re.compile(f"{_PLACEHOLDER.pattern}|{_LINK.pattern}")
    out, last = [], 0
    for m in pattern.finditer(part):
        name, slug = m.group(1), m.group(2)
        if name is not None and values is None:
            continue
        out.append(escape(part[last:m.start()]))
        out.append(values[name] if name is not None else (link(slug) if link else escape(slug)))
        last = m.end()
    out.append(escape(part[last:]))
    return "".join(out)


def plain(text: str, latex_names: Mapping[str, str]) -> str:
    """The prose with `\\sym{...}` spelled out, `$` kept, links as bare slugs: what JSON carries."""
    return _LINK.sub(lambda m: m.group(1), _SYM.sub(lambda m: "{" + latex_names[m.group(1)] + "}", text))

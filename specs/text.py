"""The one rule for text read from a file someone may have sent you, and for text that reaches a terminal.

A spec file (a chip's TOML, a model's config.json and metadata), a measurement
record and a derivation file are documents from strangers. Their text goes
into the terminal (`roofline show`), error lines and every output format, so it
may hold no character that acts on a terminal or hides what a line says:

- controls (Unicode category Cc): ESC (which starts a terminal escape
  sequence: a new window title, a cleared screen), NUL, CR (which rewrites a
  line), DEL and the C1 controls; tab and, in multi-line fields, newline are
  the only exceptions;
- format marks (Cf): the bidirectional overrides and isolates (U+202E makes
  a line print backwards) and zero-width characters;
- line and paragraph separators (Zl, Zp) and lone surrogates (Cs, which no
  output encoding can write).

Loaders refuse such text with one line naming the file and the field
(`check`); anything printed to the terminal passes through `escaped`, which
writes each such character as a visible escape (`\\x1b`, `\\u202e`).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

#: Unicode categories no text from a file may hold (see the module docstring).
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: The controls a single-line field may hold, and a multi-line one (notes, sources, a derivation's prose).
SINGLE_LINE_ALLOWED = "\t"
MULTI_LINE_ALLOWED = "\t\n"


def unsafe_character(text: str, allowed: str = MULTI_LINE_ALLOWED) -> tuple[int, str] | None:
    """(position, character) of the first character the rule refuses, or None."""
    for i, ch in enumerate(text):
        if ch not in allowed and unicodedata.category(ch) in UNSAFE_CATEGORIES:
            return i, ch
    return None


def describe(ch: str) -> str:
    """`U+001B (ESCAPE)`: a character as an error line names it."""
    name = unicodedata.name(ch, "")
    if not name and unicodedata.category(ch) == "Cc":
        name = {"\x1b": "ESCAPE", "\x00": "NULL", "\r": "CARRIAGE RETURN", "\n": "LINE FEED", "\x7f": "DELETE"}.get(ch, "control character")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


def problem(text: str, multiline: bool = True) -> str | None:
    """Why `text` is refused ('holds U+001B (ESCAPE) at character 1, a control character'), or None."""
    found = unsafe_character(text, MULTI_LINE_ALLOWED if multiline else SINGLE_LINE_ALLOWED)
    if found is None:
        return None
    i, ch = found
    kind = "a line break in a one-line field" if ch == "\n" else (
        "a control character" if unicodedata.category(ch) == "Cc" else "an invisible formatting character")
    return f"holds {describe(ch)} at character {i + 1}, {kind}; text from a file may not hold controls, bidirectional marks or zero-width characters"


def check(value: str, where: str | Path, field: str | None, multiline: bool = True) -> str:
    """`value` unchanged, or a SpecError naming the file and the field."""
    from .errors import SpecError

    why = problem(value, multiline)
    if why is not None:
        raise SpecError(where, field, why)
    return value


#: Characters that draw nothing though Unicode files them with letters or symbols: the Hangul fillers, the blank Braille cell,
#: the Khmer inherent vowels. With spaces, combining marks, formatting characters and unassigned code points, no name may be
#: made of these alone.
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")
#: Categories that draw nothing on their own (a space, a mark needing a base, a control, a format character, no character).
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Mn", "Mc", "Me", "Cc", "Cf", "Cs", "Co", "Cn"})
#: Combining marks one character may carry in a name (scripts that stack them use three or four; more is a smear over the line).
MAX_MARKS = 8


def name_problem(text: str) -> str | None:
    """What makes `text` unusable as a name ('an empty string', 'only invisible characters (U+3164 HANGUL FILLER)', ...), or None:
    a name must show at least one character and carry at most MAX_MARKS combining marks on any one."""
    if text == "":
        return "an empty string"
    if not text.strip():
        return "only spaces"
    visible = [ch for ch in text if ch not in BLANK_CHARACTERS and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES]
    if not visible:
        first = next(ch for ch in text if not ch.isspace())
        return f"only invisible characters: {describe(first)} and {len(text) - 1:,} more" if len(text) > 1 else f"only an invisible character, {describe(first)}"
    run = longest = 0
    for ch in text:
        run = run + 1 if unicodedata.category(ch) in ("Mn", "Mc", "Me") else 0
        longest = max(longest, run)
    if longest > MAX_MARKS:
        return f"{longest:,} combining marks stacked on one character (at most {MAX_MARKS})"
    return None


def check_name(value: str, where: str | Path, field: str | None, expected: str) -> str:
    """`value` unchanged, or one SpecError: 'WHERE: FIELD: expected EXPECTED, found an empty string' (or only spaces, only
    invisible characters, a stack of combining marks). Every name roofline reads passes here: an option (--model, --hardware,
    --engine, --weights, ...) on the command line and in the Python API, and a name in a file (a chip's or a model's)."""
    from .errors import SpecError

    why = name_problem(value)
    if why is not None:
        raise SpecError(where, field, f"expected {expected}, found {why}")
    return value


def escaped(text: str, keep: str = "\n") -> str:
    """`text` with every refused character written as a visible escape, for a terminal (`keep`: controls left as they are)."""
    out = []
    for ch in text:
        if ch in keep or unicodedata.category(ch) not in UNSAFE_CATEGORIES:
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return "".join(out)


__all__ = ["MULTI_LINE_ALLOWED", "SINGLE_LINE_ALLOWED", "UNSAFE_CATEGORIES", "check", "describe", "escaped", "problem", "unsafe_character"]

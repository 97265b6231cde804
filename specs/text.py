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
    from specs.errors import SpecError

    why = problem(value, multiline)
    if why is not None:
        raise SpecError(where, field, why)
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

"""An on-disk cache of solved closed forms (and drawn plots), so a process pays for sympy once; nothing in it can run.

`sympy.solve`, `simplify` and the verification of a root are most of the cost
of building a derivation. Their result depends only on the equation solved, so
it is stored under a key hashed from everything the solve reads: the
expressions of every earlier step (with their symbols' assumptions), the
sides, the variable, the steps kept as symbols, the root picker's code, the
source of the engine that solves and verifies, and the versions of Python and
sympy. Change any of them and the key changes: a stale entry is never read,
it is simply not found.

Where and how entries are kept (the folder's ownership rule, data-only
entries, atomic writes, `ROOFLINE_CACHE_DIR` and `ROOFLINE_CACHE=off`):
`derivations.engine.store`, whose names this module re-exports. A closed form is
stored as JSON in the whitelisted format of `derivations.engine.exprjson`; a node
outside the whitelist is a miss.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Callable
from typing import Any

import sympy as sp

from .store import (
    FOLDER_MODE,
    MAX_ENTRY_BYTES,
    CacheWarning,
    configured,
    directory,
    load_bytes,
    load_json,
    read_entry,
    source_digest,
    store_bytes,
    store_json,
    untrusted,
)

#: bump to invalidate every entry when the stored payload's shape changes (2: JSON and bytes entries, no pickles)
FORMAT = 2


def _code_text(f: Callable[..., Any] | None) -> str:
    """A stable text for a function's behaviour: its bytecode, constants and names."""
    if f is None:
        return "None"
    code = getattr(f, "__code__", None)
    if code is None:  # a builtin such as min or max
        return f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', repr(f))}"
    return f"{code.co_code.hex()}|{code.co_consts!r}|{code.co_names!r}"


def key(*parts: object) -> str:
    """A hex digest of `parts` (sympy expressions by `srepr`, which keeps assumptions) and the environment."""
    h = hashlib.sha256()
    for part in (FORMAT, platform.python_version(), sp.__version__, *parts):
        if isinstance(part, sp.Basic):
            text = sp.srepr(part)
        elif callable(part):
            text = _code_text(part)
        else:
            text = repr(part)
        h.update(text.encode())
        h.update(b"\0")
    return h.hexdigest()


def load_expr(k: str, fields: tuple[str, ...] = ()) -> tuple[sp.Basic, dict[str, str]] | None:
    """A closed form stored with `store_expr`, and its text fields; None for a miss (no entry, any shape or whitelist problem)."""
    from . import exprjson

    value = load_json(k, "solve")
    if not isinstance(value, dict) or set(value) != {"expr", *fields} or not all(isinstance(value[f], str) for f in fields):
        return None
    try:
        return exprjson.load(value["expr"]), {f: value[f] for f in fields}
    except (exprjson.RefusedError, KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, RecursionError):
        return None  # any failure while reading an entry is a miss


def store_expr(k: str, expr: sp.Basic, **fields: str) -> None:
    """Store a closed form (as derivations.engine.exprjson data) and text fields; an expression outside the whitelist is not stored."""
    from . import exprjson

    try:
        doc = exprjson.dump(expr)
    except exprjson.RefusedError:
        return
    store_json(k, {"expr": doc, **fields}, "solve")


__all__ = ["FOLDER_MODE", "FORMAT", "MAX_ENTRY_BYTES", "CacheWarning", "configured", "directory", "key", "load_bytes", "load_expr",
           "load_json", "read_entry", "source_digest", "store_bytes", "store_expr", "store_json", "untrusted"]

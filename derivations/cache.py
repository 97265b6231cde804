"""An on-disk cache of solved closed forms, so a process pays for sympy once.

`sympy.solve`, `simplify` and the verification of a root are most of the cost
of building a derivation. Their result depends only on the equation solved, so
it is stored under a key hashed from everything the solve reads: the
expressions of every earlier step (with their symbols' assumptions), the
sides, the variable, the steps kept as symbols, the root picker's code, the
source of the engine that solves and verifies, and the versions of Python and
sympy. Change any of them and the key changes: a stale entry is never read,
it is simply not found.

Where: `$ROOFLINE_CACHE_DIR`, else `$XDG_CACHE_HOME/roofline`, else
`~/.cache/roofline`. `ROOFLINE_CACHE=off` turns the cache off. A cache that
cannot be read or written is skipped silently: a cold run works without one.
Entries are written to a temporary file and renamed into place, so two
processes racing on the same key both end with a whole entry.

Entries are pickles, trusted like the `__pycache__` files Python itself
writes: a cache directory is the user's own, never a download.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy as sp

#: bump to invalidate every entry when the stored payload's shape changes
FORMAT = 1


def directory() -> Path | None:
    """The cache directory, or None when caching is off."""
    if os.environ.get("ROOFLINE_CACHE", "").lower() in ("off", "0", "no", "false"):
        return None
    if os.environ.get("ROOFLINE_CACHE_DIR"):
        return Path(os.environ["ROOFLINE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "roofline"


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


def source_digest(*paths: str | os.PathLike[str]) -> str:
    """The digest of source files whose code decides a cached result."""
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def load(k: str) -> Any | None:
    """The entry stored under `k`, or None (no cache, no entry, or an unreadable one)."""
    where = directory()
    if where is None:
        return None
    try:
        with open(where / f"{k}.pickle", "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError, ValueError):
        return None


def store(k: str, value: Any) -> None:
    """Store `value` under `k` atomically; any failure leaves the cache as it was."""
    where = directory()
    if where is None:
        return
    tmp = None
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, where / f"{k}.pickle")
        tmp = None
    except (OSError, pickle.PicklingError, AttributeError, TypeError, RecursionError):
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass

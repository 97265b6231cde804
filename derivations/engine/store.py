"""The byte store under roofline's caches: a folder the user owns, entries that are data, atomic writes (stdlib only).

`derivations.engine.cache` (solved closed forms, drawn plots, compiled plans) and
`roofline.compiled` (the compiled forms the light path of `roofline derive`
prints from) keep their entries here; this module imports no sympy, pint or
numpy, so a command answered from the store pays for none of them.

Where: `$ROOFLINE_CACHE_DIR`, else `$XDG_CACHE_HOME/roofline`, else
`~/.cache/roofline`. `ROOFLINE_CACHE=off` turns every cache off. A cold run
works without a cache.

What is read, and from where (a cache folder is a place another user or
process could write to, so an entry is data, never code):

- Entries are data that loading cannot execute: JSON (`<key>.json`) or bytes
  (`<key>.bin`). No pickle is ever read (older `.pickle` entries are ignored;
  delete them at will).
- The folder is used only if this user owns it and nobody else can write to
  it, as ssh checks its key files: the cache root, and every folder roofline
  creates on the way to it (made with mode 0700). Otherwise the cache is off
  for the process, with one `roofline: warning:` line saying why.
- Only regular files are read: an entry is opened without following a
  symbolic link and without blocking (a FIFO is not waited on), must be owned
  by this user and at most `MAX_ENTRY_BYTES` long. Any error while reading or
  decoding an entry is a miss: the value is computed again.
- Every entry names what it is for: its first line is a small JSON header with the
  envelope's version (`ENVELOPE`), the entry's own key, what it holds (`what`: a
  sheet's slug, a kind of entry) and the sha256 of the rest, and all four are
  checked on read: an entry copied under another key, written by another
  version or edited by hand is a miss. A JSON entry is then read as strictly as a
  file (no NaN or Infinity, no integer of more than 4,000 digits, no string holding
  a control character: specs.text), and its reader checks its shape and its values;
  any error while reading one is a miss. (The digest catches an edit, not a
  forger: the boundary is the folder's ownership rule above.)
- Entries are written to a temporary file and renamed into place, so two
  processes racing on the same key both end with a whole entry; a write that
  fails leaves the cache as it was. An entry longer than `MAX_ENTRY_BYTES` is
  not written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any

#: The largest entry read or written (a closed form is a few kB of JSON; a drawn plot or a sheet's compiled form at most a few hundred kB).
MAX_ENTRY_BYTES = 8 * 2**20
#: Mode of the folders the cache creates: the user's only.
FOLDER_MODE = 0o700
#: The version of an entry's header (its first line); bump when the header or the payload's encoding changes.
ENVELOPE = 1
#: The most digits an integer in a JSON entry may have (as specs.catalog.MAX_INT_DIGITS for a file).
MAX_INT_DIGITS = 4_000


class CacheWarning(UserWarning):
    """The cache folder cannot be trusted (another owner, writable by others); the cache is off."""


def configured() -> Path | None:
    """The cache folder the environment names, or None when caching is off (not yet checked)."""
    if os.environ.get("ROOFLINE_CACHE", "").lower() in ("off", "0", "no", "false"):
        return None
    if os.environ.get("ROOFLINE_CACHE_DIR"):
        return Path(os.environ["ROOFLINE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "roofline"


#: the decision for each configured folder in this process: the folder to use, or None (off, said once)
_DECIDED: dict[str, Path | None] = {}


def directory() -> Path | None:
    """The cache folder, checked (and created) once per process; None when caching is off or the folder is not trusted."""
    root = configured()
    if root is None:
        return None
    text = str(root)
    if text not in _DECIDED:
        problem = _prepare(root)
        if problem is not None:
            warnings.warn(CacheWarning(f"the cache folder {_shown(root)} {problem}; the cache is off for this run "
                                       "(fix its owner or mode, set ROOFLINE_CACHE_DIR to a folder of your own, or ROOFLINE_CACHE=off)"),
                          stacklevel=3)
        _DECIDED[text] = None if problem is not None else root
    return _DECIDED[text]


def _shown(path: Path) -> str:
    from specs.catalog import shown_path

    return shown_path(path)


def untrusted(path: Path) -> str | None:
    """Why the folder `path` may not hold the cache (a symbolic link, another owner, writable by group or others), or None."""
    try:
        link = os.lstat(path)
        st = os.stat(path)
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    uid = os.getuid() if hasattr(os, "getuid") else None
    if stat.S_ISLNK(link.st_mode) and uid is not None and link.st_uid != uid:
        return f"is a symbolic link owned by another user (uid {link.st_uid})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if uid is not None and st.st_uid != uid:
        return f"is owned by another user (uid {st.st_uid}, you are {uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"can be written by others (mode {stat.S_IMODE(st.st_mode):04o}; it must not be writable by group or others)"
    return None


def _prepare(root: Path) -> str | None:
    """Create the missing folders down to `root` (mode 0700) and check each of them and `root`; why not, or None."""
    missing = []
    p = root
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            pass  # made meanwhile, by us or by someone else: the check below decides
        except OSError as err:
            return f"cannot be created ({err.strerror or err})"
        why = untrusted(folder)
        if why is not None:
            return why if folder == root else f"is inside {_shown(folder)}, which {why}"
    return untrusted(root)


def source_digest(*paths: str | os.PathLike[str]) -> str:
    """The digest of source files whose code decides a cached result."""
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def _entry(k: str, suffix: str) -> Path | None:
    where = directory()
    if where is None or not k.isalnum():  # a key is a hex digest: never a path
        return None
    return where / f"{k}{suffix}"


def read_entry(path: Path) -> bytes | None:
    """A cache file's bytes: a regular file of ours, at most MAX_ENTRY_BYTES, opened without following links or blocking; else None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_size > MAX_ENTRY_BYTES:
            return None
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, MAX_ENTRY_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ENTRY_BYTES:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _write_entry(path: Path, data: bytes) -> None:
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class _RefusedEntryError(ValueError):
    """An entry that is not what its key names, or not data this code writes: a miss."""


def _header(k: str, what: str, payload: bytes) -> bytes:
    head = {"roofline-cache": ENVELOPE, "key": k, "what": what, "sha256": hashlib.sha256(payload).hexdigest()}
    return json.dumps(head, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def _payload(k: str, what: str, data: bytes) -> bytes:
    """The payload of an entry read under key `k` for `what`; _RefusedEntryError unless its header names exactly that, this envelope's
    version and the payload's digest."""
    head, sep, payload = data.partition(b"\n")
    if not sep or len(head) > 1024:
        raise _RefusedEntryError("no header")
    header = json.loads(head.decode("ascii"))
    if not isinstance(header, dict) or set(header) != {"roofline-cache", "key", "what", "sha256"}:
        raise _RefusedEntryError("not a header")
    if header["roofline-cache"] != ENVELOPE or header["key"] != k or header["what"] != what:
        raise _RefusedEntryError("an entry for something else")
    if header["sha256"] != hashlib.sha256(payload).hexdigest():
        raise _RefusedEntryError("an entry changed since it was written")
    return payload


def _strict_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _RefusedEntryError("an integer too long")
    return int(text)


def _no_constant(name: str) -> Any:
    raise _RefusedEntryError(f"{name} in an entry")


#: A JSON escape that can spell a character specs.text refuses: \\uXXXX, \\r, \\b, \\f (an odd run of backslashes before it).
_RISKY_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\[ubfr]")


def _checked_strings(payload: bytes, value: Any) -> Any:
    """`value` (parsed from `payload`) when every string in it (keys included) passes the rule for text from a file
    (specs.text); an ASCII payload with no escape that could spell a refused character needs no look at its strings."""
    if payload.isascii() and _RISKY_ESCAPE.search(payload) is None:
        return value
    from specs.text import MULTI_LINE_ALLOWED, unsafe_character

    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if unsafe_character(v, MULTI_LINE_ALLOWED) is not None:
                raise _RefusedEntryError("a control character in an entry")
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return value


def load_bytes(k: str, what: str = "") -> bytes | None:
    """The bytes stored under `k` for `what`, or None (no cache, no entry, one that is not a plain file of ours, or one whose
    header does not name this key, `what` and its payload's digest)."""
    path = _entry(k, ".bin")
    data = None if path is None else read_entry(path)
    if data is None:
        return None
    try:
        return _payload(k, what, data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def store_bytes(k: str, data: bytes, what: str = "") -> None:
    """Store `data` under `k` (for `what`) atomically; any failure leaves the cache as it was."""
    path = _entry(k, ".bin")
    if path is not None and isinstance(data, bytes) and len(data) <= MAX_ENTRY_BYTES - 1024:
        _write_entry(path, _header(k, what, data) + data)


def load_json(k: str, what: str = "") -> Any | None:
    """The JSON value stored under `k` for `what`, or None: a miss for no entry and for any entry that is not what `k` names
    (see the module docstring), not valid JSON, or holds NaN, an over-long integer or a control character."""
    path = _entry(k, ".json")
    data = None if path is None else read_entry(path)
    if data is None:
        return None
    try:
        payload = _payload(k, what, data)
        return _checked_strings(payload, json.loads(payload.decode("utf-8"), parse_int=_strict_int, parse_constant=_no_constant))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def store_json(k: str, value: Any, what: str = "") -> None:
    """Store a JSON value under `k` (for `what`) atomically; a value JSON cannot write, or any failure, leaves the cache as it was."""
    path = _entry(k, ".json")
    if path is None:
        return
    try:
        data = json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")
    except (TypeError, ValueError, RecursionError):
        return
    if len(data) <= MAX_ENTRY_BYTES - 1024:
        _write_entry(path, _header(k, what, data) + data)


__all__ = ["ENVELOPE", "FOLDER_MODE", "MAX_ENTRY_BYTES", "CacheWarning", "configured", "directory", "load_bytes", "load_json", "read_entry",
           "source_digest", "store_bytes", "store_json", "untrusted"]

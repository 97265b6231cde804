"""Where shipped specs live, and resolving a name or a path to a file."""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import text as text_rule
from .errors import SpecError, suggest

#: A spec's status in words, as a reader sees it (hardware.STATUSES and FIELD_STATUSES; "user": a spec file of the reader's own).
STATUS_WORDS = {"C": "confirmed in a primary source", "S": "from a secondary source", "D": "derived from other figures",
                "U": "unconfirmed", "user": "your own file"}

SPECS_DIR = Path(__file__).parent
HARDWARE_DIR = SPECS_DIR / "hardware"
MODELS_DIR = SPECS_DIR / "models"
MAX_SPEC_BYTES = 1_000_000
SHOWN_PATH_LIMIT = 100
#: The deepest nesting of arrays and tables (objects) a spec, measurement or derivation file may have; the shipped ones
#: reach 4 (a derivation file's tables[].rows[].set). Deeper is refused before anything walks the data.
MAX_NESTING = 32
#: The most digits an integer in a spec, measurement, profile or derivation file may have. Python refuses to turn a longer
#: decimal literal into an int (4,300 digits), and converting one costs time that grows with its square; every value roofline
#: reads lies below 1e30. Checked before the literal is converted (JSON) or where the parser stops on it (TOML).
MAX_INT_DIGITS = 4_000
_INT_LIMIT = 10**MAX_INT_DIGITS


def hardware_names() -> list[str]:
    return sorted(p.stem for p in HARDWARE_DIR.glob("*.toml"))


def model_names() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def shown_path(path: str | Path) -> str:
    """A path as it goes into an error line: one line, long ones shortened in the middle."""
    text = text_rule.escaped(str(path), keep="")
    if len(text) <= SHOWN_PATH_LIMIT:
        return text
    return text[:40] + "..." + text[-(SHOWN_PATH_LIMIT - 43):]


def resolve(name_or_path: str | Path, kind: str, directory: Path, suffix: str, names: list[str], listing: str) -> Path:
    """The file for a shipped name, or the user's own path (any path with a suffix or a slash)."""
    if isinstance(name_or_path, bytes) or not isinstance(name_or_path, str | os.PathLike):
        raise SpecError(kind, None, f"expected a shipped name or a path, found {type(name_or_path).__name__}")
    text = os.fspath(name_or_path)
    if not isinstance(text, str):
        raise SpecError(kind, None, f"expected a shipped name or a path, found {type(text).__name__}")
    text_rule.check_name(text, kind, None, f"a shipped name (`roofline list {listing}`) or a path")
    looks_like_path = isinstance(name_or_path, os.PathLike) or "/" in text or text.endswith((".toml", ".json"))
    if looks_like_path:
        why = text_rule.problem(text, multiline=False)
        if why is not None:
            raise SpecError(shown_path(text), None, f"the path {why.split(';')[0]}; rename the file")
        path = Path(text)
        try:
            found = path.is_file()
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            raise SpecError(shown_path(text), None, f"cannot read this {kind} file: {reason}") from None
        if not found:
            raise SpecError(shown_path(text), None, f"no such {kind} file")
        return path
    if text in names:
        return directory / f"{text}{suffix}"
    shown_name = text if len(text) <= 40 else text[:37] + "..."
    raise SpecError(f"{kind} {shown_name!r}", None, f"unknown {kind} name{suggest(text, names)}; `roofline list {listing}` lists them")


def read_bytes(path: Path, limit: int = MAX_SPEC_BYTES) -> bytes:
    """A file's bytes, with one-line errors for unreadable, oversized or special files: only a regular file is read (a FIFO or
    a device would block or never end), at most `limit` bytes of it."""
    where = shown_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as err:
        raise SpecError(where, None, f"cannot read: {getattr(err, 'strerror', None) or err}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(where, None, "is not a regular file")
        if st.st_size > limit:
            raise SpecError(where, None, f"expected a file of at most {limit:,} bytes, found {st.st_size:,} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise SpecError(where, None, f"cannot read: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SpecError(where, None, f"expected a file of at most {limit:,} bytes, found more")
    return data


def decoded(data: bytes, path: Path) -> str:
    """UTF-8 text (a byte-order mark, which some Windows editors write, dropped), or one line naming the offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SpecError(shown_path(path), None, f"expected UTF-8 text, found undecodable bytes at offset {err.start}") from None


def read_text(path: Path, limit: int = MAX_SPEC_BYTES) -> str:
    """A spec file's text, with one-line errors for unreadable, oversized, special or undecodable files (`read_bytes`)."""
    return decoded(read_bytes(path, limit), path)


def unpacked(data: bytes, path: Path, limit: int) -> bytes:
    """A stranger's data file's bytes (a benchmark result, a profiler trace) gunzipped where it is a gzip file (told by its
    first bytes, not its name), at most `limit` bytes once unpacked (a small archive cannot unpack into memory without bound);
    else as they are."""
    if data[:2] != b"\x1f\x8b":
        return data
    unpack = zlib.decompressobj(wbits=31)
    try:
        out = unpack.decompress(data, limit + 1)
    except zlib.error as err:
        raise SpecError(shown_path(path), None, f"expected a gzip file, found a damaged one ({err})") from None
    if len(out) > limit:
        raise SpecError(shown_path(path), None, f"expected at most {limit:,} bytes once unpacked, found more")
    if not unpack.eof:
        raise SpecError(shown_path(path), None, "expected a gzip file, found a damaged or truncated one")
    return out


def nesting_depth(data: object, limit: int = MAX_NESTING) -> int:
    """How deep lists and dicts nest in `data` (a scalar is 0), counted without recursion; stops counting past `limit`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def _nesting_error(where: str | Path, error: type[SpecError]) -> SpecError:
    return error(shown_path(where), None, f"nested more than {MAX_NESTING} deep (arrays or tables inside one another); no spec needs that")


def parse_toml(text: str, where: str | Path, error: type[SpecError] = SpecError, syntax: str = "expected valid TOML, found a syntax error ({})") -> dict[str, Any]:
    """A TOML document as a table; a syntax error, nesting deeper than MAX_NESTING or an integer of more than MAX_INT_DIGITS
    digits is one line (`syntax` says the first)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise error(shown_path(where), None, syntax.format(str(err)[:120])) from None
    except RecursionError:
        raise _nesting_error(where, error) from None
    except ValueError:  # an integer literal longer than Python converts (tomllib calls int() on it as it reads it)
        field, digits = _long_toml_integer(text)
        raise _digits_error(where, error, field, digits) from None
    if nesting_depth(data) > MAX_NESTING:
        raise _nesting_error(where, error)
    _check_integers(data, where, error)
    return data


class _LongInteger:
    """A JSON integer literal of more than MAX_INT_DIGITS digits, left unconverted (found and refused after the parse)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _json_int(text: str) -> int | _LongInteger:
    digits = len(text.lstrip("-"))
    return _LongInteger(digits) if digits > MAX_INT_DIGITS else int(text)


def parse_json(text: str, where: str | Path, error: type[SpecError] = SpecError) -> Any:
    """A JSON document; a syntax error, nesting deeper than MAX_NESTING or an integer of more than MAX_INT_DIGITS digits
    (never converted) is one line."""
    try:
        data = json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as err:
        raise error(shown_path(where), None, f"expected valid JSON, found a syntax error at line {err.lineno} column {err.colno} ({err.msg})") from None
    except RecursionError:
        raise _nesting_error(where, error) from None
    if nesting_depth(data) > MAX_NESTING:
        raise _nesting_error(where, error)
    _check_integers(data, where, error)
    return data


def _digits_error(where: str | Path, error: type[SpecError], field: str | None, digits: int | None) -> SpecError:
    found = f"an integer of {digits:,} digits" if digits else "a longer one"
    return error(shown_path(where), field, f"expected at most {MAX_INT_DIGITS:,} digits in an integer (every value lies below 1e30), found {found}")


def _scalars(data: object) -> Iterator[tuple[object, str]]:
    """Every scalar in parsed JSON or TOML with its field (dotted keys, [index] for a list's items), in document order."""
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))
        else:
            yield value, text_rule.escaped(path[:80], keep="")


def _check_integers(data: object, where: str | Path, error: type[SpecError]) -> None:
    """Refuse an integer of more than MAX_INT_DIGITS digits anywhere in `data` (a JSON literal left unconverted, a TOML hex,
    octal or binary literal), naming its field."""
    for value, path in _scalars(data):
        if isinstance(value, _LongInteger):
            raise _digits_error(where, error, path or None, value.digits)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _INT_LIMIT:
            raise _digits_error(where, error, path or None, int(abs(value).bit_length() * 0.30103) + 1)


_LONG_DIGITS = re.compile(rf"[0-9][0-9_]{{{MAX_INT_DIGITS},}}")
#: What the too-long TOML literals are read as to find their field: the k-th is _MARK + k, integers no file is likely to hold.
_MARK = 8_675_309_123_456_789_017_000_000


def _long_toml_integer(text: str) -> tuple[str | None, int | None]:
    """The field (dotted, as `_check_integers` names it) and digit count of the first integer literal of more than
    MAX_INT_DIGITS digits in a TOML text: what tomllib could not convert. The text is read again with every run of that many
    digits replaced by a mark (one inside a string stays text), and the first mark read as an integer is the literal."""
    runs: list[int] = []

    def mark(m: re.Match[str]) -> str:
        runs.append(len(m.group(0).replace("_", "")))
        return str(_MARK + len(runs) - 1)

    try:
        data = tomllib.loads(_LONG_DIGITS.sub(mark, text))
    except (ValueError, RecursionError):
        return None, None
    for value, path in _scalars(data):
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= abs(value) - _MARK < len(runs):
            return path or None, runs[abs(value) - _MARK]
    return None, None

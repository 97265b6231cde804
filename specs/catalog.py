"""Where shipped specs live, and resolving a name or a path to a file."""

from __future__ import annotations

import os
from pathlib import Path

from specs.errors import SpecError, suggest

SPECS_DIR = Path(__file__).parent
HARDWARE_DIR = SPECS_DIR / "hardware"
MODELS_DIR = SPECS_DIR / "models"
MAX_SPEC_BYTES = 1_000_000
SHOWN_PATH_LIMIT = 100


def hardware_names() -> list[str]:
    return sorted(p.stem for p in HARDWARE_DIR.glob("*.toml"))


def model_names() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def shown_path(path: str | Path) -> str:
    """A path as it goes into an error line: one line, long ones shortened in the middle."""
    text = str(path).replace("\n", "\\n")
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
    if not text.strip():
        raise SpecError(kind, None, f"expected a shipped name (`roofline list {listing}`) or a path, found an empty string")
    looks_like_path = isinstance(name_or_path, os.PathLike) or "/" in text or text.endswith((".toml", ".json"))
    if looks_like_path:
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


def read_text(path: Path) -> str:
    """A spec file's text, with one-line errors for unreadable or oversized files.

    A UTF-8 byte-order mark (which some Windows editors write) is dropped.
    """
    where = shown_path(path)
    try:
        size = path.stat().st_size
    except (OSError, ValueError) as err:
        raise SpecError(where, None, f"cannot read: {getattr(err, 'strerror', None) or err}") from None
    if size > MAX_SPEC_BYTES:
        raise SpecError(where, None, f"expected a spec file under {MAX_SPEC_BYTES} bytes, found {size} bytes")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise SpecError(where, None, f"expected UTF-8 text, found undecodable bytes at offset {err.start}") from None
    except (OSError, ValueError) as err:
        raise SpecError(where, None, f"cannot read: {getattr(err, 'strerror', None) or err}") from None

"""Where shipped specs live, and resolving a name or a path to a file."""

from __future__ import annotations

from pathlib import Path

from specs.errors import SpecError, suggest

SPECS_DIR = Path(__file__).parent
HARDWARE_DIR = SPECS_DIR / "hardware"
MODELS_DIR = SPECS_DIR / "models"
MAX_SPEC_BYTES = 1_000_000


def hardware_names() -> list[str]:
    return sorted(p.stem for p in HARDWARE_DIR.glob("*.toml"))


def model_names() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def resolve(name_or_path: str | Path, kind: str, directory: Path, suffix: str, names: list[str], listing: str) -> Path:
    """The file for a shipped name, or the user's own path (any path with a suffix or a slash)."""
    text = str(name_or_path)
    looks_like_path = isinstance(name_or_path, Path) or "/" in text or text.endswith((".toml", ".json"))
    if looks_like_path:
        path = Path(text)
        if not path.is_file():
            raise SpecError(text, None, f"no such {kind} file")
        return path
    if text in names:
        return directory / f"{text}{suffix}"
    shown_name = text if len(text) <= 40 else text[:37] + "..."
    raise SpecError(f"{kind} {shown_name!r}", None, f"unknown {kind} name{suggest(text, names)}; `roofline list {listing}` lists them")


def read_text(path: Path) -> str:
    """A spec file's text, with one-line errors for unreadable or oversized files."""
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(path, None, f"expected a spec file under {MAX_SPEC_BYTES} bytes, found {size} bytes")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise SpecError(path, None, f"expected UTF-8 text, found undecodable bytes at offset {err.start}") from None
    except OSError as err:
        raise SpecError(path, None, f"cannot read: {err.strerror}") from None

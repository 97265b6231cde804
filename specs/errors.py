"""`SpecError`: one line naming the file, the field, what was expected and what was found."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from ..units.errors import RooflineError


class SpecError(RooflineError, ValueError):
    """A spec file, a name or a user value is not what roofline can use."""

    def __init__(self, where: str | Path, field: str | None, message: str) -> None:
        self.where = str(where)
        self.field = field
        self.message = message
        location = f"{self.where}: {field}" if field else self.where
        super().__init__(f"{location}: {message}")


class SpecWarning(UserWarning):
    """A spec value that loads but is far outside what any shipped chip has (or a choice the sheet warns about).

    `advice` (appended to the message) names `flag`, an option that changes what is warned about; the command line prints
    the message without it where the command has no such option (`quiz` has no --weights).
    """

    def __init__(self, message: str, advice: str = "", flag: str | None = None) -> None:
        super().__init__(message + advice)
        self.bare = message
        self.advice = advice
        self.flag = flag


def suggest(name: str, choices: Iterable[str]) -> str:
    """' (did you mean a, b?)' for the closest valid names, or ''."""
    close = difflib.get_close_matches(name, sorted(choices), n=3, cutoff=0.5)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def shown(value: object, limit: int = 60) -> str:
    """A found value as it goes into an error line: repr, shortened, one line."""
    text = repr(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""Reading a user's derivation file (`roofline derive ./my-question.toml`): bytes to a TOML table, one-line errors.

The specs layer does the file work, with the same checks as hardware and model
specs (`specs.catalog.read_text`: size, UTF-8, unreadable files); the
derivations layer (roofline.userfile) checks the table and builds the sheet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .catalog import parse_toml, read_text
from .errors import SpecError

#: The largest derivation file read (the shipped example is 3 kB; a file of 200 steps, the most one may hold, about 60 kB).
MAX_DERIVATION_FILE_BYTES = 200_000


def read_derivation_file(path: str | Path, error: type[SpecError] = SpecError) -> dict[str, Any]:
    """The parsed TOML table of `path`; any problem is `error(path, None, why)`."""
    where = str(path)
    try:
        p = Path(path)
        if not p.is_file():
            raise error(where, None, "no such file" if not p.exists() else "is not a file")
    except (OSError, ValueError) as err:
        raise error(where, None, f"cannot read it ({getattr(err, 'strerror', None) or err})") from None
    try:
        text = read_text(p, MAX_DERIVATION_FILE_BYTES)
    except SpecError as err:
        raise error(where, None, err.message) from None
    return parse_toml(text, where, error, syntax="not valid TOML: {}")

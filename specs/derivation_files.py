"""Reading a user's derivation file (`roofline derive ./my-question.toml`): bytes to a TOML table, one-line errors.

The specs layer does the file work, as for hardware and model specs; the
derivations layer (derivations.userfile) checks the table and builds the sheet.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from specs.errors import SpecError

#: the largest derivation file read
MAX_FILE_BYTES = 200_000


def read_derivation_file(path: str | Path, error: type[SpecError] = SpecError) -> dict[str, Any]:
    """The parsed TOML table of `path`; any problem is `error(path, None, why)`."""
    p = Path(path)
    where = str(path)
    try:
        if not p.is_file():
            raise error(where, None, "no such file" if not p.exists() else "is not a file")
        if p.stat().st_size > MAX_FILE_BYTES:
            raise error(where, None, f"too large: {p.stat().st_size:,} bytes, at most {MAX_FILE_BYTES:,}")
        raw = p.read_bytes()
    except OSError as err:
        raise error(where, None, f"cannot read it ({err.strerror or err})") from None
    try:
        return tomllib.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError:
        raise error(where, None, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as err:
        raise error(where, None, f"not valid TOML: {str(err)[:120]}") from None

"""Cache entries as tests read and rewrite them: a header line naming the entry (derivations.engine.store), then its payload."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def header(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes().partition(b"\n")[0])


def value(path: Path) -> Any:
    """The JSON value an entry holds (its header set aside)."""
    return json.loads(path.read_bytes().partition(b"\n")[2])


def rewrite(path: Path, new: Any, **changes: Any) -> None:
    """Write `new` as the entry's value with a header that still matches it (its digest made again): an entry as the code
    would write it, so what a test changes inside is what the reader must refuse. `changes` alters the header (key, what)."""
    payload = json.dumps(new, separators=(",", ":")).encode()
    head = {**header(path), "sha256": hashlib.sha256(payload).hexdigest(), **changes}
    path.write_bytes(json.dumps(head, separators=(",", ":")).encode() + b"\n" + payload)

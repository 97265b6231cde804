"""Renderers: solved sheets as Markdown, LaTeX and JSON. They never solve or read specs.

`FORMATS` maps a format name to its render function; the renderer modules (and
sympy with them) are imported on first use, so `renderers.numbers` alone stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

_MODULES = {"md": "markdown", "tex": "latex", "json": "json_out"}


def _lazy(fmt: str) -> Callable[[Any], str]:
    def render(sheet: Any, **options: Any) -> str:
        return importlib.import_module(f".{_MODULES[fmt]}", __package__).render(sheet, **options)

    render.__name__ = f"render_{fmt}"
    return render


FORMATS: dict[str, Callable[..., str]] = {fmt: _lazy(fmt) for fmt in _MODULES}

__all__ = ["FORMATS"]

"""Imports point one way: units <- specs <- derivations <- renderers <- roofline."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["units", "specs", "derivations", "renderers", "roofline"]


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("rank, layer", list(enumerate(LAYERS)))
def test_no_layer_imports_a_layer_above_it(rank, layer):
    above = set(LAYERS[rank + 1:])
    upward = [f"{p.relative_to(ROOT)} imports {sorted(_imported_roots(p) & above)}"
              for p in sorted((ROOT / layer).rglob("*.py")) if _imported_roots(p) & above]
    assert upward == []


def test_derivations_never_read_files_or_format_text():
    """A derivation never reads a file and never formats text (DESIGN.md)."""
    for p in (ROOT / "derivations" / "questions").glob("*.py"):
        roots = _imported_roots(p)
        assert not roots & {"renderers", "jinja2", "json", "tomllib", "pathlib", "io"}, p.name
        assert "open(" not in p.read_text(encoding="utf-8"), p.name

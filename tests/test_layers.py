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


def _modules() -> dict[str, Path]:
    out = {}
    for layer in LAYERS:
        for p in (ROOT / layer).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = p
    return out


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `path` imports anywhere in it (module level, in a function or under TYPE_CHECKING)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules)
    return found


def test_no_module_reaches_itself_through_imports():
    """No circle of imports, function-level ones included (a package importing its own submodules, and the lazy loader
    in units/__init__.py, aside): each folder's modules can be read from the bottom up."""
    modules = _modules()
    graph = {name: {m for m in _imports(path, modules) if not (path.name == "__init__.py" and m.startswith(name + "."))}
             for name, path in modules.items() if name != "units"}
    circles, state = [], {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for nxt in sorted(graph.get(name, ())):
            if state.get(nxt) == "open":
                circles.append(" -> ".join([*trail[trail.index(nxt):], name, nxt]) if nxt in trail else f"{name} -> {nxt}")
            elif nxt not in state:
                visit(nxt, [*trail, name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert circles == []

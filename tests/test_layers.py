"""Imports point one way: units <- specs <- derivations <- renderers <- roofline."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["units", "specs", "derivations", "renderers", "roofline"]


def _module_name(path: Path) -> str:
    """A file's module as installed: roofline/api.py is roofline.api, units/errors.py roofline.units.errors."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts if parts[0] == "roofline" else ["roofline", *parts])


def _layer(module: str) -> str | None:
    """The layer a module (as installed) belongs to; None for a module outside the project."""
    parts = module.split(".")
    if parts[0] != "roofline":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS[:-1] else "roofline"


def _imported(path: Path) -> set[str]:
    """Every module `path` imports anywhere in it, relative imports resolved, as installed names (`from ..units import x`
    in roofline/derivations/engine gives roofline.units and roofline.units.x)."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) if node.level else node.module
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


def _imported_roots(path: Path) -> set[str]:
    """The layers `path` imports, and the top-level names of everything else it imports (the `roofline` package itself,
    which every layer sits in when installed, aside: `from .. import units` loads it on the way)."""
    return {_layer(m) or m.split(".")[0] for m in _imported(path) if m != "roofline"}


def test_every_import_of_the_project_is_relative():
    """Installed, the layers are packages inside `roofline` (roofline.units, ...): an absolute `import units` would find
    another distribution's package, or none."""
    absolute = [f"{p.relative_to(ROOT)}: {node.module if isinstance(node, ast.ImportFrom) else node.names[0].name}"
                for layer in LAYERS[:-1] for p in sorted((ROOT / layer).rglob("*.py"))
                for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                if (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in LAYERS)
                or (isinstance(node, ast.Import) and any(a.name.split(".")[0] in LAYERS for a in node.names))]
    assert absolute == []


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
    return {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `path` imports anywhere in it (module level, in a function or under TYPE_CHECKING)."""
    return {m for m in _imported(path) if m in modules}


def test_no_module_reaches_itself_through_imports():
    """No circle of imports, function-level ones included (a package importing its own submodules, and the lazy loader
    in units/__init__.py, aside): each folder's modules can be read from the bottom up."""
    modules = _modules()
    graph = {name: {m for m in _imports(path, modules) if not (path.name == "__init__.py" and m.startswith(name + "."))}
             for name, path in modules.items() if name != "roofline.units"}
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

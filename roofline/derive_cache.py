"""The derive cache: `roofline derive` answered from an earlier identical run, before sympy, pint or numpy is imported.

A run of `roofline derive` (every format) is a function of what it reads, and
this module keys all of it, with the standard library alone:

- the command line as the parser reads it (the subcommand, the slug or the
  derivation file's path, every option and every `--set`, in order), and the
  working folder (relative paths, and the paths a sheet or a warning shows);
- the bytes of every file of roofline's packages (`units`, `specs` with its
  hardware, models, measurements and engine profiles, `derivations`,
  `renderers`, `roofline`): a shipped sheet's code, its specs, its templates;
- the bytes of every user file the command line names (a hardware TOML, a
  model's config.json and the metadata TOML beside it, a derivation file and
  each file it names, relative to its folder);
- the environment variables the code and its libraries read (`ROOFLINE_*`,
  `XDG_*`, `HOME`, `LANG`, `LC_*`, `PYTHON*`, `SYMPY_*`, `MPMATH_*`, `PINT_*`,
  `NUMPY_*`, `SOURCE_DATE_EPOCH`, `TZ`), the encodings of stdout and stderr,
  the Python version, its flags, `-W` and `-X` options, and the installed
  versions of the libraries a derive imports (`DISTRIBUTIONS`, read from the
  `*.dist-info` folder names on `sys.path`).

On a hit, the stored stdout and stderr (warnings included) are written in the
order the run wrote them, and the exit code is 0: only successful runs are
stored. On a miss the normal path runs, its output going out as it is written
and recorded on the way, and a run that ends with 0 is stored. What the key
cannot see means no cache: `--plots` (it writes files), an option this module
does not know, a named file that is not a readable regular file, a derivation
file that is not TOML; then the normal path runs as if there were no cache.

Entries live in the folder and under the rules of `derivations.store` (the
user's own folder, nobody else can write it; `ROOFLINE_CACHE_DIR`;
`ROOFLINE_CACHE=off` bypasses this cache and the solve cache alike): JSON
holding text, nothing that loading can execute. An entry that is not the
expected shape is a miss.

Only the command uses it: `roofline.cli.main()` called with no argv (the
console script, `python -m roofline`). A caller passing argv to `main` from
Python may have changed the process's state in ways no key sees (a test's
monkeypatch, a spec loaded and edited), so it gets the normal path unless it
asks for the cache with `result_cache=True`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import stat
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from derivations import store

#: bump to invalidate every stored run when the entry's shape or the key's recipe changes
FORMAT = 1
#: the packages whose every file (code, specs, templates) a derive may read
PACKAGES = ("units", "specs", "derivations", "renderers", "roofline")
#: the distributions a derive imports (tests/cli/test_derive_cache.py checks this list against sys.modules after a derive)
DISTRIBUTIONS = ("sympy", "mpmath", "pint", "flexcache", "flexparser", "platformdirs", "typing_extensions", "numpy", "jinja2", "markupsafe")
#: environment variables keyed: every one whose name starts with one of these, and these names
ENV_PREFIXES = ("ROOFLINE_", "XDG_", "LC_", "PYTHON", "SYMPY_", "MPMATH_", "PINT_", "NUMPY_")
ENV_NAMES = ("HOME", "LANG", "LANGUAGE", "SOURCE_DATE_EPOCH", "TZ")
#: the options `roofline derive` has (argparse's names); a parsed command line with any other is not cached
DERIVE_OPTIONS = frozenset({"command", "slug", "hardware", "model", "second_hardware", "second_model", "weights", "kv", "math", "set", "engine",
                            "format", "fragment", "plots"})
#: the options naming a spec that may be a user's file (a path when it has a '/' or ends .toml/.json, as specs.catalog.resolve reads it)
SPEC_OPTIONS = ("hardware", "model", "second_hardware", "second_model")
#: a user file larger than this is not keyed (the specs layer refuses files above 1 MB anyway)
MAX_USER_FILE_BYTES = 4 * 2**20
#: the most files a derivation file may name and still be keyed
MAX_NAMED_FILES = 256


def _looks_like_path(text: str) -> bool:
    return "/" in text or text.endswith((".toml", ".json"))


def _file_digest(path: str, *, required: bool) -> str | None:
    """The digest of a regular file's bytes; 'absent' for a file that is not there (when not required); None: not keyable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None if required else "absent"
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_USER_FILE_BYTES:
            return None
        h, size = hashlib.sha256(), 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MAX_USER_FILE_BYTES:
                return None
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def _spec_file(path: str, *, required: bool = True) -> list[str] | None:
    """A spec file's digest and that of the metadata TOML beside it (a model's config.json has one); None: not keyable."""
    root, _ = os.path.splitext(path)
    if not os.path.basename(root):
        return None
    main = _file_digest(path, required=required)
    beside = _file_digest(root + ".toml", required=False)
    return None if main is None or beside is None else [main, beside]


def _strings(data: object) -> Iterator[str]:
    """Every string value in parsed TOML, without recursion."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _derivation_file(path: str) -> dict[str, Any] | None:
    """A derivation file's digest and those of the files it names (relative to its folder); None: not keyable."""
    digest = _file_digest(path, required=True)
    if digest is None:
        return None
    try:
        with open(path, "rb") as f:
            data = tomllib.loads(f.read(MAX_USER_FILE_BYTES + 1).decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # tomllib.TOMLDecodeError and UnicodeDecodeError are ValueErrors
        return None
    named = sorted({s for s in _strings(data) if _looks_like_path(s)})
    if len(named) > MAX_NAMED_FILES:
        return None
    files = {}
    for text in named:
        part = _spec_file(os.path.join(os.path.dirname(path), text), required=False)
        if part is None:
            return None
        files[text] = part
    return {"digest": digest, "names": files}


def _package_roots() -> list[tuple[str, str]]:
    roots = []
    for name in PACKAGES:
        for folder in importlib.import_module(name).__path__:  # each package's __init__ is light (tests/cli/test_derive_cache.py)
            roots.append((name, folder))
    return roots


def sources_digest() -> str:
    """The digest of every file of roofline's packages (names, sizes and bytes), byte-compiled files left out."""
    h = hashlib.sha256()
    for name, root in _package_roots():
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for file in sorted(files):
                if file.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(folder, file)
                with open(path, "rb") as f:
                    data = f.read()
                h.update(f"{name}/{os.path.relpath(path, root)}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
                h.update(data)
    return h.hexdigest()


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def versions() -> dict[str, list[str]]:
    """The installed versions of DISTRIBUTIONS, from the dist-info (or egg-info) folder names on sys.path, in path order."""
    wanted = {_normal(n): n for n in DISTRIBUTIONS}
    found: dict[str, list[str]] = {n: [] for n in DISTRIBUTIONS}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except (OSError, ValueError):  # a zip file, a missing folder
            continue
        for folder in names:
            stem, _, suffix = folder.rpartition(".")
            if suffix not in ("dist-info", "egg-info"):
                continue
            name, _, version = stem.partition("-")
            if _normal(name) in wanted:
                found[wanted[_normal(name)]].append(f"{version} in {entry}")
    return found


def _stream(s: object) -> list[str | None]:
    return [getattr(s, "encoding", None), getattr(s, "errors", None)]


def key(args: Mapping[str, object]) -> str | None:
    """The key of a parsed `roofline derive` command line (argparse's names and values); None when it cannot be keyed."""
    if set(args) != DERIVE_OPTIONS or args["command"] != "derive" or args["plots"] is not None:
        return None
    for value in args.values():
        if not (value is None or isinstance(value, str | bool) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            return None
    slug = args["slug"]
    if not isinstance(slug, str):
        return None
    files: dict[str, Any] = {}
    if slug.endswith(".toml"):  # a derivation file (derivations.userfile.is_derivation_file)
        files["slug"] = _derivation_file(slug)
    for option in SPEC_OPTIONS:
        value = args[option]
        if isinstance(value, str) and _looks_like_path(value):
            files[option] = _spec_file(value)
    if any(part is None for part in files.values()):
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}
    recipe = {
        "format": FORMAT, "args": dict(args), "cwd": cwd, "files": files, "sources": sources_digest(), "env": env,
        "python": [sys.version, sys.implementation.cache_tag, sys.prefix, repr(sys.flags), sys.warnoptions, repr(sorted(sys._xoptions.items()))],
        "streams": [_stream(sys.stdout), _stream(sys.stderr)], "versions": versions(),
    }
    text = json.dumps(recipe, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


#: stream names in an entry
_STREAMS = ("out", "err")


def lookup(k: str) -> list[tuple[str, str]] | None:
    """The output stored under `k`, as (stream, text) pieces in the order written; None: a miss (or an entry of the wrong shape)."""
    value = store.load_json(k)
    if not isinstance(value, dict) or set(value) != {"format", "output"} or value["format"] != FORMAT or not isinstance(value["output"], list):
        return None
    pieces = []
    for piece in value["output"]:
        if not (isinstance(piece, list) and len(piece) == 2 and piece[0] in _STREAMS and isinstance(piece[1], str)):
            return None
        pieces.append((piece[0], piece[1]))
    return pieces


def save(k: str, pieces: Sequence[tuple[str, str]]) -> None:
    """Store a run's output (consecutive pieces of one stream joined); store.store_json's rules (size cap, atomic write) apply."""
    joined: list[list[str]] = []
    for stream, text in pieces:
        if joined and joined[-1][0] == stream:
            joined[-1][1] += text
        else:
            joined.append([stream, text])
    store.store_json(k, {"format": FORMAT, "output": joined})


def replay(pieces: Sequence[tuple[str, str]]) -> None:
    """Write stored output as the run wrote it (stderr flushed after each piece, as roofline's warning lines are)."""
    for stream, text in pieces:
        if stream == "out":
            sys.stdout.write(text)
        else:
            sys.stderr.write(text)
            sys.stderr.flush()


class _Recorder:
    """A text stream that writes through to `target` and records what was written."""

    def __init__(self, target: Any, name: str, pieces: list[tuple[str, str]]) -> None:
        self._target, self._name, self._pieces = target, name, pieces

    def write(self, text: str) -> int:
        n = self._target.write(text)
        self._pieces.append((self._name, text))
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


@contextmanager
def _recorded(pieces: list[tuple[str, str]]) -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Recorder(out, "out", pieces), _Recorder(err, "err", pieces)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def answer(argv: list[str], parse: Callable[[list[str]], Any], run: Callable[[list[str]], int]) -> int:
    """Run the command `argv`: a `derive` from the cache when it holds this run, else `run(argv)` (recorded and stored when it
    succeeds). `parse(argv)` is the command's own parser, silent: the namespace, or None where it would print or exit."""
    if argv[:1] != ["derive"] or store.directory() is None:
        return run(argv)
    args = parse(argv)
    k = None if args is None else key(vars(args))
    if k is None:
        return run(argv)
    stored = lookup(k)
    if stored is not None:
        replay(stored)
        return 0
    pieces: list[tuple[str, str]] = []
    with _recorded(pieces):
        code = run(argv)
    if code == 0:
        save(k, pieces)
    return code


__all__ = ["DISTRIBUTIONS", "ENV_NAMES", "ENV_PREFIXES", "FORMAT", "PACKAGES", "answer", "key", "lookup", "save", "sources_digest", "versions"]

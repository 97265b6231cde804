"""The output folder `--out` of `roofline build`: checked before anything is rendered, written in one swap, never losing
a user's file.

How a build writes `--out` (say `out/`):

1. The path is checked before anything is rendered: it must not be empty,
   must not be an existing file, must not be the current folder (or hold it),
   a mount point, or a folder roofline cannot write; its parent must be a
   folder roofline can write (missing parents are created, and removed again
   if the build fails).
2. A build deletes only what a build wrote. Each build writes a manifest,
   `out/.roofline-manifest.json`, listing every file it wrote. If `out/`
   holds anything else (a README, a `.gitignore`, a symbolic link, a plain file
   named `site` or `plots`, a folder of one's own, a file the manifest does not
   list), the build refuses before rendering, naming it: move it away or use
   another `--out`. A folder built before manifests existed counts as a
   build's when every entry has the name of a build output.
3. Every sheet (and with `--pdf` every PDF) is rendered in memory.
4. All files and the manifest are written into a fresh hidden folder beside
   `out/` (same parent, so the swap stays on one file system). A build's
   outputs are `<slug>.md`, `.tex`, `.json` and `.pdf` for every registered
   sheet, and the folder `plots/` with each declared plot as
   `<slug>-<plot>.svg` (linked by the `.md`) and `.pdf` (included by the
   `.tex`), `book.tex` (every sheet as a chapter; see renderers/book.py) and
   the HTML site `site/` (renderers/site.py) with the Python API reference in
   `site/api/` (roofline/apidoc.py), the practice page with its script
   (`practice.html`, `practice.js`: roofline/practice.py) and the live sheets'
   scripts (`plan.js`, `live.js`: roofline/live.py). PDFs left by an earlier `--pdf`
   build are dropped by a build without `--pdf`, since they would no longer
   match the `.tex` beside them.
5. The swap is one step: on Linux the new folder and `out/` trade places with
   one `renameat2(RENAME_EXCHANGE)` call, so an interruption at any moment
   leaves either the old folder or the new one at `out/`, never none. Then the
   old folder (now at the hidden name) is removed, after checking again that it
   holds only what a build wrote (anything else is kept there, with a warning).
   Where the exchange is not available (another OS, a file system without it)
   the swap is two renames (old out of the way, new into place); a build that
   finds `out/` missing and the old folder beside it (an interruption between
   the two) puts it back before it starts.


Every failure is a `BuildError`: one line naming the path; the old `out/` is
then left byte-identical (its files are never opened for writing).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import secrets
import shutil
import stat
import warnings
from pathlib import Path

from .build_outputs import API_DIR, OUTPUT_FOLDERS, SITE_DIR, SITE_SCRIPTS, BuildError, output_names
from .renderers.plots import PLOTS_DIR
from .specs.catalog import shown_path
from .specs.files import folder_option, write_new

#: The list of every file a build wrote, in --out: what the next build may delete.
MANIFEST = ".roofline-manifest.json"
MANIFEST_FORMAT = 1
#: The most entries (files and folders) an old --out may hold for a build to check it (a build writes about 180).
MAX_OLD_ENTRIES = 10_000


def out_path(out: str | os.PathLike[str]) -> Path:
    """`--out` as a Path; an empty path is refused (it would mean the current folder)."""
    return folder_option("--out", out)  # specs.files: the check every folder option gets


def check_out(out: Path) -> Path:
    """Refuse an `--out` a build cannot swap in, or one holding what no build wrote; returns the real folder the build replaces.

    Only reads: nothing is created or changed here.
    """
    where = f"--out {shown_path(out)}"
    try:
        target = Path(os.path.realpath(out))
        if target == Path(target.anchor):
            raise BuildError(f"{where}: is the root folder; name a folder for the sheets, such as out")
        cwd = Path.cwd().resolve()
        if target == cwd or target in cwd.parents:
            raise BuildError(f"{where}: is the current folder or holds it; a build replaces its --out folder as a whole, so name a subfolder such as out")
        if target.exists() or target.is_symlink():
            if not target.is_dir():
                raise BuildError(f"{where}: is a file, expected a folder (the build replaces the folder with fresh sheets)")
            if os.path.ismount(target):
                raise BuildError(f"{where}: is a mount point, which a build cannot swap; write to a subfolder of it")
            if not os.access(target, os.W_OK | os.X_OK):
                raise BuildError(f"{where}: folder is not writable")
            foreign = foreign_entry(target)
            if foreign is not None:
                rel, why = foreign
                raise BuildError(f"{shown_path(out / rel)}: {why}; a build replaces --out as a whole and deletes only what a build wrote, "
                                 "so move it away or use another --out")
        parent = _existing_ancestor(target)
        if not parent.is_dir():
            raise BuildError(f"{where}: {shown_path(parent)} is not a folder")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise BuildError(f"{where}: cannot create it, {shown_path(parent)} is not writable")
    except OSError as err:
        raise BuildError(f"{where}: cannot use it as the output folder ({err.strerror or err})") from None
    return target


def read_manifest(folder: Path) -> set[str] | None:
    """The files a build wrote into `folder`, from its manifest; None when it has none (or an unreadable one)."""
    path = folder / MANIFEST
    try:
        if path.is_symlink() or not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or not isinstance(data.get("files"), list) \
            or not all(isinstance(f, str) for f in data["files"]):
        return None
    return set(data["files"])


def manifest_text(files: dict[str, str | bytes]) -> str:
    """The manifest of a build that writes `files`."""
    return json.dumps({"format": MANIFEST_FORMAT, "written_by": "roofline build", "files": sorted(files)}, indent=1) + "\n"


def _legacy_output(rel: str) -> bool:
    """A name a build writes (for a folder built before manifests existed): a sheet, the book, a plot, a site page."""
    top, _, rest = rel.partition("/")
    if not rest:
        return rel in output_names()
    if top == PLOTS_DIR:
        return "/" not in rest and re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*\.(?:svg|pdf)", rest) is not None
    if top == SITE_DIR:
        page = r"[a-z0-9]+(?:-[a-z0-9]+)*\.html"
        return rest in SITE_SCRIPTS or re.fullmatch(rf"{page}|{API_DIR}/(?:roofline/)?[a-z0-9_]+\.html", rest) is not None
    return False


def foreign_entry(folder: Path) -> tuple[str, str] | None:
    """The first entry of an old `--out` that no build wrote, as (path relative to it, why); None when every entry is a build's."""
    listed = read_manifest(folder)

    def ours(rel: str) -> bool:
        return rel in listed if listed is not None else _legacy_output(rel)

    pending = [""]
    seen = 0
    while pending:
        sub = pending.pop()
        with os.scandir(folder / sub if sub else folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                seen += 1
                if seen > MAX_OLD_ENTRIES:
                    return sub or ".", f"holds more than {MAX_OLD_ENTRIES:,} entries, far more than a build writes"
                rel = f"{sub}/{entry.name}" if sub else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if rel == MANIFEST and stat.S_ISREG(mode):
                    continue
                if stat.S_ISLNK(mode):
                    return rel, "is a symbolic link, which no build writes"
                if stat.S_ISDIR(mode):
                    if rel in OUTPUT_FOLDERS:
                        pending.append(rel)
                        continue
                    if rel in output_names():
                        return rel, "is a folder where the build writes a file"
                    return rel, "is a folder no build wrote"
                if not stat.S_ISREG(mode):
                    return rel, "is not a regular file (a FIFO, socket or device), which no build writes"
                if rel in OUTPUT_FOLDERS:
                    return rel, "is a file where the build writes a folder"
                if not ours(rel):
                    why = f"is not in the manifest ({MANIFEST}) of the build that wrote this folder" if listed is not None else \
                        "is not a file a build writes"
                    return rel, why
    return None


def _existing_ancestor(target: Path) -> Path:
    """The nearest existing folder above `target` (where the new folder gets made)."""
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def write_atomically(out: Path, files: dict[str, str | bytes]) -> None:
    """Make `out` hold exactly `files` (and the manifest), or change nothing.

    `out` must have passed `check_out`; see the module docstring for the steps.
    """
    target = check_out(out)
    where = f"--out {shown_path(out)}"
    had_old = target.is_dir()
    made_parents: list[Path] = []
    new = None
    try:
        parent = target.parent
        missing = [p for p in (parent, *parent.parents) if not p.exists()]
        for p in reversed(missing):
            p.mkdir()
            made_parents.append(p)
        new = _fresh_name(target, "new")
        new.mkdir()
        for name, data in sorted({**files, MANIFEST: manifest_text(files)}.items()):
            if "/" in name:
                (new / name).parent.mkdir(parents=True, exist_ok=True)
            write_new(new / name, data, sync=False)  # specs.files, as every writer of a path the user names
        if had_old:
            shutil.copymode(target, new)
            old = _swap(new, target, where)
            new = None
            _discard(old, where)
        else:
            os.rename(new, target)
            new = None
    except BaseException as err:
        if new is not None:
            shutil.rmtree(new, ignore_errors=True)
        for p in reversed(made_parents):
            _rmdir_quietly(p)
        if isinstance(err, OSError):
            unchanged = "; the old folder is unchanged" if had_old else ""
            raise BuildError(f"{where}: cannot write the output folder ({err.strerror or err}){unchanged}") from None
        raise



#: Linux's renameat2(2): with RENAME_EXCHANGE two paths trade places in one step.
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swap the folders at `a` and `b` atomically; False where the system or file system cannot (then nothing changed)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _swap(new: Path, target: Path, where: str) -> Path:
    """Put `new` at `target`; returns where the old folder now is (to be discarded)."""
    if exchange(new, target):
        return new
    backup = _fresh_name(target, "old")
    os.rename(target, backup)
    try:
        os.rename(new, target)
    except BaseException:
        _restore(backup, target, where)
        raise
    return backup


def _discard(old: Path, where: str) -> None:
    """Remove the swapped-out folder: only if it still holds nothing but a build's files (someone may have added one meanwhile)."""
    try:
        foreign = foreign_entry(old)
    except OSError:
        foreign = (".", "could not be listed")
    if foreign is not None:
        warnings.warn(BuildWarning(f"{where}: the old folder, now {shown_path(old)}, is kept: {shown_path(old / foreign[0])} {foreign[1]}"), stacklevel=2)
        return
    shutil.rmtree(old, ignore_errors=True)


class BuildWarning(UserWarning):
    """Something a build left in place rather than delete (an old folder holding a file no build wrote)."""


def recover_interrupted_swap(out: Path) -> Path | None:
    """Where a two-rename swap was interrupted (`out` missing, the old folder at its hidden name beside it): put it back.

    Returns the folder put back, or None. The newest such folder wins; the others are left alone.
    """
    try:
        target = Path(os.path.realpath(out))
        if target.exists() or target.is_symlink() or not target.parent.is_dir():
            return None
        backups = [p for p in target.parent.glob(f".{glob_escape(target.name)}.roofline-old-*") if p.is_dir() and not p.is_symlink()]
    except OSError:  # an --out that cannot even be looked at: check_out says why
        return None
    if not backups:
        return None
    newest = max(backups, key=lambda p: p.stat().st_mtime)
    os.rename(newest, target)
    return newest


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _fresh_name(target: Path, role: str) -> Path:
    """An unused hidden name beside `target`."""
    while True:
        candidate = target.parent / f".{target.name}.roofline-{role}-{secrets.token_hex(4)}"
        if not candidate.exists() and not candidate.is_symlink():
            return candidate


def _restore(backup: Path, target: Path, where: str) -> None:
    """Put the old folder back after a failed swap."""
    try:
        os.rename(backup, target)
    except OSError as err:
        raise BuildError(f"{where}: the swap failed and the old folder could not be put back ({err.strerror}); it is at {shown_path(backup)}") from None


def _rmdir_quietly(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass

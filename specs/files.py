"""Writing the files a user names: `quiz --out`, `calibrate --write-defaults --to`, `derive --plots`, `SweepTable.to_csv`, `build --out`.

One mechanism for all of them. A file is first written whole to a temporary file beside its target (created new, never through
a link) and flushed to disk; only when every file of the set is written are they renamed into place, one rename each, so a
symbolic link where a file goes is replaced, never followed, a reader never sees a truncated file, and a failure changes
nothing: the files already renamed are put back as they were (a file's bytes, a link, or no file), and the folders this run
made are removed again. A failure is one line naming the file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..units.errors import RooflineError
from .catalog import shown_path


class WriteError(RooflineError):
    """A file the user named cannot be written (nothing was changed)."""


def folder_option(option: str, text: object) -> Path:
    """A folder named on the command line (`--out DIR`, `--to DIR`): an empty one is refused, since it would mean the current folder."""
    if isinstance(text, bytes) or not isinstance(text, str | os.PathLike):
        raise WriteError(f"{option}: expected a folder path, found {type(text).__name__}")
    path = os.fspath(text)
    if not isinstance(path, str) or not path.strip():
        raise WriteError(f"{option}: expected a folder path, found an empty string")
    if "\0" in path:
        raise WriteError(f"{option} {shown_path(path)!r}: expected a folder path, found a NUL character")
    return Path(path)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _data(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


def write_new(path: Path, data: str | bytes, sync: bool = True) -> None:
    """Create `path` and write `data` (text as UTF-8, newlines as given): refused (FileExistsError) where anything, a link
    included, is already there (O_EXCL never follows one), so nothing is ever written through a link. Raises OSError."""
    with open(path, "xb") as f:
        f.write(_data(data))
        f.flush()
        if sync:
            os.fsync(f.fileno())


def _stage(target: Path, data: bytes, mode: int) -> str:
    """`data` in a new temporary file beside `target`, flushed to disk; returns its path."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".roofline-tmp")
    try:
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _before(path: Path) -> tuple[str, bytes | str, int] | None:
    """What is at `path` now, to put back after a failed run: a file's bytes and mode, a link's target, or None."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path), 0)
    return ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))


def _put_back(path: Path, old: tuple[str, bytes | str, int] | None) -> None:
    try:
        if old is None:
            os.unlink(path)
        elif old[0] == "link":
            tmp = path.parent / f".{path.name}.roofline-link-{os.getpid()}"
            _unlink_quietly(tmp)
            os.symlink(old[1], tmp)
            os.replace(tmp, path)
        else:
            os.replace(_stage(path, old[1], old[2]), path)  # type: ignore[arg-type]
    except OSError:
        pass


def _unlink_quietly(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def replace_files(files: Mapping[Path, str | bytes], remove: Iterable[Path] = (), *, option: str = "", make_folders: bool = True) -> list[Path]:
    """Make each path of `files` hold its data (text as UTF-8) and each of `remove` be gone, or change nothing; returns the paths written.

    `option` prefixes the file in the error line (`--plots figs/x.svg: cannot write it (...)`). `make_folders`: a missing folder
    is made (and removed again on a failure); otherwise a missing one is an error. A link where a file goes is replaced, not followed.
    """
    label = f"{option} " if option else ""
    made: list[Path] = []
    staged: list[tuple[str, Path]] = []
    replaced: list[tuple[Path, tuple[str, bytes | str, int] | None]] = []
    where = ""
    mode = 0o666 & ~_umask()
    try:
        for target, data in files.items():
            target = Path(target)
            where = shown_path(target)
            if make_folders:
                for folder in reversed([p for p in (target.parent, *target.parent.parents) if not os.path.lexists(p)]):
                    folder.mkdir()
                    made.append(folder)
            if target.is_dir() and not target.is_symlink():
                raise WriteError(f"{label}{where}: is a folder, expected a file; nothing was changed")
            if not target.parent.is_dir():
                why = "is not a folder" if os.path.lexists(target.parent) else "does not exist"
                raise WriteError(f"{label}{where}: {shown_path(target.parent)} {why}; nothing was changed")
            staged.append((_stage(target, _data(data), mode), target))
        for tmp, target in staged:
            where = shown_path(target)
            old = _before(target)
            os.replace(tmp, target)
            replaced.append((target, old))
        staged = []
        gone = [(Path(p), _before(Path(p))) for p in remove if os.path.lexists(p)]
        for path, old in gone:
            where = shown_path(path)
            os.unlink(path)
            replaced.append((path, old))
    except BaseException as err:
        for path, old in reversed(replaced):
            _put_back(path, old)
        for tmp, _ in staged:
            _unlink_quietly(tmp)
        for folder in reversed(made):
            try:
                folder.rmdir()
            except OSError:
                pass
        if isinstance(err, OSError):
            raise WriteError(f"{label}{where}: cannot write it ({err.strerror or err}); nothing was changed") from None
        raise
    return [Path(p) for p in files]


__all__ = ["WriteError", "folder_option", "replace_files", "write_new"]

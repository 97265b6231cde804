"""`roofline build`: every registered sheet on its default contexts, swapped in atomically, never losing a user's file.

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
   `site/api/` (roofline/apidoc.py). PDFs left by an earlier `--pdf`
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
then left byte-identical (its files are never opened for writing). PDFs are
compiled with `pdflatex -no-shell-escape -halt-on-error` and
`openin_any=p`/`openout_any=p`, several at once (`compile_pdfs`: one pdflatex
per core, the book first); a PDF whose .tex and included figures are
unchanged is read from the cache (keyed by their digests) instead. With
`progress` (the CLI's, on a terminal) the build reports each sheet derived
and rendered and each PDF compiled, one line each.
"""

from __future__ import annotations

import ctypes
import datetime
import errno
import hashlib
import json
import multiprocessing
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import roofline
from derivations.engine import cache, store
from derivations.engine.run import Sheet
from derivations.questions import registry
from renderers import book, site
from renderers.plots import PLOTS_DIR, digest_of, same_plot
from roofline import api, apidoc, compiled
from specs.catalog import hardware_names, model_names, shown_path
from specs.files import folder_option, write_new
from specs.measurements import profile as engine_profile
from units import RooflineError

PDFLATEX_ARGS = ("-no-shell-escape", "-halt-on-error", "-interaction=nonstopmode")
PDFLATEX_TIMEOUT_S = 120
OUTPUT_SUFFIXES = (".md", ".tex", ".json", ".pdf")
#: The book of every sheet: `book.tex` (`book.pdf` with --pdf); the HTML site's folder.
BOOK = "book"
SITE_DIR = "site"
#: The Python API reference, inside the site (generated from the docstrings by pdoc).
API_DIR = "api"
#: Sub-folders of --out that a build writes as a whole.
OUTPUT_FOLDERS = (PLOTS_DIR, SITE_DIR, f"{SITE_DIR}/{API_DIR}", f"{SITE_DIR}/{API_DIR}/roofline")
#: The list of every file a build wrote, in --out: what the next build may delete.
MANIFEST = ".roofline-manifest.json"
MANIFEST_FORMAT = 1
#: The most entries (files and folders) an old --out may hold for a build to check it (a build writes about 180).
MAX_OLD_ENTRIES = 10_000


#: A progress report: one line of what the build is doing (roofline.cli prints it on stderr when that is a terminal).
Progress = Callable[[str], None]


def _silent(_line: str) -> None:
    pass


class BuildError(RooflineError):
    """The output folder cannot be written, a sheet failed to render or a PDF failed to compile."""


def render_all(sheets: list | None = None, progress: Progress | None = None, engine: str | None = None,
               pdf: bool = False, drawn: Path | None = None, shipped: dict[str, bytes] | None = None) -> dict[str, str | bytes]:
    """File name -> text for every registered sheet and format; `plots/<slug>-<plot>.svg|.pdf` -> bytes for every plot.

    `sheets`: the registered sheets already derived on their default contexts (tests share one derivation of each);
    they are rendered in this process. Without them each sheet is derived and rendered on its own (`sheet_parts`),
    several at once in forked worker processes, one per core (`workers`), where the system forks; the files are the same.
    `progress`: told one line per sheet as it is derived and rendered (the CLI prints them on a terminal).
    `engine`: the engine profile every sheet uses (None: the default profile).
    `pdf`: the build compiles the PDFs too, so the site links them (without, it links the sheets' other files).
    `drawn`: a folder a build wrote (out/), whose figures a sheet built before may take where they draw its data.
    `shipped`: filled with the cache entries a build of these sheets on the light path reads (`shipped_entries`).
    """
    say = progress or _silent
    if engine is not None:
        engine_profile(engine)  # an unknown name fails before any sheet is rendered
    slugs = list(registry.SLUGS) if sheets is None else [s.blueprint.slug for s in sheets]
    reference = None
    if sheets is None:
        parts, reference = _derive_and_render_all(slugs, engine, pdf, say, drawn, shipped)
    else:
        parts = []
        for i, sheet in enumerate(sheets, 1):
            parts.append(sheet_parts(sheet, slugs, pdf))
            say(f"[{i}/{len(slugs)}] rendered {sheet.blueprint.slug} (md, tex, json, plots, page)")
    files: dict[str, str | bytes] = {}
    for part in parts:
        files.update(part["files"])
    files.update(book_and_site(parts, pdf, reference))
    say("rendered the book and the site")
    return files


def sheet_parts(sheet: Sheet, slugs: list[str], pdf: bool = False, plots: Mapping[str, bytes] | None = None) -> dict[str, Any]:
    """What a build makes of one derived sheet, as plain data (a worker process hands it back): `files` (its md, tex, json
    and plots), `page` (its site page), `chapter` (renderers.book.chapter_input) and `entry` (renderers.site.index_entry).
    `slugs`: every sheet of the build, in order (the pages link the previous and next); `plots`: its figures' files, where
    drawn already (else drawn here)."""
    slug = sheet.blueprint.slug
    files: dict[str, str | bytes] = {path.name: text for path, text in api.out_files(sheet, Path("."), plots=PLOTS_DIR).items()}
    files.update(api.plot_files(sheet, PLOTS_DIR) if plots is None else plots)
    page = site.render_sheet(sheet, slugs, f"../{PLOTS_DIR}", _downloads(pdf))
    return {"slug": slug, "files": files, "page": {f"{SITE_DIR}/{site.page_name(slug)}": page},
            "chapter": book.chapter_input(sheet, PLOTS_DIR), "entry": site.index_entry(sheet)}


def _downloads(pdf: bool) -> site.Downloads:
    return site.Downloads("..", BOOK, pdf)


def _derive_and_render(slug: str, slugs: list[str], engine: str | None, pdf: bool, drawn: Path | None = None) -> tuple[dict[str, Any], float, dict[str, bytes]]:
    """`sheet_parts` of a sheet derived on its default context, the seconds it took, and the cache entries a build of it on
    the light path reads (what a build ships: derivations.engine.store.recording).

    A sheet a build with the same code made before (roofline.compiled.built: its compiled form, the files its figures were
    drawn in, on this machine or, by their data digests, in the folder `drawn`) is made on the light path, without sympy:
    the same files byte for byte, checked against the exact evaluation when that build made it. Any other is derived on
    the full path, checked now, and remembered for the next.
    """
    start = time.perf_counter()
    with store.recording() as read:
        light = compiled.built(slug, engine, drawn)
    if light is not None:
        return sheet_parts(light[0], slugs, pdf, light[1]), time.perf_counter() - start, dict(read)
    sheet = api.derive(slug, engine=engine)
    keys: dict[str, str] = {}
    plots = api.plot_files(sheet, PLOTS_DIR, keys)
    parts = sheet_parts(sheet, slugs, pdf, plots)
    compiled.remember_built(slug, engine, keys, {name: digest_of(data) or "" for name, data in plots.items()})
    seconds = time.perf_counter() - start
    with store.recording() as read:  # what the next build of it reads
        compiled.built(slug, engine)
    return parts, seconds, dict(read)


#: The cache entry holding each sheet's seconds in the last build: the next build starts the longest first (order only).
_SECONDS_KEY = ("build", "seconds per sheet")


def _longest_first(slugs: list[str]) -> list[str]:
    """`slugs` by the seconds each took in the last build, longest first (so the last to start are short and the
    workers finish together); the registry's order where the cache has no figure."""
    seconds = cache.load_json(cache.key(*_SECONDS_KEY), "build seconds")
    if not isinstance(seconds, dict):
        return list(slugs)
    known = {s: float(v) for s, v in seconds.items() if isinstance(v, float) and 0 <= v < 1e6}  # the cache's figures: a bad one is none
    return sorted(slugs, key=lambda s: -known.get(s, float("inf")))


def _derive_and_render_all(slugs: list[str], engine: str | None, pdf: bool, say: Progress, drawn: Path | None = None,
                           shipped: dict[str, bytes] | None = None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """`sheet_parts` of every sheet, derived on its default context, in `slugs`' order, and the API reference's pages.

    In worker processes forked from this one when there are several cores and the system forks (the solve cache's
    entries are written atomically, so workers share it safely), else here one after another. A failure raises the
    error of the first failed sheet in `slugs`' order, as a build one at a time would stop.
    """
    n = min(workers(), len(slugs))
    seconds: dict[str, float] = {}
    if n < 2 or "fork" not in multiprocessing.get_all_start_methods():
        parts = []
        for i, slug in enumerate(slugs, 1):
            part, seconds[slug], read = _derive_and_render(slug, slugs, engine, pdf, drawn)
            parts.append(part)
            if shipped is not None:
                shipped.update(read)
            say(f"[{i}/{len(slugs)}] derived and rendered {slug} (md, tex, json, plots, page)")
        cache.store_json(cache.key(*_SECONDS_KEY), seconds, "build seconds")
        return parts, api_reference()
    say(f"deriving and rendering {len(slugs)} sheets, {n} at a time")
    done: dict[str, dict[str, Any]] = {}
    failures: dict[str, BaseException] = {}
    with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork")) as pool:
        try:
            running = {pool.submit(_derive_and_render, slug, slugs, engine, pdf, drawn): slug for slug in _longest_first(slugs)}
            reference = pool.submit(api_reference)
            for future in as_completed(running):
                slug = running[future]
                try:
                    done[slug], seconds[slug], read = future.result()
                    if shipped is not None:
                        shipped.update(read)
                except Exception as err:  # re-raised below: the first failure in the registry's order
                    failures[slug] = err
                    say(f"[{len(done) + len(failures)}/{len(slugs)}] {slug}: failed")
                    continue
                say(f"[{len(done) + len(failures)}/{len(slugs)}] derived and rendered {slug} (md, tex, json, plots, page)")
            pages = reference.result()
        except BaseException:  # an interrupt (Ctrl-C): the sheets not yet started are dropped, not rendered first
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    if failures:
        raise failures[next(slug for slug in slugs if slug in failures)]
    cache.store_json(cache.key(*_SECONDS_KEY), seconds, "build seconds")
    return [done[slug] for slug in slugs], pages


def api_reference() -> dict[str, str]:
    """The Python API reference's pages, `site/api/...` (roofline.apidoc)."""
    return {f"{SITE_DIR}/{API_DIR}/{name}": page for name, page in apidoc.pages().items()}


def book_and_site(parts: list[dict[str, Any]], pdf: bool = False, reference: dict[str, str] | None = None) -> dict[str, str]:
    """`book.tex` (every sheet a chapter, by part: renderers/book.py), `site/<page>.html` (linking the PDFs when `pdf`) and
    the Python API reference `site/api/` (`reference`, or made here), from every sheet's `sheet_parts` in the registry's order."""
    first = parts[0]
    preamble = book.split_sheet(first["files"][f"{first['slug']}.tex"], first["slug"])[0]
    out: dict[str, str] = {f"{BOOK}.tex": book.bind([p["chapter"] for p in parts], preamble, [api.hardware(n) for n in hardware_names()],
                                                    [api.model(n) for n in model_names()], roofline.__version__, book_date())}
    out[f"{SITE_DIR}/{site.INDEX}"] = site.index_page([p["entry"] for p in parts], f"{API_DIR}/index.html", _downloads(pdf))
    for p in parts:
        out.update(p["page"])
    out.update(reference if reference is not None else api_reference())
    return out


def book_date() -> str:
    """The date on the book's title page: the day of `SOURCE_DATE_EPOCH` (UTC) when the environment sets it (the
    reproducible-builds convention, for a packager who stamps a build), else the version's `roofline.RELEASE_DATE`.

    Never the clock or a file's time, so two builds give the same book (`build --check`); not the last commit's date
    either, which a build from an sdist cannot see.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        if not epoch.isdigit():
            raise BuildError(f"SOURCE_DATE_EPOCH: expected whole seconds since 1970, found {epoch[:20]!r}")
        day = datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date()
    else:
        day = datetime.date.fromisoformat(roofline.RELEASE_DATE)
    return f"{day.day} {day:%B} {day.year}"


def output_names() -> set[str]:
    """Every file name a build may write (all formats, PDFs included)."""
    return {f"{d.slug}{suffix}" for d in api.DERIVATIONS for suffix in OUTPUT_SUFFIXES} | {f"{BOOK}.tex", f"{BOOK}.pdf"}


def stale(out: Path, files: dict[str, str | bytes]) -> list[str]:
    """Names of files in `out` that are missing or differ from a fresh build.

    A plot is compared by the digest of what it draws (renderers.plots.same_plot), not by its bytes,
    which another matplotlib version writes differently.
    """
    bad = []
    for name, text in sorted(files.items()):
        path = out / name
        try:
            if isinstance(text, bytes):
                old = path.read_bytes() if path.is_file() else None
                same = old is not None and (old == text or (name.startswith(f"{PLOTS_DIR}/") and same_plot(old, text)))
            else:
                same = path.is_file() and path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            bad.append(name)
    return bad


# --- the shipped cache entries ------------------------------------------------------------------------------------

#: Beside the shipped entries: the environment that made them (their keys hold it, so elsewhere they are never read).
SHIPPED_ENVIRONMENT = "environment.json"


def ships(out: Path, engine: str | None) -> bool:
    """Whether a build of `out` also writes the shipped cache entries (derivations.engine.store.SHIPPED): the checkout's own
    out/ folder, built with the default engine profile and the cache on (an installed package is never written)."""
    root = store.SHIPPED.parents[1]
    return (engine is None and store.directory() is not None and (root / "pyproject.toml").is_file()
            and out.resolve() == (root / "out").resolve())


def _environment() -> bytes:
    env = {"python": sys.version, "libraries": compiled.versions()}
    return (json.dumps(env, indent=1, sort_keys=True) + "\n").encode()


def shipped_files(entries: Mapping[str, bytes]) -> dict[str, bytes]:
    """The shipped folder's files: each entry a build of the shipped sheets reads, and the environment that made them."""
    return {**{f"{k}.json": data for k, data in sorted(entries.items())}, SHIPPED_ENVIRONMENT: _environment()}


def stale_shipped(entries: Mapping[str, bytes]) -> tuple[list[str], str]:
    """(what differs, a note): the shipped folder against what this build reads. Made in another environment (another
    Python or library version: every key differs), the entries are not compared, and the note says so."""
    folder = store.SHIPPED
    made = (folder / SHIPPED_ENVIRONMENT).read_bytes() if (folder / SHIPPED_ENVIRONMENT).is_file() else b""
    if made and made != _environment():
        return [], "the shipped cache entries were made with another Python or library version; not compared"
    want = shipped_files(entries)
    have = {p.name for p in folder.glob("*.json")} if folder.is_dir() else set()
    missing = sorted(n for n in want if n not in have and n != SHIPPED_ENVIRONMENT)
    differ = sorted(n for n in want if n in have and (folder / n).read_bytes() != want[n])
    extra = sorted(have - set(want))
    bad = [f"{shown_path(folder)} ({len(missing)} entries missing, {len(differ)} differ, {len(extra)} left over)"] if missing or differ or extra else []
    return bad, ""


def write_shipped(entries: Mapping[str, bytes]) -> None:
    """Replace the shipped folder's files by `shipped_files(entries)`: each written to a temporary file and renamed into
    place, then the files no longer read removed (each entry is checked on read, so a reader never sees half a file)."""
    folder = store.SHIPPED
    folder.mkdir(exist_ok=True)
    want = shipped_files(entries)
    for name, data in want.items():
        path = folder / name
        if path.is_file() and path.read_bytes() == data:
            continue
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    for path in folder.glob("*.json"):
        if path.name not in want:
            path.unlink()


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
        return re.fullmatch(rf"{page}|{API_DIR}/(?:roofline/)?[a-z0-9_]+\.html", rest) is not None
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


def safe_tex_env_overrides() -> dict[str, str]:
    """What pdflatex's environment sets on top of ours: no reading or writing outside the working folder, fixed dates."""
    return {"openin_any": "p", "openout_any": "p", "shell_escape": "f", "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}


def safe_tex_env() -> dict[str, str]:
    """pdflatex's environment: no reading or writing outside the working folder."""
    return {**os.environ, **safe_tex_env_overrides()}


def compile_pdf(tex: str, name: str, graphics: dict[str, bytes] | None = None) -> bytes:
    """Compile one LaTeX document to PDF bytes (two passes, for longtable widths); `graphics`: files it includes, by relative path."""
    return compile_pdf_with_log(tex, name, graphics)[0]


def compile_pdf_with_log(tex: str, name: str, graphics: dict[str, bytes] | None = None) -> tuple[bytes, str]:
    """The PDF bytes and pdflatex's log of the last pass (for layout checks: Overfull boxes)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        raise BuildError("pdflatex not found; install TeX Live (see README) or build without --pdf")
    with tempfile.TemporaryDirectory(prefix="roofline-tex-") as tmp:
        for rel, data in (graphics or {}).items():
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / rel).write_bytes(data)
        src = Path(tmp) / f"{name}.tex"
        src.write_text(tex, encoding="utf-8")
        for _ in range(2):
            run = subprocess.run(
                [exe, *PDFLATEX_ARGS, src.name],
                cwd=tmp, env=safe_tex_env(), capture_output=True, text=True, errors="replace",
                timeout=PDFLATEX_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
            )
            if run.returncode != 0:
                first_error = next((line for line in run.stdout.splitlines() if line.startswith("!")), "see the .log")
                raise BuildError(f"{name}.tex: pdflatex failed: {first_error}")
        log = (Path(tmp) / f"{name}.log").read_text(encoding="utf-8", errors="replace")
        return (Path(tmp) / f"{name}.pdf").read_bytes(), log


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


def workers() -> int:
    """How many pdflatex runs go at once: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _graphics(name: str, text: str, files: dict[str, str | bytes]) -> dict[str, bytes]:
    """The plot PDFs a `.tex` in `files` includes, by relative path (the book includes every sheet's)."""
    if name == f"{BOOK}.tex":
        return {n: data for n, data in files.items() if n in book.plot_names(text) and isinstance(data, bytes)}
    return {n: data for n, data in files.items()
            if n.startswith(f"{PLOTS_DIR}/{name[:-4]}-") and n.endswith(".pdf") and isinstance(data, bytes)}


_PDFLATEX_VERSION: dict[str, str] = {}


def _pdflatex_version() -> str:
    """`pdflatex --version`'s first line (part of a compiled PDF's cache key; "" when pdflatex is missing)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        return ""
    if exe not in _PDFLATEX_VERSION:
        try:
            run = subprocess.run([exe, "--version"], capture_output=True, text=True, errors="replace", timeout=30,
                                 stdin=subprocess.DEVNULL, check=False)
            _PDFLATEX_VERSION[exe] = f"{exe}|{run.stdout.splitlines()[0] if run.stdout else ''}"
        except (OSError, subprocess.SubprocessError):
            _PDFLATEX_VERSION[exe] = exe
    return _PDFLATEX_VERSION[exe]


def pdf_key(name: str, tex: str, graphics: dict[str, bytes]) -> str:
    """The cache key of a compiled PDF: the digests of the .tex and of every file it includes, the compiler and its flags."""
    parts = [name, hashlib.sha256(tex.encode()).hexdigest(), PDFLATEX_ARGS, sorted(safe_tex_env_overrides().items()), _pdflatex_version()]
    parts += [(rel, hashlib.sha256(data).hexdigest()) for rel, data in sorted(graphics.items())]
    return cache.key("pdf", *parts)


def compile_pdfs(files: dict[str, str | bytes], progress: Progress | None = None) -> dict[str, bytes]:
    """`<name>.pdf` for every `.tex` in `files`, compiled in parallel (pdflatex processes, one per core at once).

    A PDF whose .tex and included files are unchanged since a build that compiled it is read from the cache
    (derivations.engine.cache, keyed by their digests) instead of compiled again. The largest documents start first
    (the book), so the parallel runs end together. Any failure raises the BuildError of the first failed sheet in
    the order of `files` (the registry's).
    """
    say = progress or _silent
    jobs = sorted(((name, text) for name, text in files.items() if name.endswith(".tex") and isinstance(text, str)),
                  key=lambda job: -len(job[1]))
    out: dict[str, bytes] = {}
    todo = []
    for name, text in jobs:
        graphics = _graphics(name, text, files)
        k = pdf_key(name, text, graphics)
        hit = cache.load_bytes(k, "pdf")
        if hit is not None and hit.startswith(b"%PDF"):
            out[name[:-4] + ".pdf"] = hit
        else:
            todo.append((name, text, graphics, k))
    if len(out):
        say(f"{len(out)} of {len(jobs)} PDFs unchanged since they were compiled (from the cache)")
    if not todo:
        return out
    say(f"compiling {len(todo)} PDFs, {min(workers(), len(todo))} at a time")
    done = 0

    def one(job: tuple[str, str, dict[str, bytes], str]) -> tuple[str, bytes | BuildError]:
        name, text, graphics, _ = job
        try:
            return name, compile_pdf(text, name[:-4], graphics) if graphics else compile_pdf(text, name[:-4])
        except BuildError as err:
            return name, err

    failures: dict[str, BuildError] = {}
    with ThreadPoolExecutor(max_workers=min(workers(), len(todo))) as pool:
        running = {pool.submit(one, job): job[3] for job in todo}
        for future in as_completed(running):
            name, result = future.result()
            done += 1
            if isinstance(result, BuildError):
                failures[name] = result
                say(f"[{done}/{len(todo)}] {name}: failed")
                continue
            out[name[:-4] + ".pdf"] = result
            cache.store_bytes(running[future], result, "pdf")
            say(f"[{done}/{len(todo)}] compiled {name[:-4]}.pdf")
    if failures:  # the first in the order the sheets were rendered (the registry's), as a build one at a time would stop
        raise failures[next(name for name in files if name in failures)]
    return out


def build(out: str | os.PathLike[str], pdf: bool = False, engine: str | None = None, progress: Progress | None = None) -> list[str]:
    """Render every sheet (and PDF) in memory under the engine profile `engine` (None: the default), then swap the new folder
    in at `out`; `progress` is told what happens."""
    say = progress or _silent
    out = out_path(out)
    try:
        restored = recover_interrupted_swap(out)
    except OSError as err:
        raise BuildError(f"--out {shown_path(out)}: is missing and its old folder could not be put back ({err.strerror or err})") from None
    if restored is not None:
        warnings.warn(BuildWarning(f"--out {shown_path(out)}: was missing after an interrupted build; put back the old folder from {shown_path(restored)}"),
                      stacklevel=2)
    check_out(out)
    shipped: dict[str, bytes] | None = {} if ships(out, engine) else None
    files: dict[str, str | bytes] = dict(render_all(progress=progress, engine=engine, pdf=pdf, drawn=out if out.is_dir() else None, shipped=shipped))
    if pdf:
        files.update(compile_pdfs(files, progress))
    say(f"writing {len(files)} files")
    write_atomically(out, files)
    if shipped:
        write_shipped(shipped)
    return sorted(files)

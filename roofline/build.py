"""`roofline build`: every registered sheet on its default contexts, swapped in atomically, never losing a user's file.

Every sheet (and with `--pdf` every PDF: roofline.pdfs) is rendered in memory, then written into `--out` in one swap
(roofline.out_folder, whose docstring gives the steps and what a build may delete); the names of what a build writes,
its progress lines and its error are in roofline.build_outputs. A build of the checkout's own `out/` also writes the
shipped cache entries (`ships`). With `progress` (the CLI's, on a terminal) the build reports each sheet derived
and rendered and each PDF compiled, one line each.
"""

from __future__ import annotations

import datetime
import json
import multiprocessing
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import roofline

from . import api, apidoc, compiled, live, practice, quiz
from .build_outputs import API_DIR, BOOK, SITE_DIR, BuildError, Progress, silent
from .derivations.engine import cache, store
from .derivations.engine.run import Sheet
from .derivations.questions import registry
from .out_folder import BuildWarning, check_out, out_path, recover_interrupted_swap, write_atomically
from .pdfs import compile_pdfs, workers
from .renderers import book, site
from .renderers.plots import PLOTS_DIR, digest_of, same_plot
from .specs.catalog import hardware_names, model_names, shown_path
from .specs.measurements import profile as engine_profile


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
    say = progress or silent
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
    page = site.render_sheet(sheet, slugs, f"../{PLOTS_DIR}", _downloads(pdf), live.live_page(sheet))
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
    with store.recording() as read:  # its live page reads entries too (the special lines of the models a reader may pick)
        light = compiled.built(slug, engine, drawn)
        if light is not None:
            parts = sheet_parts(light[0], slugs, pdf, light[1])
    if light is not None:
        return parts, time.perf_counter() - start, dict(read)
    sheet = api.derive(slug, engine=engine, check=True)  # the build checks the compiled plan against sympy's exact evaluation
    keys: dict[str, str] = {}
    plots = api.plot_files(sheet, PLOTS_DIR, keys)
    parts = sheet_parts(sheet, slugs, pdf, plots)
    compiled.remember_built(slug, engine, keys, {name: digest_of(data) or "" for name, data in plots.items()})
    seconds = time.perf_counter() - start
    with store.recording() as read:  # what the next build of it reads
        light = compiled.built(slug, engine)
        if light is not None:
            live.live_data(light[0])
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
        return parts, extra_pages()
    say(f"deriving and rendering {len(slugs)} sheets, {n} at a time")
    done: dict[str, dict[str, Any]] = {}
    failures: dict[str, BaseException] = {}
    with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork")) as pool:
        try:
            running = {pool.submit(_derive_and_render, slug, slugs, engine, pdf, drawn): slug for slug in _longest_first(slugs)}
            reference = pool.submit(extra_pages)
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


def practice_pages(seed: int = quiz.DEFAULT_SEED) -> dict[str, str]:
    """The site's practice page (`site/practice.html`, the default question set graded in the browser), its script and the
    live sheets' scripts."""
    return {f"{SITE_DIR}/{practice.PAGE}": practice.render(quiz.draw(seed)), f"{SITE_DIR}/{practice.SCRIPT}": practice.script(),
            **{f"{SITE_DIR}/{name}": text for name, text in live.scripts().items()}}


def extra_pages() -> dict[str, str]:
    """The site's pages that no one sheet makes: the API reference and the practice page."""
    return {**api_reference(), **practice_pages()}


def book_and_site(parts: list[dict[str, Any]], pdf: bool = False, reference: dict[str, str] | None = None) -> dict[str, str]:
    """`book.tex` (every sheet a chapter, by part: renderers/book.py), `site/<page>.html` (linking the PDFs when `pdf`) and
    the Python API reference `site/api/` (`reference`, or made here), from every sheet's `sheet_parts` in the registry's order."""
    first = parts[0]
    preamble = book.split_sheet(first["files"][f"{first['slug']}.tex"], first["slug"])[0]
    out: dict[str, str] = {f"{BOOK}.tex": book.bind([p["chapter"] for p in parts], preamble, [api.hardware(n) for n in hardware_names()],
                                                    [api.model(n) for n in model_names()], roofline.__version__, book_date())}
    out[f"{SITE_DIR}/{site.INDEX}"] = site.index_page([p["entry"] for p in parts], f"{API_DIR}/index.html", _downloads(pdf), practice.PAGE)
    for p in parts:
        out.update(p["page"])
    out.update(reference if reference is not None else extra_pages())
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


def drawn_folder(out: Path) -> Path | None:
    """Where a build takes the figures a build with the same code drew (by their data digests): the folder it writes, else
    the checkout's own out/ (a build into a new folder of a fresh clone), else nowhere."""
    if out.is_dir():
        return out
    committed = store.SHIPPED.parents[1] / "out"
    return committed if (committed.parent / "pyproject.toml").is_file() and committed.is_dir() else None


def ships(out: Path, engine: str | None) -> bool:
    """Whether a build of `out` also writes the shipped cache entries (derivations.engine.store.SHIPPED): the checkout's own
    out/ folder, built with the default engine profile and the cache on (an installed package is never written)."""
    root = store.SHIPPED.parents[1]
    return (engine is None and store.directory() is not None and (root / "pyproject.toml").is_file()
            and out.resolve() == (root / "out").resolve())


def shipped_environment() -> bytes:
    """The Python and library versions the shipped entries are made with (every key holds them), as the file beside them."""
    env = {"python": sys.version, "libraries": compiled.versions()}
    return (json.dumps(env, indent=1, sort_keys=True) + "\n").encode()


def shipped_files(entries: Mapping[str, bytes]) -> dict[str, bytes]:
    """The shipped folder's files: each entry a build of the shipped sheets reads, and the environment that made them."""
    return {**{f"{k}.json": data for k, data in sorted(entries.items())}, SHIPPED_ENVIRONMENT: shipped_environment()}


def stale_shipped(entries: Mapping[str, bytes]) -> tuple[list[str], str]:
    """(what differs, a note): the shipped folder against what this build reads. Made in another environment (another
    Python or library version: every key differs), the entries are not compared, and the note says so."""
    folder = store.SHIPPED
    made = (folder / SHIPPED_ENVIRONMENT).read_bytes() if (folder / SHIPPED_ENVIRONMENT).is_file() else b""
    if made and made != shipped_environment():
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


def build(out: str | os.PathLike[str], pdf: bool = False, engine: str | None = None, progress: Progress | None = None) -> list[str]:
    """Render every sheet (and PDF) in memory under the engine profile `engine` (None: the default), then swap the new folder
    in at `out`; `progress` is told what happens."""
    say = progress or silent
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
    files: dict[str, str | bytes] = dict(render_all(progress=progress, engine=engine, pdf=pdf, drawn=drawn_folder(out), shipped=shipped))
    if pdf:
        files.update(compile_pdfs(files, progress))
    say(f"writing {len(files)} files")
    write_atomically(out, files)
    if shipped:
        write_shipped(shipped)
    return sorted(files)

"""The PDFs of `roofline build --pdf`: each `.tex` compiled by pdflatex, several at once, or read from the cache.

PDFs are compiled with `pdflatex -no-shell-escape -halt-on-error` and
`openin_any=p`/`openout_any=p`, several at once (`compile_pdfs`: one pdflatex
per core, the book first); a PDF whose .tex and included figures are
unchanged is read from the cache (keyed by their digests) instead. A failure
is a BuildError (roofline.build_outputs) naming the `.tex`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from .build_outputs import BOOK, BuildError, Progress, silent
from .derivations.engine import cache
from .renderers import book
from .renderers.plots import PLOTS_DIR

PDFLATEX_ARGS = ("-no-shell-escape", "-halt-on-error", "-interaction=nonstopmode")
PDFLATEX_TIMEOUT_S = 120
#: pdflatex runs per document: a second pass reads the contents and the labels the first wrote; where a reference's text
#: moved a page break in it, LaTeX asks for another ("Rerun to get cross-references right"), as latexmk would do
MIN_PASSES, MAX_PASSES = 2, 4


def safe_tex_env_overrides() -> dict[str, str]:
    """What pdflatex's environment sets on top of ours: no reading or writing outside the working folder, fixed dates."""
    return {"openin_any": "p", "openout_any": "p", "shell_escape": "f", "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}


def safe_tex_env() -> dict[str, str]:
    """pdflatex's environment: no reading or writing outside the working folder."""
    return {**os.environ, **safe_tex_env_overrides()}


def compile_pdf(tex: str, name: str, graphics: dict[str, bytes] | None = None) -> bytes:
    """Compile one LaTeX document to PDF bytes (two passes for longtable widths and the contents, more while LaTeX asks for a
    rerun); `graphics`: files it includes, by relative path."""
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
        for n in range(MAX_PASSES):
            run = subprocess.run(
                [exe, *PDFLATEX_ARGS, src.name],
                cwd=tmp, env=safe_tex_env(), capture_output=True, text=True, errors="replace",
                timeout=PDFLATEX_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
            )
            if run.returncode != 0:
                first_error = next((line for line in run.stdout.splitlines() if line.startswith("!")), "see the .log")
                raise BuildError(f"{name}.tex: pdflatex failed: {first_error}")
            log = (Path(tmp) / f"{name}.log").read_text(encoding="utf-8", errors="replace")
            if n + 1 >= MIN_PASSES and "Rerun to get cross-references right" not in log:
                break
        return (Path(tmp) / f"{name}.pdf").read_bytes(), log


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
    say = progress or silent
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

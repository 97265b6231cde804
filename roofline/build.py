"""`roofline build`: every registered sheet on its default contexts, written atomically.

All files are rendered in memory first; only when every sheet succeeded are
they written, each through a temporary file and `os.replace`, so a failed
build leaves the previous `out/` as it was. PDFs are compiled with
`pdflatex -no-shell-escape -halt-on-error` and `openin_any=p`/`openout_any=p`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from roofline import api
from units import RooflineError

PDFLATEX_ARGS = ("-no-shell-escape", "-halt-on-error", "-interaction=nonstopmode")
PDFLATEX_TIMEOUT_S = 120


class BuildError(RooflineError):
    """A sheet failed to render or a PDF failed to compile."""


def render_all() -> dict[str, str]:
    """File name -> text for every registered sheet and format."""
    files: dict[str, str] = {}
    for d in api.DERIVATIONS:
        sheet = api.derive(d.slug)
        for path, text in api.out_files(sheet, Path(".")).items():
            files[path.name] = text
    return files


def stale(out: Path, files: dict[str, str]) -> list[str]:
    """Names of files in `out` that are missing or differ from a fresh build."""
    bad = []
    for name, text in sorted(files.items()):
        path = out / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            bad.append(name)
    return bad


def write_atomically(out: Path, files: dict[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, text in sorted(files.items()):
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, out / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def safe_tex_env() -> dict[str, str]:
    """pdflatex's environment: no reading or writing outside the working folder."""
    env = dict(os.environ)
    env.update({"openin_any": "p", "openout_any": "p", "shell_escape": "f", "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"})
    return env


def compile_pdf(tex: str, name: str) -> bytes:
    """Compile one LaTeX document to PDF bytes (two passes, for longtable widths)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        raise BuildError("pdflatex not found; install TeX Live (see README) or build without --pdf")
    with tempfile.TemporaryDirectory(prefix="roofline-tex-") as tmp:
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
        return (Path(tmp) / f"{name}.pdf").read_bytes()


def build(out: Path, pdf: bool = False) -> list[str]:
    files = render_all()
    pdfs = {}
    if pdf:
        for name, text in files.items():
            if name.endswith(".tex"):
                pdfs[name[:-4] + ".pdf"] = compile_pdf(text, name[:-4])
    write_atomically(out, files)
    for name, data in sorted(pdfs.items()):
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, out / name)
    return sorted([*files, *pdfs])

"""What `roofline build` puts out: the names of the files and folders it writes in `--out`, its progress lines and its
one-line error.

roofline.build renders the files, roofline.pdfs compiles the PDFs, roofline.out_folder swaps them in at `--out`.
"""

from __future__ import annotations

from collections.abc import Callable

from . import api
from .renderers.plots import PLOTS_DIR
from .units import RooflineError

OUTPUT_SUFFIXES = (".md", ".tex", ".json", ".pdf")
#: The book of every sheet: `book.tex` (`book.pdf` with --pdf); the HTML site's folder.
BOOK = "book"
SITE_DIR = "site"
#: The Python API reference, inside the site (generated from the docstrings by pdoc).
API_DIR = "api"
#: The practice page's script (roofline/practice.py) and the live sheets' two (roofline/live.py): the site's only scripts.
SITE_SCRIPT = "practice.js"
LIVE_SCRIPTS = ("plan.js", "figure.js", "texmath.js", "live.js")
SITE_SCRIPTS = (SITE_SCRIPT, *LIVE_SCRIPTS)
#: Sub-folders of --out that a build writes as a whole.
OUTPUT_FOLDERS = (PLOTS_DIR, SITE_DIR, f"{SITE_DIR}/{API_DIR}", f"{SITE_DIR}/{API_DIR}/roofline")


#: A progress report: one line of what the build is doing (roofline.cli prints it on stderr when that is a terminal).
Progress = Callable[[str], None]


def silent(_line: str) -> None:
    pass


class BuildError(RooflineError):
    """The output folder cannot be written, a sheet failed to render or a PDF failed to compile."""


def output_names() -> set[str]:
    """Every file name a build may write (all formats, PDFs included)."""
    return {f"{d.slug}{suffix}" for d in api.DERIVATIONS for suffix in OUTPUT_SUFFIXES} | {f"{BOOK}.tex", f"{BOOK}.pdf"}

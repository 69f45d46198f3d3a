"""The referee report: ``python -m proofs_check --report DIR`` writes DIR/index.html and
DIR/REPORT.md (the same content) and copies the figures they show into DIR/figures/.

The folder is checked before any claim runs (``check_report_dir``): it must be new, empty, or
hold a previous report and nothing else (REPORT.md starting with the Markdown marker, index.html
carrying the generator tag, figures/ holding only PNG and Markdown files), so a report never
mixes with someone's files.  Writing renders both pages first, then replaces each file
atomically (``theory.files``): figures, REPORT.md, index.html; figures a previous report had and
this one does not show are removed last.  ``build`` makes the document, ``markdown`` and
``html`` render it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from theory.files import OutputError, atomic_write_bytes, atomic_write_text, check_output_dir
from theory.inputs import read_bytes

from . import html, markdown
from .build import TITLE, build_document
from .doc import FIGURES_OUTPUT, REPORT_FIGURES, Figure, Link, nodes

ROOT = Path(__file__).resolve().parents[2]
REPORT_MD, INDEX_HTML = "REPORT.md", "index.html"
FIGURE_SUFFIXES = (".png", ".md")
_TEMP = re.compile(r"^\.(REPORT\.md|index\.html|[\w.-]+\.(?:png|md))\..+\.tmp$")  # theory.files' temporaries


def _previous_report_file(path: Path, name: str) -> bool:
    if not path.is_file() or path.is_symlink():
        return False
    head = read_bytes(path, "report", limit=1 << 26)[:4096].decode("utf-8", "replace")
    return head.startswith(markdown.MARKER) if name == REPORT_MD else html.GENERATOR in head


def check_report_dir(path) -> Path:
    """``path`` as a Path if a report may be written there; OutputError (one line) otherwise."""
    out = check_output_dir(path, "--report")
    if not out.is_dir():
        return out
    for entry in sorted(os.listdir(out)):
        where = out / entry
        if entry in (REPORT_MD, INDEX_HTML):
            ok = _previous_report_file(where, entry)
        elif entry == REPORT_FIGURES:
            ok = where.is_dir() and not where.is_symlink() and all(
                stat.S_ISREG(os.lstat(where / f).st_mode) and (f.endswith(FIGURE_SUFFIXES) or _TEMP.match(f))
                for f in os.listdir(where))
        else:
            ok = bool(_TEMP.match(entry))
        if not ok:
            raise OutputError(f"--report: {out} holds {entry}, which is not part of a previous report; "
                              "give a new or empty folder, or one holding only a previous report")
    return out


def assets(sections) -> list[str]:
    """The repository-relative figure files the document shows or links, in order of first use."""
    found = []
    for item in (node for section in sections for node in nodes(section)):
        if isinstance(item, Figure):
            found.append(item.path)
        elif isinstance(item, Link) and item.target.startswith(FIGURES_OUTPUT + "/"):
            found.append(item.target)
    return list(dict.fromkeys(found))


def write_report(out, sections, root: Path = ROOT, title: str = TITLE) -> list[Path]:
    """Render ``sections`` and write them with their figures into ``out``; the files written."""
    out, root = Path(out), Path(root)
    pages = {REPORT_MD: markdown.render(sections, title), INDEX_HTML: html.render(sections, title)}
    figures = {Path(path).name: read_bytes(root / path, "figure") for path in assets(sections)}
    written = []
    for name, data in figures.items():
        atomic_write_bytes(out / REPORT_FIGURES / name, data)
        written.append(out / REPORT_FIGURES / name)
    for name, text in pages.items():
        atomic_write_text(out / name, text)
        written.append(out / name)
    folder = out / REPORT_FIGURES
    for stale in sorted(set(os.listdir(folder)) - set(figures)) if folder.is_dir() else ():
        if stale.endswith(FIGURE_SUFFIXES):  # a figure only the previous report showed
            (folder / stale).unlink()
    return written


def study_sections():
    """(STUDY_SECTIONS, prior_art) from ``studies``; ([], None) while that module does not provide them."""
    from . import studies

    return list(getattr(studies, "STUDY_SECTIONS", [])), getattr(studies, "prior_art", None)


def generate(out, results: list[dict], *, root: Path = ROOT, partial: bool = False, command: str,
             studies=None, prior_art=None) -> list[Path]:
    """Build the report of ``results`` (with the study sections and prior art of ``studies``
    unless given) and write it into ``out``."""
    if studies is None:
        studies, found_prior = study_sections()
        prior_art = found_prior if prior_art is None else prior_art
    sections = build_document(results, root, studies, prior_art, partial=partial, command=command)
    return write_report(out, sections, root)

"""The referee report: ``python -m proofs_check --report DIR`` writes DIR/index.html and
DIR/REPORT.md (the same content) and copies the figures they show into DIR/figures/.

The folder is checked before any claim runs (``check_report_dir``) and locked from then until
the report is written (``report_dir_lock``, which the command holds): it must be new, empty, or
hold a previous report, recognised by the manifest every report writes, and nothing else, so a
report never mixes with someone's files, and only files a previous report listed are ever
removed.  Writing renders both pages first, then replaces each file atomically through
directory descriptors, so a ``figures`` swapped for a symbolic link is refused, never followed
(``folder`` says how).  ``build`` makes the document, ``markdown`` and ``html`` render it.
"""

from __future__ import annotations

from pathlib import Path

from theory.io.inputs import read_bytes

from . import html, markdown
from .build import TITLE, build_document
from .doc import FIGURES_OUTPUT, REPORT_FIGURES, Figure, Link, nodes
from .folder import FIGURE_SUFFIXES, INDEX_HTML, MANIFEST, REPORT_MD, TEMP, check_report_dir, report_dir_lock  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


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
    """Render ``sections`` and write them with their figures into ``out`` (checked and locked
    here unless this process holds its lock already); the files written."""
    out, root = Path(out), Path(root)
    pages = {REPORT_MD: markdown.render(sections, title), INDEX_HTML: html.render(sections, title)}
    figures = {Path(path).name: read_bytes(root / path, "figure") for path in assets(sections)}
    with report_dir_lock(out) as folder:
        folder.write({name: text.encode("utf-8") for name, text in pages.items()}, figures)
    return [out / REPORT_FIGURES / name for name in figures] + [out / name for name in pages]


def study_sections():
    """(STUDY_SECTIONS, prior_art) from ``studies``; ([], None) while that module does not provide them."""
    from . import studies

    return list(getattr(studies, "STUDY_SECTIONS", [])), getattr(studies, "prior_art", None)


def generate(
    out,
    results: list[dict],
    *,
    root: Path = ROOT,
    partial: bool = False,
    command: str,
    studies=None,
    prior_art=None,
) -> list[Path]:
    """Build the report of ``results`` (with the study sections and prior art of ``studies``
    unless given) and write it into ``out``."""
    if studies is None:
        studies, found_prior = study_sections()
        prior_art = found_prior if prior_art is None else prior_art
    sections = build_document(results, root, studies, prior_art, partial=partial, command=command)
    return write_report(out, sections, root)

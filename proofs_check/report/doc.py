"""The report's document model: what a section says, before it is Markdown or HTML.

Every number a reader sees in the report's prose is a ``Num``: its text is formatted at
generation time from a results file, and it carries that file (repository-relative), so both
renderers can name the source of every number.  Plain ``str`` parts hold words only:
``check_words`` refuses a digit in them, except inside the identifiers a reader types or looks
up (claim ids such as C7-index-sup, paper places such as Section 3.6, Lemma F.1 or Table 3,
citations) which go in ``Ref``.  So a number typed by hand into a template fails at generation,
not in review.

Inline parts besides words: ``Num``, ``Ref``, ``Link`` and ``Strong`` (emphasised words, such as
a verdict).  Blocks: ``Para`` (inline parts), ``Bullets`` (a list of Para), ``Box`` (a few
blocks under an anchor id), ``Table`` (header and rows of inline parts), ``Figure`` (a repository-relative image and its caption), ``Code`` (a command
a reader can run, verbatim), ``Quote`` (words quoted verbatim from a named file, such as a claim's
statement in the registry) and ``Data`` (exact values verbatim, such as a certified
counterexample, with the file that produced them).  A ``Section`` has an anchor id, a title,
blocks and subsections.

A source is a repository-relative path: a results file, or for values computed when the report
is generated (a check's evidence, the verdict counts) the module or package that computes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Num",
    "Ref",
    "Link",
    "Strong",
    "Said",
    "Para",
    "Bullets",
    "Table",
    "Box",
    "Figure",
    "Code",
    "Quote",
    "Data",
    "Section",
    "num",
    "check_words",
    "HandTypedNumber",
    "local_target",
    "FIGURES_OUTPUT",
    "REPORT_FIGURES",
]

FIGURES_OUTPUT = "figures/output"  # where python -m figures draws (repository-relative)
REPORT_FIGURES = "figures"  # where the report's copies go, relative to the report folder


class HandTypedNumber(ValueError):
    """A digit in the report's words: it must come from a results file (``Num``) or be an id (``Ref``)."""


@dataclass(frozen=True)
class Num:
    text: str  # as the reader sees it, e.g. "0.984" or "63/64"
    source: str  # the results file it was read from, relative to the repository root


@dataclass(frozen=True)
class Ref:
    text: str  # an identifier with digits: a claim id, "Section 3.6", "arXiv 2501.19399", a command
    anchor: str | None = None  # an anchor id inside the report to link to, if any


@dataclass(frozen=True)
class Link:
    text: str
    target: str  # an anchor "#id" inside the report, or an external address


@dataclass(frozen=True)
class Strong:
    text: str  # emphasised words (no digits), e.g. a verdict

    def __post_init__(self):
        check_words(self.text, "emphasis")


@dataclass(frozen=True)
class Said:
    """Words quoted verbatim inside a sentence (digits allowed: they are the quoted text's), such as
    the paper's words in the findings table or a corrected statement; ``source`` names where they
    are quoted from (the paper's text file, or the module registering a statement)."""

    text: str
    source: str


Inline = str | Num | Ref | Link | Strong | Said

DIGIT = re.compile(r"\d")


def check_words(text: str, where: str = "report") -> str:
    """``text`` unchanged if it has no digit; HandTypedNumber otherwise."""
    if DIGIT.search(text):
        raise HandTypedNumber(
            f"{where}: the words {text!r} hold a digit; format it from a results file (Num) "
            "or mark an identifier (Ref)"
        )
    return text


def num(value, spec: str, source, root: Path | None = None) -> Num:
    """``Num(format(value, spec), source)``; ``source`` is made relative to ``root`` where given."""
    path = Path(source)
    if root is not None and path.is_absolute():
        try:
            path = path.relative_to(root)
        except ValueError:
            pass
    return Num(format(value, spec), path.as_posix())


@dataclass
class Para:
    parts: list  # of Inline

    def __post_init__(self):
        for part in self.parts:
            if isinstance(part, str):
                check_words(part)
            elif not isinstance(part, (Num, Ref, Link, Strong, Said)):
                raise TypeError(
                    f"a paragraph holds str, Num, Ref, Link, Strong or Said, not {type(part).__name__}"
                )

    def sources(self) -> list[str]:
        """The distinct results files of this paragraph's numbers, in order of first use."""
        return sources_in(self.parts)


@dataclass
class Bullets:
    items: list  # of Para


@dataclass
class Table:
    header: list  # of str (words only)
    rows: list  # of lists of Para
    kind: str = ""  # a name the renderers style it by (HTML class), e.g. "findings"; empty otherwise

    def __post_init__(self):
        for cell in self.header:
            check_words(cell, "table header")


@dataclass
class Box:
    """A few blocks (Para, Bullets) kept together under an anchor id, such as the report's three
    answers at the top: HTML renders a ``div`` with that id, Markdown an ``<a id>`` before them."""

    anchor: str
    blocks: list  # of Para and Bullets


@dataclass
class Figure:
    path: str  # repository-relative image (PNG), copied beside the report
    caption: Para
    anchor: str | None = (
        None  # an anchor id, so later mentions can link to the figure instead of repeating it
    )


@dataclass
class Code:
    text: str  # a command, verbatim (digits allowed: it is what the reader types)


@dataclass
class Quote:
    text: str  # words quoted verbatim (digits allowed: they are the quoted file's, named beside them)
    source: str  # the file they are quoted from, repository-relative


@dataclass
class Data:
    text: str  # exact values, verbatim (JSON as the check wrote them; no number reformatted)
    source: str  # the file or module that produced them, repository-relative


def local_target(path: str) -> str:
    """Where a repository-relative figure file lies in the report folder (figures/output/x.png ->
    figures/x.png); any other target unchanged."""
    prefix = FIGURES_OUTPUT + "/"
    return REPORT_FIGURES + "/" + path[len(prefix) :] if path.startswith(prefix) else path


@dataclass
class Section:
    anchor: str
    title: str  # may name a paper place such as "Section 3.6" (titles are not checked for digits)
    blocks: list = field(default_factory=list)
    subsections: list = field(default_factory=list)
    kind: str = ""  # "claim" for a claim's entry (the renderers style it); empty otherwise


def parts_of(cell) -> list:
    """A paragraph's parts; a table cell may also be a bare part or a list of parts."""
    if isinstance(cell, Para):
        return cell.parts
    return list(cell) if isinstance(cell, (list, tuple)) else [cell]


def sources_in(parts) -> list[str]:
    """The distinct results files of ``parts``' numbers, in order of first use."""
    return list(dict.fromkeys(p.source for p in parts if isinstance(p, Num)))


def nodes(item):
    """Every node of a document tree (sections, blocks, paragraphs, inline parts), depth first."""
    yield item
    if isinstance(item, Section):
        children = item.blocks + item.subsections
    elif isinstance(item, Para):
        children = item.parts
    elif isinstance(item, Bullets):
        children = item.items
    elif isinstance(item, Box):
        children = item.blocks
    elif isinstance(item, Table):
        children = [part for row in item.rows for cell in row for part in parts_of(cell)]
    elif isinstance(item, Figure):
        children = [item.caption]
    else:
        children = []
    for child in children:
        yield from nodes(child)

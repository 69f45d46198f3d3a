"""Where a claim sits in the paper: its places (Theorem 3.2, Table 3, Appendix F.2.1), their
pages, and the part of the paper (Section 3.5, Appendix F) the report files the claim under.

The paper's text is not in the repository, so the lookup is a committed table,
``paper_pages.json``, generated from the text by this module and never typed by hand:

    python -m proofs_check.report.paper_places PAPER.txt      # rewrites paper_pages.json

The text (``pdftotext -layout``) has one form feed per page, so a place's page is one plus the
form feeds before it.  A place is located where the paper defines it: a theorem, lemma, remark or
definition where its statement starts a line; a table or figure at its caption ("Table 3:"); a
section or appendix at its heading line.  The part of a place is the last heading before it: a
numbered section of the main text (3.5; the top level where it has no subsections) or an
appendix (F).  ``tests/test_report.py`` regenerates the table from the paper when the text is
available and compares it with the committed one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from theory.io.files import atomic_write_json
from theory.io.inputs import load_json

PAGES_FILE = Path(__file__).with_name("paper_pages.json")
QUOTES_FILE = Path(__file__).with_name("paper_quotes.json")  # {quote: page} of findings.PAPER's quotes
PAGES_SOURCE = "proofs_check/report/paper_pages.json"  # repository-relative, for the report's sources
QUOTES_SOURCE = "proofs_check/report/paper_quotes.json"
PAPER_NAME = "paper-2605.31558.txt"

KEYWORDS = ("Theorem", "Lemma", "Remark", "Definition", "Table", "Figure", "Section", "Appendix")
_LABEL = r"(?:[A-I](?:\.\d+)*|\d+(?:\.\d+)*)[A-D]?\b"
_PLACE = re.compile(rf"\b({'|'.join(KEYWORDS)})s?\s+({_LABEL}(?:(?:\s*,\s*|\s+and\s+){_LABEL})*)")
# places a source names that are not in this paper (the predecessor's theorem), kept out on purpose
NOT_IN_PAPER = {"Theorem 4": "Theorem 4 of the predecessor, Urrutia et al. 2025 (arXiv 2511.11579)"}
BEYOND = "beyond"  # the part of a claim that names no place of the paper

# a heading line: a label, then a title of words separated by single spaces (figure panel labels
# such as "C    Number Task     D    Letter Task" have wide gaps and do not match)
_HEADING = re.compile(
    r"^[\f ]*(\d+(?:\.\d+)*|[A-I](?:\.\d+)*)\s+([A-Z][a-z][A-Za-z,'’-]*(?: [A-Za-z0-9,.'’-]+)*)\s*$",
    re.MULTILINE,
)

SHAPE = {
    "places": {"*": {"page": int, "part": str}},
    "parts": {"*": {"title": str, "page": int, "order": int}},
}


def places_in(source: str) -> list[str]:
    """The paper places a registry source names, in order, as "Kind label" without a panel
    letter: "Theorem 3.2; Appendix F.2.1" -> ["Theorem 3.2", "Appendix F.2.1"]; "Figures 1,
    3A-3D" -> ["Figure 1", "Figure 3"]; "Section 3.1-3.3" -> ["Section 3.1"] (a range: its start)."""
    found = []
    for keyword, labels in _PLACE.findall(source):
        for label in re.findall(_LABEL, labels):
            label = label[:-1] if re.search(r"\d[A-D]$", label) else label
            place = f"{keyword} {label}"
            if place not in found and place not in NOT_IN_PAPER:
                found.append(place)
    return found


def _numbers(label: str) -> tuple:
    """ "3.5" -> (3, 5); "F.2.1" -> (6, 2, 1): letters count from A = 1."""
    return tuple(ord(part) - ord("A") + 1 if part.isalpha() else int(part) for part in label.split("."))


def _next_labels(numbers: tuple) -> set:
    """The labels that may follow ``numbers``: its first subsection, or the next at any level."""
    return {numbers + (1,)} | {numbers[:k] + (numbers[k] + 1,) for k in range(len(numbers))}


def headings(text: str) -> list[tuple[int, str, str]]:
    """(offset, label, title) of every section and appendix heading, in order.  A candidate line
    counts only where its label continues the numbering (after 3.1 comes 3.2, 3.1.1 or 4; after A
    comes A.1 or B), which keeps out plot ticks such as "1.0 Layer 5" and page numbers."""
    found, last = [], {"main": (0,), "appendix": (0,)}
    for match in _HEADING.finditer(text):
        label = match.group(1)
        series = "appendix" if label[0].isalpha() else "main"
        numbers = _numbers(label)
        if numbers in _next_labels(last[series]) or (last[series] == (0,) and numbers == (1,)):
            found.append((match.start(1), label, match.group(2).strip()))
            last[series] = numbers
    return found


def is_part(label: str) -> bool:
    """Parts are the main text's sections to one decimal (3.5) and the appendices' letters (F)."""
    return label.isalpha() or (label[0].isdigit() and label.count(".") <= 1)


def locate(text: str, place: str) -> int | None:
    """The offset where the paper defines ``place``, or None."""
    keyword, label = place.split(" ", 1)
    escaped = re.escape(label)
    if keyword in ("Section", "Appendix"):
        return next((offset for offset, found, _ in headings(text) if found == label), None)
    if keyword in ("Table", "Figure"):
        match = re.search(rf"\b{keyword} {escaped}:", text)
    else:
        match = re.search(rf"^[\f ]*{keyword} {escaped}\s*[.(]", text, re.MULTILINE)
    return None if match is None else match.end() - 1


def page_at(text: str, offset: int) -> int:
    return text.count("\f", 0, offset) + 1


def build_table(text: str, places) -> dict:
    """{"places": {place: {page, part}}, "parts": {part: {title, page, order}}} for every place
    found in ``text`` (a place not found is left out; ``missing_places`` names them)."""
    parts = [(offset, label, title) for offset, label, title in headings(text) if is_part(label)]
    # a main-text section with subsections (3 Results) is not a part of its own
    parts = [h for h in parts if not any(o[1].startswith(h[1] + ".") for o in parts)]
    table = {"places": {}, "parts": {}}
    for place in sorted(set(places)):
        offset = locate(text, place)
        if offset is None:
            continue
        before = [h for h in parts if h[0] <= offset]
        if not before:
            continue
        offset_part, label, title = before[-1]
        table["places"][place] = {"page": page_at(text, offset), "part": label}
        table["parts"][label] = {
            "title": title,
            "page": page_at(text, offset_part),
            "order": [h[1] for h in parts].index(label),
        }
    return table


_HYPHENATED = re.compile(r"(\w)-[ \t]*\n\s*(?=[a-z])")


def normalise(text: str) -> str:
    """The paper's words as a quote gives them: a word hyphenated at a line end joined, every run of
    white space (line breaks, the layout's padding) one space."""
    return re.sub(r"\s+", " ", _HYPHENATED.sub(r"\1", text)).strip()


def quote_pages(text: str, quotes) -> dict:
    """{quote: page} for every quote found verbatim (``normalise``d) in ``text``; a quote not found
    is left out (``main`` refuses to write the table then)."""
    pages = [normalise(page) for page in text.split("\f")]
    found = {}
    for quote in quotes:
        wanted = normalise(quote)
        hit = next((i for i, page in enumerate(pages) if wanted in page), None)
        if hit is None:  # across a page break: the page where it starts
            joined, starts = "", []
            for page in pages:
                starts.append(len(joined))
                joined += page + " "
            at = joined.find(wanted)
            hit = None if at < 0 else max(i for i, s in enumerate(starts) if s <= at)
        if hit is not None:
            found[quote] = hit + 1
    return found


def finding_quotes() -> list[str]:
    """The paper's words the findings table quotes (``findings.PAPER``)."""
    from .findings_rows import PAPER

    return sorted({f.quote for f in PAPER.values()})


def load_quotes(path: Path = QUOTES_FILE) -> dict:
    return load_json(path, {"*": int})


def registry_places() -> list[str]:
    """Every place any registered claim's source names."""
    from proofs_check import claims  # noqa: F401  (registers the checks)
    from proofs_check.registry import REGISTRY

    return sorted({place for claim in REGISTRY.values() for place in places_in(claim.source)})


def missing_places(table: dict, places) -> list[str]:
    return sorted(set(places) - set(table["places"]))


def load_table(path: Path = PAGES_FILE) -> dict:
    return load_json(path, SHAPE)


def main(argv=None) -> int:
    from theory.io.cli import UsageError
    from theory.io.inputs import read_text

    argv = sys.argv[1:] if argv is None else argv
    prog = "python -m proofs_check.report.paper_places"
    try:
        if len(argv) != 1:
            raise UsageError(
                f"give the paper's text file ({PAPER_NAME}) as the one argument, got {len(argv)}"
            )
        text = read_text(argv[0], "paper text")
        table = build_table(text, registry_places())
        missing = missing_places(table, registry_places())
        if missing:
            raise UsageError(f"{argv[0]}: places not found in the text: {', '.join(missing)}")
        quotes = quote_pages(text, finding_quotes())
        misquoted = sorted(set(finding_quotes()) - set(quotes))
        if misquoted:
            raise UsageError(f"{argv[0]}: quotes not found in the text: {'; '.join(misquoted)}")
    except UsageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    atomic_write_json(PAGES_FILE, table, indent=1, sort_keys=True, trailing_newline=True)
    atomic_write_json(QUOTES_FILE, quotes, indent=1, sort_keys=True, trailing_newline=True)
    print(f"wrote {PAGES_SOURCE}: {len(table['places'])} places in {len(table['parts'])} parts")
    print(f"wrote {QUOTES_SOURCE}: {len(quotes)} quotes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

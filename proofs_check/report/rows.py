"""What every part of the report says of a claim's row: its words as a reader reads them
(``prose``: no tracker numbers, no Python values), the file its check lives in, the results its
evidence names, the claim holding its corrected statement, and the part of the paper it goes under.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..registry import REGISTRY
from ..verdicts import UP_TO_ROUNDING
from .doc import Ref
from .paper_places import BEYOND, PAPER_NAME, places_in

PAPER_TEXT = PAPER_NAME  # the paper's text (arXiv 2605.31558), which the findings quote

RUN_SOURCE = "proofs_check/claims"  # the checks: verdicts and counts are theirs, run at generation time

FLOATS = ("Table", "Figure")

FAILED = ("false", "not reproduced", UP_TO_ROUNDING)

OWN_HYPOTHESIS = "not a claim of the paper"  # how the registry's sources mark the package's own hypotheses

_PATH = re.compile(r"(?:training|constructions|proofs_check|figures)/[\w./-]*\w")


_ISSUE_WRAPPED = re.compile(r"issue \d+(?: [A-Z])? \(((?:[^()]|\([^()]*\))*)\)")

_LITERALS = [
    (re.compile(r"\{(\d+): None(?:, \d+: None)*\}"), "no answer at any hop count"),
    (re.compile(r"\(exact: True\)"), "(exact)"),
    (re.compile(r"\(True\)"), "(yes)"),
    (re.compile(r"\bfrom step None\b"), "at no step"),
    (re.compile(r"\bdecodes to None\b"), "decodes to no answer"),
    (re.compile(r": True\b"), ": yes"),
    (re.compile(r": False\b"), ": no"),
    (re.compile(r"\bsame heads True\b"), "the same heads"),
    (re.compile(r"\bsame heads False\b"), "not the same heads"),
    (re.compile(r"\brho n/a\b"), "rho not defined (a constant ranking)"),
    (re.compile(r"\bn/a\b"), "not defined"),
    (re.compile(r"\bNone\b"), "none"),
    (re.compile(r"\bTrue\b"), "yes"),
    (re.compile(r"\bFalse\b"), "no"),
    (re.compile(r"\b(seed-\d+) verified\b"), r"\1 holds"),
    (re.compile(r"\b(seed-\d+) refuted\b"), r"\1 fails"),
    (re.compile(r"\ba status needs (\d+) of (\d+)\b"), r"a verdict needs the same result in \1 of \2 seeds"),
]


def prose(text: str) -> str:
    """A registry source or a check's sentence as the report's prose says it: no tracker numbers
    (the package's issue tracker is not the reader's), Python values as words ("at no step", "yes")."""
    text = _ISSUE_WRAPPED.sub(r"\1", text)
    text = re.sub(r" ?\(issue \d+\)", "", text)
    text = re.sub(r",? issue \d+(?: [A-Z])?,?", ",", text)
    text = re.sub(r"[Bb]efore issue \d+", "In an earlier version", text)
    text = re.sub(r"\bissue \d+(?: [A-Z])? ?", "", text)
    text = re.sub(r"\(,\s*", "(", text)
    for pattern, words in _LITERALS:
        text = pattern.sub(words, text)
    return text


def module_path(claim_id: str) -> str:
    """The repository-relative file of a claim's check."""
    return REGISTRY[claim_id].check.__module__.replace(".", "/") + ".py"


def evidence_source(row: dict, root: Path) -> str:
    """The results file or folder the evidence names (their common folder when several), else
    the module of the check (a computation made when the report is generated)."""
    text = json.dumps(row["evidence"], sort_keys=True, default=str)
    paths = sorted(p for p in set(_PATH.findall(text)) if (Path(root) / p).exists())
    if not paths:
        return module_path(row["id"])
    return paths[0] if len(paths) == 1 else Path(os.path.commonpath(paths)).as_posix()


def correction_of(row: dict) -> str | None:
    """The claim holding the corrected statement: the check's own pointer, else, for a claim
    that failed, a sibling ``ID-corrected`` or ``ID-exact`` in the registry."""
    if row.get("corrected_by"):
        return row["corrected_by"]
    if row["verdict"] not in FAILED:
        return None
    return next((c for c in (row["id"] + "-corrected", row["id"] + "-exact") if c in REGISTRY), None)


def part_of(claim_id: str, pages: dict) -> str:
    """The part a claim is filed under; the package's own hypotheses (sources saying "not a
    claim of the paper") and claims naming no place of the paper go after the paper's parts."""
    source = REGISTRY[claim_id].source
    if OWN_HYPOTHESIS in source:
        return BEYOND
    places = [p for p in places_in(source) if p in pages["places"]]
    preferred = [p for p in places if p.split()[0] not in FLOATS] or places
    return pages["places"][preferred[0]]["part"] if preferred else BEYOND


_PLACE_WORDS = re.compile(
    r"\b(?:Theorem|Lemma|Remark|Definition|Table|Figure|Section|Appendix|Listing)s? [A-Z]?[\d.]*\d[A-D]?\b"
)


def words_with_places(text: str) -> list:
    """Words that may name paper places ("Figure 2C", "Lemma F.1"): the places become ``Ref``s, so
    the digits in them are identifiers, not typed numbers."""
    parts, at = [], 0
    for match in _PLACE_WORDS.finditer(text):
        parts += [text[at : match.start()], Ref(match.group())]
        at = match.end()
    return [p for p in parts + [text[at:]] if p != ""]


def comma_joined(parts: list) -> list:
    """Inline ``parts`` separated by commas: a, b, c (studies.common.joined ends with "and")."""
    out = []
    for i, part in enumerate(parts):
        out += ([", "] if i else []) + [part]
    return out

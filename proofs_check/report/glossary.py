"""The report's glossary: every term of art the report uses, defined once in words, and linked
from the first place the report's prose uses it (``link_terms``).

The terms themselves (label, pattern, definition) are in ``glossary_terms``.
"""

from __future__ import annotations

import re

from .doc import Box, Bullets, Link, Num, Para, Section, Strong
from .glossary_terms import TERMS

__all__ = ["TERMS", "anchor", "glossary_section", "link_terms", "used_terms"]

ANCHOR, TITLE = "glossary", "Glossary"


def _pattern(raw: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-])(?:{raw})(?![\w-])", re.IGNORECASE)


def anchor(label: str) -> str:
    return "term-" + re.sub(r"[^a-z]+", "-", label.lower()).strip("-")


def glossary_section() -> Section:
    intro = Para(["The terms the report uses, each linked from its first use in the prose."])
    entries = [Section(anchor(label), label, [Para(list(definition))]) for label, _, definition in TERMS]
    return Section(ANCHOR, TITLE, [intro], entries)


def _paragraphs(item):
    """Every Para of the prose in document order (table cells and bullets included; quotes,
    code and data are verbatim and keep their words)."""
    if isinstance(item, Section):
        for child in item.blocks + item.subsections:
            yield from _paragraphs(child)
    elif isinstance(item, Para):
        yield item
    elif isinstance(item, Bullets):
        for entry in item.items:
            yield from _paragraphs(entry)
    elif isinstance(item, Box):
        for child in item.blocks:
            yield from _paragraphs(child)
    elif hasattr(item, "rows"):
        for row in item.rows:
            for cell in row:
                yield from _paragraphs(cell)
    elif hasattr(item, "caption"):
        yield item.caption


def used_terms(sections) -> set:
    """The glossary labels whose pattern the prose uses (outside the glossary)."""
    text = " ".join(
        part
        for section in sections
        if section.anchor != ANCHOR
        for para in _paragraphs(section)
        for part in para.parts
        if isinstance(part, str)
    )
    return {label for label, raw, _ in TERMS if _pattern(raw).search(text)}


def link_terms(sections: list) -> list:
    """``sections`` with each glossary term's first use in the prose made a link to its entry."""
    pending = {label: _pattern(raw) for label, raw, _ in TERMS}
    for section in sections:
        if section.anchor == ANCHOR or not pending:
            continue
        for para in _paragraphs(section):
            parts = []
            for part in para.parts:
                if isinstance(part, Strong):  # a verdict word: its first use links to its definition
                    label = next((lb for lb, pat in pending.items() if pat.fullmatch(part.text)), None)
                    if label is not None:
                        del pending[label]
                        part = Link(part.text, "#" + anchor(label))
                if isinstance(part, Num):  # a term inside a sentence from a results file: a link after it
                    parts.append(part)
                    for label, pat in list(pending.items()):
                        if (match := pat.search(part.text)) is not None:
                            del pending[label]
                            parts += [" (", Link(match.group(), "#" + anchor(label)), ")"]
                    continue
                if not isinstance(part, str):
                    parts.append(part)
                    continue
                rest = part
                while rest:
                    hits = [
                        (m.start(), label, m) for label, pat in pending.items() if (m := pat.search(rest))
                    ]
                    if not hits:
                        parts.append(rest)
                        break
                    _, label, match = min(hits, key=lambda hit: hit[0])
                    del pending[label]
                    if match.start():
                        parts.append(rest[: match.start()])
                    parts.append(Link(match.group(), "#" + anchor(label)))
                    rest = rest[match.end() :]
            para.parts = parts
    return sections

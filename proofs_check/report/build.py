"""The referee report as a document (``doc``): the claim run's rows, filed under the parts of the
paper, then the package's studies, the prior art and how the report was made.

Order: a one-screen summary (counts by verdict word, then what a reviewer should read first),
one section per part of the paper in the paper's order (a claim goes under the part of the first
place its source names, preferring a section, theorem or appendix to a float, whose page may
lie elsewhere; a corrected statement goes with the claim it corrects), the study sections and
the prior-art section (``studies``), and the footer.  Every number is a ``doc.Num`` naming its
source; a claim's evidence is the sentence its check wrote in this run.
"""

from __future__ import annotations

from pathlib import Path

from .claim_sections import claim_section, evidence_blocks, part_sections
from .doc import Data, Num, Quote, Section, nodes
from .findings import findings_section
from .glossary import glossary_section, link_terms
from .paper_places import load_table
from .rows import FAILED, RUN_SOURCE, correction_of, evidence_source, module_path, prose
from .summary import footer_section, summary_section

__all__ = [
    "FAILED",
    "RUN_SOURCE",
    "TITLE",
    "all_sources",
    "build_document",
    "claim_section",
    "correction_of",
    "evidence_blocks",
    "evidence_source",
    "module_path",
    "prose",
]

TITLE = "Referee report: Positional versus Symbolic Attention Heads (arXiv 2605.31558)"


def build_document(
    results: list[dict],
    root: Path,
    studies: list,
    prior_art,
    *,
    partial: bool = False,
    command: str = "python -m proofs_check --report report",
) -> list[Section]:
    """The report's sections: summary, parts of the paper, ``studies`` (each ``section(root)``),
    ``prior_art(root)`` (None: left out), footer."""
    root = Path(root)
    pages = load_table()
    body = part_sections(results, root, pages) + [section(root) for section in studies]
    if prior_art is not None:
        body.append(prior_art(root))
    footer = footer_section(command, results)
    body.append(glossary_section())
    findings = findings_section(results, root)
    summary = summary_section(results, partial, [findings] + body + [footer])
    return link_terms([findings, summary, *body, footer])


def all_sources(sections) -> list[str]:
    """Every source a document names (Num, Quote, Data), for the tests."""
    return list(
        dict.fromkeys(
            item.source
            for section in sections
            for item in nodes(section)
            if isinstance(item, (Num, Quote, Data))
        )
    )

"""The findings at a glance: the three answers at the top (``glance``), then one row per claim of
the paper that does not hold as printed (major before minor) and the package's own hypotheses.
The words per claim are in ``findings_rows`` and ``findings_own``; this module lays them out.
"""

from __future__ import annotations

from pathlib import Path

from ..registry import REGISTRY
from .doc import Link, Num, Para, Ref, Said, Section, Strong, Table
from .findings_own import PACKAGE
from .findings_rows import PAPER, SEVERITIES, SHORT
from .glance import three_answers
from .paper_places import QUOTES_SOURCE, load_quotes
from .rows import (
    FAILED,
    PAPER_TEXT,
    RUN_SOURCE,
    correction_of,
    evidence_source,
    module_path,
    prose,
    words_with_places,
)

__all__ = ["PAPER", "PACKAGE", "SEVERITIES", "SHORT", "findings_section", "paper_findings"]


def _correction_cell(row: dict, verdicts: dict) -> list:
    fix = correction_of(row)
    if fix is None:
        return ["no corrected statement"]
    if fix not in verdicts:
        return [Ref(fix), " (not in this partial report)"]
    if fix in SHORT:  # a line of words; the full statement is in the claim's own section
        return [Link(fix, "#" + fix), " (", Strong(verdicts[fix]), "): ", *words_with_places(SHORT[fix])]
    statement = Said(prose(REGISTRY[fix].statement), module_path(fix))
    return [Link(fix, "#" + fix), " (", Strong(verdicts[fix]), "): ", statement]


def _severity_rank(row: dict) -> tuple:
    finding = PAPER.get(row["id"])
    severity = finding.severity if finding else "minor"
    return (SEVERITIES.index(severity), row["kind"] != "statement")


def paper_findings(results: list[dict]) -> list[dict]:
    """The paper's claims that do not hold as printed, major before minor, statements (a false
    theorem) before experiments, then in the registry's order."""
    failed = [r for r in results if r.get("origin") == "paper" and r["verdict"] in FAILED + ("error",)]
    return sorted(failed, key=_severity_rank)


def findings_section(results: list[dict], root: Path) -> Section:
    verdicts = {r["id"]: r["verdict"] for r in results}
    quotes = load_quotes()
    glance = three_answers(results, root)
    paper = [r for r in results if r.get("origin") == "paper"]
    failed = paper_findings(results)
    major = sum(PAPER[r["id"]].severity == "major" for r in failed if r["id"] in PAPER)
    blocks = [
        glance,
        Para(
            [
                "Of the paper's ",
                Num(str(len(paper)), RUN_SOURCE),
                " claims checked here, ",
                Num(str(len(failed)), RUN_SOURCE),
                " do not hold as printed; ",
                Num(str(major), RUN_SOURCE),
                " of them are major (a theorem, a proof step, a construction or a central experiment), "
                "the rest minor (a definition's typo, a printed number, a figure's label). Each row quotes "
                "the paper word for word, with its page; says what is wrong; gives the statement the "
                "package proves or measures instead, where it registers one; and the decisive number "
                "from this run. The claim's id links to its section.",
            ]
        ),
    ]
    rows = []
    for row in failed:
        finding = PAPER.get(row["id"])
        head = [
            Strong(finding.severity if finding else "unrated"),
            ": ",
            Link(row["id"], "#" + row["id"]),
            " (",
            Strong(row["verdict"]),
            ")",
        ]
        if finding is None:
            rows.append(
                [
                    Para(head),
                    Para([Ref(prose(row["source"]))]),
                    Para([]),
                    Para(_correction_cell(row, verdicts)),
                    Para([]),
                ]
            )
            continue
        said = [Said(finding.quote, PAPER_TEXT)]
        if finding.quote in quotes:
            said += [" (page ", Num(str(quotes[finding.quote]), QUOTES_SOURCE), ")"]
        try:
            decisive = [Num(finding.number(row), evidence_source(row, root))]
        except (KeyError, TypeError, ValueError, IndexError):  # the evidence changed shape: say so
            decisive = ["not in this run's evidence"]
        rows.append(
            [
                Para(head),
                Para(said),
                Para(words_with_places(finding.wrong)),
                Para(_correction_cell(row, verdicts)),
                Para(decisive),
            ]
        )
    blocks.append(
        Table(
            ["finding", "the paper says", "what is wrong", "what holds instead", "decisive number"],
            rows,
            kind="findings",
        )
        if rows
        else Para(["Every claim of the paper in this report holds as printed or is undecided."])
    )
    own = [r for r in results if r.get("origin") == "package"]
    if own:
        blocks.append(
            Para(
                [
                    "The package's own hypotheses, kept apart from the paper's claims: questions the package "
                    "asked and registered with a decision rule before its data existed. Their words are ",
                    Strong("supported"),
                    " and ",
                    Strong("not supported"),
                    " (an experiment) or a statement's words (its own mathematics); none of them is a "
                    "finding about the paper.",
                ]
            )
        )
        own_rows = []
        for row in own:
            finding = PACKAGE.get(row["id"])
            asked = words_with_places(finding.asked) if finding else [Ref(row["source"])]
            prior = [Link(finding.prior, finding.link)] if finding else ["not recorded"]
            own_rows.append(
                [
                    Para([Link(row["id"], "#" + row["id"])]),
                    Para([Strong(row["verdict"])]),
                    Para(asked),
                    Para(prior),
                ]
            )
        blocks.append(
            Table(["hypothesis", "verdict", "what it asks", "builds on"], own_rows, kind="hypotheses")
        )
    return Section("findings", "Findings at a glance", blocks)

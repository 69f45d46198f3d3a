"""The report's summary (what the verdict words mean, counts by verdict and group, what to read
first, the contents) and its footer (how the report was made).
"""

from __future__ import annotations

from proofs_check.evidence.classes import EXHAUSTIVE, FINITE_CASES, PROVED

from ..registry import GROUPS, REGISTRY
from ..verdicts import ALL_WORDS, BY_CLASS, UP_TO_ROUNDING
from .doc import Bullets, Code, Link, Num, Para, Ref, Section, Strong, Table
from .rows import FAILED, RUN_SOURCE, prose


def _count_table(results: list[dict]) -> Table:
    groups = list(GROUPS)
    rows = []
    for word in ALL_WORDS:
        counts = [sum(r["verdict"] == word and r.get("group") == GROUPS[g] for r in results) for g in groups]
        if not any(counts):
            continue
        rows.append(
            [Para([Strong(word)])]
            + [Para([Num(str(c), RUN_SOURCE)]) for c in counts]
            + [Para([Num(str(sum(counts)), RUN_SOURCE)])]
        )
    totals = [sum(r.get("group") == GROUPS[g] for r in results) for g in groups]
    rows.append(
        [Para(["all"])]
        + [Para([Num(str(c), RUN_SOURCE)]) for c in totals]
        + [Para([Num(str(len(results)), RUN_SOURCE)])]
    )
    return Table(["verdict", *GROUPS.values(), "all"], rows)


def summary_section(results: list[dict], partial: bool, contents: list[Section]) -> Section:
    blocks = [
        Para(
            [
                "The report keeps three groups apart: ",
                Strong(GROUPS["paper"]),
                " (what the paper states or reports), ",
                Strong(GROUPS["corrected"]),
                " (what holds in place of a claim found false) and ",
                Strong(GROUPS["package"]),
                " (questions the package asked itself). A statement is ",
                Strong(BY_CLASS[PROVED]),
                " (an argument whose every step is checked), ",
                Strong(BY_CLASS[EXHAUSTIVE]),
                " (a finite statement, every case checked), ",
                Strong(BY_CLASS[FINITE_CASES]),
                " (finitely many of its infinitely many cases, each named) or ",
                Strong("false"),
                " (with a certified counterexample); an experiment of the paper is ",
                Strong("reproduced"),
                " or ",
                Strong("not reproduced"),
                " by our recipe, one of the package's own ",
                Strong("supported"),
                " or ",
                Strong("not supported"),
                "; any claim may be ",
                Strong("undecided"),
                ", and a statement failing only on a printed number's rounding boundary ",
                Strong(UP_TO_ROUNDING),
                ". This report covers ",
                Num(str(len(results)), RUN_SOURCE),
                " claims.",
            ]
        )
    ]
    if partial:
        blocks.append(
            Para(
                [
                    Strong("This report is partial"),
                    ": it holds only the claims selected with ",
                    Ref("--only"),
                    ", not the whole registry.",
                ]
            )
        )
    blocks.append(_count_table(results))
    read_first = []
    for row in results:
        if row.get("origin") == "package":
            continue  # the package's own hypotheses are not findings about the paper
        line = [Link(row["id"], "#" + row["id"]), ": ", Strong(row["verdict"])]
        if row["status"] == "error":
            read_first.append(Para(line + [": the check failed to run."]))
        elif row.get("origin") == "paper" and row["verdict"] == "undecided":
            read_first.append(Para(line + [", as the paper states it: ", Ref(prose(row["source"])), "."]))
        elif row.get("origin") == "corrected" and row["verdict"] in FAILED:
            read_first.append(Para(line + [": a corrected statement that does not hold."]))
    reading = [
        Para(
            [
                "Besides the findings table (every claim of the paper that does not hold as printed): every "
                "claim of the paper this run could not decide, every corrected statement that fails and any "
                "check that failed to run. The package's own hypotheses are left out here."
            ]
        ),
        Bullets(
            read_first or [Para(["nothing: every other claim of the paper holds, and every correction."])]
        ),
    ]
    toc = Bullets([Para([Link(s.title, "#" + s.anchor)]) for s in contents])
    return Section(
        "summary",
        "Summary",
        blocks,
        [Section("read-first", "Read first", reading), Section("contents", "Contents", [toc])],
    )


def footer_section(command: str, results: list[dict]) -> Section:
    kinds = {
        kind: sum(REGISTRY[r["id"]].kind == kind for r in results) for kind in ("statement", "experiment")
    }
    return Section(
        "how-made",
        "How this report was made",
        [
            Para(
                [
                    "Generated by the command below from the claims registry and the results files shipped in the "
                    "repository: it trains nothing, downloads nothing and redraws no figure (the figures are copies of ",
                    Ref("figures/output"),
                    "). Every number in the prose is formatted from the file named beside it when "
                    "the report is generated, and a claim's evidence is the sentence its check writes in this run, so "
                    "the report changes when a result changes; a test compares the committed report with a fresh one.",
                ]
            ),
            Code(command),
            Para(
                [
                    "The registry holds ",
                    Num(str(len(REGISTRY)), RUN_SOURCE),
                    " claims; this report shows ",
                    Num(str(len(results)), RUN_SOURCE),
                    " of them (statements: ",
                    Num(str(kinds["statement"]), RUN_SOURCE),
                    "; experiments: ",
                    Num(str(kinds["experiment"]), RUN_SOURCE),
                    ").",
                ]
            ),
        ],
    )

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

import json
import os
import re
from pathlib import Path

from proofs_check.evidence.classes import EXHAUSTIVE, FINITE_CASES, PROVED

from ..registry import REGISTRY
from ..verdicts import ALL_WORDS, BY_CLASS, UP_TO_ROUNDING
from .doc import Bullets, Code, Data, Figure, Link, Num, Para, Quote, Ref, Section, Strong, Table, nodes
from .figures_map import TABLES, figure_command, figure_file, figures_of
from .paper_places import BEYOND, PAGES_SOURCE, load_table, places_in

TITLE = "Referee report: Positional versus Symbolic Attention Heads (arXiv 2605.31558)"
RUN_SOURCE = "proofs_check/claims"  # the checks: verdicts and counts are theirs, run at generation time
FLOATS = ("Table", "Figure")
FAILED = ("false", "not reproduced", UP_TO_ROUNDING)
OWN_HYPOTHESIS = "not a claim of the paper"  # how the registry's sources mark the package's own hypotheses
_PATH = re.compile(r"(?:training|constructions|proofs_check|figures)/[\w./-]*\w")


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


def counterexample_text(example) -> str:
    """Exact values as the check returned them: one line per top-level key, each value compact
    JSON (sorted keys, numbers and strings untouched)."""
    if not isinstance(example, dict):
        return json.dumps(example, sort_keys=True)
    lines = [f"  {json.dumps(key)}: {json.dumps(example[key], sort_keys=True)}" for key in sorted(example)]
    return "{\n" + ",\n".join(lines) + "\n}"


def figure_blocks(cid: str, root: Path, shown: dict) -> list:
    """The figures of claim ``cid``: drawn the first time the report shows one, linked after
    (``shown``: figure name -> the claim it was first drawn under)."""
    blocks = []
    for name in figures_of(cid):
        if not (root / figure_file(name)).is_file():
            blocks.append(
                Para(["The figure ", Ref(name), " is not drawn yet: ", Ref(figure_command(name)), "."])
            )
        elif name in TABLES:
            blocks.append(
                Para(
                    [
                        "Shown in the table ",
                        Link(TABLES[name], figure_file(name)),
                        " of ",
                        Ref(name),
                        ", redrawn from saved results by ",
                        Ref(figure_command(name)),
                        ".",
                    ]
                )
            )
        elif name in shown:
            blocks.append(
                Para(
                    [
                        "Shown in the figure ",
                        Link(name, "#figure-" + name),
                        ", drawn above under ",
                        Link(shown[name], "#" + shown[name]),
                        ".",
                    ]
                )
            )
        else:
            shown[name] = cid
            blocks.append(
                Figure(
                    figure_file(name),
                    Para(
                        [
                            "Figure ",
                            Ref(name),
                            ", redrawn from saved results by ",
                            Ref(figure_command(name)),
                            ".",
                        ]
                    ),
                    anchor="figure-" + name,
                )
            )
    return blocks


ORIGIN_WORDS = {
    "paper": "the paper's claim",
    "corrected": "the package's correction of a false statement",
    "package": "the package's own statement or hypothesis",
}


def evidence_blocks(row: dict) -> list:
    """What a verified statement rests on (``evidence``): a proof's steps, each quoted from the
    module that checks it with that check's result in this run, or the cases that were checked."""
    found = row.get("evidence_class")
    if not found or row["kind"] != "statement":
        return []
    steps = found.get("steps", [])
    if not steps:
        return [
            Para(["Evidence class: ", Strong(found["class"]), ". The cases checked:"]),
            Quote(found["cases"], module_path(row["id"])),
        ]
    blocks = [
        Para(
            [
                "Evidence class: ",
                Strong(found["class"]),
                ". The argument, step by step; each step is checked by "
                "the function named under it whenever the claim is checked:",
            ]
        )
    ]
    if found["class"] != PROVED:  # an argument with a step checked only on finitely many cases
        blocks += [Quote(found["cases"], module_path(row["id"]))]
    for step in steps:
        result = "passed" if step.get("passed") else "not run" if "passed" not in step else "failed"
        blocks += [
            Quote(step["text"], step["source"]),
            Para(["Checked by ", Ref(step["checked_by"]), ": ", Strong(result), "."]),
        ]
    return blocks


def claim_section(row: dict, pages: dict, root: Path, corrects: dict, verdicts: dict, shown: dict) -> Section:
    cid, source = row["id"], evidence_source(row, root)
    located = [p for p in places_in(row["source"]) if p in pages["places"]]
    where = ["In the paper: " if located else "Where the claim comes from: ", Ref(row["source"]), "."]
    for i, place in enumerate(located):
        where += [
            " " if i == 0 else ", ",
            Ref(place),
            " is on page" if i == 0 else " on page",
            " ",
            Num(str(pages["places"][place]["page"]), PAGES_SOURCE),
        ]
    blocks = [
        Quote(row["statement"], module_path(cid)),
        Para(where + (["."] if located else [])),
        Para(["Origin: ", Strong(ORIGIN_WORDS.get(row.get("origin"), "not recorded")), "."]),
        Para(["Verdict: ", Strong(row["verdict"]), ". Evidence: ", Num(row["summary"], source)]),
    ]
    blocks += evidence_blocks(row)
    if row["verdict"] != row["recorded_verdict"]:
        blocks.append(
            Para(
                [
                    "The registry records ",
                    Strong(row["recorded_verdict"]),
                    ": this run differs, so the command exits with status one.",
                ]
            )
        )
    if "counterexample" in row:
        blocks += [
            Para(["The counterexample, with the exact values the check certified:"]),
            Data(counterexample_text(row["counterexample"]), source),
        ]
    corrected = correction_of(row)
    label = "Corrected statement: " if row["kind"] == "statement" else "What holds instead: "
    if corrected is not None and corrected in verdicts:
        blocks.append(
            Para([label, Link(corrected, "#" + corrected), " (", Strong(verdicts[corrected]), ")."])
        )
    elif corrected is not None:
        blocks.append(Para([label, Ref(corrected), " (not in this partial report)."]))
    if cid in corrects:
        blocks.append(Para(["Corrects: ", *_joined([Link(c, "#" + c) for c in corrects[cid]]), "."]))
    blocks += figure_blocks(cid, root, shown)
    blocks += [Para(["Reproduce the check:"]), Code(f"python -m proofs_check --only ={cid}")]
    return Section(cid, f"{cid}: {row['verdict']}", blocks, kind="claim")


def _joined(parts: list) -> list:
    out = []
    for i, part in enumerate(parts):
        out += ([", "] if i else []) + [part]
    return out


def part_title(label: str, pages: dict) -> str:
    if label == BEYOND:
        return "Beyond the paper: the package's own hypotheses and the predecessor's results"
    kind = "Appendix" if label[0].isalpha() else "Section"
    return f"{kind} {label}: {pages['parts'][label]['title']}"


def part_sections(results: list[dict], root: Path, pages: dict) -> list[Section]:
    verdicts = {r["id"]: r["verdict"] for r in results}
    corrects, home = {}, {}
    for row in results:
        home[row["id"]] = part_of(row["id"], pages)
        fix = correction_of(row)
        if fix is not None:
            corrects.setdefault(fix, []).append(row["id"])
    for row in results:  # a correction sits beside what it corrects
        if row["id"] in corrects and corrects[row["id"]][0] in home:
            home[row["id"]] = home[corrects[row["id"]][0]]
    order = {label: info["order"] for label, info in pages["parts"].items()}
    labels = sorted(set(home.values()), key=lambda label: order.get(label, float("inf")))
    sections, shown = [], {}
    for label in labels:
        rows = [r for r in results if home[r["id"]] == label]
        if label == BEYOND:
            intro = Para(
                [
                    "Claims that are not the paper's own: hypotheses the package registered before testing "
                    "them (the query scale, the premise's other readings, the training window), and the "
                    "predecessor's results the paper relies on. Each names the place of the paper it "
                    "extends, where there is one."
                ]
            )
        else:
            intro = Para(
                [
                    "The paper's ",
                    Ref(part_title(label, pages).split(":")[0]),
                    " begins on page ",
                    Num(str(pages["parts"][label]["page"]), PAGES_SOURCE),
                    "; the claims checked from it:",
                ]
            )
        sections.append(
            Section(
                f"part-{label}",
                part_title(label, pages),
                [intro],
                [claim_section(r, pages, root, corrects, verdicts, shown) for r in rows],
            )
        )
    return sections


def summary_section(results: list[dict], partial: bool, contents: list[Section]) -> Section:
    counts = {word: sum(r["verdict"] == word for r in results) for word in ALL_WORDS}
    blocks = [
        Para(
            [
                "Each claim of the paper the package checks, with its verdict: a statement is ",
                Strong(BY_CLASS[PROVED]),
                " (an argument whose every step is checked), ",
                Strong(BY_CLASS[EXHAUSTIVE]),
                " (a finite statement, every case checked), ",
                Strong(BY_CLASS[FINITE_CASES]),
                " (finitely many of its infinitely many cases, each named) or ",
                Strong("false"),
                " (with a certified counterexample), an experiment ",
                Strong("reproduced"),
                " or ",
                Strong("not reproduced"),
                " by our recipe; either may be ",
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
    blocks.append(
        Table(
            ["verdict", "claims"],
            [[Para([Strong(word)]), Para([Num(str(counts[word]), RUN_SOURCE)])] for word in ALL_WORDS]
            + [[Para(["all"]), Para([Num(str(len(results)), RUN_SOURCE)])]],
        )
    )
    read_first = []
    for row in results:
        line = [Link(row["id"], "#" + row["id"]), " (", Ref(row["source"]), "): ", Strong(row["verdict"])]
        fix = correction_of(row)
        if row["verdict"] == "false":
            read_first.append(
                Para(
                    line
                    + ([", corrected by ", Link(fix, "#" + fix)] if fix else [", no corrected statement"])
                    + ["."]
                )
            )
        elif row["verdict"] in ("not reproduced", UP_TO_ROUNDING, "error"):
            weaker = [", what holds instead: ", Link(fix, "#" + fix)] if fix else []
            read_first.append(Para(line + weaker + ["."]))
    reading = [
        Para(
            [
                "Every false statement with its correction, every experiment not reproduced, "
                "every claim that holds up to rounding and any check that failed to run."
            ]
        ),
        Bullets(read_first or [Para(["nothing: every claim is verified, reproduced or undecided."])]),
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
    return [summary_section(results, partial, body + [footer]), *body, footer]


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

"""One section per part of the paper, one subsection per claim: its statement quoted from the
registry, where the paper says it, its verdict and evidence in this run, the decision rule, what a
verified statement rests on, a counterexample's exact values, the corrected statement, its
figures and the command that reproduces the check.
"""

from __future__ import annotations

import json
from pathlib import Path

from proofs_check.evidence.classes import PROVED

from .doc import Code, Data, Figure, Link, Num, Para, Quote, Ref, Section, Strong
from .figures_map import TABLES, figure_command, figure_file, figures_of
from .paper_places import BEYOND, PAGES_SOURCE, places_in
from .rows import comma_joined, correction_of, evidence_source, module_path, part_of, prose


def _runs(values: list) -> list:
    """A list with runs of four or more equal items written once: ["e1 ×100", "a1"] (strings)."""
    out, i = [], 0
    while i < len(values):
        j = i
        while j < len(values) and values[j] == values[i]:
            j += 1
        if j - i >= 4 and isinstance(values[i], (str, int, float)):
            out.append(f"{values[i]} ×{j - i}")
        else:
            out += values[i:j]
        i = j
    return out


def _shorten(value):
    if isinstance(value, list):
        return _runs([_shorten(v) for v in value])
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    return value


def counterexample_text(example) -> str:
    """Exact values as the check returned them: one line per top-level key, each value compact
    JSON (sorted keys, numbers and strings untouched)."""
    example = _shorten(example)  # a run of equal items once, with its count: "e1 ×100"
    if not isinstance(example, dict):
        return json.dumps(example, sort_keys=True, ensure_ascii=False)
    lines = [
        f"  {json.dumps(key)}: {json.dumps(example[key], sort_keys=True, ensure_ascii=False)}"
        for key in sorted(example)
    ]
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
    where = ["In the paper: " if located else "Where the claim comes from: ", Ref(prose(row["source"])), "."]
    for i, place in enumerate(located):
        where += [
            " " if i == 0 else ", ",
            Ref(place),
            " is on page" if i == 0 else " on page",
            " ",
            Num(str(pages["places"][place]["page"]), PAGES_SOURCE),
        ]
    blocks = [
        Quote(prose(row["statement"]), module_path(cid)),
        Para(where + (["."] if located else [])),
        Para(["Origin: ", Strong(ORIGIN_WORDS.get(row.get("origin"), "not recorded")), "."]),
        Para(["Verdict: ", Strong(row["verdict"]), ". Evidence: ", Num(prose(row["summary"]), source)]),
    ]
    rule = row["evidence"].get("rule")
    if isinstance(rule, str):  # the decision rule, as the check states it in this run
        said = ["Decision rule: ", Num(prose(rule), source), "."]
        if "Wilson" in row["summary"] and "Wilson" not in rule:
            said += [
                " The rule judges the measured accuracy itself (a point estimate): one wrong answer too many "
                "fails it. The Wilson intervals in the evidence are shown for the reader, not used; a rule on "
                "the Wilson upper bound fails only where even the interval lies below the threshold."
            ]
        blocks.append(Para(said))
    if isinstance(row["evidence"].get("status_rule"), str):
        blocks.append(
            Para(["How the seeds decide: ", Num(prose(row["evidence"]["status_rule"]), source), "."])
        )
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
            Para(
                [
                    "The counterexample, with the exact values the check certified (a run of equal items is "
                    "written once with its count, as in e ×n):"
                ]
            ),
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
        blocks.append(Para(["Corrects: ", *comma_joined([Link(c, "#" + c) for c in corrects[cid]]), "."]))
    blocks += figure_blocks(cid, root, shown)
    blocks += [Para(["Reproduce the check:"]), Code(f"python -m proofs_check --only ={cid}")]
    return Section(cid, f"{cid}: {row['verdict']}", blocks, kind="claim")


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

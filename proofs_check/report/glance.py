"""The three answers at the top of the report, one short block (``three_answers``, anchor
``at-a-glance``) a reader takes in on the first screen:

1. Which theorems are false: the paper's major false statements grouped by the theorem, remark or
   appendix they belong to (``findings_own.THEOREMS``), each claim linked with its verdict word,
   and what holds instead: a short phrase and the corrections the registry links, with theirs.
2. Does the headline reproduce: the headline claim's verdict and its decisive number from this
   run's evidence, the related result that holds, and the package's query-scale hypotheses.
3. What is new here: how many of the package's own hypotheses are supported, the most important
   with the question each asked and the prior work it builds on, and how many corrected
   statements are proved.

The words per claim are data (``findings_own``, ``findings_rows.SHORT``); every number comes from
the run (a count of its rows, or the decisive number formatted from a claim's evidence).
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.evidence.classes import FINITE_CASES, PROVED

from ..verdicts import BY_CLASS
from .doc import Box, Bullets, Link, Num, Para, Ref, Strong
from .findings_own import HEADLINE, HEADLINE_SAYS, NEW, PACKAGE, SCALE, SCALE_SAYS, THEOREMS
from .findings_rows import PAPER, SHORT
from .paper_places import places_in
from .rows import FAILED, RUN_SOURCE, comma_joined, correction_of, evidence_source, words_with_places

ANCHOR = "at-a-glance"
QUESTIONS = ("Which theorems are false?", "Does the headline reproduce?", "What is new here?")


def _link(cid: str) -> Link:
    return Link(cid, "#" + cid)


def _by_verdict(ids: list, verdicts: dict) -> list:
    """The claims grouped by verdict word, in their order: "A, B (false); C (not reproduced)"."""
    out = []
    for k, word in enumerate(dict.fromkeys(verdicts[c] for c in ids)):
        out += (["; "] if k else []) + comma_joined([_link(c) for c in ids if verdicts[c] == word])
        out += [" (", Strong(word), ")"]
    return out


def _major_false_statements(results: list[dict]) -> list[str]:
    return [
        r["id"]
        for r in results
        if r.get("origin") == "paper"
        and r["kind"] == "statement"
        and r["verdict"] in FAILED + ("error",)
        and getattr(PAPER.get(r["id"]), "severity", "major") == "major"
    ]


def false_theorems(results: list[dict], verdicts: dict, rows: dict) -> list:
    failed = _major_false_statements(results)
    lead = Para([Strong(QUESTIONS[0]), " The paper's major false statements, by theorem:"])
    items, grouped = [], set()
    for theorem in THEOREMS:
        ids = [c for c in theorem.claims if c in failed]
        if not ids:
            continue
        grouped |= set(ids)
        fixes = [f for c in ids if (f := correction_of(rows[c])) is not None] + list(theorem.also)
        fixes = [f for f in dict.fromkeys(fixes) if f in verdicts]
        parts = [
            Ref(theorem.place),
            ", ",
            *words_with_places(theorem.what),
            ": ",
            *_by_verdict(ids, verdicts),
        ]
        if fixes:
            parts += [". Instead, ", *words_with_places(theorem.instead), ": ", *_by_verdict(fixes, verdicts)]
        items.append(Para(parts + ["."]))
    rest = [c for c in failed if c not in grouped]
    if rest:
        items.append(Para(["Elsewhere: ", *_by_verdict(rest, verdicts), "."]))
    if not items:
        return [
            Para([Strong(QUESTIONS[0]), " None in this report: every statement of the paper here holds."])
        ]
    return [lead, Bullets(items)]


def _described(cid: str, verdicts: dict) -> list:
    words = words_with_places(SHORT[cid]) if cid in SHORT else []
    return [_link(cid), " (", Strong(verdicts[cid]), ")"] + ([": ", *words] if words else [])


def headline(verdicts: dict, rows: dict, root: Path) -> Para:
    row = rows.get(HEADLINE)
    if row is None:
        return Para([Strong(QUESTIONS[1]), " The headline claim is not in this partial report."])
    places = places_in(row["source"])
    parts = [Strong(QUESTIONS[1]), " The headline, ", _link(HEADLINE)]
    parts += [" (", Ref(places[0]), ")"] if places else []
    parts += [", that ", *words_with_places(HEADLINE_SAYS), ", is ", Strong(row["verdict"])]
    if HEADLINE in PAPER:
        try:
            parts += [": ", Num(PAPER[HEADLINE].number(row), evidence_source(row, root))]
        except (KeyError, TypeError, ValueError, IndexError):  # the evidence changed shape
            pass
    parts += ["."]
    fix = correction_of(row)
    if fix is not None and fix in verdicts:
        parts += [" What holds: ", *_described(fix, verdicts), "."]
    scale = [c for c in SCALE if c in verdicts]
    if scale:
        parts += [" With ", *words_with_places(SCALE_SAYS), ": "]
        for k, cid in enumerate(scale):
            parts += (["; "] if k else []) + _described(cid, verdicts)
        parts += ["."]
    return Para(parts)


def what_is_new(results: list[dict], verdicts: dict) -> list:
    own = [r["id"] for r in results if r.get("origin") == "package"]
    supported = [c for c in own if verdicts[c] == "supported"]
    corrected = [r["verdict"] for r in results if r.get("origin") == "corrected"]
    proved, checked = BY_CLASS[PROVED], BY_CLASS[FINITE_CASES]
    lead = [Strong(QUESTIONS[2]), " "]
    if own:
        lead += [
            Num(str(len(supported)), RUN_SOURCE),
            " of the package's ",
            Num(str(len(own)), RUN_SOURCE),
            " own hypotheses, each registered with its rule before its data, are ",
            Strong("supported"),
            "; ",
        ]
    lead += [
        Num(str(corrected.count(proved)), RUN_SOURCE),
        " corrected statements are ",
        Strong(proved),
        " and ",
        Num(str(corrected.count(checked)), RUN_SOURCE),
        " more ",
        Strong(checked),
        "." if not supported else ". The most important hypotheses:",
    ]
    chosen = [c for c in NEW if c in supported] or supported[: len(NEW)]
    items = []
    for cid in chosen:
        said = [_link(cid), " (", Strong(verdicts[cid]), ")"]
        if cid in PACKAGE:
            finding = PACKAGE[cid]
            said += [
                ": ",
                *words_with_places(finding.asked),
                " Builds on ",
                Link(finding.prior, finding.link),
            ]
        items.append(Para(said + ["."]))
    return [Para(lead)] + ([Bullets(items)] if items else [])


def three_answers(results: list[dict], root: Path) -> Box:
    """The block of three answers (anchor ``at-a-glance``), from the registry's words and this run."""
    verdicts = {r["id"]: r["verdict"] for r in results}
    rows = {r["id"]: r for r in results}
    blocks = false_theorems(results, verdicts, rows)
    blocks.append(headline(verdicts, rows, Path(root)))
    blocks += what_is_new(results, verdicts)
    return Box(ANCHOR, blocks)

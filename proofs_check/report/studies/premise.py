"""The paper's future work (Section 4), tested: does discrepancy predict where length generalisation breaks?

Read from every shipped member's ``dilution.json`` (and, with the scale at inference,
``dilution_rescaled.json``) of both studies, through the same reader and comparison as claims
P-break, P-break-relative and P-break-rescaled (``proofs_check.claims.premise.shipped_breaks``,
``training.analysis.break_prediction.compare_breaks``): the numbers here are those the claims
judge, computed from the files, not by running the claims.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.claims.premise import shipped_breaks
from proofs_check.report.doc import Bullets, Num, Para, Ref, Section, Table, num
from training.analysis.break_prediction import (
    RULES,
    SEEN_BY_RELATIVE,
    THRESHOLD,
    compare_breaks,
    never_learned,
)
from training.tasks.vocab import SEQ_LEN

from .common import claim, figure, joined, not_shipped

ANCHOR, TITLE = "study-premise", "The premise tested: does discrepancy predict the break?"
STUDIES = ("training/reference/seeds", "training/reference/variants")
PLAIN, RESCALED = "dilution.json", "dilution_rescaled.json"
COMMAND = "python -m training study training/studies/variants.json --collect"
RULES_SOURCE = "training/analysis/break_prediction.py"
READING_WORDS = {
    "lemma": "the lemma's condition",
    "mass": "the proof before its worst-case step",
    "relative": "the top weight halves (exploratory)",
}
MIN_FOR_RANKS = 3  # compare_breaks needs three members for a rank correlation


def _source(name: str) -> str:
    """Every member file of both studies: the source of a number computed over all of them."""
    return f"training/reference/*/*/*/seed-*/{name}"


def _members(root: Path, name: str) -> tuple[dict, list]:
    """({member: breaks} of the models that learned the task, [members left out as never learned])."""
    found = shipped_breaks([Path(root) / study for study in STUDIES], name)
    left_out = never_learned(found, SEQ_LEN)
    return {m: b for m, b in found.items() if m not in left_out}, left_out


def section(root: Path) -> Section:
    plain, left_out = _members(root, PLAIN)
    if len(plain) < MIN_FOR_RANKS:
        return not_shipped(ANCHOR, TITLE, _source(PLAIN), COMMAND)
    rescaled, _ = _members(root, RESCALED)
    held_out = {m: b for m, b in plain.items() if m not in SEEN_BY_RELATIVE}
    tests = [
        ("P-break", plain, RULES, PLAIN),
        ("P-break-relative", held_out, ("relative",), PLAIN),
        ("P-break-rescaled", rescaled, RULES, RESCALED),
    ]
    rows = [
        _row(claim_id, reading, compare_breaks(members, reading), name)
        for claim_id, members, readings, name in tests
        if len(members) >= MIN_FOR_RANKS
        for reading in readings
    ]
    src = _source(PLAIN)
    blocks = [
        Para(
            [
                "For each trained model, the dilution stage measures every layer's logit gap and attention weights "
                "at every length. Three readings turn them into a predicted break: ",
                Ref("Lemma F.1"),
                "'s condition on the layers that meet it at the training length (the premise the paper leaves to future "
                "work), the same "
                "proof before its worst-case step (the losing keys' measured weight), and an exploratory rule "
                "chosen after looking at the first models, judged only on models trained after it. The measured "
                "break is where accuracy over all hops first falls below ",
                num(THRESHOLD, "g", RULES_SOURCE),
                ". A prediction counts when it lies within a factor of two of the measured break; the rank "
                "correlation is Spearman's.",
            ]
        ),
        Table(["claim", "reading", "models", "within a factor of two", "rank correlation"], rows),
    ]
    findings = [
        _lemma_finding(plain, src),
        _mass_finding(plain, src),
        _rescaled_finding(rescaled, _source(RESCALED)),
    ]
    if left_out:
        findings.append(
            Para(
                [
                    "Left out of every test, and named, because they never reached the level at the "
                    "training length: ",
                    *joined([Ref(m) for m in left_out]),
                    ".",
                ]
            )
        )
    blocks.append(Bullets([p for p in findings if p is not None]))
    blocks.append(
        figure(
            root,
            "fig_breaks",
            [
                "Predicted against measured break for every model, one panel per "
                "reading; the diagonal band is a factor of two."
            ],
        )
    )
    return Section(ANCHOR, TITLE, blocks)


def _row(claim_id: str, reading: str, comparison: dict, name: str) -> list:
    rho = comparison["spearman_rho"]
    return [
        Para([claim(claim_id)]),
        Para([READING_WORDS[reading]]),
        Para([num(comparison["n"], "d", _source(name))]),
        Para([num(comparison["within_factor_2"], "d", _source(name))]),
        Para(["not defined" if rho is None else num(rho, "+.2f", _source(name))]),
    ]


def _ratios(members: dict, reading: str) -> dict:
    """{member: predicted / measured} where both are finite."""
    return {
        m: b["predicted"][reading]["break"] / b["measured"]
        for m, b in members.items()
        if b["predicted"][reading]["break"] is not None and b["measured"] is not None
    }


def _times_early(ratios) -> str:
    """'3-14' times before the measured break, from predicted / measured ratios below one."""
    early = sorted(1 / r for r in ratios)
    return f"{early[0]:.0f}-{early[-1]:.0f}" if f"{early[0]:.0f}" != f"{early[-1]:.0f}" else f"{early[0]:.0f}"


def _lemma_finding(members: dict, src: str) -> Para | None:
    """The lemma reading predicts the training length itself: its condition fails there already."""
    at_start = [
        m
        for m, b in members.items()
        if b["predicted"]["lemma"]["break"] is not None and b["predicted"]["lemma"]["break"] <= SEQ_LEN
    ]
    ratios = _ratios(members, "lemma")
    if not at_start or not ratios:
        return None
    return Para(
        [
            claim("P-break"),
            ": in ",
            num(len(at_start), "d", src),
            " of ",
            num(len(members), "d", src),
            " models no layer meets the lemma's condition even at the training length, so it predicts a break "
            "there, ",
            Num(_times_early(r for r in ratios.values() if r < 1), src),
            " times before the measured "
            "one. The mechanism is right and the bound is not: dilution is what breaks the letter models (the "
            "scale at inference removes every letter break), yet the worst-case condition fails in models that "
            "answer "
            "correctly far beyond it. It is sufficient, far from necessary, and cannot locate the break.",
        ]
    )


def _mass_finding(members: dict, src: str) -> Para | None:
    """The mass reading by task: close on the number task, early on the letter task."""
    ratios = _ratios(members, "mass")
    by_task = {
        task: [r for m, r in ratios.items() if m.split("/")[1] == task] for task in ("number", "letter")
    }
    if not all(by_task.values()):
        return None
    number = sorted(by_task["number"])
    return Para(
        [
            "The proof before its worst-case step comes closer on the number task (predicted over measured ",
            Num(f"{number[0]:.2f}-{number[-1]:.2f}", src),
            ") than on the letter task, whose answers survive heavily diluted attention (",
            Num(f"{min(by_task['letter']):.2f}-{max(by_task['letter']):.2f}", src),
            "): no reading of the attention weights tried here locates the break.",
        ]
    )


def _rescaled_finding(members: dict, src: str) -> Para | None:
    """P-break-rescaled: does the mass reading follow the intervention?"""
    if len(members) < MIN_FOR_RANKS:
        return None
    never = [m for m, b in members.items() if b["measured"] is None]
    said_never = [m for m in never if _no_break(members[m], "mass")]
    return Para(
        [
            claim("P-break-rescaled"),
            ": with the scale at inference, ",
            num(len(never), "d", src),
            " of ",
            num(len(members), "d", src),
            " models never break up to the longest length, and the proof before "
            "its worst-case step says so for ",
            num(len(said_never), "d", src),
            " of them: it follows the "
            "direction of the intervention on models with hard attention, and misses those whose attention is "
            "soft but whose answers stay right.",
        ]
    )


def _no_break(breaks: dict, reading: str) -> bool:
    """True where ``reading`` predicts no break up to the longest length measured."""
    return breaks["predicted"][reading]["break"] is None

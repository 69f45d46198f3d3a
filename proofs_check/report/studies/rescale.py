"""The query scale switched on at inference only: is the break of a model trained without it
softmax dilution?

Read from the variants study's ``rescale`` stage (``training/reference/variants/summary.json``,
blocks ``length`` and ``rescaled`` of every model trained without a scale).  The per-model
readings are those of claims V-rescale and V-rescale-number (``proofs_check.claims.rescale``:
the same curves, the same measured break), computed here from the file, not by running the
claims.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.claims.rescale import break_within_factor, holds_everywhere, rescaled_models
from proofs_check.report.doc import Bullets, Num, Para, Ref, Section, Table, num
from theory.paper_data import LENGTH_850, TRAINING_LENGTH
from theory.statistics import reaches
from training.analysis.break_prediction import THRESHOLD

from .common import (
    LENGTH_BLOCK,
    VALUE,
    at_length,
    breaks_text,
    claim,
    figure,
    joined,
    load,
    not_shipped,
    span,
    stat_num,
    tokens,
)

ANCHOR, TITLE = "study-rescale", "The query scale at inference only: the break is dilution"
SUMMARY = "training/reference/variants/summary.json"
COMMAND = "python -m training study training/studies/variants.json --collect"
THRESHOLD_SOURCE = "training/analysis/break_prediction.py"
TASKS = ("letter", "number")

TASK_RESULT = {
    "length?": LENGTH_BLOCK,
    "rescaled?": LENGTH_BLOCK,
    "breaks?": {"measured": {"*": VALUE}},
    "rescaled_breaks?": {"measured": {"*": VALUE}},
}
SHAPE = {
    "results": {"*": {"*": TASK_RESULT}},
    "variants": dict,
    "rescale?": {"count?": int, "query_scale?": str},
}


def section(root: Path) -> Section:
    summary = load(root, SUMMARY, SHAPE)
    if summary is None:
        return not_shipped(ANCHOR, TITLE, SUMMARY, COMMAND)
    src = SUMMARY
    rows = [
        (name, task)
        for name in summary["variants"]
        for task in TASKS
        if "rescaled" in summary["results"].get(name, {}).get(task, {})
    ]
    if not rows:
        return Section(
            ANCHOR,
            TITLE,
            [
                Para(
                    [
                        "The variants study is shipped without its rescale stage: ",
                        Ref(COMMAND),
                        " collects it once its members have run.",
                    ]
                )
            ],
        )
    lengths = summary["results"][rows[0][0]][rows[0][1]]["rescaled"]["lengths"]
    shown = [n for n in (LENGTH_850[0], max(lengths)) if n in lengths]
    count = (summary.get("rescale") or {}).get("count")
    blocks = [
        Para(
            [
                "Every model of the variants study trained without a query scale is evaluated again with the fixed "
                "scale ",
                Ref("log(i+1)/log(17)"),
                " switched on at inference only, its weights unchanged (",
                Ref("evaluate --query-scale log"),
                *([", ", num(count, "d", src), " inputs per length"] if count else []),
                "). If a model then holds past its break, what failed at length was the temperature of its "
                "attention, not the circuit it learned: the inserted tokens dilute the answer key's softmax "
                "weight (",
                Ref("Lemma F.1"),
                "), and a scale growing like the log of the position restores it. Accuracy over all hops at ",
                *joined([[Num(tokens(n), src)] for n in shown]),
                " tokens, as trained and with the scale; breaks per seed.",
            ]
        ),
        Table(
            [
                "model",
                "task",
                *(h for n in shown for h in (f"{_column(n)}, as trained", f"{_column(n)}, with the scale")),
                "break as trained",
                "break with the scale",
            ],
            [_row(summary, name, task, shown, src) for name, task in rows],
        ),
    ]
    findings = [_letter_finding(summary, src), _number_finding(summary, src), _trained_against(summary, src)]
    blocks.append(Bullets([p for p in findings if p is not None]))
    blocks.append(
        figure(
            root,
            "fig_rescale",
            [
                "The models trained without a query scale, as trained and with the "
                "scale switched on at inference; the last panel follows the answer "
                "key's attention weight."
            ],
        )
    )
    return Section(ANCHOR, TITLE, blocks)


def _column(length: int) -> str:
    return "paper's length" if length == LENGTH_850[0] else "longest length"


def _row(summary: dict, name: str, task: str, shown: list, src: str) -> list:
    result = summary["results"][name][task]
    cells = [Para([Ref(name)]), Para([task])]
    for n in shown:
        cells += [
            Para([stat_num(at_length(result.get("length"), n), src)]),
            Para([stat_num(at_length(result["rescaled"], n), src)]),
        ]
    for block in ("breaks", "rescaled_breaks"):
        measured = (result.get(block) or {}).get("measured")
        cells.append(Para([Num(breaks_text(measured), src)] if measured else ["not measured"]))
    return cells


def learned(model: dict) -> bool:
    """The model reached the level at the training length as trained (else it never learned the task)."""
    lengths, accuracy = model["plain"]
    return (
        TRAINING_LENGTH in lengths
        and accuracy[lengths.index(TRAINING_LENGTH)] is not None
        and reaches(accuracy[lengths.index(TRAINING_LENGTH)], THRESHOLD)
    )


def _letter_finding(summary: dict, src: str) -> Para | None:
    """V-rescale: every letter model that learned the task holds at every length with the scale."""
    models = rescaled_models(summary, "letter")
    if not models:
        return None
    left_out = sorted(m for m, c in models.items() if not learned(c))
    rows = {m: holds_everywhere(c) for m, c in models.items() if m not in left_out}
    holding = [m for m, (ok, _) in rows.items() if ok]
    lowest = [row["lowest"] for _, row in rows.values()]
    plain = [row["break_without"] for _, row in rows.values()]
    parts = [
        "With the scale switched on, ",
        num(len(holding), "d", src),
        " of the ",
        num(len(rows), "d", src),
        " letter models that learned the task keep accuracy over all hops at or above ",
        num(THRESHOLD, "g", THRESHOLD_SOURCE),
        " at every length (",
        claim("V-rescale"),
        "; their lowest accuracy over the lengths ",
        Num(f"{min(lowest):.3f}-{max(lowest):.3f}", src),
        "), where as trained they break at ",
        Num(span(plain), src),
        " tokens",
    ]
    if left_out:
        parts += [
            ". Left out, as in every premise claim, because they never reached the level at the training "
            "length: ",
            *joined([Ref(m) for m in left_out]),
        ]
    return Para(
        parts
        + [
            ". The paper's headline length is reached by the paper's own trained models once their "
            "temperature grows like the log of the position."
        ]
    )


def _number_finding(summary: dict, src: str) -> Para | None:
    """V-rescale-number: the number models' break stays within a factor of the one as trained."""
    models = rescaled_models(summary, "number")
    if not models:
        return None
    rows = [break_within_factor(c)[1] for c in models.values() if learned(c)]
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    parts = [
        "On the number task the same scale leaves the break where it was (",
        claim("V-rescale-number"),
        "): ",
        Num(span(r["break_without"] for r in rows), src),
        " tokens as trained, ",
        Num(span(r["break_with"] for r in rows), src),
        " with the scale",
    ]
    if ratios:
        parts += [", ratios ", Num(f"{min(ratios):.2f}-{max(ratios):.2f}", src)]
    return Para(
        parts
        + [
            ". Its positional layers lose their gap as the length grows whatever their temperature, "
            "as the discrepancy theory predicts (",
            Ref("Theorem 3.2"),
            ", corrected): the scale cures dilution, not the decay of a positional head's gap.",
        ]
    )


def _trained_against(summary: dict, src: str) -> Para | None:
    """Training with the scale against switching it on: the shorter schedule's pair."""
    trained = summary["results"].get("log-scale-3k", {}).get("letter", {}).get("length")
    switched = summary["results"].get("paper-3k", {}).get("letter", {}).get("rescaled")
    if not trained or not switched:
        return None
    n = max(set(trained["lengths"]) & set(switched["lengths"]))
    return Para(
        [
            "Training with the scale buys little that switching it on does not: at ",
            Num(tokens(n), src),
            " tokens ",
            Ref("log-scale-3k"),
            " scores ",
            stat_num(at_length(trained, n), src),
            ", the same schedule's ",
            Ref("paper-3k"),
            " models with the scale switched on ",
            stat_num(at_length(switched, n), src),
            ".",
        ]
    )

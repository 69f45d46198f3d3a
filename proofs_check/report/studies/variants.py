"""The variants study: which change to the paper's recipe makes the letter task extrapolate.

Read from ``training/reference/variants/summary.json`` (``training.studies.collect``), with the
plan ``training/studies/variants.json`` for the seeds each variant is meant to have: a variant
still training shows "n of m planned", never a count assumed here.  One table per task and
schedule; then the reading, each finding linked to the claim that decides it.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.claims.variants import GOAL, POOLED_SEEDS
from proofs_check.report.doc import Bullets, Num, Para, Ref, Section, Table, num
from theory.io.inputs import ANY
from theory.paper_data import LENGTH_850, TRAINING_LENGTH
from theory.statistics import binomial_interval, reaches
from training.analysis.break_prediction import THRESHOLD
from training.run.presets import PRESETS

from .common import (
    LENGTH_BLOCK,
    VALUE,
    accuracy,
    at_length,
    breaks_text,
    claim,
    counts,
    counts_text,
    figure,
    joined,
    load,
    not_shipped,
    span,
    stat_num,
    tokens,
)

ANCHOR, TITLE = "study-variants", "The variants study: what makes the letter task extrapolate"
SUMMARY = "training/reference/variants/summary.json"
SEEDS_SUMMARY = "training/reference/seeds/summary.json"
PLAN = "training/studies/variants.json"
COMMAND = "python -m training study training/studies/variants.json --collect"
CLAIMS_SOURCE = "proofs_check/claims/variants.py"
PRESETS_SOURCE = "training/run/presets.py"
THRESHOLD_SOURCE = "training/analysis/break_prediction.py"
TASKS = ("letter", "number")

TASK_RESULT = {
    "length": LENGTH_BLOCK,
    "long?": LENGTH_BLOCK,
    "breaks?": {"measured": {"*": VALUE}},
    "break_after_learning?": {"*": {"all": {"learned_at": VALUE, "break": VALUE}}},
}
SHAPE = {
    "variants": {"*": {"preset": str, "set": [str], "group?": str}},
    "results": {"*": {"*": TASK_RESULT}},
    "long?": ANY,
}
PLAN_SHAPE = {"seeds": [int], "variants": {"*": {"seeds?": {"*": [int]}}}}
SEEDS_SHAPE = {"results": {"paper": {"letter": {"breaks": {"measured": {"*": VALUE}}}}}}
# the words for each recipe key a variant sets (its values, where they matter, come from the file)
KEY_WORDS = {
    "model.query_scale=log": "fixed query scale",
    "model.query_scale=learned": "learned query scale",
    "model.rope_fraction": "p-RoPE, fraction",
    "model.rope_base": "RoPE base",
    "model.nope_from_layer": "NoPE from layer",
    "data.extra_target_max": "extra target window up to",
}


def section(root: Path) -> Section:
    summary = load(root, SUMMARY, SHAPE)
    if summary is None:
        return not_shipped(ANCHOR, TITLE, SUMMARY, COMMAND)
    plan = load(root, PLAN, PLAN_SHAPE)
    rows = [
        (name, task)
        for name in summary["variants"]
        for task in TASKS
        if "length" in summary["results"].get(name, {}).get(task, {})
    ]
    lengths = summary["results"][rows[0][0]][rows[0][1]]["length"]["lengths"]
    shown = [n for n in (TRAINING_LENGTH, LENGTH_850[0], max(lengths)) if n in lengths]
    long = summary.get("long") or {}
    src = SUMMARY
    blocks = [
        Para(
            [
                "The paper names training that favours symbolic solutions as future work (",
                Ref("Section 3.6"),
                "). This study trains the candidate fixes, each a change of one recipe key: NoPE, p-RoPE, a "
                "larger RoPE base, a random extra target window in training (a change of data, reported apart), "
                "and "
                "a query scale that grows like the log of the position, fixed (",
                Ref("log(i+1)/log(17)"),
                ") or learned per head (",
                Ref("s_h log(i+1)"),
                ", Scalable-Softmax). Each cell is the mean over seeds with its Student t interval, at ",
                *joined([[Num(tokens(n), src)] for n in shown]),
                " tokens",
                *_long_said(long, src),
                ".",
            ]
        )
    ]
    for (task, steps), members in _groups(summary, rows).items():
        blocks.append(Para([f"The {task} task, ", Num(tokens(steps[0]), steps[1]), " training steps:"]))
        blocks.append(
            Table(
                [
                    "variant",
                    "seeds",
                    "training length",
                    "paper's length",
                    "longest length",
                    "long stage",
                    "measured break per seed",
                ],
                [_row(summary, plan, name, task, shown, src) for name in members],
            )
        )
    findings = [
        _scale_finding(summary, src),
        _three_thousand(summary, src),
        _six_thousand(summary, plan, src),
        _number_finding(summary, src),
        _other_fixes(summary, src),
        _window_finding(root, summary, src),
    ]
    blocks.append(Bullets([p for p in findings if p is not None]))
    blocks.append(
        figure(
            root,
            "fig_variants",
            [
                "Accuracy against length for every variant, the median over seeds "
                "with the band from the lowest to the highest seed."
            ],
        )
    )
    return Section(ANCHOR, TITLE, blocks)


def _long_said(long: dict, src: str) -> list:
    if not long.get("lengths"):
        return []
    return [
        "; the long stage evaluates ",
        num(long["count"], "d", src),
        " inputs per seed at ",
        *joined([[Num(tokens(n), src)] for n in long["lengths"]]),
        " tokens",
    ]


def _steps(spec: dict) -> tuple[int, str]:
    """The variant's training steps and the file that says so: its recipe keys, else its preset."""
    for key in spec["set"]:
        if key.startswith("steps="):
            return int(key.removeprefix("steps=")), SUMMARY
    return PRESETS[spec["preset"]].steps, PRESETS_SOURCE


def _groups(summary: dict, rows: list) -> dict:
    groups = {}
    for name, task in rows:
        groups.setdefault((task, _steps(summary["variants"][name])), []).append(name)
    return groups


def _label(name: str, spec: dict, src: str) -> list:
    """The variant's name and, in words, what its recipe keys change (values from the file)."""
    said = []
    for key in spec["set"]:
        if key in KEY_WORDS:
            said.append([KEY_WORDS[key]])
        elif key == "model.nope_from_layer=0":
            said.append(["NoPE in every layer"])
        elif key.split("=")[0] in KEY_WORDS:
            value = key.split("=")[1]
            shown = f"{int(value):,}" if value.isdecimal() else value
            said.append([KEY_WORDS[key.split("=")[0]] + " ", Num(shown, src)])
    words = joined(said) if said else ["the paper's RoPE"]
    return [Ref(name), ": ", *words] + ([" (data)"] if spec.get("group") == "data" else [])


def planned_seeds(plan: dict | None, name: str, task: str) -> list | None:
    if plan is None:
        return None
    return plan["variants"].get(name, {}).get("seeds", {}).get(task, plan["seeds"])


def _seeds_cell(summary: dict, plan: dict | None, name: str, task: str, src: str) -> list:
    measured = {s for stat in summary["results"][name][task]["length"]["accuracy"] for s in stat["values"]}
    planned = planned_seeds(plan, name, task)
    if planned is not None and len(planned) > len(measured):
        return [num(len(measured), "d", src), " of ", num(len(planned), "d", PLAN), " planned"]
    return [num(len(measured), "d", src)]


def _long_cell(result: dict, src: str) -> list:
    long = result.get("long")
    if not long:
        return ["not run"]
    n = long["lengths"][-1]
    return [stat_num(at_length(long, n), src), ": ", Num(counts_text(counts(long, n)), src)]


def _row(summary: dict, plan, name: str, task: str, shown: list, src: str) -> list:
    result = summary["results"][name][task]
    breaks = (result.get("breaks") or {}).get("measured")
    return [
        Para(_label(name, summary["variants"][name], src)),
        Para(_seeds_cell(summary, plan, name, task, src)),
        *(Para([stat_num(at_length(result["length"], n), src)]) for n in shown),
        Para(_long_cell(result, src)),
        Para([Num(breaks_text(breaks), src)] if breaks else ["not measured"]),
    ]


def _scaled(summary: dict, task: str) -> list:
    """The variants of ``task`` trained with a query scale (either form)."""
    return [
        name
        for name, spec in summary["variants"].items()
        if any(k.startswith("model.query_scale=") for k in spec["set"])
        and task in summary["results"].get(name, {})
    ]


def _scale_finding(summary: dict, src: str) -> Para | None:
    scaled = _scaled(summary, "letter")
    breaks = {
        f"{n}/{s}": b
        for n in scaled
        for s, b in summary["results"][n]["letter"].get("breaks", {}).get("measured", {}).items()
    }
    if not scaled or not breaks:
        return None
    unbroken = sum(b is None for b in breaks.values())
    longest = max(summary["results"][scaled[0]]["letter"]["length"]["lengths"])
    parts = [
        "A query scale that grows like the log of the position removes the letter task's break: ",
        num(unbroken, "d", src),
        " of ",
        num(len(breaks), "d", src),
        " letter models trained with it stay at or above ",
        num(THRESHOLD, "g", THRESHOLD_SOURCE),
        " at every length up to ",
        Num(tokens(longest), src),
        " tokens",
    ]
    baseline = summary["results"].get("paper-3k", {}).get("letter")
    if baseline and baseline.get("breaks"):
        parts += [
            ", where the paper's RoPE on the same schedule (",
            Ref("paper-3k"),
            ") scores ",
            stat_num(at_length(baseline["length"], longest), src),
            " there and breaks at ",
            Num(span(baseline["breaks"]["measured"].values()), src),
            " tokens",
        ]
    return Para(parts + ["."])


def _per_seed_counts(block: dict, length: int, src: str) -> list:
    """'seed 1: 98/100 (Wilson interval [0.930, 0.994])' for each seed below the goal."""
    found = counts(block, length)
    below = {s: kn for s, kn in found.items() if not reaches(kn[0] / kn[1], GOAL)}
    items = []
    for seed in sorted(below, key=int):
        k, n = below[seed]
        low, high = binomial_interval(k, n)
        missed = [
            h
            for h, column in block.get("by_hop", {}).items()
            if (column[block["lengths"].index(length)]["values"].get(seed) or 0) < 1
        ]
        items.append(
            [
                "seed ",
                Num(seed, src),
                " at ",
                Num(f"{k}/{n}", src),
                " (Wilson interval [",
                Num(f"{low:.3f}, {high:.3f}", src),
                "]",
                *_missed(missed, src),
                ")",
            ]
        )
    return items


def _missed(hops: list, src: str) -> list:
    """', its misses all k-hop inputs' where one hop count holds every miss."""
    return [", its misses all ", Num(hops[0], src), "-hop inputs"] if len(hops) == 1 else []


def _three_thousand(summary: dict, src: str) -> Para | None:
    """V-scale and V-learned-scale: every seed at the goal on the shorter schedule?"""
    parts = []
    for name, claim_id in (("log-scale-3k", "V-scale"), ("learned-scale-3k", "V-learned-scale")):
        block = summary["results"].get(name, {}).get("letter", {}).get("length")
        if not block or not block.get("n_per_length"):
            continue
        longest = max(block["lengths"])
        below = _per_seed_counts(block, longest, src)
        parts += [
            "; " if parts else "",
            Ref(name),
            " (",
            claim(claim_id),
            "): ",
            *(["below the goal in "] + joined(below) if below else ["every seed at the goal"]),
        ]
    if not parts:
        return None
    return Para(
        [
            "The goal the study set, at least ",
            num(GOAL, "g", CLAIMS_SOURCE),
            " at the longest length in every seed, on the shorter schedule: ",
            *parts,
            ".",
        ]
    )


def _six_thousand(summary: dict, plan, src: str) -> Para | None:
    """V-scale-6k at the longest grid length, V-scale-6k-20k in the long stage."""
    result = summary["results"].get("log-scale", {}).get("letter")
    if not result or not result["length"].get("n_per_length"):
        return None
    longest = max(result["length"]["lengths"])
    found = counts(result["length"], longest)
    parts = [
        "On the paper's schedule the fixed scale (",
        Ref("log-scale"),
        ", ",
        claim("V-scale-6k"),
        ") answers ",
        Num(counts_text(found), src),
        " inputs at ",
        Num(tokens(longest), src),
        " tokens",
    ]
    if result.get("long"):
        n = result["long"]["lengths"][-1]
        planned = planned_seeds(plan, "log-scale", "letter") or []
        parts += [
            "; at ",
            Num(tokens(n), src),
            " tokens (",
            claim("V-scale-6k-20k"),
            "), ",
            Num(counts_text(counts(result["long"], n)), src),
            ", over ",
            num(len(counts(result["long"], n)), "d", src),
            " seeds",
        ]
        if len(planned) > len(counts(result["long"], n)):
            parts += [
                " of the ",
                num(len(planned), "d", PLAN),
                " the plan lists; its rule pools ",
                num(POOLED_SEEDS, "d", CLAIMS_SOURCE),
                " seeds, since one miss in a seed's inputs cannot be told from the goal",
            ]
    return Para(parts + ["."])


def _number_finding(summary: dict, src: str) -> Para | None:
    """V-scale-number: the number task still trains under the scale, and breaks as early."""
    scaled = _scaled(summary, "number")
    base = summary["results"].get("paper", {}).get("number")
    if not scaled or not base or not base.get("breaks"):
        return None
    items = [
        [Ref(n), " at ", Num(breaks_text(summary["results"][n]["number"]["breaks"]["measured"]), src)]
        for n in scaled
        if summary["results"][n]["number"].get("breaks")
    ]
    trained = [
        [
            Ref(n),
            " ",
            Num(
                ", ".join(
                    accuracy(v)
                    for _, v in sorted(
                        at_length(summary["results"][n]["number"]["length"], TRAINING_LENGTH)[
                            "values"
                        ].items(),
                        key=lambda kv: int(kv[0]),
                    )
                ),
                src,
            ),
        ]
        for n in scaled
    ]
    return Para(
        [
            "On the number task the scale does not help. It still trains (",
            claim("V-scale-number"),
            "; accuracy at the training length ",
            *joined(trained),
            ") but breaks as early as the paper's RoPE (",
            Num(breaks_text(base["breaks"]["measured"]), src),
            " tokens): ",
            *joined(items),
            ". The discrepancy theory predicts this: the task needs positional heads, and a positional head's gap "
            "decays with the length whatever its temperature (",
            Ref("Theorem 3.2"),
            ", corrected): the scale cures dilution, not rotation.",
        ]
    )


def _other_fixes(summary: dict, src: str) -> Para | None:
    """NoPE, p-RoPE and a larger base (no scale, no data change): do they move the break?"""
    others = [
        n
        for n, spec in summary["variants"].items()
        if spec["set"]
        and spec.get("group") != "data"
        and not any(k.startswith("model.query_scale=") for k in spec["set"])
        and set(spec["set"]) - {k for k in spec["set"] if k.startswith("steps=")}
        and (summary["results"].get(n, {}).get("letter") or {}).get("breaks")
    ]
    if not others:
        return None
    items = [
        [Ref(n), ": ", Num(breaks_text(summary["results"][n]["letter"]["breaks"]["measured"]), src)]
        for n in others
    ]
    base = (summary["results"].get("paper-3k", {}).get("letter") or {}).get("breaks")
    like = (
        [
            ", like the paper's RoPE on the same schedule (",
            Ref("paper-3k"),
            " at ",
            Num(breaks_text(base["measured"]), src),
            ")",
        ]
        if base
        else []
    )
    return Para(
        [
            "Removing rotation, keeping some planes still or slowing them does not help. Without the scale the "
            "measured breaks are ",
            *joined(items),
            " tokens",
            *like,
            ".",
        ]
    )


def _window_finding(root: Path, summary: dict, src: str) -> Para | None:
    """V-window: the extra window moves the break after learning; seeds that never learned are named."""
    result = summary["results"].get("extra-window", {}).get("letter", {})
    after = result.get("break_after_learning")
    seeds = load(root, SEEDS_SUMMARY, SEEDS_SHAPE)
    if not after or seeds is None:
        return None
    baseline = [
        b for b in seeds["results"]["paper"]["letter"]["breaks"]["measured"].values() if b is not None
    ]
    late = {
        s: r["all"]["learned_at"]
        for s, r in after.items()
        if r["all"]["learned_at"] not in (None, TRAINING_LENGTH)
    }
    parts = [
        "Training on longer inputs (",
        Ref("extra-window"),
        ", ",
        claim("V-window"),
        ") moves the break later: after the task is learned, its seeds break at ",
        Num(breaks_text({s: r["all"]["break"] for s, r in after.items()}), src),
        " tokens, against at most ",
        Num(tokens(max(baseline)), SEEDS_SUMMARY),
        " for the paper's recipe in the seeds study",
    ]
    if late:
        parts += [
            ". Seeds ",
            Num(", ".join(sorted(late, key=int)), src),
            " reach the level only at ",
            Num(breaks_text(late), src),
            " tokens, not at the training length",
        ]
    return Para(parts + ["."])

"""Trained claims over seeds: each seed checked on its own, then one status by a stated rule.

The rule (``STATUS_RULE``, in every trained claim's evidence): with n seeds whose data is
complete, the claim is verified when its single-run check holds in at least ceil(0.8 n) of
them, refuted when it fails in at least ceil(0.8 n), undecided otherwise; no data at all is
undecided.  That is 4 of 5 for the study's five seeds, written as a fraction so that it means
the same while seeds are still arriving: one odd seed in five is tolerated (seeds do differ:
at total length 257 the shipped letter run scores 0.665 where a prototype with the same recipe
scored 0.915), but a status needs a clear majority, and below five seeds a single dissent is
already more than a fifth, so 3 of 3 and 4 of 4 are asked.  A seed whose own check is
undecided counts for neither side.  With n < 3 there is no spread to speak of: the status is
that of the available seeds (with one seed, the single-run verdict the registry records), and
the summary and evidence say "too few seeds for a spread".

Number and letter runs are paired by seed (the study trains both tasks with each seed).  A
``--weights`` run is one run, not a seed study: a claim that reads it is decided on that run
alone (n = 1, "1 run given by --weights", no interval and no spread), and a task the
``--weights`` runs do not cover is taken from ONE shipped seed, the first in seed order that
has the data (seed 0, the shipped reference run, when it does); the evidence's ``paired`` names
what was paired with what.
"""

from __future__ import annotations

import functools

from proofs_check.registry import Outcome, claim
from proofs_check.verdicts import HYPOTHESIS_WORDS, WORDS

from .seeds import seed_number, shipped_folder
from .trained_sources import RUN_LABEL, TASKS, measured, run_of, source_label, source_of

MAJORITY = (4, 5)  # a status needs at least 4/5 of the seeds
SPREAD_MIN = 3  # fewer seeds than this show no spread


def needed(n: int) -> int:
    """ceil(0.8 n) in integers: the seeds one status needs."""
    return -(-MAJORITY[0] * n // MAJORITY[1])


_SHARE = f"ceil({MAJORITY[0] / MAJORITY[1]:g} n)"
STATUS_RULE = (
    "over seeds (number and letter paired by seed; with a --weights run: that run alone, n = 1, the other "
    "task from its first shipped seed with data): "
    f"with n seeds whose data is complete, verified when the single-run check holds in >= {_SHARE} "
    f"seeds, refuted when it fails in >= {_SHARE}, undecided otherwise ("
    + ", ".join(f"{needed(n)} of {n}" for n in range(MAJORITY[1], 0, -1))
    + f"); a seed whose check is undecided counts for neither; with n < {SPREAD_MIN} the status is that of "
    "the available seeds, flagged 'too few seeds for a spread'; no data: undecided"
)


def status_over_seeds(statuses) -> str:
    """The status of a claim whose seeds came out as ``statuses``, by STATUS_RULE."""
    statuses = list(statuses)
    if not statuses:
        return "undecided"
    for status in ("verified", "refuted"):
        if statuses.count(status) >= needed(len(statuses)):
            return status
    return "undecided"


def seed_units(tasks, part: str, options):
    """([(label, {task: data})] for the seeds every task has data of, in seed order;
    {label: {task: why}} for the seeds left out).  With a ``--weights`` run: one unit at most
    (``weights_unit``)."""
    members = {task: measured(task, part, options) for task in tasks}
    if any(run_of(task, options) is not None for task in tasks):
        return weights_unit(tasks, members, options)
    labels = sorted({label for task in tasks for label in members[task]}, key=seed_number)
    units, left_out = [], {}
    for label in labels:
        picked = {
            task: members[task].get(label, (None, f"no {label} in the {task} task's study")) for task in tasks
        }
        missing = {task: why for task, (data, why) in picked.items() if data is None}
        if missing:
            left_out[label] = missing
        else:
            units.append((label, {task: data for task, (data, _) in picked.items()}))
    return units, left_out


def weights_unit(tasks, members: dict, options):
    """The one unit of a check that reads a ``--weights`` run: that run for its task, and for a
    task without one its first shipped seed (in seed order) with data; (units, left_out) as
    ``seed_units``.  Its label says what was paired: "--weights run + shipped seed-0"."""
    picked, shipped_label = {}, None
    for task in tasks:
        if run_of(task, options) is not None:
            picked[task] = members[task][RUN_LABEL]
            continue
        found = [
            (label, entry)
            for label, entry in sorted(members[task].items(), key=lambda kv: seed_number(kv[0]))
            if entry[0] is not None
        ]
        if found:
            shipped_label, picked[task] = found[0]
        else:
            picked[task] = (
                None,
                "no shipped seed has data: "
                + "; ".join(f"{label}: {why}" for label, (_, why) in members[task].items()),
            )
    name = RUN_LABEL if shipped_label is None else f"{RUN_LABEL} + shipped {shipped_label}"
    missing = {task: why for task, (data, why) in picked.items() if data is None}
    if missing:
        return [], {name: missing}
    return [(name, {task: data for task, (data, _) in picked.items()})], {}


def paired(tasks, label: str, options) -> dict:
    """{task: where its data came from} for the unit ``label`` of a ``--weights`` check."""
    shipped = label.rpartition("shipped ")[2] if "shipped " in label else None

    def source(task: str) -> str:
        if run_of(task, options) is not None:
            return f"--weights {run_of(task, options)}"
        if shipped is None:
            return f"no shipped seed with data ({shipped_folder(task)})"
        return f"shipped {shipped} ({shipped_folder(task)}/{shipped})"

    return {task: source(task) for task in tasks}


def _why_none(tasks, left_out: dict) -> str:
    """What is missing when no seed has data for every task: the tasks with no data at all,
    or, when each task has some, the seeds and what each lacks."""
    empty = [task for task in tasks if all(task in miss for miss in left_out.values())]
    if not empty:
        return "no seed has data for every task: " + "; ".join(
            f"{label}: " + ", ".join(f"{task} {why}" for task, why in miss.items())
            for label, miss in left_out.items()
        )
    parts = []
    for task in empty:
        whys = {label: miss[task] for label, miss in left_out.items()}
        if len(set(whys.values())) == 1:
            parts.append(f"{task}: {next(iter(whys.values()))}")
        else:
            parts.append(f"{task}: " + ", ".join(f"{label}: {why}" for label, why in whys.items()))
    return "no measured data: " + "; ".join(parts)


def _aggregate(per_seed: dict, status: str, weights: bool = False) -> dict:
    statuses = [outcome.status for outcome in per_seed.values()]
    n = len(statuses)
    return {
        "status": status,
        "n_seeds": n,
        "holds_in": statuses.count("verified"),
        "fails_in": statuses.count("refuted"),
        "undecided_in": statuses.count("undecided"),
        "needed": needed(n),
        "too_few_seeds_for_a_spread": n < SPREAD_MIN,
        **({"n_runs_given_by_weights": n} if weights else {}),
    }


def _tally(per_seed: dict, aggregate: dict, left_out: dict, pairing: dict | None = None, words=None) -> str:
    """The seeds' results in the claim's own words (``words``: status -> word; an experiment of the
    paper's by default): "5 seeds: reproduced in 3 (seed-0, seed-2, seed-4), not reproduced in 2
    (seed-1, seed-3); a verdict needs the same result in 4 of 5 seeds"."""
    words = WORDS["experiment"] if words is None else words
    n = aggregate["n_seeds"]
    if pairing is not None:  # one run is not a seed study: no count over seeds, no spread
        (outcome,) = per_seed.values()
        return (
            f"1 run given by --weights ({'; '.join(f'{t}: {w}' for t, w in pairing.items())}): "
            f"{words[outcome.status]}; n = 1: no interval, no spread"
        )
    groups = [
        f"{words[status]} in {len(labels)} ({', '.join(labels)})"
        for status in ("verified", "refuted", "undecided")
        if (labels := [label for label, o in per_seed.items() if o.status == status])
    ]
    text = (
        f"{n} seed{'s' if n != 1 else ''}: {', '.join(groups)}; a verdict needs the same result in "
        f"{aggregate['needed']} of {n} seed{'s' if n != 1 else ''}"
    )
    if aggregate["too_few_seeds_for_a_spread"]:
        text += f"; n = {n}: too few seeds for a spread"
    if left_out:
        text += f"; left out: {_left_out_said(left_out)}"
    return text


def _left_out_said(left_out: dict) -> str:
    """ "seed-1, seed-2 (pending)": the seeds left out and why, in a word each."""

    def kind(whys):
        words = {why.split(":")[0] for why in whys.values()}
        return words.pop() if len(words) == 1 and words <= {"pending", "missing"} else "no data"

    kinds = {label: kind(whys) for label, whys in left_out.items()}
    if len(set(kinds.values())) == 1:
        return f"{', '.join(kinds)} ({next(iter(kinds.values()))}; see evidence)"
    return ", ".join(f"{label} ({k})" for label, k in kinds.items()) + " (see evidence)"


def verdict(check, tasks, part: str, options, over=None, origin: str | None = None) -> Outcome:
    """``check`` ({task: data} -> Outcome) on every seed, then STATUS_RULE; ``over`` (optional,
    {label: {task: data}} -> (evidence, summary)) adds what only the seeds together show; the
    seeds' results are said in the words of an experiment of ``origin`` (``verdicts``)."""
    units, left_out = seed_units(tasks, part, options)
    weights = any(run_of(task, options) is not None for task in tasks)
    if not units:
        evidence = {
            "status_rule": STATUS_RULE,
            "aggregate": _aggregate({}, "undecided"),
            "left_out": left_out,
        }
        if weights:
            evidence["paired"] = paired(tasks, next(iter(left_out)), options)
        return Outcome("undecided", _why_none(tasks, left_out), evidence)
    per_seed = {label: check(data) for label, data in units}
    status = status_over_seeds(o.status for o in per_seed.values())
    pairing = paired(tasks, units[0][0], options) if weights else None
    aggregate = _aggregate(per_seed, status, weights)
    first_label, first = next(iter(per_seed.items()))
    rule = first.evidence.get("rule")
    seeds = {
        label: {
            "status": o.status,
            "summary": o.summary,
            "evidence": {k: v for k, v in o.evidence.items() if not (k == "rule" and v == rule)},
        }
        for label, o in per_seed.items()
    }
    evidence = {
        "status_rule": STATUS_RULE,
        "rule": rule,
        "aggregate": aggregate,
        "seeds": seeds,
        "left_out": left_out,
        **({"paired": pairing} if weights else {}),
    }
    words = HYPOTHESIS_WORDS if origin == "package" else WORDS["experiment"]
    summary = f"{_tally(per_seed, aggregate, left_out, pairing, words)}; {first_label}: {first.summary}"
    if over is not None:
        evidence["over_seeds"], said = over(dict(units))
        summary = f"{said}; {summary}"
    corrected = next((o.corrected for o in per_seed.values() if o.corrected), None)
    return Outcome(status, summary, evidence, corrected=None if status == "verified" else corrected)


def _with_sources(outcome: Outcome, options, tasks) -> Outcome:
    """Name the sources in the evidence and at the end of the summary."""
    outcome.evidence["source"] = {task: source_of(task, options) for task in tasks}
    pairing = outcome.evidence.get("paired", {})  # with a --weights run: the one shipped seed used
    labels = {
        task: pairing[task].split(" (")[0]
        if task in pairing and run_of(task, options) is None
        else source_label(task, options)
        for task in tasks
    }
    same = set(labels.values())
    said = same.pop() if len(same) == 1 else "; ".join(f"{t}: {label}" for t, label in labels.items())
    outcome.summary = f"{outcome.summary} [data: {said}]"
    return outcome


def trained_claim(
    claim_id: str,
    statement: str,
    source: str,
    recorded: str,
    part: str,
    tasks=TASKS,
    over=None,
    origin: str | None = None,
):
    """Register ``check`` ({task: data of ``part``} -> Outcome, one seed) as claim ``claim_id``,
    checked over every seed by STATUS_RULE and naming its sources; returns ``check`` itself."""

    def register(check):
        @functools.wraps(check)
        def over_every_seed(options):
            return _with_sources(verdict(check, tasks, part, options, over, origin), options, tasks)

        claim(claim_id, statement, source, recorded, kind="experiment", origin=origin)(over_every_seed)
        return check

    return register

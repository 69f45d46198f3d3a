"""What ``study PLAN --collect`` writes into the plan's ship folder, and the rule that keeps
shipped results from being replaced by emptier ones.

The ship folder is tracked in git and holds results that took days to compute; the runs
they came from (``root``) are usually NOT there (a fresh clone has the shipped files only).
So a collect that finds fewer results than the summary already records must not replace it
unasked: ``check_replacement`` compares each member's finished stages in the new summary with
those in the shipped one and refuses (``SummaryKept``, one line, exit 2, nothing written)
when any member would lose one -- which also covers "fewer complete members" and "a member
the old summary had complete is dropped".  ``--overwrite-summary`` replaces it anyway.

Member files are copied (``ship_member``) only after that check passed, only from files the
member has (a shipped file is never deleted), and a file whose bytes are already there is not
rewritten (its mtime and git's index stay as they are).  The same holds for the summary and
``best.json`` (``write_json_if_changed``), where "already there" forgives float noise: a value
within a relative ``FLOAT_NOISE`` of the shipped one keeps the shipped bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from theory.io.cli import UsageError
from theory.io.files import atomic_write_bytes, atomic_write_text
from theory.io.inputs import InputError
from theory.statistics import ACCURACY_TOLERANCE, reaches
from training.run.checks import RunError
from training.run.hf_files import TOKENIZER_FILES

from .member_files import BEST_SHAPE, SUMMARY_SHAPE, read_json
from .plan import Member, Plan
from .runner import OUTPUTS, run_folder

OVERWRITE_FLAG = "--overwrite-summary"  # the cli adds it; the refusal below names it

__all__ = [
    "SummaryKept",
    "check_replacement",
    "ship_member",
    "ship_best",
    "best_choice",
    "write_best",
    "best_member",
    "check_best_files",
    "write_json_if_changed",
    "same_up_to_float_noise",
    "FLOAT_NOISE",
    "SMALL_FILES",
    "RUN_FILES",
]

SMALL_FILES = (
    "train.json",
    "test_accuracy.json",
    "length_generalisation.json",
    "dilution.json",
    "analysis.json",
    "length_long.json",
    "length_rescaled.json",
    "dilution_rescaled.json",
)
# a best run is shipped loadable by Hugging Face tools as well: its tokenizer files (training.run.hf_files)
RUN_FILES = (
    "config.json",
    "model.safetensors",
    "vocab.json",
    "recipe.json",
    "metrics.jsonl",
    *TOKENIZER_FILES,
)


class SummaryKept(UsageError):
    """The collect would replace a shipped summary with one holding fewer results: refused."""


def _names(ids: list, most: int = 3) -> str:
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


def check_replacement(plan: Plan, stages: dict, expected: dict, overwrite: bool) -> None:
    """Refuse (SummaryKept) to replace ``<ship>/summary.json`` when a member it records would
    lose a finished stage.  ``stages``: member id -> the stages its folder has now;
    ``expected``: member id -> the stages the plan gives it (what "complete" means)."""
    path = plan.ship / "summary.json"
    if overwrite:
        return
    try:
        old = read_json(path, SUMMARY_SHAPE, "shipped summary")
    except InputError as error:
        raise SummaryKept(f"{error}; nothing written; pass {OVERWRITE_FLAG} to replace it") from None
    if old is None:
        return
    lost = [m for m, entry in old["members"].items() if not set(entry["stages"]) <= set(stages.get(m, ()))]
    if not lost:
        return
    complete_now = sum(set(expected[m]) <= set(s) for m, s in stages.items())
    complete_old = sum(
        m in expected and set(expected[m]) <= set(entry["stages"]) for m, entry in old["members"].items()
    )
    raise SummaryKept(
        f"found {complete_now} of {len(expected)} members complete under {plan.root}; the shipped "
        f"summary {path} has {complete_old}, and {len(lost)} member(s) would lose results "
        f"({_names(lost)}); nothing written; pass {OVERWRITE_FLAG} to replace it"
    )


def _copy_if_changed(source: Path, target: Path) -> None:
    data = source.read_bytes()
    if target.is_file() and not target.is_symlink() and target.read_bytes() == data:
        return  # already shipped: left untouched
    atomic_write_bytes(target, data)


# The shipped summaries' fitted floats (hop_exponent) were made by np.polyfit, whose last bits
# depended on the CPU's BLAS kernel; the fit is now exact (break_prediction.hop_exponent) and
# differs from them by up to ~1e-15 relative.  Rewriting them for that would dirty a fresh
# clone's `git status` on the first collect, so differences this small count as no change;
# 1e-12 is far below any digit a claim or figure reads.
FLOAT_NOISE = 1e-12


def same_up_to_float_noise(old, new) -> bool:
    """The same JSON value (key order included), floats equal within a relative FLOAT_NOISE."""
    if type(old) is not type(new):  # bool is not int, int is not float: a real change
        return False
    if isinstance(new, dict):
        return list(old) == list(new) and all(same_up_to_float_noise(old[k], new[k]) for k in new)
    if isinstance(new, list):
        return len(old) == len(new) and all(map(same_up_to_float_noise, old, new))
    if isinstance(new, float):
        return (
            old == new
            or (math.isnan(old) and math.isnan(new))
            or abs(old - new) <= FLOAT_NOISE * max(abs(old), abs(new))
        )
    return old == new


def write_json_if_changed(path: Path, document, **dump_kwargs) -> bool:
    """Write ``document`` as JSON to ``path`` unless the regular file there already holds it up to
    float noise (``same_up_to_float_noise``); True when written."""
    text = json.dumps(document, **dump_kwargs)
    if path.is_file() and not path.is_symlink():  # a FIFO is never opened; a link is written through
        try:
            old = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            old = None  # unreadable or damaged: replaced (check_replacement already allowed it)
        if old is not None and same_up_to_float_noise(old, json.loads(text)):
            return False
    atomic_write_text(path, text)
    return True


def ship_member(plan: Plan, member: Member, metrics: Path) -> None:
    """Copy the member's small files (and its training log, once training is done) beside the summary."""
    source, target = plan.folder(member), plan.ship / member.id
    files = [(source / name, target / name) for name in SMALL_FILES]
    if (source / OUTPUTS["train"]).is_file():  # a run still training ships nothing of its log
        files.append((metrics, target / "metrics.jsonl"))
    for src, dst in files:
        if src.is_file():
            _copy_if_changed(src, dst)


def _first_best(rows: list, value):
    """The first of ``rows`` whose ``value`` reaches the highest (``theory.statistics.reaches``):
    two accuracies that differ by float32 rounding only (98/100 stored as 0.9799999952) are the
    same count, and the first listed wins the tie."""
    top = max(value(row) for row in rows)
    return next(row for row in rows if reaches(value(row), top))


def best_member(summary: dict, task: str) -> tuple | None:
    """(mean, variant, seed, seed's accuracy) of ``task``'s best member: the variant with the highest mean accuracy
    at the longest evaluated length, and its seed with the highest accuracy there (the first
    listed on a tie, ``_first_best``); None while no member of the task has that length."""
    scored = []
    for variant, tasks in summary.items():
        cells = tasks.get(task, {}).get("length", {}).get("accuracy")
        if cells and cells[-1].get("n"):
            scored.append((cells[-1]["mean"], variant, cells[-1]["values"]))
    if not scored:
        return None
    mean, variant, values = _first_best(scored, lambda row: row[0])
    seed = _first_best(list(values), lambda s: values[s])
    return mean, variant, seed, values[seed]


def _best_target(plan: Plan, task: str) -> Path:
    return plan.ship / f"best-{task}"


def check_best_files(plan: Plan) -> None:
    """Validate the shipped ``best.json`` files before any work (``ship_best`` reads them)."""
    if plan.ship_best:
        for task in plan.tasks:
            read_json(_best_target(plan, task) / "best.json", BEST_SHAPE, "shipped best member")


def best_choice(plan: Plan, summary: dict, task: str) -> dict | None:
    """``task``'s best member (``best_member``) as ``best.json`` records it, with its run folder
    under ``"run"``; None while there is none.  Reads only, so a refusal costs nothing: without
    that run's weights (a clone has the shipped files, not the runs) the choice stands only if
    ``<ship>/best-<task>/`` already holds the same member; otherwise a ``RunError`` names it."""
    best = best_member(summary, task)
    if best is None:
        return None
    mean, variant, seed, accuracy = best
    member = Member(variant, task, int(seed))
    run, target = run_folder(plan, member), _best_target(plan, task)
    if not (run / "model.safetensors").is_file():  # e.g. collected on a clone, whose runs are not there
        shipped = read_json(target / "best.json", BEST_SHAPE, "shipped best member")
        if (
            not shipped or shipped["member"] != member.id
        ):  # never pair one member's best.json with another's weights
            raise RunError(
                f"the best {task} member is now {member.id}, but {run} holds no model.safetensors to ship "
                f"(shipped: {shipped['member'] if shipped else 'none'}); run that member's training, "
                f"then collect again"
            )
    return {
        "member": member.id,
        "length": plan.evaluate["lengths"][-1],
        "accuracy": accuracy,
        "variant_mean": mean,
        "rule": f"highest mean accuracy over seeds at the longest length, then that variant's best seed "
        f"(equal within {ACCURACY_TOLERANCE:g}; the first listed on a tie)",
        "run": run,
    }


def write_best(plan: Plan, task: str, choice: dict | None) -> dict | None:
    """Copy the chosen run (``best_choice``) to ``<ship>/best-<task>/`` (an ``evaluate --run``
    folder: weights, config, vocabulary, log) and write its ``best.json``; returns what it records."""
    if choice is None:
        return None
    record = {k: v for k, v in choice.items() if k != "run"}
    target = _best_target(plan, task)
    for name in RUN_FILES:
        if (choice["run"] / name).is_file():
            _copy_if_changed(choice["run"] / name, target / name)
    write_json_if_changed(target / "best.json", record, indent=1)
    return record


def ship_best(plan: Plan, summary: dict, task: str) -> dict | None:
    """``best_choice`` then ``write_best``."""
    return write_best(plan, task, best_choice(plan, summary, task))

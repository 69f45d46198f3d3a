"""A study's seed-batched training (``study --batch-seeds``), apart from the one-by-one runner.

The unfinished members of one variant and task, which differ only in seed, are trained by one
``train --seeds`` process (``training.run.batched_loop``: each member's run folder is its
single run's), its log in the first member's ``logs/train.log``; each member's ``train.json``
records the batch, and every later stage runs per member as before (``training.studies.runner``).
A group is batched only when its recipe can be and its members are alike (all fresh, or all with
checkpoints); the others train one by one.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from theory.io.files import atomic_write_json
from training.run.checks import RunError
from training.run.lock import LockHeld, RunLock

from .plan import Member, Plan
from .runner import (
    OUTPUTS,
    MemberFailed,
    check_member_recipe,
    has_checkpoint,
    run_folder,
    run_stage,
    train_summary,
    training_stage,
)

__all__ = ["seed_groups", "train_group", "train_seed_groups"]


def seed_groups(plan: Plan, members: list[Member]) -> list[list[Member]]:
    """The groups of two or more ``members`` that one ``train --seeds`` process can train (module doc)."""
    from training.run.batched_loop import unsupported
    from training.run.start import model_config

    groups: dict = {}
    for member in members:
        if member.id not in plan.reuse and not (plan.folder(member) / OUTPUTS["train"]).exists():
            groups.setdefault((member.variant, member.task), []).append(member)
    out = []
    for (variant, task), group in groups.items():
        recipe = plan.recipes[variant]
        if unsupported(recipe, model_config(task, recipe, variant)):
            continue
        if len(group) > 1 and len({has_checkpoint(run_folder(plan, m)) for m in group}) == 1:
            out.append(group)
    return out


def train_group(plan: Plan, group: list[Member], threads: int = 1) -> dict:
    """Train ``group`` (one variant and task) in one ``train --seeds`` process, holding every member's
    lock; writes each member's ``train.json``.  Returns {member id: "done" | "skipped"} (a member
    another process holds leaves the whole group to the one-by-one path) or raises MemberFailed."""
    first, variant = group[0], plan.variants[group[0].variant]
    pattern = str(plan.root / first.variant / first.task) + "/seed-{seed}/run"
    if [Path(pattern.replace("{seed}", str(m.seed))) for m in group] != [run_folder(plan, m) for m in group]:
        return {m.id: "skipped" for m in group}  # a root whose path the pattern cannot name: one by one
    argv = training_stage(
        "train",
        "--task",
        first.task,
        "--out",
        pattern,
        "--preset",
        variant["preset"],
        "--seeds",
        ",".join(str(m.seed) for m in group),
        "--no-progress",
    )
    for override in variant["set"]:
        argv += ["--set", override]
    if has_checkpoint(run_folder(plan, first)):
        argv.append("--resume")
    try:
        with contextlib.ExitStack() as locks:
            for member in group:
                plan.folder(member).mkdir(parents=True, exist_ok=True)
                locks.enter_context(RunLock(plan.folder(member), ".member.lock", "study process"))
                check_member_recipe(plan, member)
            result = run_stage("train", argv, plan.folder(first), threads)
            summary = train_summary(result["stdout"], plan.folder(first))
            by_seed = {m.get("seed"): m for m in summary.get("members", []) if isinstance(m, dict)}
            for member in group:
                atomic_write_json(
                    plan.folder(member) / OUTPUTS["train"],
                    {
                        "summary": by_seed.get(member.seed, {}),
                        "seconds": result["seconds"],
                        "threads": threads,
                        "host": os.uname().nodename,
                        "batched_seeds": [m.seed for m in group],
                        "log": str(plan.folder(first) / "logs" / "train.log"),
                    },
                    indent=1,
                )
    except LockHeld:
        return {m.id: "skipped" for m in group}
    except RunError as error:
        raise MemberFailed(str(error)) from None
    return {m.id: "done" for m in group}


def train_seed_groups(plan: Plan, members: list[Member], threads: int = 1) -> None:
    """Train every seed group of ``members`` (``train_group``); a group that fails leaves its
    members to the one-by-one stages, where each fails (or resumes) on its own, naming its log."""
    for group in seed_groups(plan, members):
        try:
            train_group(plan, group, threads)
        except MemberFailed:
            pass

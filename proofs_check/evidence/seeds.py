"""The shipped multi-seed study, read for the trained claims: the one loader of its JSON.

``python -m training study training/studies/seeds.json --collect`` ships
``training/reference/seeds/``: ``summary.json``, whose ``members`` say which members the plan
has (``<variant>/<task>/seed-<S>``) and which stages each has finished, and one folder per
member with its small result files.  The trained claims read two of them:

* ``analysis.json`` (stage ``analyze``): score dynamics, purity, frequency use, geometry;
* ``length_generalisation.json`` (stage ``lengths``): accuracy per total length and hop count.

(``test_accuracy.json`` and ``metrics.jsonl`` are shipped too, for the figures; no claim
needs them.)  Only the ``paper`` variant is read: the claims are about the paper's recipe.
A member whose stage has not finished yet is *pending* (the study is still running); one
whose stage finished but whose file is unreadable (the loader's message names the field), or
holds another task's results, is *missing*.  Either way it is left out of the verdicts, and
the evidence says why.
"""

from __future__ import annotations

import re
from pathlib import Path

from .shipped import ANALYSIS, LENGTH_CURVE, InputError, read

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "training" / "reference" / "seeds"  # tests point it at a study of their own
VARIANT = "paper"
COLLECT = "python -m training study training/studies/seeds.json --collect"
PARTS = {"analysis": ("analyze", "analysis.json"), "length": ("lengths", "length_generalisation.json")}
SHAPES = {"analysis": ANALYSIS, "length": LENGTH_CURVE}  # what the trained claims read of each
EVERY_SEED = "all seeds"  # the label of a failure that hits every member (no readable summary.json)


def seed_number(label: str) -> int:
    """The S of ``seed-S`` (labels that are not seeds sort first)."""
    match = re.fullmatch(r"seed-(\d+)", label)
    return int(match.group(1)) if match else -1


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it (shorter evidence)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _said(error: InputError, path: Path) -> str:
    """The loader's message without the path it starts with (the evidence names the path)."""
    return str(error).removeprefix(f"{path}: ").removeprefix(f"input: {path} ")


def _summary_members(task: str):
    """({"seed-S": [finished stages]} of ``task``'s paper-variant members, None), or (None, why)."""
    path = SHIPPED / "summary.json"
    try:
        members = read(path, {"members": dict})["members"]
    except InputError as error:
        return None, f"{_shown(path)} unreadable ({_said(error, path)}): run {COLLECT}, or pass --weights"
    found = {}
    for member_id, state in members.items():
        match = re.fullmatch(rf"{VARIANT}/{task}/(seed-\d+)", member_id)
        if match:
            stages = state.get("stages") if isinstance(state, dict) else None
            found[match.group(1)] = stages if isinstance(stages, list) else []
    return dict(sorted(found.items(), key=lambda item: seed_number(item[0]))), None


def _member_file(task: str, label: str, stages: list, part: str):
    """(data, None), or (None, why) for one member's file of ``part``."""
    stage, name = PARTS[part]
    path = SHIPPED / VARIANT / task / label / name
    if stage not in stages:
        return None, f"pending: stage {stage!r} not finished yet (no {_shown(path)})"
    try:
        data = read(path, SHAPES[part])
    except InputError as error:
        return None, f"missing: {_shown(path)} unreadable ({_said(error, path)}); rerun {COLLECT}"
    if data["task"] != task:
        return None, f"missing: {_shown(path)} does not hold {task}-task results"
    return data, None


def shipped_members(task: str, part: str) -> dict:
    """{"seed-S": (data, None) or (None, why)} for every seed of ``task`` in the shipped study,
    in seed order; {EVERY_SEED: (None, why)} when its summary cannot be read or lists none."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {tuple(PARTS)}, got {part!r}")
    stages, why = _summary_members(task)
    if stages is None:
        return {EVERY_SEED: (None, why)}
    if not stages:
        return {EVERY_SEED: (None, f"{_shown(SHIPPED / 'summary.json')} lists no {VARIANT}/{task} member")}
    return {label: _member_file(task, label, done, part) for label, done in stages.items()}


def shipped_folder(task: str) -> str:
    """Where ``task``'s shipped members live, for the evidence."""
    return _shown(SHIPPED / VARIANT / task)

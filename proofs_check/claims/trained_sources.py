"""Where the trained claims' measurements come from, and what is missing when they cannot.

Two sources per task:

* the shipped analysis of the reference runs, ``training/reference/<task>/analysis.json``
  (``python -m training analyze``) and ``length_generalisation.json`` (``python -m training
  evaluate``), written by scripts/analyze_reference.sh;
* a run given with ``python -m proofs_check --weights RUN ...``, analysed afresh (its task read
  from its vocab.json).  Each part needs something else of the run: length generalisation
  only its final weights (RUN/model.safetensors; a shorter grid, 64 sequences per length),
  the analysis (score dynamics, purity, frequency use, geometry; no measured discrepancy)
  every checkpoint ``step-NNNNNN/`` of the run.  The shipped reference runs carry no
  checkpoints, so with them as ``--weights`` only the length claims can be recomputed; the
  others name what is missing.

A task without a ``--weights`` run keeps the shipped JSON, and every trained claim says in
its summary and evidence which source it used.  A ``--weights`` value that is not a run of
one of the tasks, or two runs of one task, is a usage error (``WeightsError``), found
before any claim is checked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[2] / "training" / "reference"
TASKS = ("number", "letter")
QUICK_LENGTHS = (17, 25, 50, 100, 200, 400, 850)
PARTS = ("analysis", "length")
_REQUIRED = ("config.json", "model.safetensors", "vocab.json")
_CACHE: dict = {}  # (task, run or None, part) -> (data or None, missing or None)


class WeightsError(ValueError):
    """A bad ``--weights`` value; the message is one line naming it."""


def _task_of(run: str) -> str:
    from training.tasks.definitions import load_vocab

    path = Path(run)
    if not path.exists():
        raise WeightsError(f"--weights: {run} does not exist")
    if not path.is_dir():
        raise WeightsError(f"--weights: {run} is not a directory (expected a run folder holding "
                           f"{', '.join(_REQUIRED)})")
    missing = [name for name in _REQUIRED if not (path / name).is_file()]
    if missing:
        raise WeightsError(f"--weights: {run} is not a run: missing {', '.join(missing)}")
    for task in TASKS:
        try:
            load_vocab(path / "vocab.json", task)
            return task
        except (OSError, ValueError):
            continue
    raise WeightsError(f"--weights: {path / 'vocab.json'} is the vocabulary of neither task ({' nor '.join(TASKS)})")


def runs_by_task(weights) -> dict[str, str]:
    """{task: run} of the ``--weights`` runs; WeightsError for a path that is not a run of
    a task, or for two runs of the same task."""
    found: dict[str, str] = {}
    for run in weights:
        task = _task_of(str(run))
        if task in found:
            raise WeightsError(f"--weights: {found[task]} and {run} are both {task}-task runs; give at most one "
                               f"run per task")
        found[task] = str(run)
    return found


def source_of(task: str, options) -> str:
    """Where ``task``'s measurements come from under ``options``, in words."""
    run = runs_by_task(options.weights).get(task)
    if run is not None:
        return f"recomputed from {run}"
    shipped = f"shipped JSON in {REFERENCE / task}"
    return f"{shipped} (no {task}-task run among --weights)" if options.weights else shipped


def source_label(task: str, options) -> str:
    """``source_of`` in a few words, for a summary line."""
    run = runs_by_task(options.weights).get(task)
    return "shipped JSON" if run is None else f"--weights {run}"


def measured(task: str, part: str, options):
    """(data, None), or (None, what is missing) for ``part`` ("analysis" or "length") of
    ``task``; computed at most once per process."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    run = runs_by_task(options.weights).get(task)
    key = (task, run, part)
    if key not in _CACHE:
        if run is None:
            _CACHE[key] = _shipped(task, part)
        else:
            _CACHE[key] = (_analyse if part == "analysis" else _length)(task, run)
    return _CACHE[key]


def _shipped(task: str, part: str):
    path = REFERENCE / task / ("analysis.json" if part == "analysis" else "length_generalisation.json")
    try:
        return json.loads(path.read_text()), None
    except (OSError, json.JSONDecodeError) as error:
        return None, (f"{path.relative_to(REFERENCE.parents[1])} unreadable ({type(error).__name__}): "
                      f"run scripts/analyze_reference.sh or pass --weights")


def _analyse(task: str, run: str):
    """Score dynamics need every checkpoint of the run; say so when there are none."""
    from training.analysis.dynamics import analyse_run, checkpoint_dir_of
    from training.model.checkpoints import RunError, list_checkpoints

    try:
        folder = os.path.normpath(checkpoint_dir_of(run))
        if not list_checkpoints(folder):
            return None, (f"the analysis (scores at every checkpoint, then frequency use and geometry at the best) "
                          f"needs the run's checkpoint folders step-NNNNNN/ in {folder}; {run} has none")
        return analyse_run(run, task, "fast", discrepancy=False, progress=False), None
    except RunError as error:
        return None, f"{run}: {error}"


def _length(task: str, run: str):
    """Length generalisation needs only the run's final weights."""
    from training.analysis.evaluate import length_generalisation
    from training.model.checkpoints import RunError, load_model

    try:
        model = load_model(run)
    except RunError as error:
        return None, f"{run}: {error}"
    return length_generalisation(model, task, QUICK_LENGTHS, count=64, run=run, progress=False), None

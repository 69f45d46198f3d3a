"""Where the trained claims' measurements come from, and what is missing when they cannot.

Two sources per task:

* the shipped multi-seed study, every seed of it (``proofs_check.claims.seeds``):
  ``training/reference/seeds/paper/<task>/seed-<S>/analysis.json`` (``python -m training
  analyze``) and ``length_generalisation.json`` (``python -m training evaluate``), collected
  by ``python -m training study training/studies/seeds.json --collect``; seed 0 is the
  shipped reference run of ``training/reference/<task>/``;
* a run given with ``python -m proofs_check --weights RUN ...``, analysed afresh (its task read
  from its vocab.json); a claim that reads it is decided on that one run (n = 1), a task it
  does not cover taken from one shipped seed (``proofs_check.claims.over_seeds``).  Each part needs something
  else of the run: length generalisation only its final weights (RUN/model.safetensors; a
  shorter grid, 64 sequences per length), the analysis (score dynamics, purity, frequency
  use, geometry; no measured discrepancy) every checkpoint ``step-NNNNNN/`` of the run.  The
  shipped reference runs carry no checkpoints, so with them as ``--weights`` only the length
  claims can be recomputed; the others name what is missing.

A task without a ``--weights`` run keeps the shipped seeds, and every trained claim says in
its summary and evidence which source it used.  A ``--weights`` value that is not a run of
one of the tasks, or two runs of one task, is a usage error (``WeightsError``), found
before any claim is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import seeds

TASKS = ("number", "letter")
QUICK_LENGTHS = (17, 25, 50, 100, 200, 400, 850)
PARTS = tuple(seeds.PARTS)
RUN_LABEL = "--weights run"  # a user's run: decided alone, never counted as seeds
_REQUIRED = ("config.json", "model.safetensors", "vocab.json")
_CACHE: dict = {}  # (task, part, run or shipped folder) -> {label: (data or None, missing or None)}


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
    whys = set()
    for task in TASKS:
        try:
            load_vocab(path / "vocab.json", task)
            return task
        except (OSError, ValueError) as why:
            whys.add(str(why))
    if len(whys) == 1:  # the same for both tasks: the file could not be read (damaged), say where and why
        raise WeightsError(f"--weights: {whys.pop()}")
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


def run_of(task: str, options) -> str | None:
    """The ``--weights`` run of ``task`` (None: the shipped seeds are used)."""
    return runs_by_task(options.weights).get(task)


def source_of(task: str, options) -> str:
    """Where ``task``'s measurements come from under ``options``, in words."""
    run = run_of(task, options)
    if run is not None:
        return f"recomputed from {run}"
    shipped = f"shipped seeds in {seeds.shipped_folder(task)}"
    return f"{shipped} (no {task}-task run among --weights)" if options.weights else shipped


def source_label(task: str, options) -> str:
    """``source_of`` in a few words, for a summary line."""
    run = run_of(task, options)
    return "shipped seeds" if run is None else f"--weights {run}"


def measured(task: str, part: str, options) -> dict:
    """{label: (data, None) or (None, what is missing)} for ``part`` ("analysis" or "length")
    of ``task``: one entry per shipped seed ("seed-S"), or one (RUN_LABEL) for a ``--weights``
    run; computed at most once per process."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    run = run_of(task, options)
    key = (task, part, run if run is not None else ("shipped", str(seeds.SHIPPED)))
    if key not in _CACHE:
        if run is None:
            _CACHE[key] = seeds.shipped_members(task, part)
        else:
            _CACHE[key] = {RUN_LABEL: (_analyse if part == "analysis" else _length)(task, run)}
    return _CACHE[key]


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

"""Where the trained claims' measurements come from, and what is missing when they cannot.

Two sources per task:

* the shipped multi-seed study, every seed of it (``proofs_check.evidence.seeds``):
  ``training/reference/seeds/paper/<task>/seed-<S>/analysis.json`` (``python -m training
  analyze``) and ``length_generalisation.json`` (``python -m training evaluate``), collected
  by ``python -m training study training/studies/seeds.json --collect``; seed 0 is the
  shipped reference run of ``training/reference/<task>/``;
* a run given with ``python -m proofs_check --weights RUN ...``, analysed afresh (its task read
  from its vocab.json); a claim that reads it is decided on that one run (n = 1), a task it
  does not cover taken from one shipped seed (``proofs_check.evidence.over_seeds``).  Each part needs something
  else of the run: length generalisation only its final weights (RUN/model.safetensors; a
  shorter grid, 64 sequences per length), the analysis (score dynamics, purity, frequency
  use, geometry; no measured discrepancy) every checkpoint ``step-NNNNNN/`` of the run.  The
  shipped reference runs carry no checkpoints, so with them as ``--weights`` only the length
  claims can be recomputed; the others name what is missing.

A task without a ``--weights`` run keeps the shipped seeds, and every trained claim says in
its summary and evidence which source it used.  A ``--weights`` value that is not a run of
one of the tasks, or two runs of one task, is a usage error (``WeightsError``), found
before any claim is checked.  So is a run whose files do not make one model of its task
(``_check_run``): a config.json that is not this package's GPT-J or is sized for another
task's vocabulary, or a model.safetensors that is truncated or whose tensors are not the
ones that config implies.  Only headers are read (no tensor is loaded), so a bad run costs
seconds, not a claim run that fails half-way.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from proofs_check.evidence import seeds

TASKS = ("number", "letter")
QUICK_LENGTHS = (17, 25, 50, 100, 200, 400, 850)
PARTS = tuple(seeds.PARTS)
RUN_LABEL = "--weights run"  # a user's run: decided alone, never counted as seeds
_REQUIRED = ("config.json", "model.safetensors", "vocab.json")
_CACHE: dict = {}  # (task, part, run or shipped folder) -> {label: (data or None, missing or None)}
_CHECKED: dict = {}  # (run, its files' size, mtime and inode) -> its task, once _check_run passed


class WeightsError(ValueError):
    """A bad ``--weights`` value; the message is one line naming it."""


def _task_of(run: str) -> str:
    from training.tasks.definitions import load_vocab

    path = Path(run)
    if not path.exists():
        raise WeightsError(f"--weights: {run} does not exist")
    if not path.is_dir():
        raise WeightsError(
            f"--weights: {run} is not a directory (expected a run folder holding {', '.join(_REQUIRED)})"
        )
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
    raise WeightsError(
        f"--weights: {path / 'vocab.json'} is the vocabulary of neither task ({' nor '.join(TASKS)})"
    )


def _header(path: Path) -> dict:
    """The safetensors header of ``path`` ({name: {"shape", ...}}), after checking that the file is
    exactly as long as the header says: a copy cut short is named as such, not found mid-claim."""
    from safetensors import SafetensorError, safe_open

    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            head = file.read(8)
            length = struct.unpack("<Q", head)[0] if len(head) == 8 else None
            if length is None or length > min(size - 8, 100_000_000):  # safetensors' own header limit
                raise WeightsError(
                    f"--weights: {path} is not a safetensors file ({size} bytes, no readable header)"
                )
            text = file.read(length)
    except OSError as error:
        raise WeightsError(f"--weights: {path}: cannot read ({error.strerror or error})") from None
    try:
        header = json.loads(text)
        end = max((e["data_offsets"][1] for k, e in header.items() if k != "__metadata__"), default=0)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as error:
        raise WeightsError(f"--weights: {path}: damaged safetensors header ({error})") from None
    if not isinstance(end, int) or isinstance(end, bool):
        raise WeightsError(f"--weights: {path}: damaged safetensors header (data offset {end!r})")
    if size != 8 + length + end:  # the data region ends where the header's last tensor ends
        raise WeightsError(
            f"--weights: {path} is {size} bytes, but its header describes {8 + length + end}: "
            + ("truncated" if size < 8 + length + end else "bytes after the last tensor")
        )
    try:  # the library's own checks of the rest (offsets, dtypes) before any claim relies on it
        with safe_open(str(path), "pt"):
            pass
    except (SafetensorError, OSError) as error:
        raise WeightsError(f"--weights: {path}: damaged safetensors file ({error})") from None
    return {k: e for k, e in header.items() if k != "__metadata__"}


def _check_run(path: Path, task: str) -> None:
    """WeightsError unless config.json is this package's GPT-J for ``task``'s vocabulary and
    model.safetensors holds exactly the tensors, of the shapes, that config implies."""
    import torch

    from training.model.gptj import GPTJ
    from training.run.checks import RunError
    from training.run.weights import is_hf_mask_buffer, read_config
    from training.tasks.definitions import get_task

    try:
        config = read_config(path)
    except RunError as error:
        raise WeightsError(f"--weights: {error}") from None
    sizes = {name: len(get_task(name).vocab) for name in TASKS}
    if config.vocab_size != sizes[task]:
        other = [name for name, n in sizes.items() if n == config.vocab_size]
        raise WeightsError(
            f"--weights: {path / 'config.json'} has vocab_size {config.vocab_size}, but its vocab.json "
            f"is the {task} task's ({sizes[task]} tokens)"
            + (f"; a config of the {other[0]} task" if other else "")
        )
    try:  # the shapes the model has, on the meta device: nothing allocated
        with torch.device("meta"):
            expected = {k: tuple(v.shape) for k, v in GPTJ(config).state_dict().items()}
    except (ValueError, TypeError, RuntimeError, AssertionError) as error:
        raise WeightsError(
            f"--weights: {path / 'config.json'}: not a model this package builds ({error})"
        ) from None
    found = {
        k: tuple(e["shape"])
        for k, e in _header(path / "model.safetensors").items()
        if not is_hf_mask_buffer(k)
    }
    missing, extra = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
    wrong = [
        f"{k} {found[k]} (config: {expected[k]})" for k in expected if k in found and found[k] != expected[k]
    ]
    if missing or extra or wrong:
        what = "; ".join(
            part
            for part in (
                missing and f"missing {', '.join(missing[:3])}",
                extra and f"unexpected {', '.join(extra[:3])}",
                wrong and f"shape of {', '.join(wrong[:3])}",
            )
            if part
        )
        raise WeightsError(
            f"--weights: {path / 'model.safetensors'} does not match {path / 'config.json'}: {what}"
        )


def _checked_task(run: str) -> str:
    """``_task_of`` then ``_check_run``, once per state of the run's files (claims ask often)."""
    path = Path(run)
    task = _task_of(run)
    key = (
        os.path.realpath(run),
        tuple((s.st_size, s.st_mtime_ns, s.st_ino) for s in (os.stat(path / name) for name in _REQUIRED)),
    )
    if _CHECKED.get(key) != task:
        _check_run(path, task)
        _CHECKED[key] = task
    return task


def runs_by_task(weights) -> dict[str, str]:
    """{task: run} of the ``--weights`` runs; WeightsError for a path that is not a run of
    a task (``_task_of``, ``_check_run``), or for two runs of the same task."""
    found: dict[str, str] = {}
    for run in weights:
        task = _checked_task(str(run))
        if task in found:
            raise WeightsError(
                f"--weights: {found[task]} and {run} are both {task}-task runs; give at most one run per task"
            )
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
    from training.run.checkpoints import list_checkpoints
    from training.run.checks import RunError

    try:
        folder = os.path.normpath(checkpoint_dir_of(run))
        if not list_checkpoints(folder):
            return None, (
                f"the analysis (scores at every checkpoint, then frequency use and geometry at the best) "
                f"needs the run's checkpoint folders step-NNNNNN/ in {folder}; {run} has none"
            )
        return analyse_run(run, task, "fast", discrepancy=False, progress=False), None
    except RunError as error:
        return None, f"{run}: {error}"


def _length(task: str, run: str):
    """Length generalisation needs only the run's final weights."""
    from training.analysis.evaluate import length_generalisation
    from training.run.checkpoints import load_model
    from training.run.checks import RunError

    try:
        model = load_model(run)
    except RunError as error:
        return None, f"{run}: {error}"
    return length_generalisation(model, task, QUICK_LENGTHS, count=64, run=run, progress=False), None

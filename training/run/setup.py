"""Opening a run folder for ``train``: destinations checked first, the folder locked, nothing half-made.

``open_run`` goes in this order, and creates nothing before step 3:

1. ``--out`` and an explicit ``--checkpoint-dir`` must be folders this process can write in,
   or be creatable as such (``theory.io.files.check_output_dir``), and lie in no other run's
   folder (``training.cli_common.check_not_owned``): ``--out OTHER/checkpoints/step-000040``
   is refused, ``--out RUN --force`` on RUN's own folder is not.  ``--resume`` needs a run.
2. (nothing is trained or written before the checks above and below have passed)
3. ``--out`` is created if missing and locked for the whole run (``RUN/.lock``, runlock).
4. With that lock held, the checkpoint folder is created if missing (a fresh start) and locked
   too (``CKPT/.lock``), so two runs given one ``--checkpoint-dir`` cannot both write it: the
   second is refused naming the first, whose claim (step 6) it would otherwise see as a start
   that failed before writing anything.
5. With both locks held, the folder's state decides: a fresh start needs an empty run (or
   ``--force``), ``--resume`` needs a checkpoint.  The checkpoint folder must be free or the
   run's own (``training.run.ownership``) -- ``--force`` then deletes the run files at
   ``--out`` and the checkpoints of that folder, never another run's and never unknown files.
6. The checkpoint folder is claimed (``CKPT/owner.json``).

A fresh start is complete once its step-0 checkpoint exists (``RunFolder.started``).  If it
fails before that (an error, Ctrl-C, a full disk), everything it made is removed again: the
run files, ``owner.json``, the folders it created -- so a retry starts cleanly and no run
folder is left half-made.  Only a SIGKILL inside that window (about a second) can leave run
files without a checkpoint; a retry says so and ``--force`` starts the run again.

Under torchrun only rank 0 calls ``open_run`` and the start functions at the end (the run's
settings, the resumed state or the fresh run's files): the other ranks receive their results
from it and never touch the folder (``training.run.distributed``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from theory.io.files import OutputError, atomic_write_json, check_output_dir
from theory.io.provenance import provenance
from training.cli_common import UsageError, check_not_owned
from training.tasks.definitions import load_vocab, save_vocab

from .checkpoints import RUN_FILES, list_checkpoints, load_checkpoint, read_state_info, remove_partial
from .checks import RunError
from .distributed import Ranks
from .hf_files import TOKENIZER_FILES, write_tokenizer_files
from .lock import RunLock
from .metrics import Metrics
from .model_card import CARD, is_card
from .ownership import OWNER_NAME, check_owner, claim, holds_run, owner_of
from .presets import Preset
from .recipe import apply_overrides, resolved_recipe
from .resume import check_run_config, restore_best_weights, resumed_settings, truncate_metrics
from .start import check_stop_at, model_config
from .weights import write_json_atomic

__all__ = ["RunFolder", "open_run", "run_settings", "resume_state", "fresh_files"]


@dataclass
class RunFolder:
    out: Path
    resume: bool
    ckpt_dir: Path | None = None
    complete: bool = False  # a resumed run, or a fresh one whose step-0 checkpoint exists
    writing: bool = False  # a fresh start past its checks: what it writes is undone if it fails
    claimed: bool = False  # this start wrote CKPT/owner.json
    made: list = field(default_factory=list)  # folders this start created, outermost first

    def started(self) -> None:
        """The first checkpoint exists: from now on a failure leaves a resumable run."""
        self.complete = True

    def _undo(self) -> None:
        for name in (*RUN_FILES, *TOKENIZER_FILES):
            (self.out / name).unlink(missing_ok=True)
        if self.ckpt_dir is not None:
            for _, path in list_checkpoints(self.ckpt_dir, same_architecture=False):
                shutil.rmtree(path, ignore_errors=True)
            remove_partial(self.ckpt_dir)
            if self.claimed:
                (self.ckpt_dir / OWNER_NAME).unlink(missing_ok=True)


def _writable(path: Path, what: str) -> None:
    try:
        check_output_dir(path, what)
    except OutputError as error:
        raise RunError(str(error)) from None


def _make_dirs(path: Path) -> list[Path]:
    """``mkdir -p path``; return the folders it created, outermost first."""
    missing, p = [], path.absolute()
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create {path}: {error.strerror or error}") from None
    return missing[::-1]


def _remove_if_empty(folders) -> None:
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _check_not_anothers(out: Path, explicit: Path | None) -> None:
    """--out and --checkpoint-dir lie in no other run's folder and are no checkpoint (module doc, 1)."""
    try:
        check_not_owned(out, "--out", own=[out], folder=True)
        if explicit is not None:
            check_not_owned(explicit, "--checkpoint-dir", own=[out], folder=True)
        owner = owner_of(out)  # --out may be its own checkpoint folder (--checkpoint-dir RUN), no other's
    except UsageError as error:
        raise RunError(str(error)) from None
    if owner is not None and owner != Path(os.path.normpath(out.resolve())) and holds_run(owner):
        raise RunError(
            f"--out {out} is the checkpoint folder of another run ({owner}, named by "
            f"{out / OWNER_NAME}); choose another folder"
        )


def _checkpoint_lock(out: Path, ckpt_dir: Path):
    """The flock on CKPT/.lock (module doc, 4); none when CKPT is RUN (its lock covers it) or is
    missing (a resume from it fails before touching anything)."""
    if not ckpt_dir.is_dir() or os.path.realpath(ckpt_dir) == os.path.realpath(out):
        return contextlib.nullcontext()
    return RunLock(ckpt_dir, user="train process, as its checkpoint folder", detail=f"run {out}")


def _fresh_plan(out: Path, ckpt_dir: Path, explicit: Path | None, force: bool) -> Path:
    check_owner(out, ckpt_dir, "--checkpoint-dir" if explicit else "checkpoint folder")
    existing = [name for name in RUN_FILES if (out / name).exists()]
    checkpoints = list_checkpoints(ckpt_dir, same_architecture=False)
    if not force:
        if existing and not checkpoints:
            raise RunError(
                f"{out} already holds a run (with no checkpoint in {ckpt_dir}: a start that was "
                f"killed, or its checkpoints are elsewhere); pass --force to replace it"
            )
        if existing:
            raise RunError(
                f"{out} already holds a run; pass --resume to continue it or --force to replace it"
            )
        if checkpoints:
            raise RunError(
                f"{ckpt_dir} already holds checkpoints of a run at {out}; pass --force to replace them"
            )
    for name in existing:  # --force: only what a run writes, never unknown files
        (out / name).unlink()
    if existing and is_card(out / CARD):  # the old run's card would describe the new one
        (out / CARD).unlink()
    for _, path in checkpoints:
        shutil.rmtree(path)
    remove_partial(ckpt_dir)
    return ckpt_dir


def _resume_dir(out: Path, explicit: Path | None, task: str) -> Path:
    try:
        load_vocab(out / "vocab.json", task)
    except (OSError, ValueError) as e:
        raise RunError(f"cannot resume: {e}") from None
    if explicit is not None:
        return explicit
    # the settings line remembers where checkpoints went
    ckpt_dir = out / Metrics(out / "metrics.jsonl").settings().get("checkpoint_dir", "checkpoints")
    _writable(ckpt_dir, f"checkpoint folder of {out}")  # an absolute one replaces out
    return ckpt_dir


def _resume_plan(out: Path, ckpt_dir: Path) -> Path:
    check_owner(out, ckpt_dir)
    if not list_checkpoints(ckpt_dir):
        raise RunError(f"cannot resume: no checkpoint in {ckpt_dir} (pass --force to start the run again)")
    remove_partial(ckpt_dir)
    return ckpt_dir


@contextlib.contextmanager
def open_run(out, checkpoint_dir, task: str, resume: bool, force: bool):
    """``with open_run(...) as run:`` the checked, locked, claimed run (module doc)."""
    if resume and force:
        raise RunError("--resume and --force exclude each other")
    out = Path(out)
    explicit = Path(checkpoint_dir) if checkpoint_dir is not None else None
    _writable(out, "--out")
    if explicit is not None:
        _writable(explicit, "--checkpoint-dir")
    _check_not_anothers(out, explicit)
    if resume and not holds_run(out):
        raise RunError(f"nothing to resume: {out} holds no run")
    run = RunFolder(out, resume=resume, complete=resume)
    run.made = _make_dirs(out)
    try:
        with RunLock(out):
            ckpt_dir = _resume_dir(out, explicit, task) if resume else explicit or out / "checkpoints"
            if not resume:
                run.made += _make_dirs(ckpt_dir)
            with _checkpoint_lock(out, ckpt_dir):
                try:
                    run.ckpt_dir = (
                        _resume_plan(out, ckpt_dir) if resume else _fresh_plan(out, ckpt_dir, explicit, force)
                    )
                    run.claimed = claim(out, run.ckpt_dir)
                    run.writing = not resume  # only now: a lost claim must not undo the winner's files
                    yield run
                except BaseException:
                    if run.writing and not run.complete:
                        run._undo()
                    raise
    finally:
        if not run.complete:
            _remove_if_empty(run.made)


# --- the start of a run: rank 0 alone (training.run.distributed) ----------------------------------


def _check_resumed_overrides(saved: Preset, overrides) -> None:
    """``--set`` given again on ``--resume`` must not change the run's recipe."""
    if not overrides:
        return
    wanted = apply_overrides(saved, overrides)
    if wanted != saved:
        changed = [k for k, v in wanted.to_dict().items() if saved.to_dict()[k] != v]
        raise RunError(
            f"cannot resume with --set {' --set '.join(overrides)}: it changes {', '.join(changed)} "
            f"of the run's recipe"
        )


def run_settings(run: RunFolder, task: str, recipe: Preset, flags: dict, overrides: tuple, ranks: Ranks):
    """(settings, recipe, model config, last checkpoint or None) of the run; read by rank 0."""
    last_path = list_checkpoints(run.ckpt_dir)[-1][1] if run.resume else None
    if run.resume:  # the run's own settings win; a conflicting explicit flag is an error
        settings, recipe = resumed_settings(read_state_info(last_path), last_path, flags)
        try:
            _check_resumed_overrides(recipe, overrides)
        except ValueError as e:  # a bad --set key or value
            raise RunError(str(e)) from None
        ranks.check_batch_split(recipe.batch_size)
    else:
        # relative to RUN, so a repository checkout can be moved and the run still resumed
        where = os.path.relpath(run.ckpt_dir.resolve(), run.out.resolve())
        settings = {
            "task": task,
            "preset": recipe.name,
            "steps": recipe.steps,
            "seed": 0 if flags["seed"] is None else flags["seed"],
            "checkpoint_dir": str(where),
            "recipe": recipe.to_dict(),
        }
    config = model_config(
        task, recipe, f"checkpoint {last_path}" if run.resume else f"--preset {recipe.name}"
    )
    return settings, recipe, config, last_path


def resume_state(run: RunFolder, last_path, model, optimizer, config, metrics: Metrics, stop_at, total: int):
    """Rank 0 on --resume: the checkpoint loaded into model and optimizer, the run folder checked
    and repaired; returns (start step, best so far, GradScaler state)."""
    info = load_checkpoint(last_path, model, optimizer)
    check_stop_at(stop_at, info["step"], total)
    check_run_config(run.out, config, last_path)
    restore_best_weights(run.out, run.ckpt_dir, info["best"]["step"])
    truncate_metrics(metrics, info["step"])
    return info["step"], info["best"], info.get("grad_scaler")


def fresh_files(
    out, task: str, settings: dict, recipe: Preset, config, overrides: tuple, metrics: Metrics, header: dict
):
    """Rank 0 on a fresh start: vocab, HF tokenizer files, config, the resolved recipe and the settings
    line (with the provenance of the code that trains it)."""
    save_vocab(out / "vocab.json", task)
    write_tokenizer_files(out, task, config.n_positions)
    write_json_atomic(out / "config.json", config.to_config_dict())
    # everything the run is trained with, defaults included: the folder alone reproduces it
    atomic_write_json(
        out / "recipe.json",
        {
            "task": task,
            "seed": settings["seed"],
            "overrides": list(overrides),
            "recipe": resolved_recipe(recipe, config.vocab_size),
        },
        indent=1,
    )
    metrics.path.write_text("")
    metrics.append({"split": "settings", "step": 0, **settings, **header, "provenance": provenance()})
    return 0, {"step": -1, "accuracy": -1.0}, None

"""Which run a checkpoint folder belongs to, so that no run ever touches another's checkpoints.

The tie is written on both sides:

* the run records its checkpoint folder: ``checkpoint_dir`` in the settings (first line of
  ``RUN/metrics.jsonl`` and every checkpoint's ``training_state.json``), relative to RUN;
* the checkpoint folder records its run: ``CKPT/owner.json`` = ``{"run": PATH}``, PATH
  relative to CKPT (``".."`` for the default ``RUN/checkpoints``).

Both are relative, so a run moved or copied together with its checkpoints stays tied to
them (a copy to its own copy).  ``config.json`` is untouched: it stays a plain HF config.

Rules (``check_owner``): a folder belongs to RUN when its ``owner.json`` names RUN.  It is
free when it has no ``owner.json`` and no checkpoints, or when its ``owner.json`` names a
folder that holds no run and it has no checkpoints (a start that failed before writing any).
Anything else belongs to another run and is refused -- a fresh start, ``--force`` and
``--resume`` alike, so ``--force`` deletes only what belongs to the run at ``--out``.
Folders written before ``owner.json`` existed have checkpoints and no marker: they belong
to RUN when their first checkpoint's settings, resolved against RUN, name this folder (or,
with unreadable settings, when the folder is RUN/checkpoints).

``claim`` writes ``owner.json`` with an exclusive create, so of two starts racing for one
free folder exactly one gets it and the other is refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from theory.io.files import atomic_write_json
from theory.io.inputs import Checked, InputError, load_json, parse_json, read_text

from .checkpoints import RUN_FILES, STATE_JSON, list_checkpoints
from .checks import RunError

__all__ = ["OWNER_NAME", "owner_of", "check_owner", "claim", "holds_run"]

OWNER_NAME = "owner.json"


def _absolute(path) -> Path:
    return Path(os.path.normpath(Path(path).resolve()))


def holds_run(folder) -> bool:
    return any((Path(folder) / name).exists() for name in RUN_FILES)


# owner.json; a path with a NUL byte would make every later path operation raise
OWNER_SHAPE = {"run": Checked(str, lambda run: bool(run) and "\0" not in run, "a non-empty path")}
_LEGACY_SHAPE = {"settings": {"checkpoint_dir": str}}


def owner_of(ckpt_dir) -> Path | None:
    """The run that ``CKPT/owner.json`` names (absolute), or None when there is none.  A FIFO,
    a non-UTF-8 or hostile file there is RunError naming it (theory.io.inputs), never a hang."""
    path = Path(ckpt_dir) / OWNER_NAME
    if not os.path.lexists(path):
        return None
    try:
        text = read_text(path, OWNER_NAME)
        if not text.strip():
            return None  # an exclusive create whose writer died before writing: nobody's
        run = parse_json(text, str(path), OWNER_SHAPE)["run"]
    except InputError as error:
        raise RunError(str(error)) from None
    return Path(os.path.normpath(_absolute(ckpt_dir) / run))


def _legacy_owner_is(out: Path, ckpt_dir: Path, checkpoints) -> bool:
    """A folder from before owner.json: its first readable checkpoint says where its run put it."""
    for _, path in checkpoints:
        try:
            where = load_json(path / STATE_JSON, _LEGACY_SHAPE)["settings"]["checkpoint_dir"]
        except InputError:
            continue
        return _absolute(out / where) == _absolute(ckpt_dir)
    return _absolute(out / "checkpoints") == _absolute(ckpt_dir)


def check_owner(out, ckpt_dir, what: str = "checkpoint folder") -> None:
    """RunError unless ``ckpt_dir`` is free or belongs to the run at ``out`` (module doc)."""
    out, ckpt_dir = Path(out), Path(ckpt_dir)
    checkpoints = list_checkpoints(ckpt_dir, same_architecture=False)
    owner = owner_of(ckpt_dir)
    if owner is None:
        if not checkpoints or _legacy_owner_is(out, ckpt_dir, checkpoints):
            return
        raise RunError(
            f"{what} {ckpt_dir} holds the checkpoints of another run (their settings name another "
            f"run folder than {out}); choose another folder"
        )
    if owner == _absolute(out) or (not checkpoints and not holds_run(owner)):
        return
    raise RunError(
        f"{what} {ckpt_dir} holds the checkpoints of another run ({owner}, named by "
        f"{ckpt_dir / OWNER_NAME}); choose another folder"
    )


def claim(out, ckpt_dir) -> bool:
    """Make ``ckpt_dir/owner.json`` name ``out`` (after ``check_owner`` passed).  True when this
    call wrote it, so that a start that fails can take it back."""
    out, ckpt_dir = Path(out), Path(ckpt_dir)
    marker = ckpt_dir / OWNER_NAME
    record = {"run": os.path.relpath(_absolute(out), _absolute(ckpt_dir))}
    owner = owner_of(ckpt_dir)
    if owner == _absolute(out):
        return False
    if owner is not None or marker.exists():  # free, left by a failed start (module doc): take it over
        atomic_write_json(marker, record, indent=2, trailing_newline=True, parents=False)
        return True
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:  # another start claimed it since owner_of above
        check_owner(out, ckpt_dir)  # names that run when its marker is written already
        raise RunError(
            f"checkpoint folder {ckpt_dir} was just claimed by another train process; choose another folder"
        ) from None
    except OSError as error:
        raise RunError(f"cannot write {marker}: {error.strerror or error}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(record, indent=2) + "\n")
    return True

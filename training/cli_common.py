"""Shared command-line plumbing: every usage error is ONE line on stderr and exit status 2.

Subcommand modules raise ``UsageError`` for bad values they detect after parsing;
the dispatcher turns it into that line, and does the same for ``OutputError`` (an output
destination that cannot be written, found before the work or turned bad during it).
argparse's own errors go the same way through ``OneLineParser``.

``check_not_owned`` is the one guard every command's pre-flight output check runs (module
section below): an output is never one of the command's inputs, nor a file in a folder that a
training run owns.
"""

from __future__ import annotations

import os
import sys

# the rooms' cli modules and the dispatcher (which may import only this module and the rooms) take these from here
from theory.cli import OneLineParser, UsageError, interrupted, quiet_interrupt_while_starting  # noqa: F401
from theory.files import OutputError, check_output_file


def report_usage_error(prog: str, error: Exception) -> int:
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2


def add_compute_options(parser) -> None:
    """``--threads`` and ``--no-progress``, shared by the commands that run a model."""
    parser.add_argument("--threads", type=int, default=None, metavar="K", help="torch CPU threads")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


# --- outputs never land on inputs or in a run's folders ---------------------------------------------
#
# Every output is written atomically, through a symlink, so writing to a path destroys whatever
# file the path resolves to.  Paths are therefore compared after realpath (symlinks, "..").
#
# What a training run owns (training.model: checkpoints.RUN_FILES, ownership, runlock and the
# checkpoint state).  cli_common may import only theory (tests/test_layering.py), so the names are
# repeated here; tests/test_output_guards.py keeps them in step with training.model.
RUN_FILE_NAMES = frozenset({"config.json", "model.safetensors", "vocab.json", "metrics.jsonl", "recipe.json",
                            "owner.json", ".lock", "training_state.json", "training_state.safetensors"})
CHECKPOINT = "a checkpoint of a training run"
CHECKPOINT_FOLDER = "the checkpoint folder of a training run"
RUN_FOLDER = "the folder of a training run"


def folder_kind(folder) -> str | None:
    """What a training run made of ``folder``, by the files in it: one of CHECKPOINT
    (``step-NNNNNN/``: training_state.*), CHECKPOINT_FOLDER (owner.json), RUN_FOLDER (metrics.jsonl,
    recipe.json, or a run's config.json + model.safetensors + vocab.json), or None.  A bare HF
    model folder (config and weights) is no run: a home folder holding one must stay writable."""
    def has(name):
        return os.path.lexists(os.path.join(folder, name))

    if has("training_state.json") or has("training_state.safetensors"):
        return CHECKPOINT
    if has("owner.json"):
        return CHECKPOINT_FOLDER
    if has("metrics.jsonl") or has("recipe.json") or all(map(has, ("config.json", "model.safetensors", "vocab.json"))):
        return RUN_FOLDER
    return None


def _real(path) -> str:
    return os.path.realpath(os.fspath(path))


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)  # a bind mount or another route to the same inode
    except OSError:
        return False


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder and path != folder


def check_not_owned(path, flag: str, *, inputs=(), own=(), folder: bool = False) -> None:
    """UsageError (one line) unless writing ``path`` can destroy nothing the command reads or a run owns.

    Refused: a path that resolves to one of ``inputs`` (a folder among them: any existing file
    in it); a path inside a checkpoint or checkpoint folder; a path inside a run folder that is
    not one of ``own`` (the runs this command reads or writes), and in any run folder a name a
    run owns (``RUN_FILE_NAMES``).  With ``folder`` the path is a folder the command writes (a
    run, a checkpoint folder): it may itself be a run folder of ``own`` or a checkpoint folder
    (then training.model.ownership decides whose, wherever it lies), never a checkpoint or
    another run's folder."""
    real, shown = _real(path), os.fspath(path)
    own = [_real(p) for p in own if p is not None and os.fspath(p)]
    for given in inputs:
        if given is None or not os.fspath(given):
            continue
        source = _real(given)
        if _same(real, source) or (os.path.isdir(source) and _inside(real, source) and os.path.lexists(real)):
            raise UsageError(f"{flag} {shown} is an input of this command ({given}); writing it would destroy "
                             f"it: choose another path")
    if folder:
        kind = folder_kind(real)
        if kind == CHECKPOINT_FOLDER:
            return  # its owner.json says whose it is: training.model.ownership decides, naming that run
        if kind == CHECKPOINT:
            raise UsageError(f"{flag} {shown} is {kind}; choose a folder outside it")
        if kind == RUN_FOLDER and real not in own:
            raise UsageError(f"{flag} {shown} is the folder of another run; choose another folder")
    parent = os.path.dirname(real)
    if not folder and os.path.basename(real) in RUN_FILE_NAMES and folder_kind(parent):
        raise UsageError(f"{flag} {shown} is a file of a training run ({parent} is {folder_kind(parent)}); "
                         f"choose another name")
    while True:  # every folder above the path, up to the first that is this command's own
        if parent in own:
            return
        kind = folder_kind(parent)
        if kind == RUN_FOLDER:
            raise UsageError(f"{flag} {shown} lies inside {parent}, the folder of another run (not one this "
                             f"command reads or writes); choose a path outside it")
        if kind is not None:
            raise UsageError(f"{flag} {shown} lies inside {parent}, {kind}; choose a path outside it")
        if os.path.dirname(parent) == parent:
            return
        parent = os.path.dirname(parent)


def check_output(path, flag: str, *, inputs=(), own=()):
    """The pre-flight check of one output file as a UsageError: ``theory.files.check_output_file``
    (an empty path, a folder or device, a missing or unwritable folder cost nothing), then
    ``check_not_owned``."""
    try:
        out = check_output_file(path, flag)
    except OutputError as error:
        raise UsageError(str(error)) from None
    check_not_owned(out, flag, inputs=inputs, own=own)
    return out


def _inputs_of(args) -> tuple[list, list]:
    """(input files and folders, own runs) of a command that reads a run (``--run``), a model
    (``--model``, a folder or file), ``--accuracy`` or ``--checkpoint-dir``.  A result file is
    at home next to the run it describes, so ``--run`` and a ``--model`` folder are also own."""
    run, model = getattr(args, "run", None), getattr(args, "model", None)
    inputs = [getattr(args, "accuracy", None), getattr(args, "checkpoint_dir", None), model]
    if run is not None:
        inputs += [os.path.join(run, name) for name in sorted(RUN_FILE_NAMES)]
    return inputs, [run, model if model is not None and os.path.isdir(model) else None]


def prepare_json_output(args):
    """Check ``--json`` can be written, is none of the command's inputs and no run's file, and
    apply ``--threads`` before any work (no model is loaded before a bad destination is refused);
    return the path."""
    inputs, own = _inputs_of(args)
    out = check_output(args.json, "--json", inputs=inputs, own=own)
    if args.threads is not None:
        if args.threads < 1:
            raise UsageError(f"--threads must be >= 1, got {args.threads}")
        import torch

        torch.set_num_threads(args.threads)
    return out

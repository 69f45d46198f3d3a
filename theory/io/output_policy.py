"""The one output policy every command applies to every path it writes, before any work.

``check_output(path, flag, ...)`` refuses (``UsageError``: one line, exit status 2):

1. what no file can replace: an empty path, an existing folder, device, FIFO or socket, a
   missing or unwritable folder (``theory.io.files.check_output_file`` / ``check_output_dir``);
2. an input of this command (``inputs``; a folder among them covers every file in it);
3. anything a training run owns (``check_not_owned``): a checkpoint, a checkpoint folder, a
   run's own files, any path inside another run's folder;
4. the package itself: its source trees and top-level files (``PACKAGE_TREES``,
   ``PACKAGE_FILES``), and its shipped results and plans (``SHIPPED``), new files there
   included.  A command's own documented output there (``documented``: ``python -m figures``
   into figures/output, ``--report report``, ``study --collect``'s summary) is allowed, and
   ``--replace-shipped`` allows the shipped result trees (never the source) for the scripts
   that regenerate shipped results on purpose.

Every output flag is declared with ``output_argument`` so a test can find them all
(tests/test_output_policy.py runs every declared flag against the same protected targets):
a new output flag that skips the policy fails that test.

Paths are compared after ``realpath``: every output is written atomically through a symlink,
so writing a path destroys whatever file it resolves to.  Standard library only (``theory``
is the bottom of the import graph, so proofs_check and figures can use this too).
"""

from __future__ import annotations

import os
from pathlib import Path

from .cli import UsageError
from .files import OutputError, check_output_dir, check_output_file

__all__ = [
    "PACKAGE_ROOT",
    "SHIPPED",
    "PACKAGE_TREES",
    "PACKAGE_FILES",
    "REPLACE_SHIPPED",
    "RUN_FILE_NAMES",
    "CHECKPOINT",
    "CHECKPOINT_FOLDER",
    "RUN_FOLDER",
    "folder_kind",
    "check_not_owned",
    "protected_reason",
    "check_output",
    "output_argument",
    "output_actions",
]

# the repository (or, installed, the folder holding the packages): the source and shipped trees below
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# shipped results and plans: tracked files that took days to compute (``--replace-shipped`` opens them)
SHIPPED = (
    "training/reference",
    "training/studies",
    "constructions/results",
    "proofs_check/results",
    "report",
    "figures/output",
)
# the package's own code and documents: never an output of any command
PACKAGE_TREES = (
    "theory",
    "constructions",
    "training",
    "proofs_check",
    "figures",
    "tests",
    "scripts",
    "benchmarks",
    ".ci",
    ".git",
)
PACKAGE_FILES = ("README.md", "pyproject.toml", "LICENSE", "CITATION.cff", "CHANGELOG.md", ".gitignore")
REPLACE_SHIPPED = "--replace-shipped"

# --- what a training run owns (training.model: checkpoints.RUN_FILES, the Hugging Face files of hf_files,
# ownership, runlock, the checkpoint state; tests/test_output_guards.py keeps the names in step with
# training.model) --------------------------------------------------------------------------------------------
RUN_FILE_NAMES = frozenset(
    {
        "config.json",
        "model.safetensors",
        "vocab.json",
        "metrics.jsonl",
        "recipe.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "README.md",
        "owner.json",
        ".lock",
        "training_state.json",
        "training_state.safetensors",
    }
)
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
    if (
        has("metrics.jsonl")
        or has("recipe.json")
        or all(map(has, ("config.json", "model.safetensors", "vocab.json")))
    ):
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


def _at_or_inside(path: str, folder: str) -> bool:
    return path == folder or _inside(path, folder)


def check_not_owned(path, flag: str, *, inputs=(), own=(), folder: bool = False) -> None:
    """UsageError (one line) unless writing ``path`` can destroy nothing the command reads or a run owns.

    Refused: a path that resolves to one of ``inputs`` (a folder among them: any existing file
    in it); a path inside a checkpoint or checkpoint folder; a path inside a run folder that is
    not one of ``own`` (the runs this command reads or writes), and in any run folder a name a
    run owns (``RUN_FILE_NAMES``).  With ``folder`` the path is a folder the command writes (a
    run, a checkpoint folder): it may itself be a run folder of ``own`` or a checkpoint folder
    (then training.run.ownership decides whose, wherever it lies), never a checkpoint or
    another run's folder."""
    real, shown = _real(path), os.fspath(path)
    own = [_real(p) for p in own if p is not None and os.fspath(p)]
    for given in inputs:
        if given is None or not os.fspath(given):
            continue
        source = _real(given)
        if _same(real, source) or (os.path.isdir(source) and _inside(real, source) and os.path.lexists(real)):
            raise UsageError(
                f"{flag} {shown} is an input of this command ({given}); writing it would destroy "
                f"it: choose another path"
            )
    if folder:
        kind = folder_kind(real)
        if kind == CHECKPOINT_FOLDER:
            return  # its owner.json says whose it is: training.run.ownership decides, naming that run
        if kind == CHECKPOINT:
            raise UsageError(f"{flag} {shown} is {kind}; choose a folder outside it")
        if kind == RUN_FOLDER and real not in own:
            raise UsageError(f"{flag} {shown} is the folder of another run; choose another folder")
    parent = os.path.dirname(real)
    if not folder and os.path.basename(real) in RUN_FILE_NAMES and folder_kind(parent):
        raise UsageError(
            f"{flag} {shown} is a file of a training run ({parent} is {folder_kind(parent)}); "
            f"choose another name"
        )
    while True:  # every folder above the path, up to the first that is this command's own
        if parent in own:
            return
        kind = folder_kind(parent)
        if kind == RUN_FOLDER:
            raise UsageError(
                f"{flag} {shown} lies inside {parent}, the folder of another run (not one this "
                f"command reads or writes); choose a path outside it"
            )
        if kind is not None:
            raise UsageError(f"{flag} {shown} lies inside {parent}, {kind}; choose a path outside it")
        if os.path.dirname(parent) == parent:
            return
        parent = os.path.dirname(parent)


def protected_reason(path, *, documented=(), replace_shipped: bool = False, root=None) -> str | None:
    """Why writing ``path`` would touch the package itself, or None.  ``documented``: this
    command's own documented outputs (files or folders) under the package root, which it may
    write; ``replace_shipped`` opens the SHIPPED trees (not the source)."""
    root = _real(PACKAGE_ROOT if root is None else root)
    real = _real(path)
    if not _inside(real, root):
        return None
    if any(_at_or_inside(real, _real(own)) for own in documented if own is not None):
        return None
    relative = os.path.relpath(real, root).replace(os.sep, "/")
    top = relative.split("/", 1)[0]
    own_files = f"lies in the package's own files ({top}); choose a path outside them"
    if top in PACKAGE_TREES and relative.endswith(".py"):  # code beside the plans (training/studies/*.py)
        return own_files  # is source, whatever --replace-shipped opens
    for tree in SHIPPED:
        if relative == tree or relative.startswith(tree + "/"):
            if replace_shipped:
                return None
            return (
                f"lies under {tree}/, among the package's shipped results; choose a path outside them, or "
                f"pass {REPLACE_SHIPPED} to regenerate shipped results on purpose"
            )
    return own_files if top in PACKAGE_TREES or relative in PACKAGE_FILES else None


def check_output(
    path,
    flag: str,
    *,
    kind: str = "file",
    inputs=(),
    own=(),
    documented=(),
    replace_shipped: bool = False,
    parents: bool = False,
) -> Path:
    """The pre-flight check of one output (module doc), as a UsageError; returns the path.

    ``kind``: "file" (replaced atomically) or "folder" (files written into it; it may be a run
    folder of ``own``).  ``parents``: a file's missing folders will be created."""
    if kind not in ("file", "folder"):
        raise ValueError(f"kind must be 'file' or 'folder', got {kind!r}")
    try:
        out = (
            check_output_file(path, flag, parents=parents) if kind == "file" else check_output_dir(path, flag)
        )
    except OutputError as error:
        raise UsageError(str(error)) from None
    reason = protected_reason(out, documented=documented, replace_shipped=replace_shipped)
    if reason is not None:
        raise UsageError(f"{flag} {os.fspath(path)} {reason}")
    check_not_owned(out, flag, inputs=inputs, own=own, folder=kind == "folder")
    return out


# --- declaring output flags, so that a test can enumerate them --------------------------------------------


def output_argument(parser, flag: str, *, kind: str = "file", **kwargs):
    """``parser.add_argument(flag, ...)`` for a path the command WRITES, marked so that
    ``output_actions`` finds it; the parser (or group) gains ``--replace-shipped`` once."""
    action = parser.add_argument(flag, **kwargs)
    action.output_kind = kind
    root = getattr(parser, "_container", parser)  # an argument group adds to its parser
    if not any(REPLACE_SHIPPED in a.option_strings for a in root._actions):
        root.add_argument(
            REPLACE_SHIPPED,
            action="store_true",
            help="allow outputs under the package's shipped results (training/reference, report, ...): "
            "for the scripts that regenerate them; the package's source is never an output",
        )
    return action


def output_actions(parser) -> list:
    """The output arguments declared with ``output_argument`` on ``parser``."""
    return [action for action in parser._actions if getattr(action, "output_kind", None)]

"""Shared command-line plumbing: every usage error is ONE line on stderr and exit status 2.

Subcommand modules raise ``UsageError`` for bad values they detect after parsing;
the dispatcher turns it into that line, and does the same for ``OutputError`` (an output
destination that cannot be written, found before the work or turned bad during it).
argparse's own errors go the same way through ``OneLineParser``.

``check_output`` (``theory.io.output_policy``) is the one guard every command's pre-flight output
check runs: an output is never one of the command's inputs, a file in a folder that a training
run owns, nor the package's own source or shipped results; outputs are declared with
``output_argument`` so that a test finds every one.
"""

from __future__ import annotations

import os
import sys

# the rooms' cli modules and the dispatcher (which may import only this module and the rooms) take these from here
from theory.io.cli import (  # noqa: F401
    OneLineParser,
    UsageError,
    ascii_int,
    int_list,
    interrupted,
    parse_int,
    quiet_interrupt_while_starting,
)
from theory.io.files import OutputError  # noqa: F401

# outputs: the one policy, and what a run owns (theory.io.output_policy); the rooms take them from here
from theory.io.output_policy import (  # noqa: F401
    CHECKPOINT,
    CHECKPOINT_FOLDER,
    REPLACE_SHIPPED,
    RUN_FILE_NAMES,
    RUN_FOLDER,
    check_not_owned,
    check_output,
    folder_kind,
    output_argument,
)

TASK_HELP = "the task: number or letter (Appendix B)"  # every command's --task


def report_usage_error(prog: str, error: Exception) -> int:
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2


def add_compute_options(parser) -> None:
    """``--threads`` and ``--no-progress``, shared by the commands that run a model."""
    parser.add_argument("--threads", type=ascii_int, default=None, metavar="K", help="torch CPU threads")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


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
    out = check_output(args.json, "--json", inputs=inputs, own=own, replace_shipped=args.replace_shipped)
    if args.threads is not None:
        if args.threads < 1:
            raise UsageError(f"--threads must be >= 1, got {args.threads}")
        import torch

        torch.set_num_threads(args.threads)
    return out

"""Shared command-line plumbing: every usage error is ONE line on stderr and exit status 2.

Subcommand modules raise ``UsageError`` for bad values they detect after parsing;
the dispatcher turns it into that line, and does the same for ``OutputError`` (an output
destination that cannot be written, found before the work or turned bad during it).
argparse's own errors go the same way through ``OneLineParser``.
"""

from __future__ import annotations

import sys

# the rooms' cli modules and the dispatcher (which may import only this module and the rooms) take these from here
from theory.cli import OneLineParser, UsageError, interrupted  # noqa: F401
from theory.files import OutputError, check_output_file


def report_usage_error(prog: str, error: Exception) -> int:
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2


def add_compute_options(parser) -> None:
    """``--threads`` and ``--no-progress``, shared by the commands that run a model."""
    parser.add_argument("--threads", type=int, default=None, metavar="K", help="torch CPU threads")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def check_output(path, flag: str):
    """The pre-flight check of one output file (theory.files.check_output_file) as a UsageError:
    an empty path, a folder or device, a missing or unwritable folder cost nothing."""
    try:
        return check_output_file(path, flag)
    except OutputError as error:
        raise UsageError(str(error)) from None


def prepare_json_output(args):
    """Check ``--json`` can be written and apply ``--threads`` before any work (no model is
    loaded before a bad destination is refused); return the path."""
    out = check_output(args.json, "--json")
    if args.threads is not None:
        if args.threads < 1:
            raise UsageError(f"--threads must be >= 1, got {args.threads}")
        import torch

        torch.set_num_threads(args.threads)
    return out

"""Command-line plumbing every package's commands share: a usage error is ONE line on stderr
and exit status 2.

Like ``theory.files`` this is not mathematics; it lives in ``theory`` because ``theory`` is
the one package that ``training``, ``proofs_check`` and ``figures`` may all import.
Standard library only.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["UsageError", "OneLineParser", "INTERRUPTED", "interrupted"]

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process ended by Ctrl-C


class UsageError(Exception):
    """A bad command-line value; the message names the value and what is allowed."""


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage before its error; we print just the error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def interrupted(prog: str, detail: str = "") -> int:
    """Ctrl-C in any command: one line on stderr (``detail`` says what was kept), no traceback;
    returns the exit status to give."""
    print(f"{prog}: interrupted{detail}", file=sys.stderr)
    return INTERRUPTED

"""Command-line plumbing every package's commands share: a usage error is ONE line on stderr
and exit status 2.

Like ``theory.files`` this is not mathematics; it lives in ``theory`` because ``theory`` is
the one package that ``training``, ``proofs_check`` and ``figures`` may all import.
Standard library only.
"""

from __future__ import annotations

import argparse

__all__ = ["UsageError", "OneLineParser"]


class UsageError(Exception):
    """A bad command-line value; the message names the value and what is allowed."""


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage before its error; we print just the error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")

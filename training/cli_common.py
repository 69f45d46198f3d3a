"""Shared command-line plumbing: every usage error is ONE line on stderr and exit status 2.

Subcommand modules raise ``UsageError`` for bad values they detect after parsing;
the dispatcher turns it into that line.  argparse's own errors go the same way
through ``OneLineParser``.
"""

from __future__ import annotations

import argparse
import sys


class UsageError(Exception):
    """A bad command-line value; the message names the value and what is allowed."""


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage before its error; we print just the error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def report_usage_error(prog: str, error: UsageError) -> int:
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2

"""Command-line plumbing every package's commands share: a usage error is ONE line on stderr
and exit status 2.

Like ``theory.io.files`` this is not mathematics; it lives in ``theory`` because ``theory`` is
the one package that ``training``, ``proofs_check`` and ``figures`` may all import.
Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys

__all__ = [
    "UsageError",
    "OneLineParser",
    "INTERRUPTED",
    "interrupted",
    "quiet_interrupt_while_starting",
    "parse_int",
    "ascii_int",
    "int_list",
]

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process ended by Ctrl-C


class UsageError(Exception):
    """A bad command-line value; the message names the value and what is allowed."""


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage before its error; we print just the error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


# Python's int() also reads "1_0" (10), other scripts' digits ("٣" is 3), "+3" and surrounding
# spaces: a typo would silently run another seed or count than the one typed.  Integers on the
# command line are ASCII digits with an optional leading minus, nothing else.
def parse_int(text) -> int:
    """``text`` as an integer written with the digits 0-9 (and an optional leading "-");
    ValueError naming the text otherwise."""
    text = str(text)
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"expected an integer written with the digits 0-9, got {text!r}")
    return int(text)


def ascii_int(text: str) -> int:
    """argparse ``type=``: ``parse_int``, its refusal as argparse's one-line error."""
    try:
        return parse_int(text)
    except ValueError as bad:
        raise argparse.ArgumentTypeError(str(bad)) from None


def int_list(text: str) -> list[int]:
    """Comma-separated integers (``parse_int`` each; empty parts skipped); ValueError otherwise."""
    try:
        return [parse_int(part.strip()) for part in str(text).split(",") if part.strip()]
    except ValueError:
        raise ValueError(
            f"expected comma-separated integers written with the digits 0-9, got {text!r}"
        ) from None


def interrupted(prog: str, detail: str = "") -> int:
    """Ctrl-C in any command: one line on stderr (``detail`` says what was kept), no traceback;
    returns the exit status to give."""
    print(f"{prog}: interrupted{detail}", file=sys.stderr)
    return INTERRUPTED


@contextlib.contextmanager
def quiet_interrupt_while_starting(prog: str):
    """Wrap an entry point's imports: Ctrl-C there (numpy, torch and matplotlib take seconds to
    import) prints one line and exits 130, like Ctrl-C later in ``main``, instead of a
    KeyboardInterrupt traceback from deep inside an import.

    A signal handler, not ``except KeyboardInterrupt``: an interrupt that lands inside an
    import can leave half-initialised modules behind, so the process leaves at once with
    ``os._exit`` (nothing has been written yet; no output is open before ``main`` runs).
    The default handler is back when the block ends, so ``main`` sees KeyboardInterrupt as usual."""

    def leave(signum, frame):
        os.write(2, f"{prog}: interrupted\n".encode())
        os._exit(INTERRUPTED)

    if (
        signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    ):  # started ignoring Ctrl-C (nohup, `cmd &`): keep ignoring it
        yield
        return
    previous = signal.signal(signal.SIGINT, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

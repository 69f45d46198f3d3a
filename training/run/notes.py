"""One-line notes of ``train`` on stderr: something it repaired or decided that the user should know."""

from __future__ import annotations

import sys

__all__ = ["note"]


def note(message: str) -> None:
    print(f"python -m training train: note: {message}", file=sys.stderr)

"""The claims registry: every checked statement, its recorded outcome, and its check.

A check is a function ``check(options) -> Outcome``.  A claim is a statement or an experiment
(``verdicts``: the words its statuses are shown with).  The *recorded* status is
what the last review of the evidence concluded (``verified``, ``refuted`` or
``undecided``); a run whose outcome differs from it is reported as a change, so
a refuted claim is a finding we keep reproducing, not an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .verdicts import KINDS, verdict

STATUSES = ("verified", "refuted", "undecided")


@dataclass
class Options:
    """What every check may read: search depth and optional trained runs."""

    thorough: bool = False
    weights: tuple = ()


@dataclass
class Outcome:
    status: str
    summary: str
    evidence: dict = field(default_factory=dict)
    counterexample: dict | None = None
    corrected: str | None = None  # id of the claim holding the corrected statement
    up_to_rounding: bool = False  # refuted only on a printed number's rounding boundary (verdicts)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


@dataclass
class Claim:
    id: str
    statement: str
    source: str
    recorded: str
    check: Callable[[Options], Outcome]
    kind: str  # "statement" or "experiment" (verdicts.KINDS): which words its statuses get

    def verdict(self, status: str, up_to_rounding: bool = False) -> str:
        return verdict(self.kind, status, up_to_rounding)


REGISTRY: dict[str, Claim] = {}


def claim(id: str, statement: str, source: str, recorded: str, kind: str):
    """Decorator registering ``check`` under ``id``; ``kind`` is "statement" or "experiment"."""
    if recorded not in STATUSES:
        raise ValueError(f"recorded status of {id} must be one of {STATUSES}, got {recorded!r}")
    if kind not in KINDS:
        raise ValueError(f"kind of {id} must be one of {KINDS}, got {kind!r}")

    def register(check):
        if id in REGISTRY:
            raise ValueError(f"claim id {id} registered twice")
        REGISTRY[id] = Claim(id, statement, source, recorded, check, kind)
        return check

    return register

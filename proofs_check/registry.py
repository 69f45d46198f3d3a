"""The claims registry: every checked statement, its recorded outcome, and its check.

A check is a function ``check(options) -> Outcome``.  A claim is a statement or an experiment
(``verdicts``: the words its statuses are shown with).  The *recorded* status is
what the last review of the evidence concluded (``verified``, ``refuted`` or
``undecided``), with ``up_to_rounding`` for a refutation that sits only on a printed number's
rounding boundary; a run whose verdict word differs from the recorded one (a status, the
rounding word gained or lost) is reported as a change, so a refuted claim is a finding we keep
reproducing, not an error.

Each claim also records its ``origin``: ``paper`` (a claim of the paper), ``corrected`` (the
package's statement replacing a false one) or ``package`` (the package's own statements and
hypotheses); and a verified statement its ``evidence`` class (``evidence``: proved, exhaustive
or finite cases), which words its verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from proofs_check.evidence.classes import Evidence

from .verdicts import KINDS, verdict

STATUSES = ("verified", "refuted", "undecided")
ORIGINS = ("paper", "corrected", "package")


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
    origin: str | None = None  # ORIGINS
    evidence: Evidence | None = None  # what a verified statement rests on (evidence.CLASSES)
    up_to_rounding: bool = False  # the recorded refutation holds up to rounding (verdicts)

    @property
    def evidence_class(self) -> str | None:
        return None if self.evidence is None else self.evidence.cls

    def verdict(self, status: str, up_to_rounding: bool = False) -> str:
        return verdict(self.kind, status, up_to_rounding, self.evidence_class, self.origin)

    def recorded_verdict(self) -> str:
        return self.verdict(self.recorded, self.up_to_rounding)

    @property
    def group(self) -> str:
        """The group a reader finds the claim in (``GROUPS``): the paper's claims, the package's
        corrected statements, the package's own hypotheses."""
        return self.origin or "paper"


# the three groups every listing keeps apart (summary, Read first, --list, --json), by origin
GROUPS = {
    "paper": "the paper's claims",
    "corrected": "the package's corrected statements",
    "package": "the package's own hypotheses",
}

REGISTRY: dict[str, Claim] = {}


def claim(
    id: str,
    statement: str,
    source: str,
    recorded: str,
    kind: str,
    *,
    origin: str | None = None,
    evidence: Evidence | None = None,
    up_to_rounding: bool = False,
):
    """Decorator registering ``check`` under ``id``; ``kind`` is "statement" or "experiment",
    ``origin`` one of ORIGINS, ``evidence`` a verified statement's class, ``up_to_rounding`` a
    recorded refutation's rounding word.  A claim left without origin or class still registers
    (tests/test_evidence.py names it), so a module being written never breaks the import."""
    if recorded not in STATUSES:
        raise ValueError(f"recorded status of {id} must be one of {STATUSES}, got {recorded!r}")
    if kind not in KINDS:
        raise ValueError(f"kind of {id} must be one of {KINDS}, got {kind!r}")
    if origin is not None and origin not in ORIGINS:
        raise ValueError(f"origin of {id} must be one of {ORIGINS}, got {origin!r}")
    if evidence is not None and (kind, recorded) != ("statement", "verified"):
        raise ValueError(f"{id}: only a verified statement carries an evidence class")
    if up_to_rounding and (kind, recorded) != ("statement", "refuted"):
        raise ValueError(f"{id}: only a refuted statement can hold up to rounding")

    def register(check):
        if id in REGISTRY:
            raise ValueError(f"claim id {id} registered twice")
        REGISTRY[id] = Claim(id, statement, source, recorded, check, kind, origin, evidence, up_to_rounding)
        return check

    return register

"""The words a reader sees for an outcome: a statement and an experiment fail differently.

The registry records one of three statuses per claim (``registry.STATUSES``); the exit status
and the CHANGED lines compare those.  What a status *means* depends on the claim's kind:

* a **statement** (mathematics, or arithmetic on the paper's printed numbers) is ``verified``,
  ``false`` (a counterexample, certified) or ``undecided``; a verified statement is worded by
  what it rests on (``evidence``, issue 42): ``verified (proved)`` (an argument whose every step
  is checked), ``verified (exhaustive)`` (a finite statement, every case checked) or ``holds in
  every case checked`` (finitely many of infinitely many cases; a statement that declares no
  class is worded so too, since its check can say no more);
* an **experiment** (a training run, a pretrained model, a measured cost) is ``reproduced``,
  ``not reproduced`` (our recipe did not give what the paper reports) or ``undecided``.

The package's own hypotheses (``origin`` "package", registry) are neither the paper's claims nor
its corrections: an experiment the package proposed is ``supported``, ``not supported`` or
``undecided`` (nothing of the paper is reproduced or not by it); the package's own mathematical
statements keep the statement words.

A refuted statement whose only failures sit on a printed number's rounding boundary (the
text says "above 0.88" of a table printing 0.88, which may stand for 0.884) is neither
false nor true as printed: it ``holds up to rounding``.  The check says so
(``Outcome.up_to_rounding``); this module only names it.
"""

from __future__ import annotations

from proofs_check.evidence.classes import EXHAUSTIVE, FINITE_CASES, PROVED

KINDS = ("statement", "experiment")
UP_TO_ROUNDING = "holds up to rounding"
# a verified statement's word by its evidence class (evidence.CLASSES)
BY_CLASS = {
    PROVED: "verified (proved)",
    EXHAUSTIVE: "verified (exhaustive)",
    FINITE_CASES: "holds in every case checked",
}
WORDS = {
    "statement": {"refuted": "false", "undecided": "undecided"},  # verified: by class (BY_CLASS)
    "experiment": {"verified": "reproduced", "refuted": "not reproduced", "undecided": "undecided"},
}
# an experiment of the package's own (origin "package"): a hypothesis, not a result of the paper
HYPOTHESIS_WORDS = {"verified": "supported", "refuted": "not supported", "undecided": "undecided"}
# every word a reader may see, in the order a summary counts them ("error": a check that crashed)
ALL_WORDS = (
    *BY_CLASS.values(),
    "false",
    UP_TO_ROUNDING,
    "reproduced",
    "not reproduced",
    "supported",
    "not supported",
    "undecided",
    "error",
)


def verdict(
    kind: str,
    status: str,
    up_to_rounding: bool = False,
    evidence_class: str | None = None,
    origin: str | None = None,
) -> str:
    """The word for ``status`` ("verified", "refuted", "undecided" or "error") of a claim of ``kind``;
    a verified statement's word names ``evidence_class`` (None: the weakest, finite cases); an
    experiment of ``origin`` "package" is a hypothesis (``HYPOTHESIS_WORDS``)."""
    if kind not in WORDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if status == "error":
        return "error"
    if (origin, kind) == ("package", "experiment"):
        return HYPOTHESIS_WORDS[status]
    if up_to_rounding and (kind, status) == ("statement", "refuted"):
        return UP_TO_ROUNDING
    if (kind, status) == ("statement", "verified"):
        return BY_CLASS[evidence_class or FINITE_CASES]
    return WORDS[kind][status]

"""The words a reader sees for an outcome: a statement and an experiment fail differently.

The registry records one of three statuses per claim (``registry.STATUSES``); the exit status
and the CHANGED lines compare those.  What a status *means* depends on the claim's kind:

* a **statement** (mathematics, or arithmetic on the paper's printed numbers) is ``verified``
  (proved, or checked exhaustively or with interval arithmetic), ``false`` (a counterexample,
  certified) or ``undecided``;
* an **experiment** (a training run, a pretrained model, a measured cost) is ``reproduced``,
  ``not reproduced`` (our recipe did not give what the paper reports) or ``undecided``.

A refuted statement whose only failures sit on a printed number's rounding boundary (the
text says "above 0.88" of a table printing 0.88, which may stand for 0.884) is neither
false nor true as printed: it ``holds up to rounding``.  The check says so
(``Outcome.up_to_rounding``); this module only names it.
"""

from __future__ import annotations

KINDS = ("statement", "experiment")
UP_TO_ROUNDING = "holds up to rounding"
WORDS = {
    "statement": {"verified": "verified", "refuted": "false", "undecided": "undecided"},
    "experiment": {"verified": "reproduced", "refuted": "not reproduced", "undecided": "undecided"},
}
# every word a reader may see, in the order a summary counts them ("error": a check that crashed)
ALL_WORDS = ("verified", "false", UP_TO_ROUNDING, "reproduced", "not reproduced", "undecided", "error")


def verdict(kind: str, status: str, up_to_rounding: bool = False) -> str:
    """The word for ``status`` ("verified", "refuted", "undecided" or "error") of a claim of ``kind``."""
    if kind not in WORDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if status == "error":
        return "error"
    if up_to_rounding and (kind, status) == ("statement", "refuted"):
        return UP_TO_ROUNDING
    return WORDS[kind][status]

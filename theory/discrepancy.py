"""Discrepancy of an attention head (Definition 3.1): the per-input gap, the readings,
and certified decisions.  T_Index's and T_Retrieval's discrepancies live in
``theory.discrepancy_index`` and ``theory.discrepancy_retrieval``.

The per-input gap.  ``logit_gap(row)`` is the largest minus the second-largest entry of a
logit row (0 on a tie, the gap of Definition 3.1 and of F.2.1's Delta_theta(sigma));
``ties="next"`` gives Lemma F.1's Delta(sigma): the largest minus the largest entry
*strictly* below it (0 only for a constant row).

The readings (every result names the one it evaluates; they differ, see READINGS).
Decisions.  ``decide(quantity)`` returns the sign of an arb quantity, raising the precision
until the ball excludes 0, or None: a float never decides a status.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import flint
import numpy as np

from .numbers import Interval
from .phases import Angle, certified_cosines, cosine_key

__all__ = [
    "READINGS",
    "logit_gap",
    "Decision",
    "decide",
    "enclose_max",
    "enclose_min",
    "exact_row_gap",
    "Angle",
]

READINGS = {
    "sup": "Definition 3.1 / F.2.1 as written: the maximum over all inputs of length n of "
    "(largest - second-largest logit), a tie counting 0",
    "inf": "Lemma F.1's lambda(n): the minimum over inputs of length n of (largest logit - "
    "largest logit strictly below it), over the inputs where that is positive",
    "min": "the minimum over inputs of length n of (largest - second-largest logit), a tie "
    "counting 0 (F.2.1's per-input Delta minimised)",
    "competitor": "the Retrieval proof's displayed quantity: the matched key's logit minus the "
    "best logit any other left symbol would have at any position, maximised over inputs",
    "margin": "the minimum over inputs of (best logit of a key with the matched left symbol - best "
    "logit of a key with another left symbol): what average-hard attention needs positive",
}


def logit_gap(row, ties: str = "zero"):
    """Largest minus second-largest entry of a logit row.

    ``ties="zero"``: a repeated maximum gives 0 (Definition 3.1).  ``ties="next"``: the
    largest minus the largest entry strictly below it, 0 for a constant row (Lemma F.1).
    Works on float arrays and object arrays of mpf; for arb balls it returns an enclosure
    of the gap (a ball that may contain 0: the caller decides, with certified comparisons;
    ``ties="next"`` is not defined on balls, whose equality cannot be decided).
    """
    if ties not in ("zero", "next"):
        raise ValueError(f"ties must be 'zero' or 'next', got {ties!r}")
    values = list(np.asarray(row, dtype=object).ravel())
    if len(values) < 2:
        return values[0] - values[0] if values else 0.0  # one logit: no competitor, gap 0
    if isinstance(values[0], flint.arb):
        if ties == "next":
            raise TypeError("ties='next' needs exact equality; decide ties on phases instead")
        top = enclose_max(values)
        # the second-largest entry is an order statistic: monotone in every entry, so the
        # second-largest lower bound and second-largest upper bound enclose it
        lows = sorted((v.lower() for v in values), key=lambda b: b.mid())
        highs = sorted((v.upper() for v in values), key=lambda b: b.mid())
        second = lows[-2].union(highs[-2])
        gap = top - second
        return gap.nonnegative_part() if hasattr(gap, "nonnegative_part") else gap
    ordered = sorted(values, reverse=True)
    if ties == "zero":
        return ordered[0] - ordered[1]
    below = [v for v in ordered if v < ordered[0]]
    return ordered[0] - below[0] if below else ordered[0] - ordered[0]


def enclose_max(balls):
    """A ball enclosing the maximum of arb balls (no order between them is needed)."""
    return functools.reduce(lambda a, b: a.max(b), balls)


def enclose_min(balls):
    return functools.reduce(lambda a, b: a.min(b), balls)


@dataclass(frozen=True)
class Decision:
    """The sign of a certified quantity: +1, -1, or None (undecided at ``prec`` bits)."""

    sign: int | None
    value: str
    prec: int


def decide(quantity, prec: int = 128, max_prec: int = 8192) -> Decision:
    """Sign of ``quantity(balls)`` (an arb), raising the precision until the ball excludes 0."""
    while True:
        balls = Interval(prec)
        with balls.working():
            value = quantity(balls)
            text = value.str(20, radius=True)
            if value > 0:
                return Decision(1, text, prec)
            if value < 0:
                return Decision(-1, text, prec)
        if prec >= max_prec:
            return Decision(None, text, prec)
        prec *= 4


def exact_row_gap(phases, ties: str = "zero", prec: int = 128):
    """logit_gap of the row cos(phase_j), with ties decided exactly and values in arb."""
    table = certified_cosines(phases, prec)  # distinct cosines, certified decreasing order
    keys = [cosine_key(p) for p in phases]
    ranked = sorted(keys, key=lambda k: table.rank[k])
    top = ranked[0]
    if ties == "zero":
        second = ranked[1] if len(ranked) > 1 else top
    else:
        below = [k for k in ranked if k != top]
        second = below[0] if below else top
    balls = Interval(table.prec)
    with balls.working():
        return flint.arb(0) if second == top else table.value[top] - table.value[second]

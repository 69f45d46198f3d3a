"""Head purity over training (Appendix E, Figure 2C, Figure 7; claim C2).

Rule (``PURITY_RULE``): a head is pure of kind "positional" at a checkpoint when its mean
s_POS >= 1 - gamma and its mean s_SYM <= gamma ("symbolic" the other way round); it
"becomes pure at step S" when S is the first checkpoint from which it stays pure of the
same kind at every later checkpoint through the last one.  ``count[s]`` = number of heads
pure from a step <= s (the cumulative tally of Figure 2C); ``count_instantaneous[s]`` =
heads pure at s.  The paper uses gamma in ``GAMMAS``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GAMMAS", "PURITY_RULE", "purity"]

GAMMAS = (0.1, 0.05)
PURITY_RULE = (
    "pure at a checkpoint: one mean score >= 1 - gamma and the other <= gamma (kind = the high one); "
    "pure_from_step = the first checkpoint from which the head stays pure of the same kind through the "
    "last checkpoint (null: not pure at the last one); count[s] = heads with pure_from_step <= s"
)


def _state(positional: float, symbolic: float, gamma: float):
    if positional >= 1 - gamma and symbolic <= gamma:
        return "positional"
    if symbolic >= 1 - gamma and positional <= gamma:
        return "symbolic"
    return None


def purity(positional, symbolic, steps, gamma: float) -> dict:
    """The purity block for one gamma from mean scores (steps, layers) (``PURITY_RULE``)."""
    positional, symbolic = np.asarray(positional, dtype=float), np.asarray(symbolic, dtype=float)
    states = [[_state(p, s, gamma) for p, s in zip(prow, srow)] for prow, srow in zip(positional, symbolic)]
    pure_from, kinds = [], []
    for layer in range(positional.shape[1]):
        final = states[-1][layer]
        first = None
        if final is not None:
            first = len(steps) - 1
            while first > 0 and states[first - 1][layer] == final:
                first -= 1
        kinds.append(final)
        pure_from.append(None if first is None else int(steps[first]))

    def tally(kind=None):
        return [
            sum(1 for f, k in zip(pure_from, kinds) if f is not None and f <= step and kind in (None, k))
            for step in steps
        ]

    return {
        "gamma": gamma,
        "rule": PURITY_RULE,
        "count": tally(),
        "count_positional": tally("positional"),
        "count_symbolic": tally("symbolic"),
        "count_instantaneous": [sum(s is not None for s in row) for row in states],
        "state": states,
        "pure_from_step": pure_from,
        "kind": kinds,
    }

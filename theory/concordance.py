"""Harrell's concordance index between a predicted and a measured length, both right-censored.

A member's value is ``(value, limit)``: ``value`` a length, or None when nothing happened
within the lengths measured, i.e. the event lies beyond ``limit`` (right-censored there).
Whether i comes before j is *known* when i is observed and j is either observed later or
censored at a limit >= i's value (j's event lies beyond its limit, so beyond i's); two
censored values, or an observed value beyond the other's censoring limit, have no known order.
Equal observed values are a known tie.

Harrell's C over pairs: a pair is *comparable* when its measured order is known and strict;
it scores 1 when the predicted order is known and agrees, 0 when known and reversed, 1/2 when
the prediction ties or its order is unknown (both predicted beyond the lengths measured, say).
C = sum of weight x score / sum of weight over the comparable pairs (None: no comparable pair).

``pooled`` takes the pairs and weights from ``groups``: members of different groups only, each
pair weighted 1 / (size of i's group x size of j's group), so every two groups weigh the same
whatever their numbers of members (``proofs_check.claims.break_concordance`` says why).
``cluster_bootstrap`` resamples whole groups with replacement (a group drawn twice counts as two
groups), seeded; a draw with no comparable pair is left out and counted.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cluster_bootstrap", "harrell_c", "order_known", "pair_score", "pooled"]


def order_known(a: tuple, b: tuple) -> int | None:
    """-1 when a is known to come before b, +1 when after, 0 a known tie, None unknown; a and b
    are (value or None, limit) (module doc)."""
    (va, la), (vb, lb) = a, b
    if va is None and vb is None:
        return None
    if va is not None and vb is not None:
        return (va > vb) - (va < vb)
    if vb is None:  # b beyond lb
        return -1 if va <= lb else None
    return 1 if vb <= la else None


def pair_score(predicted: tuple, measured: tuple) -> float | None:
    """Harrell's score of one pair: predicted = (p_i, p_j), measured = (m_i, m_j) as
    (value, limit) tuples; None when the pair is not comparable."""
    truth = order_known(*measured)
    if not truth:  # unknown or a tie: not comparable
        return None
    guess = order_known(*predicted)
    if not guess:
        return 0.5
    return 1.0 if guess == truth else 0.0


def harrell_c(pairs) -> dict:
    """C over ``pairs`` = iterable of (weight, predicted pair, measured pair)."""
    total = scored = 0.0
    count = 0
    for weight, predicted, measured in pairs:
        score = pair_score(predicted, measured)
        if score is None:
            continue
        total += weight
        scored += weight * score
        count += 1
    return {"c": scored / total if total else None, "comparable_pairs": count, "weight": total}


def pooled(predicted: list, measured: list, groups: list) -> dict:
    """Harrell's C over the pairs of members in different ``groups``, weighted 1/(n_g n_h)."""
    size = {g: groups.count(g) for g in set(groups)}
    n = len(groups)

    def pairs():
        for i in range(n):
            for j in range(i + 1, n):
                if groups[i] != groups[j]:
                    yield (
                        1.0 / (size[groups[i]] * size[groups[j]]),
                        (predicted[i], predicted[j]),
                        (measured[i], measured[j]),
                    )

    return harrell_c(pairs())


def cluster_bootstrap(
    predicted: list, measured: list, groups: list, draws: int, seed: int, level: float = 0.95
) -> dict:
    """Percentile interval of ``pooled``'s C over ``draws`` resamples of whole groups."""
    names = sorted(set(groups))
    members = {g: [i for i, x in enumerate(groups) if x == g] for g in names}
    rng = np.random.default_rng(seed)
    values, empty = [], 0
    for _ in range(draws):
        p, m, g = [], [], []
        for copy, name in enumerate(rng.choice(len(names), size=len(names), replace=True)):
            for i in members[names[name]]:  # each drawn copy is its own group
                p.append(predicted[i])
                m.append(measured[i])
                g.append(copy)
        c = pooled(p, m, g)["c"]
        if c is None:
            empty += 1
        else:
            values.append(c)
    if not values:
        return {"interval": None, "draws": draws, "without_comparable_pairs": empty, "seed": seed}
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return {
        "interval": [float(low), float(high)],
        "draws": draws,
        "without_comparable_pairs": empty,
        "seed": seed,
        "level": level,
    }

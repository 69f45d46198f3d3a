"""Spread over independent repeats (seeds): mean, sd and a 95% interval for the mean.

Student t, not the bootstrap: a study has a handful of seeds (3 to 5), where a percentile
bootstrap has few distinct resamples (126 for n = 5) and is known to under-cover, while the
t interval is exact for normal repeats and widens honestly as n shrinks.  Accuracies live in
[0, 1]; ``bounds`` clips the interval there (and the result says it was clipped), since a
t interval knows nothing of the range.  One value has no spread: sd and interval are None.

Within one model, an accuracy is k correct of n inputs: ``binomial_interval`` gives the Wilson
score interval, which stays inside [0, 1] and keeps its coverage near 0 and 1, where the
accuracies of interest sit (the normal interval collapses to a point at k = n).

An accuracy compared with a threshold goes through ``reaches``: files written before
2026-12-02 hold accuracies rounded through float32 (180/200 = 0.9 stored as 0.8999999762), and
a plain ``>=`` read such a model as below 0.9.  ``ACCURACY_TOLERANCE`` = 1e-6 is far above
float32's rounding near 1 (about 6e-8) and far below the step 1/n of any count n of inputs we
evaluate (n <= 10^5), so it forgives the rounding and never turns a real miss into a hit.
"""

from __future__ import annotations

import math

from scipy import stats

__all__ = ["INTERVAL_METHOD", "ACCURACY_TOLERANCE", "mean_interval", "binomial_interval", "reaches"]

INTERVAL_METHOD = (
    "Student t 95% interval for the mean over seeds: mean +- t(0.975, n-1) * sd / sqrt(n), "
    "sd with n-1; clipped to the quantity's range where it has one"
)
ACCURACY_TOLERANCE = 1e-6


def reaches(accuracy: float, threshold: float) -> bool:
    """``accuracy >= threshold``, forgiving float32 rounding of a stored accuracy (module doc)."""
    return accuracy >= threshold - ACCURACY_TOLERANCE


def mean_interval(values, level: float = 0.95, bounds: tuple | None = None) -> dict:
    """{"n", "mean", "sd", "ci": [low, high], "clipped"} of the finite ``values``."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "ci": None, "clipped": False}
    mean = math.fsum(xs) / n
    if n == 1:
        return {"n": 1, "mean": mean, "sd": None, "ci": None, "clipped": False}
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    clipped = False
    if bounds is not None:
        clipped = low < bounds[0] or high > bounds[1]
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return {"n": n, "mean": mean, "sd": sd, "ci": [low, high], "clipped": clipped}


def binomial_interval(correct: int, total: int, level: float = 0.95) -> list[float]:
    """Wilson score interval [low, high] for a proportion of ``correct`` out of ``total``."""
    if total < 1 or not 0 <= correct <= total:
        raise ValueError(f"need 0 <= correct <= total and total >= 1, got {correct} of {total}")
    z = float(stats.norm.ppf(0.5 + level / 2))
    p, zz = correct / total, z * z / total
    centre = (p + zz / 2) / (1 + zz)
    half = z * math.sqrt(p * (1 - p) / total + zz / (4 * total)) / (1 + zz)
    return [max(0.0, centre - half), min(1.0, centre + half)]

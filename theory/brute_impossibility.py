"""Brute force for the package's own statements in ``theory.impossibility`` (issue 16):
C6-retrieval-hard (hard positional attention errs on Retrieval) and C13-sharp-constant (the
exclusion bound's constant 1 is sharp, attained exactly by additive heads).

Neither search uses the witnesses of ``theory.impossibility`` (``hard_positional_pair``,
``additive_matrix``): the first enumerates every proper input, the second every small
integer logit table, in exact integer arithmetic.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .brute_retrieval import proper_inputs
from .functions import retrieval

__all__ = ["hard_attention_pair", "attended_sets", "exclusion_extremes"]


def attended_sets(n: int):
    """Every J subset of 1..n that misses some earlier position (the statement's range)."""
    for size in range(n + 1):
        for J in itertools.combinations(range(1, n + 1), size):
            if any(p not in J for p in range(1, n)):
                yield frozenset(J)


def hard_attention_pair(A: int, m: int, n: int, attended) -> tuple | None:
    """Two proper inputs of length n (ALPH = A letters, INT = 1..m) with the same tokens at every
    position of ``attended`` and at n (hard attention on ``attended`` plus the query sees the
    same thing) but different Retrieval answers at n; None when no such pair exists."""
    seen = {}
    keep = sorted(set(attended) | {n})
    for tokens in proper_inputs(A, m, n):
        view = tuple(tokens[p - 1] for p in keep)
        answer = retrieval(list(tokens))[-1]
        first = seen.setdefault(view, (tokens, answer))
        if first[1] != answer:
            return list(first[0]), list(tokens)
    return None


def _all_tables(N: int, values: int) -> np.ndarray:
    grid = np.array(list(itertools.product(range(values), repeat=N * N)), dtype=np.int64)
    return grid.reshape(-1, N, N)


def exclusion_extremes(N: int, values: int, sample_variance: bool = False) -> dict:
    """Over every N x N logit table M with entries in 0..values-1 (M[k, j]: content k at
    position j) whose right-hand side is not 0: the largest Var / RHS (exact Fraction) and
    whether the tables attaining 1 are exactly the additive ones (2 M_kj = M_jj + M_kk).
    Var is the population variance of the diagonal (the sample variance with the flag);
    RHS = (||delta_pos||^2 + ||delta_sym||^2) / (N! N), both norms over every permutation."""
    M = _all_tables(N, values)
    diag = np.einsum("bjj->bj", M)
    spread = ((diag[:, :, None] - diag[:, None, :]) ** 2).sum(axis=(1, 2))  # = 2 N^2 Var
    norms = np.zeros(len(M), dtype=np.int64)
    for pi in itertools.permutations(range(N)):
        moved = M[:, list(pi), range(N)]  # M[pi(j), j]
        swapped = M[:, range(N), list(pi)]  # M[j, pi(j)]
        norms += ((moved - diag) ** 2).sum(axis=1) + ((swapped - diag) ** 2).sum(axis=1)
    var_denominator = 2 * N * (N - 1) if sample_variance else 2 * N * N
    live = norms > 0
    # ratio = (spread / var_denominator) / (norms / (N! N)), compared exactly in integers
    num, den = spread[live] * math.factorial(N) * N, norms[live] * var_denominator
    best = max((Fraction(int(a), int(b)) for a, b in zip(num, den)), default=Fraction(0))
    at_one = num == den
    additive = (2 * M == diag[:, None, :] + diag[:, :, None]).all(axis=(1, 2))[live]
    return {
        "N": N,
        "values": values,
        "tables": int(live.sum()),
        "largest_ratio": best,
        "attaining_one": int(at_one.sum()),
        "additive": int(additive.sum()),
        "one_iff_additive": bool(np.array_equal(at_one, additive)),
    }

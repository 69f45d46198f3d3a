"""Attention and decoding of a construction, in any number system (Appendix F.2).

Average-hard attention averages the values at the keys of maximal logit; softmax weighs
them by exp(beta * logit).  Decoding takes the unique argmax of the candidate scores and
gives no token (-1) when the top score is shared; the decoding gap is top minus second.
float64 is vectorised over batches; mpmath and sympy go row by row, and ties are decided
with a tolerance that matches each system (``tie_tolerance``), exactly in sympy.
"""

from __future__ import annotations

import numpy as np
import sympy

from theory.numbers import FLOAT64, SYMBOLIC, Interval, MultiPrecision, NumberSystem

__all__ = [
    "FLOAT_TIE",
    "DECODE_TIE",
    "tie_tolerance",
    "top_indices",
    "average_hard",
    "softmax",
    "decode",
    "extreme",
]

FLOAT_TIE = 1e-12  # float64 cannot tell logits closer than this apart; they count as tied
DECODE_TIE = 1e-9  # nor decoding scores (small integers over |J|) closer than this


def tie_tolerance(numbers: NumberSystem):
    """How close two values of ``numbers`` may be and still count as tied (0: exactly equal)."""
    if numbers is FLOAT64:
        return FLOAT_TIE
    if isinstance(numbers, MultiPrecision):
        return numbers.ctx.mpf(10) ** (8 - numbers.dps)
    return 0


def top_indices(row, numbers):
    """Indices of the maximal entries of one row (None / -inf entries are masked keys)."""
    live = [j for j, x in enumerate(row) if x is not None and not (numbers is FLOAT64 and x == -np.inf)]
    if numbers is SYMBOLIC:  # exact: rank numerically, then prove every near-tie by simplification
        approx = {j: sympy.N(row[j], 60) for j in live}
        best = max(approx.values())
        near = [j for j in live if best - approx[j] < sympy.Float("1e-50")]
        if any(sympy.simplify(row[j] - row[near[0]]) != 0 for j in near[1:]):
            raise ArithmeticError("sympy could not decide a near-tie between two values")
        return near
    best = max(row[j] for j in live)
    tol = tie_tolerance(numbers)
    return [j for j in live if row[j] >= best - tol]


def average_hard(logits, values, numbers):
    """Each row's output: the mean of the values at its maximal logits."""
    if numbers is FLOAT64:
        top = logits.max(axis=-1, keepdims=True)
        chosen = logits >= top - FLOAT_TIE
        return (chosen / chosen.sum(axis=-1, keepdims=True)) @ values
    out = np.empty(logits.shape[:-1] + values.shape[-1:], dtype=object)
    for i in range(logits.shape[-2]):
        top = top_indices(list(logits[i]), numbers)
        with numbers.working():
            out[i] = sum((values[j] for j in top[1:]), values[top[0]]) / numbers.convert(len(top))
    return out


def softmax(logits, values, beta, numbers):
    """Each row's output: the values weighted by softmax(beta * logits) (float64 or mpmath)."""
    if numbers is FLOAT64:
        shifted = beta * (logits - logits.max(axis=-1, keepdims=True))
        weights = np.exp(shifted)
        return (weights / weights.sum(axis=-1, keepdims=True)) @ values
    if not isinstance(numbers, MultiPrecision):
        raise ValueError(f"softmax is evaluated in float64 or mpmath, not in {numbers.name}")
    ctx = numbers.ctx
    out = np.empty(logits.shape[:-1] + values.shape[-1:], dtype=object)
    for i in range(logits.shape[-2]):
        live = [j for j, x in enumerate(logits[i]) if x is not None]
        top = max(logits[i][j] for j in live)
        weights = {j: ctx.exp(numbers.convert(beta) * (logits[i][j] - top)) for j in live}
        total = ctx.fsum(weights.values())
        out[i] = sum((values[j] * (weights[j] / total) for j in live), values[0] * 0)
    return out


def decode(scores, numbers):
    """Unique-argmax decoding: (ids with -1 where the top score is shared, decoding gaps)."""
    if numbers is FLOAT64:
        order = np.sort(scores, axis=-1)
        gaps = order[..., -1] - order[..., -2]
        out = np.where(gaps > DECODE_TIE, scores.argmax(axis=-1), -1)
        return out, gaps
    out, gaps = [], []
    for row in scores:
        top = top_indices(list(row), numbers)
        ranked = sorted(row, key=lambda x: sympy.N(x, 60) if numbers is SYMBOLIC else x)
        gaps.append(ranked[-1] - ranked[-2])
        out.append(top[0] if len(top) == 1 else -1)
    return np.array(out), gaps


def extreme(values, numbers: NumberSystem, largest: bool = True):
    """max (or min) of a list in any system; for arb balls a ball certainly holding it."""
    values = list(values)
    if isinstance(numbers, Interval):
        with numbers.working():
            out = values[0]
            for x in values[1:]:
                out = out.max(x) if largest else out.min(x)
            return out
    return max(values) if largest else min(values)

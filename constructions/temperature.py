"""Lemma F.1 made explicit: an inverse temperature beta that provably suffices.

The paper proves only that some beta exists.  Here is one, for one-head constructions whose
decoding scores are S = G(x) + a, linear in the attention output a with coefficient 1
(T_Index: F(x, a) = x + a; T_Retrieval: F(x, a) = a).

Setting.  One query with n <= n0 keys, logits L_j, top value mu, value vectors V_j (restricted
to the candidate coordinates).  Average-hard attention outputs the mean of V_j over the top
set J; softmax at inverse temperature beta outputs sum_j w_j V_j, w_j = e^(beta L_j) / Z.
  delta   the decoding gap of average-hard attention: min over inputs of top score minus
          every other score (both constructions: delta = 1, proven next to their weights);
  Gamma   max over candidates c* != c of [max_X g(V_X) - min_X g(V_X)], g(V) = V[c*] - V[c],
          over the vocabulary X (T_Index: 4, values 2 e_letter or 0; T_Retrieval: 2, one-hot);
  lambda  the smallest logit gap over all inputs of length <= n0 between the top and any
          position whose value could differ (``value_aware``), or, as in the paper's proof,
          any position below the top (``lemma``).  When every top set holds one value,
          lambda_lemma <= lambda_value_aware; a tolerated tie between different values at the
          top (T_Index letter queries) makes value_aware 0 and leaves only the lemma version.

Claim.  If lambda > 0, delta > 0 and beta >= ln((n0 - 1) Gamma / delta) / lambda, softmax
attention at beta decodes every input of length <= n0 to the average-hard output.

Proof.  Let K be the positions counted by lambda (lemma: j not in J; value-aware: V_j != V*,
where V* is the common value of the top set, which both constructions have whenever they are
exact).  Z > e^(beta mu) as soon as K is non-empty, so w_j < e^(-beta (mu - L_j)) <= e^(-beta lambda)
for j in K, and |K| <= n - 1 <= n0 - 1 (the top is not in K).  Value-aware: every j not in K
has V_j = V* = a; lemma: the top positions share their weight equally (equal logits).  Either
way a_beta - a = sum_{j in K} w_j (V_j - a), and since a lies in the convex hull of the values,
|g(V_j - a)| <= Gamma.  For the decoded c* and every c != c*:
  S_beta[c*] - S_beta[c] >= delta - Gamma sum_{j in K} w_j > delta - Gamma (n0 - 1) e^(-beta lambda) >= 0.
(If K is empty, a_beta = a.)  The bound needs no property of the inputs beyond lambda, so the
same argument gives ``margin_lower_bound``, which the tests compare with observed margins.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from theory.numbers import Interval, MultiPrecision

__all__ = [
    "value_spread",
    "sufficient_beta",
    "margin_lower_bound",
    "certified_gaps",
    "temperature_report",
    "observed_critical_beta",
]


def value_spread(model) -> int:
    """Gamma: the largest swing of one score difference over the value vectors (exact ints)."""
    _, values = model.integer_tables()
    best = 0
    for top in range(values.shape[1]):
        swing = values[:, [top]] - values  # g(V_X) for every candidate c (columns) and token X
        best = max(best, int((swing.max(axis=0) - swing.min(axis=0)).max()))
    return best


def sufficient_beta(gap, n0: int, spread: int, delta) -> float:
    """ln((n0 - 1) Gamma / delta) / lambda; inf when lambda <= 0 (no beta works in general)."""
    if gap is None or gap <= 0:
        return math.inf
    return max(0.0, math.log((n0 - 1) * spread / delta)) / float(gap)


def margin_lower_bound(beta, gap, n: int, spread: int, delta) -> float:
    """delta - Gamma (n - 1) e^(-beta lambda): the proof's lower bound on every softmax margin."""
    return delta - spread * (n - 1) * math.exp(-beta * float(gap))


def certified_gaps(model, precisions=(128, 512, 2048, 8192)) -> dict:
    """The gaps of ``model.logit_gaps`` as arb balls, at the first precision that decides every
    sign and pins every gap to 50 bits (a gap near 0 needs more bits than its size suggests)."""
    for prec in precisions:
        balls = Interval(prec)
        gaps = model.logit_gaps(balls)
        with balls.working():
            signs = {
                name: (
                    None
                    if ball is None
                    else "positive"
                    if ball > 0
                    else "zero or negative"
                    if ball <= 0
                    else "undecided"
                )
                for name, ball in gaps.items()
            }
            sharp = all(ball is None or ball.rel_accuracy_bits() >= 50 for ball in gaps.values())
        if sharp and "undecided" not in signs.values():
            break
    return {"balls": gaps, "signs": signs, "prec": prec}


def _checked_values(model, balls: dict, dps: int) -> dict:
    """mpmath values of the gaps, at rising precision until each agrees with its certified
    ball to 12 digits (a gap near 0, from an angle near a tie, cancels most of its digits)."""
    while dps <= 8000:
        values = model.logit_gaps(MultiPrecision(dps))
        if all(
            ball is None
            or abs(mpmath.mpf(ball.mid().str(30, radius=False)) - values[name])
            <= abs(values[name]) * mpmath.mpf(10) ** -12
            for name, ball in balls.items()
        ):
            return values
        dps *= 2
    raise ArithmeticError("mpmath did not reproduce the certified gaps below 8000 digits")


def temperature_report(model, dps: int = 30) -> dict:
    """lambda (certified sign, mpmath value), delta, Gamma and the sufficient betas.

    When the construction is not exact under average-hard attention, Lemma F.1's hypothesis
    delta > 0 fails and no beta is claimed (inf)."""
    certified = certified_gaps(model)
    signs = certified["signs"]
    values = _checked_values(model, certified["balls"], dps)
    exact = model.is_exact()
    spread, delta = value_spread(model), model.decoding_gap
    row = {
        "construction": type(model).__name__,
        "n0": model.n0,
        "theta": str(model.theta),
        "theta_decimal": model.theta.decimal(20),
        "exact_under_average_hard": exact,
        "delta": delta if exact else 0,
        "Gamma": spread,
    }
    for name in values:
        gap, sign = values[name], signs[name]
        usable = gap if sign == "positive" and exact else None
        row[f"lambda_{name}"] = None if gap is None else mpmath.nstr(gap, 15)
        row[f"lambda_{name}_sign"] = sign
        row[f"beta_{name}"] = sufficient_beta(usable, model.n0, spread, delta)
    return row


def observed_critical_beta(model, ids, low: float = 1e-3, high: float = 1e9, steps: int = 60) -> float:
    """The smallest beta (to bisection accuracy) above which softmax decodes ``ids`` exactly
    as average-hard attention does at every position: how much of the proven beta is needed."""
    hard, _ = model.forward_batch(ids, "hard")

    def right(beta):
        out, _ = model.forward_batch(ids, "softmax", beta)
        return bool(np.array_equal(out, hard))

    if not right(high):
        return math.inf
    for _ in range(steps):
        middle = math.sqrt(low * high)
        low, high = (low, middle) if right(middle) else (middle, high)
    return high

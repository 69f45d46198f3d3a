"""The sup and lambda readings of T_Retrieval in closed form (C7-retrieval-sup-exact,
C7-retrieval-inf-corrected): ``theory.discrepancy_retrieval``'s module docstring as checked
steps, on top of the margin argument (``.retrieval``)."""

from __future__ import annotations

import sympy
from sympy import cos, pi, sin

from proofs_check.evidence.classes import Step, proved
from theory import retrieval_formulas as F

from . import cos_decreasing, is_zero, nonnegative, positive
from .retrieval import (
    BEST_OTHER_STEP,
    C8_PROOF,
    MONOTONE,
    PRODUCT,
    REGIME,
    ROWS,
    SYMMETRY,
    TP,
    WORST,
    N,
    Rp,
    U,
    W,
    X,
)

REGIME_HYP = {W: 2 * (N - 1) * X + Rp, TP: X, N: 2 + U}  # 2(n-1) theta' < omega, theta' >= 0, n >= 2


def top_is_matched() -> bool:
    """(n-1) theta' < omega/2 < omega - (n-1) theta' <= pi: every matched key (>= cos((n-1) theta')) is
    above cos(omega/2), every other-symbol key (<= cos(omega - (n-1) theta')) below it."""
    return (
        positive(W / 2 - (N - 1) * TP, REGIME_HYP)
        and positive(W - (N - 1) * TP - W / 2, REGIME_HYP)
        and cos_decreasing()
    )


def lowest_logit() -> bool:
    """The lowest logit at offset t: the angle d omega + x (x = t theta' in [0, omega/2)) nearest to pi.
    A even: d = A/2 + k gives distance |k omega + x| >= x (k >= 0) or >= omega - x > x (k <= -1), so
    d = A/2, cos(pi + x) = -cos x.  A odd: d = (A-1)/2 + k gives |k omega - omega/2 + x| >= omega/2 - x,
    equality at k = 0, cos(pi - (omega/2 - x)) = -cos(omega/2 - x)."""
    x, hyp = sympy.Symbol("x", nonnegative=True), {W: 2 * X + Rp}
    k = sympy.Symbol("k", nonnegative=True, integer=True)
    even = (
        nonnegative((k * W + X) - X, {W: Rp, X: X})
        and nonnegative(((1 + k) * W - X) - X, {**hyp})
        and is_zero(cos(pi + x) + cos(x))
    )
    odd = (
        nonnegative((k + 1) * W - W / 2 + X - (W / 2 - X), hyp)
        and nonnegative((k + 1) * W + W / 2 - X - (W / 2 - X), hyp)
        and is_zero(cos(pi - (W / 2 - x)) + cos(W / 2 - x))
    )
    return even and odd and cos_decreasing()


def sup_value() -> bool:
    """top - second <= cos(t* theta') - max over t != t* of the lowest logit at t (equality when every
    other key is lowest: realizable, the zero at t*).  Even: -cos(t theta') grows with t, so t* = 0
    gives 1 + cos((n-1) theta') and t* = n-1 gives cos((n-1) theta') + cos((n-2) theta'), no more.
    Odd: -cos(omega/2 - t theta') falls with t, so t* = 0 gives 1 + cos(omega/2 - theta') and t* >= 1
    at most 1 + cos(omega/2), no more.  The printed SUP_EVEN and SUP_ODD."""
    y = sympy.Symbol("y", real=True)
    at_most_one = is_zero(1 - cos(y) - 2 * sin(y / 2) ** 2) and nonnegative(2 * sin(y / 2) ** 2)  # cos <= 1
    even = is_zero(cos(0 * TP) + cos((N - 1) * TP) - F.SUP_EVEN.expr) and is_zero(
        F.SUP_EVEN.expr - (cos((N - 1) * TP) + cos((N - 2) * TP)) - (1 - cos((N - 2) * TP))
    )
    odd = (
        is_zero(cos(0 * TP) + cos(W / 2 - TP) - F.SUP_ODD.expr)
        and is_zero(F.SUP_ODD.expr - (1 + cos(W / 2)) - (cos(W / 2 - TP) - cos(W / 2)))
        and nonnegative((W / 2) - (W / 2 - TP), REGIME_HYP)
        and nonnegative(W / 2 - TP, REGIME_HYP)
    )
    return at_most_one and even and odd and cos_decreasing()


def sup_floor() -> bool:
    """Both forms are >= the printed floor 1 + cos(omega/2): (n-1) theta' < omega/2, and 0 <= omega/2
    - theta' <= omega/2, with cos decreasing on [0, pi]."""
    floor = F.SUP_FLOOR.expr
    return (
        is_zero(floor - (1 + cos(W / 2)))
        and is_zero((F.SUP_EVEN.expr - floor) - (cos((N - 1) * TP) - cos(W / 2)))
        and positive(W / 2 - (N - 1) * TP, REGIME_HYP)
        and is_zero((F.SUP_ODD.expr - floor) - (cos(W / 2 - TP) - cos(W / 2)))
        and cos_decreasing()
    )


SUP_EXACT = proved(
    SYMMETRY,
    ROWS,
    REGIME,
    BEST_OTHER_STEP,
    MONOTONE,
    Step(
        r"In the regime every matched key ($\ge \cos((n-1)\theta')$) lies above $\cos(\omega/2)$ and every "
        r"other-symbol key ($\le \cos(\omega - (n-1)\theta')$) below it: a row's top is its nearest "
        "matched key, at offset $t^*$",
        top_is_matched,
        "sympy signs after substitution; cos decreasing",
    ),
    Step(
        r"The lowest logit at offset $t$ is $-\cos(t\theta')$ for $\lvert\mathrm{ALPH}\rvert$ even ($d = "
        r"\lvert\mathrm{ALPH}\rvert/2$) and $-\cos(\omega/2 - t\theta')$ for $\lvert\mathrm{ALPH}\rvert$ "
        r"odd ($d = (\lvert\mathrm{ALPH}\rvert-1)/2$): the angle $d\omega + t\theta'$ nearest to $\pi$",
        lowest_logit,
        "sympy signs and identities",
    ),
    Step(
        r"So $\mathrm{top} - \mathrm{second} \le \cos(t^* \theta')$ minus the max over $t \ne t^*$ of the "
        "lowest logit at $t$, with equality when every other key is at its lowest (realizable: the zero "
        r"is at $t^*$); the largest is at $t^* = 0$: $1 + \cos((n-1)\theta')$ for "
        r"$\lvert\mathrm{ALPH}\rvert$ even and $1 + \cos(\omega/2 - \theta')$ for "
        r"$\lvert\mathrm{ALPH}\rvert$ odd, the printed formulas",
        sup_value,
        "sympy identities and signs, on the printed formulas",
    ),
    Step(r"Both are $\ge 1 + \cos(\omega/2)$, the printed floor", sup_floor, "sympy signs; cos decreasing"),
)


def copy_gap() -> bool:
    """A matched key at t > t* is >= cos(t* theta') - cos((t*+1) theta') = 2 sin((2t*+1) theta'/2)
    sin(theta'/2) below the top, and sin((2t*+1) theta'/2) >= sin(theta'/2) as (2t*+1) theta'/2 lies in
    [theta'/2, omega/2) (t* <= n-2): least at t* = 0, 2 sin(theta'/2)^2 = 1 - cos theta', the printed COPY_GAP."""
    t = sympy.Symbol("t", nonnegative=True, integer=True)
    identity = is_zero(cos(t * TP) - cos((t + 1) * TP) - 2 * sin((2 * t + 1) * TP / 2) * sin(TP / 2))
    hyp = {**REGIME_HYP, N: t + 2 + U}  # t* <= n - 2
    inside = nonnegative(W / 2 - (2 * t + 1) * TP / 2, hyp)
    return identity and inside and is_zero(2 * sin(TP / 2) ** 2 - F.COPY_GAP.expr)


def lambda_value() -> bool:
    """lambda(n) = min{copy gap, margin(n)}: the printed INF_POSITIVE's two terms are COPY_GAP and MARGIN."""
    terms = list(F.INF_POSITIVE.expr.args) if F.INF_POSITIVE.expr.func is sympy.Min else []
    wanted = [F.COPY_GAP.expr, F.MARGIN.expr]
    return len(terms) == 2 and all(any(is_zero(a - b) for b in terms) for a in wanted)


def chain() -> bool:
    """(n+1) theta' <= omega: theta' <= omega - n theta' <= pi, so 1 - cos theta' <= 1 - cos(omega - n
    theta') (the printed BOUND); at theta' = 0 the BOUND is 1 - cos omega, the printed lambda there."""
    relation = F.CHAIN_RANGE.relation
    slack = relation.rhs - relation.lhs  # >= 0 on the range
    return (
        relation.rel_op == "<="
        and is_zero(((W - N * TP) - TP) - slack)
        and cos_decreasing()
        and is_zero(F.BOUND.expr - (1 - cos(W - N * TP)))
        and is_zero(F.BOUND.expr.subs(TP, 0) - F.INF_AT_ZERO.expr)
    )


def equality_fails() -> bool:
    """Where (2n-3) theta' >= omega and (n+1) theta' <= omega: (omega - (2n-3) theta')/2 lies in
    (-omega/2, 0] and (omega - theta')/2 in (0, omega/2], omega <= pi, so the printed product form is
    <= 0, while lambda, a gap to a value strictly below the top, is > 0."""
    s, e = sympy.symbols("s e", nonnegative=True)
    beyond = {W: (2 * N - 3) * TP - s}  # (2n-3) theta' >= omega
    inside = {W: (N + 1) * X + e, TP: X, N: 2 + U}  # (n+1) theta' <= omega
    return (
        nonnegative(-(W - (2 * N - 3) * TP) / 2, beyond)
        and positive((W - (2 * N - 3) * TP) / 2 + W / 2, {**inside, e: e + Rp})
        and positive(W - TP, {**inside, e: e + Rp})
        and is_zero(F.MARGIN.expr - F.MARGIN_PRODUCT.expr)
        and lambda_value()
    )


INF_CORRECTED = proved(
    SYMMETRY,
    ROWS,
    REGIME,
    BEST_OTHER_STEP,
    MONOTONE,
    Step(
        "In the regime a row's top is its nearest matched key, at offset $t^*$ (as for the sup)",
        top_is_matched,
        "sympy signs after substitution; cos decreasing",
    ),
    Step(
        r"A matched key at $t > t^*$ lies $\ge \cos(t^* \theta') - \cos((t^*+1)\theta') = "
        r"2\sin((2t^*+1)\theta'/2)\sin(\theta'/2) \ge 1 - \cos\theta'$ below the top, equality for a copy "
        "of the top at offset 1",
        copy_gap,
        "sympy identities and signs",
    ),
    WORST,
    PRODUCT,
    Step(
        r"So for $0 < \theta'$ in the regime $\lambda(n) = \min\{1 - \cos\theta', \cos((n-2)\theta') - "
        r"\cos(\omega - (n-1)\theta')\}$: the next value strictly below the top is a matched key ($\ge$ "
        r"the copy gap) or the best other-symbol key ($\ge$ the margin), each attained; the printed "
        "formula",
        lambda_value,
        "sympy, on the printed formulas",
    ),
    *C8_PROOF.steps[1:],  # theta' = 0: lambda(n) = 1 - cos omega, C8's steps
    Step(
        r"For $0 < \theta'$ with $(n+1)\theta' \le \omega$: $\lambda(n) \le 1 - \cos\theta' \le 1 - "
        r"\cos(\omega - n\theta')$, as $\theta' \le \omega - n\theta' \le \pi$; at $\theta' = 0$, "
        r"$\lambda(n) = 1 - \cos\omega = 1 - \cos(\omega - n \cdot 0)$",
        chain,
        "sympy, on the printed range and formulas; cos decreasing",
    ),
    Step(
        r"Where also $(2n-3)\theta' \ge \omega$ the formula's second sine is $\le 0$, so it is $\le 0 < "
        r"\lambda(n)$: the equality fails there",
        equality_fails,
        "sympy sign after substitution",
    ),
)

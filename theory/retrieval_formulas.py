"""T_Retrieval's closed forms (``theory.discrepancy_retrieval``'s module docstring) as printed
formulas (``theory.formula``): one object per formula, which the claim statements print, the
closed forms evaluate and the referee (``theory.brute_retrieval``) compares with its token-level
brute force.  Changing a formula's text changes all three together, so a statement can no longer
print one formula while its check evaluates another (issue 42).

Each is written in theta' (the distance from theta to 2 pi Z) and omega = 2 pi/|ALPH|, with n
the input length; ``value(formula, theta', A, n, balls)`` evaluates one as an arb ball.
"""

from __future__ import annotations

from fractions import Fraction

import sympy

from .formula import THETA_PRIME, Condition, Formula
from .phases import Angle

__all__ = [
    "SUP_EVEN",
    "SUP_ODD",
    "SUP_FLOOR",
    "COMPETITOR",
    "MARGIN",
    "MARGIN_PRODUCT",
    "INF_AT_ZERO",
    "INF_POSITIVE",
    "COPY_GAP",
    "BOUND",
    "REGIME",
    "EXACT_RANGE",
    "INF_RANGE",
    "CHAIN_RANGE",
    "EQUALITY_FAILS",
    "value",
    "coefficient",
]

SUP_EVEN = Formula(r"1 + \cos((n-1)\theta')")  # |ALPH| even: top 1 at offset 0, every other key lowest
SUP_ODD = Formula(r"1 + \cos(\omega/2 - \theta')")  # |ALPH| odd
SUP_FLOOR = Formula(r"1 + \cos(\omega/2)")  # the sup never falls below this
COMPETITOR = Formula(r"1 - \cos(\omega - (n-1)\theta')")
MARGIN = Formula(r"\cos((n-2)\theta') - \cos(\omega - (n-1)\theta')")
MARGIN_PRODUCT = Formula(
    r"2\sin\left(\frac{\omega - \theta'}{2}\right)\sin\left(\frac{\omega - (2n-3)\theta'}{2}\right)"
)
INF_AT_ZERO = Formula(r"1 - \cos\omega")  # theta' = 0: a copy of the top ties it (C8)
INF_POSITIVE = Formula(r"\min\{1 - \cos\theta', \cos((n-2)\theta') - \cos(\omega - (n-1)\theta')\}")
COPY_GAP = Formula(r"1 - \cos\theta'")
BOUND = Formula(r"1 - \cos(\omega - n\theta')")  # Theorem 3.2's bound, in theta'

# the ranges the statements name, each "k(n) theta' < omega" (or <=)
REGIME = Condition(r"2(n-1)\theta' < \omega")  # where the closed forms hold
EXACT_RANGE = Condition(r"2n\theta' < \omega")  # "n <= n0 with theta' < omega/(2 n0)"
INF_RANGE = REGIME
CHAIN_RANGE = Condition(r"(n+1)\theta' \le \omega")
EQUALITY_FAILS = Condition(r"(2n-3)\theta' < \omega")


def coefficient(condition: Condition):
    """k(n) of "k(n) theta' < omega" (or <=), read from the printed condition: a function of n."""
    relation = condition.relation
    if relation.rhs != sympy.Symbol("omega"):
        raise ValueError(f"{condition.text!r} is not of the form k(n) theta' < omega")
    k = sympy.simplify(relation.lhs / THETA_PRIME)
    if k.has(THETA_PRIME):
        raise ValueError(f"{condition.text!r} is not linear in theta'")
    return lambda n: int(k.subs(sympy.Symbol("n"), n))


def value(formula: Formula, theta_prime: Angle, A: int, n: int, balls):
    """``formula`` at theta' (an exact Angle), omega = 2 pi/A and length n, as an arb ball."""
    with balls.working():
        omega = Angle(pi_multiple=Fraction(2, A)).ball(balls)
        return formula.evaluate(theta_prime=Angle.of(theta_prime).ball(balls), omega=omega, n=n)

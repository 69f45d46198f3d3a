"""Continued fractions and the smallest ``||u x||`` over ``1 <= u <= L``, certified.

``||y||`` is the distance from ``y`` to the nearest integer.  The RoPE discrepancy of
T_Index is ``1 - cos(2 pi min_{1<=u<=L} ||u theta / 2 pi||)`` (``theory.discrepancy``), so
everything rests on one classical fact:

    Lagrange (best approximations of the second kind).  Let ``p_k / q_k`` be the
    convergents of ``x`` (regular continued fraction, canonical form when ``x`` is
    rational).  If ``q_k <= u < q_{k+1}`` then ``||u x|| >= |q_k x - p_k| = ||q_k x||``.

Hence ``min_{1<=u<=L} ||u x|| = ||q_k x||`` for the largest ``k`` with ``q_k <= L``; it is
a step function of ``L`` that changes only at convergent denominators, found in
``O(log L)`` steps.  ``tests/test_discrepancy.py`` checks this against brute force for
every ``L`` up to 1e5 on many angles, rational and near-rational ones included.

Numbers.  ``x`` is a :class:`PiRational` ``a + b / pi`` with exact rationals ``a, b``:
that covers ``theta / 2 pi`` for every angle ``theta = c0 + c1 pi`` and every rational
(decimal strings, Fractions, mpf values, which are exact binary rationals).  For
``b != 0`` the number is irrational (pi is transcendental), so its partial quotients are
computed from arb balls: each ``floor`` is accepted only when the ball determines it,
otherwise the precision is doubled and the expansion restarted.  No float ever decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from .numbers import Interval, as_fraction

__all__ = [
    "PiRational",
    "as_real",
    "continued_fraction",
    "convergents",
    "best_denominators",
    "Nearest",
    "min_distance",
    "min_distance_brute",
]

MAX_PREC = 1 << 16  # bits; far beyond what any denominator below 1e18 needs


@dataclass(frozen=True)
class PiRational:
    """The real number ``a + b / pi`` (``a``, ``b`` exact rationals)."""

    a: Fraction
    b: Fraction = Fraction(0)

    @property
    def exact(self) -> Fraction | None:
        """The value as a Fraction when it is rational (``b == 0``), else None."""
        return self.a if self.b == 0 else None

    def ball(self, balls: Interval):
        """An arb enclosure at ``balls.prec`` bits (call inside ``balls.working()`` to combine)."""
        with balls.working():
            value = balls.convert(self.a)
            if self.b:
                value = value + balls.convert(self.b) / flint.arb.pi()
            return value

    def mpf(self, ctx):
        """The value in an mpmath context (for independent, non-arb re-checks)."""
        value = ctx.mpf(self.a.numerator) / self.a.denominator
        if self.b:
            value += ctx.mpf(self.b.numerator) / self.b.denominator / ctx.pi
        return value

    def __float__(self):
        return float(self.a) + float(self.b) / np.pi


def as_real(x) -> PiRational:
    """A PiRational from a PiRational, int, Fraction, float, mpf or decimal string."""
    if isinstance(x, PiRational):
        return x
    if hasattr(x, "_mpf_"):  # an mpf is an exact binary rational
        sign, man, exp, _ = x._mpf_
        value = Fraction((-1) ** sign * int(man)) * Fraction(2) ** int(exp)
        return PiRational(value)
    return PiRational(as_fraction(x))


def _rational_quotients(x: Fraction, max_denominator: int) -> list[int]:
    """Euclid on an exact rational (canonical form: the last quotient is >= 2 unless it is a_0)."""
    quotients, (num, den) = [], (x.numerator, x.denominator)
    q_prev, q = 0, 1
    while den:
        a, rem = divmod(num, den)
        quotients.append(a)
        if len(quotients) > 1:
            q_prev, q = q, a * q + q_prev
            if q > max_denominator:
                break
        num, den = den, rem
    return quotients


def _ball_quotients(x: PiRational, max_denominator: int, prec: int) -> list[int] | None:
    """Quotients of an irrational from arb balls; None when ``prec`` bits do not decide one."""
    balls = Interval(prec)
    with balls.working():
        value = x.ball(balls)
        quotients, q_prev, q = [], 0, 1
        while True:
            a = value.floor().unique_fmpz()
            if a is None:
                return None  # the ball straddles an integer: more bits needed
            a = int(a)
            quotients.append(a)
            if len(quotients) > 1:
                q_prev, q = q, a * q + q_prev
                if q > max_denominator:
                    return quotients
            frac = value - a
            if frac.contains(0):
                return None  # cannot happen for an irrational once prec suffices
            value = 1 / frac


def continued_fraction(x, max_denominator: int) -> list[int]:
    """Partial quotients ``a_0, a_1, ...`` of ``x``, certified, up to the first convergent
    whose denominator exceeds ``max_denominator`` (or all of them for a rational that ends
    first)."""
    x = as_real(x)
    if max_denominator < 1:
        raise ValueError(f"max_denominator must be >= 1, got {max_denominator}")
    if x.exact is not None:
        return _rational_quotients(x.exact, max_denominator)
    # each quotient costs about 2 log2(q) bits of the starting ball; start generously
    prec = 96 + 4 * int(max_denominator).bit_length()
    while prec <= MAX_PREC:
        quotients = _ball_quotients(x, max_denominator, prec)
        if quotients is not None:
            return quotients
        prec *= 2
    raise ArithmeticError(f"continued fraction of {x} undecided at {MAX_PREC} bits")


def convergents(quotients) -> list[tuple[int, int]]:
    """Convergents ``(p_k, q_k)`` of a list of partial quotients."""
    out, (p_prev, p), (q_prev, q) = [], (1, quotients[0]), (0, 1)
    out.append((p, q))
    for a in quotients[1:]:
        p_prev, p = p, a * p + p_prev
        q_prev, q = q, a * q + q_prev
        out.append((p, q))
    return out


def best_denominators(x, max_denominator: int) -> list[tuple[int, int]]:
    """The convergents ``(p_k, q_k)`` with ``q_k <= max_denominator``, increasing in q
    (a repeated ``q = 1`` when ``a_1 = 1`` is kept once, with the better numerator), and
    then the first convergent past ``max_denominator`` (its denominator bounds the step)."""
    steps = convergents(continued_fraction(x, max_denominator))
    out = []
    for p, q in steps:
        if out and out[-1][1] == q:  # a_1 = 1: q_1 = q_0 = 1, and p_1 / 1 is the nearer integer
            out[-1] = (p, q)
        else:
            out.append((p, q))
    return out


@dataclass(frozen=True)
class Nearest:
    """``min_{1<=u<=L} ||u x||``: attained at ``u = q`` with nearest integer ``p``;
    ``next_q`` is the next convergent denominator (the value is constant for
    ``q <= L < next_q``; None when x is rational with denominator ``q``, i.e. ``||q x|| = 0``)."""

    x: PiRational
    L: int
    q: int
    p: int
    next_q: int | None

    @property
    def is_zero(self) -> bool:
        return self.x.exact is not None and (self.q * self.x.exact).denominator == 1

    def exact(self) -> Fraction | None:
        """The distance as a Fraction when x is rational."""
        return None if self.x.exact is None else abs(self.q * self.x.exact - self.p)

    def ball(self, balls: Interval):
        """Certified enclosure of ``||q x|| = |q x - p|``."""
        with balls.working():
            if self.x.exact is not None:
                return balls.convert(self.exact())
            return abs(self.q * self.x.ball(balls) - self.p)


def min_distance(x, L: int) -> Nearest:
    """``min_{1<=u<=L} ||u x||`` in O(log L) by Lagrange's theorem (module docstring)."""
    if L < 1:
        raise ValueError(f"L must be >= 1 (at least one offset), got {L}")
    x = as_real(x)
    steps = best_denominators(x, L)
    inside = [(p, q) for p, q in steps if q <= L]
    after = [q for _, q in steps if q > L]
    p, q = inside[-1]
    return Nearest(x, int(L), int(q), int(p), int(after[0]) if after else None)


def min_distance_brute(x: float, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Float64 reference: for every ``L' = 1..L`` the running minimum of ``||u x||`` and the
    smallest ``u`` attaining it (cumulative minimum; for tests, never for decisions)."""
    u = np.arange(1, L + 1, dtype=np.float64)
    frac = np.mod(u * x, 1.0)
    dist = np.minimum(frac, 1.0 - frac)
    running = np.minimum.accumulate(dist)
    # first index where the running minimum was set: positions where dist equals running and
    # running strictly dropped
    record = np.r_[True, running[1:] < running[:-1]]
    argmin = np.maximum.accumulate(np.where(record, np.arange(1, L + 1), 0))
    return running, argmin

"""Exact angles ``c0 + c1 pi`` and exact decisions about cosines of them.

Every RoPE phase in the constructions is an integer combination of theta and
omega = 2 pi / |ALPH|, so with theta = c0 + c1 pi (rationals: ``0.8`` is 4/5, ``2*pi/5``
is c1 = 2/5, and sums such as ``2*pi/9 + 1/1000000``) every phase is again c0 + c1 pi.

* Equality.  cos x = cos y iff x = +-y (mod 2 pi).  As pi is irrational, x - y =
  (c0 - c0') + (c1 - c1') pi is in 2 pi Z iff c0 = c0' and c1 - c1' is an even integer
  (likewise for x + y): ``cosine_key`` is equal for two phases exactly when their cosines
  are, a test on rationals with no rounding.
* Order.  Distinct cosines are ordered with arb balls, raising the precision until every
  neighbouring pair is separated (``certified_cosines``); two distinct cosines always
  separate eventually, so this terminates.
* alpha = theta / 2 pi = c1/2 + (c0/2) / pi is irrational iff c0 != 0; it is what the
  continued fractions of ``theory.diophantine`` expand.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np
import sympy

from .diophantine import PiRational
from .numbers import Interval, MultiPrecision, NumberSystem, as_fraction

__all__ = ["Angle", "AngleFormError", "cosine_key", "CosineTable", "certified_cosines", "certified_order"]


class AngleFormError(ValueError):
    """A value read as a number that is not ``a + b*pi`` with rational a, b (e.g. sqrt(2))."""


@dataclass(frozen=True)
class Angle:
    """The angle ``rational + pi_multiple * pi`` (both exact Fractions)."""

    rational: Fraction = Fraction(0)
    pi_multiple: Fraction = Fraction(0)

    @classmethod
    def of(cls, value) -> Angle:
        """Read an Angle; an int, Fraction, float (its binary value) or decimal string as
        radians; or a sympy expression / string ``a + b*pi`` such as ``"2*pi/9 + 1/10**6"``.
        Anything else raises ValueError (AngleFormError for a number of another form)."""
        if isinstance(value, Angle):
            return value
        if isinstance(value, bool):
            raise ValueError(f"angle must be a number, got {value!r}")
        if isinstance(value, (int, float, Fraction)):
            return cls(Fraction(value))
        if isinstance(value, str):
            try:
                return cls(as_fraction(value))
            except (ValueError, ZeroDivisionError):
                pass
        try:
            expr = sympy.sympify(value, rational=True)  # "0.8" is 4/5, as in theory.numbers
        except (sympy.SympifyError, TypeError) as error:
            raise ValueError(f"cannot read the angle {value!r}") from error
        if not isinstance(expr, sympy.Expr):
            raise ValueError(f"cannot read the angle {value!r}")
        expr = sympy.expand(expr)
        b = expr.coeff(sympy.pi)
        a = sympy.simplify(expr - b * sympy.pi)
        if not (a.is_Rational and b.is_Rational):
            raise AngleFormError(f"angle {value!r} is not of the form a + b*pi with rational a, b")
        return cls(Fraction(int(a.p), int(a.q)), Fraction(int(b.p), int(b.q)))

    def __mul__(self, k: int) -> Angle:
        return Angle(self.rational * k, self.pi_multiple * k)

    __rmul__ = __mul__

    def __add__(self, other: Angle) -> Angle:
        return Angle(self.rational + other.rational, self.pi_multiple + other.pi_multiple)

    def __neg__(self) -> Angle:
        return Angle(-self.rational, -self.pi_multiple)

    def turns(self) -> PiRational:
        """alpha = theta / (2 pi) as ``a + b / pi``."""
        return PiRational(self.pi_multiple / 2, self.rational / 2)

    def value(self, numbers: NumberSystem):
        if type(numbers) is Interval and type(self.rational) in _EXACT and type(self.pi_multiple) in _EXACT:
            saved = flint.ctx.prec  # the ball directly: one precision context instead of four
            flint.ctx.prec = numbers.prec
            try:
                return _ball_here(self.rational, self.pi_multiple)
            finally:
                flint.ctx.prec = saved
        with numbers.working():
            v = numbers.convert(self.rational)
            if self.pi_multiple:
                v = v + numbers.convert(self.pi_multiple) * numbers.pi()
            return v

    def ball(self, balls: Interval):
        return self.value(balls)

    def __float__(self):
        return float(self.rational) + float(self.pi_multiple) * np.pi

    def decimal(self, digits: int = 40) -> str:
        mp = MultiPrecision(digits + 10)
        return mp.ctx.nstr(self.value(mp), digits)

    def sympy(self):
        r = lambda f: sympy.Rational(f.numerator, f.denominator)  # noqa: E731
        return r(self.rational) + r(self.pi_multiple) * sympy.pi

    def __str__(self):
        return str(self.sympy())

    def describe(self, digits: int = 40) -> dict:
        """JSON-ready: exact form and a decimal string."""
        return {"exact": str(self), "decimal": self.decimal(digits)}


def cosine_key(phase: Angle) -> tuple:
    """Equal for two phases iff their cosines are equal (module docstring): the smaller of
    (c0, c1 mod 2) and (-c0, -c1 mod 2), compared as tuples (written out: this runs millions
    of times in the brute forces, issue 41)."""
    r, c = phase.rational, phase.pi_multiple
    if r > 0:
        return (-r, (-c) % 2)
    if r < 0:
        return (r, c if 0 <= c < 2 else c % 2)  # c already reduced: no new Fraction
    a, b = c % 2, (-c) % 2  # c0 = 0: the tie on the first entry is broken by the second
    return (r, a) if a <= b else (-r, b)


@dataclass
class CosineTable:
    """Distinct cosines of some phases: ``rank[key]`` (0 = largest) and ``value[key]``
    (arb at ``prec`` bits), with every neighbouring pair certified strictly ordered."""

    rank: dict
    value: dict
    prec: int


def certified_cosines(phases, prec: int = 128, max_prec: int = 1 << 15) -> CosineTable:
    items, order, values, prec = certified_order(phases, None, prec, max_prec)
    rank = {items[i][0]: r for r, i in enumerate(order)}
    return CosineTable(rank, {k: v for (k, _), v in zip(items, values)}, prec)


def certified_order(phases, keys=None, prec: int = 128, max_prec: int = 1 << 15) -> tuple:
    """``certified_cosines`` by position: (items, order, values, prec) with ``items`` the
    distinct (cosine_key, phase) pairs (the last phase of each key), ``order`` the indices of
    ``items`` from the largest cosine down, ``values[i]`` the ball of ``items[i]``; ``keys``:
    the phases' cosine_keys when the caller has them.  Positions instead of dicts keyed by
    the keys, tuples of Fractions, which are slow to hash (issue 41)."""
    phases = list(phases)
    keys = [cosine_key(p) for p in phases] if keys is None else keys
    items = list(dict(zip(keys, phases)).items())
    while True:
        with Interval(prec).working():
            values = [_cos_here(p) for _, p in items]
            order = sorted(range(len(items)), key=lambda i: -values[i].mid())
            if all(values[order[i]] > values[order[i + 1]] for i in range(len(order) - 1)):
                return items, order, values, prec
        if prec >= max_prec:
            raise ArithmeticError(f"distinct cosines not separated at {max_prec} bits")
        prec *= 4


def cos_ball(phase: Angle, balls: Interval):
    """cos(phase) as a ball (arb's exact-argument routine for rational multiples of pi)."""
    saved = flint.ctx.prec
    flint.ctx.prec = balls.prec
    try:
        return _cos_here(phase)
    finally:
        flint.ctx.prec = saved


def _cos_here(phase: Angle):
    """``cos_ball`` at flint's current precision, which the caller has set: the operations of
    ``phase.ball(...).cos()`` (``Interval.convert`` of each part, times ``pi``, added) written
    out, one precision context instead of four per ball (the same ball, issue 41)."""
    r, c = phase.rational, phase.pi_multiple
    if r == 0:
        return flint.arb.cos_pi_fmpq(flint.fmpq(c.numerator, c.denominator))
    if type(r) in _EXACT and type(c) in _EXACT:
        return _ball_here(r, c).cos()
    return phase.ball(Interval(flint.ctx.prec)).cos()


_EXACT = (Fraction, int)  # parts that Interval.convert reads as numerator / denominator


def _ball_here(r, c):
    """The ball of r + c pi at flint's current precision by the operations ``Angle.value`` does
    in an ``Interval`` (``Interval.convert`` of each part, c times ``pi``, added): the same ball."""
    v = flint.arb(r.numerator) / r.denominator
    if c:
        v = v + (flint.arb(c.numerator) / c.denominator) * flint.arb.pi()
    return v

"""Four number systems in which every formula of `theory` is evaluated.

The formulas in `theory.rope` (and later modules) are written once, against the
small interface below, and evaluated in whichever system the caller passes:

* ``FLOAT64``          numpy float64: fast, but ``cos(t * theta)`` is meaningless
                        once ``t * theta`` has lost its fractional digits.
* ``MultiPrecision``   mpmath at any number of decimal digits, on a private
                        ``mpmath.MPContext`` so it never touches ``mpmath.mp``.
* ``SYMBOLIC``         sympy, exact: identities are proved, not sampled.
* ``Interval``         python-flint ``arb`` balls: every result is a certified
                        enclosure of the true value (the status-deciding system).

Like mpmath's separate float / multiprecision / interval contexts, each system
knows how to convert an input, take cos/sin/pi and a rational power, and build
an array.  Arrays of the exact systems are numpy ``object`` arrays, so the same
numpy expression (``x[..., a] * c - x[..., b] * s``) runs in all four.
"""

from __future__ import annotations

import contextlib
from fractions import Fraction
from numbers import Integral, Rational

import flint
import mpmath
import numpy as np
import sympy

__all__ = ["FLOAT64", "SYMBOLIC", "MultiPrecision", "Interval", "NumberSystem", "ball_text"]


class NumberSystem:
    """Interface shared by the four systems (see the module docstring)."""

    name = "abstract"
    exact = False  # True when results carry no rounding at all (sympy)
    certified = False  # True when results are rigorous enclosures (arb)

    def convert(self, x):
        raise NotImplementedError

    def cos(self, x):
        raise NotImplementedError

    def sin(self, x):
        raise NotImplementedError

    def pi(self):
        raise NotImplementedError

    def power(self, base, exponent: Fraction):
        """``base ** exponent`` with a rational exponent given exactly."""
        raise NotImplementedError

    def working(self):
        """Context manager that makes this system's precision current."""
        return contextlib.nullcontext()

    # ---- array helpers shared by the object-array systems -------------------
    def array(self, values):
        """Convert a nested sequence (or array) elementwise into this system."""
        arr = np.asarray(values, dtype=object)
        with self.working():
            out = np.empty(arr.shape, dtype=object)
            for index, value in np.ndenumerate(arr):
                out[index] = self.convert(value)
        return out

    def map(self, function, arr):
        with self.working():
            return np.frompyfunc(function, 1, 1)(arr)

    def cos_array(self, arr):
        return self.map(self.cos, arr)

    def sin_array(self, arr):
        return self.map(self.sin, arr)

    def __repr__(self):
        return f"<number system {self.name}>"


def as_fraction(x) -> Fraction:
    """An int, Fraction, float or decimal string as an exact Fraction."""
    if isinstance(x, bool):
        raise TypeError(f"expected a number, got the bool {x!r}")
    if isinstance(x, (Integral, Rational, float)):
        return Fraction(x)
    if isinstance(x, str):
        return Fraction(x.strip())
    raise TypeError(f"cannot read {x!r} ({type(x).__name__}) as an exact number")


class _Float64(NumberSystem):
    name = "float64"

    def convert(self, x):
        return float(x)

    def cos(self, x):
        return np.cos(x)

    def sin(self, x):
        return np.sin(x)

    def pi(self):
        return np.pi

    def power(self, base, exponent):
        return float(base) ** float(exponent)

    def array(self, values):
        return np.asarray(values, dtype=np.float64)

    def map(self, function, arr):
        return function(np.asarray(arr, dtype=np.float64))


class MultiPrecision(NumberSystem):
    """mpmath at ``dps`` decimal digits, on a context of its own.

    Decimal strings are read as decimals (``"0.8"`` is 4/5 to ``dps`` digits),
    floats as the binary value they hold.
    """

    def __init__(self, dps: int = 50):
        if not isinstance(dps, Integral) or dps < 5:
            raise ValueError(f"dps must be an integer >= 5, got {dps!r}")
        self.dps = int(dps)
        self.ctx = mpmath.MPContext()
        self.ctx.dps = self.dps
        self.name = f"mpmath({self.dps} digits)"

    def convert(self, x):
        if hasattr(x, "_mpf_"):
            return self.ctx.mpf(x)
        if isinstance(x, (str, Fraction)) or isinstance(x, Rational):
            f = as_fraction(x)
            return self.ctx.mpf(f.numerator) / f.denominator
        if isinstance(x, sympy.Basic):
            return self.ctx.mpf(sympy.N(x, self.dps + 10))
        return self.ctx.mpf(x)

    def cos(self, x):
        return self.ctx.cos(x)

    def sin(self, x):
        return self.ctx.sin(x)

    def pi(self):
        return +self.ctx.pi

    def power(self, base, exponent):
        e = as_fraction(exponent)
        return self.ctx.power(self.convert(base), self.ctx.mpf(e.numerator) / e.denominator)


class _Symbolic(NumberSystem):
    name = "sympy"
    exact = True

    def convert(self, x):
        if isinstance(x, sympy.Basic):
            return x
        if isinstance(x, (Integral, Rational, float, str)):
            f = as_fraction(x)
            return sympy.Rational(f.numerator, f.denominator)
        return sympy.sympify(x)

    def cos(self, x):
        return sympy.cos(x)

    def sin(self, x):
        return sympy.sin(x)

    def pi(self):
        return sympy.pi

    def power(self, base, exponent):
        e = as_fraction(exponent)
        return sympy.Pow(self.convert(base), sympy.Rational(e.numerator, e.denominator))


class Interval(NumberSystem):
    """Certified balls (python-flint ``arb``) at ``prec`` bits.

    flint keeps its precision in one global setting; ``working()`` sets it for
    the duration of a computation and restores the caller's value afterwards.
    Arithmetic on balls done outside ``working()`` runs at whatever flint's global
    precision is, so callers combining balls by hand wrap it in ``working()``.
    """

    certified = True

    def __init__(self, prec: int = 128):
        if not isinstance(prec, Integral) or prec < 16:
            raise ValueError(f"prec must be an integer number of bits >= 16, got {prec!r}")
        self.prec = int(prec)
        self.name = f"arb({self.prec} bits)"

    @contextlib.contextmanager
    def working(self):
        saved = flint.ctx.prec
        flint.ctx.prec = self.prec
        try:
            yield
        finally:
            flint.ctx.prec = saved

    def convert(self, x):
        with self.working():
            if isinstance(x, flint.arb):
                return +x
            if hasattr(x, "_mpf_"):
                # an mpf (of any mpmath context) is an exact binary number
                sign, man, exp, _ = x._mpf_
                if not man and exp:
                    raise ValueError(f"cannot enclose the special value {x!r} in a ball")
                return flint.arb((-1) ** sign * int(man)) * flint.arb(2) ** int(exp)
            if isinstance(x, float):
                return flint.arb(x)
            f = as_fraction(x)
            return flint.arb(f.numerator) / f.denominator

    def cos(self, x):
        with self.working():
            return self.convert(x).cos()

    def sin(self, x):
        with self.working():
            return self.convert(x).sin()

    def pi(self):
        with self.working():
            return flint.arb.pi()

    def power(self, base, exponent):
        e = as_fraction(exponent)
        with self.working():
            return self.convert(base) ** (flint.arb(e.numerator) / e.denominator)


FLOAT64 = _Float64()
SYMBOLIC = _Symbolic()


def _significant(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits; outside [1e-3, 1e5) with an exponent ("7.694e-7"),
    so that a small or large number never loses the exponent that says its size."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    if 1e-3 <= abs(value) < 1e5:
        return f"{value:.{digits}g}"
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def ball_text(ball, digits: int = 4) -> str:
    """A certified number for prose: its midpoint to ``digits`` significant digits, then its radius
    ("7.694e-7 ± 3e-25"), formatted from the value, never by slicing its string.  ``ball`` is an
    ``arb``, the text an ``arb`` prints ("[7.69405e-7 +/- 3.1e-25]"), or a plain number (text or
    value, shown without a radius: a decimal's binary rounding is no uncertainty of the number)."""
    exact = not isinstance(ball, flint.arb) and "+/-" not in str(ball)
    if not isinstance(ball, flint.arb):
        saved = flint.ctx.prec
        flint.ctx.prec = 256  # parse at high precision: the text's own radius, not 53-bit rounding, shows
        try:
            ball = flint.arb(str(ball))
        finally:
            flint.ctx.prec = saved
    mid, rad = float(ball.mid()), float(ball.rad())
    text = _significant(mid, digits)
    return text if exact or rad == 0 else f"{text} ± {_significant(rad, 1)}"

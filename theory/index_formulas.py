"""The formulas of the package's corrected T_Index statements (C4-index-corrected,
C4-index-unique-top, C7-index-sup-corrected, C7-index-inf-corrected) as printed formulas
(``theory.formula``): the statements print these objects and the brute-force referee
(``proofs_check.evidence.brute_index``) evaluates them, so a printed formula cannot drift from the one
checked (issue 42).  ``integer`` evaluates an integer-valued one exactly; ``circle_points`` reads
P from a bound printed as 1 - cos(2 pi/P); ``exact`` evaluates a rational multiple of pi^2.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import sympy

from .formula import Formula

__all__ = [
    "D_MAX",
    "Q_MAX",
    "L_MIN",
    "SUP_CAP",
    "SUP_QUADRATIC",
    "SUP_TAIL",
    "INF_CAP",
    "INF_QUADRATIC",
    "integer",
    "circle_points",
    "pi_squared_multiple",
]

D_MAX = Formula(r"\max(m, n_0-2)")  # C4-index-corrected: ties at D <= D_MAX break T_Index
Q_MAX = Formula(r"n_0 - 1")  # C4-index-unique-top: theta/2pi = p/q ties iff q <= Q_MAX
L_MIN = Formula(
    r"\max(\lceil (n-1)/2 \rceil, n-1-m)"
)  # C7-index-sup-corrected: the farthest offset of the best query
SUP_CAP = Formula(r"1 - \cos(2\pi/(L+1))")
SUP_QUADRATIC = Formula(r"\frac{2\pi^2}{(L+1)^2}")
SUP_TAIL = Formula(r"\frac{8\pi^2}{(n+1)^2}")
INF_CAP = Formula(r"1 - \cos(2\pi/n)")  # C7-index-inf-corrected
INF_QUADRATIC = Formula(r"\frac{2\pi^2}{n^2}")


def integer(formula: Formula, **values) -> int:
    """An integer-valued formula at integer ``values``, exactly (cached: the referee asks often)."""
    return _integer(formula, tuple(sorted(values.items())))


@functools.lru_cache(maxsize=65536)
def _integer(formula: Formula, values: tuple) -> int:
    value = formula.exact(**dict(values))
    if not value.is_Integer:
        raise ValueError(f"{formula.text} at {values} is {value}, not an integer")
    return int(value)


def circle_points(formula: Formula, **values) -> int:
    """P of a bound printed as 1 - cos(2 pi/P), at ``values``: the number of evenly spread points
    whose spacing the bound measures (ValueError when the formula has another shape)."""
    return _circle_points(formula, tuple(sorted(values.items())))


@functools.lru_cache(maxsize=65536)
def _circle_points(formula: Formula, items: tuple) -> int:
    values = dict(items)
    cosines = [a for a in formula.expr.atoms(sympy.cos)]
    if len(cosines) != 1 or sympy.simplify(formula.expr - (1 - cosines[0])) != 0:
        raise ValueError(f"{formula.text!r} is not 1 - cos(2 pi/P)")
    P = sympy.simplify(
        2 * sympy.pi / cosines[0].args[0].subs({sympy.Symbol(k): v for k, v in values.items()})
    )
    if not P.is_Integer:
        raise ValueError(f"{formula.text!r} at {values}: 2 pi over the angle is {P}, not an integer")
    return int(P)


def pi_squared_multiple(formula: Formula, **values) -> Fraction:
    """c with formula = c pi^2 at ``values`` (exact), for comparing the quadratic bounds."""
    return _pi_squared(formula, tuple(sorted(values.items())))


@functools.lru_cache(maxsize=65536)
def _pi_squared(formula: Formula, items: tuple) -> Fraction:
    c = sympy.simplify(formula.exact(**dict(items)) / sympy.pi**2)
    if not c.is_Rational:
        raise ValueError(f"{formula.text!r} at {dict(items)} is not a rational multiple of pi^2")
    return Fraction(int(c.p), int(c.q))

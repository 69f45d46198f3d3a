"""The written arguments of the statements whose evidence class is "proved" (issue 42).

Each module builds ``evidence.Evidence`` objects whose steps are checked by code when the
claim runs: sympy identities (``is_zero``), signs decided from sympy's assumptions after an
explicit substitution that encodes the step's hypotheses (``nonnegative``, ``positive``),
exact rationals, and, where a step is a fact about a finite object, every case of it.  The
steps read the formulas their claims print (``theory.formula``), so a printed formula changed
without its argument fails the argument.

Shared facts, checked once here and cited by the steps that use them:
``cos_decreasing``: cos is strictly decreasing on [0, pi] (its derivative -sin x < 0 inside).
"""

from __future__ import annotations

import functools

import sympy

__all__ = ["is_zero", "nonnegative", "positive", "cos_decreasing"]


def _expanded(expr):
    """Polynomial and trigonometric expansion: cheap, and a 0 here is a proof (issue 41)."""
    return sympy.expand(sympy.expand_trig(sympy.expand(expr)))


_PROVED: dict = {}  # is_zero's answers by expression (a sympy expression is immutable and hashable)


def is_zero(expr) -> bool:
    """sympy proves ``expr`` identically 0 (expansion, simplify, trigonometric expansion, or
    exponentials).  Each form is an identity-preserving rewrite, so a 0 from any of them proves
    the identity; the cheap expansion is tried first, and a non-zero result only moves on to the
    next form (never concludes).  Answers are kept by expression: several claims share steps."""
    try:
        return _PROVED[expr]
    except KeyError:
        answer = _PROVED[expr] = _is_zero(expr)
        return answer
    except TypeError:  # unhashable (a mutable matrix): not kept
        return _is_zero(expr)


def _is_zero(expr) -> bool:
    for form in (
        _expanded,
        sympy.simplify,
        lambda e: sympy.expand_trig(sympy.expand(e)),
        lambda e: sympy.simplify(sympy.expand(e.rewrite(sympy.exp))),
    ):
        if form(expr) == 0:
            return True
    return False


def _forms(expr, substitutions: dict):
    """``expr`` after ``substitutions``, applied until nothing changes (a replacement may name a
    symbol that another replaces), in the forms whose sign sympy may read: as it is, simplified,
    expanded, factored (a generator: a later form is computed only when asked for)."""
    expr = sympy.sympify(expr)
    for _ in range(len(substitutions) + 1):
        expr, before = expr.subs(substitutions), expr
        if expr == before:
            break
    yield expr  # lazily, cheapest first: the callers stop at the first form whose sign is read
    yield sympy.expand(expr)
    yield sympy.factor(expr)
    yield sympy.simplify(expr)


def nonnegative(expr, substitutions: dict | None = None) -> bool:
    """``expr`` >= 0 follows from the assumptions on its symbols after ``substitutions`` (which
    encode a step's hypotheses, e.g. d = 1 + u with u a nonnegative integer)."""
    return any(form.is_nonnegative is True for form in _forms(expr, substitutions or {}))


def positive(expr, substitutions: dict | None = None) -> bool:
    return any(form.is_positive is True for form in _forms(expr, substitutions or {}))


@functools.cache  # a fixed fact, cited by many steps: checked once a process
def cos_decreasing() -> bool:
    """cos is strictly decreasing on [0, pi]: d/dx cos x = -sin x, and sin x > 0 on (0, pi)."""
    x = sympy.Symbol("x", real=True)
    return (
        is_zero(sympy.diff(sympy.cos(x), x) + sympy.sin(x))
        and sympy.solveset(sympy.sin(x) <= 0, x, sympy.Interval.open(0, sympy.pi)) == sympy.EmptySet
    )

"""Exact decisions: angles given exactly, ties and order of cosines, exact average-hard
attention, and the sympy proof that the closed-form logits equal the matrix route.

Every angle of a construction is either a rational number of radians (``0.8`` is 4/5) or a
rational multiple of pi (``2*pi/3``).  Every attention logit is then cos(phase) with
phase = c0 + c1 * pi for rationals c0, c1, and two logits are equal exactly when
cos x = cos y, i.e. x = +-y (mod 2 pi).  Since pi is irrational, that happens iff
c0 = +-c0' and c1 = +-c1' (mod 2) with the same sign: a test on rationals, no rounding.
Distinct cosines are then ordered with arb balls (``theory.numbers.Interval``), raising
the precision until every neighbouring pair is separated.  So ties and order, the two
things average-hard attention depends on, are both decided exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

import flint
import numpy as np
import sympy

from theory.numbers import SYMBOLIC, Interval, MultiPrecision, NumberSystem
from theory.rope import rope_logit

__all__ = ["Angle", "cosine_key", "phase_parts", "certified_cosine_ranks", "check_length", "exact_hard",
           "prove_closed_form"]


@dataclass(frozen=True)
class Angle:
    """``coefficient * pi`` when ``times_pi``, else ``coefficient`` radians (exact rationals)."""

    coefficient: Fraction
    times_pi: bool = False

    @classmethod
    def of(cls, value) -> "Angle":
        """Read an Angle, a rational or float (its exact binary value), a decimal string,
        or a sympy expression / string such as ``"2*pi/3"``."""
        if isinstance(value, Angle):
            return value
        if isinstance(value, bool):
            raise ValueError(f"angle must be a number, got {value!r}")
        if isinstance(value, (int, float, Rational)) and not isinstance(value, sympy.Basic):
            return cls(Fraction(value))
        try:
            expr = sympy.sympify(value, rational=True)  # "0.8" is 4/5, as in theory.numbers
        except (sympy.SympifyError, TypeError) as error:
            raise ValueError(f"cannot read the angle {value!r}") from error
        if expr.is_Rational:
            return cls(Fraction(int(expr.p), int(expr.q)))
        ratio = sympy.simplify(expr / sympy.pi)
        if ratio.is_Rational:
            return cls(Fraction(int(ratio.p), int(ratio.q)), times_pi=True)
        raise ValueError(f"angle {value!r} must be rational or a rational multiple of pi "
                         f"(so that ties between logits can be decided exactly)")

    def value(self, numbers: NumberSystem):
        with numbers.working():
            c = numbers.convert(self.coefficient)
            return c * numbers.pi() if self.times_pi else c

    def sympy(self):
        c = sympy.Rational(self.coefficient.numerator, self.coefficient.denominator)
        return c * sympy.pi if self.times_pi else c

    def decimal(self, digits: int = 40) -> str:
        mp = MultiPrecision(digits + 10)
        return mp.ctx.nstr(self.value(mp), digits)

    def __str__(self):
        return str(self.sympy())

    def check_range(self, name: str = "theta") -> "Angle":
        """Raise unless 0 < angle <= pi (the range in which a RoPE angle is not redundant)."""
        c = self.coefficient
        if self.times_pi:
            inside = 0 < c <= 1
        else:  # a rational is never pi: compare against certified bounds on pi
            balls = Interval(256)
            with balls.working():
                inside = c > 0 and bool(balls.convert(c) < balls.pi())
        if not inside:
            raise ValueError(f"angle {name} = {self} (~{self.decimal(12)}) is outside the valid "
                             f"range 0 < {name} <= pi")
        return self


def phase_parts(a: int, b: int, theta: Angle, omega: Angle | None) -> tuple:
    """a * theta + b * omega as (c0, c1) with phase = c0 + c1 * pi."""
    c0, c1 = Fraction(0), Fraction(0)
    for count, angle in ((a, theta), (b, omega)):
        if count == 0 or angle is None:
            continue
        if angle.times_pi:
            c1 += count * angle.coefficient
        else:
            c0 += count * angle.coefficient
    return c0, c1


def cosine_key(c0: Fraction, c1: Fraction) -> tuple:
    """A key with cosine_key(x) == cosine_key(y) iff cos(x) == cos(y) (see module docstring)."""
    return min((c0, c1 % 2), (-c0, (-c1) % 2))


def certified_cosine_ranks(pairs, theta: Angle, omega: Angle | None, prec: int = 128) -> list:
    """Ranks of cos(a theta + b omega) over integer pairs (a, b): equal cosines get equal
    ranks, larger cosines larger ranks.  Every comparison is certified."""
    distinct, inverse = _distinct_cosines(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), theta, omega)
    while prec <= 1 << 16:
        balls = Interval(prec)
        with balls.working():
            values = [_cosine_ball(c0, c1, balls) for c0, c1 in distinct]
            # sort by float first (fast); an order float got wrong fails the certified check below
            order = sorted(range(len(distinct)), key=lambda i: float(values[i].mid()))
            if not _certified_increasing(values, order):
                order = sorted(range(len(distinct)), key=lambda i: values[i].mid())
            if _certified_increasing(values, order):
                rank = np.empty(len(distinct), dtype=np.int64)
                rank[order] = np.arange(len(order))
                return rank[inverse].tolist()
        prec *= 4
    raise ArithmeticError("could not separate two distinct cosines even at 65536 bits")


def _distinct_cosines(pairs, theta: Angle, omega: Angle | None):
    """The distinct cosine_keys of the phases a theta + b omega, and for each phase the index
    of its key.  Vectorised in integers: with common denominators L0 (rational angles) and L1
    (multiples of pi) a phase is N0 / L0 + (N1 / L1) pi, and cosine_key is the smaller of
    (N0, N1 mod 2 L1) and (-N0, -N1 mod 2 L1).  Python Fractions when int64 could overflow."""
    columns = [(theta, pairs[:, 0])] + ([] if omega is None else [(omega, pairs[:, 1])])
    parts = []
    for times_pi in (False, True):
        mine = [(angle.coefficient, col) for angle, col in columns if angle.times_pi == times_pi]
        common = math.lcm(*(c.denominator for c, _ in mine)) if mine else 1
        steps = [(c.numerator * (common // c.denominator), col) for c, col in mine]
        if sum(abs(step) * (int(np.abs(col).max()) + 1) for step, col in steps) >= 1 << 60:
            keys = [cosine_key(*phase_parts(int(a), int(b), theta, omega)) for a, b in pairs]
            distinct = list(dict.fromkeys(keys))
            position = {key: i for i, key in enumerate(distinct)}
            return distinct, np.array([position[key] for key in keys], dtype=np.int64)
        parts.append((sum((step * col for step, col in steps), np.zeros(len(pairs), dtype=np.int64)), common))
    (n0, l0), (n1, l1) = parts
    n1, m1 = n1 % (2 * l1), (-n1) % (2 * l1)
    flip = (-n0 < n0) | ((-n0 == n0) & (m1 < n1))  # cos(x) = cos(-x): keep the smaller form
    keys = np.stack([np.where(flip, -n0, n0), np.where(flip, m1, n1)], axis=1)
    values, inverse = np.unique(keys, axis=0, return_inverse=True)
    distinct = [(Fraction(int(k0), l0), Fraction(int(k1), l1)) for k0, k1 in values.tolist()]
    return distinct, inverse.ravel()


def _cosine_ball(c0: Fraction, c1: Fraction, balls: Interval):
    if c0 == 0:  # cos(c1 pi) straight from the exact rational: fast and tight
        return flint.arb.cos_pi_fmpq(flint.fmpq(c1.numerator, c1.denominator))
    return (balls.convert(c0) + balls.convert(c1) * balls.pi()).cos()


def _certified_increasing(values, order) -> bool:
    return all(values[order[k]] < values[order[k + 1]] for k in range(len(order) - 1))


def check_length(n: int, n0: int) -> None:
    if n < 1 or n > n0:
        raise ValueError(f"input length n = {n} is outside the range the construction was built "
                         f"for: 1 <= n <= n0 = {n0}")


def exact_hard(model, ids):
    """Exact average-hard attention on a batch (B, n): output ids (-1 = ambiguous) and gaps.

    Ties are decided by ``certified_cosine_ranks`` on the closed-form phases and the scores
    are integers (|J| times the average), so every decision is exact; the returned gaps are
    the exact ratios (top - second) / |J| of small integers, as float64.
    """
    ids = np.atleast_2d(np.asarray(ids, dtype=np.int64))
    check_length(ids.shape[1], model.n0)
    n = ids.shape[1]
    offsets = np.arange(n)[:, None] - np.arange(n)[None, :]
    c_theta, c_omega = model.phase_shift(ids[:, :, None], ids[:, None, :])
    a = offsets + c_theta
    span = int(np.abs(c_omega).max()) + 1  # one integer code per (a, c_omega) pair
    codes, inverse = np.unique(a * (2 * span + 1) + c_omega, return_inverse=True)
    pairs = [((code + span) // (2 * span + 1), (code + span) % (2 * span + 1) - span) for code in codes.tolist()]
    ranks = np.asarray(certified_cosine_ranks(pairs, model.theta, model.omega))[inverse.reshape(a.shape)]
    ranks[:, offsets < 0] = -1
    chosen = (ranks == ranks.max(axis=-1, keepdims=True)).astype(np.int64)
    count = chosen.sum(axis=-1)
    residual, value = model.integer_tables()
    scores = count[..., None] * residual[ids] + np.einsum("bij,bjc->bic", chosen, value[ids])
    order = np.sort(scores, axis=-1)
    unique = order[..., -1] > order[..., -2]
    return np.where(unique, scores.argmax(axis=-1), -1), (order[..., -1] - order[..., -2]) / count


def _is_zero(expr) -> bool:
    """Exact zero test: rewriting in exponentials and expanding is fast and a proof when it
    gives 0; otherwise sympy.simplify decides."""
    if sympy.expand(expr.rewrite(sympy.exp)) == 0:
        return True
    return sympy.simplify(expr) == 0


def prove_closed_form(model, tokens=None) -> dict:
    """Prove, with symbolic theta, omega and offset t, that the matrix route
    k^T R_t q (q = W_Q E(query), k = W_K E(key)) equals the closed form, for every pair of
    ``tokens`` (default: the whole vocabulary); and, with symbolic token codes as well, that
    the rotations the weights are built from give the paper's formula (sympy.simplify)."""
    t = sympy.Symbol("t", integer=True)
    tokens = model.vocab if tokens is None else [model.canonical(x) for x in tokens]
    w = model.weights(SYMBOLIC, symbolic=True)
    theta, _ = model.angle_values(SYMBOLIC, symbolic=True)
    proved, failed = 0, []
    for query in tokens:
        q = w.query.dot(w.embedding[model.token_id[query]])
        for key in tokens:
            k = w.key.dot(w.embedding[model.token_id[key]])
            matrix = rope_logit(q, t, k, 0, SYMBOLIC.array([theta]), SYMBOLIC)
            closed = model.closed_form_logit(query, key, t, SYMBOLIC, symbolic=True)
            if _is_zero(matrix - closed):
                proved += 1
            else:
                failed.append((str(query), str(key), str(matrix), str(closed)))
    matrix, closed = model.symbolic_identity()
    general = _is_zero(matrix - closed)
    return {"pairs_proved": proved, "failed": failed, "general_identity_proved": general,
            "general_identity": f"{matrix} == {closed}", "symbols": ["theta", "omega", "t"]}


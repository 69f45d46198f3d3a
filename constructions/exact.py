"""Exact decisions: the angles of a construction, ties and order of cosines, exact
average-hard attention, and the sympy proof that the closed-form logits equal the matrix route.

Every angle of a construction is either a rational number of radians (``0.8`` is 4/5) or a
rational multiple of pi (``2*pi/3``), held as a ``theory.phases.Angle``.  Every attention
logit is then cos(phase) with phase = c0 + c1 * pi for rationals c0, c1, and two logits are
equal exactly when their ``theory.phases.cosine_key`` are (cos x = cos y iff x = +-y mod
2 pi, and pi is irrational): a test on rationals, no rounding.  Distinct cosines are then
ordered with arb balls (``theory.phases.certified_cosines``).  So ties and order, the two
things average-hard attention depends on, are both decided exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import sympy

from theory.numbers import SYMBOLIC, Interval
from theory.phases import Angle, AngleFormError, certified_order, cosine_key
from theory.rope import rope_logit

__all__ = ["Angle", "read_angle", "certified_cosine_ranks", "check_length", "exact_hard", "prove_closed_form"]


def read_angle(value, name: str = "theta") -> Angle:
    """A construction's angle: rational or a rational multiple of pi (so that ties between
    logits can be decided exactly), and 0 < angle <= pi (the range in which a RoPE angle is
    not redundant)."""
    form = (
        f"angle {value!r} must be rational or a rational multiple of pi "
        f"(so that ties between logits can be decided exactly)"
    )
    try:
        angle = Angle.of(value)  # a ValueError of its own for what is not a number at all
    except AngleFormError:
        raise ValueError(form) from None
    if angle.rational and angle.pi_multiple:
        raise ValueError(form)
    if angle.rational:  # a rational is never pi: compare against certified bounds on pi
        balls = Interval(256)
        with balls.working():
            inside = angle.rational > 0 and bool(balls.convert(angle.rational) < balls.pi())
    else:
        inside = 0 < angle.pi_multiple <= 1
    if not inside:
        raise ValueError(
            f"angle {name} = {angle} (~{angle.decimal(12)}) is outside the valid range 0 < {name} <= pi"
        )
    return angle


def certified_cosine_ranks(pairs, theta: Angle, omega: Angle | None, prec: int = 128) -> list:
    """Ranks of cos(a theta + b omega) over integer pairs (a, b): equal cosines get equal
    ranks, larger cosines larger ranks.  Every comparison is certified."""
    distinct, inverse = _distinct_cosines(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), theta, omega)
    phases = [Angle(c0, c1) for c0, c1 in distinct]
    # distinct holds distinct cosine_keys, each its own phase's key (a canonical form is its
    # own cosine_key), so the positions 0..m-1 label the cosines exactly as the keys would:
    # no key is recomputed or hashed (tuples of Fractions, slow; issue 41)
    _, order, _, _ = certified_order(phases, range(len(phases)), prec)  # order[0]: the largest
    top = len(distinct) - 1
    rank = np.empty(len(phases), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = top - np.arange(len(order), dtype=np.int64)
    return rank[inverse].tolist()


def _distinct_cosines(pairs, theta: Angle, omega: Angle | None):
    """The distinct cosine_keys of the phases a theta + b omega, and for each phase the index
    of its key.  Vectorised in integers: with common denominators L0 (rational parts) and L1
    (multiples of pi) a phase is N0 / L0 + (N1 / L1) pi, and cosine_key is the smaller of
    (N0, N1 mod 2 L1) and (-N0, -N1 mod 2 L1).  Python Fractions when int64 could overflow."""
    columns = [(theta, pairs[:, 0])] + ([] if omega is None else [(omega, pairs[:, 1])])
    parts = []
    for part in ("rational", "pi_multiple"):
        mine = [(getattr(angle, part), col) for angle, col in columns if getattr(angle, part)]
        common = math.lcm(*(c.denominator for c, _ in mine)) if mine else 1
        steps = [(c.numerator * (common // c.denominator), col) for c, col in mine]
        if sum(abs(step) * (int(np.abs(col).max()) + 1) for step, col in steps) >= 1 << 60:
            zero = Angle()
            keys = [
                cosine_key(int(a) * theta + (zero if omega is None else int(b) * omega)) for a, b in pairs
            ]
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


def check_length(n: int, n0: int) -> None:
    if n < 1 or n > n0:
        raise ValueError(
            f"input length n = {n} is outside the range the construction was built for: 1 <= n <= n0 = {n0}"
        )


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
    codes, inverse = _unique_codes(a * (2 * span + 1) + c_omega)
    pairs = [
        ((code + span) // (2 * span + 1), (code + span) % (2 * span + 1) - span) for code in codes.tolist()
    ]
    ranks = np.asarray(certified_cosine_ranks(pairs, model.theta, model.omega))[inverse.reshape(a.shape)]
    ranks[:, offsets < 0] = -1
    chosen = (ranks == ranks.max(axis=-1, keepdims=True)).astype(np.int64)
    count = chosen.sum(axis=-1)
    residual, value = model.integer_tables()
    gathered = value[ids]
    if n >= 256 and n * int(np.abs(value).max(initial=0)) < 1 << 53:
        # long rows: float64 BLAS, far faster than an integer einsum and exact here, since
        # every product is 0 or an entry of V and every partial sum an integer below 2**53
        mixed = np.matmul(chosen.astype(np.float64), gathered.astype(np.float64)).astype(np.int64)
    else:
        mixed = np.einsum("bij,bjc->bic", chosen, gathered)
    scores = count[..., None] * residual[ids] + mixed
    order = np.sort(scores, axis=-1)
    unique = order[..., -1] > order[..., -2]
    return np.where(unique, scores.argmax(axis=-1), -1), (order[..., -1] - order[..., -2]) / count


def _unique_codes(codes):
    """``np.unique(codes, return_inverse=True)`` for an integer array: when the codes span a
    small range (they do: offsets and phase codes), by marking the values present in a table
    over that range instead of sorting every entry (the same sorted values and inverse)."""
    low, high = int(codes.min()), int(codes.max())
    if high - low > 4 * codes.size + (1 << 16):
        return np.unique(codes, return_inverse=True)
    shifted = codes - low
    present = np.zeros(high - low + 1, dtype=bool)
    present[shifted.ravel()] = True
    position = np.cumsum(present, dtype=np.int64) - 1  # index of each present value among them
    return np.flatnonzero(present) + low, position[shifted]


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
    return {
        "pairs_proved": proved,
        "failed": failed,
        "general_identity_proved": general,
        "general_identity": f"{matrix} == {closed}",
        "symbols": ["theta", "omega", "t"],
    }

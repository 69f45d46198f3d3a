"""T_Retrieval's discrepancy (Appendix F.2.2) under each reading of ``theory.discrepancy``
(the T_Index counterpart is ``theory.discrepancy_index``).

Logits.  Positions j = 1..n, query at n, offset t = n - j, A = |ALPH|, omega = 2 pi / A.
The query letter c is the query's right letter (ALPH x ALPH query) or its left letter
(ALPH x INT query); a key whose left letter l has d = phi(l) - phi(c) (mod A) gets

    logit(t, d) = cos(d omega + t theta).

Which rows occur.  An input's row is fixed by its vector (d_0, .., d_{n-1}).  Every
vector with at least one d_t = 0 occurs: if d_0 = 0 take the query (c, 1), else (X, c) with
phi(X) - phi(c) = d_0; put (c, 1) wherever d_t = 0 (t > 0) and (l_t, 1) elsewhere.  Right
symbols in INT impose nothing, the only possible ALPH x ALPH token, the query, finds its
match, and every token with left letter c is the same, (c, 1): the input is proper.  No other vector
occurs (a proper input has a match for c).  ALPH x INT queries give the vectors with
d_0 = 0, a subset.  So a reading is an optimisation over those vectors
(tests/test_discrepancy.py re-derives the set from theory.functions.retrieval).

Symmetry (issue 30).  theta enters only through cos(d omega + t theta) with t an integer and d
running over Z_A, so every reading is 2 pi-periodic in theta; and d -> -d maps the realizable
vectors onto themselves (relabel letters phi -> -phi: proper inputs stay proper), so every
reading is even in theta.  Hence a reading is a function of theta' = the distance from theta
to the nearest multiple of 2 pi (``fold``), and the closed forms below are stated in theta'.

Closed forms, in the regime 0 < theta' and 2 (n - 1) theta' < omega (every t theta' lies in
[0, omega/2); theta' < omega / (2 n0) puts all n <= n0 there), writing theta for theta':

* matched keys (d = 0): cos(t theta), decreasing in t, all > cos(omega / 2);
* the best other symbol at offset t is d = -1: cos(omega - t theta) < cos(omega / 2), so
  the matched key nearest the query is the unique top;
* the worst other symbol at offset t: d = A/2 (A even) gives -cos(t theta); for A odd,
  d = (A-1)/2 gives cos(pi - omega/2 + t theta) = -cos(omega/2 - t theta).

    sup(n)        = 1 + cos((n-1) theta)        (A even)   top 1 at t = 0, every other key
                  = 1 + cos(omega/2 - theta)    (A odd)    at its lowest value
    inf(n)        = min(1 - cos theta,                      a copy of the top at t = 1, or
                        cos((n-2) theta) - cos(omega - (n-1) theta))   top at n-2, d=-1 at n-1
    competitor(n) = 1 - cos(omega - (n-1) theta)           top at t = 0 vs the proof's best
    margin(n)     = cos((n-2) theta) - cos(omega - (n-1) theta)
                  = 2 sin((omega - theta)/2) sin((omega - (2n-3) theta)/2)

(for inf/margin: cos(t* theta) - cos(omega - t theta) decreases in both t*, t; with
t* != t the two candidates are (n-1, n-2) and (n-2, n-1), and the second is smaller since
sin x <= sin(omega - x) for x = (2n-3) theta / 2 < omega/2 <= pi/2.  The copy gap
cos(t theta) - cos((t+1) theta) = 2 sin((2t+1) theta/2) sin(theta/2) is least at t = 0.)

At theta' = 0 (no rotation) the logits are cos(d omega), whatever the offset: sup, min,
competitor and margin are the theta' -> 0 limits of the forms above (2 or 1 + cos(omega/2);
0; 1 - cos omega; 1 - cos omega), but lambda is not: a copy of the top now TIES it instead of
sitting 1 - cos theta' below, so lambda(n) = 1 - cos omega (the top is always 1, the largest
value strictly below it is cos omega), for every n >= 2 (C8).
"""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import flint
import numpy as np

from . import retrieval_formulas as F
from .discrepancy import enclose_max, enclose_min
from .functions import is_integer_token, split_pair
from .numbers import Interval
from .phases import Angle, certified_cosines, cosine_key

__all__ = [
    "fold",
    "angle_sign",
    "omega_of",
    "bound_stated",
    "in_regime",
    "n0_max",
    "query_letter",
    "logits_from_tokens",
    "retrieval_closed_form",
    "retrieval_brute",
    "retrieval_general",
    "inf_lower_bound",
    "realizable_vectors",
    "retrieval_discrepancy",
    "RETRIEVAL_READINGS",
]

RETRIEVAL_READINGS = ("sup", "inf", "min", "competitor", "margin")


def omega_of(A: int) -> Angle:
    if A < 2:
        raise ValueError(f"|ALPH| must be >= 2, got {A}")
    return Angle(pi_multiple=Fraction(2, A))


def angle_sign(angle) -> int:
    """-1, 0 or 1: exact for a pure rational or a pure multiple of pi; arb for a mixed angle
    (never 0, since pi is irrational)."""
    angle = Angle.of(angle)
    if angle.rational == 0 or angle.pi_multiple == 0:
        x = angle.rational if angle.pi_multiple == 0 else angle.pi_multiple
        return (x > 0) - (x < 0)
    balls = Interval(256)
    with balls.working():
        return 1 if bool(angle.ball(balls) > 0) else -1


def fold(theta) -> Angle:
    """theta' = the distance from theta to the nearest multiple of 2 pi, an exact Angle in
    [0, pi]: every reading is a function of theta' (module docstring, Symmetry)."""
    return _fold(Angle.of(theta))


@functools.lru_cache(maxsize=4096)
def _fold(theta: Angle) -> Angle:
    """``fold`` of an Angle, once per angle (the scans ask for the same angles again; issue 41)."""
    k = round(float(theta) / (2 * np.pi))  # any k near the nearest works: the sign tests below fix it up
    rest = theta + Angle(pi_multiple=Fraction(-2 * k))
    while angle_sign(rest + Angle(pi_multiple=Fraction(-1))) > 0:
        rest = rest + Angle(pi_multiple=Fraction(-2))
    while angle_sign(rest + Angle(pi_multiple=Fraction(1))) < 0:
        rest = rest + Angle(pi_multiple=Fraction(2))
    return -rest if angle_sign(rest) < 0 else rest


def phase(theta: Angle, A: int, t: int, d: int) -> Angle:
    return omega_of(A) * d + theta * t


def bound_stated(theta, A: int, n: int, balls: Interval):
    """Theorem 3.2's bound 1 - cos(omega - n theta): ``retrieval_formulas.BOUND`` read with theta
    itself (the paper's text), not theta'."""
    return F.value(F.BOUND, Angle.of(theta), A, n, balls)


def in_regime(theta, A: int, n: int) -> bool:
    """2 (n - 1) theta' < omega (theta' = ``fold(theta)``, 0 included: the closed forms cover
    theta' = 0 too), decided exactly for a rational multiple of pi, else with arb."""
    return angle_sign(omega_of(A) + fold(theta) * (-2 * (n - 1))) > 0


def n0_max(theta, A: int) -> int:
    """The largest n0 with theta < omega / (2 n0): the longest inputs Theorem 3.1's condition
    covers (certified; 0 when theta >= omega / 2)."""
    theta = Angle.of(theta)
    balls = Interval(256)
    with balls.working():
        ratio = omega_of(A).ball(balls) / (2 * theta.ball(balls))  # n0 < ratio
        guess = int(float(ratio.mid()))
        for n0 in (guess + 1, guess, guess - 1, guess - 2):
            if n0 >= 0 and bool(balls.convert(n0) < ratio):
                return n0
    raise ArithmeticError("n0_max undecided")


def query_letter(token) -> str:
    """The letter the query looks for: its right letter (ALPH x ALPH), else its left letter."""
    left, right = split_pair(token)
    return left if is_integer_token(right) else right


def logits_from_tokens(tokens, theta, letters, numbers):
    """The last position's logits cos((phi(l_j) - phi(c)) omega + (n - j) theta) straight from
    the tokens (phi numbers ``letters`` 1..A), in any number system: an independent route."""
    A, n = len(letters), len(tokens)
    phi = {x: i + 1 for i, x in enumerate(letters)}
    c = phi[query_letter(tokens[-1])]
    with numbers.working():
        theta_v = Angle.of(theta).value(numbers)
        omega_v = 2 * numbers.pi() / A
        return [
            numbers.cos((phi[split_pair(tok)[0]] - c) * omega_v + (n - j) * theta_v)
            for j, tok in enumerate(tokens, start=1)
        ]


def retrieval_closed_form(theta, A: int, n: int, reading: str, balls: Interval):
    """The reading's value from the closed forms of the module docstring (regime only), in
    theta' = ``fold(theta)``; lambda at theta' = 0 is 1 - cos omega."""
    theta = Angle.of(theta)
    if n < 2 or not in_regime(theta, A, n):
        raise ValueError(
            f"closed forms need n >= 2 and 2(n-1) theta' < omega, theta' = the distance from theta "
            f"to 2 pi Z (theta = {theta}, |ALPH| = {A}, n = {n})"
        )
    th = fold(theta)
    forms = {
        "sup": F.SUP_EVEN if A % 2 == 0 else F.SUP_ODD,
        "inf": F.INF_AT_ZERO if th == Angle() else F.INF_POSITIVE,
        "min": F.INF_POSITIVE,
        "competitor": F.COMPETITOR,
        "margin": F.MARGIN,
    }
    if reading in forms:
        return F.value(forms[reading], th, A, n, balls)
    raise ValueError(f"unknown reading {reading!r}; known: {RETRIEVAL_READINGS}")


def retrieval_discrepancy(
    theta, A: int, n: int, reading: str, prec: int = 128, max_rows: int = 20000
) -> dict:
    """The reading's value at length n as a certified ball, naming the reading and the route:
    the closed form inside the regime, brute force over every row when A^n is small; else
    a ValueError pointing to ``retrieval_general`` (float) and ``inf_lower_bound``."""
    balls = Interval(prec)
    if n >= 2 and in_regime(theta, A, n):
        value, route = retrieval_closed_form(theta, A, n, reading, balls), "closed form"
    elif A**n <= max_rows:
        value, route = retrieval_brute(theta, A, n, reading, prec), "brute force"
    else:
        raise ValueError(
            f"n = {n} is beyond the closed forms (2 (n-1) theta >= omega) and A^n = {A}^{n} rows "
            f"is too many to enumerate; use retrieval_general (float64) or inf_lower_bound"
        )
    return {
        "reading": reading,
        "n": n,
        "alph_size": A,
        "route": route,
        "value": value,
        "float": float(value.mid()),
    }


def realizable_vectors(A: int, n: int):
    """Every (d_0..d_{n-1}) in Z_A^n with at least one zero (module docstring)."""
    for vec in itertools.product(range(A), repeat=n):
        if 0 in vec:
            yield vec


def retrieval_brute(theta, A: int, n: int, reading: str, prec: int = 128):
    """Every realizable row of length n, ties decided exactly on phases; a certified
    enclosure of the reading's value (any theta, any n; cost A^n)."""
    theta = Angle.of(theta)
    phases = {(t, d): phase(theta, A, t, d) for t in range(n) for d in range(A)}
    table = certified_cosines(phases.values(), prec)
    key = {td: cosine_key(p) for td, p in phases.items()}
    rank, value = table.rank, table.value
    balls = Interval(table.prec)
    results = []
    with balls.working():
        best_other = min((key[(t, d)] for t in range(n) for d in range(1, A)), key=rank.get)
        for vec in realizable_vectors(A, n):
            row = sorted((key[(t, d)] for t, d in enumerate(vec)), key=rank.get)
            matched = min((key[(t, 0)] for t, d in enumerate(vec) if d == 0), key=rank.get)
            if reading in ("sup", "min"):
                second = row[1]
            elif reading == "inf":
                below = [k for k in row if k != row[0]]
                if not below:
                    continue  # a constant row: excluded from lambda(n)
                second = below[0]
            elif reading == "competitor":
                row, second = [matched], best_other
            elif reading == "margin":
                others = [key[(t, d)] for t, d in enumerate(vec) if d != 0]
                if not others:
                    continue
                row, second = [matched], min(others, key=rank.get)
            else:
                raise ValueError(f"unknown reading {reading!r}; known: {RETRIEVAL_READINGS}")
            results.append(flint.arb(0) if row[0] == second else value[row[0]] - value[second])
        if not results:
            return flint.arb(0)
        return enclose_max(results) if reading in ("sup", "competitor") else enclose_min(results)


def _table(theta: float, A: int, n: int) -> np.ndarray:
    t = np.arange(n, dtype=np.float64)[:, None]
    d = np.arange(A, dtype=np.float64)[None, :]
    return np.cos(d * (2 * np.pi / A) + t * theta)


def retrieval_general(theta: float, A: int, n: int, reading: str) -> float:
    """Float64, O(n A), any theta and n: "sup", "competitor", "margin" (evidence and
    figures only; statuses are decided by closed forms or brute force in arb)."""
    V = _table(float(theta), A, n)
    z, low = V[:, 0], V.min(axis=1)
    best_other = V[:, 1:].max(axis=1)
    if reading == "competitor":
        return 1.0 - best_other.max()
    if reading == "margin":  # single match at t*, best other symbol at some t != t*
        return float(np.min(z - _max_excluding(best_other)))
    if reading != "sup":
        raise ValueError(f"retrieval_general computes sup, competitor, margin; not {reading!r}")
    R = _max_excluding(low)
    gaps = [z - R]  # the top is a matched key: every other key at its lowest
    # the top is another symbol: a match is needed elsewhere, at some t_z != T, and its
    # logit z[t_z] competes; h[T] = min over t_z of max(z[t_z], the rest at their lowest).
    # Only t_z among the two largest lows (removing them changes "the rest") or the four
    # smallest z can be optimal; vectorised over T.
    top_low = np.argsort(-low)[:3]
    candidates = set(top_low[:2].tolist()) | set(np.argsort(z)[:4].tolist())
    T = np.arange(n)
    h = np.full(n, np.inf)
    for tz in candidates:
        rest = np.full(n, -np.inf)
        for t in top_low[::-1]:  # the first of top_low not in {T, tz} wins: fill in reverse
            if t != tz:
                rest = np.where(T != t, low[t], rest)
        h = np.where(T != tz, np.minimum(h, np.maximum(z[tz], rest)), h)
    gaps.append(best_other - h)
    return float(max(0.0, max(g.max() for g in gaps)))


def _max_excluding(x: np.ndarray) -> np.ndarray:
    """For every t, the maximum of x over the other indices."""
    if len(x) < 2:
        return np.full_like(x, -np.inf)
    i = int(np.argmax(x))
    second = np.max(np.delete(x, i))
    out = np.full_like(x, x[i])
    out[i] = second
    return out


def inf_lower_bound(theta, A: int, n: int, prec: int = 128):
    """A certified lower bound on lambda(n) for any theta, n: every Lemma-F.1 gap is the
    difference of two distinct values cos(d omega + t theta) of the table, so it is at
    least the smallest distance between neighbouring distinct values.  Cost n A log."""
    theta = Angle.of(theta)
    table = certified_cosines([phase(theta, A, t, d) for t in range(n) for d in range(A)], prec)
    order = sorted(table.rank, key=table.rank.get)
    balls = Interval(table.prec)
    with balls.working():
        gaps = [table.value[order[i]] - table.value[order[i + 1]] for i in range(len(order) - 1)]
        return enclose_min(gaps)

"""T_Index's discrepancy (Appendix F.2.1), exactly, at any length.

Positions j = 1..n, query at n, offset t = n - j.  The logit to key j is
cos((t - s) theta) with s = 0 for a letter query and s in INT = [m] for an integer query; it
does not depend on the keys, so an input's logit row is fixed by (n, s), and enumerating the
query types enumerates every row.  With u = t - s in {-s..n-1-s} the top is cos 0 = 1 at
u = 0 and, cos being even,

    gap(n, s) = 1 - max_{1<=u<=L} cos(u theta) = 1 - cos(2 pi min_{1<=u<=L} ||u alpha||),
    L = max(s, n - 1 - s),  alpha = theta / 2 pi,

(cos is decreasing on [0, pi] and ||.|| <= 1/2), a non-increasing step function of L
computed by ``theory.diophantine.min_distance``.  An integer query must point inside the
input (s <= n - 1); Definition F.1 also asks n > m, which the claims report separately.
Readings: "sup" takes the smallest L over query types, "inf" and "min" the largest, n - 1.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import flint

from .diophantine import Nearest, min_distance
from .discrepancy import decide, enclose_max, enclose_min, exact_row_gap
from .numbers import FLOAT64, Interval
from .phases import Angle, cosine_key

__all__ = [
    "index_queries",
    "index_L",
    "IndexGap",
    "index_gap",
    "index_discrepancy",
    "index_blocks",
    "index_block_value",
    "index_stated_violations",
    "index_corrected_holds",
    "index_first_tie",
    "index_gap_mpmath",
    "index_rows",
    "index_discrepancy_brute",
]


def index_queries(n: int, m: int) -> list[tuple[str, int, int]]:
    """Every query type of length n: ``(label, s, L)`` with s = 0 for a letter and the
    admissible integers 1 <= s <= min(m, n - 1); L = max(s, n - 1 - s)."""
    if n < 2:
        raise ValueError(f"n must be >= 2 (a gap needs two keys), got {n}")
    out = [("letter", 0, n - 1)]
    out += [(f"int {s}", s, max(s, n - 1 - s)) for s in range(1, min(m, n - 1) + 1)]
    return out


def index_L(n: int, reading: str, m: int = 16) -> int:
    """The L whose gap is the reading's value: the smallest L over query types for "sup"
    (the gap is non-increasing in L), the largest (n - 1, the letter query) otherwise."""
    if reading == "sup":
        # min over s in [0, min(m, n-1)] of max(s, n-1-s): s as close to (n-1)/2 as INT allows
        return max((n - 1 + 1) // 2, n - 1 - m)
    if reading in ("inf", "min"):
        return n - 1
    raise ValueError(f"T_Index reading must be 'sup', 'inf' or 'min', got {reading!r}")


@dataclass(frozen=True)
class IndexGap:
    """gap(L) = 1 - cos(2 pi ||q alpha||), q the best denominator <= L (see module doc)."""

    angle: Angle
    nearest: Nearest

    @property
    def L(self) -> int:
        return self.nearest.L

    @property
    def is_zero(self) -> bool:
        """True exactly when some 1 <= u <= L has u theta = 0 mod 2 pi (a tie with the top)."""
        return self.nearest.is_zero

    def ball(self, balls: Interval):
        with balls.working():
            if self.is_zero:
                return flint.arb(0)
            return 1 - (2 * flint.arb.pi() * self.nearest.ball(balls)).cos()

    def __float__(self):
        return float(self.ball(Interval(128)).mid())


def index_gap(angle, L: int) -> IndexGap:
    angle = Angle.of(angle)
    return IndexGap(angle, min_distance(angle.turns(), L))


def _lemma_f1_tie_gap(angle: Angle, n: int):
    """lambda(n) when the letter query ties (alpha = p/q, q <= n - 1): every nonzero
    ||u alpha|| is a multiple of 1/q and u = p^-1 mod q <= q - 1 <= L attains 1/q in every
    query type that ties, while types that do not tie have all distances >= 1/q; so
    lambda(n) = 1 - cos(2 pi / q).  (q = 1: every logit is 1, all rows constant, lambda = 0.)"""
    q = angle.turns().exact.denominator
    return Fraction(0) if q == 1 else Fraction(1, q)


def index_discrepancy(angle, n: int, reading: str = "sup", m: int = 16, prec: int = 128) -> dict:
    """T_Index's discrepancy at length n under ``reading`` ("sup", "inf", "min"), exactly:
    a certified ball plus the structure (L, best denominator q) that produced it."""
    angle = Angle.of(angle)
    L = index_L(n, reading, m)
    gap = index_gap(angle, L)
    balls = Interval(prec)
    row = {"reading": reading, "n": n, "m": m, "L": L, "q": gap.nearest.q, "tie": gap.is_zero}
    with balls.working():
        if reading == "inf" and gap.is_zero:
            d = _lemma_f1_tie_gap(angle, n)
            value = flint.arb(0) if d == 0 else 1 - (2 * flint.arb.pi() * balls.convert(d)).cos()
            row["lemma_f1_next_distance"] = str(d)
        else:
            value = gap.ball(balls)
        row["value"] = value
        row["float"] = float(value.mid())
    return row


def index_blocks(angle, reading: str, n_max: int, m: int = 16, n_min: int = 2) -> list[dict]:
    """Every n in [n_min, n_max], grouped into blocks on which the gap is constant: the
    best denominator q_k <= L(n) < q_{k+1} is the same throughout a block.  O(log n_max)."""
    angle = Angle.of(angle)
    L_of = functools.partial(index_L, reading=reading, m=m)
    blocks, n = [], n_min
    while n <= n_max:
        gap = index_gap(angle, L_of(n))
        limit = gap.nearest.next_q  # the gap changes once L(n) reaches this denominator
        if limit is None or gap.is_zero:
            n_hi = n_max
        else:
            n_hi = _last_n_below(L_of, n, n_max, limit)
        blocks.append({"n_lo": n, "n_hi": n_hi, "q": gap.nearest.q, "next_q": limit, "gap": gap})
        n = n_hi + 1
    return blocks


def _last_n_below(L_of, lo: int, hi: int, limit: int) -> int:
    """The largest n in [lo, hi] with L(n) < limit (L non-decreasing, L(lo) < limit)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if L_of(mid) < limit:
            lo = mid
        else:
            hi = mid - 1
    return lo


def index_block_value(block: dict, reading: str, balls: Interval):
    """The reading's (constant) value on a block of ``index_blocks``.  For "inf" on a tie
    block (alpha = p/q, q <= L) it is Lemma F.1's 1 - cos(2 pi / q), not 0."""
    gap = block["gap"]
    with balls.working():
        if reading == "inf" and gap.is_zero:
            d = _lemma_f1_tie_gap(gap.angle, block["n_lo"])
            return flint.arb(0) if d == 0 else 1 - (2 * flint.arb.pi() * balls.convert(d)).cos()
        return gap.ball(balls)


def index_stated_violations(angle, reading: str, n_max: int, m: int = 16, n_min: int = 2) -> dict:
    """Every n in [n_min, n_max] where the reading's value exceeds Theorem 3.2's
    min{1 - cos theta, 2 pi^2 / n^2}, as certified ranges.

    On a block the value G is constant.  G <= 1 - cos theta always: u = 1 is an admissible
    offset, so min ||u alpha|| <= ||alpha||, and Lemma F.1's tie value 1 - cos(2 pi / q)
    (alpha = p/q) has 1/q <= ||p/q|| = ||alpha||.  So a violation is
    2 pi^2 / n^2 < G, i.e. n > n_c = floor(pi sqrt(2 / G)), decided by a certified floor.
    """
    angle = Angle.of(angle)
    ranges, undecided, blocks = [], [], index_blocks(angle, reading, n_max, m, n_min)
    for block in blocks:
        prec = 128
        while True:
            balls = Interval(prec)
            with balls.working():
                G = index_block_value(block, reading, balls)
                if G.is_zero():
                    n_c = block["n_hi"]
                    break
                n_c = (flint.arb.pi() * (2 / G).sqrt()).floor().unique_fmpz()
            if n_c is not None:
                n_c = int(n_c)
                break
            if prec > 4096:
                undecided.append([block["n_lo"], block["n_hi"]])
                n_c = block["n_hi"]
                break
            prec *= 4
        lo = max(block["n_lo"], n_c + 1)
        if lo <= block["n_hi"]:
            ranges.append(
                {
                    "n_lo": lo,
                    "n_hi": block["n_hi"],
                    "q": block["q"],
                    "value": float(index_block_value(block, reading, Interval(128)).mid()),
                }
            )
    count = sum(r["n_hi"] - r["n_lo"] + 1 for r in ranges)
    return {
        "reading": reading,
        "n_range": [n_min, n_max],
        "violating_ranges": ranges,
        "violations": count,
        "blocks": len(blocks),
        "undecided_blocks": undecided,
    }


def index_corrected_holds(angle, reading: str, n_max: int, m: int = 16, n_min: int = 2) -> dict:
    """Check value(n) <= 1 - cos(2 pi / (L(n) + 1)) for every n in [n_min, n_max] ("sup" and
    "min"; for "min", L + 1 = n so this is 1 - cos(2 pi / n) <= 2 pi^2 / n^2).

    Proof checked per block: value = 1 - cos(2 pi ||q_k alpha||) with q_k <= L < q_{k+1},
    and ||q_k alpha|| < 1 / q_{k+1} <= 1 / (L + 1) (convergents: |q_k alpha - p_k| <
    1 / q_{k+1}); cos is decreasing on [0, pi], so comparing distances suffices, at the
    block's largest L.  The distance comparison is exact for rational alpha, arb otherwise.
    """
    angle = Angle.of(angle)
    if reading not in ("sup", "min"):
        raise ValueError("the corrected bound is stated for the 'sup' and 'min' readings")
    failures, undecided = [], []
    blocks = index_blocks(angle, reading, n_max, m, n_min)
    for block in blocks:
        nearest = block["gap"].nearest
        limit = Fraction(1, index_L(block["n_hi"], reading, m) + 1)
        exact = nearest.exact()
        if exact is not None:
            ok = exact <= limit
        else:
            ok = decide(lambda b, limit=limit, nearest=nearest: b.convert(limit) - nearest.ball(b)).sign
            if ok is None:
                undecided.append([block["n_lo"], block["n_hi"]])
                continue
            ok = ok > 0
        if not ok:
            failures.append({"n_lo": block["n_lo"], "n_hi": block["n_hi"], "q": nearest.q})
    return {
        "reading": reading,
        "n_range": [n_min, n_max],
        "blocks": len(blocks),
        "failures": failures,
        "undecided_blocks": undecided,
    }


def index_first_tie(angle, n_max: int, m: int = 16) -> int | None:
    """The least n <= n_max at which some input of length n has a tied top logit, found by
    brute force on exact phase keys (the top is u = 0, cos = 1; a tie is another key with
    the same cosine key), or None.  Independent of the continued-fraction route."""
    angle = Angle.of(angle)
    top = cosine_key(angle * 0)
    for n in range(2, n_max + 1):
        for _, s, _ in index_queries(n, m):
            if any(cosine_key(angle * (n - j - s)) == top for j in range(1, n + 1) if n - j != s):
                return n
    return None


def index_gap_mpmath(angle, n: int, s: int, dps: int) -> object:
    """Independent re-check: the gap of the query-s row of length n, every logit evaluated
    directly in mpmath at ``dps`` digits (no continued fractions, no arb)."""
    from .numbers import MultiPrecision

    mp = MultiPrecision(dps)
    theta = Angle.of(angle).value(mp)
    row = sorted((mp.ctx.cos((n - j - s) * theta) for j in range(1, n + 1)), reverse=True)
    return row[0] - row[1]


def index_rows(angle, n: int, m: int = 16, numbers=FLOAT64) -> list[tuple[str, object]]:
    """Every distinct logit row of length n, one per query type, from the formula
    cos((n - j - s) theta) for j = 1..n, in any number system (brute-force reference)."""
    angle = Angle.of(angle)
    rows = []
    with numbers.working():
        theta = angle.value(numbers)
        for label, s, _ in index_queries(n, m):
            u = [n - j - s for j in range(1, n + 1)]
            rows.append((label, numbers.cos_array(numbers.array(u) * theta)))
    return rows


def index_discrepancy_brute(angle, n: int, reading: str = "sup", m: int = 16, prec: int = 128):
    """Brute force over every query type, ties decided exactly on phases, values in arb:
    returns a certified enclosure of the reading's value."""
    angle = Angle.of(angle)
    ties = "next" if reading == "inf" else "zero"
    gaps = []
    for _, s, _ in index_queries(n, m):
        phases = [angle * (n - j - s) for j in range(1, n + 1)]
        gaps.append(exact_row_gap(phases, ties, prec))
    if reading == "sup":
        return enclose_max(gaps)
    positive = [g for g in gaps if not g.is_zero()] if reading == "inf" else gaps
    return enclose_min(positive) if positive else flint.arb(0)

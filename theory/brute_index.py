"""Brute-force references for every statement the package makes about T_Index (issue 16).

Nothing here uses continued fractions, tie periods, L_min or any other closed form of the
statements it checks.  A logit row is built position by position from T_Index's logit:
the key at offset t = n - j from a query token that looks s steps back (s = 0 for a
letter, s = i for the integer i) scores cos((t - s) theta), whatever the key's token (every
key is the same vector v; constructions.index, whose matrix route sympy proves equal to
this formula in claim C4-index).  Ties are decided exactly (``theory.phases.cosine_key``),
the order of distinct cosines is certified with arb (``certified_cosines``).

Two levels:
* ``row_gap`` / ``reading_gap``: every query token of length n, each row enumerated entry
  by entry (the row depends on the query token only, so this covers every input);
* ``average_hard_errors``: every valid input itself, token by token, through average-hard
  attention, the value map, the residual and the decoding of T_Index, against Index;
  ``literal_errors``: the same over every input of Sigma^n (integers may point before the
  start), against Definition F.1 read literally (``theory.functions.index(literal=True)``).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import flint
import numpy as np

from .functions import index
from .numbers import Interval
from .phases import Angle, CosineTable, certified_order, cosine_key

__all__ = [
    "CosineOrder",
    "RowGap",
    "average_hard_errors",
    "literal_errors",
    "query_shifts",
    "reading_gap",
    "row_gap",
    "tied_differences",
    "valid_prefixes",
]


class CosineOrder:
    """Certified ranks (0 = largest) of cos(u theta) for |u| < N and of some extra phases."""

    def __init__(self, theta, N: int, extra=()):
        self.theta, self.N = Angle.of(theta), int(N)
        self.extra = [Angle.of(e) for e in extra]
        # the table, the ranks of the offsets, and row_gap's rows (by (n, s, ties): a row is a
        # function of this order), shared by every order of the same angles (issue 41)
        self.table, self._rank, self._value, self._rows = _order_state(self.theta, self.N, tuple(self.extra))

    def rank(self, u):
        """Rank of cos(u theta), elementwise."""
        return self._rank[np.asarray(u) + self.N - 1]

    def rank_of(self, phase) -> int:
        return self.table.rank[cosine_key(Angle.of(phase))]

    def cos(self, rank: int):
        """The cosine of that rank as an arb ball (at the table's certified precision)."""
        return self._value[int(rank)]


@functools.lru_cache(maxsize=1024)
def _order_state(theta: Angle, N: int, extra: tuple) -> tuple:
    """``certified_cosines`` of cos(u theta), |u| < N, and ``extra``, with the ranks of the
    offsets (read-only), the ball of each rank and an empty table for row_gap's rows; the
    cosine_keys of the offsets computed once (issue 41)."""
    offsets = [theta * u for u in range(-(N - 1), N)]
    phases = offsets + list(extra)
    keys = [cosine_key(p) for p in phases]
    items, order, values, prec = certified_order(phases, keys)
    rank = {items[i][0]: r for r, i in enumerate(order)}
    table = CosineTable(rank, {k: v for (k, _), v in zip(items, values)}, prec)
    ranks = np.array([rank[k] for k in keys[: len(offsets)]], dtype=np.int64)
    ranks.flags.writeable = False
    return table, ranks, {r: table.value[k] for k, r in rank.items()}, {}


@dataclass(frozen=True)
class RowGap:
    """A row's gap cos(top) - cos(second), by ranks; ``second == top`` means 0 (a tie under
    ties='zero', a constant row under ties='next')."""

    top: int
    second: int
    shift: int = 0

    @property
    def is_zero(self) -> bool:
        return self.second == self.top

    def ball(self, order: CosineOrder, prec: int = 128):
        if self.is_zero:
            return flint.arb(0)
        with Interval(max(prec, order.table.prec)).working():
            return order.cos(self.top) - order.cos(self.second)


def query_shifts(n: int, m: int) -> list[int]:
    """How far back each query token of a length-n input looks: 0 for a letter, i for an
    integer i in INT = [m] that points inside the input (i <= n - 1)."""
    return [0] + list(range(1, min(m, n - 1) + 1))


def row_gap(order: CosineOrder, n: int, s: int, ties: str = "zero") -> RowGap:
    """The query-s row of length n, entry by entry: offsets t = 0..n-1, logit cos((t - s) theta).
    Computed once per (order, n, s, ties): the searches ask for the same rows many times."""
    rows = getattr(order, "_rows", None)
    key = (n, s, ties)
    if rows is not None and key in rows:
        return rows[key]
    ranks = order.rank(np.arange(n) - s)
    top = int(ranks.min())
    shared = int((ranks == top).sum()) > 1
    below = ranks[ranks > top]
    if ties == "zero":
        second = top if shared or not below.size else int(below.min())
    elif ties == "next":
        second = int(below.min()) if below.size else top
    else:
        raise ValueError(f"ties must be 'zero' or 'next', got {ties!r}")
    gap = RowGap(top, second, s)
    if rows is not None:
        rows[key] = gap
    return gap


def reading_gap(order: CosineOrder, n: int, m: int, reading: str) -> RowGap:
    """The reading's value at length n over every query token ("sup": largest gap, "min":
    smallest with ties 0, "inf": Lemma F.1's smallest positive next-gap, 0 if none).

    Gaps of different rows are compared by the rank of ``second``; that needs a common top,
    which is checked, not assumed (every row holds t = s, cos 0 = 1)."""
    ties = "next" if reading == "inf" else "zero"
    gaps = [row_gap(order, n, s, ties) for s in query_shifts(n, m)]
    if len({g.top for g in gaps}) != 1:
        raise ArithmeticError(f"rows of length {n} do not share their largest logit")
    if reading == "sup":
        return max(gaps, key=lambda g: g.second)
    if reading == "min":
        return min(gaps, key=lambda g: g.second)
    if reading == "inf":
        positive = [g for g in gaps if not g.is_zero]
        return min(positive, key=lambda g: g.second) if positive else gaps[0]
    raise ValueError(f"reading must be 'sup', 'inf' or 'min', got {reading!r}")


def tied_differences(theta, D: int) -> list[int]:
    """Every d in 1..D with d theta in 2 pi Z (cos(d theta) = cos 0), by exact phases."""
    theta, top = Angle.of(theta), cosine_key(Angle())
    return [d for d in range(1, D + 1) if cosine_key(theta * d) == top]


def valid_prefixes(letters: int, m: int, length: int) -> np.ndarray:
    """Every token sequence of ``length`` whose integers point inside it, as ids: 0..letters-1
    are the letters, letters + i - 1 the integer i (at 0-based position p, i <= p)."""
    choices = [
        list(range(letters)) + [letters + i - 1 for i in range(1, min(m, p) + 1)] for p in range(length)
    ]
    return np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, length)


def _decode(ids: np.ndarray, top_positions: np.ndarray, letters: int, m: int) -> np.ndarray:
    """T_Index's output id at the last position of every row of ``ids`` given the tied top
    positions: scores k * onehot(query) + 2 * (letters at the top positions) (the value map
    sends a letter to 2 e_letter and an integer to 0; the average divides by k, scaled away),
    argmax if unique, else -1 (an ambiguous output is an error)."""
    k = len(top_positions)
    scores = np.zeros((len(ids), letters + m), dtype=np.int64)
    for j in top_positions:
        is_letter = ids[:, j] < letters
        scores[is_letter, ids[is_letter, j]] += 2
    scores[np.arange(len(ids)), ids[:, -1]] += k
    best = scores.max(axis=1)
    unique = (scores == best[:, None]).sum(axis=1) == 1
    return np.where(unique, scores.argmax(axis=1), -1)


def _index_answer(ids: np.ndarray, letters: int) -> np.ndarray:
    """Definition F.1 at the last position: a letter stays; the integer i becomes the token
    i back if that is a letter, and stays i otherwise."""
    query, n = ids[:, -1], ids.shape[1]
    out = query.copy()
    for i in np.unique(query[query >= letters] - letters + 1):
        rows = query == letters + i - 1
        target = ids[rows, n - 1 - i]
        out[rows] = np.where(target < letters, target, query[rows])
    return out


def average_hard_errors(
    theta, letters: int, m: int, n0: int, order: CosineOrder | None = None, limit: int = 3
) -> dict:
    """Run average-hard T_Index (any theta) on every valid input of length m < n <= n0 at
    every position, token by token, against Index.  The positions of such inputs are exactly
    the valid prefixes of length 1..n0 (a prefix is extended by letters), so for n0 > m each
    prefix is checked once at its last position; for n0 <= m there is no valid input."""
    if n0 <= m:
        return {"inputs": 0, "positions": 0, "errors": 0, "examples": [], "vacuous": True}
    order = order or CosineOrder(theta, n0)
    positions = errors = 0
    examples = []
    for length in range(1, n0 + 1):
        ids = valid_prefixes(letters, m, length)
        for query in np.unique(ids[:, -1]):
            rows = ids[ids[:, -1] == query]
            s = 0 if query < letters else int(query) - letters + 1
            ranks = order.rank(length - 1 - np.arange(length) - s)  # offset t = length - 1 - j
            top = np.flatnonzero(ranks == ranks.min())
            wrong = np.flatnonzero(_decode(rows, top, letters, m) != _index_answer(rows, letters))
            positions += len(rows)
            errors += len(wrong)
            examples += [rows[w].tolist() for w in wrong[: max(0, limit - len(examples))]]
    inputs = sum(int(np.prod([letters + min(m, p) for p in range(n)])) for n in range(m + 1, n0 + 1))
    return {
        "inputs": inputs,
        "positions": positions,
        "errors": errors,
        "examples": examples,
        "vacuous": False,
    }


@functools.lru_cache(maxsize=64)
def _all_prefixes(letters: int, m: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Every sequence of Sigma^length as ids (letters first, then the integers 1..m), and the
    literal Index answer at its last position (theory.functions.index, literal=True)."""
    ids = np.array(list(itertools.product(range(letters + m), repeat=length)), dtype=np.int64)
    name = [chr(ord("A") + c) for c in range(letters)] + list(range(1, m + 1))
    back = {t: c for c, t in enumerate(name)}
    answers = np.array([back[index([name[c] for c in row], literal=True)[-1]] for row in ids], dtype=np.int64)
    return ids, answers


def literal_errors(
    theta, letters: int, m: int, n0: int, order: CosineOrder | None = None, limit: int = 3
) -> dict:
    """Average-hard T_Index (any theta) on every input of Sigma^n, m < n <= n0, at every
    position, token by token, against Definition F.1 read literally.  The positions of those
    inputs are exactly the sequences of Sigma^length, length 1..n0 (extend by letters).
    ``pointing_before_start``: errors at a query integer i >= length (no key i back)."""
    if n0 <= m:
        return {
            "inputs": 0,
            "positions": 0,
            "errors": 0,
            "pointing_before_start": 0,
            "examples": [],
            "vacuous": True,
        }
    order = order or CosineOrder(theta, max(n0, m + 1))
    positions = errors = before = 0
    examples = []
    for length in range(1, n0 + 1):
        ids, answers = _all_prefixes(letters, m, length)
        for query in range(letters + m):
            chosen = ids[:, -1] == query
            rows, expected = ids[chosen], answers[chosen]
            s = 0 if query < letters else query - letters + 1
            ranks = order.rank(length - 1 - np.arange(length) - s)  # offset t = length - 1 - j
            top = np.flatnonzero(ranks == ranks.min())
            wrong = np.flatnonzero(_decode(rows, top, letters, m) != expected)
            positions, errors = positions + len(rows), errors + len(wrong)
            before += len(wrong) if s > length - 1 else 0
            examples += [rows[w].tolist() for w in wrong[: max(0, limit - len(examples))]]
    inputs = sum((letters + m) ** n for n in range(m + 1, n0 + 1))
    return {
        "inputs": inputs,
        "positions": positions,
        "errors": errors,
        "pointing_before_start": before,
        "examples": examples,
        "vacuous": False,
    }

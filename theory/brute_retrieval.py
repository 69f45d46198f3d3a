"""Token-level brute force for the package's own statements about T_Retrieval (issue 16).

Nothing here calls ``theory.discrepancy_retrieval``'s closed forms or its realizable-vector
shortcut: every proper input (Definition F.2, decided by ``theory.functions.retrieval``
itself) of a small alphabet is enumerated token by token, its last position's logits
cos((phi(l_j) - phi(c)) omega + (n - j) theta) are built from the tokens as exact phases,
equal logits are found exactly (``theory.phases.cosine_key``) and the order of distinct
ones is certified with arb balls (``theory.phases.certified_cosines``).  Each reading is
then an optimisation over those rows, as a certified ball.

The statements under test are the formulas their claim texts print (``STATEMENTS``, built on
``theory.retrieval_formulas``: the printed text is what is evaluated, issue 42) and are compared
with the brute force; each names its stated range (``CONDITIONS``), which the searches must
sample whole (issue 30).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import flint

from . import retrieval_formulas as F
from .discrepancy import enclose_max, enclose_min
from .discrepancy_retrieval import angle_sign, fold  # the statements' theta'; the brute force never folds
from .functions import is_integer_token, retrieval, split_pair
from .numbers import Interval
from .phases import Angle, certified_cosines, cosine_key

__all__ = [
    "proper_inputs",
    "brute_last_position",
    "STATEMENTS",
    "OLD_FORMULAS",
    "CONDITIONS",
    "statement_value",
    "omega",
    "in_range",
    "check_statement",
    "other_symbols_below_match",
    "bound_value",
]

LETTERS = "abcdefgh"


def omega(A: int) -> Angle:
    return Angle(pi_multiple=Fraction(2, A))


@functools.lru_cache(maxsize=64)
def proper_inputs(A: int, m: int, n: int) -> tuple:
    """Every proper input of length n over ALPH = the first A letters, INT = 1..m (tuples of
    strings such as 'a1', 'ab').  A prefix of a proper input is proper, so the search
    extends proper prefixes only; Retrieval (Definition F.2) is the judge."""
    letters = LETTERS[:A]
    vocab = [x + y for x in letters for y in list(letters) + [str(i) for i in range(1, m + 1)]]
    layer = [()]
    for _ in range(n):
        grown = []
        for prefix in layer:
            for token in vocab:
                candidate = prefix + (token,)
                try:
                    retrieval(list(candidate))
                except ValueError:
                    continue
                grown.append(candidate)
        layer = grown
    return tuple(layer)


def _query_letter(token) -> str:
    left, right = split_pair(token)
    return left if is_integer_token(right) else right


@functools.lru_cache(maxsize=64)
def input_shapes(A: int, m: int, n: int) -> tuple:
    """Per proper input, from its tokens alone: (offset t, letter difference d mod A) of every
    position, which positions carry the query letter, the tokens and the Retrieval answer."""
    out = []
    for tokens in proper_inputs(A, m, n):
        c = LETTERS.index(_query_letter(tokens[-1]))
        lefts = [LETTERS.index(split_pair(tok)[0]) for tok in tokens]
        pairs = tuple((n - 1 - j, (left - c) % A) for j, left in enumerate(lefts))
        matched = tuple(left == c for left in lefts)
        out.append((pairs, matched, tokens, retrieval(list(tokens))[-1]))
    return tuple(out)


def brute_last_position(theta, A: int, m: int, n: int, prec: int = 128) -> dict:
    """See ``_brute_last_position``; cached, since several statements share angles."""
    return dict(_brute_last_position(Angle.of(theta), A, m, n, prec))


@functools.lru_cache(maxsize=4096)
def _brute_last_position(theta: Angle, A: int, m: int, n: int, prec: int) -> dict:
    """Every reading at the last position of every proper input of length n (certified balls):
    ``sup`` (max of top - second, a tie 0), ``inf`` (Lemma F.1: min of top - next strictly
    below over rows that are not constant), ``min`` (min of top - second, a tie 0),
    ``competitor`` (max of the best matched key minus the best other-symbol logit any
    position 1..n could have), ``margin`` (min of best matched key minus best other-symbol
    key present), ``exact`` (average-hard attention decodes the Retrieval answer on every
    input: the answer token holds a strict majority of the top set), ``separated`` (every
    other-symbol key strictly below the best matched key on every input), ``inputs``.
    The phase of (t, d) is d omega + t theta (d taken mod |ALPH|: omega d is then the same
    angle up to 2 pi, so the cosine is unchanged)."""
    theta = Angle.of(theta)
    shapes = input_shapes(A, m, n)
    phases = {(t, d): omega(A) * d + theta * t for t in range(n) for d in range(A)}
    key = {td: cosine_key(ph) for td, ph in phases.items()}
    table = certified_cosines(phases.values(), prec)
    rank, value = table.rank, table.value
    best_anywhere = min((key[(t, d)] for t in range(n) for d in range(1, A)), key=rank.get)
    balls = Interval(table.prec)
    gaps = {"sup": [], "inf": [], "min": [], "competitor": [], "margin": []}
    exact = separated = True
    # by rank, not by key: equal ranks iff equal keys, and ints hash and compare fast where
    # the keys are tuples of Fractions (issue 41); the balls subtracted are the same
    at_rank = {r: value[k] for k, r in rank.items()}
    diff = lambda a, b: flint.arb(0) if a == b else at_rank[a] - at_rank[b]  # noqa: E731
    tops = {}  # per distinct row: the positions holding its top
    rank_at = {td: rank[k] for td, k in key.items()}
    best_rank = rank[best_anywhere]
    with balls.working():
        for pairs, matched, tokens, answer in shapes:
            top_at = tops.get(pairs)
            if top_at is None:  # the readings depend on (t, d) only: once per distinct row
                ranks = [rank_at[td] for td in pairs]
                top, ok = _readings(ranks, matched, best_rank, diff, gaps)
                separated = separated and ok
                top_at = tops[pairs] = [j for j, r in enumerate(ranks) if r == top]
            chosen = [tokens[j] for j in top_at]
            counts = sorted(((chosen.count(t), t) for t in set(chosen)), reverse=True)
            unique = len(counts) == 1 or counts[0][0] > counts[1][0]
            exact = exact and unique and counts[0][1] == answer
        out = {
            name: (enclose_max(v) if name in ("sup", "competitor") else enclose_min(v)) if v else None
            for name, v in gaps.items()
        }
    out.update(exact=exact, separated=separated, inputs=len(shapes))
    return out


def _readings(ranks, matched, best_anywhere, diff, gaps) -> tuple:
    """Append one row's gaps to ``gaps``; return (its top rank, whether it is separated).
    ``ranks``: the certified rank of each position's cosine (0 = largest, equal iff equal)."""
    order = sorted(ranks)
    top = order[0]
    gaps["sup"].append(diff(top, order[1]))
    gaps["min"].append(diff(top, order[1]))
    below = [k for k in order if k != top]
    if below:
        gaps["inf"].append(diff(top, below[0]))
    best = min(k for k, hit in zip(ranks, matched) if hit)
    others = [k for k, hit in zip(ranks, matched) if not hit]
    gaps["competitor"].append(diff(best, best_anywhere))
    separated = True
    if others:
        rival = min(others)
        gaps["margin"].append(diff(best, rival))
        separated = best < rival
    return top, separated


def other_symbols_below_match(theta, A: int, m: int, n0: int) -> bool:
    """C7-retrieval-condition's conclusion, by brute force: on every proper input of every
    length 2..n0, every other-symbol key is strictly below the best matched key."""
    return all(brute_last_position(theta, A, m, n)["separated"] for n in range(2, n0 + 1))


# ---- the statements: the formulas their claim texts print (theory.retrieval_formulas) ----------
# Each is evaluated in theta' = ``fold(theta)`` (the distance from theta to 2 pi Z), as the texts
# now are (issue 30); ``OLD_FORMULAS`` are the texts before issue 30, the same formulas read with
# theta for theta' and without a lower bound: false for theta < 0 (and lambda's at theta = 0).


def _sup_exact(th, A, n, b):
    return F.value(F.SUP_EVEN if A % 2 == 0 else F.SUP_ODD, th, A, n, b)


def _competitor(th, A, n, b):
    return F.value(F.COMPETITOR, th, A, n, b)


def _margin(th, A, n, b):
    return F.value(F.MARGIN, th, A, n, b)


def _margin_product(th, A, n, b):
    return F.value(F.MARGIN_PRODUCT, th, A, n, b)


def _inf_positive(th, A, n, b):
    return F.value(F.INF_POSITIVE, th, A, n, b)


def _inf(th, A, n, b):  # at theta' = 0 a copy of the top ties it: lambda = 1 - cos omega (C8)
    return F.value(F.INF_AT_ZERO, th, A, n, b) if th == Angle() else _inf_positive(th, A, n, b)


def _bound(th, A, n, b):
    return F.value(F.BOUND, th, A, n, b)


def _in_theta_prime(form):
    return lambda th, A, n, b: form(fold(th), A, n, b)


OLD_FORMULAS = {
    "sup-exact": _sup_exact,
    "competitor-corrected": _competitor,
    "margin-exact": _margin,
    "margin-product": _margin_product,
    "inf-corrected": _inf_positive,
}

# name: (reading compared, formula, the range the claim states for it: a ``CONDITIONS`` key).
# "n <= n0 with theta' < omega/(2 n0)" is the same as 2 n theta' < omega (take n0 = n).
STATEMENTS = {
    "sup-exact": ("sup", _in_theta_prime(_sup_exact), F.EXACT_RANGE.plain),
    "competitor-corrected": ("competitor", _in_theta_prime(_competitor), F.EXACT_RANGE.plain),
    "margin-exact": ("margin", _in_theta_prime(_margin), F.EXACT_RANGE.plain),
    "margin-product": ("margin", _in_theta_prime(_margin_product), F.EXACT_RANGE.plain),
    "inf-corrected": ("inf", _in_theta_prime(_inf), F.INF_RANGE.plain),
}

# condition: (k(n), edge closed, theta' = 0 included, stated on theta' (every real theta) or on theta).
# The range is {theta: 0 <= theta' and k(n) theta' < omega (or <=)}, 0 dropped when not included;
# the one on theta (the paper's 0 < theta < omega/(2 n0)) admits only 0 < theta itself.  k(n) and
# the closed edge are read from the printed conditions (theory.retrieval_formulas).
CONDITIONS = {
    **{
        c.plain: (F.coefficient(c), c.relation.rel_op == "<=", True, True)
        for c in (F.EXACT_RANGE, F.INF_RANGE, F.CHAIN_RANGE, F.EQUALITY_FAILS)
    },
    "0 < theta < omega/(2n)": (lambda n: 2 * n, False, False, False),
}


def in_range(theta, A: int, n: int, condition: str) -> bool:
    """The condition's range, decided on exact angles (arb for a mixed angle)."""
    factor, closed, zero, folded = CONDITIONS[condition]
    theta = Angle.of(theta)
    t = fold(theta) if folded else theta
    slack = angle_sign(omega(A) + t * (-factor(n)))
    low = angle_sign(t) > 0 or (zero and t == Angle())
    return n >= 2 and low and (slack > 0 or (closed and slack == 0))


def statement_value(name: str, theta, A: int, n: int, prec: int = 128):
    balls = Interval(prec)
    with balls.working():
        return STATEMENTS[name][1](Angle.of(theta), A, n, balls)


def check_statement(name: str, theta, A: int, m: int, n: int, formula=None) -> dict:
    """Brute force vs the statement's formula (or a ``formula(theta, A, n, balls)`` mutant)
    at one (theta, |ALPH|, m, n): ``agrees`` when the certified balls overlap (a formula
    that differs is certified apart at 128 bits, so it disagrees)."""
    reading, stated, _ = STATEMENTS[name]
    brute = brute_last_position(theta, A, m, n)[reading]
    balls = Interval(128)
    with balls.working():
        claimed = (formula or stated)(Angle.of(theta), A, n, balls)
        agrees = brute is not None and bool(brute.overlaps(claimed))
    return {
        "theta": str(Angle.of(theta)),
        "A": A,
        "m": m,
        "n": n,
        "agrees": agrees,
        "brute": None if brute is None else brute.str(12, radius=False),
        "stated": claimed.str(12, radius=False),
    }


def bound_value(theta, A: int, n: int, prec: int = 128):
    """1 - cos(omega - n theta') (Theorem 3.2's bound, in theta')."""
    balls = Interval(prec)
    with balls.working():
        return _bound(fold(theta), A, n, balls)

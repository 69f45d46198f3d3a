"""C6-retrieval-bounded (issue 30): a purely positional head with BOUNDED logits must err on
Retrieval from some length on.  C6-retrieval's witness escapes Remark 3.1 only with logits
that grow like (n - 1) ln 2; this module bounds them.

Model.  One layer, one head.  At the query position n the head has purely positional logits
l_nj = L(n, j), |l_nj| <= B, so its weights w_j = softmax(l_n)_j depend on positions only and
satisfy w_j / w_k <= e^(2B).  Its output is the argmax over tokens tau of a LINEAR readout of
the head output a_n = sum_j w_j W_V x_j alone: score(tau) = sum_j w_j V[tau, x_j] + c_tau for
any real matrix V and bias c (F(x, a) = a followed by a linear map: C6-retrieval's witness and
Appendix F.2.2's T_Retrieval).  A shared maximum counts as an error.

Theorem.  With |ALPH| >= 3 (letters a, b, c) and |INT| >= 1 (token a1 = (a, 1)), every such
head errs at position n on one of the three proper inputs

    S1 = b1 a1 (cb)^(n-3) ca  -> a1,   S3 = b1 a1 (cb)^(n-3) cb  -> b1,   S4 = b1 a1 (ca)^(n-3) cb  -> b1

whenever W := w_3 + .. + w_(n-1) >= w_n; and |l| <= B gives W >= (n - 3) e^(-2B) w_n, so every
n >= 3 + e^(2B) is such a length.

Proof.  Let E(x) = V[a1, x] - V[b1, x] and m_k the margin of the right answer over the other
one of {a1, b1} on S_k (m1 = s_a1 - s_b1 on S1, m3 = s_b1 - s_a1 on S3 and S4).  The three
inputs share positions 1, 2 and the bias (which does NOT cancel in a margin: m1 holds
c_a1 - c_b1, m3 and m4 hold c_b1 - c_a1; it joins the term the three inputs share), so with
P = w_1 E(b1) + w_2 E(a1) + c_a1 - c_b1:
    m1 = P + W E(cb) + w_n E(ca),   -m3 = P + W E(cb) + w_n E(cb),   -m4 = P + W E(ca) + w_n E(cb),
and   W m1 + (W - w_n) m3 + w_n m4 = 0   for every V (compare the coefficients of P, E(ca),
E(cb)).  If W >= w_n all three coefficients are >= 0 and W > 0, so m1, m3, m4 cannot all be
> 0: the head errs on one input.  (A Farkas certificate; ``certificate`` checks it on the
model itself, in exact rationals, for any V.)

What is NOT claimed.  (i) n* = ceil(3 + e^(2B)) bounds the first forced error from above;
the exact first length is open: with self-logit B and -B elsewhere, a float LP finds (and
exact rationals then certify) readouts exact on every proper input of length <= 4 at
e^(2B) = 5, and no LP solution exists for n = 4 at e^(2B) = 2.01 < n - 2 - so the truth lies
strictly inside [what the LP finds, n*], and other logit patterns may do better.  (ii) With
a residual, F(x, a) = x + a (any query-dependent linear readout), no n exists: uniform
attention (B = 0) and score(tau) = K [left(tau) = the query's right letter] + presence(tau),
K > 1, are exact at every n, with decoding gap >= e^(-2B)/n (``residual_head_errors``).
(iii) |ALPH| = 2 is open here: the proof needs a third letter for the pointers.
(iv) A nonlinear readout of a_n alone can separate S1, S3, S4 (their a_n differ).
"""

from __future__ import annotations

import math
from fractions import Fraction

from .formula import Formula
from .functions import is_integer_token, retrieval, split_pair
from .numbers import Interval

__all__ = [
    "witness_inputs",
    "extremal_weights",
    "head_scores",
    "certificate",
    "THRESHOLD",
    "threshold",
    "forced_at",
    "residual_head_errors",
    "exact_readout",
]


def witness_inputs(n: int) -> list:
    """S1, S3, S4 of the module docstring (n >= 4), with their Retrieval answers at n."""
    if n < 4:
        raise ValueError(f"the witness needs n >= 4 (one pointer), got n = {n}")
    bodies = (["cb"] * (n - 3) + ["ca"], ["cb"] * (n - 3) + ["cb"], ["ca"] * (n - 3) + ["cb"])
    return [(tokens, retrieval(tokens)[-1]) for tokens in (["b1", "a1"] + body for body in bodies)]


def extremal_weights(n: int, ratio) -> list:
    """Softmax weights at position n with self-logit B and -B elsewhere, ratio = e^(2B) (exact
    when ``ratio`` is rational): the largest w_n / W any |l| <= B allows."""
    total = ratio + (n - 1)
    return [1 / total] * (n - 1) + [ratio / total]


def head_scores(weights, V: dict, tokens, c: dict | None = None) -> dict:
    """score(tau) = sum_j w_j V[tau][x_j] + c[tau] over the tokens tau that V reads out (a linear
    readout of a_n with bias c; the bias joins the term P the three witnesses share)."""
    c = c or {}
    return {
        tau: sum(w * row.get(x, 0) for w, x in zip(weights, tokens)) + c.get(tau, 0) for tau, row in V.items()
    }


def certificate(weights, V: dict, c: dict | None = None) -> dict:
    """The three margins of the witness on the head (weights, V, bias c), and the certificate's
    value W m1 + (W - w_n) m3 + w_n m4 (identically 0) with its coefficients."""
    n = len(weights)
    margins = []
    for tokens, answer in witness_inputs(n):
        s = head_scores(weights, V, tokens, c)
        other = "b1" if answer == "a1" else "a1"
        margins.append(s[answer] - s[other])
    W, w_n = sum(weights[2 : n - 1]), weights[-1]
    coefficients = (W, W - w_n, w_n)
    return {
        "margins": margins,
        "coefficients": coefficients,
        "combination": sum(c * m for c, m in zip(coefficients, margins)),
        "forces_error": all(c >= 0 for c in coefficients) and any(c > 0 for c in coefficients),
    }


# The first length the theorem forces, as the claim prints it: every n >= THRESHOLD errs.  The
# functions below evaluate this object, so the printed threshold is the one computed (issue 42).
THRESHOLD = Formula(r"3 + e^{2B}")


def threshold(B, prec: int = 128) -> int:
    """n* = the least integer n >= THRESHOLD(B), certified with arb (B a Fraction or int >= 0)."""
    B = Fraction(B)
    if B < 0:
        raise ValueError(f"B must be >= 0, got {B}")
    while prec <= 1 << 14:
        balls = Interval(prec)
        with balls.working():
            x = THRESHOLD.evaluate(B=balls.convert(B))  # e^(2B) is an integer only at B = 0 (exact there)
            k = math.ceil(float(x.mid()))
            for n in (k - 1, k, k + 1):
                if bool(x <= n) and bool(x > n - 1):
                    return n
        prec *= 4
    raise ArithmeticError(f"threshold undecided for B = {B}")


def forced_at(B, n: int, prec: int = 128) -> bool | None:
    """Whether n >= THRESHOLD(B), i.e. (n - 3) e^(-2B) >= 1, the proof's condition W >= w_n for
    EVERY head with |l| <= B at length n, is certified (True), refuted (False) or undecided (None)."""
    balls = Interval(prec)
    with balls.working():
        slack = n - THRESHOLD.evaluate(B=balls.convert(Fraction(B)))
        return True if bool(slack >= 0) else False if bool(slack < 0) else None


def residual_head_errors(letters: str, m: int, n_top: int, bonus=Fraction(2)) -> dict:
    """Issue 30 (ii): uniform attention plus a residual readout K [left(tau) = right(query)]
    (an ALPH x INT query: K [tau = query]) on every proper input of every length <= n_top,
    exactly; returns the errors and the least decoding gap (>= 1/n)."""
    from .brute_retrieval import proper_inputs

    errors, least = [], None
    for n in range(1, n_top + 1):
        for tokens in proper_inputs(len(letters), m, n):
            right = split_pair(tokens[-1])[1]
            pointer = not is_integer_token(right)  # ALPH x ALPH: boost its right letter; ALPH x INT: itself
            vocab = {x + y for x in letters for y in list(letters) + [str(i) for i in range(1, m + 1)]}
            score = {
                tau: Fraction(tokens.count(tau), n)
                + (bonus if (split_pair(tau)[0] == right if pointer else tau == tokens[-1]) else 0)
                for tau in vocab
            }
            order = sorted(score.values(), reverse=True)
            best = [tau for tau, v in score.items() if v == order[0]]
            gap = order[0] - order[1]
            least = gap if least is None else min(least, gap)
            if best != [retrieval(list(tokens))[-1]]:
                errors.append(tokens)
    return {"errors": errors, "least_gap": least}


def exact_readout(A: int, n: int, ratio: Fraction) -> dict:
    """A readout V exact on every proper input (|ALPH| = A, INT = {1}) of every length <= n, at
    weights ``extremal_weights(i, ratio)`` (self-logit B, -B elsewhere, ratio = e^(2B)): found
    by a float LP (margins >= 1), then rounded to rationals and re-checked EXACTLY on every
    input (``certified``).  The weights depend on the multiset of earlier tokens only, so
    inputs are grouped by (length, query, multiset)."""
    from collections import Counter

    import numpy as np
    from scipy.optimize import linprog

    from .brute_retrieval import proper_inputs

    groups = {}
    for i in range(1, n + 1):
        for tokens in proper_inputs(A, 1, i):
            groups[(i, tokens[-1], tuple(sorted(Counter(tokens[:-1]).items())))] = retrieval(list(tokens))[-1]
    vocab = sorted(
        {tok for (_, q, rest) in groups for tok in [q] + [t for t, _ in rest]} | set(groups.values())
    )
    index, size = {t: k for k, t in enumerate(vocab)}, len(vocab)

    def presence(i, q, rest):  # a_i over the vocabulary, exact
        total = ratio + (i - 1)
        a = [Fraction(0)] * size
        a[index[q]] += ratio / total
        for tok, count in rest:
            a[index[tok]] += Fraction(count) / total
        return a

    rows = []
    for (i, q, rest), answer in groups.items():
        a = np.array([float(x) for x in presence(i, q, rest)])
        for tau in vocab:
            if tau != answer:
                row = np.zeros(size * size)
                row[index[answer] * size : (index[answer] + 1) * size] -= a
                row[index[tau] * size : (index[tau] + 1) * size] += a
                rows.append(row)
    res = linprog(
        np.zeros(size * size),
        A_ub=np.array(rows),
        b_ub=-np.ones(len(rows)),
        bounds=(None, None),
        method="highs",
    )
    out = {
        "A": A,
        "n": n,
        "ratio": str(ratio),
        "inputs_grouped": len(groups),
        "found": res.status == 0,
        "certified": False,
    }
    if res.status == 0:
        V = [
            [Fraction(float(x)).limit_denominator(10**6) for x in res.x[r * size : (r + 1) * size]]
            for r in range(size)
        ]
        # the exact scores s[r] = sum_k V[r][k] a[k] summed in integers: row r of V over its
        # common denominator, a over its own, one Fraction per score (the same Fractions as
        # summing Fractions term by term, much faster; issue 41)
        denominators = [math.lcm(*(v.denominator for v in row)) for row in V]
        scaled = [[v.numerator * (d // v.denominator) for v in row] for row, d in zip(V, denominators)]
        least = None
        for (i, q, rest), answer in groups.items():
            a = presence(i, q, rest)
            da = math.lcm(*(x.denominator for x in a))
            ints = [x.numerator * (da // x.denominator) for x in a]
            s = [
                Fraction(sum(v * x for v, x in zip(scaled[r], ints)), denominators[r] * da)
                for r in range(size)
            ]
            gap = s[index[answer]] - max(s[r] for r in range(size) if r != index[answer])
            least = gap if least is None else min(least, gap)
        out.update(certified=least > 0, least_margin=str(least))
    return out

"""Remark 3.1 (which head types cannot compute Index / Retrieval) and the predecessor's
exclusion principle (C13), as objects one can check.

One-layer, one-head model: the output at the query position i is F(x_i, a_i) with
a_i = sum_{j<=i} w_ij W_V x_j.  A *symbolic* head has logits that depend on contents only,
l_ij = L(x_i, x_j); a *positional* head has logits that depend on positions only,
l_ij = L(i, j).  No positional embedding enters elsewhere.

* Symbolic heads are blind to order: permuting x_1..x_{i-1} permutes the pairs
  (w_ij, W_V x_j) together, so a_i, hence the output, is unchanged (the predecessor's
  Lemma 1).  Swapping two earlier letters that change the Index answer forces an error.
* Positional softmax heads are NOT blind enough: every weight w_ij is positive, so a_i
  still records which tokens are present.  ``PositionalRetrieval`` computes Retrieval
  exactly with purely positional weights (self-weight 9/10, the rest in proportion to 2^j):

      W_V e_tau = e_tau + B [tau in ALPH x ALPH] 1{tokens with left letter = right(tau)},
      F(x, a) = a, output = argmax_tau a_tau, B = 4.

  Query (X, Y): every token with left letter Y scores at least B w_ii = 3.6 from the
  query's own value, the same for all of them, plus its presence weight; by properness
  only the answer is present, so it wins among them; any other token scores at most
  1 (its presence) + B (1 - w_ii) = 1.4.  Query (X, k) in ALPH x INT (answer itself):
  its own presence is >= 0.9; tokens with left letter X share the B-term and have presence
  <= 0.1; the rest score <= 0.1 + B 0.1 = 0.5.  So the argmax is always the answer.
* What does hold: with *hard* attention a positional head reads only the tokens at a set
  J(i) fixed by positions; if J(i) misses an earlier position p, two proper inputs that
  differ only at p (the answer (a,1) or (a,2) sits there) get the same output.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .functions import is_integer_token, retrieval, split_pair

__all__ = [
    "symbolic_head_output",
    "index_swap_pair",
    "PositionalRetrieval",
    "proper_inputs",
    "hard_positional_pair",
    "logit_matrix",
    "exclusion_terms",
    "additive_matrix",
]


# ---- symbolic heads and Index -----------------------------------------------------------


def symbolic_head_output(x, W_Q, W_K, W_V, theta: float | None = None):
    """Output a_n (plus the residual x_n) of a one-layer softmax head at the last position.
    ``theta`` None: no RoPE (a symbolic head); a number: RoPE on the first plane (control)."""
    q, k, v = x[-1] @ W_Q.T, x @ W_K.T, x @ W_V.T
    if theta is not None:
        t = (len(x) - 1 - np.arange(len(x))) * theta  # offset of every key from the query
        c, s = np.cos(t), np.sin(t)
        k = k.copy()
        k[:, 0], k[:, 1] = c * k[:, 0] + s * k[:, 1], -s * k[:, 0] + c * k[:, 1]
    logits = k @ q
    w = np.exp(logits - logits.max())
    return x[-1] + (w / w.sum()) @ v


def index_swap_pair() -> tuple[list, list]:
    """Two inputs that differ by swapping two earlier letters and have different Index
    answers at the last position (``a b c 2`` -> b, ``b a c 2`` -> a)."""
    return ["a", "b", "c", "2"], ["b", "a", "c", "2"]


# ---- positional heads and Retrieval -------------------------------------------------------


class PositionalRetrieval:
    """The purely positional one-layer model of the module docstring, in exact rationals."""

    def __init__(self, letters, integers, bonus: Fraction = Fraction(4), self_weight=Fraction(9, 10)):
        self.letters, self.integers = list(letters), [str(i) for i in integers]
        self.vocab = [(a, b) for a in self.letters for b in self.letters + self.integers]
        self.index = {tok: c for c, tok in enumerate(self.vocab)}
        self.bonus, self.self_weight = Fraction(bonus), Fraction(self_weight)

    def weights(self, i: int) -> list[Fraction]:
        """w_ij for j = 1..i: a function of (i, j) only (logits log w_ij: purely positional).
        The earlier keys share 1 - w_ii in proportion to 2^j (recency), so earlier positions
        weigh very differently and a swap is not followed: positional, not symbolic."""
        if i == 1:
            return [Fraction(1)]
        rest = (1 - self.self_weight) / (2 ** (i - 1) - 1)
        return [rest * 2 ** (j - 1) for j in range(1, i)] + [self.self_weight]

    def value(self, token) -> list[Fraction]:
        vec = [Fraction(0)] * len(self.vocab)
        vec[self.index[token]] += 1
        left, right = token
        if not is_integer_token(right):  # a pointer: boost every token whose left letter it names
            for c, (l2, _) in enumerate(self.vocab):
                if l2 == right:
                    vec[c] += self.bonus
        return vec

    def output(self, tokens, i: int):
        """(argmax token or None on a shared maximum, score gap) at 1-based position i."""
        pairs = [split_pair(t) for t in tokens[:i]]
        scores = [Fraction(0)] * len(self.vocab)
        for w, tok in zip(self.weights(i), pairs):
            for c, x in enumerate(self.value(tok)):
                scores[c] += w * x
        order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        gap = scores[order[0]] - scores[order[1]]
        return (self.vocab[order[0]] if gap > 0 else None), gap


def proper_inputs(letters, integers, n: int):
    """Every proper letter-task input of length n over ALPH = letters, INT = integers."""
    tokens = [a + str(b) for a in letters for b in list(letters) + list(integers)]
    for seq in itertools.product(tokens, repeat=n):
        try:
            yield list(seq), retrieval(list(seq))
        except ValueError:
            continue


def hard_positional_pair(n: int, attended: set[int]):
    """Two proper inputs of length n (tokens 'a1', 'b1', ...; query 'ca') that agree at every
    position of ``attended`` and at n but have different Retrieval answers at n, or None when
    ``attended`` contains every earlier position (the argument then does not apply)."""
    missing = [p for p in range(1, n) if p not in attended]
    if not missing:
        return None
    p = missing[0]
    base = ["b1"] * (n - 1) + ["ca"]
    first, second = list(base), list(base)
    first[p - 1], second[p - 1] = "a1", "a2"
    return first, second


# ---- the exclusion principle (C13) ----------------------------------------------------------


def logit_matrix(logit, contents, n: int):
    """M[k, j] = L(x_n, n, x_k, j) for k, j in 1..n-1 (content of key k placed at position j);
    ``logit(query_content, i, key_content, j)`` is any logit function."""
    N = n - 1
    return np.array(
        [[logit(contents[-1], n, contents[k], j + 1) for j in range(N)] for k in range(N)], dtype=object
    )


def exclusion_terms(M) -> dict:
    """Var(lambda) (population variance over j of lambda_j = M[j, j]) and the norms of
    delta_pos(pi, j) = M[pi(j), j] - M[j, j] and delta_sym(pi, j) = M[j, pi(j)] - M[j, j]
    over every pi in S_N and j, by enumeration; exact for Fraction entries."""
    M = np.asarray(M, dtype=object)
    N = M.shape[0]
    lam = [M[j, j] for j in range(N)]
    mean = sum(lam) / N
    var = sum((x - mean) ** 2 for x in lam) / N
    pos = sym = 0
    for pi in itertools.permutations(range(N)):
        for j in range(N):
            pos += (M[pi[j], j] - M[j, j]) ** 2
            sym += (M[j, pi[j]] - M[j, j]) ** 2
    rhs = (pos + sym) / (math.factorial(N) * N)
    return {"N": N, "var": var, "pos": pos, "sym": sym, "rhs": rhs, "ratio": (var / rhs) if rhs else None}


def additive_matrix(diagonal) -> np.ndarray:
    """M[k, j] = (d_k + d_j) / 2: a head whose logit is s(content) + p(position) with s = p;
    it attains Var(lambda) = RHS, so the constant 1 cannot be lowered."""
    d = list(diagonal)
    return np.array([[(a + b) / 2 for b in d] for a in d], dtype=object)

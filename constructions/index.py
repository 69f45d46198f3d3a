"""T_Index: the one-layer, one-head, one-angle RoPE transformer of Appendix F.2.1.

Vocabulary Sigma = INT + ALPH with INT = [m]: coordinate c of the one-hot embedding is the
c-th token (integers 1..m first, as the paper's E_Sigma^-1(s) = s, then the letters), and a
last coordinate holds the constant 1, so d = |Sigma| + 1.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import gcd

import numpy as np
import sympy

from theory.functions import index, is_integer_token
from theory.numbers import FLOAT64, SYMBOLIC, NumberSystem
from theory.phases import Angle
from theory.rope import rope_logit

from .attention import extreme
from .common import Construction, Weights
from .exact import read_angle

__all__ = ["IndexConstruction", "check_alphabet", "NUMBER_ALPH", "number_task"]

# The number task (Appendix B.1): ALPH = a..z then the 94 two-letter tokens aa..dp, INT = 1..16.
_LOWER = "abcdefghijklmnopqrstuvwxyz"
NUMBER_ALPH = list(_LOWER) + [x + y for x in _LOWER[:4] for y in _LOWER][:94]


def number_task(n0: int, theta=None) -> IndexConstruction:
    """T_Index on the number-task vocabulary; default theta = 2 pi / n0, the angle with the
    largest smallest logit gap: the n0 points t theta (t < n0) are then evenly spread, and by
    pigeonhole no angle keeps all of them further than 2 pi / n0 apart."""
    if theta is None:
        theta = Angle(pi_multiple=Fraction(2, n0))
    return IndexConstruction(NUMBER_ALPH, 16, theta, n0)


def check_alphabet(alphabet, what: str = "ALPH") -> list:
    """A list of at least two distinct, hashable, non-integer symbols."""
    if isinstance(alphabet, str):
        alphabet = list(alphabet)
    alphabet = list(alphabet)
    if len(alphabet) < 2:
        raise ValueError(
            f"{what} has {len(alphabet)} symbol(s) ({alphabet!r}); the valid range is |{what}| >= 2"
        )
    if len(set(alphabet)) != len(alphabet):
        raise ValueError(f"{what} repeats a symbol: {alphabet!r}")
    integers = [s for s in alphabet if is_integer_token(s)]
    if integers:
        raise ValueError(f"{what} must hold non-integer symbols; {integers!r} read as integers")
    return alphabet


def check_count(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} = {value!r} is outside the valid range: an integer >= {low}")
    return int(value)


class IndexConstruction(Construction):
    """T_Index for any ALPH (>= 2 symbols), INT = [m] (m >= 1), angle 0 < theta <= pi, n0 >= 2."""

    reference = staticmethod(index)

    def __init__(self, alphabet, m: int, theta, n0: int):
        self.alphabet = check_alphabet(alphabet)
        self.m = check_count(m, "m (INT = [m])", 1)
        self.n0 = check_count(n0, "n0", 2)
        self.theta = read_angle(theta, "theta")
        self.vocab = list(range(1, self.m + 1)) + self.alphabet
        # s(token): how many steps back the query looks (0 for a letter: itself)
        self.shift = np.array(list(range(1, self.m + 1)) + [0] * len(self.alphabet))
        self.letter = np.array([False] * self.m + [True] * len(self.alphabet))
        super().__init__()

    def canonical(self, token):
        return int(token) if is_integer_token(token) else token

    # Why T_Index is right (tests/test_constructions.py and claim C4-index check this on every
    # input).  Query at position p holding sigma, key at j <= p, offset t = p - j:
    #   logit = (W_K E(key))^T R_t W_Q E(sigma) = v^T rho(t theta) rho(-s theta) v = cos((t - s) theta)
    # with s = sigma for an integer, 0 for a letter.  It is 1 at t = s (the target p - s) and < 1
    # at every other offset UNLESS (t - s) theta is a multiple of 2 pi.  With a unique top the
    # attention output is W_V E(target) (2 e_target for a letter, 0 for an integer), and the
    # scores x + a (the constant coordinate is not read) are: letter query 3 e_sigma (gap 3);
    # integer query with letter target A: e_s + 2 e_A (A wins by 1); integer query with integer
    # target: e_s (s wins by 1).  So the decoding gap is delta = 1.  A tie at the top
    # (theta = 2 pi k / P, offsets s and s +- P) averages the target with a competitor:
    # e_s + e_A + e_B, or e_s + e_A, a shared top score (see ``max_tie_difference``).
    decoding_gap = 1

    def build_weights(self, numbers: NumberSystem, symbolic: bool) -> Weights:
        theta, _ = self.angle_values(numbers, symbolic)
        size, d = len(self.vocab), len(self.vocab) + 1
        with numbers.working():
            embedding = numbers.array(np.hstack([np.eye(size, dtype=int), np.ones((size, 1), dtype=int)]))
            query = numbers.array(np.zeros((2, d), dtype=int))
            key = numbers.array(np.zeros((2, d), dtype=int))
            for c, s in enumerate(self.shift.tolist()):
                query[:, c] = self.rotated_v(-s * theta, numbers)  # rho(theta)^(-s) v
                key[:, c] = self.rotated_v(0, numbers)  # v: every key aligned
            value = numbers.array(np.diag(np.where(np.append(self.letter, False), 2, 0)))  # alpha = 2
        return Weights(embedding, query, key, value)

    def symbolic_identity(self):
        """(matrix route, paper's closed form) for a symbolic integer query s and offset t."""
        s, t = sympy.symbols("s t", integer=True)
        theta, _ = self.angle_values(SYMBOLIC, symbolic=True)
        query, key = self.rotated_v(-s * theta, SYMBOLIC), self.rotated_v(0, SYMBOLIC)
        return rope_logit(query, t, key, 0, SYMBOLIC.array([theta]), SYMBOLIC), sympy.cos((t - s) * theta)

    def phase_shift(self, query_ids, key_ids):
        c_theta = -self.shift[np.asarray(query_ids)] + 0 * np.asarray(key_ids)
        return c_theta, np.zeros_like(c_theta)

    def residual(self, x, a):
        return x + a  # F(x, a) = x + a

    # ---- when is it exact: the condition the proof needs ------------------------------------
    def tie_period(self):
        """Least P >= 1 with P theta in 2 pi Z, or None (theta rational: never)."""
        if self.theta.rational:
            return None
        c = self.theta.pi_multiple  # theta = (p/q) pi; P p / (2q) integer  <=>  2q / gcd(p, 2q) | P
        return 2 * c.denominator // gcd(c.numerator, 2 * c.denominator)

    def max_tie_difference(self) -> int:
        """D_max: the largest D such that a top tie at offset difference D breaks some valid input.

        Integer query s at position p: a competitor at offset s + D needs p >= s + D >= 1 + D,
        so D <= n0 - 2; a competitor at offset s - D >= 0 needs D <= s <= min(m, n0 - 1).  Either
        breaks decoding (scores e_s + e_A + e_B, or e_s + e_A when the competitor is the query).
        Letter queries survive ties of up to 3 positions (score 1 + 2/k against 2 (k - 1)/k); 4
        tied positions need 3 D <= n0 - 1, inside the integer case already.
        """
        return max(min(self.m, self.n0 - 1), self.n0 - 2)

    def is_exact(self) -> bool:
        period = self.tie_period()
        return period is None or period > self.max_tie_difference()

    def counterexample(self):
        """A valid input of length <= n0 on which average-hard T_Index errs, or None."""
        if self.is_exact():
            return None
        period, (a, b) = self.tie_period(), self.alphabet[:2]
        if period <= self.n0 - 2:  # target A at offset 1, competitor B at offset 1 + P
            return [b] + [a] * period + [1]
        return [a] + [b] * (period - 1) + [period]  # target A at offset P ties with the query itself

    # ---- inputs --------------------------------------------------------------------------------
    def _choices(self, position: int) -> list:
        letters = [self.token_id[x] for x in self.alphabet]
        return letters + [self.token_id[i] for i in range(1, min(self.m, position) + 1)]

    def all_valid_ids(self, n: int) -> np.ndarray:
        """Every valid input of length n (integers point inside the sequence), as ids.  Their
        prefixes are all valid inputs of length <= n, so checking every position covers them."""
        return np.array(list(itertools.product(*(self._choices(p) for p in range(n)))), dtype=np.int64)

    def sample_valid_ids(self, rng: np.random.Generator, n: int, count: int = 1) -> np.ndarray:
        letters = rng.choice([self.token_id[x] for x in self.alphabet], size=(count, n))
        reach = np.minimum(self.m, np.arange(n))
        offsets = 1 + np.floor(rng.random((count, n)) * np.maximum(reach, 1)).astype(np.int64)
        use_int = (rng.random((count, n)) < 0.5) & (reach > 0)
        return np.where(use_int, offsets - 1, letters)  # integer i has id i - 1

    def adversarial_ids(self, n: int) -> np.ndarray:
        """Integer query 1, target A right before it, every other position B: the most weight
        softmax can move to a wrong letter."""
        a, b = self.alphabet[:2]
        return self.ids([b] * (n - 2) + [a, 1])

    # ---- logit gaps, for Lemma F.1 (constructions.temperature) -----------------------------------
    def logit_gaps(self, numbers: NumberSystem = FLOAT64) -> dict:
        """Smallest logit gaps over all valid inputs of length <= n0 (every query position).

        Every query's top logit is 1 and its other logits are cos(D theta) for offset
        differences D, |D| <= n0 - 1, all of which occur (a letter query at position n0 - 1
        sees D = 1 .. n0 - 1).  ``value_aware``: 1 - max cos(D theta) (a competitor may hold
        any token); ``lemma`` (Lemma F.1's lambda): the same over D with cos(D theta) < 1.
        """
        theta, _ = self.angle_values(numbers)
        period = self.tie_period()
        cosines, strict = [], []
        with numbers.working():
            one = numbers.convert(1)
            for d in range(1, self.n0):
                if period is not None and d % period == 0:
                    cosines.append(one)  # an exact tie: d theta is a multiple of 2 pi
                    continue
                cosines.append(numbers.cos(d * theta))
                strict.append(cosines[-1])
            value_aware = one - extreme(cosines, numbers)
            lemma = one - extreme(strict, numbers) if strict else None
        return {"value_aware": value_aware, "lemma": lemma}

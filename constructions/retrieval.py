"""T_Retrieval: the one-layer, one-head, one-angle RoPE transformer of Appendix F.2.2.

Tokens are pairs (left, right), left in ALPH, right in ALPH + INT.  phi numbers ALPH 1..|ALPH|
and INT as |ALPH| + i; coordinate (phi(left) - 1) |ALPH + INT| + phi(right) - 1 of the one-hot
embedding is the token (the paper's E_Sigma^-1), so d = |ALPH| (|ALPH| + m), no constant.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from theory.discrepancy_retrieval import omega_of
from theory.functions import is_integer_token, retrieval, split_pair
from theory.numbers import FLOAT64, SYMBOLIC, Interval, NumberSystem
from theory.rope import rope_logit

from .attention import extreme
from .common import Construction, Weights
from .exact import certified_cosine_ranks, read_angle
from .index import check_alphabet, check_count

__all__ = ["RetrievalConstruction", "LETTER_ALPH", "letter_task"]

LETTER_ALPH = list("abcdefgh")  # the letter task (Appendix B.2): ALPH a..h, INT 1..8


def letter_task(n0: int, theta=None) -> RetrievalConstruction:
    """T_Retrieval on the letter-task vocabulary; default theta = omega / (4 n0), half the
    paper's bound omega / (2 n0), which leaves matches and non-matches equally far apart."""
    if theta is None:
        theta = omega_of(len(LETTER_ALPH)) * Fraction(1, 4 * n0)
    return RetrievalConstruction(LETTER_ALPH, 8, theta, n0)


class RetrievalConstruction(Construction):
    """T_Retrieval for any ALPH (>= 2 symbols), INT = [m], RoPE angle 0 < theta <= pi, n0 >= 2,
    and symbol angle omega (default 2 pi / |ALPH|, the paper's choice)."""

    reference = staticmethod(retrieval)

    def __init__(self, alphabet, m: int, theta, n0: int, omega=None):
        self.alphabet = check_alphabet(alphabet)
        self.m = check_count(m, "m (INT = [m])", 1)
        self.n0 = check_count(n0, "n0", 2)
        self.theta = read_angle(theta, "theta")
        size = len(self.alphabet)
        self.omega = omega_of(size) if omega is None else read_angle(omega, "omega")
        self.phi = {x: k + 1 for k, x in enumerate(self.alphabet)}
        rights = self.alphabet + list(range(1, self.m + 1))
        self.vocab = [(left, right) for left in self.alphabet for right in rights]
        # The code a token rotates by: the key by phi(left); the query by phi(right) for a
        # letter-letter token, else phi(left).  Both are letters, so phi(INT) never enters a logit.
        self.key_code = np.array([self.phi[left] for left, _ in self.vocab])
        self.query_code = np.array(
            [self.phi[left if isinstance(right, int) else right] for left, right in self.vocab]
        )
        super().__init__()

    def canonical(self, token):
        left, right = split_pair(token)
        return left, int(right) if is_integer_token(right) else right

    def paper_condition(self) -> bool:
        """0 < theta < omega / (2 n0), decided exactly (both angles are exact)."""
        a, b = self.theta, self.omega
        if not a.rational and not b.rational:  # both multiples of pi
            return a.pi_multiple < b.pi_multiple / (2 * self.n0)
        if not a.pi_multiple and not b.pi_multiple:  # both rational
            return a.rational < b.rational / (2 * self.n0)
        balls = Interval(256)
        with balls.working():
            return bool(a.value(balls) * 2 * self.n0 < b.value(balls))

    # Why T_Retrieval is right (checked on every input by the tests and claim C4-retrieval).
    # Query at position p with "query letter" Q (right letter of a letter-letter token, else its
    # left letter), key at offset t with left letter K:
    #   logit = v^T rho(phi(K) omega) rho(t theta) rho(-phi(Q) omega) v = cos((phi(K) - phi(Q)) omega + t theta).
    # With omega = 2 pi / |ALPH| the first term is r omega mod 2 pi, r = phi(K) - phi(Q) mod |ALPH|,
    # r = 0 exactly for matching keys.  If (n0 - 1) theta < omega / 2 (implied by theta < omega/(2 n0)):
    # matching keys have angle t theta in [0, omega/2), logit > cos(omega/2); non-matching keys have
    # angle r omega + t theta, at distance > omega/2 from 2 pi Z, logit < cos(omega/2).  Among matches
    # cos(t theta) falls with t, so the latest match is the unique top; on a proper input every match
    # is the same token, so a = W_V E(match) = E(match), and F(x, a) = a decodes it with gap 1.
    # For a letter-int query the latest match is the query itself (t = 0): identity, gap 1.  Earlier
    # tokens with its left letter may be other tokens (a1 ... a2, which properness allows): they lose
    # only by recency, logit cos(t theta) < 1, harmless here but the reason softmax needs a large
    # beta (constructions.temperature).
    decoding_gap = 1

    def build_weights(self, numbers: NumberSystem, symbolic: bool) -> Weights:
        _, omega = self.angle_values(numbers, symbolic)
        size = len(self.vocab)
        with numbers.working():
            eye = numbers.array(np.eye(size, dtype=int))
            query = numbers.array(np.zeros((2, size), dtype=int))
            key = numbers.array(np.zeros((2, size), dtype=int))
            for c in range(size):
                query[:, c] = self.rotated_v(-int(self.query_code[c]) * omega, numbers)  # rho(omega)^-phi v
                key[:, c] = self.rotated_v(-int(self.key_code[c]) * omega, numbers)
        return Weights(eye, query, key, eye.copy())  # W_V = I

    def rival_codes(self) -> list:
        """The r = phi(key left) - phi(query letter) != 0 that can occur, up to 2 pi: with the
        paper's omega = 2 pi/|ALPH|, r and r + |ALPH| are the same angle, so 1 .. |ALPH| - 1."""
        size = len(self.alphabet)
        if self.omega == omega_of(size):
            return list(range(1, size))
        return [r for r in range(1 - size, size) if r]

    def _ranks(self):
        """Certified ranks of cos(t theta) (matches, t < n0) and cos(r omega + t theta) (rivals,
        n0 x len(rival_codes)): exact ties and certified order, computed once."""
        if not hasattr(self, "_rank_cache"):
            n0, rivals = self.n0, self.rival_codes()
            pairs = [(t, 0) for t in range(n0)] + [(t, r) for t in range(n0) for r in rivals]
            ranks = np.array(certified_cosine_ranks(pairs, self.theta, self.omega))
            self._rank_cache = ranks[:n0], ranks[n0:].reshape(n0, len(rivals))
        return self._rank_cache

    def is_exact(self) -> bool:
        """Exact on every proper input of length <= n0 iff (see ``logit_gaps``) every lone
        match at offset t_m out-scores every non-matching key at t != t_m, and a letter-int
        query out-scores earlier tokens of its left letter.  Decided on certified ranks of the
        cosines (exact ties, certified order), not on rounded values."""
        n0 = self.n0
        match, rivals = self._ranks()
        rival = rivals.max(axis=1)
        if n0 > 1 and match[1:].max() >= match[0]:
            return False
        big = max(match.max(), rivals.max()) + 1  # min over t_m != t of match[t_m]: prefix, suffix minima
        before = np.minimum.accumulate(np.concatenate([[big], match[:-1]]))
        after = np.minimum.accumulate(np.concatenate([match[1:], [big]])[::-1])[::-1]
        return bool(np.all(np.minimum(before, after) > rival))

    def symbolic_identity(self):
        """(matrix route, paper's closed form) for symbolic codes phi(query letter) = a,
        phi(key left letter) = b and offset t."""
        a, b, t = sympy.symbols("a b t", integer=True)
        theta, omega = self.angle_values(SYMBOLIC, symbolic=True)
        query, key = self.rotated_v(-a * omega, SYMBOLIC), self.rotated_v(-b * omega, SYMBOLIC)
        matrix = rope_logit(query, t, key, 0, SYMBOLIC.array([theta]), SYMBOLIC)
        return matrix, sympy.cos((b - a) * omega + t * theta)

    def phase_shift(self, query_ids, key_ids):
        c_omega = self.key_code[np.asarray(key_ids)] - self.query_code[np.asarray(query_ids)]
        return np.zeros_like(c_omega), c_omega

    def residual(self, x, a):
        return a  # F(x, a) = a: attention-only

    # ---- inputs --------------------------------------------------------------------------------
    def _extend(self, variants: dict, token) -> dict | None:
        """Variants (distinct tokens per left letter) after appending ``token``, or None when the
        prefix would stop being proper (Definition F.2: every letter-letter token's matches
        up to itself exist and are one token)."""
        left, right = token
        merged = dict(variants)
        merged[left] = variants.get(left, frozenset()) | {token}
        if not isinstance(right, int) and len(merged.get(right, ())) != 1:
            return None
        return merged

    def all_proper_ids(self, n: int) -> np.ndarray:
        """Every proper input of length n, as ids.  Appending letter-int tokens keeps an input
        proper, so every proper input of length <= n is a prefix of one of these."""
        out, stack = [], [((), {})]
        while stack:
            prefix, variants = stack.pop()
            if len(prefix) == n:
                out.append(prefix)
                continue
            for c, token in enumerate(self.vocab):
                merged = self._extend(variants, token)
                if merged is not None:
                    stack.append((prefix + (c,), merged))
        return np.array(sorted(out), dtype=np.int64)

    def sample_proper_ids(self, rng: np.random.Generator, n: int, pointer_rate: float = 0.5) -> np.ndarray:
        """A random proper input: letter-letter tokens (with probability ``pointer_rate``) point
        at letters whose tokens so far are one token; other positions get letter-int tokens."""
        out, variants = [], {}
        ints = [c for c, (_, right) in enumerate(self.vocab) if isinstance(right, int)]
        while len(out) < n:
            c = int(rng.choice(ints)) if rng.random() >= pointer_rate else int(rng.integers(len(self.vocab)))
            merged = self._extend(variants, self.vocab[c])
            if merged is not None:
                out.append(c)
                variants = merged
        return np.array(out, dtype=np.int64)

    def adversarial_ids(self, n: int) -> np.ndarray:
        """Query (B, A) at the end, the only match A1 at position 0, every other key B1 with B
        the letter just before A in phi order (r = |ALPH| - 1, the nearest non-matching angle)."""
        a, b = self.alphabet[0], self.alphabet[-1]
        return self.ids([(a, 1)] + [(b, 1)] * (n - 2) + [(b, a)])

    # ---- logit gaps, for Lemma F.1 (constructions.temperature) -----------------------------------
    def logit_gaps(self, numbers: NumberSystem = FLOAT64) -> dict:
        """Smallest logit gaps over all proper inputs of length <= n0 (every query position).

        A query's top is its latest match (same left letter) at offset t_m.  ``pointer``: the
        gap to non-matching keys; any offset t can hold one with any r = 1 .. |ALPH| - 1
        (fillers are letter-int tokens, which keep the input proper), so it is
        min over t, r of [min_{t_m != t} cos(t_m theta) - cos(r omega + t theta)], and the
        construction is exact iff it is > 0, whatever theta is.  ``value_aware`` adds the keys
        that match but hold another token: a letter-int query (L, i) matches itself (t_m = 0)
        and every earlier token with left letter L, which properness leaves free (a1 ... a2),
        gap 1 - cos(t theta).  ``lemma`` (Lemma F.1's lambda) also counts earlier copies of the
        top token, gap cos(t theta) - cos((t + 1) theta); it is computed only when
        (n0 - 1) theta <= pi, where matches are ordered by recency.
        """
        theta, omega = self.angle_values(numbers)
        n0 = self.n0
        with numbers.working():
            match = [numbers.cos(t * theta) for t in range(n0)]
            before = [match[0]]  # before[t] = min(match[:t+1]), after[t] = min(match[t:])
            for x in match[1:]:
                before.append(extreme([before[-1], x], numbers, largest=False))
            after = [match[-1]]
            for x in reversed(match[:-1]):
                after.append(extreme([after[-1], x], numbers, largest=False))
            after.reverse()
            gaps = []
            best = np.array(self.rival_codes())[self._ranks()[1].argmax(axis=1)]  # certified argmax over r
            for t in range(n0):
                others = ([before[t - 1]] if t > 0 else []) + ([after[t + 1]] if t < n0 - 1 else [])
                rival = numbers.cos(int(best[t]) * omega + t * theta)
                gaps.append(extreme(others, numbers, largest=False) - rival)
            pointer = extreme(gaps, numbers, largest=False)
            variants = match[0] - extreme(match[1:], numbers)
            value_aware = extreme([pointer, variants], numbers, largest=False)
            lemma = None
            if self._recency_ordered():
                steps = [match[t] - match[t + 1] for t in range(n0 - 1)]
                lemma = extreme([value_aware] + steps, numbers, largest=False)
        return {"value_aware": value_aware, "lemma": lemma, "pointer": pointer}

    def _recency_ordered(self) -> bool:
        """(n0 - 1) theta <= pi, decided on the exact angle (a rational theta: against 3 < pi)."""
        theta, steps = self.theta, self.n0 - 1
        return theta.pi_multiple * steps <= 1 if not theta.rational else theta.rational * steps <= 3

    def variant_ids(self, n: int) -> np.ndarray:
        """n - 1 copies of a1, then a2 (or aa, then a1 when m = 1): a proper input whose last
        query must out-weigh n - 1 keys of its own left letter, at logit gaps 1 - cos(t theta)."""
        a = self.alphabet[0]
        first, last = ((a, 1), (a, 2)) if self.m >= 2 else ((a, a), (a, 1))
        return self.ids([first] * (n - 1) + [last])

    def reference_where_defined(self, tokens) -> list:
        """Retrieval at every position where Definition F.2 defines it, None elsewhere (task
        inputs need not be proper: a distractor may point at a letter with two tokens)."""
        from theory.functions import retrieval_match  # the Definition's own matching rule

        seq = list(tokens)
        pairs = [split_pair(x, j) for j, x in enumerate(seq)]
        out = []
        for j, (_, right) in enumerate(pairs):
            if is_integer_token(right):
                out.append(seq[j])
                continue
            try:
                out.append(retrieval_match(seq, pairs, j))
            except ValueError:
                out.append(None)
        return out

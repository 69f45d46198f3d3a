"""Shared machinery of the hand-built one-layer, one-head RoPE transformers (Appendix F.2).

A construction is an embedding table E (one row per vocabulary token), query and key maps
W_Q, W_K : R^d -> R^2, one RoPE angle theta, a value map W_V, a residual F(x, a) and a
decoder.  Decoding (the paper's unembedding step): the candidate scores are the first |V|
coordinates of F(x, a), one per vocabulary token; the output is the token whose score is
the unique maximum, and no token at all (an error) when the maximum is shared.  The
decoding gap of one output is its top score minus its second score.

Every quantity is computed by one route, the matrix route E -> W_Q/W_K -> theory.rope ->
attention -> F -> decode (attention and decoding: ``constructions.attention``), in
whichever number system is passed: float64 (vectorised over batches), mpmath at any
precision, sympy exactly.  ``constructions.export`` shows a construction as a one-layer
model to trained-model analysis.  Two more views, in ``constructions.exact``, serve the
proofs:

* the closed form: every logit is cos((t + c_theta) theta + c_omega omega) with integer
  shifts (c_theta, c_omega) read off the tokens (``Construction.phase_shift``); sympy proves
  it equal to the matrix route (``prove_closed_form``);
* exact average-hard attention (``exact_hard``): equal logits are found by arithmetic on
  the phases, which are rational + rational * pi (cos x = cos y iff x = +-y mod 2 pi, and pi
  is irrational), their order is certified with arb balls, and the decoding is done in
  integers.  No rounding enters a decision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from theory.numbers import FLOAT64, NumberSystem
from theory.phases import Angle
from theory.rope import rope_logit, rotation

from .attention import average_hard, decode, softmax
from .exact import check_length, exact_hard

__all__ = ["Construction", "Weights", "compare_outputs"]


@dataclass
class Weights:
    """E (|V| x d, one row per token), W_Q and W_K (2 x d), W_V (d x d)."""

    embedding: np.ndarray
    query: np.ndarray
    key: np.ndarray
    value: np.ndarray


class Construction:
    """Base class: subclasses define the vocabulary, the per-token codes and the weights."""

    vocab: list  # canonical tokens, in coordinate order
    n0: int
    theta: Angle
    omega: Angle | None = None
    decoding_gap = 1  # proven per construction (see the subclass's proof)
    reference = None  # the function of theory.functions this construction computes

    def __init__(self):
        self.token_id = {token: i for i, token in enumerate(self.vocab)}
        self._weights = {}

    # ---- tokens ---------------------------------------------------------------------------
    def canonical(self, token):
        raise NotImplementedError

    def ids(self, tokens) -> np.ndarray:
        """Token ids of one input, checking its length against n0 and every token's membership."""
        if isinstance(tokens, str):
            tokens = tokens.split()
        tokens = list(tokens)
        check_length(len(tokens), self.n0)
        out = np.empty(len(tokens), dtype=np.int64)
        for position, token in enumerate(tokens):
            key = self.canonical(token)
            if key not in self.token_id:
                raise ValueError(
                    f"token {token!r} at position {position} is not in this "
                    f"construction's vocabulary ({len(self.vocab)} tokens)"
                )
            out[position] = self.token_id[key]
        return out

    def display(self, token) -> str:
        """A token as text: ``"A"``, ``"3"``; pairs written together (``"c4"``, ``"db"``)."""
        if token is None:
            return "<ambiguous>"
        return "".join(map(str, token)) if isinstance(token, tuple) else str(token)

    def tokens(self, ids) -> list:
        return [None if i < 0 else self.vocab[i] for i in np.asarray(ids).tolist()]

    def reference_ids(self, tokens) -> np.ndarray:
        """The reference function (theory.functions) applied at every position, as ids."""
        return self.ids(type(self).reference(list(tokens)))

    def reference_batch(self, ids) -> np.ndarray:
        """``reference_ids`` of every row of a batch of input ids: what ``compare_outputs`` expects.
        Each distinct output token goes through ``ids`` once and is then read from a table
        (the same ids; the brute forces pass tens of thousands of rows, issue 41)."""
        reference, known, rows = type(self).reference, {}, []
        for row in ids:
            out = reference(self.tokens(row))
            try:
                found = [known[token] for token in out]
            except KeyError:  # a token not seen yet: ``ids`` reads (and checks) the whole row
                found = self.ids(out)
                known.update(zip(out, found.tolist()))
            else:
                check_length(len(out), self.n0)
            rows.append(found)
        return np.array(rows)

    # ---- weights ---------------------------------------------------------------------------
    def angle_values(self, numbers: NumberSystem, symbolic: bool = False):
        """(theta, omega) in ``numbers``; sympy Symbols when ``symbolic`` (for the proofs)."""
        if symbolic:
            return sympy.Symbol("theta", real=True), sympy.Symbol("omega", real=True)
        omega = None if self.omega is None else self.omega.value(numbers)
        return self.theta.value(numbers), omega

    def rotated_v(self, angle, numbers: NumberSystem):
        """rho(angle) v with v = (0, 1): the one vector every query and key is a rotation of."""
        return rotation(angle, numbers).dot(numbers.array([0, 1]))

    def build_weights(self, numbers: NumberSystem, symbolic: bool) -> Weights:
        raise NotImplementedError

    def weights(self, numbers: NumberSystem = FLOAT64, symbolic: bool = False) -> Weights:
        key = (numbers.name, symbolic)
        if key not in self._weights:
            self._weights[key] = self.build_weights(numbers, symbolic)
        return self._weights[key]

    def phase_shift(self, query_ids, key_ids):
        """Integer arrays (c_theta, c_omega): logit = cos((t + c_theta) theta + c_omega omega)."""
        raise NotImplementedError

    def residual(self, x, a):
        raise NotImplementedError

    # ---- the matrix route ---------------------------------------------------------------------
    def logits_from_hidden(self, hidden, numbers: NumberSystem = FLOAT64, symbolic: bool = False, rows=None):
        """Causal attention logits (..., rows, n) from hidden states (..., n, d).

        Row i holds the logits from the query at position ``rows[i]`` (default: every
        position) to every key j; entries with j > query position are -inf in float64 and
        None in the exact systems.
        """
        w = self.weights(numbers, symbolic)
        theta, _ = self.angle_values(numbers, symbolic)
        hidden = np.asarray(hidden, dtype=np.float64 if numbers is FLOAT64 else object)
        n = hidden.shape[-2]
        rows = np.arange(n) if rows is None else np.asarray(rows)
        q = hidden[..., rows, :] @ w.query.T
        k = hidden @ w.key.T
        shape = q.shape[:-2] + (len(rows), n, 2)
        logits = rope_logit(
            np.broadcast_to(q[..., :, None, :], shape),
            rows[:, None],
            np.broadcast_to(k[..., None, :, :], shape),
            np.arange(n)[None, :],
            numbers.array([theta]),
            numbers,
        )
        future = np.arange(n)[None, :] > rows[:, None]
        logits[..., future] = -np.inf if numbers is FLOAT64 else None
        return logits

    def hidden(self, ids, numbers: NumberSystem = FLOAT64, symbolic: bool = False):
        return self.weights(numbers, symbolic).embedding[np.asarray(ids)]

    def attention_logits(self, tokens, numbers: NumberSystem = FLOAT64, symbolic: bool = False):
        return self.logits_from_hidden(self.hidden(self.ids(tokens), numbers, symbolic), numbers, symbolic)

    def closed_form_logit(
        self, query_token, key_token, offset, numbers: NumberSystem = FLOAT64, symbolic: bool = False
    ):
        """cos((offset + c_theta) theta + c_omega omega) for one (query, key, offset)."""
        theta, omega = self.angle_values(numbers, symbolic)
        c_theta, c_omega = (int(c) for c in self.phase_shift(*self.ids([query_token, key_token])))
        with numbers.working():
            phase = (numbers.convert(offset) + c_theta) * theta
            if c_omega:
                phase = phase + c_omega * omega
            return numbers.cos(phase)

    def forward(self, tokens, attention: str = "hard", beta=None, numbers: NumberSystem = FLOAT64):
        """Outputs at every position (None where decoding is ambiguous) and decoding gaps, in
        any number system; softmax in float64 and mpmath."""
        out, gaps = self._attend_and_decode(self.hidden(self.ids(tokens), numbers), attention, beta, numbers)
        return self.tokens(out), gaps

    def forward_batch(self, ids, attention: str = "hard", beta=None):
        """float64 outputs (B, n) as ids (-1 where ambiguous) and decoding gaps, vectorised."""
        ids = np.atleast_2d(np.asarray(ids))
        check_length(ids.shape[1], self.n0)
        return self._attend_and_decode(self.hidden(ids), attention, beta, FLOAT64)

    def _attend_and_decode(self, hidden, attention, beta, numbers):
        logits = self.logits_from_hidden(hidden, numbers)
        values = hidden @ self.weights(numbers).value.T
        if attention == "hard":
            mixed = average_hard(logits, values, numbers)
        elif attention == "softmax":
            if beta is None or not beta > 0:
                raise ValueError(f"softmax attention needs an inverse temperature beta > 0, got {beta!r}")
            mixed = softmax(logits, values, beta, numbers)
        else:
            raise ValueError(f"attention must be 'hard' or 'softmax', got {attention!r}")
        return decode(self.residual(hidden, mixed)[..., : len(self.vocab)], numbers)

    def integer_tables(self):
        """(R, V) integer matrices |V| x |V|: candidate scores = R[x] + average of V[keys].
        Computed once per model and returned read-only; recomputed when the float64 embedding
        or value map it was computed from has changed since (a mutant test edits them)."""
        w = self.weights()
        cached = self.__dict__.get("_integer_tables")
        if cached is not None:
            embedding, value, tables = cached
            if np.array_equal(embedding, w.embedding) and np.array_equal(value, w.value):
                return tables
        tables = self._compute_integer_tables()
        self.__dict__["_integer_tables"] = (w.embedding.copy(), w.value.copy(), tables)
        return tables

    def _compute_integer_tables(self):
        w = self.weights()
        size = len(self.vocab)
        x = w.embedding
        residual = self.residual(x, np.zeros_like(x))[:, :size]
        value = self.residual(np.zeros_like(x), x @ w.value.T)[:, :size]
        tables = np.rint(residual).astype(np.int64), np.rint(value).astype(np.int64)
        if not (np.array_equal(tables[0], residual) and np.array_equal(tables[1], value)):
            raise ValueError("exact decoding needs integer embedding and value tables")
        for table in tables:
            table.flags.writeable = False
        return tables


# ---- checking against the reference functions ------------------------------------------------
def compare_outputs(model: Construction, ids, expected, attention: str = "exact", beta=None) -> dict:
    """Run ``model`` on a batch and compare with ``expected`` ids at every position.

    attention: "exact" (exact average-hard, see constructions.exact), "hard" or "softmax"
    (float64).  Returns counts, the smallest decoding gap and the first failure (if any).
    """
    ids = np.atleast_2d(np.asarray(ids))
    expected = np.atleast_2d(np.asarray(expected))
    if attention == "exact":
        out, gaps = exact_hard(model, ids)
    else:
        out, gaps = model.forward_batch(ids, attention, beta)
    smallest = float(gaps.min())
    wrong = np.argwhere(out != expected)
    report = {
        "attention": attention,
        "inputs": int(ids.shape[0]),
        "length": int(ids.shape[1]),
        "positions": int(ids.size),
        "wrong": int(len(wrong)),
        "min_decoding_gap": smallest,
    }
    if beta is not None:
        report["beta"] = beta
    if len(wrong):
        b, i = (int(x) for x in wrong[0])
        report["first_failure"] = {
            "input": [model.display(x) for x in model.tokens(ids[b])],
            "position": i,
            "expected": model.display(model.vocab[expected[b, i]]),
            "got": model.display(model.tokens([out[b, i]])[0]),
        }
    return report

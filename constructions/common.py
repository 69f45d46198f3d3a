"""Shared machinery of the hand-built one-layer, one-head RoPE transformers (Appendix F.2).

A construction is an embedding table E (one row per vocabulary token), query and key maps
W_Q, W_K : R^d -> R^2, one RoPE angle theta, a value map W_V, a residual F(x, a) and a
decoder.  Decoding (the paper's unembedding step): the candidate scores are the first |V|
coordinates of F(x, a), one per vocabulary token; the output is the token whose score is
the unique maximum, and no token at all (an error) when the maximum is shared.  The
decoding gap of one output is its top score minus its second score.

Every quantity is computed by one route, the matrix route E -> W_Q/W_K -> theory.rope ->
attention -> F -> decode, in whichever number system is passed: float64 (vectorised over
batches), mpmath at any precision, sympy exactly.  Two more views, in
``constructions.exact``, serve the proofs:

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

from theory.numbers import FLOAT64, SYMBOLIC, Interval, MultiPrecision, NumberSystem
from theory.rope import rope_logit, rotation

from .exact import Angle, check_length, exact_hard

__all__ = ["Angle", "Construction", "Weights", "FLOAT_TIE", "extreme", "compare_outputs", "LayerTrace",
           "OneLayerModel"]

FLOAT_TIE = 1e-12  # float64 cannot tell logits closer than this apart; they count as tied
DECODE_TIE = 1e-9  # nor decoding scores (small integers over |J|) closer than this


@dataclass
class Weights:
    """E (|V| x d, one row per token), W_Q and W_K (2 x d), W_V (d x d)."""

    embedding: np.ndarray
    query: np.ndarray
    key: np.ndarray
    value: np.ndarray


class Construction:
    """Base class: subclasses define the vocabulary, the per-token codes and the weights."""

    vocab: list          # canonical tokens, in coordinate order
    n0: int
    theta: Angle
    omega: Angle | None = None
    decoding_gap = 1     # proven per construction (see the subclass's proof)
    reference = None     # the function of theory.functions this construction computes

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
                raise ValueError(f"token {token!r} at position {position} is not in this "
                                 f"construction's vocabulary ({len(self.vocab)} tokens)")
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
    def logits_from_hidden(self, hidden, numbers: NumberSystem = FLOAT64, symbolic: bool = False,
                           rows=None):
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
        logits = rope_logit(np.broadcast_to(q[..., :, None, :], shape), rows[:, None],
                            np.broadcast_to(k[..., None, :, :], shape), np.arange(n)[None, :],
                            numbers.array([theta]), numbers)
        future = np.arange(n)[None, :] > rows[:, None]
        logits[..., future] = -np.inf if numbers is FLOAT64 else None
        return logits

    def hidden(self, ids, numbers: NumberSystem = FLOAT64, symbolic: bool = False):
        return self.weights(numbers, symbolic).embedding[np.asarray(ids)]

    def attention_logits(self, tokens, numbers: NumberSystem = FLOAT64, symbolic: bool = False):
        return self.logits_from_hidden(self.hidden(self.ids(tokens), numbers, symbolic), numbers, symbolic)

    def closed_form_logit(self, query_token, key_token, offset, numbers: NumberSystem = FLOAT64,
                          symbolic: bool = False):
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
            mixed = _average_hard(logits, values, numbers)
        elif attention == "softmax":
            if beta is None or not beta > 0:
                raise ValueError(f"softmax attention needs an inverse temperature beta > 0, got {beta!r}")
            mixed = _softmax(logits, values, beta, numbers)
        else:
            raise ValueError(f"attention must be 'hard' or 'softmax', got {attention!r}")
        return _decode(self.residual(hidden, mixed)[..., : len(self.vocab)], numbers)

    def integer_tables(self):
        """(R, V) integer matrices |V| x |V|: candidate scores = R[x] + average of V[keys]."""
        w = self.weights()
        size = len(self.vocab)
        x = w.embedding
        residual = self.residual(x, np.zeros_like(x))[:, :size]
        value = self.residual(np.zeros_like(x), x @ w.value.T)[:, :size]
        tables = np.rint(residual).astype(np.int64), np.rint(value).astype(np.int64)
        if not (np.array_equal(tables[0], residual) and np.array_equal(tables[1], value)):
            raise ValueError("exact decoding needs integer embedding and value tables")
        return tables


# ---- attention and decoding in any number system -------------------------------------------
def _tie_tolerance(numbers: NumberSystem):
    if numbers is FLOAT64:
        return FLOAT_TIE
    if isinstance(numbers, MultiPrecision):
        return numbers.ctx.mpf(10) ** (8 - numbers.dps)
    return 0


def _top(row, numbers):
    """Indices of the maximal entries of one row (None / -inf entries are masked keys)."""
    live = [j for j, x in enumerate(row) if x is not None and not (numbers is FLOAT64 and x == -np.inf)]
    if numbers is SYMBOLIC:  # exact: rank numerically, then prove every near-tie by simplification
        approx = {j: sympy.N(row[j], 60) for j in live}
        best = max(approx.values())
        near = [j for j in live if best - approx[j] < sympy.Float("1e-50")]
        if any(sympy.simplify(row[j] - row[near[0]]) != 0 for j in near[1:]):
            raise ArithmeticError("sympy could not decide a near-tie between two values")
        return near
    best = max(row[j] for j in live)
    tol = _tie_tolerance(numbers)
    return [j for j in live if row[j] >= best - tol]


def _average_hard(logits, values, numbers):
    if numbers is FLOAT64:
        top = logits.max(axis=-1, keepdims=True)
        chosen = logits >= top - FLOAT_TIE
        return (chosen / chosen.sum(axis=-1, keepdims=True)) @ values
    out = np.empty(logits.shape[:-1] + values.shape[-1:], dtype=object)
    for i in range(logits.shape[-2]):
        top = _top(list(logits[i]), numbers)
        with numbers.working():
            out[i] = sum((values[j] for j in top[1:]), values[top[0]]) / numbers.convert(len(top))
    return out


def _softmax(logits, values, beta, numbers):
    if numbers is FLOAT64:
        shifted = beta * (logits - logits.max(axis=-1, keepdims=True))
        weights = np.exp(shifted)
        return (weights / weights.sum(axis=-1, keepdims=True)) @ values
    if not isinstance(numbers, MultiPrecision):
        raise ValueError(f"softmax is evaluated in float64 or mpmath, not in {numbers.name}")
    ctx = numbers.ctx
    out = np.empty(logits.shape[:-1] + values.shape[-1:], dtype=object)
    for i in range(logits.shape[-2]):
        live = [j for j, x in enumerate(logits[i]) if x is not None]
        top = max(logits[i][j] for j in live)
        weights = {j: ctx.exp(numbers.convert(beta) * (logits[i][j] - top)) for j in live}
        total = ctx.fsum(weights.values())
        out[i] = sum((values[j] * (weights[j] / total) for j in live), values[0] * 0)
    return out


def _decode(scores, numbers):
    """Unique-argmax decoding: (ids with -1 where the top score is shared, decoding gaps)."""
    if numbers is FLOAT64:
        order = np.sort(scores, axis=-1)
        gaps = order[..., -1] - order[..., -2]
        out = np.where(gaps > DECODE_TIE, scores.argmax(axis=-1), -1)
        return out, gaps
    out, gaps = [], []
    for row in scores:
        top = _top(list(row), numbers)
        ranked = sorted(row, key=lambda x: sympy.N(x, 60) if numbers is SYMBOLIC else x)
        gaps.append(ranked[-1] - ranked[-2])
        out.append(top[0] if len(top) == 1 else -1)
    return np.array(out), gaps


def extreme(values, numbers: NumberSystem, largest: bool = True):
    """max (or min) of a list in any system; for arb balls a ball certainly holding it."""
    values = list(values)
    if isinstance(numbers, Interval):
        with numbers.working():
            out = values[0]
            for x in values[1:]:
                out = out.max(x) if largest else out.min(x)
            return out
    return max(values) if largest else min(values)


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
    report = {"attention": attention, "inputs": int(ids.shape[0]), "length": int(ids.shape[1]),
              "positions": int(ids.size), "wrong": int(len(wrong)), "min_decoding_gap": smallest}
    if beta is not None:
        report["beta"] = beta
    if len(wrong):
        b, i = (int(x) for x in wrong[0])
        report["first_failure"] = {"input": [model.display(x) for x in model.tokens(ids[b])], "position": i,
                                   "expected": model.display(model.vocab[expected[b, i]]),
                                   "got": model.display(model.tokens([out[b, i]])[0])}
    return report


# ---- export as an analysable one-layer model ---------------------------------------------------
@dataclass
class LayerTrace:
    """Per-layer quantities of one input (one entry per layer; here one layer)."""

    tokens: list
    hidden_states: list      # [array (n, d)] entering each layer
    last_token_logits: list  # [array (n,)] attention logits from the last token to every position
    values: list             # [array (n, d)] W_V applied to the hidden states


class OneLayerModel:
    """A construction seen as a one-layer model, as trained-model analysis sees a GPT-J layer.

    ``layer_logits(layer, hidden_states)`` recomputes the last token's logits from any hidden
    states with the positions unchanged: that is what a positional/symbolic swap test needs
    (it swaps hidden states between positions and re-runs only that layer's attention).
    """

    num_layers = 1

    def __init__(self, construction: Construction, numbers: NumberSystem = FLOAT64):
        self.construction = construction
        self.numbers = numbers

    def _check_layer(self, layer: int) -> None:
        if layer != 0:
            raise ValueError(f"layer {layer} does not exist: this model has one layer (layer 0)")

    def layer_logits(self, layer: int, hidden_states):
        """Last-token logits (n,) of ``layer`` recomputed from hidden states (n, d)."""
        self._check_layer(layer)
        hidden = np.asarray(hidden_states)
        last = hidden.shape[-2] - 1
        return self.construction.logits_from_hidden(hidden, self.numbers, rows=[last])[..., 0, :]

    layer_last_token_logits = layer_logits  # the name training.model.GPTJ uses

    def run(self, tokens) -> LayerTrace:
        """hidden_states, last_token_logits and values of one input, one entry per layer."""
        c = self.construction
        hidden = c.hidden(c.ids(tokens), self.numbers)
        values = hidden @ c.weights(self.numbers).value.T
        return LayerTrace(list(tokens), [hidden], [self.layer_logits(0, hidden)], [values])


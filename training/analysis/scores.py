"""Positional and symbolic scores of one model's heads (Appendix D, E; claims C1-C3), with
attention entropy.  ``training.analysis.dynamics`` applies them to every checkpoint of a run.

Scores (``theory.scores`` holds the one formula).  For a layer, the hidden states ENTERING
it are swapped between two positions a < b before the query (positions unchanged, the
query never swapped) and only that layer's last-token logits are recomputed; all
``(T-1)(T-2)/2`` swaps (120 for 17 tokens), tau = 1e-4 with |D_a - D_b|.  Two routes:

* ``rerun``: literally swap the hidden states and recompute through the model's own code
  (``Adapter.last_logits``: our GPT-J's ``layer_last_token_logits``, HF's rotary code, ...);
* ``fast``: the cross matrix ``cross[c, p]`` (content c at position p, one matmul of the keys
  against the query rotated to every offset, ``Adapter.crosses``; queries and keys from
  ``Adapter.hidden_and_keys``, for our GPT-J the forward pass's own) and
  ``theory.scores.head_scores_from_cross`` (O(P) per input), all layers in one pass
  (``fast_scores``).  Equal to ``rerun`` to ~1e-12 in float64 (tested).

Precision: alpha = softmax(|D_a - D_b| / 1e-4) turns a 1e-6 change of an attention weight
into a 1% change of a swap's weight, so checkpoints are analysed in float64.

Inputs: ``N_INPUTS`` = 100 sequences ``Task.generate(100, seed=SCORE_SEED)`` (25 per hop
count, balanced answers), the same set at every checkpoint; generated rather than drawn
from the paper test split so that smoke runs need no 480,000-sequence data set.
"""

from __future__ import annotations

import numpy as np
import torch

from theory.scores import (
    DEFAULT_TAU,
    attention_entropy,
    head_scores,
    head_scores_from_cross,
    swap_pairs,
    swapped_rows_from_cross,
)
from training.tasks.definitions import get_task

from .adapters import adapter_for

__all__ = [
    "SCORE_SEED",
    "N_INPUTS",
    "METHODS",
    "score_inputs",
    "swapped_rows",
    "layer_scores",
    "fast_scores",
    "model_scores",
]

SCORE_SEED = 2605
N_INPUTS = 100
METHODS = ("fast", "rerun")


def score_inputs(task, count: int = N_INPUTS, seed: int = SCORE_SEED):
    """The fixed input set of the scores (module doc)."""
    return get_task(task).generate(count, seed)


def _swap_index(length: int, pairs: np.ndarray) -> np.ndarray:
    """(P, T) gather indices: row i reads position b at a and a at b for pair i = (a, b)."""
    index = np.tile(np.arange(length), (len(pairs), 1))
    rows = np.arange(len(pairs))
    index[rows, pairs[:, 0]], index[rows, pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
    return index


def swapped_rows(
    adapter, layer: int, hidden, pairs: np.ndarray, method: str = "fast", chunk: int = 10, query_keys=None
):
    """(base logits (B, H, T), post-swap logits (B, H, P, T)) by either route (``query_keys``:
    the layer's entry of ``Adapter.hidden_and_keys``, used by ``fast``)."""
    if method == "fast":
        cross = adapter.cross(layer, hidden, query_keys)
        return np.diagonal(cross, axis1=-2, axis2=-1).copy(), swapped_rows_from_cross(cross, pairs)
    if method != "rerun":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    base = adapter.last_logits(layer, hidden)
    B, T = hidden.shape[0], hidden.shape[1]
    index = _swap_index(T, pairs)
    if isinstance(hidden, torch.Tensor):
        index = torch.as_tensor(index)
    out = []
    for start in range(0, B, chunk):
        part = hidden[start : start + chunk]
        swapped = part[:, index]  # (b, P, T, d): contents moved, positions (slots) kept
        logits = adapter.last_logits(layer, swapped.reshape(-1, T, swapped.shape[-1]))  # (b P, H, T)
        out.append(logits.reshape(len(part), len(pairs), -1, T).transpose(0, 2, 1, 3))
    return base, np.concatenate(out)


def layer_scores(
    adapter, layer: int, hidden, method: str = "fast", tau: float = DEFAULT_TAU, query_keys=None
) -> dict:
    """Per input and head (B, H): s_POS, s_SYM and the entropy of the last-token attention
    (``query_keys``: as in ``swapped_rows``)."""
    if method == "fast":
        if query_keys is None:
            query_keys = adapter.last_query_keys(layer, hidden)
        return {key: value[0] for key, value in fast_scores(adapter, [query_keys], tau, [layer]).items()}
    pairs = swap_pairs(hidden.shape[1] - 1)  # every position before the query
    base, rows = swapped_rows(adapter, layer, hidden, pairs, method)
    positional, symbolic = head_scores(base, rows, pairs, tau)
    return {"positional": positional, "symbolic": symbolic, "entropy": attention_entropy(base)}


FAST_CHUNK = 1 << 22  # elements of the largest temporary of fast_scores (32 MB in float64)


def fast_scores(
    adapter, query_keys: list, tau: float = DEFAULT_TAU, layers=None, form: str = "absolute"
) -> dict:
    """The fast route for several layers at once: arrays (L, B, H) from each layer's
    (last query, keys) of ``Adapter.hidden_and_keys``; ``layers``: the layer index of each
    entry (default 0, 1, ..: all layers), which picks that layer's angles and query scale.
    The cross matrices of a group of layers and ``theory.scores.head_scores_from_cross``
    (O(P) per input) run on all of them together; groups stay under ``FAST_CHUNK`` elements
    (one group for the paper's model)."""
    layers = list(range(len(query_keys)) if layers is None else layers)
    B, H, T, hd = query_keys[0][1].shape
    pairs = swap_pairs(T - 1)  # every position before the query
    per_layer = B * H * max(T * hd, len(pairs), T * T)
    group = max(1, FAST_CHUNK // per_layer)
    out = {"positional": [], "symbolic": [], "entropy": []}
    for start in range(0, len(query_keys), group):
        part = query_keys[start : start + group]
        cross = adapter.crosses(part, layers[start : start + group])  # each layer's own RoPE variant
        positional, symbolic = head_scores_from_cross(
            cross, pairs, tau, form
        )  # form: theory.scores.ALPHA_FORMS
        out["positional"].append(positional)
        out["symbolic"].append(symbolic)
        out["entropy"].append(attention_entropy(np.diagonal(cross, axis1=-2, axis2=-1)))
    return {key: np.concatenate(value) for key, value in out.items()}


def model_scores(
    adapter, ids, method: str = "fast", tau: float = DEFAULT_TAU, bar=None, form: str = "absolute"
) -> dict:
    """Every layer's scores on ``ids``: arrays (layers, B, H); ``form`` (theory.scores.ALPHA_FORMS)
    only with the fast route."""
    adapter = adapter_for(adapter)
    if form != "absolute" and method != "fast":
        raise ValueError("a swap-weight form other than 'absolute' is computed by the fast route only")
    if method == "fast":  # the forward pass's own queries and keys where the family has them
        _, query_keys = adapter.hidden_and_keys(ids)
        scores = fast_scores(adapter, query_keys, tau, form=form)
        if bar is not None:
            bar.update(len(query_keys))
        return scores
    if method != "rerun":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    out = {"positional": [], "symbolic": [], "entropy": []}
    for layer, hidden in enumerate(adapter.hidden_states(ids)):
        for key, value in layer_scores(adapter, layer, hidden, method, tau).items():
            out[key].append(value)
        if bar is not None:
            bar.update(1)
    return {k: np.array(v) for k, v in out.items()}

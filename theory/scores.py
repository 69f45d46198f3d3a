"""Positional and symbolic scores of an attention head (Appendix D; Urrutia et al. 2025).

For one input, let ``L`` be the last-token attention logits over positions
``0 .. n-1`` (the query is position ``n-1``) and ``D = softmax(L)``.  A swap
``pi = (a b)`` of two positions before the query exchanges the *contents* (the
hidden states entering the layer) of ``a`` and ``b`` and leaves positions alone;
``D'`` is the attention after the swap.  With ``v_ab(x) = (D_a, D_b)``:

    alpha(pi) = softmax over swaps of |D_a - D_b| / tau            (tau = 1e-4)
    s_POS     = sum_pi alpha(pi) cos( (D'_a, D'_b), (D_a, D_b) )
    s_SYM     = sum_pi alpha(pi) cos( (D'_a, D'_b), (D_b, D_a) )

where ``cos`` is the cosine similarity of two 2-vectors.  A positional head's
attention ignores content (``D' = D``, ``s_POS = 1``); a symbolic head's follows
it (``D'_a = D_b``, ``s_SYM = 1``).  The weights ``alpha`` emphasise the swaps
that move attention most; the paper's code uses ``|D_a - D_b|`` and tau = 1e-4.

The fast method: a swap only moves key contents, so every post-swap row follows
from one matrix ``cross[c, p]`` = the logit of the content of key ``c`` placed at
position ``p`` (the query row fixed): ``L'[a] = cross[b, a]``, ``L'[b] = cross[a, b]``
and ``L'[p] = L[p]`` elsewhere.  One ``n x n`` matrix replaces a recomputation of
the layer per swap.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEFAULT_TAU", "swap_pairs", "softmax", "swapped_rows_from_cross", "head_scores",
           "head_scores_from_cross", "attention_entropy"]

DEFAULT_TAU = 1e-4


def swap_pairs(n_keys: int) -> np.ndarray:
    """All pairs ``(a, b)``, ``a < b < n_keys``, as a ``(P, 2)`` array (120 for 16 keys)."""
    if n_keys < 2:
        raise ValueError(f"need at least 2 positions before the query to swap, got {n_keys}")
    a, b = np.triu_indices(n_keys, k=1)
    return np.stack([a, b], axis=1)


def softmax(logits, axis: int = -1) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=axis, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=axis, keepdims=True)


def swapped_rows_from_cross(cross: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Post-swap logit rows ``(..., P, n)`` from ``cross`` of shape ``(..., n, n)``.

    ``cross[..., c, p]`` is the logit from the (fixed) query to the content of key
    ``c`` placed at position ``p``; its diagonal is the unswapped row.
    """
    cross = np.asarray(cross, dtype=np.float64)
    if cross.shape[-1] < 2 or cross.shape[-1] != cross.shape[-2]:
        raise ValueError(f"cross must be (..., n, n) with n >= 2, got shape {cross.shape}")
    base = np.diagonal(cross, axis1=-2, axis2=-1)  # (..., n)
    rows = np.repeat(base[..., None, :], len(pairs), axis=-2).copy()  # (..., P, n)
    a, b = pairs[:, 0], pairs[:, 1]
    index = np.arange(len(pairs))
    rows[..., index, a] = cross[..., b, a]
    rows[..., index, b] = cross[..., a, b]
    return rows


def _cosine(u_a, u_b, w_a, w_b):
    """Cosine similarity of the 2-vectors (u_a, u_b) and (w_a, w_b), elementwise.

    Two zero vectors have no direction; they only arise when attention underflows
    to exactly 0 at both positions, and then count as agreeing (cosine 1)."""
    dot = u_a * w_a + u_b * w_b
    norms = np.sqrt(u_a ** 2 + u_b ** 2) * np.sqrt(w_a ** 2 + w_b ** 2)
    return np.where(norms > 0, dot / np.where(norms > 0, norms, 1.0), 1.0)


def _weighted_scores(d_a, d_b, s_a, s_b, tau: float):
    """The score formula proper, from attention at the swapped positions before (d) and
    after (s) each swap, shapes (..., P)."""
    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    alpha = softmax(np.abs(d_a - d_b) / tau)
    positional = (alpha * _cosine(s_a, s_b, d_a, d_b)).sum(axis=-1)
    symbolic = (alpha * _cosine(s_a, s_b, d_b, d_a)).sum(axis=-1)
    return positional, symbolic


def head_scores(logits, swapped_logits, pairs, tau: float = DEFAULT_TAU):
    """``(s_POS, s_SYM)`` per input, from whole post-swap rows (the literal definition).

    logits:          ``(..., n)`` last-token logits before the swap
    swapped_logits:  ``(..., P, n)`` the same row after each swap of ``pairs``
    """
    attention = softmax(logits)  # (..., n)
    swapped = softmax(swapped_logits)  # (..., P, n)
    a, b = pairs[:, 0], pairs[:, 1]
    index = np.arange(len(pairs))
    return _weighted_scores(attention[..., a], attention[..., b],
                            swapped[..., index, a], swapped[..., index, b], tau)


def head_scores_from_cross(cross, pairs, tau: float = DEFAULT_TAU):
    """``(s_POS, s_SYM)`` per input straight from ``cross`` (..., n, n), in O(P) per input.

    A swap changes two logits of the row, so its softmax normaliser is the unswapped one
    less two terms plus two: no post-swap row is built.  Where the two swapped positions
    held almost all the attention (the remainder below 1e-6 of the total), that
    subtraction would cancel, so those (input, swap) rows, rare, are rebuilt and
    normalised in full.  Equals ``head_scores`` on ``swapped_rows_from_cross`` (tested).
    """
    cross = np.asarray(cross, dtype=np.float64)
    a, b = pairs[:, 0], pairs[:, 1]
    base = np.diagonal(cross, axis1=-2, axis2=-1)  # (..., n)
    moved_a, moved_b = cross[..., b, a], cross[..., a, b]  # the two logits after each swap, (..., P)
    top = base.max(axis=-1, keepdims=True)
    e = np.exp(base - top)
    total = e.sum(axis=-1, keepdims=True)
    rest = total - e[..., a] - e[..., b]  # mass on the untouched positions, relative to exp(top)
    # log-sum-exp over {rest, moved_a, moved_b}, all relative to exp(top)
    lift = np.maximum(0.0, np.maximum(moved_a, moved_b) - top)
    w_a, w_b = np.exp(moved_a - top - lift), np.exp(moved_b - top - lift)
    swapped_total = rest * np.exp(-lift) + w_a + w_b
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 only where `unsafe` redoes it
        s_a, s_b = w_a / swapped_total, w_b / swapped_total
    unsafe = np.nonzero(rest < 1e-6 * total)
    if unsafe[0].size:
        rows = base[unsafe[:-1]].copy()  # (k, n): the literal post-swap rows, only where needed
        k, pair = np.arange(len(rows)), unsafe[-1]
        rows[k, a[pair]], rows[k, b[pair]] = moved_a[unsafe], moved_b[unsafe]
        exact = softmax(rows)
        s_a[unsafe], s_b[unsafe] = exact[k, a[pair]], exact[k, b[pair]]
    return _weighted_scores(e[..., a] / total, e[..., b] / total, s_a, s_b, tau)


def attention_entropy(logits) -> np.ndarray:
    """Shannon entropy (nats) of ``softmax(logits)`` along the last axis."""
    p = softmax(logits)
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=-1)

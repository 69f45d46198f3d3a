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
Appendix D PRINTS the signed alpha(pi) = softmax((d_i(x) - d_j(x)) / tau); every score of the
package is the absolute form, and claim D-alpha-signed measures what the printed one gives
(``_swap_weights``'s ``form``).

The fast method: a swap only moves key contents, so every post-swap row follows
from one matrix ``cross[c, p]`` = the logit of the content of key ``c`` placed at
position ``p`` (the query row fixed): ``L'[a] = cross[b, a]``, ``L'[b] = cross[a, b]``
and ``L'[p] = L[p]`` elsewhere.  One ``n x n`` matrix replaces a recomputation of
the layer per swap.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DEFAULT_TAU",
    "ALPHA_FORMS",
    "swap_pairs",
    "softmax",
    "swapped_rows_from_cross",
    "head_scores",
    "head_scores_from_cross",
    "attention_entropy",
]

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


_TINY = 1e-150  # below this a 2-vector's squared entries lose precision or underflow
_SMALLEST_NORMAL = np.finfo(np.float64).tiny  # 2.2e-308


def _cosines_scaled(u_a, u_b, w_a, w_b):
    """cos((u_a, u_b), (w_a, w_b)) and cos((u_a, u_b), (w_b, w_a)) with each vector first
    divided by its largest entry, so that no square underflows.  An entry below the smallest
    normal double has lost its relative precision (one route of the scores may keep 5e-324
    where another rounds to 0), so it counts as 0; a zero vector has no direction and counts
    as agreeing (cosine 1)."""

    def unit(x, y):
        x, y = (np.where(np.abs(v) < _SMALLEST_NORMAL, 0.0, v) for v in (x, y))
        scale = np.maximum(np.abs(x), np.abs(y))
        safe = np.where(scale > 0, scale, 1.0)
        x, y = x / safe, y / safe
        norm = np.sqrt(x * x + y * y)
        return x / np.where(scale > 0, norm, 1.0), y / np.where(scale > 0, norm, 1.0), scale > 0

    ux, uy, u_ok = unit(u_a, u_b)
    wx, wy, w_ok = unit(w_a, w_b)
    defined = u_ok & w_ok
    return np.where(defined, ux * wx + uy * wy, 1.0), np.where(defined, ux * wy + uy * wx, 1.0)


# How alpha reads a swap (a, b), a < b: "absolute" |D_a - D_b| (the authors' code, the package's
# scores); "signed" D_a - D_b, Appendix D's printed softmax((d_i - d_j)/tau) with (i, j) = (a, b);
# "signed_reversed" D_b - D_a, the printed formula with the pair the other way round.  Only claim
# D-alpha-signed asks for the signed forms.
ALPHA_FORMS = ("absolute", "signed", "signed_reversed")


def _swap_weights(d_a, d_b, tau: float, form: str = "absolute"):
    """alpha = softmax over the swaps (last axis) of |D_a - D_b| / tau (``form``: ALPHA_FORMS)."""
    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    if form not in ALPHA_FORMS:
        raise ValueError(f"form must be one of {ALPHA_FORMS}, got {form!r}")
    moved = {
        "absolute": lambda: np.abs(d_a - d_b),
        "signed": lambda: d_a - d_b,
        "signed_reversed": lambda: d_b - d_a,
    }
    return softmax(moved[form]() / tau)


def _cosines(d_a, d_b, s_a, s_b):
    """Per swap, cos(v_ab after, v_ab before) and cos(v_ab after, v_ba before) from attention
    at the swapped positions before (d) and after (s) it, arrays of one shape.

    Both share one norm product ((d_b, d_a) is as long as (d_a, d_b)).  Swaps whose vectors
    are tiny (the squares would underflow) are redone scaled (``_cosines_scaled``), which also
    holds the convention for a zero vector (attention 0 at both positions): cosine 1."""
    norm_s, norm_d = np.sqrt(s_a * s_a + s_b * s_b), np.sqrt(d_a * d_a + d_b * d_b)
    tiny = (norm_s < _TINY) | (norm_d < _TINY)
    inverse = 1.0 / np.where(tiny, 1.0, norm_s * norm_d)
    positional, symbolic = (s_a * d_a + s_b * d_b) * inverse, (s_a * d_b + s_b * d_a) * inverse
    if tiny.any():
        positional[tiny], symbolic[tiny] = _cosines_scaled(s_a[tiny], s_b[tiny], d_a[tiny], d_b[tiny])
    return positional, symbolic


def head_scores(logits, swapped_logits, pairs, tau: float = DEFAULT_TAU, form: str = "absolute"):
    """``(s_POS, s_SYM)`` per input, from whole post-swap rows (the literal definition).

    logits:          ``(..., n)`` last-token logits before the swap
    swapped_logits:  ``(..., P, n)`` the same row after each swap of ``pairs``
    """
    attention = softmax(logits)  # (..., n)
    swapped = softmax(swapped_logits)  # (..., P, n)
    a, b = pairs[:, 0], pairs[:, 1]
    index = np.arange(len(pairs))
    d_a, d_b = attention[..., a], attention[..., b]
    alpha = _swap_weights(d_a, d_b, tau, form)
    positional, symbolic = _cosines(d_a, d_b, swapped[..., index, a], swapped[..., index, b])
    return (alpha * positional).sum(axis=-1), (alpha * symbolic).sum(axis=-1)


def head_scores_from_cross(cross, pairs, tau: float = DEFAULT_TAU, form: str = "absolute"):
    """``(s_POS, s_SYM)`` per input straight from ``cross`` (..., n, n), in O(P) per input.

    The weights alpha come first, from the unswapped row alone; a swap whose alpha is exactly
    0 (exp underflow: its |D_a - D_b| trails the largest by more than ~745 tau) adds exactly 0,
    so the post-swap attention is computed for the others only (with tau = 1e-4, a handful
    per input on a sharp head).  A swap changes two logits of the row, so its softmax
    normaliser is the unswapped one less two terms plus two: no post-swap row is built.
    Where the two swapped positions held almost all the attention (the remainder below 1e-6
    of the total), that subtraction would cancel, so those rows, rare, are rebuilt and
    normalised in full.  Equals ``head_scores`` on ``swapped_rows_from_cross`` (tested).
    """
    cross = np.asarray(cross, dtype=np.float64)
    n, lead = cross.shape[-1], cross.shape[:-2]
    a, b = pairs[:, 0], pairs[:, 1]
    flat = cross.reshape(-1, n * n)  # (N, n n): input r's cross[c, p] at [r, c n + p]
    base = flat[:, :: n + 1]  # (N, n) the unswapped rows
    top = base.max(axis=-1, keepdims=True)
    e = np.exp(base - top)
    total = e.sum(axis=-1, keepdims=True)
    e_a, e_b = e[:, a], e[:, b]
    d_a, d_b = e_a / total, e_b / total
    alpha = _swap_weights(d_a, d_b, tau, form)  # (N, P)
    row, pair = np.nonzero(alpha)  # the swaps that weigh anything
    moved_a, moved_b = (
        flat[row, b[pair] * n + a[pair]],
        flat[row, a[pair] * n + b[pair]],
    )  # logits after the swap
    top, total = top[row, 0], total[row, 0]
    rest = total - e_a[row, pair] - e_b[row, pair]  # mass on the untouched positions, relative to exp(top)
    # log-sum-exp over {rest, moved_a, moved_b}, all relative to exp(top)
    lift = np.maximum(0.0, np.maximum(moved_a, moved_b) - top)
    shift = top + lift
    w_a, w_b = np.exp(moved_a - shift), np.exp(moved_b - shift)
    swapped_total = rest * np.exp(-lift) + w_a + w_b
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 only where `unsafe` redoes it
        s_a, s_b = w_a / swapped_total, w_b / swapped_total
    unsafe = np.nonzero(rest < 1e-6 * total)[0]
    if unsafe.size:  # the literal post-swap rows, only where needed
        rows = base[row[unsafe]].copy()
        k, where_a, where_b = np.arange(len(unsafe)), a[pair[unsafe]], b[pair[unsafe]]
        rows[k, where_a], rows[k, where_b] = moved_a[unsafe], moved_b[unsafe]
        exact = softmax(rows)
        s_a[unsafe], s_b[unsafe] = exact[k, where_a], exact[k, where_b]
    positional, symbolic = _cosines(d_a[row, pair], d_b[row, pair], s_a, s_b)
    weight = alpha[row, pair]
    return tuple(
        np.bincount(row, weight * cosine, minlength=len(flat)).reshape(lead)[()]
        for cosine in (positional, symbolic)
    )


def attention_entropy(logits) -> np.ndarray:
    """Shannon entropy (nats) of ``softmax(logits)`` along the last axis."""
    p = softmax(logits)
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=-1)

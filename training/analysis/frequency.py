"""Frequency use per layer (Appendix G, Figure 8, Table 1): which RoPE planes carry the
attention logit of the last token.

Decomposition.  With RoPE the logit from the query (position T-1) to key j is a sum over
the rotary planes: ``L_j = sum_k k_j[plane k] . (R_(T-1-j) q)[plane k]`` (+ the non-rotary
dims, if any), each plane rotating by its own angle g_k (``Adapter.plane_terms``; the
terms sum to the logit, tested).  For each input we take the key the query attends most,
``j* = argmax_j L_j``, and read its per-plane terms ``c_k``.

Weight of a plane (our definition; the paper does not spell its out):
``w_k = mean over inputs (and heads) of max(c_k, 0)``, the mean positive contribution of
plane k to the top logit.  Negative terms are clipped because a plane that pulls the top
logit down is not "used" to select that key.
Weighted-average ID: ``ID = sum_k k w_k / sum_k w_k`` with IDs k = 1..rotary_dim/2 (ID 1 the
fastest plane, as in Table 1).  Its frequency is reported two ways: ``frequency`` = g at the
ROUNDED ID (what Table 1 prints beside its integer IDs) and ``frequency_interpolated`` =
``base^(-2 (ID - 1) / rotary_dim)`` at the fractional ID.  ``dominant_id`` = argmax_k w_k.

A second reading, closer to Figure 4C's title "Max. logit per Frequency", is kept beside it:
``w'_k`` = mean over inputs of the LARGEST plane-k term over all key positions.
"""

from __future__ import annotations

import numpy as np

from theory.rope import rope_angles

__all__ = ["top_logit_planes", "frequency_use", "weighted_id", "id_frequency", "WEIGHT_DEFINITION"]

WEIGHT_DEFINITION = ("w_k = mean over inputs and heads of max(c_k, 0), where c_k is rotary plane k's term of the "
                     "last-token logit at its argmax key (k . R q split by plane); ID = sum k w_k / sum w_k, k = 1 "
                     "fastest; frequency = g at the rounded ID (as Table 1), frequency_interpolated = "
                     "base^(-2 (ID - 1) / rotary_dim)")


def top_logit_planes(adapter, layer: int, hidden) -> dict:
    """Per input and head: the per-plane terms at the argmax key (B, H, planes), the argmax
    key, the logit there, the non-rotary rest, and the per-plane maximum over keys."""
    terms, rest = adapter.plane_terms(layer, hidden)  # (B, H, T, planes), (B, H, T)
    logits = terms.sum(-1) + rest
    top = logits.argmax(-1)  # (B, H)
    at_top = np.take_along_axis(terms, top[..., None, None], axis=-2)[..., 0, :]
    return {"terms": at_top, "argmax": top, "logit": np.take_along_axis(logits, top[..., None], -1)[..., 0],
            "rest": np.take_along_axis(rest, top[..., None], -1)[..., 0], "max_per_plane": terms.max(axis=-2)}


def weighted_id(weights) -> float | None:
    """sum k w_k / sum w_k with k = 1..len(weights); None when every weight is 0."""
    w = np.asarray(weights, dtype=np.float64)
    total = w.sum()
    if not total > 0:
        return None
    return float((np.arange(1, len(w) + 1) * w).sum() / total)


def id_frequency(frequency_id: float, rotary_dim: int, base: float = 10000.0) -> float:
    """g at a (possibly fractional) ID: base^(-2 (ID - 1) / rotary_dim)."""
    return float(base ** (-2.0 * (frequency_id - 1.0) / rotary_dim))


def frequency_use(adapter, hidden_in, base: float = 10000.0) -> dict:
    """Weights, weighted-average IDs and frequencies for every layer (see module doc)."""
    rotary_dim = adapter.rotary_dim
    angles = np.asarray(rope_angles(rotary_dim, base), dtype=np.float64)
    out = {"definition": WEIGHT_DEFINITION, "weights": [], "weighted_id": [], "rounded_id": [], "frequency": [],
           "frequency_interpolated": [], "dominant_id": [], "dominant_frequency": [],
           "weights_max_per_plane": [], "weighted_id_max_per_plane": []}
    for layer, hidden in enumerate(hidden_in):
        planes = top_logit_planes(adapter, layer, hidden)
        w = np.clip(planes["terms"], 0, None).reshape(-1, planes["terms"].shape[-1]).mean(0)
        w_max = planes["max_per_plane"].reshape(-1, w.shape[0]).mean(0)
        wid = weighted_id(w)
        rounded = None if wid is None else int(np.floor(wid + 0.5))
        dominant = int(np.argmax(w)) + 1
        out["weights"].append(w.tolist())
        out["weighted_id"].append(wid)
        out["rounded_id"].append(rounded)
        out["frequency"].append(None if rounded is None else float(angles[rounded - 1]))
        out["frequency_interpolated"].append(None if wid is None else id_frequency(wid, rotary_dim, base))
        out["dominant_id"].append(dominant)
        out["dominant_frequency"].append(float(angles[dominant - 1]))
        out["weights_max_per_plane"].append(w_max.tolist())
        out["weighted_id_max_per_plane"].append(weighted_id(np.clip(w_max, 0, None)))
    return out

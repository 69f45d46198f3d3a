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

RoPE variants.  Angles are each layer's own (``Adapter.layer_angles``: another base, p-RoPE's
position-free planes at angle 0), and ``base`` defaults to the adapter's.  A NoPE layer has no
rotary planes at all: ``rotary[layer]`` is False and every per-plane field of that layer
(weights, IDs, frequencies) is None rather than a split of dimension pairs that carry no
position.  ``frequency_interpolated`` is None where the ID lies next to a plane of angle 0
(p-RoPE), since the geometric interpolation holds between rotating planes only.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "top_logit_planes",
    "frequency_use",
    "weighted_id",
    "id_frequency",
    "table_frequency",
    "WEIGHT_DEFINITION",
]

WEIGHT_DEFINITION = (
    "w_k = mean over inputs and heads of max(c_k, 0), where c_k is rotary plane k's term of the "
    "last-token logit at its argmax key (k . R q split by plane); ID = sum k w_k / sum w_k, k = 1 "
    "fastest; frequency = g at the rounded ID (as Table 1), frequency_interpolated = "
    "base^(-2 (ID - 1) / rotary_dim)"
)


def top_logit_planes(adapter, layer: int, hidden) -> dict:
    """Per input and head: the per-plane terms at the argmax key (B, H, planes), the argmax
    key, the logit there, the non-rotary rest, and the per-plane maximum over keys."""
    terms, rest = adapter.plane_terms(layer, hidden)  # (B, H, T, planes), (B, H, T)
    logits = terms.sum(-1) + rest
    top = logits.argmax(-1)  # (B, H)
    at_top = np.take_along_axis(terms, top[..., None, None], axis=-2)[..., 0, :]
    return {
        "terms": at_top,
        "argmax": top,
        "logit": np.take_along_axis(logits, top[..., None], -1)[..., 0],
        "rest": np.take_along_axis(rest, top[..., None], -1)[..., 0],
        "max_per_plane": terms.max(axis=-2),
    }


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


def table_frequency(frequency_id: float, angles) -> float:
    """The angle at a (possibly fractional) ID read off a layer's own table (``angles``, ID 1 at
    index 0), geometric between neighbouring planes: ``id_frequency`` for an unscaled table
    (tested), the real angles for a length-scaled one (``rope_scaling``), whose planes are not
    one geometric sequence."""
    logs = np.log(np.asarray(angles, dtype=np.float64))
    return float(np.exp(np.interp(frequency_id - 1.0, np.arange(len(logs)), logs)))


def frequency_use(adapter, hidden_in, base: float | None = None) -> dict:
    """Weights, weighted-average IDs and frequencies for every layer (see module doc);
    ``base``: of ``frequency_interpolated``, default the adapter's (10000 if it has none)."""
    rotary_dim = adapter.rotary_dim
    base = float(getattr(adapter, "base", 10000.0) if base is None else base)
    fields = (
        "weights",
        "weighted_id",
        "rounded_id",
        "frequency",
        "frequency_interpolated",
        "dominant_id",
        "dominant_frequency",
        "weights_max_per_plane",
        "weighted_id_max_per_plane",
    )
    out = {"definition": WEIGHT_DEFINITION, "rotary": [], **{name: [] for name in fields}}
    for layer, hidden in enumerate(hidden_in):
        rotary = adapter.has_rotary_planes(layer)
        out["rotary"].append(rotary)
        row = _layer_use(adapter, layer, hidden, rotary_dim, base) if rotary else dict.fromkeys(fields)
        for name in fields:
            out[name].append(row[name])
    return out


def _layer_use(adapter, layer: int, hidden, rotary_dim: int, base: float) -> dict:
    """One layer's entries of ``frequency_use`` (a layer with rotary planes)."""
    angles = np.asarray(adapter.layer_angles(layer), dtype=np.float64)
    planes = top_logit_planes(adapter, layer, hidden)
    w = np.clip(planes["terms"], 0, None).reshape(-1, planes["terms"].shape[-1]).mean(0)
    w_max = planes["max_per_plane"].reshape(-1, w.shape[0]).mean(0)
    wid = weighted_id(w)
    rounded = None if wid is None else int(np.floor(wid + 0.5))
    dominant = int(np.argmax(w)) + 1
    between_rotating = wid is not None and all(angles[int(i) - 1] != 0 for i in {np.floor(wid), np.ceil(wid)})
    return {
        "weights": w.tolist(),
        "weighted_id": wid,
        "rounded_id": rounded,
        "frequency": None if rounded is None else float(angles[rounded - 1]),
        "frequency_interpolated": id_frequency(wid, rotary_dim, base) if between_rotating else None,
        "dominant_id": dominant,
        "dominant_frequency": float(angles[dominant - 1]),
        "weights_max_per_plane": w_max.tolist(),
        "weighted_id_max_per_plane": weighted_id(np.clip(w_max, 0, None)),
    }

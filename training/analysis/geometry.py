"""Index geometry in a trained layer (Section 3.4, Figure 4B; claim C9).

T_Index's mechanism (Figure 4A): every key is the same vector v; the query of an integer
token s is ``rho(-s theta) v``, so RoPE at offset t turns it to ``rho((t - s) theta) v``,
which meets v exactly at the target offset t = s.  In a trained layer we look at the one
rotary plane that carries most of the top logit (``training.analysis.frequency``, ``dominant_id``,
angle g) and project the UNROTATED keys and queries (what the projections output before
RoPE) onto it:

* ``key_collapse``: mean resultant length of the key directions, ``|mean_j k_j / |k_j||``
  over every key position of every input: 1 when all keys point one way (mu = that way);
* ``query_alignment``: mean over queries of ``cos(delta)``, ``delta = phi_q + s g - mu``,
  the angle between a query rotated by its own offset s and the key direction: 1 when every
  query, rotated by the offset its integer token encodes, lands on the keys (Figure 4A);
* ``query_spread``: the circular correlation (Jammalamadaka-SenGupta) between the query
  angle phi_q and ``-s g``: +1 when query angles are spread by the offset exactly as the
  construction's ``rho(-s theta) v``;
* ``pointing_fraction``: fraction of queries with ``|delta| < g / 2`` (closer to its own
  offset than to a neighbouring one, in this plane);
* ``attends_target_fraction``: fraction of queries whose full attention row (all planes)
  peaks at offset s, i.e. at the token the Index function reads.

Queries are the integer tokens of the number task (positions 8..16: pre-target window and
query), each with the offset s it encodes; keys are every position.

RoPE variants: the layer's own angles (``Adapter.layer_angles``) and query factor
(``Adapter.query_factor``) enter the attention rows.  A NoPE layer has no rotary plane
(``plane_id`` None): the plane numbers are None, ``attends_target_fraction`` is still measured.
"""

from __future__ import annotations

import numpy as np

from theory.rope import plane_indices, rotate

__all__ = ["index_geometry", "key_collapse", "circular_correlation"]


def _wrap(angle):
    return (np.asarray(angle) + np.pi) % (2 * np.pi) - np.pi


def key_collapse(keys_xy: np.ndarray) -> tuple[float, float]:
    """(mean resultant length, mean direction) of 2-D vectors (N, 2)."""
    norms = np.linalg.norm(keys_xy, axis=-1)
    unit = keys_xy[norms > 0] / norms[norms > 0, None]
    mean = unit.mean(0)
    return float(np.linalg.norm(mean)), float(np.arctan2(mean[1], mean[0]))


def circular_correlation(alpha, beta) -> float:
    """Jammalamadaka-SenGupta circular correlation of two angle samples."""
    alpha, beta = np.asarray(alpha, dtype=np.float64), np.asarray(beta, dtype=np.float64)
    a = np.sin(alpha - np.angle(np.exp(1j * alpha).mean()))
    b = np.sin(beta - np.angle(np.exp(1j * beta).mean()))
    denominator = np.sqrt((a**2).sum() * (b**2).sum())
    return float((a * b).sum() / denominator) if denominator > 0 else float("nan")


def _integer_offsets(task, ids: np.ndarray) -> np.ndarray:
    """The integer each token encodes (0 for non-integers)."""
    values = np.array([int(t) if t.isdigit() else 0 for t in task.vocab], dtype=np.int64)
    return values[ids]


def index_geometry(
    adapter,
    layer: int,
    hidden,
    ids: np.ndarray,
    task,
    plane_id: int | None,
    query_positions=range(8, 17),
    head: int = 0,
    max_points: int | None = None,
) -> dict:
    """The Figure-4B picture and its numbers for one layer, plane ``plane_id`` (1-based; None
    for a layer without rotary planes, ``frequency_use``'s dominant ID of a NoPE layer)."""
    if plane_id is None and adapter.has_rotary_planes(layer):
        raise ValueError(
            f"layer {layer} has rotary planes: index_geometry needs a plane_id in "
            f"1..{adapter.rotary_dim // 2}, got None"
        )
    ids = np.asarray(ids)
    q, k = adapter.queries_keys(layer, hidden)  # (B, H, T, hd) unrotated
    q, k = q[:, head], k[:, head]
    angles = adapter.layer_angles(layer)
    positions = np.asarray(list(query_positions))
    offsets = _integer_offsets(task, ids)[:, positions]  # (B, Q)
    valid = offsets > 0
    keep = slice(None) if max_points is None else slice(0, max_points)
    plane = _plane_numbers(q, k, adapter, angles, plane_id, positions, offsets, valid, keep)
    return {
        "layer": layer,
        "plane_id": None if plane_id is None else int(plane_id),
        "frequency": plane["g"],
        "head": head,
        "keys": plane["keys"],
        "queries": plane["queries"],
        "offsets": offsets[keep].reshape(-1).tolist(),
        "key_positions": list(range(k.shape[1])),
        "query_positions": positions.tolist(),
        **{
            name: plane[name]
            for name in (
                "key_direction",
                "key_collapse",
                "query_alignment",
                "query_spread",
                "pointing_fraction",
            )
        },
        "attends_target_fraction": _attends_target(
            adapter, layer, q, k, angles, head, positions, offsets, valid
        ),
        "n_keys": int(k.shape[0] * k.shape[1]),
        "n_queries": int(valid.sum()),
    }


def _plane_numbers(q, k, adapter, angles, plane_id, positions, offsets, valid, keep) -> dict:
    """Keys and queries projected on plane ``plane_id`` and the numbers read from them (all
    None, points empty, when there is no plane: a NoPE layer)."""
    names = ("g", "key_direction", "key_collapse", "query_alignment", "query_spread", "pointing_fraction")
    if plane_id is None:
        return {"keys": [], "queries": [], **dict.fromkeys(names)}
    a, b = plane_indices(adapter.head_dim, adapter.rotary_dim, adapter.pairing)
    pa, pb = a[plane_id - 1], b[plane_id - 1]
    g = float(angles[plane_id - 1])
    keys_xy = np.stack([k[..., pa], k[..., pb]], -1).reshape(-1, 2)
    queries_xy = np.stack([q[:, positions, pa], q[:, positions, pb]], -1)  # (B, Q, 2)
    collapse, mu = key_collapse(keys_xy)
    phi = np.arctan2(queries_xy[..., 1], queries_xy[..., 0])
    delta = _wrap(phi + offsets * g - mu)[valid]
    return {
        "g": g,
        "keys": np.round(keys_xy.reshape(len(q), -1, 2)[keep].reshape(-1, 2), 5).tolist(),
        "queries": np.round(queries_xy[keep].reshape(-1, 2), 5).tolist(),
        "key_direction": mu,
        "key_collapse": collapse,
        "query_alignment": float(np.cos(delta).mean()) if delta.size else None,
        "query_spread": circular_correlation(phi[valid], -offsets[valid] * g) if delta.size else None,
        "pointing_fraction": float((np.abs(delta) < g / 2).mean()) if delta.size else None,
    }


def _attends_target(adapter, layer, q, k, angles, head, positions, offsets, valid) -> float | None:
    """Fraction of queries whose full attention row (all planes) peaks at their own offset:
    logit to key j = f_i k_j . R_(i-j) q_i, f_i the layer's query factor at position i (a
    learned scale's sign could flip the argmax; none in the paper's model)."""
    attends = []
    for i in positions:
        rotated = rotate(q[:, i][:, None, :], i - np.arange(i + 1), angles, pairing=adapter.pairing)
        row = (k[:, : i + 1] * rotated).sum(-1)  # (B, i + 1)
        factor = adapter.query_factor(layer, i + 1)
        attends.append(i - (row if factor is None else row * factor[head]).argmax(-1))
    hits = (np.stack(attends, -1) == offsets)[valid]
    return float(hits.mean()) if hits.size else None

"""Figure 4A's data: the T_Index key vector and the query vectors per offset.

Every key is v = (0, 1).  The query of integer s is W_Q E(s) = rho(theta)^(-s) v; RoPE at
offset t turns it by t theta, so the query seen from the key at offset t is R_t W_Q E(s) =
rho((t - s) theta) v, which lands on v exactly at t = s: "rotated to match v at the queried
position, and not elsewhere".  The logit is the dot product with v, cos((t - s) theta).
"""

from __future__ import annotations

import numpy as np

from theory.io.files import atomic_write_json
from theory.io.provenance import provenance
from theory.numbers import FLOAT64
from theory.rope import rotate

from .index import IndexConstruction

__all__ = ["figure4a_geometry", "write_figure4a"]


def figure4a_geometry(theta, offsets) -> dict:
    """Key, queries W_Q E(s) and RoPE-rotated queries R_t W_Q E(s), for s, t in ``offsets``."""
    offsets = [int(s) for s in offsets]
    if not offsets or min(offsets) < 1:
        raise ValueError(f"offsets must be integers >= 1, got {offsets!r}")
    model = IndexConstruction(["A", "B"], max(offsets), theta, max(offsets) + 1)
    weights = model.weights()
    key = weights.key @ weights.embedding[model.token_id["A"]]
    queries = {s: weights.query @ weights.embedding[model.token_id[s]] for s in offsets}
    angles = np.array([model.theta.value(FLOAT64)])
    rotated = {s: {t: rotate(q, t, angles) for t in [0] + offsets} for s, q in queries.items()}
    return {
        "theta": str(model.theta),
        "theta_decimal": model.theta.decimal(20),
        "key": key.tolist(),
        "letter_query": (weights.query @ weights.embedding[model.token_id["A"]]).tolist(),
        "queries": {str(s): q.tolist() for s, q in queries.items()},
        "rotated_queries": {
            str(s): {str(t): r.tolist() for t, r in row.items()} for s, row in rotated.items()
        },
        "logits": {str(s): {str(t): float(key @ r) for t, r in row.items()} for s, row in rotated.items()},
    }


def write_figure4a(path, theta, offsets) -> dict:
    """Write ``figure4a_geometry`` as JSON atomically (temp file in the same folder, then rename)."""
    data = figure4a_geometry(theta, offsets)
    atomic_write_json(path, {**data, "provenance": provenance()}, indent=2)
    return data

"""What the discrepancy theory predicts for each RoPE variant (issue 15), before any training.

A variant is described by the fields of ``training.model.gptj.ModelConfig`` that HF GPT-J
lacks (``rope_base``, ``rope_fraction``, ``nope_from_layer``, ``query_scale``) as a plain
dict, so this module stays in ``theory`` and reads no model.

Angles.  ``variant_angles``: the ``rope_angles`` of the base, with p-RoPE's slowest
(1 - p) planes at angle 0 (position-free) and every plane at 0 in a NoPE layer.  The model's
rotary embedding takes its table from here, so the rule is written once.

Symbolic heads (T_Retrieval, Theorem 3.2 and Remark 3.2), alphabet A, omega = 2 pi / A,
built on the slowest angle theta a layer offers:
* theta = 0 (a NoPE layer, or a p-RoPE layer's position-free planes): the margin
  cos((n-2) theta) - cos(omega - (n-1) theta) is 1 - cos omega at every n (Remark 3.2): the
  discrepancy does not decay;
* theta > 0: the same closed form inside the regime 2 (n-1) theta < omega, so the margin
  stays near 1 - cos omega up to the horizon n_R = 1 + omega / (2 theta) and decays beyond
  (``theory.discrepancy_retrieval.retrieval_general`` evaluates it there).
Positional heads (T_Index) need a rotating plane; with one, the corrected Theorem 3.2 makes
their discrepancy decay like 1 / n^2 whatever the angle.  A NoPE layer has none: no Index head.

Temperature (Lemma F.1, ``constructions.temperature``): the head stays average-hard while
beta(n) Delta(n) >= ln((n - 1) Gamma / delta).  ``logit_growth`` is the factor by which a
layer's logit gap beta Delta grows from the training length 17 to n: the discrepancy law
times the query scale's law (1 for none; log(n + 1) / log 17 for "log" and for "learned",
whose learned scalar is constant in n).
"""

from __future__ import annotations

import math

import numpy as np

from .discrepancy_retrieval import retrieval_general
from .rope import rope_angles

__all__ = [
    "TRAINING_LENGTH",
    "variant_angles",
    "slowest_angle",
    "retrieval_horizon",
    "retrieval_margin_law",
    "query_scale_law",
    "logit_growth",
    "variant_prediction",
]

TRAINING_LENGTH = 17


def variant_angles(
    rotary_dim: int, base: float = 10000.0, fraction: float = 1.0, rope: bool = True
) -> np.ndarray:
    """Float64 angles of every rotary plane, fastest first (module doc)."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"rope fraction must be in [0, 1], got {fraction}")
    angles = np.asarray(rope_angles(rotary_dim, base), dtype=np.float64)
    if not rope:
        return np.zeros_like(angles)
    angles[int(round(fraction * len(angles))) :] = 0.0  # p-RoPE: the slowest planes do not rotate
    return angles


def _layer_angles(variant: dict, layer: int, rotary_dim: int) -> np.ndarray:
    nope = variant.get("nope_from_layer")
    return variant_angles(
        rotary_dim,
        variant.get("rope_base", 10000.0),
        variant.get("rope_fraction", 1.0),
        rope=nope is None or layer < nope,
    )


def slowest_angle(angles) -> float:
    """The smallest angle a layer offers (0 when any plane is position-free)."""
    return float(np.min(angles))


def retrieval_horizon(theta: float, alph_size: int) -> float:
    """n_R = 1 + omega / (2 theta): the last length inside Theorem 3.2's regime; inf at theta 0."""
    return math.inf if theta == 0 else 1 + (2 * math.pi / alph_size) / (2 * theta)


def retrieval_margin_law(theta: float, alph_size: int, lengths) -> list[float]:
    """T_Retrieval's margin at ``theta`` for every length, divided by its value at length 17."""
    base = retrieval_general(theta, alph_size, TRAINING_LENGTH, "margin")
    return [retrieval_general(theta, alph_size, int(n), "margin") / base for n in lengths]


def query_scale_law(kind: str, lengths) -> list[float]:
    """The query scale at the last position of a length-n input, divided by its value at 17."""
    if kind == "none":
        return [1.0] * len(lengths)
    if kind in ("log", "learned"):
        return [math.log(n) / math.log(TRAINING_LENGTH) for n in lengths]  # position n - 1: log((n - 1) + 1)
    raise ValueError(f"query_scale must be none, log or learned, got {kind!r}")


def logit_growth(variant: dict, layer: int, rotary_dim: int, alph_size: int, lengths) -> list[float | None]:
    """beta(n) Delta(n) / (beta(17) Delta(17)) of a symbolic head in ``layer`` (module doc);
    None where the margin is not positive: past its horizon T_Retrieval at that angle puts
    another symbol on top, and no inverse temperature brings the match back."""
    theta = slowest_angle(_layer_angles(variant, layer, rotary_dim))
    margin = retrieval_margin_law(theta, alph_size, lengths)
    scale = query_scale_law(variant.get("query_scale", "none"), lengths)
    return [m * s if m > 0 else None for m, s in zip(margin, scale)]


def variant_prediction(variant: dict, n_layer: int, rotary_dim: int, alph_size: int, lengths) -> dict:
    """Per layer: the slowest angle, the retrieval horizon, whether an Index head is possible,
    and the logit growth of a symbolic head over ``lengths``."""
    layers = []
    for layer in range(n_layer):
        angles = _layer_angles(variant, layer, rotary_dim)
        theta = slowest_angle(angles)
        horizon = retrieval_horizon(theta, alph_size)
        layers.append(
            {
                "layer": layer,
                "rotates": bool(np.any(angles > 0)),
                "slowest_angle": theta,
                "retrieval_horizon": None if math.isinf(horizon) else horizon,
                "retrieval_law": "constant in n (Remark 3.2)"
                if theta == 0
                else f"near constant up to n_R = {horizon:.0f}, then decays (Theorem 3.2)",
                "index_law": "decays like 1/n^2 (corrected Theorem 3.2)"
                if np.any(angles > 0)
                else "impossible: no rotating plane",
                "logit_growth": logit_growth(variant, layer, rotary_dim, alph_size, lengths),
            }
        )
    return {
        "variant": variant,
        "alph_size": alph_size,
        "lengths": [int(n) for n in lengths],
        "layers": layers,
    }

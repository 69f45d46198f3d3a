"""The RoPE angles of an HF config, its length scaling included: the one place the analysis
turns ``config.rope_parameters`` into angles per plane.

transformers builds the same table in float32 (``modeling_rope_utils.ROPE_INIT_FUNCTIONS``);
here it is float64 (``theory.rope.rope_angles`` for the unscaled table, then the scaling), so a
~1e-7 relative error is not amplified by the scores' tau (``adapter_base`` module doc).
``tests/test_llm_families.py`` checks every type against ``ROPE_INIT_FUNCTIONS``.

Types read (``rope_type``):

* ``default``: ``base ** (-2k / d)``;
* ``linear``: every angle divided by ``factor`` (positions interpolated);
* ``llama3`` (Llama 3.1-3.3): planes of wavelength above ``original_max_position_embeddings /
  low_freq_factor`` divided by ``factor``, below ``.. / high_freq_factor`` unchanged, a smooth
  blend in between;
* ``dynamic`` (NTK): transformers changes the base only for sequences longer than
  ``max_position_embeddings`` and keeps the default table otherwise, so the table is the
  default one and ``dynamic_limit`` gives the length past which it would be wrong (the
  adapters refuse longer inputs).

Refused: ``yarn``, ``longrope`` (they also scale cos/sin by an attention factor, and longrope
switches tables with the length) and any other type, and a partial rotary factor (the LLaMA
families rotate the whole head).
"""

from __future__ import annotations

import math

import numpy as np

from theory.rope import rope_angles

__all__ = ["ROPE_TYPES", "rope_parameters", "scaled_angles", "dynamic_limit"]

ROPE_TYPES = ("default", "linear", "dynamic", "llama3")


def rope_parameters(config, layer_type: str | None = None) -> dict:
    """The config's RoPE parameters (transformers 5's standardised ``rope_parameters``; one
    layer type's where layers have their own), with ``rope_type`` filled in; ValueError naming
    what is not supported."""
    params = dict(getattr(config, "rope_parameters", None) or {})
    if layer_type is not None:
        params = dict(params.get(layer_type) or {})
    params.setdefault("rope_type", "default")
    params.setdefault("rope_theta", 10000.0)
    if params["rope_type"] not in ROPE_TYPES:
        raise ValueError(
            f"rope_type {params['rope_type']!r} is not supported; allowed: {', '.join(ROPE_TYPES)}"
        )
    if params.get("partial_rotary_factor", 1.0) != 1.0:
        raise ValueError(
            f"partial_rotary_factor {params['partial_rotary_factor']} is not supported; allowed: 1.0"
        )
    return params


def scaled_angles(params: dict, rotary_dim: int) -> np.ndarray:
    """float64 angle per plane (index 0 = the fastest) of ``params`` (``rope_parameters``)."""
    angles = np.asarray(rope_angles(rotary_dim, float(params["rope_theta"])), dtype=np.float64)
    kind = params["rope_type"]
    if kind in ("default", "dynamic"):
        return angles
    factor = float(params["factor"])
    if kind == "linear":
        return angles / factor
    # llama3: as transformers' _compute_llama3_parameters, step by step
    low, high = float(params["low_freq_factor"]), float(params["high_freq_factor"])
    old_length = float(params["original_max_position_embeddings"])
    wavelength = 2 * math.pi / angles
    scaled = np.where(wavelength > old_length / low, angles / factor, angles)
    smooth = (old_length / wavelength - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < old_length / high) & ~(wavelength > old_length / low)
    return np.where(medium, blended, scaled)


def dynamic_limit(params: dict, config) -> int | None:
    """The longest input whose angles ``scaled_angles`` gives for a ``dynamic`` table (None:
    any length): transformers rescales past ``max_position_embeddings``."""
    if params["rope_type"] != "dynamic":
        return None
    return int(config.max_position_embeddings)

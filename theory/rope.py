"""Rotary positional encoding (paper Appendix C.1), written once for every number system.

Conventions
-----------
* Angles: ``g_k = base ** (-2 (k - 1) / d)`` for ``k = 1 .. d/2`` (``d`` is the
  rotary dimension; ID 1 is the fastest plane).  HF GPT-J and LLaMA compute
  exactly these (``1 / base ** (arange(0, d, 2) / d)``).
* ``rho(g)`` is the counter-clockwise rotation ``[[cos g, -sin g], [sin g, cos g]]``
  and ``R_i`` the block diagonal of ``rho(g_k) ** i = rho(i g_k)``.
* A vector at position ``i`` is encoded as ``R_i x``; the logit from a query at
  ``i`` to a key at ``j`` is ``(R_j k)^T (R_i q) = k^T R_(i-j) q``.  We evaluate
  the relative form, so only the offset ``t = i - j`` is ever multiplied by an
  angle: that keeps ``cos(t g)`` exact in mpmath/arb even for ``t`` near 1e12.
* Pairing: ``"adjacent"`` rotates dims ``(2k, 2k+1)`` (GPT-J, RoFormer,
  TransformerLens' ``rotary_adjacent_pairs=True``); ``"halves"`` rotates
  ``(k, k + r/2)`` (LLaMA, GPT-NeoX ``rotate_half``).  With ``rotary_dim = r < d``
  only the first ``r`` dims rotate (GPT-J ``rotary_dim``, NeoX ``rotary_pct``);
  the angles then use ``r`` in place of ``d``, as both references do.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .numbers import FLOAT64, NumberSystem

__all__ = [
    "PAIRINGS",
    "rope_angles",
    "rotation",
    "rope_matrix",
    "rotate",
    "rope_logit",
    "rope_logit_absolute",
    "plane_indices",
    "pairing_permutation",
    "convert_pairing",
]

PAIRINGS = ("adjacent", "halves")


def _check_dims(dim: int, rotary_dim: int | None) -> int:
    if not isinstance(dim, (int, np.integer)) or dim < 2 or dim % 2:
        raise ValueError(f"dimension must be an even integer >= 2, got {dim!r}")
    if rotary_dim is None:
        return int(dim)
    if not isinstance(rotary_dim, (int, np.integer)) or not (2 <= rotary_dim <= dim) or rotary_dim % 2:
        raise ValueError(f"rotary_dim must be an even integer in [2, {dim}], got {rotary_dim!r}")
    return int(rotary_dim)


def _check_pairing(pairing: str) -> None:
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")


def rope_angles(dim: int, base=10000, numbers: NumberSystem = FLOAT64):
    """The ``dim // 2`` angles ``g_k = base ** (-2 (k - 1) / dim)`` (ID k at index k-1)."""
    dim = _check_dims(dim, None)
    with numbers.working():
        return numbers.array([numbers.power(base, Fraction(-2 * k, dim)) for k in range(dim // 2)])


def rotation(angle, numbers: NumberSystem = FLOAT64):
    """The 2x2 rotation ``rho(angle)``."""
    with numbers.working():
        a = numbers.convert(angle)
        c, s = numbers.cos(a), numbers.sin(a)
        return numbers.array([[c, -s], [s, c]])


def plane_indices(dim: int, rotary_dim: int | None = None, pairing: str = "adjacent"):
    """Index arrays ``(a, b)``: plane k rotates the coordinate pair ``(a[k], b[k])``."""
    r = _check_dims(dim, rotary_dim)
    _check_pairing(pairing)
    k = np.arange(r // 2)
    if pairing == "adjacent":
        return 2 * k, 2 * k + 1
    return k, k + r // 2


def rotate(x, position, angles, numbers: NumberSystem = FLOAT64, pairing: str = "adjacent"):
    """``R_position x`` along the last axis of ``x``.

    ``angles`` holds one angle per plane (``rotary_dim = 2 * len(angles)``);
    dims beyond the rotary dimension pass through.  ``position`` may be an
    array broadcasting against ``x.shape[:-1]`` (one position per vector).
    """
    with numbers.working():
        x = numbers.array(x)
        angles = numbers.array(angles)
        dim = x.shape[-1]
        a, b = plane_indices(dim, 2 * angles.shape[-1], pairing)
        pos = numbers.array(position)[..., None]
        phase = pos * angles
        c, s = numbers.cos_array(phase), numbers.sin_array(phase)
        # one vector may be rotated to many positions (and vice versa)
        x = np.broadcast_to(x, np.broadcast_shapes(x.shape[:-1], pos.shape[:-1]) + (dim,))
        xa, xb = x[..., a], x[..., b]
        out = x.copy()
        out[..., a] = xa * c - xb * s
        out[..., b] = xa * s + xb * c
        return out


def rope_matrix(
    position, angles, dim: int | None = None, numbers: NumberSystem = FLOAT64, pairing: str = "adjacent"
):
    """The ``dim x dim`` matrix ``R_position`` (identity beyond the rotary dims).

    Built by rotating the unit vectors, so it is the same map as ``rotate``.
    """
    r = 2 * len(angles)
    dim = r if dim is None else dim
    _check_dims(dim, r)
    with numbers.working():
        eye = numbers.array(np.eye(dim, dtype=int))
        # row e_m of eye rotated = column m of R; rotate acts on rows, so transpose
        return rotate(eye, position, angles, numbers, pairing).T


def rope_logit(query, i, key, j, angles, numbers: NumberSystem = FLOAT64, pairing: str = "adjacent"):
    """``L(q, i, k, j) = k^T R_(i-j) q``: the logit from a query at ``i`` to a key at ``j``.

    Works on batches: ``query`` and ``key`` broadcast along leading axes.
    """
    with numbers.working():
        offset = numbers.array(i) - numbers.array(j)
        rotated = rotate(query, offset, angles, numbers, pairing)
        return (numbers.array(key) * rotated).sum(axis=-1)


def rope_logit_absolute(query, i, key, j, angles, numbers: NumberSystem = FLOAT64, pairing: str = "adjacent"):
    """``(R_j k)^T (R_i q)``: the paper's absolute form, kept to check the identity."""
    with numbers.working():
        return (rotate(key, j, angles, numbers, pairing) * rotate(query, i, angles, numbers, pairing)).sum(
            axis=-1
        )


def pairing_permutation(dim: int, rotary_dim: int | None = None):
    """Permutation ``p`` with ``x_halves = x_adjacent[..., p]``.

    Plane k sits on ``(2k, 2k+1)`` in the adjacent layout and on ``(k, k + r/2)``
    in the halves layout; dims past ``rotary_dim`` stay where they are.  Applying
    ``p`` to the output rows of ``W_q`` and ``W_k`` (``W[p, :]``) turns a GPT-J
    head into an identical LLaMA/NeoX head: both q and k are permuted the same
    way, so every logit ``k . R q`` is unchanged.
    """
    r = _check_dims(dim, rotary_dim)
    a, b = plane_indices(dim, r, "adjacent")
    perm = np.arange(dim)
    perm[: r // 2] = a
    perm[r // 2 : r] = b
    return perm


def convert_pairing(weight_rows, dim: int, rotary_dim: int | None = None, to: str = "halves"):
    """Reorder the output rows of a W_q or W_k matrix from one pairing to the other."""
    _check_pairing(to)
    perm = pairing_permutation(dim, rotary_dim)
    if to == "adjacent":
        perm = np.argsort(perm)
    return np.asarray(weight_rows)[perm]

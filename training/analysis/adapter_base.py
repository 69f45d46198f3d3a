"""One view of any RoPE model for the positional/symbolic analysis: per layer, the hidden
states entering it, the last-token attention logits, and the cross matrix.

Every family answers four questions (``Adapter``'s abstract methods):

* ``hidden_states(ids)``: the states entering each layer, (B, T, d) per layer;
* ``last_logits(layer, hidden)``: that layer's last-token attention logits (B, H, T),
  recomputed from (possibly swapped) hidden states by the family's OWN code: our GPT-J's
  ``layer_last_token_logits``, HF's projections and HF's ``apply_rotary_pos_emb``, the
  construction's matrix route.  This is the ``rerun`` route of the scores;
* ``queries_keys(layer, hidden)``: unrotated queries and keys (B, H, T, head_dim), one
  entry per *query* head (grouped-query keys repeated as HF's ``repeat_kv`` does);
* the RoPE layout: ``angles`` (float64, ``theory.rope.rope_angles``), ``pairing``
  (``"adjacent"`` for GPT-J, ``"halves"`` for NeoX and LLaMA), ``rotary_dim``, ``scale``;
  per layer (defaults: the same for every layer, which is all HF families need)
  ``layer_angles(layer)`` (all 0 in a NoPE layer: the identity rotation) and
  ``query_factor(layer, length)`` (the per-head factor of the last query in a
  length-scaled layer, None where there is none).

From these the base class derives, with ``theory.rope`` doing every rotation, the cross
matrix ``cross[c, p]`` = logit of key content c placed at position p (the ``fast`` route,
``training.analysis.scores.fast_scores``; its queries and keys come from ``hidden_and_keys``,
which our GPT-J takes from the forward pass that produced the hidden states) and the
per-plane split of every logit (``plane_terms``, for frequency use).
Tests prove both routes give the same logits.

Precision: HF builds its rotary tables in float32 (a ~1e-7 relative error that the scores'
tau = 1e-4 would amplify), so the rerun routes of the HF families apply HF's rotary function
to float64 tables of the same angles; ``tests/test_adapters.py`` checks the adapters'
attention against HF's own ``output_attentions`` in float32.
"""

from __future__ import annotations

import numpy as np
import torch

from theory.rope import plane_indices, rope_matrix

__all__ = ["Adapter", "to_numpy"]


def to_numpy(x) -> np.ndarray:
    """float64 numpy copy of a tensor or array (the analysis does its maths in float64)."""
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


class Adapter:
    """Base class; subclasses set the RoPE layout attributes and ``hidden_states``,
    ``last_logits``, ``queries_keys`` (and may override ``trace`` and ``hidden_and_keys`` to
    take everything from one forward pass)."""

    family = "abstract"
    n_layers: int
    n_heads: int
    head_dim: int
    rotary_dim: int
    pairing: str
    angles: np.ndarray
    scale: float

    def hidden_states(self, ids) -> list:
        raise NotImplementedError

    def last_logits(self, layer: int, hidden) -> np.ndarray:
        raise NotImplementedError

    def queries_keys(self, layer: int, hidden, last_query: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Unrotated (queries (B, H, T or 1, hd), keys (B, H, T, hd)); ``last_query``: only the
        last position's query (all the cross matrix needs)."""
        raise NotImplementedError

    def trace(self, ids) -> tuple[list, list]:
        """(hidden states entering each layer, last-token logits (B, H, T) of each layer)."""
        hidden = self.hidden_states(ids)
        return hidden, [self.last_logits(layer, h) for layer, h in enumerate(hidden)]

    def hidden_and_keys(self, ids) -> tuple[list, list]:
        """(hidden states entering each layer, per layer the unrotated (last query (B, H, hd),
        keys (B, H, T, hd))): what the fast score route needs.  Here recomputed from the
        hidden states; a family whose forward pass exposes them (our GPT-J) overrides this
        to reuse what that pass already computed."""
        hidden = self.hidden_states(ids)
        return hidden, [self.last_query_keys(layer, h) for layer, h in enumerate(hidden)]

    def layer_angles(self, layer: int) -> np.ndarray:
        """The rotary angles of ``layer`` (float64, one per plane); all 0 means the layer
        has no rotary planes (NoPE).  One table for every layer unless a family overrides."""
        return self.angles

    def query_factor(self, layer: int, length: int) -> np.ndarray | None:
        """(n_heads,) factor multiplying ``layer``'s last query (position ``length - 1``)
        before its logits, or None (no length-dependent query scale).  Positive for a fixed
        log scale; a learned per-head scale may have any sign (the product handles both)."""
        return None

    def has_rotary_planes(self, layer: int) -> bool:
        """False for a layer whose every plane has angle 0 (NoPE): no plane carries position."""
        return bool(np.any(self.layer_angles(layer) != 0))

    def last_query_keys(self, layer: int, hidden) -> tuple[np.ndarray, np.ndarray]:
        """One layer's entry of ``hidden_and_keys`` from its hidden states: (last query
        (B, H, hd), keys (B, H, T, hd)), unrotated."""
        q, k = self.queries_keys(layer, hidden, last_query=True)
        return q[..., -1, :], k

    # ---- derived, identical for every family --------------------------------------------------
    def rotation_tables(self, length: int, angles=None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``R_(T-1-p)`` for every key position p as tables: ``(R x)[d] = cos[p, d] x[d] +
        sin[p, d] x[partner[d]]`` (float64 (T, head_dim) and (head_dim,) partner indices).
        ``angles``: one layer's table (default ``self.angles``; all 0 gives the identity).
        Read off the matrices of ``theory.rope.rope_matrix``, so the rotation is still written
        once; built once per (length, angle table)."""
        angles = np.asarray(self.angles if angles is None else angles, dtype=np.float64)
        cache = self.__dict__.setdefault("_rotation_tables", {})
        key = (length, angles.tobytes())
        if key not in cache:
            offsets = (length - 1) - np.arange(length)
            matrices = np.stack(
                [rope_matrix(int(o), angles, self.head_dim, pairing=self.pairing) for o in offsets]
            )  # (T, hd, hd); identity past rotary_dim
            partner = np.arange(self.head_dim)
            a, b = plane_indices(self.head_dim, self.rotary_dim, self.pairing)
            partner[a], partner[b] = b, a
            dims = np.arange(self.head_dim)
            cos, sin = matrices[:, dims, dims], matrices[:, dims, partner] * (partner != dims)
            rebuilt = np.zeros_like(matrices)
            rebuilt[:, dims, dims] = cos
            rebuilt[:, dims, partner] += sin
            if not np.array_equal(rebuilt, matrices):  # the tables' premise: one rotation per plane
                raise AssertionError("rope_matrix has entries off its rotation planes")
            cache[key] = (torch.from_numpy(cos), torch.from_numpy(sin), torch.from_numpy(partner))
        return cache[key]

    def rotated_queries(self, q_last, length: int, layer: int | None = None) -> np.ndarray:
        """``R_(T-1-p) q`` for every key position p: (..., T, head_dim) from q (..., head_dim).
        ``layer``: also that layer's angles and query factor (``positioned_query``); None:
        ``self.angles``, no factor.  Elementwise on the tables (O(T head_dim) per query, not a
        T head_dim^2 matmul against the stacked matrices, which cost 3-4x more); tests compare
        it with ``theory.rope.rotate``."""
        q = torch.as_tensor(q_last, dtype=torch.float64)
        if layer is None:
            return self._rotated(q, length).numpy()
        return self.positioned_query(layer, q, length).numpy()

    def _rotated(self, q_last: torch.Tensor, length: int, angles=None) -> torch.Tensor:
        cos, sin, partner = self.rotation_tables(length, angles)
        return torch.addcmul(q_last[..., None, :] * cos, q_last[..., partner][..., None, :], sin)

    def positioned_query(self, layer: int, q_last: torch.Tensor, length: int) -> torch.Tensor:
        """What position does to ``layer``'s last query (B, H, hd) facing ``length`` keys:
        rotated by every offset with the layer's angles, times the layer's query factor (one
        number per head, so scaling before or after the rotation is the same),
        (B, H, T, hd).  The one place the derived routes apply a layer's RoPE variant."""
        factor = self.query_factor(layer, length)
        if factor is not None:
            q_last = q_last * torch.as_tensor(np.asarray(factor, dtype=np.float64))[:, None]
        return self._rotated(q_last, length, self.layer_angles(layer))

    def cross(self, layer: int, hidden, query_keys=None) -> np.ndarray:
        """(B, H, T, T): ``cross[..., c, p]`` = logit from the last query to key content c
        placed at position p.  Keys depend on content only (LayerNorm and projections act
        per token), so the whole matrix is one matmul of keys against the query rotated by
        every offset; its diagonal is the unswapped row.  ``query_keys``: that layer's entry
        of ``hidden_and_keys`` (else computed from ``hidden``)."""
        if query_keys is None:
            query_keys = self.last_query_keys(layer, hidden)
        return self.crosses([query_keys], layers=[layer])[0]

    def crosses(self, query_keys: list, layers=None) -> np.ndarray:
        """(L, B, H, T, T): ``cross`` of L layers from their ``hidden_and_keys`` entries (same
        B, H, T) in one array, so the score step after it runs once on all layers.
        ``layers``: the layer index of each entry (default 0, 1, ..), which picks its angles
        and query factor.  Layer by layer inside: one layer's rotated queries stay in cache,
        all layers' would not (2x slower when measured).  (torch on numpy memory: zero-copy,
        and its elementwise and batched products are 2-3x faster than numpy's on these sizes.)"""
        layers = range(len(query_keys)) if layers is None else list(layers)
        if len(layers) != len(query_keys):
            raise ValueError(
                f"crosses got {len(query_keys)} (query, keys) entries but {len(layers)} layer indices"
            )
        out = []
        for layer, (q, k) in zip(layers, query_keys):
            rotated = self.positioned_query(layer, torch.from_numpy(q), k.shape[-2])  # (B, H, T_p, hd)
            out.append(torch.matmul(torch.from_numpy(k), rotated.transpose(-1, -2)))
        return torch.stack(out).mul_(self.scale).numpy()

    def plane_terms(self, layer: int, hidden) -> tuple[np.ndarray, np.ndarray]:
        """Each last-token logit split by rotary plane: ``terms`` (B, H, T, rotary_dim/2), the
        plane-k part of ``k_j . R_(T-1-j) q`` (times the scale), and ``rest`` (B, H, T), the
        non-rotary dims; ``terms.sum(-1) + rest`` is the logit (query factor included).  In a
        NoPE layer the "planes" are plain dimension pairs: no position in them."""
        q, k = self.last_query_keys(layer, hidden)
        rotated = self.rotated_queries(q, k.shape[-2], layer)
        a, b = plane_indices(self.head_dim, self.rotary_dim, self.pairing)
        terms = (k[..., a] * rotated[..., a] + k[..., b] * rotated[..., b]) * self.scale
        rest = (k[..., self.rotary_dim :] * rotated[..., self.rotary_dim :]).sum(-1) * self.scale
        return terms, rest

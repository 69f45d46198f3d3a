"""The analysis adapter (``training.analysis.adapter_base.Adapter``) of Hugging Face Gemma 3 text
models (``Gemma3ForCausalLM``, config ``Gemma3TextConfig``, model_type ``gemma3_text``).

What Gemma 3 adds to LLaMA (``hf_adapters.HFLlamaAdapter``), each read from the model the way
transformers' own forward pass reads it:

* **A RoPE base per layer.**  ``config.layer_types[i]`` is ``sliding_attention`` or
  ``full_attention``, and ``config.rope_parameters[type]["rope_theta"]`` is that type's base
  (``Gemma3RotaryEmbedding`` builds one table per type; Gemma 3 270M: 10,000 sliding,
  1,000,000 full).  Each layer's angles are ``theory.rope.rope_angles(head_dim, base)``:
  ``layer_angles(i)``, ``layer_base(i)``, ``layer_kind(i)`` ("sliding" / "full").  Every derived
  route (cross matrix, plane terms) asks ``layer_angles``, so frequency use is in the layer's
  own base.  There is no single ``base``: it is None, and a reader needing one asks the layer.
* **QK RMSNorm before the rotation.**  The model's own ``q_norm`` and ``k_norm`` (Gemma's
  ``(1 + weight)`` RMSNorm; transformers computes it in float32 whatever the model's dtype) act
  on each head's query and key; ``queries_keys`` returns them normed and unrotated.  The norm
  acts per token and head, so a key still depends on its content only and the cross matrix
  holds.
* **Grouped-query keys** (``num_key_value_heads``, as ``repeat_kv``) and the scale
  ``query_pre_attn_scalar ** -0.5`` (the attention module's own ``scaling``).
* **The sliding window.**  transformers' ``sliding_window_overlay`` lets query i see key j when
  ``j > i - sliding_window`` (and j <= i): ``sliding_window`` positions, itself included, so
  the last query sees offsets 0 .. W-1.  Keys further back get logit -inf in every route
  (``last_logits``, ``crosses``, the ``rest`` of ``plane_terms``): softmax gives them 0, as
  transformers' additive mask does, and a swap never moves content into a hidden position.
* **Refused**: attention-logit soft-capping (transformers 5's Gemma 3 attention does not pass
  ``attn_logit_softcapping`` to its attention function, and a capped logit is not the bilinear
  form the cross matrix is built on), bidirectional attention, and any RoPE type but the
  default one (no length scaling to model).
"""

from __future__ import annotations

import numpy as np
import torch

from theory.rope import rope_angles

from .hf_adapters import _HalvesAdapter

__all__ = ["HFGemma3Adapter", "LAYER_KINDS"]

LAYER_KINDS = {"sliding_attention": "sliding", "full_attention": "full"}


def layer_rope(config) -> tuple[list[str], list[float]]:
    """(kind of each layer, RoPE base of each layer) from a Gemma 3 text config; ValueError
    naming what is not supported."""
    types = list(getattr(config, "layer_types", None) or [])
    if len(types) != config.num_hidden_layers:
        raise ValueError(f"Gemma 3 config has {len(types)} layer_types for {config.num_hidden_layers} layers")
    unknown = sorted(set(types) - set(LAYER_KINDS))
    if unknown:
        raise ValueError(f"Gemma 3 layer types {unknown} not supported; allowed: {sorted(LAYER_KINDS)}")
    params = dict(getattr(config, "rope_parameters", None) or {})
    bases = {}
    for layer_type in set(types):
        rope = params.get(layer_type)
        if not isinstance(rope, dict) or "rope_theta" not in rope:
            raise ValueError(f"Gemma 3 config has no rope_parameters[{layer_type!r}]['rope_theta']")
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"only the default RoPE is supported, got rope_type {rope.get('rope_type')!r} "
                             f"for {layer_type}")
        bases[layer_type] = float(rope["rope_theta"])
    return [LAYER_KINDS[t] for t in types], [bases[t] for t in types]


def _refuse_unsupported(config) -> None:
    if getattr(config, "attn_logit_softcapping", None) is not None:
        raise ValueError(f"Gemma 3 attn_logit_softcapping = {config.attn_logit_softcapping} is not supported "
                         f"(transformers does not apply it; the cross matrix needs uncapped logits); allowed: None")
    if getattr(config, "use_bidirectional_attention", False):
        raise ValueError("Gemma 3 with use_bidirectional_attention = True is not supported; allowed: False (causal)")


class HFGemma3Adapter(_HalvesAdapter):
    """transformers.Gemma3ForCausalLM (module doc): per-layer bases, QK norm, GQA, sliding window."""

    family = "hf-gemma3"
    base = None  # one per layer: layer_base(i)

    def __init__(self, model):
        from transformers.models.gemma3.modeling_gemma3 import apply_rotary_pos_emb

        c = model.config
        _refuse_unsupported(c)
        self.kinds, self.bases = layer_rope(c)
        self.n_heads = c.num_attention_heads
        self.n_kv_heads = c.num_key_value_heads or c.num_attention_heads
        self.head_dim = c.head_dim
        self.rotary_dim = self.head_dim
        self.window = int(c.sliding_window) if "sliding" in self.kinds else None
        self._rope_fn = apply_rotary_pos_emb
        self.model = model.eval()
        self.layers = model.model.layers
        self.n_layers = len(self.layers)
        tables = {b: np.asarray(rope_angles(self.rotary_dim, b), dtype=np.float64) for b in set(self.bases)}
        self._layer_angles = [tables[b] for b in self.bases]
        self.angles = self._layer_angles[0]  # the base class's default table; every route asks layer_angles
        self.scale = float(self.layers[0].self_attn.scaling)

    # ---- per layer ------------------------------------------------------------------------------
    def layer_angles(self, layer):
        return self._layer_angles[layer]

    def layer_base(self, layer: int) -> float:
        return self.bases[layer]

    def layer_kind(self, layer: int) -> str:
        """"sliding" (sliding-window attention) or "full"."""
        return self.kinds[layer]

    def visible_keys(self, layer: int, length: int) -> np.ndarray:
        """(length,) bool: the key positions the last query (position length-1) may see."""
        offsets = (length - 1) - np.arange(length)
        if self.kinds[layer] == "sliding":
            return offsets < self.window
        return np.ones(length, dtype=bool)

    # ---- the family's own computation -----------------------------------------------------------
    def _torch_qk(self, layer, hidden, last_only):
        """Normed, unrotated queries (B, H, t, hd) and keys repeated per query head (B, H, T, hd)."""
        block = self.layers[layer]
        attn = block.self_attn
        with torch.no_grad():
            h = block.input_layernorm(hidden)
            q = attn.q_norm(self._split_heads(attn.q_proj(h[:, -1:] if last_only else h), self.n_heads))
            k = attn.k_norm(self._split_heads(attn.k_proj(h), self.n_kv_heads))
            return q, k.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)

    def last_logits(self, layer, hidden):
        q, k = self._torch_qk(layer, hidden, last_only=True)
        angles = self.layer_angles(layer)
        with torch.no_grad():
            T = k.shape[-2]
            row = self._last_row(self._apply(q, T - 1, angles), self._apply(k, 0, angles), self.scale)
        return np.where(self.visible_keys(layer, T), row, -np.inf)

    # ---- the derived routes, masked -------------------------------------------------------------
    def crosses(self, query_keys, layers=None):
        layers = list(range(len(query_keys)) if layers is None else layers)
        out = super().crosses(query_keys, layers)  # (L, B, H, T_content, T_position)
        for i, layer in enumerate(layers):
            out[i][..., ~self.visible_keys(layer, out.shape[-1])] = -np.inf
        return out

    def plane_terms(self, layer, hidden):
        terms, rest = super().plane_terms(layer, hidden)  # (B, H, T, planes), (B, H, T)
        visible = self.visible_keys(layer, rest.shape[-1])
        return np.where(visible[:, None], terms, 0.0), np.where(visible, rest, -np.inf)

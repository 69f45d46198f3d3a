"""The analysis adapter (``training.analysis.adapter_base.Adapter``) of Hugging Face Gemma 3 text
models (``Gemma3ForCausalLM``, config ``Gemma3TextConfig``, model_type ``gemma3_text``).

What Gemma 3 adds to LLaMA (``llama_adapters.HFLlamaAdapter``, which computes the QK norm and
masks the window for every LLaMA-like family), each read from the model the way
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
* **The sliding window** on the ``sliding_attention`` layers: the last query sees offsets
  0 .. W-1, keys further back get logit -inf in every route (``llama_adapters`` module doc).
* **Refused**: attention-logit soft-capping (transformers 5's Gemma 3 attention does not pass
  ``attn_logit_softcapping`` to its attention function, and a capped logit is not the bilinear
  form the cross matrix is built on), bidirectional attention, and any RoPE type but the
  default one (per-layer-type scaling is not read yet).
"""

from __future__ import annotations

import numpy as np

from theory.rope import rope_angles

from .llama_adapters import HFLlamaAdapter

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
            raise ValueError(
                f"only the default RoPE is supported, got rope_type {rope.get('rope_type')!r} "
                f"for {layer_type}"
            )
        bases[layer_type] = float(rope["rope_theta"])
    return [LAYER_KINDS[t] for t in types], [bases[t] for t in types]


def _refuse_unsupported(config) -> None:
    if getattr(config, "attn_logit_softcapping", None) is not None:
        raise ValueError(
            f"Gemma 3 attn_logit_softcapping = {config.attn_logit_softcapping} is not supported "
            f"(transformers does not apply it; the cross matrix needs uncapped logits); allowed: None"
        )
    if getattr(config, "use_bidirectional_attention", False):
        raise ValueError(
            "Gemma 3 with use_bidirectional_attention = True is not supported; allowed: False (causal)"
        )


class HFGemma3Adapter(HFLlamaAdapter):
    """transformers.Gemma3ForCausalLM (module doc): per-layer bases, QK norm, GQA, sliding window;
    the computation and the window masking are the LLaMA adapter's (``llama_adapters``)."""

    family = "hf-gemma3"
    module = "gemma3"
    qk_norm = "head"
    base = None  # one per layer: layer_base(i)

    def refuse_config(self, config):
        _refuse_unsupported(config)

    def read_rope(self, config):
        self.kinds, self.bases = layer_rope(config)
        self.rope_type, self.max_length = "default", None
        tables = {b: np.asarray(rope_angles(self.rotary_dim, b), dtype=np.float64) for b in set(self.bases)}
        self._layer_angles = [tables[b] for b in self.bases]
        self.angles = self._layer_angles[0]  # the base class's default table; every route asks layer_angles

    def layer_windows(self, config):
        self.window = int(config.sliding_window) if "sliding" in self.kinds else None
        return [self.window if kind == "sliding" else None for kind in self.kinds]

    # ---- per layer ------------------------------------------------------------------------------
    def layer_angles(self, layer):
        return self._layer_angles[layer]

    def layer_base(self, layer: int) -> float:
        return self.bases[layer]

    def layer_kind(self, layer: int) -> str:
        """ "sliding" (sliding-window attention) or "full"."""
        return self.kinds[layer]

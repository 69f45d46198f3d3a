"""Adapters (``training.analysis.adapter_base.Adapter``) of the LLaMA-like Hugging Face
families: separate q/k/v projections, ``rotate_half`` pairs over the whole head, grouped-query
attention (query head h reads key head h // (n_heads / n_kv_heads), as ``repeat_kv``).

What differs between them, each read where transformers' own forward pass reads it:

* **Attention input**: the layer's ``input_layernorm`` of the hidden state; OLMo 2 normalises
  after attention instead (``post_attention_layernorm``), so its attention reads the hidden
  state as it enters the layer.
* **QK norm**: none (LLaMA, Mistral, Qwen2); per head over ``head_dim`` after the split into
  heads (Qwen3; Gemma 3, ``gemma3_adapter``); over all heads at once before the split (OLMo 2:
  ``q_norm`` spans ``n_heads * head_dim``, ``k_norm`` ``n_kv_heads * head_dim``).  The norm
  acts per token, so a key still depends on its content only and the cross matrix holds.
* **Sliding window**: none (LLaMA, OLMo 2); ``config.sliding_window`` on every layer (Mistral,
  when not None); on the layers ``config.layer_types`` marks ``sliding_attention`` (Qwen2,
  Qwen3: only with ``use_sliding_window``; Gemma 3).  transformers' ``sliding_window_overlay``
  lets query i see key j when ``i - W < j <= i``, so the last query sees offsets 0 .. W-1.
  Keys further back get logit -inf in every route (``last_logits``, ``crosses``, the ``rest``
  of ``plane_terms``): softmax gives them 0, as transformers' additive mask does, and a swap
  never moves content into a hidden position.  ``layer_kind`` says "sliding" or "full".
* **Biases** (Qwen2's q/k/v) live inside the projections the adapter calls.
* **RoPE**: ``training.analysis.rope_scaling`` (default, linear, dynamic within
  ``max_position_embeddings``, llama3); one table for every layer (Gemma 3: one per layer type).
"""

from __future__ import annotations

from importlib import import_module

import numpy as np
import torch

from .adapter_base import to_numpy
from .hf_adapters import HalvesAdapter
from .rope_scaling import dynamic_limit, rope_parameters, scaled_angles

__all__ = [
    "HFLlamaAdapter",
    "HFMistralAdapter",
    "HFQwen2Adapter",
    "HFQwen3Adapter",
    "HFOlmo2Adapter",
    "windows_from_layer_types",
]


def windows_from_layer_types(config, n_layers: int) -> list[int | None]:
    """Per layer the sliding window from ``config.layer_types`` (absent: every layer full);
    ValueError naming what is not supported."""
    types = list(getattr(config, "layer_types", None) or ["full_attention"] * n_layers)
    if len(types) != n_layers:
        raise ValueError(f"config has {len(types)} layer_types for {n_layers} layers")
    unknown = sorted(set(types) - {"sliding_attention", "full_attention"})
    if unknown:
        raise ValueError(f"layer types {unknown} not supported; allowed: full_attention, sliding_attention")
    window = getattr(config, "sliding_window", None)
    if "sliding_attention" in types and window is None:
        raise ValueError("config marks sliding_attention layers but has no sliding_window")
    return [int(window) if t == "sliding_attention" else None for t in types]


class HFLlamaAdapter(HalvesAdapter):
    """transformers.LlamaForCausalLM; the other families change the class attributes and hooks."""

    family = "hf-llama"
    module = "llama"  # transformers.models.<module>.modeling_<module>: the family's own rotary function
    qk_norm = None  # None, "head" (per head, after the split) or "all" (all heads, before it)
    pre_norm = True  # False: attention reads the layer's input as it is (OLMo 2)

    def __init__(self, model):
        c = model.config
        self.refuse_config(c)
        self.n_heads = c.num_attention_heads
        self.n_kv_heads = c.num_key_value_heads or c.num_attention_heads
        self.head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        self.rotary_dim = self.head_dim
        self._rope_fn = import_module(
            f"transformers.models.{self.module}.modeling_{self.module}"
        ).apply_rotary_pos_emb
        self.model = model.eval()
        self.layers = model.model.layers
        self.n_layers = len(self.layers)
        self.read_rope(c)
        self.windows = self.layer_windows(c)
        self.scale = float(self.layers[0].self_attn.scaling)

    # ---- what a family reads from its config ----------------------------------------------------
    def refuse_config(self, config) -> None:
        """ValueError for a config the adapter does not model (none here)."""

    def read_rope(self, config) -> None:
        """``rope`` (the parameters), ``rope_type``, ``base``, ``angles`` and ``max_length``."""
        self.rope = rope_parameters(config)
        self.rope_type = self.rope["rope_type"]
        self.base = float(self.rope["rope_theta"])
        self.angles = scaled_angles(self.rope, self.rotary_dim)
        self.max_length = dynamic_limit(self.rope, config)

    def layer_windows(self, config) -> list[int | None]:
        """Per layer the sliding window, None for full causal attention (LLaMA: none)."""
        return [None] * self.n_layers

    # ---- per layer ------------------------------------------------------------------------------
    def layer_kind(self, layer: int) -> str:
        """ "sliding" (sliding-window attention) or "full"."""
        return "full" if self.windows[layer] is None else "sliding"

    def visible_keys(self, layer: int, length: int) -> np.ndarray:
        """(length,) bool: the key positions the last query (position length-1) may see."""
        window = self.windows[layer]
        if window is None:
            return np.ones(length, dtype=bool)
        return (length - 1) - np.arange(length) < window

    # ---- the family's own computation -----------------------------------------------------------
    def hidden_states(self, ids, attention_mask=None):
        length = np.shape(ids)[-1]
        if self.max_length is not None and length > self.max_length:  # transformers would rescale the angles
            raise ValueError(
                f"inputs of {length} tokens exceed max_position_embeddings = {self.max_length}, past "
                f"which rope_type 'dynamic' changes its angles; allowed: up to {self.max_length}"
            )
        return super().hidden_states(ids, attention_mask)

    def _torch_qk(self, layer, hidden, last_only):
        """(Normed) unrotated queries (B, H, t, hd) and keys repeated per query head (B, H, T, hd)."""
        block = self.layers[layer]
        attn = block.self_attn
        with torch.no_grad():
            h = block.input_layernorm(hidden) if self.pre_norm else hidden
            q, k = attn.q_proj(h[:, -1:] if last_only else h), attn.k_proj(h)
            if self.qk_norm == "all":
                q, k = attn.q_norm(q), attn.k_norm(k)
            q, k = self._split_heads(q, self.n_heads), self._split_heads(k, self.n_kv_heads)
            if self.qk_norm == "head":
                q, k = attn.q_norm(q), attn.k_norm(k)
            return q, k.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)

    def last_logits(self, layer, hidden):
        q, k = self._torch_qk(layer, hidden, last_only=True)
        angles = self.layer_angles(layer)
        with torch.no_grad():
            T = k.shape[-2]
            row = self._last_row(self._apply(q, T - 1, angles), self._apply(k, 0, angles), self.scale)
        return np.where(self.visible_keys(layer, T), row, -np.inf)

    def queries_keys(self, layer, hidden, last_query=False):
        q, k = self._torch_qk(layer, hidden, last_only=last_query)
        return to_numpy(q), to_numpy(k)

    # ---- the derived routes, masked where a window hides keys -----------------------------------
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


class HFMistralAdapter(HFLlamaAdapter):
    """transformers.MistralForCausalLM: LLaMA with ``sliding_window`` on every layer."""

    family = "hf-mistral"
    module = "mistral"

    def layer_windows(self, config):
        window = getattr(config, "sliding_window", None)
        return [None if window is None else int(window)] * self.n_layers


class HFQwen2Adapter(HFLlamaAdapter):
    """transformers.Qwen2ForCausalLM: LLaMA with q/k/v biases and per-layer sliding windows."""

    family = "hf-qwen2"
    module = "qwen2"

    def layer_windows(self, config):
        return windows_from_layer_types(config, self.n_layers)


class HFQwen3Adapter(HFQwen2Adapter):
    """transformers.Qwen3ForCausalLM: Qwen2's windows, RMSNorm on each head's query and key."""

    family = "hf-qwen3"
    module = "qwen3"
    qk_norm = "head"


class HFOlmo2Adapter(HFLlamaAdapter):
    """transformers.Olmo2ForCausalLM: norms after attention, RMSNorm over all heads' queries
    (and keys) before the split."""

    family = "hf-olmo2"
    module = "olmo2"
    qk_norm = "all"
    pre_norm = False

"""Adapters (``training.analysis.adapter_base.Adapter``) for Hugging Face RoPE families: GPT-J
(adjacent pairs) and GPT-NeoX (``rotate_half`` pairs, partial rotary); the LLaMA-like
families (grouped-query attention, QK norm, sliding windows, scaled RoPE) build on
``HalvesAdapter`` in ``training.analysis.llama_adapters``.  Each reads the hidden states
with forward pre-hooks and recomputes the last-token logits with the family's own
projections and rotary function (the ``rerun`` route), on float64 rotary tables of the same
angles (module doc of ``adapter_base``).
"""

from __future__ import annotations

import numpy as np
import torch

from theory.rope import rope_angles

from .adapter_base import Adapter, to_numpy

__all__ = ["HFGPTJAdapter", "HFGPTNeoXAdapter"]


def _capture_layer_inputs(layers, run) -> list:
    """Hidden states entering each module of ``layers`` during ``run()`` (forward pre-hooks,
    so it does not depend on how a family reports ``output_hidden_states``)."""
    captured = [None] * len(layers)

    def hook_for(i):
        def hook(module, args, kwargs):
            captured[i] = args[0] if args else kwargs["hidden_states"]

        return hook

    handles = [
        layer.register_forward_pre_hook(hook_for(i), with_kwargs=True) for i, layer in enumerate(layers)
    ]
    try:
        with torch.no_grad():
            run()
    finally:
        for h in handles:
            h.remove()
    return captured


class _HFAdapter(Adapter):
    """Shared by the HF families: hooks for the hidden states, exact float64 rotary tables."""

    base = 10000.0

    def __init__(self, model, layers):
        self.model = model.eval()
        self.layers = layers
        self.n_layers = len(layers)
        self.angles = np.asarray(rope_angles(self.rotary_dim, self.base), dtype=np.float64)

    def hidden_states(self, ids, attention_mask=None):
        """The states entering each layer, from the base model (``model.base_model``: no LM
        head, which would cost a vocabulary-sized matmul per position for nothing).

        ``attention_mask`` (B, T; 0 = padding): for left-padded batches.  HF's forward numbers
        positions 0..T-1 whatever the mask (only ``generate`` derives them from it), so each
        row's position ids are passed as its count of real tokens so far: the first real token
        is at position 0, as it would be unpadded (RoPE's logits depend only on offsets, but
        the states then match the unpadded run's to rounding, tested)."""
        ids = torch.as_tensor(np.asarray(ids), dtype=torch.long)
        kwargs = {"input_ids": ids}
        if attention_mask is not None:
            mask = torch.as_tensor(np.asarray(attention_mask), dtype=torch.long)
            kwargs.update(attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0))
        return _capture_layer_inputs(self.layers, lambda: self.model.base_model(**kwargs))

    def _phases(self, length: int, like: torch.Tensor, angles=None) -> torch.Tensor:
        """(1, T, rotary_dim/2): position x angle, in float64, cast to the activations' dtype.
        ``angles``: one layer's table where layers differ (default ``self.angles``)."""
        angles = self.angles if angles is None else angles
        phase = (
            torch.arange(length, dtype=torch.float64)[:, None] * torch.from_numpy(np.asarray(angles))[None, :]
        )
        return phase[None].to(like.dtype)

    def _split_heads(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, heads, self.head_dim).transpose(1, 2)  # (B, heads, T, hd)

    @staticmethod
    def _last_row(q_rot: torch.Tensor, k_rot: torch.Tensor, scale: float) -> np.ndarray:
        """(B, H, T) from the rotated last query (B, H, 1, hd) and rotated keys (B, H, T, hd)."""
        return to_numpy((q_rot @ k_rot.transpose(-1, -2))[..., 0, :] * scale)


class HFGPTJAdapter(_HFAdapter):
    """transformers.GPTJForCausalLM: adjacent pairs on the first ``rotary_dim`` dims, base 10000."""

    family = "hf-gptj"
    pairing = "adjacent"

    def __init__(self, model):
        c = model.config
        self.n_heads = c.n_head
        self.head_dim = c.n_embd // c.n_head
        self.rotary_dim = c.rotary_dim or self.head_dim
        super().__init__(model, model.transformer.h)
        self.scale = float(self.layers[0].attn.scaling)

    def queries_keys(self, layer, hidden, last_query=False):
        block = self.layers[layer]
        with torch.no_grad():
            h = block.ln_1(hidden)
            return (
                to_numpy(self._split_heads(block.attn.q_proj(h[:, -1:] if last_query else h), self.n_heads)),
                to_numpy(self._split_heads(block.attn.k_proj(h), self.n_heads)),
            )

    def last_logits(self, layer, hidden):
        from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb

        block, r = self.layers[layer], self.rotary_dim
        with torch.no_grad():
            h = block.ln_1(hidden)
            B, T, _ = h.shape
            # HF's layout before its transpose: (B, T, heads, hd); sin/cos (1, T, r/2)
            q = block.attn.q_proj(h[:, -1:]).view(B, 1, self.n_heads, self.head_dim)
            k = block.attn.k_proj(h).view(B, T, self.n_heads, self.head_dim)
            phase = self._phases(T, h)
            sin, cos = phase.sin(), phase.cos()
            q = torch.cat([apply_rotary_pos_emb(q[..., :r], sin[:, -1:], cos[:, -1:]), q[..., r:]], -1)
            k = torch.cat([apply_rotary_pos_emb(k[..., :r], sin, cos), k[..., r:]], -1)
            return self._last_row(q.transpose(1, 2), k.transpose(1, 2), self.scale)


class HalvesAdapter(_HFAdapter):
    """NeoX and LLaMA: ``rotate_half`` pairs (k, k + r/2) on the first ``rotary_dim`` dims."""

    pairing = "halves"

    def _apply(self, x: torch.Tensor, start: int, angles=None) -> torch.Tensor:
        """Rotate (B, H, t, hd) sitting at positions start.. with the family's own function
        (``angles``: as in ``_phases``)."""
        T = start + x.shape[-2]
        freqs = self._phases(T, x, angles)[:, start:]
        emb = torch.cat([freqs, freqs], dim=-1)
        r = self.rotary_dim
        rotated, _ = self._rope_fn(x[..., :r], x[..., :r], emb.cos(), emb.sin())
        return torch.cat([rotated, x[..., r:]], -1)

    def last_logits(self, layer, hidden):
        q, k = self._torch_qk(layer, hidden, last_only=True)
        with torch.no_grad():
            T = k.shape[-2]
            return self._last_row(self._apply(q, T - 1), self._apply(k, 0), self.scale)

    def queries_keys(self, layer, hidden, last_query=False):
        q, k = self._torch_qk(layer, hidden, last_only=last_query)
        return to_numpy(q), to_numpy(k)


def _default_rope(config) -> dict:
    params = dict(getattr(config, "rope_parameters", None) or {})
    if params.get("rope_type", "default") != "default":
        raise ValueError(f"only the default RoPE is supported, got rope_type {params.get('rope_type')!r}")
    return params


class HFGPTNeoXAdapter(HalvesAdapter):
    """transformers.GPTNeoXForCausalLM: fused qkv laid out per head as [q | k | v];
    partial rotary (``partial_rotary_factor``, formerly ``rotary_pct``)."""

    family = "hf-gpt-neox"

    def __init__(self, model):
        from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb

        c = model.config
        params = _default_rope(c)
        self.n_heads = c.num_attention_heads
        self.head_dim = c.hidden_size // c.num_attention_heads
        self.rotary_dim = int(self.head_dim * params.get("partial_rotary_factor", 1.0))
        self.base = float(params.get("rope_theta", 10000.0))
        self._rope_fn = apply_rotary_pos_emb
        super().__init__(model, model.gpt_neox.layers)
        self.scale = float(self.layers[0].attention.scaling)

    def _torch_qk(self, layer, hidden, last_only):
        block = self.layers[layer]
        with torch.no_grad():
            h = block.input_layernorm(hidden)
            B, T, _ = h.shape
            qkv = (
                block.attention.query_key_value(h).view(B, T, self.n_heads, 3 * self.head_dim).transpose(1, 2)
            )
            q, k, _ = qkv.chunk(3, dim=-1)
            return (q[..., -1:, :] if last_only else q), k

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
  (``"adjacent"`` for GPT-J, ``"halves"`` for NeoX and LLaMA), ``rotary_dim``, ``scale``.

From these the base class derives, with ``theory.rope`` doing every rotation, the cross
matrix ``cross[c, p]`` = logit of key content c placed at position p (``fast`` route:
``theory.scores.swapped_rows_from_cross``) and the per-plane split of every logit
(``plane_terms``, for frequency use).  Tests prove both routes give the same logits.

Precision: HF builds its rotary tables in float32 (a ~1e-7 relative error that the scores'
tau = 1e-4 would amplify), so the rerun routes of the HF families apply HF's rotary function
to float64 tables of the same angles; ``tests/test_adapters.py`` checks the adapters'
attention against HF's own ``output_attentions`` in float32.
"""

from __future__ import annotations

import numpy as np
import torch

from theory.rope import plane_indices, rope_angles, rope_matrix

__all__ = ["Adapter", "OurGPTJAdapter", "HFGPTJAdapter", "HFGPTNeoXAdapter", "HFLlamaAdapter",
           "ConstructionAdapter", "adapter_for", "to_numpy"]


def to_numpy(x) -> np.ndarray:
    """float64 numpy copy of a tensor or array (the analysis does its maths in float64)."""
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


class Adapter:
    """Base class; subclasses set the layout attributes and the four methods."""

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

    # ---- derived, identical for every family --------------------------------------------------
    def rotations(self, length: int) -> np.ndarray:
        """(T, head_dim, head_dim): ``R_(T-1-p)`` for every key position p, built once per length
        by ``theory.rope.rope_matrix`` (identity past ``rotary_dim``)."""
        cache = self.__dict__.setdefault("_rotations", {})
        if length not in cache:
            offsets = (length - 1) - np.arange(length)
            cache[length] = np.stack([rope_matrix(int(o), self.angles, self.head_dim, pairing=self.pairing)
                                      for o in offsets])
        return cache[length]

    def rotated_queries(self, q_last: np.ndarray, length: int) -> np.ndarray:
        """``R_(T-1-p) q`` for every key position p: (..., T, head_dim) from q (..., head_dim).
        One matmul against the stacked matrices: 4x faster than ``theory.rope.rotate`` on the
        broadcast array, and the same map (tests compare it with ``rotate``)."""
        stacked = self.rotations(length).reshape(length * self.head_dim, self.head_dim)
        flat = q_last.reshape(-1, self.head_dim)  # 2-D: one GEMM, not a batch of vector products
        return (flat @ stacked.T).reshape(q_last.shape[:-1] + (length, self.head_dim))

    def cross(self, layer: int, hidden) -> np.ndarray:
        """(B, H, T, T): ``cross[..., c, p]`` = logit from the last query to key content c
        placed at position p.  Keys depend on content only (LayerNorm and projections act
        per token), so the whole matrix is one matmul of keys against the query rotated by
        every offset; its diagonal is the unswapped row."""
        q, k = self.queries_keys(layer, hidden, last_query=True)
        rotated = self.rotated_queries(q[..., -1, :], k.shape[-2])  # (B, H, T_p, hd)
        return np.matmul(k, np.swapaxes(rotated, -1, -2)) * self.scale

    def plane_terms(self, layer: int, hidden) -> tuple[np.ndarray, np.ndarray]:
        """Each last-token logit split by rotary plane: ``terms`` (B, H, T, rotary_dim/2), the
        plane-k part of ``k_j . R_(T-1-j) q`` (times the scale), and ``rest`` (B, H, T), the
        non-rotary dims; ``terms.sum(-1) + rest`` is the logit."""
        q, k = self.queries_keys(layer, hidden, last_query=True)
        length = k.shape[-2]
        rotated = self.rotated_queries(q[..., -1, :], length)
        a, b = plane_indices(self.head_dim, self.rotary_dim, self.pairing)
        terms = (k[..., a] * rotated[..., a] + k[..., b] * rotated[..., b]) * self.scale
        rest = (k[..., self.rotary_dim:] * rotated[..., self.rotary_dim:]).sum(-1) * self.scale
        return terms, rest


def _capture_layer_inputs(layers, run) -> list:
    """Hidden states entering each module of ``layers`` during ``run()`` (forward pre-hooks,
    so it does not depend on how a family reports ``output_hidden_states``)."""
    captured = [None] * len(layers)

    def hook_for(i):
        def hook(module, args, kwargs):
            captured[i] = args[0] if args else kwargs["hidden_states"]
        return hook

    handles = [layer.register_forward_pre_hook(hook_for(i), with_kwargs=True) for i, layer in enumerate(layers)]
    try:
        with torch.no_grad():
            run()
    finally:
        for h in handles:
            h.remove()
    return captured


class OurGPTJAdapter(Adapter):
    """training.model.GPTJ: the forward pass exposes everything (``Internals``)."""

    family = "ours-gptj"
    pairing = "adjacent"

    def __init__(self, model):
        self.model = model.eval()
        c = model.config
        self.n_layers, self.n_heads, self.head_dim, self.rotary_dim = c.n_layer, c.n_head, c.head_dim, c.rotary_dim
        self.angles = model.rotary.angles.numpy()
        self.scale = float(model.transformer.h[0].attn.scale)

    def _ids(self, ids):
        return torch.as_tensor(np.asarray(ids), dtype=torch.long)

    def hidden_states(self, ids):
        return self.trace(ids)[0]

    def trace(self, ids):
        with torch.no_grad():
            _, internals = self.model(self._ids(ids), last_only=True, return_internals=True)
        return internals.hidden_in, [to_numpy(x) for x in internals.last_logits]

    def last_logits(self, layer, hidden):
        with torch.no_grad():
            return to_numpy(self.model.layer_last_token_logits(layer, hidden))

    def queries_keys(self, layer, hidden, last_query=False):
        block = self.model.transformer.h[layer]
        with torch.no_grad():
            h = block.ln_1(hidden)
            q = block.attn.heads(block.attn.q_proj, h[:, -1:] if last_query else h)
            return to_numpy(q), to_numpy(block.attn.heads(block.attn.k_proj, h))


class _HFAdapter(Adapter):
    """Shared by the HF families: hooks for the hidden states, exact float64 rotary tables."""

    base = 10000.0

    def __init__(self, model, layers):
        self.model = model.eval()
        self.layers = layers
        self.n_layers = len(layers)
        self.angles = np.asarray(rope_angles(self.rotary_dim, self.base), dtype=np.float64)

    def hidden_states(self, ids):
        ids = torch.as_tensor(np.asarray(ids), dtype=torch.long)
        return _capture_layer_inputs(self.layers, lambda: self.model(input_ids=ids))

    def _phases(self, length: int, like: torch.Tensor) -> torch.Tensor:
        """(1, T, rotary_dim/2): position x angle, in float64, cast to the activations' dtype."""
        phase = torch.arange(length, dtype=torch.float64)[:, None] * torch.from_numpy(self.angles)[None, :]
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
            return (to_numpy(self._split_heads(block.attn.q_proj(h[:, -1:] if last_query else h), self.n_heads)),
                    to_numpy(self._split_heads(block.attn.k_proj(h), self.n_heads)))

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


class _HalvesAdapter(_HFAdapter):
    """NeoX and LLaMA: ``rotate_half`` pairs (k, k + r/2) on the first ``rotary_dim`` dims."""

    pairing = "halves"

    def _apply(self, x: torch.Tensor, start: int) -> torch.Tensor:
        """Rotate (B, H, t, hd) sitting at positions start.. with the family's own function."""
        T = start + x.shape[-2]
        freqs = self._phases(T, x)[:, start:]
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


class HFGPTNeoXAdapter(_HalvesAdapter):
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
            qkv = block.attention.query_key_value(h).view(B, T, self.n_heads, 3 * self.head_dim).transpose(1, 2)
            q, k, _ = qkv.chunk(3, dim=-1)
            return (q[..., -1:, :] if last_only else q), k


class HFLlamaAdapter(_HalvesAdapter):
    """transformers.LlamaForCausalLM: RMSNorm, separate projections, grouped-query
    attention (query head h reads key head h // (n_heads / n_kv_heads), as ``repeat_kv``)."""

    family = "hf-llama"

    def __init__(self, model):
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        c = model.config
        params = _default_rope(c)
        self.n_heads = c.num_attention_heads
        self.n_kv_heads = c.num_key_value_heads or c.num_attention_heads
        self.head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        self.rotary_dim = self.head_dim
        self.base = float(params.get("rope_theta", 10000.0))
        self._rope_fn = apply_rotary_pos_emb
        super().__init__(model, model.model.layers)
        self.scale = float(self.layers[0].self_attn.scaling)

    def _torch_qk(self, layer, hidden, last_only):
        block = self.layers[layer]
        with torch.no_grad():
            h = block.input_layernorm(hidden)
            q = self._split_heads(block.self_attn.q_proj(h[:, -1:] if last_only else h), self.n_heads)
            k = self._split_heads(block.self_attn.k_proj(h), self.n_kv_heads)
            return q, k.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)


class ConstructionAdapter(Adapter):
    """A hand-built construction (``constructions.common.OneLayerModel``): one layer, one
    head, one 2-D plane at angle theta, float64 numpy throughout; ``ids`` are its token ids."""

    family = "construction"
    pairing = "adjacent"
    n_layers, n_heads, head_dim, rotary_dim, scale = 1, 1, 2, 2, 1.0

    def __init__(self, one_layer_model):
        from theory.numbers import FLOAT64

        self.model = one_layer_model
        self.construction = one_layer_model.construction
        self.angles = np.array([self.construction.theta.value(FLOAT64)], dtype=np.float64)

    def hidden_states(self, ids):
        return [np.asarray(self.construction.hidden(np.asarray(ids)), dtype=np.float64)]

    def last_logits(self, layer, hidden):
        return np.asarray(self.model.layer_logits(layer, hidden), dtype=np.float64)[..., None, :]

    def queries_keys(self, layer, hidden, last_query=False):
        self.model._check_layer(layer)
        w = self.construction.weights()
        hidden = np.asarray(hidden, dtype=np.float64)
        queries = hidden[:, -1:] if last_query else hidden
        return (queries @ np.asarray(w.query, dtype=np.float64).T)[:, None], \
            (hidden @ np.asarray(w.key, dtype=np.float64).T)[:, None]


def adapter_for(model) -> Adapter:
    """The adapter of ``model``'s family (an Adapter passes through)."""
    if isinstance(model, Adapter):
        return model
    from constructions.common import OneLayerModel

    from .model import GPTJ

    if isinstance(model, GPTJ):
        return OurGPTJAdapter(model)
    if isinstance(model, OneLayerModel):
        return ConstructionAdapter(model)
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    families = {"gptj": HFGPTJAdapter, "gpt_neox": HFGPTNeoXAdapter, "llama": HFLlamaAdapter}
    if model_type in families:
        return families[model_type](model)
    raise ValueError(f"no adapter for {type(model).__name__} (model_type {model_type!r}); supported: our GPTJ, "
                     f"HF {', '.join(families)}, constructions.common.OneLayerModel")

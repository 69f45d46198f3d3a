"""The adapters of every model family the analysis reads (interface and derived cross
matrix: ``training.analysis.adapter_base``): our GPT-J (``OurGPTJAdapter``, which takes queries and
keys from its own forward pass), the HF families (``training.analysis.hf_adapters``, the LLaMA-like
ones in ``training.analysis.llama_adapters``, Gemma 3 in ``training.analysis.gemma3_adapter``) and
the hand-built constructions; ``adapter_for`` picks one.

``HF_FAMILIES`` is the one list of the HF families read: ``adapter_for`` picks from it, and the
refusal of an unsupported model before it loads (``training.analysis.llm_load``), the help of
``analyze --model`` and the report's text (``supported_families``) are worded from it.
"""

from __future__ import annotations

import numpy as np
import torch

from .adapter_base import Adapter, to_numpy
from .gemma3_adapter import HFGemma3Adapter
from .hf_adapters import HFGPTJAdapter, HFGPTNeoXAdapter
from .llama_adapters import HFLlamaAdapter, HFMistralAdapter, HFOlmo2Adapter, HFQwen2Adapter, HFQwen3Adapter

__all__ = [
    "Adapter",
    "OurGPTJAdapter",
    "HFGPTJAdapter",
    "HFGPTNeoXAdapter",
    "HFLlamaAdapter",
    "HFMistralAdapter",
    "HFQwen2Adapter",
    "HFQwen3Adapter",
    "HFOlmo2Adapter",
    "HFGemma3Adapter",
    "ConstructionAdapter",
    "HF_FAMILIES",
    "GGUF_ARCHITECTURES",
    "adapter_for",
    "supported_families",
    "check_family",
    "to_numpy",
]

# HF config.model_type -> (adapter, the family's name)
HF_FAMILIES = {
    "llama": (HFLlamaAdapter, "LLaMA"),
    "mistral": (HFMistralAdapter, "Mistral"),
    "qwen2": (HFQwen2Adapter, "Qwen2"),
    "qwen3": (HFQwen3Adapter, "Qwen3"),
    "olmo2": (HFOlmo2Adapter, "OLMo 2"),
    "gemma3_text": (HFGemma3Adapter, "Gemma 3"),
    "gpt_neox": (HFGPTNeoXAdapter, "GPT-NeoX"),
    "gptj": (HFGPTJAdapter, "GPT-J"),
}
# a GGUF file's general.architecture -> the model_type transformers gives it, where the two differ
# (transformers.modeling_gguf_pytorch_utils.load_gguf_checkpoint)
GGUF_ARCHITECTURES = {"gemma3": "gemma3_text", "gptneox": "gpt_neox"}


def supported_families() -> str:
    """The HF families read, as "LLaMA (llama), Mistral (mistral), ..." (name and model_type)."""
    return ", ".join(f"{name} ({model_type})" for model_type, (_, name) in HF_FAMILIES.items())


def check_family(model_type, what: str) -> None:
    """ValueError (one line, naming the family and the supported list) unless ``model_type``
    is one of ``HF_FAMILIES``; ``what`` names the model in the message."""
    if model_type not in HF_FAMILIES:
        raise ValueError(
            f"{what}: model family {model_type!r} is not supported; supported: {supported_families()}"
        )


class OurGPTJAdapter(Adapter):
    """training.model.gptj.GPTJ: the forward pass exposes everything (``Internals``)."""

    family = "ours-gptj"
    pairing = "adjacent"

    def __init__(self, model):
        self.model = model.eval()
        c = model.config
        self.n_layers, self.n_heads, self.head_dim, self.rotary_dim = (
            c.n_layer,
            c.n_head,
            c.head_dim,
            c.rotary_dim,
        )
        # p-RoPE's position-free planes are already angle 0 in model.rotary.angles; a NoPE
        # layer (ModelConfig.nope_from_layer) rotates nothing; layer_angles says which
        self.angles = model.rotary.angles.numpy()
        self.base = float(c.rope_base)
        self.scale = float(model.transformer.h[0].attn.scale)

    def layer_angles(self, layer):
        if self.model.transformer.h[layer].attn.use_rope:
            return self.angles
        return np.zeros_like(self.angles)  # the identity rotation (theory.rope.rope_matrix at angle 0)

    def query_factor(self, layer, length):
        """The layer's own ``QueryScale.factor`` at the last position (the formula lives there)."""
        scale = self.model.transformer.h[layer].attn.query_scale
        if scale.kind == "none":
            return None
        with torch.no_grad():
            factor = scale.factor(
                length - 1, 1, self.model.lm_head.weight.device, torch.float64
            )  # (1 or H, 1, 1)
        return np.broadcast_to(to_numpy(factor)[:, 0, 0], (self.n_heads,)).copy()

    def _ids(self, ids):
        return torch.as_tensor(np.asarray(ids), dtype=torch.long, device=self.model.lm_head.weight.device)

    def hidden_states(self, ids):
        return self.trace(ids)[0]

    def trace(self, ids):
        with torch.no_grad():
            _, internals = self.model(self._ids(ids), last_only=True, return_internals=True)
        return internals.hidden_in, [to_numpy(x) for x in internals.last_logits]

    def hidden_and_keys(self, ids):
        with torch.no_grad():
            _, internals = self.model(self._ids(ids), last_only=True, return_internals=True)
        return internals.hidden_in, [
            (to_numpy(q), to_numpy(k)) for q, k in zip(internals.last_query, internals.keys)
        ]

    def last_logits(self, layer, hidden):
        with torch.no_grad():
            return to_numpy(self.model.layer_last_token_logits(layer, hidden))

    def queries_keys(self, layer, hidden, last_query=False):
        block = self.model.transformer.h[layer]
        with torch.no_grad():
            h = block.ln_1(hidden)
            q = block.attn.heads(block.attn.q_proj, h[:, -1:] if last_query else h)
            return to_numpy(q), to_numpy(block.attn.heads(block.attn.k_proj, h))


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
        return (queries @ np.asarray(w.query, dtype=np.float64).T)[:, None], (
            hidden @ np.asarray(w.key, dtype=np.float64).T
        )[:, None]


def adapter_for(model) -> Adapter:
    """The adapter of ``model``'s family (an Adapter passes through)."""
    if isinstance(model, Adapter):
        return model
    from constructions.export import OneLayerModel
    from training.model.gptj import GPTJ

    if isinstance(model, GPTJ):
        return OurGPTJAdapter(model)
    if isinstance(model, OneLayerModel):
        return ConstructionAdapter(model)
    _refuse_transformer_lens(model)
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    if model_type in HF_FAMILIES:
        return HF_FAMILIES[model_type][0](model)
    raise ValueError(
        f"no adapter for {type(model).__name__} (model_type {model_type!r}); supported: our GPTJ, "
        f"HF {supported_families()}, constructions.common.OneLayerModel"
    )


def _refuse_transformer_lens(model) -> None:
    """A TransformerLens model is refused at once.  A 4.x ``TransformerBridge`` carries the HF
    config, so it would otherwise pass for an HF model and fail deep inside the scores (its
    module tree is not HF's); its ``original_model`` IS the HF model, which the adapters read
    directly (tests/test_llm_models.py checks they agree with TransformerLens's patterns).
    A legacy ``HookedTransformer`` has folded, re-centred weights and no HF module tree."""
    module = type(model).__module__ or ""
    if not module.startswith("transformer_lens"):
        return
    if hasattr(model, "original_model"):
        raise ValueError(
            f"adapter_for got a TransformerLens {type(model).__name__}; pass the HF model it wraps "
            f"instead: adapter_for(bridge.original_model)"
        )
    raise ValueError(
        f"no adapter for TransformerLens {type(model).__name__}; load the HF model (transformers) and "
        f"pass that"
    )

"""The GPT-J decoder of the paper (Appendix C.2), written out in one file.

Architecture (HF ``GPTJForCausalLM`` semantics, proven equal by ``tests/test_model.py``):

* token embedding ``wte`` and embedding dropout; no learned positions (RoPE only);
* ``n_layer`` *parallel* blocks: one LayerNorm ``ln_1`` feeds both branches and
  ``x <- x + attn(ln_1(x)) + mlp(ln_1(x))``;
* attention: bias-free ``q/k/v/out`` projections, rotary on the first
  ``rotary_dim`` dims of each head with GPT-J's *adjacent* pairs ``(2k, 2k+1)``
  and angles ``theory.rope.rope_angles`` (base 10000), logits scaled by
  ``1 / sqrt(head_dim)`` exactly as HF GPT-J (``scaling = head_dim ** -0.5``);
* MLP ``fc_in -> gelu_new -> fc_out`` (both with bias); final LayerNorm ``ln_f``;
  untied ``lm_head`` *with* bias.

Parameter names equal HF's (``transformer.h.3.attn.q_proj.weight`` ...), so a
state dict moves between the two without renaming (see ``training.run.checkpoints``).

RoPE variants (``ModelConfig.nope_from_layer``, ``rope_fraction``, ``rope_base``,
``query_scale``; building blocks in ``training.model.layers``) are off by default: the
paper's model is exactly HF's.  A variant is saved with its own ``config.json`` model type,
which only our loader reads (``ModelConfig.to_config_dict``).

Internals for the positional/symbolic analysis come out of the same forward pass
(``forward(idx, return_internals=True)``); ``layer_last_token_logits`` recomputes
one layer's last-token logits from (possibly permuted) hidden states entering it.

Numerics: the rotary table ``e^(i position angle)`` is computed in float64 from
``rope_angles`` and cast to the activation precision.  HF builds its sin/cos table
in float32 (``float32(position) * float32(angle)``), whose angle error grows with
position (about 2e-4 rad at position 5,000); ours is correctly rounded at every
length.  That table is the only difference: in float64 with HF's table replaced by
the exact one, logits agree to 1e-15 (tests/test_model.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import VARIANT_FIELDS, ModelConfig
from .layers import Dropout, QueryScale, Rotary

__all__ = [
    "ModelConfig",
    "GPTJ",
    "Internals",
    "gelu_new",
    "VARIANT_FIELDS",
    "INFERENCE_QUERY_SCALES",
    "scale_queries_at_inference",
]

# what ``scale_queries_at_inference`` can switch on: a learned scale has no trained weights to apply
INFERENCE_QUERY_SCALES = ("log",)


def gelu_new(x: torch.Tensor) -> torch.Tensor:
    """HF's ``gelu_new``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    ``F.gelu(approximate="tanh")`` is the same formula as one fused kernel (faster
    to train); it agrees with HF's op-by-op version to rounding (tested).
    """
    return F.gelu(x, approximate="tanh")


class Attention(nn.Module):
    def __init__(self, config: ModelConfig, rotary: Rotary, use_rope: bool = True):
        super().__init__()
        self.n_head, self.head_dim = config.n_head, config.head_dim
        self.q_proj = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.k_proj = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.v_proj = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.out_proj = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.attn_pdrop = config.attn_pdrop
        self.resid_dropout = Dropout(config.resid_pdrop)
        self.rotary = rotary  # shared by all layers, not a parameter
        self.use_rope = use_rope  # False: a NoPE layer (ModelConfig.nope_from_layer)
        self.query_scale = QueryScale(config.query_scale, config.n_head)
        self.scale = self.head_dim**-0.5  # HF GPT-J's scaling

    def position(self, x: torch.Tensor, start: int = 0, query: bool = False) -> torch.Tensor:
        """What position does to queries or keys (B, H, T, hd) at positions start..: RoPE
        (unless a NoPE layer), then, for queries, the length scale."""
        if self.use_rope:
            x = self.rotary(x, start=start)
        return self.query_scale(x, start=start) if query else x

    def heads(self, proj: nn.Linear, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, H, T, hd)

    def last_token_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-softmax logits of the last query over all keys, (B, H, T); x is ln_1 output."""
        T = x.shape[1]
        q = self.position(self.heads(self.q_proj, x[:, -1:]), start=T - 1, query=True)
        k = self.position(self.heads(self.k_proj, x))
        return (q @ k.transpose(-1, -2)).squeeze(-2) * self.scale

    def forward(self, x: torch.Tensor, want_logits: bool = False, last_only: bool = False):
        """Attention output for every position, or for the last one only (B, 1, C), and with
        ``want_logits`` the analysis' view (last-token logits, unrotated last query, unrotated
        keys), else None.

        The last query sees every key, so its row needs no causal mask: that row is
        both the last-only output and the exposed last-token logits.
        """
        queries = x[:, -1:] if last_only else x
        return self.attend(self.q_proj(queries), self.k_proj(x), self.v_proj(x), want_logits, last_only)

    def attend(self, q, k, v, want_logits: bool = False, last_only: bool = False):
        """``forward`` from the projections q (B, Tq, C), k and v (B, T, C), before RoPE."""
        B, T, C = k.shape
        Tq = q.shape[1]
        split = lambda t: t.view(B, t.shape[1], self.n_head, self.head_dim).transpose(1, 2)  # noqa: E731
        q_raw, k_raw = split(q), split(k)  # (B, H, T, hd), before RoPE
        q, k = self.position(q_raw, start=T - Tq, query=True), self.position(k_raw)
        y = F.scaled_dot_product_attention(
            q,
            k,
            split(v),
            is_causal=not last_only,
            scale=self.scale,
            dropout_p=self.attn_pdrop if self.training else 0.0,
        )
        y = self.resid_dropout(self.out_proj(y.transpose(1, 2).reshape(B, Tq, C)))
        if not want_logits:
            return y, None
        logits = (q[:, :, -1:, :] @ k.transpose(-1, -2)).squeeze(-2) * self.scale
        return y, (logits, q_raw[:, :, -1], k_raw)


class MLP(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.fc_in = nn.Linear(config.n_embd, config.n_inner)
        self.fc_out = nn.Linear(config.n_inner, config.n_embd)
        self.dropout = Dropout(config.resid_pdrop)

    def forward(self, x):
        return self.after_fc_in(self.fc_in(x))

    def after_fc_in(self, x):
        return self.dropout(self.fc_out(gelu_new(x)))


class Block(nn.Module):
    """GPT-J parallel block: one LayerNorm feeds attention and MLP side by side."""

    def __init__(self, config: ModelConfig, rotary: Rotary, use_rope: bool = True):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = Attention(config, rotary, use_rope)
        self.mlp = MLP(config)

    def forward(self, x, want_logits: bool = False, last_only: bool = False):
        """``last_only``: output only the last position (B, 1, C); used for the final
        block when only the last token's logits are wanted (keys still see all of x)."""
        h = self.ln_1(x)
        if last_only:
            a, seen = self.attn(h, want_logits, last_only)
            return x[:, -1:] + a + self.mlp(h[:, -1:]), seen
        # q, k, v and fc_in all read ln_1(x): one GEMM against the four weights stacked is
        # faster than four (wider output, one pass over h, one input-gradient GEMM)
        attn, mlp = self.attn, self.mlp
        stacked = torch.cat((attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight, mlp.fc_in.weight))
        C = x.shape[-1]
        q, k, v, inner = F.linear(h, stacked).split((C, C, C, mlp.fc_in.out_features), dim=-1)
        a, seen = attn.attend(q, k, v, want_logits)
        return x + a + mlp.after_fc_in(inner + mlp.fc_in.bias), seen


@dataclass
class Internals:
    """What the analysis needs, per layer l = 0 .. n_layer-1, from one forward pass.

    hidden_in[l]:   (B, T, n_embd) hidden states entering block l (after embedding
                    dropout for l = 0, i.e. the embeddings in eval mode); equals HF's
                    ``output_hidden_states=True`` entry l.
    last_logits[l]: (B, n_head, T) pre-softmax attention logits of the last position
                    (query T-1) over keys 0..T-1, scaled by 1/sqrt(head_dim) as HF;
                    softmax over the last axis gives HF's ``attentions[l][:, :, -1]``.
    last_query[l]:  (B, n_head, head_dim) the last position's query before RoPE;
    keys[l]:        (B, n_head, T, head_dim) every key before RoPE (the fast score route
                    reuses these rather than recomputing ln_1 and the projections).
    """

    hidden_in: list
    last_logits: list
    last_query: list
    keys: list


class GPTJ(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.rotary = Rotary(config.rotary_dim, config.rope_base, config.rope_fraction)
        nope = config.n_layer if config.nope_from_layer is None else config.nope_from_layer
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                drop=Dropout(config.embd_pdrop),
                h=nn.ModuleList(
                    [Block(config, self.rotary, use_rope=i < nope) for i in range(config.n_layer)]
                ),
                ln_f=nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=True)  # untied, biased
        self.apply(self._init_weights)

    def _init_weights(self, module):
        # HF GPT-J's init: normal(0, 0.02) for every matrix and embedding, zero biases,
        # LayerNorm (1, 0); no depth scaling (unlike GPT-2/nanoGPT).
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=std)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx: torch.Tensor, last_only: bool = False, return_internals: bool = False):
        """Logits for token ids ``idx`` (B, T).

        last_only: apply ``ln_f`` + ``lm_head`` to the last position only and return
            (B, vocab) instead of (B, T, vocab): all the last-token loss needs.
        return_internals: also return an ``Internals`` (hidden states entering each
            block, last-token attention logits, unrotated last query and keys),
            gathered during this same pass.
        """
        x = self.transformer.drop(self.transformer.wte(idx))
        hidden_in, seen = [], []
        last = len(self.transformer.h) - 1
        for i, block in enumerate(self.transformer.h):
            if return_internals:
                hidden_in.append(x)
            # the final block's queries, MLP and residual matter only at the last
            # position when only its logits are wanted: skip the other T-1 there
            x, layer_seen = block(x, want_logits=return_internals, last_only=last_only and i == last)
            seen.append(layer_seen)
        if last_only:
            x = x[:, -1, :]
        logits = self.lm_head(self.transformer.ln_f(x))
        if return_internals:
            return logits, Internals(hidden_in, *(list(part) for part in zip(*seen)))
        return logits

    def layer_last_token_logits(self, layer: int, hidden: torch.Tensor) -> torch.Tensor:
        """Recompute layer ``layer``'s last-token logits (B, n_head, T) from ``hidden``.

        ``hidden`` (B, T, n_embd) are the states entering that block (e.g. a row of
        ``Internals.hidden_in`` with two positions swapped); positions stay 0..T-1,
        so a swap moves content while RoPE keeps each slot's position.
        """
        block = self.transformer.h[layer]
        return block.attn.last_token_logits(block.ln_1(hidden))


def scale_queries_at_inference(model: GPTJ, kind: str = "log") -> GPTJ:
    """Switch the query scale ``kind`` on in every layer of ``model``, a model trained without
    one, keeping every weight (in place; returns the model).

    Why: it separates softmax dilution from everything else that breaks a model on long
    inputs.  The trained attention is kept and only its inverse temperature grows like
    log(i + 1) / log(17), which is 1 at the last position of a training input; if accuracy
    then holds far past the training length, the break was dilution (Lemma F.1), not the
    learned circuit.  ``model.config`` still says how the model was trained; the switched-on
    scale is recorded as ``model.inference_query_scale``.
    """
    if kind not in INFERENCE_QUERY_SCALES:
        raise ValueError(
            f"an inference-time query scale must be one of {', '.join(INFERENCE_QUERY_SCALES)}, got {kind!r}"
        )
    if model.config.query_scale != "none":
        raise ValueError(
            f"the model was trained with query_scale={model.config.query_scale!r}; an "
            f"inference-time scale is for a model trained without one"
        )
    for block in model.transformer.h:
        block.attn.query_scale = QueryScale(kind, model.config.n_head)  # the fixed form holds no tensor
    model.inference_query_scale = kind
    return model

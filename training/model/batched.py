"""K copies of the GPT-J that differ only in seed, trained as one model with a leading seed dimension.

Why: the paper's model is so small that one seed leaves a GPU idle (and a CPU step is half
elementwise overhead); a study trains one recipe for many seeds, and K seeds stacked make every
matrix product one batched product (``bmm``) and every elementwise pass one pass.

How it stays each seed's own run:

* **Weights.** Member k is built by the single run's code, ``torch.manual_seed(seed_k);
  GPTJ(config)``, so its initial weights are the single run's bit for bit.  Its parameters are
  then turned into views of one stacked tensor per name, ``(K, *shape)``: the batched forward
  reads the stacked tensors, while each member stays an ordinary ``GPTJ`` whose parameters are
  its slice -- evaluated, saved, checkpointed and resumed by the single run's code unchanged.
* **Forward.** ``forward`` is GPT-J's arithmetic (``training.model.gptj``: parallel blocks, the
  stacked q/k/v/fc_in product, rotary and query scale by the member's own modules, the final
  block on the query position only) with every product batched over members.  It differs from
  the single run only by the order of float additions.
* **Dropout.** Every mask is drawn from the member's own torch RNG stream, in the single run's
  order and shapes, by the single run's own dropout modules (the global generator is swapped to
  the member's state around its draws: ``member_rng``), all before the forward
  (``dropout_masks``), which multiplies them in.  On CPU this reproduces the single run's
  masks bit for bit, attention dropout included (``F.scaled_dot_product_attention`` draws its
  CPU mask as ``F.dropout`` of ones would: tested).  On CUDA each member still has its own
  stream, saved in its checkpoints, but SDPA's in-kernel dropout cannot be replayed, so the
  masks are not the single run's.
* **Gradients.** The loss is the sum of the members' mean losses, so member k's gradient is
  that of its own loss alone; ``split_gradients`` hands each member its slice, and each
  member's AdamW, clipping and schedule run on it exactly as in a single run.

Not batched (``training.run.batched_loop.unsupported``): a learned query scale (one weight per member would need its
own batched code) and ``data.extra_target_max`` (each member's batch gets its own extra length,
so the members' inputs are not one rectangle).
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

from .gptj import GPTJ, ModelConfig, gelu_new

__all__ = ["BatchedGPTJ"]


def _rng_state(device: torch.device) -> tuple:
    """The global RNG streams a single run's training draws from: the CPU's, and the device's."""
    cuda = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
    return torch.get_rng_state(), cuda


def _set_rng_state(state: tuple, device: torch.device) -> None:
    torch.set_rng_state(state[0])
    if state[1] is not None:
        torch.cuda.set_rng_state(state[1], device)


def _rebind(module: nn.Module, name: str, parameter: nn.Parameter) -> None:
    owner, _, leaf = name.rpartition(".")
    setattr(module.get_submodule(owner) if owner else module, leaf, parameter)


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear`` per member: x (K, ..., in), weight (K, out, in), bias (K, out)."""
    flat = x.reshape(x.shape[0], -1, x.shape[-1])
    y = (
        torch.bmm(flat, weight.transpose(1, 2))
        if bias is None
        else torch.baddbmm(bias.unsqueeze(1), flat, weight.transpose(1, 2))
    )
    return y.view(*x.shape[:-1], weight.shape[1])


def _drop(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x`` times its dropout mask (``BatchedGPTJ.dropout_masks``); no mask: ``x``."""
    return x if mask is None else x * mask


def _per_member(t: torch.Tensor, ndim: int) -> torch.Tensor:
    """A (K, C) tensor shaped to broadcast against a (K, ..., C) tensor of ``ndim`` dimensions."""
    return t.view(t.shape[0], *(1,) * (ndim - 2), t.shape[-1])


class BatchedGPTJ(nn.Module):
    """K members (``members[k]``, a GPTJ built with ``seeds[k]``) whose parameters are slices of
    stacked ``(K, ...)`` parameters; ``forward(idx)`` takes (K, B, T) ids and returns the last
    position's logits (K, B, vocab), as ``GPTJ.forward(..., last_only=True)`` per member."""

    def __init__(self, config: ModelConfig, seeds: list[int], device: torch.device):
        super().__init__()
        self.config, self.device, self.seeds = config, device, list(seeds)
        self.members: list[GPTJ] = []  # a plain list: their parameters belong to the stacked ones
        self.rng_states: list[tuple] = []
        for seed in seeds:  # exactly the single run's start (training.run.loop)
            torch.manual_seed(seed)
            self.members.append(GPTJ(config).to(device))
            self.rng_states.append(_rng_state(device))
        self.stacked: dict[str, nn.Parameter] = {}
        self._slices: list[tuple[nn.Parameter, list[nn.Parameter]]] = []
        for name, _ in self.members[0].named_parameters():
            stacked = nn.Parameter(torch.stack([m.get_parameter(name).detach() for m in self.members]))
            self.register_parameter(name.replace(".", "__"), stacked)
            self.stacked[name] = stacked
            views = [nn.Parameter(stacked.data[k]) for k in range(len(seeds))]  # share the stacked storage
            for member, view in zip(self.members, views):
                _rebind(member, name, view)
            self._slices.append((stacked, views))

    def train(self, mode: bool = True):
        """The members' dropout modules draw the masks, so they follow the batched model's mode."""
        super().train(mode)
        for member in self.members:
            member.train(mode)
        return self

    @contextlib.contextmanager
    def member_rng(self, k: int):
        """The global RNG streams hold member k's state inside the block (its dropout draws, its
        checkpoint's saved state, a resume's restored one); member k keeps what they hold after."""
        saved = _rng_state(self.device)
        _set_rng_state(self.rng_states[k], self.device)
        try:
            yield
        finally:
            self.rng_states[k] = _rng_state(self.device)
            _set_rng_state(saved, self.device)

    def split_gradients(self) -> None:
        """After ``backward``: each member's parameters get their slice of the stacked gradients."""
        for stacked, views in self._slices:
            for k, view in enumerate(views):
                view.grad = None if stacked.grad is None else stacked.grad[k]

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none)
        for _, views in self._slices:
            for view in views:
                view.grad = None

    # --- the forward pass -----------------------------------------------------------------

    def dropout_masks(self, idx: torch.Tensor) -> list:
        """Every dropout mask a training forward on (K, B, T) ids applies, in the order it applies
        them, each stacked over members (K, ...); None for a site that draws nothing (eval mode,
        p = 0).  Member k's masks are drawn in one stretch of its own stream, in the single run's
        order and shapes, by the single run's own dropout modules (module doc) -- the embedding's,
        then per layer the attention weights', the attention output's and the MLP's.

        Drawn before the forward rather than inside it: switching the global RNG state is not
        something ``torch.compile`` can trace, so draws inside split the compiled forward at every
        site (and the per-layer code hit dynamo's recompile limit); drawn here, the compiled
        forward is one graph whose masks are inputs."""
        if not self.training:
            return [None] * (1 + 3 * self.config.n_layer)
        _, B, T = idx.shape
        cfg, device = self.config, idx.device
        # each site's mask has the dtype of the activations it multiplies: the projections' under
        # autocast, float32 for the embedding and the softmax weights
        autocast = torch.is_autocast_enabled(device.type)
        projected = torch.get_autocast_dtype(device.type) if autocast else torch.float32
        sites = [("transformer.drop", (B, T, cfg.n_embd), torch.float32)]
        for i in range(cfg.n_layer):
            Tq = 1 if i == cfg.n_layer - 1 else T
            sites += [
                (f"transformer.h.{i}.attn", (B, cfg.n_head, Tq, T), torch.float32),  # the weights'
                (f"transformer.h.{i}.attn.resid_dropout", (B, Tq, cfg.n_embd), projected),
                (f"transformer.h.{i}.mlp.dropout", (B, Tq, cfg.n_embd), projected),
            ]
        drawn = [[] for _ in sites]
        for k, member in enumerate(self.members):
            with self.member_rng(k):
                for (site, shape, dtype), masks in zip(sites, drawn):
                    ones, module = torch.ones(shape, dtype=dtype, device=device), member.get_submodule(site)
                    if site.endswith(".attn"):  # SDPA's CPU draw: F.dropout of ones of the weights' shape
                        masks.append(F.dropout(ones, module.attn_pdrop) if module.attn_pdrop > 0 else None)
                    else:
                        masks.append(module(ones) if module.p > 0 else None)
        return [None if masks[0] is None else torch.stack(masks) for masks in drawn]

    def _layer_norm(self, prefix: str, x: torch.Tensor) -> torch.Tensor:
        weight, bias = self.stacked[prefix + ".weight"], self.stacked[prefix + ".bias"]
        normed = F.layer_norm(x, (x.shape[-1],), eps=self.config.layer_norm_epsilon)
        return normed * _per_member(weight, x.dim()) + _per_member(bias, x.dim())

    def _attend(self, i: int, q, k, v, causal: bool, masks) -> torch.Tensor:
        """Layer i's attention from projections q (K, B, Tq, C), k and v (K, B, T, C), before RoPE:
        ``Attention.attend`` with the softmax written out, so each member's dropout mask applies
        (``masks``: an iterator over ``dropout_masks``, at this layer's attention weights)."""
        attn, prefix = self.members[0].transformer.h[i].attn, f"transformer.h.{i}.attn"
        K, B, T, C = k.shape
        Tq = q.shape[2]
        split = lambda t: t.view(K, B, t.shape[2], attn.n_head, attn.head_dim).transpose(2, 3)  # noqa: E731
        q, k = attn.position(split(q), start=T - Tq, query=True), attn.position(split(k))
        scores = (q @ k.transpose(-1, -2)) * attn.scale  # (K, B, H, Tq, T)
        if causal:
            scores = scores.masked_fill(
                torch.ones(Tq, T, dtype=torch.bool, device=q.device).triu(1), float("-inf")
            )
        weights = _drop(scores.softmax(-1), next(masks))
        y = (weights @ split(v)).transpose(2, 3).reshape(K, B, Tq, C)
        return _drop(_linear(y, self.stacked[prefix + ".out_proj.weight"]), next(masks))

    def _mlp_after_fc_in(self, i: int, inner: torch.Tensor, masks) -> torch.Tensor:
        prefix = f"transformer.h.{i}.mlp"
        out = _linear(
            gelu_new(inner), self.stacked[prefix + ".fc_out.weight"], self.stacked[prefix + ".fc_out.bias"]
        )
        return _drop(out, next(masks))

    def _block(self, i: int, x: torch.Tensor, last: bool, masks) -> torch.Tensor:
        p, C = f"transformer.h.{i}", x.shape[-1]
        W = {
            name: self.stacked[f"{p}.{name}"]
            for name in (
                "attn.q_proj.weight",
                "attn.k_proj.weight",
                "attn.v_proj.weight",
                "mlp.fc_in.weight",
                "mlp.fc_in.bias",
            )
        }
        h = self._layer_norm(p + ".ln_1", x)
        if last:  # as Block(last_only=True): the queries, MLP and residual of the last position only
            a = self._attend(
                i,
                _linear(h[:, :, -1:], W["attn.q_proj.weight"]),
                _linear(h, W["attn.k_proj.weight"]),
                _linear(h, W["attn.v_proj.weight"]),
                causal=False,
                masks=masks,
            )
            inner = _linear(h[:, :, -1:], W["mlp.fc_in.weight"], W["mlp.fc_in.bias"])
            return x[:, :, -1:] + a + self._mlp_after_fc_in(i, inner, masks)
        stacked = torch.cat(
            (
                W["attn.q_proj.weight"],
                W["attn.k_proj.weight"],
                W["attn.v_proj.weight"],
                W["mlp.fc_in.weight"],
            ),
            dim=1,
        )
        q, k, v, inner = _linear(h, stacked).split((C, C, C, W["mlp.fc_in.bias"].shape[-1]), dim=-1)
        a = self._attend(i, q, k, v, causal=True, masks=masks)
        return x + a + self._mlp_after_fc_in(i, inner + _per_member(W["mlp.fc_in.bias"], inner.dim()), masks)

    def forward(self, idx: torch.Tensor, masks: list | None = None) -> torch.Tensor:
        """(K, B, T) token ids -> (K, B, vocab) logits of the last position.  ``masks``: this
        forward's ``dropout_masks(idx)``, drawn by the caller (a compiled forward takes them as
        inputs); None: drawn here."""
        K = idx.shape[0]
        masks = iter(self.dropout_masks(idx) if masks is None else masks)
        wte = self.stacked["transformer.wte.weight"]
        x = wte[torch.arange(K, device=idx.device)[:, None, None], idx]  # each member's own embedding
        x = _drop(x, next(masks))
        n = self.config.n_layer
        for i in range(n):
            x = self._block(i, x, last=i == n - 1, masks=masks)
        x = self._layer_norm("transformer.ln_f", x[:, :, -1])
        return _linear(x, self.stacked["lm_head.weight"], self.stacked["lm_head.bias"])

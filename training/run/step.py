"""The training step and its pieces, which hold no run state: AdamW and its schedule, the data
order of each step, mixed precision, the validation pass and the data they run on.

``train_step`` is THE step: ``train`` (one model, under torchrun one DDP replica), ``train --seeds``
(each member of a seed-batched model) and both benches (``training.run.bench``) call it, so a
benchmark times exactly what a run trains.  What it reads is one frozen ``StepJob``.

Separate from ``training.run.loop`` (the step loop, its guards and its writes) because each
is a pure function of its arguments, tested and reused on its own: ``training.analysis.evaluate``
scores with the same ``evaluate``.  ``train`` looks ``make_optimizer`` up in its own namespace, so
a test can still replace it there.

Reproducible by construction: the batch of step s is a pure function of (seed, s) -- epoch e
is the permutation ``numpy.random.default_rng([seed, e])`` (drawn once per epoch and kept,
``epoch_permutation``; a step takes the next consecutive slice), and its extra window, if any,
comes from ``default_rng([seed, tag, s])`` (``extra_window``) -- so resuming needs only the
step number.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from training.model.batched import BatchedGPTJ
from training.model.gptj import GPTJ
from training.tasks.definitions import Batch, get_task

from .distributed import SINGLE, Ranks
from .presets import Preset

__all__ = [
    "StepJob",
    "train_step",
    "optimizer_step",
    "make_optimizer",
    "lr_factor",
    "batch_indices",
    "epoch_permutation",
    "extra_window",
    "training_batch",
    "autocast_for",
    "evaluate",
    "load_data",
]

_EXTRA_WINDOW_TAG = 0xE7A0  # a third seed word: the window's stream never equals a data-order one


def make_optimizer(model: torch.nn.Module, lr: float, betas, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with HF Trainer's grouping: no decay on biases and LayerNorm parameters."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("bias") or ".ln_" in name or "ln_f" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # the fused kernel is one op per step instead of ~10 per tensor (same maths)
    fused = all(p.device.type in ("cpu", "cuda") for p in model.parameters())
    return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), eps=1e-8, fused=fused)


def lr_factor(step: int, warmup: int, total: int) -> float:
    """HF get_linear_schedule_with_warmup: 0 at step 0, 1 at ``warmup``, 0 at ``total``."""
    if step < warmup:
        return step / max(1, warmup)
    return max(0.0, (total - step) / max(1, total - warmup))


_EPOCHS: dict = {}  # (seed, n) -> (epoch, its permutation): each seed's current epoch, drawn once
_EPOCHS_MAX = 512  # seeds remembered at once (a batch of members has at most 256)


def epoch_permutation(seed: int, epoch: int, n: int) -> np.ndarray:
    """Epoch ``epoch``'s order of the ``n`` training rows of run ``seed``: the permutation
    ``numpy.random.default_rng([seed, epoch])``, a pure function of (seed, epoch) -- so a resumed
    run re-derives it from the step number alone.  Drawn once per epoch and seed, not once per
    step (432,000 rows: ~5 ms, K times a batched step); read-only."""
    key = (int(seed), int(n))
    held = _EPOCHS.get(key)
    if held is None or held[0] != epoch:
        if len(_EPOCHS) >= _EPOCHS_MAX:
            _EPOCHS.clear()
        order = np.random.default_rng([seed, epoch]).permutation(n)
        order = order.astype(np.int32) if n < 2**31 else order
        order.flags.writeable = False
        held = _EPOCHS[key] = (epoch, order)
    return held[1]


def batch_indices(seed: int, step: int, batch_size: int, n: int) -> np.ndarray:
    """Rows of the training set for ``step``: epochs are seeded permutations (``epoch_permutation``),
    read in order in consecutive slices."""
    start = step * batch_size
    out, filled = np.empty(batch_size, dtype=np.int64), 0
    while filled < batch_size:
        epoch, offset = divmod(start + filled, n)
        take = min(batch_size - filled, n - offset)
        out[filled : filled + take] = epoch_permutation(seed, epoch, n)[offset : offset + take]
        filled += take
    return out


def extra_window(seed: int, step: int, extra_max: int) -> tuple[int, int]:
    """(K, seed of the K tokens) of ``step``'s batch, K uniform on 0..``extra_max``: a pure
    function of (run seed, step), so every rank and a resumed run draw the same.  (0, 0) when
    ``extra_max`` is 0, without drawing anything."""
    if extra_max == 0:
        return 0, 0
    rng = np.random.default_rng([seed, _EXTRA_WINDOW_TAG, step])
    return int(rng.integers(0, extra_max + 1)), int(rng.integers(0, 2**63 - 1))


def training_batch(task, train: Batch, seed: int, step: int, batch_size: int, extra_max: int = 0) -> Batch:
    """The global batch of ``step``: rows ``batch_indices`` of ``train``, each lengthened by the
    same K extra target-window symbols of ``extra_window`` (one K keeps the batch rectangular).
    Answers and hop counts are the rows' own: every hop is relative (Task.extend)."""
    batch = train.select(batch_indices(seed, step, batch_size, len(train)))
    k, extra_seed = extra_window(seed, step, extra_max)
    return get_task(task).extend(batch, k, extra_seed)


def autocast_for(device: torch.device):
    if device.type != "cuda":
        return nullcontext(), None
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
    return torch.autocast("cuda", dtype=dtype), scaler


def optimizer_step(model: torch.nn.Module, optimizer, scaler, grad_clip: float) -> torch.Tensor:
    """Clip the gradient's global norm (of this model alone) and step: returns the norm before clipping."""
    # the fused foreach norm (one kernel over the model's gradients); the norm stays a tensor: the
    # loop reads it once per member where the step already waits for the loss
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip, foreach=True)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return grad_norm


@dataclass(frozen=True)
class StepJob:
    """What ``train_step`` reads: the model and its optimizers, the data and the recipe.

    ``model``: a ``GPTJ`` (one run; ``optimizers`` holds its one AdamW) or a ``BatchedGPTJ``
    (``optimizers[k]`` is member k's).  ``forward``: the callable the step runs the model
    through -- DDP-wrapped and/or compiled (``training.run.compile``); None: the model itself.
    ``seed``: a single run's seed (its data order and, under torchrun, its dropout streams);
    the members of a batched model carry their own (``BatchedGPTJ.seeds``).  ``scaler``: the
    float16 GradScaler of ``autocast_for``, one optimizer only (a batch of members has none)."""

    task: str
    train_data: Batch
    recipe: Preset
    total: int
    model: torch.nn.Module
    optimizers: tuple
    device: torch.device
    amp: AbstractContextManager
    scaler: torch.amp.GradScaler | None = None
    forward: Callable | None = None
    seed: int = 0
    ranks: Ranks = SINGLE

    @property
    def batched(self) -> bool:
        return isinstance(self.model, BatchedGPTJ)

    @property
    def members(self) -> list:
        """The models whose optimizers step: a batched model's members, else the model."""
        return self.model.members if self.batched else [self.model]


def train_step(job: StepJob, step: int) -> tuple[list[float], list[float], list[torch.Tensor]]:
    """Optimizer step ``step`` (0-based) of every member: the learning-rate schedule, the step's
    batch (this rank's rows under torchrun, with its extra target window when the recipe has one),
    the forward pass under autocast, cross-entropy at the query position, backward (through the
    GradScaler when there is one), each member's own gradient clipping and AdamW step.  Returns
    per member its loss, its accuracy on the batch and its gradient norm before clipping."""
    recipe, model, ranks, batched = job.recipe, job.model, job.ranks, job.batched
    lr = recipe.lr * lr_factor(step, recipe.warmup_steps, job.total)
    for optimizer in job.optimizers:
        for group in optimizer.param_groups:
            group["lr"] = lr
    ranks.seed_dropout(job.seed, step)  # under torchrun: this rank's masks; else the run's own stream
    seeds = model.seeds if batched else [job.seed]
    batches = [
        training_batch(job.task, job.train_data, seed, step, recipe.batch_size, recipe.extra_target_max)
        for seed in seeds
    ]

    def rows(field: str) -> torch.Tensor:  # this rank's rows (all in one process); members stacked (K, B, T)
        stacked = np.stack([ranks.shard(getattr(batch, field)) for batch in batches])
        return torch.as_tensor(stacked if batched else stacked[0], dtype=torch.long, device=job.device)

    inputs, answers = rows("inputs"), rows("answers")
    forward = model if job.forward is None else job.forward
    with job.amp:
        if batched:  # the members' masks drawn here, outside a compiled forward (BatchedGPTJ.dropout_masks)
            logits = forward(inputs, model.dropout_masks(inputs)).float()  # K, B, vocab
        else:
            logits = forward(inputs, last_only=True)  # B, vocab
    if batched:  # each member's mean loss; their sum's gradient is, per member, that of its own loss alone
        per_row = F.cross_entropy(logits.flatten(0, 1), answers.flatten(), reduction="none")
        losses = per_row.view(answers.shape).mean(1)
        loss = losses.sum()
    else:
        # The mean over this rank's rows.  DDP averages the gradients over the K ranks, and the
        # slices are equal, so the result is the gradient of the mean over the global batch: a
        # single process's, up to the order of float additions.
        loss = F.cross_entropy(logits.float(), answers)
        losses = loss.reshape(1)
    if job.scaler is not None:
        job.scaler.scale(loss).backward()
        for optimizer in job.optimizers:
            job.scaler.unscale_(optimizer)
    else:
        loss.backward()
    if batched:
        model.split_gradients()
    # backward() returned after DDP's all-reduce: every rank clips the same, global-batch gradient
    norms = [
        optimizer_step(member, optimizer, job.scaler, recipe.grad_clip)  # each member's own global norm
        for member, optimizer in zip(job.members, job.optimizers)
    ]
    if batched:
        model.zero_grad(set_to_none=True)
    accuracies = (logits.argmax(-1) == answers).float().mean(-1).reshape(-1)
    return losses.tolist(), accuracies.tolist(), norms


@torch.no_grad()
def evaluate(model: GPTJ, data: dict, batch_size: int, amp=None) -> dict:
    """Loss and accuracy at the query position, overall and per hop count."""
    was_training = model.training
    model.eval()
    losses, correct = [], []
    for i in range(0, len(data["answers"]), batch_size):
        with amp if amp is not None else nullcontext():
            logits = model(data["inputs"][i : i + batch_size], last_only=True).float()
        answers = data["answers"][i : i + batch_size]
        losses.append(F.cross_entropy(logits, answers, reduction="none"))
        correct.append(logits.argmax(-1) == answers)
    model.train(was_training)
    loss, correct = torch.cat(losses).cpu(), torch.cat(correct).cpu()
    hops = data["hops"].cpu()
    # count / total in Python floats: a float32 mean stores 180/200 as 0.8999999762, below 0.9
    by_hop = {str(int(h)): int(correct[hops == h].sum()) / int((hops == h).sum()) for h in torch.unique(hops)}
    return {
        "loss": loss.mean().item(),
        "accuracy": int(correct.sum()) / len(correct),
        "accuracy_by_hop": by_hop,
    }


def load_data(task_name: str, preset: Preset, device) -> tuple[Batch, dict]:
    """The training set (numpy: each step's batch is cut and lengthened on the host) and the
    validation set (on ``device``)."""
    task = get_task(task_name)
    if preset.data == "paper":
        from training.tasks.datasets import paper_splits

        splits = paper_splits(task_name, seed=0)
        train, validation = splits["train"], splits["validation"]
    else:  # small fixed generated splits, independent of --seed like the paper data
        train = task.generate(preset.train_count, seed=1)
        validation = task.generate(preset.validation_count, seed=2)

    def to_torch(b):
        return {
            k: torch.as_tensor(getattr(b, k), dtype=torch.long, device=device)
            for k in ("inputs", "answers", "hops")
        }

    return train, to_torch(validation)

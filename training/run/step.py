"""The pieces of a training step that hold no run state: AdamW and its schedule, the data
order of each step, mixed precision, the validation pass and the data they run on.

Separate from ``training.run.loop`` (the step loop, its guards and its writes) because each
is a pure function of its arguments, tested and reused on its own: ``bench`` builds the same
optimizer, ``training.analysis.evaluate`` scores with the same ``evaluate``.  ``train`` looks
them up in its own namespace, so a test can still replace one there.

Reproducible by construction: the batch of step s is a pure function of (seed, s) -- epoch e
is the permutation ``numpy.random.default_rng([seed, e])``, and its extra window, if any,
comes from ``default_rng([seed, tag, s])`` (``extra_window``) -- so resuming needs only the
step number.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import torch
import torch.nn.functional as F

from training.model.gptj import GPTJ
from training.tasks.definitions import Batch, get_task

from .presets import Preset

__all__ = [
    "make_optimizer",
    "lr_factor",
    "batch_indices",
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


def batch_indices(seed: int, step: int, batch_size: int, n: int) -> np.ndarray:
    """Rows of the training set for ``step``: epochs are seeded permutations, read in order."""
    start = step * batch_size
    out, filled = np.empty(batch_size, dtype=np.int64), 0
    while filled < batch_size:
        epoch, offset = divmod(start + filled, n)
        take = min(batch_size - filled, n - offset)
        out[filled : filled + take] = np.random.default_rng([seed, epoch]).permutation(n)[
            offset : offset + take
        ]
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


@torch.no_grad()
def evaluate(model: GPTJ, data: dict, batch_size: int, amp=nullcontext()) -> dict:
    """Loss and accuracy at the query position, overall and per hop count."""
    was_training = model.training
    model.eval()
    losses, correct = [], []
    for i in range(0, len(data["answers"]), batch_size):
        with amp:
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

"""Length generalisation (Section 3.6, Figure 5B; claim C10): accuracy against total length.

Inputs of total length n are the task's 17-token core with n - 17 extra target-window
symbols inserted before the effective target window (``Task.generate(extra_target=...)``):
the answer and the hop structure are unchanged.  Each length gets its own fresh balanced
set (seed ``seed``; equal hop shares), at most ``count`` sequences and at most
``max_tokens`` tokens in all (at least ``min_count`` sequences), so the longest lengths cost
what the budget allows.  Accuracy is ``training.run.step.evaluate`` (the validation routine of
training: argmax of the last position's logits), run in chunks of at most
``batch_tokens`` tokens (batch size 1 at 5,000 tokens with the default) so memory is bounded.

``split_accuracy``: the same routine on one of the paper's fixed splits (the 45,600-sequence
test split by default), the held-out accuracy the README reports.
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from training.run.step import evaluate
from training.tasks.definitions import get_task

__all__ = [
    "DEFAULT_LENGTHS",
    "MIN_COUNT",
    "BATCH_TOKENS",
    "length_generalisation",
    "split_accuracy",
    "sequences_for",
    "batch_size_for",
]

DEFAULT_LENGTHS = (17, 25, 50, 100, 200, 400, 850, 1500, 3000, 5000)
MIN_COUNT = 64  # sequences per length however small --max-tokens makes the budget
BATCH_TOKENS = 16384  # tokens per forward pass (at least one sequence)


def sequences_for(length: int, count: int, max_tokens: int | None, min_count: int) -> int:
    if max_tokens is None:
        return count
    return max(min(count, min_count), min(count, max_tokens // length))


def batch_size_for(length: int, batch_tokens: int) -> int:
    return max(1, min(512, batch_tokens // length))


def length_generalisation(
    model,
    task,
    lengths=DEFAULT_LENGTHS,
    count: int = 400,
    seed: int = 3,
    max_tokens: int | None = None,
    min_count: int = MIN_COUNT,
    batch_tokens: int = BATCH_TOKENS,
    run: str | None = None,
    progress: bool = True,
) -> dict:
    """The length_generalisation.json object: accuracy overall and per hop at each length."""
    task = get_task(task)
    lengths = [int(n) for n in lengths]
    for n in lengths:
        if n < task.seq_len:
            raise ValueError(f"length {n} is shorter than the task's {task.seq_len} tokens")
    sizes = [sequences_for(n, count, max_tokens, min_count) for n in lengths]
    model.eval()
    result = {
        "task": task.name,
        "run": run,
        "lengths": lengths,
        "accuracy": [],
        "per_hop": {},
        "n_per_length": sizes,
        "seed": seed,
        "construction": "Task.generate(n_per_length, seed, extra_target=length - 17)",
        "loss": [],
    }
    bar = tqdm(
        total=sum(n * m for n, m in zip(lengths, sizes)),
        disable=not progress,
        desc=f"evaluate {task.name}",
        unit="tok",
        unit_scale=True,
        dynamic_ncols=True,
    )
    per_hop_rows = []
    for n, m in zip(lengths, sizes):
        batch = task.generate(m, seed, extra_target=n - task.seq_len)
        # evaluate in slices so the bar moves at 5,000 tokens; counts are re-weighted
        accuracy, loss, by_hop = _sliced_accuracy(
            model,
            _tensors(batch),
            max(batch_size_for(n, batch_tokens), 64),
            batch_size_for(n, batch_tokens),
            lambda rows, n=n: bar.update(n * rows),
        )
        result["accuracy"].append(accuracy)
        result["loss"].append(loss)
        per_hop_rows.append(by_hop)
    bar.close()
    for hop in sorted({h for row in per_hop_rows for h in row}, key=int):
        result["per_hop"][hop] = [row.get(hop) for row in per_hop_rows]
    result["chance"] = 1.0 / task.n_answer_values
    return result


def split_accuracy(
    model, task, split: str = "test", batch_size: int = 600, run: str | None = None, progress: bool = True
) -> dict:
    """Accuracy (overall, per hop) and loss on a split of ``paper_splits(task, seed=0)``."""
    from training.tasks.datasets import PAPER_SPLIT_SIZES, paper_splits

    if split not in PAPER_SPLIT_SIZES:
        raise ValueError(f"split must be one of {', '.join(PAPER_SPLIT_SIZES)}, got {split!r}")
    task = get_task(task)
    data = _tensors(paper_splits(task.name, seed=0)[split])
    n = len(data["answers"])
    model.eval()
    with tqdm(
        total=n, disable=not progress, desc=f"{split} {task.name}", unit="seq", dynamic_ncols=True
    ) as bar:
        accuracy, loss, by_hop = _sliced_accuracy(model, data, 50 * batch_size, batch_size, bar.update)
    return {
        "task": task.name,
        "run": run,
        "split": split,
        "data": "training.tasks.datasets.paper_splits(task, seed=0)",
        "n": n,
        "accuracy": accuracy,
        "loss": loss,
        "per_hop": by_hop,
        "n_correct": round(accuracy * n),
    }


def _tensors(batch) -> dict:
    return {k: torch.as_tensor(getattr(batch, k), dtype=torch.long) for k in ("inputs", "answers", "hops")}


def _sliced_accuracy(model, data: dict, slice_rows: int, batch_size: int, done) -> tuple[float, float, dict]:
    """(accuracy, loss, accuracy per hop) of ``training.run.step.evaluate`` over ``data`` taken
    ``slice_rows`` sequences at a time (``done(rows)`` after each slice, for a progress bar),
    each slice's means re-weighted by its size."""
    n = len(data["answers"])
    device = next(model.parameters()).device  # a slice moves to the model (the whole set may not fit there)
    correct, loss, by_hop = 0, 0.0, {}
    for start in range(0, n, slice_rows):
        part = {k: v[start : start + slice_rows].to(device) for k, v in data.items()}
        scores, size = evaluate(model, part, batch_size), len(part["answers"])
        # counts back from the slice's exact fractions, so the result is count / total (180/200 is 0.9)
        correct, loss = correct + round(scores["accuracy"] * size), loss + scores["loss"] * size
        for hop, accuracy in scores["accuracy_by_hop"].items():
            hit, total = by_hop.get(hop, (0, 0))
            count = int((part["hops"] == int(hop)).sum())
            by_hop[hop] = (hit + round(accuracy * count), total + count)
        done(size)
    return (
        correct / n,
        loss / n,
        {hop: hit / total for hop, (hit, total) in sorted(by_hop.items(), key=lambda kv: int(kv[0]))},
    )


def accuracy_at(result: dict, length: int):
    """The accuracy at ``length`` in a length_generalisation result (None if not measured)."""
    lengths = list(result["lengths"])
    return result["accuracy"][lengths.index(length)] if length in lengths else None

"""Length generalisation (Section 3.6, Figure 5B; claim C10): accuracy against total length.

Inputs of total length n are the task's 17-token core with n - 17 extra target-window
symbols inserted before the effective target window (``Task.generate(extra_target=...)``):
the answer and the hop structure are unchanged.  Each length gets its own fresh balanced
set (seed ``seed``; equal hop shares), at most ``count`` sequences and at most
``max_tokens`` tokens in all (at least ``min_count`` sequences), so the longest lengths cost
what the budget allows.  Accuracy is ``training.train.evaluate`` (the validation routine of
training: argmax of the last position's logits), run in chunks of at most
``batch_tokens`` tokens (batch size 1 at 5,000 tokens with the default) so memory is bounded.

``split_accuracy``: the same routine on one of the paper's fixed splits (the 45,600-sequence
test split by default), the held-out accuracy the README reports.
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from .tasks import get_task
from .train import evaluate

__all__ = ["DEFAULT_LENGTHS", "length_generalisation", "split_accuracy", "sequences_for", "batch_size_for"]

DEFAULT_LENGTHS = (17, 25, 50, 100, 200, 400, 850, 1500, 3000, 5000)


def sequences_for(length: int, count: int, max_tokens: int | None, min_count: int) -> int:
    if max_tokens is None:
        return count
    return max(min(count, min_count), min(count, max_tokens // length))


def batch_size_for(length: int, batch_tokens: int) -> int:
    return max(1, min(512, batch_tokens // length))


def length_generalisation(model, task, lengths=DEFAULT_LENGTHS, count: int = 400, seed: int = 3,
                          max_tokens: int | None = None, min_count: int = 64, batch_tokens: int = 16384,
                          run: str | None = None, progress: bool = True) -> dict:
    """The length_generalisation.json object: accuracy overall and per hop at each length."""
    task = get_task(task)
    lengths = [int(n) for n in lengths]
    for n in lengths:
        if n < task.seq_len:
            raise ValueError(f"length {n} is shorter than the task's {task.seq_len} tokens")
    sizes = [sequences_for(n, count, max_tokens, min_count) for n in lengths]
    model.eval()
    result = {"task": task.name, "run": run, "lengths": lengths, "accuracy": [], "per_hop": {}, "n_per_length": sizes,
              "seed": seed, "construction": "Task.generate(n_per_length, seed, extra_target=length - 17)",
              "loss": []}
    bar = tqdm(total=sum(n * m for n, m in zip(lengths, sizes)), disable=not progress, desc=f"evaluate {task.name}",
               unit="tok", unit_scale=True, dynamic_ncols=True)
    per_hop_rows = []
    for n, m in zip(lengths, sizes):
        batch = task.generate(m, seed, extra_target=n - task.seq_len)
        # evaluate in slices so the bar moves at 5,000 tokens; counts are re-weighted below
        correct, loss, by_hop = 0.0, 0.0, {}
        slice_rows = max(batch_size_for(n, batch_tokens), 64)
        for start in range(0, m, slice_rows):
            part = batch.select(slice(start, start + slice_rows))
            data = {k: torch.as_tensor(getattr(part, k), dtype=torch.long) for k in ("inputs", "answers", "hops")}
            scores = evaluate(model, data, batch_size_for(n, batch_tokens))
            correct += scores["accuracy"] * len(part)
            loss += scores["loss"] * len(part)
            for hop, acc in scores["accuracy_by_hop"].items():
                size = int((part.hops == int(hop)).sum())
                hit, total = by_hop.get(hop, (0.0, 0))
                by_hop[hop] = (hit + acc * size, total + size)
            bar.update(n * len(part))
        result["accuracy"].append(correct / m)
        result["loss"].append(loss / m)
        per_hop_rows.append({hop: hit / total for hop, (hit, total) in by_hop.items()})
    bar.close()
    for hop in sorted({h for row in per_hop_rows for h in row}, key=int):
        result["per_hop"][hop] = [row.get(hop) for row in per_hop_rows]
    result["chance"] = 1.0 / task.n_answer_values
    return result


def split_accuracy(model, task, split: str = "test", batch_size: int = 600, run: str | None = None,
                   progress: bool = True) -> dict:
    """Accuracy (overall, per hop) and loss on a split of ``paper_splits(task, seed=0)``."""
    from .datasets import PAPER_SPLIT_SIZES, paper_splits

    if split not in PAPER_SPLIT_SIZES:
        raise ValueError(f"split must be one of {', '.join(PAPER_SPLIT_SIZES)}, got {split!r}")
    task = get_task(task)
    batch = paper_splits(task.name, seed=0)[split]
    data = {k: torch.as_tensor(getattr(batch, k), dtype=torch.long) for k in ("inputs", "answers", "hops")}
    model.eval()
    chunk = 50 * batch_size  # bar steps; the accuracy is re-weighted by chunk size
    correct, loss, by_hop = 0.0, 0.0, {}
    with tqdm(total=len(batch.answers), disable=not progress, desc=f"{split} {task.name}", unit="seq",
              dynamic_ncols=True) as bar:
        for start in range(0, len(batch.answers), chunk):
            part = {k: v[start:start + chunk] for k, v in data.items()}
            scores, size = evaluate(model, part, batch_size), len(part["answers"])
            correct, loss = correct + scores["accuracy"] * size, loss + scores["loss"] * size
            for hop, acc in scores["accuracy_by_hop"].items():
                hit, total = by_hop.get(hop, (0.0, 0))
                count = int((part["hops"] == int(hop)).sum())
                by_hop[hop] = (hit + acc * count, total + count)
            bar.update(size)
    n = len(batch.answers)
    return {"task": task.name, "run": run, "split": split, "data": "training.datasets.paper_splits(task, seed=0)",
            "n": n, "accuracy": correct / n, "loss": loss / n,
            "per_hop": {hop: hit / total for hop, (hit, total) in sorted(by_hop.items(), key=lambda kv: int(kv[0]))},
            "n_correct": round(correct)}


def accuracy_at(result: dict, length: int):
    """The accuracy at ``length`` in a length_generalisation result (None if not measured)."""
    lengths = list(result["lengths"])
    return result["accuracy"][lengths.index(length)] if length in lengths else None


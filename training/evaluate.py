"""Length generalisation (Section 3.6, Figure 5B; claim C10): accuracy against total length.

Inputs of total length n are the task's 17-token core with n - 17 extra target-window
symbols inserted before the effective target window (``Task.generate(extra_target=...)``):
the answer and the hop structure are unchanged.  Each length gets its own fresh balanced
set (seed ``seed``; equal hop shares), at most ``count`` sequences and at most
``max_tokens`` tokens in all (at least ``min_count`` sequences), so the longest lengths cost
what the budget allows.  Accuracy is ``training.train.evaluate`` (the validation routine of
training: argmax of the last position's logits), run in chunks of at most
``batch_tokens`` tokens (batch size 1 at 5,000 tokens with the default) so memory is bounded.
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from .tasks import get_task
from .train import evaluate

__all__ = ["DEFAULT_LENGTHS", "length_generalisation", "sequences_for", "batch_size_for"]

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


def accuracy_at(result: dict, length: int):
    """The accuracy at ``length`` in a length_generalisation result (None if not measured)."""
    lengths = list(result["lengths"])
    return result["accuracy"][lengths.index(length)] if length in lengths else None


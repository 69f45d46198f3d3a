"""Softmax dilution of every layer at every length: how hard each layer's last-token
attention still is when hundreds of extra target-window symbols are inserted.

Why.  Lemma F.1 (``constructions.temperature``) replaces average-hard attention by softmax
when beta lambda >= ln((n - 1) Gamma / delta): the logit gap must grow like ln n, or the n - 1
losing keys, each at most e^(-beta lambda) of the winner's weight, together take over.  A
trained layer's logits already carry its inverse temperature (the 1/sqrt(head_dim) scale,
the learned weight norms and, for a length-scaled variant, the query scale), so the measured
logit gap IS beta lambda.  This module measures, per layer and length, on the same inputs:

* ``gap``: ``theory.discrepancy.logit_gap`` of the last-token logit row (beta lambda);
* ``top_weight``: the softmax weight of the largest logit, i.e. what the worst-case bound
  (n - 1) e^(-beta lambda) estimates from above: 1 - top_weight is the weight the losing keys
  actually take.

Summaries over the inputs (quantiles ``QUANTILES`` and the mean) are what
``training.analysis.break_prediction`` turns into a predicted break length.  One pass of the
model per length (``measured_discrepancy.last_row_readings``), ``count`` inputs per length,
the inputs of ``Task.generate(count, seed, extra_target=n - 17)``.
"""

from __future__ import annotations

import time

import numpy as np

from .measured_discrepancy import DEFAULT_LENGTHS, TOKEN_BUDGET, last_row_readings

__all__ = ["QUANTILES", "DEFAULT_COUNT", "DEFAULT_SEED", "dilution_profile", "summarise"]

QUANTILES = (0.0, 0.1, 0.25, 0.5)  # 0.1: accuracy "below 0.9" means one input in ten fails
DEFAULT_COUNT = 32
DEFAULT_SEED = 5  # the measured discrepancy's seed: the same inputs as analysis.json's block


def summarise(values: np.ndarray) -> dict:
    """{"q0": min, "q0.1": ..., "q0.5": median, "mean": ...} of one layer's per-input values."""
    out = {f"q{q:g}": float(np.quantile(values, q)) for q in QUANTILES}
    out["mean"] = float(np.mean(values))
    return out


def dilution_profile(
    adapter,
    task,
    lengths=DEFAULT_LENGTHS,
    count: int = DEFAULT_COUNT,
    seed: int = DEFAULT_SEED,
    token_budget: int = TOKEN_BUDGET,
    progress: bool = True,
) -> dict:
    """The dilution block: lengths, and per layer the summaries of ``gap`` and ``top_weight``
    at every length (lists aligned with ``lengths``)."""
    start = time.time()
    lengths = [int(n) for n in lengths]
    readings = last_row_readings(adapter, task, lengths, count, seed, token_budget, progress, desc="dilution")
    layers = []
    for layer in range(adapter.n_layers):
        entry = {"layer": layer}
        for name in ("gap", "top_weight"):
            per_length = [summarise(r[name][layer]) for r in readings]
            entry[name] = {key: [s[key] for s in per_length] for key in per_length[0]}
        layers.append(entry)
    return {
        "lengths": lengths,
        "count": count,
        "seed": seed,
        "quantiles": list(QUANTILES),
        "gap": "theory.discrepancy.logit_gap of the last-token logit row: the measured beta * lambda",
        "top_weight": "softmax weight of the largest last-token logit",
        "layers": layers,
        "seconds": round(time.time() - start, 1),
    }

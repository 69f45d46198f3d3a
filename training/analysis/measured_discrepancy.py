"""Measured discrepancy of trained layers against the constructions' exact discrepancy
(Definition 3.1, Theorem 3.2, Section 3.5).

Measured.  For each length n of a log-spaced grid (17 .. 5,000 tokens: the 17-token core
plus n - 17 extra target-window symbols, Section 3.6) we run a few dozen inputs through the
model and take, per layer and input, ``theory.discrepancy.logit_gap`` of the last-token
logit row (largest minus second-largest pre-softmax logit, a tie counting 0).  Summaries
over inputs: min (the "min" reading of Definition 3.1), median and mean.  Inputs are run in
chunks of at most ``token_budget`` tokens, so memory stays bounded at 5,000 tokens.

Decay exponent: the least-squares slope of log(median gap) against log(n) over the lengths
where the median is positive (the same fit on the theory curve, over its positive values).

Theory.  Each layer is classified by its positional/symbolic scores at the analysed step
(``classify``): "index" (positional), "retrieval" (symbolic) or "other".  An Index layer is
compared with T_Index at the layer's dominant angle (``theory.discrepancy_index.
index_discrepancy``, reading "min": the smallest per-input gap over all inputs of length n,
exact at every n); a Retrieval layer with T_Retrieval at its dominant angle and
|ALPH| = the task's alphabet (number 120, letter 8), reading "margin" (smallest gap between
the matched symbol's best logit and any other symbol's best logit): exact closed form inside
Theorem 3.2's regime 2 (n - 1) theta < omega (``retrieval_discrepancy``), float64
``retrieval_general`` beyond it, the route named per value.  The constructions' logits are
cosines (scale 1), the trained ones are not: compare the SHAPE (exponents), not magnitudes.
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from theory.discrepancy import logit_gap
from theory.discrepancy_index import index_discrepancy
from theory.discrepancy_retrieval import retrieval_discrepancy, retrieval_general

__all__ = [
    "DEFAULT_LENGTHS",
    "CLASSIFY_RULE",
    "classify",
    "measured_gaps",
    "decay_exponent",
    "theory_curve",
    "measured_discrepancy",
    "last_row_readings",
    "top_weight",
    "ALPH_SIZE",
    "DECAY_THRESHOLD",
    "TOKEN_BUDGET",
    "batch_rows",
]

DEFAULT_LENGTHS = (17, 25, 50, 100, 200, 400, 850, 1500, 3000, 5000)
ALPH_SIZE = {"number": 120, "letter": 8}
# a layer is one kind when its own score reaches CLASSIFY_HIGH and the other stays at most CLASSIFY_LOW
CLASSIFY_HIGH, CLASSIFY_LOW = 0.8, 0.5
CLASSIFY_RULE = (
    f"index if s_POS >= {CLASSIFY_HIGH} and s_SYM <= {CLASSIFY_LOW}; retrieval if s_SYM >= {CLASSIFY_HIGH} "
    f"and s_POS <= {CLASSIFY_LOW}; else other (mean scores over the analysed inputs)"
)
# a gap "decays with n" when the fitted exponent is at most this (17 -> 5,000 then shrinks it >= 4x)
DECAY_THRESHOLD = -0.25
TOKEN_BUDGET = 32768  # tokens per forward pass (at least one sequence)


def classify(positional: float, symbolic: float) -> str:
    if positional >= CLASSIFY_HIGH and symbolic <= CLASSIFY_LOW:
        return "index"
    if symbolic >= CLASSIFY_HIGH and positional <= CLASSIFY_LOW:
        return "retrieval"
    return "other"


def batch_rows(length: int, token_budget: int) -> int:
    """Sequences per chunk: at most ``token_budget`` tokens, at least one sequence."""
    return max(1, token_budget // length)


def last_row_readings(
    adapter,
    task,
    lengths,
    count: int,
    seed: int,
    token_budget: int = TOKEN_BUDGET,
    progress: bool = True,
    desc: str = "discrepancy",
) -> list[dict]:
    """Per length, arrays (layers, count * heads) read off every last-token logit row:
    ``gap`` (``logit_gap``) and ``top_weight`` (the softmax weight of the largest logit).
    One pass serves the discrepancy here and the softmax dilution of
    ``training.analysis.dilution``."""
    out = []
    bar = tqdm(
        total=sum(count * n for n in lengths),
        disable=not progress,
        desc=desc,
        unit="tok",
        unit_scale=True,
        dynamic_ncols=True,
    )
    for n in lengths:
        if n < task.seq_len:
            raise ValueError(f"length {n} is shorter than the task's {task.seq_len} tokens")
        batch = task.generate(count, seed, extra_target=n - task.seq_len)
        gaps, weights = [[] for _ in range(adapter.n_layers)], [[] for _ in range(adapter.n_layers)]
        step = batch_rows(n, token_budget)
        for start in range(0, count, step):
            _, logits = adapter.trace(batch.inputs[start : start + step])
            for layer, rows in enumerate(logits):
                rows = rows.reshape(-1, rows.shape[-1])
                gaps[layer] += [float(logit_gap(row)) for row in rows]
                weights[layer] += list(top_weight(rows))
            bar.update(n * len(batch.inputs[start : start + step]))
        out.append({"gap": np.array(gaps), "top_weight": np.array(weights)})
    bar.close()
    return out


def top_weight(rows: np.ndarray) -> np.ndarray:
    """Softmax weight of each row's largest logit, 1 / sum_j e^(L_j - max L), in float64."""
    rows = np.asarray(rows, dtype=np.float64)
    return 1.0 / np.exp(rows - rows.max(axis=-1, keepdims=True)).sum(axis=-1)


def measured_gaps(
    adapter, task, lengths, count: int, seed: int, token_budget: int = TOKEN_BUDGET, progress: bool = True
) -> list[np.ndarray]:
    """Per length, an array (layers, count * heads) of per-input logit gaps."""
    return [r["gap"] for r in last_row_readings(adapter, task, lengths, count, seed, token_budget, progress)]


def decay_exponent(lengths, values) -> float | None:
    """Slope of log(value) vs log(n) over the positive values; None with < 2 of them."""
    n, v = (
        np.asarray(lengths, dtype=np.float64),
        np.asarray([np.nan if x is None else x for x in values], dtype=float),
    )
    keep = np.isfinite(v) & (v > 0)
    if keep.sum() < 2:
        return None
    return float(np.polyfit(np.log(n[keep]), np.log(v[keep]), 1)[0])


def theory_curve(kind: str, angle: float, lengths, alph_size: int) -> dict:
    """The matching construction's discrepancy at ``angle`` for every length (module doc)."""
    if kind == "index":
        values = [index_discrepancy(angle, int(n), "min")["float"] for n in lengths]
        return {
            "construction": "T_Index",
            "reading": "min",
            "angle": angle,
            "values": values,
            "routes": ["exact (continued fractions)"] * len(values),
            "decay_exponent": decay_exponent(lengths, values),
        }
    if kind == "retrieval":
        values, routes = [], []
        for n in lengths:
            try:
                values.append(retrieval_discrepancy(angle, alph_size, int(n), "margin")["float"])
                routes.append("exact (closed form)")
            except ValueError:  # beyond the regime: the float64 optimisation over every row
                values.append(retrieval_general(angle, alph_size, int(n), "margin"))
                routes.append("float64 (retrieval_general)")
        return {
            "construction": "T_Retrieval",
            "reading": "margin",
            "angle": angle,
            "alph_size": alph_size,
            "values": values,
            "routes": routes,
            "decay_exponent": decay_exponent(lengths, values),
        }
    # neither positional nor symbolic: no construction matches (same keys, so plots need no special case)
    return {
        "construction": None,
        "reading": None,
        "angle": angle,
        "values": [None] * len(lengths),
        "routes": [None] * len(lengths),
        "decay_exponent": None,
    }


def measured_discrepancy(
    adapter,
    task,
    kinds,
    dominant_ids,
    angles,
    lengths=DEFAULT_LENGTHS,
    count: int = 32,
    seed: int = 5,
    token_budget: int = TOKEN_BUDGET,
    progress: bool = True,
) -> dict:
    """The ``measured_discrepancy`` block of analysis.json (without its ``step``)."""
    lengths = [int(n) for n in lengths]
    gaps = measured_gaps(adapter, task, lengths, count, seed, token_budget, progress)
    layers = []
    for layer in range(adapter.n_layers):
        per_length = [g[layer] for g in gaps]
        median = [float(np.median(x)) for x in per_length]
        exponent = decay_exponent(lengths, median)
        angle = (
            None if angles[layer] is None else float(angles[layer])
        )  # None: a NoPE layer, no rotating plane
        theory = theory_curve(
            kinds[layer] if angle is not None else "other", angle, lengths, ALPH_SIZE[task.name]
        )
        decays = None if exponent is None else exponent <= DECAY_THRESHOLD
        expected = {"index": True, "retrieval": False}.get(kinds[layer]) if angle is not None else None
        layers.append(
            {
                "layer": layer,
                "kind": kinds[layer],
                "dominant_id": None if dominant_ids[layer] is None else int(dominant_ids[layer]),
                "angle": angle,
                "min": [float(x.min()) for x in per_length],
                "median": median,
                "mean": [float(x.mean()) for x in per_length],
                "decay_exponent": exponent,
                "decays": decays,
                "theory_says_decays": expected,
                "agrees_with_theory": None if expected is None or decays is None else decays == expected,
                "theory": theory,
            }
        )
    return {
        "lengths": lengths,
        "count": count,
        "seed": seed,
        "classify_rule": CLASSIFY_RULE,
        "decay_rule": f"decays if the log-log slope of the median gap is <= {DECAY_THRESHOLD}",
        "gap": "theory.discrepancy.logit_gap of the last-token logit row (largest - second largest)",
        "layers": layers,
    }

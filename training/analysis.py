"""Positional and symbolic scores of trained models over training (Appendix D, E; claims C1-C3),
with entropy, purity, frequency use, Index geometry and measured discrepancy: the whole
``python -m training analyze`` pipeline.

Scores (``theory.scores`` holds the one formula).  For a layer, the hidden states ENTERING
it are swapped between two positions a < b before the query (positions unchanged, the
query never swapped) and only that layer's last-token logits are recomputed; all
``(T-1)(T-2)/2`` swaps (120 for 17 tokens), tau = 1e-4 with |D_a - D_b|.  Two routes:

* ``rerun``: literally swap the hidden states and recompute through the model's own code
  (``Adapter.last_logits``: our GPT-J's ``layer_last_token_logits``, HF's rotary code, ...);
* ``fast``: the cross matrix ``cross[c, p]`` (content c at position p, one matmul of the keys
  against the query rotated to every offset, ``Adapter.cross``) and
  ``theory.scores.swapped_rows_from_cross``.  Equal to ``rerun`` to ~1e-12 in float64 (tested).

Precision: alpha = softmax(|D_a - D_b| / 1e-4) turns a 1e-6 change of an attention weight
into a 1% change of a swap's weight, so checkpoints are analysed in float64.

Inputs: ``N_INPUTS`` = 100 sequences ``Task.generate(100, seed=SCORE_SEED)`` (25 per hop
count, balanced answers), the same set at every checkpoint; generated rather than drawn
from the paper test split so that smoke runs need no 480,000-sequence data set.

Purity (``PURITY_RULE``): a head is pure of kind "positional" at a checkpoint when its mean
s_POS >= 1 - gamma and its mean s_SYM <= gamma ("symbolic" the other way round); it
"becomes pure at step S" when S is the first checkpoint from which it stays pure of the
same kind at every later checkpoint through the last one.  ``count[s]`` = number of heads
pure from a step <= s (the cumulative tally of Figure 2C); ``count_instantaneous[s]`` =
heads pure at s.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from theory.scores import (DEFAULT_TAU, attention_entropy, head_scores, head_scores_from_cross, swap_pairs,
                           swapped_rows_from_cross)

from .adapters import adapter_for
from .checkpoints import Metrics, RunError, list_checkpoints, load_model
from .frequency import frequency_use
from .geometry import index_geometry
from .measured_discrepancy import DEFAULT_LENGTHS, classify, measured_discrepancy
from .tasks import get_task, load_vocab

__all__ = ["SCORE_SEED", "N_INPUTS", "METHODS", "GAMMAS", "PURITY_RULE", "score_inputs", "swapped_rows",
           "layer_scores", "model_scores", "purity", "read_validation", "best_step", "check_run",
           "checkpoint_dir_of", "analyse_run"]

SCORE_SEED = 2605
N_INPUTS = 100
METHODS = ("fast", "rerun")
GAMMAS = (0.1, 0.05)
PURITY_RULE = ("pure at a checkpoint: one mean score >= 1 - gamma and the other <= gamma (kind = the high one); "
               "pure_from_step = the first checkpoint from which the head stays pure of the same kind through the "
               "last checkpoint (null: not pure at the last one); count[s] = heads with pure_from_step <= s")


def score_inputs(task, count: int = N_INPUTS, seed: int = SCORE_SEED):
    """The fixed input set of the scores (module doc)."""
    return get_task(task).generate(count, seed)


def _swap_index(length: int, pairs: np.ndarray) -> np.ndarray:
    """(P, T) gather indices: row i reads position b at a and a at b for pair i = (a, b)."""
    index = np.tile(np.arange(length), (len(pairs), 1))
    rows = np.arange(len(pairs))
    index[rows, pairs[:, 0]], index[rows, pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
    return index


def swapped_rows(adapter, layer: int, hidden, pairs: np.ndarray, method: str = "fast", chunk: int = 10):
    """(base logits (B, H, T), post-swap logits (B, H, P, T)) by either route."""
    if method == "fast":
        cross = adapter.cross(layer, hidden)
        return np.diagonal(cross, axis1=-2, axis2=-1).copy(), swapped_rows_from_cross(cross, pairs)
    if method != "rerun":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    base = adapter.last_logits(layer, hidden)
    B, T = hidden.shape[0], hidden.shape[1]
    index = _swap_index(T, pairs)
    if isinstance(hidden, torch.Tensor):
        index = torch.as_tensor(index)
    out = []
    for start in range(0, B, chunk):
        part = hidden[start:start + chunk]
        swapped = part[:, index]  # (b, P, T, d): contents moved, positions (slots) kept
        logits = adapter.last_logits(layer, swapped.reshape(-1, T, swapped.shape[-1]))  # (b P, H, T)
        out.append(logits.reshape(len(part), len(pairs), -1, T).transpose(0, 2, 1, 3))
    return base, np.concatenate(out)


def layer_scores(adapter, layer: int, hidden, method: str = "fast", tau: float = DEFAULT_TAU) -> dict:
    """Per input and head (B, H): s_POS, s_SYM and the entropy of the last-token attention."""
    pairs = swap_pairs(hidden.shape[1] - 1)  # every position before the query
    if method == "fast":  # the cross matrix alone, O(P) per input (theory.scores)
        cross = adapter.cross(layer, hidden)
        base = np.diagonal(cross, axis1=-2, axis2=-1)
        positional, symbolic = head_scores_from_cross(cross, pairs, tau)
    else:
        base, rows = swapped_rows(adapter, layer, hidden, pairs, method)
        positional, symbolic = head_scores(base, rows, pairs, tau)
    return {"positional": positional, "symbolic": symbolic, "entropy": attention_entropy(base)}


def model_scores(adapter, ids, method: str = "fast", tau: float = DEFAULT_TAU, bar=None) -> dict:
    """Every layer's scores on ``ids``: arrays (layers, B, H)."""
    adapter = adapter_for(adapter)
    hidden_in = adapter.hidden_states(ids)
    out = {"positional": [], "symbolic": [], "entropy": []}
    for layer, hidden in enumerate(hidden_in):
        for key, value in layer_scores(adapter, layer, hidden, method, tau).items():
            out[key].append(value)
        if bar is not None:
            bar.update(1)
    return {k: np.array(v) for k, v in out.items()}


def _state(positional: float, symbolic: float, gamma: float):
    if positional >= 1 - gamma and symbolic <= gamma:
        return "positional"
    if symbolic >= 1 - gamma and positional <= gamma:
        return "symbolic"
    return None


def purity(positional, symbolic, steps, gamma: float) -> dict:
    """The purity block for one gamma from mean scores (steps, layers) (``PURITY_RULE``)."""
    positional, symbolic = np.asarray(positional, dtype=float), np.asarray(symbolic, dtype=float)
    states = [[_state(p, s, gamma) for p, s in zip(prow, srow)] for prow, srow in zip(positional, symbolic)]
    pure_from, kinds = [], []
    for layer in range(positional.shape[1]):
        final = states[-1][layer]
        first = None
        if final is not None:
            first = len(steps) - 1
            while first > 0 and states[first - 1][layer] == final:
                first -= 1
        kinds.append(final)
        pure_from.append(None if first is None else int(steps[first]))

    def tally(kind=None):
        return [sum(1 for f, k in zip(pure_from, kinds) if f is not None and f <= step and kind in (None, k))
                for step in steps]

    return {"gamma": gamma, "rule": PURITY_RULE, "count": tally(), "count_positional": tally("positional"),
            "count_symbolic": tally("symbolic"),
            "count_instantaneous": [sum(s is not None for s in row) for row in states],
            "state": states, "pure_from_step": pure_from, "kind": kinds}


# ---- runs ------------------------------------------------------------------------------------
def read_validation(run) -> list[dict]:
    """Validation accuracy per checkpoint from RUN/metrics.jsonl."""
    records = Metrics(Path(run) / "metrics.jsonl").read()
    return [{"step": int(r["step"]), "overall": r["accuracy"], "per_hop": r.get("accuracy_by_hop", {})}
            for r in records if r.get("split") == "validation"]


def best_step(validation: list[dict]) -> int | None:
    """The step of the highest validation accuracy, the earliest on ties (training's rule)."""
    best = None
    for record in validation:
        if best is None or record["overall"] > best["overall"]:
            best = record
    return None if best is None else best["step"]


def check_run(run, task) -> None:
    """RunError (one line) unless RUN holds a run of ``task``."""
    run = Path(run)
    if not run.is_dir():
        raise RunError(f"run directory {run} does not exist")
    for name in ("config.json", "model.safetensors", "vocab.json"):
        if not (run / name).is_file():
            raise RunError(f"{run} is not a run: missing {name}")
    try:
        load_vocab(run / "vocab.json", task)
    except (OSError, ValueError) as bad:
        raise RunError(f"--task {get_task(task).name} does not match {run}: {bad}") from None


def checkpoint_dir_of(run, checkpoint_dir=None) -> Path:
    """--checkpoint-dir, else the directory the run's settings line remembers, else RUN/checkpoints."""
    if checkpoint_dir is not None:
        return Path(checkpoint_dir)
    header = next((r for r in Metrics(Path(run) / "metrics.jsonl").read() if r.get("split") == "settings"), {})
    return Path(run) / header.get("checkpoint_dir", "checkpoints")


def _means(values: np.ndarray) -> list:
    """(layers, B, H) -> per-layer mean over inputs and heads."""
    return [float(x) for x in values.reshape(values.shape[0], -1).mean(1)]


def _minmax(rows: list[list[float]]) -> list[list[float]]:
    """Min-max normalise each layer's column over steps (a constant column gives 0)."""
    a = np.asarray(rows, dtype=float)
    low, high = a.min(0), a.max(0)
    span = np.where(high > low, high - low, 1.0)
    return ((a - low) / span).tolist()


def analyse_run(run, task, method: str = "fast", checkpoint_dir=None, n_inputs: int = N_INPUTS,
                seed: int = SCORE_SEED, tau: float = DEFAULT_TAU, discrepancy: bool = True,
                discrepancy_lengths=DEFAULT_LENGTHS, discrepancy_count: int = 32, discrepancy_seed: int = 5,
                progress: bool = True) -> dict:
    """The analysis.json object of a run (schema in the module doc of cli_analyze)."""
    started = time.perf_counter()
    task = get_task(task)
    check_run(run, task)
    if method not in METHODS:
        raise RunError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    ckpt_dir = checkpoint_dir_of(run, checkpoint_dir)
    checkpoints = list_checkpoints(ckpt_dir)
    if not checkpoints:
        raise RunError(f"no checkpoints (step-NNNNNN/) in {ckpt_dir}; pass --checkpoint-dir")
    ids = score_inputs(task, n_inputs, seed).inputs
    steps = [step for step, _ in checkpoints]
    means = {"positional": [], "symbolic": [], "entropy": []}
    first = load_model(checkpoints[0][1])
    bar = tqdm(total=len(checkpoints) * first.config.n_layer, disable=not progress, dynamic_ncols=True,
               desc=f"scores {task.name} ({method})", unit="layer")
    per_head = {"positional": [], "symbolic": []}
    for step, path in checkpoints:
        model = load_model(path).double()
        scores = model_scores(adapter_for(model), ids, method, tau, bar)
        for key in means:
            means[key].append(_means(scores[key]))
        for key in per_head:
            per_head[key].append(scores[key].mean(1).tolist())  # (layers, H)
        bar.set_postfix(step=step)
    bar.close()
    validation = read_validation(run)
    best = best_step(validation)
    result = {
        "task": task.name, "run": str(run), "method": method, "n_inputs": n_inputs, "tau": tau, "seed": seed,
        "inputs": f"Task.generate({n_inputs}, seed={seed}) (balanced, equal hop shares)",
        "checkpoint_dir": str(ckpt_dir), "steps": steps, "best_step": best,
        "validation": [v for v in validation if v["step"] in steps] or validation,
        "layers": first.config.n_layer, "heads": first.config.n_head,
        "scores": {"positional": means["positional"], "symbolic": means["symbolic"], "entropy": means["entropy"],
                   "entropy_normalised": _minmax(means["entropy"]),
                   "positional_per_head": per_head["positional"], "symbolic_per_head": per_head["symbolic"]},
        "purity": {str(g): purity(means["positional"], means["symbolic"], steps, g) for g in GAMMAS},
    }
    # the best weights (RUN/model.safetensors) are the best checkpoint's
    best_index = steps.index(best) if best in steps else len(steps) - 1
    model = load_model(run).double()
    adapter = adapter_for(model)
    hidden_in = adapter.hidden_states(ids)
    frequency = frequency_use(adapter, hidden_in)
    result["frequency"] = {"step": best, **frequency}
    geometry_layer = 1 if adapter.n_layers > 1 else 0
    result["index_geometry"] = index_geometry(adapter, geometry_layer, hidden_in[geometry_layer], ids, task,
                                              frequency["dominant_id"][geometry_layer])
    result["index_geometry_layers"] = [
        {k: v for k, v in index_geometry(adapter, layer, hidden_in[layer], ids, task,
                                         frequency["dominant_id"][layer]).items()
         if k not in ("keys", "queries", "offsets", "key_positions", "query_positions")}
        for layer in range(adapter.n_layers)]
    kinds = [classify(p, s) for p, s in zip(means["positional"][best_index], means["symbolic"][best_index])]
    result["layer_kind"] = {"step": steps[best_index], "kind": kinds}
    if discrepancy:
        fast_model = adapter_for(load_model(run))  # float32: lengths up to 5,000 (noise ~1e-6 of a logit)
        block = measured_discrepancy(fast_model, task, kinds, frequency["dominant_id"], frequency["dominant_frequency"],
                                     discrepancy_lengths, discrepancy_count, discrepancy_seed, progress=progress)
        result["measured_discrepancy"] = {"step": best, "precision": "float32", **block}
    result["seconds"] = round(time.perf_counter() - started, 1)
    return _finite(result)


def _finite(value):
    """Non-finite floats become None, so the file is strict JSON (a circular correlation of a
    constant sample, for one, is undefined)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value

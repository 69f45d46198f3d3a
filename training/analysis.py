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
  against the query rotated to every offset, ``Adapter.crosses``; queries and keys from
  ``Adapter.hidden_and_keys``, for our GPT-J the forward pass's own) and
  ``theory.scores.head_scores_from_cross`` (O(P) per input), all layers in one pass
  (``fast_scores``).  Equal to ``rerun`` to ~1e-12 in float64 (tested).

Precision: alpha = softmax(|D_a - D_b| / 1e-4) turns a 1e-6 change of an attention weight
into a 1% change of a swap's weight, so checkpoints are analysed in float64.

Inputs: ``N_INPUTS`` = 100 sequences ``Task.generate(100, seed=SCORE_SEED)`` (25 per hop
count, balanced answers), the same set at every checkpoint; generated rather than drawn
from the paper test split so that smoke runs need no 480,000-sequence data set.

Purity: ``training.purity``.
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
from .purity import GAMMAS, purity
from .tasks import get_task, load_vocab

__all__ = ["SCORE_SEED", "N_INPUTS", "METHODS", "score_inputs", "swapped_rows", "layer_scores", "fast_scores",
           "model_scores", "read_validation", "best_step", "check_run", "checkpoint_dir_of", "analyse_run"]

SCORE_SEED = 2605
N_INPUTS = 100
METHODS = ("fast", "rerun")


def score_inputs(task, count: int = N_INPUTS, seed: int = SCORE_SEED):
    """The fixed input set of the scores (module doc)."""
    return get_task(task).generate(count, seed)


def _swap_index(length: int, pairs: np.ndarray) -> np.ndarray:
    """(P, T) gather indices: row i reads position b at a and a at b for pair i = (a, b)."""
    index = np.tile(np.arange(length), (len(pairs), 1))
    rows = np.arange(len(pairs))
    index[rows, pairs[:, 0]], index[rows, pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
    return index


def swapped_rows(adapter, layer: int, hidden, pairs: np.ndarray, method: str = "fast", chunk: int = 10,
                 query_keys=None):
    """(base logits (B, H, T), post-swap logits (B, H, P, T)) by either route (``query_keys``:
    the layer's entry of ``Adapter.hidden_and_keys``, used by ``fast``)."""
    if method == "fast":
        cross = adapter.cross(layer, hidden, query_keys)
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


def layer_scores(adapter, layer: int, hidden, method: str = "fast", tau: float = DEFAULT_TAU,
                 query_keys=None) -> dict:
    """Per input and head (B, H): s_POS, s_SYM and the entropy of the last-token attention
    (``query_keys``: as in ``swapped_rows``)."""
    if method == "fast":
        if query_keys is None:
            query_keys = adapter.last_query_keys(layer, hidden)
        return {key: value[0] for key, value in fast_scores(adapter, [query_keys], tau).items()}
    pairs = swap_pairs(hidden.shape[1] - 1)  # every position before the query
    base, rows = swapped_rows(adapter, layer, hidden, pairs, method)
    positional, symbolic = head_scores(base, rows, pairs, tau)
    return {"positional": positional, "symbolic": symbolic, "entropy": attention_entropy(base)}


FAST_CHUNK = 1 << 22  # elements of the largest temporary of fast_scores (32 MB in float64)


def fast_scores(adapter, query_keys: list, tau: float = DEFAULT_TAU) -> dict:
    """The fast route for several layers at once: arrays (L, B, H) from each layer's
    (last query, keys) of ``Adapter.hidden_and_keys``.  The cross matrices of a group of
    layers and ``theory.scores.head_scores_from_cross`` (O(P) per input) run on all of them
    together; groups stay under ``FAST_CHUNK`` elements (one group for the paper's model)."""
    B, H, T, hd = query_keys[0][1].shape
    pairs = swap_pairs(T - 1)  # every position before the query
    per_layer = B * H * max(T * hd, len(pairs), T * T)
    group = max(1, FAST_CHUNK // per_layer)
    out = {"positional": [], "symbolic": [], "entropy": []}
    for start in range(0, len(query_keys), group):
        cross = adapter.crosses(query_keys[start:start + group])
        positional, symbolic = head_scores_from_cross(cross, pairs, tau)
        out["positional"].append(positional)
        out["symbolic"].append(symbolic)
        out["entropy"].append(attention_entropy(np.diagonal(cross, axis1=-2, axis2=-1)))
    return {key: np.concatenate(value) for key, value in out.items()}


def model_scores(adapter, ids, method: str = "fast", tau: float = DEFAULT_TAU, bar=None) -> dict:
    """Every layer's scores on ``ids``: arrays (layers, B, H)."""
    adapter = adapter_for(adapter)
    if method == "fast":  # the forward pass's own queries and keys where the family has them
        _, query_keys = adapter.hidden_and_keys(ids)
        scores = fast_scores(adapter, query_keys, tau)
        if bar is not None:
            bar.update(len(query_keys))
        return scores
    if method != "rerun":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    out = {"positional": [], "symbolic": [], "entropy": []}
    for layer, hidden in enumerate(adapter.hidden_states(ids)):
        for key, value in layer_scores(adapter, layer, hidden, method, tau).items():
            out[key].append(value)
        if bar is not None:
            bar.update(1)
    return {k: np.array(v) for k, v in out.items()}


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

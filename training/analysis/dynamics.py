"""Score dynamics of a run: the scores of ``training.analysis.scores`` at every checkpoint,
with purity, frequency use, Index geometry and measured discrepancy of the best weights: the
whole ``python -m training analyze`` pipeline (JSON schema in ``training.analysis.cli``).

Purity: ``training.analysis.purity``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from theory.scores import DEFAULT_TAU
from training.run.checkpoints import list_checkpoints
from training.run.checks import RunError
from training.run.metrics import Metrics
from training.run.weights import load_model
from training.tasks.definitions import get_task, load_vocab

from .adapters import adapter_for
from .frequency import frequency_use
from .geometry import index_geometry
from .measured_discrepancy import DEFAULT_LENGTHS, classify, measured_discrepancy
from .purity import GAMMAS, purity
from .scores import METHODS, N_INPUTS, SCORE_SEED, model_scores, score_inputs

__all__ = ["read_validation", "best_step", "check_run", "checkpoint_dir_of", "analyse_run"]


def read_validation(run) -> list[dict]:
    """Validation accuracy per checkpoint from RUN/metrics.jsonl."""
    records = Metrics(Path(run) / "metrics.jsonl").read()
    return [
        {"step": int(r["step"]), "overall": r["accuracy"], "per_hop": r.get("accuracy_by_hop", {})}
        for r in records
        if r.get("split") == "validation"
    ]


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
    header = next(
        (r for r in Metrics(Path(run) / "metrics.jsonl").read() if r.get("split") == "settings"), {}
    )
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


def analyse_run(
    run,
    task,
    method: str = "fast",
    checkpoint_dir=None,
    n_inputs: int = N_INPUTS,
    seed: int = SCORE_SEED,
    tau: float = DEFAULT_TAU,
    discrepancy: bool = True,
    discrepancy_lengths=DEFAULT_LENGTHS,
    discrepancy_count: int = 32,
    discrepancy_seed: int = 5,
    progress: bool = True,
) -> dict:
    """The analysis.json object of a run (schema in the module doc of cli_analyze)."""
    started = time.perf_counter()
    task = get_task(task)
    check_run(run, task)
    if method not in METHODS:
        raise RunError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    ckpt_dir = checkpoint_dir_of(run, checkpoint_dir)
    checkpoints = list_checkpoints(ckpt_dir)
    if not checkpoints:
        raise RunError(
            f"no checkpoints (step-NNNNNN/) in {os.path.normpath(ckpt_dir)}; pass --checkpoint-dir"
        )
    ids = score_inputs(task, n_inputs, seed).inputs
    steps = [step for step, _ in checkpoints]
    means = {"positional": [], "symbolic": [], "entropy": []}
    first = load_model(checkpoints[0][1])
    bar = tqdm(
        total=len(checkpoints) * first.config.n_layer,
        disable=not progress,
        dynamic_ncols=True,
        desc=f"scores {task.name} ({method})",
        unit="layer",
    )
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
        "task": task.name,
        "run": str(run),
        "method": method,
        "n_inputs": n_inputs,
        "tau": tau,
        "seed": seed,
        "inputs": f"Task.generate({n_inputs}, seed={seed}) (balanced, equal hop shares)",
        "checkpoint_dir": str(ckpt_dir),
        "steps": steps,
        "best_step": best,
        "validation": [v for v in validation if v["step"] in steps] or validation,
        "layers": first.config.n_layer,
        "heads": first.config.n_head,
        "scores": {
            "positional": means["positional"],
            "symbolic": means["symbolic"],
            "entropy": means["entropy"],
            "entropy_normalised": _minmax(means["entropy"]),
            "positional_per_head": per_head["positional"],
            "symbolic_per_head": per_head["symbolic"],
        },
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
    result["index_geometry"] = index_geometry(
        adapter,
        geometry_layer,
        hidden_in[geometry_layer],
        ids,
        task,
        frequency["dominant_id"][geometry_layer],
    )
    result["index_geometry_layers"] = [
        {
            k: v
            for k, v in index_geometry(
                adapter, layer, hidden_in[layer], ids, task, frequency["dominant_id"][layer]
            ).items()
            if k not in ("keys", "queries", "offsets", "key_positions", "query_positions")
        }
        for layer in range(adapter.n_layers)
    ]
    kinds = [classify(p, s) for p, s in zip(means["positional"][best_index], means["symbolic"][best_index])]
    result["layer_kind"] = {"step": steps[best_index], "kind": kinds}
    if discrepancy:
        fast_model = adapter_for(load_model(run))  # float32: lengths up to 5,000 (noise ~1e-6 of a logit)
        block = measured_discrepancy(
            fast_model,
            task,
            kinds,
            frequency["dominant_id"],
            frequency["dominant_frequency"],
            discrepancy_lengths,
            discrepancy_count,
            discrepancy_seed,
            progress=progress,
        )
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

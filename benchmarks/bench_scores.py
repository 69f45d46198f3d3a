"""Benchmark (not a test): positional/symbolic scores by the fast route (cross matrix) against
the literal rerun route (swap hidden states, recompute the layer), side by side on the same
model and inputs, and the time of the full score dynamics of both reference runs.

    python benchmarks/bench_scores.py [--threads K] [--repeats R]

1. Speed ratio: the paper's model (a reference checkpoint when one exists, else random
   weights), 100 inputs, all 120 swaps, every layer, float64; fast and rerun alternate
   ``repeats`` times and the ratio of the medians is printed (target >= 100x).
2. Full dynamics: for runs/{number,letter}/checkpoints (13 checkpoints x 12 layers x 100
   inputs each), loading every checkpoint and scoring it with the fast route (target
   < 2 minutes on 2 cores).  Missing runs are replaced by random paper-size models so the
   cost is still measured (and said so).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import torch  # noqa: E402

from training.adapters import adapter_for  # noqa: E402
from theory.scores import swap_pairs  # noqa: E402
from training.analysis import layer_scores, model_scores, score_inputs, swapped_rows  # noqa: E402
from training.checkpoints import list_checkpoints, load_model  # noqa: E402
from training.model import GPTJ, ModelConfig  # noqa: E402


def paper_model(task: str):
    """The last reference checkpoint of ``task`` if there is one, else random paper weights."""
    checkpoints = list_checkpoints(ROOT / "runs" / task / "checkpoints")
    if checkpoints:
        step, path = checkpoints[-1]
        return load_model(path), f"runs/{task} step {step}"
    torch.manual_seed(0)
    return GPTJ(ModelConfig(vocab_size=136 if task == "number" else 128)), "random paper-size weights"


def time_layers(adapter, hidden_in, method: str, rows_only: bool = False) -> float:
    """Seconds to score every layer (rows_only: just the post-swap logit rows, without the
    theory.scores.head_scores step both routes share)."""
    pairs = swap_pairs(hidden_in[0].shape[1] - 1)
    start = time.perf_counter()
    for layer, hidden in enumerate(hidden_in):
        if rows_only:
            swapped_rows(adapter, layer, hidden, pairs, method)
        else:
            layer_scores(adapter, layer, hidden, method)
    return time.perf_counter() - start


def speed_ratio(repeats: int) -> None:
    model, source = paper_model("number")
    adapter = adapter_for(model.double())
    ids = score_inputs("number").inputs
    hidden_in = adapter.hidden_states(ids)
    print(f"model: {source}; 100 inputs x 120 swaps x {adapter.n_layers} layers, float64, "
          f"{torch.get_num_threads()} thread(s); median of {repeats} alternating repeats")
    for rows_only, what in ((False, "scores (rows + head_scores)"), (True, "post-swap logit rows only")):
        fast, rerun = [], []
        for _ in range(repeats):  # alternate, so drift in machine load hits both routes alike
            fast.append(time_layers(adapter, hidden_in, "fast", rows_only))
            rerun.append(time_layers(adapter, hidden_in, "rerun", rows_only))
        f, r = statistics.median(fast), statistics.median(rerun)
        print(f"  {what}: fast {f * 1000:.1f} ms, rerun {r * 1000:.1f} ms per checkpoint; "
              f"fast / rerun speed ratio {r / f:.0f}x (target >= 100x)")


def full_dynamics() -> None:
    ids = {task: score_inputs(task).inputs for task in ("number", "letter")}
    total, layers = 0.0, 0
    for task in ("number", "letter"):
        checkpoints = list_checkpoints(ROOT / "runs" / task / "checkpoints")
        source = f"runs/{task}/checkpoints ({len(checkpoints)} checkpoints)"
        if len(checkpoints) < 13:
            source = f"13 random paper-size models (runs/{task} has {len(checkpoints)} checkpoints)"
            checkpoints = [(None, None)] * 13
        start = time.perf_counter()
        for _, path in checkpoints:
            if path is None:
                model = GPTJ(ModelConfig(vocab_size=136 if task == "number" else 128))
            else:
                model = load_model(path)
            model_scores(adapter_for(model.double()), ids[task], "fast")
            layers += model.config.n_layer
        seconds = time.perf_counter() - start
        total += seconds
        print(f"  {task}: {source}: {seconds:.1f} s")
    print(f"full dynamics, both runs ({layers} layer analyses x 100 inputs, fast route, loading included): "
          f"{total:.1f} s (target < 120 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    speed_ratio(args.repeats)
    full_dynamics()


if __name__ == "__main__":
    main()

"""Benchmark (not a test): does the bench's fraction of peak survive a busy machine?

Times one K table row (``training.run.bench.k_table.Row``: ``train``'s own step, K = 1, one
torch thread, this process pinned to one core) the way ``bench --k-table`` does
(``training.run.bench.timing.rotate``: a 2048^2 GEMM, then the row, round after round), in
blocks that alternate between the machine as it is ("idle") and the same with a busy-loop
process pinned to another core ("loaded"), and prints for both the fraction of the 2048^2
peak by CPU time (the bench's headline) and by wall time, the steps per second by both
clocks, the load averages, and the loaded / idle ratios.

Run: python benchmarks/bench_load_robust.py [--preset paper|smoke] [--blocks 2] [--rounds 3]
     [--steps 3] [--compiled] [--json]
Goal (issue 41): the CPU-time fraction moves by no more than 10% (ratio 0.9..1.1); the wall
fraction is what used to move (0.08..0.74 for the same code).  Needs two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BUSY = "while True: pass"


def pin(cores: set) -> None:
    """This thread (and the threads it starts later: torch's) on ``cores``."""
    os.sched_setaffinity(0, cores)


def busy_loop(core: int) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", BUSY])
    os.sched_setaffinity(child.pid, {core})
    return child


def measure(rows, probes, rounds: int, steps: int) -> list:
    from training.run.bench.timing import MIN_TIMING_S, load_average, rotate

    start = load_average()
    times = rotate(rows, lambda row, n: row.run(n), probes, rounds, steps, min_seconds=MIN_TIMING_S)
    end = load_average()
    out = []
    for row, t in zip(rows, times):
        out.append(
            {
                "mode": "compiled" if row.compiled else "eager",
                "fraction_cpu": t.fraction(row.flops, "2048", "cpu"),
                "fraction_wall": t.fraction(row.flops, "2048", "wall"),
                "steps_per_cpu_s": 1 / t.seconds("cpu"),
                "steps_per_s": 1 / t.seconds("wall"),
                "gemm_gflops_cpu": t.peak("2048", "cpu"),
                "gemm_gflops_wall": t.peak("2048", "wall"),
                "load": [start[0], end[0]],
                "steps_per_timing": t.steps,
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="paper", choices=["paper", "smoke"])
    parser.add_argument("--task", default="letter")
    parser.add_argument("--blocks", type=int, default=2, help="idle/loaded pairs (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per block (default 3)")
    parser.add_argument("--steps", type=int, default=3, help="steps per round (default 3)")
    parser.add_argument("--gemm-size", type=int, default=2048)
    parser.add_argument("--compiled", action="store_true", help="a compiled K = 1 row too")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = parser.parse_args()

    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        print("needs two cores (one for the row, one for the busy loop)", file=sys.stderr)
        return 2
    ours, other = cores[0], cores[1]
    os.environ["OMP_NUM_THREADS"] = "1"
    pin({ours})
    import torch

    torch.set_num_threads(1)
    from training.run.bench.k_table import Row
    from training.run.bench.timing import GemmProbe
    from training.run.presets import get_preset
    from training.run.step import load_data

    recipe, dev = get_preset(args.preset), torch.device("cpu")
    data, _ = load_data(args.task, recipe, dev)
    rows = [Row(args.task, recipe, 1, dev, False, data)]
    if args.compiled:
        rows.append(Row(args.task, recipe, 1, dev, True, data))
    for row in rows:
        row.timed(2)  # warm-up; a compiled row compiles here
    probes = {"2048": GemmProbe(args.gemm_size, args.gemm_size, args.gemm_size)}

    blocks = {"idle": [], "loaded": []}
    for b in range(args.blocks):
        for state in ("idle", "loaded") if b % 2 == 0 else ("loaded", "idle"):
            child = busy_loop(other) if state == "loaded" else None
            try:
                if child is not None:
                    time.sleep(0.5)  # the busy loop running before the first timing
                blocks[state].append(measure(rows, probes, args.rounds, args.steps))
            finally:
                if child is not None:
                    child.kill()
                    child.wait()
            print(f"block {b + 1}/{args.blocks} {state}: done", file=sys.stderr, flush=True)

    result = {
        "preset": args.preset,
        "task": args.task,
        "cores": cores,
        "pinned": {"row": ours, "busy_loop": other},
        "rounds": args.rounds,
        "steps": args.steps,
        "rows": [],
    }
    for i, row in enumerate(rows):
        entry = {"mode": "compiled" if row.compiled else "eager"}
        for state in ("idle", "loaded"):
            got = [block[i] for block in blocks[state]]
            entry[state] = {
                key: round(statistics.median(g[key] for g in got), 4)
                for key in (
                    "fraction_cpu",
                    "fraction_wall",
                    "steps_per_cpu_s",
                    "steps_per_s",
                    "gemm_gflops_cpu",
                    "gemm_gflops_wall",
                )
            }
            entry[state]["load"] = [g["load"] for g in got]
        for key in ("fraction_cpu", "fraction_wall", "steps_per_cpu_s", "steps_per_s"):
            entry[f"ratio_{key}"] = round(entry["loaded"][key] / entry["idle"][key], 3)
        result["rows"].append(entry)

    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.preset} K=1, 1 thread on core {ours}; busy loop on core {other} when loaded")
    for entry in result["rows"]:
        for state in ("idle", "loaded"):
            e = entry[state]
            print(
                f"  {entry['mode']:>8} {state:>6}: fraction of 2048^2 peak {e['fraction_cpu']:.3f} by CPU, "
                f"{e['fraction_wall']:.3f} by wall; steps/s {e['steps_per_cpu_s']:.2f} per CPU s, "
                f"{e['steps_per_s']:.2f} per wall s; GEMM {e['gemm_gflops_cpu']:.0f} / "
                f"{e['gemm_gflops_wall']:.0f} GFLOP/s; load {e['load']}"
            )
        print(
            f"  {entry['mode']:>8} loaded/idle: fraction {entry['ratio_fraction_cpu']} by CPU "
            f"(goal 0.9..1.1), {entry['ratio_fraction_wall']} by wall; steps/s "
            f"{entry['ratio_steps_per_cpu_s']} by CPU, {entry['ratio_steps_per_s']} by wall"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark (not a test): members per hour of ``python -m training study`` with ``--jobs 1``
against ``--jobs 2``, on smoke members (tiny model, 300 steps, short evaluation), each run
in a fresh folder, the two alternated so that a change in the machine's load falls on both.

Run: python benchmarks/bench_study.py [--members 4] [--rounds 2]
Expect about 2x on an idle 2-core machine (each member runs one torch thread); on a loaded
one the ratio says how much a second job still gains.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def plan(folder: Path, members: int) -> Path:
    path = folder / "plan.json"
    path.write_text(
        json.dumps(
            {
                "name": "bench",
                "root": str(folder / "members"),
                "ship": str(folder / "ship"),
                "tasks": ["letter"],
                "seeds": list(range(members)),
                "variants": {"smoke": {"preset": "smoke", "set": ["steps=300"]}},
                "evaluate": {"test_split": False, "lengths": [17, 50], "count": 64, "seed": 3},
                "analyze": {"n_inputs": 10, "discrepancy": False},
            }
        )
    )
    return path


def members_per_hour(jobs: int, members: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = plan(Path(tmp), members)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "training", "study", str(path), "--jobs", str(jobs), "--no-progress"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        return members / (time.perf_counter() - start) * 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rates = {1: [], 2: []}
    for r in range(args.rounds):
        for jobs in (1, 2) if r % 2 == 0 else (2, 1):
            rates[jobs].append(members_per_hour(jobs, args.members))
            print(f"round {r}: --jobs {jobs}: {rates[jobs][-1]:.0f} members/hour", flush=True)
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(
        json.dumps(
            {
                "members": args.members,
                "rounds": args.rounds,
                "jobs1_members_per_hour": round(one),
                "jobs2_members_per_hour": round(two),
                "speedup_jobs2_vs_jobs1": round(two / one, 2),
                "cpus": os.cpu_count(),
                "load_average_1min": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()

"""Benchmark (not a test): ``python -m figures`` regenerating every figure, as a reader runs it.

    python benchmarks/bench_figures.py [--jobs 1,0] [--repeats R] [--root DIR]

Each run is a fresh interpreter drawing every figure from the shipped inputs into a temporary
folder (``--jobs N``; 0 is the command's default, one worker per CPU this process may use).
Printed per setting: wall time, CPU time (user + sys of the command and its workers) and the
load average before and after.  On a busy machine the wall time measures the other jobs too;
the CPU time barely moves, and on idle cores the wall time is about CPU / workers (plus the
imbalance of the last figure), the estimate printed beside it.  Target (issue 41): under 30 s of
wall time on 2 idle cores.  ``--root`` times another checkout (say, an older commit's copy).
Nothing is trained and nothing is downloaded; the folders are temporary.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 30.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(root: Path, out: Path, jobs: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``python -m figures`` into ``out``."""
    command = [sys.executable, "-m", "figures", "--out", str(out)]
    if jobs:
        command += ["--jobs", str(jobs)]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    if done.returncode != 0:
        sys.exit(f"bench_figures: the command failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return wall, cpu


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1,0", help="comma-separated --jobs values; 0: the default")
    parser.add_argument("--repeats", type=int, default=1, help="runs per setting (medians printed)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to time")
    args = parser.parse_args()
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    print(
        f"python -m figures, every figure ({args.root}; {cpus} CPUs, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        # a checkout from before --jobs draws one figure after another by default
        parallel = "--jobs" in (args.root / "figures" / "__main__.py").read_text(encoding="utf-8")
        for jobs in (int(value) for value in args.jobs.split(",")):
            if jobs and not parallel:
                sys.exit(f"bench_figures: {args.root} has no --jobs; use --jobs 0")
            workers = jobs or (cpus if parallel else 1)
            walls, cpus_used, before = [], [], load()
            for r in range(max(1, args.repeats)):
                wall, cpu = one_run(args.root, Path(tmp) / f"jobs-{jobs}-{r}", jobs)
                walls.append(wall)
                cpus_used.append(cpu)
            wall, cpu = statistics.median(walls), statistics.median(cpus_used)
            idle = cpu / min(workers, cpus)
            print(
                f"--jobs {jobs or f'default ({workers})'}: wall {wall:.1f} s, CPU {cpu:.1f} s "
                f"(median of {len(walls)}); load average {before} -> {load()}; on idle cores about "
                f"{idle:.1f} s (target < {TARGET_S:.0f} s: {'met' if idle < TARGET_S else 'MISSED'})",
                flush=True,
            )


if __name__ == "__main__":
    main()

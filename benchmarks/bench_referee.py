"""Benchmark (not a test): the referee's CPU time on built-in defaults, as a reader runs it.

    python benchmarks/bench_referee.py [--repeats R] [--top K] [--no-report] [--no-per-claim]

1. Cold process ``python -m proofs_check --json FILE``: CPU time (user + sys of the child,
   which is what a loaded machine does not inflate much) and wall time, median of ``repeats``,
   with the load average before and after (target: CPU < 20 s; issue 41 item 3).
2. Cold process ``python -m proofs_check --report DIR --json FILE``: what ``--report`` adds
   (target: CPU < 5 s more than 1).
3. Per claim, in this process: CPU time (``time.process_time``) of each claim's check and its
   proof steps, in registry order (a claim that first needs a shared cache pays for it), the
   ``top`` slowest printed.
Nothing is trained and nothing is downloaded; the folders are temporary.  Wall time on a busy
machine says little: compare CPU times, and read the load average beside them.
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
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

TARGET_CPU_S = 20.0
TARGET_REPORT_CPU_S = 5.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold_run(args: list) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``python -m proofs_check ARGS`` in a fresh interpreter."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "proofs_check", *args], cwd=ROOT, capture_output=True, text=True
    )
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode not in (0, 1):
        sys.exit(f"bench_referee: the command failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return cpu, wall


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(label: str, make_args, repeats: int) -> float:
    """Median CPU seconds of ``repeats`` cold runs, printed with wall time and load average."""
    cpus, walls = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            folder = Path(tmp) / f"run-{i}"
            folder.mkdir()
            before = _load()
            cpu, wall = cold_run(make_args(folder))
            cpus.append(cpu)
            walls.append(wall)
            print(
                f"  {label} run {i + 1}: CPU {cpu:.1f} s, wall {wall:.1f} s (load average {before} -> {_load()})"
            )
    return statistics.median(cpus), statistics.median(walls)


def per_claim(top: int) -> None:
    t0 = time.process_time()
    import proofs_check.claims  # noqa: F401  (registers the checks)
    from proofs_check.registry import REGISTRY, Options
    from proofs_check.runner import run_claims

    imports = time.process_time() - t0
    seconds = {}
    for claim_id in REGISTRY:
        start = time.process_time()
        run_claims([claim_id], Options())
        seconds[claim_id] = time.process_time() - start
    total = sum(seconds.values())
    print(
        f"per claim, in one process: imports {imports:.1f} s CPU, {len(seconds)} claims {total:.1f} s CPU; slowest {top}:"
    )
    for claim_id, cpu in sorted(seconds.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {claim_id:<36} {cpu:6.2f} s  ({100 * cpu / total:4.1f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="cold runs of each kind (medians are printed)")
    parser.add_argument("--top", type=int, default=10, help="slowest claims to list")
    parser.add_argument("--no-report", action="store_true", help="skip the --report run")
    parser.add_argument("--no-per-claim", action="store_true", help="skip the per-claim times")
    args = parser.parse_args()
    repeats = max(1, args.repeats)
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"{os.cpu_count()} CPUs, OMP_NUM_THREADS={threads}, load average {_load()}")
    cpu, wall = timed(
        "python -m proofs_check --json FILE", lambda f: ["--json", str(f / "rows.json")], repeats
    )
    print(
        f"referee, cold process: CPU {cpu:.1f} s, wall {wall:.1f} s (medians of {repeats}; "
        f"target CPU < {TARGET_CPU_S:.0f} s: {'met' if cpu < TARGET_CPU_S else 'MISSED'})"
    )
    if not args.no_report:
        with_report, wall_report = timed(
            "python -m proofs_check --report DIR --json FILE",
            lambda f: ["--report", str(f / "report"), "--json", str(f / "rows.json")],
            repeats,
        )
        added = with_report - cpu
        print(
            f"--report adds: CPU {added:.1f} s, wall {wall_report - wall:.1f} s "
            f"(target CPU < {TARGET_REPORT_CPU_S:.0f} s: {'met' if added < TARGET_REPORT_CPU_S else 'MISSED'})"
        )
    if not args.no_per_claim:
        per_claim(args.top)


if __name__ == "__main__":
    main()

"""Benchmark (not a test): the referee report generated from saved results, as a reader runs it.

    python benchmarks/bench_report.py [--repeats R]

1. Cold process: ``python -m proofs_check --report DIR`` in a fresh interpreter (imports, every
   claim checked on the shipped results, the report built, rendered and written), wall time,
   median of ``repeats`` runs (target < 60 s on 2 cores; issue 31).
2. The report alone: the rows of that run (its ``--json``) built into the document, rendered
   to Markdown and HTML and written with its figures, in this process (no claim run).
Nothing is trained and nothing is downloaded; the folders are temporary.
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
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

TARGET_S = 60.0


def cold_run(folder: Path) -> float:
    """Seconds of one ``python -m proofs_check --report`` in a fresh interpreter."""
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "proofs_check",
            "--report",
            str(folder / "report"),
            "--json",
            str(folder / "rows.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"bench_report: the command failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds


def report_only(folder: Path) -> float:
    """Seconds to build, render and write the report from saved rows, in this process."""
    from proofs_check.report import generate

    rows = json.loads((folder / "rows.json").read_text())["claims"]
    start = time.perf_counter()
    generate(folder / "again", rows, command="python -m proofs_check --report DIR")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="cold runs (the median is printed)")
    args = parser.parse_args()
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for i in range(max(1, args.repeats)):
            folder = Path(tmp) / f"run-{i}"
            folder.mkdir()
            runs.append(cold_run(folder))
        median = statistics.median(runs)
        print(
            f"cold process, python -m proofs_check --report DIR ({os.cpu_count()} CPUs, OMP_NUM_THREADS={threads}): "
            f"{median:.1f} s (median of {len(runs)}; target < {TARGET_S:.0f} s: "
            f"{'met' if median < TARGET_S else 'MISSED'})"
        )
        print(
            f"  of which the report alone (build, render, write, from the run's rows): "
            f"{report_only(Path(tmp) / 'run-0'):.2f} s"
        )


if __name__ == "__main__":
    main()

"""Benchmark (not a test): sequences per second for the paper's 480,000 sequences
per task, for plain generation and for the deduplicated, split dataset, plus the
balance each split reaches.  Run: python benchmarks/bench_datasets.py"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from training.tasks.datasets import PAPER_SPLIT_SIZES, balance_report, build_splits  # noqa: E402
from training.tasks.definitions import TASKS, get_task  # noqa: E402

TOTAL = sum(PAPER_SPLIT_SIZES.values())


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def spread(report: dict, key: str) -> str:
    lows, highs = zip(*(report[f"hop{h}"][key] for h in report["hop_counts"]))
    return f"{min(lows)}..{max(highs)}"


def main() -> None:
    for name in TASKS:
        task = get_task(name)
        _, seconds = timed(task.generate, TOTAL, 0)
        print(f"{name}: generate({TOTAL:,}) {seconds:.2f} s = {TOTAL / seconds:,.0f} sequences/s")
        _, seconds = timed(task.generate, 10_000, 0, extra_target=5_000)
        print(
            f"{name}: generate(10,000, extra_target=5,000) {seconds:.2f} s = {10_000 / seconds:,.0f} sequences/s"
        )
        (splits, info), seconds = timed(build_splits, name)
        print(
            f"{name}: build_splits (480,000, dedupe, split) {seconds:.2f} s = {TOTAL / seconds:,.0f} sequences/s; "
            f"duplicates redrawn: {info['redrawn_duplicates']}"
        )
        for split, batch in splits.items():
            report = balance_report(name, batch)
            print(
                f"    {split:<10} hops {sorted(set(report['hop_counts'].values()))} per class; per hop class "
                f"count per value {spread(report, 'values')}, per position {spread(report, 'positions')}, "
                f"per cell {spread(report, 'cells')}"
            )


if __name__ == "__main__":
    main()

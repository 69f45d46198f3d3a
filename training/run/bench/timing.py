"""How both benches time: wall and CPU clocks together, the GEMM peak inside the rotation.

A machine shared with other processes slows a step by wall clock as much as it likes (our
process waits for a core), but hardly by CPU time (``time.process_time``: the seconds this
process's threads ran).  So every rate is reported both ways, and on the CPU the headline
is by CPU time: the step's FLOPs per CPU second over the float32 GEMM's FLOPs per CPU second.

The GEMM peak is timed INSIDE the rotation, next to every row (GEMM, row, GEMM, row, ...), on
the same threads: a row's fraction of peak in a round is its rate over the GEMM rate measured
just before it, and the row's figure is the median over the rounds -- load that comes and
goes (or a clock that changes with temperature) falls on the row and its peak alike.  The load
average (``os.getloadavg``) at the start and the end says how busy the machine was.

A timing lasts at least ``MIN_TIMING_S`` (by the headline clock): a row whose step is short (the
smoke preset's, about 5 ms) runs as many steps per timing as that takes.  Three 5 ms steps are one
scheduler tick: on a busy machine a context switch or a cold cache lands on one timing in full, and
the smoke preset's fraction moved 13% between an idle and a loaded machine with 3 steps a timing,
2-3% with 30 (``benchmarks/bench_load_robust.py``).

On CUDA the CPU clock says nothing about the device: there the headline is by wall time
(synchronised), and the CPU-time figures are the host's.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

__all__ = ["Clock", "GemmProbe", "load_average", "rotate", "RowTimes", "headline_clock", "MIN_TIMING_S"]

MIN_TIMING_S = 0.25  # the shortest timing of a row (module doc)
MAX_STEPS_PER_TIMING = 10_000  # a row that takes no measurable time still ends


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (zeros where the system has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return [0.0, 0.0, 0.0]


def headline_clock(device: str) -> str:
    """The clock whose fraction of peak is the headline: CPU time on the CPU, wall time on CUDA."""
    return "wall" if str(device).startswith("cuda") else "cpu"


class Clock:
    """Wall and CPU seconds of a block (the device synchronised at both ends on CUDA)."""

    def __init__(self, device: str = "cpu"):
        self.cuda = str(device).startswith("cuda")

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def __enter__(self):
        self._sync()
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self._sync()
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu
        return False


class GemmProbe:
    """float32 (m x k) @ (k x n) GFLOP/s, wall and CPU: ``sample()`` times ``timings`` products
    (or more, while under ``seconds`` of wall time) and returns the medians' rates."""

    def __init__(self, m: int, k: int, n: int, device: str = "cpu", timings: int = 3, seconds: float = 0.3):
        g = torch.Generator().manual_seed(0)
        self.a = torch.randn(m, k, generator=g).to(device)
        self.b = torch.randn(k, n, generator=g).to(device)
        self.out = torch.empty(m, n, device=device)
        self.flop = 2.0 * m * k * n
        self.reps = max(1, int(2e8 / (m * k * n)))  # about 0.4 GFLOP per timing
        self.device, self.timings, self.seconds = str(device), timings, seconds
        self.shape = (m, k, n)
        self.sample()  # warm-up: page faults, the BLAS's first call

    def sample(self) -> dict:
        walls, cpus = [], []
        deadline = time.perf_counter() + self.seconds
        while len(walls) < self.timings or (time.perf_counter() < deadline and len(walls) < 4 * self.timings):
            with Clock(self.device) as clock:
                for _ in range(self.reps):
                    torch.mm(self.a, self.b, out=self.out)
            walls.append(clock.wall / self.reps)
            cpus.append(clock.cpu / self.reps)
        return {
            "wall": _rate(self.flop, statistics.median(walls)),
            "cpu": _rate(self.flop, statistics.median(cpus)),
        }


def _rate(flop: float, seconds: float) -> float:
    """GFLOP/s; a CPU clock too coarse to see the work (0 s) counts as its resolution."""
    return flop / max(seconds, 1e-9) / 1e9


@dataclass
class RowTimes:
    """One row's rounds: seconds per step by wall and CPU, and the peaks measured next to each."""

    wall: list = field(default_factory=list)
    cpu: list = field(default_factory=list)
    peaks: list = field(default_factory=list)  # per round: {probe name: {"wall": GFLOP/s, "cpu": GFLOP/s}}
    steps: int = 0  # steps per timing (``rotate``: at least its ``steps``, more for a short step)

    def seconds(self, clock: str) -> float:
        return statistics.median(getattr(self, clock))

    def fraction(self, flop: float, probe: str, clock: str) -> float:
        """Median over the rounds of (the row's GFLOP/s) / (the probe's GFLOP/s just before it)."""
        return statistics.median(
            _rate(flop, s) / peak[probe][clock] for s, peak in zip(getattr(self, clock), self.peaks)
        )

    def peak(self, probe: str, clock: str) -> float:
        return statistics.median(p[probe][clock] for p in self.peaks)


def rotate(
    rows: list,
    step: Callable[[object, int], None],
    probes: dict,
    rounds: int,
    steps: int,
    device: str = "cpu",
    progress=None,
    min_seconds: float = 0.0,
) -> list[RowTimes]:
    """Time ``step(row, n)`` for every row, ``rounds`` times, the row order rotating each round,
    each row's timing preceded by a sample of every GEMM probe (module doc).  ``n`` is ``steps``,
    or more where one step of the row (timed once, before the rounds) is shorter than
    ``min_seconds / steps`` by the headline clock.  Returns one ``RowTimes`` per row, in the order
    of ``rows``."""
    clock_name = headline_clock(device)
    times = [RowTimes(steps=steps) for _ in rows]
    if min_seconds > 0:
        for row, timed in zip(rows, times):
            with Clock(device) as clock:
                step(row, 1)
            once = max(getattr(clock, clock_name), 1e-6)
            timed.steps = max(steps, min(MAX_STEPS_PER_TIMING, math.ceil(min_seconds / once)))
    order = list(range(len(rows)))
    for r in range(rounds):
        if progress:
            progress(f"round {r + 1}/{rounds}")
        shift = r % len(order) if order else 0
        for i in order[shift:] + order[:shift]:
            n = times[i].steps
            times[i].peaks.append({name: probe.sample() for name, probe in probes.items()})
            with Clock(device) as clock:
                step(rows[i], n)
            times[i].wall.append(clock.wall / n)
            times[i].cpu.append(clock.cpu / n)
    return times

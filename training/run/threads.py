"""How many torch CPU threads a training process uses: chosen from the work and the machine.

The paper's model is small (n_embd 128: its GEMMs are 1088 x 128 by 128 x 512), too small for
OpenMP to split well: one thread per process is the fastest, and a second thread on a busy
2-core machine made a step 27x slower (issue 41: the threads spin and wait for each other
while other processes hold the cores).  So ``choose_threads`` gives

* ``--threads N``: N, always;
* a model of width <= ``SMALL_WIDTH``: 1;
* an oversubscribed machine (1-minute load average >= the cores this process may use, less
  one half): 1;
* else the cores left free by the load (rounded), at most the budget: ``cores // jobs`` (a study
  runs ``jobs`` members at once) and ``OMP_NUM_THREADS`` when the environment sets it.

``choose_threads`` is a pure function of those numbers; ``apply_threads`` reads the machine
(``os.sched_getaffinity``, ``os.getloadavg``), sets torch's count and returns the line it prints,
e.g. ``torch threads: 1 (model small; load 3.2 on 2 cores)``.
"""

from __future__ import annotations

import math
import os

__all__ = ["SMALL_WIDTH", "choose_threads", "machine", "apply_threads", "member_threads", "ranks_per_machine"]

SMALL_WIDTH = 256  # n_embd at or below which one thread is fastest (module doc)


def choose_threads(
    width: int,
    cores: int,
    load: float,
    *,
    jobs: int = 1,
    override: int | None = None,
    env_cap: int | None = None,
) -> tuple[int, str]:
    """(threads, why) for a model of ``width`` (n_embd) on ``cores`` usable cores whose 1-minute
    load average is ``load``, one of ``jobs`` processes sharing them (module doc: the rule)."""
    where = f"load {load:.1f} on {cores} core{'s' if cores != 1 else ''}"
    if override is not None:
        return max(1, int(override)), f"--threads; {where}"
    if width <= SMALL_WIDTH:
        return 1, f"model small; {where}"
    if load >= cores - 0.5:
        return 1, f"machine busy; {where}"
    budget = max(1, cores // max(1, jobs))
    if env_cap is not None:
        budget = min(budget, max(1, env_cap))
    free = max(1, math.floor(cores - load + 0.5))
    return min(budget, free), f"free cores; {where}"


def machine() -> tuple[int, float]:
    """(cores this process may run on, 1-minute load average)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return max(1, cores), load


def _env_threads() -> int | None:
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def apply_threads(width: int, override: int | None = None, jobs: int = 1) -> str:
    """Set torch's thread count by ``choose_threads`` on this machine; the line to print."""
    import torch

    cores, load = machine()
    threads, why = choose_threads(width, cores, load, jobs=jobs, override=override, env_cap=_env_threads())
    torch.set_num_threads(threads)
    return f"torch threads: {threads} ({why})"


def ranks_per_machine() -> int:
    """The processes torchrun starts on this machine (``LOCAL_WORLD_SIZE``; 1 without torchrun)."""
    value = os.environ.get("LOCAL_WORLD_SIZE", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1


def member_threads(jobs: int, cores: int | None = None) -> int:
    """A study member's thread budget when ``jobs`` members run at once: max(1, cores // jobs)."""
    return max(1, (machine()[0] if cores is None else cores) // max(1, jobs))

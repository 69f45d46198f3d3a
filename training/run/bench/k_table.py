"""``python -m training bench --k-table``: training throughput of K seeds at once, eager and compiled.

Rows: K = 1, 2, 5, 10 on CPU (1, 8, 64 on CUDA), each eager and compiled.  Every row times
``training.run.step.train_step``, the step ``train`` runs: K = 1 that of a single run (one GPTJ,
with the GradScaler ``train`` uses where the device needs one), K > 1 that of ``train --seeds``,
K members of the batched model.  Every row trains on the recipe's own data (the paper preset:
batch 64 of the paper split, with its extra target window if the recipe has one) from the
recipe's lr schedule.

Timing alternates the rows round by round (the row order rotates each round) in one process,
each row's timing preceded by a float32 2048^2 GEMM timing on the same threads
(``training.run.bench.timing``: GEMM, row, GEMM, row, ...), every one by wall AND CPU time
(``time.process_time``); a row's figure is its median over the rounds.  The load average at the
start and the end is recorded (``load_average``).  Columns per row:

* ``steps_per_s``: each member's steps per second by wall time (a K-member step advances K runs
  by one step); ``steps_per_cpu_s``: the same per CPU second of this process;
  ``member_steps_per_s``: K times ``steps_per_s``, the runs' steps per second together;
  ``per_member_vs_k1``: the runs' steps together over the K = 1 row's of the same mode, by the
  headline clock (CPU time on a CPU), i.e. the time of one member's step alone over its share of
  a K-member step (>= 1: batching K seeds is at least as fast per run as one by one);
* ``fraction_of_2048_peak`` (the headline): the step's matrix-multiply FLOPs
  (``bench.step_flops`` x K) per CPU second over the 2048^2 GEMM's FLOPs per CPU second measured
  next to it, the median over the rounds -- load from other processes hardly moves it (on CUDA:
  by wall time, synchronised); ``fraction_of_2048_peak_wall``: the same by wall time, which
  a busy machine lowers;
* ``members_per_hour``: runs of the recipe's length finished per hour at this rate;
* compiled rows: ``cold_compile_s``, the first step of a NEW process whose compile cache is an
  empty folder (minus one compiled step: the compile alone), and ``warm_compile_s``, the same in
  this process with that folder filled by the cold one (``training.run.compile``).

``--save FILE`` also writes the JSON.  Saved under ``training/reference/bench/`` (one file per
device type and preset), a table is the measurement ``train`` reads to decide whether it compiles
by default (``compiled.compile_by_default``): the K = 1 rows, eager against compiled.

Targets (printed as ratios, not asserted) and the text of a table: ``k_table_summary``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch

from theory.io.cli import parse_int
from training.run.start import model_config, resolve_device
from training.run.step import StepJob, autocast_for, load_data, make_optimizer, train_step

from .hf_compare import step_flops
from .k_table_summary import against_targets
from .timing import MIN_TIMING_S, GemmProbe, headline_clock, load_average, rotate

__all__ = ["K_CPU", "K_CUDA", "parse_ks", "check_k_table_memory", "run_k_table"]

K_CPU, K_CUDA = (1, 2, 5, 10), (1, 8, 64)
K_MAX = 256


def parse_ks(text: str, flag: str = "--k") -> tuple[int, ...]:
    """``--k 1,2,5``: distinct integers in 1..K_MAX (ValueError naming the flag and the bad value)."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        ks = tuple(parse_int(p) for p in parts)  # ASCII digits only (theory.io.cli.parse_int)
    except ValueError:
        raise ValueError(
            f"{flag} must be a comma-separated list of integers in 1..{K_MAX}, got {text!r}"
        ) from None
    bad = [k for k in ks if not 1 <= k <= K_MAX]
    if bad or len(set(ks)) != len(ks):
        raise ValueError(f"{flag} must list distinct integers in 1..{K_MAX}, got {text!r}")
    return ks


class Row:
    """One (K, mode) of the table: its model, optimizers and ``step(i)``."""

    def __init__(self, task: str, recipe, k: int, dev, compiled: bool, data, cache=None):
        from training.model.batched import BatchedGPTJ
        from training.model.gptj import GPTJ
        from training.run.compile import compile_module

        self.k, self.compiled = k, compiled
        self.cold = self.warm = None  # a compiled row's compile seconds: a new process's, then this one's
        config = model_config(task, recipe, f"--preset {recipe.name}")
        amp, scaler = autocast_for(dev)
        if k == 1:  # train --seed 0's model and step
            torch.manual_seed(0)
            model = GPTJ(config).to(dev).train()
        else:  # train --seeds 0,..,K-1: a batch of members has no GradScaler (train refuses one)
            model, scaler = BatchedGPTJ(config, list(range(k)), dev).train(), None
        members = model.members if k > 1 else [model]
        optimizers = tuple(make_optimizer(m, recipe.lr, recipe.betas, recipe.weight_decay) for m in members)
        forward = compile_module(model, cache) if compiled else None
        self.job = StepJob(task, data, recipe, recipe.steps, model, optimizers, dev, amp, scaler, forward)
        self.dev = dev
        self.flops = step_flops(config, recipe.batch_size) * k
        self.done = 0

    def step(self, i: int) -> None:
        train_step(self.job, i)

    def run(self, n: int) -> None:
        """``n`` steps, not timed (``timing.rotate`` times them)."""
        for _ in range(n):
            self.step(self.done)
            self.done += 1

    def timed(self, n: int) -> float:
        """Seconds per step over ``n`` steps (the device synchronised around them)."""
        if self.dev.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            self.step(self.done)
            self.done += 1
        if self.dev.type == "cuda":
            torch.cuda.synchronize()
        return (time.perf_counter() - start) / n


def probe_cold_compile(task: str, preset: str, k: int, device: str, cache: str) -> float:
    """The compile seconds of a compiled K row in a NEW process whose cache is ``cache``."""
    argv = [
        sys.executable,
        "-m",
        "training.run.bench.k_table",
        "--probe",
        task,
        preset,
        str(k),
        device,
        cache,
        str(torch.get_num_threads()),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the compile probe failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["compile_s"]


def _compile_seconds(row: Row) -> float:
    """The first step's seconds (a compiled row compiles in it) less a compiled step's."""
    first = row.timed(1)
    return max(0.0, first - row.timed(1))


def check_k_table_memory(task: str, preset: str, ks, device: str) -> None:
    """RunError before any allocation when the largest K's step needs more memory than the device has."""
    from training.run.memory import check_memory
    from training.run.presets import get_preset
    from training.tasks.vocab import SEQ_LEN

    recipe = get_preset(preset)
    check_memory(
        model_config(task, recipe, f"--preset {preset}"),
        recipe.batch_size,
        SEQ_LEN,
        resolve_device(device),
        f"--k {max(ks)} (batch {recipe.batch_size} each)",
        copies=max(ks),
    )


def run_k_table(
    task: str = "letter",
    preset: str = "paper",
    ks=K_CPU,
    device: str = "cpu",
    rounds: int = 3,
    steps: int = 3,
    compiled_ks=None,
    cache=None,
    progress=None,
    gemm_size: int = 2048,
    min_seconds: float = MIN_TIMING_S,
) -> dict:
    """The table (module doc): eager rows for ``ks``, compiled rows for ``compiled_ks`` (default
    ``ks``; empty: none).  ``cache``: the compile cache folder (default: a new empty temp folder,
    so the cold compile is cold).  ``gemm_size``: the square GEMM of the peak (2048; smaller
    only to test the table's structure quickly).  ``steps``: steps per timing, more for a row whose
    timing would last under ``min_seconds`` (``timing.rotate``)."""
    from training.run.presets import get_preset

    say = progress or (lambda line: None)
    dev = resolve_device(device)
    recipe = get_preset(preset)
    train_data, _ = load_data(task, recipe, dev)
    load_start = load_average()
    with tempfile.TemporaryDirectory(prefix="rope-heads-inductor-") as temp:
        folder = str(cache or temp)
        rows = []
        for compiled in (False, True):
            for k in compiled_ks if compiled and compiled_ks is not None else ks:
                if compiled:
                    say(f"K={k} compiled: cold compile in a new process (cache {folder})")
                    cold = probe_cold_compile(task, preset, k, device, folder)
                row = Row(task, recipe, k, dev, compiled, train_data, folder)
                say(f"K={k} {'compiled' if compiled else 'eager'}: first step")
                if compiled:
                    row.cold, row.warm = cold, _compile_seconds(row)
                else:
                    row.timed(1)  # warm-up: allocator, lazy init
                rows.append(row)
        probes = {"2048": GemmProbe(gemm_size, gemm_size, gemm_size, str(dev))}
        times = rotate(rows, lambda row, n: row.run(n), probes, rounds, steps, str(dev), say, min_seconds)
    clock = headline_clock(str(dev))
    table = []
    for row, timed in zip(rows, times):
        seconds, cpu_seconds = timed.seconds("wall"), timed.seconds("cpu")
        table.append(
            {
                "k": row.k,
                "mode": "compiled" if row.compiled else "eager",
                "steps_per_s": round(1 / seconds, 3),
                "steps_per_cpu_s": round(1 / max(cpu_seconds, 1e-9), 3),
                "member_steps_per_s": round(row.k / seconds, 3),
                "fraction_of_2048_peak": round(timed.fraction(row.flops, "2048", clock), 3),
                "fraction_of_2048_peak_wall": round(timed.fraction(row.flops, "2048", "wall"), 3),
                "fraction_of_2048_peak_cpu": round(timed.fraction(row.flops, "2048", "cpu"), 3),
                "members_per_hour": round(3600 * row.k / seconds / recipe.steps, 2),
                "cold_compile_s": None if row.cold is None else round(row.cold, 1),
                "warm_compile_s": None if row.warm is None else round(row.warm, 1),
                "steps_per_timing": timed.steps,
            }
        )
    # by the headline clock: on a loaded machine one row's wall time can stretch and not the next's
    rate = "steps_per_s" if clock == "wall" else "steps_per_cpu_s"
    for entry in table:
        base = next((e for e in table if e["mode"] == entry["mode"] and e["k"] == 1), None)
        entry["per_member_vs_k1"] = None if base is None else round(entry["k"] * entry[rate] / base[rate], 3)
    return {
        "task": task,
        "preset": preset,
        "device": str(dev),
        "batch_size": recipe.batch_size,
        "run_steps": recipe.steps,
        "rounds": rounds,
        "steps_per_round": steps,
        "min_timing_s": min_seconds,
        "gemm_size": gemm_size,
        "clock": clock,
        "gemm_gflops_2048": round(statistics.median(t.peak("2048", clock) for t in times), 1),
        "gemm_gflops_2048_wall": round(statistics.median(t.peak("2048", "wall") for t in times), 1),
        "gemm_gflops_2048_cpu": round(statistics.median(t.peak("2048", "cpu") for t in times), 1),
        "load_average": {"start": load_start, "end": load_average()},
        "torch_threads": torch.get_num_threads(),
        "rows": table,
        "targets": against_targets(table, dev.type),
    }


def _probe(argv) -> None:
    """``--probe TASK PRESET K DEVICE CACHE THREADS``: one compiled row's compile seconds, as JSON."""
    parser = argparse.ArgumentParser(prog="bench_k --probe")
    for name in ("task", "preset", "k", "device", "cache", "threads"):
        parser.add_argument(name)
    args = parser.parse_args(argv)
    torch.set_num_threads(int(args.threads))
    from training.run.presets import get_preset

    dev, recipe = resolve_device(args.device), get_preset(args.preset)
    train_data, _ = load_data(args.task, recipe, dev)
    row = Row(args.task, recipe, int(args.k), dev, True, train_data, args.cache)
    print(json.dumps({"compile_s": _compile_seconds(row)}))


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    _probe(sys.argv[2:])

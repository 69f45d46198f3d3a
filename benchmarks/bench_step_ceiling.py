"""Benchmark (not a test): how near the 2048^2 GEMM peak can a paper-preset step get?

The bench's headline (``python -m training bench --k-table``) is a step's matrix-multiply FLOPs per
CPU second over the 2048^2 GEMM's.  A step also spends time outside its products (LayerNorm, GELU,
softmax, dropout, rotary, AdamW), and its products are not 2048^2 ones: 1088 x 128 by 128 x 896 and
the like, plus 64 attention products of 17 x 128 by 128 x 17.  This bench separates the two:

1. it records every matrix product (aten ``mm``, ``addmm``, ``bmm``, ``baddbmm``) one eager training
   step runs, with its operands' shapes and strides (a ``TorchDispatchMode``);
2. it times, in rotation with the 2048^2 GEMM probe (``training.run.bench.timing.rotate``), by CPU
   time: those products alone, replayed in the step's order on operands of the same shapes and
   strides, each into a new output as in the step; the eager step; the compiled step.

The products' fraction of peak is the ceiling of the step's: a step whose every other operation
took no time would reach it.  Printed: each fraction, and the share of each step's CPU time spent
outside its products (its time less the products' time, over its time).

Run: python benchmarks/bench_step_ceiling.py [--rounds 5] [--no-compiled] [--json]
One torch thread (as ``train`` uses for this model); the compiled step compiles first (about a
minute cold, seconds with the compile cache warm).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PRODUCTS = ("mm", "addmm", "bmm", "baddbmm")


def record_products(row) -> list:
    """(op, [operand (shape, stride) or scalar]) of every matrix product of one step of ``row``."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket.__name__ in PRODUCTS:
                operands = [
                    (tuple(a.shape), tuple(a.stride())) if isinstance(a, torch.Tensor) else a for a in args
                ]
                seen.append((func, operands, dict(kwargs or {})))
            return func(*args, **(kwargs or {}))

    with Recorder():
        row.run(1)
    return seen


class Replay:
    """The recorded products on random operands made once; ``run(n)`` replays them ``n`` times."""

    def __init__(self, products: list, flops: float):
        import torch

        g = torch.Generator().manual_seed(0)

        def operand(spec):
            if not isinstance(spec, tuple):
                return spec
            shape, stride = spec
            size = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
            return torch.randn(size, generator=g).as_strided(shape, stride)

        self.calls = [(func, [operand(s) for s in specs], kwargs) for func, specs, kwargs in products]
        self.flops = flops

    def run(self, n: int) -> None:
        for _ in range(n):
            for func, args, kwargs in self.calls:
                func(*args, **kwargs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the rotation (default 5)")
    parser.add_argument("--steps", type=int, default=3, help="at least this many steps a timing (default 3)")
    parser.add_argument("--no-compiled", action="store_true", help="leave the compiled step out")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from training.run.bench.k_table import Row
    from training.run.bench.timing import MIN_TIMING_S, GemmProbe, load_average, rotate
    from training.run.presets import get_preset
    from training.run.step import load_data

    recipe, dev = get_preset("paper"), torch.device("cpu")
    data, _ = load_data("letter", recipe, dev)
    eager = Row("letter", recipe, 1, dev, False, data)
    eager.run(2)  # warm-up
    products = record_products(eager)
    rows = {"products alone": Replay(products, eager.flops), "eager step": eager}
    if not args.no_compiled:
        rows["compiled step"] = Row("letter", recipe, 1, dev, True, data)
        rows["compiled step"].run(2)  # compiles
    load_start = load_average()
    names = list(rows)
    times = rotate(
        list(rows.values()),
        lambda row, n: row.run(n),
        {"2048": GemmProbe(2048, 2048, 2048)},
        args.rounds,
        args.steps,
        min_seconds=MIN_TIMING_S,
    )
    by_name = dict(zip(names, times))
    alone = by_name["products alone"].seconds("cpu")
    result = {
        "products_per_step": len(products),
        "threads": torch.get_num_threads(),
        "load_average": {"start": load_start, "end": load_average()},
        "gemm_gflops_2048_cpu": round(by_name["eager step"].peak("2048", "cpu"), 1),
        "rows": {
            name: {
                "cpu_ms_per_step": round(1e3 * timed.seconds("cpu"), 2),
                "wall_ms_per_step": round(1e3 * timed.seconds("wall"), 2),
                "fraction_of_2048_peak_cpu": round(timed.fraction(rows[name].flops, "2048", "cpu"), 3),
                "share_outside_products": round(1 - alone / timed.seconds("cpu"), 3),
            }
            for name, timed in by_name.items()
        },
    }
    if args.json:
        print(json.dumps(result))
        return 0
    load = result["load_average"]
    print(
        f"paper step, letter task, 1 thread; {result['products_per_step']} matrix products a step; "
        f"2048^2 GEMM {result['gemm_gflops_2048_cpu']} GFLOP/s per CPU s; load {load['start'][0]} -> "
        f"{load['end'][0]}"
    )
    for name, row in result["rows"].items():
        print(
            f"  {name:>15}: {row['cpu_ms_per_step']:7.1f} ms CPU a step ({row['wall_ms_per_step']:.1f} wall), "
            f"fraction of peak {row['fraction_of_2048_peak_cpu']:.3f}, "
            f"outside the products {row['share_outside_products']:.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

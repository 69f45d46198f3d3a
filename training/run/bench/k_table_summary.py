"""The K table's targets, each measured value against its target, and the table as text
(``training.run.bench.k_table`` measures it).

Targets (printed as ratios, not asserted): CPU compiled K = 1 at 0.6 of the 2048^2 peak or more
(issue 41; ``benchmarks/bench_step_ceiling.py`` measures how near the step's matrix products
alone come); K = 5 per member at least 0.9x K = 1; CUDA members per hour at K = 64 at least 10x
K = 1.
"""

from __future__ import annotations

__all__ = ["TARGETS", "COLUMNS", "against_targets", "format_k_table"]

TARGETS = {
    "cpu_compiled_k1_fraction_of_peak": 0.6,
    "k5_per_member_vs_k1": 0.9,
    "cuda_k64_members_per_hour_vs_k1": 10.0,
}


def _find(table, k, mode):
    return next((e for e in table if e["k"] == k and e["mode"] == mode), None)


def against_targets(table, device_type: str) -> dict:
    """Each target this table measures: the measured value, the target, and their ratio."""
    out = {}
    if device_type == "cpu":
        row = _find(table, 1, "compiled")
        if row:
            value = row["fraction_of_2048_peak"]
            out["cpu_compiled_k1_fraction_of_peak"] = _ratio(
                value, TARGETS["cpu_compiled_k1_fraction_of_peak"]
            )
    for mode in ("eager", "compiled"):
        row = _find(table, 5, mode)
        if row and row["per_member_vs_k1"] is not None:
            out[f"k5_per_member_vs_k1_{mode}"] = _ratio(
                row["per_member_vs_k1"], TARGETS["k5_per_member_vs_k1"]
            )
        high, low = _find(table, 64, mode), _find(table, 1, mode)
        if device_type == "cuda" and high and low:
            value = high["members_per_hour"] / low["members_per_hour"]
            out[f"cuda_k64_members_per_hour_vs_k1_{mode}"] = _ratio(
                value, TARGETS["cuda_k64_members_per_hour_vs_k1"]
            )
    return out


def _ratio(value: float, target: float) -> dict:
    return {"value": round(value, 3), "target": target, "ratio_to_target": round(value / target, 3)}


COLUMNS = (
    "k",
    "mode",
    "steps_per_s",
    "steps_per_cpu_s",
    "member_steps_per_s",
    "per_member_vs_k1",
    "fraction_of_2048_peak",
    "fraction_of_2048_peak_wall",
    "members_per_hour",
    "cold_compile_s",
    "warm_compile_s",
    "steps_per_timing",
)


def format_k_table(result: dict) -> str:
    """The rows side by side, then the targets, as text."""
    cell = lambda v: "-" if v is None else str(v)  # noqa: E731
    load = result["load_average"]
    size = result.get("gemm_size", 2048)
    lines = [
        f"{result['task']} {result['preset']} (batch {result['batch_size']}, {result['run_steps']} steps a run) "
        f"on {result['device']} ({result['torch_threads']} threads), {size}^2 GEMM "
        f"{result['gemm_gflops_2048_cpu']} GFLOP/s per CPU s, {result['gemm_gflops_2048_wall']} per wall s, "
        f"{result['rounds']} rounds x at least {result['steps_per_round']} steps and "
        f"{result.get('min_timing_s', 0)} s a timing, load {load['start'][0]} -> "
        f"{load['end'][0]}; fraction_of_2048_peak by {result['clock']} time",
        "  ".join(f"{c:>{len(c)}}" for c in COLUMNS),
    ]
    lines += ["  ".join(f"{cell(row.get(c)):>{len(c)}}" for c in COLUMNS) for row in result["rows"]]
    for name, t in result["targets"].items():
        lines.append(f"target {name}: {t['value']} against {t['target']} (ratio {t['ratio_to_target']})")
    return "\n".join(lines)

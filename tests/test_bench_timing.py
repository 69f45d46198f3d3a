"""Issue 41: the benches time the GEMM peak next to every row (GEMM, row, GEMM, row, ...), by
CPU and wall time, with the load average; the torch thread rule (training.run.threads); the
data order drawn once per epoch (training.run.step.epoch_permutation).  Structure only, with
tiny sizes: how well the CPU-time fraction survives load is benchmarks/bench_load_robust.py."""

import json

import numpy as np
import pytest
import torch

from training.__main__ import main
from training.run import step
from training.run.bench import hf_compare, k_table, k_table_summary, timing
from training.run.threads import SMALL_WIDTH, choose_threads, member_threads

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _log_events(monkeypatch) -> list:
    """Record each GEMM sample and each timed row run, in order."""
    events = []
    sample = timing.GemmProbe.sample

    def logged_sample(self):
        events.append(("gemm", self.shape))
        return sample(self)

    def logged_rotate(rows, run, probes, *args, **kwargs):
        def logged_run(row, n):
            events.append(("row", rows.index(row)))
            return run(row, n)

        return timing.rotate(rows, logged_run, probes, *args, **kwargs)

    monkeypatch.setattr(timing.GemmProbe, "sample", logged_sample)
    return events, logged_rotate


def test_the_k_table_times_the_peak_next_to_every_row_by_both_clocks(monkeypatch):
    events, logged_rotate = _log_events(monkeypatch)
    monkeypatch.setattr(k_table, "rotate", logged_rotate)
    result = k_table.run_k_table(
        "letter", "smoke", ks=(1, 2), device="cpu", rounds=2, steps=1, compiled_ks=(), gemm_size=32
    )
    assert events[0] == ("gemm", (32, 32, 32))  # the probe's warm-up sample
    # one step of each row sizes its timings (timing.MIN_TIMING_S), then the rounds
    assert events[1:3] == [("row", 0), ("row", 1)]
    timed = events[3:]
    # GEMM, row, GEMM, row ...; the row order rotates each round
    assert [kind for kind, _ in timed] == ["gemm", "row"] * 4
    assert [i for kind, i in timed if kind == "row"] == [0, 1, 1, 0]
    assert result["clock"] == "cpu" and result["gemm_size"] == 32
    assert all(len(result["load_average"][end]) == 3 for end in ("start", "end"))
    assert result["gemm_gflops_2048_cpu"] > 0 and result["gemm_gflops_2048_wall"] > 0
    for row in result["rows"]:
        assert row["steps_per_cpu_s"] > 0 and row["steps_per_s"] > 0
        assert row["fraction_of_2048_peak"] == row["fraction_of_2048_peak_cpu"] > 0
        assert row["fraction_of_2048_peak_wall"] > 0
    text = k_table_summary.format_k_table(result).splitlines()
    assert "load" in text[0] and "per CPU s" in text[0] and text[1].split() == list(k_table_summary.COLUMNS)


def test_the_hf_comparison_times_both_peaks_next_to_each_side(monkeypatch):
    pytest.importorskip("transformers")
    events, logged_rotate = _log_events(monkeypatch)
    monkeypatch.setattr(hf_compare, "rotate", logged_rotate)
    result = hf_compare.run_bench(rounds=2, steps_per_round=1, batch_size=4, gemm_size=32)
    timed = events[2:]  # each probe's warm-up sample
    assert [kind for kind, _ in timed] == ["gemm", "gemm", "row"] * 4
    assert [i for kind, i in timed if kind == "row"] == [0, 1, 1, 0]
    assert {shape for kind, shape in timed if kind == "gemm"} == {(32, 32, 32), (4 * 17, 128, 512)}
    assert result["clock"] == "cpu" and result["fraction_of_2048_peak"] == result["fraction_of_2048_peak_cpu"]
    for key in ("ours_steps_per_cpu_s", "hf_steps_per_cpu_s", "speedup_vs_hf_wall", "speedup_vs_hf_cpu"):
        assert result[key] > 0, key
    assert result["fraction_of_2048_peak_wall"] > 0 and result["fraction_of_model_shape_peak_cpu"] > 0
    assert all(len(result["load_average"][end]) == 3 for end in ("start", "end"))


def test_a_short_step_is_timed_over_enough_steps_to_last_min_seconds(monkeypatch):
    """A row whose step takes 1 ms of the headline clock gets ceil(0.05 / 0.001) = 50 steps a
    timing; a 0.1 s row keeps the requested 2; without ``min_seconds`` both get 2."""
    clock = {"t": 0.0}
    monkeypatch.setattr(timing.time, "process_time", lambda: clock["t"])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: clock["t"])
    cost = {"fast": 0.001, "slow": 0.1}
    ran = []

    def run(row, n):
        ran.append((row, n))
        clock["t"] += cost[row] * n

    class Probe:
        def sample(self):
            return {"wall": 1.0, "cpu": 1.0}

    times = timing.rotate(["fast", "slow"], run, {"p": Probe()}, rounds=2, steps=2, min_seconds=0.05)
    assert [t.steps for t in times] == [50, 2]
    assert ran[:2] == [("fast", 1), ("slow", 1)]  # the sizing step of each row
    assert sorted(ran[2:]) == [("fast", 50), ("fast", 50), ("slow", 2), ("slow", 2)]
    assert times[0].cpu == pytest.approx([0.001, 0.001]) and times[1].wall == pytest.approx([0.1, 0.1])
    ran.clear()
    plain = timing.rotate(["fast", "slow"], run, {"p": Probe()}, rounds=1, steps=2)
    assert [t.steps for t in plain] == [2, 2] and sorted(ran) == [("fast", 2), ("slow", 2)]


def test_row_times_pair_each_round_with_its_own_peak():
    times = timing.RowTimes(
        wall=[2.0, 1.0, 4.0],
        cpu=[1.0, 1.0, 1.0],
        peaks=[
            {"g": {"wall": 1.0, "cpu": 2.0}},
            {"g": {"wall": 2.0, "cpu": 2.0}},
            {"g": {"wall": 0.5, "cpu": 2.0}},
        ],
    )
    # per round: (1e9 / s) / 1e9 / peak -- rounds 1 / 2, 1 / 2, 1 / 2 by wall: the peak fell with the row
    assert times.fraction(1e9, "g", "wall") == pytest.approx(0.5)
    assert times.fraction(1e9, "g", "cpu") == pytest.approx(0.5)
    assert times.seconds("wall") == 2.0 and times.peak("g", "wall") == 1.0


def test_the_clock_counts_cpu_time_not_sleep():
    with timing.Clock() as clock:
        __import__("time").sleep(0.05)
    assert clock.wall >= 0.05 and clock.cpu < 0.03


# --- torch threads (training.run.threads) ------------------------------------------------------


def test_threads_rule():
    assert choose_threads(128, 2, 0.0) == (1, "model small; load 0.0 on 2 cores")
    assert choose_threads(SMALL_WIDTH + 1, 8, 0.2)[0] == 8
    assert choose_threads(1024, 8, 3.4)[0] == 5  # the cores the load leaves free
    assert choose_threads(1024, 2, 3.2) == (1, "machine busy; load 3.2 on 2 cores")
    assert choose_threads(1024, 2, 1.6)[0] == 1  # oversubscribed: load >= cores - 0.5
    assert choose_threads(1024, 8, 0.0, jobs=4)[0] == 2  # a study's share
    assert choose_threads(1024, 8, 0.0, env_cap=3)[0] == 3  # OMP_NUM_THREADS caps
    assert choose_threads(128, 2, 3.2, override=2) == (2, "--threads; load 3.2 on 2 cores")
    assert choose_threads(1024, 1, 0.0) == (1, "free cores; load 0.0 on 1 core")


def test_a_study_member_gets_its_share_of_the_cores():
    assert [member_threads(j, cores=8) for j in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]


def test_train_threads_flag(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--task", "letter", "--preset", "smoke", "--out", str(out), "--threads", "0"]) == 2
    assert "--threads must be >= 1" in capsys.readouterr().err and not out.exists()
    argv = ["train", "--task", "letter", "--preset", "smoke", "--steps", "2", "--out", str(out)]
    assert main(argv + ["--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["torch_threads"] == 1  # the smoke model is small
    assert main(argv + ["--force", "--threads", "2"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out.strip().splitlines()[-1])["torch_threads"] == 2
    assert "torch threads: 2 (--threads;" in captured.err


# --- the data order: one permutation per epoch -----------------------------------------------


def _per_step_reference(seed, s, batch_size, n):
    """The sampler as it was: every step re-draws its epochs' permutations."""
    start, out = s * batch_size, []
    while len(out) < batch_size:
        epoch, offset = divmod(start + len(out), n)
        take = min(batch_size - len(out), n - offset)
        out += list(np.random.default_rng([seed, epoch]).permutation(n)[offset : offset + take])
    return np.array(out)


def test_one_permutation_per_epoch_gives_the_rows_of_old(monkeypatch):
    draws = []
    rng = np.random.default_rng
    monkeypatch.setattr(np.random, "default_rng", lambda key: draws.append(tuple(key)) or rng(key))
    step._EPOCHS.clear()
    n, batch = 100, 32  # steps 3 and 6 straddle epochs
    got = [step.batch_indices(7, s, batch, n) for s in range(10)]
    assert draws == [(7, e) for e in range(4)]  # one draw per epoch, not one per step
    monkeypatch.setattr(np.random, "default_rng", rng)
    for s in (9, 0, 5):  # out of order too, as a resumed run asks
        assert np.array_equal(step.batch_indices(7, s, batch, n), _per_step_reference(7, s, batch, n))
    assert all(np.array_equal(g, _per_step_reference(7, s, batch, n)) for s, g in enumerate(got))
    assert torch.as_tensor(got[0]).dtype == torch.int64

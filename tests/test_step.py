"""training.run.step.train_step is the one training step: ``train``, ``train --seeds`` and both
benches (training.run.bench) call it, and a bench row trains exactly the weights a run trains."""

import pytest
import torch
from safetensors.torch import load_file

from training.model.batched import BatchedGPTJ
from training.model.gptj import GPTJ
from training.run import loop, step
from training.run.batched_loop import train_seeds
from training.run.bench import hf_compare, k_table
from training.run.loop import train
from training.run.presets import get_preset
from training.run.step import load_data

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _recorded(monkeypatch, module) -> list:
    """Replace ``module.train_step`` by a wrapper of the real one; returns the (kind, step) of each call."""
    calls = []

    def recording(job, i):
        calls.append(("batched" if isinstance(job.model, BatchedGPTJ) else "single", i))
        return step.train_step(job, i)

    monkeypatch.setattr(module, "train_step", recording)
    return calls


def test_both_loops_run_the_one_step(monkeypatch, tmp_path):
    calls = _recorded(monkeypatch, loop)
    train("letter", tmp_path / "one", preset="smoke", steps=3, device="cpu", progress=False)
    assert calls == [("single", 0), ("single", 1), ("single", 2)]
    calls.clear()
    train_seeds("letter", tmp_path / "many", [0, 1], preset="smoke", steps=2, device="cpu", progress=False)
    assert calls == [("batched", 0), ("batched", 1)]


def test_the_k_table_times_the_one_step(monkeypatch):
    calls = _recorded(monkeypatch, k_table)
    k_table.run_k_table(  # min_seconds 0: the warm-up step, then exactly 2 steps a timing
        "letter", "smoke", ks=(1, 2), device="cpu", rounds=1, steps=2, compiled_ks=(), min_seconds=0
    )
    assert sorted(set(calls)) == [("batched", i) for i in range(3)] + [("single", i) for i in range(3)]


def test_the_hf_comparison_times_the_one_step(monkeypatch):
    pytest.importorskip("transformers")
    calls = _recorded(monkeypatch, hf_compare)
    result = hf_compare.run_bench(rounds=1, steps_per_round=2, batch_size=4)
    assert calls == [("single", i) for i in range(4)]  # 2 warm-up steps, then one round of 2
    assert result["ours_steps_per_s"] > 0 and result["hf_steps_per_s"] > 0


def _bench_row(k: int, steps: int) -> list:
    recipe = get_preset("smoke")
    data, _ = load_data("letter", recipe, torch.device("cpu"))
    row = k_table.Row("letter", recipe, k, torch.device("cpu"), False, data)
    row.timed(steps)
    return row.job.members


def test_a_bench_row_trains_the_weights_of_the_run(tmp_path):
    """K = 1 is ``train --seed 0``'s step, K = 2 ``train --seeds 0,1``'s, bit for bit."""
    train("letter", tmp_path / "one", preset="smoke", stop_at=3, device="cpu", progress=False)
    train_seeds("letter", tmp_path / "two", [0, 1], preset="smoke", stop_at=3, device="cpu", progress=False)
    runs = {1: [tmp_path / "one"], 2: [tmp_path / "two" / "seed-0", tmp_path / "two" / "seed-1"]}
    for k, folders in runs.items():
        for member, folder in zip(_bench_row(k, 3), folders):
            saved = load_file(folder / "checkpoints" / "step-000003" / "model.safetensors")
            assert isinstance(member, GPTJ)
            state = member.state_dict()
            assert saved.keys() <= state.keys()
            assert all(torch.equal(state[name], tensor) for name, tensor in saved.items()), (k, folder)

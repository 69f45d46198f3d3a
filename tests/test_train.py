"""training.run.loop: run format, resume = uninterrupted, atomic checkpoints, error handling."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from training.analysis.evaluate import _sliced_accuracy
from training.run import checkpoints
from training.run.checkpoints import list_checkpoints, load_model
from training.run.checks import RunError
from training.run.loop import train
from training.run.step import batch_indices, evaluate, lr_factor, make_optimizer
from training.tasks.definitions import get_task

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "training", *map(str, args)],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def smoke(out, *extra):
    return cli("train", "--task", "number", "--out", out, "--preset", "smoke", "--no-progress", *extra)


def tensors_equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def tree_digest(root: Path) -> dict:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """A 20-step smoke run made by the CLI, uninterrupted (shared by several tests)."""
    out = tmp_path_factory.mktemp("runs") / "uninterrupted"
    result = smoke(out, "--steps", 20)
    assert result.returncode == 0, result.stderr
    return out, json.loads(result.stdout)


# --- pieces ----------------------------------------------------------------------


def test_lr_schedule_is_hf_linear_with_warmup():
    assert lr_factor(0, 750, 6000) == 0.0
    assert lr_factor(375, 750, 6000) == 0.5
    assert lr_factor(750, 750, 6000) == 1.0
    assert lr_factor(3375, 750, 6000) == 0.5
    assert lr_factor(6000, 750, 6000) == 0.0
    assert lr_factor(5999, 750, 6000) == pytest.approx(1 / 5250)


def test_batch_indices_are_seeded_epoch_permutations():
    n, b = 10, 4
    rows = np.concatenate([batch_indices(3, s, b, n) for s in range(5)])  # 20 rows = 2 epochs
    assert sorted(rows[:10]) == list(range(10)) and sorted(rows[10:]) == list(range(10))
    assert not np.array_equal(rows[:10], rows[10:])
    assert np.array_equal(batch_indices(3, 2, b, n), batch_indices(3, 2, b, n))
    assert not np.array_equal(batch_indices(4, 0, b, n), batch_indices(3, 0, b, n))


def test_weight_decay_skips_biases_and_layernorms():
    from training.model.gptj import GPTJ, ModelConfig

    model = GPTJ(ModelConfig(vocab_size=10, n_layer=1, n_embd=16, rotary_dim=16, n_inner=32))
    decay, no_decay = make_optimizer(model, 1e-4, (0.95, 0.999), 1e-4).param_groups
    names = {id(p): n for n, p in model.named_parameters()}
    assert decay["weight_decay"] == 1e-4 and no_decay["weight_decay"] == 0.0
    assert all(not names[id(p)].endswith("bias") and "ln_" not in names[id(p)] for p in decay["params"])
    assert {names[id(p)] for p in no_decay["params"]} >= {"lm_head.bias", "transformer.ln_f.weight"}
    assert len(decay["params"]) + len(no_decay["params"]) == len(names)


# --- a run ------------------------------------------------------------------------


def test_smoke_run_format(reference_run):
    out, summary = reference_run
    assert {p.name for p in out.iterdir()} == {
        "config.json",
        "model.safetensors",
        "vocab.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "metrics.jsonl",
        "recipe.json",
        "checkpoints",
    }
    recipe = json.loads((out / "recipe.json").read_text())
    assert recipe["recipe"]["steps"] == 20 and recipe["recipe"]["model"] == {
        **recipe["recipe"]["model"],
        "vocab_size": 136,
        "n_layer": 2,
    }
    assert [s for s, _ in list_checkpoints(out / "checkpoints")] == [0, 20]
    assert json.loads((out / "vocab.json").read_text()) == get_task("number").vocab
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "gptj" and config["vocab_size"] == 136
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert records[0]["split"] == "settings" and records[0]["steps"] == 20
    validation = [r for r in records if r["split"] == "validation"]
    assert [r["step"] for r in validation] == [0, 20]
    assert set(validation[0]["accuracy_by_hop"]) == {"1", "2", "3", "4"}
    assert any(r["split"] == "train" and np.isfinite(r["loss"]) for r in records)
    # RUN/model.safetensors is the best checkpoint's weights
    best = max(validation, key=lambda r: (r["accuracy"], -r["step"]))
    assert summary["best_step"] == best["step"]
    ckpt = out / "checkpoints" / f"step-{best['step']:06d}"
    assert tensors_equal(load_file(out / "model.safetensors"), load_file(ckpt / "model.safetensors"))
    for name in ("training_state.json", "training_state.safetensors", "config.json"):
        assert (ckpt / name).is_file()


def test_run_loads_in_hf(reference_run):
    transformers = pytest.importorskip("transformers")
    out, _ = reference_run
    hf = transformers.GPTJForCausalLM.from_pretrained(out).eval()
    ours = load_model(out)
    assert not ours.training  # loaded for inference: dropout off
    idx = torch.randint(0, 136, (3, 17))
    with torch.no_grad():
        assert torch.allclose(ours(idx), hf(idx).logits, atol=1e-5, rtol=0)


def test_resume_gives_identical_weights(reference_run, tmp_path):
    reference, _ = reference_run
    out = tmp_path / "split"
    first = smoke(out, "--steps", 20, "--stop-at", 10)
    assert first.returncode == 0, first.stderr
    assert [s for s, _ in list_checkpoints(out / "checkpoints")] == [0, 10]  # --stop-at checkpoints
    second = smoke(out, "--resume")
    assert second.returncode == 0, second.stderr
    for name in ("model.safetensors", "training_state.safetensors"):
        a = load_file(reference / "checkpoints" / "step-000020" / name)
        b = load_file(out / "checkpoints" / "step-000020" / name)
        assert tensors_equal(a, b), name
    assert tensors_equal(load_file(reference / "model.safetensors"), load_file(out / "model.safetensors"))
    strip = [
        {k: v for k, v in json.loads(line).items() if k not in ("seconds_per_step", "checkpoint_dir")}
        for line in (reference / "metrics.jsonl").read_text().splitlines()
    ]
    again = [
        {k: v for k, v in json.loads(line).items() if k not in ("seconds_per_step", "checkpoint_dir")}
        for line in (out / "metrics.jsonl").read_text().splitlines()
    ]
    assert strip == again


def test_crash_before_checkpoint_rename_leaves_no_checkpoint(reference_run, tmp_path, monkeypatch):
    """A crash inside save_checkpoint (just before the final os.replace) leaves no step dir;
    resuming from the previous checkpoint still ends equal to the uninterrupted run."""
    reference, _ = reference_run
    out = tmp_path / "crashed"
    real_replace = os.replace

    def replace(src, dst):
        if Path(dst).name == "step-000020":
            raise KeyboardInterrupt("simulated kill")
        return real_replace(src, dst)

    monkeypatch.setattr(checkpoints.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        train("number", out, preset="smoke", steps=20, device="cpu", progress=False)
    monkeypatch.setattr(checkpoints.os, "replace", real_replace)
    assert [s for s, _ in list_checkpoints(out / "checkpoints")] == [0]
    assert [p.name for p in (out / "checkpoints").glob(".tmp-*")]  # the partial one, not listed
    train("number", out, resume=True, device="cpu", progress=False)
    assert not list((out / "checkpoints").glob(".tmp-*"))
    a = load_file(reference / "checkpoints" / "step-000020" / "model.safetensors")
    assert tensors_equal(a, load_file(out / "checkpoints" / "step-000020" / "model.safetensors"))


def test_sigkill_leaves_only_complete_checkpoints(tmp_path):
    out = tmp_path / "killed"
    cmd = [
        sys.executable,
        "-m",
        "training",
        "train",
        "--task",
        "letter",
        "--out",
        str(out),
        "--preset",
        "smoke",
        "--steps",
        "2000",
        "--no-progress",
    ]
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300  # 200 smoke steps: seconds alone, minutes on a loaded 2-core machine
    while len(list_checkpoints(out / "checkpoints")) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    found = list_checkpoints(out / "checkpoints")
    assert len(found) >= 3
    for _, path in found:  # whatever the moment of the kill, every listed checkpoint is whole
        load_model(path)
        json.loads((path / "training_state.json").read_text())
        load_file(path / "training_state.safetensors")


# --- bad input: one line on stderr, exit 2, nothing overwritten ------------------


def assert_clean_error(result, fragment):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert fragment in lines[0], lines[0]


@pytest.fixture
def small_run(reference_run, tmp_path):
    """A private copy of the reference run to break."""
    import shutil

    out = tmp_path / "run"
    shutil.copytree(reference_run[0], out)
    return out


def test_existing_run_is_not_overwritten(small_run):
    before = tree_digest(small_run)
    assert_clean_error(smoke(small_run, "--steps", 20), "--resume")
    assert tree_digest(small_run) == before


def test_resume_errors(small_run, tmp_path):
    before = tree_digest(small_run)
    # vocab.json of the other task
    assert_clean_error(cli("train", "--task", "letter", "--out", small_run, "--resume"), "vocabulary")
    # conflicting settings
    assert_clean_error(smoke(small_run, "--resume", "--seed", 5), "--seed")
    # unknown device
    assert_clean_error(smoke(small_run, "--resume", "--device", "tpu"), "unknown device")
    # nothing to resume; a stop before the resume point
    assert_clean_error(smoke(tmp_path / "empty", "--resume"), "nothing to resume")
    assert_clean_error(smoke(small_run, "--resume", "--stop-at", 5), "--stop-at")
    assert tree_digest(small_run) == before
    # corrupt last checkpoint
    last = small_run / "checkpoints" / "step-000020"
    (last / "model.safetensors").write_bytes(b"\0" * 100)
    assert_clean_error(smoke(small_run, "--resume"), "corrupt")
    # config that does not match the weights
    (last / "model.safetensors").write_bytes(
        (small_run / "checkpoints" / "step-000000" / "model.safetensors").read_bytes()
    )
    config = json.loads((last / "config.json").read_text())
    config["n_embd"] = 48
    (last / "config.json").write_text(json.dumps(config))
    assert_clean_error(smoke(small_run, "--resume"), "does not match")
    # missing checkpoints
    import shutil

    shutil.rmtree(small_run / "checkpoints")
    assert_clean_error(smoke(small_run, "--resume"), "no checkpoint")


def test_force_replaces_a_run(small_run):
    (small_run / "notes.txt").write_text("mine")
    result = smoke(small_run, "--steps", 4, "--force")
    assert result.returncode == 0, result.stderr
    assert [s for s, _ in list_checkpoints(small_run / "checkpoints")] == [0, 4]
    assert (small_run / "notes.txt").read_text() == "mine"  # only run files are removed


def test_bench_reports_speedup():
    pytest.importorskip("transformers")
    from training.run.bench.hf_compare import run_bench

    result = run_bench(rounds=1, steps_per_round=1, batch_size=8)
    assert result["speedup_vs_hf"] > 0 and result["ours_steps_per_s"] > 0 and result["hf_steps_per_s"] > 0
    assert abs(result["loss_ours"] - result["loss_hf"]) < 1e-5


# --- flags out of range (issue 13, classes 10 and 14c) ---------------------------------


def test_seed_outside_torch_range_exits_2(tmp_path):
    assert_clean_error(smoke(tmp_path / "run", "--seed", 2**70), str(2**64 - 1))  # the range is named
    assert not (tmp_path / "run").exists()
    summary = train(
        "number", tmp_path / "largest", preset="smoke", steps=1, seed=2**64 - 1, device="cpu", progress=False
    )
    assert summary["step"] == 1  # the top of the range works (torch and the data order take it)


def test_bench_threads_must_be_positive():
    assert_clean_error(cli("bench", "--threads", 0), "--threads must be >= 1")


def test_set_overrides_a_recipe_value_and_is_saved(tmp_path):
    out = tmp_path / "run"
    summary = train(
        "letter", out, preset="smoke", steps=2, progress=False, overrides=["model.rotary_dim=16", "lr=0.001"]
    )
    assert summary["step"] == 2
    recipe = json.loads((out / "recipe.json").read_text())
    assert recipe["overrides"] == ["model.rotary_dim=16", "lr=0.001"]
    assert recipe["recipe"]["model"]["rotary_dim"] == 16 and recipe["recipe"]["lr"] == 0.001
    assert load_model(out).config.rotary_dim == 16
    with pytest.raises(RunError, match="changes model"):
        train("letter", out, resume=True, progress=False, overrides=["model.rotary_dim=8"])
    with pytest.raises(RunError, match="unknown key 'model.rotary'"):
        train(
            "letter",
            tmp_path / "other",
            preset="smoke",
            steps=2,
            progress=False,
            overrides=["model.rotary=8"],
        )
    assert not (tmp_path / "other").exists()


class _AlwaysZero(torch.nn.Module):
    """Answers token 0 at every position: right exactly where the answer is 0."""

    def __init__(self):
        super().__init__()
        self.unused = torch.nn.Parameter(torch.zeros(1))  # evaluate reads the device from a parameter

    def forward(self, inputs, last_only=True):
        logits = torch.zeros(len(inputs), 3)
        logits[:, 0] = 1.0
        return logits


def test_accuracy_is_count_over_total_so_180_of_200_is_0_9():
    # the float32 mean stored 180/200 as 0.8999999762, which the break rules read as below 0.9
    answers = torch.tensor([0] * 180 + [1] * 20)
    hops = torch.tensor([1, 2] * 100)
    data = {"inputs": torch.zeros(200, 4, dtype=torch.long), "answers": answers, "hops": hops}
    scores = evaluate(_AlwaysZero(), data, batch_size=7)
    assert scores["accuracy"] == 0.9 and scores["accuracy_by_hop"] == {"1": 0.9, "2": 0.9}
    accuracy, _, by_hop = _sliced_accuracy(
        _AlwaysZero(), data, 64, 7, lambda rows: None
    )  # 4 slices re-weighted
    assert accuracy == 0.9 and by_hop == {"1": 0.9, "2": 0.9}

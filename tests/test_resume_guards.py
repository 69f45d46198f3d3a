"""train start and resume check the same things (issue 29): another run's optimizer state, step
bounds, --set counts, memory, divergence, a full disk, hostile run files.  Each class of defect is
one parametrised test; runs are smoke runs of a few steps, made in-process where a test needs no
exit status, and through the command's own ``main`` (in-process too) where it does."""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from test_run_safety import copy_of, finished, same_tensors, smoke, stopped, tree_digest  # noqa: F401  (shared fixtures)

from training.__main__ import main
from training.run import loop as train_module
from training.run import memory
from training.run.checkpoints import list_checkpoints
from training.run.checks import RunError
from training.run.memory import step_memory
from training.run.presets import get_preset
from training.tasks.definitions import MAX_COUNT

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def finite(path: Path) -> bool:
    return all(torch.isfinite(t).all() for t in load_file(path).values() if t.is_floating_point())


def records(run: Path) -> list:
    return [
        {k: v for k, v in json.loads(line).items() if k != "seconds_per_step"}
        for line in (run / "metrics.jsonl").read_text().splitlines()
    ]


def cli_error(capsys, *args) -> str:
    """``python -m training ARGS`` in-process: exit status 2 and exactly one line on stderr."""
    capsys.readouterr()
    status = main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, (status, err)
    return lines[0]


# --- class 6: resume accepts only its own state ----------------------------------------------------


def _letter_moments(tmp_path):
    """The optimizer state of a letter-task run (vocabulary 128, the number task has 136)."""
    letter = tmp_path / "letter"
    smoke(letter, task="letter", steps=20, stop_at=10)
    return load_file(letter / "checkpoints" / "step-000010" / "training_state.safetensors")


def _edit(tensors, name, make):
    tensors[name] = make(tensors[name])
    return tensors


STATE_EDITS = {
    "another task's state": (lambda t, tmp: _letter_moments(tmp), "optimizer.0.exp_avg"),
    "a moment smaller than its parameter": (
        lambda t, tmp: _edit(t, "optimizer.3.exp_avg_sq", lambda x: x[: x.shape[0] // 2].clone()),
        "optimizer.3.exp_avg_sq",
    ),
    "a moment of another width": (
        lambda t, tmp: _edit(t, "optimizer.0.exp_avg", lambda x: torch.zeros(x.shape[0], 48)),
        "optimizer.0.exp_avg",
    ),
    "a NaN moment": (
        lambda t, tmp: _edit(t, "optimizer.1.exp_avg", lambda x: x * float("nan")),
        "optimizer.1.exp_avg",
    ),
    "a parameter no group holds": (
        lambda t, tmp: {k.replace("optimizer.2.", "optimizer.999."): v for k, v in t.items()},
        "999",
    ),
}


@pytest.mark.parametrize("case", STATE_EDITS)
def test_resume_refuses_optimizer_state_that_is_not_the_models(stopped, copy_of, tmp_path, capsys, case):
    run = copy_of(stopped)
    state = run / "checkpoints" / "step-000010" / "training_state.safetensors"
    edit, tensor = STATE_EDITS[case]
    save_file(edit(load_file(state), tmp_path), state, metadata={"format": "pt"})
    before = tree_digest(run)
    line = cli_error(capsys, "train", "--task", "number", "--out", run, "--resume", "--no-progress")
    assert str(state) in line and tensor in line, line
    assert tree_digest(run) == before  # nothing trained, nothing written


def test_resume_refuses_non_finite_weights(stopped, copy_of):
    run = copy_of(stopped)
    weights = run / "checkpoints" / "step-000010" / "model.safetensors"
    tensors = load_file(weights)
    name = sorted(tensors)[0]
    tensors[name][0] = float("inf")
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(RunError, match=rf"{name} holds NaN or infinite values"):
        smoke(run, resume=True)


def test_resuming_from_step_0_twice_logs_step_0_once_and_equals_an_uninterrupted_run(
    finished, stopped, copy_of
):
    run = copy_of(stopped)
    for stop_at in (10, None):  # two resumes, each from the step-0 checkpoint
        shutil.rmtree(run / "checkpoints" / "step-000010")
        assert [s for s, _ in list_checkpoints(run / "checkpoints")] == [0]
        smoke(run, resume=True, stop_at=stop_at)
    step0 = [r for r in records(run) if r["split"] == "validation" and r["step"] == 0]
    assert len(step0) == 1, step0
    assert records(run) == records(finished)
    assert same_tensors(run / "model.safetensors", finished / "model.safetensors")


@pytest.mark.parametrize("steps", [0, 10_000_001, 99_999_999_999])
def test_steps_outside_the_one_bound_are_refused_at_start_and_resume(
    stopped, copy_of, tmp_path, capsys, steps
):
    fresh = tmp_path / "fresh"
    line = cli_error(
        capsys, "train", "--task", "number", "--preset", "smoke", "--out", fresh, "--steps", steps
    )
    assert f"--steps: got {steps}" in line and "[1, 10000000]" in line, line
    assert not fresh.exists()
    run = copy_of(stopped)
    line = cli_error(capsys, "train", "--task", "number", "--out", run, "--resume", "--steps", steps)
    assert f"--steps: got {steps}" in line and "[1, 10000000]" in line, line


def test_a_run_started_at_the_step_bound_can_be_resumed(tmp_path):
    run = tmp_path / "long"
    smoke(run, steps=10_000_000, stop_at=1)
    assert smoke(run, resume=True, stop_at=2)["step"] == 2


def _diverge_after(monkeypatch, optimizer_steps: int, poison):
    """After the optimizer's ``optimizer_steps``-th step, ``poison(first parameter)`` in place."""
    real = train_module.make_optimizer

    def make(model, *args):
        optimizer = real(model, *args)
        calls = [0]

        def hook(opt, args, kwargs):
            calls[0] += 1
            if calls[0] == optimizer_steps:
                with torch.no_grad():
                    poison(next(model.parameters()))

        optimizer.register_step_post_hook(hook)
        return optimizer

    monkeypatch.setattr(train_module, "make_optimizer", make)


@pytest.mark.parametrize(
    "after, value, last_good",
    [
        (7, float("nan"), 5),  # the next loss is NaN: stopped before step 8 is used
        (5, float("inf"), 0),  # the weights of the step-5 checkpoint would be infinite: it is not written
        (3, 1e30, 0),  # finite but huge: the loss or gradient overflows a step later
    ],
)
def test_a_diverging_run_stops_keeping_the_last_good_checkpoint(
    tmp_path, monkeypatch, after, value, last_good
):
    _diverge_after(monkeypatch, after, lambda p: p.fill_(value))
    run = tmp_path / "run"
    with pytest.raises(RunError, match=rf"diverged.*the last checkpoint is step {last_good}"):
        smoke(run, steps=20, overrides=["checkpoint_every=5"])  # validation at 0 and 20 only
    kept = list_checkpoints(run / "checkpoints")
    assert [s for s, _ in kept] == list(range(0, last_good + 1, 5))
    for _, path in kept:
        assert finite(path / "model.safetensors") and finite(path / "training_state.safetensors")
    assert finite(run / "model.safetensors")
    assert all(json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines())


def test_a_diverging_recipe_is_one_line_from_the_cli(tmp_path, capsys):
    run = tmp_path / "run"  # AdamW's decay factor 1 - lr * weight_decay = -9: the weights blow up
    line = cli_error(
        capsys,
        "train",
        "--task",
        "number",
        "--preset",
        "smoke",
        "--out",
        run,
        "--steps",
        40,
        "--no-progress",
        "--set",
        "lr=1",
        "--set",
        "warmup_steps=0",
        "--set",
        "weight_decay=10",
    )
    assert "not finite" in line or "NaN" in line or "nan" in line, line
    assert [s for s, _ in list_checkpoints(run / "checkpoints")] == [0]
    assert finite(run / "checkpoints" / "step-000000" / "model.safetensors")


# --- class 8: --set values are checked at --set time, against the generator's bounds -------------


@pytest.mark.parametrize(
    "preset, overrides, fragments",
    [
        ("smoke", ["validation_count=0"], ["validation_count=0", f"[1, {MAX_COUNT}]"]),
        ("smoke", ["train_count=0"], ["train_count=0", f"[1, {MAX_COUNT}]"]),
        ("smoke", ["train_count=20000000"], ["train_count", "20000000", f"[1, {MAX_COUNT}]"]),
        ("paper", ["data=generated"], ["data=generated", "train_count=0", f"[1, {MAX_COUNT}]"]),
        ("paper", ["data=generated", "train_count=100"], ["validation_count=0", f"[1, {MAX_COUNT}]"]),
        ("smoke", ["betas=[0, 0.9]", "steps=2"], None),  # integers where torch's AdamW wants floats: accepted
        ("smoke", ["model.n_head=3"], ["n_embd=32", "n_head=3"]),
        ("smoke", ["model.nope_from_layer=5"], ["nope_from_layer", "[0, n_layer=2]"]),
    ],
)
def test_set_values_are_checked_before_any_work(tmp_path, capsys, preset, overrides, fragments):
    run = tmp_path / "run"
    args = ["train", "--task", "number", "--preset", preset, "--out", run, "--no-progress"]
    args += [a for o in overrides for a in ("--set", o)]
    if fragments is None:
        assert main([str(a) for a in args]) == 0
        return
    line = cli_error(capsys, *args)
    assert all(f in line for f in fragments), line
    assert not run.exists()


# --- class 10c: memory estimated and refused before anything is allocated --------------------------


def test_bench_refuses_a_batch_beyond_memory_before_allocating(capsys, monkeypatch):
    def no_model(*args, **kwargs):
        raise AssertionError("a model was built")

    monkeypatch.setattr("training.run.bench.hf_compare.GPTJ", no_model)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    line = cli_error(capsys, "bench", "--batch-size", 10_000_000)
    assert "--batch-size 10000000" in line and "TB" in line and "available" in line, line
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100_000  # kB: nothing big was touched


def test_train_refuses_a_batch_beyond_memory_before_any_work(tmp_path, capsys):
    run = tmp_path / "run"
    line = cli_error(
        capsys,
        "train",
        "--task",
        "number",
        "--preset",
        "smoke",
        "--out",
        run,
        "--set",
        "batch_size=65536",
        "--set",
        "data.extra_target_max=4983",
    )
    assert "batch_size 65536" in line and "TB" in line and "available" in line, line
    assert not run.exists()


@pytest.mark.parametrize("resume", [False, True])
def test_train_and_resume_use_the_one_estimate(stopped, copy_of, tmp_path, monkeypatch, resume):
    monkeypatch.setattr(memory, "available_memory", lambda device: (1_000_000, "in this test"))
    run = copy_of(stopped) if resume else tmp_path / "fresh"
    before = tree_digest(run) if resume else None
    with pytest.raises(
        RunError, match=r"batch_size 32: .* needs about [\d.]+ MB .* more than the 1 MB in this test"
    ):
        smoke(run, resume=resume, steps=None if resume else 20)
    assert (tree_digest(run) == before) if resume else not run.exists()


def test_the_presets_fit_in_a_gigabyte():
    from training.model.gptj import ModelConfig

    for name in ("paper", "smoke"):
        preset = get_preset(name)
        assert step_memory(ModelConfig(vocab_size=136, **preset.model), preset.batch_size, 17) < 1e9


# --- class 3: a full disk while training -------------------------------------------------------------


def _limited(limit: int):
    def start():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return start


@pytest.mark.parametrize("where", ["metrics.jsonl", "checkpoint"])
def test_a_full_disk_stops_in_one_line_and_the_run_resumes_bit_identically(finished, stopped, copy_of, where):
    run = copy_of(stopped)
    # metrics: the train record of step 20 is the first write to grow the log past its size;
    # checkpoint: training_state.safetensors is the largest file a checkpoint writes
    state = run / "checkpoints" / "step-000010" / "training_state.safetensors"
    limit = (
        (run / "metrics.jsonl").stat().st_size + 20
        if where == "metrics.jsonl"
        else state.stat().st_size - 1000
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "train",
            "--task",
            "number",
            "--out",
            str(run),
            "--resume",
            "--no-progress",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited(limit),
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "File too large" in lines[0] and (where in lines[0] or "checkpoint" in lines[0]), lines[0]
    assert [s for s, _ in list_checkpoints(run / "checkpoints")] == [0, 10]
    assert not [p for p in (run / "checkpoints").iterdir() if p.name.startswith(".tmp")]
    smoke(run, resume=True)  # without the limit
    assert same_tensors(run / "model.safetensors", finished / "model.safetensors")
    for name in ("model.safetensors", "training_state.safetensors"):
        assert same_tensors(
            run / "checkpoints" / "step-000020" / name, finished / "checkpoints" / "step-000020" / name
        )
    assert records(run) == records(finished)


# --- class 5: hostile run files: one line naming the file and the field ----------------------------


def _deep(_text):
    return "[" * 5000 + "]" * 5000


def _state(edit):
    def apply(text):
        info = json.loads(text)
        edit(info)
        return json.dumps(info)

    return apply


def _metrics_line(index, make):
    def apply(text):
        lines = text.splitlines(keepends=True)
        lines.insert(index, make(lines[index]) + "\n")
        return "".join(lines)

    return apply


HOSTILE = {
    "config nested": ("config.json", _deep, "nested deeper"),
    "state nested": ("checkpoints/step-000010/training_state.json", _deep, "nested deeper"),
    "state param_groups": (
        "checkpoints/step-000010/training_state.json",
        _state(lambda i: i["optimizer"]["param_groups"][0].update(params="all")),
        "optimizer.param_groups[0].params",
    ),
    "state steps beyond the bound": (
        "checkpoints/step-000010/training_state.json",
        _state(lambda i: i["settings"].update(steps=10_000_001)),
        "[1, 10000000]",
    ),
    "state generated data without rows": (
        "checkpoints/step-000010/training_state.json",
        _state(lambda i: i["settings"]["recipe"].update(train_count=0)),
        "'train_count' is 0",
    ),
    "metrics nested": ("metrics.jsonl", _metrics_line(1, lambda line: "[" * 5000 + "]" * 5000), "line 2"),
    "metrics not UTF-8": ("metrics.jsonl", None, "not UTF-8"),
    "metrics wrong type": (
        "metrics.jsonl",
        _metrics_line(1, lambda line: json.dumps({"split": "x", "step": "7"})),
        "field 'step'",
    ),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_run_files_are_one_line_naming_the_file(stopped, copy_of, capsys, case):
    name, edit, fragment = HOSTILE[case]
    run = copy_of(stopped)
    path = run / name
    if edit is None:
        path.write_bytes(path.read_bytes()[:40] + b"\xff\xfe" + path.read_bytes()[40:])
    else:
        path.write_text(edit(path.read_text()))
    before = tree_digest(run)
    line = cli_error(capsys, "train", "--task", "number", "--out", run, "--resume", "--no-progress")
    assert Path(name).name in line and fragment in line, line
    assert tree_digest(run) == before


def test_a_fifo_as_config_is_refused_without_blocking(stopped, copy_of, capsys):
    run = copy_of(stopped)
    (run / "config.json").unlink()
    os.mkfifo(run / "config.json")
    line = cli_error(capsys, "train", "--task", "number", "--out", run, "--resume", "--no-progress")
    assert "config.json" in line and "FIFO" in line, line

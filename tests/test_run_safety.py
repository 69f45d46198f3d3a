"""train under misuse and crashes (issue 13): outputs checked before work, failed starts undone,
checkpoint folders tied to their run, run folders locked, resume after any crash."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from test_train import ENV, REPO, cli  # one `python -m training` runner for both files

from training.run import checkpoints
from training.run.checkpoints import list_checkpoints, load_model
from training.run.checks import RunError
from training.run.lock import LOCK_NAME, RunLock
from training.run.loop import train
from training.run.ownership import OWNER_NAME

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def assert_clean_error(result, *fragments):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def smoke(out, **kwargs):
    kwargs = {"preset": "smoke", "device": "cpu", "progress": False, **kwargs}
    return train(kwargs.pop("task", "number"), out, **kwargs)


def tree_digest(root: Path) -> dict:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def same_tensors(a: Path, b: Path) -> bool:
    x, y = load_file(a), load_file(b)
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def metrics_without_timing(run: Path) -> list:
    return [
        {k: v for k, v in json.loads(line).items() if k != "seconds_per_step"}
        for line in (run / "metrics.jsonl").read_text().splitlines()
    ]


def on_one_thread(run, out, **kwargs):
    """``run(out, **kwargs)`` on one torch thread, then ``out``.  For module fixtures, which run
    before the per-test one_torch_thread: every run a test compares bit for bit is made on one thread."""
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run(out, **kwargs)
    finally:
        torch.set_num_threads(saved)
    return out


def smoke_on_one_thread(out, **kwargs):
    return on_one_thread(smoke, out, **kwargs)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """An uninterrupted 20-step smoke run."""
    return smoke_on_one_thread(tmp_path_factory.mktemp("safety") / "finished", steps=20)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """The same run stopped at step 10 (its checkpoints: 0 and 10)."""
    return smoke_on_one_thread(tmp_path_factory.mktemp("safety") / "stopped", steps=20, stop_at=10)


@pytest.fixture
def copy_of(tmp_path):
    def make(run: Path) -> Path:
        target = tmp_path / f"copy-of-{run.name}"
        shutil.copytree(run, target)
        return target

    return make


# --- class 2, 3: every destination checked before any work; a failed start undone -----------


def test_out_that_is_a_file_exits_2_before_any_work(tmp_path):
    occupied = tmp_path / "notes.txt"
    occupied.write_text("mine")
    result = cli("train", "--task", "number", "--preset", "smoke", "--out", occupied, "--no-progress")
    assert_clean_error(result, "--out", str(occupied))
    assert occupied.read_text() == "mine"
    with pytest.raises(RunError, match="--out"):  # a folder that cannot be made
        smoke(occupied / "run", steps=2)


def test_unwritable_checkpoint_dir_creates_nothing(tmp_path):
    (tmp_path / "file").write_text("")
    out = tmp_path / "new" / "run"
    with pytest.raises(RunError, match="--checkpoint-dir"):
        smoke(out, steps=2, checkpoint_dir=tmp_path / "file" / "checkpoints")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # not even --out's parent


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_destinations_are_refused_before_any_work(tmp_path):
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o555)
    try:
        with pytest.raises(RunError, match="--out"):
            smoke(read_only / "run", steps=2)
        with pytest.raises(RunError, match="--checkpoint-dir"):
            smoke(tmp_path / "run", steps=2, checkpoint_dir=read_only)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["read-only"]
    finally:
        read_only.chmod(0o755)


def test_failed_start_is_undone_and_a_retry_starts_cleanly(tmp_path, monkeypatch):
    out, ckpt = tmp_path / "run", tmp_path / "elsewhere" / "checkpoints"

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("training.run.loop.save_checkpoint", disk_full)
    with pytest.raises(OSError):
        smoke(out, steps=2, checkpoint_dir=ckpt)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # run files, owner.json, folders: all gone
    monkeypatch.undo()
    smoke(out, steps=2, checkpoint_dir=ckpt)  # no "already holds a run", no --force needed
    assert [s for s, _ in list_checkpoints(ckpt)] == [0, 2]


# --- class 4: a checkpoint folder belongs to one run; --force deletes only its own ------------


def test_checkpoint_folder_of_another_run_is_refused_even_with_force(finished, copy_of, tmp_path):
    other = copy_of(finished)
    before = tree_digest(other)
    new = tmp_path / "new"
    for force in (False, True):
        with pytest.raises(RunError, match=f"{other / 'checkpoints'} holds the checkpoints of another run"):
            smoke(new, steps=2, checkpoint_dir=other / "checkpoints", force=force)
    (other / "checkpoints" / OWNER_NAME).unlink()  # a folder from before owner.json: settings decide
    with pytest.raises(RunError, match="another run"):
        smoke(new, steps=2, checkpoint_dir=other / "checkpoints", force=True)
    assert not new.exists()
    before.pop(f"checkpoints/{OWNER_NAME}")
    assert tree_digest(other) == before


def test_a_copied_run_owns_its_copied_checkpoints(stopped, copy_of):
    run = copy_of(stopped)
    summary = smoke(run, resume=True)
    assert summary["step"] == 20 and [s for s, _ in list_checkpoints(run / "checkpoints")][-1] == 20


# --- class 5: one train process per run folder ----------------------------------------------


def test_second_train_on_a_running_run_exits_2_naming_the_holder(tmp_path):
    out = tmp_path / "run"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "training",
            "train",
            "--task",
            "letter",
            "--preset",
            "smoke",
            "--steps",
            "3000",
            "--out",
            str(out),
            "--device",
            "cpu",
            "--no-progress",
        ],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while not list_checkpoints(out / "checkpoints") and time.time() < deadline:
            time.sleep(0.05)
        assert list_checkpoints(out / "checkpoints"), "the first train never checkpointed"
        second = cli("train", "--task", "letter", "--out", out, "--resume", "--no-progress")
        assert first.poll() is None, "the first train ended before the second one was tried"
        assert_clean_error(second, "in use by another train process", f"pid {first.pid}")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    # the killed holder's lock file stays behind and blocks nobody: the kernel released the flock
    assert f"pid {first.pid}" in (out / LOCK_NAME).read_text()
    last = list_checkpoints(out / "checkpoints")[-1][0]
    assert smoke(out, task="letter", resume=True, stop_at=last + 1)["step"] == last + 1
    assert not (out / LOCK_NAME).exists()  # a clean exit removes it


def test_lock_held_by_another_descriptor_refuses_a_second_taker(stopped, copy_of):
    run = copy_of(stopped)
    before = tree_digest(run)
    with RunLock(run):
        with pytest.raises(RunError, match=f"pid {os.getpid()} on host"):
            smoke(run, resume=True)
        assert {k: v for k, v in tree_digest(run).items() if k != LOCK_NAME} == before
    assert tree_digest(run) == before  # the lock file goes with its holder


# --- class 6: a torn last line of metrics.jsonl -------------------------------------------------


def test_resume_drops_a_torn_last_metrics_line(finished, stopped, copy_of, capsys):
    run = copy_of(stopped)
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"split": "train", "step": 11, "lo')  # a kill in the middle of an append
    smoke(run, resume=True)
    note = capsys.readouterr().err.strip().splitlines()
    assert len(note) == 1 and "metrics.jsonl" in note[0] and "cut off" in note[0], note
    assert metrics_without_timing(run) == metrics_without_timing(finished)
    assert same_tensors(run / "model.safetensors", finished / "model.safetensors")


def test_a_corrupt_metrics_line_in_the_middle_is_still_an_error(stopped, copy_of):
    run = copy_of(stopped)
    lines = (run / "metrics.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1][:20] + "\n"
    (run / "metrics.jsonl").write_text("".join(lines))
    before = tree_digest(run)
    with pytest.raises(RunError, match=r"metrics.jsonl line 2"):
        smoke(run, resume=True)
    assert tree_digest(run) == before


# --- class 7: --resume never reports weights it did not write -----------------------------


def test_resume_restores_missing_best_weights(finished, copy_of):
    run = copy_of(finished)
    (run / "model.safetensors").unlink()
    summary = smoke(run, resume=True)  # already complete: nothing to train, the weights come back
    assert same_tensors(run / "model.safetensors", finished / "model.safetensors")
    best = run / "checkpoints" / f"step-{summary['best_step']:06d}" / "model.safetensors"
    assert same_tensors(run / "model.safetensors", best)


def test_resume_refuses_when_best_weights_cannot_be_restored(finished, copy_of):
    run = copy_of(finished)
    (run / "model.safetensors").unlink()
    state = run / "checkpoints" / "step-000020" / "training_state.json"
    info = json.loads(state.read_text())
    info["best"]["step"] = 5  # a step without a checkpoint
    state.write_text(json.dumps(info))
    with pytest.raises(RunError, match=r"model.safetensors is missing and so is .*step-000005"):
        smoke(run, resume=True)
    assert not (run / "model.safetensors").exists()


# --- class 11: JSON of the wrong shape ------------------------------------------------------


@pytest.mark.parametrize(
    "config, field",
    [
        ([], "JSON object"),
        ("12", "JSON object"),
        ({"n_embd": 1e7}, "parameters"),
        ({"n_head": 0}, "'n_head'"),
        ({"n_layer": "2"}, "'n_layer'"),
    ],
)
def test_config_of_the_wrong_shape_names_file_and_field(finished, tmp_path, config, field):
    folder = tmp_path / "weights"
    folder.mkdir()
    shutil.copy(finished / "model.safetensors", folder)
    good = json.loads((finished / "config.json").read_text())
    (folder / "config.json").write_text(
        json.dumps({**good, **config} if isinstance(config, dict) else config)
    )
    with pytest.raises(RunError, match=field) as error:
        load_model(folder)
    assert str(folder / "config.json") in str(error.value)


def test_run_files_of_the_wrong_shape_name_file_and_field(stopped, copy_of):
    cases = [
        ("checkpoints/step-000010/training_state.json", lambda text: "[1, 2]", "training_state.json"),
        (
            "checkpoints/step-000010/training_state.json",
            lambda text: json.dumps({**json.loads(text), "best": [0]}),
            "field 'best'",
        ),
        (
            "metrics.jsonl",
            lambda text: text + "[1, 2]\n" + text.splitlines()[-1] + "\n",
            r"line \d+ must be a JSON object",
        ),
        (
            "metrics.jsonl",
            lambda text: (
                json.dumps({**json.loads(text.splitlines()[0]), "checkpoint_dir": 42})
                + "\n"
                + "".join(text.splitlines(keepends=True)[1:])
            ),
            "'checkpoint_dir'",
        ),
    ]
    for name, edit, fragment in cases:
        run = copy_of(stopped)
        (run / name).write_text(edit((run / name).read_text()))
        with pytest.raises(RunError, match=fragment) as error:
            smoke(run, resume=True)
        assert Path(name).name in str(error.value)
        shutil.rmtree(run)


def test_checkpoints_of_two_architectures_in_one_folder_are_refused(stopped, copy_of, tmp_path):
    run = copy_of(stopped)
    wide = tmp_path / "wide"
    from training.model.gptj import GPTJ, ModelConfig

    checkpoints.save_weights(wide, GPTJ(ModelConfig(vocab_size=136, n_layer=1, n_embd=16, rotary_dim=16)))
    shutil.copytree(run / "checkpoints" / "step-000010", run / "checkpoints" / "step-000015")
    for name in ("config.json", "model.safetensors"):
        shutil.copy(wide / name, run / "checkpoints" / "step-000015" / name)
    with pytest.raises(RunError, match="two architectures"):
        smoke(run, resume=True)


def test_training_state_json_of_the_wrong_shape_exits_2_from_the_cli(stopped, copy_of):
    run = copy_of(stopped)
    (run / "checkpoints" / "step-000010" / "training_state.json").write_text("[]")
    assert_clean_error(cli("train", "--task", "number", "--out", run, "--resume"), "training_state.json")


# --- done-when: SIGKILL mid-run, resume, bit for bit ------------------------------------------


def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path):
    """The smoke preset checkpoints every 100 steps: kill -9 somewhere after step 100 of 200."""
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "training",
            "train",
            "--task",
            "letter",
            "--preset",
            "smoke",
            "--steps",
            "200",
            "--out",
            str(killed),
            "--device",
            "cpu",
            "--no-progress",
        ],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 90
    while not (killed / "checkpoints" / "step-000100").is_dir() and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed mid-run, not finished
    assert [s for s, _ in list_checkpoints(killed / "checkpoints")] == [0, 100]
    smoke(killed, task="letter", resume=True)

    reference = tmp_path / "uninterrupted"
    smoke(reference, task="letter", steps=200)
    assert same_tensors(killed / "model.safetensors", reference / "model.safetensors")
    for name in ("model.safetensors", "training_state.safetensors"):
        assert same_tensors(
            killed / "checkpoints" / "step-000200" / name, reference / "checkpoints" / "step-000200" / name
        ), name
    assert metrics_without_timing(killed) == metrics_without_timing(reference)

"""train --seeds (issue 34): K seeds of one recipe trained as one batched model, each member equal to
its single-seed run -- the same initial weights and batches bit for bit, the same losses up to float
reassociation, the same validation accuracies -- and resumable after kill -9 bit for bit."""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from test_resume_guards import cli_error
from test_run_safety import metrics_without_timing, on_one_thread, same_tensors, smoke, smoke_on_one_thread
from test_train import ENV, REPO

from training.__main__ import main
from training.model.batched import BatchedGPTJ
from training.model.gptj import GPTJ
from training.run import memory
from training.run.batched_loop import parse_seeds, train_seeds
from training.run.checkpoints import list_checkpoints

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SEEDS = [0, 1]
# The issue asks for 200 smoke steps; BATCHED_EQUIVALENCE_STEPS=3000 runs the smoke preset's whole
# schedule (about 4 minutes on one core), as measured for issue 34.
STEPS = int(os.environ.get("BATCHED_EQUIVALENCE_STEPS", "200"))


def batched(out, **kwargs):
    kwargs = {"preset": "smoke", "device": "cpu", "progress": False, **kwargs}
    return train_seeds(kwargs.pop("task", "letter"), out, kwargs.pop("seeds", SEEDS), **kwargs)


def batched_on_one_thread(out, **kwargs):
    return on_one_thread(batched, out, **kwargs)


def lines(run, split):
    return [r for r in metrics_without_timing(run) if r["split"] == split]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Seeds 0 and 1 of the letter task for STEPS smoke steps: batched, and one single run each."""
    root = tmp_path_factory.mktemp("batched")
    batched_on_one_thread(root / "batched", steps=STEPS)
    for seed in SEEDS:
        smoke_on_one_thread(root / f"single-{seed}", task="letter", steps=STEPS, seed=seed)
    return root


def test_members_start_from_the_single_runs_weights_bit_for_bit(pair):
    for seed in SEEDS:
        step0 = "checkpoints/step-000000/model.safetensors"
        assert same_tensors(pair / "batched" / f"seed-{seed}" / step0, pair / f"single-{seed}" / step0)
    model = BatchedGPTJ(GPTJ(_smoke_config()).config, [4, 9], torch.device("cpu"))
    for k, seed in enumerate([4, 9]):
        torch.manual_seed(seed)
        single = GPTJ(_smoke_config())
        for (name, a), (_, b) in zip(single.named_parameters(), model.members[k].named_parameters()):
            assert torch.equal(a, b), name
            assert torch.equal(b, model.stacked[name][k])  # the member is a view of the stacked weights


def _smoke_config():
    from training.run.presets import get_preset
    from training.run.start import model_config

    return model_config("letter", get_preset("smoke"), "test")


def test_members_see_the_single_runs_batches_bit_for_bit(tmp_path, monkeypatch):
    seen = {"batched": [], "single": []}
    real_batched, real_single = BatchedGPTJ.forward, GPTJ.forward

    def record_batched(self, idx, masks=None):
        seen["batched"].append(idx.clone())
        return real_batched(self, idx, masks)

    def record_single(self, idx, last_only=False, **kwargs):
        if self.training:  # training steps, not validation
            seen["single"].append(idx.clone())
        return real_single(self, idx, last_only=last_only, **kwargs)

    monkeypatch.setattr(BatchedGPTJ, "forward", record_batched)
    batched(tmp_path / "b", steps=3, seeds=[2, 7])
    monkeypatch.setattr(GPTJ, "forward", record_single)
    for seed in (2, 7):
        smoke(tmp_path / f"s{seed}", task="letter", steps=3, seed=seed)
    singles = seen["single"]
    assert len(seen["batched"]) == 3 and len(singles) == 6
    for step, idx in enumerate(seen["batched"]):
        assert torch.equal(idx[0], singles[step]) and torch.equal(idx[1], singles[3 + step]), step


def test_members_train_like_their_single_runs(pair):
    """Every logged training loss within 1e-4 relative, every validation accuracy (and per hop) equal."""
    for seed in SEEDS:
        member, single = pair / "batched" / f"seed-{seed}", pair / f"single-{seed}"
        ours, theirs = lines(member, "train"), lines(single, "train")
        assert [r["step"] for r in ours] == [r["step"] for r in theirs] and len(ours) == STEPS // 10
        for a, b in zip(ours, theirs):
            assert math.isclose(a["loss"], b["loss"], rel_tol=1e-4, abs_tol=0), (seed, a, b)
            assert a["lr"] == b["lr"]
        ours, theirs = lines(member, "validation"), lines(single, "validation")
        assert [(r["step"], r["accuracy"], r["accuracy_by_hop"], r["is_best"]) for r in ours] == [
            (r["step"], r["accuracy"], r["accuracy_by_hop"], r["is_best"]) for r in theirs
        ], seed
        assert ours[-1]["accuracy"] > ours[0]["accuracy"]  # the run learned something: not a vacuous match


def test_a_member_folder_is_a_run_every_command_reads(pair):
    member = pair / "batched" / "seed-1"
    assert sorted(p.name for p in member.iterdir()) == sorted(p.name for p in (pair / "single-1").iterdir())
    settings = metrics_without_timing(member)[0]
    assert settings["seed"] == 1 and settings["batched_seeds"] == SEEDS
    out = pair / "evaluated.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "evaluate",
            "--run",
            str(member),
            "--task",
            "letter",
            "--lengths",
            "17",
            "--count",
            "20",
            "--json",
            str(out),
            "--no-progress",
        ],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())


def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_batched_run(tmp_path):
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
            "--seeds",
            "0,1",
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
    deadline = time.time() + 120
    while not (killed / "seed-0" / "checkpoints" / "step-000100").is_dir() and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed mid-run, not finished
    batched(killed, resume=True)

    reference = batched_on_one_thread(tmp_path / "uninterrupted", steps=200)
    for seed in SEEDS:
        a, b = killed / f"seed-{seed}", reference / f"seed-{seed}"
        assert same_tensors(a / "model.safetensors", b / "model.safetensors")
        for name in ("model.safetensors", "training_state.safetensors"):
            assert same_tensors(a / "checkpoints/step-000200" / name, b / "checkpoints/step-000200" / name)
        assert metrics_without_timing(a) == metrics_without_timing(b)


def test_a_member_one_checkpoint_behind_makes_all_resume_from_the_common_step(tmp_path):
    """A kill between the members' checkpoints of one step: the others redo it, ending the same."""
    # checkpoints every 10 steps, where the training log is written too (a resume starts a new log window)
    reference = batched_on_one_thread(tmp_path / "uninterrupted", steps=30, overrides=["checkpoint_every=10"])
    run = batched_on_one_thread(tmp_path / "run", steps=30, stop_at=20, overrides=["checkpoint_every=10"])
    shutil.rmtree(run / "seed-1" / "checkpoints" / "step-000020")
    batched(run, resume=True)
    for seed in SEEDS:
        a, b = run / f"seed-{seed}", reference / f"seed-{seed}"
        assert [s for s, _ in list_checkpoints(a / "checkpoints")] == [0, 10, 20, 30]
        for name in ("model.safetensors", "training_state.safetensors"):
            assert same_tensors(a / "checkpoints/step-000030" / name, b / "checkpoints/step-000030" / name)
        assert metrics_without_timing(a) == metrics_without_timing(b)


def test_a_member_resumes_alone_as_a_single_run(tmp_path):
    """Its folder is a single run's: ``train --resume`` continues one member by itself."""
    run = batched_on_one_thread(tmp_path / "run", steps=20, stop_at=10)
    smoke(run / "seed-1", task="letter", resume=True)
    assert [s for s, _ in list_checkpoints(run / "seed-1" / "checkpoints")] == [0, 10, 20]


@pytest.mark.parametrize(
    "seeds, fragment",
    [
        ("", "--seeds must be a comma-separated list"),
        ("1,,2", "--seeds must be a comma-separated list"),
        ("1,2,1", "--seeds must be distinct, got 1"),
        ("-1", "--seeds must be an integer in 0.."),
        ("0,x", "--seeds must be an integer in 0.."),
        (str(2**64), "--seeds must be an integer in 0.."),
        ("1_0", "written with the digits 0-9, got '1_0'"),  # int() reads 10
        ("0,\u0663", "written with the digits 0-9, got '\u0663'"),  # ARABIC-INDIC DIGIT THREE: int() reads 3
        (",".join(map(str, range(65))), "--seeds lists 65 seeds; one batch trains 1..64"),
    ],
)
def test_bad_seeds_are_one_line_before_any_work(tmp_path, capsys, seeds, fragment):
    run = tmp_path / "run"
    line = cli_error(capsys, "train", "--task", "letter", "--preset", "smoke", "--out", run, "--seeds", seeds)
    assert fragment in line, line
    assert not run.exists()


@pytest.mark.parametrize("seed", ["1_0", "\u0663", "+3", "-1", "0x10"])
def test_seed_takes_only_ascii_digits_as_seeds_does(tmp_path, capsys, seed):
    """``--seed 1_0`` trained seed 10 and ``--seed \u0663`` seed 3 (Python's int reads both)."""
    run = tmp_path / "run"
    line = cli_error(capsys, "train", "--task", "letter", "--preset", "smoke", "--out", run, "--seed", seed)
    assert line.endswith(
        f"--seed must be an integer in 0..{2**64 - 1} written with the digits 0-9, got {seed!r}"
    ), line
    assert not run.exists()


def test_a_batch_of_64_seeds_is_read(tmp_path):
    assert parse_seeds(",".join(map(str, range(64)))) == list(range(64))
    assert parse_seeds(" 7, 18446744073709551615") == [7, 2**64 - 1]


def test_too_many_seeds_for_memory_are_refused_before_any_work(tmp_path, capsys, monkeypatch):
    one_member = memory.step_memory(_smoke_config(), 512, 17)  # above the evaluation's estimate
    monkeypatch.setattr(memory, "available_memory", lambda device: (int(2.5 * one_member), "in this test"))
    run = tmp_path / "run"
    line = cli_error(
        capsys,
        "train",
        "--task",
        "letter",
        "--preset",
        "smoke",
        "--out",
        run,
        "--seeds",
        "0,1,2",
        "--set",
        "batch_size=512",
    )
    assert "--seeds with 3 members (batch_size 512 each)" in line and "in this test" in line, line
    assert not run.exists()
    batched(tmp_path / "two", steps=1, seeds=[0, 1], overrides=["batch_size=512"])  # two fit


@pytest.mark.parametrize(
    "flags, fragment",
    [
        (["--seed", "3"], "--seed and --seeds exclude each other"),
        (["--set", "model.query_scale=learned"], "not batched"),
        (["--set", "data.extra_target_max=4"], "not batched"),
    ],
)
def test_what_cannot_be_batched_is_one_line(tmp_path, capsys, flags, fragment):
    run = tmp_path / "run"
    line = cli_error(
        capsys, "train", "--task", "letter", "--preset", "smoke", "--out", run, "--seeds", "0,1", *flags
    )
    assert fragment in line, line
    assert not run.exists()


def test_main_prints_one_summary_per_member(tmp_path, capsys):
    assert (
        main(
            [
                "train",
                "--task",
                "letter",
                "--preset",
                "smoke",
                "--steps",
                "2",
                "--no-progress",
                "--device",
                "cpu",
                "--out",
                str(tmp_path / "m-{seed}" / "run"),
                "--seeds",
                "5,6",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [m["run"] for m in summary["members"]] == [str(tmp_path / f"m-{s}" / "run") for s in (5, 6)]
    assert all((tmp_path / f"m-{s}" / "run" / "model.safetensors").is_file() for s in (5, 6))


def test_a_study_with_batch_seeds_writes_the_members_an_unbatched_study_writes(tmp_path):
    """study --batch-seeds: one train --seeds process per variant and task; the same member files as
    --no-batch-seeds, losses within 1e-4 relative and accuracies equal."""
    from test_studies import smoke_plan, study

    roots = {}
    for flag in ("--batch-seeds", "--no-batch-seeds"):
        where = tmp_path / flag.strip("-")
        where.mkdir()
        plan = smoke_plan(where, long=False, analyze=False, dilution=False, rescale=False)
        result = study(plan, flag, "--no-progress")
        assert result.returncode == 0, result.stderr
        roots[flag] = where / "members" / "tiny" / "letter"
    for seed in (1, 2):
        ours, theirs = roots["--batch-seeds"] / f"seed-{seed}", roots["--no-batch-seeds"] / f"seed-{seed}"
        assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in theirs.iterdir())
        train = json.loads((ours / "train.json").read_text())
        assert train["batched_seeds"] == [1, 2] and train["summary"]["seed"] == seed
        assert "batched_seeds" not in json.loads((theirs / "train.json").read_text())
        for a, b in zip(metrics_without_timing(ours / "run"), metrics_without_timing(theirs / "run")):
            assert a["split"] == b["split"] and a["step"] == b["step"]
            if a["split"] != "settings":
                assert math.isclose(a["loss"], b["loss"], rel_tol=1e-4) and a["accuracy"] == b["accuracy"], (
                    a,
                    b,
                )
        lengths = [
            json.loads((folder / "length_generalisation.json").read_text()) for folder in (ours, theirs)
        ]
        assert lengths[0]["accuracy"] == lengths[1]["accuracy"]

"""training.run.distributed: torchrun trains ONE model with DistributedDataParallel.

Two gloo processes on the CPU (``python -m torch.distributed.run``, so no ``torchrun`` script
is needed on PATH) train 20 smoke steps; the weights must be the single-process weights up
to float32 reduction order, only rank 0 writes, and ``--resume`` under torchrun equals the
uninterrupted two-process run bit for bit.

Dropout is off in these runs (``--set model.*_pdrop=0``): with dropout each rank draws its own
masks (reseeded from (seed, rank, step)), which are not the masks one process draws for the
same rows, so the weights could only match in distribution, not to rounding.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from training.__main__ import main
from training.run.distributed import SINGLE, Ranks, ranks_from_env
from training.run.loop import train

REPO = Path(__file__).resolve().parents[1]
# without torchrun's variables, whatever the shell running the tests has set
ENV = {
    **{k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")},
    "PYTHONPATH": str(REPO),
    "OMP_NUM_THREADS": "1",
}
DROPOUT_OFF = ("model.embd_pdrop=0", "model.attn_pdrop=0", "model.resid_pdrop=0")
RECIPE = (
    "--task",
    "letter",
    "--preset",
    "smoke",
    "--no-progress",
    *(a for s in DROPOUT_OFF for a in ("--set", s)),
)
STEPS = 20
TENSOR_FILES = (
    "model.safetensors",
    "checkpoints/step-000020/model.safetensors",
    "checkpoints/step-000020/training_state.safetensors",
)

# Tolerance, relative to each tensor's largest entry: 1e-5.  With dropout off, two ranks compute the
# single process's global-batch gradient but add it up in another order (each rank sums its 16 rows,
# gloo adds the two halves, the 1/2 of DDP's average replaces part of the loss's 1/32), so each
# gradient entry differs by a few float32 roundings (2**-24 ~ 6e-8 relative each).  AdamW's step
# m / sqrt(v) is scale-free, so it carries that relative error over to each update, whose size is
# at most ~lr; over 20 steps (sum of lr ~ 5.7e-3) that is rounding noise.  Measured on the CPU:
# weights max |dW| = 1.1e-8 (3.4e-7 of the tensor's largest entry), AdamW moments 6.6e-7 of theirs.
# 1e-5 leaves 15x room for other CPUs' kernels, and a real fault is far above it: both ranks training
# on the same half (or no DDP) -> 0.72 of lm_head.bias's scale; --resume without rank 0's AdamW
# moments on rank 1 -> 0.04 (measured by breaking training.run.distributed on purpose).
RELATIVE_TOLERANCE = 1e-5

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def torchrun(*args, timeout=180):
    # --standalone: a rendezvous on a free local port chosen by torchrun itself (no port to guess)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "-m",
        "training",
        "train",
        *map(str, args),
    ]
    return subprocess.run(command, cwd=REPO, env=ENV, capture_output=True, text=True, timeout=timeout)


def tensors(run: Path, name: str) -> dict:
    # the RNG state is per process and not part of the model (distributed ranks reseed per step)
    return {k: v for k, v in load_file(str(run / name)).items() if not k.startswith("rng.")}


def worst_relative_difference(a: dict, b: dict) -> tuple[float, str]:
    assert a.keys() == b.keys()  # same names: no "module." prefix from the DDP wrapper
    return max(
        ((x.double() - b[k].double()).abs().max().item() / max(b[k].abs().max().item(), 1e-30), k)
        for k, x in a.items()
    )


def records(run: Path) -> list[dict]:
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k != "seconds_per_step"} for r in lines]


def files(run: Path) -> list[str]:
    return sorted(str(p.relative_to(run)) for p in run.rglob("*"))


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp") / "two"
    result = torchrun(*RECIPE, "--steps", STEPS, "--out", out)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    assert ranks_from_env() == SINGLE
    out = tmp_path_factory.mktemp("ddp") / "one"
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train("letter", out, preset="smoke", steps=STEPS, progress=False, overrides=DROPOUT_OFF)
    finally:
        torch.set_num_threads(saved)
    return out


def test_two_processes_train_the_single_process_model(two_processes, one_process):
    for name in TENSOR_FILES:  # weights (best and last checkpoint) and the AdamW moments
        worst, where = worst_relative_difference(tensors(two_processes, name), tensors(one_process, name))
        assert worst <= RELATIVE_TOLERANCE, f"{name}: {where} differs by {worst:.2e} of its scale"


def test_only_rank_0_writes(two_processes, one_process):
    assert files(two_processes) == files(one_process)  # no lock or temporary left, nothing per rank
    two, one = records(two_processes), records(one_process)
    assert [(r["split"], r["step"]) for r in two] == [(r["split"], r["step"]) for r in one]  # no line twice
    assert two[0]["world_size"] == 2 and "world_size" not in one[0]
    for r2, r1 in zip(two[1:], one[1:]):  # train loss: the mean over both ranks' halves, not rank 0's
        assert r2["loss"] == pytest.approx(r1["loss"], rel=1e-5)
        assert r2["accuracy"] == pytest.approx(r1["accuracy"], abs=1e-6)
    recipe = (two_processes / "recipe.json").read_text()
    assert json.loads(recipe) == json.loads((one_process / "recipe.json").read_text())


def test_resume_under_torchrun_is_bit_identical(two_processes, tmp_path):
    out = tmp_path / "resumed"
    stopped = torchrun(*RECIPE, "--steps", STEPS, "--stop-at", 10, "--out", out)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    resumed = torchrun("--task", "letter", "--no-progress", "--resume", "--out", out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for name in TENSOR_FILES:  # the same two ranks add in the same order again
        a, b = tensors(out, name), tensors(two_processes, name)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), name
    assert records(out) == records(two_processes)


def test_a_rank_0_error_stops_every_rank(two_processes):
    """Only rank 0 opens the run folder; its refusal must reach rank 1 (no rank waits forever)."""
    before = {p: p.read_bytes() for p in two_processes.rglob("*") if p.is_file()}
    result = torchrun(*RECIPE, "--steps", STEPS, "--out", two_processes, timeout=120)
    assert result.returncode != 0
    ours = [
        line for line in result.stderr.splitlines() if line.startswith("python -m training train: error:")
    ]
    assert len(ours) == 1 and "already holds a run" in ours[0], result.stderr[-3000:]
    assert "exitcode  : 2" in result.stderr  # torchrun's report on the workers
    assert {p: p.read_bytes() for p in two_processes.rglob("*") if p.is_file()} == before


def torchrun_env(monkeypatch, rank: int) -> None:
    for name, value in dict(
        WORLD_SIZE="2", RANK=str(rank), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT="29400"
    ).items():
        monkeypatch.setenv(name, value)


def never_join(*args, **kwargs):
    raise AssertionError("the process group was joined before the batch size was checked")


@pytest.mark.parametrize("rank", [0, 1])
def test_batch_not_divisible_by_processes_exits_2_before_any_work(rank, tmp_path, monkeypatch, capsys):
    torchrun_env(monkeypatch, rank)
    monkeypatch.setattr(torch.distributed, "init_process_group", never_join)
    out = tmp_path / "run"
    argv = ["train", *RECIPE, "--set", "batch_size=31", "--steps", "5", "--out", str(out)]
    if rank == 0:
        assert main(argv) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "batch_size 31" in lines[0] and "2 processes" in lines[0], lines
    else:  # the same check fails on every rank; one line per machine is enough
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2 and capsys.readouterr().err == ""
    assert not out.exists()


@pytest.mark.parametrize(
    "environment, named",
    [
        (dict(WORLD_SIZE="2", LOCAL_RANK="0", MASTER_ADDR="h", MASTER_PORT="1"), "RANK"),
        (
            dict(WORLD_SIZE="two", RANK="0", LOCAL_RANK="0", MASTER_ADDR="h", MASTER_PORT="1"),
            "WORLD_SIZE='two'",
        ),
        (dict(WORLD_SIZE="2", RANK="2", LOCAL_RANK="0", MASTER_ADDR="h", MASTER_PORT="1"), "RANK='2'"),
    ],
)
def test_a_broken_torchrun_environment_exits_2(environment, named, tmp_path, monkeypatch, capsys):
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert main(["train", *RECIPE, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and named in err
    assert not (tmp_path / "run").exists()


def test_dropout_masks_are_a_function_of_seed_rank_and_step():
    """What makes a resumed multi-process run draw the masks of the uninterrupted one."""

    def draw(seed, rank, step):
        Ranks(world_size=2, rank=rank, local_rank=rank).seed_dropout(seed, step)
        return torch.rand(8)

    with torch.random.fork_rng(devices=[]):  # the suite's random state is left as it was
        assert torch.equal(draw(7, 1, 5), draw(7, 1, 5))
        assert not torch.equal(draw(7, 0, 5), draw(7, 1, 5))  # each rank its own masks
        assert not torch.equal(draw(7, 1, 5), draw(7, 1, 6))
        assert not torch.equal(draw(7, 1, 5), draw(8, 1, 5))
        before = torch.get_rng_state()
        SINGLE.seed_dropout(7, 5)  # one process keeps its single stream (saved in checkpoints)
        assert torch.equal(torch.get_rng_state(), before)


def test_one_process_under_torchrun_is_a_single_process():
    assert ranks_from_env({"WORLD_SIZE": "1", "RANK": "0"}) == SINGLE
    assert ranks_from_env({}) == SINGLE

"""Studies on a real Slurm: ``study PLAN --sbatch FILE`` run as a job array on a one-node cluster
(scripts/slurm_local.sh), with a cancelled task resubmitted and a failing member.

The text of the script is checked without Slurm (the first tests); the ``slurm`` tests need
Debian's slurm-wlm and munge (apt-get install -y slurm-wlm munge) and root, and are skipped with
the reason otherwise.  They share one cluster and one 4-member smoke study (about two minutes on
2 cores in all): the array's members must equal ``study --jobs 1`` on the same plan byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from training.__main__ import main
from training.studies.plan import load_plan
from training.studies.runner import list_commands
from training.studies.sbatch import DEFAULT_TIME, SlurmOptions, sbatch_script

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "scripts" / "slurm_local.sh"
# 200 steps (a few seconds of training) with a checkpoint every 20: room to cancel a task mid-training
RECIPE = ["steps=200", "checkpoint_every=20", "eval_every=100"]


def write_plan(folder: Path, seeds=(1, 2, 3, 4)) -> Path:
    """A smoke plan whose root and ship are relative: the same plan in two folders gives the same files."""
    folder.mkdir(parents=True, exist_ok=True)
    plan = {
        "name": "slurm",
        "root": "members",
        "ship": "ship",
        "tasks": ["letter"],
        "seeds": list(seeds),
        "variants": {"tiny": {"preset": "smoke", "set": RECIPE}},
        "evaluate": {"test_split": False, "lengths": [17], "count": 8, "seed": 3},
        "analyze": False,
    }
    (folder / "plan.json").write_text(json.dumps(plan))
    return folder / "plan.json"


def run(argv, cwd, env=None, timeout=300):
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
    )


def study(cwd, *args, env=None):
    return run([sys.executable, "-m", "training", "study", *args], cwd, env)


# --- the script's text: no Slurm needed -------------------------------------------------------------


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """``python -m training study ARGS`` in this process, in tmp_path: (exit status, stderr lines)."""
    monkeypatch.chdir(tmp_path)

    def call(*args):
        status = main(["study", *map(str, args)])
        return status, capsys.readouterr().err.strip().splitlines()

    return call


def test_the_script_runs_each_member_by_its_list_command_and_collects_after_the_array(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = load_plan(write_plan(tmp_path))
    text = sbatch_script(plan, SlurmOptions(), threads=1)
    directives = [line for line in text.splitlines() if line.startswith("#SBATCH")]
    logs = tmp_path / "members" / "slurm"
    assert directives == [
        "#SBATCH --job-name=study-slurm",
        "#SBATCH --array=0-3%4",
        f"#SBATCH --time={DEFAULT_TIME}",
        "#SBATCH --cpus-per-task=1",
        f"#SBATCH --output={logs}/%A_%a.out",
    ]
    for index, command in enumerate(list_commands(plan, 1)):  # study --list's line, one per array index
        assert f"    {index}) {command} --no-progress ;;" in text
    assert "--dependency=afterok:$array --kill-on-invalid-dep=yes" in text
    assert f"{plan.path.resolve()} --collect'" in text
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0  # valid bash


@pytest.mark.parametrize(
    "name", ["a\n#SBATCH --nodes=99", "$(touch pwned)", "x'; touch pwned; '", "\u00e9t\u00e9 \\"]
)
def test_a_plan_name_cannot_inject_lines_or_commands(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    plan = write_plan(tmp_path)
    plan.write_text(plan.read_text().replace('"name": "slurm"', json.dumps({"name": name})[1:-1]))
    text = sbatch_script(load_plan(plan), SlurmOptions())
    header, body = text.split("\nset -uo pipefail\n")
    assert all(line.startswith("#") for line in header.splitlines())  # comments and #SBATCH lines only
    assert [line for line in header.splitlines() if line.startswith("#SBATCH")][:2] == [
        "#SBATCH --job-name=study-" + re.sub(r"[^A-Za-z0-9_.-]", "_", name),
        "#SBATCH --array=0-3%4",
    ]
    assert name not in body and subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


def test_flags_become_sbatch_lines(tmp_path, cli):
    status, errors = cli(
        write_plan(tmp_path),
        "--sbatch",
        "s.sh",
        "--partition",
        "gpu",
        "--time",
        "1-02:30:00",
        "--cpus-per-task",
        "4",
        "--gres",
        "gpu:a100:1",
        "--max-parallel",
        "2",
        "--threads",
        "2",
    )
    assert status == 0, errors
    text = (tmp_path / "s.sh").read_text()
    for line in (
        "--array=0-3%2",
        "--time=1-02:30:00",
        "--partition=gpu",
        "--cpus-per-task=4",
        "--gres=gpu:a100:1",
    ):
        assert f"#SBATCH {line}\n" in text
    assert text.count("--threads 2 --no-progress ;;") == 4
    collect = next(line for line in text.splitlines() if line.startswith("collect="))
    assert "--partition=gpu" in collect and "--time=1-02:30:00" in collect and "--gres" not in collect


@pytest.mark.parametrize(
    "args, message",
    [
        (["--time", "90"], "--time must be HH:MM:SS"),
        (["--time", "1:60:00"], "--time must be HH:MM:SS"),
        (["--time", "00:00:00"], "--time must be HH:MM:SS"),
        (["--partition", "a b"], "--partition must be a partition name"),
        (["--partition", "x;rm"], "--partition must be a partition name"),
        (["--gres", "gpu 1"], "--gres must look like gpu:1"),
        (["--gres", ":1"], "--gres must look like gpu:1"),
        (["--cpus-per-task", "0"], "--cpus-per-task must be >= 1, got 0"),
        (["--max-parallel", "0"], "--max-parallel must be >= 1, got 0"),
        (["--sbatch", "plan.json"], "is an input of this command"),
        (["--sbatch", "no/such/folder/s.sh"], "does not exist"),
        (["--sbatch", "."], "directory"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(tmp_path, cli, args, message):
    write_plan(tmp_path)
    before = (tmp_path / "plan.json").read_bytes()
    status, errors = cli("plan.json", *(args if "--sbatch" in args else ["--sbatch", "s.sh", *args]))
    assert status == 2 and len(errors) == 1 and message in errors[0]
    assert not (tmp_path / "s.sh").exists() and (tmp_path / "plan.json").read_bytes() == before


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--partition", "p"),
        ("--time", "01:00:00"),
        ("--cpus-per-task", "2"),
        ("--gres", "gpu:1"),
        ("--max-parallel", "2"),
    ],
)
def test_a_slurm_flag_without_sbatch_is_refused(tmp_path, cli, flag, value):
    status, errors = cli(write_plan(tmp_path), "--list", flag, value)
    assert status == 2 and errors == [f"python -m training study: error: {flag} only goes with --sbatch"]


@pytest.mark.parametrize("root", ["my members", "100%", "it's", "a;touch x", "$HOME", "r\u00e9sultats"])
def test_a_root_an_sbatch_line_cannot_hold_is_refused(tmp_path, cli, root):
    plan = write_plan(tmp_path)
    plan.write_text(plan.read_text().replace('"root": "members"', json.dumps({"root": root})[1:-1]))
    status, errors = cli(plan, "--sbatch", "s.sh")
    assert status == 2 and len(errors) == 1 and "#SBATCH --output line cannot hold" in errors[0]
    assert not (tmp_path / "s.sh").exists()


# --- on a real Slurm --------------------------------------------------------------------------------

MISSING = [
    tool
    for tool in ("sbatch", "squeue", "scancel", "scontrol", "slurmctld", "slurmd", "munged")
    if shutil.which(tool) is None
]


def needs_slurm(test):
    for mark in (
        pytest.mark.slurm,
        pytest.mark.skipif(
            bool(MISSING),
            reason=f"Slurm is absent ({', '.join(MISSING)} not found): apt-get install -y slurm-wlm munge",
        ),
        pytest.mark.skipif(os.geteuid() != 0, reason="scripts/slurm_local.sh runs slurmd: it needs root"),
    ):
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def slurm():
    """A one-node cluster for this module: the environment that reaches it (SLURM_CONF)."""
    started = run(["bash", CLUSTER, "start"], ROOT, timeout=120)
    assert started.returncode == 0, started.stderr
    conf = started.stdout.strip().rsplit("=", 1)[1]
    yield {"SLURM_CONF": conf}
    stopped = run(["bash", CLUSTER, "stop", os.path.dirname(conf)], ROOT, timeout=120)
    assert stopped.returncode == 0, stopped.stderr


def wait_for_queue(env, timeout=240):
    """Until the cluster's queue is empty (every job finished, failed or was cancelled)."""
    deadline = time.time() + timeout
    while run(["squeue", "-h", "-o", "%i"], ROOT, env).stdout.strip():
        assert time.time() < deadline, run(["squeue"], ROOT, env).stdout
        time.sleep(0.3)


def states(env, job) -> dict:
    """{array index (None for a plain job): state} from scontrol (there is no accounting database)."""
    out = run(["scontrol", "-o", "show", "job", job], ROOT, env).stdout
    found = {}
    for line in out.splitlines():
        index = re.search(r"\bArrayTaskId=(\d+)\b", line)
        found[int(index.group(1)) if index else None] = re.search(r"\bJobState=(\S+)", line).group(1)
    return found


def submit(folder: Path, env) -> tuple[str, str]:
    """``bash study.sh``, as a user types it: (array job id, collection job id)."""
    result = run(["bash", "study.sh"], folder, env)
    assert result.returncode == 0, result.stderr
    return re.search(r"array job (\d+) .*collection job (\d+)", result.stdout).groups()


def member_files(folder: Path) -> dict:
    """Every member's weights and stage outputs, by path (train.json is left out: it holds timings and the host)."""
    members = folder / "members"
    files = [
        *members.glob("tiny/letter/seed-*/*.json"),
        *members.glob("tiny/letter/seed-*/run/model.safetensors"),
    ]
    return {str(p.relative_to(members)): p.read_bytes() for p in sorted(files) if p.name != "train.json"}


@pytest.fixture(scope="module")
def studies(slurm, tmp_path_factory):
    """The 4-member study run as a Slurm array (folder "array"), then by ``study --jobs 1`` ("serial")."""
    array, serial = tmp_path_factory.mktemp("array"), tmp_path_factory.mktemp("serial")
    for folder in (array, serial):
        write_plan(folder)
    assert study(array, "plan.json", "--sbatch", "study.sh").returncode == 0
    started = time.time()
    jobs = submit(array, slurm)
    wait_for_queue(slurm)
    seconds = {"array": round(time.time() - started, 1)}
    started = time.time()
    result = study(serial, "plan.json", "--jobs", "1", "--no-progress")
    seconds["jobs 1"] = round(time.time() - started, 1)
    assert result.returncode == 0, result.stderr
    print(f"\n4-member smoke study, wall seconds: {seconds}")
    return array, serial, jobs


@needs_slurm
def test_an_array_runs_every_member_and_collects_what_jobs_1_gives(slurm, studies):
    array, serial, (array_job, collect_job) = studies
    assert states(slurm, array_job) == {i: "COMPLETED" for i in range(4)}
    assert states(slurm, collect_job) == {None: "COMPLETED"}  # it ran after the array: summary.json is its
    assert study(serial, "plan.json", "--collect").returncode == 0
    produced, expected = member_files(array), member_files(serial)
    assert len(expected) == 12 and produced == expected  # per member: member.json, lengths and the weights
    assert (array / "ship" / "summary.json").read_bytes() == (serial / "ship" / "summary.json").read_bytes()


@needs_slurm
def test_a_cancelled_task_resubmitted_resumes_to_the_same_weights(slurm, studies, tmp_path):
    serial = studies[1]
    write_plan(tmp_path, seeds=[1])  # the serial study's first member, alone
    assert study(tmp_path, "plan.json", "--sbatch", "study.sh").returncode == 0
    array_job, collect_job = submit(tmp_path, slurm)
    member = tmp_path / "members" / "tiny" / "letter" / "seed-1"
    deadline = time.time() + 120
    while not (member / "run" / "checkpoints" / "step-000020").is_dir():  # mid-training: cancel it
        assert time.time() < deadline and not (member / "train.json").exists()
        time.sleep(0.05)
    assert run(["scancel", f"{array_job}_0"], tmp_path, slurm).returncode == 0
    wait_for_queue(slurm)
    assert states(slurm, array_job) == {0: "CANCELLED"}
    assert states(slurm, collect_job) == {None: "CANCELLED"}  # its dependency can no longer be met
    assert (
        not (member / "train.json").exists() and not (member / "run" / "checkpoints" / "step-000200").exists()
    )
    interrupted_at = max(p.name for p in (member / "run" / "checkpoints").glob("step-*"))
    cancelled = (tmp_path / "members" / "slurm" / f"{array_job}_0.out").read_text()
    assert "CANCELLED" in cancelled  # slurmstepd's line: the task was killed, not finished
    print(f"\ncancelled at {interrupted_at} of 200: {cancelled.strip().splitlines()[-1]}")

    resubmitted = run(["sbatch", "--parsable", "--array=0", "study.sh"], tmp_path, slurm)
    assert resubmitted.returncode == 0, resubmitted.stderr
    wait_for_queue(slurm)
    job = resubmitted.stdout.strip().split(";")[0]
    assert states(slurm, job) == {0: "COMPLETED"}
    commands = [
        line for line in (member / "logs" / "train.log").read_text().splitlines() if line.startswith("$ ")
    ]
    assert len(commands) == 2 and commands[1].endswith("--resume") and "--resume" not in commands[0]
    assert interrupted_at != "step-000000"  # it resumed from a checkpoint taken during training
    for name in ("run/model.safetensors", "length_generalisation.json"):
        assert (member / name).read_bytes() == (
            serial / "members" / "tiny" / "letter" / "seed-1" / name
        ).read_bytes()


@needs_slurm
def test_a_failing_member_fails_its_task_and_the_collection_never_runs(slurm, studies, tmp_path):
    write_plan(tmp_path, seeds=[1, 2])
    done = tmp_path / "members" / "tiny" / "letter"
    shutil.copytree(
        studies[1] / "members" / "tiny" / "letter" / "seed-2", done / "seed-2"
    )  # finished: skipped
    (done / "seed-1").mkdir()  # a folder whose member.json records another recipe: that member fails
    (done / "seed-1" / "member.json").write_text(
        json.dumps({"task": "letter", "seed": 1, "preset": "smoke", "set": ["steps=7"]})
    )
    assert study(tmp_path, "plan.json", "--sbatch", "study.sh").returncode == 0
    array_job, collect_job = submit(tmp_path, slurm)
    wait_for_queue(slurm)
    assert states(slurm, array_job) == {0: "FAILED", 1: "COMPLETED"}
    assert states(slurm, collect_job) == {None: "CANCELLED"}
    logs = tmp_path / "members" / "slurm"
    assert sorted(p.name for p in logs.iterdir()) == [
        f"{array_job}_0.out",
        f"{array_job}_1.out",
    ]  # no collect log
    failed = json.loads((logs / f"{array_job}_0.out").read_text().strip().splitlines()[-1])["failed"]
    print(f"\nthe failed task's last line: {failed}")
    assert list(failed) == ["tiny/letter/seed-1"] and "records another recipe" in failed["tiny/letter/seed-1"]
    assert not (tmp_path / "ship").exists()


@needs_slurm
def test_torchrun_under_slurm_trains_what_torchrun_alone_trains(slurm, tmp_path):
    """scripts/torchrun.sbatch: 2 gloo processes, rendezvous from the Slurm allocation, the same weights
    as the same 2 processes started by torchrun itself.

    The two runs go one after the other, not side by side: four gloo processes on a 2-core CI machine
    once lost a rank to SIGABRT while connecting (gloo's pair setup aborts the process on some
    connection errors instead of raising), and torchrun's summary alone did not say why.  Each rank's
    own output is kept (--log-dir, --redirects 3) and shown if a run fails."""
    recipe = [
        "--task",
        "letter",
        "--preset",
        "smoke",
        "--steps",
        "20",
        "--no-progress",
        "--set",
        "model.embd_pdrop=0",
        "--set",
        "model.attn_pdrop=0",
        "--set",
        "model.resid_pdrop=0",
    ]
    logs = tmp_path / "alone-logs"
    alone = run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            f"--log-dir={logs}",
            "--redirects=3",
            "-m",
            "training",
            "train",
            *recipe,
            "--out",
            tmp_path / "alone",
        ],
        ROOT,
    )
    assert alone.returncode == 0, alone.stderr[-2000:] + "".join(
        f"\n--- {path}:\n{path.read_text()[-2000:]}" for path in sorted(logs.rglob("*.log"))
    )
    env = {**slurm, "PYTHON": sys.executable, "NPROC_PER_NODE": "2"}
    job = run(
        [
            "sbatch",
            "--parsable",
            "--cpus-per-task=2",
            f"--output={tmp_path}/%j.out",
            ROOT / "scripts" / "torchrun.sbatch",
            *recipe,
            "--out",
            tmp_path / "slurm",
        ],
        ROOT,
        env,
    )
    assert job.returncode == 0, job.stderr
    wait_for_queue(slurm)
    job = job.stdout.strip().split(";")[0]
    output = (tmp_path / f"{job}.out").read_text()
    assert states(slurm, job) == {None: "COMPLETED"}, output[-3000:]
    assert "1 node(s) x 2 process(es), rendezvous " in output
    settings = json.loads((tmp_path / "slurm" / "metrics.jsonl").read_text().splitlines()[0])
    assert settings["world_size"] == 2
    for name in ("model.safetensors", "checkpoints/step-000020/model.safetensors"):
        assert (tmp_path / "slurm" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes(), name

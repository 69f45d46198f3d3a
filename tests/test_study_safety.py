"""``python -m training study``: what a study may never do to the user's files (issue 29).

- class 2: ``--collect`` never replaces a shipped summary with one holding fewer results
  unless ``--overwrite-summary`` is given (on a COPY of the shipped seeds folder);
- class 10b: a plan's root and ship folders are checked before any work;
- class 9b: a stage's child process dies with a ``study`` killed by SIGKILL;
- classes 4 and 5: every file a study reads (the plan, member.json, the stage outputs, the
  shipped summary) that is damaged or hostile is one line, exit 2, naming file and field;
- class 3: a full disk while writing the ship folder is one line, the old files unchanged.

Most cases call the command in-process (``training.__main__.main``); the ones about
processes and file-size limits run it in a subprocess.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from training.__main__ import main
from training.studies.stage_process import _die_with, run_tied

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "training" / "reference" / "seeds"
PLAN = ROOT / "training" / "studies" / "seeds.json"
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["study", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (hidden temporaries included) -> sha256 of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.exists() else {}


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def write_plan(tmp_path: Path, **changes) -> Path:
    plan = json.loads(PLAN.read_text())
    plan["reuse"] = {m: str(ROOT / run) for m, run in plan["reuse"].items()}  # cwd-independent
    plan.update({"root": str(tmp_path / "runs"), "ship": str(tmp_path / "ship"), **changes})
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return path


@pytest.fixture
def shipped(tmp_path) -> Path:
    """The seeds plan over a copy of its shipped folder, with no runs: a fresh clone."""
    shutil.copytree(SHIPPED, tmp_path / "ship")
    return write_plan(tmp_path)


@pytest.fixture
def mini(tmp_path) -> Path:
    """Two letter members whose runs hold the shipped member files (every stage done)."""
    for seed in (1, 2):
        member = Path("paper") / "letter" / f"seed-{seed}"
        shutil.copytree(SHIPPED / member, tmp_path / "runs" / member)
    return write_plan(tmp_path, tasks=["letter"], seeds=[1, 2], reuse={})


# class 2: shipped results are never replaced by emptier ones unasked

def _drop_stage(runs: Path):
    (runs / "paper" / "letter" / "seed-3" / "analysis.json").unlink()


def _drop_member(runs: Path):
    shutil.rmtree(runs / "paper" / "number" / "seed-4")


@pytest.mark.parametrize("damage, found", [(None, "found 0 of 10"), (_drop_stage, "found 9 of 10"),
                                           (_drop_member, "found 9 of 10")], ids=["fresh-clone", "a-stage-gone",
                                                                                  "a-member-gone"])
def test_collect_keeps_a_shipped_summary_with_more_results(capsys, tmp_path, shipped, damage, found):
    if damage:  # the runs as they made the shipped files, then one result less
        shutil.copytree(SHIPPED / "paper", tmp_path / "runs" / "paper")
        damage(tmp_path / "runs")
    before, runs_before = snapshot(tmp_path / "ship"), snapshot(tmp_path / "runs")
    code, out, err = cli(capsys, shipped, "--collect")
    line = one_line(err)
    assert code == 2 and out == ""
    assert found in line and "the shipped summary" in line and "has 10" in line
    assert "nothing written; pass --overwrite-summary to replace it" in line
    assert snapshot(tmp_path / "ship") == before and snapshot(tmp_path / "runs") == runs_before


def test_overwrite_summary_replaces_it_and_deletes_no_member_file(capsys, tmp_path, shipped):
    members = {k: v for k, v in snapshot(tmp_path / "ship").items() if k != "summary.json"}
    code, out, err = cli(capsys, shipped, "--collect", "--overwrite-summary")
    assert code == 0, err
    assert json.loads(out)["complete"] == 0
    summary = json.loads((tmp_path / "ship" / "summary.json").read_text())
    assert all(entry["stages"] == [] for entry in summary["members"].values())
    assert {k: v for k, v in snapshot(tmp_path / "ship").items() if k != "summary.json"} == members


def test_collect_with_every_result_writes_and_leaves_identical_member_files_alone(capsys, tmp_path, mini):
    assert cli(capsys, mini, "--collect")[0] == 0  # a first summary: nothing to keep
    member = tmp_path / "ship" / "paper" / "letter" / "seed-1" / "analysis.json"
    stamp = member.stat().st_mtime_ns
    code, out, err = cli(capsys, mini, "--collect")  # the same results again: allowed
    assert code == 0 and json.loads(out)["complete"] == 2, err
    assert member.stat().st_mtime_ns == stamp  # same bytes: not rewritten


def test_overwrite_summary_only_goes_with_collect(capsys, mini):
    code, _, err = cli(capsys, mini, "--overwrite-summary")
    assert code == 2 and "--overwrite-summary only goes with --collect" in one_line(err)


# class 10b: the plan's folders are checked before any work

def _file_at(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a folder")
    return path


FOLDER_CASES = [(mode, key, where) for mode in ("run", "collect") for key in ("root", "ship")
                for where in (key if key == "ship" else "runs", f"afile/{key}")
                if mode == "collect" or key == "root"]  # running members writes no ship folder


@pytest.mark.parametrize("mode, key, where", FOLDER_CASES)
def test_a_plan_folder_that_cannot_be_made_exits_2_before_any_work(capsys, tmp_path, mini, mode, key, where):
    if "afile" in where:
        _file_at(tmp_path / "afile")
    else:
        shutil.rmtree(tmp_path / where, ignore_errors=True)
        _file_at(tmp_path / where)
    plan = write_plan(tmp_path, tasks=["letter"], seeds=[1, 2], reuse={}, **{key: str(tmp_path / where)})
    before = snapshot(tmp_path)
    code, _, err = cli(capsys, plan, *(["--collect"] if mode == "collect" else []))
    line = one_line(err)
    assert code == 2 and f"{plan}: {key}" in line and "directory" in line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("mode, key", [("run", "root"), ("collect", "root"), ("collect", "ship")])
def test_a_read_only_plan_folder_exits_2_before_any_work(capsys, monkeypatch, tmp_path, mini, mode, key):
    import tempfile

    (tmp_path / "ship").mkdir(exist_ok=True)
    read_only, real = tmp_path / ("runs" if key == "root" else "ship"), tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):  # a read-only mount, as root sees one too
        if dir is not None and Path(dir).resolve() == read_only.resolve():
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    before = snapshot(tmp_path)
    code, _, err = cli(capsys, mini, *(["--collect"] if mode == "collect" else []))
    line = one_line(err)
    assert code == 2 and f"{mini}: {key}" in line and "Read-only file system" in line
    assert snapshot(tmp_path) == before


# classes 4 and 5: every file a study reads, damaged or hostile: one line naming it, exit 2

MEMBER = Path("runs") / "paper" / "letter" / "seed-1"
RECIPE = {"task": "letter", "seed": 1, "preset": "paper", "set": []}
LENGTHS, BOTH = MEMBER / "length_generalisation.json", ("run", "collect")


def _edit(change):
    """The file's JSON, changed in place by ``change(document)``."""
    def make(data: bytes) -> bytes:
        document = json.loads(data)
        change(document)
        return json.dumps(document).encode()
    return make


TRUNCATED = ("truncated", lambda data: data[: len(data) // 2], "not valid JSON")
NESTED = ("nested", lambda data: b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than")
LATIN1 = ("latin-1", lambda data: '{"name": "étude"}'.encode("latin-1"), "not UTF-8")
EMPTY = ("empty", lambda data: b"", "not valid JSON")
FIFO = ("fifo", "fifo", "is a FIFO, not a regular file")
FOLDER = ("folder", "folder", "is a directory, not a regular file")
HOSTILE = [  # (file, (case, make, what the line says), modes)
    *[("plan.json", case, BOTH) for case in (TRUNCATED, NESTED, LATIN1, EMPTY, FIFO, FOLDER)],
    ("plan.json", ("a-list", lambda data: b"[]", "top level: expected an object, got a list"), BOTH),
    *[(MEMBER / "member.json", case, BOTH) for case in (TRUNCATED, NESTED, LATIN1, FIFO, FOLDER)],
    (MEMBER / "member.json", ("seed-a-string", _edit(lambda d: d.update(seed="1")),
                              "field seed: expected an integer, got a string"), BOTH),
    (MEMBER / "member.json", ("set-missing", _edit(lambda d: d.pop("set")), "field set is missing"), BOTH),
    *[(LENGTHS, case, BOTH) for case in (TRUNCATED, NESTED, LATIN1, FIFO)],
    (LENGTHS, ("accuracy-a-string", _edit(lambda d: d.update(accuracy="high")),
               "field accuracy: expected a list, got a string"), BOTH),
    (LENGTHS, ("ragged", _edit(lambda d: d["accuracy"].pop()), "as long as lengths"), BOTH),
    (LENGTHS, ("hop-not-a-count", _edit(lambda d: d["per_hop"].update(x=[])), "field per_hop: "), BOTH),
    (MEMBER / "test_accuracy.json", ("per-hop-a-list", _edit(lambda d: d.update(per_hop=[1.0])),
                                     "field per_hop: expected an object, got a list"), BOTH),
    (MEMBER / "analysis.json", ("scores-a-string", _edit(lambda d: d["scores"].update(positional="x")),
                                "field scores.positional: expected a list"), BOTH),
    (MEMBER / "dilution.json", ("gap-a-list", _edit(lambda d: d["dilution"]["layers"][0].update(gap=[1.0])),
                                "field dilution.layers[0].gap: expected an object"), BOTH),
    (MEMBER / "dilution.json", ("grid-mismatch", _edit(lambda d: d["dilution"]["lengths"].__setitem__(0, 25)),
                                "both grids must start at the same length"), ("collect",)),  # collect compares them
    (MEMBER / "train.json", TRUNCATED, BOTH),
    (Path("ship") / "summary.json", TRUNCATED, ("collect",)),
    (Path("ship") / "summary.json", ("members-a-list", lambda data: b'{"members": []}',
                                     "field members: expected an object, got a list"), ("collect",)),
]


@pytest.fixture
def no_hang():
    """A read that blocks (a FIFO) fails the test instead of hanging it."""
    def expired(*_):
        raise TimeoutError("the command blocked")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("mode, name, case", [(mode, name, case) for name, case, modes in HOSTILE for mode in modes],
                         ids=lambda v: str(v) if isinstance(v, (str, Path)) else v[0] if isinstance(v, tuple) else "")
def test_a_damaged_or_hostile_study_file_is_one_line_exit_2(capsys, tmp_path, mini, no_hang, mode, name, case):
    _, make, says = case
    (tmp_path / MEMBER / "member.json").write_text(json.dumps(RECIPE))
    if name == Path("ship") / "summary.json":
        assert cli(capsys, mini, "--collect")[0] == 0  # a summary to damage
    target = tmp_path / name
    data = target.read_bytes() if target.is_file() else b"{}"
    target.unlink(missing_ok=True)
    if make == "fifo":
        os.mkfifo(target)
    elif make == "folder":
        target.mkdir()
    else:
        target.write_bytes(make(data))
    before = snapshot(tmp_path)
    code, out, err = cli(capsys, mini, *(["--collect"] if mode == "collect" else ["--no-progress"]))
    line = one_line(err)
    assert code == 2 and out == "", err
    assert str(target) in line and says in line, line
    assert snapshot(tmp_path) == before  # nothing written, no stage started (no logs/)


# class 9b: a stage's child dies with the study

def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has died; only its exit status waits for a parent


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death signal is Linux's")
def test_a_stage_child_dies_with_a_killed_study(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"name": "kill", "root": str(tmp_path / "runs"), "ship": str(tmp_path / "ship"),
                                "tasks": ["letter"], "seeds": [1], "analyze": False,
                                "variants": {"tiny": {"preset": "smoke", "set": ["steps=20"]}}}))
    study = subprocess.Popen([sys.executable, "-m", "training", "study", str(plan), "--no-progress"], cwd=ROOT,
                             env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stage = None
    try:
        deadline = time.monotonic() + 120
        while stage is None and time.monotonic() < deadline and study.poll() is None:
            stage = next((c for c in _children(study.pid) if "training train" in _cmdline(c)), None)
            time.sleep(0.05)
        assert stage is not None, "the study started no train stage"
        study.kill()
        study.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _alive(stage) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(stage), "the train stage outlived its study"
    finally:
        study.kill()
        if stage is not None and _alive(stage):
            os.kill(stage, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_stage_child_whose_parent_is_already_gone_exits_at_once():
    # the race prctl's man page warns about: the parent died between fork and prctl
    started = time.monotonic()
    done = subprocess.run(["sleep", "30"], preexec_fn=_die_with(parent=1))
    assert done.returncode == 128 + signal.SIGKILL and time.monotonic() - started < 10


def test_a_stage_child_writes_to_files_never_to_a_pipe(tmp_path):
    # a pipe whose reader died fails the writer with a BrokenPipeError traceback; a file cannot
    probe = "import os, stat, sys; print(stat.S_ISREG(os.fstat(1).st_mode), stat.S_ISREG(os.fstat(2).st_mode))"
    with open(tmp_path / "stage.log", "a") as log:
        code, out = run_tied([sys.executable, "-c", probe], log, ENV, tmp_path)
    assert (code, out) == (0, "True True\n")


# class 3: a full disk while writing the ship folder

def _limited(size: int):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


@pytest.mark.parametrize("ship, limit", [("new", 4096), ("member-changed", 1000), ("summary-only", 4096)])
def test_a_full_disk_while_shipping_is_one_line_and_keeps_the_old_files(capsys, tmp_path, mini, ship, limit):
    if ship != "new":
        assert cli(capsys, mini, "--collect")[0] == 0
    if ship == "member-changed":  # the same numbers written anew: the ship folder must take the new bytes
        changed = tmp_path / MEMBER / "length_generalisation.json"
        changed.write_text(json.dumps(json.loads(changed.read_text()), indent=2))
    before = snapshot(tmp_path / "ship")
    done = subprocess.run([sys.executable, "-m", "training", "study", str(mini), "--collect"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120, preexec_fn=_limited(limit))
    line = one_line(done.stderr)
    assert done.returncode == 2 and "cannot write" in line and "File too large" in line, done.stderr
    after = snapshot(tmp_path / "ship")
    assert not [name for name in after if name.endswith(".tmp")]  # no half-written file left
    if ship == "new":  # what was written is whole: each file is its member's file
        assert after and all((tmp_path / "runs" / name).read_bytes() == (tmp_path / "ship" / name).read_bytes()
                             for name in after)
    else:
        assert after == before

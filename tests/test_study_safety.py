"""``python -m training study``: what a study may never do to the user's files (issue 29).

- class 2: ``--collect`` never replaces a shipped summary with one holding fewer results
  unless ``--overwrite-summary`` is given (on a COPY of the shipped seeds folder);
- class 10b: a plan's root and ship folders are checked before any work;
- class 3: a full disk while writing the ship folder is one line, the old files unchanged.

Classes 4 and 5 (damaged or hostile study files) are in test_study_hostile_files.py and class
9b (a stage's child process dies with its study) in test_study_processes.py; both use the
helpers and fixtures here.  Most cases call the command in-process (``training.__main__.main``);
the ones about file-size limits run it in a subprocess.
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
from pathlib import Path

import pytest

from training.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "training" / "reference" / "seeds"
PLAN = ROOT / "training" / "studies" / "seeds.json"
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
MEMBER = Path("runs") / "paper" / "letter" / "seed-1"  # one member of ``mini``, under its tmp_path


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["study", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (hidden temporaries included) -> sha256 of its bytes."""
    return (
        {
            str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }
        if folder.exists()
        else {}
    )


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


@pytest.mark.parametrize("damage", [_drop_stage], ids=["a-stage-gone"])
def test_collect_keeps_a_shipped_summary_with_more_results(capsys, tmp_path, shipped, damage):
    shutil.copytree(
        SHIPPED / "paper", tmp_path / "runs" / "paper"
    )  # the runs as they made the shipped files,
    damage(tmp_path / "runs")  # then one result less
    before, runs_before = snapshot(tmp_path / "ship"), snapshot(tmp_path / "runs")
    code, out, err = cli(capsys, shipped, "--collect")
    line = one_line(err)
    assert code == 2 and out == ""
    assert "found 9 of 10" in line and "the shipped summary" in line and "has 10" in line
    assert "nothing written; pass --overwrite-summary to replace it" in line
    assert snapshot(tmp_path / "ship") == before and snapshot(tmp_path / "runs") == runs_before


def _same_numbers(a, b) -> bool:
    """Equal structure, numbers equal up to float rounding (a least-squares fit's last bits)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_numbers(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_numbers(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-15)
    return a == b


@pytest.mark.parametrize("damage", [None, _drop_member], ids=["fresh-clone", "a-member-gone"])
def test_a_member_without_its_run_is_read_from_its_shipped_copy(capsys, tmp_path, shipped, damage):
    """A clone (no runs) or a run folder gone: the member's shipped files stand in, so the summary
    keeps every result and adding members to a study needs only the new members' runs."""
    if damage:
        shutil.copytree(SHIPPED / "paper", tmp_path / "runs" / "paper")
        damage(tmp_path / "runs")
    members = {k: v for k, v in snapshot(tmp_path / "ship").items() if k != "summary.json"}
    code, out, err = cli(capsys, shipped, "--collect")
    assert code == 0 and json.loads(out)["complete"] == 10, err
    old, new = (
        json.loads(p.read_text()) for p in (SHIPPED / "summary.json", tmp_path / "ship" / "summary.json")
    )
    strip = lambda members: {m: {**e, "reused_from": None} for m, e in members.items()}  # noqa: E731 (made absolute)
    assert strip(new["members"]) == strip(old["members"]) and _same_numbers(new["results"], old["results"])
    assert {k: v for k, v in snapshot(tmp_path / "ship").items() if k != "summary.json"} == members
    assert not (tmp_path / "runs" / "paper" / "number" / "seed-4").exists()  # nothing written into the runs


def test_overwrite_summary_replaces_it_and_deletes_no_member_file(capsys, tmp_path, shipped):
    shutil.copytree(SHIPPED / "paper", tmp_path / "runs" / "paper")
    _drop_stage(tmp_path / "runs")
    members = {k: v for k, v in snapshot(tmp_path / "ship").items() if k != "summary.json"}
    code, out, err = cli(capsys, shipped, "--collect", "--overwrite-summary")
    assert code == 0, err
    assert json.loads(out)["complete"] == 9
    summary = json.loads((tmp_path / "ship" / "summary.json").read_text())
    assert "analyze" not in summary["members"]["paper/letter/seed-3"]["stages"]
    assert {
        k: v
        for k, v in snapshot(tmp_path / "ship").items()
        if k != "summary.json" and not k.endswith("seed-3/analysis.json")
    } == {k: v for k, v in members.items() if not k.endswith("seed-3/analysis.json")}


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


FOLDER_CASES = [
    (mode, key, where)
    for mode in ("run", "collect")
    for key in ("root", "ship")
    for where in (key if key == "ship" else "runs", f"afile/{key}")
    if mode == "collect" or key == "root"
]  # running members writes no ship folder


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
    if ship == "summary-only":  # a summary already up to date is not rewritten (test_collect_stable): age it
        summary = tmp_path / "ship" / "summary.json"
        summary.write_text(
            json.dumps({**json.loads(summary.read_text()), "about": "an older collect"}, indent=1)
        )
    before = snapshot(tmp_path / "ship")
    done = subprocess.run(
        [sys.executable, "-m", "training", "study", str(mini), "--collect"],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited(limit),
    )
    line = one_line(done.stderr)
    assert done.returncode == 2 and "cannot write" in line and "File too large" in line, done.stderr
    after = snapshot(tmp_path / "ship")
    assert not [name for name in after if name.endswith(".tmp")]  # no half-written file left
    if ship == "new":  # what was written is whole: each file is its member's file
        assert after and all(
            (tmp_path / "runs" / name).read_bytes() == (tmp_path / "ship" / name).read_bytes()
            for name in after
        )
    else:
        assert after == before

"""``python -m training study``, issue 29 class 9b: a stage's child process dies with a
``study`` killed by SIGKILL, even when the study died before the child could ask to be told,
and it writes to files, never to a pipe whose reader may be gone.

Split from test_study_safety.py because these tests are about processes (they read /proc
and start real subprocesses), not about the files a study reads or writes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_study_safety import ENV, ROOT

from training.studies.stage_process import _die_with, run_tied


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


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; the parent-death signal is Linux's"
)
def test_a_stage_child_dies_with_a_killed_study(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "name": "kill",
                "root": str(tmp_path / "runs"),
                "ship": str(tmp_path / "ship"),
                "tasks": ["letter"],
                "seeds": [1],
                "analyze": False,
                "variants": {"tiny": {"preset": "smoke", "set": ["steps=20"]}},
            }
        )
    )
    study = subprocess.Popen(
        [sys.executable, "-m", "training", "study", str(plan), "--no-progress"],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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
    probe = (
        "import os, stat, sys; print(stat.S_ISREG(os.fstat(1).st_mode), stat.S_ISREG(os.fstat(2).st_mode))"
    )
    with open(tmp_path / "stage.log", "a") as log:
        code, out = run_tied([sys.executable, "-c", probe], log, ENV, tmp_path)
    assert (code, out) == (0, "True True\n")

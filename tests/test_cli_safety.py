"""Misuse of the commands costs nothing and damages nothing (issue 13).

Outputs are checked before any work (a bad destination is one line and exit status 2, and the
work is never started); figure5a refuses an n-max it cannot compute in about a minute; Ctrl-C
is one line and exit status 130 with no temporary file left; a temporary file left by a
SIGKILLed writer is removed by the next write to the same path.

The bad-destination tests run the commands' main() in-process: the work is replaced by a
function that fails the test if it is reached, and a read-only file system is simulated by
making tempfile.mkstemp fail with EROFS (the tests run as root, whom chmod does not stop).
The signal tests run real processes.
"""

from __future__ import annotations

import errno
import importlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from proofs_check import figure5a
from training.__main__ import main as training_main

ROOT = Path(__file__).resolve().parents[1]
figures_main = importlib.import_module("figures.__main__")


def outcome(main, argv, capsys) -> tuple[int, list[str]]:
    """(exit status, stderr lines) of a command's main() called in-process."""
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    return status, capsys.readouterr().err.strip().splitlines()


def assert_refused(status, lines, *words):
    assert status == 2, lines
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    for word in words:
        assert word in lines[0], lines


def never(*_args, **_kwargs):
    raise AssertionError("the work started although the output could not be written")


def read_only(*_args, **_kwargs):
    raise OSError(errno.EROFS, "Read-only file system")


FILE_KINDS = ["directory", "empty", "device", "missing folder", "read-only"]


def bad_file(kind: str, tmp_path: Path, monkeypatch) -> tuple[str, str]:
    """A destination no output FILE can be written to, and a word its refusal must name."""
    if kind == "read-only":
        monkeypatch.setattr(tempfile, "mkstemp", read_only)
        return str(tmp_path / "out.json"), "Read-only"
    return {
        "directory": (str(tmp_path), str(tmp_path)),
        "empty": ("", "empty"),
        "device": ("/dev/null", "/dev/null"),
        "missing folder": (str(tmp_path / "absent" / "out.json"), "absent"),
    }[kind]


# -- class 2: outputs checked before any work ------------------------------------------------------


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "--task", "number", "--lengths", "17"],
        ["analyze", "--task", "number"],
    ],
)
def test_training_json_is_checked_before_the_run_is_read(command, kind, tmp_path, monkeypatch, capsys):
    # the run does not exist: had the run been read (and a model loaded) first, the error would name it
    path, word = bad_file(kind, tmp_path, monkeypatch)
    argv = command + ["--run", str(tmp_path / "no-run"), "--json", path]
    assert_refused(*outcome(training_main, argv, capsys), "--json", word)


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_data_out_is_checked_before_generating(kind, tmp_path, monkeypatch, capsys):
    path, word = bad_file(kind, tmp_path, monkeypatch)
    monkeypatch.setattr("training.tasks.cli.get_task", never)
    argv = ["data", "--task", "number", "--count", "4", "--seed", "0", "--out", path]
    assert_refused(*outcome(training_main, argv, capsys), "--out", word)


def test_a_destination_that_turns_bad_during_the_work_is_one_line(tmp_path, monkeypatch, capsys):
    from training.tasks import cli as data_cli

    out, real_get_task = tmp_path / "rows.tsv", data_cli.get_task

    def get_task_then_spoil_the_destination(name):
        out.mkdir()  # what a user (or another program) may do while the rows are generated
        return real_get_task(name)

    monkeypatch.setattr(data_cli, "get_task", get_task_then_spoil_the_destination)
    argv = ["data", "--task", "number", "--count", "4", "--seed", "0", "--out", str(out)]
    assert_refused(*outcome(training_main, argv, capsys), str(out))
    assert out.is_dir() and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    "kind", [kind for kind in FILE_KINDS if kind != "missing folder"]
)  # figure5a makes it
def test_figure5a_out_is_checked_before_computing(kind, tmp_path, monkeypatch, capsys):
    path, word = bad_file(kind, tmp_path, monkeypatch)
    monkeypatch.setattr(figure5a, "build", never)
    assert_refused(*outcome(figure5a.main, ["--out", path, "--n-max", "300"], capsys), "--out", word)


@pytest.mark.parametrize("kind", ["file", "empty", "device", "read-only"])
def test_figures_out_is_checked_before_drawing(kind, tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("not a folder")
    path, word = {
        "file": (str(tmp_path / "file"), "file"),
        "empty": ("", "empty"),
        "device": ("/dev/null", "/dev/null"),
        "read-only": (str(tmp_path / "out"), "Read-only"),
    }[kind]
    if kind == "read-only":
        monkeypatch.setattr(tempfile, "mkstemp", read_only)
    monkeypatch.setitem(figures_main.FIGURES, "fig4a", (never, ""))
    assert_refused(*outcome(figures_main.main, ["fig4a", "--out", path], capsys), "--out", word)


def test_figures_output_that_turns_unwritable_while_drawing_is_a_failure_not_a_traceback(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(figures_main.FIGURES, "fig4a", (read_only, ""))
    status, lines = outcome(figures_main.main, ["fig4a", "--out", str(tmp_path)], capsys)
    assert status == 1 and len(lines) == 1 and "fig4a" in lines[0] and "Read-only" in lines[0], lines


@pytest.mark.parametrize(
    "flag,wrong_kind",
    [
        ("--runs", "file"),
        ("--llm", "file"),
        ("--figure5a", "folder"),
        ("--figure4a", "folder"),
        ("--figure5a", "device"),
        ("--runs", ""),
    ],
)
def test_figures_input_of_the_wrong_kind_is_one_line(flag, wrong_kind, tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("{}")
    path = {"file": str(tmp_path / "file"), "folder": str(tmp_path), "device": "/dev/null", "": ""}[
        wrong_kind
    ]
    monkeypatch.setitem(figures_main.FIGURES, "fig4a", (never, ""))
    status, lines = outcome(figures_main.main, ["fig4a", flag, path, "--out", str(tmp_path / "out")], capsys)
    assert_refused(status, lines, flag)


def test_figures_metrics_line_of_the_wrong_shape_is_a_failure_not_a_traceback(tmp_path, capsys):
    runs = tmp_path / "runs"
    for task in ("number", "letter"):
        (runs / task).mkdir(parents=True)
        shutil.copy(ROOT / "training" / "reference" / task / "analysis.json", runs / task)
        (runs / task / "metrics.jsonl").write_text("[1, 2]\n")
    status, lines = outcome(
        figures_main.main, ["fig2", "--runs", str(runs), "--out", str(tmp_path / "out")], capsys
    )
    assert status == 1 and any("metrics.jsonl line 1" in line for line in lines), lines


def test_bad_destinations_as_real_processes(tmp_path):
    """The same refusals through `python -m`: exit status 2, one line, nothing written."""
    (tmp_path / "file").write_text("keep me")
    commands = [
        ["proofs_check.figure5a", "--out", str(tmp_path)],
        ["figures", "fig4a", "--out", str(tmp_path / "file")],
        [
            "training",
            "evaluate",
            "--run",
            "training/reference/number",
            "--task",
            "number",
            "--lengths",
            "17",
            "--json",
            str(tmp_path),
        ],
    ]
    for command in commands:
        done = subprocess.run(
            [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, (
            command,
            done.stderr,
        )
    assert (tmp_path / "file").read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == [
        "file"
    ]


# -- class 10: figure5a's n-max is bounded by what it can compute ---------------------------------


@pytest.mark.parametrize(
    "n_max",
    ["1e25", "1e13", str(10**25), str(figure5a.N_MAX_LIMIT + 1), "nan", "inf", "-3", "1", "2.5", "abc", ""],
)
def test_figure5a_n_max_outside_what_it_can_compute_is_refused(n_max, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(figure5a, "build", never)
    status, lines = outcome(figure5a.main, ["--out", str(tmp_path / "f.json"), "--n-max", n_max], capsys)
    assert_refused(status, lines, "--n-max", str(figure5a.N_MAX_LIMIT))


def test_figure5a_n_max_accepts_an_integer_written_as_a_power_of_ten():
    assert figure5a._n_max("1e6") == 10**6 and figure5a._n_max("300") == 300


# -- class 13: Ctrl-C is one line and exit status 130 ----------------------------------------------


@pytest.mark.parametrize("command", ["figures", "figure5a", "training"])
def test_interrupt_is_one_line_and_status_130(command, tmp_path, monkeypatch, capsys):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    if command == "figures":
        monkeypatch.setitem(figures_main.FIGURES, "fig4a", (interrupted, ""))
        main, argv = figures_main.main, ["fig4a", "--out", str(tmp_path)]
    elif command == "training":  # the dispatcher, for every subcommand
        monkeypatch.setattr(importlib.import_module("training.tasks.cli"), "run", interrupted)
        main, argv = training_main, ["data", "--task", "letter", "--count", "1", "--seed", "0"]
    else:
        monkeypatch.setattr(figure5a, "build", interrupted)
        main, argv = figure5a.main, ["--out", str(tmp_path / "f.json")]
    status, lines = outcome(main, argv, capsys)
    assert status == 130 and len(lines) == 1 and "interrupted" in lines[0], lines
    assert list(tmp_path.iterdir()) == []


# Long rows make a long write (~100 MB) that starts within a second of the imports, so the
# signal lands while the temporary file is being written.
LONG_DATA = ["--task", "number", "--count", "2000", "--seed", "0", "--extra-target", "20000"]


def start_data(out: Path, args: list[str]) -> subprocess.Popen:
    # SIGINT back to its default in the child: a shell starts background jobs with it ignored,
    # and Python installs its KeyboardInterrupt handler only when it is not ignored
    return subprocess.Popen(
        [sys.executable, "-m", "training", "data", *args, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def temporaries(folder: Path) -> list[Path]:
    return [path for path in folder.iterdir() if path.name.endswith(".tmp")]


def wait_for_temporary(process: subprocess.Popen, folder: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not temporaries(folder):
        if process.poll() is not None:
            pytest.fail(f"data ended (status {process.returncode}) before its temporary file appeared")
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            pytest.fail("data wrote no temporary file in time")
        time.sleep(0.01)


def test_ctrl_c_during_data_is_one_line_130_and_leaves_nothing(tmp_path):
    out = tmp_path / "rows.tsv"
    process = start_data(out, LONG_DATA)
    wait_for_temporary(process, tmp_path)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert len(stderr.strip().splitlines()) == 1 and "interrupted" in stderr and "Traceback" not in stderr
    assert not out.exists() and temporaries(tmp_path) == []


# -- class 15: a SIGKILLed writer's temporary file is removed by the next write --------------------


def test_next_write_removes_the_temporary_of_a_killed_data(tmp_path):
    out = tmp_path / "rows.tsv"
    process = start_data(out, LONG_DATA)
    wait_for_temporary(process, tmp_path)
    process.kill()
    process.wait()  # reaped: a zombie still counts as alive
    assert temporaries(tmp_path) and not out.exists()  # what SIGKILL leaves behind
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "data",
            "--task",
            "number",
            "--count",
            "4",
            "--seed",
            "0",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = out.read_text().splitlines()
    assert len(rows) == 4 and all(len(row.split("\t")) == 3 for row in rows)
    assert temporaries(tmp_path) == []

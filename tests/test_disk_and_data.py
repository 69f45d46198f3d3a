"""Issue 29, for `python -m training data`, the dataset cache and `python -m figures`:

- a full disk or a failed write (stdout, --out, a figure, the cache) is one line on stderr, a
  non-zero status, no traceback, and whatever stood at the destination before is unchanged;
- a reader that closes the pipe early (`data | head`) is exit status 1, silently;
- a bad --out (a parent that is a file, a name too long, a NUL byte) is one line, exit 2;
- figures are byte-identical from one run to the next (no time stamp in PNG or PDF).

Hostile inputs (a FIFO or bad JSON as a cache file, a vocabulary or a figure's input) are in
test_hostile_data_inputs.py, which uses the helpers here.

A full disk is simulated with RLIMIT_FSIZE (writes past N bytes fail with EFBIG; SIGXFSZ
ignored), in a subprocess for stdout and in this process, briefly, for files.
"""

import contextlib
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from figures import style
from figures.__main__ import main as figures_main
from training.__main__ import main as training_main
from training.tasks import datasets

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"train": 600, "validation": 100, "test": 100}
DATA = ["data", "--task", "number", "--count", "480", "--seed", "0"]


def _limit_file_size(size: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return apply


@contextlib.contextmanager
def disk_full_after(size: int):
    """In this process: every write that would make a file longer than ``size`` bytes fails."""
    saved_limit, saved_handler = resource.getrlimit(resource.RLIMIT_FSIZE), signal.getsignal(signal.SIGXFSZ)
    _limit_file_size(size)()
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, saved_limit)
        signal.signal(signal.SIGXFSZ, saved_handler)


class Blocked(BaseException):
    """Not an OSError, so no `except OSError` in the code under test can swallow it."""


@contextlib.contextmanager
def no_hang(seconds: int = 20):
    """Fail the test, rather than hang the suite, if a FIFO blocks a read."""

    def expire(signum, frame):
        raise Blocked("blocked: a FIFO was opened for reading")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def environment(unbuffered: bool) -> dict:
    """PYTHONUNBUFFERED=1 makes sys.stdout drop what a short write leaves over, silently: the
    way `data > file` on a full disk once exited 0 with a truncated file.  Both ways are tried."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return dict(env, PYTHONUNBUFFERED="1") if unbuffered else env


def run_data(args, unbuffered: bool, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "training", *args],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=environment(unbuffered),
        **kwargs,
    )


# -- stdout: a failed write is one line; a closed pipe is status 1 --------------------------------


@pytest.mark.parametrize("where", ["/dev/full", "file past RLIMIT_FSIZE"])
def test_data_to_stdout_that_cannot_be_written_is_one_line(tmp_path, where):
    if where == "/dev/full":
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        with open("/dev/full", "w") as sink:
            done = run_data(DATA, False, stdout=sink)
        expected = "No space left on device"
    else:
        with open(tmp_path / "rows.tsv", "w") as sink:
            done = run_data(DATA, True, stdout=sink, preexec_fn=_limit_file_size(4096))
        expected = "File too large"
        assert (tmp_path / "rows.tsv").stat().st_size <= 4096
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "stdout" in line and expected in line and "incomplete" in line


def test_data_into_a_pipe_closed_early_exits_1_silently():
    # 200 rows of 2,017 tokens: megabytes, far past what a pipe buffers, so the reader leaves first
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "training",
            "data",
            "--task",
            "number",
            "--count",
            "200",
            "--seed",
            "0",
            "--extra-target",
            "2000",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(unbuffered=True),
    )
    assert process.stdout.readline().endswith(b"\n")
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1
    assert stderr == ""


# -- files: a full disk leaves the old file; a bad --out is one line, exit 2 ----------------------


def test_data_out_on_a_full_disk_keeps_the_old_file(tmp_path, capsys):
    out = tmp_path / "rows.tsv"
    out.write_bytes(b"the previous rows\n")
    with disk_full_after(4096):
        status = training_main(DATA + ["--out", str(out)])
    assert status == 2
    line = one_line(capsys.readouterr().err)
    assert str(out) in line and "File too large" in line
    assert out.read_bytes() == b"the previous rows\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.tsv"]  # no temporary left behind


@pytest.mark.parametrize("name", ["fig4a", "table1"])
def test_a_figure_on_a_full_disk_keeps_the_old_file(tmp_path, capsys, name):
    old = {
        tmp_path / f"{name}{suffix}": f"old {suffix}".encode()
        for suffix in ((".md",) if name == "table1" else (".png", ".pdf"))
    }
    for path, data in old.items():
        path.write_bytes(data)
    with disk_full_after(200):  # every figure and table is larger
        status = figures_main([name, "--out", str(tmp_path)])
    assert status != 0
    line = one_line(capsys.readouterr().err)
    assert "File too large" in line and name in line
    assert {path: path.read_bytes() for path in old} == old
    assert sorted(tmp_path.iterdir()) == sorted(old)


def _bad_outputs(tmp_path: Path) -> dict:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return {
        "parent is a file": (str(a_file / "x.txt"), "not a directory"),
        "name too long": (str(tmp_path / ("n" * 300)), "at most"),
        "NUL byte": (str(tmp_path / "a\0b"), "NUL"),
    }


@pytest.mark.parametrize("case", ["parent is a file", "name too long", "NUL byte"])
@pytest.mark.parametrize("command", ["data", "figures"])
def test_a_bad_out_path_is_one_line_and_status_2(tmp_path, capsys, command, case):
    path, words = _bad_outputs(tmp_path)[case]
    if command == "data":
        status = training_main(DATA + ["--out", path])
    else:
        status = figures_main(["fig4a", "--out", path])
    assert status == 2
    captured = capsys.readouterr()
    assert words in one_line(captured.err) and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


# -- figures are byte-identical from run to run --------------------------------------------------


def _png_chunks(data: bytes) -> list[str]:
    chunks, at = [], 8
    while at < len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        chunks.append(data[at + 4 : at + 8].decode("ascii"))
        at += 12 + length
    return chunks


def test_saved_figures_are_byte_identical_across_runs(tmp_path, monkeypatch):
    def draw_and_save(folder: Path, epoch: str):
        # matplotlib stamps the PDF with SOURCE_DATE_EPOCH when set, else the time: two clocks
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        fig = style.new_figure(3, 2)
        fig.add_subplot().plot([0, 1, 2], [1, 0, 1], label="a line")
        return [path.read_bytes() for path in style.save(fig, folder, "tiny")]

    first = draw_and_save(tmp_path / "a", "1000000000")
    second = draw_and_save(tmp_path / "b", "2000000000")
    assert first == second
    png, pdf = first
    assert not {"tEXt", "iTXt", "zTXt", "tIME"} & set(_png_chunks(png))  # no Software key, no time
    assert b"CreationDate" not in pdf and b"ModDate" not in pdf and b"Matplotlib" not in pdf


# -- the dataset cache on a full disk: one line, nothing lost, the next run recovers -------------


def test_a_full_disk_while_writing_the_cache_is_one_line_and_the_next_run_recovers(tmp_path, capsys):
    other = datasets.cached_splits("number", SMALL, seed=2, cache_dir=tmp_path)  # a cache already there
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    with disk_full_after(4096), pytest.raises(datasets.CacheError) as raised:
        datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)
    assert "File too large" in str(raised.value) and "\n" not in str(raised.value)
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing lost, no temporary left
    capsys.readouterr()
    built = datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)
    assert np.array_equal(built["test"].inputs, datasets.build_splits("number", SMALL, 1)[0]["test"].inputs)
    assert np.array_equal(
        datasets.cached_splits("number", SMALL, seed=2, cache_dir=tmp_path)["train"].inputs,
        other["train"].inputs,
    )
    assert capsys.readouterr().err == ""


def test_a_failed_manifest_write_leaves_a_cache_the_next_run_rebuilds(tmp_path, capsys, monkeypatch):
    from theory.io.files import OutputError

    def full(path, *args, **kwargs):
        raise OutputError(
            f"cannot write {path}: No space left on device; the previous file, if any, is unchanged"
        )

    with monkeypatch.context() as patch:
        patch.setattr(datasets, "atomic_write_json", full)
        with pytest.raises(datasets.CacheError, match="No space left on device"):
            datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1 and not list(
        tmp_path.glob("*.json")
    )  # no manifest vouches for it
    capsys.readouterr()
    datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)
    line = one_line(capsys.readouterr().err)
    assert "rebuilding" in line and ".json" in line
    datasets.cached_splits("number", SMALL, seed=1, cache_dir=tmp_path)
    assert capsys.readouterr().err == ""

"""One ``llm`` run per ``--replies`` file (``training.llm.lock``): a second run, while the first
holds the file, exits 2 in one line naming the file and the first run's pid, before any call
and without touching the file (its closing rewrite used to drop the first run's replies); a
run after the first ended, or after it was killed, works.  Against the local chat server of
``test_llm`` (127.0.0.1 only)."""

import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

from test_llm import calls_to, llm_args, one_error_line, server  # noqa: F401  (server is a fixture)

from training.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
HOLD = (
    "import sys; from training.llm.lock import RepliesLock; RepliesLock(sys.argv[1]).acquire(); "
    "print('held', flush=True); sys.stdin.read()"
)


def holder(replies) -> subprocess.Popen:
    """Another process holding the replies file's lock until its stdin closes (or it is killed)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(replies)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline() == "held\n"
    return process


def test_a_second_run_on_a_held_replies_file_is_one_line_and_touches_nothing(server, tmp_path, capsys):  # noqa: F811
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    args = llm_args(server.server_port, model, out, "--replies", str(replies))
    assert main([a if a != "12,16" else "12" for a in args]) == 0  # 4 replies in the file
    capsys.readouterr()
    before, results = replies.read_bytes(), out.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(replies)
    first = holder(replies)
    try:
        for path in (replies, link):  # another path to the same file is the same file
            assert main(llm_args(server.server_port, model, out, "--replies", str(path))) == 2
            err = one_error_line(capsys)
            assert f"--replies: {path} is in use" in err and f"pid {first.pid} " in err, err
        assert replies.read_bytes() == before and out.read_bytes() == results and calls_to(server, model) == 4
    finally:
        first.stdin.close()
        first.wait(timeout=60)
    assert main(args) == 0 and calls_to(server, model) == 8  # the first ended: the next run resumes
    assert len(replies.read_text().splitlines()) == 8 and not (tmp_path / ".r.jsonl.lock").exists()


def test_a_killed_runs_lock_file_blocks_nobody(server, tmp_path, capsys):  # noqa: F811
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    killed = holder(replies)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=60)
    assert (tmp_path / ".r.jsonl.lock").read_text() == f"pid {killed.pid} on host {socket.gethostname()}\n"
    assert main(llm_args(server.server_port, model, out, "--replies", str(replies))) == 0
    assert len(replies.read_text().splitlines()) == 8 and not (tmp_path / ".r.jsonl.lock").exists()


def test_a_lock_path_that_is_not_a_regular_file_is_one_line(server, tmp_path, capsys):  # noqa: F811
    model, out, replies = f"correct-{uuid.uuid4().hex[:8]}", tmp_path / "r.json", tmp_path / "r.jsonl"
    (tmp_path / "elsewhere").write_text("keep")
    (tmp_path / ".r.jsonl.lock").symlink_to(tmp_path / "elsewhere")  # never written through
    assert main(llm_args(server.server_port, model, out, "--replies", str(replies))) == 2
    assert "cannot lock" in one_error_line(capsys) and calls_to(server, model) == 0
    assert (tmp_path / "elsewhere").read_text() == "keep" and not replies.exists()

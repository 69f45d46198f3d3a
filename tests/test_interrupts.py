"""Ctrl-C at any moment of any command is one line and exit status 130, never a traceback:
in particular during the seconds the entry points spend importing numpy, torch and matplotlib
(issue 29, class 9), which ``theory.io.cli.quiet_interrupt_while_starting`` covers."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# one long-running command per entry point; each is interrupted long before it could finish
COMMANDS = {
    "training": ["-m", "training", "bench", "--rounds", "1000"],
    "proofs_check": ["-m", "proofs_check"],
    "figures": ["-m", "figures", "--out", "{tmp}"],
}


def _ctrl_c_as_a_terminal_gives_it():
    """In the child: SIGINT back to its default.  A shell starts background jobs (``pytest &``,
    nohup, a CI runner's script) with SIGINT ignored, and an ignored SIGINT is inherited; the
    commands then rightly keep ignoring it (test below), so these tests would see no Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(arguments, delay):
    process = subprocess.Popen(
        [sys.executable, *arguments],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        preexec_fn=_ctrl_c_as_a_terminal_gives_it,
    )
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, stderr


@pytest.mark.parametrize("delay", [0.15, 0.6])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_ctrl_c_while_a_command_starts_is_one_line(tmp_path, name, delay):
    arguments = [part.format(tmp=tmp_path) for part in COMMANDS[name]]
    code, stderr = _interrupt(arguments, delay)
    if code == -signal.SIGINT and stderr == "":
        # On a loaded machine the signal can come before the interpreter has set up its own
        # handler: the process dies of SIGINT silently, which a shell reports as status 130 too.
        # (An uncaught KeyboardInterrupt also ends in SIGINT, but after printing its traceback.)
        return
    assert code == 130, stderr
    assert stderr == f"python -m {name}: interrupted\n" or (
        stderr.startswith(f"python -m {name}: interrupted") and stderr.count("\n") == 1
    ), stderr


def test_the_guard_leaves_at_once_with_one_line_and_restores_the_handler():
    script = (
        "import os, signal, time\n"
        "from theory.io.cli import quiet_interrupt_while_starting\n"
        "with quiet_interrupt_while_starting('prog'):\n"
        "    pass\n"
        "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "with quiet_interrupt_while_starting('prog'):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(30)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_ctrl_c_as_a_terminal_gives_it,
    )
    assert (done.returncode, done.stderr) == (130, "prog: interrupted\n")


def test_a_command_started_with_ctrl_c_ignored_keeps_ignoring_it():
    """`cmd &` in a script and nohup start a process with SIGINT ignored; the guard must not
    turn a Ctrl-C meant for the shell into the end of that process."""
    script = (
        "import os, signal\n"
        "from theory.io.cli import quiet_interrupt_while_starting\n"
        "with quiet_interrupt_while_starting('prog'):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "print('still here')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "still here\n", "")

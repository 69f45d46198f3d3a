"""A study stage's subprocess, tied to the study process so that neither outlives the other.

Why: a ``study`` killed with SIGKILL (an OOM killer, a scheduler's time limit, kill -9) runs
no cleanup, so a plain child kept training as an orphan, writing into a member folder that
the next ``study`` then locked and resumed beside it; and its stdout pipe had no reader any
more, so it finally died of a BrokenPipeError traceback in the member's log.  Two things
prevent that here:

- on Linux the child asks the kernel for SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``, armed between fork and exec, so it holds from the child's
  first instruction); and if the parent already died before that (the race the man page
  warns about), the child sees another parent pid and exits at once;
- the child writes to files, never to a pipe: stderr straight into the stage's log, stdout
  into an unnamed temporary file read after it exits.  Whatever happens to the parent, no
  write of the child can fail with EPIPE.

The child stays in the study's process group, so Ctrl-C at the terminal still reaches both
(each exits with its one line).  The kernel sends the signal when the THREAD that started the
child ends; the runner's worker threads wait for their child, so that is the study's end.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["run_tied"]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _load_prctl():
    """libc's prctl, looked up once in the parent: between fork and exec the child should call
    as little as possible (the parent has other threads), so nothing is loaded there."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _load_prctl()


def _die_with(parent: int):
    def arm() -> None:  # runs in the child, after fork, before exec
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent is already gone: the signal would never come
            os._exit(128 + signal.SIGKILL)

    return arm


def run_tied(argv: list, log, env: dict, scratch: Path) -> tuple[int, str]:
    """Run ``argv`` with stderr into the open ``log`` file and stdout into a temporary file in
    ``scratch``; returns (exit status, stdout text).  The child dies with this process."""
    with tempfile.TemporaryFile(dir=scratch) as out:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=log,
            env=env,
            preexec_fn=_die_with(os.getpid()) if _PRCTL is not None else None,
        )
        out.seek(0)
        return done.returncode, out.read().decode("utf-8", errors="replace")

"""One run folder, one ``train`` process: an exclusive lock on ``RUN/.lock`` for the whole run.

The lock is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``RUN/.lock``; while held, the file holds
one line naming the holder (``pid 1234 on host NAME``), which a second ``train`` on the same
folder reads into its error (exit status 2) -- it never waits and never touches the run.

Stale locks need no detection: the kernel releases a flock when the descriptor's last holder
exits, however it exits (SIGKILL and a crash included).  A ``.lock`` file left behind by a
killed process therefore blocks nobody; the next ``train`` takes it and rewrites the holder
line.  A clean exit removes the file.  Removing it is safe because a taker checks, after
its flock succeeded, that the path still names the file it locked (else it locked a file
that was just removed and tries again), so two processes can never both hold the lock.

flock is advisory (only ``train`` takes it) and, on NFS, depends on the server; local and
ordinary network-mounted home folders behave as described.
"""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

from .runchecks import RunError

__all__ = ["LOCK_NAME", "LockHeld", "RunLock"]

LOCK_NAME = ".lock"


class LockHeld(RunError):
    """Another live process holds the lock (the message names it)."""


def _holder_line() -> str:
    return f"pid {os.getpid()} on host {socket.gethostname()}"


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)


class RunLock:
    """``with RunLock(run_folder):`` -- the folder must exist.  Raises LockHeld (a RunError) if
    it is held.  ``name`` and ``user`` serve other one-worker folders (a study member)."""

    def __init__(self, folder, name: str = LOCK_NAME, user: str = "train process"):
        self.path = Path(folder) / name
        self.user = user
        self.fd: int | None = None

    def acquire(self) -> None:
        for _ in range(10):  # a retry only when the holder removed the file between open and flock
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 300, 0).decode(errors="replace").strip() or "another process"
                os.close(fd)
                raise LockHeld(f"{self.path.parent} is in use by another {self.user} ({holder}); "
                               f"wait for it to end or stop it") from None
            except OSError as error:  # a file system without flock
                os.close(fd)
                raise RunError(f"cannot lock {self.path}: {error.strerror or error}") from None
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, (_holder_line() + "\n").encode(), 0)
                self.fd = fd
                return
            os.close(fd)
        raise RunError(f"cannot lock {self.path}: it keeps being removed by another process")

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise RunError(f"cannot lock {self.path}: {error.strerror or error}") from None

    def release(self) -> None:
        """Remove the lock file while still holding it, then let go."""
        if self.fd is None:
            return
        try:
            if _same_file(self.fd, self.path):
                os.unlink(self.path)
        except OSError:
            pass  # a read-only folder now, say: the kernel still releases the lock below
        os.close(self.fd)  # closing the descriptor releases the flock
        self.fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

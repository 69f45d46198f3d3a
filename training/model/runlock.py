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

Only a regular file (or nothing) is taken as the lock: the lock file is opened with
``O_NOFOLLOW`` and ``O_NONBLOCK`` and checked with ``fstat``, because the holder line is
written into it -- a symlink planted at ``.lock`` would have us overwrite its target, and a
FIFO would block the open.  Anything else there is refused in one line (remove it by hand).
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import stat
from pathlib import Path

from .runchecks import RunError

__all__ = ["LOCK_NAME", "LockHeld", "RunLock"]

LOCK_NAME = ".lock"


class LockHeld(RunError):
    """Another live process holds the lock (the message names it)."""


def _holder_line(detail: str) -> str:
    line = f"pid {os.getpid()} on host {socket.gethostname()}" + (f", {detail}" if detail else "")
    return " ".join(line.split())  # one line whatever a path in it holds


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "a special file"


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)


class RunLock:
    """``with RunLock(run_folder):`` -- the folder must exist.  Raises LockHeld (a RunError) if
    it is held.  ``name`` and ``user`` serve other one-worker folders (a study member);
    ``detail`` goes into the holder line (which run holds a checkpoint folder, say)."""

    def __init__(self, folder, name: str = LOCK_NAME, user: str = "train process", detail: str = ""):
        self.path = Path(folder) / name
        self.user = user
        self.detail = detail
        self.fd: int | None = None

    def acquire(self) -> None:
        for _ in range(10):  # a retry only when the holder removed the file between open and flock
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = " ".join(os.pread(fd, 300, 0).decode(errors="replace").split()) or "another process"
                os.close(fd)
                raise LockHeld(f"{self.path.parent} is in use by another {self.user} ({holder}); "
                               f"wait for it to end or stop it") from None
            except OSError as error:  # a file system without flock
                os.close(fd)
                raise RunError(f"cannot lock {self.path}: {error.strerror or error}") from None
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, (_holder_line(self.detail) + "\n").encode(), 0)
                self.fd = fd
                return
            os.close(fd)
        raise RunError(f"cannot lock {self.path}: it keeps being removed by another process")

    def _refuse(self, mode: int) -> RunError:
        return RunError(f"cannot lock {self.path}: it is {_kind(mode)}, not a regular file; "
                        f"remove it (a lock file is an empty or one-line regular file)")

    def _open(self) -> int:
        """The lock file, created if absent; a symlink, FIFO, folder or device there is refused."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as error:
            try:
                mode = os.lstat(self.path).st_mode
            except OSError:
                mode = None
            if mode is not None and not stat.S_ISREG(mode):  # ELOOP for a symlink, EISDIR, ENXIO, ...
                raise self._refuse(mode) from None
            if error.errno == errno.ELOOP:
                raise self._refuse(stat.S_IFLNK) from None
            raise RunError(f"cannot lock {self.path}: {error.strerror or error}") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # a FIFO or device opens fine with O_NONBLOCK: refuse it now
            os.close(fd)
            raise self._refuse(mode)
        os.set_blocking(fd, True)
        return fd

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

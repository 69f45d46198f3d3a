"""One worker per resource: an exclusive, non-blocking lock on a lock file, the one implementation
that runs (training.run.lock), replies files (training.llm.lock) and report folders share.

The lock is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the lock file; while held, the file holds one
line naming the holder (``pid 1234 on host NAME[, detail]``), which a second taker reads into its
error -- it never waits and never touches what the lock guards.

Stale locks need no detection: the kernel releases a flock when the descriptor's last holder
exits, however it exits (SIGKILL and a crash included).  A lock file left behind by a killed
process therefore blocks nobody; the next taker takes it and rewrites the holder line.  A clean
release removes the file while still holding it.  That is safe because a taker checks, after
its flock succeeded, that the path still names the file it locked (else it locked a file that
was just removed and tries again), so two processes can never both hold the lock.

Only a regular file (or nothing) is taken: the lock file is opened with ``O_NOFOLLOW`` and
``O_NONBLOCK`` and checked with ``fstat``, because the holder line is written into it -- a
symlink planted there would have us overwrite its target, and a FIFO would block the open.

flock is advisory (only this package takes it) and, on NFS, depends on the server.  POSIX only
(fcntl).  Standard library only.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import stat

__all__ = ["LockHeld", "LockUnavailable", "ExclusiveLock", "file_kind"]


class LockHeld(Exception):
    """Another live process holds the lock; ``holder`` is its holder line."""

    def __init__(self, holder: str):
        super().__init__(holder)
        self.holder = holder


class LockUnavailable(Exception):
    """The lock cannot be taken (not a regular file, no flock on this file system, ...);
    ``why`` says what, ``not_regular`` whether something other than a regular file is there."""

    def __init__(self, why: str, not_regular: bool = False):
        super().__init__(why)
        self.why, self.not_regular = why, not_regular


def file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a special file"


def _holder_line(detail: str) -> str:
    line = f"pid {os.getpid()} on host {socket.gethostname()}" + (f", {detail}" if detail else "")
    return " ".join(line.split())  # one line whatever a path in it holds


def _same_file(fd: int, path: str) -> bool:
    try:
        on_disk = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)


class ExclusiveLock:
    """``acquire()`` ... ``release()`` (or ``with``) on the lock file ``path``, whose folder must
    exist.  Raises LockHeld or LockUnavailable; callers turn them into their own one-line errors."""

    def __init__(self, path, detail: str = ""):
        self.path = os.fspath(path)
        self.detail = detail
        self.fd: int | None = None

    def acquire(self):
        for _ in range(10):  # a retry only when the holder removed the file between open and flock
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = " ".join(os.pread(fd, 300, 0).decode(errors="replace").split()) or "another process"
                os.close(fd)
                raise LockHeld(holder) from None
            except OSError as error:  # a file system without flock
                os.close(fd)
                raise LockUnavailable(error.strerror or str(error)) from None
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, (_holder_line(self.detail) + "\n").encode(), 0)
                self.fd = fd
                return self
            os.close(fd)
        raise LockUnavailable("it keeps being removed by another process")

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
                raise LockUnavailable(
                    f"it is {file_kind(mode)}, not a regular file", not_regular=True
                ) from None
            if error.errno == errno.ELOOP:
                raise LockUnavailable("it is a symbolic link, not a regular file", not_regular=True) from None
            raise LockUnavailable(error.strerror or str(error)) from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # a FIFO or device opens fine with O_NONBLOCK: refuse it now
            os.close(fd)
            raise LockUnavailable(f"it is {file_kind(mode)}, not a regular file", not_regular=True)
        os.set_blocking(fd, True)
        return fd

    def release(self) -> None:
        """Remove the lock file while still holding it, then let go (closing releases the flock)."""
        if self.fd is None:
            return
        try:
            if _same_file(self.fd, self.path):
                os.unlink(self.path)
        except OSError:
            pass  # a read-only folder now, say: the kernel still releases the lock below
        os.close(self.fd)
        self.fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

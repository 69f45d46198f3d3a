"""One member, one worker: a non-blocking flock on a file in the member's folder.

flock is released by the kernel when its holder dies (kill -9 included), so a lock file left
behind never blocks anyone: a stale lock needs no detection.  Held, the file names the
holder (host and pid), for the message of whoever finds it taken.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

__all__ = ["MemberBusy", "member_lock"]


class MemberBusy(RuntimeError):
    """Another live process holds the member."""


@contextlib.contextmanager
def member_lock(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise MemberBusy(f"{path} is held by {holder}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"host {os.uname().nodename} pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock

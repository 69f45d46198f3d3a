"""One replies file, one ``llm`` run: an exclusive lock on a sidecar ``.NAME.lock`` beside it.

Why: two runs sharing ``--replies FILE`` both append to it, and the one that ends last
rewrites it atomically from what it read at its start (``RepliesFile.finish``), dropping
every reply the other run appended meanwhile.  So the file is locked in the pre-flight
checks, before it is read and before any model work, and stays locked for the whole run;
a second run exits 2 naming the file and the holder, and never waits.

The lock is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``.NAME.lock`` in the folder of the file
the replies path resolves to (two symlinks to one file share one lock).  While held, it
holds one line naming the holder (``pid 1234 on host NAME``).  The kernel releases a flock
when its holder exits, however it exits, so a lock file left by a killed run blocks nobody;
a clean release removes the file while still holding it, and a taker checks after its flock
that the path still names the file it locked (else it locked a removed file and tries
again).  Only a regular file is taken (``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``): the
holder line is written into it, and a planted symlink or FIFO would be written or block.

The lock itself is ``theory.io.locks.ExclusiveLock``, shared with runs and report folders.
"""

from __future__ import annotations

import os

from theory.io.locks import ExclusiveLock, LockHeld, LockUnavailable

__all__ = ["LockError", "RepliesLock"]


class LockError(ValueError):
    """The replies file is locked by another run, or cannot be locked; one line naming it."""


class RepliesLock:
    """``acquire()`` (LockError if taken) ... ``release()``; ``path`` is the replies file."""

    def __init__(self, path):
        self.replies = os.fspath(path)
        target = os.path.realpath(self.replies)  # two symlinks to one file share one lock
        self.path = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.lock")
        self._lock = ExclusiveLock(self.path)

    @property
    def fd(self) -> int | None:
        return self._lock.fd

    def acquire(self) -> RepliesLock:
        try:
            self._lock.acquire()
        except LockHeld as held:
            raise LockError(
                f"--replies: {self.replies} is in use by another run of python -m training llm "
                f"({held.holder}, lock {self.path}); wait for it to end, or choose another --replies "
                "file"
            ) from None
        except LockUnavailable as failed:
            remove = "; a lock file is a regular file: remove what is there" if failed.not_regular else ""
            raise LockError(
                f"--replies: cannot lock {self.replies} (lock file {self.path}): {failed.why}{remove}"
            ) from None
        return self

    def release(self) -> None:
        """Remove the lock file while still holding it, then let go (closing releases the flock)."""
        self._lock.release()

"""One run folder, one ``train`` process: an exclusive lock on ``RUN/.lock`` for the whole run.

The lock is ``theory.io.locks.ExclusiveLock`` (flock, non-blocking, the holder's pid in the file,
stale locks released by the kernel, only a regular file taken); this module gives its refusals
the run's words: a second ``train`` on the same folder exits 2 naming the first, and never
touches the run.  Anything but a regular file at ``.lock`` is refused in one line (remove it by hand).
"""

from __future__ import annotations

from pathlib import Path

from theory.io.locks import ExclusiveLock, LockUnavailable
from theory.io.locks import LockHeld as _Held

from .checks import RunError

__all__ = ["LOCK_NAME", "LockHeld", "RunLock"]

LOCK_NAME = ".lock"


class LockHeld(RunError):
    """Another live process holds the lock (the message names it)."""


class RunLock:
    """``with RunLock(run_folder):`` -- the folder must exist.  Raises LockHeld (a RunError) if
    it is held.  ``name`` and ``user`` serve other one-worker folders (a study member);
    ``detail`` goes into the holder line (which run holds a checkpoint folder, say)."""

    def __init__(self, folder, name: str = LOCK_NAME, user: str = "train process", detail: str = ""):
        self.path = Path(folder) / name
        self.user = user
        self._lock = ExclusiveLock(self.path, detail)

    @property
    def fd(self) -> int | None:
        return self._lock.fd

    def acquire(self) -> None:
        try:
            self._lock.acquire()
        except _Held as held:
            raise LockHeld(
                f"{self.path.parent} is in use by another {self.user} ({held.holder}); "
                f"wait for it to end or stop it"
            ) from None
        except LockUnavailable as failed:
            remove = (
                "; remove it (a lock file is an empty or one-line regular file)" if failed.not_regular else ""
            )
            raise RunError(f"cannot lock {self.path}: {failed.why}{remove}") from None

    def release(self) -> None:
        """Remove the lock file while still holding it, then let go."""
        self._lock.release()

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

"""Atomic file writing: the one implementation every package uses.

A reader of ``path`` sees either the old file or the complete new one, never a partial
write: the data goes to a temporary file in the same folder (so the rename stays on one
file system), then ``os.replace`` swaps it in.  On any failure, including KeyboardInterrupt,
the temporary file is removed and an existing ``path`` is left as it was.

This is file plumbing, not mathematics, yet it lives in ``theory`` on purpose: ``theory``
is the bottom of the dependency graph, the one package that ``constructions``,
``training``, ``proofs_check`` and ``figures`` may all import (``constructions`` may
import nothing else), so a helper they share has to sit here to exist only once.
Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import IO, Iterator

__all__ = ["atomic_open", "atomic_write_text", "atomic_write_bytes", "atomic_write_json"]


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, parents: bool = True, fsync: bool = False) -> Iterator[IO]:
    """Open a temporary file next to ``path`` for streaming writes; on a clean exit of the
    ``with`` block it replaces ``path``, on an exception it is removed.

    ``mode`` is ``"w"`` (text, UTF-8, ``\\n`` line endings) or ``"wb"``.  ``parents``
    creates missing parent folders; with ``parents=False`` a missing folder raises the
    ``OSError`` from creating the temporary file, before the block runs.  ``fsync`` forces
    the data to disk before the rename (so a power cut cannot leave an empty file behind).
    The new file gets the permissions ``open()`` would give it (0666 less the umask).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if parents:
        os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}-", suffix=".tmp", dir=folder)
    try:
        # mkstemp makes the file owner-only; results are meant to be shared, so give
        # it the permissions an ordinary open() would (0666 less the umask)
        os.chmod(tmp, 0o666 & ~_current_umask())
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as handle:
            yield handle
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path, text: str, *, parents: bool = True, fsync: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", parents=parents, fsync=fsync) as handle:
        handle.write(text)


def atomic_write_bytes(path, data: bytes, *, parents: bool = True, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", parents=parents, fsync=fsync) as handle:
        handle.write(data)


def atomic_write_json(path, obj, *, parents: bool = True, fsync: bool = False, trailing_newline: bool = False,
                      **dump_kwargs) -> None:
    """``json.dump(obj, ..., **dump_kwargs)`` to ``path`` atomically, plus a final newline
    if ``trailing_newline``.  The object is serialised before the temporary file is made,
    so an unserialisable object leaves no trace on disk."""
    text = json.dumps(obj, **dump_kwargs)
    atomic_write_text(path, text + "\n" if trailing_newline else text, parents=parents, fsync=fsync)

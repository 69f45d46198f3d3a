"""Atomic file writing: the one implementation every package uses.

A reader of ``path`` sees either the old file or the complete new one, never a partial
write: the data goes to a temporary file in the same folder (so the rename stays on one
file system), then ``os.replace`` swaps it in.  On any failure, including KeyboardInterrupt,
the temporary file is removed and an existing ``path`` is left as it was.

What may stand at ``path``: nothing, or a regular file.  A directory, device, FIFO or socket
is refused (``OutputError``), never replaced.  A symbolic link is written THROUGH: the file
it points to is replaced atomically and the link stays (a dangling link is refused), which
is what a plain ``open(path, "w")`` would do to the link (``atomic_write_bytes_at``, which
writes inside an open directory for writers that must not be redirected, refuses a link
instead).  A writer killed by SIGKILL cannot
remove its temporary file; the temporary's name carries the host and pid of its writer, and
the next write to the same path removes those whose writer is no longer alive.

``check_output_file`` / ``check_output_dir`` are the pre-flight checks every command runs on
its outputs BEFORE any work, so a bad destination costs nothing.

This is file plumbing, not mathematics, yet it lives in ``theory`` on purpose: ``theory``
is the bottom of the dependency graph, the one package that ``constructions``,
``training``, ``proofs_check`` and ``figures`` may all import (``constructions`` may
import nothing else), so a helper they share has to sit here to exist only once.
Standard library only.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "user_cache_dir",
    "OutputError",
    "DISK_ERRORS",
    "check_output_file",
    "check_output_dir",
    "atomic_open",
    "atomic_write_text",
    "atomic_write_bytes",
    "atomic_write_bytes_at",
    "atomic_write_json",
]


class OutputError(ValueError):
    """An output destination that cannot be written; the message is one line naming it."""


def kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def _resolve_target(path: str) -> str:
    """The path an atomic write replaces: ``path`` itself, or the file a symlink points to.
    Raises OutputError for anything but nothing or a regular file there."""
    if os.path.islink(path):
        target = os.path.realpath(path)
        if not os.path.exists(target):
            raise OutputError(f"{path} is a symbolic link to {target}, which does not exist")
        path = target
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path
    except NotADirectoryError:
        raise OutputError(f"{path}: a parent in this path is a file, not a directory") from None
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise OutputError(f"{path} exists and is {kind_of(mode)}; refusing to replace it")
    return path


def _probe_writable(folder: str, path: str) -> None:
    """Create and remove one file in ``folder``: permissions, ACLs, a read-only mount and a
    full quota all show up here, before any work (os.access is blind to some of them)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None


def _check_path_text(text: str, what: str) -> None:
    """Refuse what no file system accepts, before any call that would raise on it: an empty
    path, a NUL byte, a component longer than the file system's NAME_MAX, a parent that is a file."""
    if not text:
        raise OutputError(f"{what}: empty path")
    if "\0" in text:
        raise OutputError(f"{what}: {text!r} contains a NUL byte")
    existing = _nearest_existing(os.path.dirname(os.path.abspath(text)) or ".")
    try:
        limit = os.pathconf(existing if os.path.isdir(existing) else "/", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    for part in os.path.abspath(text).split(os.sep):
        if len(os.fsencode(part)) > limit:
            raise OutputError(
                f"{what}: the name {part[:40]}... is {len(os.fsencode(part))} bytes; "
                f"this file system allows at most {limit}"
            )
    if os.path.exists(existing) and not os.path.isdir(existing):
        raise OutputError(f"{what}: {existing} is a file, not a directory, so {text} cannot be made under it")


def _nearest_existing(folder: str) -> str:
    while folder and not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


def check_output_file(path, what: str = "output", *, parents: bool = False) -> Path:
    """Check, before any work, that a file can be written at ``path``; return it as a Path.

    Refused (OutputError, one line that names ``what`` and the path): an empty path, an
    existing directory/device/FIFO/socket, a dangling symlink, a missing parent folder (unless
    ``parents``: then its nearest existing ancestor must be a folder), a folder this process
    cannot create files in."""
    text = os.fspath(path)
    _check_path_text(text, what)
    try:
        target = _resolve_target(text)
    except OutputError as error:
        raise OutputError(f"{what}: {error}") from None
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        existing = _nearest_existing(folder)
        if not parents or not os.path.isdir(existing):
            raise OutputError(f"{what}: directory {folder} does not exist")
        folder = existing
    try:
        _probe_writable(folder, text)
    except OutputError as error:
        raise OutputError(f"{what}: {error}") from None
    return Path(text)


def check_output_dir(path, what: str = "output folder") -> Path:
    """Check, before any work, that ``path`` is (or can be made) a folder this process can
    write in; return it as a Path.  An existing non-folder is refused."""
    text = os.fspath(path)
    _check_path_text(text, what)
    if os.path.exists(text) and not os.path.isdir(text):
        raise OutputError(f"{what}: {text} exists and is {kind_of(os.stat(text).st_mode)}, not a directory")
    existing = _nearest_existing(os.path.abspath(text))
    if not os.path.isdir(existing):
        raise OutputError(f"{what}: {existing} is not a directory, so {text} cannot be made")
    try:
        _probe_writable(existing, text)
    except OutputError as error:
        raise OutputError(f"{what}: {error}") from None
    return Path(text)


# a full disk or quota, a file-size limit, an I/O error: the write is short, so the data is not
# whole; atomic_open turns these into one OutputError line (the old file stays)
DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})

_HOST = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:40] or "host"


def _temp_prefix(name: str) -> str:
    return f".{name}.{_HOST}.{os.getpid()}."


def _remove_dead_writers_temps(folder: str | int, name: str) -> None:
    """Remove ``.NAME.HOST.PID.*.tmp`` left in ``folder`` (a path, or an open directory's
    descriptor) by a writer on this host that is no longer alive (SIGKILL, power cut): nothing
    else can, and they may be large."""
    pattern = re.compile(re.escape(f".{name}.{_HOST}.") + r"(\d+)\.[^/]*\.tmp$")
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry)
        if not match or int(match.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                if isinstance(folder, int):
                    os.unlink(entry, dir_fd=folder)
                else:
                    os.unlink(os.path.join(folder, entry))
        except (PermissionError, OverflowError):
            pass  # alive (another user's process) or not a pid: leave it


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, parents: bool = True, fsync: bool = False) -> Iterator[IO]:
    """Open a temporary file next to ``path`` for streaming writes; on a clean exit of the
    ``with`` block it replaces ``path``, on an exception it is removed.

    ``mode`` is ``"w"`` (text, UTF-8, ``\\n`` line endings) or ``"wb"``.  An existing
    ``path`` that is not a regular file raises OutputError (module doc: symlinks).  ``parents``
    creates missing parent folders; with ``parents=False`` a missing folder raises the
    ``OSError`` from creating the temporary file, before the block runs.  ``fsync`` forces
    the data to disk before the rename (so a power cut cannot leave an empty file behind).
    The new file gets the permissions ``open()`` would give it (0666 less the umask).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    _check_path_text(os.fspath(path), "output")
    path = _resolve_target(os.fspath(path))
    folder = os.path.dirname(os.path.abspath(path))
    if parents:
        os.makedirs(folder, exist_ok=True)
    name = os.path.basename(path)
    _remove_dead_writers_temps(folder, name)
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(name), suffix=".tmp", dir=folder)
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
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(error, OSError) and error.errno in DISK_ERRORS:
            raise OutputError(
                f"cannot write {path}: {error.strerror}; the previous file, if any, is unchanged"
            ) from None
        raise


def atomic_write_text(path, text: str, *, parents: bool = True, fsync: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", parents=parents, fsync=fsync) as handle:
        handle.write(text)


def atomic_write_bytes(path, data: bytes, *, parents: bool = True, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", parents=parents, fsync=fsync) as handle:
        handle.write(data)


def atomic_write_bytes_at(dir_fd: int, name: str, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` atomically to ``name`` inside the open directory ``dir_fd``.

    For a writer that must not be redirected: every step goes through the descriptor, never a
    path, so a folder renamed or replaced by a symbolic link after it was opened cannot send the
    data elsewhere.  Unlike ``atomic_open`` a symbolic link at ``name`` is refused, not written
    through (OutputError), as is anything but nothing or a regular file.  ``name`` is one path
    component.  The temporary file follows ``atomic_open``'s naming, so the same cleanup of
    dead writers' temporaries applies, and is removed on any failure."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not a file name: {name!r}")
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else kind_of(mode)
        raise OutputError(f"{name} exists and is {kind}; refusing to replace it")
    _remove_dead_writers_temps(dir_fd, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    tmp = f"{_temp_prefix(name)}{os.urandom(8).hex()}.tmp"
    fd = os.open(
        tmp, flags, 0o666, dir_fd=dir_fd
    )  # O_EXCL: a fresh file; 0666 less the umask, as open() gives
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        if isinstance(error, OSError) and error.errno in DISK_ERRORS:
            raise OutputError(
                f"cannot write {name}: {error.strerror}; the previous file, if any, is unchanged"
            ) from None
        raise


def atomic_write_json(
    path, obj, *, parents: bool = True, fsync: bool = False, trailing_newline: bool = False, **dump_kwargs
) -> None:
    """``json.dump(obj, ..., **dump_kwargs)`` to ``path`` atomically, plus a final newline
    if ``trailing_newline``.  The object is serialised before the temporary file is made,
    so an unserialisable object leaves no trace on disk."""
    text = json.dumps(obj, **dump_kwargs)
    atomic_write_text(path, text + "\n" if trailing_newline else text, parents=parents, fsync=fsync)


def user_cache_dir() -> Path:
    """This package's user cache folder: ``$ROPE_HEADS_CACHE``, else ``$XDG_CACHE_HOME/rope-heads``,
    else ``~/.cache/rope-heads``.  Shared by the GGUF conversions (``training.llm.hf_cache``)
    and the compiled-step cache (``training.run.compile``), which sit in rooms that may not
    import each other."""
    if os.environ.get("ROPE_HEADS_CACHE"):
        return Path(os.environ["ROPE_HEADS_CACHE"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "rope-heads"
    return Path.home() / ".cache" / "rope-heads"

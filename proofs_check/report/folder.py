"""The report folder: which folder may take a report, what of it may be replaced, and how.

A folder is a previous report only by its manifest, ``DIR/.report-manifest.json``, which every
report writes: the generator's tag and every file the report wrote (``REPORT.md``,
``index.html``, ``figures/NAME``).  Never by its shape: a ``figures/`` of someone's own PNG
files is theirs.  ``check_report_dir`` accepts a folder that is new, empty, or holds a previous
report and nothing else: every entry listed in its manifest (or the manifest, the lock file,
or a writer's temporary).  Anything else is refused in one line naming the folder and the
entry, before any claim runs.  A folder written before manifests existed (the committed
``report/`` until it is regenerated) is accepted when its REPORT.md starts with the Markdown
marker, its index.html carries the generator tag, and every file in its figures/ is one those
pages show or link; those pages then stand in for the manifest.

Only files the previous manifest (or legacy pages) list are ever deleted: figures the new
report no longer shows.  A provisional manifest naming the previous and the new files goes
first, the final one last, so a writer killed at any point leaves every file it owns listed.

Every write and delete goes through directory descriptors opened once: the folder's own,
and ``figures/`` opened with ``O_NOFOLLOW | O_DIRECTORY``, so a ``figures`` replaced by a
symbolic link while the claims run is refused (one line), never followed, and one renamed
after it was opened keeps receiving the writes.  Files are replaced atomically
(``theory.io.files.atomic_write_bytes_at``).

``report_dir_lock`` holds an exclusive lock on ``DIR/.report.lock`` (``training``'s
``RunLock``: a flock, released by the kernel whatever way the holder dies) from before the
claims run until the report is written, so a second ``--report`` into the same folder is
refused (one line naming the folder and the holder's pid) instead of interleaving.  It is
re-entrant within a process: ``write_report`` takes it too, and reuses the one the command holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from theory.io.files import OutputError, atomic_write_bytes_at, check_output_dir
from theory.io.inputs import Checked, Choice, InputError, parse_json
from theory.io.locks import ExclusiveLock, LockHeld, LockUnavailable

from . import html, markdown
from .doc import REPORT_FIGURES

REPORT_MD, INDEX_HTML = "REPORT.md", "index.html"
MANIFEST, LOCK = ".report-manifest.json", ".report.lock"
GENERATOR = "python -m proofs_check --report"
FIGURE_SUFFIXES = (".png", ".md")
READ_LIMIT = 1 << 26  # a previous page is read to recognise it; ours are a few hundred kB
# theory.io.files' temporaries of the files a report writes (".NAME.HOST.PID.RANDOM.tmp")
TEMP = re.compile(r"^\.(REPORT\.md|index\.html|\.report-manifest\.json|[\w.-]+\.(?:png|md))\..+\.tmp$")
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def is_figure_name(name: str) -> bool:
    """One plain path component naming a figure copy (never '..', never a path)."""
    return (
        name.endswith(FIGURE_SUFFIXES)
        and not name.startswith(".")
        and "/" not in name
        and "\0" not in name
        and "\\" not in name
    )


def _owned_entry(entry: str) -> bool:
    head, _, rest = entry.partition("/")
    return entry in (REPORT_MD, INDEX_HTML) or (head == REPORT_FIGURES and is_figure_name(rest))


MANIFEST_SHAPE = {
    "generator": Choice(GENERATOR),
    "files": [Checked(str, _owned_entry, "REPORT.md, index.html or figures/NAME.png|.md")],
}


def _refusal(out: Path, entry: str, why: str = "which is not part of a previous report") -> OutputError:
    return OutputError(
        f"--report: {out} holds {entry}, {why}; give a new or empty folder, or one holding "
        "only a previous report"
    )


def _mode(name: str, dir_fd: int) -> int | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _regular(name: str, dir_fd: int) -> bool:
    mode = _mode(name, dir_fd)
    return mode is not None and stat.S_ISREG(mode)


def _read_at(dir_fd: int, name: str) -> bytes:
    """The bytes of the regular file ``name`` in ``dir_fd`` (the caller saw it is one)."""
    fd = os.open(
        name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd
    )
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > READ_LIMIT:
            raise OSError(f"not a regular file of at most {READ_LIMIT} bytes")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    finally:
        os.close(fd)


def open_figures(out: Path, dir_fd: int, *, create: bool = False) -> int | None:
    """``figures/`` of the folder ``dir_fd``, opened without following a link (None if absent
    and not ``create``): a link or anything but a folder there is OutputError."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(REPORT_FIGURES, 0o777, dir_fd=dir_fd)
    try:
        return os.open(REPORT_FIGURES, _OPEN_DIR | os.O_NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        if create:
            raise OutputError(
                f"--report: {out}/{REPORT_FIGURES} vanished while the report was written"
            ) from None
        return None
    except OSError as error:  # ELOOP or ENOTDIR: a symbolic link or a file stands there
        raise OutputError(
            f"--report: {out}/{REPORT_FIGURES} is not a plain folder ({error.strerror}); refusing to "
            "write through it"
        ) from None


def _manifest_files(out: Path, dir_fd: int) -> set[str]:
    try:
        text = _read_at(dir_fd, MANIFEST).decode("utf-8")
        return set(parse_json(text, MANIFEST, MANIFEST_SHAPE)["files"])
    except (OSError, UnicodeDecodeError, InputError) as error:
        reason = " ".join(str(error).split())[:200]
        raise _refusal(out, MANIFEST, f"which is not a report manifest ({reason})") from None


_SHOWN = re.compile(r'(?:\]\(|src="|href=")' + re.escape(REPORT_FIGURES) + r'/([^)"/\s]+)[)"]')


def _legacy_files(dir_fd: int) -> set[str] | None:
    """The files of a report written before manifests: its two pages and the figures they show
    or link; None unless both pages carry the generator's marks."""
    marks = {
        REPORT_MD: lambda text: text.startswith(markdown.MARKER),
        INDEX_HTML: lambda text: html.GENERATOR in text,
    }
    owned = set()
    for name, marked in marks.items():
        if not _regular(name, dir_fd):
            return None
        try:
            text = _read_at(dir_fd, name).decode("utf-8", "replace")
        except OSError:
            return None
        if not marked(text[:4096]):
            return None
        owned |= {name} | {
            f"{REPORT_FIGURES}/{shown}" for shown in _SHOWN.findall(text) if is_figure_name(shown)
        }
    return owned


def _ignorable(name: str, dir_fd: int) -> bool:
    """What an interrupted or running writer leaves: the lock file, a temporary."""
    return _regular(name, dir_fd) and (name == LOCK or bool(TEMP.match(name)))


def survey(out: Path, dir_fd: int) -> set[str]:
    """The files the previous report in the folder ``dir_fd`` owns (empty for an empty folder);
    OutputError naming the first entry that is neither the previous report's nor ignorable."""
    try:
        return _survey(out, dir_fd)
    except OSError as error:  # a folder we may not list, say
        raise OutputError(f"--report: cannot read {out}: {error.strerror or error}") from None


def _survey(out: Path, dir_fd: int) -> set[str]:
    entries = [e for e in sorted(os.listdir(dir_fd)) if not _ignorable(e, dir_fd)]
    if REPORT_FIGURES in entries and not stat.S_ISDIR(_mode(REPORT_FIGURES, dir_fd) or 0):
        raise _refusal(out, REPORT_FIGURES)  # a link, or a file: never a previous report's figures
    figures = open_figures(out, dir_fd) if REPORT_FIGURES in entries else None
    try:
        inside = (
            sorted(f for f in os.listdir(figures) if not _ignorable(f, figures))
            if figures is not None
            else []
        )
        files = [e for e in entries if e != REPORT_FIGURES] + [f"{REPORT_FIGURES}/{f}" for f in inside]
        if not files:
            return set()  # empty, or an empty figures/ (a writer stopped before its first file)
        owned = _manifest_files(out, dir_fd) if MANIFEST in entries else _legacy_files(dir_fd)
        for entry in files:
            where, name = (figures, entry.partition("/")[2]) if "/" in entry else (dir_fd, entry)
            if owned is None or entry != MANIFEST and (entry not in owned or not _regular(name, where)):
                raise _refusal(out, entry)
        return owned
    finally:
        if figures is not None:
            os.close(figures)


def check_report_dir(path) -> Path:
    """``path`` as a Path if a report may be written there; OutputError (one line) otherwise."""
    out = check_output_dir(path, "--report")
    if not out.is_dir():
        return out
    try:
        dir_fd = os.open(out, _OPEN_DIR)
    except OSError as error:
        raise OutputError(f"--report: cannot open {out}: {error.strerror or error}") from None
    try:
        survey(out, dir_fd)
    finally:
        os.close(dir_fd)
    return out


class ReportFolder:
    """A checked, locked report folder, open as ``fd`` (see ``report_dir_lock``)."""

    def __init__(self, path: Path, fd: int):
        self.path, self.fd = path, fd

    def _manifest(self, files) -> None:
        text = json.dumps({"generator": GENERATOR, "files": sorted(files)}, indent=1) + "\n"
        atomic_write_bytes_at(self.fd, MANIFEST, text.encode())

    def write(self, pages: dict[str, bytes], figures: dict[str, bytes]) -> None:
        """Replace the pages and figures, remove the previous report's figures not shown any
        more, manifest first (provisional) and last (final)."""
        previous = survey(self.path, self.fd)  # under the lock: what is ours to replace or remove
        new = set(pages) | {f"{REPORT_FIGURES}/{name}" for name in figures}
        if not all(map(_owned_entry, new)):
            raise ValueError(f"not a report file: {sorted(e for e in new if not _owned_entry(e))}")
        self._manifest(previous | new)
        figures_fd = open_figures(self.path, self.fd, create=True)
        try:
            for name, data in figures.items():
                atomic_write_bytes_at(figures_fd, name, data)
            for name, data in pages.items():
                atomic_write_bytes_at(self.fd, name, data)
            for stale in sorted(previous - new):
                head, _, name = stale.partition("/")
                if head == REPORT_FIGURES and _regular(name, figures_fd):
                    os.unlink(name, dir_fd=figures_fd)
        finally:
            os.close(figures_fd)
        self._manifest(new)


_HELD: dict[str, ReportFolder] = {}


@contextlib.contextmanager
def report_dir_lock(path) -> Iterator[ReportFolder]:
    """The folder ``path``, checked, created, locked and checked again under the lock; OutputError
    (one line naming the folder, and the holder's pid when another report holds it) otherwise."""
    key = os.path.abspath(os.fspath(path))
    if key in _HELD:  # this process holds it already (the command, around write_report)
        yield _HELD[key]
        return
    out = check_report_dir(path)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as error:
        raise OutputError(f"--report: cannot make {out}: {error.strerror or error}") from None
    lock = ExclusiveLock(out / LOCK)
    try:
        lock.acquire()
    except LockHeld as held:
        raise OutputError(
            f"--report: {out} is in use by another report generation ({held.holder}); "
            "wait for it to end or stop it"
        ) from None
    except LockUnavailable as failed:
        raise OutputError(f"--report: cannot lock {out / LOCK}: {failed.why}") from None
    try:
        dir_fd = os.open(out, _OPEN_DIR)
        try:
            survey(out, dir_fd)  # again: another report may have been written since the first check
            _HELD[key] = ReportFolder(out, dir_fd)
            try:
                yield _HELD[key]
            finally:
                del _HELD[key]
        finally:
            os.close(dir_fd)
    finally:
        lock.release()

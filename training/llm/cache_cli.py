"""``python -m training cache list|clean``: what the GGUF cache (``training.llm.hf_cache``) holds, and removing it.

A converted GGUF is several times the size of the file (its weights de-quantised), and the
cache only grows: every GGUF ever read, and every version of the conversion, keeps a folder.

``list`` prints one line per entry of ``<cache root>/gguf``: the sha256 it is keyed by (12
digits), the GGUF file it was converted from, its size on disk, when it was written (its
marker's time), its format and state ("ok", "old format", "damaged: why", "converting" for a
conversion whose process is alive, "left over" for one whose process is gone), then the total.

``clean`` removes entries, by exactly one of: ``--all``; ``--older-than DAYS`` (written more
than DAYS days ago); ``SHA`` (a sha256 or a prefix of one, of at least ``MIN_PREFIX`` hex
digits, naming exactly one entry).  A conversion still running is never removed.  Safety:
an entry that is a symlink is unlinked, never followed; a folder is first renamed out of its
trusted name (one atomic step: a reader never sees it half removed, ``hf_cache.cached_folder``
rebuilds it if asked again) and then removed by ``shutil.rmtree``, which unlinks the links
inside without following them.  Entries the cache did not make (names that are neither a
sha256 nor one of its temporary names) are listed as "not the cache's" and never removed.
Bad input (an unknown or ambiguous SHA, a negative DAYS) is one line on stderr, exit 2.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from theory.io.inputs import InputError, load_json
from training.cli_common import OutputError, UsageError

from .hf_cache import CACHE_FORMAT, MARKER, cache_root, folder_problem, pid_alive

__all__ = ["Entry", "cache_entries", "select", "remove", "add_cache_parser", "MIN_PREFIX"]

MIN_PREFIX = 6  # hex digits of a SHA prefix: shorter ones name the wrong folder too easily
_SHA = re.compile(r"^[0-9a-f]{64}$")
# hf_cache's temporary names (a conversion, a damaged folder moved aside) and ours (a folder being removed)
_TEMP = re.compile(r"^\.(tmp|damaged|removing)-([0-9a-f]{64})-(.+)-(\d+)$")
DAY = 86400.0


@dataclass
class Entry:
    path: Path
    sha: str | None  # None: not a name the cache gives
    source: str
    size: int
    created: float
    format: int | None
    state: str

    @property
    def removable(self) -> bool:
        return self.sha is not None and self.state not in ("converting", "being removed")


def _size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (links not followed: not ours to count)."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    total = 0
    for folder, _dirs, files in os.walk(path):  # os.walk does not descend into linked folders
        for name in files:
            total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _entry(path: Path) -> Entry:
    created = path.lstat().st_mtime
    temp = _TEMP.match(path.name)
    if path.is_symlink() or not (temp or _SHA.match(path.name)):
        return Entry(
            path,
            path.name if _SHA.match(path.name) else None,
            "?",
            _size(path),
            created,
            None,
            "a symlink" if path.is_symlink() else "not the cache's",
        )
    if temp:
        host, pid = temp.group(3), int(temp.group(4))
        busy = {"tmp": "converting", "removing": "being removed"}.get(temp.group(1))
        running = busy is not None and host == socket.gethostname() and pid_alive(pid)
        return Entry(path, temp.group(2), "?", _size(path), created, None, busy if running else "left over")
    source, fmt = "?", None
    try:
        marker = load_json(path / MARKER, {"format": int, "source": str}, "cache marker")
        source, fmt, created = marker["source"], marker["format"], (path / MARKER).stat().st_mtime
    except (InputError, OSError):
        pass
    why = folder_problem(path, path.name)
    state = (
        "ok"
        if why is None
        else "old format"
        if fmt is not None and fmt != CACHE_FORMAT
        else f"damaged: {why}"
    )
    return Entry(path, path.name, source, _size(path), created, fmt, state)


def cache_entries(root=None) -> list[Entry]:
    """Every entry of ``<root>/gguf`` (root: ``hf_cache.cache_root()``), oldest first."""
    folder = Path(cache_root() if root is None else root) / "gguf"
    if not folder.is_dir():
        return []
    return sorted((_entry(path) for path in folder.iterdir()), key=lambda e: (e.created, e.path.name))


def select(
    entries: list[Entry],
    *,
    every: bool = False,
    older_than: float | None = None,
    sha: str | None = None,
    now: float | None = None,
) -> list[Entry]:
    """The removable entries named by one criterion (module doc); UsageError for a bad SHA."""
    removable = [e for e in entries if e.removable]
    if every:
        return removable
    if older_than is not None:
        now = time.time() if now is None else now
        return [e for e in removable if now - e.created > older_than * DAY]
    sha = (sha or "").lower()
    if not re.fullmatch(r"[0-9a-f]+", sha) or not MIN_PREFIX <= len(sha) <= 64:
        raise UsageError(f"SHA {sha!r}: expected a sha256 or a prefix of one, {MIN_PREFIX} to 64 hex digits")
    found = [e for e in removable if e.sha.startswith(sha)]
    if not found:
        raise UsageError(f"SHA {sha}: no entry of the cache starts with it (python -m training cache list)")
    if len({e.sha for e in found}) > 1:
        raise UsageError(
            f"SHA {sha}: names {len(found)} entries ({', '.join(e.sha[:12] for e in found)}); "
            f"give more digits"
        )
    return found


def remove(entry: Entry) -> None:
    """Remove one entry (module doc: a link unlinked, a folder renamed aside then removed)."""
    path = entry.path
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    sha = _TEMP.match(path.name).group(2) if _TEMP.match(path.name) else path.name
    aside = path.with_name(f".removing-{sha}-{socket.gethostname()}-{os.getpid()}")
    os.rename(path, aside)
    shutil.rmtree(aside)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _line(e: Entry) -> str:
    fmt = "-" if e.format is None else str(e.format)
    name = e.sha[:12] if e.sha else e.path.name
    return f"{name:<12}  {e.source:<40}  {_megabytes(e.size):>11}  {_when(e.created)}  format {fmt:<2}  {e.state}"


def run_list(args) -> int:
    entries = cache_entries()
    folder = cache_root() / "gguf"
    if not entries:
        print(f"the GGUF cache {folder} is empty")
        return 0
    for e in entries:
        print(_line(e))
    total = _megabytes(sum(e.size for e in entries))
    print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, {total} in {folder}")
    return 0


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not math.isfinite(days) or days < 0 or not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        raise UsageError(f"--older-than {text!r}: expected a number of days >= 0, like 30 or 0.5")
    return days


def run_clean(args) -> int:
    older = None if args.older_than is None else _days(args.older_than)
    chosen = select(cache_entries(), every=args.all, older_than=older, sha=args.sha)
    for e in chosen:
        try:
            remove(e)
        except OSError as error:  # a folder that is not ours to change (permissions), gone meanwhile, ...
            raise OutputError(f"cannot remove {e.path}: {error.strerror or error}") from None
        print(f"removed {e.sha[:12]}  {e.source}  {_megabytes(e.size)}")
    print(
        f"freed {_megabytes(sum(e.size for e in chosen))} ({len(chosen)} entries) in {cache_root() / 'gguf'}"
    )
    return 0


def add_cache_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="list or clean the cache of converted GGUF files",
        description="List or remove the Hugging Face folders that GGUF files were "
        "converted into (under $ROPE_HEADS_CACHE, default "
        "~/.cache/rope-heads).",
    )
    actions = parser.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="one line per entry: sha256, source GGUF, size, date, format, state",
        description="Print one line per cache entry, then the total size.",
    )
    listing.set_defaults(handler=run_list)
    clean = actions.add_parser(
        "clean",
        help="remove entries: all, those older than DAYS, or one by its sha256",
        description="Remove cache entries chosen by exactly one of --all, --older-than or "
        "SHA; a conversion still running is never removed.",
    )
    which = clean.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="remove every entry")
    which.add_argument(
        "--older-than", metavar="DAYS", help="remove the entries written more than DAYS days ago"
    )
    which.add_argument(
        "sha",
        nargs="?",
        metavar="SHA",
        help=f"remove the entry whose sha256 starts with SHA (at least {MIN_PREFIX} hex digits)",
    )
    clean.set_defaults(handler=run_clean)

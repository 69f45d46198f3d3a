"""The replies file (``--replies FILE``): every item's reply as one JSON line, appended and
flushed as soon as it arrives, so a crash, a Ctrl-C or a revoked key keeps every reply
already paid for; a rerun with the same file asks only the items that have no reply yet.

A line is the item's record (``training.llm.evaluate.score``: length, seed, index, answer,
reply, raw, parsed, correct, failed_calls, error) plus

* ``task``;
* ``prompt_sha256``: the SHA-256 of the exact prompt sent;
* ``config``: what shapes a reply (backend, model, task, and the decoding settings such
  as the URL, temperature, token limit, extra request fields, chat template, dtype).

An item is keyed by (task, length, seed, index).  A file whose lines carry another
``config``, or another prompt for an item of this run, belongs to another configuration
and is refused (exit 2) before any call.  An item that had no reply is asked again; its
``failed_calls`` then counts the calls of every run.  A torn last line (a crash in the
middle of an append) is dropped with a warning; a bad line anywhere else is an error.
When a run ends the file is rewritten atomically: one line per item of this run, in item
order, then the lines of other items (other lengths or seeds) kept as they were.  That
rewrite would drop what a second run appended meanwhile, so the file is locked (a sidecar
``.NAME.lock``, ``training.llm.lock``) before it is read, until ``release``: a second run on
it is refused in one line naming the first.
"""

from __future__ import annotations

import hashlib
import json
import os

from theory.io.files import atomic_write_text
from theory.io.inputs import InputError, Nullable, parse_json, read_bytes

from .backends import Reply
from .lock import RepliesLock

__all__ = ["RepliesError", "RepliesFile", "reply_config", "prompt_digest"]

# Settings from a backend's describe() that change what the model replies (not: timeouts,
# retries, workers, batch size, device).
REPLY_SETTINGS = (
    "backend",
    "model",
    "url",
    "temperature",
    "max_tokens",
    "max_tokens_field",
    "extra_body",
    "max_new_tokens",
    "chat_template",
    "stop",
    "decoding",
    "dtype",
)
_TEXT = Nullable(str)
LINE_SHAPE = {
    "task": str,
    "length": int,
    "seed": int,
    "index": int,
    "failed_calls": int,
    "prompt_sha256": str,
    "config": dict,
    "reply": _TEXT,
    "raw": _TEXT,
    "error": _TEXT,
}  # what resume reads of a line


class RepliesError(ValueError):
    """A replies file that cannot be resumed; the message is one line naming it."""


def reply_config(described: dict, task: str) -> dict:
    config = {name: described[name] for name in REPLY_SETTINGS if name in described}
    config["task"] = task
    return json.loads(json.dumps(config))  # as it reads back from the file (tuples become lists)


def prompt_digest(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def _key(record) -> tuple:
    return record["task"], record["length"], record["seed"], record["index"]


class RepliesFile:
    """Locked and read when made (before any work; LockError, a ValueError, if another run
    holds it); ``resume`` checks it against this run and opens it for appending; ``append``
    writes one line; ``finish`` rewrites it compactly; ``release`` closes it and unlocks it."""

    def __init__(self, path, warn=None):
        self.path = os.fspath(path)
        self.lines: list[tuple[int, dict]] = []  # (line number, record)
        self.torn_bytes = 0  # length of a torn last line, dropped
        self._good_size = 0
        self._handle = None
        self._missing_newline = False
        self._warn = warn  # told when a torn last line is dropped (only once the file is resumed)
        self.config = None
        self._lock = RepliesLock(self.path).acquire()
        try:
            if os.path.lexists(self.path):
                self._read()
        except BaseException:
            self.release()
            raise

    def _read(self) -> None:
        data = read_bytes(self.path, "--replies")  # a regular file only: a FIFO would block forever
        *whole, tail = data.split(b"\n")
        if tail and (not tail.startswith(b"{") or self._record(tail, 0) is not None):
            # not a fragment of our JSON object lines, or a whole line that lost only its newline
            whole, tail = whole + [tail], b""
            self._missing_newline = True
        for number, raw in enumerate(whole, start=1):
            if raw.strip():
                self.lines.append((number, self._record(raw, number, strict=True)))
        self.torn_bytes, self._good_size = len(tail), len(data) - len(tail)

    def _record(self, raw: bytes, number: int, strict: bool = False) -> dict | None:
        """Line ``number`` as a reply record, through the package's one JSON loader; None (or,
        ``strict``, RepliesError naming the line and field) when it is not one."""
        source = f"--replies: {self.path} line {number}"
        try:
            return parse_json(raw.decode("utf-8"), source, LINE_SHAPE)
        except UnicodeDecodeError as bad:
            problem = f"{source}: not UTF-8 text (byte {bad.start})"
        except InputError as bad:
            problem = str(bad)
        if strict:
            raise RepliesError(
                f"{problem}; it is not a reply line, and only a torn last line is tolerated: choose "
                "another --replies file"
            )
        return None

    def notice(self) -> str | None:
        if self.torn_bytes:
            return (
                f"dropped a torn last line ({self.torn_bytes} bytes) of {self.path}, left by a crash in the "
                "middle of a write; that item is asked again"
            )
        return None

    def resume(self, items, config: dict) -> tuple[dict[int, Reply], dict[int, int]]:
        """Check the file belongs to this configuration and open it for appending; return
        ({position: reply} of items already answered, {position: failed calls so far} of
        items that had no reply)."""
        self.config = config
        position = {(item.task, item.length, item.seed, item.index): k for k, item in enumerate(items)}
        answered, failed = {}, {}
        for number, record in self.lines:
            self._check(number, record, items, position)
            k = position.get(_key(record))
            if k is None or k in answered:
                continue
            if record["reply"] is not None:
                answered[k] = Reply(
                    record["reply"],
                    failed_calls=record["failed_calls"],
                    error=record["error"],
                    raw=record["raw"],
                )
                failed.pop(k, None)
            else:
                failed[k] = record["failed_calls"]
        if (
            self.torn_bytes
        ):  # said only now: a file refused above keeps its torn line, and one line is printed
            if self._warn is not None:
                self._warn(self.notice())
            os.truncate(self.path, self._good_size)
        self._handle = open(self.path, "a", encoding="utf-8", newline="\n")
        if self._missing_newline:
            self._handle.write("\n")
        return answered, failed

    def _check(self, number: int, record: dict, items, position: dict) -> None:
        if record["config"] != self.config:
            field = next(
                name
                for name in sorted(set(self.config) | set(record["config"]))
                if record["config"].get(name) != self.config.get(name)
            )
            raise RepliesError(
                f"--replies: {self.path} belongs to another configuration ({field}: "
                f"{record['config'].get(field)!r} there, {self.config.get(field)!r} now, line "
                f"{number}); choose another --replies file"
            )
        k = position.get(_key(record))
        if k is not None and record["prompt_sha256"] != prompt_digest(items[k].prompt):
            raise RepliesError(
                f"--replies: {self.path} line {number} holds item {_key(record)} asked with another "
                "prompt (the prompt or the item generator changed); choose another --replies file"
            )

    def line(self, item, record: dict) -> dict:
        return {
            **record,
            "task": item.task,
            "prompt_sha256": prompt_digest(item.prompt),
            "config": self.config,
        }

    def append(self, item, record: dict) -> None:
        self._handle.write(json.dumps(self.line(item, record)) + "\n")
        self._handle.flush()  # in the kernel now: a killed process loses nothing

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def release(self) -> None:
        """Closed and unlocked: another run may take the file now."""
        self.close()
        self._lock.release()

    def finish(self, items, records) -> None:
        """Rewrite the file atomically: this run's items in order, then the other items'
        latest lines (an answered line preferred)."""
        self.close()
        mine = {(item.task, item.length, item.seed, item.index) for item in items}
        others: dict[tuple, dict] = {}
        for _, record in self.lines:
            key = _key(record)
            if key not in mine and (
                key not in others or record["reply"] is not None or others[key]["reply"] is None
            ):
                others[key] = record
        text = [json.dumps(self.line(item, record)) + "\n" for item, record in zip(items, records)]
        text += [json.dumps(record) + "\n" for record in others.values()]
        atomic_write_text(self.path, "".join(text), parents=False)

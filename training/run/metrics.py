"""RUN/metrics.jsonl: the one file of a run that is appended to rather than replaced.

Separate from the checkpoint code because its failure modes differ: every other run file is
written whole and atomically, while this log grows a line at a time, so a kill or a full disk
can tear its last line.  Readers drop a final line that is not JSON (``Metrics.torn_line``);
a bad line anywhere else is an error naming the line.  Each record's shape is checked where it
is read (``checks.check_metrics_record``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from theory.io.files import DISK_ERRORS, OutputError, atomic_write_text
from theory.io.inputs import InputError, parse_json, read_text

from .checks import RunError, check_metrics_record

__all__ = ["Metrics"]


class Metrics:
    """RUN/metrics.jsonl: a ``settings`` line, then ``train`` and ``validation`` lines."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.torn_line: int | None = None  # the number of a torn last line the last read() dropped

    def read(self) -> list[dict]:
        """The records, each checked (checks.check_metrics_record).  The lines go through
        theory.io.inputs like every JSON we read (a FIFO, bad UTF-8, deep nesting: one line naming
        the file); not ``iter_jsonl``, because a torn last line must be reported by number
        (``torn_line``) and the record checks name their line too."""
        if not os.path.lexists(self.path):
            return []
        try:
            text = read_text(self.path, "metrics")
        except InputError as error:
            raise RunError(str(error)) from None
        numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        records, self.torn_line = [], None
        for index, (number, line) in enumerate(numbered):
            try:
                record = parse_json(line, f"corrupt {self.path} line {number}")
            except InputError as error:
                if index == len(numbered) - 1:  # a kill or a full disk during append: the record never was
                    self.torn_line = number
                    break
                raise RunError(str(error)) from None
            records.append(check_metrics_record(record, self.path, number))
        return records

    def settings(self) -> dict:
        """The run's settings line ({} when there is none)."""
        return next((r for r in self.read() if r["split"] == "settings"), {})

    def truncate(self, step: int) -> None:
        """Drop what an interrupted run logged after the checkpoint it resumes from (and a
        torn last line: ``torn_line`` says which)."""
        keep = [r for r in self.read() if r["step"] <= step]
        atomic_write_text(self.path, "".join(json.dumps(r) + "\n" for r in keep), parents=False)

    def append(self, record: dict) -> None:
        """One line at the end.  A full disk may leave part of it (read() drops that torn last
        line) and is an OutputError naming the file, not a traceback."""
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
        except OSError as error:
            if error.errno in DISK_ERRORS:
                raise OutputError(
                    f"cannot append to {self.path}: {error.strerror}; the run stops here and "
                    f"--resume continues it from its last checkpoint"
                ) from None
            raise

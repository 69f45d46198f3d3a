"""Checks for ``python -m training llm`` that cost nothing: its values and outputs are
checked before any model is loaded or any (paid) call is made, and at the end of a run
two verdicts are given:

* too many items without a reply (more than ``--max-failed-share``, default 10%):
  exit status 1 and one line naming the share and the most common error, so a run
  where every call failed (closed port, 503s, non-JSON bodies) is never mistaken for
  a result;
* a results file is never replaced by one with fewer answered items (``n_scored``
  summed over lengths): the new results go beside it, ``NAME.new.json`` (or
  ``NAME.new-2.json``, ... if that is taken), and the run exits 1 saying where.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from theory.io.files import atomic_write_json, check_output_file
from theory.io.inputs import Checked, InputError, load_json

__all__ = [
    "DEFAULT_MAX_FAILED_SHARE",
    "check_base_url",
    "check_seconds",
    "check_api_key",
    "check_share",
    "answered_in",
    "answered_in_results_file",
    "aside_path",
    "failure_verdict",
    "error_counts",
]

DEFAULT_MAX_FAILED_SHARE = 0.1
MAX_SECONDS = 86_400.0  # one day: larger values overflow socket timeouts and are never meant


def check_base_url(name: str, url: str) -> str:
    """``url`` if it is an http(s) URL with a host and no query or fragment (the request
    path is appended to it), else a ValueError naming ``name`` and the value."""
    allowed = "allowed: http(s)://HOST[:PORT][/PATH] without spaces, query or fragment"
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValueError(f"{name}: {url!r} is not a URL ({allowed})")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is not 0..65535)
    except ValueError as bad:  # e.g. a bad port, an unclosed IPv6 bracket
        raise ValueError(f"{name}: {url!r} is not a URL: {bad} ({allowed})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or "?" in url or "#" in url:
        raise ValueError(f"{name}: {url!r} is not a usable URL ({allowed})")
    return url


def check_seconds(name: str, value, *, zero_allowed: bool) -> float:
    """A finite number of seconds, > 0 (or >= 0 if ``zero_allowed``) and at most a day."""
    low = "0 <=" if zero_allowed else "0 <"
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if (
        not math.isfinite(seconds)
        or seconds < 0
        or (seconds == 0 and not zero_allowed)
        or seconds > MAX_SECONDS
    ):
        raise ValueError(
            f"{name}: {value!r} is not allowed; allowed: a finite number of seconds, "
            f"{low} value <= {MAX_SECONDS:g}"
        )
    return seconds


def check_api_key(env: str | None, key: str) -> None:
    """An HTTP header value must be printable ASCII; a key read with its newline (or pasted
    with a space) would otherwise fail inside the HTTP library.  The key is never shown."""
    for position, char in enumerate(key, start=1):
        if not 33 <= ord(char) <= 126:
            what = {"\n": "a newline", "\r": "a carriage return", " ": "a space", "\t": "a tab"}.get(
                char, f"the character U+{ord(char):04X}"
            )
            raise ValueError(
                f"--api-key-env: the API key in ${env} contains {what} at position {position} "
                f"(the key is not shown); allowed: printable ASCII without spaces"
            )


def check_share(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 1):
        raise ValueError(f"{name}: {value!r} is not allowed; allowed: a fraction 0..1 (e.g. 0.1 for 10%)")
    return float(value)


def answered_in(results: dict) -> int:
    """Items with a reply in a results object: ``n_scored`` summed over lengths."""
    return sum(row["n_scored"] for row in results["per_length"])


_RESULTS_SHAPE = {"per_length": Checked([{"n_scored": int}], bool, "at least one row")}


def answered_in_results_file(path) -> int | None:
    """Answered items in the results file at ``path``; None if there is none (or it is
    empty).  Anything else at the path is refused: it is not ours to replace."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        results = load_json(path, _RESULTS_SHAPE, "--json")
    except InputError as bad:
        raise ValueError(
            f"{bad}: it exists and is not a results file of python -m training llm, so it is left "
            "alone: remove it or choose another path"
        ) from None
    return sum(row["n_scored"] for row in results["per_length"])


def aside_path(path) -> Path:
    """Where results go that would have replaced a fuller file: ``NAME.new.json``, or the
    first free ``NAME.new-K.json``."""
    path = Path(path)
    suffix = path.suffix or ".json"
    candidate, k = path.with_name(f"{path.stem}.new{suffix}"), 2
    while os.path.lexists(candidate):
        candidate, k = path.with_name(f"{path.stem}.new-{k}{suffix}"), k + 1
    return candidate


def write_results(path, results: dict, previous_answered: int | None) -> Path | None:
    """Write ``results`` to ``path``, unless the file there has more answered items: then
    write them aside (see the module doc) and return where."""
    if previous_answered is not None and answered_in(results) < previous_answered:
        aside = aside_path(path)
        check_output_file(aside, "--json (aside)")
        atomic_write_json(aside, results, indent=1, trailing_newline=True, parents=False)
        return aside
    atomic_write_json(path, results, indent=1, trailing_newline=True, parents=False)
    return None


def error_counts(records) -> dict[str, int]:
    """How often each last error occurred among the items without a reply, most common first."""
    counts = Counter(r["error"] or "unknown" for r in records if r["correct"] is None)
    return dict(counts.most_common())


def failure_verdict(results: dict, max_share: float) -> tuple[str | None, bool]:
    """(one line about the items without a reply or None, whether it is an error)."""
    errors = results["summary"]["errors"]
    total = sum(row["n_items"] for row in results["per_length"])
    failed = total - answered_in(results)
    if not failed:
        return None, False
    share = failed / total
    common = next(iter(errors), "unknown")
    detail = (
        f"{failed}/{total} items ({share:.0%}) got no reply and were not scored; "
        f"most common error: {common!r} ({errors.get(common, failed)} items)"
    )
    if share > max_share:
        return f"{detail}; more than --max-failed-share {max_share:g}", True
    return detail, False

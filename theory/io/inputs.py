"""Reading input files: the one loader every JSON (and JSON-lines) file the package reads goes through.

Why one loader: a hostile or damaged file must cost the user one line naming the file and
the field, never a traceback and never a hang.  Four things go wrong with a bare
``json.loads(path.read_text())``, each seen in practice:

- a FIFO or device given as the file blocks forever in ``open``/``read``: we open with
  ``O_NONBLOCK`` and refuse anything that is not a regular file before reading a byte;
- a file that is not UTF-8 raises ``UnicodeDecodeError``: we name the byte offset;
- JSON nested a few thousand levels deep raises ``RecursionError`` (in the parser, or later
  in code that walks it): we measure the nesting before parsing and refuse beyond ``MAX_DEPTH``;
- a valid JSON value of the wrong shape (a string where a list was expected, a missing key)
  raises ``KeyError``/``TypeError`` far from the read: ``shape`` validates it at the read and
  names the field (``members[3].accuracy``).

Shapes are plain Python values, so a reader states what it needs next to where it reads:

- ``str``, ``bool``, ``int`` (not bool), ``float`` (an int or float, not bool), ``dict``,
  ``list``, ``ANY``;
- ``[s]``: a list whose every item has shape ``s``;
- ``{"key": s, "other?": t, "*": u}``: an object with the required ``key``, the optional
  ``other`` and any further keys of shape ``u`` (without ``"*"`` other keys are allowed and
  not checked);
- ``Nullable(s)``, ``OneOf(s, t, ...)``, ``Choice("number", "letter")`` (one of these values),
  ``Checked(s, predicate, "what is allowed")``.

``InputError`` is a ``theory.io.cli.UsageError``, so every command's dispatcher already turns it
into one line on stderr and exit status 2.  Standard library only (``theory`` is the bottom of
the dependency graph; see ``theory.io.files``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cli import UsageError
from .files import kind_of  # "a FIFO", "a directory", ...: one wording for inputs and outputs

__all__ = [
    "InputError",
    "MAX_DEPTH",
    "MAX_BYTES",
    "ANY",
    "Nullable",
    "OneOf",
    "Choice",
    "Checked",
    "check_input_file",
    "read_bytes",
    "read_text",
    "load_json",
    "parse_json",
    "check_shape",
    "iter_jsonl",
    "nesting_depth",
]

MAX_DEPTH = (
    64  # the deepest file we write is about 8 levels; 64 leaves room and stays far from the recursion limit
)
MAX_BYTES = 1 << 30  # 1 GiB: far above any result file (the largest summary is a few MB), far below memory


class InputError(UsageError):
    """An input file that cannot be used; the message is one line naming the file (and field)."""


class _Any:
    def __repr__(self):
        return "ANY"


ANY = _Any()


@dataclass(frozen=True)
class Nullable:
    shape: Any


@dataclass(frozen=True)
class OneOf:
    shapes: tuple

    def __init__(self, *shapes):
        object.__setattr__(self, "shapes", shapes)


@dataclass(frozen=True)
class Choice:
    """One of the listed values (compared with ==)."""

    values: tuple

    def __init__(self, *values):
        object.__setattr__(self, "values", values)


@dataclass(frozen=True)
class Checked:
    """``shape``, and then ``predicate(value)`` must hold; ``allowed`` says what is allowed."""

    shape: Any
    predicate: Callable[[Any], bool]
    allowed: str


def check_input_file(path, what: str = "input") -> Path:
    """Refuse, before any work, an input that is missing or not a regular file (a FIFO would
    block the reader forever; a directory or device is never what a command reads)."""
    text = os.fspath(path)
    if not text:
        raise InputError(f"{what}: empty path")
    try:
        mode = os.stat(text).st_mode
    except FileNotFoundError:
        raise InputError(f"{what}: {text} does not exist") from None
    except OSError as error:
        raise InputError(f"{what}: cannot read {text}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{what}: {text} is {kind_of(mode)}, not a regular file")
    return Path(text)


def read_bytes(path, what: str = "input", *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file.  Opened non-blocking and checked with fstat on the open
    descriptor, so a FIFO swapped in after ``check_input_file`` cannot hang us either."""
    text = os.fspath(path)
    check_input_file(text, what)
    try:
        fd = os.open(text, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputError(f"{what}: cannot read {text}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{what}: {text} is {kind_of(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise InputError(f"{what}: {text} is {info.st_size} bytes; at most {limit} are read")
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise InputError(f"{what}: {text} is more than {limit} bytes; at most {limit} are read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as error:
        raise InputError(f"{what}: cannot read {text}: {error.strerror or error}") from None
    finally:
        os.close(fd)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{source}: not UTF-8 text (byte {error.start} is 0x{data[error.start]:02x})"
        ) from None


def read_text(path, what: str = "input", *, limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file (InputError naming the byte where it is not UTF-8)."""
    return _decode(read_bytes(path, what, limit=limit), f"{what}: {os.fspath(path)}")


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def nesting_depth(text: str) -> int:
    """How deeply ``[``/``{`` nest in JSON text (brackets inside strings do not count).
    Linear in the text and free of recursion, so it is safe on any input."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(_STRINGS.sub("", text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _type_name(value) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


_EXPECTED = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    dict: "an object",
    list: "a list",
}


def _describe(shape) -> str:
    if isinstance(shape, type) and shape in _EXPECTED:
        return _EXPECTED[shape]
    if isinstance(shape, list):
        return "a list"
    if isinstance(shape, dict):
        return "an object"
    if isinstance(shape, Nullable):
        return f"{_describe(shape.shape)} or null"
    if isinstance(shape, OneOf):
        return " or ".join(_describe(s) for s in shape.shapes)
    if isinstance(shape, Checked):
        return _describe(shape.shape)
    if isinstance(shape, Choice):
        return "one of " + ", ".join(map(repr, shape.values))
    return "any value"


def _matches_type(value, shape) -> bool:
    if shape is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if shape is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, shape)


def _where(field: str) -> str:
    return f"field {field}" if field else "top level"


def check_shape(value, shape, source: str, field: str = "") -> None:
    """Raise InputError("SOURCE: field F: expected X, got Y") where ``value`` leaves ``shape``."""
    if shape is ANY:
        return
    if isinstance(shape, Nullable):
        if value is None:
            return
        if isinstance(shape.shape, type) and not _matches_type(
            value, shape.shape
        ):  # say "or null" in the line
            raise InputError(
                f"{source}: {_where(field)}: expected {_describe(shape)}, got {_type_name(value)}"
            )
        check_shape(value, shape.shape, source, field)
        return
    if isinstance(shape, OneOf):
        for option in shape.shapes:
            try:
                check_shape(value, option, source, field)
                return
            except InputError:
                continue
        raise InputError(f"{source}: {_where(field)}: expected {_describe(shape)}, got {_type_name(value)}")
    if isinstance(shape, Choice):
        if value not in shape.values or isinstance(value, bool) != any(
            isinstance(v, bool) for v in shape.values
        ):
            raise InputError(
                f"{source}: {_where(field)}: {value!r:.60} is not allowed; expected one of "
                f"{', '.join(map(repr, shape.values))}"
            )
        return
    if isinstance(shape, Checked):
        check_shape(value, shape.shape, source, field)
        if not shape.predicate(value):
            raise InputError(
                f"{source}: {_where(field)}: {value!r:.60} is not allowed; expected {shape.allowed}"
            )
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            raise InputError(f"{source}: {_where(field)}: expected a list, got {_type_name(value)}")
        if shape:
            for index, item in enumerate(value):
                check_shape(item, shape[0], source, f"{field}[{index}]")
        return
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise InputError(f"{source}: {_where(field)}: expected an object, got {_type_name(value)}")
        for key, sub in shape.items():
            if key == "*":
                continue
            optional = key.endswith("?")
            name = key[:-1] if optional else key
            path = f"{field}.{name}" if field else name
            if name not in value:
                if optional:
                    continue
                raise InputError(f"{source}: {_where(path)} is missing")
            check_shape(value[name], sub, source, path)
        if "*" in shape:
            named = {k.rstrip("?") for k in shape if k != "*"}
            for name, item in value.items():
                if name not in named:
                    check_shape(item, shape["*"], source, f"{field}.{name}" if field else name)
        return
    if isinstance(shape, type):
        if not _matches_type(value, shape):
            raise InputError(
                f"{source}: {_where(field)}: expected {_describe(shape)}, got {_type_name(value)}"
            )
        return
    raise TypeError(f"not a shape: {shape!r}")


def parse_json(text: str, source: str, shape=ANY, *, max_depth: int = MAX_DEPTH, object_pairs_hook=None):
    """Parse JSON text from ``source`` (a file name, "the endpoint's reply", ...) and check its
    shape; InputError naming ``source`` for anything wrong."""
    if nesting_depth(text) > max_depth:
        raise InputError(f"{source}: JSON nested deeper than {max_depth} levels")
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{source}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except RecursionError:  # nesting_depth should have caught it; never a traceback regardless
        raise InputError(f"{source}: JSON nested too deeply") from None
    except ValueError as error:  # an object_pairs_hook's refusal (e.g. a duplicate key)
        raise InputError(f"{source}: {error}") from None
    check_shape(value, shape, source)
    return value


def load_json(
    path, shape=ANY, what: str | None = None, *, max_depth: int = MAX_DEPTH, object_pairs_hook=None
):
    """Read, parse and validate one JSON file.  ``what`` names it in messages (a flag such as
    ``--accuracy``); the path is always named."""
    text = os.fspath(path)
    label = f"{what}: {text}" if what else text
    return parse_json(
        _decode(read_bytes(text, what or "input"), label),
        label,
        shape,
        max_depth=max_depth,
        object_pairs_hook=object_pairs_hook,
    )


def iter_jsonl(path, shape=ANY, what: str | None = None, *, torn_last_line_ok: bool = True) -> Iterator[Any]:
    """The records of a JSON-lines file, each validated.  An append-only log may end in a torn
    line (a writer killed mid-record): with ``torn_last_line_ok`` that last line is skipped;
    a bad line anywhere else is an InputError naming its line number."""
    text = os.fspath(path)
    label = f"{what}: {text}" if what else text
    lines = _decode(read_bytes(text, what or "input"), label).split("\n")
    last = len(lines) - 1
    while last >= 0 and not lines[last].strip():
        last -= 1
    for number, line in enumerate(lines[: last + 1], start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, f"{label} line {number}", shape)
        except InputError:
            # torn: the last record, not ended by a newline (the writer died mid-record)
            if torn_last_line_ok and number == last + 1 and last == len(lines) - 1:
                return
            raise
        yield record

"""``python -m training data``: generated task sequences as text, one per line:

    <input tokens, space-separated>\t<answer token>\t<hop count>

The same arguments always give byte-identical output.  Rows are produced in
blocks, so a long extra target window (--extra-target K, Section 3.6) never holds
more than a few million tokens in memory beyond the 17-token core of every row.

Where the rows go, and what a failed write costs:

- ``--out FILE``: written atomically (theory.io.files), so a full disk leaves the previous FILE
  as it was; one line on stderr, exit status 2.
- stdout: a full disk or an I/O error (``data > file``, ``data > /dev/full``) is one line
  on stderr and exit status 2 (what reached the file is incomplete: nothing can take it
  back); a closed stdout is refused the same way.  A reader that stops early
  (``data | head``) is not an error of ours, but not every row was delivered: nothing is
  printed and the exit status is 1.

Rows are written to stdout's file descriptor with ``os.write`` in a loop that checks every
count, not through ``sys.stdout``: with PYTHONUNBUFFERED set, ``sys.stdout`` writes to an
unbuffered raw file and drops what a short write left over, with no error (a truncated
file and exit status 0 on a full disk; exit 0 after ``| head``).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from theory.io.files import DISK_ERRORS, OutputError, atomic_open
from training.cli_common import TASK_HELP, UsageError, ascii_int, check_output, int_list, output_argument

from . import generators as gen
from .definitions import TASKS, check_count, check_extra, check_hops, check_seed, get_task
from .vocab import ALL_HOPS, MAX_HOPS, SEQ_LEN

_CHUNK_TOKENS = 1 << 22


def _hops(text: str) -> tuple[int, ...]:
    try:
        values = int_list(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated hop counts in 1..{MAX_HOPS}, got {text!r}"
        ) from None
    try:
        return check_hops(values)
    except ValueError as bad:
        raise argparse.ArgumentTypeError(str(bad)) from None


def add_data_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "data",
        help="write generated sequences as text",
        description="Write generated task sequences as text, one a line: the input "
        "tokens, the answer token and the hop count, separated by tabs.",
    )
    parser.add_argument("--task", required=True, choices=TASKS, help=TASK_HELP)
    parser.add_argument("--count", required=True, type=ascii_int, metavar="N", help="number of sequences")
    parser.add_argument("--seed", required=True, type=ascii_int, metavar="S", help="non-negative seed")
    parser.add_argument(
        "--hops",
        type=_hops,
        default=ALL_HOPS,
        metavar="H,..",
        help="hop counts to draw, in equal shares (default 1,2,3,4)",
    )
    parser.add_argument(
        "--extra-target",
        type=ascii_int,
        default=0,
        metavar="K",
        help="extra target-window symbols before the effective window (default 0)",
    )
    parser.add_argument(
        "--exact-balance",
        action="store_true",
        help="refuse a count for which hop shares, answer values and positions cannot be exactly equal",
    )
    output_argument(parser, "--out", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.set_defaults(handler=run)


def _lines(task, core, extra: int, seed: int):
    """The output text, in chunks of whole extension blocks (see generators.EXTRA_BLOCK)."""
    rows = gen.EXTRA_BLOCK * max(1, _CHUNK_TOKENS // (gen.EXTRA_BLOCK * (SEQ_LEN + extra)))
    vocab = task._vocab_array
    for start in range(0, len(core), rows):
        batch = task.extend(core.select(slice(start, start + rows)), extra, seed, row_start=start)
        tokens, answers = vocab[batch.inputs], vocab[batch.answers]
        yield "".join(
            f"{' '.join(row)}\t{answer}\t{hop}\n"
            for row, answer, hop in zip(tokens.tolist(), answers.tolist(), batch.hops.tolist())
        )


def run(args) -> int:
    for flag, check, value in (
        ("--count", check_count, args.count),
        ("--seed", check_seed, args.seed),
        ("--extra-target", check_extra, args.extra_target),
    ):
        try:
            check(value)
        except ValueError as bad:
            raise UsageError(f"{flag}: {bad}") from None
    if args.out is not None:
        # a bad destination is refused before any row is generated
        check_output(args.out, "--out", replace_shipped=args.replace_shipped)
    task = get_task(args.task)
    try:
        core = task.generate(args.count, args.seed, hops=args.hops, exact_balance=args.exact_balance)
    except ValueError as bad:
        raise UsageError(str(bad)) from None
    chunks = _lines(task, core, args.extra_target, args.seed)
    if args.out is None:
        return _write_stdout(chunks)
    _write_atomically(args.out, chunks)
    return 0


def _write_stdout(chunks) -> int:
    """Write every chunk to stdout; 0 when all of it went out, 1 when the reader closed the
    pipe; OutputError (one line, exit status 2) when the write itself failed."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise OutputError("stdout is closed; give --out FILE")
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (an in-process capture): its own write() must do
        fd = None
    try:
        sys.stdout.flush()  # anything printed before goes first
        for chunk in chunks:
            if fd is None:
                sys.stdout.write(chunk)
            else:
                _write_all(fd, chunk.encode("utf-8"))
        if fd is None:
            sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()  # the reader stopped early (`| head`): silent, as documented
        return 1
    except OSError as error:
        _silence_stdout()
        why = error.strerror or str(error)
        if error.errno in DISK_ERRORS:
            why += "; the output is incomplete"
        raise OutputError(f"cannot write the rows to stdout: {why}") from None
    return 0


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is out: a short count is retried, and the retry raises
    the error (ENOSPC, EFBIG, EPIPE) that cut it short."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[written:]


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush of it at exit cannot fail again and
    print "Exception ignored" after our one line."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def _write_atomically(path: str, chunks) -> None:
    """Stream ``chunks`` into ``path`` atomically.  The destination was checked before the
    work; one that turned bad since (its folder removed, the disk full) is still one line: an
    OSError here, an OutputError (a directory put at the path) through the dispatcher.
    Generating rows does no I/O, so an OSError here is the destination's."""
    try:
        with atomic_open(path, "w", parents=False) as handle:
            for chunk in chunks:
                handle.write(chunk)
    except OSError as bad:
        raise UsageError(f"--out: cannot write {path!r}: {bad.strerror or bad}") from None

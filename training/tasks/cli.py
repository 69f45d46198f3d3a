"""``python -m training data``: generated task sequences as text, one per line:

    <input tokens, space-separated>\t<answer token>\t<hop count>

The same arguments always give byte-identical output.  Rows are produced in
blocks, so a long extra target window (--extra-target K, Section 3.6) never holds
more than a few million tokens in memory beyond the 17-token core of every row.
"""

from __future__ import annotations

import argparse
import os
import sys

from theory.files import atomic_open
from training.cli_common import UsageError, check_output

from . import generators as gen
from .definitions import TASKS, check_count, check_extra, check_hops, check_seed, get_task
from .vocab import ALL_HOPS, MAX_HOPS, SEQ_LEN

_CHUNK_TOKENS = 1 << 22


def _hops(text: str) -> tuple[int, ...]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated hop counts in 1..{MAX_HOPS}, got {text!r}")
    try:
        return check_hops(values)
    except ValueError as bad:
        raise argparse.ArgumentTypeError(str(bad))


def add_data_parser(subparsers) -> None:
    parser = subparsers.add_parser("data", help="write generated sequences as text",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--count", required=True, type=int, metavar="N", help="number of sequences")
    parser.add_argument("--seed", required=True, type=int, metavar="S", help="non-negative seed")
    parser.add_argument("--hops", type=_hops, default=ALL_HOPS, metavar="H,..",
                        help="hop counts to draw, in equal shares (default 1,2,3,4)")
    parser.add_argument("--extra-target", type=int, default=0, metavar="K",
                        help="extra target-window symbols before the effective window (default 0)")
    parser.add_argument("--exact-balance", action="store_true",
                        help="refuse a count for which hop shares, answer values and positions cannot be exactly equal")
    parser.add_argument("--out", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.set_defaults(handler=run)


def _lines(task, core, extra: int, seed: int):
    """The output text, in chunks of whole extension blocks (see generators.EXTRA_BLOCK)."""
    rows = gen.EXTRA_BLOCK * max(1, _CHUNK_TOKENS // (gen.EXTRA_BLOCK * (SEQ_LEN + extra)))
    vocab = task._vocab_array
    for start in range(0, len(core), rows):
        batch = task.extend(core.select(slice(start, start + rows)), extra, seed, row_start=start)
        tokens, answers = vocab[batch.inputs], vocab[batch.answers]
        yield "".join(f"{' '.join(row)}\t{answer}\t{hop}\n"
                      for row, answer, hop in zip(tokens.tolist(), answers.tolist(), batch.hops.tolist()))


def run(args) -> int:
    for flag, check, value in (("--count", check_count, args.count), ("--seed", check_seed, args.seed),
                               ("--extra-target", check_extra, args.extra_target)):
        try:
            check(value)
        except ValueError as bad:
            raise UsageError(f"{flag}: {bad}") from None
    if args.out is not None:
        check_output(args.out, "--out")  # a bad destination is refused before any row is generated
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
    try:
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (e.g. `| head`): no traceback, and keep Python's
        # shutdown flush from failing on the closed pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


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

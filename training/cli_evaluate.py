"""``python -m training evaluate``: accuracy (overall and per hop) against total input length,
or on one of the paper's fixed splits.

    python -m training evaluate --run RUN --task T --lengths 17,50,100,...,5000 --json FILE
        [--count N] [--max-tokens B] [--seed S] [--threads K]
    python -m training evaluate --run RUN --task T --split test --json FILE

Each length n is the 17-token core plus n - 17 extra target-window symbols (Section 3.6);
see training.evaluate.  JSON: {task, run, lengths, accuracy, per_hop {"1": [...], ..},
n_per_length, ...}; with --split: {task, run, split, n, accuracy, per_hop {"1": ..}, loss}
(training.evaluate.split_accuracy).  Bad paths, a run of another task and bad values are one error line,
exit status 2.
"""

from __future__ import annotations

import json

from .checkpoints import RunError
from .cli_analyze import _lengths
from .cli_common import UsageError, add_compute_options, prepare_json_output
from .tasks import TASKS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="length generalisation of a run",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, metavar="RUN", help="run directory (its best weights are used)")
    parser.add_argument("--task", required=True, choices=TASKS)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--lengths", metavar="N,..", help="total input lengths, each >= 17")
    what.add_argument("--split", choices=("train", "validation", "test"),
                      help="instead: accuracy on this split of the paper's data (test: 45,600 sequences)")
    parser.add_argument("--json", required=True, metavar="FILE", help="write the result here (atomically)")
    parser.add_argument("--count", type=int, default=400, metavar="N", help="sequences per length (default 400)")
    parser.add_argument("--max-tokens", type=int, default=None, metavar="B",
                        help="cap the sequences of a length at B / length (at least 64); default: no cap")
    parser.add_argument("--seed", type=int, default=3, metavar="S", help="seed of the generated inputs (default 3)")
    add_compute_options(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    from .analysis import check_run
    from .checkpoints import load_model, write_json_atomic
    from .evaluate import length_generalisation, split_accuracy

    lengths = None if args.split else _lengths(args.lengths)
    if args.count < 1:
        raise UsageError(f"--count must be >= 1, got {args.count}")
    if args.max_tokens is not None and args.max_tokens < 17:
        raise UsageError(f"--max-tokens must be >= 17, got {args.max_tokens}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    out = prepare_json_output(args)
    try:
        check_run(args.run, args.task)
        model = load_model(args.run)
    except RunError as error:
        raise UsageError(str(error)) from None
    if args.split:
        result = split_accuracy(model, args.task, args.split, run=str(args.run), progress=not args.no_progress)
        write_json_atomic(out, result)
        print(json.dumps({"json": str(out), "split": args.split, "n": result["n"], "accuracy": result["accuracy"],
                          "per_hop": result["per_hop"]}))
        return 0
    result = length_generalisation(model, args.task, lengths, count=args.count, seed=args.seed,
                                   max_tokens=args.max_tokens, run=str(args.run), progress=not args.no_progress)
    write_json_atomic(out, result)
    print(json.dumps({"json": str(out), "lengths": result["lengths"],
                      "accuracy": [round(a, 4) for a in result["accuracy"]]}))
    return 0

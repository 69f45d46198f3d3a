"""The analysis room's commands: ``analyze`` and ``evaluate``.

``python -m training analyze``: positional/symbolic scores of every checkpoint of a run,
entropy, purity, frequency use, Index geometry and measured discrepancy, as one JSON file.

    python -m training analyze --run RUN --task T --json FILE [--method fast|rerun]
        [--checkpoint-dir DIR] [--n-inputs N] [--seed S] [--no-discrepancy]
        [--discrepancy-lengths 17,25,...] [--discrepancy-count N] [--threads K]

JSON (keys the figures read; see training.analysis.scores for every definition): task, run,
method, n_inputs, tau, seed, steps, best_step, validation [{step, overall, per_hop}],
layers, scores {positional, symbolic, entropy, entropy_normalised: [[per layer] per
step]}, purity {"0.1", "0.05": {count, pure_from_step, kind, rule, ...}}, frequency {step,
weights, weighted_id, frequency, ...}, index_geometry {layer, plane_id,
frequency, keys, queries, offsets, key_collapse, query_spread, ...}, measured_discrepancy
{step, lengths, layers [{layer, kind, dominant_id, angle, min, median, mean,
decay_exponent, theory {reading, values}}]}.  Bad paths, a run of another task (its
vocab.json) and bad values are one error line, exit status 2.

``python -m training evaluate``: accuracy (overall and per hop) against total input length,
or on one of the paper's fixed splits.

    python -m training evaluate --run RUN --task T --lengths 17,50,100,...,5000 --json FILE
        [--count N] [--max-tokens B] [--seed S] [--threads K]
    python -m training evaluate --run RUN --task T --split test --json FILE

Each length n is the 17-token core plus n - 17 extra target-window symbols (Section 3.6);
see training.analysis.evaluate.  JSON: {task, run, lengths, accuracy, per_hop {"1": [...], ..},
n_per_length, ...}; with --split: {task, run, split, n, accuracy, per_hop {"1": ..}, loss}
(training.analysis.evaluate.split_accuracy).  Bad paths, a run of another task and bad values are one error line,
exit status 2.
"""

from __future__ import annotations

import json

from training.cli_common import UsageError, add_compute_options, prepare_json_output
from training.model.checkpoints import RunError
from training.tasks.definitions import TASKS

# argparse shows these first lines of the two commands' descriptions above
ANALYZE_DESCRIPTION = '``python -m training analyze``: positional/symbolic scores of every checkpoint of a run,'
EVALUATE_DESCRIPTION = '``python -m training evaluate``: accuracy (overall and per hop) against total input length,'


def _lengths(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"expected comma-separated lengths, got {text!r}") from None
    if not values or min(values) < 17:
        raise UsageError(f"lengths must be integers >= 17 (the task's 17 tokens), got {text!r}")
    return values


def add_analyze_parser(subparsers) -> None:
    parser = subparsers.add_parser("analyze", help="scores, purity, frequency use, geometry, discrepancy of a run",
                                   description=ANALYZE_DESCRIPTION)
    parser.add_argument("--run", required=True, metavar="RUN", help="run directory (config, weights, vocab, metrics)")
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--json", required=True, metavar="FILE", help="write the analysis here (atomically)")
    parser.add_argument("--method", choices=("fast", "rerun"), default="fast",
                        help="fast (default): cross matrix; rerun: swap and recompute the layer")
    parser.add_argument("--checkpoint-dir", metavar="DIR", default=None,
                        help="where step-NNNNNN/ are (default: the run's own setting)")
    parser.add_argument("--n-inputs", type=int, default=100, metavar="N", help="inputs per checkpoint (default 100)")
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="seed of the input set (default 2605)")
    parser.add_argument("--no-discrepancy", action="store_true", help="skip the measured discrepancy")
    parser.add_argument("--discrepancy-lengths", default=None, metavar="N,..",
                        help="total lengths (default 17,25,50,100,200,400,850,1500,3000,5000)")
    parser.add_argument("--discrepancy-count", type=int, default=32, metavar="N", help="inputs per length (default 32)")
    add_compute_options(parser)
    parser.set_defaults(handler=run_analyze)


def run_analyze(args) -> int:
    from training.model.checkpoints import write_json_atomic

    from .dynamics import SCORE_SEED, analyse_run
    from .measured_discrepancy import DEFAULT_LENGTHS

    if args.n_inputs < 1 or args.discrepancy_count < 1:
        raise UsageError("--n-inputs and --discrepancy-count must be >= 1")
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    lengths = DEFAULT_LENGTHS if args.discrepancy_lengths is None else _lengths(args.discrepancy_lengths)
    out = prepare_json_output(args)
    try:
        result = analyse_run(args.run, args.task, method=args.method, checkpoint_dir=args.checkpoint_dir,
                             n_inputs=args.n_inputs, seed=SCORE_SEED if args.seed is None else args.seed,
                             discrepancy=not args.no_discrepancy, discrepancy_lengths=lengths,
                             discrepancy_count=args.discrepancy_count, progress=not args.no_progress)
    except RunError as error:
        raise UsageError(str(error)) from None
    write_json_atomic(out, result)
    summary = {"json": str(out), "steps": len(result["steps"]), "best_step": result["best_step"],
               "seconds": result["seconds"]}
    print(json.dumps(summary))
    return 0


def add_evaluate_parser(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="length generalisation of a run",
                                   description=EVALUATE_DESCRIPTION)
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
    parser.set_defaults(handler=run_evaluate)


def run_evaluate(args) -> int:
    from training.model.checkpoints import load_model, write_json_atomic

    from .dynamics import check_run
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

"""``python -m training analyze``: positional/symbolic scores of every checkpoint of a run,
entropy, purity, frequency use, Index geometry and measured discrepancy, as one JSON file.

    python -m training analyze --run RUN --task T --json FILE [--method fast|rerun]
        [--checkpoint-dir DIR] [--n-inputs N] [--seed S] [--no-discrepancy]
        [--discrepancy-lengths 17,25,...] [--discrepancy-count N] [--threads K]

JSON (keys the figures read; see training.analysis for every definition): task, run,
method, n_inputs, tau, seed, steps, best_step, validation [{step, overall, per_hop}],
layers, scores {positional, symbolic, entropy, entropy_normalised: [[per layer] per
step]}, purity {"0.1", "0.05": {count, pure_from_step, kind, rule, ...}}, frequency {step,
weights, weighted_id, frequency, ...}, index_geometry {layer, plane_id,
frequency, keys, queries, offsets, key_collapse, query_spread, ...}, measured_discrepancy
{step, lengths, layers [{layer, kind, dominant_id, angle, min, median, mean,
decay_exponent, theory {reading, values}}]}.  Bad paths, a run of another task (its
vocab.json) and bad values are one error line, exit status 2.
"""

from __future__ import annotations

import json

from .checkpoints import RunError
from .cli_common import UsageError, add_compute_options, prepare_json_output
from .tasks import TASKS


def _lengths(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"expected comma-separated lengths, got {text!r}") from None
    if not values or min(values) < 17:
        raise UsageError(f"lengths must be integers >= 17 (the task's 17 tokens), got {text!r}")
    return values


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("analyze", help="scores, purity, frequency use, geometry, discrepancy of a run",
                                   description=__doc__.splitlines()[0])
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
    parser.set_defaults(handler=run)


def run(args) -> int:
    from .analysis import SCORE_SEED, analyse_run
    from .checkpoints import write_json_atomic
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

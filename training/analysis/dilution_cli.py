"""``python -m training dilution``: softmax dilution of every layer of a run's best model at
every length (``training.analysis.dilution``), and with ``--accuracy`` the predicted against
the measured break length (``training.analysis.break_prediction``).

    python -m training dilution --run RUN --task T --json FILE [--lengths 17,25,...,5000]
        [--count N] [--seed S] [--accuracy LENGTH_JSON] [--query-scale log] [--device auto|cpu|cuda]
        [--threads K] [--no-progress]

``--accuracy`` names the run's ``evaluate --lengths`` JSON; it must start at the same length.
``--query-scale log`` measures a run trained without a query scale with the fixed scale switched
on at inference (as ``evaluate --query-scale``): how much of the dilution the scale undoes.
JSON: {task, run, variant, inference_query_scale, dilution {lengths, count, seed, layers [{layer, gap {q0, q0.1, q0.25,
q0.5, mean}, top_weight {...}}]}, breaks (with --accuracy)}.  Works for every RoPE variant:
the logits come from the model's own forward pass.  Bad values, an --accuracy file that is not
such a JSON (a FIFO, wrong types, an empty lengths list) and a --json that is an input or lies
in another run's folder are one error line, exit 2, before any work.
"""

from __future__ import annotations

import json

from theory.io.inputs import Checked, Nullable, load_json
from theory.io.provenance import provenance
from training.cli_common import (
    TASK_HELP,
    UsageError,
    add_compute_options,
    ascii_int,
    output_argument,
    prepare_json_output,
)
from training.model.gptj import INFERENCE_QUERY_SCALES
from training.run.checks import RunError
from training.tasks.definitions import TASKS

from .cli_checks import MAX_LENGTH, check_query_scale, check_seed_option, parse_lengths, read_run_config
from .limits import add_device_option, check_budget, device_of, forward_memory, forward_work

DESCRIPTION = "softmax dilution per layer and length of a run, and the break length it predicts"


def add_dilution_parser(subparsers) -> None:
    parser = subparsers.add_parser("dilution", help=DESCRIPTION, description=f"Measure the {DESCRIPTION}.")
    parser.add_argument(
        "--run", required=True, metavar="RUN", help="run directory (its best weights are used)"
    )
    parser.add_argument("--task", required=True, choices=TASKS, help=TASK_HELP)
    output_argument(
        parser, "--json", required=True, metavar="FILE", help="write the result here (atomically)"
    )
    parser.add_argument(
        "--lengths", default=None, metavar="N,..", help="total input lengths (default 17..5000)"
    )
    parser.add_argument(
        "--count", type=ascii_int, default=None, metavar="N", help="inputs per length (default 32)"
    )
    parser.add_argument(
        "--seed", type=ascii_int, default=None, metavar="S", help="seed of the inputs (default 5)"
    )
    parser.add_argument(
        "--accuracy",
        default=None,
        metavar="FILE",
        help="the run's length-generalisation JSON: add predicted and measured breaks",
    )
    parser.add_argument(
        "--query-scale",
        choices=INFERENCE_QUERY_SCALES,
        default=None,
        help="switch this query scale on at inference, for a run trained without one",
    )
    add_device_option(parser)
    add_compute_options(parser)
    parser.set_defaults(handler=run_dilution)


_ACCURACY = Nullable(Checked(float, lambda a: 0 <= a <= 1, "an accuracy in 0..1 or null"))
# what break_prediction.member_breaks reads of an ``evaluate --lengths`` JSON
ACCURACY_SHAPE = {
    "lengths": Checked(
        [int],
        lambda v: bool(v) and all(17 <= n <= MAX_LENGTH for n in v),
        f"a non-empty list of lengths in 17..{MAX_LENGTH}",
    ),
    "accuracy": [_ACCURACY],
    "per_hop": {"*": [_ACCURACY]},
}


def _read_accuracy(path, lengths) -> dict:
    """The --accuracy JSON, read through theory.io.inputs (a FIFO, deep nesting, wrong types: one
    line naming the file and field), its lists as long as its lengths."""
    data = load_json(path, ACCURACY_SHAPE, "--accuracy")
    n = len(data["lengths"])
    for field, values in (
        ("accuracy", data["accuracy"]),
        *((f"per_hop.{k}", v) for k, v in data["per_hop"].items()),
    ):
        if len(values) != n:
            raise UsageError(
                f"--accuracy: {path}: field {field} has {len(values)} values for {n} lengths; "
                f"expected one per length"
            )
    bad = next(
        (hop for hop in data["per_hop"] if not (hop.isascii() and hop.isdigit() and int(hop) >= 1)), None
    )
    if bad is not None:
        raise UsageError(
            f"--accuracy: {path}: field per_hop: key {bad[:40]!r} is not a hop count (1, 2, ...)"
        )
    if data["lengths"][0] != lengths[0]:
        raise UsageError(
            f"--accuracy {path} starts at length {data['lengths'][0]}, --lengths at {lengths[0]}: "
            f"they must start at the same length"
        )
    return data


def run_dilution(args) -> int:
    from training.model.gptj import scale_queries_at_inference
    from training.run.weights import load_model, write_json_atomic
    from training.tasks.definitions import get_task

    from .adapters import OurGPTJAdapter
    from .break_prediction import member_breaks
    from .dilution import DEFAULT_COUNT, DEFAULT_SEED, dilution_profile
    from .measured_discrepancy import DEFAULT_LENGTHS, TOKEN_BUDGET, batch_rows

    lengths = list(DEFAULT_LENGTHS) if args.lengths is None else parse_lengths(args.lengths, "--lengths")
    count = DEFAULT_COUNT if args.count is None else args.count
    if count < 1:
        raise UsageError(f"--count must be >= 1, got {count}")
    check_seed_option(args.seed)
    accuracy = None if args.accuracy is None else _read_accuracy(args.accuracy, lengths)
    device = device_of(args)
    out = prepare_json_output(args)
    config = read_run_config(args.run, args.task)
    check_query_scale(args, config)
    memory = max(
        forward_memory(config, min(count, batch_rows(n, TOKEN_BUDGET)) * n, internals=True) for n in lengths
    )
    check_budget(
        f"dilution at lengths up to {max(lengths):,} ({count} inputs per length)",
        memory,
        sum(forward_work(config, n, count) for n in lengths),
        "lower --lengths or --count",
    )
    try:
        model = load_model(args.run).to(device)
    except RunError as error:
        raise UsageError(str(error)) from None
    if args.query_scale:
        scale_queries_at_inference(model, args.query_scale)
    profile = dilution_profile(
        OurGPTJAdapter(model),
        get_task(args.task),
        lengths,
        count,
        DEFAULT_SEED if args.seed is None else args.seed,
        progress=not args.no_progress,
    )
    result = {
        "task": args.task,
        "run": str(args.run),
        "variant": model.config.variant(),
        "device": str(device),
        "inference_query_scale": args.query_scale,
        "dilution": profile,
    }
    if accuracy is not None:
        result["breaks"] = member_breaks(profile, accuracy)
    result["provenance"] = provenance(args.run)
    write_json_atomic(out, result)
    summary = {"json": str(out), "lengths": lengths, "seconds": profile["seconds"]}
    if accuracy is not None:
        summary["breaks"] = {
            "measured": result["breaks"]["measured"],
            **{rule: p["break"] for rule, p in result["breaks"]["predicted"].items()},
        }
    print(json.dumps(summary))
    return 0

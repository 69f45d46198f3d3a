"""The analysis room's commands: ``analyze`` and ``evaluate``.

``python -m training analyze``: positional/symbolic scores of every checkpoint of a run,
entropy, purity, frequency use, Index geometry and measured discrepancy, as one JSON file.

    python -m training analyze --run RUN --task T --json FILE [--method fast|rerun]
        [--checkpoint-dir DIR] [--n-inputs N] [--seed S] [--no-discrepancy]
        [--discrepancy-lengths 17,25,...] [--discrepancy-count N] [--threads K]
    python -m training analyze --model PATH --task T --json FILE [--dtype float32|float64]
        [--n-inputs N] [--seed S] [--batch-size B] [--threads K] [--no-progress]

With --model (an HF causal-LM folder or a GGUF file; see training.analysis.llm_analysis for
the JSON and training.analysis.llm_inputs for the token mapping and swap rule): per-head
scores, entropy, attention-sink share and frequency use of a pretrained RoPE LLM.

JSON (keys the figures read; see training.analysis.scores for every definition): task, run,
method, n_inputs, tau, seed, steps, best_step, validation [{step, overall, per_hop}],
layers, scores {positional, symbolic, entropy, entropy_normalised: [[per layer] per
step]}, purity {"0.1", "0.05": {count, pure_from_step, kind, rule, ...}}, frequency {step,
weights, weighted_id, frequency, ...}, index_geometry {layer, plane_id,
frequency, keys, queries, offsets, key_collapse, query_spread, ...}, measured_discrepancy
{step, lengths, layers [{layer, kind, dominant_id, angle, min, median, mean,
decay_exponent, theory {reading, values}}]}.  Bad paths, a run of another task (its
vocab.json), checkpoints of another task or model, a --json that is one of the run's files or
lies in another run's folder (training.cli_common.check_not_owned) and bad values are one error
line, exit status 2; so is a request whose estimated memory or time exceeds the limits below
(``check_budget``), refused before any model loads.

``python -m training evaluate``: accuracy (overall and per hop) against total input length,
or on one of the paper's fixed splits.

    python -m training evaluate --run RUN --task T --lengths 17,50,100,...,5000 --json FILE
        [--count N] [--max-tokens B] [--seed S] [--query-scale log] [--device auto|cpu|cuda] [--threads K]
    python -m training evaluate --run RUN --task T --split test --json FILE

Each length n is the 17-token core plus n - 17 extra target-window symbols (Section 3.6);
see training.analysis.evaluate.  ``--query-scale log`` evaluates a run trained without a query
scale with the fixed scale log(i+1)/log(17) switched on, its weights unchanged
(training.model.gptj.scale_queries_at_inference): a test of whether its break is softmax
dilution.  JSON: {task, run, lengths, accuracy, per_hop {"1": [...], ..}, n_per_length,
inference_query_scale (null or "log"), ...}; with --split: {task, run, split, n, accuracy, per_hop {"1": ..}, loss}
(training.analysis.evaluate.split_accuracy).  Bad paths, a run of another task, a --json that is
one of the run's files or lies in another run's folder, bad values and a request over the memory
or time limits below are one error line, exit status 2.
"""

from __future__ import annotations

import json

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

from .adapters import supported_families
from .cli_checks import (
    MAX_LENGTH,
    check_analysis_size,
    check_checkpoints_of_run,
    check_evaluation_size,
    check_query_scale,
    check_seed_option,
    parse_lengths,
    read_run_config,
)
from .limits import add_device_option, device_of
from .llm_cli import MAX_LLM_BATCH

# what --help shows: one plain sentence each (tests/test_help_texts.py)
ANALYZE_DESCRIPTION = (
    "Score every checkpoint of a run (positional and symbolic scores, entropy, purity, frequency "
    "use, Index geometry, measured discrepancy), or every head of a pretrained RoPE model, as "
    "one JSON file."
)
EVALUATE_DESCRIPTION = (
    "Measure a run's accuracy, overall and per hop, against total input length, or on one of "
    "the paper's fixed splits."
)


def add_analyze_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="scores, purity, frequency use, geometry, discrepancy of a run",
        description=ANALYZE_DESCRIPTION,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", metavar="RUN", help="run directory (config, weights, vocab, metrics)")
    source.add_argument(
        "--model",
        metavar="PATH",
        help="instead: a pretrained RoPE causal LM, an HF folder or a .gguf file (per-head scores, "
        f"frequency use, attention sink); families: {supported_families()}",
    )
    parser.add_argument("--task", required=True, choices=TASKS, help=TASK_HELP)
    output_argument(
        parser, "--json", required=True, metavar="FILE", help="write the analysis here (atomically)"
    )
    parser.add_argument(
        "--method",
        choices=("fast", "rerun"),
        default=None,
        help="fast (default): cross matrix; rerun: swap and recompute the layer (--run only)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        metavar="DIR",
        default=None,
        help="where step-NNNNNN/ are (default: the run's own setting)",
    )
    parser.add_argument(
        "--n-inputs", type=ascii_int, default=100, metavar="N", help="inputs per checkpoint (default 100)"
    )
    parser.add_argument(
        "--seed", type=ascii_int, default=None, metavar="S", help="seed of the input set (default 2605)"
    )
    parser.add_argument("--no-discrepancy", action="store_true", help="skip the measured discrepancy")
    parser.add_argument(
        "--discrepancy-lengths",
        default=None,
        metavar="N,..",
        help="total lengths (default 17,25,50,100,200,400,850,1500,3000,5000)",
    )
    parser.add_argument(
        "--discrepancy-count",
        type=ascii_int,
        default=None,
        metavar="N",
        help="inputs per length (default 32)",
    )
    parser.add_argument(
        "--dtype",
        choices=("float32", "float64"),
        default=None,
        help="--model only: precision of the model (default float32)",
    )
    parser.add_argument(
        "--batch-size",
        type=ascii_int,
        default=None,
        metavar="B",
        help=f"--model only: inputs per forward pass (default 16, at most {MAX_LLM_BATCH})",
    )
    add_compute_options(parser)
    parser.set_defaults(handler=run_analyze)


RUN_ONLY = ("method", "checkpoint_dir", "discrepancy_lengths", "discrepancy_count", "no_discrepancy")
MODEL_ONLY = ("dtype", "batch_size")


def _check_source_options(args) -> None:
    """Options of the other source (--run / --model) are refused, not silently ignored."""
    others = RUN_ONLY if args.model is not None else MODEL_ONLY
    given = [name for name in others if getattr(args, name) not in (None, False)]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        source = "--model" if args.model is not None else "--run"
        raise UsageError(f"{flags}: not an option of analyze {source}")


def run_analyze(args) -> int:
    _check_source_options(args)
    if args.model is not None:
        from .llm_cli import run_analyze_model

        return run_analyze_model(args)
    from training.run.weights import write_json_atomic

    from .dynamics import SCORE_SEED, analyse_run
    from .measured_discrepancy import DEFAULT_LENGTHS

    args.method = "fast" if args.method is None else args.method
    args.discrepancy_count = 32 if args.discrepancy_count is None else args.discrepancy_count
    if args.n_inputs < 1 or args.discrepancy_count < 1:
        raise UsageError(
            f"--n-inputs and --discrepancy-count must be >= 1, got {args.n_inputs} and "
            f"{args.discrepancy_count}"
        )
    check_seed_option(args.seed)
    lengths = (
        DEFAULT_LENGTHS
        if args.discrepancy_lengths is None
        else parse_lengths(args.discrepancy_lengths, "--discrepancy-lengths")
    )
    out = prepare_json_output(args)
    config = read_run_config(args.run, args.task)
    check_checkpoints_of_run(args, config)
    check_analysis_size(config, args.n_inputs, lengths, args.discrepancy_count, not args.no_discrepancy)
    try:
        result = analyse_run(
            args.run,
            args.task,
            method=args.method,
            checkpoint_dir=args.checkpoint_dir,
            n_inputs=args.n_inputs,
            seed=SCORE_SEED if args.seed is None else args.seed,
            discrepancy=not args.no_discrepancy,
            discrepancy_lengths=lengths,
            discrepancy_count=args.discrepancy_count,
            progress=not args.no_progress,
        )
    except RunError as error:
        raise UsageError(str(error)) from None
    result["provenance"] = provenance(args.run)
    write_json_atomic(out, result)
    summary = {
        "json": str(out),
        "steps": len(result["steps"]),
        "best_step": result["best_step"],
        "seconds": result["seconds"],
    }
    print(json.dumps(summary))
    return 0


def add_evaluate_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="length generalisation of a run", description=EVALUATE_DESCRIPTION
    )
    parser.add_argument(
        "--run", required=True, metavar="RUN", help="run directory (its best weights are used)"
    )
    parser.add_argument("--task", required=True, choices=TASKS, help=TASK_HELP)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--lengths", metavar="N,..", help=f"total input lengths, each in 17..{MAX_LENGTH}")
    what.add_argument(
        "--split",
        choices=("train", "validation", "test"),
        help="instead: accuracy on this split of the paper's data (test: 45,600 sequences)",
    )
    output_argument(
        parser, "--json", required=True, metavar="FILE", help="write the result here (atomically)"
    )
    parser.add_argument(
        "--count", type=ascii_int, default=400, metavar="N", help="sequences per length (default 400)"
    )
    parser.add_argument(
        "--max-tokens",
        type=ascii_int,
        default=None,
        metavar="B",
        help="cap the sequences of a length at B / length (at least 64); default: no cap",
    )
    parser.add_argument(
        "--seed", type=ascii_int, default=3, metavar="S", help="seed of the generated inputs (default 3)"
    )
    parser.add_argument(
        "--query-scale",
        choices=INFERENCE_QUERY_SCALES,
        default=None,
        help="switch this query scale on at inference, for a run trained without one: "
        "does the break go away when only the temperature grows like log i?",
    )
    add_device_option(parser)
    add_compute_options(parser)
    parser.set_defaults(handler=run_evaluate)


def run_evaluate(args) -> int:
    from training.model.gptj import scale_queries_at_inference
    from training.run.weights import load_model, write_json_atomic

    from .evaluate import length_generalisation, split_accuracy

    lengths = None if args.split else parse_lengths(args.lengths, "--lengths")
    if args.count < 1:
        raise UsageError(f"--count must be >= 1, got {args.count}")
    if args.max_tokens is not None and args.max_tokens < 17:
        raise UsageError(f"--max-tokens must be >= 17, got {args.max_tokens}")
    check_seed_option(args.seed)
    device = device_of(args)
    out = prepare_json_output(args)
    config = read_run_config(args.run, args.task)
    check_query_scale(args, config)
    if args.split:
        from training.tasks.datasets import check_cache_dir

        check_cache_dir()  # the split comes from the dataset cache: a bad cache folder fails now
    else:
        check_evaluation_size(config, lengths, args.count, args.max_tokens)
    try:
        model = load_model(args.run).to(device)
    except RunError as error:
        raise UsageError(str(error)) from None
    if args.query_scale:
        scale_queries_at_inference(model, args.query_scale)
    if args.split:
        result = split_accuracy(
            model, args.task, args.split, run=str(args.run), progress=not args.no_progress
        )
        result.update(
            device=str(device), inference_query_scale=args.query_scale, provenance=provenance(args.run)
        )
        write_json_atomic(out, result)
        print(
            json.dumps(
                {
                    "json": str(out),
                    "split": args.split,
                    "n": result["n"],
                    "accuracy": result["accuracy"],
                    "per_hop": result["per_hop"],
                }
            )
        )
        return 0
    result = length_generalisation(
        model,
        args.task,
        lengths,
        count=args.count,
        seed=args.seed,
        max_tokens=args.max_tokens,
        run=str(args.run),
        progress=not args.no_progress,
    )
    result.update(device=str(device), inference_query_scale=args.query_scale, provenance=provenance(args.run))
    write_json_atomic(out, result)
    print(
        json.dumps(
            {
                "json": str(out),
                "lengths": result["lengths"],
                "accuracy": [round(a, 4) for a in result["accuracy"]],
            }
        )
    )
    return 0

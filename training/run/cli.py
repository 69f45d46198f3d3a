"""The model room's commands: ``train`` and ``bench``.

``python -m training train``: train (or resume) the paper's GPT-J on one task.

Writes RUN/config.json + RUN/model.safetensors (best validation checkpoint, loadable
by ``transformers.GPTJForCausalLM.from_pretrained(RUN)``), RUN/vocab.json,
RUN/tokenizer.json + tokenizer_config.json (``AutoTokenizer``, training.run.hf_files),
RUN/metrics.jsonl and CKPT/step-NNNNNN/ (CKPT = RUN/checkpoints unless
--checkpoint-dir).  An existing run is never overwritten without --resume or
--force.  Bad input (missing or corrupt checkpoint, vocab.json of another task,
config not matching the weights, unknown device, a seed outside 0..2**64-1 or not in digits
0-9, more --seeds than one batch trains (64), an --out or
--checkpoint-dir that cannot be written, a run folder another train process holds, a
checkpoint folder of another run) is one error line, exit status 2, before any work.

``python -m training bench``: training steps per second, ours vs HF GPTJForCausalLM.

Prints one JSON object with ``speedup_vs_hf``, ``ours_steps_per_s`` and
``hf_steps_per_s`` (paper configuration, batch 64, 17 + 1 tokens; see training.run.bench.hf_compare).
``bench --k-table``: K seeds trained at once (K = 1, 2, 5, 10; on CUDA 1, 8, 64), eager and
compiled, with cold and warm compile times, side by side (training.run.bench.k_table); a text
table, or its JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from theory.io.files import atomic_write_json
from theory.io.provenance import provenance
from training.cli_common import TASK_HELP, UsageError, ascii_int, check_output, output_argument
from training.tasks.definitions import TASKS

from .checks import RunError, parse_seed
from .presets import PRESETS

# what --help shows: one plain sentence each (tests/test_help_texts.py)
TRAIN_DESCRIPTION = (
    "Train (or resume) the paper's GPT-J on one task; the run folder gets the best weights, the "
    "vocabulary and Hugging Face tokenizer files, the metrics log and the resolved recipe."
)
BENCH_DESCRIPTION = (
    "Measure training steps per second, ours against transformers' GPTJForCausalLM side by side, "
    "or (--k-table) K seeds trained as one model."
)


def add_train_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "train", help="train the GPT-J of Appendix C.2", description=TRAIN_DESCRIPTION
    )
    parser.add_argument("--task", required=True, choices=TASKS, help=TASK_HELP)
    output_argument(parser, "--out", kind="folder", required=True, metavar="RUN", help="run directory")
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default=None,
        help="paper (default): Appendix C.2; smoke: a tiny model for tests",
    )
    parser.add_argument(
        "--steps", type=ascii_int, default=None, metavar="N", help="optimizer steps (preset default)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help="change one recipe value, e.g. model.rotary_dim=64 or lr=3e-4 (repeatable; "
        "keys: training.run.recipe.KEYS)",
    )
    parser.add_argument(
        "--seed",
        default=None,
        metavar="S",  # read by checks.parse_seed: digits 0-9 only
        help="initial weights, dropout and data order (default 0)",
    )
    parser.add_argument(
        "--seeds",
        default=None,
        metavar="S,S,...",
        help="train several seeds of one recipe as one seed-batched model "
        "(training.run.batched_loop): seed S goes to RUN/seed-S, or to RUN with {seed} "
        "replaced by S when RUN contains {seed}; each folder is a complete run",
    )
    parser.add_argument(
        "--device", default="auto", metavar="auto|cpu|cuda", help="auto (default) takes CUDA when present"
    )
    parser.add_argument("--resume", action="store_true", help="continue RUN from its last checkpoint")
    parser.add_argument("--force", action="store_true", help="replace the run at RUN")
    output_argument(
        parser,
        "--checkpoint-dir",
        kind="folder",
        metavar="DIR",
        default=None,
        help="where step-NNNNNN/ go (default RUN/checkpoints; remembered for --resume)",
    )
    parser.add_argument(
        "--stop-at",
        type=ascii_int,
        default=None,
        metavar="STEP",
        help="checkpoint and stop after STEP (continue later with --resume)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--threads",
        type=ascii_int,
        default=None,
        metavar="N",
        help="torch CPU threads (default: chosen from the model and the machine, training.run.threads: "
        "1 for the presets' small models or on a busy machine)",
    )
    parser.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compile the training step with torch.compile, its code cached on disk for later runs "
        "(training.run.compile); on the CPU with deterministic kernels, so a compiled run "
        "is bit-reproducible on the same machine and thread count, resumed or not.  "
        "Default: compiled where a saved bench --k-table "
        "measurement of this device and model shows it faster and its warm compile under "
        "10%% of the run (compiled.compile_by_default), else eager; --resume keeps the run's "
        "choice.  With --seeds the default is eager: the members' own dropout streams split "
        "the graph, so little of it is compiled",
    )
    parser.set_defaults(handler=run_train)


def run_train(args) -> int:
    from .loop import train  # torch is imported only when a command needs it

    # the output policy (theory.io.output_policy) before any work; the run's own checks follow in runsetup
    check_output(args.out, "--out", kind="folder", own=[args.out], replace_shipped=args.replace_shipped)
    if args.checkpoint_dir is not None:
        check_output(
            args.checkpoint_dir,
            "--checkpoint-dir",
            kind="folder",
            own=[args.out],
            replace_shipped=args.replace_shipped,
        )
    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be >= 1, got {args.threads}")
    if args.seeds is not None:
        return _run_train_seeds(args)
    try:
        seed = None if args.seed is None else parse_seed(args.seed)
        summary = train(
            args.task,
            args.out,
            seed=seed,
            checkpoint_dir=args.checkpoint_dir,
            **_shared_options(args),
        )
    except RunError as error:
        raise UsageError(str(error)) from None
    if os.environ.get("RANK", "0") == "0":  # under torchrun, one summary line, not one per process
        print(json.dumps(summary))
    return 0


def _shared_options(args) -> dict:
    """The options ``train`` and ``train --seeds`` take alike (training.run.start.TrainRequest)."""
    return {
        "preset": args.preset,
        "steps": args.steps,
        "device": args.device,
        "resume": args.resume,
        "force": args.force,
        "stop_at": args.stop_at,
        "progress": not args.no_progress,
        "overrides": args.overrides,
        "compiled": args.compile,
        "threads": args.threads,
    }


def _run_train_seeds(args) -> int:
    """``train --seeds``: the members trained together; one JSON summary line, a list of members."""
    from .batched_loop import parse_seeds, train_seeds

    try:
        if args.seed is not None:
            raise RunError("--seed and --seeds exclude each other (--seeds S,S,... lists every seed)")
        if args.checkpoint_dir is not None:
            raise RunError("--checkpoint-dir does not go with --seeds (each member keeps RUN/checkpoints)")
        summary = train_seeds(
            args.task,
            args.out,
            parse_seeds(args.seeds),
            **_shared_options(args),
        )
    except RunError as error:
        raise UsageError(str(error)) from None
    print(json.dumps(summary))
    return 0


def add_bench_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench", help="training speed against transformers' GPT-J", description=BENCH_DESCRIPTION
    )
    parser.add_argument(
        "--rounds", type=ascii_int, default=None, help="alternating rounds (default 7; --k-table 3)"
    )
    parser.add_argument(
        "--steps-per-round",
        "--steps",
        type=ascii_int,
        default=None,
        metavar="N",
        help="steps per round (default 5; --k-table 3, raised there for a step too short to time alone)",
    )
    parser.add_argument(
        "--k-table",
        action="store_true",
        help="steps/s per member and fraction of the GEMM peak for K seeds at once, eager and "
        "compiled, with cold and warm compile times (training.run.bench.k_table)",
    )
    parser.add_argument(
        "--k", default=None, metavar="K,K,...", help="--k-table's K values (default 1,2,5,10; on cuda 1,8,64)"
    )
    parser.add_argument(
        "--compiled-k",
        default=None,
        metavar="K,K,...|none",
        help="--k-table's K values compiled (default: those of --k; none: eager rows only)",
    )
    parser.add_argument(
        "--preset", choices=sorted(PRESETS), default="paper", help="--k-table's recipe (default paper)"
    )
    parser.add_argument("--task", choices=TASKS, default="letter", help="--k-table's task (default letter)")
    parser.add_argument("--json", action="store_true", help="--k-table: print the JSON, not the text table")
    output_argument(
        parser,
        "--save",
        metavar="FILE.json",
        default=None,
        help="--k-table: also write the JSON to FILE (a new file).  Saved under "
        "training/reference/bench/ (with --replace-shipped), it decides where train compiles by "
        "default (training.run.compile.compile_by_default)",
    )
    parser.add_argument(
        "--batch-size",
        type=ascii_int,
        default=64,
        help="the comparison with HF's batch (default 64; --k-table trains the preset's batch)",
    )
    parser.add_argument("--device", default="cpu", metavar="cpu|cuda", help="where to train (default cpu)")
    parser.add_argument(
        "--threads",
        type=ascii_int,
        default=None,
        help="torch CPU threads (default: chosen from the model and the machine, training.run.threads)",
    )
    parser.set_defaults(handler=run_bench_command)


def run_bench_command(args) -> int:
    import torch

    from training.run.bench.hf_compare import check_bench_memory, run_bench

    if args.device not in ("cpu", "cuda"):
        raise UsageError(f"unknown device {args.device!r} (expected cpu or cuda)")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available")
    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be >= 1, got {args.threads}")
    if args.k_table:
        return _run_k_table(args)
    args.rounds = 7 if args.rounds is None else args.rounds
    args.steps_per_round = 5 if args.steps_per_round is None else args.steps_per_round
    if min(args.rounds, args.steps_per_round, args.batch_size) < 1:
        raise UsageError("--rounds, --steps-per-round and --batch-size must be >= 1")
    try:  # before anything is allocated (a batch of 10,000,000 asked for 87 GB)
        check_bench_memory(args.batch_size, args.device)
    except RunError as error:
        raise UsageError(str(error)) from None
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise UsageError("bench needs transformers (pip install -e '.[dev]')") from None
    _bench_threads(args, 128)  # the paper model's width (hf_compare trains the paper configuration)
    print(json.dumps(run_bench(args.rounds, args.steps_per_round, args.batch_size, args.device)))
    return 0


def _bench_threads(args, width: int) -> None:
    """``--threads N``, else ``training.run.threads``'s choice for a model of ``width``: one line on stderr."""
    from training.run.threads import apply_threads

    print(apply_threads(width, args.threads), file=sys.stderr, flush=True)


def _run_k_table(args) -> int:
    """``bench --k-table`` (training.run.bench.k_table): every flag checked before any work."""
    from training.run.bench.k_table import K_CPU, K_CUDA, check_k_table_memory, parse_ks, run_k_table
    from training.run.bench.k_table_summary import format_k_table

    try:
        ks = parse_ks(args.k) if args.k is not None else (K_CUDA if args.device == "cuda" else K_CPU)
        compiled_ks = (
            ks
            if args.compiled_k is None
            else ()
            if args.compiled_k.strip() == "none"
            else parse_ks(args.compiled_k, "--compiled-k")
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    rounds = 3 if args.rounds is None else args.rounds
    steps = 3 if args.steps_per_round is None else args.steps_per_round
    save = (
        None if args.save is None else check_output(args.save, "--save", replace_shipped=args.replace_shipped)
    )
    if save is not None and (save.exists() or save.suffix != ".json"):
        raise UsageError(f"--save {args.save}: must be a new .json file (it exists or has another suffix)")
    if min(rounds, steps) < 1:
        raise UsageError(f"--rounds and --steps must be >= 1, got {rounds} and {steps}")
    try:
        check_k_table_memory(args.task, args.preset, ks + compiled_ks, args.device)
    except RunError as error:
        raise UsageError(str(error)) from None
    from training.run.presets import get_preset
    from training.run.start import model_config

    _bench_threads(args, model_config(args.task, get_preset(args.preset), "--preset").n_embd)
    result = run_k_table(
        args.task,
        args.preset,
        ks,
        args.device,
        rounds,
        steps,
        compiled_ks=compiled_ks,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    if save is not None:
        atomic_write_json(save, {**result, "provenance": provenance()}, indent=1)
    print(json.dumps(result) if args.json else format_k_table(result))
    return 0

"""``python -m training bench``: training steps per second, ours vs HF GPTJForCausalLM.

Prints one JSON object with ``speedup_vs_hf``, ``ours_steps_per_s`` and
``hf_steps_per_s`` (paper configuration, batch 64, 17 + 1 tokens; see training.bench).
"""

from __future__ import annotations

import json

from .cli_common import UsageError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("bench", help="training speed against transformers' GPT-J",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (default 7)")
    parser.add_argument("--steps-per-round", type=int, default=5, metavar="K", help="steps per round (default 5)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu", metavar="cpu|cuda")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    import torch

    from .bench import run_bench

    if args.device not in ("cpu", "cuda"):
        raise UsageError(f"unknown device {args.device!r} (expected cpu or cuda)")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available")
    if min(args.rounds, args.steps_per_round, args.batch_size) < 1:
        raise UsageError("--rounds, --steps-per-round and --batch-size must be >= 1")
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise UsageError("bench needs transformers (pip install -e '.[dev]')") from None
    if args.threads:
        torch.set_num_threads(args.threads)
    print(json.dumps(run_bench(args.rounds, args.steps_per_round, args.batch_size, args.device)))
    return 0

"""``python -m training train``: train (or resume) the paper's GPT-J on one task.

Writes RUN/config.json + RUN/model.safetensors (best validation checkpoint, loadable
by ``transformers.GPTJForCausalLM.from_pretrained(RUN)``), RUN/vocab.json,
RUN/metrics.jsonl and CKPT/step-NNNNNN/ (CKPT = RUN/checkpoints unless
--checkpoint-dir).  An existing run is never overwritten without --resume or
--force.  Bad input (missing or corrupt checkpoint, vocab.json of another task,
config not matching the weights, unknown device) is one error line, exit status 2.
"""

from __future__ import annotations

import json

from .checkpoints import RunError
from .cli_common import UsageError
from .presets import PRESETS
from .tasks import TASKS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train the GPT-J of Appendix C.2",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--out", required=True, metavar="RUN", help="run directory")
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None,
                        help="paper (default): Appendix C.2; smoke: a tiny model for tests")
    parser.add_argument("--steps", type=int, default=None, metavar="N", help="optimizer steps (preset default)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="initial weights, dropout and data order (default 0)")
    parser.add_argument("--device", default="auto", metavar="auto|cpu|cuda",
                        help="auto (default) takes CUDA when present")
    parser.add_argument("--resume", action="store_true", help="continue RUN from its last checkpoint")
    parser.add_argument("--force", action="store_true", help="replace the run at RUN")
    parser.add_argument("--checkpoint-dir", metavar="DIR", default=None,
                        help="where step-NNNNNN/ go (default RUN/checkpoints; remembered for --resume)")
    parser.add_argument("--stop-at", type=int, default=None, metavar="STEP",
                        help="checkpoint and stop after STEP (continue later with --resume)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from .train import train  # torch is imported only when a command needs it

    try:
        summary = train(args.task, args.out, preset=args.preset, steps=args.steps, seed=args.seed,
                        device=args.device, resume=args.resume, force=args.force,
                        checkpoint_dir=args.checkpoint_dir, stop_at=args.stop_at,
                        progress=not args.no_progress)
    except RunError as error:
        raise UsageError(str(error)) from None
    print(json.dumps(summary))
    return 0

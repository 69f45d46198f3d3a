"""``python -m training llm``: a language model on the 1-hop tasks (Appendix H), results as JSON.

    python -m training llm --backend hf --model DIR --task number --json out.json
    python -m training llm --backend openai --model gpt-5.4 --task letter --json out.json \\
        [--base-url URL] [--api-key-env OPENAI_API_KEY] [--extra-body '{"reasoning_effort": "none"}']

The JSON format is documented in ``training.llm.evaluate``; ``--replies FILE`` also keeps
every item's reply as JSON lines.  The paper evaluated with reasoning disabled; for an
endpoint that needs a request field for that, pass it with ``--extra-body``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from theory.files import atomic_write_json, atomic_write_text
from training.cli_common import UsageError

from .backends import BackendError, HFBackend, OpenAIBackend
from .evaluate import DEFAULT_COUNT, LLM_SEEDS, LLM_TARGET_WINDOWS, check_int_list, evaluate
from .tasks import MAX_LLM_WINDOW


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")


def _temperature(text: str):
    if text == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'none', got {text!r}")


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def add_llm_parser(subparsers) -> None:
    p = subparsers.add_parser("llm", help="evaluate a language model on the 1-hop tasks (Appendix H)",
                              description=__doc__.splitlines()[0])
    p.add_argument("--backend", required=True, choices=("hf", "openai"))
    p.add_argument("--model", required=True, help="hf: local model directory; openai: the model name")
    p.add_argument("--task", required=True, choices=("number", "letter"))
    p.add_argument("--json", required=True, metavar="FILE", help="results file (written atomically)")
    p.add_argument("--lengths", type=_int_list, default=list(LLM_TARGET_WINDOWS), metavar="L,..",
                   help="target-window sizes (default: the paper's 11)")
    p.add_argument("--seeds", type=_int_list, default=list(LLM_SEEDS), metavar="S,..",
                   help="run numbers used as seeds (default 0,1,2,3,4)")
    p.add_argument("--count", type=int, default=DEFAULT_COUNT, metavar="N",
                   help=f"items per length and seed (default {DEFAULT_COUNT}; the paper does not say)")
    p.add_argument("--name", help="model name recorded in the results (default: --model)")
    p.add_argument("--std-ddof", type=int, default=0, choices=(0, 1), help="std over seeds (default 0)")
    p.add_argument("--replies", metavar="FILE", help="also write every item's reply as JSON lines")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    hf = p.add_argument_group("hf backend")
    hf.add_argument("--device", default="auto", help="auto, cpu, cuda, ... (default auto)")
    hf.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    hf.add_argument("--batch-size", type=int, default=8)
    hf.add_argument("--max-new-tokens", type=int, default=5)
    hf.add_argument("--chat-template", default="auto", choices=("auto", "on", "off"),
                    help="wrap prompts in the tokenizer's chat template (auto: if it has one)")
    api = p.add_argument_group("openai backend")
    api.add_argument("--base-url", default="https://api.openai.com/v1")
    api.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                     help="environment variable holding the API key (default OPENAI_API_KEY)")
    api.add_argument("--timeout", type=float, default=60.0, help="seconds per socket operation")
    api.add_argument("--max-attempts", type=int, default=4, help="calls per item at most (default 4)")
    api.add_argument("--backoff", type=float, default=1.0, help="first retry wait in seconds, doubled each time")
    api.add_argument("--workers", type=int, default=1, help="concurrent requests (default 1)")
    api.add_argument("--max-tokens", type=int, default=16)
    api.add_argument("--max-tokens-field", default="max_tokens",
                     help="request field for --max-tokens (some models want max_completion_tokens)")
    api.add_argument("--temperature", type=_temperature, default=0.0, help="a number, or 'none' to omit it")
    api.add_argument("--extra-body", type=_json_object, default=None, metavar="JSON",
                     help="extra request fields, a JSON object")
    p.set_defaults(handler=run)


def _backend(args):
    if args.backend == "openai":
        try:
            return OpenAIBackend(args.model, base_url=args.base_url, api_key_env=args.api_key_env,
                                 timeout=args.timeout, max_attempts=args.max_attempts, backoff=args.backoff,
                                 workers=args.workers, max_tokens=args.max_tokens,
                                 max_tokens_field=args.max_tokens_field, temperature=args.temperature,
                                 extra_body=args.extra_body)
        except ValueError as bad:
            raise UsageError(str(bad)) from None
    if not os.path.isdir(args.model):
        raise UsageError(f"--model: {args.model!r} is not a local model directory (nothing is downloaded)")
    try:
        backend = HFBackend.from_pretrained(args.model, device=args.device, dtype=args.dtype, name=args.name,
                                            max_new_tokens=args.max_new_tokens, batch_size=args.batch_size)
    except ValueError as bad:
        raise UsageError(str(bad)) from None
    has_template = bool(getattr(backend.tokenizer, "chat_template", None))
    if args.chat_template == "on" and not has_template:
        raise UsageError("--chat-template on: the tokenizer has no chat template")
    backend.chat_template = args.chat_template == "on" or (args.chat_template == "auto" and has_template)
    return backend


def run(args) -> int:
    if args.count < 1:
        raise UsageError(f"--count must be a positive integer, got {args.count}")
    try:  # checked before a model is loaded or a request is sent
        check_int_list("--lengths", args.lengths, 1, MAX_LLM_WINDOW)
        check_int_list("--seeds", args.seeds, 0)
    except ValueError as bad:
        raise UsageError(str(bad)) from None
    for path in (args.json, args.replies):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise UsageError(f"cannot write {path!r}: its directory does not exist")
    backend = _backend(args)
    try:
        results, records = evaluate(backend, args.task, args.lengths, args.seeds, args.count,
                                    ddof=args.std_ddof, progress=args.progress)
    except BackendError as fatal:
        print(f"python -m training llm: error: {fatal}", file=sys.stderr)
        return 1
    if args.name:
        results["model"] = args.name
    if args.replies:
        atomic_write_text(args.replies, "".join(json.dumps(r) + "\n" for r in records), parents=False)
    atomic_write_json(args.json, results, indent=1, trailing_newline=True, parents=False)
    for row in results["per_length"]:
        mean = "  n/a" if row["accuracy_mean"] is None else f"{row['accuracy_mean']:.3f}"
        std = "n/a" if row["accuracy_std"] is None else f"{row['accuracy_std']:.3f}"
        print(f"L={row['length']:<4} acc {mean} (std {std})  scored {row['n_scored']}/{row['n_items']}  "
              f"unparseable {row['n_unparseable']}  failed items {row['n_failed_items']}  "
              f"failed calls {row['n_failed_calls']}")
    failed = sum(row["n_failed_items"] for row in results["per_length"])
    if failed:
        print(f"python -m training llm: warning: {failed} item(s) got no reply and were not scored",
              file=sys.stderr)
    return 0

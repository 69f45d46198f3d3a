"""``python -m training llm``: a language model on the 1-hop tasks (Appendix H), results as JSON.

    python -m training llm --backend hf --model DIR|FILE.gguf --task number --json out.json
    python -m training llm --backend openai --model gpt-5.4 --task letter --json out.json \\
        [--base-url URL] [--api-key-env OPENAI_API_KEY] [--extra-body '{"reasoning_effort": "none"}']

The JSON format is documented in ``training.llm.evaluate``.  ``--replies FILE`` keeps
every item's reply as JSON lines, written as each reply arrives; rerun the same command
after a crash, Ctrl-C or a revoked key and only the items without a reply are asked
(``training.llm.journal``); one run at a time per replies file (a second exits 2,
``training.llm.lock``).  Every value and output is checked before any call (exit 2).
Exit 1: a fatal API error, more than ``--max-failed-share`` of the items without a reply,
or results with fewer answered items than the ``--json`` file already holds (that file is
kept; the new results go beside it, see ``training.llm.guards``).  The paper evaluated
with reasoning disabled; for an endpoint that needs a request field for that, pass it
with ``--extra-body``.

The hf backend reads an HF folder or a GGUF file, offline.  Its decoding defaults
(``auto``) follow what makes a local model's reply parseable (``decoding_defaults``);
the results and the printed table give the parse rate beside the accuracy.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from theory.io.files import check_output_file
from theory.io.inputs import InputError, parse_json
from theory.io.provenance import provenance
from training.cli_common import (
    TASK_HELP,
    UsageError,
    ascii_int,
    check_output,
    int_list,
    interrupted,
    output_argument,
    parse_int,
)

from .backends import BackendError, HFBackend, OpenAIBackend
from .decoding import AUTO_NEW_TOKENS, decoding_defaults
from .evaluate import DEFAULT_COUNT, LLM_SEEDS, LLM_TARGET_WINDOWS, check_int_list, evaluate
from .guards import (
    DEFAULT_MAX_FAILED_SHARE,
    answered_in,
    answered_in_results_file,
    aside_path,
    check_api_key,
    check_base_url,
    check_seconds,
    check_share,
    failure_verdict,
    write_results,
)
from .journal import RepliesError, RepliesFile
from .local_model import model_source
from .tasks import MAX_LLM_WINDOW


def _number_or(keyword: str, value, convert, what: str):
    """An argparse type: ``keyword`` gives ``value``, anything else must convert (one error text)."""

    def parse(text: str):
        if text == keyword:
            return value
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} or {keyword!r}, got {text!r}") from None

    return parse


_new_tokens = _number_or("auto", "auto", parse_int, "a positive integer")
_temperature = _number_or("none", None, float, "a number")


def _int_list(text: str) -> list[int]:
    try:
        return int_list(text)
    except ValueError as bad:
        raise argparse.ArgumentTypeError(str(bad)) from None


def _json_object(text: str) -> dict:
    try:  # the one JSON loader: nesting bounded, so a hostile value is one line, not a RecursionError
        return parse_json(text, "the value", dict)
    except InputError as bad:
        raise argparse.ArgumentTypeError(f"expected a JSON object: {bad}") from None


def add_llm_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "llm",
        help="evaluate a language model on the 1-hop tasks (Appendix H)",
        description="Evaluate a language model on the 1-hop tasks of Appendix H and write the "
        "accuracy per length and seed as JSON.",
    )
    p.add_argument(
        "--backend",
        required=True,
        choices=("hf", "openai"),
        help="hf: a local model read offline; openai: an OpenAI-compatible chat API",
    )
    p.add_argument(
        "--model", required=True, help="hf: local model folder or .gguf file; openai: the model name"
    )
    p.add_argument("--task", required=True, choices=("number", "letter"), help=TASK_HELP)
    output_argument(p, "--json", required=True, metavar="FILE", help="results file (written atomically)")
    p.add_argument(
        "--lengths",
        type=_int_list,
        default=list(LLM_TARGET_WINDOWS),
        metavar="L,..",
        help="target-window sizes (default: the paper's 11)",
    )
    p.add_argument(
        "--seeds",
        type=_int_list,
        default=list(LLM_SEEDS),
        metavar="S,..",
        help="run numbers used as seeds (default 0,1,2,3,4)",
    )
    p.add_argument(
        "--count",
        type=ascii_int,
        default=DEFAULT_COUNT,
        metavar="N",
        help=f"items per length and seed (default {DEFAULT_COUNT}; the paper does not say)",
    )
    p.add_argument("--name", help="model name recorded in the results (default: --model)")
    p.add_argument("--std-ddof", type=ascii_int, default=0, choices=(0, 1), help="std over seeds (default 0)")
    output_argument(
        p,
        "--replies",
        metavar="FILE",
        help="keep every item's reply as JSON lines, saved as it arrives; a rerun with the same file "
        "asks only the items without a reply",
    )
    p.add_argument(
        "--max-failed-share",
        type=float,
        default=DEFAULT_MAX_FAILED_SHARE,
        metavar="F",
        help="exit 1 if more than this share of the items got no reply "
        f"(default {DEFAULT_MAX_FAILED_SHARE:g}; 0 tolerates none, 1 any)",
    )
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    hf = p.add_argument_group("hf backend")
    hf.add_argument("--device", default="auto", help="auto, cpu, cuda, ... (default auto)")
    hf.add_argument(
        "--dtype",
        default="auto",
        choices=("auto", "float32", "bfloat16", "float16"),
        help="the weights' dtype (auto: the model's own; default auto)",
    )
    hf.add_argument("--batch-size", type=ascii_int, default=8, help="prompts generated at once (default 8)")
    hf.add_argument(
        "--max-new-tokens",
        type=_new_tokens,
        default="auto",
        metavar="N|auto",
        help=f"tokens generated per reply (auto: {AUTO_NEW_TOKENS[False]} without the chat template, "
        f"where the reply ends at its first newline; {AUTO_NEW_TOKENS[True]} with it)",
    )
    hf.add_argument(
        "--chat-template",
        default="auto",
        choices=("auto", "on", "off"),
        help="wrap prompts in the tokenizer's chat template (auto: off, see training.llm.decoding)",
    )
    api = p.add_argument_group("openai backend")
    api.add_argument(
        "--base-url",
        default="https://api.openai.com/v1",
        help="the API's base URL (default https://api.openai.com/v1)",
    )
    api.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY)",
    )
    api.add_argument("--timeout", type=float, default=60.0, help="seconds per socket operation")
    api.add_argument("--max-attempts", type=ascii_int, default=4, help="calls per item at most (default 4)")
    api.add_argument(
        "--backoff", type=float, default=1.0, help="first retry wait in seconds, doubled each time"
    )
    api.add_argument("--workers", type=ascii_int, default=1, help="concurrent requests (default 1)")
    api.add_argument("--max-tokens", type=ascii_int, default=16, help="tokens per reply at most (default 16)")
    api.add_argument(
        "--max-tokens-field",
        default="max_tokens",
        help="request field for --max-tokens (some models want max_completion_tokens)",
    )
    api.add_argument("--temperature", type=_temperature, default=0.0, help="a number, or 'none' to omit it")
    api.add_argument(
        "--extra-body",
        type=_json_object,
        default=None,
        metavar="JSON",
        help="extra request fields, a JSON object",
    )
    p.set_defaults(handler=run)


PROG = "python -m training llm"


def _check_positive(args, *names: str) -> None:
    for name in names:
        if getattr(args, name) < 1:
            raise ValueError(
                f"--{name.replace('_', '-')}: {getattr(args, name)} is not allowed; allowed: an integer >= 1"
            )


def _check_values(args) -> None:
    """Every value, before a model is loaded or a request is sent (ValueError, one line)."""
    if args.count < 1:
        raise ValueError(f"--count must be a positive integer, got {args.count}")
    check_int_list("--lengths", args.lengths, 1, MAX_LLM_WINDOW)
    check_int_list("--seeds", args.seeds, 0)
    check_share("--max-failed-share", args.max_failed_share)
    if args.backend == "hf":
        _check_positive(args, "batch_size")
        decoding_defaults(args.chat_template, args.max_new_tokens)  # raises for a bad --max-new-tokens
        return
    check_base_url("--base-url", args.base_url)
    check_seconds("--timeout", args.timeout, zero_allowed=False)
    check_seconds("--backoff", args.backoff, zero_allowed=True)
    _check_positive(args, "max_attempts", "workers", "max_tokens")
    if args.temperature is not None and not (math.isfinite(args.temperature) and args.temperature >= 0):
        raise ValueError(
            f"--temperature: {args.temperature!r} is not allowed; allowed: a finite number >= 0, or 'none'"
        )
    if args.api_key_env:
        check_api_key(args.api_key_env, os.environ.get(args.api_key_env, ""))


def _check_outputs(args) -> tuple[int | None, RepliesFile | None]:
    """Before any call: both outputs writable and distinct; the answered items of an
    existing results file (never to be replaced by fewer); the replies file locked and read."""
    model = [args.model] if args.backend == "hf" else []  # a local model folder or GGUF file is an input
    _checked(args.json, "--json", model, args.replace_shipped)
    if args.replies is None:
        return answered_in_results_file(args.json), None
    _checked(args.replies, "--replies", model, args.replace_shipped)
    if os.path.realpath(args.json) == os.path.realpath(args.replies):
        raise ValueError(
            f"--json and --replies are the same file {args.json!r}; allowed: two different files"
        )
    previous = answered_in_results_file(args.json)
    if previous is not None:
        check_output_file(aside_path(args.json), "--json (where fewer results would go)")
    return previous, RepliesFile(args.replies, warn=_warn)


def _checked(path, flag: str, inputs: list, replace_shipped: bool) -> None:
    """The output policy every command applies (training.cli_common.check_output), as the
    ValueError this module's pre-flight turns into one line."""
    try:
        check_output(path, flag, inputs=inputs, replace_shipped=replace_shipped)
    except UsageError as error:
        raise ValueError(str(error)) from None


def _warn(text: str) -> None:
    print(f"{PROG}: warning: {text}", file=sys.stderr)


def _backend(args):
    if args.backend == "openai":
        try:
            return OpenAIBackend(
                args.model,
                base_url=args.base_url,
                api_key_env=args.api_key_env,
                timeout=args.timeout,
                max_attempts=args.max_attempts,
                backoff=args.backoff,
                workers=args.workers,
                max_tokens=args.max_tokens,
                max_tokens_field=args.max_tokens_field,
                temperature=args.temperature,
                extra_body=args.extra_body,
            )
        except ValueError as bad:
            raise UsageError(str(bad)) from None
    try:
        model_source(args.model)  # before the (slow) libraries load: a bad path is one line
    except ValueError as bad:
        raise UsageError(str(bad)) from None
    try:
        backend = HFBackend.from_pretrained(
            args.model, device=args.device, dtype=args.dtype, name=args.name, batch_size=args.batch_size
        )
    except ValueError as bad:
        if str(bad).startswith("--model:"):  # ours, worded already (a GGUF without gguf, a full cache disk)
            raise UsageError(str(bad)) from None
        raise UsageError(f"--model: cannot load a model from {args.model!r}: {_first_line(bad)}") from None
    except (OSError, KeyError, RuntimeError, TypeError, EOFError) as bad:  # e.g. a truncated or foreign file
        raise UsageError(f"--model: cannot load a model from {args.model!r}: {_first_line(bad)}") from None
    has_template = bool(getattr(backend.tokenizer, "chat_template", None))
    if args.chat_template == "on" and not has_template:
        raise UsageError("--chat-template on: the tokenizer has no chat template")
    backend.chat_template, backend.max_new_tokens = decoding_defaults(args.chat_template, args.max_new_tokens)
    return backend


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _print_table(results: dict) -> None:
    def show(value, width=5):
        return "n/a".rjust(width) if value is None else f"{value:.3f}"

    for row in results["per_length"]:
        seeds = "/".join(show(rate, 3) for rate in row["parse_rate_per_seed"])
        print(
            f"L={row['length']:<4} acc {show(row['accuracy_mean'])} (std {show(row['accuracy_std'], 3)})  "
            f"parsed {show(row['parse_rate'])} (per seed {seeds})  "
            f"scored {row['n_scored']}/{row['n_items']}  "
            f"unparseable {row['n_unparseable']}  failed items {row['n_failed_items']}  "
            f"failed calls {row['n_failed_calls']}"
        )


def run(args) -> int:
    try:
        _check_values(args)
        previous, journal = _check_outputs(args)
    except ValueError as bad:  # OutputError, RepliesError and LockError are ValueErrors too
        raise UsageError(str(bad)) from None
    try:  # the replies file stays locked until the results are written (training.llm.lock)
        return _run(args, previous, journal)
    finally:
        if journal is not None:
            journal.release()


def _run(args, previous: int | None, journal: RepliesFile | None) -> int:
    backend = _backend(args)
    kept = f"; the replies received are kept in {args.replies}: rerun to continue" if args.replies else ""
    try:
        results, _ = evaluate(
            backend,
            args.task,
            args.lengths,
            args.seeds,
            args.count,
            ddof=args.std_ddof,
            progress=args.progress,
            journal=journal,
        )
    except RepliesError as bad:
        raise UsageError(str(bad)) from None
    except BackendError as fatal:
        print(f"{PROG}: error: {fatal}{kept}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return interrupted(PROG, kept)
    except OSError as failed:  # e.g. the disk filled while the replies file was rewritten
        print(f"{PROG}: error: {failed}{kept}", file=sys.stderr)
        return 1
    if args.name:
        results["model"] = args.name
    results["provenance"] = provenance(
        args.model if args.backend == "hf" else None
    )  # a remote model has no file
    try:
        aside = write_results(args.json, results, previous)
    except OSError as failed:
        print(f"{PROG}: error: cannot write --json {args.json}: {failed}{kept}", file=sys.stderr)
        return 1
    _print_table(results)
    status = 0
    if aside is not None:
        print(
            f"{PROG}: error: {args.json} holds {previous} answered items, these results only "
            f"{answered_in(results)}: it is left as it was and the new results went to {aside}",
            file=sys.stderr,
        )
        status = 1
    line, fatal = failure_verdict(results, args.max_failed_share)
    if line:
        print(f"{PROG}: {'error' if fatal else 'warning'}: {line}", file=sys.stderr)
        status = 1 if fatal else status
    return status

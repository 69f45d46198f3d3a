"""The ``--model`` half of ``python -m training analyze`` (the parser is in
``training.analysis.cli``): check everything cheap first (values, the --json destination,
the model path, the model's family: ``training.analysis.llm_load``), then load the model,
analyse it (``training.analysis.llm_analysis``), write the JSON atomically and print one line
per head, then a one-line JSON summary.
"""

from __future__ import annotations

import json

from training.cli_common import UsageError, prepare_json_output

DEFAULT_BATCH = 16
MAX_LLM_BATCH = 256  # a batch's cross matrices: layers x B x heads x T^2 float64 (0.7 GB for SmolLM2 at 256)


def _check_values(args) -> None:
    from training.tasks.definitions import check_seed

    if args.n_inputs < 1:
        raise UsageError(f"--n-inputs must be >= 1, got {args.n_inputs}")
    if args.batch_size is not None and not 1 <= args.batch_size <= MAX_LLM_BATCH:
        raise UsageError(f"--batch-size must be in 1..{MAX_LLM_BATCH}, got {args.batch_size}")
    if args.seed is not None:
        try:
            check_seed(args.seed)
        except ValueError as error:
            raise UsageError(f"--{error}") from None


def _load(args):
    """(model, tokenizer), or a UsageError naming what is missing or wrong: the path and the
    model's family are checked before anything loads (``llm_load``)."""
    from .adapters import adapter_for
    from .llm_load import check_source, load_for_analysis

    try:
        check_source(args.model)
    except ValueError as error:
        raise UsageError(str(error)) from None
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise UsageError("analyze --model needs transformers: pip install 'rope-heads[llm]'") from None
    try:
        model, tokenizer = load_for_analysis(
            args.model, args.dtype or "float32", progress=not args.no_progress
        )
    except (OSError, KeyError, RuntimeError, ValueError) as error:  # a truncated or foreign file, say
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(
            first
            if str(error).startswith("--model")
            else f"--model {args.model}: cannot load it as a causal LM: {first}"
        ) from None
    try:
        adapter_for(model)  # settings of a supported family that its adapter refuses, before any work
    except ValueError as error:
        raise UsageError(
            f"--model {args.model}: {error}" if str(args.model) not in str(error) else str(error)
        ) from None
    return model, tokenizer


def run_analyze_model(args) -> int:
    from theory.io.provenance import provenance
    from training.run.weights import write_json_atomic

    from .llm_analysis import analyse_llm, head_table
    from .scores import SCORE_SEED

    _check_values(args)
    out = prepare_json_output(args)
    model, tokenizer = _load(args)
    result = analyse_llm(
        model,
        tokenizer,
        args.task,
        n_inputs=args.n_inputs,
        seed=SCORE_SEED if args.seed is None else args.seed,
        batch_size=args.batch_size or DEFAULT_BATCH,
        progress=not args.no_progress,
        name=str(args.model),
    )
    write_json_atomic(out, {**result, "provenance": provenance(args.model)})
    print(head_table(result))
    print(
        json.dumps(
            {
                "json": str(out),
                "model": str(args.model),
                "layers": result["layers"],
                "heads": result["heads"],
                "swaps_used_mean": result["swaps"]["used_mean"],
                "seconds": result["seconds"],
            }
        )
    )
    return 0

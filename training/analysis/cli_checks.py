"""The argument checks the run commands share (``analyze``, ``evaluate``, ``dilution``).

Each turns a bad value, a run of another task or model, or a request over the memory and time
limits (``training.analysis.limits``) into a ``UsageError`` -- one line, exit status 2 --
before any model loads.  Separate from the parsers in ``training.analysis.cli`` and
``training.analysis.dilution_cli`` so that both use one implementation of each check.
"""

from __future__ import annotations

from training.cli_common import UsageError, int_list
from training.run.checks import RunError
from training.tasks.definitions import MAX_EXTRA_TARGET, check_seed

from .limits import check_budget, forward_memory, forward_work

__all__ = [
    "MAX_LENGTH",
    "parse_lengths",
    "read_run_config",
    "check_checkpoints_of_run",
    "check_query_scale",
    "check_evaluation_size",
    "check_analysis_size",
    "check_seed_option",
]

# The longest input the task generator builds: its 17 tokens plus MAX_EXTRA_TARGET symbols.
MAX_LENGTH = 17 + MAX_EXTRA_TARGET


def parse_lengths(text: str, option: str) -> list[int]:
    try:
        values = int_list(text)
    except ValueError:
        raise UsageError(f"{option}: expected comma-separated lengths, got {text!r}") from None
    if not values or min(values) < 17 or max(values) > MAX_LENGTH:
        raise UsageError(
            f"{option}: lengths must be integers in 17..{MAX_LENGTH} (the task's 17 tokens plus at "
            f"most {MAX_EXTRA_TARGET:,} extra symbols), got {text!r}"
        )
    return values


def read_run_config(run, task):
    """The run's model config (light: JSON only), after checking RUN is a run of ``task``."""
    from training.run.weights import read_config

    from .dynamics import check_run

    try:
        check_run(run, task)
        return read_config(run)
    except RunError as error:
        raise UsageError(str(error)) from None


def check_checkpoints_of_run(args, config) -> None:
    """Refuse (UsageError) checkpoints that are not of this run: another task (their
    training_state.json settings) or another model (their config.json against RUN/config.json).
    Read before any model loads; only the small JSON files are read."""
    from dataclasses import fields

    from training.run.checkpoints import list_checkpoints, read_state_info
    from training.run.weights import read_config
    from training.tasks.definitions import get_task

    from .dynamics import checkpoint_dir_of

    task = get_task(args.task).name
    try:
        ckpt_dir = checkpoint_dir_of(args.run, args.checkpoint_dir)
        checkpoints = list_checkpoints(ckpt_dir)  # one architecture among them, or RunError
        if not checkpoints:
            return  # analyse_run says so, naming the folder
        theirs = read_config(checkpoints[0][1])
        tasks = [(read_state_info(path)["settings"]["task"], path) for _, path in checkpoints]
    except RunError as error:
        raise UsageError(str(error)) from None
    flag = "--checkpoint-dir" if args.checkpoint_dir is not None else "the checkpoint folder"
    other = next(((name, path) for name, path in tasks if name != task), None)
    if other is not None:
        raise UsageError(
            f"{flag} {ckpt_dir}: {other[1].name} is a checkpoint of the {other[0]} task (its "
            f"training_state.json), not of --task {task}; pass the checkpoints of {args.run}"
        )
    differ = next(
        (f.name for f in fields(config) if getattr(config, f.name) != getattr(theirs, f.name)), None
    )
    if differ is not None:
        raise UsageError(
            f"{flag} {ckpt_dir}: its checkpoints are of another model than {args.run} ({differ} "
            f"{getattr(theirs, differ)!r} in {checkpoints[0][1].name}/config.json, "
            f"{getattr(config, differ)!r} in the run's); pass the checkpoints of {args.run}"
        )


def check_query_scale(args, config) -> None:
    """Refuse --query-scale for a run that was trained with a scale (it already has one)."""
    if args.query_scale and config.query_scale != "none":
        raise UsageError(
            f"--query-scale {args.query_scale}: {args.run} was trained with query_scale="
            f"{config.query_scale}; the option is for a run trained without one (query_scale=none)"
        )


def check_evaluation_size(config, lengths, count: int, max_tokens) -> None:
    """Refuse (UsageError) a length-generalisation request over the limits."""
    from .evaluate import BATCH_TOKENS, MIN_COUNT, batch_size_for, sequences_for

    memory, work = 0, 0.0
    for n in lengths:
        m = sequences_for(n, count, max_tokens, MIN_COUNT)
        # a length's inputs are generated at once (int64, with the generator's temporaries)
        held = 3 * 8 * m * n + forward_memory(config, batch_size_for(n, BATCH_TOKENS) * n)
        memory, work = max(memory, held), work + forward_work(config, n, m)
    check_budget(
        f"evaluating lengths up to {max(lengths):,} ({count} per length)",
        memory,
        work,
        "lower --count or the lengths, or cap the sequences with --max-tokens",
    )


def check_analysis_size(config, n_inputs: int, lengths, count: int, discrepancy: bool) -> None:
    """Refuse (UsageError) an analysis over the limits: the score inputs (every layer's hidden
    states and keys of all of them at once, float64, 17 tokens) and the measured discrepancy."""
    from .measured_discrepancy import TOKEN_BUDGET, batch_rows

    memory = forward_memory(config, n_inputs * 17, internals=True, itemsize=8) + 3 * 8 * 17 * n_inputs
    check_budget(f"scoring {n_inputs:,} inputs per checkpoint", memory, 0.0, "lower --n-inputs")
    if discrepancy:
        memory = max(
            forward_memory(config, min(count, batch_rows(n, TOKEN_BUDGET)) * n, internals=True)
            + 3 * 8 * count * n
            for n in lengths
        )
        work = sum(forward_work(config, n, count) for n in lengths)
        check_budget(
            f"the measured discrepancy at lengths up to {max(lengths):,} ({count} inputs per length)",
            memory,
            work,
            "lower --discrepancy-lengths or --discrepancy-count, or pass --no-discrepancy",
        )


def check_seed_option(seed) -> None:
    if seed is not None:
        try:
            check_seed(seed)
        except ValueError as error:
            raise UsageError(f"--{error}") from None

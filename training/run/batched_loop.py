"""``train --seeds 0,1,2``: K runs of one recipe that differ only in seed, trained as one batched model.

Each member writes its own run folder exactly as ``train --seed S`` would (the same files,
loadable by every command, resumable alone or batched): ``--out DIR`` puts seed S in
``DIR/seed-S``; an ``--out`` containing ``{seed}`` names each folder itself (the study runner's
``ROOT/VARIANT/TASK/seed-{seed}/run``).  The settings line of ``metrics.jsonl`` adds
``batched_seeds``, the members trained together.

Per member, as in its single run (``training.model.batched`` says how): initial weights, dropout
stream and data order (``step.training_batch`` with its seed), AdamW state, learning-rate
schedule, gradient clipping of its own global norm (``step.train_step``, the one step of every
run), validation, best weights, checkpoints and log (``loop.RunRecord``), through the single run's
loop (``loop.run_steps``).  Only the forward and backward pass are shared, as batched products; on
CPU each member's losses equal its single run's up to float reassociation
(tests/test_batched_training.py).

Resume: ``--resume`` continues every member from the last checkpoint step all of them have (a
kill while the members' checkpoints of one step were being written leaves some one step ahead;
they redo it and write the same files again).  Each member keeps its own recorded settings;
what the batch must share -- the recipe, the step count, compiled or eager -- must agree, else
the resume is one line naming the member that differs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

import torch

from training.model.batched import BatchedGPTJ
from training.model.config import ModelConfig
from training.tasks.vocab import SEQ_LEN

from .checkpoints import checkpoint_name, list_checkpoints
from .checks import RunError, parse_seed
from .compile import compile_choice, compile_module
from .distributed import SINGLE
from .loop import RunRecord, run_steps, start_records
from .memory import check_memory
from .metrics import Metrics
from .presets import Preset
from .setup import fresh_files, open_run, resume_state, run_settings
from .start import TrainRequest, check_eval_memory, checked_flags, model_config, resolve_device
from .step import StepJob, autocast_for, load_data, make_optimizer
from .threads import apply_threads

__all__ = ["MAX_SEEDS", "parse_seeds", "member_folders", "train_seeds", "train_seeds_request", "unsupported"]

# The most members one batch trains: 64 is the largest K that bench --k-table measures (on CUDA;
# on the CPU a member's steps/s is flat from K = 1, so more buys nothing), and each member holds
# its run folder's lock, an open file, for the whole run: thousands would run out of file handles.
MAX_SEEDS = 64


def unsupported(recipe: Preset, config: ModelConfig) -> str | None:
    """Why this recipe cannot be trained seed-batched, or None."""
    if config.query_scale == "learned":
        return "model.query_scale=learned (a learned scale per member) is not batched; train these seeds one by one"
    if recipe.extra_target_max:
        return (
            "data.extra_target_max (each member's batch has its own length) is not batched; train these seeds "
            "one by one"
        )
    return None


def parse_seeds(text: str) -> list[int]:
    """``--seeds 0,1,2``: 1..MAX_SEEDS distinct seeds, each as ``--seed`` reads one (RunError naming the value)."""
    parts = [p.strip() for p in str(text).split(",")]
    if not text or not all(parts):
        raise RunError(
            f"--seeds must be a comma-separated list of distinct seeds such as 0,1,2, got {text!r}"
        )
    if len(parts) > MAX_SEEDS:
        raise RunError(
            f"--seeds lists {len(parts)} seeds; one batch trains 1..{MAX_SEEDS} (split them into "
            f"several train --seeds runs)"
        )
    seeds = [parse_seed(p, "--seeds") for p in parts]
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise RunError(f"--seeds must be distinct, got {repeated[0]} more than once in {text!r}")
    return seeds


def member_folders(out, seeds: list[int]) -> list[Path]:
    """Each member's run folder: ``out`` with ``{seed}`` replaced, else ``out/seed-S``."""
    out = str(out)
    if "{seed}" in out:
        return [Path(out.replace("{seed}", str(s))) for s in seeds]
    return [Path(out) / f"seed-{s}" for s in seeds]


def _check_memory(recipe, config, dev, k: int) -> None:
    """The K members' step at once (K copies of the model and of the batch); members are evaluated
    one at a time, so an evaluation is a single run's (its parameters are in the first estimate)."""
    check_memory(
        config,
        recipe.batch_size,
        SEQ_LEN,
        dev,
        f"--seeds with {k} members (batch_size {recipe.batch_size} each)",
        copies=k,
    )
    check_eval_memory(recipe, config, dev)


def _check_batchable(recipe, config) -> None:
    reason = unsupported(recipe, config)
    if reason is not None:
        raise RunError(f"--seeds: {reason}")


def train_seeds(task: str, out, seeds: list[int], **options) -> dict:
    """Train (or resume) the members ``seeds`` together; returns a summary with one entry per member.
    ``options``: those of ``training.run.loop.train`` but ``seed`` and ``checkpoint_dir`` (each
    member keeps RUN/checkpoints).  ``compiled``: the batched forward and backward compiled
    (``training.run.compile``); None: eager for new members (a batched model compiles poorly);
    resumed members keep their own, which must agree (``_batch_compile_choice``).
    Raises RunError on bad input, before any work."""
    for name in ("seed", "checkpoint_dir", "seeds"):
        if name in options:
            raise TypeError(f"train_seeds() got an unexpected keyword argument {name!r}")
    return train_seeds_request(TrainRequest(task, out, seeds=tuple(seeds), **options))


def train_seeds_request(request: TrainRequest) -> dict:
    """``train_seeds`` of a ``TrainRequest`` whose ``seeds`` lists the members."""
    if not request.seeds:
        raise RunError("--seeds needs at least one seed")
    recipe = checked_flags(request)
    dev = resolve_device(request.device)
    if not request.resume:  # before any folder is made; a resume checks the saved recipe once read
        config = model_config(request.task, recipe, f"--preset {recipe.name}")
        _check_batchable(recipe, config)
        _check_memory(recipe, config, dev, len(request.seeds))
    with contextlib.ExitStack() as stack:
        runs = [
            stack.enter_context(open_run(folder, None, request.task, request.resume, request.force))
            for folder in member_folders(request.out, request.seeds)
        ]
        return _train_members(runs, request, recipe, dev)


def _member_settings(runs, request: TrainRequest, recipe):
    """Each member's (settings, recipe, config, checkpoint to resume from); on --resume, the last
    step every member has a checkpoint of, and the members' recipes must be one."""
    found = [
        run_settings(run, request.task, recipe, request.flags(seed), request.overrides, SINGLE)
        for run, seed in zip(runs, request.seeds)
    ]
    if not runs[0].resume:
        return found
    for run, (settings, *_) in zip(runs[1:], found[1:]):
        if settings["recipe"] != found[0][0]["recipe"] or settings["steps"] != found[0][0]["steps"]:
            raise RunError(
                f"cannot resume together: {run.out} was trained with another recipe than {runs[0].out}"
            )
    common = min(list_checkpoints(run.ckpt_dir)[-1][0] for run in runs)
    return [(s, r, c, run.ckpt_dir / checkpoint_name(common)) for run, (s, r, c, _) in zip(runs, found)]


def _batch_compile_choice(asked, runs, seeds, settings: list, config, dev) -> bool:
    """Whether the batch's one forward is compiled, recorded in each member's settings.  New
    members take ``asked``, default eager (module doc of training.run.compile).  Resumed members
    keep each their own recorded choice (``compile_choice``); members that differ cannot share one
    step, so the resume is refused, naming the first that differs -- never one member's choice
    written over another's -- and then a flag against the choice is refused as for one run."""
    if not runs[0].resume:
        chosen = [bool(asked)] * len(settings)
    else:
        chosen = [compile_choice(None, s, True, config, dev, False) for s in settings]
        how = {True: "compiled", False: "eager"}
        for run, seed, choice in zip(runs, seeds, chosen):
            if choice != chosen[0]:
                raise RunError(
                    f"cannot resume together: member seed {seed} ({run.out}) was trained {how[choice]} "
                    f"and seed {seeds[0]} ({runs[0].out}) {how[chosen[0]]}; compiling is one setting "
                    f"for the whole batch (resume them separately)"
                )
        compile_choice(asked, settings[0], True, config, dev, False)
    for member_settings, choice in zip(settings, chosen):
        member_settings["compiled"] = choice
    return chosen[0]


def _train_members(runs, request: TrainRequest, recipe, dev) -> dict:
    task, seeds, stop_at = request.task, list(request.seeds), request.stop_at
    found = _member_settings(runs, request, recipe)
    settings0, recipe, config, _ = found[0]
    total = settings0["steps"]
    compiled = _batch_compile_choice(
        request.compiled, runs, seeds, [settings for settings, *_ in found], config, dev
    )
    if runs[0].resume:
        _check_batchable(recipe, config)
        _check_memory(recipe, config, dev, len(seeds))
    threads = apply_threads(config.n_embd, request.threads)
    amp, scaler = autocast_for(dev)
    if scaler is not None:
        raise RunError(
            "--seeds on a CUDA device without bfloat16 (float16 needs a GradScaler per member): "
            "train these seeds one by one"
        )
    model = BatchedGPTJ(config, seeds, dev)
    optimizers = [make_optimizer(m, recipe.lr, recipe.betas, recipe.weight_decay) for m in model.members]
    train_data, val_data = load_data(task, recipe, dev)
    job = StepJob(task, train_data, recipe, total, model, tuple(optimizers), dev, amp)
    header = {
        "device": str(dev),
        "parameters": model.members[0].num_parameters(),
        "batched_seeds": list(seeds),
    }

    records = []
    for k, (run, (settings, _, _, last_path)) in enumerate(zip(runs, found)):
        metrics = Metrics(run.out / "metrics.jsonl")
        with model.member_rng(k):  # a resume restores the member's RNG streams from its checkpoint
            start, best, _ = (
                resume_state(run, last_path, model.members[k], optimizers[k], config, metrics, stop_at, total)
                if run.resume
                else fresh_files(run.out, task, settings, recipe, config, request.overrides, metrics, header)
            )
        records.append(RunRecord(run, settings, metrics, job, val_data, start, best, k))
    start_records(records, fresh=start == 0 and not runs[0].resume)
    if compiled:  # after the step-0 evaluation, as always (compile_module switches kernels process-wide)
        job = dataclasses.replace(job, forward=compile_module(model))
    if request.progress:
        print(threads, file=sys.stderr, flush=True)  # every check passed: the members start now
    done, seconds = run_steps(
        job, records, start, stop_at, f"{task} x{len(seeds)} seeds", show=request.progress
    )
    members = [
        {
            "run": str(r.run.out),
            "seed": s,
            "step": done,
            "steps_done": done - start,
            "best_step": r.best["step"],
            "best_accuracy": r.best["accuracy"],
            "seconds_per_step": seconds,
        }
        for r, s in zip(records, seeds)
    ]
    return {
        "seeds": list(seeds),
        "step": done,
        "steps_done": done - start,
        "seconds_per_step": seconds,
        "torch_threads": torch.get_num_threads(),
        "members": members,
    }

"""``train --seeds 0,1,2``: K runs of one recipe that differ only in seed, trained as one batched model.

Each member writes its own run folder exactly as ``train --seed S`` would (the same files,
loadable by every command, resumable alone or batched): ``--out DIR`` puts seed S in
``DIR/seed-S``; an ``--out`` containing ``{seed}`` names each folder itself (the study runner's
``ROOT/VARIANT/TASK/seed-{seed}/run``).  The settings line of ``metrics.jsonl`` adds
``batched_seeds``, the members trained together.

Per member, as in its single run (``training.model.batched`` says how): initial weights, dropout
stream and data order (``step_parts.training_batch`` with its seed), AdamW state, learning-rate
schedule, gradient clipping of its own global norm (``train.optimizer_step``), validation, best
weights, checkpoints and log (``train.RunRecord``).  Only the forward and backward pass are
shared, as batched products; on CPU each member's losses equal its single run's up to float
reassociation (tests/test_batched_training.py).

Resume: ``--resume`` continues every member from the last checkpoint step all of them have (a
kill while the members' checkpoints of one step were being written leaves some one step ahead;
they redo it and write the same files again).  Each member keeps its own recorded settings;
what the batch must share -- the recipe, the step count, compiled or eager -- must agree, else
the resume is one line naming the member that differs.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from training.model.batched import BatchedGPTJ
from training.model.config import ModelConfig
from training.tasks.vocab import SEQ_LEN

from .checkpoints import checkpoint_name, list_checkpoints
from .checks import RunError, parse_seed
from .compile import compile_choice, compile_module
from .distributed import SINGLE
from .loop import RunRecord, _checked_flags, optimizer_step, resolve_device
from .memory import check_memory
from .metrics import Metrics
from .presets import Preset
from .resume import model_config
from .setup import fresh_files, open_run, resume_state, run_settings
from .step import autocast_for, load_data, lr_factor, make_optimizer, training_batch

__all__ = ["MAX_SEEDS", "parse_seeds", "member_folders", "train_seeds"]

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
    check_memory(
        config,
        recipe.eval_batch_size,
        SEQ_LEN,
        dev,
        f"eval_batch_size {recipe.eval_batch_size}",
        training=False,
    )


def _check_batchable(recipe, config) -> None:
    reason = unsupported(recipe, config)
    if reason is not None:
        raise RunError(f"--seeds: {reason}")


def train_seeds(
    task: str,
    out,
    seeds: list[int],
    preset: str | None = None,
    steps: int | None = None,
    device: str = "auto",
    resume: bool = False,
    force: bool = False,
    stop_at: int | None = None,
    progress: bool = True,
    overrides=(),
    compiled: bool | None = None,
) -> dict:
    """Train (or resume) the members ``seeds`` together; returns a summary with one entry per member.
    ``compiled``: the batched forward and backward compiled (``training.run.compile``); None:
    eager for new members (a batched model compiles poorly); resumed members keep their own,
    which must agree (``_batch_compile_choice``).
    Raises RunError on bad input, before any work."""
    if not seeds:
        raise RunError("--seeds needs at least one seed")
    recipe = _checked_flags(task, preset, steps, None, stop_at, resume, overrides)
    dev = resolve_device(device)
    if not resume:  # before any folder is made; a resume checks the saved recipe once read
        config = model_config(task, recipe, f"--preset {recipe.name}")
        _check_batchable(recipe, config)
        _check_memory(recipe, config, dev, len(seeds))
    with contextlib.ExitStack() as stack:
        runs = [
            stack.enter_context(open_run(folder, None, task, resume, force))
            for folder in member_folders(out, seeds)
        ]
        return _train_members(
            runs, task, recipe, seeds, preset, steps, dev, stop_at, progress, tuple(overrides), compiled
        )


def _member_settings(runs, task, recipe, seeds, preset, steps, overrides):
    """Each member's (settings, recipe, config, checkpoint to resume from); on --resume, the last
    step every member has a checkpoint of, and the members' recipes must be one."""
    found = [
        run_settings(
            run,
            task,
            recipe,
            {"task": task, "preset": preset, "steps": steps, "seed": seed},
            overrides,
            SINGLE,
        )
        for run, seed in zip(runs, seeds)
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


def _train_members(
    runs, task, recipe, seeds, preset, steps, dev, stop_at, progress, overrides, compiled
) -> dict:
    found = _member_settings(runs, task, recipe, seeds, preset, steps, overrides)
    settings0, recipe, config, _ = found[0]
    total = settings0["steps"]
    compiled = _batch_compile_choice(compiled, runs, seeds, [settings for settings, *_ in found], config, dev)
    if runs[0].resume:
        _check_batchable(recipe, config)
        _check_memory(recipe, config, dev, len(seeds))
    amp, scaler = autocast_for(dev)
    if scaler is not None:
        raise RunError(
            "--seeds on a CUDA device without bfloat16 (float16 needs a GradScaler per member): "
            "train these seeds one by one"
        )
    model = BatchedGPTJ(config, seeds, dev)
    optimizers = [make_optimizer(m, recipe.lr, recipe.betas, recipe.weight_decay) for m in model.members]
    train_data, val_data = load_data(task, recipe, dev)
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
                else fresh_files(run.out, task, settings, recipe, config, overrides, metrics, header)
            )
        records.append(
            RunRecord(
                run,
                settings,
                recipe,
                metrics,
                model.members[k],
                optimizers[k],
                val_data,
                amp,
                None,
                start,
                best,
                rng=functools.partial(model.member_rng, k),
                name=f"member seed {seeds[k]} ({run.out}): ",
            )
        )
    if start == 0 and not runs[0].resume:
        for record in records:
            record.validate_and_checkpoint(0)
        for run in runs:
            run.started()

    bar = tqdm(
        total=total,
        initial=start,
        disable=not progress,
        desc=f"{task} x{len(seeds)} seeds",
        dynamic_ncols=True,
        mininterval=1.0 if sys.stderr.isatty() else 30.0,
    )
    t0, done = time.perf_counter(), start
    model.train()
    forward = None
    if compiled:
        forward = compile_module(model)
    for record in records:
        record.t_window = time.perf_counter()
    for step in range(start, total):
        done = step + 1
        losses, accuracies, norms = batched_step(
            model, optimizers, task, train_data, recipe, step, total, amp, dev, forward
        )
        for record, loss, accuracy, norm in zip(records, losses, accuracies, norms):
            record.record_step(done, loss, accuracy, norm)
        bar.update(1)
        for record in records:
            record.validate_and_checkpoint(done, force_checkpoint=done == stop_at)
        if done == stop_at:
            break
    bar.close()
    seconds = (time.perf_counter() - t0) / max(1, done - start)
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
        "members": members,
    }


def batched_step(
    model: BatchedGPTJ,
    optimizers,
    task: str,
    train_data,
    recipe,
    step: int,
    total: int,
    amp,
    dev,
    forward=None,
) -> tuple[list, list, list]:
    """One optimizer step of every member (its own batch, schedule, clipping, AdamW); returns the
    members' losses, accuracies and gradient norms before clipping.  ``forward``: the model's
    compiled forward (``training.run.compile``; default the model itself).
    A function of its own so that a benchmark times exactly the training step."""
    lr = recipe.lr * lr_factor(step, recipe.warmup_steps, total)
    for optimizer in optimizers:
        for group in optimizer.param_groups:
            group["lr"] = lr
    batches = [training_batch(task, train_data, seed, step, recipe.batch_size) for seed in model.seeds]
    inputs = torch.as_tensor(np.stack([b.inputs for b in batches]), dtype=torch.long, device=dev)
    answers = torch.as_tensor(np.stack([b.answers for b in batches]), dtype=torch.long, device=dev)
    with amp:
        logits = (model if forward is None else forward)(inputs).float()  # (K, B, vocab)
    # each member's mean loss; their sum's gradient is, per member, that of its own loss alone
    per_row = F.cross_entropy(logits.flatten(0, 1), answers.flatten(), reduction="none")
    losses = per_row.view(answers.shape).mean(1)
    losses.sum().backward()
    model.split_gradients()
    norms = [
        optimizer_step(member, optimizer, None, recipe.grad_clip)  # each member's own global norm
        for member, optimizer in zip(model.members, optimizers)
    ]
    model.zero_grad(set_to_none=True)
    accuracies = (logits.argmax(-1) == answers).float().mean(1)
    return losses.tolist(), accuracies.tolist(), norms

"""Train the paper's GPT-J on the number or letter task (Appendix C.2).

    python -m training train --task number --out RUN [--preset paper|smoke] [--steps N]
        [--seed S] [--device auto|cpu|cuda] [--resume] [--force] [--checkpoint-dir DIR]

Loss: cross-entropy of the answer at the query position (the 17th and last input
token) -- the paper's "labels -100 except the 18th token", computed with the LM
head on the last position only.  ``--set data.extra_target_max=M`` (M > 0; not the
paper's data) prepends K ~ uniform{0..M} extra target-window symbols (Task.extend)
to every row of a training batch, one K per batch and step; validation stays 17 tokens.

Validation (accuracy overall and per hop count) and a checkpoint every ``eval_every`` /
``checkpoint_every`` steps, step 0 and the final step included (a resumed run does not
validate its resume step again: that record is already in metrics.jsonl); RUN/model.safetensors
always holds the best validation accuracy so far (ties keep the earlier step).

Checked alike at a start and on ``--resume``, before any allocation: ``--steps`` (recipe.check_steps)
and the memory a step needs (memory.check_memory).  A non-finite loss, gradient norm or weight
stops the run with one line (exit 2), writing nothing from that state: the last checkpoint is good.

Reproducible: ``--seed`` sets the initial weights and dropout (torch RNG) and the
data order: the batch of step s is a pure function of (seed, s) -- epoch e is the
permutation ``numpy.random.default_rng([seed, e])``, and its extra window, if any, comes
from ``default_rng([seed, tag, s])`` (``extra_window``) -- so resuming needs only the
step number, and ``--resume`` from the last checkpoint (weights, AdamW moments,
torch RNG states) ends with exactly the weights of an uninterrupted run -- compiled too, on the
CPU (``training.run.compile``: deterministic kernels), on the same machine and thread count.
The data set itself is the paper's fixed split (``paper_splits(task, seed=0)``).

Safety (``training.run.setup``): every destination is checked before any work, the
run folder is locked for the whole run (``RUN/.lock``; a second ``train`` on it exits 2
naming the holder), ``--force`` deletes only what belongs to the run at ``--out``, and a
start that fails before its first checkpoint removes what it made.  ``--resume`` restores a
missing ``RUN/model.safetensors`` from the best checkpoint and drops a torn last line of
``metrics.jsonl`` (``training.run.resume``).

Several processes, one model (``training.run.distributed``): ``torchrun --nproc_per_node=K -m
training train ...`` trains with DistributedDataParallel (NCCL on CUDA, gloo on CPU) at the same
global batch; on N machines add ``--nnodes=N --rdzv-backend=c10d --rdzv-endpoint=HOST:PORT``.
Rank 0 alone writes; ``--resume`` works the same way.

Several seeds of one recipe in one process: ``train --seeds 0,1,2`` (``training.run.batched_loop``)
trains them as one seed-batched model, sharing this module's step pieces (``optimizer_step``,
``RunRecord``); each member's folder is the run ``--seed S`` would write.

Reference runs (the shipped RUN dirs keep only best weights, config, vocab and
metrics, < 25 MB; checkpoints go to the git-ignored runs/): scripts/train_reference.sh.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from training.model.gptj import GPTJ
from training.tasks.definitions import get_task
from training.tasks.vocab import SEQ_LEN

from .checkpoints import RunError, nonfinite, save_checkpoint
from .checks import check_seed
from .compile import compile_choice, compile_module
from .distributed import SINGLE, Ranks, process_group, rank0_run, ranks_from_env
from .memory import check_memory
from .metrics import Metrics
from .presets import Preset, get_preset
from .recipe import apply_overrides, check_steps
from .resume import model_config
from .setup import RunFolder, check_stop_at, fresh_files, open_run, resume_state, run_settings

# looked up here at each call (not as step_parts.X), so a test can replace one in this module
from .step import autocast_for, evaluate, load_data, lr_factor, make_optimizer, training_batch
from .weights import save_weights

__all__ = ["train", "resolve_device", "RunRecord", "optimizer_step"]


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise RunError("--device cuda: no CUDA device is available")
        return torch.device("cuda")
    raise RunError(f"unknown device {name!r} (expected auto, cpu or cuda)")


def _checked_flags(task: str, preset, steps, seed, stop_at, resume: bool, overrides=()) -> Preset:
    """Every flag that can be checked without the run folder; the recipe of a fresh start:
    the preset, then each ``--set KEY=VALUE`` (training.run.recipe), then ``--steps``."""
    try:
        get_task(task)
        recipe = apply_overrides(get_preset(preset or "paper"), overrides)
        if steps is not None:  # the check a resume applies to the saved settings: what starts, resumes
            steps = check_steps(steps)
    except ValueError as e:
        raise RunError(str(e)) from None
    if seed is not None:
        check_seed(seed)
    if resume:
        return recipe
    total = recipe.steps if steps is None else steps
    check_stop_at(stop_at, 0, total)
    return dataclasses.replace(recipe, steps=total)


def _check_memory(recipe: Preset, config, dev: torch.device, ranks: Ranks) -> None:
    """Refuse, before any allocation, a batch whose step needs more memory than the device has.
    On CUDA each process holds its share of the batch; on the CPU the processes share the host."""
    rows = recipe.batch_size // ranks.world_size if dev.type == "cuda" else recipe.batch_size
    tokens = SEQ_LEN + recipe.extra_target_max
    check_memory(
        config,
        rows,
        tokens,
        dev,
        f"batch_size {recipe.batch_size}"
        + (f" with data.extra_target_max {recipe.extra_target_max}" if recipe.extra_target_max else ""),
    )
    check_memory(
        config,
        recipe.eval_batch_size,
        SEQ_LEN,
        dev,
        f"eval_batch_size {recipe.eval_batch_size}",
        training=False,
    )


def _stop_diverged(what: str, step: int, last_checkpoint: int, ranks: Ranks):
    ranks.fail(
        f"{what} at step {step}: training diverged and stopped; nothing was written from this state, "
        f"the last checkpoint is step {last_checkpoint} (lower lr, or check the recipe; --force starts again)"
    )


def optimizer_step(model: torch.nn.Module, optimizer, scaler, grad_clip: float) -> torch.Tensor:
    """Clip the gradient's global norm (of this model alone) and step: returns the norm before clipping."""
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return grad_norm


class RunRecord:
    """What one run writes while it trains: the training log, validation, best weights, checkpoints.

    Apart from the step loop so that one implementation serves both loops: ``train`` holds one,
    the seed-batched loop (``training.run.batched_loop``) one per member.  ``rng`` is the
    context a checkpoint is written in (the batched loop swaps the member's RNG stream in);
    ``name`` prefixes the divergence message (which member stopped)."""

    def __init__(
        self,
        run: RunFolder,
        settings: dict,
        recipe: Preset,
        metrics: Metrics,
        model,
        optimizer,
        val_data: dict,
        amp,
        scaler,
        start: int,
        best: dict,
        ranks: Ranks = SINGLE,
        rng=contextlib.nullcontext,
        name: str = "",
    ):
        self.run, self.settings, self.recipe, self.metrics = run, settings, recipe, metrics
        self.model, self.optimizer, self.val_data, self.amp, self.scaler = (
            model,
            optimizer,
            val_data,
            amp,
            scaler,
        )
        self.ranks, self.rng, self.name = ranks, rng, name
        self.total, self.best, self.last_checkpoint = settings["steps"], best, start
        self.window, self.running, self.t_window = [], math.nan, time.perf_counter()

    def stop_diverged(self, what: str, step: int):
        _stop_diverged(self.name + what, step, self.last_checkpoint, self.ranks)

    def record_step(self, done: int, loss: float, accuracy: float, grad_norm: torch.Tensor) -> None:
        """After optimizer step ``done``: stop on a non-finite loss or norm, log every ``log_every``."""
        self.window.append((loss, accuracy))
        if not math.isfinite(loss) or (self.scaler is None and not math.isfinite(grad_norm.item())):
            self.stop_diverged(f"the training loss is {loss} (gradient norm {grad_norm.item()})", done)
        self.running = float(np.mean([w[0] for w in self.window]))
        if done % self.recipe.log_every == 0 or done == self.total:
            now = time.perf_counter()
            running, accuracy = self.ranks.mean([self.running, float(np.mean([w[1] for w in self.window]))])
            self.running = running
            if self.ranks.writer:
                self.metrics.append(
                    {
                        "split": "train",
                        "step": done,
                        "loss": running,
                        "accuracy": accuracy,
                        "lr": self.optimizer.param_groups[0]["lr"],
                        "seconds_per_step": (now - self.t_window) / len(self.window),
                    }
                )
            self.window, self.t_window = [], now

    def validate_and_checkpoint(self, step: int, force_checkpoint: bool = False) -> None:
        recipe, model = self.recipe, self.model
        checkpoint = step % recipe.checkpoint_every == 0 or step == self.total or force_checkpoint
        if not self.ranks.writer:  # the others go on to the next step, whose all-reduce waits for rank 0
            self.last_checkpoint = step if checkpoint else self.last_checkpoint
            return
        validate = step % recipe.eval_every == 0 or step == self.total
        if validate or checkpoint:  # nothing is written from weights that are not finite
            bad = nonfinite({name: p.detach() for name, p in model.named_parameters()})
            if bad is not None:
                self.stop_diverged(f"weight {bad} is NaN or infinite", step)
        if validate:
            result = evaluate(model, self.val_data, recipe.eval_batch_size, self.amp)
            if not math.isfinite(result["loss"]):
                self.stop_diverged(f"the validation loss is {result['loss']}", step)
            is_best = result["accuracy"] > self.best["accuracy"]
            if is_best:
                self.best = {"step": step, "accuracy": result["accuracy"]}
                save_weights(self.run.out, model, write_config=False)
            self.metrics.append({"split": "validation", "step": step, **result, "is_best": is_best})
        if checkpoint:
            info = {
                "settings": self.settings,
                "best": self.best,
                "grad_scaler": self.scaler.state_dict() if self.scaler is not None else None,
            }
            with self.rng():
                save_checkpoint(self.run.ckpt_dir, step, model, self.optimizer, info)
            self.last_checkpoint = step


def train(
    task: str,
    out,
    preset: str | None = None,
    steps: int | None = None,
    seed: int | None = None,
    device: str = "auto",
    resume: bool = False,
    force: bool = False,
    checkpoint_dir=None,
    stop_at: int | None = None,
    progress: bool = True,
    overrides=(),
    compiled: bool | None = None,
) -> dict:
    """Train (or resume) a run; returns a summary.  Raises RunError on bad input.
    ``overrides``: ``KEY=VALUE`` strings of ``--set`` (training.run.recipe); ``compiled``: the
    training step's forward and backward compiled (``training.run.compile``: a disk cache);
    None: ``compiled.compile_by_default`` decides for a new run, and a resumed run keeps its own."""
    ranks = ranks_from_env()  # torchrun's processes; SINGLE without torchrun
    with ranks.said_once():
        recipe = _checked_flags(task, preset, steps, seed, stop_at, resume, overrides)
        dev = resolve_device(device)
        if not resume:  # a resumed run's batch size is checked once its recipe is read
            ranks.check_batch_split(recipe.batch_size)
    dev = ranks.device(dev)
    if not resume:  # before the run folder is made (a resume checks once it has read the recipe)
        with ranks.said_once():
            _check_memory(recipe, model_config(task, recipe, f"--preset {recipe.name}"), dev, ranks)
    opened = rank0_run(
        ranks, lambda: open_run(out, checkpoint_dir, task, resume, force)
    )  # rank 0 holds the folder
    with process_group(ranks, dev), opened as run:
        flags = {"task": task, "preset": preset, "steps": steps, "seed": seed}
        return _train_run(run, task, recipe, flags, dev, stop_at, progress, tuple(overrides), ranks, compiled)


def _train_run(
    run: RunFolder,
    task: str,
    recipe: Preset,
    flags: dict,
    dev,
    stop_at,
    progress: bool,
    overrides: tuple,
    ranks: Ranks = SINGLE,
    compiled: bool | None = None,
) -> dict:
    out, resume = run.out, run.resume
    metrics = Metrics(out / "metrics.jsonl")
    settings, recipe, config, last_path = ranks.on_rank0(
        lambda: run_settings(run, task, recipe, flags, overrides, ranks)
    )
    total, seed = settings["steps"], settings["seed"]
    with ranks.said_once():
        settings["compiled"] = compile_choice(compiled, settings, resume, config, dev, ranks.distributed)
    if resume:
        with ranks.said_once():
            _check_memory(recipe, config, dev, ranks)

    torch.manual_seed(seed)  # on every rank: the same initial weights
    model = GPTJ(config).to(dev)
    optimizer = make_optimizer(model, recipe.lr, recipe.betas, recipe.weight_decay)
    amp, scaler = autocast_for(dev)
    train_data, val_data = load_data(task, recipe, dev)

    header = {
        "device": str(dev),
        "parameters": model.num_parameters(),
        **({"world_size": ranks.world_size} if ranks.distributed else {}),
    }
    start, best, scaler_state = ranks.on_rank0(
        lambda: (
            resume_state(run, last_path, model, optimizer, config, metrics, stop_at, total)
            if resume
            else fresh_files(out, task, settings, recipe, config, overrides, metrics, header)
        )
    )
    if resume:
        ranks.share_optimizer_state(optimizer)
    if scaler is not None and scaler_state:
        scaler.load_state_dict(scaler_state)
    step_model = ranks.wrap(model, dev)  # DDP for the training steps; evaluation and saving use the model
    if settings["compiled"]:
        step_model = compile_module(step_model)
    record = RunRecord(
        run, settings, recipe, metrics, model, optimizer, val_data, amp, scaler, start, best, ranks
    )

    bar = tqdm(
        total=total,
        initial=start,
        disable=not progress or not ranks.writer,
        desc=f"{task}",
        dynamic_ncols=True,
        mininterval=1.0 if sys.stderr.isatty() else 30.0,
    )  # a log file: a line per 30 s
    t0 = time.perf_counter()
    done = start
    if start == 0 and not resume:  # a resume from step 0 has its step-0 record and checkpoint already
        record.validate_and_checkpoint(0)
        run.started()
    model.train()
    record.t_window = time.perf_counter()  # seconds_per_step counts training steps, not the step-0 eval
    for step in range(start, total):
        for group in optimizer.param_groups:
            group["lr"] = recipe.lr * lr_factor(step, recipe.warmup_steps, total)
        ranks.seed_dropout(seed, step)
        batch = training_batch(task, train_data, seed, step, recipe.batch_size, recipe.extra_target_max)
        inputs = torch.as_tensor(ranks.shard(batch.inputs), dtype=torch.long, device=dev)  # this rank's rows
        answers = torch.as_tensor(ranks.shard(batch.answers), dtype=torch.long, device=dev)
        with amp:
            logits = step_model(inputs, last_only=True)
        # The mean over this rank's rows.  DDP averages the gradients over the K ranks, and the
        # slices are equal, so the result is the gradient of the mean over the global batch: a
        # single process's, up to the order of float additions.
        loss = F.cross_entropy(logits.float(), answers)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
        else:
            loss.backward()
        # backward() returned after DDP's all-reduce: every rank clips the same, global-batch gradient
        grad_norm = optimizer_step(model, optimizer, scaler, recipe.grad_clip)

        done = step + 1
        # read where the step already waits for the loss; the norm is of the all-reduced gradient, so
        # every rank stops alike.  With a GradScaler an infinite norm is routine: that step is skipped.
        record.record_step(done, loss.item(), (logits.argmax(-1) == answers).float().mean().item(), grad_norm)
        bar.update(1)
        bar.set_postfix(loss=f"{record.running:.3f}", val_acc=f"{record.best['accuracy']:.3f}", refresh=False)
        record.validate_and_checkpoint(done, force_checkpoint=done == stop_at)
        if done == stop_at:
            break
    bar.close()
    best = ranks.share(
        record.best
    )  # also waits for rank 0's last checkpoint: no rank leaves before it is written
    done_steps = done - start
    return {
        "run": str(out),
        "step": start + done_steps,
        "steps_done": done_steps,
        "best_step": best["step"],
        "best_accuracy": best["accuracy"],
        "seconds_per_step": (time.perf_counter() - t0) / max(1, done_steps),
    }

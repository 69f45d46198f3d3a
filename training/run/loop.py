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

Torch CPU threads (``training.run.threads``): ``--threads N``, else one for a small model (the
presets') or on an oversubscribed machine, else the cores the load leaves free; printed as one
line (``torch threads: 1 (model small; load 3.2 on 2 cores)``) when the run starts, with a
progress bar, and in the summary (``torch_threads``).

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
trains them as one seed-batched model through the same loop (``run_steps``), step
(``training.run.step.train_step``) and writer (``RunRecord``, one per member); each member's
folder is the run ``--seed S`` would write.

Reference runs (the shipped RUN dirs keep only best weights, config, vocab and
metrics, < 25 MB; checkpoints go to the git-ignored runs/): scripts/train_reference.sh.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

from training.model.gptj import GPTJ

from .checkpoints import nonfinite, save_checkpoint
from .compile import compile_choice, compile_module
from .distributed import Ranks, process_group, rank0_run, ranks_from_env
from .metrics import Metrics
from .setup import RunFolder, fresh_files, open_run, resume_state, run_settings
from .start import TrainRequest, check_run_memory, checked_flags, model_config, resolve_device

# looked up here at each call (not as step.X), so a test can replace one in this module
from .step import StepJob, autocast_for, evaluate, load_data, make_optimizer, train_step
from .threads import apply_threads, ranks_per_machine
from .weights import save_weights

__all__ = ["train", "train_request", "RunRecord", "start_records", "run_steps"]


class RunRecord:
    """What one run writes while it trains: the training log, validation, best weights, checkpoints.

    Apart from the step loop so that one implementation serves both loops: ``train`` holds one,
    the seed-batched loop (``training.run.batched_loop``) one per member.  ``job`` is the training
    (``training.run.step.StepJob``) and ``k`` the member this record writes: its model, its
    optimizer and, in a batched model, its RNG streams (a checkpoint saves them) and its name,
    which prefixes the divergence message (which member stopped)."""

    def __init__(
        self,
        run: RunFolder,
        settings: dict,
        metrics: Metrics,
        job: StepJob,
        val_data: dict,
        start: int,
        best: dict,
        k: int = 0,
    ):
        self.run, self.settings, self.metrics, self.val_data = run, settings, metrics, val_data
        self.recipe, self.amp, self.scaler, self.ranks = job.recipe, job.amp, job.scaler, job.ranks
        self.model, self.optimizer = job.members[k], job.optimizers[k]
        self.rng, self.name = contextlib.nullcontext, ""
        if job.batched:
            self.rng = functools.partial(job.model.member_rng, k)
            self.name = f"member seed {job.model.seeds[k]} ({run.out}): "
        self.total, self.best, self.last_checkpoint = settings["steps"], best, start
        self.window, self.running, self.t_window = [], math.nan, time.perf_counter()

    def stop_diverged(self, what: str, step: int):
        self.ranks.fail(
            f"{self.name}{what} at step {step}: training diverged and stopped; nothing was written from this "
            f"state, the last checkpoint is step {self.last_checkpoint} (lower lr, or check the recipe; "
            f"--force starts again)"
        )

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


def start_records(records: list[RunRecord], fresh: bool) -> None:
    """A fresh start's step 0 (a resume from step 0 has its record and checkpoint already): each
    run's validation and checkpoint, then every run counts as started (``RunFolder.started``)."""
    if fresh:
        for record in records:
            record.validate_and_checkpoint(0)
        for record in records:
            record.run.started()


def run_steps(job: StepJob, records: list[RunRecord], start: int, stop_at, desc: str, show: bool):
    """The step loop of ``train`` and ``train --seeds``: steps ``start``..``job.total`` (or up to
    ``stop_at``) of ``train_step``, each member's record after each (its log, its validation and
    checkpoint cadence, its divergence guard), a progress bar.  Returns the step reached and the
    seconds per training step."""
    bar = tqdm(
        total=job.total,
        initial=start,
        disable=not show,
        desc=desc,
        dynamic_ncols=True,
        mininterval=1.0 if sys.stderr.isatty() else 30.0,
    )  # a log file: a line per 30 s
    t0, done = time.perf_counter(), start
    job.model.train()
    for record in records:  # seconds_per_step counts training steps, not the step-0 evaluation
        record.t_window = time.perf_counter()
    for step in range(start, job.total):
        losses, accuracies, norms = train_step(job, step)
        done = step + 1
        # read where the step already waits for the loss; the norm is of the all-reduced gradient, so
        # every rank stops alike.  With a GradScaler an infinite norm is routine: that step is skipped.
        for record, loss, accuracy, norm in zip(records, losses, accuracies, norms):
            record.record_step(done, loss, accuracy, norm)
        bar.update(1)
        if len(records) == 1:
            bar.set_postfix(
                loss=f"{records[0].running:.3f}", val_acc=f"{records[0].best['accuracy']:.3f}", refresh=False
            )
        for record in records:
            record.validate_and_checkpoint(done, force_checkpoint=done == stop_at)
        if done == stop_at:
            break
    bar.close()
    return done, (time.perf_counter() - t0) / max(1, done - start)


def train(task: str, out, **options) -> dict:
    """Train (or resume) a run; returns a summary.  Raises RunError on bad input.
    ``options``: the fields of ``TrainRequest`` (training.run.start) but ``seeds``: ``preset``,
    ``steps``, ``seed``, ``device``, ``resume``, ``force``, ``checkpoint_dir``, ``stop_at``,
    ``progress``, ``overrides`` (``KEY=VALUE`` strings of ``--set``, training.run.recipe) and
    ``compiled`` (the training step's forward and backward compiled, ``training.run.compile``: a
    disk cache; None: ``compiled.compile_by_default`` decides for a new run, and a resumed run
    keeps its own)."""
    if "seeds" in options:
        raise TypeError("train() takes no seeds; train --seeds is training.run.batched_loop.train_seeds")
    return train_request(TrainRequest(task, out, **options))


def train_request(request: TrainRequest) -> dict:
    """``train`` of a ``TrainRequest``: every check that needs no run folder, then the run."""
    ranks = ranks_from_env()  # torchrun's processes; SINGLE without torchrun
    with ranks.said_once():
        recipe = checked_flags(request)
        dev = resolve_device(request.device)
        if not request.resume:  # a resumed run's batch size is checked once its recipe is read
            ranks.check_batch_split(recipe.batch_size)
    dev = ranks.device(dev)
    if not request.resume:  # before the run folder is made (a resume checks once it has read the recipe)
        with ranks.said_once():
            check_run_memory(
                recipe, model_config(request.task, recipe, f"--preset {recipe.name}"), dev, ranks
            )
    opened = rank0_run(  # rank 0 holds the folder
        ranks,
        lambda: open_run(request.out, request.checkpoint_dir, request.task, request.resume, request.force),
    )
    with process_group(ranks, dev), opened as run:
        return _train_run(run, request, recipe, dev, ranks)


def _train_run(run: RunFolder, request: TrainRequest, recipe, dev, ranks: Ranks) -> dict:
    out, resume, task, stop_at = run.out, run.resume, request.task, request.stop_at
    metrics = Metrics(out / "metrics.jsonl")
    settings, recipe, config, last_path = ranks.on_rank0(
        lambda: run_settings(run, task, recipe, request.flags(), request.overrides, ranks)
    )
    total, seed = settings["steps"], settings["seed"]
    with ranks.said_once():
        settings["compiled"] = compile_choice(
            request.compiled, settings, resume, config, dev, ranks.distributed
        )
    if resume:
        with ranks.said_once():
            check_run_memory(recipe, config, dev, ranks)
    threads = apply_threads(config.n_embd, request.threads, jobs=ranks_per_machine())

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
            else fresh_files(out, task, settings, recipe, config, request.overrides, metrics, header)
        )
    )
    if resume:
        ranks.share_optimizer_state(optimizer)
    if scaler is not None and scaler_state:
        scaler.load_state_dict(scaler_state)
    step_model = ranks.wrap(model, dev)  # DDP for the training steps; evaluation and saving use the model
    if settings["compiled"]:
        step_model = compile_module(step_model)
    job = StepJob(
        task, train_data, recipe, total, model, (optimizer,), dev, amp, scaler, step_model, seed, ranks
    )
    record = RunRecord(run, settings, metrics, job, val_data, start, best)
    start_records([record], fresh=start == 0 and not resume)
    if request.progress and (not ranks.distributed or ranks.local_rank == 0):
        print(threads, file=sys.stderr, flush=True)  # every check passed: the run starts now
    done, seconds = run_steps(job, [record], start, stop_at, task, show=request.progress and ranks.writer)
    best = ranks.share(
        record.best
    )  # also waits for rank 0's last checkpoint: no rank leaves before it is written
    return {
        "run": str(out),
        "step": done,
        "steps_done": done - start,
        "best_step": best["step"],
        "best_accuracy": best["accuracy"],
        "seconds_per_step": seconds,
        "torch_threads": torch.get_num_threads(),
    }

"""One model trained by several processes: torchrun, DistributedDataParallel, one writer.

    torchrun --nproc_per_node=K -m training train --task letter --out RUN ...        # K GPUs of one machine
    torchrun --nnodes=N --nproc_per_node=K --rdzv-backend=c10d --rdzv-endpoint=HOST:29500 \\
             --rdzv-id=JOB -m training train ...                                    # the same line on N machines

``torchrun`` (or ``python -m torch.distributed.run``) sets WORLD_SIZE, RANK, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT.  Without them, or with WORLD_SIZE=1, ``train`` is the single
process it always was, numerics included.  With them (``Ranks``):

* Backend: NCCL when the device is CUDA (process LOCAL_RANK on GPU LOCAL_RANK), gloo on CPU.
* The recipe's ``batch_size`` is the global batch: rank r trains on the r-th of K equal slices of
  the rows ``batch_indices`` gives for the step (a batch size not divisible by K exits 2).
* Rank 0 alone touches the run folder: it takes the lock, checks, writes metrics, checkpoints,
  weights, recipe and config, and evaluates.  The other ranks never open ``--out`` (so on several
  machines only rank 0's needs it): they receive the settings and, on ``--resume``, the optimizer
  state from rank 0 over the process group, and the weights through DDP's start-up broadcast.
* Random state: every rank seeds torch with ``--seed`` before building the model (identical
  initial weights); dropout is reseeded every step from (seed, rank, step), so each rank draws
  its own masks, reproducibly, and ``--resume`` needs no per-rank random state in checkpoints.
* Errors: a bad input is one line per machine (its LOCAL_RANK 0 prints it; rank 0's errors reach
  every rank) and every worker exits 2; torchrun then reports the failed workers and exits 1.
  No rank waits forever on a rank that stopped: torchrun ends the others when one fails.
"""

from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist

from .checks import RunError

__all__ = ["Ranks", "SINGLE", "ranks_from_env", "process_group", "rank0_run"]

TORCHRUN_VARIABLES = ("RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class Ranks:
    """This process's place among the training processes (``SINGLE``: the only one)."""

    world_size: int = 1
    rank: int = 0
    local_rank: int = 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def writer(self) -> bool:
        return self.rank == 0

    # --- errors: one line per machine ------------------------------------------------------

    def fail(self, message: str):
        """Exit 2 with ``message``: printed by LOCAL_RANK 0 of each machine, the others are quiet."""
        if not self.distributed or self.local_rank == 0:
            raise RunError(message)
        raise SystemExit(2)

    @contextlib.contextmanager
    def said_once(self):
        """For checks every rank makes alike (flags, recipe): one error line, not K."""
        try:
            yield
        except RunError as error:
            self.fail(str(error))

    def check_batch_split(self, batch_size: int) -> None:
        if batch_size % self.world_size:
            raise RunError(
                f"batch_size {batch_size} is not divisible by the {self.world_size} processes "
                f"(WORLD_SIZE): each process trains on an equal share of the global batch"
            )

    def device(self, device: torch.device) -> torch.device:
        """This process's GPU (LOCAL_RANK) when training on CUDA."""
        if not self.distributed or device.type != "cuda":
            return device
        count = torch.cuda.device_count()
        if self.local_rank >= count:
            raise RunError(
                f"LOCAL_RANK {self.local_rank}: this machine has {count} CUDA devices; "
                f"start at most {count} processes on it (--nproc_per_node)"
            )
        torch.cuda.set_device(self.local_rank)
        return torch.device("cuda", self.local_rank)

    # --- a training step ---------------------------------------------------------------------

    def shard(self, rows: np.ndarray) -> np.ndarray:
        """This rank's equal slice of the global batch's rows."""
        share = len(rows) // self.world_size
        return rows[self.rank * share : (self.rank + 1) * share]

    def seed_dropout(self, seed: int, step: int) -> None:
        """Per rank and step: reproducible masks that differ between ranks (a single process
        keeps its one stream, saved in checkpoints)."""
        if self.distributed:
            state = np.random.SeedSequence([seed, self.rank, step]).generate_state(1, np.uint64)[0]
            torch.manual_seed(int(state))

    def wrap(self, model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """DDP for the training steps; it broadcasts rank 0's weights when it is built."""
        if not self.distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    def mean(self, values: list) -> list:
        """Floats averaged over the ranks (train loss and accuracy of equal slices)."""
        if not self.distributed:
            return values
        on = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else "cpu"
        total = torch.tensor(values, dtype=torch.float64, device=on)
        dist.all_reduce(total)
        return (total / self.world_size).tolist()

    # --- rank 0's results for everyone ------------------------------------------------------------

    def share(self, value):
        """Rank 0's ``value`` on every rank (picklable; a collective: every rank must call it)."""
        if not self.distributed:
            return value
        box = [value if self.writer else None]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def on_rank0(self, work):
        """``work()`` on rank 0, its result on every rank.  When it fails, every rank fails with it
        (exit 2 and rank 0's line for a RunError) instead of waiting for a result that never comes."""
        if not self.distributed:
            return work()
        if not self.writer:
            ok, value = self.share(None)
            if ok:
                return value
            if value is None:  # rank 0 reports its own traceback or interrupt
                raise SystemExit(1)
            self.fail(value)
        try:
            value = work()
        except RunError as error:
            self.share((False, str(error)))
            raise
        except BaseException:
            self.share((False, None))
            raise
        self.share((True, value))
        return value

    def share_optimizer_state(self, optimizer: torch.optim.Optimizer) -> None:
        """Rank 0's optimizer state (its AdamW moments after ``--resume``) on every rank."""
        if not self.distributed:
            return
        state = self.share(_to_cpu(optimizer.state_dict()) if self.writer else None)
        if not self.writer:
            optimizer.load_state_dict(state)  # moves the moments to this rank's device


def _to_cpu(tree):
    """Tensors of a nested state dict on the CPU: no rank unpickles another rank's GPU memory."""
    if torch.is_tensor(tree):
        return tree.detach().cpu()
    if isinstance(tree, dict):
        return {k: _to_cpu(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_to_cpu(v) for v in tree)
    return tree


SINGLE = Ranks()


def _env_int(environ, name: str, low: int, high: int | None = None) -> int:
    value = environ.get(name)
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number < low or (high is not None and number > high):
        allowed = f"{low}..{high}" if high is not None else f">= {low}"
        raise RunError(f"torchrun environment: {name}={value!r}, expected an integer {allowed}")
    return number


def ranks_from_env(environ=os.environ) -> Ranks:
    """The ranks torchrun's environment describes; ``SINGLE`` without it."""
    if "WORLD_SIZE" not in environ:
        return SINGLE
    world = _env_int(environ, "WORLD_SIZE", 1)
    if world == 1:
        return SINGLE
    missing = [name for name in TORCHRUN_VARIABLES if name not in environ]
    if missing:
        raise RunError(
            f"WORLD_SIZE={world} is set but {', '.join(missing)} not: start distributed "
            f"training with torchrun (python -m torch.distributed.run)"
        )
    return Ranks(
        world, _env_int(environ, "RANK", 0, world - 1), _env_int(environ, "LOCAL_RANK", 0, world - 1)
    )


@contextlib.contextmanager
def process_group(ranks: Ranks, device: torch.device):
    """``with process_group(ranks, device):`` joined for the run (nothing for ``SINGLE``)."""
    if not ranks.distributed:
        yield
        return
    backend = "nccl" if device.type == "cuda" else "gloo"
    try:
        dist.init_process_group(backend, rank=ranks.rank, world_size=ranks.world_size)
    except (RuntimeError, ValueError) as error:
        where = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise RunError(f"cannot join the {backend} process group at {where}: {first_line}") from None
    try:
        yield
    except BaseException:
        dist.destroy_process_group()
        raise
    # The DDP wrapper (its reducer holds the group) sits in reference cycles (autograd hooks), so
    # without a collection here it outlived destroy_process_group and was freed while the
    # interpreter shut down, where the group's C++ teardown aborted now and then under load
    # ("terminate called without an active exception", no Python frame, after the run had ended).
    gc.collect()
    # every rank reaches the end before any tears the group down
    dist.barrier()
    dist.destroy_process_group()


@contextlib.contextmanager
def rank0_run(ranks: Ranks, open_run):
    """``with rank0_run(ranks, lambda: open_run(...)) as run:`` -- rank 0 opens (checks, locks,
    claims) the run folder and holds it to the end; the other ranks get a copy of its
    ``RunFolder`` for the paths and settings and touch nothing in it."""
    if not ranks.writer:
        yield ranks.on_rank0(None)
        return
    with contextlib.ExitStack() as stack:
        yield ranks.on_rank0(lambda: stack.enter_context(open_run()))

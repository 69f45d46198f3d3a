"""What ``train`` and ``train --seeds`` are asked (``TrainRequest``) and what they check of it
before any work: the flags that need no run folder, the device, the model a recipe trains and
the memory its step needs.

Everything here runs before a folder is made or a tensor allocated; a resumed run checks the
model and the memory again once it has read its saved recipe (``training.run.setup``).
"""

from __future__ import annotations

import dataclasses

import torch

from training.model.config import ModelConfig
from training.tasks.definitions import get_task
from training.tasks.vocab import SEQ_LEN

from .checks import RunError, check_model_size, check_seed
from .distributed import Ranks
from .memory import check_memory
from .presets import Preset, get_preset
from .recipe import apply_overrides, check_steps

__all__ = [
    "TrainRequest",
    "resolve_device",
    "checked_flags",
    "check_stop_at",
    "model_config",
    "check_run_memory",
    "check_eval_memory",
]


@dataclasses.dataclass(frozen=True)
class TrainRequest:
    """One ``train`` (``seeds`` None) or ``train --seeds`` call: its flags, as the command line
    gives them.  ``overrides``: the ``--set KEY=VALUE`` strings (training.run.recipe);
    ``compiled``: None lets ``training.run.compile`` decide."""

    task: str
    out: object
    preset: str | None = None
    steps: int | None = None
    seed: int | None = None
    seeds: tuple | None = None
    device: str = "auto"
    resume: bool = False
    force: bool = False
    checkpoint_dir: object = None
    stop_at: int | None = None
    progress: bool = True
    overrides: tuple = ()
    compiled: bool | None = None
    threads: int | None = None  # torch CPU threads; None: training.run.threads chooses

    def __post_init__(self):
        object.__setattr__(self, "overrides", tuple(self.overrides))
        if self.seeds is not None:
            object.__setattr__(self, "seeds", tuple(self.seeds))

    def flags(self, seed: int | None = None) -> dict:
        """The flags a resume must agree with (``training.run.resume.resumed_settings``);
        ``seed``: a batch member's, for ``train --seeds``."""
        return {
            "task": self.task,
            "preset": self.preset,
            "steps": self.steps,
            "seed": self.seed if seed is None else seed,
        }


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


def check_stop_at(stop_at, start: int, total: int) -> None:
    if stop_at is not None and not start < stop_at <= total:
        raise RunError(f"--stop-at must be in {start + 1}..{total}, got {stop_at}")


def checked_flags(request: TrainRequest) -> Preset:
    """Every flag that can be checked without the run folder; the recipe of a fresh start:
    the preset, then each ``--set KEY=VALUE`` (training.run.recipe), then ``--steps``."""
    steps = request.steps
    try:
        get_task(request.task)
        recipe = apply_overrides(get_preset(request.preset or "paper"), request.overrides)
        if steps is not None:  # the check a resume applies to the saved settings: what starts, resumes
            steps = check_steps(steps)
    except ValueError as e:
        raise RunError(str(e)) from None
    if request.seed is not None:
        check_seed(request.seed)
    if request.resume:
        return recipe
    total = recipe.steps if steps is None else steps
    check_stop_at(request.stop_at, 0, total)
    return dataclasses.replace(recipe, steps=total)


def model_config(task: str, recipe: Preset, where: str) -> ModelConfig:
    """The model a recipe trains, its size checked before anything is allocated."""
    try:
        config = ModelConfig(vocab_size=len(get_task(task).vocab), **recipe.model)
    except (TypeError, ValueError) as error:
        raise RunError(f"{where}: bad model in the recipe: {error}") from None
    return check_model_size(config, where)


def check_run_memory(recipe: Preset, config, dev: torch.device, ranks: Ranks) -> None:
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
    check_eval_memory(recipe, config, dev)


def check_eval_memory(recipe: Preset, config, dev: torch.device) -> None:
    """Refuse an evaluation batch the device cannot hold (one model: a batched run evaluates its
    members one at a time)."""
    check_memory(
        config,
        recipe.eval_batch_size,
        SEQ_LEN,
        dev,
        f"eval_batch_size {recipe.eval_batch_size}",
        training=False,
    )

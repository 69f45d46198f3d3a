"""What ``train --resume`` reads, checks and repairs before it trains on.

* Settings come from the last checkpoint's ``training_state.json`` (shape-checked); a flag
  given again must agree with them.
* The checkpoint's weights must match its config and this run's model, and its AdamW state
  must have the shapes of the model's parameters (``checks.check_optimizer_state``); both
  must be finite (``checkpoints.load_checkpoint``).  Another run's state (another vocabulary,
  another width) is refused naming the tensor.
* ``RUN/config.json`` must describe the checkpoints' model: a checkpoint folder holding
  another architecture is refused by name.  A missing ``config.json`` is written again.
* ``RUN/model.safetensors`` missing: it is restored from the checkpoint of the best step so
  far, whose ``model.safetensors`` holds the very tensors training wrote to RUN at that step
  (both are saved from the same state).  When that checkpoint is gone too, the resume exits
  2 naming both files: it never reports a best step whose weights it did not write.
* ``metrics.jsonl``: lines logged after the checkpoint are dropped, and so is a torn last
  line (a kill during an append), which a one-line note on stderr reports.
"""

from __future__ import annotations

from pathlib import Path

from theory.io.files import atomic_write_bytes
from training.model.gptj import ModelConfig

from .checkpoints import STATE_JSON, checkpoint_name
from .checks import RunError, check_recipe
from .metrics import Metrics
from .notes import note
from .presets import Preset
from .weights import WEIGHTS, read_config, write_json_atomic

__all__ = [
    "resumed_settings",
    "check_run_config",
    "restore_best_weights",
    "truncate_metrics",
]


def resumed_settings(info: dict, last_path: Path, flags: dict) -> tuple[dict, Preset]:
    """The run's settings and recipe; ``flags`` (task, preset, steps, seed) given again must agree."""
    saved = info["settings"]
    for key, given in flags.items():
        if given is not None and given != saved[key]:
            raise RunError(f"cannot resume with --{key} {given}: the run was started with {saved[key]}")
    return saved, check_recipe(saved["recipe"], f"bad {last_path / STATE_JSON}: field 'settings.recipe'")


def check_run_config(out: Path, config: ModelConfig, last_path: Path) -> None:
    path = out / "config.json"
    if not path.exists():
        write_json_atomic(path, config.to_config_dict())
        note(f"wrote the missing {path} from the run's settings")
    elif read_config(out) != config:
        raise RunError(
            f"{path} does not match checkpoint {last_path}: the checkpoint folder holds a model "
            f"of another architecture"
        )


def restore_best_weights(out: Path, ckpt_dir: Path, best_step: int) -> None:
    target = out / WEIGHTS
    if target.exists():
        return
    source = ckpt_dir / checkpoint_name(best_step) / WEIGHTS
    if not source.is_file():
        raise RunError(
            f"cannot resume: {target} is missing and so is {source}, the checkpoint of the best "
            f"step {best_step} it would be restored from"
        )
    atomic_write_bytes(target, source.read_bytes(), fsync=True, parents=False)
    note(f"restored the missing {target} from {source} (best step so far)")


def truncate_metrics(metrics: Metrics, step: int) -> None:
    metrics.truncate(step)
    if metrics.torn_line is not None:
        note(f"dropped line {metrics.torn_line} of {metrics.path}, cut off by an interrupted write")

"""Checkpoints of a run: writing one atomically, listing them, loading one to resume.

Layout of a run folder::

    RUN/config.json              GPT-J config (model_type "gptj"), HF-readable
    RUN/model.safetensors        best checkpoint's weights, HF parameter names
    RUN/vocab.json               token strings in id order
    RUN/metrics.jsonl            one JSON object per line (see training.run.loop)
    RUN/.lock                    only while a train process holds the run (training.run.lock)
    CKPT/step-NNNNNN/            CKPT = RUN/checkpoints unless --checkpoint-dir
        config.json, model.safetensors         same format as RUN/
        training_state.safetensors             optimizer moments + RNG states
        training_state.json                    step, settings, best so far, scalars
    CKPT/owner.json              the run these checkpoints belong to (training.run.ownership)

The weights and config of a folder are read and written by ``training.run.weights``, and
``metrics.jsonl`` by ``training.run.metrics``; both are re-exported here, where most callers
have always found them.

No pickles anywhere: tensors go to safetensors, scalars to JSON.  A checkpoint is
written into a hidden temporary directory and moved into place with one
``os.replace``, so a kill leaves either the whole checkpoint or none of it.  Every JSON
file is read through ``theory.io.inputs`` (regular files only, strict UTF-8, nesting bounded) and
checked for shape where it is read (``training.run.checks``), and one folder's
checkpoints must share one architecture.

A checkpoint holds only finite tensors: one with a NaN or an infinity is neither written nor
resumed from (``nonfinite``), and the optimizer state loaded on ``--resume`` must have the
shapes of the model's parameters (``checks.check_optimizer_state``), so another run's state cannot
be fed to AdamW.  A full disk while writing one (``theory.io.files.DISK_ERRORS``) is an
``OutputError`` naming the file: the temporary folder goes, the previous checkpoints stay.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import torch

from theory.io.files import DISK_ERRORS, OutputError
from theory.io.inputs import InputError, load_json
from training.model.gptj import GPTJ

from .checks import RunError, check_optimizer_state, check_state_info
from .metrics import Metrics
from .weights import (
    CONFIG,
    WEIGHTS,
    load_model,
    read_config,
    read_run_json,
    read_tensors,
    save_tensors_atomic,
    save_weights,
    write_json_atomic,
)

__all__ = [
    "RUN_FILES",
    "Metrics",
    "save_weights",
    "load_model",
    "read_config",
    "read_state_info",
    "write_json_atomic",
    "save_checkpoint",
    "load_checkpoint",
    "list_checkpoints",
    "checkpoint_name",
    "remove_partial",
    "nonfinite",
]

STATE_TENSORS, STATE_JSON = "training_state.safetensors", "training_state.json"
_STEP_DIR = re.compile(r"^step-(\d{6,})$")
RUN_FILES = ("config.json", "model.safetensors", "vocab.json", "metrics.jsonl", "recipe.json")


def _fsync(path) -> None:
    """Flush a file (or directory entry) to disk, so a rename never exposes an empty file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def checkpoint_name(step: int) -> str:
    return f"step-{step:06d}"


def list_checkpoints(checkpoint_dir, same_architecture: bool = True) -> list[tuple[int, Path]]:
    """Finished checkpoints ``(step, path)`` in step order (temporary dirs are skipped).
    ``same_architecture``: RunError when two of them have different ``config.json``."""
    checkpoint_dir = Path(checkpoint_dir)
    if not checkpoint_dir.is_dir():
        return []
    found = []
    for p in checkpoint_dir.iterdir():
        m = _STEP_DIR.match(p.name)
        if m and p.is_dir():
            found.append((int(m.group(1)), p))
    found.sort()
    if same_architecture:
        _check_one_architecture(found)
    return found


def _check_one_architecture(found) -> None:
    """Checkpoints of two models in one folder (copied together by hand, say) are refused by name."""
    first = None
    for _, path in found:
        try:
            config = load_json(path / CONFIG)
        except InputError:
            continue  # reported by whoever loads that checkpoint
        if first is None:
            first = (path, config)
        elif config != first[1]:
            both = [c for c in (config, first[1]) if isinstance(c, dict)]
            keys = sorted(set(config) | set(first[1])) if len(both) == 2 else []
            field = next((k for k in keys if config.get(k) != first[1].get(k)), "the whole file")
            raise RunError(
                f"{path / CONFIG} does not match {first[0] / CONFIG} (field {field!r}): "
                f"{path.parent} mixes checkpoints of two architectures"
            )


def _optimizer_to_files(optimizer: torch.optim.Optimizer):
    """Split ``optimizer.state_dict()`` into tensors (safetensors) and scalars (JSON)."""
    sd = optimizer.state_dict()
    tensors, scalars = {}, {}
    for index, state in sd["state"].items():
        for key, value in state.items():
            if torch.is_tensor(value):
                tensors[f"optimizer.{index}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars[f"{index}.{key}"] = value
    return tensors, {"param_groups": sd["param_groups"], "state_scalars": scalars}


def _optimizer_from_files(tensors: dict, meta: dict) -> dict:
    """The ``optimizer.state_dict()`` that ``_optimizer_to_files`` split (ValueError if malformed)."""
    state: dict = {}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = value
    for name, value in meta["state_scalars"].items():
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = value
    return {"state": state, "param_groups": meta["param_groups"]}


def nonfinite(tensors: dict) -> str | None:
    """The name of the first tensor of ``tensors`` holding a NaN or an infinity, or None."""
    return next(
        (
            name
            for name, value in tensors.items()
            if value.is_floating_point() and not torch.isfinite(value).all()
        ),
        None,
    )


def read_state_info(path) -> dict:
    """The checked ``training_state.json`` of the checkpoint folder ``path``."""
    path = Path(path)
    info = read_run_json(path / STATE_JSON, f"corrupt checkpoint {path}")
    named = _STEP_DIR.match(path.name)
    return check_state_info(info, path / STATE_JSON, int(named.group(1)) if named else None)


def save_checkpoint(checkpoint_dir, step: int, model: GPTJ, optimizer, info: dict) -> Path:
    """Write ``CKPT/step-NNNNNN`` atomically.  ``info`` (JSON-able) holds settings etc.
    RunError (nothing written) if a weight or moment is not finite; OutputError on a full disk."""
    checkpoint_dir = Path(checkpoint_dir)
    final = checkpoint_dir / checkpoint_name(step)
    tensors, optim_meta = _optimizer_to_files(optimizer)
    bad = nonfinite({**model.state_dict(), **tensors})
    if bad is not None:  # the last resort: train stops before this (training.run.loop)
        raise RunError(f"not writing checkpoint {final}: tensor {bad} holds NaN or infinite values")
    tensors["rng.torch"] = torch.get_rng_state()
    if torch.cuda.is_available():
        for d, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{d}"] = s
    tmp = checkpoint_dir / f".tmp-{checkpoint_name(step)}-{os.getpid()}"
    try:
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        save_weights(tmp, model)
        save_tensors_atomic(tmp / STATE_TENSORS, tensors)
        write_json_atomic(tmp / STATE_JSON, {"format": 1, "step": step, "optimizer": optim_meta, **info})
        if final.exists():  # only after --force/--resume decided it may go
            shutil.rmtree(final)
        os.replace(tmp, final)
        _fsync(checkpoint_dir)
    except Exception as error:  # (a kill or Ctrl-C leaves the folder to remove_partial, like SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)  # a failed write leaves no half-written checkpoint
        if isinstance(error, OSError) and error.errno in DISK_ERRORS:  # mkdir, rename, fsync
            reason = error.strerror
        elif isinstance(
            error, OutputError
        ):  # a file's write (theory.io.files: "cannot write TMP: REASON; ...")
            reason = str(error).rsplit(": ", 1)[-1].split(";")[0]
        else:
            raise
        raise OutputError(
            f"cannot write checkpoint {final}: {reason}; the earlier checkpoints are unchanged "
            f"and --resume continues from the last one"
        ) from None
    return final


def load_checkpoint(path, model: GPTJ, optimizer) -> dict:
    """Restore weights, optimizer and RNG states in place; return the JSON info."""
    path = Path(path)
    info = read_state_info(path)
    loaded = load_model(path, device="cpu")
    if loaded.config != model.config:
        raise RunError(f"checkpoint {path} has a different model config than this run")
    bad = nonfinite(loaded.state_dict())
    if bad is not None:
        raise RunError(
            f"{path / WEIGHTS}: tensor {bad} holds NaN or infinite values; resume from an earlier checkpoint"
        )
    model.load_state_dict(loaded.state_dict())
    tensors = read_tensors(path / STATE_TENSORS)
    try:
        saved = _optimizer_from_files(tensors, info["optimizer"])
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise RunError(f"corrupt checkpoint {path}: training state: {e}") from None
    names = {id(p): name for name, p in model.named_parameters()}
    check_optimizer_state(
        path / STATE_TENSORS,
        [(names.get(id(p), "?"), p.shape) for group in optimizer.param_groups for p in group["params"]],
        saved,
    )
    bad = nonfinite({k: v for k, v in tensors.items() if k.startswith("optimizer.")})
    if bad is not None:
        raise RunError(
            f"{path / STATE_TENSORS}: tensor {bad} holds NaN or infinite values; resume from an "
            f"earlier checkpoint"
        )
    try:
        optimizer.load_state_dict(saved)
        torch.set_rng_state(tensors["rng.torch"])
        if torch.cuda.is_available():
            states = [tensors[k] for k in sorted(k for k in tensors if k.startswith("rng.cuda."))]
            if states:
                torch.cuda.set_rng_state_all(states)
    except (KeyError, ValueError, TypeError, AttributeError, RuntimeError) as e:
        raise RunError(f"corrupt checkpoint {path}: training state: {e}") from None
    return info


def remove_partial(ckpt_dir: Path) -> None:
    """Temporary dirs of checkpoints whose writing was killed before the final rename."""
    if Path(ckpt_dir).is_dir():
        for p in Path(ckpt_dir).glob(".tmp-step-*"):
            shutil.rmtree(p, ignore_errors=True)

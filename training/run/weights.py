"""A model folder's weights and config: ``config.json`` + ``model.safetensors``, HF-compatible.

The same two files make a run folder (RUN/), a checkpoint (CKPT/step-NNNNNN/) and any HF GPT-J
``save_pretrained`` folder, so reading and writing them lives here, apart from the checkpoint
machinery (``training.run.checkpoints``: optimizer state, RNG, atomic folder swap) that builds
on them.  Every JSON is read through ``theory.io.inputs`` and its config checked field by field
(``checks.config_from_dict``); every file is written atomically (``theory.io.files``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from theory.io.files import atomic_write_bytes, atomic_write_json
from theory.io.inputs import ANY, InputError, load_json
from training.model.gptj import GPTJ, ModelConfig
from training.run.checks import RunError, config_from_dict

__all__ = [
    "CONFIG",
    "WEIGHTS",
    "write_json_atomic",
    "save_tensors_atomic",
    "save_weights",
    "read_run_json",
    "read_config",
    "read_tensors",
    "load_model",
]

CONFIG, WEIGHTS = "config.json", "model.safetensors"


def write_json_atomic(path: Path, obj) -> None:
    """Indented JSON, flushed to disk before the rename (theory.io.files does the swap)."""
    atomic_write_json(path, obj, indent=2, trailing_newline=True, fsync=True, parents=False)


def save_tensors_atomic(path: Path, tensors: dict) -> None:
    # metadata "pt": what HF's loader expects
    atomic_write_bytes(path, save(tensors, metadata={"format": "pt"}), fsync=True, parents=False)


def save_weights(directory, model: GPTJ, write_config: bool = True) -> None:
    """``config.json`` + ``model.safetensors`` that ``GPTJForCausalLM.from_pretrained`` loads
    (a variant HF cannot represent gets our own config, ``ModelConfig.to_config_dict``, which
    only ``load_model`` reads)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if write_config:
        write_json_atomic(directory / CONFIG, model.config.to_config_dict())
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in model.state_dict().items()}
    save_tensors_atomic(directory / WEIGHTS, tensors)


def read_run_json(path: Path, what: str = "corrupt"):
    """The JSON value in ``path`` (theory.io.inputs: a FIFO, bad UTF-8 or deep nesting is one line)."""
    if not os.path.lexists(path):
        raise RunError(f"missing {path}")
    try:
        return load_json(path, ANY, what)
    except InputError as error:
        raise RunError(str(error)) from None


def read_config(directory) -> ModelConfig:
    path = Path(directory) / CONFIG
    return config_from_dict(read_run_json(path, "bad config"), path)


def read_tensors(path: Path) -> dict:
    try:
        return load_file(str(path))
    except FileNotFoundError:
        raise RunError(f"missing {path}") from None
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise RunError(f"corrupt {path}: {e}") from None


def is_hf_mask_buffer(name: str) -> bool:
    """HF's old GPT-J checkpoints carry causal-mask buffers (``attn.bias``, ``attn.masked_bias``)
    that are no parameters: every reader of a weights file skips them."""
    return re.search(r"attn\.(bias|masked_bias)$", name) is not None


def load_model(directory, device="cpu") -> GPTJ:
    """Our ``GPTJ`` from a run, a checkpoint, or any HF GPT-J ``save_pretrained`` folder, in
    eval mode (dropout off, as HF's ``from_pretrained``); call ``.train()`` to train it.

    Every parameter must be present with the shape the config implies; extra
    non-parameter entries HF may carry (old ``attn.bias`` masks) are ignored.
    """
    directory = Path(directory)
    config = read_config(directory)
    state = read_tensors(directory / WEIGHTS)
    state = {k: v for k, v in state.items() if not is_hf_mask_buffer(k)}
    model = GPTJ(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise RunError(
            f"{directory / WEIGHTS} does not match {directory / CONFIG}: "
            f"missing {missing[:3]}, unexpected {unexpected[:3]}"
        )
    for name, tensor in expected.items():
        if state[name].shape != tensor.shape:
            raise RunError(
                f"{directory / WEIGHTS} does not match {directory / CONFIG}: {name} has shape "
                f"{tuple(state[name].shape)}, config implies {tuple(tensor.shape)}"
            )
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()})
    return model.to(device).eval()

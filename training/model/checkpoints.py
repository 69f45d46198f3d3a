"""Reading and writing runs: HF-compatible weights, training state, atomic checkpoints.

Layout (``spec/architecture.md``)::

    RUN/config.json              GPT-J config (model_type "gptj"), HF-readable
    RUN/model.safetensors        best checkpoint's weights, HF parameter names
    RUN/vocab.json               token strings in id order
    RUN/metrics.jsonl            one JSON object per line (see training.model.train)
    CKPT/step-NNNNNN/            CKPT = RUN/checkpoints unless --checkpoint-dir
        config.json, model.safetensors         same format as RUN/
        training_state.safetensors             optimizer moments + RNG states
        training_state.json                    step, settings, best so far, scalars

No pickles anywhere: tensors go to safetensors, scalars to JSON.  A checkpoint is
written into a hidden temporary directory and moved into place with one
``os.replace``, so a kill leaves either the whole checkpoint or none of it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from theory.files import atomic_write_bytes, atomic_write_json, atomic_write_text
from training.tasks.definitions import load_vocab

from .gptj import GPTJ, ModelConfig

__all__ = [
    "RunError", "RUN_FILES", "Metrics", "prepare_run", "save_weights", "load_model", "read_config",
    "write_json_atomic", "save_checkpoint", "load_checkpoint", "list_checkpoints", "checkpoint_name",
]

CONFIG, WEIGHTS = "config.json", "model.safetensors"
STATE_TENSORS, STATE_JSON = "training_state.safetensors", "training_state.json"
_STEP_DIR = re.compile(r"^step-(\d{6,})$")
RUN_FILES = ("config.json", "model.safetensors", "vocab.json", "metrics.jsonl")


class RunError(Exception):
    """A problem with the user's files or arguments: reported as one line, exit status 2."""


def _fsync(path) -> None:
    """Flush a file (or directory entry) to disk, so a rename never exposes an empty file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, obj) -> None:
    """Indented JSON, flushed to disk before the rename (theory.files does the swap)."""
    atomic_write_json(path, obj, indent=2, trailing_newline=True, fsync=True, parents=False)


def _save_tensors_atomic(path: Path, tensors: dict) -> None:
    # metadata "pt": what HF's loader expects
    atomic_write_bytes(path, save(tensors, metadata={"format": "pt"}), fsync=True, parents=False)


def save_weights(directory, model: GPTJ, write_config: bool = True) -> None:
    """``config.json`` + ``model.safetensors`` that ``GPTJForCausalLM.from_pretrained`` loads."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if write_config:
        write_json_atomic(directory / CONFIG, model.config.to_hf_dict())
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in model.state_dict().items()}
    _save_tensors_atomic(directory / WEIGHTS, tensors)


def read_config(directory) -> ModelConfig:
    path = Path(directory) / CONFIG
    try:
        return ModelConfig.from_hf_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        raise RunError(f"missing {path}") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise RunError(f"bad config {path}: {e}") from None


def _read_tensors(path: Path) -> dict:
    try:
        return load_file(str(path))
    except FileNotFoundError:
        raise RunError(f"missing {path}") from None
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise RunError(f"corrupt {path}: {e}") from None


def load_model(directory, device="cpu") -> GPTJ:
    """Our ``GPTJ`` from a run, a checkpoint, or any HF GPT-J ``save_pretrained`` folder, in
    eval mode (dropout off, as HF's ``from_pretrained``); call ``.train()`` to train it.

    Every parameter must be present with the shape the config implies; extra
    non-parameter entries HF may carry (old ``attn.bias`` masks) are ignored.
    """
    directory = Path(directory)
    config = read_config(directory)
    state = _read_tensors(directory / WEIGHTS)
    state = {k: v for k, v in state.items() if not re.search(r"attn\.(bias|masked_bias)$", k)}
    model = GPTJ(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise RunError(f"{directory / WEIGHTS} does not match {directory / CONFIG}: "
                       f"missing {missing[:3]}, unexpected {unexpected[:3]}")
    for name, tensor in expected.items():
        if state[name].shape != tensor.shape:
            raise RunError(f"{directory / WEIGHTS} does not match {directory / CONFIG}: {name} has shape "
                           f"{tuple(state[name].shape)}, config implies {tuple(tensor.shape)}")
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()})
    return model.to(device).eval()


def checkpoint_name(step: int) -> str:
    return f"step-{step:06d}"


def list_checkpoints(checkpoint_dir) -> list[tuple[int, Path]]:
    """Finished checkpoints ``(step, path)`` in step order (temporary dirs are skipped)."""
    checkpoint_dir = Path(checkpoint_dir)
    if not checkpoint_dir.is_dir():
        return []
    found = []
    for p in checkpoint_dir.iterdir():
        m = _STEP_DIR.match(p.name)
        if m and p.is_dir():
            found.append((int(m.group(1)), p))
    return sorted(found)


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


def _optimizer_from_files(optimizer, tensors: dict, meta: dict) -> None:
    state: dict = {}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = value
    for name, value in meta["state_scalars"].items():
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


def save_checkpoint(checkpoint_dir, step: int, model: GPTJ, optimizer, info: dict) -> Path:
    """Write ``CKPT/step-NNNNNN`` atomically.  ``info`` (JSON-able) holds settings etc."""
    checkpoint_dir = Path(checkpoint_dir)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    final = checkpoint_dir / checkpoint_name(step)
    tmp = checkpoint_dir / f".tmp-{checkpoint_name(step)}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    save_weights(tmp, model)
    tensors, optim_meta = _optimizer_to_files(optimizer)
    tensors["rng.torch"] = torch.get_rng_state()
    if torch.cuda.is_available():
        for d, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{d}"] = s
    _save_tensors_atomic(tmp / STATE_TENSORS, tensors)
    write_json_atomic(tmp / STATE_JSON, {"format": 1, "step": step, "optimizer": optim_meta, **info})
    if final.exists():  # only after --force/--resume decided it may go
        shutil.rmtree(final)
    os.replace(tmp, final)
    _fsync(checkpoint_dir)
    return final


def load_checkpoint(path, model: GPTJ, optimizer) -> dict:
    """Restore weights, optimizer and RNG states in place; return the JSON info."""
    path = Path(path)
    try:
        info = json.loads((path / STATE_JSON).read_text())
    except FileNotFoundError:
        raise RunError(f"corrupt checkpoint {path}: missing {STATE_JSON}") from None
    except json.JSONDecodeError as e:
        raise RunError(f"corrupt checkpoint {path}: {STATE_JSON}: {e}") from None
    loaded = load_model(path, device="cpu")
    if loaded.config != model.config:
        raise RunError(f"checkpoint {path} has a different model config than this run")
    model.load_state_dict(loaded.state_dict())
    tensors = _read_tensors(path / STATE_TENSORS)
    try:
        _optimizer_from_files(optimizer, tensors, info["optimizer"])
        torch.set_rng_state(tensors["rng.torch"])
        if torch.cuda.is_available():
            states = [tensors[k] for k in sorted(k for k in tensors if k.startswith("rng.cuda."))]
            if states:
                torch.cuda.set_rng_state_all(states)
    except (KeyError, ValueError, RuntimeError) as e:
        raise RunError(f"corrupt checkpoint {path}: training state: {e}") from None
    return info


class Metrics:
    """RUN/metrics.jsonl: a ``settings`` line, then ``train`` and ``validation`` lines."""

    def __init__(self, path: Path):
        self.path = path

    def read(self) -> list[dict]:
        try:
            return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
        except FileNotFoundError:
            return []
        except json.JSONDecodeError as e:
            raise RunError(f"corrupt {self.path}: {e}") from None

    def truncate(self, step: int) -> None:
        """Drop what an interrupted run logged after the checkpoint it resumes from."""
        keep = [r for r in self.read() if r.get("step", 0) <= step]
        atomic_write_text(self.path, "".join(json.dumps(r) + "\n" for r in keep), parents=False)

    def append(self, record: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")


def prepare_run(out: Path, ckpt_dir: Path | None, task_name: str, resume: bool, force: bool):
    """Check what exists at RUN before touching anything; return the checkpoint dir."""
    if resume and force:
        raise RunError("--resume and --force exclude each other")
    existing = [f for f in RUN_FILES if (out / f).exists()]
    if resume:
        if not existing:
            raise RunError(f"nothing to resume: {out} holds no run")
        try:
            load_vocab(out / "vocab.json", task_name)
        except (OSError, ValueError) as e:
            raise RunError(f"cannot resume: {e}") from None
        if ckpt_dir is None:  # the settings line remembers where checkpoints went
            header = next((r for r in Metrics(out / "metrics.jsonl").read() if r.get("split") == "settings"), {})
            ckpt_dir = out / header.get("checkpoint_dir", "checkpoints")  # an absolute one replaces out
        if not list_checkpoints(ckpt_dir):
            raise RunError(f"cannot resume: no checkpoint in {ckpt_dir}")
        _remove_partial(ckpt_dir)
        return ckpt_dir
    ckpt_dir = ckpt_dir or out / "checkpoints"
    if (existing or list_checkpoints(ckpt_dir)) and not force:
        raise RunError(f"{out} already holds a run; pass --resume to continue it or --force to replace it")
    if force:  # remove only what a run writes, never unknown files
        for f in existing:
            (out / f).unlink()
        for _, path in list_checkpoints(ckpt_dir):
            shutil.rmtree(path)
        _remove_partial(ckpt_dir)
    return ckpt_dir


def _remove_partial(ckpt_dir: Path) -> None:
    """Temporary dirs of checkpoints whose writing was killed before the final rename."""
    if Path(ckpt_dir).is_dir():
        for p in Path(ckpt_dir).glob(".tmp-step-*"):
            shutil.rmtree(p, ignore_errors=True)

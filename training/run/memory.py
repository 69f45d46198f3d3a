"""The memory a training or evaluation step needs, estimated from the model's sizes alone,
and the refusal of a step that would need more than the device has.

Used by ``train`` (at a start and on ``--resume``) and ``bench``, before anything is allocated:
a batch too large for the device is one line naming the value to change, not an out-of-memory
kill or minutes of swapping later.  Separate from ``checks`` (the shape checks of a run's
files) because it asks the machine, not a file: free CUDA memory or the host's MemAvailable.
"""

from __future__ import annotations

import os

from training.model.gptj import ModelConfig

from .checks import RunError, parameter_count

__all__ = [
    "ACTIVATION_BYTES",
    "ATTENTION_BYTES",
    "PARAMETER_BYTES",
    "step_memory",
    "available_memory",
    "check_memory",
]

# Bytes one training step keeps per (row x token x n_embd x layer): what autograd saves for the
# backward pass (LayerNorm, q/k/v and their rotary copies, the MLP's 4 n_embd in and out, dropout
# masks), float32.  Measured about 105 on CPU (the paper model, batch 256); 128 leaves a margin.
ACTIVATION_BYTES = 128
# Per attention score (row x head x token^2 x layer): scores, softmax, dropout mask; measured ~12.
ATTENTION_BYTES = 16
# Per parameter: the float32 weight, its gradient and AdamW's two moments.
PARAMETER_BYTES = 16


def step_memory(
    config: ModelConfig,
    rows: int,
    tokens: int,
    *,
    training: bool = True,
    copies: int = 1,
    scores: bool = True,
) -> int:
    """Bytes a step on ``rows`` sequences of ``tokens`` tokens needs, by estimate.  Without
    ``training`` (evaluation under no_grad) only about two layers' activations live at once.
    ``copies``: models side by side (bench trains ours and HF's).  ``scores``: the attention
    matrices are materialised (CPU); CUDA's fused attention kernels never hold them."""
    layers = config.n_layer if training else min(2, config.n_layer)
    per_token = ACTIVATION_BYTES * config.n_embd + ATTENTION_BYTES * config.n_head * tokens * scores
    logits = 12 * config.vocab_size  # logits, softmax and gradient at every position (HF's head does that)
    return copies * (
        PARAMETER_BYTES * parameter_count(config) + rows * tokens * (layers * per_token + logits)
    )


def available_memory(device) -> tuple[int, str]:
    """(bytes, where they were read): free memory of a CUDA device, else the host's
    MemAvailable (/proc/meminfo), else its physical memory."""
    name = str(device)
    if name.startswith("cuda"):
        import torch  # only asked with a CUDA device, which training has imported torch for

        return torch.cuda.mem_get_info(device)[0], f"free on {name}"
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available (MemAvailable in /proc/meminfo)"
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "of physical memory"


def _size(n: float) -> str:
    unit, scale = next(((u, f) for u, f in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9)) if n >= f), ("MB", 1e6))
    return f"{n / scale:.3g} {unit}"


def check_memory(
    config: ModelConfig, rows: int, tokens: int, device, what: str, *, training: bool = True, copies: int = 1
) -> int:
    """RunError naming ``what`` (the value to change), the estimate and the limit when a step
    would need more memory than ``device`` has: refused before the first allocation, not an
    out-of-memory kill (or minutes of swapping) later.  Returns the estimate."""
    need = step_memory(
        config, rows, tokens, training=training, copies=copies, scores=not str(device).startswith("cuda")
    )
    limit, source = available_memory(device)
    if need > limit:
        raise RunError(
            f"{what}: a step on {rows} sequences of {tokens} tokens needs about {_size(need)} of "
            f"memory (estimated from the model's sizes), more than the {_size(limit)} {source}; "
            f"use a smaller batch"
        )
    return need

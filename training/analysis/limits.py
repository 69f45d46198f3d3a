"""What one analysis command may ask for, and where it runs: the memory and time limits that
``evaluate``, ``analyze`` and ``dilution`` check before any model is loaded, and their
``--device`` option.
"""

from __future__ import annotations

import os

from training.cli_common import UsageError
from training.run.checks import RunError

__all__ = [
    "MAX_WORK",
    "memory_limit",
    "forward_work",
    "forward_memory",
    "check_budget",
    "add_device_option",
    "device_of",
]

# -- limits on what one command may ask for, checked before any model is loaded ---------------
# Time.  PyTorch's CPU attention kernel never builds the T x T matrix, so memory grows only
# linearly with the length n, but time does not: every query meets every earlier key, about
# n^2 * n_embd multiply-adds per layer and sequence, on top of n * (4 n_embd^2 + 2 n_embd n_inner)
# for the projections and the MLP.  Measured on one CPU core with the paper's model (12 layers,
# n_embd 128): 2.7 s for one 5,000-token sequence (5e10 multiply-adds), 81 s at 40,000; about
# 2e10 per second.  MAX_WORK is about 7 hours at that rate: the reference grid
# (scripts/analyze_reference.sh) needs 1/60 of it, one sequence of 1,000,017 tokens three times it.
MAX_WORK = 5e14
# Memory.  The estimates below are rough (within a factor 2), so a request may use at most half
# of this machine's memory.
_FALLBACK_MEMORY = 16 * 2**30


def memory_limit() -> int:
    """Half of this machine's physical memory (16 GiB assumed where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return _FALLBACK_MEMORY // 2


def forward_work(config, length: int, sequences: int) -> float:
    """Multiply-adds of ``sequences`` forward passes at ``length`` tokens (comment above)."""
    per_token = length * config.n_embd + 4 * config.n_embd**2 + 2 * config.n_embd * config.n_inner
    return float(sequences) * config.n_layer * length * per_token


def forward_memory(config, batch_tokens: int, internals: bool = False, itemsize: int = 4) -> int:
    """Bytes of one forward pass over ``batch_tokens`` tokens: the activations of a block (the
    residual, LayerNorm, q, k, v, attention output, MLP), the rotary tables, and with
    ``internals`` every layer's hidden states and keys kept for the analysis."""
    per_token = 8 * config.n_embd + 2 * config.n_inner + 4 * config.rotary_dim
    if internals:
        per_token += config.n_layer * (3 * config.n_embd + config.n_head)
    return batch_tokens * per_token * itemsize


def check_budget(what: str, memory: float, work: float, advice: str) -> None:
    """UsageError naming the limit when ``memory`` bytes or ``work`` multiply-adds exceed it."""
    limit = memory_limit()
    if memory > limit:
        raise UsageError(
            f"{what} needs about {memory / 2**30:.1f} GiB of memory; the limit is {limit / 2**30:.1f} "
            f"GiB (half of this machine's memory): {advice}"
        )
    if work > MAX_WORK:
        raise UsageError(
            f"{what} needs about {work:.1e} multiply-adds (~{work / 2e10 / 3600:.0f} h on one CPU core); "
            f"the limit is {MAX_WORK:.0e} (~{MAX_WORK / 2e10 / 3600:.0f} h): {advice}"
        )


def add_device_option(parser) -> None:
    """``--device auto|cpu|cuda`` of the commands that run a trained model (auto: CUDA when present)."""
    parser.add_argument(
        "--device",
        default="auto",
        choices=("auto", "cpu", "cuda"),
        help="where the model runs (default auto: CUDA when present)",
    )


def device_of(args):
    """The torch device of ``--device``; a UsageError when CUDA is asked for and absent."""
    from training.run.start import resolve_device

    try:
        return resolve_device(args.device)
    except RunError as error:  # no CUDA device
        raise UsageError(str(error)) from None

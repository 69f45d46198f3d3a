"""``torch.compile`` for the training step, with a compile cache on disk shared by every run.

Why: half of a CPU training step is elementwise passes (LayerNorm, GELU, softmax, rotary,
dropout) between the matrix products; inductor fuses them.  Compiling costs minutes on a busy
CPU, so the result is kept: inductor's FX-graph cache and AOT-autograd cache (the forward and
backward graphs and their generated kernels) go to ``compile_cache_dir()`` and a later process
compiling the same model shapes -- another member, another run, another session -- loads them
instead of generating code again (it still traces the model: that is the "warm" compile time
``bench --k-table`` reports).

Where: ``compile_cache_dir()`` = ``theory.files.user_cache_dir()/inductor``, i.e. ``$ROPE_HEADS_CACHE/inductor``,
else ``$XDG_CACHE_HOME/rope-heads/inductor``, else ``~/.cache/rope-heads/inductor``; it is
handed to torch as ``TORCHINDUCTOR_CACHE_DIR`` (inductor reads the variable at each use).

Randomness: ``fallback_random`` makes compiled code draw its random numbers with the eager
operators, in the eager order, so a compiled run's dropout masks are its eager run's and a
compiled step differs from the eager one only by the order of float additions (and
``--resume`` restores the same RNG streams).

What is compiled: the module's forward (``torch.compile(module)``); autograd compiles its
backward from the same graph.  The optimizer (AdamW, already one fused kernel per step),
evaluation and saving run the eager module, whose parameters the compiled one shares.

Seed-batched models (``train --seeds --compile``) gain little: each member's dropout draw swaps
the global RNG state (``BatchedGPTJ.member_rng``), which dynamo cannot trace, so the forward
splits at every draw (``torch._dynamo.explain`` on the paper config shows dozens of graphs) and
the per-layer helpers hit dynamo's recompile limit, after which they run eager.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from theory.files import user_cache_dir

__all__ = ["CACHE_ENV", "BACKEND_ENV", "compile_cache_dir", "use_compile_cache", "compile_module"]

CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"
BACKEND_ENV = "ROPE_HEADS_COMPILE_BACKEND"


def compile_cache_dir() -> Path:
    """The on-disk compile cache of this package (module doc)."""
    return user_cache_dir() / "inductor"


def use_compile_cache(folder=None) -> Path:
    """Point inductor's caches at ``folder`` (default ``compile_cache_dir()``) and switch the
    FX-graph and AOT-autograd caches on; returns the folder.  Process-wide, like torch's own
    settings: call it before compiling."""
    folder = Path(compile_cache_dir() if folder is None else folder).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[CACHE_ENV] = str(folder)
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = True
    functorch_config.enable_autograd_cache = True
    inductor_config.fallback_random = True  # the eager run's dropout masks (module doc)
    return folder


def _fill_rotary_tables(module: torch.nn.Module) -> None:
    """Build the rotary tables a training input needs before compiling: a table made inside the
    compiled code changes the module's state, so the second call would compile again."""
    from training.tasks.vocab import SEQ_LEN

    from .layers import Rotary

    device = next(module.parameters()).device
    members = getattr(module, "members", [])  # a BatchedGPTJ's members rotate its queries and keys
    for part in [*module.modules(), *(p for member in members for p in member.modules())]:
        if isinstance(part, Rotary):  # float32 and bfloat16 activations rotate in complex64
            part.table(SEQ_LEN, device, torch.complex64)


def compile_module(module: torch.nn.Module, cache=None) -> torch.nn.Module:
    """``module`` compiled (static shapes: a training step's never change) with the cache of
    ``use_compile_cache(cache)``.  Compilation happens at the first call.
    ``$ROPE_HEADS_COMPILE_BACKEND`` names another ``torch.compile`` backend than inductor (e.g.
    ``aot_eager``: the same tracing, no code generation, for a quick check of the code path)."""
    use_compile_cache(cache)
    _fill_rotary_tables(module)
    return torch.compile(module, dynamic=False, backend=os.environ.get(BACKEND_ENV) or "inductor")

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

When (``compile_by_default``): ``train`` without ``--compile``/``--no-compile`` compiles a run only
where a measurement says it pays -- a ``bench --k-table --json`` file saved under
``training/reference/bench/`` for this device type and this preset's model shape, in which the
compiled K = 1 step is faster than the eager one and the warm compile costs under
``WARM_SHARE_MAX`` of the run's compiled time.  Without such a file (the smoke preset, CUDA until
a device has measured it, a ``--set`` that changes the shape) a run stays eager.  The choice is
part of the run's settings: ``--resume`` keeps it, because the compiled step rounds differently.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import torch

from theory.files import user_cache_dir
from theory.inputs import Nullable, load_json

__all__ = ["CACHE_ENV", "BACKEND_ENV", "MEASURED_DIR", "WARM_SHARE_MAX", "SHAPE_KEYS", "compile_cache_dir",
           "use_compile_cache", "compile_module", "compile_by_default"]

CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"
BACKEND_ENV = "ROPE_HEADS_COMPILE_BACKEND"
MEASURED_DIR = Path(__file__).resolve().parents[1] / "reference" / "bench"
WARM_SHARE_MAX = 0.10  # issue 34: compile by default where the warm compile is under 10% of a run
SHAPE_KEYS = ("n_layer", "n_head", "n_embd", "rotary_dim", "n_inner")  # what a compiled step's cost depends on
# the fields of a saved K table (bench_k.run_k_table) the rule reads
TABLE_SHAPE = {"preset": str, "device": str,
               "rows": [{"k": int, "mode": str, "steps_per_s": float, "warm_compile_s": Nullable(float)}]}


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


def _has_cxx_compiler() -> bool:
    """Inductor writes C++ for the CPU: without a compiler, compiling fails."""
    return any(shutil.which(name) for name in (os.environ.get("CXX"), "g++", "c++", "clang++") if name)


def compile_by_default(device_type: str, preset: str, config, steps: int, measured=None) -> tuple[bool, str]:
    """(compile?, why) for a run on ``device_type`` of ``preset`` whose model is ``config`` (a
    ModelConfig) and ``steps`` long: the rule of the module doc, read from the saved K tables in
    ``measured`` (default ``MEASURED_DIR``)."""
    from .config import ModelConfig
    from .presets import PRESETS

    base = PRESETS.get(preset)
    if base is None or any(getattr(ModelConfig(vocab_size=config.vocab_size, **base.model), key) !=
                           getattr(config, key) for key in SHAPE_KEYS):
        return False, f"no measurement of this model shape (the {preset} preset's, changed by --set)"
    tables = [load_json(path, TABLE_SHAPE, "a saved K table")
              for path in sorted(Path(measured or MEASURED_DIR).glob("*.json"))]
    table = next((t for t in tables if t["preset"] == preset and t["device"].split(":")[0] == device_type), None)
    if table is None:
        return False, f"no bench --k-table measurement for the {preset} preset on {device_type}"
    rows = {row["mode"]: row for row in table["rows"] if row["k"] == 1}
    if not {"eager", "compiled"} <= set(rows):
        return False, "the measurement has no K = 1 eager and compiled rows"
    eager, fast = rows["eager"]["steps_per_s"], rows["compiled"]["steps_per_s"]
    if fast <= eager:
        return False, f"measured slower compiled ({fast} against {eager} steps/s)"
    share = rows["compiled"]["warm_compile_s"] / (steps / fast)
    if share >= WARM_SHARE_MAX:
        return False, f"a warm compile would be {share:.0%} of this {steps}-step run (at least {WARM_SHARE_MAX:.0%})"
    if device_type == "cpu" and not _has_cxx_compiler():
        return False, "no C++ compiler (g++, c++, clang++ or $CXX) for inductor"
    return True, (f"measured {fast / eager:.2f}x eager steps/s; a warm compile is {share:.1%} of this "
                  f"{steps}-step run")

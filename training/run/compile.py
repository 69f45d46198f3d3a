"""``torch.compile`` for the training step, with a compile cache on disk shared by every run.

Why: half of a CPU training step is elementwise passes (LayerNorm, GELU, softmax, rotary,
dropout) between the matrix products; inductor fuses them.  Compiling costs minutes on a busy
CPU, so the result is kept: inductor's FX-graph cache and AOT-autograd cache (the forward and
backward graphs and their generated kernels) go to ``compile_cache_dir()`` and a later process
compiling the same model shapes -- another member, another run, another session -- loads them
instead of generating code again (it still traces the model: that is the "warm" compile time
``bench --k-table`` reports).

Where: ``compile_cache_dir()`` = ``theory.io.files.user_cache_dir()/inductor``, i.e. ``$ROPE_HEADS_CACHE/inductor``,
else ``$XDG_CACHE_HOME/rope-heads/inductor``, else ``~/.cache/rope-heads/inductor``; it is
handed to torch as ``TORCHINDUCTOR_CACHE_DIR`` (inductor reads the variable at each use).

Randomness: ``fallback_random`` makes compiled code draw its random numbers with the eager
operators, in the eager order, so a compiled run's dropout masks are its eager run's and a
compiled step differs from the eager one only by the order of float additions (and
``--resume`` restores the same RNG streams).

Reproducible on the CPU: a compiled run gives the same weights bit for bit in every process on
the same machine and thread count -- cold or warm cache, uninterrupted or resumed.  Without help
it does not: inductor lowers the embedding's backward (an ``index_put`` with accumulate) to a C++
loop whose OpenMP threads ``atomic_add`` into shared rows, so with more than one thread the order
of the additions, and the last bits of the embedding gradient, change from run to run (measured:
1,600 of 25,608 smoke weights differ after 6 steps).  ``compile_module`` therefore switches on
torch's deterministic algorithms for a CPU module (inductor then calls the eager, serial kernel
for such scatters; the cache keys include the switch).  CUDA is left as it is: its eager
training is not bit-reproducible either.

What is compiled: the module's forward (``torch.compile(module)``); autograd compiles its
backward from the same graph.  The optimizer (AdamW, already one fused kernel per step),
evaluation and saving run the eager module, whose parameters the compiled one shares.

Seed-batched models (``train --seeds --compile``) compile as one graph too: the members' dropout
masks are drawn before the forward (``BatchedGPTJ.dropout_masks``) and enter it as inputs.  Drawn
inside, each draw switched the global RNG state, which dynamo cannot trace, so the forward split at
every draw and the per-layer helpers hit dynamo's recompile limit: compiled K = 2 then ran at
0.69-0.75 of K = 1's speed per member (the shipped K table has today's).  A batch still stays eager
unless asked (``train --seeds`` has no measured rule).

When (``compile_by_default``): ``train`` without ``--compile``/``--no-compile`` compiles a run only
where a measurement says it pays -- a ``bench --k-table --json`` file saved under
``training/reference/bench/`` for this device type and this preset's model shape, in which the
compiled K = 1 step is faster than the eager one and the warm compile costs under
``WARM_SHARE_MAX`` of the run's compiled time.  Without such a file (the smoke preset, CUDA until
a device has measured it, a ``--set`` that changes the shape) a run stays eager.  The choice is
part of the run's settings (``compile_choice``): ``--resume`` keeps it, because the compiled step
rounds differently.  A saved table is validated where it is read: a number out of range stops
``train`` with one line naming the file and the field (module ``TABLE_SHAPE``).
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import torch

from theory.io.files import user_cache_dir
from theory.io.inputs import Checked, InputError, Nullable, load_json

from .checks import RunError
from .notes import note

__all__ = [
    "CACHE_ENV",
    "BACKEND_ENV",
    "MEASURED_DIR",
    "WARM_SHARE_MAX",
    "SHAPE_KEYS",
    "compile_cache_dir",
    "use_compile_cache",
    "compile_module",
    "tanh_from_exp",
    "compile_by_default",
    "compile_choice",
]

CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"
BACKEND_ENV = "ROPE_HEADS_COMPILE_BACKEND"
MEASURED_DIR = Path(__file__).resolve().parents[1] / "reference" / "bench"
WARM_SHARE_MAX = 0.10  # issue 34: compile by default where the warm compile is under 10% of a run
SHAPE_KEYS = (
    "n_layer",
    "n_head",
    "n_embd",
    "rotary_dim",
    "n_inner",
)  # what a compiled step's cost depends on
# The fields of a saved K table (bench_k.run_k_table) the rule reads, with the values the rule can
# use: a rate of zero, a NaN or a null where a number is needed crashed every `train` before.
# A warm compile may be 0 s: bench_k clips a noisy difference of two step times at zero.
STEPS_PER_S = Checked(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
SECONDS = Checked(float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0 (seconds)")
TABLE_SHAPE = {
    "preset": str,
    "device": str,
    "rows": [
        {
            "k": Checked(int, lambda v: v >= 1, "an integer >= 1"),
            "mode": str,
            "steps_per_s": STEPS_PER_S,
            "warm_compile_s": Nullable(SECONDS),
        }
    ],
}


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
    from training.model.layers import Rotary
    from training.tasks.vocab import SEQ_LEN

    device = next(module.parameters()).device
    members = getattr(module, "members", [])  # a BatchedGPTJ's members rotate its queries and keys
    for part in [*module.modules(), *(p for member in members for p in member.modules())]:
        if isinstance(part, Rotary):  # float32 and bfloat16 activations rotate in complex64
            part.table(SEQ_LEN, device, torch.complex64)


def reproducible_kernels() -> None:
    """torch's deterministic algorithms, process-wide (module doc: reproducible on the CPU).
    ``warn_only``: an operator without a deterministic kernel warns instead of stopping a long run.
    ``fill_uninitialized_memory`` off: it is a debugging aid (NaN in every ``torch.empty``), a cost
    to every eager step, and no correct kernel reads what it fills."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = False


def tanh_from_exp() -> None:
    """Inductor's C++ code writes tanh as ``2 / (1 + exp(-2x)) - 1`` (process-wide, like
    ``reproducible_kernels``; part of the compile cache's key).

    Why: the only tanh of the model is ``gelu_new``'s, and inductor's vectorised ``tanh()`` ran
    3.9x slower than eager's on this package's CPU (1,088 x 512 floats: 1.05 ms against 0.27 ms),
    so the MLP's GELU forward and backward took 3.2 ms a layer, against 1.8 ms written with exp;
    with 11 full layers, about a sixth of a compiled paper-preset step.  torch leaves the exp form
    off by default because near 0 it is exact only to about 1e-8 absolutely (pytorch issue
    148241, where an ``atan2`` then magnified it); ``gelu_new`` adds tanh to 1, whose float32
    spacing (1.2e-7) is larger, so the GELU is unchanged to rounding
    (``tests/test_compile_and_bench.py``)."""
    import torch._inductor.config as inductor_config

    inductor_config.cpp.use_decompose_tanh = True


def compile_module(module: torch.nn.Module, cache=None) -> torch.nn.Module:
    """``module`` compiled (static shapes: a training step's never change) with the cache of
    ``use_compile_cache(cache)``; on the CPU with ``reproducible_kernels`` (module doc) and
    ``tanh_from_exp``, switches that stay on in this process like inductor's settings.
    Compilation happens at the first call.  ``$ROPE_HEADS_COMPILE_BACKEND`` names another
    ``torch.compile`` backend than inductor (e.g. ``aot_eager``: the same tracing, no code
    generation, for a quick check of the code path)."""
    use_compile_cache(cache)
    if next(module.parameters()).device.type == "cpu":
        reproducible_kernels()
        tanh_from_exp()
    _fill_rotary_tables(module)
    return torch.compile(module, dynamic=False, backend=os.environ.get(BACKEND_ENV) or "inductor")


def _has_cxx_compiler() -> bool:
    """Inductor writes C++ for the CPU: without a compiler, compiling fails."""
    return any(shutil.which(name) for name in (os.environ.get("CXX"), "g++", "c++", "clang++") if name)


TABLE_HINT = " (fix or remove the file, or pass --compile or --no-compile)"


def _read_table(path: Path) -> dict:
    """A saved K table, its shape and numbers checked.  A bad one stops the run (InputError: one
    line, exit 2) rather than leaving it eager with a note: a damaged file would otherwise change
    silently which step -- and so which rounding -- a long run trains with."""
    try:
        return load_json(path, TABLE_SHAPE, "a saved K table")
    except InputError as error:
        raise InputError(f"{error}{TABLE_HINT}") from None


def _rate(row: dict, key: str) -> bool:
    """Whether ``row`` has a usable rate under ``key`` (tables saved before it was measured lack it)."""
    value = row.get(key)
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    )


def compile_by_default(device_type: str, preset: str, config, steps: int, measured=None) -> tuple[bool, str]:
    """(compile?, why) for a run on ``device_type`` of ``preset`` whose model is ``config`` (a
    ModelConfig) and ``steps`` long: the rule of the module doc, read from the saved K tables in
    ``measured`` (default ``MEASURED_DIR``)."""
    from training.model.config import ModelConfig

    from .presets import PRESETS

    base = PRESETS.get(preset)
    if base is None or any(
        getattr(ModelConfig(vocab_size=config.vocab_size, **base.model), key) != getattr(config, key)
        for key in SHAPE_KEYS
    ):
        return False, f"no measurement of this model shape (the {preset} preset's, changed by --set)"
    paths = sorted(Path(measured or MEASURED_DIR).glob("*.json"))
    tables = [_read_table(path) for path in paths]
    found = next(
        (
            (path, t)
            for path, t in zip(paths, tables)
            if t["preset"] == preset and t["device"].split(":")[0] == device_type
        ),
        None,
    )
    if found is None:
        return False, f"no bench --k-table measurement for the {preset} preset on {device_type}"
    path, table = found
    rows = {row["mode"]: (i, row) for i, row in enumerate(table["rows"]) if row["k"] == 1}
    if not {"eager", "compiled"} <= set(rows):
        return False, "the measurement has no K = 1 eager and compiled rows"
    index, compiled_row = rows["compiled"]
    if compiled_row["warm_compile_s"] is None:  # what the rule weighs; null only in an eager row
        raise InputError(
            f"a saved K table: {path}: field rows[{index}].warm_compile_s: null is not allowed in a "
            f"compiled row; expected {SECONDS.allowed}{TABLE_HINT}"
        )
    eager_row = rows["eager"][1]
    # which step is faster is judged by CPU time where the table has it (a loaded machine stretches
    # wall time and can flip the order); how long the run lasts, against the warm compile, by wall
    clock, eager, fast = "steps/s", eager_row["steps_per_s"], compiled_row["steps_per_s"]
    if _rate(eager_row, "steps_per_cpu_s") and _rate(compiled_row, "steps_per_cpu_s"):
        clock, eager, fast = (
            "steps per CPU second",
            eager_row["steps_per_cpu_s"],
            compiled_row["steps_per_cpu_s"],
        )
    if fast <= eager:
        return False, f"measured slower compiled ({fast} against {eager} {clock})"
    share = compiled_row["warm_compile_s"] / (steps / compiled_row["steps_per_s"])
    if share >= WARM_SHARE_MAX:
        return (
            False,
            f"a warm compile would be {share:.0%} of this {steps}-step run (at least {WARM_SHARE_MAX:.0%})",
        )
    if device_type == "cpu" and not _has_cxx_compiler():
        return False, "no C++ compiler (g++, c++, clang++ or $CXX) for inductor"
    return True, (
        f"measured {fast / eager:.2f}x eager {clock}; a warm compile is {share:.1%} of this {steps}-step run"
    )


def compile_choice(asked: bool | None, settings: dict, resume: bool, config, dev, distributed: bool) -> bool:
    """Whether a run's step is compiled.  A resumed run keeps its recorded choice (runs from before
    the choice was recorded trained eager): switching changes the step's rounding, and a resumed
    run must continue as the uninterrupted one would.  A new run takes ``asked``, else
    ``compile_by_default`` (a distributed run stays eager: it is not measured)."""
    if resume:
        recorded = settings.get("compiled", False)
        if asked is not None and asked != recorded:
            raise RunError(
                f"cannot resume with --{'' if asked else 'no-'}compile: the run was trained "
                f"{'compiled' if recorded else 'eager'} (omit the flag to keep it)"
            )
        return recorded
    if asked is not None:
        return asked
    if distributed:
        return False
    chosen, why = compile_by_default(dev.type, settings["preset"], config, settings["steps"])
    if chosen:
        note(
            f"compiling the training step ({why}; bit-reproducible on this machine; --no-compile trains eager)"
        )
    return chosen

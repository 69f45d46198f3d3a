"""Shared fixtures.  Like mpmath's own suite, every test starts from the default
working precisions and may not leak a change to the next one."""

import flint
import mpmath
import pytest


@pytest.fixture(autouse=True)
def reset_precision():
    saved_mp, saved_flint = mpmath.mp.prec, flint.ctx.prec
    yield
    mpmath.mp.prec = saved_mp
    flint.ctx.prec = saved_flint


@pytest.fixture
def one_torch_thread():
    """torch on one thread for the test, its thread count restored after.  Not autouse: a test
    module that runs torch asks for it (``pytestmark = pytest.mark.usefixtures(...)``), so the
    tests that never touch torch do not import it."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


@pytest.fixture
def kept(monkeypatch):
    """The figures the builders would save, kept open by name so their artists can be read
    (figures.style.save replaced; nothing is written)."""
    import matplotlib.pyplot as plt

    from figures import style

    figs = {}

    def keep(fig, out, name):
        figs[name] = fig
        return [out / f"{name}.png"]

    monkeypatch.setattr(style, "save", keep)
    yield figs
    for fig in figs.values():
        plt.close(fig)


@pytest.fixture(autouse=True, scope="session")
def model_cache(tmp_path_factory):
    """GGUF conversions (training.llm.hf_cache) go to a folder of this session unless
    ROPE_HEADS_CACHE is set: a test never writes into the user's ~/.cache/rope-heads."""
    import os

    if not os.environ.get("ROPE_HEADS_CACHE"):
        os.environ["ROPE_HEADS_CACHE"] = str(tmp_path_factory.mktemp("rope-heads-cache"))
    yield


@pytest.fixture
def determinism_restored():
    """torch's deterministic-algorithm switches put back after the test: ``compile_module`` turns
    them on for the whole process (training.run.compile.reproducible_kernels)."""
    import torch

    saved = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.utils.deterministic.fill_uninitialized_memory,
    )
    yield
    torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
    torch.utils.deterministic.fill_uninitialized_memory = saved[2]


@pytest.fixture
def no_cache_env(monkeypatch, determinism_restored):
    """No cache variable set, and whatever the test (or the code it runs) sets restored after it:
    the variables and torch's process-wide compile settings."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from training.run import compile as compiled

    for name in ("ROPE_HEADS_CACHE", "XDG_CACHE_HOME", compiled.CACHE_ENV, compiled.BACKEND_ENV):
        monkeypatch.setenv(name, "")  # recorded, so teardown restores the variable (or its absence)
        monkeypatch.delenv(name)
    # torch's own patch() puts back exactly what was set before (a config attribute must not be deleted)
    with (
        inductor_config.patch(fx_graph_cache=True, fallback_random=False),
        functorch_config.patch(enable_autograd_cache=True),
    ):
        yield monkeypatch

"""Shared fixtures.  Like mpmath's own suite, every test starts from the default
working precisions and may not leak a change to the next one."""

import os
from pathlib import Path

import flint
import mpmath
import pytest

# Shared scopes under pytest-xdist (``addopts`` in pyproject.toml: ``-n auto --dist loadgroup``).
# Each worker is a process of its own, so process-wide state (signal handlers, torch's thread count
# and determinism switches, os.environ, mpmath's precision) is never shared between two running
# tests; what workers do share is the file system, and every test writes under its own tmp_path.
SHARED_SCOPES = ("module", "class", "package")


def _fixture_key(definition, name: str) -> str:
    """The fixture's function (``test_gemma3.gemma3_270m`` wherever it is imported); a fixture pytest
    makes itself (``setup_module``) by where it applies."""
    module = getattr(definition.func, "__module__", None) or ""
    if not module or module.startswith(("_pytest", "pytest")):
        return f"{definition.baseid}::{name}"
    return f"{module}.{getattr(definition.func, '__name__', name)}"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """Tests that share a module-scoped fixture (a trained run, a generated report) go to ONE worker:
    an ``xdist_group`` mark named after the fixture, so the fixture is built once and not once per
    worker.  Fixtures are followed through the test's whole fixture closure and joined: two modules
    using one fixture function (``from test_gemma3 import gemma3_270m``) land in one group, so a
    model converted in one is read from the cache in the other.  A test that already carries an
    ``xdist_group`` mark keeps it; a test with only function-scoped fixtures is spread on its own.
    Session fixtures (this file's) are built by every worker and do not group."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    shared_of = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        keys = []
        for name in getattr(info, "names_closure", ()):
            definitions = info.name2fixturedefs.get(name) or ()
            if definitions and definitions[-1].scope in SHARED_SCOPES:
                keys.append(_fixture_key(definitions[-1], name))
        shared_of[item] = keys
        for key in keys[1:]:
            a, b = find(keys[0]), find(key)
            if a != b:
                parent[max(a, b)] = min(a, b)
    for item, keys in shared_of.items():
        if keys and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(find(keys[0])))


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


def run_folder(tmp_path_factory, name: str) -> Path:
    """A folder of this test run shared by all its xdist workers (each worker's basetemp is
    ``<run's basetemp>/popen-gwN``); without xdist, a fresh folder of the session."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / name
        folder.mkdir(exist_ok=True)
        return folder
    return tmp_path_factory.mktemp(name, numbered=False)


@pytest.fixture(autouse=True, scope="session")
def model_cache(tmp_path_factory):
    """GGUF conversions (training.llm.hf_cache), dataset splits and compiled kernels go to a folder
    of this test run unless ROPE_HEADS_CACHE is set: a test never writes into the user's
    ~/.cache/rope-heads.  The xdist workers of one run share it: each of those caches is written
    atomically (a temporary, then one rename; two workers filling it at once both finish with the
    same content), so what one worker converted or built the other reads."""
    if not os.environ.get("ROPE_HEADS_CACHE"):
        os.environ["ROPE_HEADS_CACHE"] = str(run_folder(tmp_path_factory, "rope-heads-cache"))
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
        inductor_config.patch(
            {"fx_graph_cache": True, "fallback_random": False, "cpp.use_decompose_tanh": False}
        ),
        functorch_config.patch(enable_autograd_cache=True),
    ):
        yield monkeypatch


@pytest.fixture(scope="session")
def generated_report(tmp_path_factory):
    """One full report per test run (all xdist workers share it), written by the command itself (``python -m proofs_check
    --report DIR --json ROWS``, about a minute): (the report folder, the run's rows).  Shared by
    the report tests (tests/test_report.py, test_report_text.py, test_report_browser.py)."""
    import fcntl
    import json

    from proofs_check import __main__ as cli

    # once per test run: the first xdist worker to take the lock generates, the others wait and read
    folder = run_folder(tmp_path_factory, "generated-report")
    out, rows, done = folder / "report", folder / "rows.json", folder / "done"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            assert cli.main(["--report", str(out), "--json", str(rows)]) == 0
            done.touch()
    return out, json.loads(rows.read_text())["claims"]

"""Drawing figures one after another in this process, or side by side in worker processes.

``outcomes`` yields one ``Outcome`` per figure, in the order they finish: what it wrote, or why
it did not (missing input, a broken input, an output that cannot be written), as text, so a
worker's result crosses the process boundary as plain strings whatever the exception was.
``python -m figures`` turns them into its progress lines and its exit status (``__main__``).

Workers.  A figure is drawn by one process from start to end, so its bytes are those of a
drawing in this process (tests/test_figure_bytes.py): the pool only decides which process
draws it.  On Linux the workers are forked (no second import of matplotlib, and they see the
registry as the parent has it); elsewhere the platform's default start method is used.  Each
worker ignores Ctrl-C (the parent answers it: it stops the pool and prints one line), leaves
on SIGTERM through the usual clean-up (a file being written is removed, never left half
written), uses one thread for torch and the BLAS, and draws with matplotlib's Agg backend.
The heaviest figures are handed out first (``COST``), so the last one to finish is a light one.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from theory.io.files import OutputError

from .input_files import InputError, MissingInput
from .style import show_path

# CPU seconds of each figure on the shipped inputs (one core, 2026): the pool starts the heaviest
# first.  Only the order matters; a figure not listed counts as 1.
COST = {
    "discrepancy_trained": 4.0,
    "fig_breaks": 3.0,
    "llm_heads": 2.5,
    "fig8": 1.9,
    "fig2": 1.7,
    "fig6": 1.7,
    "fig_rescale": 1.6,
    "fig5a": 1.4,
    "fig_variants": 1.1,
    "fig4bc": 0.9,
    "fig4a": 0.8,
    "fig5b": 0.7,
    "fig7": 0.6,
    "fig5cd": 0.6,
    "table1": 0.0,
}

# Errors of a figure that are its own (a broken input file, or an output that turned unwritable
# during the run): reported, and the other figures still drawn.
FIGURE_ERRORS = (InputError, KeyError, IndexError, TypeError, ValueError, OSError)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass(frozen=True)
class Outcome:
    """One figure's result.  ``kind``: "built" (``paths``: the files written, as shown;
    ``missing``: the inputs a partial figure lacks), "missing" (skipped: ``detail`` names the
    absent input), "failed" (``detail``: the error), or "output" (``detail``: why the output
    cannot be written; the run stops)."""

    name: str
    kind: str
    detail: str = ""
    paths: tuple = ()
    missing: tuple = ()


def build_one(name: str, builder, inputs, out) -> Outcome:
    """Draw one figure and say how it went; an error outside FIGURE_ERRORS propagates (a bug)."""
    try:
        result = builder(inputs, out)
    except MissingInput as absent:
        return Outcome(name, "missing", str(absent))
    except (
        OutputError
    ) as error:  # a full disk or a folder turned unwritable: every next figure would fail alike
        return Outcome(name, "output", str(error))
    except FIGURE_ERRORS as error:
        return Outcome(name, "failed", f"{type(error).__name__}: {error}")
    return Outcome(
        name,
        "built",
        paths=tuple(show_path(p) for p in result.paths),
        missing=tuple(str(m) for m in result.missing),
    )


def default_jobs() -> int:
    """The CPUs this process may run on (its affinity where the system says, else the count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def outcomes(names: list[str], builders: dict, inputs, out, jobs: int):
    """Yield an Outcome per name, as each figure finishes; ``jobs`` processes (1: this one).
    Closing the generator early (an unwritable output, Ctrl-C) stops the workers at once.
    A worker that dies (killed, out of memory) raises BrokenProcessPool."""
    jobs = max(1, min(jobs, len(names)))
    if jobs == 1:
        for name in names:
            yield build_one(name, builders[name], inputs, out)
        return
    order = sorted(names, key=lambda name: -COST.get(name, 1.0))  # stable: ties keep the registry's order
    pool = ProcessPoolExecutor(
        jobs, mp_context=_context(), initializer=_start_worker, initargs=(builders, inputs, out)
    )
    finished = False
    try:
        # the workers start on the first submit; one that starts a fresh interpreter (not forked)
        # reads its thread counts from the environment
        with _one_thread_environment():
            futures = [pool.submit(_draw, name) for name in order]  # handed out in this order
        for future in as_completed(futures):
            yield future.result()
        finished = True
    finally:
        if not finished:
            _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """SIGTERM to every worker: each leaves through its clean-up (``_leave``)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.terminate()


def _context():
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


@contextlib.contextmanager
def _one_thread_environment():
    saved = {key: os.environ.get(key) for key in THREAD_VARIABLES}
    os.environ.update({key: "1" for key in THREAD_VARIABLES})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_WORK: tuple = ()  # a worker's (builders, inputs, out), set once when it starts


def _leave(signum, frame):
    raise SystemExit(1)  # unwinds through atomic writes' clean-up; quiet, unlike KeyboardInterrupt


def _start_worker(builders: dict, inputs, out) -> None:
    global _WORK
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _leave)
    import matplotlib

    matplotlib.use("Agg")
    if "torch" in sys.modules:  # figures never import torch; a caller that did keeps its threads out
        sys.modules["torch"].set_num_threads(1)
    _WORK = (builders, inputs, out)


def _draw(name: str) -> Outcome:
    builders, inputs, out = _WORK
    try:
        return build_one(name, builders[name], inputs, out)
    except SystemExit:  # SIGTERM (_leave) while drawing: the file being written is already removed
        os._exit(1)  # at once: the pool would send SystemExit back as a result and draw the next figure

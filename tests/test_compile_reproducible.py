"""A compiled CPU run is bit-reproducible from process to process (training.run.compile, module
doc): the same weight bytes when run again, and when stopped and resumed.

Every run is its own process -- a comparison inside one process would share the compiled code
and hide what differs between processes -- on TWO torch threads: inductor's embedding backward
adds into shared rows from several OpenMP threads, so one thread is deterministic even without
the fix.  One cold compile of a one-layer smoke model, then warm cache hits (cold against warm
is part of what is compared).
"""

import subprocess
import sys

import pytest
from safetensors.torch import load_file
from test_train import ENV, REPO

ARGS = [
    "train",
    "--task",
    "letter",
    "--preset",
    "smoke",
    "--steps",
    "8",
    "--set",
    "model.n_layer=1",
    "--device",
    "cpu",
    "--compile",
    "--threads",  # two threads, as the module doc says (without it: one, for a model this small)
    "2",
    "--no-progress",
]
WEIGHTS = (
    "model.safetensors",
    "checkpoints/step-000008/model.safetensors",
    "checkpoints/step-000008/training_state.safetensors",
)


def train_process(cache, *args) -> None:
    env = {**ENV, "OMP_NUM_THREADS": "2", "ROPE_HEADS_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "training", *ARGS, *map(str, args)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def weight_bytes(path) -> dict:
    return {name: tensor.numpy().tobytes() for name, tensor in load_file(path).items()}


def assert_same_weights(a, b) -> None:
    for name in WEIGHTS:
        x, y = weight_bytes(a / name), weight_bytes(b / name)
        assert x.keys() == y.keys(), name
        differ = [key for key in x if x[key] != y[key]]
        assert not differ, f"{name}: {len(differ)} tensors differ, e.g. {differ[:3]}"


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The uninterrupted compiled run, in a process of its own with an empty cache (a cold compile)."""
    root = tmp_path_factory.mktemp("compiled")
    train_process(root / "cache", "--out", root / "whole")
    return root


def test_a_compiled_run_gives_the_same_weight_bytes_in_another_process(whole):
    train_process(whole / "cache", "--out", whole / "again")  # warm: the kernels come from the cache
    assert_same_weights(whole / "whole", whole / "again")


def test_an_inductor_compiled_run_resumes_bit_for_bit(whole):
    """Stopped at step 4 and resumed, each part in a process of its own, a run compiled by inductor
    (generated C++, not aot_eager) ends with the uninterrupted process's weights and AdamW state."""
    parts = whole / "parts"
    train_process(whole / "cache", "--out", parts, "--stop-at", "4")
    train_process(whole / "cache", "--out", parts, "--resume")
    assert_same_weights(whole / "whole", parts)

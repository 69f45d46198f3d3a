"""The shipped best weights of the variants study (``training/reference/variants/best-<task>/``):
each folder is the run ``best.json`` names, under 10 MB, and loads and answers through
``python -m training evaluate --run`` (few inputs: a check that they are the trained weights,
not a measurement; the summary's numbers come from 400 inputs per length)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ROOT / "training" / "reference" / "variants"
SUMMARY = VARIANTS / "summary.json"
MAX_BYTES = 10 * 1024 * 1024


@pytest.mark.parametrize("task, lengths", [("letter", [17, 850]), ("number", [17])])
def test_best_weights_are_the_named_member_and_still_answer(tmp_path, task, lengths):
    folder = VARIANTS / f"best-{task}"
    chosen = json.loads((folder / "best.json").read_text())
    summary = json.loads(SUMMARY.read_text())
    assert summary["best"][task] == chosen
    variant, member_task, seed = chosen["member"].split("/")
    assert member_task == task
    # the weights are that member's: its recipe (task, seed, overrides) is the plan's for it
    recipe = json.loads((folder / "recipe.json").read_text())
    assert recipe["task"] == task and f"seed-{recipe['seed']}" == seed
    assert recipe["overrides"] == summary["variants"][variant]["set"]
    assert (folder / "model.safetensors").stat().st_size < MAX_BYTES
    # its accuracy at the longest length is the summary's value for that seed
    cell = summary["results"][variant][task]["length"]["accuracy"][-1]["values"]
    assert chosen["accuracy"] == cell[seed.removeprefix("seed-")]

    out = tmp_path / "eval.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "evaluate",
            "--run",
            str(folder),
            "--task",
            task,
            "--lengths",
            ",".join(map(str, lengths)),
            "--count",
            "32",
            "--json",
            str(out),
            "--threads",
            "1",
            "--no-progress",
            "--device",
            "cpu",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    accuracy = json.loads(out.read_text())["accuracy"]
    # trained models: the summary has them at 0.99 or more at these lengths (400 inputs each);
    # on 32 inputs an untrained or mis-loaded model would be near chance (1/26 or 1/10)
    assert min(accuracy) >= 0.9, accuracy

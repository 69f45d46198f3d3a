"""Training with a random extra target window (``--set data.extra_target_max=M``, variant e):
the default leaves the paper's batches alone, M > 0 lengthens each batch by one K in 0..M drawn
from (seed, step) with the answers untouched, a resumed or two-process run sees the same batches,
validation stays at 17 tokens, and a bad value or an unmarked plan variant is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_distributed import (
    DROPOUT_OFF,
    RECIPE,
    RELATIVE_TOLERANCE,
    STEPS,
    tensors,
    torchrun,
    worst_relative_difference,
)
from test_run_safety import assert_clean_error, metrics_without_timing, same_tensors, smoke_on_one_thread
from test_train import REPO, cli

from training.run import loop as train_module
from training.run import step as step_module
from training.run.checks import RunError, check_recipe
from training.run.presets import EXTRA_TARGET_MAX_LIMIT, get_preset
from training.run.step import batch_indices, extra_window, training_batch
from training.studies.plan import PlanError, load_plan
from training.tasks.definitions import get_task

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WINDOW = "data.extra_target_max=48"


@pytest.fixture(scope="module")
def core():
    return {name: get_task(name).generate(512, seed=11) for name in ("number", "letter")}


# --- the batches -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["number", "letter"])
def test_default_leaves_the_batches_unchanged(core, name):
    for step in (0, 1, 7, 50):  # 50: past the first epoch of 512 rows
        batch = training_batch(name, core[name], seed=3, step=step, batch_size=32)
        rows = batch_indices(3, step, 32, 512)
        assert batch.inputs.shape == (32, 17)
        assert np.array_equal(batch.inputs, core[name].inputs[rows])
        assert np.array_equal(batch.answers, core[name].answers[rows])
    assert extra_window(3, 5, 0) == (0, 0)


def test_the_window_is_uniform_on_0_to_max_and_a_function_of_seed_and_step():
    ks = [extra_window(3, step, 48)[0] for step in range(2000)]
    assert set(ks) == set(range(49))  # every K in 0..48 and nothing else
    assert abs(np.mean(ks) - 24) < 1.0  # mean of uniform{0..48}; its standard error here is 0.3
    assert [extra_window(3, step, 48) for step in range(50)] == [
        extra_window(3, step, 48) for step in range(50)
    ]
    assert [extra_window(4, step, 48) for step in range(50)] != [
        extra_window(3, step, 48) for step in range(50)
    ]


@pytest.mark.parametrize("name", ["number", "letter"])
def test_a_window_lengthens_every_row_by_one_k_and_keeps_the_answers(core, name):
    task, widths = get_task(name), set()
    for step in range(40):
        batch = training_batch(name, core[name], seed=3, step=step, batch_size=32, extra_max=48)
        k = extra_window(3, step, 48)[0]
        rows = batch_indices(3, step, 32, 512)
        assert batch.inputs.shape == (32, 17 + k)
        widths.add(batch.inputs.shape[1])
        assert np.array_equal(batch.inputs[:, k:], core[name].inputs[rows])  # the 17-token core at the end
        assert np.array_equal(batch.answers, core[name].answers[rows])
        assert np.array_equal(batch.hops, core[name].hops[rows])
        for row in range(0, 32, 8):  # the reference solver reads the long sequence the same way
            answer, hops = task.solve(batch.inputs[row])
            assert (task.token_to_id[answer], hops) == (batch.answers[row], batch.hops[row])
    assert len(widths) > 20  # K varies from step to step


# --- training --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    return smoke_on_one_thread(
        tmp_path_factory.mktemp("window") / "whole", task="letter", steps=20, overrides=[WINDOW]
    )


def test_resume_trains_on_the_same_batches(uninterrupted, tmp_path):
    out = smoke_on_one_thread(tmp_path / "split", task="letter", steps=20, stop_at=10, overrides=[WINDOW])
    smoke_on_one_thread(out, task="letter", resume=True)
    for name in (
        "model.safetensors",
        "checkpoints/step-000020/model.safetensors",
        "checkpoints/step-000020/training_state.safetensors",
    ):
        assert same_tensors(uninterrupted / name, out / name), name
    assert metrics_without_timing(uninterrupted) == metrics_without_timing(out)
    recipe = json.loads((uninterrupted / "recipe.json").read_text())
    assert recipe["overrides"] == [WINDOW] and recipe["recipe"]["extra_target_max"] == 48


def test_the_window_changes_training_and_validation_stays_17_tokens(uninterrupted, tmp_path, monkeypatch):
    seen = {"train": [], "validation": []}
    real_batch, real_evaluate = step_module.training_batch, train_module.evaluate

    def recording_batch(*args, **kwargs):
        batch = real_batch(*args, **kwargs)
        seen["train"].append(batch.inputs.shape[1])
        return batch

    def recording_evaluate(model, data, *args, **kwargs):
        seen["validation"].append(data["inputs"].shape[1])
        return real_evaluate(model, data, *args, **kwargs)

    monkeypatch.setattr(step_module, "training_batch", recording_batch)  # the one step draws its batch
    monkeypatch.setattr(train_module, "evaluate", recording_evaluate)
    plain = smoke_on_one_thread(tmp_path / "plain", task="letter", steps=20)
    assert set(seen["train"]) == {17} and set(seen["validation"]) == {17}
    assert json.loads((plain / "recipe.json").read_text())["recipe"]["extra_target_max"] == 0
    seen["train"].clear()
    smoke_on_one_thread(tmp_path / "window", task="letter", steps=20, overrides=[WINDOW])
    assert len(set(seen["train"])) > 5 and min(seen["train"]) >= 17 and max(seen["train"]) <= 17 + 48
    assert set(seen["validation"]) == {17}
    last = "checkpoints/step-000020/model.safetensors"  # (model.safetensors: the best, maybe step 0's)
    assert not same_tensors(plain / last, uninterrupted / last)


def test_two_processes_draw_the_same_window_as_one(uninterrupted, tmp_path):
    """Dropout off, so two ranks equal one process up to float summation order only if every
    rank's half of the batch has the single process's K and tokens."""
    one = smoke_on_one_thread(tmp_path / "one", task="letter", steps=STEPS, overrides=[*DROPOUT_OFF, WINDOW])
    two = tmp_path / "two"
    result = torchrun(*RECIPE, "--set", WINDOW, "--steps", STEPS, "--out", two)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("model.safetensors", "checkpoints/step-000020/training_state.safetensors"):
        worst, where = worst_relative_difference(tensors(two, name), tensors(one, name))
        assert worst <= RELATIVE_TOLERANCE, f"{name}: {where} differs by {worst:.2e} of its scale"


# --- refusals --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1", str(EXTRA_TARGET_MAX_LIMIT + 1), "1.5", "many", "true"])
def test_a_bad_value_exits_2_naming_the_key_and_range(tmp_path, value):
    result = cli(
        "train",
        "--task",
        "letter",
        "--preset",
        "smoke",
        "--no-progress",
        "--out",
        tmp_path / "run",
        "--set",
        f"data.extra_target_max={value}",
    )
    assert_clean_error(result, "data.extra_target_max", f"[0, {EXTRA_TARGET_MAX_LIMIT}]")
    assert not (tmp_path / "run").exists()


def test_a_bad_saved_value_is_refused_on_reading():
    saved = json.loads(json.dumps(get_preset("smoke").to_dict()))
    assert check_recipe({**saved, "extra_target_max": 48}, "recipe").extra_target_max == 48
    assert check_recipe(saved, "recipe").extra_target_max == 0  # a run saved before the option existed
    with pytest.raises(
        RunError, match=rf"'extra_target_max': got -3, expected an integer in \[0, {EXTRA_TARGET_MAX_LIMIT}\]"
    ):
        check_recipe({**saved, "extra_target_max": -3}, "recipe")
    # the saved recipe is checked by the same table as --set: a rate of 0 is as bad there as here
    with pytest.raises(RunError, match=r"'lr': got 0.0, expected a number in \(0, 1\]"):
        check_recipe({**saved, "lr": 0}, "recipe")
    with pytest.raises(RunError, match="unknown model field 'colour'"):
        check_recipe({**saved, "model": {"colour": 1}}, "recipe")
    assert check_recipe({**saved, "model": {"rope_base": 500000}}, "recipe").model == {"rope_base": 500000.0}


def test_the_shipped_plans_load_and_mark_the_data_variant():
    variants = load_plan(REPO / "training/studies/variants.json")
    spec = variants.variants["extra-window"]
    assert spec["set"] == [WINDOW] and spec["tasks"] == ["letter"] and spec["about"].startswith("e.")
    assert [v for v in variants.variants if variants.group(v) == "data"] == ["extra-window"]
    # like for like: the data variant runs the paper's schedule, and so does a letter baseline
    assert "letter" in variants.variants["paper"]["tasks"] and variants.variants["paper"]["set"] == []
    assert "waits" not in variants.about
    seeds = load_plan(REPO / "training/studies/seeds.json")
    assert {seeds.group(v) for v in seeds.variants} == {"model"} and "group" not in seeds.variants["paper"]


@pytest.mark.parametrize(
    "variant, message",
    [
        ({"preset": "smoke", "set": [WINDOW]}, 'mark it "group": "data"'),
        ({"preset": "smoke", "set": [WINDOW], "group": "model"}, 'mark it "group": "data"'),
        ({"preset": "smoke", "set": [], "group": "colour"}, "expected one of model, data, got 'colour'"),
    ],
)
def test_a_data_variant_must_say_so(tmp_path, variant, message):
    plan = {
        "name": "p",
        "root": str(tmp_path / "members"),
        "tasks": ["letter"],
        "seeds": [1],
        "variants": {"v": variant},
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    with pytest.raises(PlanError, match="variants.v.group") as error:
        load_plan(path)
    assert message in str(error.value)

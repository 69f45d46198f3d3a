"""Shape checks for the JSON files of a run, applied where they are read, before any field is used.

A file edited by hand, written by another program or damaged must give one line naming the
file and the field (``RunError``, exit status 2), never a traceback deep in the training or
analysis code.  Checked here:

* ``config.json`` (a run's or a checkpoint's): a JSON object whose sizes are positive
  integers and whose model has at most ``MAX_PARAMETERS`` parameters -- 2**31 float32 weights
  are 8 GiB, and training needs four times that (gradients and two AdamW moments), more than
  one GPU or a workstation holds;
* ``training_state.json``: an object with ``step``, ``best``, ``settings`` and ``optimizer``,
  and the AdamW tensors it goes with: each of its parameter's shape (``check_optimizer_state``);
* the settings a run was started with (``settings`` above, and the first line of
  ``metrics.jsonl``): task, steps, seed in ``0..SEED_MAX``, checkpoint folder, recipe;
* every line of ``metrics.jsonl``: an object whose ``step`` is a non-negative integer and
  whose known fields have their types.

The memory a step needs, estimated from the same sizes, is checked by ``training.run.memory``.

Standard library only (plus the model's own dataclasses), so reading a run costs no torch work.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, fields

from theory.io.cli import parse_int
from training.model.gptj import ModelConfig
from training.tasks.definitions import SEED_MAX, TASKS
from training.tasks.definitions import check_seed as check_task_seed

from .presets import Preset
from .recipe import KEYS, RecipeError, check_data, check_value, key_of_field

__all__ = [
    "RunError",
    "MAX_PARAMETERS",
    "SEED_MAX",
    "check_seed",
    "parse_seed",
    "config_from_dict",
    "check_model_size",
    "parameter_count",
    "check_state_info",
    "check_settings",
    "check_recipe",
    "check_optimizer_state",
    "check_metrics_record",
]

MAX_PARAMETERS = 2**31


class RunError(Exception):
    """A problem with the user's files or arguments: reported as one line, exit status 2."""


def _type_name(value) -> str:
    return "null" if value is None else type(value).__name__


def _integer(value, where: str, low: int, high: int | None = None) -> int:
    """An int in [low, high]; a float with an integral value (JSON ``1e7``) counts as one."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        allowed = f"an integer >= {low}" if high is None else f"an integer in {low}..{high}"
        raise RunError(f"{where} must be {allowed}, got {value!r}")
    return value


def _number(value, where: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise RunError(f"{where} must be a number in [{low}, {high}], got {value!r}")
    return float(value)


def _object(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise RunError(f"{where} must be a JSON object, got {_type_name(value)}")
    return value


def check_seed(seed, where: str = "--seed") -> int:
    """``training.tasks.definitions.check_seed`` (the one rule: 0..SEED_MAX), as a RunError."""
    try:
        return check_task_seed(seed, where)
    except ValueError as error:
        raise RunError(str(error)) from None


def parse_seed(text: str, where: str = "--seed") -> int:
    """A seed as typed on the command line: ASCII digits 0-9 only, then ``check_seed``.  Python's
    ``int`` also reads ``1_0`` (10) and other scripts' digits (``٣`` is 3), so such a typo
    silently trained another seed than the one the folder name or the study says."""
    try:
        value = parse_int(str(text).strip())  # the one rule for integers typed on a command line
    except ValueError:
        value = -1
    if value < 0:
        raise RunError(
            f"{where} must be an integer in 0..{SEED_MAX} written with the digits 0-9, got {text!r}"
        )
    return check_seed(value, where)


# --- model size -----------------------------------------------------------------------


def parameter_count(config: ModelConfig) -> int:
    """Exactly ``GPTJ(config).num_parameters()``, computed without allocating anything."""
    e, v, i = config.n_embd, config.vocab_size, config.n_inner
    per_layer = 2 * e + 4 * e * e + (e * i + i) + (i * e + e)  # ln_1, q/k/v/out, fc_in, fc_out
    return v * e + config.n_layer * per_layer + 2 * e + (v * e + v)  # wte, blocks, ln_f, lm_head


def check_model_size(config: ModelConfig, where: str) -> ModelConfig:
    count = parameter_count(config)
    if count > MAX_PARAMETERS:
        raise RunError(
            f"{where}: the model has {count:.3g} parameters (n_embd {config.n_embd}, n_layer "
            f"{config.n_layer}, n_inner {config.n_inner}, vocab_size {config.vocab_size}); "
            f"at most {MAX_PARAMETERS} (8 GiB of float32) are supported"
        )
    return config


_CONFIG_SIZES = ("vocab_size", "n_layer", "n_head", "n_embd", "n_inner", "rotary_dim", "n_positions")
_CONFIG_RATES = ("embd_pdrop", "attn_pdrop", "resid_pdrop")


def config_from_dict(d, path) -> ModelConfig:
    """The ``ModelConfig`` of a GPT-J ``config.json`` object, every field used checked first."""
    _object(d, f"bad config {path}: the file")
    for key in ("n_embd", "n_head"):
        if key not in d:
            raise RunError(f"bad config {path}: missing field {key!r}")
    checked = dict(d)
    for key in _CONFIG_SIZES:
        optional = key in ("n_inner", "rotary_dim")  # null: HF's default (4 n_embd, the whole head)
        if key in checked and not (optional and checked[key] is None):
            checked[key] = _integer(checked[key], f"bad config {path}: field {key!r}", 1)
    for key in _CONFIG_RATES:
        if key in checked:
            checked[key] = _number(checked[key], f"bad config {path}: field {key!r}", 0.0, 1.0)
    for key in ("layer_norm_epsilon", "initializer_range"):
        if key in checked:
            checked[key] = _number(checked[key], f"bad config {path}: field {key!r}", 0.0)
    try:
        config = ModelConfig.from_hf_dict(checked)
    except (KeyError, TypeError, ValueError) as error:
        raise RunError(f"bad config {path}: {error}") from None
    return check_model_size(config, f"bad config {path}")


# --- training state and settings ----------------------------------------------------------


def _checked(key: str, value, name: str):
    # a JSON number like 1e7 reads back as a float: an integral one counts as the integer
    if KEYS[key][0].startswith("integer") and isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        return check_value(key, value)
    except RecipeError as error:
        raise RunError(f"{name}: {error}") from None


def check_recipe(recipe, where: str) -> Preset:
    """A saved recipe (``Preset.to_dict()``) back as a Preset, each field's type checked."""
    recipe = _object(recipe, where)
    known = {f.name: f for f in fields(Preset)}
    for key in recipe:
        if key not in known:
            raise RunError(f"{where}: unknown field {key!r}")
    for key, spec in known.items():
        if key not in recipe and spec.default is MISSING and spec.default_factory is MISSING:
            raise RunError(f"{where}: missing field {key!r}")
    values = dict(recipe)
    for key, value in recipe.items():
        name = f"{where}: field {key!r}"
        if key == "name":
            if not isinstance(value, str):
                raise RunError(f"{name} must be a string, got {value!r}")
        elif key == "model":  # the model's overrides of ModelConfig, each checked by its --set row
            for sub, sub_value in _object(value, name).items():
                if f"model.{sub}" not in KEYS:
                    raise RunError(f"{name}: unknown model field {sub!r}")
                values[key] = {**values[key], sub: _checked(f"model.{sub}", sub_value, f"{name}: {sub!r}")}
        else:  # the same table as --set (training.run.recipe.KEYS)
            values[key] = _checked(key_of_field(key), value, name)
    if isinstance(values.get("betas"), list):
        values["betas"] = tuple(values["betas"])
    try:  # the same checks as a start's --set: a recipe that starts can be resumed, and only such a one
        return check_data(Preset(**values))
    except RecipeError as error:
        raise RunError(f"{where}: {error}") from None


def check_settings(settings, where: str) -> dict:
    """The ``settings`` a run was started with (training_state.json, metrics.jsonl line 1)."""
    settings = _object(settings, where)
    for key in ("task", "preset", "steps", "seed", "recipe"):
        if key not in settings:
            raise RunError(f"{where}: missing field {key!r}")
    if settings["task"] not in TASKS:
        raise RunError(f"{where}: field 'task' must be one of {', '.join(TASKS)}, got {settings['task']!r}")
    if not isinstance(settings["preset"], str):
        raise RunError(f"{where}: field 'preset' must be a string, got {settings['preset']!r}")
    _checked(
        "steps", settings["steps"], f"{where}: field 'steps'"
    )  # the row --steps is checked by at a start
    check_seed(settings["seed"], f"{where}: field 'seed'")
    if not isinstance(settings.get("checkpoint_dir", ""), str):
        raise RunError(
            f"{where}: field 'checkpoint_dir' must be a string, got {settings['checkpoint_dir']!r}"
        )
    check_recipe(settings["recipe"], f"{where}: field 'recipe'")
    return settings


def check_state_info(info, path, step: int | None) -> dict:
    """``training_state.json`` of the checkpoint of ``step`` (its folder name; None: unknown)."""
    where = f"bad {path}"
    info = _object(info, f"{where}: the file")
    for key in ("step", "best", "settings", "optimizer"):
        if key not in info:
            raise RunError(f"{where}: missing field {key!r}")
    own_step = _integer(info["step"], f"{where}: field 'step'", 0)
    if step is not None and own_step != step:
        raise RunError(f"{where}: field 'step' is {own_step}, but the folder is of step {step}")
    best = _object(info["best"], f"{where}: field 'best'")
    _integer(best.get("step"), f"{where}: field 'best.step'", -1, own_step)
    _number(best.get("accuracy"), f"{where}: field 'best.accuracy'", -1.0, 1.0)
    check_settings(info["settings"], f"{where}: field 'settings'")
    optimizer = _object(info["optimizer"], f"{where}: field 'optimizer'")
    groups = optimizer.get("param_groups")
    if not isinstance(groups, list):
        raise RunError(f"{where}: field 'optimizer.param_groups' must be a list")
    for n, group in enumerate(groups):  # "params": the parameter indices the state's tensors are saved under
        params = group.get("params") if isinstance(group, dict) else None
        if not isinstance(params, list) or not all(type(i) is int for i in params):
            raise RunError(f"{where}: field 'optimizer.param_groups[{n}].params' must be a list of integers")
    _object(optimizer.get("state_scalars"), f"{where}: field 'optimizer.state_scalars'")
    if info.get("grad_scaler") is not None:
        _object(info["grad_scaler"], f"{where}: field 'grad_scaler'")
    return info


_MOMENTS = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")  # AdamW's per-parameter tensors; "step" is a scalar


def check_optimizer_state(where, params: list, saved: dict) -> None:
    """Every saved AdamW tensor must have its parameter's shape: torch's ``load_state_dict`` does
    not check, and the fused AdamW then reads past a smaller moment (another task's vocabulary,
    another width): NaN weights one checkpoint later.  ``params``: (name, shape) of the
    optimizer's parameters in its order; ``saved``: the state dict about to be loaded."""
    sizes = [len(group["params"]) for group in saved["param_groups"]]
    if sum(sizes) != len(params):
        raise RunError(
            f"{where}: the optimizer state is of {sum(sizes)} parameters, this model has {len(params)}: "
            f"it is the state of another model"
        )
    theirs = [index for group in saved["param_groups"] for index in group["params"]]
    param_of = dict(zip(theirs, params))  # torch maps saved indices to parameters by position, as here
    for index, entries in saved["state"].items():
        if index not in param_of:
            raise RunError(
                f"{where}: optimizer state for parameter index {index}, which no parameter group holds"
            )
        name, shape = param_of[index]
        for key, value in entries.items():
            if not hasattr(value, "shape"):  # a scalar from training_state.json
                continue
            expected = tuple(shape) if key in _MOMENTS else () if key == "step" else None
            if expected is None:
                raise RunError(f"{where}: unknown optimizer tensor optimizer.{index}.{key}")
            if tuple(value.shape) != expected:
                raise RunError(
                    f"{where}: tensor optimizer.{index}.{key} has shape {tuple(value.shape)}, but its "
                    f"parameter {name} has shape {expected}: this is the optimizer state of another "
                    f"model; resume only from the run's own checkpoints"
                )


# --- metrics.jsonl ------------------------------------------------------------------

_RECORD_NUMBERS = ("loss", "accuracy", "lr", "seconds_per_step")
_REQUIRED_BY_SPLIT = {"train": ("loss", "accuracy"), "validation": ("loss", "accuracy")}


def check_metrics_record(record, path, line: int) -> dict:
    where = f"bad {path} line {line}"
    record = _object(record, where)
    _integer(record.get("step"), f"{where}: field 'step'", 0)
    if not isinstance(record.get("split"), str):
        raise RunError(f"{where}: field 'split' must be a string, got {record.get('split')!r}")
    for key in _REQUIRED_BY_SPLIT.get(record["split"], ()):
        if key not in record:
            raise RunError(f"{where}: a {record['split']} line needs field {key!r}")
    for key in _RECORD_NUMBERS:
        if key in record and (isinstance(record[key], bool) or not isinstance(record[key], (int, float))):
            raise RunError(f"{where}: field {key!r} must be a number, got {record[key]!r}")
    if "accuracy_by_hop" in record:
        by_hop = _object(record["accuracy_by_hop"], f"{where}: field 'accuracy_by_hop'")
        for hop, value in by_hop.items():
            _number(value, f"{where}: field 'accuracy_by_hop.{hop}'", 0.0, 1.0)
    if not isinstance(record.get("checkpoint_dir", ""), str):
        raise RunError(f"{where}: field 'checkpoint_dir' must be a string, got {record['checkpoint_dir']!r}")
    return record

"""Recipes without code: ``train --set KEY=VALUE`` changes one value of a preset.

Chosen over a recipe file: a study plan is then a list of ``--set`` strings that are both
readable and exactly the command a user would type, and a run's resolved recipe (saved in
its folder) is the one file to reproduce it from.

Keys: the preset's own fields (``steps``, ``lr``, ``batch_size``, ...) and ``model.<field>``
for every field of ``ModelConfig`` except ``vocab_size`` (the task fixes it), and
``data.<option>`` for the options of the training data (``data.extra_target_max``: the
Preset field of the same name; ``data`` itself is taken by the split's name).  A value is
read as a JSON literal (``3000``, ``1e-4``, ``[0.9, 0.99]``, ``true``); a value that is not
JSON is taken as a string (``data=generated``).  Every key and value is checked against the
table below, then the whole model is built once on paper (``ModelConfig``) so that
constraints between keys (``rotary_dim`` <= head size) are checked too, and so are the
counts of generated data (``check_data``: ``train_count`` and ``validation_count`` within the
generator's own bound, ``training.tasks.definitions.MAX_COUNT``, whenever ``data`` is
``generated``).  A bad one raises RecipeError whose one-line message names the key, the value
and the allowed values.  ``check_steps`` is the one check of a step count: ``--steps`` at a
start, and the saved settings at a resume, go through the same ``steps`` row.
"""

from __future__ import annotations

import dataclasses
import json
import math

from training.model.gptj import ModelConfig
from training.tasks.definitions import MAX_COUNT

from .presets import EXTRA_TARGET_MAX_LIMIT, Preset

__all__ = [
    "RecipeError",
    "KEYS",
    "key_of_field",
    "check_value",
    "check_steps",
    "check_data",
    "parse_override",
    "apply_overrides",
    "resolved_recipe",
]


class RecipeError(ValueError):
    """A bad ``--set`` key or value; the message names it and what is allowed."""


def _int(low, high):
    return (
        "integer",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high,
        f"an integer in [{low}, {high}]",
    )


def _real(low, high, *, low_open=False, high_open=False):
    def ok(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return False
        return (low < v if low_open else low <= v) and (v < high if high_open else v <= high)

    left, right = "(" if low_open else "[", ")" if high_open else "]"
    return ("number", ok, f"a number in {left}{low}, {high}{right}")


def _optional_int(low, high):
    kind, ok, allowed = _int(low, high)
    return ("integer or null", lambda v: v is None or ok(v), f"null or {allowed}")


def _count():
    kind, ok, _ = _int(0, MAX_COUNT)
    return (
        kind,
        ok,
        f"an integer in [1, {MAX_COUNT}] (the generator's bound; 0 only with data=paper, which ignores it)",
    )


def _choice(*options):
    return ("choice", lambda v: v in options, "one of " + ", ".join(options))


def _betas():
    def ok(v):
        return isinstance(v, list) and len(v) == 2 and all(_real(0, 1, high_open=True)[1](b) for b in v)

    return ("pair", ok, "a list of two numbers in [0, 1)")


# The ranges are sanity bounds (a value outside cannot be meant), not tuned limits; sizes
# stop where one model no longer fits a single machine's memory.
KEYS = {
    "steps": _int(1, 10_000_000),
    "batch_size": _int(1, 65_536),
    "lr": _real(0, 1, low_open=True),
    "warmup_steps": _int(0, 10_000_000),
    "eval_every": _int(1, 10_000_000),
    "checkpoint_every": _int(1, 10_000_000),
    "log_every": _int(1, 10_000_000),
    "betas": _betas(),
    "weight_decay": _real(0, 10),
    "grad_clip": _real(0, 1e6, low_open=True),
    "data": _choice("paper", "generated"),
    # the generator's bound; 0 means unused, which only the paper data allows (check_data)
    "train_count": _count(),
    "validation_count": _count(),
    "eval_batch_size": _int(1, 65_536),
    # a random extra target window per training batch (Preset.extra_target_max; 0: none)
    "data.extra_target_max": _int(0, EXTRA_TARGET_MAX_LIMIT),
    "model.n_layer": _int(1, 256),
    "model.n_head": _int(1, 256),
    "model.n_embd": _int(1, 16_384),
    "model.rotary_dim": _int(2, 16_384),
    "model.n_inner": _int(1, 65_536),
    "model.n_positions": _int(17, 10_000_000),
    "model.rope_base": _real(1, 1e12, low_open=True),
    "model.embd_pdrop": _real(0, 1, high_open=True),
    "model.attn_pdrop": _real(0, 1, high_open=True),
    "model.resid_pdrop": _real(0, 1, high_open=True),
    "model.layer_norm_epsilon": _real(0, 1, low_open=True),
    "model.initializer_range": _real(0, 10, low_open=True),
    # the RoPE variants (ModelConfig documents each): NoPE from a layer on, p-RoPE, length scale
    "model.nope_from_layer": _optional_int(0, 256),
    "model.rope_fraction": _real(0, 1),
    "model.query_scale": _choice("none", "log", "learned"),
}


# keys whose Preset field has another name (a dotted name cannot be a field)
_PRESET_FIELD = {"data.extra_target_max": "extra_target_max"}


def _check_tables_cover_the_code() -> None:
    """Every preset and model field has a row (a new field without one would be unsettable)."""
    preset_fields = (
        {f.name for f in dataclasses.fields(Preset)} - {"name", "model"} - set(_PRESET_FIELD.values())
    )
    preset_fields |= set(_PRESET_FIELD)
    model_fields = {f"model.{f.name}" for f in dataclasses.fields(ModelConfig)} - {"model.vocab_size"}
    missing = (preset_fields | model_fields) - set(KEYS)
    if missing:
        raise AssertionError(f"recipe.KEYS lacks {sorted(missing)}")


_check_tables_cover_the_code()


def key_of_field(name: str) -> str:
    """The KEYS row of a Preset field (``extra_target_max`` -> ``data.extra_target_max``)."""
    return next((key for key, field_name in _PRESET_FIELD.items() if field_name == name), name)


def check_value(key: str, value):
    """``value`` checked against the KEYS row ``key`` (an int where a number is wanted becomes
    a float); RecipeError naming what is allowed.  Used by ``--set`` and by the check of a saved
    recipe (``training.run.checks.check_recipe``): one table for both."""
    kind, ok, allowed = KEYS[key]
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not ok(value):
        raise RecipeError(f"got {value!r}, expected {allowed}")
    if kind == "pair":  # torch's AdamW refuses betas [0, 0]: "both floats or both Tensors"
        value = [float(v) for v in value]
    return value


def check_steps(value, where: str = "--steps") -> int:
    """A run's step count, by the ``steps`` row: the one check for ``--steps``, ``--set steps``
    and the settings a resumed run was started with, so a run that starts can be resumed."""
    try:
        return check_value("steps", value)
    except RecipeError as error:
        raise RecipeError(f"{where}: {error}") from None


_COUNTS = ("train_count", "validation_count")


def check_data(recipe: Preset, given=None) -> Preset:
    """Generated data needs both counts within the generator's bound (``Task.generate`` refuses
    0 and more than MAX_COUNT sequences: a traceback at the start of training otherwise).
    ``given``: the keys ``--set`` gave, so the message names the one to change; None for a
    saved recipe."""
    if recipe.data != "generated":
        return recipe
    for key in _COUNTS:
        value = getattr(recipe, key)
        if 1 <= value <= MAX_COUNT:
            continue
        allowed = f"an integer in [1, {MAX_COUNT}] (the generator's bound)"
        if given is None:
            raise RecipeError(f"field {key!r} is {value}, but data 'generated' needs {allowed}")
        if key in given or "data" not in given:
            raise RecipeError(f"--set {key}={value}: data=generated needs {key} to be {allowed}")
        raise RecipeError(
            f"--set data=generated: the {recipe.name} preset has {key}={value}, but generated "
            f"data needs {allowed}; add --set {key}=N"
        )
    return recipe


def parse_override(text: str) -> tuple[str, object]:
    """``"model.rotary_dim=64"`` -> ``("model.rotary_dim", 64)``, the value checked."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise RecipeError(f"--set expects KEY=VALUE, got {text!r}")
    if key not in KEYS:
        raise RecipeError(f"--set: unknown key {key!r}; known keys: {', '.join(KEYS)}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw.strip()
    try:
        return key, check_value(key, value)
    except RecipeError:
        raise RecipeError(f"--set {key}: got {raw.strip()!r}, expected {KEYS[key][2]}") from None


def apply_overrides(preset: Preset, overrides) -> Preset:
    """The preset with every ``KEY=VALUE`` of ``overrides`` applied (later ones win), checked
    key by key and then as a whole model."""
    top, model, given = {}, dict(preset.model), set()
    for text in overrides:
        key, value = parse_override(text)
        given.add(key)
        if key.startswith("model."):
            model[key[len("model.") :]] = value
        else:
            top[_PRESET_FIELD.get(key, key)] = tuple(value) if key == "betas" else value
    recipe = dataclasses.replace(preset, model=model, **top)
    try:
        ModelConfig(**model)
    except (TypeError, ValueError) as error:
        raise RecipeError(f"--set model: {error}") from None
    return check_data(recipe, given)


def resolved_recipe(recipe: Preset, vocab_size: int) -> dict:
    """Everything a run was trained with: the preset's values and the whole model config
    (defaults included), so a run folder alone reproduces the run."""
    out = recipe.to_dict()
    out["model"] = dataclasses.asdict(ModelConfig(vocab_size=vocab_size, **recipe.model))
    return out

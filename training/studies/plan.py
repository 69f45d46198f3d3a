"""A study plan: tasks x seeds x recipe variants, read from JSON and checked before any work.

    {"name": "seeds", "about": "...",
     "root": "runs/seeds",                       member folders ROOT/<variant>/<task>/seed-<S>/
     "ship": "training/reference/seeds",         where --collect writes summary.json and copies
                                                 each member's small JSON
     "tasks": ["number", "letter"], "seeds": [0, 1, 2, 3, 4],
     "variants": {"paper": {"preset": "paper", "set": ["steps=6000"], "about": "...",
                            "tasks": ["letter"],        optional: a subset of the plan's tasks
                            "group": "model",           optional: "model" (default) or "data"
                            "seeds": {"letter": [..]}}}, optional: this variant's seeds for a task
                                                        (default: the plan's)
     "reuse": {"paper/number/seed-0": "training/reference/number"},
     "evaluate": {"test_split": true, "lengths": [17, 25, ...], "count": 400,
                  "max_tokens": 500000, "seed": 3},
     "analyze": {"n_inputs": 100, "discrepancy": true},      or false: no analysis stage
     "dilution": {"count": 32, "seed": 5},       optional (default false): softmax dilution per layer
                                                 at the evaluate lengths, and the predicted break
     "ship_best": true,                          optional (default false): --collect also ships the
                                                 weights of the best member per task (best-<task>/)
     "long": {"lengths": [20000], "count": 64,   optional (default false): a last stage that evaluates
              "seed": 4, "variants": ["..."],    the listed variants and tasks (default all) at lengths
              "tasks": ["letter"]},              past the grid; slow, so only where it is worth it
     "rescale": {"query_scale": "log",           optional (default false): evaluate the variants trained
                 "lengths": [17, ...],           without a query scale (default: all of them) with the
                 "count": 200, "max_tokens": .., fixed scale switched on at inference, weights unchanged
                 "seed": 3, "variants": [".."], (evaluate --query-scale): is their break dilution?
                 "dilution": true}}              optional (default false): also the dilution stage with
                                                 the scale on, at the rescale lengths (dilution's inputs)

A member is one (variant, task, seed); its id ``<variant>/<task>/seed-<S>`` is also its folder
below ``root``, so the same plan always puts a member in the same place (idempotent reruns,
and any machine that shares the folder can run it).  ``reuse`` names members whose results
already exist in a run folder (its weights and JSON are taken, not retrained).  Relative
paths are relative to the working directory.  Two plans may share a ``root``: a member id
then names one member of both (the runner refuses a folder whose recorded recipe differs).
Every mistake raises PlanError naming the key (the section readers and the checks they share
are in ``training.studies.plan_sections``).

A variant's ``group`` says what it changes, so results are reported per group: ``"data"`` for
one that changes the training data rather than the model (``data.extra_target_max``) -- such a
variant must say so, a mistake otherwise -- and ``"model"`` for the rest.  The key is kept in
``Plan.variants`` only where the plan gives it (a plan without it reads as before);
``Plan.group`` gives every variant's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from theory.io.inputs import InputError, load_json
from training.run.presets import PRESETS, Preset, get_preset
from training.run.recipe import RecipeError, apply_overrides
from training.tasks.definitions import TASKS

from .plan_sections import (
    MAX_SEED,
    PlanError,
    analyze_section,
    check_keys,
    dilution_section,
    evaluate_section,
    int_list,
    long_section,
    no_duplicate_keys,
    require,
    rescale_section,
)

__all__ = ["PlanError", "Member", "Plan", "load_plan", "GROUPS"]

TOP_KEYS = {
    "name",
    "about",
    "root",
    "ship",
    "tasks",
    "seeds",
    "variants",
    "reuse",
    "evaluate",
    "analyze",
    "dilution",
    "ship_best",
    "long",
    "rescale",
}
VARIANT_KEYS = {"preset", "set", "about", "tasks", "group", "seeds"}
GROUPS = ("model", "data")  # what a variant changes; the first is the default


@dataclass(frozen=True)
class Member:
    variant: str
    task: str
    seed: int

    @property
    def id(self) -> str:
        return f"{self.variant}/{self.task}/seed-{self.seed}"


@dataclass
class Plan:
    path: Path
    name: str
    about: str
    root: Path
    ship: Path
    tasks: list
    seeds: list
    variants: dict  # name -> {"preset": str, "set": [str], "about": str, "tasks": [str], ("group": str)}
    reuse: dict  # member id -> Path of an existing run
    evaluate: dict
    analyze: dict
    dilution: dict | None = None  # softmax dilution and predicted breaks at the evaluate lengths
    ship_best: bool = False  # --collect also copies the weights of the best member per task
    long: dict | None = (
        None  # {"lengths", "count", "seed", "variants", "tasks"}: the evaluation past the grid
    )
    rescale: dict | None = (
        None  # {"query_scale", "lengths", "count", "max_tokens", "seed", "variants", "dilution"}
    )
    recipes: dict = field(default_factory=dict)  # name -> the Preset its overrides make (checked once, kept)

    def members(self) -> list[Member]:
        return [
            Member(v, t, s)
            for v, spec in self.variants.items()
            for t in self.tasks
            if t in spec["tasks"]
            for s in self.seeds_of(v, t)
        ]

    def seeds_of(self, variant: str, task: str) -> list:
        """The seeds of one variant's task: the plan's, unless the variant lists its own."""
        return self.variants[variant].get("seeds", {}).get(task, self.seeds)

    def member(self, member_id: str) -> Member:
        for m in self.members():
            if m.id == member_id:
                return m
        raise PlanError(f"{self.path}: no member {member_id!r}; members look like {self.members()[0].id}")

    def folder(self, member: Member) -> Path:
        return self.root / member.id

    def group(self, variant: str) -> str:
        """What the variant changes: "model" (the default) or "data" (reported apart)."""
        return self.variants[variant].get("group", GROUPS[0])


def _variants(raw, where: str, tasks: list) -> tuple[dict, dict]:
    """(name -> checked spec, name -> the Preset the spec's overrides make)."""
    check_keys(raw, set(raw) if isinstance(raw, dict) else set(), where)
    require(bool(raw), where, "at least one variant is needed")
    out, made = {}, {}
    for name, spec in raw.items():
        here = f"{where}.{name}"
        require(
            name.replace("-", "").replace("_", "").isalnum(),
            here,
            "a variant name is letters, digits, - and _",
        )
        check_keys(spec, VARIANT_KEYS, here)
        preset = spec.get("preset", "paper")
        require(
            isinstance(preset, str) and preset in PRESETS,
            f"{here}.preset",
            f"unknown preset {preset!r}; known: {', '.join(PRESETS)}",
        )
        sets = spec.get("set", [])
        require(
            isinstance(sets, list) and all(isinstance(s, str) for s in sets),
            f"{here}.set",
            "expected a list of KEY=VALUE strings",
        )
        try:
            made[name] = recipe = apply_overrides(get_preset(preset), sets)
        except RecipeError as error:
            raise PlanError(f"{here}.set: {error}") from None
        only = spec.get("tasks", tasks)
        require(
            isinstance(only, list) and only and all(t in tasks for t in only),
            f"{here}.tasks",
            f"expected a non-empty list of the plan's tasks ({', '.join(tasks)}), got {only!r}",
        )
        require(isinstance(spec.get("about", ""), str), f"{here}.about", "expected a string")
        out[name] = {"preset": preset, "set": list(sets), "about": spec.get("about", ""), "tasks": list(only)}
        if "group" in spec:
            out[name]["group"] = spec["group"]
        if "seeds" in spec:  # more (or other) seeds for some of its tasks, e.g. to decide one claim
            check_keys(spec["seeds"], set(only), f"{here}.seeds")
            out[name]["seeds"] = {
                task: int_list(seeds, f"{here}.seeds.{task}", 0, MAX_SEED)
                for task, seeds in spec["seeds"].items()
            }
        _check_group(spec.get("group", GROUPS[0]), recipe, f"{here}.group")
    seen = {}
    for name, spec in out.items():  # two names for one recipe would train the same member twice
        for task in spec["tasks"]:
            key = (spec["preset"], tuple(sorted(spec["set"])), task)
            require(
                key not in seen,
                f"{where}.{name}",
                f"duplicated member: the same recipe as {seen.get(key)!r} for task {task}",
            )
            seen[key] = name
    return out, made


def _changes_data(recipe: Preset) -> bool:
    """Whether the recipe trains on other sequences than its preset's data as such."""
    return recipe.extra_target_max > 0


def _check_group(group, recipe: Preset, where: str) -> None:
    require(group in GROUPS, where, f"expected one of {', '.join(GROUPS)}, got {group!r}")
    require(
        group == "data" or not _changes_data(recipe),
        where,
        'the variant changes the training data (data.extra_target_max > 0): mark it "group": "data" '
        "so that it is reported apart from the model variants",
    )


def load_plan(path) -> Plan:
    """Read and check a plan; PlanError (one line, naming the file and key) on any mistake."""
    path = Path(path)
    try:  # theory.io.inputs: a FIFO, non-UTF-8 text, deep nesting or a duplicated key is one line
        raw = load_json(path, dict, "plan", object_pairs_hook=no_duplicate_keys)
    except InputError as error:
        raise PlanError(str(error)) from None
    where = str(path)
    check_keys(raw, TOP_KEYS, where)
    missing = sorted({"name", "root", "tasks", "seeds", "variants"} - set(raw))
    require(not missing, where, f"missing key(s) {', '.join(missing)}")
    tasks = raw["tasks"]
    require(isinstance(tasks, list) and tasks, f"{where}.tasks", "expected a non-empty list")
    for task in tasks:
        require(task in TASKS, f"{where}.tasks", f"unknown task {task!r}; known: {', '.join(TASKS)}")
    require(len(set(tasks)) == len(tasks), f"{where}.tasks", f"duplicated member: {tasks} repeats a task")
    seeds = int_list(raw["seeds"], f"{where}.seeds", 0, MAX_SEED)
    for key in ("name", "root", "ship", "about"):
        require(isinstance(raw.get(key, ""), str), f"{where}.{key}", "expected a string")
    for key in (
        "root",
        "ship",
    ):  # "" would put the members (or the summary) straight into the working directory
        require(raw.get(key) != "", f"{where}.{key}", "expected a folder, got an empty string")
    variants, recipes = _variants(raw["variants"], f"{where}.variants", list(tasks))
    plan = Plan(
        path=path,
        name=raw["name"],
        about=raw.get("about", ""),
        root=Path(raw["root"]),
        ship=Path(raw.get("ship") or Path(raw["root"]) / "collected"),
        tasks=list(tasks),
        seeds=seeds,
        variants=variants,
        recipes=recipes,
        reuse={},
        evaluate=evaluate_section(raw.get("evaluate", {}), f"{where}.evaluate"),
        analyze=analyze_section(raw.get("analyze", {}), f"{where}.analyze"),
        dilution=dilution_section(raw.get("dilution", False), f"{where}.dilution"),
        ship_best=raw.get("ship_best", False),
    )
    plan.long = long_section(raw.get("long", False), f"{where}.long", plan.variants, plan.tasks)
    plan.rescale = rescale_section(raw.get("rescale", False), f"{where}.rescale", plan.variants, recipes)
    require(
        not (plan.rescale and plan.rescale["dilution"]) or plan.dilution is not None,
        f"{where}.rescale.dilution",
        "true needs the plan's dilution section (it gives the inputs), which is false or absent",
    )
    require(isinstance(plan.ship_best, bool), f"{where}.ship_best", "expected true or false")
    reuse = raw.get("reuse", {})
    check_keys(reuse, set(reuse) if isinstance(reuse, dict) else set(), f"{where}.reuse")
    ids = {m.id for m in plan.members()}
    for member_id, run in reuse.items():
        require(member_id in ids, f"{where}.reuse", f"{member_id!r} is not a member of the plan")
        require(
            isinstance(run, str) and Path(run).is_dir(),
            f"{where}.reuse.{member_id}",
            f"{run!r} is not a run folder",
        )
        plan.reuse[member_id] = Path(run)
    return plan

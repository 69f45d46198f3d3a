"""The checks a study plan's sections go through (``training.studies.plan`` reads the plan):
the primitives every key uses (``require``, ``int_list``, ``check_keys``) and one reader per
optional stage section (evaluate, analyze, dilution, long, rescale), each returning the
section with its defaults filled in, or None where the plan says false.  Every mistake raises
PlanError naming the key and what is allowed."""

from __future__ import annotations

from training.model.gptj import INFERENCE_QUERY_SCALES

__all__ = [
    "PlanError",
    "MAX_SEED",
    "no_duplicate_keys",
    "require",
    "int_list",
    "check_keys",
    "evaluate_section",
    "analyze_section",
    "dilution_section",
    "long_section",
    "rescale_section",
]

EVALUATE_KEYS = {"test_split", "lengths", "count", "max_tokens", "seed"}
ANALYZE_KEYS = {"n_inputs", "discrepancy", "discrepancy_lengths", "discrepancy_count"}
DILUTION_KEYS = {"count", "seed"}
LONG_KEYS = {"lengths", "count", "seed", "variants", "tasks"}
RESCALE_KEYS = LONG_KEYS - {"tasks"} | {"query_scale", "max_tokens", "dilution"}
MAX_SEED = 2**31 - 1


class PlanError(ValueError):
    """A bad plan; the message names the file, the key and what is allowed."""


def no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise PlanError(f"duplicated key(s) {', '.join(map(repr, repeated))}")
    return dict(pairs)


def require(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise PlanError(f"{where}: {message}")


def int_list(value, where: str, low: int, high: int) -> list:
    require(
        isinstance(value, list)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
        where,
        f"expected a non-empty list of integers, got {value!r}",
    )
    require(all(low <= v <= high for v in value), where, f"values must be in [{low}, {high}], got {value}")
    require(len(set(value)) == len(value), where, f"duplicated member: {value} repeats a value")
    return value


def check_keys(obj, allowed: set, where: str) -> None:
    require(isinstance(obj, dict), where, f"expected an object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - allowed)
    require(not unknown, where, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")


def evaluate_section(raw, where: str) -> dict:
    check_keys(raw, EVALUATE_KEYS, where)
    out = {
        "test_split": raw.get("test_split", True),
        "count": raw.get("count", 400),
        "max_tokens": raw.get("max_tokens"),
        "seed": raw.get("seed", 3),
    }
    require(isinstance(out["test_split"], bool), f"{where}.test_split", "expected true or false")
    out["lengths"] = int_list(raw.get("lengths", [17]), f"{where}.lengths", 17, 1_000_000)
    int_list([out["count"]], f"{where}.count", 1, 1_000_000)
    int_list([out["seed"]], f"{where}.seed", 0, MAX_SEED)
    if out["max_tokens"] is not None:
        int_list([out["max_tokens"]], f"{where}.max_tokens", 17, 10**9)
    return out


def analyze_section(raw, where: str) -> dict | None:
    if raw is False:
        return None
    check_keys(raw, ANALYZE_KEYS, where)
    out = {
        "n_inputs": raw.get("n_inputs", 100),
        "discrepancy": raw.get("discrepancy", True),
        "discrepancy_lengths": raw.get("discrepancy_lengths"),
        "discrepancy_count": raw.get("discrepancy_count"),
    }
    int_list([out["n_inputs"]], f"{where}.n_inputs", 1, 10_000)
    require(isinstance(out["discrepancy"], bool), f"{where}.discrepancy", "expected true or false")
    if out["discrepancy_lengths"] is not None:
        int_list(out["discrepancy_lengths"], f"{where}.discrepancy_lengths", 17, 1_000_000)
    if out["discrepancy_count"] is not None:
        int_list([out["discrepancy_count"]], f"{where}.discrepancy_count", 1, 10_000)
    return out


def dilution_section(raw, where: str) -> dict | None:
    if raw is False:
        return None
    check_keys(raw, DILUTION_KEYS, where)
    out = {"count": raw.get("count", 32), "seed": raw.get("seed", 5)}
    int_list([out["count"]], f"{where}.count", 1, 10_000)
    int_list([out["seed"]], f"{where}.seed", 0, MAX_SEED)
    return out


def long_section(raw, where: str, variants: dict, tasks: list) -> dict | None:
    """The evaluation past the grid, for the listed variants and tasks (default: all of both):
    a variant that trains on two tasks may be worth it on one only."""
    if raw is False:
        return None
    check_keys(raw, LONG_KEYS, where)
    chosen = raw.get("tasks", list(tasks))
    require(
        isinstance(chosen, list)
        and chosen
        and all(isinstance(t, str) for t in chosen)
        and set(chosen) <= set(tasks),
        f"{where}.tasks",
        f"expected a non-empty list of the plan's tasks ({', '.join(tasks)}), got {chosen!r}",
    )
    out = {"lengths": raw.get("lengths", [20_000]), "count": raw.get("count", 64), "seed": raw.get("seed", 4)}
    int_list(out["lengths"], f"{where}.lengths", 17, 1_000_000)
    int_list([out["count"]], f"{where}.count", 1, 1_000_000)
    int_list([out["seed"]], f"{where}.seed", 0, MAX_SEED)
    out["variants"] = variant_names(raw.get("variants", list(variants)), f"{where}.variants", variants)
    out["tasks"] = list(chosen)
    return out


def rescale_section(raw, where: str, variants: dict, recipes: dict) -> dict | None:
    """The inference-time query scale stage: only variants trained without a scale qualify.
    ``dilution: true`` adds the dilution stage with the same scale (the plan's dilution section
    gives its inputs; ``plan.py`` checks that there is one)."""
    if raw is False:
        return None
    check_keys(raw, RESCALE_KEYS, where)
    unscaled = [name for name in variants if recipes[name].model.get("query_scale", "none") == "none"]
    require(bool(unscaled), where, "no variant of the plan is trained without a query scale")
    out = {
        "query_scale": raw.get("query_scale", "log"),
        "lengths": raw.get("lengths", [17]),
        "count": raw.get("count", 200),
        "max_tokens": raw.get("max_tokens"),
        "seed": raw.get("seed", 3),
        "dilution": raw.get("dilution", False),
    }
    require(isinstance(out["dilution"], bool), f"{where}.dilution", "expected true or false")
    require(
        out["query_scale"] in INFERENCE_QUERY_SCALES,
        f"{where}.query_scale",
        f"expected one of {', '.join(INFERENCE_QUERY_SCALES)}, got {out['query_scale']!r}",
    )
    int_list(out["lengths"], f"{where}.lengths", 17, 1_000_000)
    int_list([out["count"]], f"{where}.count", 1, 1_000_000)
    int_list([out["seed"]], f"{where}.seed", 0, MAX_SEED)
    if out["max_tokens"] is not None:
        int_list([out["max_tokens"]], f"{where}.max_tokens", 17, 10**9)
    out["variants"] = names = variant_names(raw.get("variants", unscaled), f"{where}.variants", variants)
    scaled = [n for n in names if n not in unscaled]
    require(not scaled, f"{where}.variants", f"{', '.join(scaled)} already train(s) with a query scale")
    return out


def variant_names(names, where: str, variants: dict) -> list:
    require(
        isinstance(names, list) and names and all(isinstance(n, str) for n in names),
        where,
        "expected a non-empty list of variant names",
    )
    unknown = [n for n in names if n not in variants]
    require(
        not unknown, where, f"unknown variant(s) {', '.join(unknown)}; the plan has {', '.join(variants)}"
    )
    return list(names)

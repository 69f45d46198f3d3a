"""The variants study as a Markdown table (variants_table.md, for the README): one row per
variant and task, the number of seeds and the accuracy over all hops at the training length
(17), at the paper's 850 and at 5,000 tokens, and at the plan's ``long`` lengths (20,000: a
last stage, own inputs, for the variants the plan lists), each as the mean over seeds and its 95%
interval exactly as ``summary.json`` holds them (``training.studies.collect``: Student t,
clipped to [0, 1]).  Nothing is recomputed here, so the table and the summary never disagree.
"""

from __future__ import annotations

import re
from pathlib import Path

from theory.io.files import atomic_write_text

from . import style

TABLE_LENGTHS = (17, 850, 5000)
# The plan marks a variant that changes the training data rather than the model with
# "group": "data"; before that marker existed the data variants were the "extra-window" ones.
DATA_GROUP, DATA_PREFIX = "data", "extra-window"
ABSENT = "–"


def is_data_variant(name: str, spec: dict) -> bool:
    """True for a variant that changes the data, not the model (drawn dashed, labelled "(data)")."""
    if "group" in spec:
        return spec["group"] == DATA_GROUP
    return name.startswith(DATA_PREFIX)


def variant_tag(spec: dict) -> str:
    """The plan's letter for the variant ("b", "b + f"), from the start of its 'about' string."""
    found = re.match(r"([a-z](?: \+ [a-z])*)\. ", spec.get("about", ""))
    return found.group(1) if found else ""


def variant_label(name: str, spec: dict) -> str:
    """'nope-0-3k (b)', 'extra-window-3k (e) (data)': the name, its letter, and the data mark."""
    tag = variant_tag(spec)
    return name + (f" ({tag})" if tag else "") + (" (data)" if is_data_variant(name, spec) else "")


def variant_tasks(summary: dict) -> list[tuple[str, str]]:
    """(variant, task) for every result block of the summary, in the plan's variant order and
    the figures' task order (other tasks after, alphabetically)."""
    order = {task: i for i, task in enumerate(style.TASKS)}
    names = list(summary["variants"]) + [v for v in summary["results"] if v not in summary["variants"]]
    return [
        (name, task)
        for name in names
        for task in sorted(summary["results"].get(name, {}), key=lambda t: (order.get(t, len(order)), t))
    ]


def length_block(summary: dict, name: str, task: str, with_long: bool = True) -> dict | None:
    """The 'length' statistics of one variant and task, or None where none was measured; with
    ``with_long`` the 'long' stage's lengths (past the grid) follow the grid's, so a curve runs on."""
    results = summary["results"].get(name, {}).get(task, {})
    block, long = results.get("length"), results.get("long") if with_long else None
    if block is None or long is None:
        return block
    none = [{"values": {}}] * len(long["lengths"])  # a hop count the long stage did not see
    return {
        "lengths": block["lengths"] + long["lengths"],
        "accuracy": block["accuracy"] + long["accuracy"],
        "by_hop": {h: column + long["by_hop"].get(h, none) for h, column in block["by_hop"].items()},
    }


def table_lengths(summary: dict) -> tuple:
    """The grid's columns, then the long stage's lengths where the plan has one."""
    return TABLE_LENGTHS + tuple((summary.get("long") or {}).get("lengths", ()))


def seeds_of(block: dict | None) -> list[str]:
    """Every seed with at least one length measured (the summary keys seeds as strings)."""
    if block is None:
        return []
    return sorted({seed for stat in block["accuracy"] for seed in stat["values"]}, key=int)


def cell(stat: dict | None) -> str:
    """'0.912 [0.850, 0.974]'; one seed has no interval: '0.912 (1 seed)'."""
    if stat is None or stat.get("mean") is None:
        return ABSENT
    if stat.get("ci") is None:
        return f"{stat['mean']:.3f} (1 seed)"
    low, high = stat["ci"]
    return f"{stat['mean']:.3f} [{low:.3f}, {high:.3f}]"


def at_length(block: dict | None, length: int) -> dict | None:
    if block is None or length not in block["lengths"]:
        return None
    return block["accuracy"][block["lengths"].index(length)]


def variants_markdown(summary: dict) -> str:
    lengths = table_lengths(summary)
    heads = " | ".join(f"Accuracy at {length}" for length in lengths)
    lines = [
        f"# Variants study ({summary.get('plan', 'variants')}): accuracy over all hops against input length",
        "",
        f"| Variant | Task | Seeds n | {heads} |",
        "|---|---|---:|" + "---:|" * len(lengths),
    ]
    for name, task in variant_tasks(summary):
        spec = summary["variants"].get(name, {})
        block = length_block(summary, name, task)
        cells = " | ".join(cell(at_length(block, length)) for length in lengths)
        lines.append(
            f"| {variant_label(name, spec)} | {task} | {len(seeds_of(length_block(summary, name, task, False)))}"
            f" | {cells} |"
        )
    note = (
        f"Each cell: mean over seeds [95% interval]; {summary['interval']}. {ABSENT}: not measured (yet). "
        '"(data)": the variant changes the training data, not the model.'
    )
    long = summary.get("long")
    if long:
        tasks = long.get("tasks")  # absent in summaries collected before the key existed: every task
        partial = tasks and set(tasks) != {task for _, task in variant_tasks(summary)}
        only = f" (the {' and '.join(tasks)} task)" if partial else ""
        note += (
            f" Lengths {', '.join(map(str, long['lengths']))}: the long stage, {long['count']} inputs per "
            f"length (seed {long['seed']}), run for {', '.join(long['variants'])}{only} only."
        )
    lines += ["", note, "", "Variants:", ""]
    lines += [f"- **{name}**: {spec.get('about', '')}" for name, spec in summary["variants"].items()]
    return "\n".join(lines) + "\n"


def write_variants_table(summary: dict, out: Path) -> Path:
    path = Path(out) / "variants_table.md"
    atomic_write_text(path, variants_markdown(summary))
    return path

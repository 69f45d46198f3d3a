"""Frequency use per layer: Figure 8 (weights over the 64 RoPE frequency IDs) and Table 1.

Both read the "frequency" block of training/reference/<task>/analysis.json (weights per ID
and the weighted-average ID per layer, at the best checkpoint) and set them beside the
paper's Table 1 as transcribed once in ``theory.paper_data``.
"""

from __future__ import annotations

import json
from pathlib import Path

from theory.io.files import atomic_write_text
from theory.paper_data import TABLE1

from . import style
from .loaders import Built, Inputs, per_task


def build_fig8(inputs: Inputs, out: Path) -> Built:
    """Figure 8: one bar chart per layer of the weight of each frequency ID (ID 1 = fastest),
    with our weighted-average ID (solid) and the paper's Table 1 ID (dashed) marked."""
    analyses, missing = per_task(inputs.analysis, style.TASKS)

    def draw(ax, task, analysis, layer):
        frequency = analysis["frequency"]
        if layer >= len(frequency["weights"]):
            return False
        weights = frequency["weights"][layer]
        # One filled step patch per layer, not 64 bar patches: 24 panels of bars took ~10 s to save.
        ax.stairs(
            weights,
            [i + 0.5 for i in range(len(weights) + 1)],
            fill=True,
            color=style.TASK_COLOUR[task],
            alpha=0.75,
        )
        ours = frequency["weighted_id"][layer]
        ax.axvline(ours, color="black", lw=1.2, label="ours: weighted ID")
        paper_ids = [paper_id for paper_id, _ in TABLE1[task]]
        if layer < len(paper_ids):
            ax.axvline(
                paper_ids[layer],
                color=style.PAPER_MARK_COLOUR,
                lw=1.4,
                label="paper: Table 1 ID",
                **style.PAPER_STYLE,
            )
            ax.set_title(f"L{layer}: ours {ours:.1f}, paper {paper_ids[layer]}", fontsize=8.5)
        else:
            ax.set_title(f"L{layer}: ours {ours:.1f}", fontsize=8.5)
        return True

    fig = style.per_layer_grids(
        analyses, missing, (2.3, 1.9), 1.2, draw, "Weight", "Frequency ID", legend_ncol=2
    )
    seeds = ", ".join(f"{task} seed {training_seed(inputs, task)}" for task in analyses)
    fig.suptitle(
        f"Figure 8: frequency use per layer (bars: ours at the best checkpoint; {seeds})", fontsize=12
    )
    return Built(style.save(fig, out, "fig8"), missing)


def training_seed(inputs: Inputs, task: str):
    """The seed the run in ``--runs`` was trained with: its metrics.jsonl's settings record (the
    first line), or "unknown" without one (analysis.json's own "seed" is its inputs', not the model's)."""
    path = Path(inputs.runs_dir) / task / "metrics.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as lines:
            first = json.loads(lines.readline() or "{}")
        if first.get("split") == "settings" and "seed" in first:
            return first["seed"]
    return "unknown"


def _cell(values, layer, fmt) -> str:
    if values is None or layer >= len(values) or values[layer] is None:
        return "–"
    return format(values[layer], fmt)


def table1_markdown(analyses: dict, missing: list) -> str:
    """Table 1 as Markdown: per layer, the paper's ID and frequency beside ours, per task."""
    lines = ["# Table 1: weighted-average frequency ID per layer, paper beside ours", ""]
    for task in style.TASKS:
        frequency = analyses[task]["frequency"] if task in analyses else None
        step = frequency.get("step") if frequency else None
        lines.append(f"## {style.TASK_TITLE[task]}" + (f" (ours at step {step})" if step is not None else ""))
        lines.append("")
        if frequency is None:
            lines += [f"Not available: {style.missing_text(task, missing).splitlines()[-1]}", ""]
        lines += [
            "| Layer | Paper ID | Paper frequency | Our weighted ID | Our frequency |",
            "|---:|---:|---:|---:|---:|",
        ]
        ours_id = frequency["weighted_id"] if frequency else None
        ours_freq = frequency["frequency"] if frequency else None
        count = max(len(TABLE1[task]), len(ours_id or []))
        for layer in range(count):
            paper_id, paper_freq = TABLE1[task][layer] if layer < len(TABLE1[task]) else ("–", "–")
            lines.append(
                f"| {layer} | {paper_id} | {paper_freq} | {_cell(ours_id, layer, '.1f')} | "
                f"{_cell(ours_freq, layer, '.4f')} |"
            )
        lines.append("")
    lines.append(
        "Paper values: Table 1 of arXiv 2605.31558 (theory/paper_data.py). Ours: the "
        '"frequency" block of training/reference/<task>/analysis.json.'
    )
    return "\n".join(lines) + "\n"


def build_table1(inputs: Inputs, out: Path) -> Built:
    analyses, missing = per_task(inputs.analysis, style.TASKS)
    path = out / "table1.md"
    atomic_write_text(path, table1_markdown(analyses, missing))  # a full disk leaves the old table whole
    return Built([path], missing)

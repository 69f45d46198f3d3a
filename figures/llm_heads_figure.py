"""Head maps of a pretrained LLM (SmolLM2-135M-Instruct): every head's positional score,
symbolic score, sink share and dominant RoPE plane, per task.

Reads ``analysis_<task>.json`` of ``python -m training analyze --model`` from the folder
``--llm-heads`` (shipped: training/reference/llm/smollm2/).  Rows: the four quantities, each
with one colour bar for both tasks (same scale, so the tasks compare cell by cell); columns:
the tasks.  In every panel x is the layer and y the head, so a 30 x 9 model is one wide map.
Scores and the sink share use cividis on [0, 1]; the plane ID uses viridis from 1 (fastest)
to the number of planes.  Both maps read the same to colour-blind eyes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from . import style
from .loaders import Built, Inputs, per_task

# (key path in the analysis JSON, row title, colour-bar label, colour map)
QUANTITIES = (
    (("per_head", "positional"), "positional score", "s_POS", style.HEATMAP),
    (("per_head", "symbolic"), "symbolic score", "s_SYM", style.HEATMAP),
    (("per_head", "sink"), "sink share (attention on the first token)", "sink share", style.HEATMAP),
    (("frequency", "dominant_id"), "dominant RoPE plane (frequency ID)", "frequency ID (1 = fastest)",
     style.COLORMAP),
)


def head_map(analysis: dict, keys: tuple) -> np.ndarray:
    """(heads, layers) float array of one quantity; null (no allowed swap) becomes NaN."""
    block = analysis[keys[0]][keys[1]]
    return np.array([[np.nan if v is None else v for v in row] for row in block], dtype=float).T


def colour_range(keys: tuple, analyses: dict) -> tuple[float, float]:
    """[0, 1] for scores and shares; 1 .. number of planes for the plane ID."""
    if keys[1] != "dominant_id":
        return 0.0, 1.0
    return 1.0, float(max(len(a["frequency"]["weights"][0][0]) for a in analyses.values()))


def draw_row(axes, analyses: dict, quantity: tuple) -> object:
    """One quantity for every task; returns the last image, for the row's colour bar."""
    keys, title, _, cmap = quantity
    low, high = colour_range(keys, analyses)
    image = None
    for ax, task in zip(axes, style.TASKS):
        if task not in analyses:
            ax.set_axis_off()
            continue
        data = head_map(analyses[task], keys)
        image = ax.imshow(data, cmap=cmap, vmin=low, vmax=high, aspect="auto", origin="lower",
                          interpolation="nearest", extent=(-0.5, data.shape[1] - 0.5, -0.5, data.shape[0] - 0.5))
        ax.set_title(f"{style.TASK_TITLE[task]}: {title}", fontsize=9)
        ax.set_xticks(range(0, data.shape[1], 5 if data.shape[1] > 12 else 1))
        ax.set_yticks(range(data.shape[0]))
        ax.set_ylabel("Head")
        ax.grid(False)
    return image


def _missing_note(missing: list) -> str:
    """The missing files and their commands, wrapped to fit the empty column."""
    return "\n".join(textwrap.fill(str(m), 60) for m in missing)


def build_llm_heads(inputs: Inputs, out: Path) -> Built:
    """Small multiples: rows = positional, symbolic, sink share, dominant plane; columns = tasks."""
    analyses, missing = per_task(inputs.llm_head_analysis, style.TASKS)
    fig = style.new_figure(12, 9.5)
    axes = fig.subplots(len(QUANTITIES), len(style.TASKS), sharex=True, sharey=True, squeeze=False)
    for row, quantity in zip(axes, QUANTITIES):
        image = draw_row(row, analyses, quantity)
        bar = fig.colorbar(image, ax=list(row), label=quantity[2], shrink=0.9, pad=0.015)
        if quantity[0][1] == "dominant_id":  # name the fastest plane and the slowest on the bar
            low, high = image.get_clim()
            bar.set_ticks(np.unique(np.r_[low, np.arange(8, high, 8), high]))
    for ax in axes[-1]:
        ax.set_xlabel("Layer")
    for col, task in enumerate(style.TASKS):
        if task not in analyses:
            style.placeholder(axes[0][col], f"{style.TASK_TITLE[task]}: no data\n{_missing_note(missing)}")
    first = next(iter(analyses.values()))
    name = str(first.get("model", "LLM")).removesuffix(".gguf")
    fig.suptitle(f"Head maps of {name} ({first['layers']} layers x {first['heads']} heads, "
                 f"{first.get('n_inputs', '?')} inputs per task, scored at the query's last token)", fontsize=12)
    return Built(style.save(fig, out, "llm_heads"), missing)

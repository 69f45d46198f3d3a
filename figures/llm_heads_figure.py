"""Head maps of pretrained LLMs: every head's positional score, symbolic score, sink share and
dominant RoPE plane, per model and task.

Reads ``analysis_<task>.json`` of ``python -m training analyze --model`` from every model folder
under ``--llm-heads`` (shipped: training/reference/llm/<model>/, by folder name; a folder that
itself holds the files is one model).  Rows: the quantities, each with one colour bar for every
panel (same scale, so models and tasks compare cell by cell); columns: model x task, each as wide
as the model has layers.  In every panel x is the layer and y the head.

Layers with their own RoPE base (Gemma 3: sliding-window layers and full-attention layers) make
plane IDs of different layers incomparable, so where the file has ``frequency.dominant_angle`` a
last row draws the dominant plane's angle per token (radians, log scale), which compares across
bases; where it has ``frequency.layer_kind``, the full-attention layers are marked "F" under the
x axis.  Scores and the sink share use cividis on [0, 1]; the plane ID uses viridis on a log
scale from 1 (fastest) to the most planes of any model, the angle reversed viridis on a log
scale, so that dark is fast in both.  All read the same to colour-blind eyes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from matplotlib.colors import LogNorm, Normalize

from . import style
from .loaders import Built, Inputs, per_task

FULL = "full"  # the layer_kind of a full-attention layer; marked FULL_MARK under the x axis
FULL_MARK = "F"
MIN_COLUMN_LAYERS = 20  # a column's width in layers at least: room for a one-line title
# (key path in the analysis JSON, short panel title, colour-bar label, colour map)
QUANTITIES = (
    (("per_head", "positional"), "positional score", "s_POS", style.HEATMAP),
    (("per_head", "symbolic"), "symbolic score", "s_SYM", style.HEATMAP),
    (("per_head", "sink"), "sink share", "sink share\n(on the first token)", style.HEATMAP),
    (
        ("frequency", "dominant_id"),
        "dominant plane",
        "dominant plane ID\n(1 = fastest, log scale)",
        style.COLORMAP,
    ),
)
ANGLE = (
    ("frequency", "dominant_angle"),
    "angle per token",
    "dominant plane's angle\nper token (rad, log scale)",
    f"{style.COLORMAP}_r",
)


def head_map(analysis: dict, keys: tuple) -> np.ndarray:
    """(heads, layers) float array of one quantity; null (no allowed swap) becomes NaN."""
    block = analysis[keys[0]][keys[1]]
    return np.array([[np.nan if v is None else v for v in row] for row in block], dtype=float).T


def colour_scale(keys: tuple, analyses: list[dict]):
    """[0, 1] for scores and shares; 1 .. the most planes of any model for the plane ID and the
    angles' own range for the angle, both on a log scale: a model with 4 times fewer planes than
    another keeps its contrast, and the fast planes, where positional heads are expected, are spread."""
    if keys[1] == "dominant_id":
        return LogNorm(1.0, float(max(len(a["frequency"]["weights"][0][0]) for a in analyses)))
    if keys[1] == "dominant_angle":
        values = np.concatenate([head_map(a, keys).ravel() for a in analyses if keys[1] in a["frequency"]])
        values = values[np.isfinite(values)]
        return LogNorm(float(values.min()), float(values.max())) if values.size else LogNorm(1e-6, 1.0)
    return Normalize(0.0, 1.0)


def full_layers(analysis: dict) -> list[int]:
    """The full-attention layers named by the file's layer_kind (none when it has no layer_kind)."""
    return [layer for layer, kind in enumerate(analysis["frequency"].get("layer_kind") or []) if kind == FULL]


def layer_ticks(analysis: dict) -> tuple[list[int], list[str]]:
    """Every 5th layer (every layer in a small model) plus every full-attention layer, "F" under it;
    a regular tick next to a full layer is left out, so that no two labels touch."""
    layers, full = analysis["layers"], full_layers(analysis)
    step = 5 if layers > 12 else 1
    ticks = sorted(
        set(full) | {t for t in range(0, layers, step) if step == 1 or all(abs(t - f) > 1 for f in full)}
    )
    return ticks, [f"{t}\n{FULL_MARK}" if t in full else str(t) for t in ticks]


def layer_label(analysis: dict) -> str:
    """ "Layer", and what the mark means where the file names layer kinds (the other kinds named too)."""
    others = sorted(set(analysis["frequency"].get("layer_kind") or []) - {FULL})
    if not full_layers(analysis):
        return "Layer"
    return f"Layer ({FULL_MARK}: {FULL} attention" + (f"; others {', '.join(others)})" if others else ")")


def draw_panel(ax, analysis: dict, quantity: tuple, norm, title: str):
    """One quantity of one model and task; returns the image, or None where the file lacks it."""
    keys, short, _, cmap = quantity
    layers, heads = analysis["layers"], analysis["heads"]
    ax.set_title(f"{title}: {short}", fontsize=8)
    ax.set_xlim(-0.5, layers - 0.5)
    ax.set_ylim(-0.5, heads - 0.5)
    ax.set_xticks(*layer_ticks(analysis))
    ax.set_yticks(range(heads))
    ax.grid(False)
    if keys[1] not in analysis[keys[0]]:
        base = analysis["frequency"].get("base")
        note = f"one RoPE base ({base:g}):\nplane IDs compare" if isinstance(base, (int, float)) else ""
        ax.set_frame_on(False)  # an empty frame would read as a map of zeros; the layer axis stays
        ax.tick_params(left=False, labelleft=False)
        ax.set_label("no data")  # no head axis to label (build_llm_heads)
        ax.text(
            0.5,
            0.5,
            f"no {keys[1]} in the file\n{note}",
            ha="center",
            va="center",
            fontsize=7,
            color="0.3",
            transform=ax.transAxes,
        )
        return None
    return ax.imshow(
        head_map(analysis, keys),
        cmap=cmap,
        norm=norm,
        aspect="auto",
        origin="lower",
        interpolation="nearest",
        extent=(-0.5, layers - 0.5, -0.5, heads - 0.5),
    )


def load_models(inputs: Inputs) -> tuple[list[tuple[Path, dict]], list]:
    """[(model folder, {task: analysis})] of every model found, and the files missing among them."""
    models, missing = [], []
    for folder in inputs.llm_head_models(style.TASKS):
        analyses, absent = per_task(
            lambda task, folder=folder: inputs.llm_head_analysis(task, folder), style.TASKS
        )
        models.append((folder, analyses))
        missing += absent
    return models, missing


def _name(analysis: dict) -> str:
    return str(analysis.get("model", "LLM")).removesuffix(".gguf")


def _missing_note(task: str, missing: list) -> str:
    """The column's missing file and its command, wrapped to fit a narrow column."""
    lines = [str(m) for m in missing if m.path.name == f"analysis_{task}.json"]
    return f"{style.TASK_TITLE[task]}: no data\n" + "\n".join(textwrap.fill(line, 40) for line in lines)


def build_llm_heads(inputs: Inputs, out: Path) -> Built:
    """Small multiples: rows = positional, symbolic, sink share, dominant plane (and its angle where
    a file has it); columns = model x task."""
    models, missing = load_models(inputs)
    every = [a for _, analyses in models for a in analyses.values()]
    rows = QUANTITIES + ((ANGLE,) if any(ANGLE[0][1] in a["frequency"] for a in every) else ())
    columns = [(folder, analyses, task) for folder, analyses in models for task in style.TASKS]
    # as wide as the model has layers, but never too narrow for its one-line titles
    widths = [max(MIN_COLUMN_LAYERS, next(iter(analyses.values()))["layers"]) for _, analyses, _ in columns]
    fig = style.new_figure(max(12.0, 0.14 * sum(widths) + 3), 2.0 * len(rows) + 1.5)
    axes = fig.subplots(
        len(rows),
        len(columns),
        sharex="col",
        sharey="col",
        squeeze=False,
        gridspec_kw={"width_ratios": widths},
    )
    for row, quantity in zip(axes, rows):
        norm = colour_scale(quantity[0], every)
        images = [
            draw_panel(ax, analyses[task], quantity, norm, f"{folder.name} {task}")
            for ax, (folder, analyses, task) in zip(row, columns)
            if task in analyses
        ]
        image = next(i for i in images if i is not None)  # the row exists because some file has it
        bar = fig.colorbar(image, ax=list(row), label=quantity[2], shrink=0.9, pad=0.01)
        if quantity[0][1] == "dominant_id":  # name the fastest plane and the slowest on the bar
            bar.set_ticks(np.unique(np.r_[2.0 ** np.arange(np.log2(norm.vmax)), norm.vmax]))
            bar.ax.yaxis.set_major_formatter("{x:g}")
            bar.ax.minorticks_off()
    for col, (folder, analyses, task) in enumerate(columns):
        if task not in analyses:
            for ax in axes[:, col]:
                ax.set_axis_off()
            style.placeholder(axes[0][col], f"{folder.name}: {_missing_note(task, missing)}")
            continue
        for ax in axes[:, col] if task == style.TASKS[0] else ():
            ax.set_ylabel("" if ax.get_label() == "no data" else "Head")
        axes[-1][col].set_xlabel(layer_label(analyses[task]))
    shapes = "; ".join(
        f"{folder.name} = {_name(a)} ({a['layers']} layers x {a['heads']} heads, "
        f"{a.get('n_inputs', '?')} inputs per task)"
        for folder, a in ((f, next(iter(an.values()))) for f, an in models)
    )
    fig.suptitle(f"Head maps, scored at the query's last token: {shapes}", fontsize=11)
    return Built(style.save(fig, out, "llm_heads"), missing)

"""The figure "discrepancy_trained": per trained layer, the measured logit gap against the
length n beside the construction's exact discrepancy at that layer's dominant angle.

Input: the "measured_discrepancy" block of training/reference/<task>/analysis.json (per
layer: its kind, dominant ID and angle, the gap's median and minimum over the inputs at each
length, the fitted slope, and the construction's curve, see
``training.analysis.measured_discrepancy``).  Small multiples, one log-log panel per layer
and one grid per task, so that no curve hides another and every legend sits outside the
panels.  The constructions' logits are cosines and the trained ones are not: a reader
compares slopes, not heights.
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory

from . import style
from .loaders import Built, Inputs, per_task

MAX_COLUMNS = 6
PANEL = (2.45, 2.05)  # inches per panel: two title lines, log ticks and the curves stay legible
KIND_TITLE = {"index": "Index", "retrieval": "Retrieval"}
MEDIAN_WIDTH, MIN_WIDTH, THEORY_WIDTH = 1.8, 1.0, 1.4
FAILED_MARK = {"marker": "x", "ms": 5, "mew": 1.3, "linestyle": "none", "color": style.CONSTRUCTION_COLOUR}
MINUS = str.maketrans("-", "−")  # a typographic minus in the printed slopes
# The "construction fails" marks sit on the x axis itself (clip_on off), where no data point can be.
FAILED_HEIGHT = 0.0


def kind_colour(kind) -> str:
    return style.KIND_COLOUR.get(kind, style.GREY)


def yes_no(flag) -> str:
    return "–" if flag is None else ("yes" if flag else "no")


def panel_title(layer: dict) -> str:
    """Line 1: which layer, its class and angle; line 2: the fitted slope of the median gap and
    whether it decays, ours beside the construction's."""
    kind = KIND_TITLE.get(layer.get("kind"), str(layer.get("kind") or "unclassified"))
    angle = layer.get("angle")
    plane = layer.get("dominant_id", "?")
    first = (
        f"L{layer['layer']} {kind}, "
        + ("no rotary plane (NoPE)" if plane is None else f"ID {plane}")
        + (f", θ = {angle:.3g}" if angle is not None else "")
    )
    slope = layer.get("decay_exponent")
    second = "slope –" if slope is None else f"slope {slope:+.2f}"
    if layer.get("decays") is not None:
        second += f"; decays: {yes_no(layer['decays'])}"
        if layer.get("theory_says_decays") is not None:
            second += f", theory {yes_no(layer['theory_says_decays'])}"
    return f"{first}\n{second.translate(MINUS)}"


def layer_panel(ax, lengths: list, layer: dict) -> None:
    """One layer: measured median (solid) and minimum (dotted) in the colour of its class, the
    construction's curve dashed black where positive, and an x at each n where it is not."""
    colour = kind_colour(layer.get("kind"))
    ax.loglog(lengths, style.positive(layer["median"]), color=colour, lw=MEDIAN_WIDTH)
    ax.loglog(lengths, style.positive(layer["min"]), color=colour, lw=MIN_WIDTH, linestyle=":")
    values = (layer.get("theory") or {}).get("values") or []
    if any(v is not None for v in values):
        ax.loglog(
            lengths, style.positive(values), color=style.CONSTRUCTION_COLOUR, lw=THEORY_WIDTH, linestyle="--"
        )
        failed = [n for n, v in zip(lengths, values) if v is not None and v <= 0]
        if failed:
            on_floor = blended_transform_factory(ax.transData, ax.transAxes)
            ax.plot(
                failed,
                [FAILED_HEIGHT] * len(failed),
                transform=on_floor,
                clip_on=False,
                zorder=5,
                **FAILED_MARK,
            )
    ax.set_title(panel_title(layer), fontsize=8)


def legend_handles(kinds: set) -> list:
    """What the colours and line styles mean, for the classes of layer that are drawn."""
    handles = [
        Line2D(
            [],
            [],
            color=kind_colour(kind),
            lw=MEDIAN_WIDTH,
            label=f"measured median gap, {KIND_TITLE.get(kind, 'unclassified')} layer",
        )
        for kind in ("index", "retrieval")
        if kind in kinds
    ]
    if kinds - set(KIND_TITLE):
        handles.append(
            Line2D(
                [],
                [],
                color=style.GREY,
                lw=MEDIAN_WIDTH,
                label="measured median gap, other layer (no construction)",
            )
        )
    handles += [
        Line2D(
            [], [], color="0.35", lw=MIN_WIDTH, linestyle=":", label="measured minimum gap over the inputs"
        ),
        Line2D(
            [],
            [],
            color=style.CONSTRUCTION_COLOUR,
            lw=THEORY_WIDTH,
            linestyle="--",
            label="construction at the layer's angle: T_Index (min over inputs), T_Retrieval (margin)",
        ),
        Line2D(
            [],
            [],
            label="× on the axis: construction's margin ≤ 0 at this n (a wrong symbol can win)",
            **FAILED_MARK,
        ),
    ]
    return handles


def task_grid(subfig, block: dict, columns: int) -> None:
    """One task's layers as a grid of panels sharing both axes; cells past the last layer hidden."""
    layers = block["layers"]
    rows = math.ceil(len(layers) / columns)
    axes = subfig.subplots(rows, columns, sharex=True, sharey=True, squeeze=False).ravel()
    for index, ax in enumerate(axes):
        if index >= len(layers):
            ax.set_axis_off()
            continue
        layer_panel(ax, block["lengths"], layers[index])
        if index % columns == 0:
            ax.set_ylabel("Logit gap (log)")
        if index + columns >= len(layers):  # nothing below it: this panel carries the x axis
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("Length n (log)")
    step = block.get("step")
    subfig.suptitle(
        style.TASK_TITLE[block["_task"]] + (f" (step {step})" if step is not None else ""),
        fontsize=11,
        fontweight="bold",
    )


def build_discrepancy_trained(inputs: Inputs, out: Path) -> Built:
    """Per trained layer, log-log against n: the measured gap between the largest and second-
    largest last-token logit (median solid, minimum dotted) and the construction's exact
    discrepancy at the layer's dominant angle (dashed), one grid of panels per task."""
    blocks, missing = per_task(lambda task: inputs.analysis_block(task, "measured_discrepancy"), style.TASKS)
    columns = min(MAX_COLUMNS, max(len(block["layers"]) for block in blocks.values()) or 1)
    rows = {
        task: math.ceil(len(blocks[task]["layers"]) / columns) if task in blocks else 1
        for task in style.TASKS
    }
    fig = style.new_figure(PANEL[0] * columns + 0.6, PANEL[1] * sum(rows.values()) + 2.2)
    subfigs = fig.subfigures(
        len(style.TASKS), 1, height_ratios=[max(1, rows[t]) for t in style.TASKS], hspace=0.03
    )
    kinds = set()
    for subfig, task in zip(subfigs, style.TASKS):
        if task not in blocks:
            subfig.suptitle(style.TASK_TITLE[task], fontsize=11, fontweight="bold")
            style.placeholder(subfig.add_subplot(), style.missing_text(task, missing))
            continue
        task_grid(subfig, {**blocks[task], "_task": task}, columns)
        kinds |= {layer.get("kind") for layer in blocks[task]["layers"]}
    fig.legend(handles=legend_handles(kinds), loc="outside lower center", ncol=3, frameon=False, fontsize=8)
    fig.suptitle(
        "Measured logit gap of each trained layer against the construction's exact discrepancy at the "
        "same angle\n(log-log; trained logits are not cosines, so compare the slopes, not the heights)",
        fontsize=12,
    )
    return Built(style.save(fig, out, "discrepancy_trained"), missing)

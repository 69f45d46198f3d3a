"""Figure 4B/C: the trained number-task model's layer-1 queries and keys on its dominant RoPE
plane (B), and the weight of each frequency ID in that layer (C).

Input: the "index_geometry" and "frequency" blocks of training/reference/number/analysis.json.
The construction's counterpart (Figure 4A) is in ``figures.theory_figures``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from theory.paper_data import TABLE1

from . import style
from .loaders import Built, Inputs

FIG4C_LAYER, FIG4C_PRINTED_ID = 1, 1  # Figure 4C: "layer L1", peak labelled "ID: 1"
# A printed number's box, as a fraction of the axis reach (the axes span 2.3 reaches, about
# 320 points): 2 digits in 8-point bold are about 16 x 12 points.
LABEL_BOX = (0.12, 0.09)
MAX_NUDGES = 1  # a number is moved at most this many boxes to the right, else left to the colour bar
LABELLED_POINTS = 40  # above this many points, label each group's centre instead of every point


def _label_places(points, groups) -> dict:
    """{group: where its number is printed}: at the group's centre, or moved right by whole
    label boxes until it clears every number already placed; a number that cannot is left to
    the colour bar (keys collapsed onto one direction would print a column of numbers on
    each other)."""
    reach = max(1e-9, float(np.abs(points).max()))
    width, height = LABEL_BOX[0] * reach, LABEL_BOX[1] * reach
    placed = {}
    for group in np.unique(groups):
        centre = points[groups == group].mean(0)
        for step in range(MAX_NUDGES + 1):
            spot = centre + (step * width, 0.0)
            if all(abs(spot[0] - x) >= width or abs(spot[1] - y) >= height for x, y in placed.values()):
                placed[group] = spot
                break
    return placed


def _scatter(ax, points, groups, title: str, cmap, norm) -> None:
    """Points coloured by their group (a query's offset, a key's position); each group's
    number printed at its centre, as the paper prints them beside its points."""
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    many = len(points) > LABELLED_POINTS
    if groups is None or len(groups) != len(points):
        ax.scatter(points[:, 0], points[:, 1], c="0.4", s=8 if many else 28)
    else:
        groups = np.asarray(groups)
        ax.scatter(
            points[:, 0],
            points[:, 1],
            c=cmap(norm(groups.astype(float))),
            s=6 if many else 28,
            alpha=0.5 if many else 1,
            edgecolors="none" if many else "black",
            linewidths=0.3,
            zorder=3,
        )
        for group, spot in _label_places(points, groups).items():
            ax.annotate(
                str(group),
                spot,
                fontsize=8,
                fontweight="bold",
                ha="center",
                va="center",
                bbox={
                    "boxstyle": "round,pad=0.15",
                    "fc": "white",
                    "ec": cmap(norm(float(group))),
                    "alpha": 0.8,
                },
            )
    ax.axhline(0, color="0.8", lw=0.6)
    ax.axvline(0, color="0.8", lw=0.6)
    reach = max(1e-9, float(np.abs(points).max())) * 1.15
    ax.set(
        title=title,
        xlabel="Dimension 1",
        ylabel="Dimension 2",
        xlim=(-reach, reach),
        ylim=(-reach, reach),
        aspect="equal",
    )


def contribution(analysis: dict, layer: int) -> tuple[list, str]:
    """Panel C's values: the mean over inputs of the largest plane-k logit term (Figure 4C's
    "Max. logit per Frequency", training.analysis.frequency's ``weights_max_per_plane``) when present,
    else the frequency weights of Figure 8."""
    frequency = analysis["frequency"]
    if frequency.get("weights_max_per_plane"):
        return frequency["weights_max_per_plane"][layer], "max logit term per plane (mean over inputs)"
    return frequency["weights"][layer], "frequency weight (as Figure 8)"


def _key_groups(geometry: dict):
    """Each key's position: keys are stored input by input, every position of each input."""
    positions = geometry.get("key_positions")
    if positions and len(geometry["keys"]) % len(positions) == 0:
        return positions * (len(geometry["keys"]) // len(positions))
    return None


def build_fig4bc(inputs: Inputs, out: Path) -> Built:
    analysis = inputs.analysis("number")
    geometry = inputs.analysis_block("number", "index_geometry")
    layer, offsets, positions = geometry["layer"], geometry.get("offsets"), _key_groups(geometry)
    cmap = style.sequential_cmap()
    values = (offsets or []) + (positions or []) or [0, 1]
    norm = Normalize(vmin=min(values), vmax=max(max(values), min(values) + 1))
    fig = style.new_figure(13, 8.8)
    grid = fig.add_gridspec(2, 2, height_ratios=(1.5, 1))
    plane = f"plane of ID {geometry['plane_id']} (frequency {geometry['frequency']:.4g})"
    number = lambda key: "–" if geometry.get(key) is None else f"{geometry[key]:.3g}"  # noqa: E731
    _scatter(
        fig.add_subplot(grid[0, 0]),
        geometry["queries"],
        offsets,
        f"B. Query vectors (by the offset s they encode), L{layer}, {plane}\nangle vs −s·g correlation "
        f"{number('query_spread')}, alignment with keys {number('query_alignment')}",
        cmap,
        norm,
    )
    key_ax = fig.add_subplot(grid[0, 1])
    _scatter(
        key_ax,
        geometry["keys"],
        positions,
        f"B. Key vectors (by position), L{layer}\nkey collapse (1 = one direction): {number('key_collapse')}",
        cmap,
        norm,
    )
    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=key_ax, label="query offset s / key position")

    ax = fig.add_subplot(grid[1, :])
    values, meaning = contribution(analysis, layer)
    ids = np.arange(1, len(values) + 1)
    top = int(ids[int(np.argmax(values))])  # named in the legend: a label at the peak would cross the marks
    ax.bar(
        ids, values, color=style.TASK_COLOUR["number"], alpha=0.8, label=f"ours: {meaning}, peak at ID {top}"
    )
    if layer < len(TABLE1["number"]):
        paper_id = TABLE1["number"][layer][0]
        ax.axvline(
            paper_id,
            color=style.PAPER_MARK_COLOUR,
            lw=1.4,
            label=f"paper: Table 1 ID for L{layer} = {paper_id}",
            **style.PAPER_STYLE,
        )
    if layer == FIG4C_LAYER:  # the paper's Figure 4C marks its peak "ID: 1" for this same layer
        ax.axvline(
            FIG4C_PRINTED_ID,
            color=style.SECOND_MARK_COLOUR,
            lw=1.4,
            linestyle=":",
            label=f"paper: Figure 4C prints 'ID: {FIG4C_PRINTED_ID}'",
        )
    ax.set(
        title=f"C. Contribution per frequency ID, layer L{layer} (ID 1 = fastest rotation)",
        xlabel="Frequency ID",
        ylabel="Value",
    )
    ax.legend(loc="upper right")
    fig.suptitle("Figure 4B/C: the trained number-task model's layer-1 Index geometry (ours)", fontsize=12)
    return Built(style.save(fig, out, "fig4bc"))

"""Figure 2 over seeds: accuracy per hop (A), scores of layers 1, 5 and 11 (B) and head purity
for gamma = 0.1 (C) over training, one column per task.

Each curve is the median over the seed study's members (``--seeds``, by default
training/reference/seeds/paper/<task>/seed-<S>/) with a band from the lowest to the highest
seed (see ``bands``); the shipped run (seed 0, ``--runs``: training/reference/<task>/) is
drawn thin on top.  The dashed line (step of maximal accuracy) and the layer labels of the
purity panel ("L9, L10": the heads that became pure at that step) are the shipped run's.
Each panel title says how many seeds it draws: a member still running has some files and
not others, and a panel uses the members that have its file.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.lines import Line2D

from . import bands, style
from .input_files import MissingInput
from .loaders import Built, Inputs, per_task
from .training_figures import (
    SCORE_LABELS,
    annotate_purity,
    any_label,
    gamma_key,
    purity_axes,
    purity_counts,
    score_series,
    step_of_max,
    validation_or_none,
)

FIG2_LAYERS = (1, 5, 11)  # the layers the paper's Figure 2B shows
PURITY_GAMMA = "0.1"
ANY_COLOUR = "0.6"


def seeds_or_empty(inputs: Inputs, task: str, what: str, missing: list) -> dict:
    """The study members' ``what`` for ``task``; none at all is a missing input, not a failure."""
    try:
        return inputs.seeds(task, what)
    except MissingInput as absent:
        missing.append(absent)
        return {}


def hop_curves(validation: list[dict]) -> dict:
    """{"1-hop": (steps, accuracies), ..., "all hops": (steps, overall)} of one training."""
    steps = [r["step"] for r in validation]
    hops = sorted({h for r in validation for h in r.get("per_hop", {})}, key=int)
    curves = {f"{hop}-hop": (steps, [r.get("per_hop", {}).get(hop) for r in validation]) for hop in hops}
    curves["all hops"] = (steps, [r["overall"] for r in validation])
    return curves


def accuracy_panel(ax, shipped: list | None, seeds: dict, overall: bool) -> dict:
    """Figure 2A: validation accuracy over all hops (``overall``) or per hop count; {curve: Band}."""
    return bands.draw_named(
        ax,
        hop_curves(shipped) if shipped else {},
        {seed: hop_curves(validation) for seed, validation in seeds.items()},
        style.hop_colour,
        keep=lambda name: (name == "all hops") == overall,
    )


def scores_panel(ax, shipped: dict, seeds: dict, layer: int) -> dict:
    """Figure 2B: positional and symbolic score and normalised entropy of ``layer``; {name: Band}."""
    drawn = {}
    for name in SCORE_LABELS:
        ours = score_series(shipped, layer)[name]
        theirs = {
            seed: (a["steps"], score_series(a, layer)[name])
            for seed, a in seeds.items()
            if layer < a["layers"]
        }
        theirs = {seed: curve for seed, curve in theirs.items() if curve[1] is not None}
        if ours is not None or theirs:
            drawn[name] = bands.draw_curves(
                ax, (shipped["steps"], ours) if ours is not None else None, theirs, style.SCORE_COLOUR[name]
            )
    return drawn


def purity_panel(ax, shipped: dict, gamma: str, seeds: dict) -> dict:
    """Figure 2C: pure heads per kind and pure at each step, for ``gamma``; {curve: Band}."""
    ours = purity_counts(shipped, gamma)
    theirs = {
        seed: (a["steps"], purity_counts(a, key))
        for seed, a in seeds.items()
        if (key := gamma_key(a, gamma)) is not None
    }
    # "any" first, so the per-kind counts are drawn over it where they coincide
    colours = {
        "any": ANY_COLOUR,
        "positional": style.KIND_COLOUR["positional"],
        "symbolic": style.KIND_COLOUR["symbolic"],
    }
    drawn = {
        kind: bands.draw_curves(
            ax,
            (shipped["steps"], ours[kind]),
            {seed: (steps, counts[kind]) for seed, (steps, counts) in theirs.items()},
            colour,
            step=True,
        )
        for kind, colour in colours.items()
    }
    annotate_purity(ax, shipped, gamma)
    return drawn


def legend(ax, colours: dict, best, explain: bool = False) -> None:
    """Beside the panel: what the colours mean, and (``explain``: once per figure) what the
    line, band and thin line stand for."""
    handles = bands.legend_handles(colours, explain)
    if best is not None:
        handles.append(
            Line2D([], [], label="dashed: step of max accuracy (shipped run)", **style.BEST_STEP_STYLE)
        )
    bands.legend_right(ax, handles)


def draw_task(
    fig, grid, col: int, task: str, inputs: Inputs, analysis: dict, missing: list, with_legend: bool
):
    """One column of Figure 2: panels A (all hops, per hop), B (one per layer) and C for ``task``."""
    name = style.TASK_TITLE[task]
    # all hops and per hop in two panels: five bands in one would hide each other
    acc_axes = [fig.add_subplot(grid[row, col]) for row in range(2)]
    layer_axes = [fig.add_subplot(grid[2 + row, col]) for row in range(len(FIG2_LAYERS))]
    purity_ax = fig.add_subplot(grid[-1, col])
    validation = validation_or_none(inputs, task, missing)
    seed_validation = seeds_or_empty(inputs, task, "validation", missing)
    seed_analyses = seeds_or_empty(inputs, task, "analysis", missing)
    best = step_of_max(analysis, validation)

    for ax, overall in zip(acc_axes, (True, False)):
        if not (validation or seed_validation):
            style.placeholder(ax, style.missing_text(task, missing))
            continue
        drawn = accuracy_panel(ax, validation, seed_validation, overall)
        style.mark_step(ax, best)
        what = "accuracy over all hops" if overall else "accuracy per hop count"
        ax.set(
            title=f"A. {name}: {what}, {bands.seeds_note(bands.seeds_in(drawn))}",
            ylabel="Validation accuracy",
            ylim=(-0.03, 1.03),
        )
        if with_legend:
            legend(ax, {label: style.hop_colour(label) for label in drawn}, best, explain=overall)

    layers = [layer for layer in FIG2_LAYERS if layer < analysis["layers"]] or [0]
    for row, (ax, layer) in enumerate(zip(layer_axes, layers)):
        drawn = scores_panel(ax, analysis, seed_analyses, layer)
        style.mark_step(ax, best)
        ax.set(
            title=f"B. {name}: layer L{layer}, {bands.seeds_note(bands.seeds_in(drawn))}",
            ylim=(-0.05, 1.05),
            ylabel="Score / entropy",
        )
        if with_legend and row == 0:
            legend(ax, {SCORE_LABELS[n]: style.SCORE_COLOUR[n] for n in drawn}, best)
    for ax in layer_axes[len(layers) :]:
        ax.set_axis_off()

    gamma = gamma_key(analysis, PURITY_GAMMA) or next(iter(analysis["purity"]))
    drawn = purity_panel(purity_ax, analysis, gamma, seed_analyses)
    purity_axes(
        purity_ax,
        analysis,
        best,
        f"C. {name}: head purity (γ = {gamma}), {bands.seeds_note(bands.seeds_in(drawn))}",
    )
    if with_legend:
        legend(
            purity_ax,
            {
                "pure positional heads": style.KIND_COLOUR["positional"],
                "pure symbolic heads": style.KIND_COLOUR["symbolic"],
                f"{any_label(analysis, gamma)} (either kind)": ANY_COLOUR,
            },
            best,
        )


def build_fig2(inputs: Inputs, out: Path) -> Built:
    """Figure 2 over seeds; a task without its shipped analysis.json gets placeholder panels."""
    analyses, missing = per_task(inputs.analysis, style.TASKS)
    fig = style.new_figure(14.5, 15)
    grid = fig.add_gridspec(2 + len(FIG2_LAYERS) + 1, 2)
    legend_col = max(col for col, task in enumerate(style.TASKS) if task in analyses)
    for col, task in enumerate(style.TASKS):
        if task not in analyses:
            for cell in [grid[0:2, col]] + [grid[row, col] for row in range(2, 3 + len(FIG2_LAYERS))]:
                style.placeholder(fig.add_subplot(cell), style.missing_text(task, missing))
            continue
        draw_task(fig, grid, col, task, inputs, analyses[task], missing, with_legend=col == legend_col)
    fig.suptitle(
        "Figure 2: accuracy, head scores and head purity over training (ours)\n"
        "line: median over the seeds of the study; band: their min–max range; thin: the shipped run "
        "(seed 0)",
        fontsize=12,
    )
    return Built(style.save(fig, out, "fig2"), missing)

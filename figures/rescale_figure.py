"""Figure "fig_rescale": is a model's break softmax dilution?  From the variants study's
summary.json (its ``rescale`` stage; claims ``V-rescale`` and ``V-rescale-number``).

Three rows per task with a rescaled model (A1, B1, C1 for the first).  A: accuracy over all hops against total input
length of every variant trained without a query scale, as trained (the seeds that B draws).  B: the same models,
weights unchanged, with the fixed scale log(i+1)/log(17) switched on at inference only
(``training.model.gptj.scale_queries_at_inference``); the variants *trained* with that scale
are drawn there too, dash-dotted, for comparison.  Each curve is the median over seeds with
the min-max band (``bands``), in the colours of fig_variants.  Thin grey references: the
training length 17, the paper's 850 and accuracy 0.9.

C, the mechanism: the top key's softmax weight on the answer path (fig_breaks' panel C: the
0.1-quantile input, the lowest of the mass reading's path layers) against length, as trained
(solid, ``dilution.json``) and with the scale (dashed, ``dilution_rescaled.json`` of the
``rescale_dilution`` stage), both read by fig_breaks' loader, per variant, beside the mass
reading's threshold; a model below 0.9 at the training length is left out of C, as in
fig_breaks (its path, chosen there, is no path).  Claim
``P-break-rescaled`` judges whether that reading predicts the rescaled break.  A task without
any rescaled dilution file gets a note in C instead.

An absent summary is a missing input; a summary without any rescaled block is missing its
'rescaled' blocks (the stage has not run yet).
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.lines import Line2D

from . import bands, style
from .breaks_figure import MASS_THRESHOLD, QUANTILE, SPREAD_RATIO, load_members, never_learned, path_weight
from .generalisation_figures import PAPER_LETTER_ACCURACY, PAPER_LETTER_LENGTH
from .input_files import MissingInput
from .loaders import Built, Inputs
from .variants_figure import REFERENCE, TRAINING_LENGTH, looks, seed_curves, summary_tasks
from .variants_table import length_block

TRAINED_WITH_SCALE = "-."  # the line style of a variant trained with the fixed scale (panel B)
FIXED_SCALE = "model.query_scale=log"
DILUTION_FILES = {"-": "dilution.json", "--": "dilution_rescaled.json"}  # C: as trained, with the scale


def rescaled_variants(summary: dict, task: str) -> list[str]:
    """The variants of ``task`` with a rescaled block, in the plan's order."""
    return [name for name in looks(summary, task) if "rescaled" in summary["results"][name][task]]


def trained_with_scale(summary: dict, task: str) -> list[str]:
    """The variants of ``task`` trained with the fixed scale that the rescale stage switches on."""
    return [
        name
        for name in looks(summary, task)
        if FIXED_SCALE in summary["variants"].get(name, {}).get("set", [])
        and length_block(summary, name, task, with_long=False)
    ]


def draw(ax, block: dict, colour, marker, linestyle: str, label: str, seeds=None) -> bands.Band:
    """The median and min-max band of ``block``'s seeds (only ``seeds`` where given)."""
    curves = seed_curves(block["accuracy"], block["lengths"])
    spread = bands.band({seed: c for seed, c in curves.items() if seeds is None or seed in seeds})
    bands.draw_band(ax, spread, colour, label=label)
    ax.lines[-1].set(linestyle=linestyle, marker=marker, markersize=4)
    return spread


def references(ax, longest: float) -> None:
    for x in (TRAINING_LENGTH, PAPER_LETTER_LENGTH):
        ax.axvline(x, **REFERENCE)
    ax.axhline(PAPER_LETTER_ACCURACY, **REFERENCE)
    ax.set(
        xscale="log",
        xlim=(TRAINING_LENGTH * 0.85, longest * 1.2),
        ylim=(-0.03, 1.03),
        xlabel="Total input length (tokens)",
        ylabel="Accuracy, all hops",
    )


def path_weights(inputs: Inputs, name: str) -> dict:
    """{(variant, task): {seed: (lengths, path top-key weight)}} of every shipped dilution file
    ``name`` (fig_breaks' loader, path rule and never_learned); {} when there is none."""
    try:
        members = load_members(inputs, name)
    except MissingInput:
        return {}
    out: dict = {}
    for m in members.values():
        if never_learned(m):
            continue
        out.setdefault((m.variant, m.task), {})[m.seed] = (m.dilution["lengths"], path_weight(m))
    return out


def weight_panel(ax, summary: dict, task: str, weights: dict) -> None:
    """C (module doc): per rescaled variant, as trained (solid) and with the scale (dashed);
    ``weights``: {line style: path_weights of its file}."""
    styles, handles = looks(summary, task), []
    for name in rescaled_variants(summary, task):
        label, colour, marker, _ = styles[name]
        scaled = weights["--"].get((name, task), {})
        if not scaled:
            continue
        for linestyle, found in weights.items():  # the same seeds in both, like for like
            curves = {seed: c for seed, c in found.get((name, task), {}).items() if seed in scaled}
            bands.draw_band(ax, bands.band(curves), colour)
            ax.lines[-1].set(linestyle=linestyle, marker=marker, markersize=3)
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                marker=marker,
                markersize=4,
                lw=bands.MEDIAN_WIDTH,
                label=f"{label}, {bands.seeds_note(scaled)}",
            )
        )
    if not handles:
        style.placeholder(ax, "no dilution_rescaled.json yet: run the study's rescale_dilution stage")
        return
    ax.axhline(MASS_THRESHOLD, color="0.3", linestyle=":", lw=1.0)
    ax.set(
        xscale="log",
        ylim=(0, 1.03),
        xlabel="Total input length (tokens)",
        ylabel=f"Top-key weight, lowest path layer ({QUANTILE:g} quantile)",
    )
    handles += [
        Line2D([], [], color="0.3", lw=bands.MEDIAN_WIDTH, label="solid: as trained"),
        Line2D(
            [], [], color="0.3", lw=bands.MEDIAN_WIDTH, linestyle="--", label="dashed: scale at inference"
        ),
        Line2D(
            [],
            [],
            color="0.3",
            lw=1.0,
            linestyle=":",
            label=f"mass reading's threshold 1 − 1/r = {MASS_THRESHOLD:g} (r = {SPREAD_RATIO:g})",
        ),
    ]
    bands.legend_right(ax, handles)


def task_row(left, right, summary: dict, task: str, number: int) -> None:
    """A and B of the ``number``-th task (1, 2, ...): panels A1, B1, A2, B2 ... each named once."""
    styles = looks(summary, task)
    handles, longest = [], TRAINING_LENGTH
    for name in rescaled_variants(summary, task):
        label, colour, marker, _ = styles[name]
        results = summary["results"][name][task]
        spread = draw(right, results["rescaled"], colour, marker, "-", label)
        if results.get("length"):  # the same seeds as trained, so the two panels compare like for like
            draw(left, results["length"], colour, marker, "-", label, seeds=spread.seeds)
        longest = max([longest, *spread.x])
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                marker=marker,
                markersize=4,
                lw=bands.MEDIAN_WIDTH,
                label=f"{label}, {bands.seeds_note(spread.seeds)}",
            )
        )
    for name in trained_with_scale(summary, task):
        label, colour, marker, _ = styles[name]
        spread = draw(
            right,
            length_block(summary, name, task, with_long=False),
            colour,
            marker,
            TRAINED_WITH_SCALE,
            label,
        )
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                marker=marker,
                markersize=4,
                lw=bands.MEDIAN_WIDTH,
                linestyle=TRAINED_WITH_SCALE,
                label=f"{label}: trained with the scale (B), {bands.seeds_note(spread.seeds)}",
            )
        )
    name = style.TASK_TITLE.get(task, task)
    for ax in (left, right):
        references(ax, longest)
    left.set_title(f"A{number}. {name}: as trained (no query scale)")
    right.set_title(f"B{number}. {name}: the same weights, scale log(i+1)/log 17 at inference")
    handles += [
        Line2D(
            [],
            [],
            label=f"dotted: training length {TRAINING_LENGTH}, paper's {PAPER_LETTER_LENGTH}, "
            f"accuracy {PAPER_LETTER_ACCURACY}",
            **REFERENCE,
        )
    ]
    bands.legend_right(right, handles)


def build_fig_rescale(inputs: Inputs, out: Path) -> Built:
    """fig_rescale.png/.pdf from the variants study's summary.json."""
    summary = inputs.variants_summary()
    tasks = [task for task in summary_tasks(summary) if rescaled_variants(summary, task)]
    if not tasks:
        raise inputs.variants_missing("rescaled")
    weights = {
        linestyle: path_weights(inputs, name) for linestyle, name in DILUTION_FILES.items()
    }  # read once
    # one panel a row, legends beside: three panels a row for each task made the figure 26 inches
    # wide, shrunk to a seventh in the report's column
    fig = style.new_figure(13.0, 4.2 * 3 * len(tasks))
    grid = fig.add_gridspec(3 * len(tasks), 1)
    for number, task in enumerate(tasks, start=1):
        row = 3 * (number - 1)
        task_row(fig.add_subplot(grid[row, 0]), fig.add_subplot(grid[row + 1, 0]), summary, task, number)
        weight_panel(ax := fig.add_subplot(grid[row + 2, 0]), summary, task, weights)
        ax.set_title(
            f"C{number}. {style.TASK_TITLE.get(task, task)}: top-key weight on the answer path, "
            "as trained and scaled"
        )
    fig.suptitle(
        "Is the break softmax dilution? Models trained without a query scale, evaluated as trained (A)\n"
        "and with the scale switched on at inference only (B); the attention weight behind it (C)\n"
        "line / marker: median over seeds; band: min–max over seeds",
        fontsize=12,
    )
    return Built(style.save(fig, out, "fig_rescale"), [])

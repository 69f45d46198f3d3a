"""Figure "fig_variants": what makes symbolic heads extrapolate, from the variants study's
summary.json (``python -m training study training/studies/variants.json --collect``; by
default training/reference/variants/, or ``--variants DIR``).

Row A: accuracy over all hops against total input length (log x), one panel per task in the
summary, one curve per variant: the median over seeds with a band from the lowest to the
highest seed (``bands``), from the per-seed values the summary keeps; where the plan has a
``long`` stage its lengths continue the listed variants' curves (fewer inputs there: the
plan's ``long.count``).  Row B: accuracy by hop count at the longest length of the grid, the
median over seeds with min-max bars.  A variant
that changes the training data rather than the model is dashed and labelled "(data)".  Thin
grey references: the training length 17, the paper's 850 (Section 3.6: over 90% up to 850 on
the letter task) and accuracy 0.9.  The same summary gives variants_table.md (``variants_table``).

An absent summary is a missing input (skipped in a default run, an error when named), as for
every figure; a summary with no length measured at all is missing its 'length' blocks.
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import bands, style
from .generalisation_figures import PAPER_LETTER_ACCURACY, PAPER_LETTER_LENGTH
from .loaders import Built, Inputs
from .variants_table import is_data_variant, length_block, variant_label, variant_tag, write_variants_table

TRAINING_LENGTH = 17  # the total length of every training input (the first evaluate length)
# A baseline (plan letter "a") is drawn in black, a second one (another schedule) in grey; the
# other variants take the seven Okabe-Ito colours in the plan's order, then six darker or
# duller ones (the grid has up to 11 non-baseline variants per figure), and a marker per
# variant tells apart two curves that share a colour past the thirteenth.
BASELINE_COLOURS = (style.OKABE_ITO["black"], "0.55")
VARIANT_COLOURS = tuple(
    style.OKABE_ITO[name]
    for name in ("vermillion", "bluish green", "blue", "orange", "sky blue", "reddish purple", "yellow")
) + ("#8C510A", "#35978F", "#762A83", "#B8860B", "#1B3A6B", "#C51B7D")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h")
REFERENCE = {"color": "0.7", "lw": 0.8, "linestyle": ":"}
HOP_SPREAD = 0.6  # width (in hops) over which the variants' markers of one hop are spread


def summary_tasks(summary: dict) -> list[str]:
    """The tasks with a result block in the summary, in the figures' order."""
    present = {task for per_task in summary["results"].values() for task in per_task}
    return [t for t in style.TASKS if t in present] + sorted(present - set(style.TASKS))


def task_variants(summary: dict, task: str) -> list[str]:
    """The variants with a result block for ``task``, in the plan's order."""
    names = list(summary["variants"]) + [v for v in summary["results"] if v not in summary["variants"]]
    return [name for name in names if task in summary["results"].get(name, {})]


def seed_curves(columns: list[dict], xs: list) -> dict:
    """{seed: (xs, ys)} from per-position statistics; a seed without a value there gets None (a gap)."""
    seeds = {seed for stat in columns for seed in stat["values"]}
    return {int(seed): (xs, [stat["values"].get(seed) for stat in columns]) for seed in seeds}


def looks(summary: dict, task: str) -> dict:
    """{variant: (label, colour, marker, linestyle)} of every variant of ``task``."""
    names = task_variants(summary, task)
    specs = {name: summary["variants"].get(name, {}) for name in names}
    colours = variant_colours(names, specs)
    return {
        name: (
            variant_label(name, specs[name]),
            colours[name],
            MARKERS[i % len(MARKERS)],
            "--" if is_data_variant(name, specs[name]) else "-",
        )
        for i, name in enumerate(names)
    }


def variant_colours(names: list, specs: dict) -> dict:
    """{variant: colour} for ``names`` in their order: baselines (plan letter "a") black then
    grey, every other variant the next of VARIANT_COLOURS (shared by fig_variants and fig_breaks)."""
    out, baselines, others = {}, 0, 0
    for name in names:
        if variant_tag(specs.get(name, {})) == "a" and baselines < len(BASELINE_COLOURS):
            out[name], baselines = BASELINE_COLOURS[baselines], baselines + 1
        else:
            out[name], others = VARIANT_COLOURS[others % len(VARIANT_COLOURS)], others + 1
    return out


def length_panel(ax, summary: dict, task: str, styles: dict) -> dict:
    """Row A for ``task``: one band per measured variant; returns {variant: Band}."""
    drawn = {}
    for name, (label, colour, marker, linestyle) in styles.items():
        block = length_block(summary, name, task)
        if block is None:
            continue
        spread = bands.band(seed_curves(block["accuracy"], block["lengths"]))
        bands.draw_band(ax, spread, colour, label=label)
        ax.lines[-1].set(linestyle=linestyle, marker=marker, markersize=4)
        drawn[name] = spread
    ax.axvline(TRAINING_LENGTH, **REFERENCE)
    ax.axvline(PAPER_LETTER_LENGTH, **REFERENCE)
    ax.axhline(PAPER_LETTER_ACCURACY, **REFERENCE)
    longest = max(x for spread in drawn.values() for x in spread.x)
    ax.set(
        xscale="log",
        xlim=(TRAINING_LENGTH * 0.85, longest * 1.2),
        ylim=(-0.03, 1.03),
        xlabel="Total input length (tokens)",
        ylabel="Accuracy, all hops",
    )
    return drawn


def longest_length(summary: dict, task: str, names) -> int:
    """The longest grid length measured for ``task`` by any of ``names`` (the hop panel's length)."""
    return max(
        length
        for name in names
        if (block := length_block(summary, name, task, with_long=False))
        for length in block["lengths"]
    )


def hop_panel(ax, summary: dict, task: str, styles: dict, length: int) -> dict:
    """Row B for ``task``: accuracy per hop count at ``length``, median and min-max over seeds."""
    measured = {
        name: block
        for name in styles
        if (block := length_block(summary, name, task, with_long=False))
        and length in block["lengths"]
        and block.get("by_hop")
    }
    hops = sorted({h for block in measured.values() for h in block["by_hop"]}, key=int)
    if not hops:
        style.placeholder(ax, f"no accuracy by hop count at length {length}")
        return {}
    drawn = {}
    for i, (name, block) in enumerate(measured.items()):
        _, colour, marker, linestyle = styles[name]
        at = block["lengths"].index(length)
        shift = HOP_SPREAD * ((i + 0.5) / len(measured) - 0.5)
        columns = [
            block["by_hop"][h][at]
            if h in block["by_hop"] and at < len(block["by_hop"][h])
            else {"values": {}}
            for h in hops
        ]
        spread = bands.band(seed_curves(columns, [int(h) + shift for h in hops]))
        below = [
            0.0 if math.isnan(low) else m - low for m, low in zip(spread.median, spread.low)
        ]  # NaN: no bar
        above = [0.0 if math.isnan(high) else high - m for m, high in zip(spread.median, spread.high)]
        ax.errorbar(
            spread.x,
            spread.median,
            yerr=[below, above],
            color=colour,
            marker=marker,
            markersize=4,
            linestyle=linestyle,
            lw=0.9,
            capsize=2,
        )
        drawn[name] = spread
    ax.axhline(PAPER_LETTER_ACCURACY, **REFERENCE)
    ax.set(
        xticks=[int(h) for h in hops],
        ylim=(-0.03, 1.03),
        xlabel="Hop count",
        ylabel=f"Accuracy at length {length}",
    )
    return drawn


def legend(ax, styles: dict, drawn: dict) -> None:
    """Beside the task's top panel: each variant (with its seed count), then what the marks mean."""
    handles = [
        Line2D(
            [],
            [],
            color=colour,
            marker=marker,
            markersize=4,
            linestyle=linestyle,
            lw=bands.MEDIAN_WIDTH,
            label=f"{label}, {bands.seeds_note(drawn[name].seeds)}",
        )
        for name, (label, colour, marker, linestyle) in styles.items()
        if name in drawn
    ]
    handles += [
        Line2D([], [], color=bands.LEGEND_GREY, lw=bands.MEDIAN_WIDTH, label="line: median over seeds"),
        Patch(
            facecolor=bands.LEGEND_GREY,
            alpha=bands.BAND_ALPHA,
            label="band (A), bars (B): min–max over seeds",
        ),
        Line2D(
            [],
            [],
            color=bands.LEGEND_GREY,
            linestyle="--",
            lw=bands.MEDIAN_WIDTH,
            label="dashed, (data): changes the training data, not the model",
        ),
        Line2D(
            [],
            [],
            label=f"dotted: training length {TRAINING_LENGTH}, paper's {PAPER_LETTER_LENGTH}, "
            f"accuracy {PAPER_LETTER_ACCURACY}",
            **REFERENCE,
        ),
    ]
    bands.legend_right(ax, handles)


def unmeasured_note(ax, styles: dict, drawn: dict) -> None:
    """Name, in the panel, the variants of the plan with no length measured yet (not drawn)."""
    absent = [name for name in styles if name not in drawn]
    if absent:
        ax.text(
            0.01,
            0.01,
            "not measured yet: " + ", ".join(absent),
            transform=ax.transAxes,
            fontsize=7,
            color="0.3",
            va="bottom",
        )


def code_key(summary: dict) -> str:
    """What each letter in the labels stands for, in the plan's words: "(a) the paper's RoPE on
    the 3,000-step schedule; (b) ..." from each single-letter variant's 'about' (the part before its colon)."""
    codes = {}
    for spec in summary["variants"].values():
        tag = variant_tag(spec)
        if len(tag) == 1:
            codes.setdefault(tag, spec["about"][len(tag) + 2 :].split(":")[0].strip())
    return (
        "Codes in the labels: " + "; ".join(f"({tag}) {about}" for tag, about in sorted(codes.items())) + "."
    )


def build_fig_variants(inputs: Inputs, out: Path) -> Built:
    """fig_variants.png/.pdf and variants_table.md from the variants study's summary.json."""
    summary = inputs.variants_summary()
    tasks = summary_tasks(summary)
    measured = [t for t in tasks if any(length_block(summary, v, t) for v in task_variants(summary, t))]
    if not measured:  # a plan collected before any member was evaluated: nothing to draw
        raise inputs.variants_missing("length")
    missing = [inputs.variants_missing(f"length ({task} task)") for task in tasks if task not in measured]
    fig = style.new_figure(8.5 * len(tasks), 8.5)
    grid = fig.add_gridspec(2, len(tasks))
    for col, task in enumerate(tasks):
        top, bottom = fig.add_subplot(grid[0, col]), fig.add_subplot(grid[1, col])
        name = style.TASK_TITLE.get(task, task)
        if task not in measured:
            for ax in (top, bottom):
                style.placeholder(ax, f"{name}: no variant measured against length yet")
            continue
        styles = looks(summary, task)
        drawn = length_panel(top, summary, task, styles)
        top.set_title(f"A. {name}: accuracy over all hops against input length")
        unmeasured_note(top, styles, drawn)
        legend(top, styles, drawn)
        length = longest_length(summary, task, styles)
        hop_panel(bottom, summary, task, styles, length)
        bottom.set_title(f"B. {name}: accuracy by hop count at length {length}")
    style.caption(fig, code_key(summary), 9)
    fig.suptitle(
        f"Variants study ({summary.get('plan', 'variants')}): what makes symbolic heads extrapolate\n"
        "line / marker: median over seeds; band and bars: min–max over seeds",
        fontsize=12,
    )
    paths = style.save(fig, out, "fig_variants")
    return Built(paths + [write_variants_table(summary, out)], missing)

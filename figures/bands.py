"""Spread over seeds: the median of the seeds' curves and the band of their minimum to maximum.

Why the median and the min-max range rather than the mean and a 95% interval: a study has 1
to 5 seeds.  With so few, the range shows every seed's outcome (a seed that learned late or
not at all stays visible at its own value), while a Student t interval for a mean of two
seeds is +-6.4 sd wide, runs far outside [0, 1] and says little about how heads form.  The
verdicts' means and t intervals are in the study's summary.json (theory.statistics).

Curves of different seeds are aligned on their x values (training steps, input lengths):
at each x the statistics use the seeds that have a value there, and the band is left open
where fewer than two do.  One seed draws its own curve and no band.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

BAND_ALPHA = 0.2
MEDIAN_WIDTH, SHIPPED_WIDTH = 1.8, 0.8
LEGEND_GREY = "0.3"


@dataclass(frozen=True)
class Band:
    """Per x: the median over the seeds with a value, their min and max (NaN where fewer than
    two seeds have one) and how many seeds that was; ``seeds``: every seed that contributed."""

    x: list
    median: list
    low: list
    high: list
    count: list
    seeds: tuple

    @property
    def n(self) -> int:
        return len(self.seeds)


def band(curves: dict) -> Band:
    """The band of ``curves`` ({seed: (xs, ys)}); None and non-finite ys are gaps, not zeros."""
    table: dict = {}
    for seed, (xs, ys) in curves.items():
        for x, y in zip(xs, ys):
            if y is not None and math.isfinite(y):
                table.setdefault(x, {})[seed] = float(y)
    xs = sorted(table)
    values = [sorted(table[x].values()) for x in xs]
    spread = [len(v) >= 2 for v in values]
    return Band(
        x=xs,
        median=[statistics.median(v) for v in values],
        low=[v[0] if wide else math.nan for v, wide in zip(values, spread)],
        high=[v[-1] if wide else math.nan for v, wide in zip(values, spread)],
        count=[len(v) for v in values],
        seeds=tuple(sorted({seed for column in table.values() for seed in column})),
    )


def draw_band(ax, spread: Band, colour, step: bool = False, label: str | None = None) -> None:
    """The median (solid) and, where two or more seeds have a value, the min-max band."""
    if not spread.x:
        return
    ax.plot(
        spread.x,
        spread.median,
        color=colour,
        lw=MEDIAN_WIDTH,
        label=label,
        drawstyle="steps-post" if step else "default",
    )
    if spread.n >= 2:
        ax.fill_between(
            spread.x,
            spread.low,
            spread.high,
            color=colour,
            alpha=BAND_ALPHA,
            lw=0,
            step="post" if step else None,
        )


def draw_shipped(ax, xs, ys, colour, step: bool = False) -> None:
    """The shipped run (seed 0, training/reference/<task>/): thin, so the band stays readable."""
    ys = [math.nan if y is None else y for y in ys]
    ax.plot(xs, ys, color=colour, lw=SHIPPED_WIDTH, drawstyle="steps-post" if step else "default")


def draw_curves(ax, shipped: tuple | None, curves: dict, colour, step: bool = False) -> Band:
    """Band of the seeds' ``curves`` plus the ``shipped`` (xs, ys) run; returns the band."""
    spread = band(curves)
    draw_band(ax, spread, colour, step)
    if shipped is not None:
        draw_shipped(ax, *shipped, colour, step)
    return spread


def draw_named(ax, shipped: dict, seeds: dict, colour_of, keep=lambda name: True) -> dict:
    """Several named curves at once: ``shipped`` {name: (xs, ys)} and ``seeds`` {seed: {name:
    (xs, ys)}}; each name in ``keep`` gets its band and its thin shipped line, in the colour
    ``colour_of(name)``, "all hops" last (on top).  Returns {name: Band}."""
    names = sorted(
        {name for curves in [shipped, *seeds.values()] for name in curves if keep(name)},
        key=lambda name: (name == "all hops", name),
    )
    return {
        name: draw_curves(
            ax,
            shipped.get(name),
            {seed: curves[name] for seed, curves in seeds.items() if name in curves},
            colour_of(name),
        )
        for name in names
    }


def seeds_in(drawn: dict) -> set:
    """Every seed behind the bands of ``drawn`` ({name: Band})."""
    return {seed for spread in drawn.values() for seed in spread.seeds}


def seeds_note(seeds) -> str:
    """'1 seed (0), no band', '3 seeds (0, 1, 3)' or 'no seed study': for panel titles."""
    seeds = sorted(seeds)
    if not seeds:
        return "no seed study: shipped run only"
    listed = ", ".join(str(s) for s in seeds)
    return f"1 seed ({listed}), no band" if len(seeds) == 1 else f"{len(seeds)} seeds ({listed})"


def legend_handles(colours: dict, explain: bool = True) -> list:
    """Legend entries for what the colours mean ({label: colour}) and, with ``explain``, what
    line, band and thin line stand for (the same for every colour)."""
    handles = [
        Line2D([], [], color=colour, lw=MEDIAN_WIDTH, label=label) for label, colour in colours.items()
    ]
    return handles + (
        []
        if not explain
        else [
            Line2D([], [], color=LEGEND_GREY, lw=MEDIAN_WIDTH, label="line: median over seeds"),
            Patch(facecolor=LEGEND_GREY, alpha=BAND_ALPHA, label="band: min–max over seeds (2+ seeds)"),
            Line2D([], [], color=LEGEND_GREY, lw=SHIPPED_WIDTH, label="thin: shipped run (seed 0)"),
        ]
    )


def legend_right(ax, handles: list) -> None:
    """The legend beside the panel, outside the data (constrained layout makes room for it)."""
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)

"""One look for every figure: colours, fonts, saving, and the helpers panels share.

The paper's colour code is kept so a reader can hold our figure beside theirs, in the
colour-blind-safe Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"): vermillion
(the paper's red) for positional scores, the number task and Index; bluish green (the paper's
green) for symbolic scores, the letter task and Retrieval; reddish purple for attention
entropy; black for the hop-averaged accuracy; sky blue, blue, orange and reddish purple for
1 to 4 hops; every other role (the paper's printed IDs, corrected bounds, worst angles,
constructions) is an Okabe-Ito colour too, all listed by ``palette``.  Continuous quantities
use viridis (cut before its pale yellow) or cividis, never a red-green map; neutral greys
mark what belongs to no role.  Anything the paper printed is drawn dashed and labelled "paper"; our
measurements are solid.  Where several seeds were trained, a curve is their median, a light
band of the same colour their min-max range, and a thin line the shipped run (``bands``).
"""

from __future__ import annotations

import io
import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display is ever needed, and Agg is the fastest backend
import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from theory.io.files import atomic_write_bytes  # noqa: E402

TASKS = ("number", "letter")
TASK_TITLE = {"number": "Number task", "letter": "Letter task"}
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}
RED, GREEN, PURPLE = OKABE_ITO["vermillion"], OKABE_ITO["bluish green"], OKABE_ITO["reddish purple"]
COLOUR_NAME = {colour: name for name, colour in OKABE_ITO.items()}  # a colour's word in a figure's text
GREY = "#7f7f7f"
TASK_COLOUR = {"number": RED, "letter": GREEN}
SCORE_COLOUR = {"positional": RED, "symbolic": GREEN, "entropy": PURPLE}
KIND_COLOUR = {
    "positional": RED,
    "symbolic": GREEN,
    "index": RED,
    "retrieval": GREEN,
    "other": GREY,
    None: GREY,
}
ACCURACY_COLOUR = OKABE_ITO["black"]
HOP_COLOURS = {"1": OKABE_ITO["sky blue"], "2": OKABE_ITO["blue"], "3": OKABE_ITO["orange"], "4": PURPLE}


# Roles that recur across figures, each one Okabe-Ito colour (listed by ``palette``).
PAPER_MARK_COLOUR = OKABE_ITO["blue"]  # a value the paper printed, drawn as a line (Table 1's ID)
SECOND_MARK_COLOUR = OKABE_ITO["reddish purple"]  # a second printed value beside it (Figure 4C's ID)
CORRECTED_COLOUR = OKABE_ITO["blue"]  # our corrected bound beside the paper's
WORST_ANGLE_COLOUR = OKABE_ITO["reddish purple"]  # the worst angle found, beside the paper's angle
MARGIN_COLOUR = OKABE_ITO["orange"]  # T_Retrieval's margin (matched vs best other symbol)
HIGHLIGHT_COLOUR = OKABE_ITO["vermillion"]  # the one element a panel is about (t = s in Figure 4A)
CONSTRUCTION_COLOUR = OKABE_ITO["black"]  # a construction's exact value beside a trained model's
# Continuous quantities: perceptually uniform maps that read the same to colour-blind eyes
# (never red-green).  Viridis is cut before its pale yellow, which vanishes on white.
COLORMAP = "viridis"
COLORMAP_TOP = 0.85
HEATMAP = "cividis"


def palette() -> dict[str, str]:
    """Every colour role of the figures -> its colour: one place to check that each is Okabe-Ito.
    Neutral greys (other layers, reference lines, the grid) are not roles and not listed."""
    roles = {f"task: {task}": colour for task, colour in TASK_COLOUR.items()}
    roles.update({f"score: {name}": colour for name, colour in SCORE_COLOUR.items()})
    roles.update(
        {f"kind: {name}": colour for name, colour in KIND_COLOUR.items() if name not in (None, "other")}
    )
    roles.update({f"hop: {hops}": colour for hops, colour in HOP_COLOURS.items()})
    roles.update(
        {
            "accuracy": ACCURACY_COLOUR,
            "paper mark": PAPER_MARK_COLOUR,
            "second mark": SECOND_MARK_COLOUR,
            "corrected bound": CORRECTED_COLOUR,
            "worst angle": WORST_ANGLE_COLOUR,
            "margin": MARGIN_COLOUR,
            "highlight": HIGHLIGHT_COLOUR,
            "construction": CONSTRUCTION_COLOUR,
        }
    )
    return roles


def sequential_cmap():
    """COLORMAP up to COLORMAP_TOP, for ordered series (offsets, positions) and their colour bars."""
    from matplotlib.colors import ListedColormap

    base = plt.get_cmap(COLORMAP)
    return ListedColormap(base([COLORMAP_TOP * i / 255 for i in range(256)]), name=f"{COLORMAP}_cut")


def hop_colour(label: str) -> str:
    """The colour of an accuracy curve named "1-hop" ... "4-hop" or "all hops"."""
    return ACCURACY_COLOUR if label == "all hops" else HOP_COLOURS.get(label.split("-")[0], GREY)


PAPER_STYLE = {"linestyle": "--", "alpha": 0.85}
BEST_STEP_STYLE = {"color": "0.45", "linestyle": "--", "linewidth": 1.0}

plt.rcParams.update(
    {
        "figure.dpi": 110,
        "savefig.dpi": 130,
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "legend.fontsize": 7.5,
        "legend.framealpha": 0.85,
        "axes.grid": True,
        "grid.alpha": 0.25,
        "axes.spines.top": False,
        "axes.spines.right": False,
        # TrueType (Type 42) in PDFs: matplotlib embeds only the glyphs a figure uses (fontTools
        # subsetting: some 10 KB of font in a file, not DejaVu Sans' 740 KB) with a ToUnicode map,
        # so the text can be searched and copied.  Type 3 (glyphs as drawing procedures) writes
        # the 14 PDFs in about 2.5 s less CPU (5 s against 7.5 s) but 4% larger, unhinted on
        # screen, and is refused by some publishers' font checks: not worth it with the figures
        # drawn in parallel (figures/jobs.py).
        "pdf.fonttype": 42,
        "svg.hashsalt": "figures",  # fixed ids in an SVG, should one be saved (same figure, same bytes)
        # save() freezes the layout for the PDF by removing the layout engine: it must stay removed
        "figure.constrained_layout.use": False,
        "figure.autolayout": False,
    }
)


def new_figure(width: float, height: float, **kwargs):
    """A figure with constrained layout, so long titles and legends never overlap."""
    return plt.figure(figsize=(width, height), layout="constrained", **kwargs)


# Saved figures are tracked files: the same inputs must give the same bytes, or every run of
# `python -m figures` would show them as modified.  Matplotlib stamps the PDF with the time
# (CreationDate) and both formats with its version (Software, Creator, Producer); None drops a key.
PNG_METADATA = {"Software": None}
PDF_METADATA = {"CreationDate": None, "Creator": None, "Producer": None}


def render(fig, fmt: str) -> bytes:
    """The figure as PNG or PDF bytes, free of time stamps and versions (same figure, same bytes)."""
    if fmt == "png" and isinstance(fig.canvas, FigureCanvasAgg):
        return _png_in_one_pass(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, metadata=PNG_METADATA if fmt == "png" else PDF_METADATA)
    return buffer.getvalue()


def _png_in_one_pass(fig) -> bytes:
    """``fig.savefig(format="png")``'s bytes, drawn once instead of twice.

    savefig draws a figure that has a layout engine twice: once with drawing switched off, to
    lay it out, then for real.  Drawing the canvas at the saved dpi lays it out and rasterises it
    in one pass; the pixels are then encoded as savefig does (matplotlib.image.imsave).  The
    bytes are savefig's (tests/test_figure_bytes.py), one pass over every artist fewer."""
    dpi = fig.dpi
    fig.set_dpi(plt.rcParams["savefig.dpi"])
    try:
        fig.canvas.draw()
        buffer = io.BytesIO()
        matplotlib.image.imsave(
            buffer,
            fig.canvas.buffer_rgba(),
            format="png",
            origin="upper",
            dpi=fig.dpi,
            metadata=PNG_METADATA,
        )
    finally:
        fig.set_dpi(dpi)
    return buffer.getvalue()


# The report's page shows each PNG scaled to its text column: a text of s points on a figure w
# inches wide prints s / 72 * COLUMN_PX / w pixels tall there, whatever the dpi.  Below
# MIN_TEXT_PX a reader cannot read it, so no text is drawn smaller (tests/test_figure_layout.py).
COLUMN_PX = 928
MIN_TEXT_PX = 8


def smallest_font(fig) -> float:
    """The smallest font size (points) that stays legible when ``fig`` is shown at COLUMN_PX."""
    return MIN_TEXT_PX * 72 * fig.get_figwidth() / COLUMN_PX


def legible(fig) -> None:
    """Raise every text of ``fig`` smaller than ``smallest_font`` to it (the layout follows at draw)."""
    floor = smallest_font(fig)
    for text in fig.findobj(Text):
        if text.get_fontsize() < floor:
            text.set_fontsize(floor)


def caption(fig, text: str, size: float) -> None:
    """``text`` under the figure's panels, wrapped to the figure's width at the size it will print
    (``legible`` raises a size below ``smallest_font``; wrapped for the smaller one, the lines ran
    off both edges): a character is about half its point size wide."""
    size = max(size, smallest_font(fig))
    fig.supxlabel(
        textwrap.fill(text, int(0.9 * fig.get_figwidth() * 72 / (0.5 * size))), fontsize=size, color="0.25"
    )


def save(fig, out_dir: Path, name: str) -> list[Path]:
    """Write ``name``.png and ``name``.pdf into ``out_dir``, close the figure, return both paths.

    Both are rendered in memory first and then written atomically (theory.io.files): a full disk
    or a Ctrl-C leaves each file whole, old or new, never a truncated figure."""
    paths = [out_dir / f"{name}.png", out_dir / f"{name}.pdf"]
    try:
        legible(fig)
        png = render(fig, "png")
        # The layout of the PNG holds for the PDF (same size in inches): freeze it rather than
        # solve the constrained layout again, about half of the saving time of a 24-panel figure.
        # No engine at all, not "none": savefig still draws a figure with the "none" placeholder
        # engine once with drawing switched off before drawing it for real (a wasted pass).
        fig.set_layout_engine(None)
        pdf = render(fig, "pdf")
    finally:
        plt.close(fig)
    atomic_write_bytes(paths[0], png)
    atomic_write_bytes(paths[1], pdf)
    return paths


def per_layer_grids(
    analyses: dict,
    missing: list,
    panel: tuple,
    pad: float,
    draw,
    ylabel: str,
    xlabel: str,
    legend_ncol: int,
    **subplots,
):
    """One grid of per-layer panels for each task, one above the other (Figures 6 and 8): side by
    side the figure grew twice as wide, and shrunk to the report's column its labels could not be read.

    ``draw(ax, task, analysis, layer)`` fills one panel and returns False when that layer has
    nothing to show (the panel is then hidden).  Grid cells past the last layer are hidden,
    the first column and last row are labelled, and the first panel's legend serves the grid.
    Returns the figure.
    """
    layers = max(a["layers"] for a in analyses.values())
    ncols = 4 if layers > 3 else layers
    nrows = math.ceil(layers / ncols)
    fig = new_figure(panel[0] * ncols + 1, (panel[1] * nrows + pad) * len(TASKS))
    for subfig, task in zip(fig.subfigures(len(TASKS), 1, hspace=0.03), TASKS):
        subfig.suptitle(TASK_TITLE[task], fontsize=11)
        if task not in analyses:
            placeholder(subfig.add_subplot(), missing_text(task, missing))
            continue
        axes = subfig.subplots(nrows, ncols, sharex=True, squeeze=False, **subplots).ravel()
        for layer, ax in enumerate(axes):
            if layer >= analyses[task]["layers"] or draw(ax, task, analyses[task], layer) is False:
                ax.set_axis_off()
                continue
            if layer % ncols == 0:
                ax.set_ylabel(ylabel)
            if layer >= (nrows - 1) * ncols:
                ax.set_xlabel(xlabel)
        handles, labels = axes[0].get_legend_handles_labels()
        subfig.legend(handles, labels, loc="outside lower center", ncol=legend_ncol)
    return fig


def placeholder(ax, message: str) -> None:
    """Say in the panel itself what is missing, rather than leave a silent blank."""
    ax.set_axis_off()
    ax.text(
        0.5,
        0.5,
        message,
        ha="center",
        va="center",
        fontsize=8,
        wrap=True,
        color="0.3",
        transform=ax.transAxes,
    )


def missing_text(task: str, missing: list) -> str:
    """A panel's note for a task whose input is absent: the file and the command that writes it."""
    lines = [str(m) for m in missing if f"/{task}/" in str(m.path).replace("\\", "/")]
    return f"{TASK_TITLE[task]}: no data\n" + "\n".join(lines)


def mark_step(ax, step, label: str | None = None) -> None:
    """The grey dashed line of the paper's Figure 2: the step of maximal accuracy."""
    if step is not None:
        ax.axvline(step, label=label, **BEST_STEP_STYLE)


def legend_below(ax, ncol: int = 2) -> None:
    """A legend under the panel: curves that span the whole axes leave no free corner."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=ncol, frameon=False)


LABEL_SIZE = 7.5  # points: direct labels, as small as the legends they replace
LABEL_LEAD = 0.06  # axes widths between the axes' right edge and a line-end label


def _spread(wanted: list, gap: float, low: float, high: float) -> list:
    """Positions as close to ``wanted`` (sorted) as labels ``gap`` apart allow, kept in [low, high]
    when they fit: pushed up from the lowest, then down from the highest."""
    placed = []
    for y in wanted:
        placed.append(max(y, low, placed[-1] + gap if placed else low))
    for i in range(len(placed) - 1, -1, -1):
        placed[i] = min(placed[i], high if i == len(placed) - 1 else placed[i + 1] - gap)
    return placed


def label_line_ends(ax, lines: list, fontsize: float = LABEL_SIZE) -> list:
    """Name each line (its label) in the axes' right margin, level with its last point on the
    axes, in its colour, joined to the axes' edge by a short lead in its style: a legend that
    covers no data and needs no colour matching.  Labels too close are pushed apart.  Call after
    every curve is drawn and the limits are set; returns the labels (Annotation artists)."""
    fontsize = max(fontsize, smallest_font(ax.get_figure(root=True)))  # the size save() will print
    to_axes = ax.transScale + ax.transLimits  # data -> axes fraction, whatever the figure's layout
    ax.autoscale_view()
    ends = []
    for line in lines:
        points = [
            (x, y)
            for x, y in zip(line.get_xdata(), line.get_ydata())
            if math.isfinite(x)
            and math.isfinite(y)
            and (y > 0 or ax.get_yscale() != "log")
            and (x > 0 or ax.get_xscale() != "log")
        ]
        y = to_axes.transform(points[-1])[1] if points else 0.5
        ends.append((min(1.0, max(0.0, float(y))), line))
    ends.sort(key=lambda end: end[0])
    # one label's height in axes heights (1.4 line heights keep neighbours apart), from the axes'
    # current size: lay the figure out first (Figure.draw_without_rendering), as the labels only widen it
    height = ax.get_position().height * ax.get_figure(root=True).get_figheight() * 72
    spots = _spread([y for y, _ in ends], 1.4 * fontsize / height, -0.02, 1.02)
    return [
        ax.annotate(
            line.get_label(),
            xy=(1.0, y),
            xycoords="axes fraction",
            xytext=(1.0 + LABEL_LEAD, spot),
            textcoords="axes fraction",
            ha="left",
            va="center",
            fontsize=fontsize,
            color=line.get_color(),
            annotation_clip=False,
            arrowprops={
                "arrowstyle": "-",
                "color": line.get_color(),
                "lw": 1.0,
                "linestyle": line.get_linestyle(),
                "shrinkA": 0,
                "shrinkB": 2,
                "relpos": (0, 0.5),
            },
        )
        for (y, line), spot in zip(ends, spots)
    ]


def vertical_lines(ax) -> list:
    """The axes' vertical marks (axvline): drawn in data x and axes y, so they have no end to name."""
    return [line for line in ax.get_lines() if line.get_transform() == ax.get_xaxis_transform(which="grid")]


def label_verticals(ax, lines: list, fontsize: float = LABEL_SIZE) -> tuple[list, float]:
    """Name each vertical line (axvline; its label) just above the axes, left-aligned on it, one
    row per line from the leftmost up, in its colour.  Returns the labels and the title pad (points)
    that clears them."""
    fontsize = max(fontsize, smallest_font(ax.get_figure(root=True)))  # the size save() will print
    row = 1.35 * fontsize
    labels = [
        ax.annotate(
            line.get_label(),
            xy=(line.get_xdata()[0], 1.0),
            xycoords=ax.get_xaxis_transform(),
            xytext=(2, 3 + i * row),
            textcoords="offset points",
            ha="left",
            va="bottom",
            fontsize=fontsize,
            color=line.get_color(),
            annotation_clip=False,
        )
        for i, line in enumerate(sorted(lines, key=lambda line: line.get_xdata()[0]))
    ]
    return labels, 6 + len(lines) * row


def show_path(path) -> str:
    """A path relative to the working folder when it lies inside it, for short messages."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def positive(values):
    """Values for a log axis: non-positive and missing entries become NaN (a gap in the line)."""
    return [v if v is not None and v > 0 else float("nan") for v in values]


def layer_label(layers) -> str:
    """'L3' or 'L9, L10': the paper's way of naming the heads that became pure together."""
    return ", ".join(f"L{layer}" for layer in layers)

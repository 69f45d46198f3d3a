"""Figure "fig_breaks": does discrepancy predict where length generalisation breaks (the premise
the paper leaves to future work in Section 4, read with Lemma F.1)?  Drawn from the dilution.json of every trained model
that ships one (``training.analysis.dilution`` and ``break_prediction``): the seed study's
members (``--seeds``: <DIR>/<variant>/<task>/seed-<S>/) and the variants study's (``--variants``,
same layout).  A member in both studies (the shared "paper" number-task runs) is drawn once,
from the seed study, as the claim P-break counts it.

A1, A2: each member's predicted break against its measured break over all hops, log-log, for the
two readings of Lemma F.1's condition (``lemma``, the worst case: hollow; ``mass``, the losing
keys' actual weight: filled); colour: variant, marker: task; the identity line and the band
y in [x/2, 2x].  A3: the exploratory ``relative`` reading (half-filled), chosen after looking
at the members of ``SEEN_BY_RELATIVE``; the others, the ones that test it, get a black ring.
A member whose file predates a reading is left out of that panel.  Whether they agree is
decided by the claims P-break and P-break-relative of ``python -m proofs_check``: this figure
computes no statistic (the caption says so, the titles say only what each panel shows).  B: the
measured break of each hop count, one line per member: the break compounds over hops.  C: letter
task, the top key's softmax weight at the rule's quantile (the 0.1 input) on the member's
answer-path layers of the mass reading (layer 0 when it has none), the lowest of them at each
length: one small panel per variant, named by its title (one band per variant on one axes hid each
other), its median over seeds and min-max band over the other variants' medians in light grey,
beside the mass reading's threshold 1 - 1/r.  No legend lies over data: the colours' legend
sits beside A3, C's key in the cell after its last panel.

A model below 0.9 already at its first length (17 tokens, the training length) never learned
the task there: its "break" says nothing about length, and its answer path, chosen at that
length, is no path.  It is left out of every panel, as the premise claims leave it out, and
named in the title.

A break of None is censored (no break up to the last length measured): it is drawn in a hatched
strip past that length, at the right (measured) or top (predicted) edge.  No dilution.json in
either study is a missing input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import bands, style
from .input_files import MissingInput, read_json
from .loaders import Built, Inputs
from .variants_figure import variant_colours
from .variants_table import variant_label

# Mirrors of training.analysis.break_prediction (figures may not import training; the test file
# checks that they agree): T_Retrieval's Gamma / delta, the input quantile the rule reads, and
# the accuracy below which a model counts as broken.
SPREAD_RATIO = 2.0
QUANTILE = 0.1
THRESHOLD = 0.9
QUANTILE_KEY = f"q{QUANTILE:g}"  # "q0.1", as dilution.json names its quantile columns
MASS_THRESHOLD = 1 - 1 / SPREAD_RATIO  # the mass reading holds while the top key keeps more weight
RULE_LOOK = {
    "lemma": ("hollow", "Lemma F.1 as stated: gap ≥ ln((n−1) r)"),
    "mass": ("filled", "mass reading: losing keys' weight < 1/r"),
    "relative": ("half-filled", "relative reading: top weight < ½ its value at 17"),
}
FACE_ALPHA = {"hollow": 0.0, "filled": 1.0, "half-filled": 0.4}
# Mirror of break_prediction.SEEN_BY_RELATIVE (checked by the test file): the members the
# relative reading was chosen on; every other member is a test of it (ringed in A3).
SEEN_BY_RELATIVE = frozenset(
    [f"paper/{task}/seed-{s}" for task in ("number", "letter") for s in range(5)]
    + [f"paper-3k/letter/seed-{s}" for s in range(3)]
    + [f"log-scale-3k/letter/seed-{s}" for s in range(3)]
    + [
        "learned-scale-3k/letter/seed-0",
        "learned-scale-3k/letter/seed-1",
        "nope-0-log-scale-3k/letter/seed-0",
    ]
)
TASK_MARKERS = {"number": "o", "letter": "s"}
# A censored break is drawn at CENSORED_AT times the longest last length, inside a grey strip
# spanning STRIP times it: past every measured length, yet on the axes.
CENSORED_AT, STRIP = 1.5, (1.2, 2.0)
# hatched, so the strip never reads as the grey factor-2 band
STRIP_LOOK, GUIDE = (
    {"facecolor": "white", "edgecolor": "0.65", "hatch": "///", "lw": 0},
    {"color": "0.3", "lw": 0.9},
)
# C: one small panel per variant, SMALL_COLUMNS to a row; the other variants' medians behind it
SMALL_COLUMNS = 4
CONTEXT = {"color": "0.78", "lw": 0.8, "zorder": 1}
THRESHOLD_LOOK = {"color": "0.3", "linestyle": "--", "lw": 1.0}
THRESHOLD_LABEL = f"mass reading's threshold 1 − 1/r = {MASS_THRESHOLD:g} (r = {SPREAD_RATIO:g})"
HOP_SPREAD = 0.4  # width (in hops) over which the members' markers of one hop are spread
COMMANDS = {
    "seeds": "python -m training study training/studies/seeds.json, then --collect (or --seeds DIR)",
    "variants": "python -m training study training/studies/variants.json, then --collect (or --variants DIR)",
}


@dataclass(frozen=True)
class Member:
    """One trained model's dilution.json: where it came from and its two blocks."""

    id: str  # "<variant>/<task>/seed-<S>", the same in both studies
    study: str
    variant: str
    task: str
    seed: int
    dilution: dict
    breaks: dict


def study_folders(inputs: Inputs) -> dict:
    """{study: folder}, the seed study first: it wins a member id both studies ship."""
    return {"seeds": Path(inputs.seeds_dir), "variants": Path(inputs.variants_dir)}


def load_members(inputs: Inputs, name: str = "dilution.json") -> dict[str, Member]:
    """Every shipped dilution file ``name`` (``dilution_rescaled.json``: measured with the query
    scale at inference), each member id once; none at all: MissingInput."""
    found = {}
    for study, folder in study_folders(inputs).items():
        for path in sorted(folder.glob(f"*/*/seed-*/{name}")) if folder.is_dir() else []:
            variant, task, seed = path.parent.relative_to(folder).parts
            member = f"{variant}/{task}/{seed}"
            if member in found or not seed.removeprefix("seed-").isdecimal():
                continue
            data = read_json(path, "study", task, ("dilution", "breaks"))
            found[member] = Member(
                member,
                study,
                variant,
                task,
                int(seed.removeprefix("seed-")),
                data["dilution"],
                data["breaks"],
            )
    if not found:
        items = [
            (folder / "*" / "*" / "seed-*" / name, COMMANDS[study], "")
            for study, folder in study_folders(inputs).items()
        ]
        raise MissingInput(*items[0][:2], more=items[1:])
    return found


def never_learned(m: Member) -> bool:
    """Below THRESHOLD at the first length measured (mirror of break_prediction.never_learned,
    whose training length is the dilution grid's first length)."""
    return m.breaks["measured"] is not None and m.breaks["measured"] <= m.dilution["lengths"][0]


def variant_specs(inputs: Inputs) -> dict:
    """The variants study's plan entries (for labels and order); none without a summary."""
    try:
        return inputs.variants_summary()["variants"]
    except MissingInput:
        return {}


def looks(members: dict, specs: dict) -> dict:
    """{variant: (label, colour)}: "paper" first, then the plan's order, then any other."""
    present = {m.variant for m in members.values()}
    order = [v for v in dict.fromkeys(["paper", *specs]) if v in present] + sorted(
        present - {"paper", *specs}
    )
    count = {v: sum(m.variant == v for m in members.values()) for v in order}
    colours = variant_colours(order, specs)
    return {
        v: (f"{variant_label(v, specs.get(v, {}))}: {count[v]} model{'s' * (count[v] > 1)}", colours[v])
        for v in order
    }


def placed(value, edge: float) -> float:
    """Where a break is drawn: a censored one (None) at the edge."""
    return edge if value is None else float(value)


def censor_strip(ax, top: float, vertical: bool) -> None:
    """The hatched strip past the longest measured length, where censored breaks sit, and its name."""
    (ax.axvspan if vertical else ax.axhspan)(top * STRIP[0], top * STRIP[1], zorder=0, **STRIP_LOOK)
    note = {
        "s": f"no break up to {top:g}",
        "fontsize": 7,
        "color": "0.3",
        "ha": "center",
        "va": "center",
        "bbox": {"facecolor": "white", "edgecolor": "none", "pad": 1},
        "zorder": 1,
    }  # under the data
    if vertical:
        ax.text(top * CENSORED_AT, 0.5, transform=ax.get_xaxis_transform(), rotation=90, **note)
    else:
        ax.text(0.5, top * CENSORED_AT, transform=ax.get_yaxis_transform(), **note)


def break_panel(ax, members: dict, colours: dict, rule: str, floor: float, top: float) -> None:
    """A1-A3: predicted (y) against measured (x) break of each member under ``rule``."""
    edge = top * CENSORED_AT
    for m in members.values():
        if rule not in m.breaks["predicted"]:
            continue
        colour = colours[m.variant][1]
        xy = [placed(m.breaks["measured"], edge)], [placed(m.breaks["predicted"][rule]["break"], edge)]
        ax.scatter(
            *xy,
            marker=TASK_MARKERS.get(m.task, "D"),
            s=40,
            linewidths=1.3,
            edgecolors=colour,
            facecolors=to_rgba(colour, FACE_ALPHA[RULE_LOOK[rule][0]]),
            gid=m.id,
            zorder=3,
        )
        if rule == "relative" and m.id not in SEEN_BY_RELATIVE:
            ax.scatter(
                *xy, marker="o", s=130, linewidths=1.0, edgecolors="black", facecolors="none", zorder=2
            )
    xs = np.geomspace(floor, top, 50)
    ax.plot(xs, xs, **GUIDE)
    ax.fill_between(xs, xs / 2, xs * 2, color="0.5", alpha=0.18, lw=0)
    censor_strip(ax, top, vertical=True)
    censor_strip(ax, top, vertical=False)
    ax.set(
        xscale="log",
        yscale="log",
        xlim=(floor, top * STRIP[1]),
        ylim=(floor, top * STRIP[1]),
        aspect="equal",
        xlabel=f"Measured break: all hops' accuracy < {THRESHOLD:g} (tokens)",
        ylabel=f"Predicted break, {rule} reading (tokens)",
    )


def hop_panel(ax, members: dict, colours: dict, floor: float, top: float) -> None:
    """B: the measured break of every hop count, one line per member."""
    edge = top * CENSORED_AT
    for i, m in enumerate(members.values()):
        per_hop = m.breaks["measured_per_hop"]
        hops = sorted(per_hop, key=int)
        shift = HOP_SPREAD * ((i + 0.5) / len(members) - 0.5)
        ax.plot(
            [int(h) + shift for h in hops],
            [placed(per_hop[h], edge) for h in hops],
            color=colours[m.variant][1],
            marker=TASK_MARKERS.get(m.task, "D"),
            markersize=4,
            lw=0.9,
            alpha=0.85,
            gid=m.id,
        )
    censor_strip(ax, top, vertical=False)
    ax.set(
        yscale="log",
        ylim=(floor, top * STRIP[1]),
        xticks=[1, 2, 3, 4],
        xlabel="Hop count",
        ylabel=f"Measured break: accuracy < {THRESHOLD:g} (tokens)",
    )


def path_weight(m: Member) -> list:
    """Per length, the lowest top-key weight (at QUANTILE_KEY) over the member's mass-reading
    path layers, layer 0 when the path is empty; None where no path layer has a value."""
    layers = {layer["layer"]: layer for layer in m.dilution["layers"]}
    path = [p for p in (m.breaks["predicted"]["mass"]["path"] or [0]) if p in layers]
    columns = zip(*(layers[p]["top_weight"][QUANTILE_KEY] for p in path))
    return [min((w for w in column if w is not None), default=None) for column in columns]


def weight_panels(sub, members: dict, colours: dict) -> dict:
    """C: letter task, the path's top-key weight against length, one small panel per variant
    (its median and band in colour, named by the panel's title; every other variant's median in
    light grey behind it, for comparison), and a key in the cell after the last.  Returns
    {variant: Band}."""
    letter = [m for m in members.values() if m.task == "letter"]
    if not letter:
        style.placeholder(sub.add_subplot(), "no letter-task model ships a dilution.json")
        return {}
    drawn, notes = {}, {}
    for variant in colours:
        curves = {m.seed: (m.dilution["lengths"], path_weight(m)) for m in letter if m.variant == variant}
        if curves:
            drawn[variant] = bands.band(curves)
            notes[variant] = f"{variant}: {bands.seeds_note(drawn[variant].seeds)}"
    cols = min(SMALL_COLUMNS, len(drawn) + 1)  # + 1: the key's cell
    grid = sub.add_gridspec(math.ceil((len(drawn) + 1) / cols), cols)
    first = None
    for cell, (variant, spread) in enumerate(drawn.items()):
        ax = sub.add_subplot(grid[divmod(cell, cols)], sharex=first, sharey=first)
        first = first or ax
        for other, behind in drawn.items():
            if other != variant:
                ax.plot(behind.x, behind.median, label=notes[other], **CONTEXT)
        bands.draw_band(ax, spread, colours[variant][1], label=notes[variant])
        ax.lines[-1].set(marker="s", markersize=3)
        ax.axhline(MASS_THRESHOLD, label=THRESHOLD_LABEL, **THRESHOLD_LOOK)
        ax.set(xscale="log", ylim=(0, 1.03))
        ax.set_title(f"C. {notes[variant]}", fontsize=8.5)
        ax.label_outer()  # the shared axes are numbered once, on the outer panels
    key = sub.add_subplot(grid[divmod(len(drawn), cols)])
    key.set_axis_off()
    key.legend(
        loc="center",
        frameon=False,
        handles=[
            Line2D(
                [],
                [],
                color=bands.LEGEND_GREY,
                lw=bands.MEDIAN_WIDTH,
                marker="s",
                markersize=3,
                label="the panel's variant: median over seeds",
            ),
            Patch(
                facecolor=bands.LEGEND_GREY, alpha=bands.BAND_ALPHA, label="its min–max over seeds (2+ seeds)"
            ),
            Line2D([], [], label="every other variant's median", **CONTEXT),
            Line2D([], [], label=THRESHOLD_LABEL, **THRESHOLD_LOOK),
        ],
    )
    sub.supxlabel("Total input length (tokens)", fontsize=9)
    sub.supylabel(f"Top-key weight, lowest path layer ({QUANTILE:g} quantile)", fontsize=9)
    return drawn


def legend(ax, colours: dict, tasks: list, last_lengths: list) -> None:
    """In the cell after A3 (``ax``, no axes of its own): the variants' colours, the tasks' markers, the rules' fills and the guides."""
    upto = " or ".join(f"{n:g}" for n in sorted(set(last_lengths)))
    handles = [
        Line2D([], [], color=colour, lw=bands.MEDIAN_WIDTH, label=label) for label, colour in colours.values()
    ]
    handles += [
        Line2D(
            [],
            [],
            color="0.3",
            marker=TASK_MARKERS.get(t, "D"),
            linestyle="none",
            label=style.TASK_TITLE.get(t, t),
        )
        for t in tasks
    ]
    handles += [
        Line2D(
            [],
            [],
            color="0.3",
            marker="o",
            linestyle="none",
            label=f"{fill}: {about}",
            markerfacecolor=to_rgba("0.3", FACE_ALPHA[fill]),
        )
        for fill, about in RULE_LOOK.values()
    ]
    handles += [
        Line2D(
            [],
            [],
            color="black",
            marker="o",
            markersize=11,
            markerfacecolor="none",
            linestyle="none",
            label="black ring (A3): a model the relative reading was not chosen on",
        )
    ]
    handles += [
        Line2D([], [], label="identity: predicted = measured", **GUIDE),
        Patch(facecolor="0.5", alpha=0.18, label="within a factor 2: y in [x/2, 2x]"),
        Patch(**STRIP_LOOK, label=f"hatched strip: no break up to {upto} (censored)"),
    ]
    ax.set_axis_off()
    ax.legend(handles=handles, loc="center", frameon=False)


def build_fig_breaks(inputs: Inputs, out: Path) -> Built:
    """fig_breaks.png/.pdf from the shipped dilution.json files of both studies."""
    everyone = load_members(inputs)
    colours = looks(everyone, variant_specs(inputs))
    members = {k: m for k, m in everyone.items() if not never_learned(m)}  # the models that learned at 17
    left_out = sorted(set(everyone) - set(members))
    values = [
        v
        for m in members.values()
        for v in (
            m.breaks["measured"],
            *m.breaks["measured_per_hop"].values(),
            *(p["break"] for p in m.breaks["predicted"].values()),
        )
    ]
    last_lengths = [m.breaks["last_length"] for m in everyone.values()]
    top = max(last_lengths)
    floor = min([v for v in values if v is not None] + [top]) / 1.4
    tasks = [t for t in style.TASKS if any(m.task == t for m in everyone.values())]
    tasks += sorted({m.task for m in everyone.values()} - set(tasks))
    # two columns and one part below the other: a 21-inch row of everything shrank to a third in
    # the report's column; A1-A3 fill a 2 x 2 grid whose last cell holds the key
    fig = style.new_figure(14, 24)
    upper, hops_part, weights_part = fig.subfigures(3, 1, height_ratios=[2, 1, 1.3])
    cells = upper.subplots(2, 2).ravel()
    for col, (rule, ax) in enumerate(zip(RULE_LOOK, cells)):
        break_panel(ax, members, colours, rule, floor, top)
        ax.set_title(f"A{col + 1}. {rule} reading ({RULE_LOOK[rule][0]}): predicted against measured break")
    legend(cells[len(RULE_LOOK)], colours, tasks, last_lengths)  # outside the data
    hop_panel(ax := hops_part.add_subplot(), members, colours, floor, top)
    ax.set_title("B. Measured break per hop count, one line per model: it compounds over hops")
    weight_panels(weights_part, members, colours)
    weights_part.suptitle(
        "C. Letter task: top-key weight on the mass reading's path layers against length, "
        "one panel per variant",
        fontsize=10,
    )
    studies = {s: sum(m.study == s for m in everyone.values()) for s in study_folders(inputs)}
    unlearned = (
        f"; left out, below {THRESHOLD:g} already at the training length: {', '.join(left_out)}"
        if left_out
        else ""
    )
    fig.suptitle(
        f"Does discrepancy predict where length generalisation breaks?  {len(everyone)} trained models",
        fontsize=11,
    )
    caption = (
        f"Models: {studies['seeds']} from the seed study, {studies['variants']} more from the variants "
        f"study{unlearned}.  Break: the first length where accuracy falls below {THRESHOLD:g} (measured), or "
        f"where Lemma F.1's condition fails on the answer-path layers (predicted, at the {QUANTILE:g} input, r = "
        f"{SPREAD_RATIO:g}).  Whether they agree is decided by the claims P-break (A1, A2) and "
        f"P-break-relative (A3, ringed models only) of `python -m proofs_check`; this figure computes no "
        f"statistic."
    )
    style.caption(fig, caption, 8.5)
    return Built(style.save(fig, out, "fig_breaks"))

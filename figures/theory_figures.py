"""Figures of the hand-built constructions: Figure 4A (T_Index geometry) and Figure 5A
(discrepancy bounds against exact discrepancies).

Inputs: constructions/results/figure4a.json (``constructions.geometry.write_figure4a``) and
proofs_check/results/figure5a.json (``python -m proofs_check.figure5a``).  Nothing is
recomputed here: every curve is a series from those files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import style
from .loaders import Built, Inputs


def _arrow(ax, vector, colour, width=0.012, **kwargs):
    ax.arrow(
        0,
        0,
        vector[0],
        vector[1],
        color=colour,
        width=width,
        length_includes_head=True,
        head_width=0.06,
        **kwargs,
    )


def _unit_circle(ax, title: str) -> None:
    t = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(t), np.sin(t), color="0.85", lw=0.8)
    ax.set(
        xlim=(-1.5, 1.5),
        ylim=(-1.5, 1.5),
        aspect="equal",
        title=title,
        xlabel="Dimension 1",
        ylabel="Dimension 2",
    )


def _label_radii(angles, base: float, step: float = 0.13, close: float = 0.22) -> list[float]:
    """A radius per label on the unit circle: ``base``, pushed out by ``step`` for each label
    already placed within ``close`` radians, so neighbouring labels never print on each other."""
    placed, radii = [], []
    for angle in angles:
        near = sum(1 for other in placed if abs((angle - other + np.pi) % (2 * np.pi) - np.pi) < close)
        radii.append(base + step * near)
        placed.append(angle)
    return radii


def _circle_labels(ax, vectors: dict, base: float, colour_of, fontsize: float) -> None:
    """Label each vector ({text: (x, y)}) just beyond its tip, close neighbours staggered outward."""
    angles = [float(np.arctan2(v[1], v[0])) for v in vectors.values()]
    for text, angle, radius in zip(vectors, angles, _label_radii(angles, base)):
        ax.annotate(
            text,
            (radius * np.cos(angle), radius * np.sin(angle)),
            ha="center",
            va="center",
            fontsize=fontsize,
            color=colour_of(text),
        )


def _logit_heatmap(ax, fig, data: dict, offsets: list) -> None:
    """cos((t - s) theta) per query integer s and key offset t, each cell printed."""
    ts = sorted({int(t) for row in data["logits"].values() for t in row})
    grid = np.array([[data["logits"][str(s)].get(str(t), np.nan) for t in ts] for s in offsets])
    image = ax.imshow(
        grid,
        cmap=style.HEATMAP,
        vmin=-1,
        vmax=1,
        aspect="auto",
        origin="lower",
        extent=(ts[0] - 0.5, ts[-1] + 0.5, offsets[0] - 0.5, offsets[-1] + 0.5),
    )
    for i, s in enumerate(offsets):
        for j, t in enumerate(ts):
            # cividis is dark below about 0 and light above: the text takes the other side
            ax.text(
                t,
                s,
                f"{grid[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if grid[i, j] < 0.1 else "black",
                fontweight="bold" if s == t else "normal",
            )
    ax.set(
        title="Logit cos((t − s)θ): maximal (= 1) only at t = s",
        xlabel="Key offset t from the query",
        ylabel="Query integer s",
    )
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="logit")


def build_fig4a(inputs: Inputs, out: Path) -> Built:
    """Figure 4A: every key is v; the query of integer s is v turned by -s theta, so RoPE at
    offset t brings it back onto v exactly when t = s (logit cos((t - s) theta) = 1)."""
    data = inputs.construction_figure4a()
    key, theta = data["key"], data.get("theta_decimal", data["theta"])
    offsets = sorted(int(s) for s in data["queries"])
    cmap = style.sequential_cmap()
    colour = {f"E({s})": cmap(i / max(1, len(offsets) - 1)) for i, s in enumerate(offsets)}
    fig = style.new_figure(14, 5.4)
    left, middle, right = fig.subplots(1, 3)

    _unit_circle(left, f"Query vectors W_Q E(s) = ρ(θ)^(-s) v  (θ = {theta})")
    _arrow(left, key, "black", width=0.02, label="v: key of every token (and letter query)")
    for s in offsets:
        _arrow(left, data["queries"][str(s)], colour[f"E({s})"])
    _circle_labels(left, {f"E({s})": data["queries"][str(s)] for s in offsets}, 1.14, colour.get, 8)
    style.legend_below(left, ncol=1)

    probe = offsets[len(offsets) // 2]  # one query, seen from every offset: the mechanism in one panel
    _unit_circle(middle, f"Query of s = {probe} after RoPE at offset t")
    _arrow(middle, key, "black", width=0.02, label="v (key)")
    rotated = {
        f"t={t}": r for t, r in sorted(data["rotated_queries"][str(probe)].items(), key=lambda kv: int(kv[0]))
    }
    hit = f"t={probe}"
    for label, r in rotated.items():
        _arrow(
            middle,
            r,
            style.HIGHLIGHT_COLOUR if label == hit else "0.6",
            width=0.018 if label == hit else 0.008,
            label=f"t = s = {probe}: lands on v" if label == hit else None,
        )
    _circle_labels(middle, rotated, 1.15, lambda text: style.HIGHLIGHT_COLOUR if text == hit else "0.35", 8)
    style.legend_below(middle, ncol=2)

    _logit_heatmap(right, fig, data, offsets)
    fig.suptitle(
        "Figure 4A: the Index construction (T_Index) — keys aligned, queries rotated by their offset",
        fontsize=12,
    )
    return Built(style.save(fig, out, "fig4a"))


def _first_crossing(ns, values, bound):
    """The smallest n where the exact value exceeds the stated bound (a counterexample), or None."""
    for n, value, limit in zip(ns, values, bound):
        if value is not None and limit is not None and value > limit * (1 + 1e-12):
            return n
    return None


# The paper's bounds are drawn last (on top) and dashed: where an exact curve runs on a bound,
# the dashes stay visible over it.  In the first panel a bound and its exact curve share a
# colour, so the exact curve is a wide pale stroke under the dashes rather than a same-colour line.
PAPER_ON_TOP = {**style.PAPER_STYLE, "zorder": 3}
EXACT_UNDER = {"lw": 4.0, "alpha": 0.4, "zorder": 2}
MARK_BEHIND = {"lw": 0.9, "zorder": 1.5}  # vertical marks sit behind the curves they mark


def _fails_from(what: str, n) -> str:
    """'<what> fails from n = N' or '<what> holds', as the data says."""
    return f"{what} fails from n = {n}" if n is not None else f"{what} holds"


def _title(ax, title: str, verticals: list) -> None:
    """The panel's one-line title, raised over the vertical marks' labels (named above the axes)."""
    pad = style.label_verticals(ax, verticals)[1] if verticals else 6
    ax.set_title(title, pad=pad, loc="left")  # from the axes' left edge over the labels' margin


def _paper_panel(ax, data: dict, ns: list) -> None:
    """The paper's panel: stated bounds against the exact values, n <= 100, linear axes."""
    index, retrieval = data["index"], data["retrieval"]
    red, green = style.TASK_COLOUR["number"], style.TASK_COLOUR["letter"]
    short = [i for i, n in enumerate(ns) if n <= 100]
    take = lambda series: [series[i] for i in short]  # noqa: E731
    n_short = take(ns)
    ax.plot(n_short, take(index["sup"]), color=red, label="exact: Index Δ (Def. 3.1)", **EXACT_UNDER)
    ax.plot(
        n_short,
        take(retrieval["competitor"]),
        color=green,
        label="exact: Retrieval Δ (competitor gap)",
        **EXACT_UNDER,
    )
    ax.plot(
        n_short,
        take(index["stated_bound"]),
        color=red,
        lw=1.8,
        label=f"paper: Index (θ = {index['theta']['decimal']})",
        **PAPER_ON_TOP,
    )
    ax.plot(
        n_short,
        take(retrieval["stated_bound"]),
        color=green,
        lw=1.8,
        label=f"paper: Retrieval (θ = {retrieval['theta']['decimal']}, |ALPH| = {retrieval['alph_size']})",
        **PAPER_ON_TOP,
    )
    ax.set(xlabel="Sequence length n", ylabel="Discrepancy", ylim=(0, None))
    index_broken = _first_crossing(n_short, take(index["sup"]), take(index["stated_bound"]))
    retrieval_broken = _first_crossing(
        n_short, take(retrieval["competitor"]), take(retrieval["stated_bound"])
    )
    _title(
        ax,
        f"As printed (n ≤ {n_short[-1]}): {_fails_from('Index bound', index_broken)}, "
        f"{_fails_from('Retrieval bound', retrieval_broken)}",
        [],
    )


def _index_panel(ax, data: dict, ns: list) -> None:
    """Index on log-log axes up to n-max: the stated bound, the exact values at the paper's and
    the worst angle, the sup over angles, the corrected bound and Lemma F.1's lambda(n)."""
    index, worst = data["index"], data["index_worst_angle"]
    red, theta = style.TASK_COLOUR["number"], index["theta"]["decimal"]
    ax.loglog(ns, index["sup"], color=red, lw=1.6, label=f"exact Δ, paper's θ = {theta}")
    ax.loglog(
        ns,
        style.positive(worst["sup"]),
        color=style.WORST_ANGLE_COLOUR,
        lw=1.3,
        label=f"exact Δ, worst θ = {worst['theta']['exact']}",
    )
    if data.get("index_sup_over_angles"):
        ax.loglog(
            ns,
            style.positive(data["index_sup_over_angles"]),
            color="0.3",
            lw=1,
            label="sup of Δ over all angles",
        )
    ax.loglog(
        ns,
        index["corrected_sup_bound"],
        color=style.CORRECTED_COLOUR,
        lw=1.2,
        linestyle=":",
        label=f"corrected bound (θ = {theta})",
    )
    ax.loglog(ns, style.positive(index["inf"]), color=red, lw=0.9, linestyle="-.", label="Lemma F.1's λ(n)")
    ax.loglog(
        ns, index["stated_bound"], color="black", lw=1.8, label="paper: min{1−cos θ, 2π²/n²}", **PAPER_ON_TOP
    )
    broken = _first_crossing(ns, index["sup"], index["stated_bound"])
    verticals = (
        [
            ax.axvline(
                broken, color=red, alpha=0.5, label=f"stated bound fails from n = {broken}", **MARK_BEHIND
            )
        ]
        if broken
        else []
    )
    ax.set(xlabel="Sequence length n (log)", ylabel="Discrepancy (log)")
    corrected = _first_crossing(ns, index["sup"], index["corrected_sup_bound"])
    _title(
        ax,
        f"Index: {_fails_from('stated bound', broken)}; {_fails_from('corrected bound', corrected)}",
        verticals,
    )


def _retrieval_panel(ax, data: dict, ns: list) -> None:
    """Retrieval on log-log axes: the stated and corrected bounds inside the theorem's range
    (n <= n0), the exact competitor gap, the margin, the Definition 3.1 reading and lambda(n)."""
    retrieval = data["retrieval"]
    green, n0 = style.TASK_COLOUR["letter"], retrieval["n0_max"]
    # The theorem assumes theta < omega / (2 n0): its bound (and ours) only speak for n <= n0.
    inside = lambda series: [v if n <= n0 else None for n, v in zip(ns, series)]  # noqa: E731
    ax.loglog(ns, style.positive(retrieval["competitor"]), color=green, lw=1.6, label="exact: competitor gap")
    ax.loglog(
        ns,
        style.positive(inside(retrieval["corrected_competitor_bound"])),
        color=style.CORRECTED_COLOUR,
        lw=1.2,
        linestyle=":",
        label="corrected: 1 − cos(ω − (n−1)θ)",
    )
    ax.loglog(
        ns,
        style.positive(retrieval["margin"]),
        color=style.MARGIN_COLOUR,
        lw=1.1,
        label="margin: matched − best other symbol",
    )
    ax.loglog(
        ns, style.positive(retrieval["sup"]), color="0.4", lw=1, label="Def. 3.1 reading (max over inputs)"
    )
    # lambda(n) where the closed form gives it, else its certified lower bound (beyond n0)
    lower = retrieval.get("inf_lower_bound", retrieval["inf"])
    lam = [exact if exact is not None else bound for exact, bound in zip(retrieval["inf"], lower)]
    ax.loglog(
        ns,
        style.positive(lam),
        color=green,
        lw=0.9,
        linestyle="-.",
        label="λ(n) or its certified lower bound",
    )
    ax.loglog(
        ns,
        style.positive(inside(retrieval["stated_bound"])),
        color="black",
        lw=1.8,
        label="paper: 1 − cos(ω − nθ)",
        **PAPER_ON_TOP,
    )
    verticals = [
        ax.axvline(
            n0, color="0.5", linestyle="--", label=f"n0 = {n0}: largest n0 with θ < ω/(2 n0)", **MARK_BEHIND
        )
    ]
    negative = next((n for n, m in zip(ns, retrieval["margin"]) if m is not None and m <= 0), None)
    if negative:
        verticals.append(
            ax.axvline(
                negative,
                color=style.MARGIN_COLOUR,
                linestyle=":",
                label=f"margin ≤ 0 from n = {negative} (a wrong symbol can win)",
                **MARK_BEHIND,
            )
        )
    ax.set(xlabel="Sequence length n (log)", ylabel="Discrepancy (log)")
    turns = f"margin ≤ 0 from n = {negative}" if negative else "margin stays > 0"
    _title(ax, f"Retrieval: {turns}; the bounds cover n ≤ n0 = {n0}", verticals)


def build_fig5a(inputs: Inputs, out: Path) -> Built:
    """Figure 5A: the paper's panel (stated bounds, n <= 100, linear) with the exact
    discrepancies drawn under it, then Index and Retrieval on log-log axes up to n-max with the
    worst angle found and the corrected bounds.  Every curve is named at its end (no legend);
    each panel's title says what it shows, from the data."""
    data = inputs.proofs_figure5a()
    fig = style.new_figure(12, 13.5)  # one panel a row: a row of three shrank to a third in the report
    panels = fig.subplots(3, 1)
    for ax, draw in zip(panels, (_paper_panel, _index_panel, _retrieval_panel)):
        draw(ax, data, data["n"])
    fig.draw_without_rendering()  # lays the panels out: the labels below are spaced for their final height
    for ax in panels:
        style.label_line_ends(ax, [line for line in ax.get_lines() if line not in style.vertical_lines(ax)])
    fig.suptitle(
        "Figure 5A: discrepancy of the constructions — the paper's bounds (dashed) against exact values",
        fontsize=12,
    )
    return Built(style.save(fig, out, "fig5a"))

"""Figures of the trained models' learning dynamics: Figure 2, Figure 6 and Figure 7.

All three read training/reference/<task>/analysis.json (scores, entropy and purity per
checkpoint) and, for accuracy, the training's metrics.jsonl.  A task whose files are absent
gets a panel saying which file is missing and how to produce it; the figure is still drawn
for the other task and the builder reports the gap (see ``figures.__main__``).
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.ticker import MaxNLocator

from . import style
from .loaders import Built, Inputs, MissingInput, per_task

FIG2_LAYERS = (1, 5, 11)  # the layers the paper's Figure 2B shows


def best_step(validation: list[dict]):
    """The step of maximal overall accuracy (the earliest on ties, as training keeps it)."""
    if not validation:
        return None
    return max(validation, key=lambda r: (r["overall"], -r["step"]))["step"]


def step_of_max(analysis: dict, validation) -> int | None:
    """The dashed line's step: the analysis's own best_step, else the best validation step."""
    if analysis.get("best_step") is not None:
        return analysis["best_step"]
    return best_step(validation or analysis.get("validation", []))


def accuracy_panel(ax, validation: list[dict], title: str, best) -> None:
    """Figure 2A: accuracy per hop count (thin) and averaged over hops (magenta)."""
    steps = [r["step"] for r in validation]
    hops = sorted({h for r in validation for h in r.get("per_hop", {})}, key=int)
    for hop in hops:
        ax.plot(steps, [r["per_hop"].get(hop, math.nan) for r in validation], lw=1.1,
                color=style.HOP_COLOURS.get(hop), label=f"{hop}-hop")
    ax.plot(steps, [r["overall"] for r in validation], lw=2.0, color=style.ACCURACY_COLOUR, label="all hops")
    style.mark_step(ax, best, "max accuracy")
    ax.set(title=title, xlabel="Training steps", ylabel="Validation accuracy", ylim=(-0.03, 1.03))
    ax.legend(loc="lower right", ncol=2)


def score_series(analysis: dict, layer: int) -> dict:
    """Per-step positional and symbolic scores and normalised entropy of one layer."""
    scores = analysis["scores"]
    entropy = scores.get("entropy_normalised") or scores.get("entropy")
    return {"positional": [row[layer] for row in scores["positional"]],
            "symbolic": [row[layer] for row in scores["symbolic"]],
            "entropy": [row[layer] for row in entropy] if entropy else None}


def scores_panel(ax, analysis: dict, layer: int, best, title: str, legend: bool = True) -> None:
    """Figure 2B / 6: red positional, green symbolic, purple normalised entropy."""
    steps, series = analysis["steps"], score_series(analysis, layer)
    ax.plot(steps, series["positional"], color=style.SCORE_COLOUR["positional"], lw=1.5, label="positional score")
    ax.plot(steps, series["symbolic"], color=style.SCORE_COLOUR["symbolic"], lw=1.5, label="symbolic score")
    if series["entropy"] is not None:
        ax.plot(steps, series["entropy"], color=style.SCORE_COLOUR["entropy"], lw=1.2,
                label="entropy (min-max normalised)")
    style.mark_step(ax, best)
    ax.set(title=title, ylim=(-0.05, 1.05))
    if legend:
        ax.legend(loc="center right")


def purity_panel(ax, analysis: dict, gamma: str, best, title: str) -> None:
    """Figure 2C / 7: how many heads are pure, per kind, and when each became pure.

    The per-kind curves count the layers whose ``pure_from_step`` has been reached, so each
    step up is labelled with the layers it adds, as the paper does ("L9, L10").  The file's
    own ``count`` (pure heads at each checkpoint, either kind) is drawn thin and black.
    """
    purity, steps = analysis["purity"][gamma], analysis["steps"]
    kinds, starts = purity["kind"], purity["pure_from_step"]
    for kind in ("positional", "symbolic"):
        colour = style.KIND_COLOUR[kind]
        became = {}
        for layer, (k, start) in enumerate(zip(kinds, starts)):
            if k == kind and start is not None:
                became.setdefault(start, []).append(layer)
        counts = purity.get(f"count_{kind}") or [sum(len(ls) for s, ls in became.items() if s <= step)
                                                 for step in steps]
        ax.step(steps, counts, where="post", color=colour, lw=1.8, label=f"pure {kind} heads")
        total = 0
        for start, layers in sorted(became.items()):
            total += len(layers)
            # positional labels below their curve, symbolic above: the two never print on each other
            ax.annotate(style.layer_label(layers), (start, total), xytext=(3, -9 if kind == "positional" else 2),
                        textcoords="offset points", fontsize=7, color=colour)
    if purity.get("count_instantaneous"):  # heads pure at each checkpoint, whether or not they stay so
        ax.plot(steps, purity["count_instantaneous"], color="black", lw=0.8, alpha=0.5, label="pure at that step")
    else:
        ax.plot(steps, purity["count"], color="black", lw=0.8, alpha=0.5, label="pure heads (count in file)")
    style.mark_step(ax, best)
    ax.set(title=title, xlabel="Training steps", ylabel="Head purity count", ylim=(-0.3, analysis["layers"] + 0.8))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left")


def _gamma(analysis: dict, wanted: str) -> str | None:
    """The purity key for gamma = ``wanted`` ("0.1" or "0.05"), tolerant of "0.10"."""
    for key in analysis["purity"]:
        if math.isclose(float(key), float(wanted)):
            return key
    return None


def _validation_or_none(inputs: Inputs, task: str, missing: list):
    try:
        return inputs.validation(task)
    except MissingInput as absent:
        missing.append(absent)
        return None


def build_fig2(inputs: Inputs, out: Path) -> Built:
    """Figure 2: accuracy per hop (A), scores of layers 1, 5, 11 (B), purity for gamma 0.1 (C)."""
    analyses, missing = per_task(inputs.analysis, style.TASKS)
    fig = style.new_figure(11, 13.5)
    grid = fig.add_gridspec(2 + len(FIG2_LAYERS) + 1, 2)
    for col, task in enumerate(style.TASKS):
        acc_ax = fig.add_subplot(grid[0:2, col])  # A is twice as tall: it carries five lines
        axes = [fig.add_subplot(grid[2 + row, col]) for row in range(len(FIG2_LAYERS))]
        purity_ax = fig.add_subplot(grid[-1, col])
        if task not in analyses:
            for ax in [acc_ax] + axes + [purity_ax]:
                style.placeholder(ax, style.missing_text(task, missing))
            continue
        analysis = analyses[task]
        validation = _validation_or_none(inputs, task, missing)
        best = step_of_max(analysis, validation)
        if validation:
            accuracy_panel(acc_ax, validation, f"A. {style.TASK_TITLE[task]}: accuracy", best)
        else:
            style.placeholder(acc_ax, style.missing_text(task, missing))
        layers = [layer for layer in FIG2_LAYERS if layer < analysis["layers"]] or [0]
        for row, layer in enumerate(layers):
            ax = axes[row]
            scores_panel(ax, analysis, layer, best, f"B. {style.TASK_TITLE[task]}: layer L{layer}",
                         legend=row == 0)
            ax.set_ylabel("Score / entropy")
        for ax in axes[len(layers):]:
            ax.set_axis_off()
        gamma = _gamma(analysis, "0.1") or next(iter(analysis["purity"]))
        purity_panel(purity_ax, analysis, gamma, best,
                     f"C. {style.TASK_TITLE[task]}: head purity (γ = {gamma})")
    fig.suptitle("Figure 2: accuracy, head scores and head purity over training (ours)", fontsize=12)
    return Built(style.save(fig, out, "fig2"), missing)


def build_fig6(inputs: Inputs, out: Path) -> Built:
    """Figure 6: positional / symbolic scores and normalised entropy for every layer."""
    analyses, missing = per_task(inputs.analysis, style.TASKS)
    best = {task: step_of_max(analysis, _validation_or_none(inputs, task, [])) for task, analysis in analyses.items()}

    def draw(ax, task, analysis, layer):
        scores_panel(ax, analysis, layer, best[task], f"L{layer}", legend=False)

    fig = style.per_layer_grids(analyses, missing, (2.4, 2.0), 1, draw, "Score / entropy", "Training steps",
                                legend_ncol=3, sharey=True)
    fig.suptitle("Figure 6: scores and attention entropy per layer (ours; dashed = step of max accuracy)",
                 fontsize=12)
    return Built(style.save(fig, out, "fig6"), missing)


def build_fig7(inputs: Inputs, out: Path) -> Built:
    """Figure 7: head purity counts for gamma = 0.1 (top) and 0.05 (bottom)."""
    analyses, missing = per_task(inputs.analysis, style.TASKS)
    fig = style.new_figure(11, 7.5)
    axes = fig.subplots(2, 2, squeeze=False)
    for col, task in enumerate(style.TASKS):
        for row, wanted in enumerate(("0.1", "0.05")):
            ax = axes[row, col]
            analysis = analyses.get(task)
            gamma = _gamma(analysis, wanted) if analysis else None
            if analysis is None or gamma is None:
                style.placeholder(ax, style.missing_text(task, missing) if analysis is None
                                  else f"{style.TASK_TITLE[task]}: analysis.json has no purity for γ = {wanted}")
                continue
            validation = _validation_or_none(inputs, task, [])
            purity_panel(ax, analysis, gamma, step_of_max(analysis, validation),
                         f"{style.TASK_TITLE[task]}, γ = {gamma}")
    fig.suptitle("Figure 7: head purity counts over training (ours)", fontsize=12)
    return Built(style.save(fig, out, "fig7"), missing)

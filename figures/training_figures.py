"""Figures of the trained models' learning dynamics: Figure 6 and Figure 7, and the panels
Figure 2 shares with them (Figure 2 itself, drawn over seeds, is in ``figure2``).

They read training/reference/<task>/analysis.json (scores, entropy and purity per
checkpoint) and, for accuracy, the training's metrics.jsonl.  A task whose files are absent
gets a panel saying which file is missing and how to produce it; the figure is still drawn
for the other task and the builder reports the gap (see ``figures.__main__``).
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.ticker import MaxNLocator

from . import style
from .input_files import MissingInput
from .loaders import Built, Inputs, per_task

SCORE_LABELS = {
    "positional": "positional score",
    "symbolic": "symbolic score",
    "entropy": "entropy (min-max normalised)",
}
PURITY_KINDS = ("positional", "symbolic")
LABEL_BACKING = {"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.75}


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


def score_series(analysis: dict, layer: int) -> dict:
    """Per-step positional and symbolic scores and normalised entropy of one layer."""
    scores = analysis["scores"]
    entropy = scores.get("entropy_normalised") or scores.get("entropy")
    return {
        "positional": [row[layer] for row in scores["positional"]],
        "symbolic": [row[layer] for row in scores["symbolic"]],
        "entropy": [row[layer] for row in entropy] if entropy else None,
    }


def scores_panel(ax, analysis: dict, layer: int, best, title: str, legend: bool = True) -> None:
    """Figure 6: positional and symbolic scores and normalised entropy of one layer."""
    steps, series = analysis["steps"], score_series(analysis, layer)
    for name, label in SCORE_LABELS.items():
        if series[name] is not None:
            ax.plot(
                steps,
                series[name],
                color=style.SCORE_COLOUR[name],
                lw=1.2 if name == "entropy" else 1.5,
                label=label,
            )
    style.mark_step(ax, best)
    ax.set(title=title, ylim=(-0.05, 1.05))
    if legend:
        ax.legend(loc="center right")


def pure_from(purity: dict, kind: str) -> dict:
    """{step: [layers]}: the layers of ``kind`` that became pure (for good) at each step."""
    became = {}
    for layer, (k, start) in enumerate(zip(purity["kind"], purity["pure_from_step"])):
        if k == kind and start is not None:
            became.setdefault(start, []).append(layer)
    return became


def purity_counts(analysis: dict, gamma: str) -> dict:
    """Per checkpoint: pure heads of each kind (the file's counts, else counted from
    ``pure_from_step``) and, under "any", the heads pure at that checkpoint, either kind."""
    purity, steps = analysis["purity"][gamma], analysis["steps"]
    counts = {}
    for kind in PURITY_KINDS:
        became = pure_from(purity, kind)
        counts[kind] = purity.get(f"count_{kind}") or [
            sum(len(ls) for s, ls in became.items() if s <= step) for step in steps
        ]
    counts["any"] = purity.get("count_instantaneous") or purity["count"]
    return counts


def any_label(analysis: dict, gamma: str) -> str:
    return (
        "pure at that step"
        if analysis["purity"][gamma].get("count_instantaneous")
        else "pure heads (count in file)"
    )


def annotate_purity(ax, analysis: dict, gamma: str) -> None:
    """Label each step up of a kind's count with the layers it adds, as the paper does ("L9, L10");
    positional labels below their curve, symbolic above: the two never print on each other."""
    for kind in PURITY_KINDS:
        total = 0
        for start, layers in sorted(pure_from(analysis["purity"][gamma], kind).items()):
            total += len(layers)
            ax.annotate(
                style.layer_label(layers),
                (start, total),
                xytext=(3, -11 if kind == "positional" else 4),
                textcoords="offset points",
                fontsize=7,
                color=style.KIND_COLOUR[kind],
                zorder=4,
                bbox=LABEL_BACKING,
            )  # readable where the thin "pure at that step" line crosses it


def purity_axes(ax, analysis: dict, best, title: str) -> None:
    style.mark_step(ax, best)
    ax.set(
        title=title,
        xlabel="Training steps",
        ylabel="Head purity count",
        ylim=(-0.3, analysis["layers"] + 0.8),
    )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def purity_panel(ax, analysis: dict, gamma: str, best, title: str) -> None:
    """Figure 7: how many heads are pure, per kind, and when each became pure.

    The per-kind curves count the layers whose ``pure_from_step`` has been reached; the file's
    own count (pure heads at each checkpoint, either kind) is drawn thin and black.
    """
    steps, counts = analysis["steps"], purity_counts(analysis, gamma)
    for kind in PURITY_KINDS:
        ax.step(
            steps,
            counts[kind],
            where="post",
            color=style.KIND_COLOUR[kind],
            lw=1.8,
            label=f"pure {kind} heads",
        )
    annotate_purity(ax, analysis, gamma)
    ax.plot(steps, counts["any"], color="black", lw=0.8, alpha=0.5, label=any_label(analysis, gamma))
    purity_axes(ax, analysis, best, title)
    ax.legend(loc="upper left")


def gamma_key(analysis: dict, wanted: str) -> str | None:
    """The purity key for gamma = ``wanted`` ("0.1" or "0.05"), tolerant of "0.10"."""
    for key in analysis["purity"]:
        if math.isclose(float(key), float(wanted)):
            return key
    return None


def validation_or_none(inputs: Inputs, task: str, missing: list):
    try:
        return inputs.validation(task)
    except MissingInput as absent:
        missing.append(absent)
        return None


def build_fig6(inputs: Inputs, out: Path) -> Built:
    """Figure 6: positional / symbolic scores and normalised entropy for every layer."""
    analyses, missing = per_task(inputs.analysis, style.TASKS)
    best = {
        task: step_of_max(analysis, validation_or_none(inputs, task, []))
        for task, analysis in analyses.items()
    }

    def draw(ax, task, analysis, layer):
        scores_panel(ax, analysis, layer, best[task], f"L{layer}", legend=False)

    fig = style.per_layer_grids(
        analyses,
        missing,
        (2.4, 2.0),
        1,
        draw,
        "Score / entropy",
        "Training steps",
        legend_ncol=3,
        sharey=True,
    )
    fig.suptitle(
        "Figure 6: scores and attention entropy per layer (ours; dashed = step of max accuracy)", fontsize=12
    )
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
            gamma = gamma_key(analysis, wanted) if analysis else None
            if analysis is None or gamma is None:
                style.placeholder(
                    ax,
                    style.missing_text(task, missing)
                    if analysis is None
                    else f"{style.TASK_TITLE[task]}: analysis.json has no purity for γ = {wanted}",
                )
                continue
            validation = validation_or_none(inputs, task, [])
            purity_panel(
                ax,
                analysis,
                gamma,
                step_of_max(analysis, validation),
                f"{style.TASK_TITLE[task]}, γ = {gamma}",
            )
    fig.suptitle("Figure 7: head purity counts over training (ours)", fontsize=12)
    return Built(style.save(fig, out, "fig7"), missing)

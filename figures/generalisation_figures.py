"""Length generalisation: Figure 5B (our GPT-J) and Figure 5C/D (LLMs against the paper's
Table 3).  The measured logit gaps against length ("discrepancy_trained") are drawn in
``discrepancy_figure``.

Inputs: training/reference/<task>/length_generalisation.json (the shipped run, thin) and the
seed study's training/reference/seeds/paper/<task>/seed-<S>/length_generalisation.json
(median and min-max band, see ``bands``), theory.paper_data.TABLE3 (always
there) and any ``python -m training llm`` results in training/reference/llm/.
"""

from __future__ import annotations

import re
from pathlib import Path

from matplotlib.lines import Line2D

from theory.paper_data import TABLE3_MODELS, reference_curve

from . import bands, style
from .input_files import MissingInput
from .loaders import Built, Inputs, per_task

# Section 3.6: "over 90% accuracy with sequence lengths up to 850" for the letter task.
PAPER_LETTER_LENGTH, PAPER_LETTER_ACCURACY = 850, 0.9
PAPER_STAR = {
    "marker": "*",
    "ms": 12,
    "color": style.TASK_COLOUR["letter"],
    "mec": "black",
    "linestyle": "none",
}
PAPER_PANELS = {"C. GPT 5.4 & 5.5": ("GPT 5.4", "GPT 5.5"), "D. Claude Sonnet 3.7": ("Claude Sonnet 3.7",)}
MARKERS = ("o", "s", "^", "D", "v", "P")


def length_curves(data: dict) -> dict:
    """{"1-hop": (lengths, accuracies), ..., "all hops": (lengths, accuracy)} of one evaluation."""
    lengths = data["lengths"]
    curves = {
        f"{hop}-hop": (lengths, values)
        for hop, values in sorted(data.get("per_hop", {}).items(), key=lambda kv: int(kv[0]))
    }
    curves["all hops"] = (lengths, data["accuracy"])
    return curves


def length_panel(ax, shipped: dict | None, seeds: dict, overall: bool, colour_of=style.hop_colour) -> dict:
    """Accuracy against length over all hops (``overall``) or per hop count: the median and
    min-max band over ``seeds`` ({seed: length_generalisation.json}) and the ``shipped`` run
    thin; returns {curve: Band}."""
    return bands.draw_named(
        ax,
        length_curves(shipped) if shipped else {},
        {seed: length_curves(data) for seed, data in seeds.items()},
        colour_of,
        keep=lambda name: (name == "all hops") == overall,
    )


def seed_lengths(inputs: Inputs, task: str, missing: list) -> dict:
    try:
        return inputs.seeds(task, "length")
    except MissingInput as absent:
        missing.append(absent)
        return {}


def build_fig5b(inputs: Inputs, out: Path) -> Built:
    """Figure 5B over seeds: accuracy against input length (log x).  Top, as the paper's 5B:
    both tasks over all hops; below, one panel per task by hop count."""
    results, missing = per_task(inputs.length_generalisation, style.TASKS)
    seeds = {task: seed_lengths(inputs, task, missing) for task in style.TASKS}
    fig = style.new_figure(11, 9)
    grid = fig.add_gridspec(2, 2)
    top = fig.add_subplot(grid[0, :])
    notes = []
    for task in style.TASKS:
        drawn = length_panel(
            top, results.get(task), seeds[task], True, lambda _, t=task: style.TASK_COLOUR[t]
        )
        notes.append(f"{task}: {bands.seeds_note(bands.seeds_in(drawn))}")
    length_axes(top, "A. All hops, " + "; ".join(notes), paper=True)
    hop_colours = {}
    for col, task in enumerate(style.TASKS):
        ax = fig.add_subplot(grid[1, col], sharey=top)
        if task not in results and not seeds[task]:
            style.placeholder(ax, style.missing_text(task, missing))
            continue
        drawn = length_panel(ax, results.get(task), seeds[task], False)
        hop_colours.update({label: style.hop_colour(label) for label in drawn})
        note = bands.seeds_note(bands.seeds_in(drawn))
        length_axes(ax, f"{'BC'[col]}. {style.TASK_TITLE[task]} by hop count, {note}", paper=task == "letter")
    tasks = {f"{style.TASK_TITLE[t]}, all hops (A)": style.TASK_COLOUR[t] for t in style.TASKS}
    handles = bands.legend_handles({**tasks, **hop_colours})
    handles.append(Line2D([], [], label="paper: letter > 0.9 up to length 850", **PAPER_STAR))
    fig.legend(handles=handles, loc="outside right center")  # clear of the suptitle
    fig.suptitle("Figure 5B: length generalisation of the trained GPT-J over seeds", fontsize=12)
    return Built(style.save(fig, out, "fig5b"), missing)


def length_axes(ax, title: str, paper: bool = False) -> None:
    ax.set_xscale("log")
    ax.set(title=title, xlabel="Input length in tokens (log)", ylabel="Accuracy", ylim=(-0.03, 1.03))
    if paper:
        ax.plot([PAPER_LETTER_LENGTH], [PAPER_LETTER_ACCURACY], **PAPER_STAR)
        ax.axhline(PAPER_LETTER_ACCURACY, color="0.6", lw=0.8, linestyle=":")


def _key(name: str) -> str:
    """Model names compared without case or punctuation: "gpt-5.4" matches "GPT 5.4"."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _ours_curve(result: dict):
    rows = [r for r in result["per_length"] if r.get("accuracy_mean") is not None]
    return (
        [r["length"] for r in rows],
        [r["accuracy_mean"] for r in rows],
        [r.get("accuracy_std") or 0.0 for r in rows],
    )


def build_fig5cd(inputs: Inputs, out: Path) -> Built:
    """Figure 5C/D: 1-hop accuracy of LLMs against the target-window size.  The paper's
    Table 3 is drawn dashed ("paper"); each results file in the LLM folder is drawn solid in
    the panel of the paper model it names, or in a third panel when it names another model."""
    ours = inputs.llm_results()
    panels = dict(PAPER_PANELS)
    known = {_key(m) for m in TABLE3_MODELS}
    others = sorted({r["model"] for r in ours if _key(r["model"]) not in known})
    if others:
        panels["E. other models (ours)"] = tuple(others)
    fig = style.new_figure(5.2 * len(panels), 4.8)
    axes = fig.subplots(1, len(panels), squeeze=False, sharex=True, sharey=True)[0]
    for ax, (title, models) in zip(axes, panels.items()):
        for marker, model in zip(MARKERS, models):
            for task in style.TASKS:
                colour = style.TASK_COLOUR[task]
                if model in TABLE3_MODELS:
                    ref = reference_curve(model, task)
                    ax.errorbar(
                        ref["lengths"],
                        ref["accuracy_mean"],
                        yerr=ref["accuracy_std"],
                        color=colour,
                        marker=marker,
                        ms=4,
                        lw=1.4,
                        capsize=2,
                        label=f"paper: {model}, {task}",
                        **style.PAPER_STYLE,
                    )
                for result in ours:
                    if _key(result["model"]) == _key(model) and result["task"] == task:
                        lengths, mean, std = _ours_curve(result)
                        ax.errorbar(
                            lengths,
                            mean,
                            yerr=std,
                            color=colour,
                            marker=marker,
                            mfc="white",
                            ms=4,
                            lw=1.8,
                            capsize=2,
                            label=f"ours: {result['model']}, {task} ({result['_file']})",
                        )
        ax.set(
            title=title,
            xlabel="Target-window size (tokens before the query)",
            ylabel="Accuracy (1-hop)",
            ylim=(-0.03, 1.05),
        )
        style.legend_below(ax, ncol=1 if len(ours) else 2)
    folder = style.show_path(inputs.llm_dir)
    note = (
        f"{len(ours)} result file(s) from {folder}" if ours else f"no model results in {folder}: paper only"
    )
    colours = ", ".join(f"{style.COLOUR_NAME[style.TASK_COLOUR[task]]} = {task}" for task in style.TASKS)
    fig.suptitle(f"Figure 5C/D: LLMs on the 1-hop tasks, {colours}\n({note})", fontsize=11)
    return Built(style.save(fig, out, "fig5cd"))

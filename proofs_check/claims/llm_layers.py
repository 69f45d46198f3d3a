"""LLM-local-global: in Gemma 3, are positional heads more frequent in sliding-window layers?

Gemma 3 270M has two kinds of attention layer: sliding-window layers (window 512, RoPE base
10,000) and full-attention layers (base 1,000,000).  If positional heads need fast planes, they
may gather where the base keeps planes fast and the window keeps offsets short.  Registered on
2026-12-03, with its rule, before any Gemma 3 head was scored.

The rule (``RULE``), per task, from the shipped analysis (``training/reference/llm/gemma3/
analysis_<task>.json``; its ``frequency.layer_kind`` names each layer "sliding" or "full"):

1. classify every head by C11-llm's rule (``llm_heads.classify_heads``); sink-dominated heads
   are left out, as there (their scores are inflated);
2. count positional and other (symbolic or mixed) heads in sliding and in full layers;
3. Fisher's exact test on that 2x2 table, one-sided (scipy.stats.fisher_exact): p_more for a
   larger share of positional heads in sliding layers, p_less for the opposite.

Verified when p_more < ``ALPHA`` in every task; refuted when p_less < ``ALPHA`` in any task;
undecided otherwise, or while a task's file (or its ``layer_kind``) is absent.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.evidence.shipped import LLM_HEADS, read

from ..registry import Outcome, claim
from .llm_heads import SHIPPED_GEMMA3, TASKS, classify_heads, shown_path

ALPHA = 0.01
KINDS = ("sliding", "full")
LAYERED = {**LLM_HEADS, "frequency": {**LLM_HEADS["frequency"], "layer_kind": [str]}}
RULE = (
    f"per task: heads classified by C11-llm's rule, sink-dominated left out; 2x2 table of positional vs other "
    f"heads in sliding vs full layers; one-sided Fisher exact tests. Verified if positional heads are more "
    f"frequent in sliding layers with p < {ALPHA} in every task; refuted if less frequent with p < {ALPHA} in "
    f"any task; undecided otherwise"
)


def layer_table(analysis: dict) -> list[list[int]]:
    """[[positional, other] in sliding layers, [positional, other] in full layers] (sinks left out)."""
    kinds = classify_heads(analysis)
    types = analysis["frequency"]["layer_kind"]
    if len(types) != kinds.shape[0] or set(types) - set(KINDS):
        raise ValueError(
            f"frequency.layer_kind must name each of the {kinds.shape[0]} layers one of {KINDS}, got {types}"
        )
    table = [[0, 0], [0, 0]]
    for layer, kind_of_layer in enumerate(types):
        row = table[KINDS.index(kind_of_layer)]
        for head_kind in kinds[layer]:
            if head_kind != "sink":
                row[0 if head_kind == "positional" else 1] += 1
    return table


def fisher_row(table: list[list[int]]) -> dict:
    from scipy.stats import fisher_exact

    more = fisher_exact(table, alternative="greater")
    less = fisher_exact(table, alternative="less")
    return {
        "table": table,
        "odds_ratio": float(more.statistic),
        "p_more": float(more.pvalue),
        "p_less": float(less.pvalue),
    }


def decide(rows: dict) -> str:
    if any(r["p_less"] < ALPHA for r in rows.values()):
        return "refuted"
    if rows and all(r["p_more"] < ALPHA for r in rows.values()):
        return "verified"
    return "undecided"


def _line(task: str, r: dict) -> str:
    (ps, os_), (pf, of) = r["table"]
    return (
        f"{task}: positional {ps} of {ps + os_} heads in sliding layers vs {pf} of {pf + of} in full layers, "
        f"Fisher one-sided p = {r['p_more']:.2g} (opposite direction p = {r['p_less']:.2g})"
    )


def check_folder(folder: Path) -> Outcome:
    paths = {t: Path(folder) / f"analysis_{t}.json" for t in TASKS}
    absent = [shown_path(p) for p in paths.values() if not p.is_file()]
    if absent:
        return Outcome(
            "undecided",
            f"missing {', '.join(absent)} (the Gemma 3 analysis, python -m training analyze --model ...)",
            {"rule": RULE, "missing": absent},
        )
    analyses = {t: read(p, LLM_HEADS) for t, p in paths.items()}
    if any("layer_kind" not in a["frequency"] for a in analyses.values()):
        return Outcome(
            "undecided",
            f"{shown_path(folder)}: the analysis does not record frequency.layer_kind",
            {"rule": RULE},
        )
    rows = {t: fisher_row(layer_table(read(paths[t], LAYERED))) for t in TASKS}
    return Outcome(
        decide(rows),
        "; ".join(_line(t, r) for t, r in rows.items()) + f" (source: {shown_path(folder)})",
        {"rule": RULE, "source": shown_path(folder), "per_task": rows},
    )


@claim(
    "LLM-local-global",
    "In Gemma 3 270M, positional heads are more frequent in sliding-window layers (RoPE base "
    "10,000) than in full-attention layers (base 1,000,000)",
    "not a claim of the paper (its "
    "Section 3.5 geometry asked of a model with two RoPE bases); registered 2026-12-03 before Gemma 3 was "
    "analysed",
    recorded="undecided",
    kind="experiment",
    origin="package",
)
# recorded undecided when registered: no Gemma 3 analysis had run.  Still undecided when it ran
# (2026-12-03): the direction holds (positional 26 of 51 and 15 of 38 non-sink heads in sliding
# layers, 0 of 4 and 0 of 3 in full layers) but the three full layers leave too few heads once
# sink-dominated ones are set aside: p = 0.07 (number) and 0.24 (letter).
def positional_heads_gather_in_sliding_layers(options):
    return check_folder(SHIPPED_GEMMA3)

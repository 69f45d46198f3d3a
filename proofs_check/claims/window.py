"""Does training on longer inputs move the letter task's break?  Variant (e) of issue 15: the
paper's recipe (6,000 steps) with a random extra target window of 0-48 tokens in training, so
inputs of 17 to 65 tokens.  Decided on the shipped variants study against the seed study's
letter models trained without the window.

* ``V-window``: every extra-window seed's break after learning (``break_after_learning`` in the
  variants ``summary.json``: where accuracy over all hops first reaches 0.9, then first falls
  below it; ``training.analysis.break_prediction``) lies beyond the longest measured break of
  the seed study's paper-recipe letter models (5 seeds, 111-229 tokens).

Why "after learning": a model trained on 17-65 tokens can be below 0.9 at 17 and right at 25
and beyond (seed 0: 0.887 at 17), and the claims' usual break would put it at 17.

Rule, registered 2026-12-02 after seed 0 (break after learning 457 tokens) and before seeds 1
and 2 had any length numbers, so it is judged on those two seeds only (``HELD_OUT``): verified
when both are measured and both lie beyond; refuted as soon as one measured seed does not (a
seed that never reaches 0.9 at any length counts as not beyond); undecided while fewer are
measured.  A break beyond the last length measured (censored) counts as beyond.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.evidence.shipped import BASELINE_BREAKS, STUDY_SUMMARY, read
from proofs_check.registry import Outcome, claim

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "training" / "reference" / "variants" / "summary.json"
SEEDS = ROOT / "training" / "reference" / "seeds" / "summary.json"
VARIANT, BASELINE, TASK = "extra-window", "paper", "letter"
HELD_OUT = ("1", "2")  # seed 0 prompted the claim


def baseline_breaks(seeds_summary: dict) -> dict:
    """{seed: measured break over all hops} of the seed study's paper-recipe letter models."""
    return seeds_summary["results"][BASELINE][TASK]["breaks"]["measured"]


def after_learning(variants_summary: dict) -> dict:
    """{seed: {"learned_at", "break"}} of the extra-window letter seeds ({} before any)."""
    found = variants_summary.get("results", {}).get(VARIANT, {}).get(TASK, {}).get("break_after_learning", {})
    return {seed: block["all"] for seed, block in found.items()}


def beyond(row: dict, longest: float) -> bool:
    """Past ``longest``: learned somewhere, and a break after it that is later (or censored)."""
    return row["learned_at"] is not None and (row["break"] is None or row["break"] > longest)


def decide(rows: dict, baseline: dict, held_out=HELD_OUT) -> Outcome:
    """The module's rule on ``rows`` ({seed: after-learning row}) against ``baseline``'s breaks."""
    if any(b is None for b in baseline.values()):
        return Outcome(
            "undecided",
            "a baseline seed has no break up to its last length: no longest break to beat",
            evidence={"baseline": baseline},
        )
    longest = max(baseline.values())
    judged = {s: rows[s] for s in held_out if s in rows}
    failing = {s: r for s, r in judged.items() if not beyond(r, longest)}
    shown = "; ".join(
        f"seed {s}: "
        + (
            "never reaches 0.9"
            if r["learned_at"] is None
            else f"from {r['learned_at']:g}, break {_length(r['break'])}"
        )
        for s, r in sorted(judged.items())
    )
    evidence = {
        "rule": f"held-out seeds {', '.join(held_out)}: break after learning beyond the baseline's longest "
        f"break; verified when all are measured and beyond, refuted by one that is not",
        "baseline_breaks": baseline,
        "longest_baseline_break": longest,
        "held_out": judged,
        "not_judged": {s: r for s, r in rows.items() if s not in held_out},
    }
    what = f"extra window, letter, after learning, against the baseline's longest break {longest:.0f}"
    if failing:
        return Outcome(
            "refuted",
            f"{what}: {len(failing)} of {len(judged)} held-out seeds not beyond ({shown})",
            counterexample=failing,
            evidence=evidence,
        )
    if len(judged) < len(held_out):
        return Outcome(
            "undecided",
            f"{what}: {len(judged)} of {len(held_out)} held-out seeds measured"
            + (f" ({shown})" if judged else ""),
            evidence=evidence,
        )
    return Outcome(
        "verified", f"{what}: all {len(judged)} held-out seeds beyond ({shown})", evidence=evidence
    )


def _length(value) -> str:
    return "none up to the last length" if value is None else f"{value:.0f}"


@claim(
    "V-window",
    "Training on longer inputs (a random extra target window of 0-48 tokens, 6,000 steps) moves the "
    "letter task's break: each seed's break after learning lies beyond the longest break of the paper recipe's "
    "letter models (seed study, 5 seeds)",
    "the variant study's variant e (not a claim of the paper); rule registered 2026-12-02 after seed 0, judged on seeds 1-2",
    recorded="verified",
    kind="experiment",
    origin="package",
)
# recorded undecided when registered: seed 0 (not judged) learns at 25 tokens and breaks at 457,
# against the baseline's 111-229; seeds 1 and 2 were still training.  Verified once they came in
# (the same day): seed 1 is right from 17 (0.923) and breaks at 552, seed 2 from 25 (0.895 at 17)
# and breaks at 431.  About 2 to 2.5 times the baseline's breaks, yet far from 850: at 850 the
# three seeds score 0.625-0.783.
def extra_window_moves_the_break(options):
    if not (VARIANTS.is_file() and SEEDS.is_file()):
        return Outcome(
            "undecided",
            "the variants or seed study is not shipped: run python -m training study "
            "training/studies/variants.json --collect (and seeds.json)",
        )
    return decide(
        after_learning(read(VARIANTS, STUDY_SUMMARY)), baseline_breaks(read(SEEDS, BASELINE_BREAKS))
    )

"""Is the break of a model trained without a query scale softmax dilution?  Decided on the
variants study's ``rescale`` stage (``training/reference/variants/summary.json``): each model
trained without a scale is evaluated again with the fixed scale log(i+1)/log(17) switched on
at inference only, its weights unchanged (``training.model.gptj.scale_queries_at_inference``).

* ``V-rescale``: on the letter task every such model keeps accuracy over all hops >= 0.9 at
  every length of the rescale grid (up to 5,000).  Lemma F.1 says a symbolic head whose gap
  does not decay fails only by dilution, which the growing temperature undoes.
* ``V-rescale-number``: on the number task the same scale leaves each model's break within a
  factor 2 of its break without it.  Its first layers are positional, and a positional head's
  gap decays with n whatever its temperature (Theorem 3.2, corrected): the scale cures
  dilution, not that decay.

Status rules, written down before any rescaled result was collected (2026-12-02; only two
letter models had been tried by hand: ``paper-3k`` seed 0 at 17-5,000 and seed 1 at 17, 200
and 850, all >= 0.995), and applied to every model the stage measured, not to a chosen few:
verified when at least ``MIN_MODELS`` models qualify and every one satisfies the statement;
refuted as soon as one does not; undecided with fewer models.  A model that never learned
the task (its own accuracy below 0.9 at the training length) is left out and named, as in
the premise claims.  The measured break is ``break_prediction.measured_break`` (the first
length where accuracy over all hops falls below 0.9, None if never), the same on both grids.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.evidence.shipped import STUDY_SUMMARY, read
from proofs_check.registry import Outcome, claim
from theory.statistics import reaches
from training.analysis.break_prediction import THRESHOLD, measured_break
from training.tasks.vocab import SEQ_LEN

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "training" / "reference" / "variants" / "summary.json"
MIN_MODELS = 3
FACTOR = 2.0


def curves(block: dict) -> dict:
    """{seed: accuracy over all hops per length} of a collected length block."""
    seeds = {s for cell in block["accuracy"] for s in cell["values"]}
    return {s: [cell["values"].get(s) for cell in block["accuracy"]] for s in sorted(seeds, key=int)}


def rescaled_models(summary: dict, task: str) -> dict:
    """{member id: {"plain": (lengths, accuracies), "rescaled": (lengths, accuracies)}} of every
    model of ``task`` that has both an own and a rescaled length curve."""
    out = {}
    for variant, tasks in summary.get("results", {}).items():
        result = tasks.get(task, {})
        if "rescaled" not in result or "length" not in result:
            continue
        plain, scaled = curves(result["length"]), curves(result["rescaled"])
        for seed in sorted(set(plain) & set(scaled), key=int):
            out[f"{variant}/{task}/seed-{seed}"] = {
                "plain": (result["length"]["lengths"], plain[seed]),
                "rescaled": (result["rescaled"]["lengths"], scaled[seed]),
            }
    return out


def _learned(curve) -> bool:
    lengths, accuracy = curve
    return (
        SEQ_LEN in lengths
        and accuracy[lengths.index(SEQ_LEN)] is not None
        and reaches(accuracy[lengths.index(SEQ_LEN)], THRESHOLD)
    )


def decide(models: dict, holds, what: str, detail=lambda rows: "") -> Outcome:
    """The rule of both claims (module doc); ``holds(model) -> (bool, evidence row)``;
    ``detail(rows)`` adds a short range of the rows' numbers to the summary line."""
    unlearned = sorted(m for m, c in models.items() if not _learned(c["plain"]))
    rows = {m: holds(c) for m, c in models.items() if m not in unlearned}
    failing = {m: row for m, (ok, row) in rows.items() if not ok}
    what += detail([row for _, row in rows.values()]) if rows else ""
    evidence = {"models": {m: row for m, (_, row) in rows.items()}, "left_out_never_learned": unlearned}
    named = f"; {len(unlearned)} never learned, left out ({', '.join(unlearned)})" if unlearned else ""
    if failing:
        return Outcome(
            "refuted",
            f"{what}: {len(failing)} of {len(rows)} models do not ({', '.join(sorted(failing))}){named}",
            counterexample=failing,
            evidence=evidence,
        )
    if len(rows) < MIN_MODELS:
        return Outcome(
            "undecided", f"{what}: {len(rows)} model(s) measured (< {MIN_MODELS}){named}", evidence=evidence
        )
    return Outcome("verified", f"{what}: all {len(rows)} models{named}", evidence=evidence)


def lowest_range(rows: list) -> str:
    lowest = [r["lowest"] for r in rows]
    return f" (lowest accuracy over the lengths {min(lowest):.3f}-{max(lowest):.3f})"


def ratio_range(rows: list) -> str:
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    return f" (break with / without the scale {min(ratios):.2f}-{max(ratios):.2f})" if ratios else ""


def holds_everywhere(model: dict) -> tuple[bool, dict]:
    lengths, accuracy = model["rescaled"]
    lowest = min(a for a in accuracy if a is not None)
    row = {
        "lowest": round(lowest, 4),
        "at": lengths[accuracy.index(lowest)],
        "break_without": measured_break(*model["plain"]),
        "break_with": measured_break(lengths, accuracy),
    }
    return reaches(lowest, THRESHOLD), row


def break_within_factor(model: dict) -> tuple[bool, dict]:
    plain, scaled = measured_break(*model["plain"]), measured_break(*model["rescaled"])
    row = {"break_without": plain, "break_with": scaled}
    if plain is None or scaled is None:  # censored on one side: no ratio, and not "within"
        return plain is None and scaled is None, row
    row["ratio"] = round(scaled / plain, 3)
    return 1 / FACTOR <= scaled / plain <= FACTOR, row


def _decide(task: str, holds, what: str, path: Path | None = None, detail=lambda rows: "") -> Outcome:
    path = SUMMARY if path is None else path  # read when called: tests point it elsewhere
    if not path.is_file():
        return Outcome(
            "undecided",
            f"no variants study shipped ({path} is absent): run "
            "python -m training study training/studies/variants.json --collect",
        )
    return decide(rescaled_models(read(path, STUDY_SUMMARY), task), holds, what, detail)


@claim(
    "V-rescale",
    (
        "A letter model trained without a query scale, evaluated with the fixed scale "
        r"$\log(i+1)/\log 17$ switched on at inference only (weights unchanged), keeps accuracy "
        r"over all hops $\ge 0.9$ at every length up to 5,000: its break is softmax dilution"
    ),
    "not a claim of the paper (its Lemma F.1 applied)",
    recorded="verified",
    kind="experiment",
    origin="package",
)
# recorded verified on the first 16 models measured (2026-12-02): the paper's RoPE on 3,000 and
# 6,000 steps, NoPE in every layer, NoPE from layer 4 (3 seeds each), p-RoPE and base 500,000
# (2 seeds each).  As trained they break at 87-200 tokens; with the scale none breaks, the lowest
# accuracy over 17-5,000 being 0.953-1.000 (the worst at 5,000, 64 inputs there; the errors are
# mostly 4-hop inputs, 13-16 of 16 right there).  Still verified on 18 (the third seeds of p-RoPE
# and base 500,000 added; 6 variants x 3 seeds): lowest 0.953-1.000, none breaks.
# Recorded refuted on 19 (2026-12-02, the extra window's seed 1 added; its seeds 0 and 2 are
# below 0.9 at 17 as trained and left out), and that refutation was an artefact of our code, not
# of the model: seed 1 with the scale scores 180 of 200 at 17 tokens, exactly 0.9, which the
# rule counts as holding, but the evaluate stage stored accuracies through float32 (0.8999999762)
# and the comparison read that as below.  Fixed the same day (theory.statistics.reaches, used by
# every accuracy threshold; evaluate now writes count / total): verified on all 19 models, the
# lowest accuracy over 17-5,000 being 0.900-1.000 (0.900 is that seed at 17; from 25 to 5,000 it
# scores 0.995-1.000).
def inference_scale_removes_the_letter_break(options):
    return _decide(
        "letter",
        holds_everywhere,
        "letter models >= 0.9 at every length with the scale at inference",
        detail=lowest_range,
    )


@claim(
    "V-rescale-number",
    "On the number task the same inference-time scale leaves each model's break within a "
    "factor 2 of its break without it: the scale cures dilution, not the decay of a positional head's gap",
    "not a claim of the paper (its Theorem 3.2, corrected, applied)",
    recorded="verified",
    kind="experiment",
    origin="package",
)
# recorded verified on the paper's recipe, seeds 0-2 (2026-12-02): breaks 57, 56, 53 tokens as
# trained, 56, 59, 55 with the scale (ratios 0.98-1.04).
def inference_scale_leaves_the_number_break(options):
    return _decide(
        "number",
        break_within_factor,
        "number models' break within a factor 2 with the scale at inference",
        detail=ratio_range,
    )

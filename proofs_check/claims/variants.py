"""Issue 15's goals, decided on the shipped variants study (``training/reference/variants/
summary.json``, written by ``python -m training study training/studies/variants.json --collect``).

These are not claims of the paper: they test the fix the study proposes for its headline
length generalisation (letter task above 0.9 up to 850).  The summary keeps every seed's
value, so each rule below reads seeds one by one rather than a mean.

* ``V-scale``: with the fixed query scale log(i+1)/log(17) (variant ``log-scale-3k``), the
  letter task's accuracy over all hops is >= 0.99 at total length 5,000 in every seed.
  Verified when at least ``MIN_SEEDS`` seeds are measured and all reach 0.99; refuted as soon
  as one measured seed is below (the goal says every seed); undecided while fewer seeds are in.
* ``V-learned-scale``: the same goal for the other form of the scale, a learned scalar per
  head times log(i+1) (Scalable-Softmax; variant ``learned-scale-3k``), by the same rule.
* ``V-scale-6k``: the ``V-scale`` goal on the paper's 6,000 steps (variant ``log-scale``, its
  letter members), by the same rule.  Registered on 2026-12-02, before any of its members
  trained, after ``V-scale`` and ``V-learned-scale`` were refuted by one seed each at 98 of 100
  (errors all 4-hop, from 50 tokens on, with no trend in length: an error floor, which a longer
  schedule may lift).  The 6,000-step letter baseline is the paper recipe of the seeds study.
* ``V-scale-6k-20k``: the same recipe still at 20,000 tokens (the plan's long stage, 64 inputs
  per seed), where 64 inputs cannot tell one miss (0.984) from 0.99.  Registered on 2026-12-03,
  before seeds 3-7 of the variant trained, with seeds 0-2 at 64, 63 and 63 of 64; its rule
  (``decide_pooled``) reads eight seeds: a seed clearly below the goal (Wilson 95% upper bound
  under 0.99) refutes at once; with ``POOLED_SEEDS`` seeds in, the pooled accuracy over all
  their inputs decides (>= 0.99 verified, below refuted); fewer seeds and none clearly below is
  undecided.
* ``V-scale-number``: the number task under the same scale (variant ``log-scale``, the paper's
  6,000 steps) still reaches >= 0.99 at the training length 17 in every seed, by the same rule.

The rule reads each seed's measured accuracy as it is, as the goal is worded; the summary line
also gives each seed's count of correct inputs and its Wilson 95% interval
(``theory.statistics.binomial_interval``), since 100 inputs at 5,000 tokens cannot tell 0.98
from 0.99.  The evidence lists, for context, every variant's per-seed accuracy at the decisive
length and, where the plan's long stage ran, at 20,000 tokens.
"""

from __future__ import annotations

from pathlib import Path

from proofs_check.evidence.shipped import STUDY_SUMMARY, read
from proofs_check.registry import Outcome, claim
from theory.statistics import binomial_interval, reaches

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "training" / "reference" / "variants" / "summary.json"
MIN_SEEDS = 3
POOLED_SEEDS = 8  # V-scale-6k-20k: 8 x 64 inputs resolve a pooled 0.99, 64 inputs per seed do not
GOAL = 0.99


def per_seed(summary: dict, variant: str, task: str, length: int, block: str = "length") -> dict:
    """{seed: accuracy over all hops at ``length``} of one variant and task ({} if unmeasured)."""
    found = summary.get("results", {}).get(variant, {}).get(task, {}).get(block)
    if not found or length not in found["lengths"]:
        return {}
    return dict(found["accuracy"][found["lengths"].index(length)]["values"])


def inputs_per_seed(summary: dict, variant: str, task: str, length: int, block: str = "length") -> dict:
    """{seed: inputs evaluated at ``length``} where the summary records it ({} otherwise)."""
    found = summary.get("results", {}).get(variant, {}).get(task, {}).get(block) or {}
    if length not in found.get("lengths", []):
        return {}
    at = found["lengths"].index(length)
    return {seed: counts[at] for seed, counts in found.get("n_per_length", {}).items()}


def correct_counts(values: dict, inputs: dict) -> dict:
    """{seed: (inputs answered right, inputs evaluated)} of the seeds with both an accuracy and an
    input count (an accuracy is stored as a float: the count is the nearest integer)."""
    return {
        seed: (round(value * inputs[seed]), inputs[seed])
        for seed, value in values.items()
        if value is not None and seed in inputs
    }


def _shown(seed: str, value: float, inputs: dict) -> str:
    """'seed 1: 0.980' and, with the seed's input count, ' (98/100, Wilson 95% [0.930, 0.994])'."""
    text = f"seed {seed}: {value:.3f}"
    if seed in inputs:
        correct, total = correct_counts({seed: value}, inputs)[seed]
        low, high = binomial_interval(correct, total)
        text += f" ({correct}/{total}, Wilson 95% [{low:.3f}, {high:.3f}])"
    return text


def decide_every_seed(values: dict, what: str, inputs: dict | None = None) -> Outcome:
    """The rule of both claims: every measured seed >= GOAL, and at least MIN_SEEDS of them;
    ``inputs`` ({seed: inputs evaluated}) only adds counts and intervals to the summary line."""
    below = {seed: v for seed, v in values.items() if not reaches(v, GOAL)}
    shown = ", ".join(
        _shown(s, v, inputs or {}) for s, v in sorted(values.items(), key=lambda kv: int(kv[0]))
    )
    if below:
        return Outcome(
            "refuted",
            f"{what}: {len(below)} of {len(values)} seeds below {GOAL} ({shown})",
            counterexample={"seeds_below": below},
        )
    if len(values) < MIN_SEEDS:
        return Outcome(
            "undecided",
            f"{what}: {len(values)} seed(s) measured (< {MIN_SEEDS})"
            + (f", all >= {GOAL} ({shown})" if values else ""),
        )
    return Outcome("verified", f"{what}: all {len(values)} seeds >= {GOAL} ({shown})")


def decide_pooled(values: dict, inputs: dict, what: str) -> Outcome:
    """V-scale-6k-20k's rule (registered before seeds 3-7 trained): refuted by one seed whose
    Wilson 95% upper bound is below GOAL; with POOLED_SEEDS seeds or more, the pooled accuracy
    over every input decides; otherwise undecided."""
    counted = correct_counts(values, inputs)
    shown = ", ".join(_shown(s, v, inputs) for s, v in sorted(values.items(), key=lambda kv: int(kv[0])))
    clearly_below = {s: f"{k}/{n}" for s, (k, n) in counted.items() if binomial_interval(k, n)[1] < GOAL}
    if clearly_below:
        return Outcome(
            "refuted",
            f"{what}: {len(clearly_below)} seed(s) clearly below {GOAL} (Wilson 95% upper "
            f"bound < {GOAL}; {shown})",
            counterexample={"seeds_clearly_below": clearly_below},
        )
    correct, total = sum(k for k, _ in counted.values()), sum(n for _, n in counted.values())
    if len(counted) < POOLED_SEEDS:
        return Outcome(
            "undecided",
            f"{what}: {len(counted)} seed(s) measured (the rule pools {POOLED_SEEDS}), none "
            f"clearly below {GOAL}" + (f" ({shown})" if counted else ""),
        )
    low, high = binomial_interval(correct, total)
    pooled = f"pooled {correct}/{total} = {correct / total:.4f} (Wilson 95% [{low:.3f}, {high:.3f}]) over {len(counted)} seeds"
    if correct / total >= GOAL:
        return Outcome("verified", f"{what}: {pooled} >= {GOAL}, no seed clearly below ({shown})")
    return Outcome(
        "refuted",
        f"{what}: {pooled} < {GOAL} ({shown})",
        counterexample={"pooled_correct": correct, "pooled_inputs": total},
    )


def _context(summary: dict, task: str, length: int) -> dict:
    out = {}
    for variant in summary.get("variants", {}):
        grid = per_seed(summary, variant, task, length)
        longer = {
            str(n): per_seed(summary, variant, task, n, "long")
            for n in (summary.get("long") or {}).get("lengths", [])
        }
        if grid or any(longer.values()):
            out[variant] = {str(length): grid, **{n: v for n, v in longer.items() if v}}
    return out


def _decide(
    variant: str, task: str, length: int, what: str, path: Path | None = None, block: str = "length"
) -> Outcome:
    path = SUMMARY if path is None else path  # read when called: tests point it elsewhere
    if not path.is_file():
        return Outcome(
            "undecided",
            f"no variants study shipped ({path} is absent): run "
            "python -m training study training/studies/variants.json --collect",
        )
    summary = read(path, STUDY_SUMMARY)
    values, inputs = (
        per_seed(summary, variant, task, length, block),
        inputs_per_seed(summary, variant, task, length, block),
    )
    if block == "long":
        outcome = decide_pooled(values, inputs, what)
        rule = (
            f"a seed with Wilson 95% upper bound < {GOAL} refutes; from {POOLED_SEEDS} seeds the pooled accuracy "
            f"decides (>= {GOAL} verified); otherwise undecided"
        )
    else:
        outcome = decide_every_seed(values, what, inputs)
        rule = f"every measured seed >= {GOAL}; verified from {MIN_SEEDS} seeds, refuted by one seed below"
    outcome.evidence = {
        "rule": rule,
        "summary": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        "accuracy_by_variant_and_seed": _context(summary, task, length),
    }
    return outcome


@claim(
    "V-scale",
    (
        r"With the fixed query scale $\log(i+1)/\log 17$, the letter task's accuracy over all hops "
        "is at least 0.99 at total length 5,000 in every seed (3,000 training steps)"
    ),
    "not a claim of the paper (its future work, Section 3.6)",
    recorded="refuted",
    kind="experiment",
    origin="package",
)
# recorded refuted on seeds 0-2: seeds 0 and 2 score 1.000 at 5,000 (and seed 0 64/64 at 20,000),
# seed 1 scores 0.980 (98/100; Wilson [0.930, 0.994], so compatible with 0.99).  Its errors are
# all 4-hop inputs and start at 50 tokens (0.92-0.98 there from 50 to 5,000, no trend): an error
# floor of that seed, not a length break.
def query_scale_extrapolates(options):
    return _decide("log-scale-3k", "letter", 5000, "letter task at 5,000 with the log query scale")


@claim(
    "V-learned-scale",
    (
        r"With a learned per-head query scale $s_h \log(i+1)$ (Scalable-Softmax), the letter task's "
        "accuracy over all hops is at least 0.99 at total length 5,000 in every seed (3,000 "
        "training steps)"
    ),
    "not a claim of the paper (its future work, Section 3.6)",
    recorded="refuted",
    kind="experiment",
    origin="package",
)
# recorded refuted on seeds 0-2: seeds 0 and 2 score 1.000 at 5,000, seed 1 0.980 (98/100);
# seed 1's errors are 4-hop inputs from 100 tokens on, as with the fixed scale's seed 1.
def learned_query_scale_extrapolates(options):
    return _decide("learned-scale-3k", "letter", 5000, "letter task at 5,000 with the learned query scale")


@claim(
    "V-scale-6k",
    (
        r"With the fixed query scale $\log(i+1)/\log 17$ on the paper's 6,000 training steps, the "
        "letter task's accuracy over all hops is at least 0.99 at total length 5,000 in every seed"
    ),
    "not a claim of the paper; registered 2026-12-02 before its members trained",
    recorded="refuted",
    kind="experiment",
    origin="package",
)
# recorded undecided when registered: no member trained.  Recorded verified when the 3 seeds came
# in (2026-12-02): 100/100 at 5,000 tokens in every seed (Wilson 95% [0.963, 1.000] each), and
# no seed below 0.994 at any length from 17 to 5,000 (seed 2 misses one 3-hop input at 200, 400,
# 850 and 3,000 tokens).  The recipe keeps the first checkpoint with the best validation accuracy,
# as the paper's does: every seed reached 1.000 at 17 tokens by step 2,000, 3,000 and 2,000, so
# the weights measured are those steps' of the 6,000-step schedule (its learning rate decays over
# 6,000 steps), not weights trained for 6,000 steps.  Recorded refuted on 2026-12-03 when seeds 3
# and 4 came in (issue 34): seed 3 answers 100/100, seed 4 98/100 (0.980, below 0.99 as the rule
# reads each seed).  Seeds 5-7 (2026-12-03) answer 100, 99 and 100 of 100; still refuted by seed 4
# alone (seed 6's 0.990 reaches the goal).
def query_scale_extrapolates_on_the_full_schedule(options):
    return _decide("log-scale", "letter", 5000, "letter task at 5,000 with the log query scale, 6,000 steps")


@claim(
    "V-scale-6k-20k",
    (
        r"With the fixed query scale $\log(i+1)/\log 17$ on the paper's 6,000 training steps, the "
        "letter task's accuracy over all hops is still at least 0.99 at total length 20,000 in "
        "every seed"
    ),
    "not a claim of the paper; registered 2026-12-03 before seeds 3-7 trained",
    recorded="refuted",
    kind="experiment",
    origin="package",
)
# recorded undecided when registered: seeds 0-2 score 64, 63 and 63 of 64 at 20,000 (each miss a
# 4-hop input); one miss in 64 is 0.984, whose Wilson 95% interval [0.917, 0.997] holds 0.99, so
# the rule pools eight seeds (decide_pooled).  Recorded refuted when seed 4 came in (2026-12-03):
# 60/64 at 20,000 (Wilson 95% upper bound 0.975 < 0.99), seed 3 63/64.  Seeds 5-7 (2026-12-03):
# 63, 61 and 64 of 64; seed 6 is also clearly below (upper bound 0.984), and the eight seeds pool
# to 491/512 = 0.959 (Wilson 95% [0.938, 0.973]), below 0.99 as well.
def query_scale_extrapolates_to_20000(options):
    return _decide(
        "log-scale",
        "letter",
        20000,
        "letter task at 20,000 with the log query scale, 6,000 steps",
        block="long",
    )


@claim(
    "V-scale-number",
    "Under the same query scale the number task still trains: accuracy over all hops at the "
    "training length 17 is at least 0.99 in every seed (6,000 steps)",
    "not a claim of the paper",
    recorded="verified",
    kind="experiment",
    origin="package",
)
# recorded verified when the third seed came in: 1.000, 0.998 and 0.995 at 17 (400/400, 399/400,
# 398/400).  It trains; it still breaks early (45-54 tokens), which this claim does not cover.
def query_scale_keeps_number_task(options):
    return _decide("log-scale", "number", 17, "number task at 17 with the log query scale")

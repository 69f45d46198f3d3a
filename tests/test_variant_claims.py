"""proofs_check.claims.variants: issue 15's goals decided seed by seed from a variants summary.

The summaries here are made up in the schema ``training.studies.collect`` writes (per length,
``{"values": {seed: accuracy}}``), so the rule is exercised on both sides of every threshold.
"""

import json

import pytest
from scipy.stats import binomtest

from proofs_check.claims.variants import (
    GOAL,
    MIN_SEEDS,
    POOLED_SEEDS,
    _decide,
    decide_every_seed,
    decide_pooled,
    per_seed,
)
from theory.statistics import binomial_interval


def summary_with(values: dict, long_values: dict | None = None) -> dict:
    grid = {
        "lengths": [17, 5000],
        "accuracy": [{"values": {s: 1.0 for s in values}}, {"values": values}],
        "n_per_length": {s: [400, 100] for s in values},
    }
    results = {"log-scale-3k": {"letter": {"length": grid}}, "paper-3k": {"letter": {"length": grid}}}
    out = {"variants": {"paper-3k": {}, "log-scale-3k": {}}, "results": results}
    if long_values is not None:
        results["log-scale-3k"]["letter"]["long"] = {
            "lengths": [20000],
            "accuracy": [{"values": long_values}],
        }
        out["long"] = {"lengths": [20000]}
    return out


@pytest.mark.parametrize(
    "values, status",
    [
        ({"0": 1.0, "1": 0.995, "2": GOAL}, "verified"),  # every seed at or above the goal
        ({"0": 1.0, "1": 1.0}, "undecided"),  # too few seeds to say "every seed"
        ({"0": 1.0, "1": 1.0, "2": 0.989}, "refuted"),  # one seed just below
        (
            {"0": 1.0, "1": 1.0, "2": GOAL - 1e-8},
            "verified",
        ),  # the goal up to float32 rounding of a stored value
        ({"0": 0.5}, "refuted"),  # one seed below refutes at once
        ({}, "undecided"),
    ],
)
def test_every_seed_rule(values, status):
    outcome = decide_every_seed(values, "x")
    assert outcome.status == status
    if status == "refuted":
        assert set(outcome.counterexample["seeds_below"]) == {s for s, v in values.items() if v < GOAL - 1e-6}
    assert MIN_SEEDS == 3


def test_the_claim_reads_its_variant_at_its_length_and_lists_the_long_stage(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary_with({"0": 1.0, "1": 1.0, "2": 0.97}, long_values={"0": 0.9})))
    outcome = _decide("log-scale-3k", "letter", 5000, "goal", path)
    assert (
        outcome.status == "refuted" and "seed 2: 0.970 (97/100, Wilson 95% [0.915, 0.990])" in outcome.summary
    )
    context = outcome.evidence["accuracy_by_variant_and_seed"]
    assert context["log-scale-3k"]["20000"] == {"0": 0.9} and "20000" not in context["paper-3k"]
    assert per_seed(json.loads(path.read_text()), "log-scale-3k", "letter", 850) == {}  # not measured there


@pytest.mark.parametrize(
    "correct, status",
    [
        ([64, 63, 63], "undecided"),  # the three seeds when the rule was registered
        ([64, 63, 61], "refuted"),  # 61/64: Wilson upper bound 0.984 < 0.99, clearly below
        ([64, 62, 64], "undecided"),  # 62/64: upper bound 0.991, not clearly below
        ([64] * 5 + [63] * 3, "verified"),  # 509/512 = 0.9941 pooled
        ([64] * 3 + [63] * 5, "verified"),  # 507/512 = 0.9902 pooled: at the goal's edge, above
        ([64] * 2 + [63] * 6, "refuted"),  # 506/512 = 0.9883 pooled < 0.99
        ([64] * 7 + [62], "verified"),  # one seed at 62/64 is not clearly below; pooled 0.9961
    ],
)
def test_pooled_rule_of_the_20000_token_claim(correct, status):
    values = {str(s): k / 64 for s, k in enumerate(correct)}
    outcome = decide_pooled(values, {s: 64 for s in values}, "x")
    assert outcome.status == status, outcome.summary
    assert POOLED_SEEDS == 8
    if status == "refuted" and len(correct) < POOLED_SEEDS:
        assert set(outcome.counterexample["seeds_clearly_below"]) == {"2"}
    if status == "refuted" and len(correct) == POOLED_SEEDS:
        assert outcome.counterexample == {"pooled_correct": sum(correct), "pooled_inputs": 512}


def test_the_20000_token_claim_reads_the_long_block_and_its_counts(tmp_path):
    summary = summary_with({"0": 1.0}, long_values={"0": 63 / 64, "1": 1.0})
    summary["results"]["log-scale-3k"]["letter"]["long"]["n_per_length"] = {"0": [64], "1": [64]}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary))
    outcome = _decide("log-scale-3k", "letter", 20000, "goal", path, block="long")
    assert (
        outcome.status == "undecided"
        and "seed 0: 0.984 (63/64" in outcome.summary
        and "pools 8" in outcome.summary
    )


def test_no_summary_is_undecided_not_an_error(tmp_path):
    outcome = _decide("log-scale-3k", "letter", 5000, "goal", tmp_path / "absent.json")
    assert outcome.status == "undecided" and "--collect" in outcome.summary


@pytest.mark.parametrize("correct, total", [(98, 100), (64, 64), (0, 10), (37, 50), (1, 1)])
def test_wilson_interval_matches_scipy(correct, total):
    reference = binomtest(correct, total).proportion_ci(confidence_level=0.95, method="wilson")
    assert binomial_interval(correct, total) == pytest.approx([reference.low, reference.high], abs=1e-12)


@pytest.mark.parametrize("correct, total", [(3, 2), (-1, 5), (0, 0)])
def test_wilson_interval_refuses_impossible_counts(correct, total):
    with pytest.raises(ValueError, match=f"got {correct} of {total}"):
        binomial_interval(correct, total)

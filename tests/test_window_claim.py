"""Claim V-window's rule (proofs_check.claims.window) on made-up rows, and on the shipped studies."""

from proofs_check.claims import window
from proofs_check.claims.window import decide

BASELINE = {"0": 110.0, "1": 200.0, "2": 229.0}


def row(learned_at, at):
    return {"learned_at": learned_at, "break": at}


def test_both_held_out_seeds_beyond_the_longest_baseline_break_verify():
    outcome = decide({"0": row(25.0, 457.0), "1": row(17.0, 300.0), "2": row(25.0, None)}, BASELINE)
    assert outcome.status == "verified"
    assert outcome.evidence["longest_baseline_break"] == 229.0 and set(outcome.evidence["held_out"]) == {
        "1",
        "2",
    }
    assert "none up to the last length" in outcome.summary  # censored counts as beyond


def test_one_held_out_seed_not_beyond_refutes_and_seed_0_is_not_judged():
    outcome = decide({"0": row(17.0, 20.0), "1": row(17.0, 229.0), "2": row(25.0, 900.0)}, BASELINE)
    assert outcome.status == "refuted" and set(outcome.counterexample) == {"1"}  # equal is not beyond
    assert (
        decide({"0": row(17.0, 20.0), "1": row(25.0, 300.0), "2": row(25.0, 900.0)}, BASELINE).status
        == "verified"
    )


def test_a_seed_that_never_reaches_the_threshold_is_not_beyond():
    outcome = decide({"1": row(None, None), "2": row(25.0, 900.0)}, BASELINE)
    assert outcome.status == "refuted" and "never reaches 0.9" in outcome.summary


def test_undecided_until_both_held_out_seeds_are_measured():
    assert decide({"0": row(25.0, 457.0)}, BASELINE).status == "undecided"
    assert decide({"0": row(25.0, 457.0), "2": row(25.0, 900.0)}, BASELINE).status == "undecided"
    assert (
        decide({"1": row(25.0, 300.0), "2": row(25.0, 900.0)}, {**BASELINE, "3": None}).status == "undecided"
    )


def test_the_shipped_studies_are_read():
    import json

    seeds = json.loads(window.SEEDS.read_text())
    variants = json.loads(window.VARIANTS.read_text())
    baseline = window.baseline_breaks(seeds)
    assert len(baseline) == 5 and all(b is not None for b in baseline.values())
    rows = window.after_learning(variants)
    assert rows["0"]["learned_at"] == 25.0  # seed 0: 0.887 at 17, right from 25
    assert rows["0"]["break"] > max(baseline.values())

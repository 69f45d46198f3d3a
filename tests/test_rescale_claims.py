"""proofs_check.claims.rescale: is a model's break softmax dilution?  The rule is exercised on
made-up summaries in the schema ``training.studies.collect`` writes (per length,
``{"values": {seed: accuracy}}``), on both sides of every threshold."""

import json

import pytest

from proofs_check.claims.rescale import (
    MIN_MODELS,
    _decide,
    break_within_factor,
    decide,
    holds_everywhere,
    rescaled_models,
)

LENGTHS = [17, 50, 100, 200, 850]


def block(per_seed: dict) -> dict:
    return {
        "lengths": LENGTHS,
        "accuracy": [{"values": {s: curve[i] for s, curve in per_seed.items()}} for i in range(len(LENGTHS))],
    }


def summary(task: str, plain: dict, rescaled: dict) -> dict:
    return {
        "results": {
            "paper": {task: {"length": block(plain), "rescaled": block(rescaled)}},
            "scaled": {task: {"length": block(plain)}},
        }
    }  # no rescaled block: not a model here


GOOD, BROKEN = [1.0, 1.0, 0.95, 0.6, 0.2], [1.0, 1.0, 1.0, 0.97, 0.93]


def test_models_are_read_seed_by_seed_from_both_blocks():
    models = rescaled_models(summary("letter", {"0": GOOD, "1": GOOD}, {"0": BROKEN, "1": BROKEN}), "letter")
    assert sorted(models) == ["paper/letter/seed-0", "paper/letter/seed-1"]
    assert models["paper/letter/seed-1"]["rescaled"] == (LENGTHS, BROKEN)


@pytest.mark.parametrize(
    "rescaled, status",
    [
        ({s: [1.0, 1.0, 1.0, 0.95, 0.9] for s in "012"}, "verified"),  # 0.9 itself holds
        (
            {s: [0.8999999761581421, 1.0, 1.0, 1.0, 1.0] for s in "012"},
            "verified",
        ),  # and 180/200 through float32
        ({"0": [1.0] * 5, "1": [1.0] * 5, "2": [1.0, 1.0, 0.89, 1.0, 1.0]}, "refuted"),  # one dip refutes
        ({s: [1.0] * 5 for s in "01"}, "undecided"),  # too few models
    ],
)
def test_letter_rule(rescaled, status):
    models = rescaled_models(summary("letter", {s: GOOD for s in rescaled}, rescaled), "letter")
    outcome = decide(models, holds_everywhere, "x")
    assert outcome.status == status and MIN_MODELS == 3
    if status == "refuted":
        assert list(outcome.counterexample) == ["paper/letter/seed-2"]
        assert outcome.counterexample["paper/letter/seed-2"]["at"] == 100


def test_a_model_that_never_learned_is_left_out_and_named():
    plain = {"0": GOOD, "1": GOOD, "2": GOOD, "3": [0.5] * 5}
    models = rescaled_models(summary("letter", plain, {s: [1.0] * 5 for s in plain}), "letter")
    outcome = decide(models, holds_everywhere, "x")
    assert outcome.status == "verified" and outcome.evidence["left_out_never_learned"] == [
        "paper/letter/seed-3"
    ]
    assert outcome.summary.endswith("; 1 never learned, left out (paper/letter/seed-3)")


@pytest.mark.parametrize(
    "plain, rescaled, ok",
    [
        (
            [1.0, 1.0, 0.8, 0.5, 0.1],
            [1.0, 0.95, 0.85, 0.5, 0.1],
            True,
        ),  # breaks move from 100 to 100: ratio 1
        ([1.0, 0.8, 0.5, 0.3, 0.1], [1.0, 1.0, 0.95, 0.7, 0.1], False),  # 50 -> 200: ratio 4
        (
            [1.0, 1.0, 0.8, 0.5, 0.1],
            [1.0, 1.0, 1.0, 1.0, 1.0],
            False,
        ),  # never breaks with the scale: censored
        ([1.0] * 5, [1.0] * 5, True),  # never breaks either way
    ],
)
def test_number_rule_compares_breaks_within_a_factor_2(plain, rescaled, ok):
    model = {"plain": (LENGTHS, plain), "rescaled": (LENGTHS, rescaled)}
    assert break_within_factor(model)[0] is ok


def test_no_summary_is_undecided_and_a_summary_is_read(tmp_path):
    assert _decide("letter", holds_everywhere, "x", tmp_path / "absent.json").status == "undecided"
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary("number", {s: GOOD for s in "012"}, {s: GOOD for s in "012"})))
    assert _decide("number", break_within_factor, "x", path).status == "verified"
    assert _decide("letter", holds_everywhere, "x", path).status == "undecided"  # no letter model

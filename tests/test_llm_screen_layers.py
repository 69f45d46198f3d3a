"""Issue 32's pre-registered rules: Appendix H's screen before C12-local judges a model, and the
local/global layer claim (Fisher's exact test on heads classified by C11-llm's rule)."""

import json

import numpy as np
import pytest
from scipy.stats import fisher_exact

from proofs_check.claims import llm_layers, llm_local


def results(task: str, lengths: list, per_seed: dict) -> dict:
    return {
        "model": "m",
        "task": task,
        "seeds": [0, 1, 2],
        "lengths": lengths,
        "per_length": [{"length": L, "per_seed": per_seed[L]} for L in lengths],
    }


def write_model(folder, model, number, letter, screen=None):
    (folder / f"{model}_number.json").write_text(json.dumps(number))
    (folder / f"{model}_letter.json").write_text(json.dumps(letter))
    if screen is not None:
        (folder / f"{model}_screen.json").write_text(json.dumps(screen))


HIGH = {L: [0.9, 0.95, 1.0] for L in (12, 16, 24)}
LOW = {L: [0.1, 0.2, 0.15] for L in (12, 16, 24)}


@pytest.mark.parametrize(
    "screen_values, passes",
    [
        ([0.85, 0.85, 0.85], True),  # exactly the paper's 85%
        ([0.84, 0.85, 0.85], False),  # mean 0.8467
        ([1.0, 1.0, 0.55], True),  # mean 0.85: the mean decides, not each seed
    ],
)
def test_the_screen_is_the_mean_over_seeds_at_length_16(tmp_path, screen_values, passes):
    write_model(
        tmp_path,
        "gemma3",
        results("number", [12, 24], LOW),
        results("letter", [12, 24], HIGH),
        screen=results("letter", [16], {16: screen_values}),
    )
    outcome = llm_local.decide_screened(tmp_path)
    assert outcome.evidence["screens"]["gemma3"]["passes"] is passes
    if passes:  # judged: letter well above number in every seed
        assert outcome.status == "verified" and "gemma3" in outcome.evidence["per_model"]
    else:
        assert outcome.status == "undecided" and "no model passes the screen" in outcome.summary
        assert "gemma3" in outcome.evidence["screened_out"]


def test_a_model_is_judged_only_when_screened_and_the_letter_file_may_hold_the_screen_length(tmp_path):
    write_model(
        tmp_path, "smollm2", results("number", [12, 16, 24], HIGH), results("letter", [12, 16, 24], LOW)
    )
    outcome = llm_local.decide_screened(tmp_path)  # no screen file: the letter run at 16 (low) screens it out
    assert outcome.evidence["screens"]["smollm2"] == {
        "accuracy": pytest.approx(0.15),
        "seeds": 3,
        "parse_rate": None,  # the fake run records none
        "source": "smollm2_letter.json",
        "passes": False,
    }
    write_model(
        tmp_path,
        "gemma3",
        results("number", [12, 24], HIGH),
        results("letter", [12, 24], HIGH),
        screen=results("letter", [16], {16: [0.9, 0.9, 0.9]}),
    )
    judged = llm_local.decide_screened(tmp_path)
    assert set(judged.evidence["per_model"]) == {"gemma3"}  # smollm2 screened out, gemma3 judged
    write_model(
        tmp_path,
        "gemma3",
        results("number", [12, 24], HIGH),
        results("letter", [12, 24], LOW),
        screen=results("letter", [16], {16: [0.9, 0.9, 0.9]}),
    )
    assert llm_local.decide_screened(tmp_path).status == "refuted"  # letter below number in the judged model


def test_no_screen_length_means_not_screened(tmp_path):
    write_model(tmp_path, "smollm2", results("number", [12, 24], LOW), results("letter", [12, 24], HIGH))
    outcome = llm_local.decide_screened(tmp_path)
    assert outcome.status == "undecided" and "not screened" in outcome.summary


def analysis(kinds_per_layer: list, layer_types: list) -> dict:
    """A head analysis whose heads classify as the given kinds ("positional", "symbolic", "sink", "mixed")."""
    score = {
        "positional": (0.9, 0.1, 0.1),
        "symbolic": (0.1, 0.9, 0.1),
        "sink": (0.9, 0.1, 0.9),
        "mixed": (0.9, 0.9, 0.1),
    }
    grid = [[score[k] for k in layer] for layer in kinds_per_layer]
    pick = lambda i: [[h[i] for h in layer] for layer in grid]  # noqa: E731
    ids = [[1] * len(layer) for layer in kinds_per_layer]
    return {
        "per_head": {"positional": pick(0), "symbolic": pick(1), "sink": pick(2)},
        "frequency": {"dominant_id": ids, "weighted_id": ids, "layer_kind": layer_types},
    }


def test_the_layer_table_counts_positional_and_other_heads_and_leaves_sinks_out():
    a = analysis(
        [["positional", "positional", "sink", "mixed"], ["symbolic", "positional", "sink", "sink"]],
        ["sliding", "full"],
    )
    assert llm_layers.layer_table(a) == [[2, 1], [1, 1]]
    with pytest.raises(ValueError, match="layer_kind"):
        llm_layers.layer_table({**a, "frequency": {**a["frequency"], "layer_kind": ["sliding", "global"]}})


@pytest.mark.parametrize(
    "table, status",
    [
        ([[30, 10], [1, 11]], "verified"),  # positional heads gather in sliding layers
        ([[5, 35], [10, 2]], "refuted"),  # they gather in full layers
        ([[10, 10], [5, 5]], "undecided"),
    ],
)
def test_fisher_rule_in_both_directions(table, status):
    row = llm_layers.fisher_row(table)
    assert row["p_more"] == pytest.approx(fisher_exact(table, alternative="greater").pvalue)
    assert llm_layers.decide({"number": row, "letter": row}) == status
    other = llm_layers.fisher_row([[10, 10], [5, 5]])  # every task must show it to verify
    assert llm_layers.decide({"number": row, "letter": other}) == (
        "undecided" if status == "verified" else status
    )


def test_the_claim_reads_a_folder_and_says_what_is_missing(tmp_path):
    assert "missing" in llm_layers.check_folder(tmp_path).summary
    layers = [["positional"] * 4] * 5 + [["symbolic"] * 4]
    for task in ("number", "letter"):
        (tmp_path / f"analysis_{task}.json").write_text(
            json.dumps(analysis(layers * 3, (["sliding"] * 5 + ["full"]) * 3))
        )
    outcome = llm_layers.check_folder(tmp_path)
    assert (
        outcome.status == "verified"
        and "positional 60 of 60 heads in sliding layers vs 0 of 12" in outcome.summary
    )
    assert np.isclose(
        outcome.evidence["per_task"]["letter"]["p_more"],
        fisher_exact([[60, 0], [0, 12]], alternative="greater").pvalue,
    )


def test_a_model_with_only_its_letter_run_is_screened_but_never_judged(tmp_path):
    (tmp_path / "gemma3_letter.json").write_text(json.dumps(results("letter", [12, 16, 24], LOW)))
    outcome = llm_local.decide_screened(tmp_path)
    assert (
        outcome.status == "undecided"
        and "gemma3: 0.150 at length 16 over 3 seeds (parse rate not recorded), screened out"
        in outcome.summary
    )
    (tmp_path / "gemma3_letter.json").write_text(json.dumps(results("letter", [12, 16, 24], HIGH)))
    passed = llm_local.decide_screened(tmp_path)
    assert passed.status == "undecided" and passed.evidence["passed_without_both_tasks"] == ["gemma3"]

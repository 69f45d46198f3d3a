"""The paper items of issue 30, section 5: each claim reaches its recorded outcome, and each
check can fail (a perturbed definition, input, number, data or rule changes its outcome)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from proofs_check.claims import coverage_costs as costs
from proofs_check.claims import coverage_numbers as numbers
from proofs_check.claims import coverage_text as text
from proofs_check.claims import coverage_trained as trained
from proofs_check.claims import table1
from proofs_check.registry import REGISTRY, Options
from theory import paper_data

SEEDS = Path(__file__).resolve().parents[1] / "training" / "reference" / "seeds" / "paper"
DECIDED_FROM_TEXT = (
    "B1-formal",
    "B1-formal-corrected",
    "F3B-proper",
    "F5A-theta",
    "S36-53x",
    "R32-separation",
    "T4-totals",
    "T4-cost",
    "F3A-flow-copy",
)
OVER_SEEDS = (
    "F3A-flow-attend",
    "S33-last-symbolic-L11",
    "S31-start-high",
    "F2C-steps",
    "F7-gamma-shift",
    "MD-over-seeds",
    "C11",
)


@pytest.mark.parametrize("claim_id", DECIDED_FROM_TEXT + OVER_SEEDS)
def test_each_new_claim_reaches_its_recorded_outcome(claim_id):
    claim = REGISTRY[claim_id]
    outcome = claim.check(Options())
    assert outcome.status == claim.recorded, outcome.summary
    assert outcome.summary and outcome.evidence


@pytest.mark.parametrize("claim_id", OVER_SEEDS[:-1])
def test_trained_coverage_rules_say_they_are_not_pre_registered(claim_id):
    evidence = REGISTRY[claim_id].check(Options()).evidence
    assert evidence["aggregate"]["n_seeds"] == 5 and "over seeds" in evidence["status_rule"]
    assert all("NOT pre-registered" in seed["evidence"]["rule_fixed"] for seed in evidence["seeds"].values())


# -- Appendix B.1 -----------------------------------------------------------------------------------


def test_b1_as_written_fails_on_figure_1_and_the_corrected_reading_holds():
    wrong = text.b1_outcome(text.b1_as_written)
    assert wrong.status == "refuted"
    end = wrong.evidence["figure_1"]["at_chain_end"]
    assert wrong.evidence["figure_1"]["k_HL"] == 2 and "= 0 (allowed 1..3)" in end["condition_2_as_written"]
    assert end["f_as_written"].endswith("= A") and end["f_kept_position"].endswith("= C")
    right = text.b1_outcome(text.b1_corrected)
    assert (
        right.status == "verified"
        and right.evidence["total"]["agree"] == right.evidence["total"]["figure_answers"]
    )


@pytest.mark.parametrize(
    "mutant",
    [
        lambda s, j: {hl: a for hl, a in text.b1_corrected(s, j).items() if hl < 3},  # drops long chains
        lambda s, j: {hl + 1: a for hl, a in text.b1_corrected(s, j).items()},  # miscounts hops
        lambda s, j: {hl: s[0] for hl in text.b1_corrected(s, j)},  # always the first symbol
    ],
)
def test_b1_check_catches_a_wrong_definition(mutant):
    assert text.b1_outcome(mutant).status == "refuted"


# -- Figure 3B, Figure 5A, 53x, Remark 3.2, Table 4 --------------------------------------------------


def test_figure_3b_is_improper_at_9_12_14_and_a_proper_input_passes():
    outcome = text.proper_outcome(paper_data.WORKED_EXAMPLES[3][2])
    assert outcome.status == "refuted"
    assert sorted(outcome.evidence["positions_without_a_unique_match"]) == [9, 12, 14]
    assert text.proper_outcome(paper_data.WORKED_EXAMPLES[1][2]).status == "verified"


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        ({}, "refuted"),
        ({"printed": "0.87"}, "verified"),
        ({"printed": "0.87", "retrieval": "0.0028"}, "refuted"),
    ],
)
def test_figure_5a_theta_against_the_rope_angle(kwargs, expected):
    assert numbers.theta_outcome(**kwargs).status == expected


@pytest.mark.parametrize(
    "kwargs,expected", [({}, "refuted"), ({"printed": 50}, "verified"), ({"training": 16}, "verified")]
)
def test_fifty_three_times(kwargs, expected):
    outcome = numbers.multiple_outcome(**kwargs)
    assert outcome.status == expected and outcome.evidence["ratio"] in ("50", "425/8")


def test_remark_32_separation_fails_when_the_range_shows_no_decay():
    outcome = numbers.separation_outcome()
    assert outcome.status == "verified"
    assert (
        outcome.evidence["readings"]["inf"]["n_where_retrieval_above_index"] == 0
    )  # a decay, not a level, separation
    assert numbers.separation_outcome(n_max=3).status == "refuted"


def test_table4_totals_and_a_wrong_total():
    assert costs.totals_outcome().status == "verified"
    table = copy.deepcopy(paper_data.TABLE4)
    table["training_total_time"] = (55, 59)
    assert costs.totals_outcome(table).status == "refuted"


def test_table4_cost_ratios_come_from_the_shipped_files():
    outcome = costs.cost_outcome()
    assert outcome.status == "undecided" and "reason_undecided" in outcome.evidence
    record = json.loads((SEEDS / "number" / "seed-3" / "train.json").read_text())
    assert outcome.evidence["rows"]["number"]["our_training_seconds"]["seed-3"] == record["seconds"]
    assert outcome.evidence["rows"]["number"]["ours_over_paper"]["seed-3"] == round(
        record["seconds"] / 1710, 3
    )
    table = copy.deepcopy(paper_data.TABLE4)
    table["training_time"]["number"] = (57, 0)
    assert costs.cost_outcome(table).evidence["rows"]["number"]["ours_over_paper"]["seed-3"] == round(
        record["seconds"] / 3420, 3
    )


# -- the trained items, one seed at a time ------------------------------------------------------------


@pytest.fixture(scope="module")
def seed0():
    return {
        task: json.loads((SEEDS / task / "seed-0" / "analysis.json").read_text())
        for task in ("number", "letter")
    }


def _with(data, edit):
    out = copy.deepcopy(data)
    edit(out)
    return out


def test_flow_attend_on_seed_0_and_a_layer_that_looks_elsewhere(seed0):
    assert trained.flow_attend({"number": seed0["number"]}).status == "verified"

    def blind(a):
        a["index_geometry_layers"][3]["attends_target_fraction"] = 0.3

    assert trained.flow_attend({"number": _with(seed0["number"], blind)}, share=0.643).status == "refuted"
    assert (
        trained.flow_attend({"number": seed0["number"]}, share=1.0).status == "undecided"
    )  # layer 0 below 0.9


def test_last_symbolic_head_in_layer_11(seed0):
    assert trained.last_symbolic_layer(seed0).status == "verified"

    def later(a):
        a["purity"]["0.1"]["pure_from_step"][5] = 5000

    def positional(a):
        a["purity"]["0.1"]["kind"][11] = "positional"

    for edit in (later, positional):
        assert trained.last_symbolic_layer({"letter": _with(seed0["letter"], edit)}).status == "refuted"


def test_scores_start_high(seed0):
    assert trained.start_high(seed0).status == "verified"

    def low(a):
        a["scores"]["symbolic"][0][4] = 0.5

    assert trained.start_high({**seed0, "number": _with(seed0["number"], low)}).status == "refuted"


def test_positional_purity_in_steps(seed0):
    assert trained.purity_steps(seed0).status == "verified"

    def at_once(a):
        block = a["purity"]["0.1"]
        block["pure_from_step"] = [
            None if k != "positional" and s is None else (2500 if k == "positional" else s)
            for s, k in zip(block["pure_from_step"], block["kind"])
        ]

    assert trained.purity_steps({"number": _with(seed0["number"], at_once)}).status == "refuted"


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b["pure_from_step"].__setitem__(6, 5000),  # shifted by 2000 steps
        lambda b: b["pure_from_step"].__setitem__(6, None),
    ],
)  # never pure at 0.05
def test_gamma_shift(seed0, edit):
    assert trained.gamma_shift(seed0).status == "verified"
    mutated = _with(seed0["number"], lambda a: edit(a["purity"]["0.05"]))
    assert trained.gamma_shift({**seed0, "number": mutated}).status == "refuted"


def test_measured_discrepancy_follows_theory(seed0):
    assert trained.measured_gaps_follow_theory(seed0).status == "verified"

    def flip(a):
        for row in a["measured_discrepancy"]["layers"][:8]:
            row["agrees_with_theory"] = False if row["agrees_with_theory"] is not None else None

    assert (
        trained.measured_gaps_follow_theory({**seed0, "letter": _with(seed0["letter"], flip)}).status
        == "refuted"
    )
    missing = _with(seed0["letter"], lambda a: a.pop("measured_discrepancy"))
    outcome = trained.measured_gaps_follow_theory({**seed0, "letter": missing})
    assert outcome.status == "undecided" and "python -m training analyze" in outcome.summary


def test_c11_verdict_is_reported_across_thresholds(seed0):
    evidence, said = table1._thresholds({"seed-0": seed0})
    assert len(evidence["grid"]) == 25 and "across 25 thresholds" in said
    assert evidence["grid"]["within 3 IDs on >= 10 of 12 layers"]["status"] == "refuted"

    def as_table1(a):
        ids = [frequency_id for frequency_id, _ in paper_data.TABLE1[a["task"]]]
        a["frequency"]["weighted_id"] = [float(x) for x in ids]

    exact = {task: _with(data, as_table1) for task, data in seed0.items()}
    evidence, _ = table1._thresholds({"seed-0": exact})
    assert evidence["counts"] == {"verified": 25, "refuted": 0, "undecided": 0}

"""Issue 42 B: the paper-defect claims (paper_defects, paper_defects_text, paper_defects_trained),
each against an independent computation and a real mutant of its math."""

from __future__ import annotations

import copy
import math
from fractions import Fraction

import numpy as np
import pytest

import proofs_check.claims  # noqa: F401  (registers the claims)
from constructions.index import number_task
from constructions.retrieval import LETTER_ALPH, RetrievalConstruction, letter_task
from proofs_check.claims import paper_defects as PD
from proofs_check.claims import paper_defects_text as PT
from theory import listing1
from theory.discrepancy_retrieval import omega_of


# -- Remark 3.1 -----------------------------------------------------------------------------------
def test_position_spread_matches_the_closed_form():
    n0 = 5
    con = letter_task(n0)
    theta, omega = math.pi / (4 * 4 * n0), math.pi / 4  # letter_task's default omega/(4 n0)
    spread = PD.position_spread(con, range(1, n0))
    ts = range(1, n0)
    assert spread["matching_key"] == pytest.approx(math.cos(theta) - math.cos((n0 - 1) * theta))
    independent = max(
        max(math.cos(r * omega + t * theta) for t in ts) - min(math.cos(r * omega + t * theta) for t in ts)
        for r in range(-7, 8)
    )
    assert spread["any_key"] == pytest.approx(
        independent
    )  # a mutant without c_omega would give the matching value
    assert spread["any_key"] > spread["matching_key"]
    assert PD.position_spread(con, range(1, n0), theta=0.0)["any_key"] == 0.0


def test_retrieval_head_claim_and_theta_zero():
    out = PD.symbolic_outcome(n0=5)
    assert out.status == "refuted"
    assert out.evidence["theta_zero"]["outputs"][-1] is None  # a2 a1: a tie at theta = 0
    assert PD.letter_task(5).forward([("a", 2), ("a", 1)])[0][-1] == ("a", 1)  # the real angle decodes a1
    assert PD.symbolic_outcome(n0=5, theta=Fraction(1)).status == "undecided"  # not exact there: untested


# -- F.2.2 ----------------------------------------------------------------------------------------
def test_theta_equal_omega_errs_and_the_paper_regime_does_not():
    out = PD.omega_angle_outcome(sizes=range(2, 4), m=2, n=2)
    assert out.status == "refuted" and not any(out.evidence["exact_by_alph"].values())
    bad = out.counterexample
    assert bad["got"] != bad["expected"]
    assert RetrievalConstruction(
        LETTER_ALPH[:3], 2, omega_of(3) * Fraction(1, 8), 2
    ).is_exact()  # omega/(4 n0)


def test_step_two_spread_is_one_minus_cos():
    out = PD.attended_equally_outcome(n0=4)
    theta = math.pi / 64  # omega/(4 n0), n0 = 4
    assert out.status == "refuted"
    assert out.evidence["last_row_range_by_length_2_to_n0"]["a1 ... a1"][0] == pytest.approx(
        1 - math.cos(theta)
    )


# -- F.2.1 Case 1 -----------------------------------------------------------------------------------
def test_case_one_residual_and_the_mutant_value_map():
    assert PD.case1_outcome(number_task(5)).status == "refuted"
    con = number_task(5)
    con.weights().value[-1, -1] = 2  # a W_V that also doubles the constant coordinate: then R = 3E
    assert PD.case1_outcome(con).status == "verified"


# -- Section 3.4 ----------------------------------------------------------------------------------
def test_single_frequency_angle_one():
    out = PD.single_frequency_outcome(n0s=range(2, 4))
    assert out.status == "refuted" and out.evidence["g_1"] == 1.0
    assert (
        PD.single_frequency_outcome(alph=("a", "b"), m=2, n0s=range(2, 4)).status == "verified"
    )  # |ALPH| = 2


# -- Listing 1 ------------------------------------------------------------------------------------
def test_listing_wraps_and_a_bounds_checked_listing_agrees():
    assert listing1.index(["1", "A"]) == ["A", "A"]  # seq[0 - 1] is the last token
    assert PD.listing_index_outcome(n_max=3).status == "refuted"

    def checked(seq):
        seq, out = list(seq), list(seq)
        for n, x in enumerate(seq):
            if isinstance(x, int) and n - x >= 0 and isinstance(seq[n - x], str):
                out[n] = seq[n - x]
        return out

    assert PD.listing_index_outcome(listing=checked, n_max=3).status == "verified"


def test_listing_retrieval_takes_the_first_match():
    seq = ["a1", "a2", "ba"]  # not proper: Definition F.2 is undefined at position 2
    assert listing1.retrieval(seq)[-1] == "a1"


# -- Section 3.2, Appendix E, Figures 2C/7, Section 3.6 --------------------------------------------
def test_decomposition_undefined_off_proper_inputs():
    out = PT.decomposition_outcome(count=80)
    assert out.status == "refuted" and out.evidence["listing_1_first_match_right"] == 80
    assert out.evidence["proper"] == out.evidence["decomposition_defined"] < 80
    assert PT.decomposition_outcome(count=80, definition=listing1.retrieval).status == "verified"


def test_gamma_shape_and_figure_labels():
    assert PT.gamma_shape_outcome().status == "refuted"
    same = copy.deepcopy(PT.FIGURE_LABELS)
    same["figure_7_gamma_0.05"] = same["figure_7_gamma_0.1"]
    assert PT.gamma_shape_outcome(same).status == "verified"
    assert PT.figure_2c_outcome().status == "refuted"
    same = copy.deepcopy(PT.FIGURE_LABELS)
    same["figure_2c"] = same["figure_7_gamma_0.1"]
    assert PT.figure_2c_outcome(same).status == "verified"


def test_second_layer_and_weighted_angle():
    out = PT.second_layer_outcome()
    assert out.status == "refuted" and out.evidence["with_row_angle"]["n0_max"] == math.floor(
        (math.pi / 4) / (2 * 0.0115)
    )
    table = {"letter": [(18, "0.0866"), (42, "0.0027")] + PT.paper_data.TABLE1["letter"][2:]}
    assert PT.second_layer_outcome(table=table).status == "verified"
    w = np.zeros(64)
    w[1] = 1.0
    assert PT.weighted_angle(w) == pytest.approx(10000 ** (-2 / 128))


# -- trained models ---------------------------------------------------------------------------------
def test_signed_swap_weights_differ_from_the_absolute_value():
    from theory.scores import _swap_weights

    d_a, d_b = np.array([[0.1, 0.7, 0.2]]), np.array([[0.6, 0.1, 0.2]])
    absolute = _swap_weights(d_a, d_b, 0.1)
    signed, reversed_ = (
        _swap_weights(d_a, d_b, 0.1, "signed"),
        _swap_weights(d_a, d_b, 0.1, "signed_reversed"),
    )
    assert np.allclose(absolute, _swap_weights(d_b, d_a, 0.1))
    assert signed.argmax() == 1 and reversed_.argmax() == 0 and not np.allclose(signed, reversed_)
    with pytest.raises(ValueError, match="form"):
        _swap_weights(d_a, d_b, 0.1, "square")


def test_signed_alpha_on_the_shipped_letter_model():
    from proofs_check.claims.paper_defects_trained import REFERENCE, signed_outcome

    out = signed_outcome(runs={"letter": REFERENCE["letter"]})
    rows = out.evidence["per_model"]["letter"]
    assert out.status == "refuted" and rows["absolute"]["kind"] != rows["signed"]["kind"]


def test_ablation_is_real_and_layer_eleven_is_not_needed():
    from proofs_check.claims.paper_defects_trained import (
        REFERENCE,
        ablated,
        needed_outcome,
    )
    from training.run.weights import load_model
    from training.tasks.definitions import get_task

    model, batch = load_model(REFERENCE["letter"]), get_task("letter").generate(40, 3)
    assert (
        max(ablated(model, range(12), batch).values()) < 0.5
    )  # a mutant ablation that changes nothing fails here
    assert needed_outcome(count=40).status == "refuted"


def _analysis(pure_positional: int, hop4: float = 1.0) -> dict:
    return {
        "steps": [0, 5000],
        "best_step": 5000,
        "purity": {"0.1": {"count_positional": [0, pure_positional]}},
        "validation": [{"step": 5000, "per_hop": {"1": 1.0, "2": 1.0, "3": 1.0, "4": hop4}}],
        "layer_kind": {"kind": ["index"] * pure_positional},
    }


def test_positional_per_hop_rule():
    from proofs_check.claims.paper_defects_trained import positional_per_hop

    assert positional_per_hop({"number": _analysis(4)}).status == "verified"
    assert positional_per_hop({"number": _analysis(3)}).status == "refuted"
    assert positional_per_hop({"number": _analysis(3, hop4=0.5)}).status == "verified"  # solves 3 hops only


def test_strict_last_symbolic_rule():
    from proofs_check.claims.paper_defects_trained import last_symbolic_strict

    def found(pure_from):
        return {"letter": {"purity": {"0.1": {"pure_from_step": pure_from, "kind": ["symbolic"] * 12}}}}

    tied = [1000] * 10 + [2000, 2000]
    alone = [1000] * 11 + [2000]
    assert last_symbolic_strict(found(tied)).status == "refuted"
    assert last_symbolic_strict(found(alone)).status == "verified"


# -- C7-index's m-reduction -----------------------------------------------------------------------
def test_m_reduction_and_a_mutant_L(monkeypatch):
    from proofs_check.claims import discrepancy

    assert discrepancy._m_reduction("sup", m_max=4, n_max=12, angles=("1", "2*pi/5"))["failure_count"] == 0
    monkeypatch.setattr(discrepancy, "enumerated_L", lambda n, m: n - 1)  # the min reading's L under sup
    assert discrepancy._m_reduction("sup", m_max=4, n_max=12, angles=("1", "2*pi/5"))["failure_count"] > 0


# -- P-break-relative's informative members ----------------------------------------------------------
def test_informative_members_leave_out_every_censored_member():
    from proofs_check.claims.premise import decide_held_out

    def member(p, m):
        return {"predicted": {"relative": {"break": p}}, "measured": m, "last_length": 5000}

    members = {
        f"r{k}/letter/seed-0": member(p, m)
        for k, (p, m) in enumerate(
            [(50, 60), (70, 65), (90, 120), (None, None), (None, None), (None, 80), (40, 45)]
        )
    }
    out = decide_held_out(members, seen=frozenset())
    assert out.evidence["informative_members"]["n"] == 4
    assert out.evidence["comparison"]["n"] == 7

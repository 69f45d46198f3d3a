"""Issue 30, section 3: per-claim mutation tests.  Each runs the REGISTERED check of a claim with a
real mutant of the code it checks monkeypatched in, and asserts that the claim's own outcome is no
longer its recorded status (before issue 30 each of these passed its check and was caught only by
unit tests)."""

import math

import pytest

import proofs_check.claims  # noqa: F401  (registers the checks)
from proofs_check.evidence import brute_index
from proofs_check.registry import REGISTRY, Options
from theory.brute_index import tied_differences


def _run(claim_id):
    return REGISTRY[claim_id].check(Options())


# ---- M1: C5 with the (n0 - 1) factor dropped from beta (or beta 20% low) ------------------------------
def _beta_without_n0(gap, n0, spread, delta):
    return math.inf if gap is None or gap <= 0 else max(0.0, math.log(spread / delta)) / float(gap)


def _beta_low(gap, n0, spread, delta):
    return math.inf if gap is None or gap <= 0 else 0.8 * math.log((n0 - 1) * spread / delta) / float(gap)


@pytest.fixture
def fresh_reports(monkeypatch):
    """The constructions' temperature reports are cached per process: start the mutant run empty."""
    from proofs_check.claims import constructions

    monkeypatch.setattr(constructions, "_REPORTS", {})


def test_C5_check_rejects_beta_without_the_n0_minus_1_factor(monkeypatch, fresh_reports):
    import constructions.temperature as temperature

    monkeypatch.setattr(temperature, "sufficient_beta", _beta_without_n0)
    outcome = _run("C5")  # the whole registered check (about 10 s)
    assert REGISTRY["C5"].recorded == "verified" and outcome.status != "verified"
    first = outcome.counterexample  # T_Index, n0 = 17: the formula's beta beside the mutant's
    assert first["construction"] == "IndexConstruction" and first["n0"] == 17 and not first["agrees"]
    assert first["formula_beta"] == pytest.approx(61.5877, abs=1e-3)
    assert first["reported_beta"] == pytest.approx(61.5877 * math.log(4) / math.log(64), rel=1e-6)  # 20.5
    assert str(first["formula_beta"]) in outcome.summary and str(first["reported_beta"]) in outcome.summary


def test_C5_formula_comparison_rejects_a_beta_20_percent_low(monkeypatch, fresh_reports):
    import constructions.temperature as temperature
    from constructions.index import number_task
    from proofs_check.claims.constructions import construction_report
    from proofs_check.claims.lemma_f1 import _formula_rows

    monkeypatch.setattr(temperature, "sufficient_beta", _beta_low)
    row = _formula_rows([construction_report(number_task(17))])[0]
    assert not row["agrees"] and row["reported_beta"] == pytest.approx(0.8 * row["formula_beta"])


def test_C5_short_inputs_alone_catch_the_dropped_factor(monkeypatch, fresh_reports):
    """The margin bound at n < n0 (informative there) is failed by softmax at the mutant's beta,
    independently of the formula comparison."""
    import constructions.temperature as temperature
    from proofs_check.claims.lemma_f1 import _short_margins

    monkeypatch.setattr(temperature, "sufficient_beta", _beta_without_n0)
    rows = _short_margins((17,))
    assert any(r["wrong"] for r in rows if r["label"].startswith("worst inputs of length 2"))


# ---- M2: C7-index-sup-corrected with index_L('sup') returning n - 1 ---------------------------------
def test_C7_index_sup_corrected_check_rejects_L_equal_n_minus_1(monkeypatch):
    import theory.discrepancy_index as module
    from proofs_check.claims import discrepancy

    original = module.index_L

    def mutant(n, reading, m=16):
        return n - 1 if reading == "sup" else original(n, reading, m)

    monkeypatch.setattr(module, "index_L", mutant)  # where index_discrepancy and the blocks look it up
    monkeypatch.setattr(discrepancy, "index_L", mutant)  # the claim module's imported name
    outcome = _run("C7-index-sup-corrected")
    assert REGISTRY["C7-index-sup-corrected"].recorded == "verified" and outcome.status != "verified"
    assert outcome.evidence["L_agreement"]["failure_count"]
    assert not any(r["attained"] for r in outcome.evidence["sharpness_large_n"])


# ---- M3: C13 with the right-hand side doubled ---------------------------------------------------------
def test_C13_check_rejects_a_doubled_rhs(monkeypatch):
    import theory.impossibility as module
    from proofs_check.claims import impossibility

    original = module.exclusion_terms

    def mutant(M):
        terms = original(M)
        terms["rhs"] = 2 * terms["rhs"]
        terms["ratio"] = terms["var"] / terms["rhs"] if terms["rhs"] else None
        return terms

    monkeypatch.setattr(module, "exclusion_terms", mutant)
    monkeypatch.setattr(impossibility, "exclusion_terms", mutant)
    outcome = _run("C13")
    assert REGISTRY["C13"].recorded == "verified" and outcome.status != "verified"
    assert (
        outcome.evidence["additive_ratios"] == ["1/2"] * 4
        and outcome.evidence["rhs_against_closed_form_mismatches"]
    )


# ---- C6-index: a "symbolic" head that leaks position must fail the check -------------------------------
def test_C6_index_check_rejects_a_head_that_sees_positions(monkeypatch):
    from proofs_check.claims import impossibility

    original = impossibility.symbolic_head_output
    monkeypatch.setattr(
        impossibility,
        "symbolic_head_output",
        lambda x, W_Q, W_K, W_V, theta=None: original(x, W_Q, W_K, W_V, 0.3 if theta is None else theta),
    )
    assert _run("C6-index").status != REGISTRY["C6-index"].recorded


# ---- C4-index-literal-corrected: a wrong condition is rejected by the brute force ---------------------
@pytest.mark.parametrize(
    "condition",
    [
        lambda theta, m, n0: (
            not tied_differences(theta, brute_index.stated_d_max(m, n0))
        ),  # the package reading's
        lambda theta, m, n0: brute_index.stated_literal_condition(
            theta, min(m, 2), n0
        ),  # rising up to 2 only
    ],
    ids=["valid_inputs_condition", "rising_up_to_2"],
)
def test_C4_index_literal_corrected_check_rejects_a_wrong_condition(condition):
    assert brute_index.check_literal(condition=condition)["mismatch_count"]


def test_C4_index_literal_windows_are_exact():
    from fractions import Fraction as F

    assert brute_index.rising_windows(3) == [(F(1, 3), F(2, 5)), (F(3, 5), F(2, 3))]
    assert brute_index.rising_windows(4) == []

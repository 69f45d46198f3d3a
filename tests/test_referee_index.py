"""Issue 16, Index half: the brute force of theory.brute_index against the real construction,
a randomized search (hypothesis) over angles and lengths at every threshold of the package's
statements about T_Index, and one mutation test per claim: a wrong formula, or a perturbed
input, that the claim's check must reject."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs_check.evidence import brute_index
from theory.brute_index import (
    CosineOrder,
    average_hard_errors,
    reading_gap,
    tied_differences,
    valid_prefixes,
)
from theory.functions import index
from theory.phases import Angle


# ---- angles: rational multiples of 2 pi (ties), tiny shifts off them, theta > pi, tiny theta ----------
@st.composite
def angles(draw, q=None):
    """theta = 2 pi p/q (p/q in [0, 2): beyond pi and 2 pi too), or 1e-6..1e-15 off it, or a tiny
    or rational theta; ``q`` pins the denominator at a statement's threshold."""
    q = max(1, q) if q is not None else draw(st.integers(1, 13))
    p = draw(st.integers(0, 2 * q - 1))
    kind = draw(st.sampled_from(["exact", "exact", "near", "tiny", "rational"]))
    if kind == "tiny":
        return Angle(Fraction(1, 10 ** draw(st.integers(3, 12))))
    if kind == "rational":
        return Angle(Fraction(draw(st.integers(1, 700)), 100))
    shift = Fraction(draw(st.sampled_from([-1, 1])), 10 ** draw(st.integers(6, 15))) if kind == "near" else 0
    return Angle(shift, Fraction(2 * p, q))


def _turns_q(theta: Angle):
    return None if theta.rational else (theta.pi_multiple / 2).denominator


# ---- the brute force is the real T_Index -------------------------------------------------------------
@pytest.mark.parametrize("letters, m, n0, theta", [(2, 2, 6, "2*pi/3"), (3, 1, 5, "pi/2"), (2, 1, 5, "0.8")])
def test_brute_force_errs_exactly_where_the_construction_does(letters, m, n0, theta):
    from constructions.exact import exact_hard
    from constructions.index import IndexConstruction

    model = IndexConstruction(list("ABC")[:letters], m, theta, n0)
    wrong = 0
    for length in range(1, n0 + 1):
        tokens = [
            [("ABC"[t] if t < letters else int(t - letters + 1)) for t in row]
            for row in valid_prefixes(letters, m, length)
        ]
        out, _ = exact_hard(model, np.array([model.ids(t) for t in tokens]))
        wrong += int(sum(o[-1] != model.token_id[index(t)[-1]] for o, t in zip(out, tokens)))
    assert average_hard_errors(theta, letters, m, n0)["errors"] == wrong


def test_n0_at_most_m_leaves_no_valid_input():
    """Why C4-index-corrected now asks m < n0: otherwise its 'iff' is vacuous (pi ties at D = 2)."""
    run = average_hard_errors("pi", 2, 3, 3)
    assert run["vacuous"] and run["positions"] == 0 and tied_differences("pi", 3) == [2]


# ---- randomized search at every threshold ------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(1, 3), st.integers(0, 3), st.integers(-1, 1))
def test_exactness_iff_no_tie_up_to_d_max(data, m, extra, around):
    n0 = m + 1 + extra  # n0 = m + 1 (Definition F.1's first length) .. m + 4
    theta = data.draw(angles(q=max(m, n0 - 2) + around))  # a tie period at and around D_max
    exact = average_hard_errors(theta, 2, m, n0)["errors"] == 0
    assert exact == (not tied_differences(theta, max(m, n0 - 2))), (str(theta), m, n0)


@settings(max_examples=60, deadline=None)
@given(angles(), st.sampled_from([1, 3, 16]), st.integers(-1, 2))
def test_unique_top_iff_no_denominator_below_n0(theta, m, around):
    q = _turns_q(theta)
    n0 = max(m + 1, (q or 5) + around)  # n0 at and around q + 1, where the first tie appears
    order = CosineOrder(theta, n0)
    tied = any(reading_gap(order, n, m, "min").is_zero for n in range(2, n0 + 1))
    assert tied == (q is not None and q <= n0 - 1), (str(theta), m, n0)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 5, 16]), st.integers(-2, 2), st.integers(-1, 1))
def test_sup_corrected_bound_at_the_L_switch(data, m, around, near):
    n = max(2, 2 * m + 1 + around)  # where max(ceil((n-1)/2), n-1-m) switches term
    L = brute_index.stated_L(n, m)
    theta = data.draw(angles(q=L + 1 + near))  # at and around the sharp angle 2 pi/(L+1)
    order = CosineOrder(theta, n, extra=[Angle(pi_multiple=Fraction(2, L + 1))])
    gap = reading_gap(order, n, m, "sup")
    assert brute_index._not_above(order, gap, theta)
    assert brute_index._not_above(order, gap, Angle(pi_multiple=Fraction(2, L + 1)))


@settings(max_examples=60, deadline=None)
@given(angles(), st.integers(-1, 2))
def test_min_reading_bound_and_lambda_around_the_first_tie(theta, around):
    n = max(2, (_turns_q(theta) or 7) + around)  # n - 1 at and around q
    order = CosineOrder(theta, n, extra=[Angle(pi_multiple=Fraction(2, n))])
    low, lam = reading_gap(order, n, 3, "min"), reading_gap(order, n, 3, "inf")
    assert brute_index._not_above(order, low, theta) and brute_index._not_above(
        order, low, Angle(pi_multiple=Fraction(2, n))
    )
    constant = bool(tied_differences(theta, 1))
    assert (lam.second == low.second) == (constant or not tied_differences(theta, n - 1))


@settings(max_examples=60, deadline=None)
@given(angles(), st.integers(-2, 3))
def test_stated_lambda_bound_fails_only_for_rational_turns(theta, around):
    """C7-index-inf: violated right after the first tie when theta/2pi = p/q (q >= 3), never
    when theta/2pi is irrational."""
    q = _turns_q(theta)
    n = max(2, (q or 6) + 1 + around)
    verdict = brute_index.versus_stated(
        CosineOrder(theta, n), reading_gap(CosineOrder(theta, n), n, 16, "inf"), n
    )
    if q is None:
        assert verdict == "below"
    elif q >= 3 and around == 0:
        assert verdict == "above", (str(theta), n)


# ---- mutation tests: every check rejects a wrong formula or a perturbed input ------------------------
def test_C4_index_check_rejects_an_angle_with_a_tie():
    bad = brute_index.check_index_theorem_angle(
        (17, 100), theta_of=lambda n0: Angle(pi_multiple=Fraction(2, n0 - 1))
    )
    assert bad["failures"] and not brute_index.check_index_theorem_angle((17, 100))["failures"]


@pytest.mark.parametrize("d_max", [lambda m, n0: n0 - 1, lambda m, n0: n0 - 2, lambda m, n0: m])
def test_C4_index_corrected_check_rejects_a_wrong_d_max(d_max):
    assert brute_index.check_exactness(d_max=d_max)["mismatches"]


@pytest.mark.parametrize("q_max", [lambda n0: n0, lambda n0: n0 - 2])
def test_C4_index_unique_top_check_rejects_a_wrong_denominator_range(q_max):
    assert brute_index.check_unique_top(q_max=q_max)["mismatch_count"]


@pytest.mark.parametrize("L_of", [lambda n, m: n - 1, lambda n, m: (n - 1 + 1) // 2, lambda n, m: n - 2 - m])
def test_C7_index_sup_corrected_check_rejects_a_wrong_L(L_of):
    assert brute_index.check_sup_corrected(L_of=lambda n, m: max(1, L_of(n, m)))["failure_count"]


@pytest.mark.parametrize(
    "mutant",
    [{"points": lambda n: n + 1}, {"offsets_up_to": lambda n: n - 2}, {"lambda_up_to": lambda m, n0: n0}],
)  # the old parenthetical: n <= n0
def test_C7_index_inf_corrected_check_rejects_a_wrong_formula(mutant):
    assert brute_index.check_inf_corrected(**mutant)["failure_count"]


def test_refutations_reject_their_perturbed_counterexamples():
    # C7-index-sup: 0.8 first breaks the bound at n = 54 among n > m = 16; n = 53 holds
    assert brute_index.reading_exceeds("0.8", 54, 16, "sup")["versus_stated_bound"] == "above"
    assert brute_index.reading_exceeds("0.8", 53, 16, "sup")["versus_stated_bound"] == "below"
    # C7-index-inf: 2 pi/5 breaks it at n = 6; 1e-9 off (theta/2pi irrational) it holds
    assert brute_index.reading_exceeds("2*pi/5", 6, 16, "inf")["versus_stated_bound"] == "above"
    assert brute_index.reading_exceeds("2*pi/5 + 1/10**9", 6, 16, "inf")["versus_stated_bound"] == "below"
    # C4-index-irrational-angle: 2 pi/3 errs on some input; 1e-9 off it never does
    assert (
        average_hard_errors("2*pi/3", 2, 3, 6)["errors"]
        and not average_hard_errors("2*pi/3 + 1/10**9", 2, 3, 6)["errors"]
    )


def test_C7_index_inf_evidence_splits_rational_and_irrational_turns():
    import proofs_check.claims  # noqa: F401  (registers the checks)
    from proofs_check.registry import REGISTRY, Options

    outcome = REGISTRY["C7-index-inf"].check(Options())
    split = outcome.evidence["brute_force"]
    assert outcome.status == "refuted" and _turns_q(Angle.of(outcome.counterexample["theta"]["exact"])) == 5
    assert split["theta_over_2pi_irrational"] and not any(
        v["violations"] or v["undecided_n"] for v in split["theta_over_2pi_irrational"].values()
    )
    assert all(
        v["violations"] for a, v in split["theta_over_2pi_rational"].items() if _turns_q(Angle.of(a)) >= 3
    )


def test_the_closed_forms_the_refutations_use_equal_the_brute_force():
    """theory.discrepancy_index (continued fractions, Lemma F.1's tie value) against the row-by-row
    brute force, every reading, m in {1, 16}, every n <= 20, every angle of the brute-force set."""
    from theory.discrepancy_index import index_discrepancy

    for text in brute_index.ANGLES:
        order = CosineOrder(text, 20)
        for m, n, reading in (
            (m, n, r) for m in (1, 16) for n in range(2, 21) for r in ("sup", "min", "inf")
        ):
            brute = reading_gap(order, n, m, reading).ball(order)
            assert brute.overlaps(index_discrepancy(text, n, reading, m)["value"]), (text, m, n, reading)

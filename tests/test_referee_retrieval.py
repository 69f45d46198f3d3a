"""Issue 16, the Retrieval half: the package's own statements about Retrieval, the explicit
temperature and the exclusion principle, against token-level brute force (randomized over
angles with hypothesis), and one mutant per claim that its check must reject."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofs_check.claims import impossibility as imp
from proofs_check.claims import referee_retrieval as ref
from theory.numbers import Interval
from theory.phases import Angle
from theory.referee_impossibility import attended_sets, hard_attention_pair
from theory.referee_retrieval import (
    STATEMENTS,
    bound_value,
    brute_last_position,
    check_statement,
    in_range,
    omega,
)

LENGTHS = {2: 5, 3: 4, 4: 3}  # the largest n enumerated per |ALPH| (m = 1)


def _tiny(draw):
    return Angle(Fraction(draw(st.integers(1, 1000)), 10 ** 9))


def _near_rational(draw):  # p/q pi (theta > pi included) nudged by +-1e-6 .. 1e-12
    q = draw(st.integers(1, 30))
    nudge = Fraction(draw(st.sampled_from([-1, 0, 1])), 10 ** draw(st.integers(6, 12)))
    return Angle(nudge, Fraction(draw(st.integers(1, 2 * q - 1)), q))


def _radians(draw):  # theta / pi irrational, anywhere in (0, 2 pi)
    return Angle(Fraction(draw(st.integers(1, 6283)), 1000))


def _threshold(draw, A, n):  # at and around every threshold of the statements
    k = draw(st.sampled_from([2 * n, 2 * n - 2, n + 1, 2 * n - 3, 2 * n + 1]))
    nudge = Fraction(draw(st.sampled_from([-1, 0, 1])), 10 ** draw(st.sampled_from([9, 12])))
    return Angle(nudge, omega(A).pi_multiple / max(k, 1))


@st.composite
def cases(draw):
    A = draw(st.sampled_from(sorted(LENGTHS)))
    n = draw(st.integers(2, LENGTHS[A]))
    kind = draw(st.sampled_from([_tiny, _near_rational, _radians, "threshold", "threshold"]))
    theta = _threshold(draw, A, n) if kind == "threshold" else kind(draw)
    if float(theta) <= 0:
        theta = Angle(Fraction(1, 10 ** 9))
    return theta, A, n


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases())
def test_every_exact_statement_equals_brute_force_wherever_its_range_holds(case):
    theta, A, n = case
    for name, (_, _, condition) in STATEMENTS.items():
        if in_range(theta, A, n, condition):
            assert check_statement(name, theta, A, 1, n)["agrees"], (name, str(theta), A, n)


@SETTINGS
@given(cases())
def test_inf_inequalities_hold_wherever_n_plus_1_theta_is_at_most_omega(case):
    theta, A, n = case
    if not in_range(theta, A, n, "(n+1) theta <= omega"):
        return
    lam = brute_last_position(theta, A, 1, n)["inf"]
    balls = Interval(128)
    with balls.working():
        copy = 1 - theta.ball(balls).cos()
        assert not copy < lam and not bound_value(theta, A, n) < copy
    if n >= 4 and not in_range(theta, A, n, "(2n-3) theta < omega"):  # the stated exception
        assert not check_statement("inf-corrected", theta, A, 1, n)["agrees"], (str(theta), A, n)


@SETTINGS
@given(cases())
def test_paper_condition_separates_and_makes_the_construction_exact(case):
    theta, A, n0 = case
    if not in_range(theta, A, n0, "2n theta < omega"):  # theta < omega/(2 n0)
        return
    for n in range(2, n0 + 1):
        row = brute_last_position(theta, A, 1, n)
        assert row["separated"] and row["exact"] and row["margin"] > 0, (str(theta), A, n)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([2, 3]), st.integers(2, 4), st.integers(1, 60), st.integers(1, 60), st.booleans())
def test_exactness_iff_value_aware_gap_over_random_angles(A, n0, p, q, radians):
    """C4-retrieval-exact-condition over random angles in (0, pi]: p/q pi or p/q radians."""
    from constructions.retrieval import RetrievalConstruction
    from constructions.temperature import certified_gaps

    n0 = min(n0, LENGTHS[A])
    ratio = Fraction(min(p, q), q)
    theta = Angle(3 * ratio) if radians else Angle(pi_multiple=ratio)  # 3 ratio < pi
    model = RetrievalConstruction(list("abc"[:A]), 1, theta, n0)
    gap_positive = certified_gaps(model)["signs"]["value_aware"] == "positive"
    brute = all(brute_last_position(theta, A, 1, n)["exact"] for n in range(2, n0 + 1))
    assert gap_positive == brute, (str(theta), A, n0)


def test_the_old_inf_corrected_range_holds_counterexamples():
    """Before issue 16 the equality was stated for every n with (n+1) theta <= omega."""
    old = ref.exact_statement("inf-corrected", False, edge="(n+1) theta <= omega")
    assert old["mismatches"]
    rows = ref.equality_fails_beyond(False)
    assert rows and not any(r["agrees"] for r in rows)
    theta = Angle(pi_multiple=Fraction(1, 5))  # |ALPH| = 2, n = 4: (n+1) theta = omega, lambda > 0 = the formula
    assert in_range(theta, 2, 4, "(n+1) theta <= omega") and not check_statement("inf-corrected", theta, 2, 1, 4)["agrees"]


# ---- one mutant per claim: the check must reject it ------------------------------------------------------------

def _shift(form):
    return lambda th, A, n, b: form(th, A, n + 1, b)  # n theta where the statement has (n-1) theta


@pytest.mark.parametrize("name", ["sup-exact", "competitor-corrected", "margin-exact", "margin-product",
                                  "inf-corrected"])
def test_exact_statement_checks_reject_an_off_by_one_formula(name):
    assert not ref.exact_statement(name, False)["mismatches"]
    assert ref.exact_statement(name, False, formula=_shift(STATEMENTS[name][1]))["mismatches"]


def test_sup_floor_check_rejects_a_higher_floor():
    assert not ref.sup_floor(False)["mismatches"]
    assert ref.sup_floor(False, floor=lambda A, b: 1 + (omega(A).ball(b) / 4).cos())["mismatches"]


def test_margin_positive_check_rejects_angles_outside_the_range():
    edge = lambda A, n: [Angle(pi_multiple=omega(A).pi_multiple / (2 * n - 3))]  # noqa: E731
    assert ref.margin_positive(False, theta_of=edge)["mismatches"]


def test_inf_chain_rejects_a_smaller_copy_gap():
    assert not ref.inf_bound_chain(False)["mismatches"]
    half = lambda th, b: (1 - th.ball(b).cos()) / 2  # noqa: E731
    assert ref.inf_bound_chain(False, copy_gap=half)["mismatches"]


def test_condition_check_rejects_an_angle_past_the_exact_threshold():
    beyond = lambda A, n0: [Angle(pi_multiple=omega(A).pi_multiple / (2 * n0 - 3))]  # noqa: E731
    assert ref.condition_separates(False, theta_of=beyond)["mismatches"]


def test_exactness_criterion_check_rejects_the_papers_condition_as_an_iff():
    assert not ref.exactness_criterion(False)["mismatches"]
    assert ref.exactness_criterion(False, criterion=lambda model: model.paper_condition())["mismatches"]


def test_explicit_beta_check_rejects_a_beta_without_the_division_by_lambda():
    assert not ref.softmax_at_proven_beta(False)["mismatches"]
    no_lambda = lambda r: math.log((r["n0"] - 1) * r["Gamma"] / r["delta"])  # noqa: E731
    assert ref.softmax_at_proven_beta(False, beta_of=no_lambda)["mismatches"]


def test_hard_positional_check_rejects_a_pair_with_one_answer():
    assert not imp.hard_positional_brute(False)["failures"]
    same = lambda A, m, n, J: (["a1"] * n, ["a1"] * n)  # noqa: E731
    assert imp.hard_positional_brute(False, pair_of=same)["failures"]
    n = 4  # outside the statement's range (J holds every earlier position) no pair exists
    assert hard_attention_pair(2, 2, n, set(range(1, n + 1))) is None
    assert all(hard_attention_pair(2, 2, n, J) for J in attended_sets(n))


def test_sharp_constant_check_rejects_the_sample_variance():
    assert imp.sharp_constant_brute(False)["ok"]
    assert not imp.sharp_constant_brute(False, sample_variance=True)["ok"]

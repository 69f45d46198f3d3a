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
from proofs_check.evidence import brute_retrieval as ref
from theory import brute_retrieval as theory_ref
from theory.brute_impossibility import attended_sets, hard_attention_pair
from theory.brute_retrieval import (
    STATEMENTS,
    bound_value,
    brute_last_position,
    check_statement,
    in_range,
    omega,
)
from theory.discrepancy_retrieval import fold
from theory.numbers import Interval
from theory.phases import Angle

LENGTHS = {2: 5, 3: 4, 4: 3}  # the largest n enumerated per |ALPH| (m = 1)


def _tiny(draw):
    return Angle(Fraction(draw(st.integers(1, 1000)), 10**9))


def _near_rational(draw):  # p/q pi (theta > pi included) nudged by +-1e-6 .. 1e-12
    q = draw(st.integers(1, 30))
    nudge = Fraction(draw(st.sampled_from([-1, 0, 1])), 10 ** draw(st.integers(6, 12)))
    return Angle(nudge, Fraction(draw(st.integers(1, 2 * q - 1)), q))


def _radians(draw):  # theta / pi irrational, anywhere in (-4 pi, 4 pi), 0 included
    return Angle(Fraction(draw(st.integers(-12566, 12566)), 1000))


def _threshold(draw, A, n):  # at and around every threshold of the statements
    k = draw(st.sampled_from([2 * n, 2 * n - 2, n + 1, 2 * n - 3, 2 * n + 1]))
    nudge = Fraction(draw(st.sampled_from([-1, 0, 1])), 10 ** draw(st.sampled_from([9, 12])))
    return Angle(nudge, omega(A).pi_multiple / max(k, 1))


def _mirror(draw, theta):  # every statement is on theta' (2 pi-periodic, even): theta < 0 and > 2 pi too
    turns, sign = draw(st.integers(-2, 2)), draw(st.sampled_from([1, -1]))
    return Angle(sign * theta.rational, sign * theta.pi_multiple + 2 * turns)


@st.composite
def cases(draw):
    """Every theta, none replaced: 0, +-tiny, multiples of 2 pi, negative, above 2 pi, edges."""
    A = draw(st.sampled_from(sorted(LENGTHS)))
    n = draw(st.integers(2, LENGTHS[A]))
    kind = draw(st.sampled_from([_tiny, _near_rational, _radians, "threshold", "threshold", "zero"]))
    theta = Angle() if kind == "zero" else _threshold(draw, A, n) if kind == "threshold" else kind(draw)
    return _mirror(draw, theta), A, n


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
    if not in_range(theta, A, n, "(n+1) theta' <= omega"):
        return
    lam = brute_last_position(theta, A, 1, n)["inf"]
    balls = Interval(128)
    with balls.working():
        if fold(theta) == Angle():  # lambda = 1 - cos(omega - n theta') = 1 - cos omega
            assert lam.overlaps(bound_value(theta, A, n)) and lam > 0
            return
        copy = 1 - fold(theta).ball(balls).cos()
        assert not copy < lam and not bound_value(theta, A, n) < copy
    if n >= 4 and not in_range(theta, A, n, "(2n-3) theta' < omega"):  # the stated exception
        assert not check_statement("inf-corrected", theta, A, 1, n)["agrees"], (str(theta), A, n)


@SETTINGS
@given(cases())
def test_paper_condition_separates_and_makes_the_construction_exact(case):
    theta, A, n0 = case
    if not in_range(theta, A, n0, "2n theta' < omega") or fold(theta) == Angle():  # 0 < theta' < omega/(2 n0)
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
    old = ref.exact_statement("inf-corrected", False, condition="(n+1) theta' <= omega")
    assert old["mismatches"]
    rows = ref.equality_fails_beyond(False)
    assert rows and not any(r["agrees"] for r in rows)
    theta = Angle(
        pi_multiple=Fraction(1, 5)
    )  # |ALPH| = 2, n = 4: (n+1) theta = omega, lambda > 0 = the formula
    assert (
        in_range(theta, 2, 4, "(n+1) theta' <= omega")
        and not check_statement("inf-corrected", theta, 2, 1, 4)["agrees"]
    )


# ---- one mutant per claim: the check must reject it ------------------------------------------------------------


def _shift(form):
    return lambda th, A, n, b: form(th, A, n + 1, b)  # n theta where the statement has (n-1) theta


@pytest.mark.parametrize(
    "name", ["sup-exact", "competitor-corrected", "margin-exact", "margin-product", "inf-corrected"]
)
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


# ---- issue 30: every search samples its statement's whole stated range -----------------------------------------

SEARCHES = {  # search -> (the statement whose range it must cover, how to run it)
    **{f"exact:{name}": (name, lambda name=name: ref.exact_statement(name, False)) for name in STATEMENTS},
    "sup_floor": ("sup-exact", lambda: ref.sup_floor(False)),
    "margin_positive": ("margin-exact", lambda: ref.margin_positive(False)),
}


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_every_search_samples_its_statements_whole_range(search):
    name, run = SEARCHES[search]
    out = run()
    assert out["condition"] == STATEMENTS[name][2] and out["coverage_gaps"] == [], out["coverage_gaps"][:3]
    for A, m, n_top in ref.sizes(False):  # n = 2 and the largest n enumerated
        assert out["n_sampled"][f"A={A},m={m}"] == [2, n_top]
    for A, _, n_top in ref.sizes(False):  # sampled theta vs the declared range: min, max and the edge points
        for n in range(2, n_top + 1):
            thetas = ref.range_angles(STATEMENTS[name][2], A, n)
            primes = [float(fold(t)) for t in thetas]
            top = float(ref.edge(STATEMENTS[name][2], A, n))
            assert (
                min(primes) == 0 and 0 < top - max(primes) <= 2e-9
            )  # theta' = 0 .. just below the open edge
            assert min(map(float, thetas)) < -2 * math.pi and max(map(float, thetas)) > 2 * math.pi


def test_the_chain_and_the_condition_searches_cover_their_ranges():
    chain = ref.inf_bound_chain(False)
    assert (
        chain["condition"] == "(n+1) theta' <= omega"
        and not chain["coverage_gaps"]
        and not chain["mismatches"]
    )
    cond = ref.condition_separates(False)
    assert (
        cond["condition"] == "0 < theta < omega/(2n)" and not cond["coverage_gaps"] and not cond["mismatches"]
    )


NARROWINGS = {  # (condition, |ALPH|, n), theta -> kept; the old sampler's habits, each must be reported
    "positive only (theta <= 0 -> 1e-9)": lambda args, t: float(t) > 0,
    "no theta' = 0": lambda args, t: fold(t) != Angle(),
    "nothing above 2 pi": lambda args, t: float(t) <= 2 * math.pi,
    "nothing at the edge": lambda args, t: float(ref.edge(*args)) - float(fold(t)) > 1e-6,
}


@pytest.mark.parametrize("narrowing", sorted(NARROWINGS))
def test_a_search_narrower_than_its_range_is_reported_and_fails_the_claim(monkeypatch, narrowing):
    import proofs_check.claims  # noqa: F401  (registers the claims)
    from proofs_check.registry import REGISTRY, Options

    whole = ref.range_angles
    monkeypatch.setattr(ref, "range_angles", lambda *a: [t for t in whole(*a) if NARROWINGS[narrowing](a, t)])
    assert ref.exact_statement("sup-exact", False)["coverage_gaps"]
    assert REGISTRY["C7-retrieval-sup-exact"].check(Options()).status != "verified"


def test_coverage_reports_samples_outside_the_range():
    A, n = 3, 2
    beyond = ref.edge("2n theta' < omega", A, n) + Angle(Fraction(1, 10**6))
    gaps = ref.coverage_gaps(
        "2n theta' < omega", A, n, ref.range_angles("2n theta' < omega", A, n) + [beyond]
    )
    assert len(gaps) == 1 and "outside the range" in gaps[0]
    assert ref.coverage_gaps("0 < theta < omega/(2n)", A, n, [Angle()])  # 0 is outside the paper's 0 < theta


# ---- issue 30: each claim's own check rejects a real mutant of its formula -------------------------------------


def _old(name):
    return theory_ref.OLD_FORMULAS[name]  # the text before issue 30: theta for theta'


def _product_off_by_one(th, A, n, b):  # (2n-2) theta' where the product form has (2n-3) theta'
    w, t = omega(A).ball(b), fold(th).ball(b)
    return 2 * ((w - t) / 2).sin() * ((w - (2 * n - 2) * t) / 2).sin()


CLAIM_MUTANTS = {
    "C7-retrieval-sup-exact": ("sup-exact", lambda: _old("sup-exact")),
    "C7-retrieval-competitor-corrected": ("competitor-corrected", lambda: _old("competitor-corrected")),
    "C7-retrieval-inf-corrected": (
        "inf-corrected",
        lambda: lambda th, A, n, b: _old("inf-corrected")(fold(th), A, n, b),
    ),
    "C7-retrieval-margin-exact": ("margin-exact", lambda: _shift(STATEMENTS["margin-exact"][1])),
    "C7-retrieval-margin-exact product": ("margin-product", lambda: _product_off_by_one),
}


@pytest.mark.parametrize("label", sorted(CLAIM_MUTANTS))
def test_claim_check_rejects_its_formulas_mutant(monkeypatch, label):
    import proofs_check.claims  # noqa: F401
    from proofs_check.registry import REGISTRY, Options

    cid = label.split()[0]
    assert REGISTRY[cid].check(Options()).status == "verified"
    name, mutant = CLAIM_MUTANTS[label]
    reading, _, condition = STATEMENTS[name]
    monkeypatch.setitem(STATEMENTS, name, (reading, mutant(), condition))
    assert REGISTRY[cid].check(Options()).status != "verified"


def test_condition_claim_rejects_a_wider_condition(monkeypatch):
    import proofs_check.claims  # noqa: F401
    from proofs_check.registry import REGISTRY, Options

    wider = (
        lambda n: 2 * n - 3,
        True,
        False,
        False,
    )  # read as 0 < theta <= omega/(2 n0 - 3): a tie at the edge
    monkeypatch.setitem(theory_ref.CONDITIONS, "0 < theta < omega/(2n)", wider)
    assert REGISTRY["C7-retrieval-condition"].check(Options()).status != "verified"


# ---- issue 30: the counterexamples rechecked by enumeration, not by the claim's own functions ------------------


def _table_mp(theta, A, n, dps=80):
    """cos(d omega + t theta) for every offset t < n and letter difference d, in mpmath."""
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = dps
    th = ctx.mpf(Fraction(theta).numerator) / Fraction(theta).denominator
    w = 2 * ctx.pi / A
    return ctx, [[ctx.cos(d * w + t * th) for d in range(A)] for t in range(n)]


def test_retrieval_inf_counterexample_beyond_n0_by_enumeration():
    """lambda(n) is at least the least gap between distinct values of the table (every Lemma F.1
    gap is one): enumerate the table in mpmath and compare with 1 - cos(omega - n theta)."""
    theta, A, n = Fraction(27, 10000), 8, 291
    ctx, table = _table_mp(theta, A, n)
    values = sorted({ctx.nstr(v, 60): v for row in table for v in row}.values())
    tol = ctx.mpf(10) ** -50
    least = min(b - a for a, b in zip(values, values[1:]) if b - a > tol)
    bound = 1 - ctx.cos(2 * ctx.pi / A - n * ctx.mpf(27) / 10000)
    assert least - bound > ctx.mpf(10) ** -30 and n > float(2 * math.pi / A / (2 * theta))  # beyond n0


def test_retrieval_competitor_counterexample_by_enumeration():
    """The competitor reading maximised over positions and letters by enumeration (the
    claim's closed form is not used), on the claim's own input."""
    import proofs_check.claims  # noqa: F401
    from proofs_check.registry import REGISTRY, Options

    ce = REGISTRY["C7-retrieval-competitor"].check(Options()).counterexample
    tokens, A, n = ce["input"], 8, len(ce["input"])
    ctx, table = _table_mp(Fraction(ce["theta"]["exact"]), A, n)
    q = "abcdefgh".index(tokens[-1][0])  # an ALPH x INT query looks for its own left letter
    matched = max(
        table[n - 1 - j][("abcdefgh".index(tok[0]) - q) % A]
        for j, tok in enumerate(tokens)
        if tok[0] == tokens[-1][0]
    )
    best_other = max(
        table[t][d] for t in range(n) for d in range(1, A)
    )  # any position 1..n, any other letter
    value = matched - best_other
    assert abs(value - ctx.mpf(ce["discrepancy"].strip("[").split(" ")[0])) < 1e-14
    assert (
        value
        - (
            1
            - ctx.cos(
                2 * ctx.pi / A
                - n
                * ctx.mpf(Fraction(ce["theta"]["exact"]).numerator)
                / Fraction(ce["theta"]["exact"]).denominator
            )
        )
        > ctx.mpf(10) ** -30
    )

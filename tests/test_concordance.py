"""theory.concordance (Harrell's C with right-censoring) and claim P-break-concordance's rule."""

import itertools

import pytest

from theory.concordance import (
    cluster_bootstrap,
    harrell_c,
    order_known,
    pair_score,
    pooled,
)

BIG = 10**9


def _completions(x):
    """Every value a member's true break may take on a grid that separates all the data's
    points: the observed value itself, or for a censored one anything beyond its limit."""
    value, limit = x
    if value is not None:
        return [value]
    return [limit + 0.5, limit + 1e-3, BIG] + [
        v + d for v in range(0, 400, 5) for d in (-0.25, 0.25) if v > limit
    ]


def _brute_order(a, b):
    """-1/+1/0 when every completion of the pair orders it the same way, else None."""
    seen = {(va > vb) - (va < vb) for va in _completions(a) for vb in _completions(b)}
    return seen.pop() if len(seen) == 1 else None


def _brute_c(predicted, measured, weights=None):
    num = den = 0.0
    for i, j in itertools.combinations(range(len(predicted)), 2):
        w = 1.0 if weights is None else weights(i, j)
        if w == 0:
            continue
        truth = _brute_order(measured[i], measured[j])
        if not truth:
            continue
        guess = _brute_order(predicted[i], predicted[j])
        num += w * (0.5 if not guess else float(guess == truth))
        den += w
    return num / den if den else None


# hand-made: observed breaks, censored ones at two limits, a value equal to another's limit,
# an observed tie, a value beyond another's limit
PRED = [(40, 100), (None, 100), (60, 100), (None, 50), (80, 100), (20, 100), (None, 100), (50, 100)]
MEAS = [(30, 100), (None, 100), (70, 100), (None, 50), (50, 100), (50, 100), (None, 100), (120, 200)]
GROUPS = ["a", "a", "b", "b", "c", "c", "c", "d"]


def test_order_known_cases():
    assert order_known((10, 100), (None, 100)) == -1
    assert order_known((None, 100), (10, 100)) == 1
    assert order_known((100, 200), (None, 100)) == -1  # equal to the limit: the event lies beyond it
    assert order_known((150, 200), (None, 100)) is None  # beyond the other's limit: unknown
    assert order_known((None, 100), (None, 300)) is None  # censored ties: never ordered
    assert order_known((7, 100), (7, 100)) == 0


@pytest.mark.parametrize("i,j", list(itertools.combinations(range(len(PRED)), 2)))
def test_order_matches_brute_force(i, j):
    assert order_known(MEAS[i], MEAS[j]) == _brute_order(MEAS[i], MEAS[j])
    assert order_known(PRED[i], PRED[j]) == _brute_order(PRED[i], PRED[j])


def test_c_matches_brute_force_pair_count():
    n = len(PRED)
    got = harrell_c(
        (1.0, (PRED[i], PRED[j]), (MEAS[i], MEAS[j])) for i, j in itertools.combinations(range(n), 2)
    )
    assert got["c"] == pytest.approx(_brute_c(PRED, MEAS))


def test_pooled_matches_brute_force_with_recipe_weights():
    size = {g: GROUPS.count(g) for g in GROUPS}

    def weight(i, j):
        return 0 if GROUPS[i] == GROUPS[j] else 1 / (size[GROUPS[i]] * size[GROUPS[j]])

    assert pooled(PRED, MEAS, GROUPS)["c"] == pytest.approx(_brute_c(PRED, MEAS, weight))


def test_censored_ties_as_specified():
    # measured: both censored -> not comparable, whatever the prediction
    assert pair_score(((10, 100), (90, 100)), ((None, 100), (None, 100))) is None
    # predicted both censored, measured ordered -> half a concordance
    assert pair_score(((None, 100), (None, 100)), ((10, 100), (None, 100))) == 0.5
    # an observed tie in the measurement is not comparable either
    assert pair_score(((10, 100), (20, 100)), ((50, 100), (50, 100))) is None


def test_mutant_censored_as_observed_changes_the_value():
    honest = pooled(PRED, MEAS, GROUPS)["c"]

    def as_observed(xs):
        return [(x[1] if x[0] is None else x[0], x[1]) for x in xs]

    assert pooled(as_observed(PRED), as_observed(MEAS), GROUPS)["c"] != pytest.approx(honest)


def test_each_recipe_counts_once():
    # repeating every member of recipe "c" three times leaves the pooled C unchanged
    extra = [i for i, g in enumerate(GROUPS) if g == "c"] * 2
    p, m, g = PRED + [PRED[i] for i in extra], MEAS + [MEAS[i] for i in extra], GROUPS + ["c"] * len(extra)
    assert pooled(p, m, g)["c"] == pytest.approx(pooled(PRED, MEAS, GROUPS)["c"])


def test_bootstrap_is_seeded_and_brackets():
    a = cluster_bootstrap(PRED, MEAS, GROUPS, 200, seed=1)
    assert a == cluster_bootstrap(PRED, MEAS, GROUPS, 200, seed=1)
    assert a["interval"][0] <= a["interval"][1]


def _members(pairs):
    """Synthetic member_breaks blocks, one recipe per member."""
    return {
        f"r{k}/letter/seed-0": {"predicted": {"relative": {"break": p}}, "measured": m, "last_length": 5000}
        for k, (p, m) in enumerate(pairs)
    }


def test_rule_statuses():
    from proofs_check.claims.break_concordance import decide_concordance

    grid = [20.0 * k for k in range(1, 9)]
    assert decide_concordance(_members(zip(grid, grid)), draws=300).status == "verified"
    assert decide_concordance(_members(zip(grid, grid[::-1])), draws=300).status == "refuted"
    assert (
        decide_concordance(_members(zip(grid[:4], grid[:4])), draws=300).status == "undecided"
    )  # < 6 recipes

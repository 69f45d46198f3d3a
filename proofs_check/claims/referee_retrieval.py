"""The referee's referee for T_Retrieval (issue 16): every statement the package wrote about
Retrieval is compared with a token-level brute force (``theory.referee_retrieval``) over
every proper input of small alphabets, at angles across and at the edges of its range.

Each function returns an evidence dict naming the range it brute-forced; ``mismatches`` lists
every disagreement (a claim fails on any).  ``formula`` / ``theta_of`` hooks let the tests
feed deliberately wrong formulas or out-of-range angles, which the checks must reject.
"""

from __future__ import annotations

from fractions import Fraction

from theory.numbers import Interval
from theory.phases import Angle
from theory.referee_retrieval import (
    STATEMENTS,
    bound_value,
    brute_last_position,
    check_statement,
    in_range,
    omega,
    other_symbols_below_match,
)

SIZES = ((2, 1, 5), (3, 1, 4), (4, 1, 3))  # (|ALPH|, m, largest n): every proper input is enumerated
THOROUGH_SIZES = SIZES + ((2, 2, 5), (3, 1, 5), (5, 1, 3))


def sizes(thorough: bool) -> tuple:
    return THOROUGH_SIZES if thorough else SIZES


def angles_below(limit: Angle, A: int) -> list:
    """Angles in (0, limit): just below the edge (1e-9), half of it, a near-rational multiple of
    pi (limit * 2/3 + 1e-12), an angle with theta/pi irrational (a rational number of
    radians below the limit) and a tiny one (1e-7 rad)."""
    out = [limit + Angle(Fraction(-1, 10 ** 9)), limit * Fraction(1, 2),
           Angle(limit.rational * Fraction(2, 3) + Fraction(1, 10 ** 12), limit.pi_multiple * Fraction(2, 3)),
           Angle(Fraction(int(float(limit) * 1000 * 0.9), 1000) or Fraction(1, 10 ** 4)), Angle(Fraction(1, 10 ** 7))]
    return [a for a in out if float(a) > 0]


def _edge(A: int, divisor: int) -> Angle:
    return Angle(pi_multiple=omega(A).pi_multiple / divisor)


EDGES = {"2n theta < omega": lambda n: 2 * n, "2(n-1) theta < omega": lambda n: 2 * (n - 1),
         "(n+1) theta <= omega": lambda n: n + 1}  # the last: C7-retrieval-inf-corrected's range before issue 16


def exact_statement(name: str, thorough: bool, formula=None, edge: str | None = None) -> dict:
    """Statement ``name`` (theory.referee_retrieval.STATEMENTS) vs brute force at every n in
    2..n_max and angles in (0, omega / EDGES[edge](n)); ``edge`` defaults to the statement's
    own range (``formula`` and ``edge`` let the tests feed a wrong formula or a wider range)."""
    edge = edge or STATEMENTS[name][2]
    checked, bad = 0, []
    for A, m, n_top in sizes(thorough):
        for n in range(2, n_top + 1):
            for theta in angles_below(_edge(A, EDGES[edge](n)), A):
                row = check_statement(name, theta, A, m, n, formula)
                checked += 1
                if not row["agrees"]:
                    bad.append(row)
    return {"statement": name, "checked": checked, "mismatches": bad,
            "range": f"every proper input of length n, (|ALPH|, m, n_max) in {sizes(thorough)}, n = 2..n_max, "
                     f"5 angles per n with {edge} (just below the edge, half, a near-rational multiple of pi, "
                     f"theta/pi irrational, 1e-7)"}


def _half_omega_floor(A: int, balls):
    return 1 + (omega(A).ball(balls) / 2).cos()


def sup_floor(thorough: bool, floor=_half_omega_floor) -> dict:
    """C7-retrieval-sup-exact's 'never falls below 1 + cos(omega/2)', on the brute-force sup
    (a ``floor(A, balls)`` mutant can be fed); fails only where certified below."""
    bad, checked = [], 0
    for A, m, n_top in sizes(thorough):
        for n in range(2, n_top + 1):
            for theta in angles_below(_edge(A, 2 * n), A):
                checked += 1
                value = brute_last_position(theta, A, m, n)["sup"]
                balls = Interval(128)
                with balls.working():
                    if bool(value < floor(A, balls)):
                        bad.append({"theta": str(theta), "A": A, "n": n, "sup": value.str(10)})
    return {"checked": checked, "mismatches": bad}


def margin_positive(thorough: bool, theta_of=None) -> dict:
    """C7-retrieval-margin-exact's '> 0' for n <= n0 (theta < omega/(2 n0)), by brute force
    (``theta_of(A, n)`` replaces the angles: the tests feed ones outside the range)."""
    bad, checked = [], 0
    for A, m, n_top in sizes(thorough):
        for n in range(2, n_top + 1):
            for theta in (theta_of(A, n) if theta_of else angles_below(_edge(A, 2 * n), A)):
                checked += 1
                value = brute_last_position(theta, A, m, n)["margin"]
                if not value > 0:
                    bad.append({"theta": str(theta), "A": A, "n": n, "margin": value.str(10)})
    return {"checked": checked, "mismatches": bad}


def inf_bound_chain(thorough: bool, theta_of=None, copy_gap=lambda theta, balls: 1 - theta.ball(balls).cos()) -> dict:
    """C7-retrieval-inf-corrected's inequalities lambda(n) <= 1 - cos theta <= 1 - cos(omega -
    n theta) at every n >= 2 with (n+1) theta <= omega, including theta = omega/(n+1) itself and
    omega/(2n-3) (where the equality fails); brute-force lambda, certified comparisons."""
    bad, checked = [], 0
    for A, m, n_top in sizes(thorough):
        for n in range(2, n_top + 1):
            thetas = (theta_of(A, n) if theta_of else
                      [_edge(A, n + 1)] + angles_below(_edge(A, n + 1), A)
                      + ([_edge(A, 2 * n - 3)] if 2 * n - 3 >= n + 1 else []))
            for theta in thetas:
                if not in_range(theta, A, n, "(n+1) theta <= omega"):
                    continue
                checked += 1
                lam = brute_last_position(theta, A, m, n)["inf"]
                balls = Interval(128)
                with balls.working():  # equality is allowed (theta = omega/(n+1)): fail only when certified <
                    copy = copy_gap(theta, balls)
                    broken = bool(copy < lam) or bool(bound_value(theta, A, n) < copy)
                if broken:
                    bad.append({"theta": str(theta), "A": A, "n": n, "lambda": lam.str(10), "copy_gap": copy.str(10)})
    return {"checked": checked, "mismatches": bad,
            "range": "every n in 2..n_max with (n+1) theta <= omega, theta = omega/(n+1), omega/(2n-3) and 5 below"}


def equality_fails_beyond(thorough: bool) -> list:
    """Where (2n-3) theta >= omega and (n+1) theta <= omega (inside the old statement's range),
    the formula for lambda(n) is wrong: its second term is <= 0 while brute-force lambda > 0.
    Tried at both ends, theta = omega/(2n-3) and omega/(n+1), and half-way (n >= 4)."""
    rows = []
    for A, m, n_top in sizes(thorough):
        for n in range(4, n_top + 1):
            low, high = _edge(A, 2 * n - 3), _edge(A, n + 1)
            middle = Angle(pi_multiple=(low.pi_multiple + high.pi_multiple) / 2)
            rows += [check_statement("inf-corrected", theta, A, m, n) for theta in dict.fromkeys([low, middle, high])]
    return rows


def condition_separates(thorough: bool, theta_of=None) -> dict:
    """C7-retrieval-condition: for theta < omega/(2 n0) every other-symbol key is strictly below
    the matched key on every proper input of every length <= n0 (brute force)."""
    bad, checked = [], 0
    for A, m, n_top in sizes(thorough):
        for n0 in range(2, n_top + 1):
            for theta in (theta_of(A, n0) if theta_of else angles_below(_edge(A, 2 * n0), A)):
                checked += 1
                if not other_symbols_below_match(theta, A, m, n0):
                    bad.append({"theta": str(theta), "A": A, "m": m, "n0": n0})
    return {"checked": checked, "mismatches": bad,
            "range": f"n0 = 2..n_max, (|ALPH|, m, n_max) in {sizes(thorough)}, every proper input of every length "
                     f"2..n0, 5 angles in (0, omega/(2 n0))"}


# ---- C4-retrieval-exact-condition and C5 (constructions) --------------------------------------

def exactness_criterion(thorough: bool, criterion=None) -> dict:
    """C4-retrieval-exact-condition: T_Retrieval exact on every proper input of length <= n0 iff
    its value-aware gap is > 0.  Left side: token-level brute force (average-hard attention on
    every proper input of every length 2..n0, theory.referee_retrieval); right side: the
    certified sign of ``logit_gaps``'s value_aware (or ``criterion(model)``, a mutant)."""
    from constructions.retrieval import RetrievalConstruction
    from constructions.temperature import certified_gaps

    cases = ((2, 1, 5), (3, 1, 4)) + (((2, 2, 5), (4, 1, 3)) if thorough else ())
    rows, bad = [], []
    for A, m, n0 in cases:
        w = Fraction(2, A)  # omega / pi: around the paper's edge omega/(2 n0) and the exact one omega/(2 n0 - 3)
        thetas = [Angle(pi_multiple=w / k) for k in (4 * n0, 2 * n0 + 1, 2 * n0, 2 * n0 - 1, 2 * n0 - 3)]
        thetas += [Angle(pi_multiple=Fraction(1, q)) for q in (5, 4, 3, 2, 1)]
        thetas += [Angle(pi_multiple=Fraction(1, 7) + Fraction(1, 10 ** 9)), Angle(Fraction(4, 5)), Angle(Fraction(3))]
        for theta in thetas:
            model = RetrievalConstruction(list("abcdefgh"[:A]), m, theta, n0)
            predicted = (criterion(model) if criterion else
                         certified_gaps(model)["signs"]["value_aware"] == "positive")
            brute = all(brute_last_position(theta, A, m, n)["exact"] for n in range(2, n0 + 1))
            row = {"A": A, "m": m, "n0": n0, "theta": str(theta), "paper_condition": model.paper_condition(),
                   "gap_positive": predicted, "brute_exact": brute}
            rows.append(row)
            if predicted != brute:
                bad.append(row)
    return {"checked": len(rows), "mismatches": bad, "rows": rows,
            "range": f"(|ALPH|, m, n0) in {cases}, every proper input of every length 2..n0, 13 angles in (0, pi] "
                     f"(omega/k around omega/(2 n0) and omega/(2 n0 - 3), pi/q, near-rational, theta/pi irrational)"}


def softmax_at_proven_beta(thorough: bool, beta_of=None) -> dict:
    """C5 on every valid / proper input of small T_Index and T_Retrieval: float64 softmax at the
    stated beta = ln((n0-1) Gamma/delta)/lambda (or ``beta_of(report)``, a mutant) decodes
    every position as the reference function does."""
    import numpy as np

    from constructions.index import IndexConstruction
    from constructions.retrieval import RetrievalConstruction
    from constructions.temperature import temperature_report

    models = [RetrievalConstruction(["a", "b"], 1, Angle(pi_multiple=Fraction(1, 16 * 5)), 5),
              RetrievalConstruction(["a", "b", "c"], 1, Angle(pi_multiple=Fraction(1, 24 * 4)), 4),
              IndexConstruction(["A", "B"], 2, Angle(pi_multiple=Fraction(2, 5)), 5)]
    if thorough:
        models.append(RetrievalConstruction(["a", "b"], 2, Angle(pi_multiple=Fraction(1, 16 * 6)), 6))
    rows, bad = [], []
    for model in models:
        report = temperature_report(model)
        beta = beta_of(report) if beta_of else report["beta_value_aware"]
        ids = model.all_proper_ids(model.n0) if hasattr(model, "all_proper_ids") else model.all_valid_ids(model.n0)
        expected = np.array([model.reference_ids(model.tokens(row)) for row in ids])
        out, gaps = model.forward_batch(ids, "softmax", beta)
        row = {"construction": type(model).__name__, "n0": model.n0, "theta": str(model.theta), "beta": beta,
               "inputs": len(ids), "wrong_positions": int((out != expected).sum()),
               "min_margin": float(gaps.min())}
        rows.append(row)
        if row["wrong_positions"]:
            bad.append(row)
    return {"rows": rows, "mismatches": bad,
            "range": "every proper (T_Retrieval |ALPH| 2, 3) / valid (T_Index |ALPH| 2, m 2) input of length n0, "
                     "every position, float64 softmax at the stated beta"}

"""The referee's referee for T_Retrieval (issues 16, 30): every statement the package wrote about
Retrieval is compared with a token-level brute force (``theory.brute_retrieval``) over
every proper input of small alphabets, at angles covering its WHOLE stated range.

Ranges (issue 30).  Each statement names a ``CONDITIONS`` range; ``range_angles`` samples it
whole: theta' = 0 when included, the edge itself (closed) or 1e-9 below it (open), 1e-7, and
three angles inside; a range on theta' (every real theta) is also sampled at -theta,
theta + 2 pi, 4 pi - theta and -theta - 2 pi.  Every n from 2 to the largest enumerated is
searched, and at each n the edge angle makes that n the largest the range allows.  Each
search reports ``coverage_gaps`` (what of the stated range its sample missed, or any sample
outside it); a claim fails on any, as on any mismatch.

``formula`` / ``theta_of`` hooks let the tests feed deliberately wrong formulas or
out-of-range angles, which the checks must reject.
"""

from __future__ import annotations

from fractions import Fraction

from theory import retrieval_formulas as F
from theory.brute_retrieval import (
    CONDITIONS,
    STATEMENTS,
    bound_value,
    brute_last_position,
    check_statement,
    in_range,
    omega,
    other_symbols_below_match,
)
from theory.discrepancy_retrieval import fold
from theory.numbers import Interval
from theory.phases import Angle

SIZES = ((2, 1, 5), (3, 1, 4), (4, 1, 3))  # (|ALPH|, m, largest n): every proper input is enumerated
THOROUGH_SIZES = SIZES + ((2, 2, 5), (3, 1, 5), (5, 1, 3))
TWO_PI = Angle(pi_multiple=Fraction(2))


def sizes(thorough: bool) -> tuple:
    return THOROUGH_SIZES if thorough else SIZES


def edge(condition: str, A: int, n: int) -> Angle:
    """omega / k(n): the condition's edge for theta' (or theta)."""
    return Angle(pi_multiple=omega(A).pi_multiple / CONDITIONS[condition][0](n))


def range_angles(condition: str, A: int, n: int) -> list:
    """The whole stated range of ``condition`` at (|ALPH|, n) (module docstring)."""
    _, closed, zero, folded = CONDITIONS[condition]
    top = edge(condition, A, n)
    inside = [
        top if closed else top + Angle(Fraction(-1, 10**9)),
        Angle(Fraction(1, 10**7)),
        top * Fraction(1, 2),
        Angle(top.rational * Fraction(2, 3) + Fraction(1, 10**12), top.pi_multiple * Fraction(2, 3)),
        Angle(Fraction(int(float(top) * 900), 1000) or Fraction(1, 10**4)),
    ]  # theta/pi irrational
    values = ([Angle()] if zero else []) + [v for v in inside if float(v) > 0]
    if not folded:
        return values
    mirrors = (lambda v: -v, lambda v: v + TWO_PI, lambda v: TWO_PI * 2 + -v, lambda v: -(v + TWO_PI))
    out = list(values)
    for i, v in enumerate(values):  # the edge and 0 in every form, the rest in one form each
        out += [m(v) for m in mirrors] if i < 1 + zero else [mirrors[i % 4](v)]
    return list(dict.fromkeys(out))


def coverage_gaps(condition: str, A: int, n: int, thetas) -> list:
    """What of the stated range the sampled ``thetas`` miss, and any sample outside it."""
    _, closed, zero, folded = CONDITIONS[condition]
    thetas = [Angle.of(t) for t in thetas]
    where = f"{condition} at |ALPH| = {A}, n = {n}"
    gaps = [
        f"{where}: samples theta = {t} outside the range" for t in thetas if not in_range(t, A, n, condition)
    ]
    primes = [float(fold(t)) if folded else float(t) for t in thetas]
    top = float(edge(condition, A, n))
    if not any((top - p == 0) if closed else (0 < top - p <= 2e-9) for p in primes):
        gaps.append(
            f"{where}: misses the edge theta' = omega/k(n){'' if closed else ' (to within 1e-9 below)'}"
        )
    if zero and not any(p == 0 for p in primes):
        gaps.append(f"{where}: misses theta' = 0")
    if not any(0 < p <= 1e-6 for p in primes):
        gaps.append(f"{where}: misses theta' just above 0")
    if folded:
        for name, test in (
            ("theta < 0", lambda x: x < 0),
            ("theta > 2 pi", lambda x: x > 2 * 3.141592653589793),
            ("theta < -2 pi", lambda x: x < -2 * 3.141592653589793),
        ):
            if not any(test(float(t)) for t in thetas):
                gaps.append(f"{where}: misses {name}")
    return gaps


def _search(condition: str, thorough: bool, visit, theta_of=None, n_low: int = 2) -> dict:
    """Run ``visit(theta, A, m, n)`` (returns a mismatch row or None) over the whole range of
    ``condition`` (``theta_of(A, n)`` replaces the angles: the tests feed out-of-range ones).
    Lengths n_low..n_max for every size; coverage gaps include a missing n."""
    checked, bad, gaps, lengths = 0, [], [], {}
    for A, m, n_top in sizes(thorough):
        ns = list(range(n_low, n_top + 1))
        lengths[f"A={A},m={m}"] = [ns[0], ns[-1]] if ns else []
        for n in ns:
            thetas = theta_of(A, n) if theta_of else range_angles(condition, A, n)
            gaps += coverage_gaps(condition, A, n, thetas)
            for theta in thetas:
                checked += 1
                row = visit(theta, A, m, n)
                if row is not None:
                    bad.append(row)
    return {
        "checked": checked,
        "mismatches": bad,
        "coverage_gaps": gaps,
        "condition": condition,
        "n_sampled": lengths,
        "range": f"every proper input of length n, (|ALPH|, m, n_max) in {sizes(thorough)}, n = {n_low}..n_max, "
        f"{condition} sampled whole (theory.brute_retrieval.CONDITIONS; range_angles)",
    }


def exact_statement(name: str, thorough: bool, formula=None, condition: str | None = None) -> dict:
    """Statement ``name`` (theory.brute_retrieval.STATEMENTS) vs brute force over its whole
    stated range, or over ``condition`` (the tests feed a wider one), or with ``formula`` (a mutant)."""

    def visit(theta, A, m, n):
        row = check_statement(name, theta, A, m, n, formula)
        return None if row["agrees"] else row

    return {"statement": name, **_search(condition or STATEMENTS[name][2], thorough, visit)}


def _half_omega_floor(A: int, balls):
    return F.value(F.SUP_FLOOR, Angle(), A, 0, balls)  # "1 + cos(omega/2)" reads neither theta' nor n


def sup_floor(thorough: bool, floor=_half_omega_floor) -> dict:
    """C7-retrieval-sup-exact's 'never falls below 1 + cos(omega/2)', on the brute-force sup
    (a ``floor(A, balls)`` mutant can be fed); fails only where certified below."""

    def visit(theta, A, m, n):
        value = brute_last_position(theta, A, m, n)["sup"]
        balls = Interval(128)
        with balls.working():
            below = bool(value < floor(A, balls))
        return {"theta": str(theta), "A": A, "n": n, "sup": value.str(10)} if below else None

    return _search(STATEMENTS["sup-exact"][2], thorough, visit)


def margin_positive(thorough: bool, theta_of=None) -> dict:
    """C7-retrieval-margin-exact's '> 0' over its whole range, by brute force."""

    def visit(theta, A, m, n):
        value = brute_last_position(theta, A, m, n)["margin"]
        return None if value > 0 else {"theta": str(theta), "A": A, "n": n, "margin": value.str(10)}

    return _search(STATEMENTS["margin-exact"][2], thorough, visit, theta_of)


def _copy_gap(theta: Angle, balls):
    return F.value(F.COPY_GAP, fold(theta), 2, 0, balls)  # "1 - cos theta'" reads neither |ALPH| nor n


def inf_bound_chain(thorough: bool, theta_of=None, copy_gap=_copy_gap) -> dict:
    """C7-retrieval-inf-corrected's inequalities over the whole range (n+1) theta' <= omega:
    lambda(n) <= 1 - cos theta' <= 1 - cos(omega - n theta') for theta' > 0 and lambda(n) =
    1 - cos(omega - n theta') at theta' = 0 (brute-force lambda, certified comparisons; at
    theta' = omega/(n+1) the second inequality is an equality, so fail only where certified)."""

    def visit(theta, A, m, n):
        lam = brute_last_position(theta, A, m, n)["inf"]
        balls = Interval(128)
        with balls.working():
            bound = bound_value(theta, A, n)
            if fold(theta) == Angle():
                broken = not bool(lam.overlaps(bound))
                copy = bound
            else:
                copy = copy_gap(theta, balls)
                broken = bool(copy < lam) or bool(bound < copy)
        return (
            {"theta": str(theta), "A": A, "n": n, "lambda": lam.str(10), "copy_gap": copy.str(10)}
            if broken
            else None
        )

    out = _search(F.CHAIN_RANGE.plain, thorough, visit, theta_of)
    if theta_of is None:  # also omega/(2n-3), where the equality fails (inside this range for n >= 4)
        extra = _search(
            F.CHAIN_RANGE.plain,
            thorough,
            visit,
            lambda A, n: [edge(F.EQUALITY_FAILS.plain, A, n)] if 2 * n - 3 >= n + 1 else [],
            n_low=4,
        )
        out["checked"] += extra["checked"]
        out["mismatches"] += extra["mismatches"]
    return out


def equality_fails_beyond(thorough: bool) -> list:
    """Where (2n-3) theta' >= omega and (n+1) theta' <= omega (inside the range before issue 16),
    the formula for lambda(n) is wrong: its second term is <= 0 while brute-force lambda > 0.
    Tried at both ends, theta = omega/(2n-3) and omega/(n+1), half-way, and their mirrors -theta,
    theta + 2 pi (n >= 4)."""
    rows = []
    for A, m, n_top in sizes(thorough):
        for n in range(4, n_top + 1):
            low, high = edge(F.EQUALITY_FAILS.plain, A, n), edge(F.CHAIN_RANGE.plain, A, n)
            middle = Angle(pi_multiple=(low.pi_multiple + high.pi_multiple) / 2)
            thetas = [low, middle, high, -middle, middle + TWO_PI]
            rows += [check_statement("inf-corrected", theta, A, m, n) for theta in dict.fromkeys(thetas)]
    return rows


def condition_separates(thorough: bool, theta_of=None, condition: str = "0 < theta < omega/(2n)") -> dict:
    """C7-retrieval-condition: for 0 < theta < omega/(2 n0) every other-symbol key is strictly below
    the matched key on every proper input of every length <= n0 (brute force)."""

    def visit(theta, A, m, n0):
        return (
            None
            if other_symbols_below_match(theta, A, m, n0)
            else {"theta": str(theta), "A": A, "m": m, "n0": n0}
        )

    return _search(condition, thorough, visit, theta_of)


# ---- C4-retrieval-exact-condition and C5 (constructions) --------------------------------------


def exactness_criterion(thorough: bool, criterion=None) -> dict:
    """C4-retrieval-exact-condition: T_Retrieval exact on every proper input of length <= n0 iff
    its value-aware gap is > 0.  Left side: token-level brute force (average-hard attention on
    every proper input of every length 2..n0, theory.brute_retrieval); right side: the
    certified sign of ``logit_gaps``'s value_aware (or ``criterion(model)``, a mutant)."""
    from constructions.retrieval import RetrievalConstruction
    from constructions.temperature import certified_gaps

    cases = ((2, 1, 5), (3, 1, 4)) + (((2, 2, 5), (4, 1, 3)) if thorough else ())
    rows, bad = [], []
    for A, m, n0 in cases:
        w = Fraction(
            2, A
        )  # omega / pi: around the paper's edge omega/(2 n0) and the exact one omega/(2 n0 - 3)
        thetas = [Angle(pi_multiple=w / k) for k in (4 * n0, 2 * n0 + 1, 2 * n0, 2 * n0 - 1, 2 * n0 - 3)]
        thetas += [Angle(pi_multiple=Fraction(1, q)) for q in (5, 4, 3, 2, 1)]
        thetas += [
            Angle(pi_multiple=Fraction(1, 7) + Fraction(1, 10**9)),
            Angle(Fraction(4, 5)),
            Angle(Fraction(3)),
        ]
        for theta in thetas:
            model = RetrievalConstruction(list("abcdefgh"[:A]), m, theta, n0)
            predicted = (
                criterion(model) if criterion else certified_gaps(model)["signs"]["value_aware"] == "positive"
            )
            brute = all(brute_last_position(theta, A, m, n)["exact"] for n in range(2, n0 + 1))
            row = {
                "A": A,
                "m": m,
                "n0": n0,
                "theta": str(theta),
                "paper_condition": model.paper_condition(),
                "gap_positive": predicted,
                "brute_exact": brute,
            }
            rows.append(row)
            if predicted != brute:
                bad.append(row)
    return {
        "checked": len(rows),
        "mismatches": bad,
        "rows": rows,
        "range": f"(|ALPH|, m, n0) in {cases}, every proper input of every length 2..n0, 13 angles in (0, pi] "
        f"(omega/k around omega/(2 n0) and omega/(2 n0 - 3), pi/q, near-rational, theta/pi irrational)",
    }


def softmax_at_proven_beta(thorough: bool, beta_of=None) -> dict:
    """C5 on every valid / proper input of small T_Index and T_Retrieval: float64 softmax at the
    stated beta = ln((n0-1) Gamma/delta)/lambda (or ``beta_of(report)``, a mutant) decodes
    every position as the reference function does."""
    from constructions.index import IndexConstruction
    from constructions.retrieval import RetrievalConstruction
    from constructions.temperature import temperature_report

    models = [
        RetrievalConstruction(["a", "b"], 1, Angle(pi_multiple=Fraction(1, 16 * 5)), 5),
        RetrievalConstruction(["a", "b", "c"], 1, Angle(pi_multiple=Fraction(1, 24 * 4)), 4),
        IndexConstruction(["A", "B"], 2, Angle(pi_multiple=Fraction(2, 5)), 5),
    ]
    if thorough:
        models.append(RetrievalConstruction(["a", "b"], 2, Angle(pi_multiple=Fraction(1, 16 * 6)), 6))
    rows, bad = [], []
    for model in models:
        report = temperature_report(model)
        beta = beta_of(report) if beta_of else report["beta_value_aware"]
        ids = (
            model.all_proper_ids(model.n0)
            if hasattr(model, "all_proper_ids")
            else model.all_valid_ids(model.n0)
        )
        expected = model.reference_batch(ids)
        out, gaps = model.forward_batch(ids, "softmax", beta)
        row = {
            "construction": type(model).__name__,
            "n0": model.n0,
            "theta": str(model.theta),
            "beta": beta,
            "inputs": len(ids),
            "wrong_positions": int((out != expected).sum()),
            "min_margin": float(gaps.min()),
        }
        rows.append(row)
        if row["wrong_positions"]:
            bad.append(row)
    return {
        "rows": rows,
        "mismatches": bad,
        "range": "every proper (T_Retrieval |ALPH| 2, 3) / valid (T_Index |ALPH| 2, m 2) input of length n0, "
        "every position, float64 softmax at the stated beta",
    }

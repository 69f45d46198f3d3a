"""Brute-force checks of every statement the package wrote about T_Index (issue 16), each over
its stated quantifier range on small alphabets, m, lengths and an adversarial angle set, with
the maths in ``theory.brute_index`` (row by row / input by input, exact ties, certified order;
no continued fractions, tie periods or L_min).  The statement's own formula enters only as a
keyword argument (``d_max``, ``q_max``, ``L_of``, ``points``, ``lambda_up_to``): the tests
pass a deliberately wrong one and the check must reject it.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import flint

from proofs_check.evidence.words import listed
from theory.brute_index import (
    CosineOrder,
    average_hard_errors,
    literal_errors,
    reading_gap,
    tied_differences,
)
from theory.index_formulas import (
    D_MAX,
    INF_CAP,
    INF_QUADRATIC,
    L_MIN,
    Q_MAX,
    SUP_CAP,
    SUP_QUADRATIC,
    SUP_TAIL,
    circle_points,
    integer,
    pi_squared_multiple,
)
from theory.numbers import Interval
from theory.phases import Angle

# theta > pi, rational multiples of 2 pi (ties), 1e-9 off them, tiny, rational, zero, negative
ANGLES = [
    "0.8",
    "1",
    "2.5",
    "3",
    "4",
    "1/10**6",
    "0",
    "-2*pi/5",
    "2*pi/5",
    "2*pi*3/7",
    "pi",
    "2*pi*4/5",
    "2*pi/11",
    "2*pi/16",
    "2*pi/3 + 1/10**9",
    "2*pi/5 - 1/10**9",
    "2*pi*5/7 + 1/10**9",
    "pi + 1/10**6",
    "2*pi/17 - 1/10**12",
]
MS = (1, 2, 3, 5, 16)
MS_FEW = (1, 3, 16)  # the unique-top and infimum checks: the smallest, a middle and the paper's m


def stated_d_max(m: int, n0: int) -> int:
    return integer(D_MAX, m=m, n0=n0)  # C4-index-corrected (m < n0), the printed formula itself


def stated_L(n: int, m: int) -> int:
    return integer(L_MIN, n=n, m=m)  # C7-index-sup-corrected's L_min(n), the printed formula itself


def stated_q_max(n0: int) -> int:
    return integer(Q_MAX, n0=n0)  # C4-index-unique-top's largest tying denominator


def _points(P: int) -> Angle:
    return Angle(pi_multiple=Fraction(2, P))  # 2 pi / P


def _circle(L: int) -> Angle:
    return Angle(pi_multiple=Fraction(2, L + 1))  # 2 pi / (L + 1)


def _turns_denominator(theta: Angle) -> int | None:
    """q when theta / 2 pi = p / q, else None (exact: theta = c0 + c1 pi is a rational
    multiple of 2 pi iff c0 = 0)."""
    return None if theta.rational else (theta.pi_multiple / 2).denominator


def exactness_angles(n0: int, wide: bool) -> list[Angle]:
    """0 < theta <= pi: every 2 pi k / P with P <= n0 + 1, plus rational angles and 1e-9 off a tie."""
    top = 2 if wide else 1  # wide: theta up to 2 pi as well (beyond the stated range)
    out = [
        Angle(pi_multiple=Fraction(2 * k, P))
        for P in range(2, n0 + 2)
        for k in range(1, top * P)
        if gcd(k, P) == 1 and (wide or 2 * k <= P)
    ]
    return out + [Angle.of(a) for a in ("0.8", "3", "2*pi/3 + 1/10**9")]


def check_exactness(thorough: bool = False, d_max=stated_d_max) -> dict:
    """C4-index-corrected: average-hard T_Index errs on no valid input iff no D <= d_max has a tie."""
    grid = [
        (a, m, n0)
        for a in (2, 3)
        for m in range(1, 5 if thorough else 4)
        for n0 in range(m + 1, (8 if thorough else 7) - a + 2)
    ]
    cases, mismatches, positions = 0, [], 0
    for letters, m, n0 in grid:
        for theta in exactness_angles(n0, wide=thorough):
            run = average_hard_errors(theta, letters, m, n0)
            predicted = not tied_differences(theta, d_max(m, n0))
            cases, positions = cases + 1, positions + run["positions"]
            if predicted != (run["errors"] == 0):
                mismatches.append(
                    {
                        "alphabet": letters,
                        "m": m,
                        "n0": n0,
                        "theta": str(theta),
                        "errors": run["errors"],
                        "example_ids": run["examples"][:1],
                    }
                )
    vacuous = average_hard_errors("pi", 2, 3, 3)  # n0 <= m: Definition F.1 leaves no input
    return {
        "range": f"|ALPH| = 2 or 3, 1 <= m < n0, n0 <= {(7 if thorough else 6)} (|ALPH| = 2) / "
        f"{(6 if thorough else 5)} (|ALPH| = 3); every 2 pi k/P with P <= n0 + 1 "
        f"{'in (0, 2 pi)' if thorough else 'in (0, pi]'}, 0.8, 3, 2 pi/3 + 1e-9; every valid input "
        "at every position (token by token)",
        "cases": cases,
        "positions": positions,
        "mismatches": mismatches,
        "n0_le_m_inputs": vacuous["inputs"],
    }


def check_unique_top(thorough: bool = False, q_max=stated_q_max) -> dict:
    """C4-index-unique-top: some valid input of length <= n0 has a tied top logit iff
    theta / 2 pi = p / q with q <= q_max(n0)."""
    n_max = 24 if thorough else 18
    angles = [Angle.of(a) for a in ANGLES] + [
        Angle(pi_multiple=Fraction(2 * p, q)) + Angle(Fraction(e, 10**9))
        for q in range(1, n_max + 2)
        for p in range(q + 1)
        if gcd(p, q) == 1
        for e in ((0, 1) if q <= 7 else (0,))
    ]
    mismatches, cases = [], 0
    for theta in angles:
        order = CosineOrder(theta, n_max)
        q = _turns_denominator(theta)
        for m in MS_FEW:
            tied = False  # some prefix of length 2..n0 (every position of every valid input) ties
            for n0 in range(2, n_max + 1):
                tied = tied or reading_gap(order, n0, m, "min").is_zero
                if n0 > m:  # Definition F.1: inputs are longer than m
                    cases += 1
                    if tied != (q is not None and q <= q_max(n0)):
                        mismatches.append({"theta": str(theta), "m": m, "n0": n0, "tie_found": tied})
    return {
        "range": f"{len(angles)} angles (every 2 pi p/q with q <= {n_max + 1}, 0 <= p <= q, for q <= 7 also "
        f"+1e-9; theta > pi, 0, negative, tiny, rational), m = {listed(MS_FEW)}, m < n0 <= {n_max}; "
        "every query token at every length",
        "cases": cases,
        "mismatches": mismatches[:5],
        "mismatch_count": len(mismatches),
    }


def _not_above(order: CosineOrder, gap, phase) -> bool:
    """gap <= 1 - cos(phase), exactly: the gap is cos(top) - cos(second) with cos(top) = 1."""
    if gap.top != order.rank_of(Angle()):  # the common top must be cos 0 = 1 (found, not assumed)
        raise ArithmeticError("a row's largest logit is not cos 0")
    return gap.is_zero or order.rank_of(phase) >= gap.second  # cos(second) >= cos(phase)


def _certify_chain(L: int, n: int, points: int | None = None) -> bool:
    """The printed chains: SUP_CAP <= SUP_QUADRATIC <= SUP_TAIL at L, n (``points`` None), or
    INF_CAP <= INF_QUADRATIC at n; the cap against the quadratic with arb, the quadratics exactly."""
    cap, quadratic = (SUP_CAP, SUP_QUADRATIC) if points is None else (INF_CAP, INF_QUADRATIC)
    values = {"L": L, "n": n}
    balls = Interval(128)
    with balls.working():
        ok = bool(cap.evaluate(**values) <= quadratic.evaluate(**values))
    return ok and (
        points is not None or pi_squared_multiple(SUP_QUADRATIC, L=L) <= pi_squared_multiple(SUP_TAIL, n=n)
    )


def check_sup_corrected(thorough: bool = False, L_of=stated_L) -> dict:
    """C7-index-sup-corrected: brute max over inputs <= 1 - cos theta and <= 1 - cos(2 pi/(L+1)),
    the chain of bounds, and equality (sharpness) at theta = 2 pi/(L+1)."""
    n_max = 40 if thorough else 24
    failures, cases = [], 0
    for text in ANGLES:
        order = CosineOrder(text, n_max, extra=[_circle(L) for L in range(1, n_max + 1)])
        for m in MS:
            for n in range(2, n_max + 1):
                gap, L = reading_gap(order, n, m, "sup"), L_of(n, m)
                cases += 1
                if not (
                    _not_above(order, gap, order.theta)
                    and _not_above(order, gap, _points(circle_points(SUP_CAP, L=L)))
                    and _certify_chain(L, n)
                ):
                    failures.append({"theta": text, "m": m, "n": n, "L": L})
    sharp_failures = [
        {"m": m, "n": n, "L": L_of(n, m)}
        for m in MS
        for n in range(2, n_max + 1)
        if not _attained(n, m, "sup", _points(circle_points(SUP_CAP, L=L_of(n, m))), n_max + 1)
    ]
    return {
        "range": f"{len(ANGLES)} angles x m = {listed(MS)} x every n in 2..{n_max} (every query token); "
        f"sharpness: theta = 2 pi/(L+1) for every (m, n)",
        "cases": cases,
        "failures": failures[:5],
        "not_attained": sharp_failures[:5],
        "failure_count": len(failures) + len(sharp_failures),
    }


def _attained(n: int, m: int, reading: str, phase: Angle, size: int) -> bool:
    """At theta = phase the reading's value is exactly 1 - cos(phase) (rank equality)."""
    order = CosineOrder(phase, size)
    return order.rank_of(phase) == reading_gap(order, n, m, reading).second


def check_inf_corrected(
    thorough: bool = False,
    points=lambda n: circle_points(INF_CAP, n=n),
    lambda_up_to=None,
    offsets_up_to=lambda n: n - 1,
) -> dict:
    """C7-index-inf-corrected: brute min over inputs <= 1 - cos theta and <= 1 - cos(2 pi/points(n)),
    equality at theta = 2 pi/points(n); lambda(n) = min(n) iff no tie; and, for every small
    T_Index found exact token by token, lambda(n) = min(n) for every n <= lambda_up_to(m, n0)."""
    n_max = 40 if thorough else 24
    failures, cases = [], 0
    for text in ANGLES:
        order = CosineOrder(text, n_max, extra=[_circle(L) for L in range(1, n_max + 1)])
        for m, n in ((m, n) for m in MS_FEW for n in range(2, n_max + 1)):
            low, lam = reading_gap(order, n, m, "min"), reading_gap(order, n, m, "inf")
            same = lam.second == low.second  # lambda(n) equals the min reading
            # the stated condition, directly; theta in 2 pi Z makes every row constant (both readings 0)
            untied = not tied_differences(order.theta, offsets_up_to(n)) or bool(
                tied_differences(order.theta, 1)
            )
            cases += 1
            if not (
                _not_above(order, low, order.theta)
                and _not_above(order, low, _circle(points(n) - 1))
                and _certify_chain(points(n) - 1, n, points=n)
                and same == untied
            ):
                failures.append({"theta": text, "m": m, "n": n})
    not_attained = [
        n for n in range(2, n_max + 1) if not _attained(n, 1, "min", _circle(points(n) - 1), n_max)
    ]
    parenthetical = _lambda_equals_min_for_correct_index(
        lambda_up_to or (lambda m, n0: stated_d_max(m, n0) + 1), thorough
    )
    return {
        "range": f"{len(ANGLES)} angles x m = {listed(MS_FEW)} x every n in 2..{n_max} (every query token); "
        "equality at theta = 2 pi/n for every n; "
        f"parenthetical: {parenthetical['range']}",
        "cases": cases,
        "failures": failures[:5],
        "not_attained": not_attained,
        "parenthetical": parenthetical,
        "failure_count": len(failures) + len(not_attained) + len(parenthetical["failures"]),
    }


def _lambda_equals_min_for_correct_index(up_to, thorough: bool) -> dict:
    """For every small (m, n0, theta) whose T_Index is exact token by token (no formula used),
    lambda(n) = min(n) at every n <= up_to(m, n0)."""
    failures, correct = [], 0
    for m in range(1, 4):
        for n0 in range(m + 1, 8 if thorough else 7):
            for theta in exactness_angles(n0, wide=False):
                order = CosineOrder(theta, n0 + 1)
                if average_hard_errors(theta, 2, m, n0, order)["errors"]:
                    continue
                correct += 1
                for n in range(2, up_to(m, n0) + 1):
                    low, lam = reading_gap(order, n, m, "min"), reading_gap(order, n, m, "inf")
                    if low.is_zero or lam.second != low.second:
                        failures.append({"m": m, "n0": n0, "theta": str(theta), "n": n})
    return {
        "range": f"|ALPH| = 2, 1 <= m < n0 <= {7 if thorough else 6}, every 2 pi k/P (P <= n0 + 1) in (0, pi] "
        f"and 3 other angles: {correct} exact T_Index",
        "failures": failures[:5],
    }


def versus_stated(order: CosineOrder, gap, n: int) -> str:
    """ "above", "below" (or equal) or "undecided": the gap against Theorem 3.2's
    min{1 - cos theta, 2 pi^2/n^2}; the first term exactly (ranks), the second with arb."""
    if gap.is_zero:
        return "below"
    if gap.second > order.rank_of(order.theta):  # cos(second) < cos theta: gap > 1 - cos theta, exactly
        return "above"
    with Interval(256).working():
        value, square = gap.ball(order, 256), 2 * flint.arb.pi() ** 2 / n**2
        return "above" if value > square else ("below" if value < square else "undecided")


def reading_exceeds(theta, n: int, m: int, reading: str) -> dict:
    """The reading re-derived row by row over every query token of length n, and whether it
    exceeds Theorem 3.2's min{1 - cos theta, 2 pi^2/n^2} (certified)."""
    order = CosineOrder(theta, n)
    gap = reading_gap(order, n, m, reading)
    return {
        "value": gap.ball(order, 256).str(20, radius=True),
        "ball": gap.ball(order, 256),
        "versus_stated_bound": versus_stated(order, gap, n),
    }


def inf_by_kind_of_angle(n_max: int = 40, m: int = 16) -> dict:
    """C7-index-inf split by theta/2pi: for every angle of ANGLES and n in 2..n_max, Lemma F.1's
    lambda(n) brute-forced and compared with min{1 - cos theta, 2 pi^2/n^2}."""
    irrational, rational = {}, {}
    for text in ANGLES:
        order = CosineOrder(text, n_max)
        verdict = {n: versus_stated(order, reading_gap(order, n, m, "inf"), n) for n in range(2, n_max + 1)}
        above = [n for n, v in verdict.items() if v == "above"]
        target = rational if _turns_denominator(order.theta) is not None else irrational
        target[text] = {
            "violating_n": above[:6] + (["..."] if len(above) > 6 else []),
            "violations": len(above),
            "undecided_n": [n for n, v in verdict.items() if v == "undecided"],
        }
    return {
        "range": f"{len(ANGLES)} angles x every n in 2..{n_max}, m = {m}, every query token",
        "theta_over_2pi_irrational": irrational,
        "theta_over_2pi_rational": rational,
    }


def check_index_theorem_angle(n0s, theta_of=lambda n0: Angle(pi_multiple=Fraction(2, n0))) -> dict:
    """C4-index at its angle theta = theta_of(n0): no offset difference 1..n0-1 of any row ties
    (exact phases; so every top is unique), and small T_Index run token by token errs nowhere."""
    ties = {n0: tied_differences(theta_of(n0), n0 - 1) for n0 in n0s}
    small = {
        f"|ALPH|={a}, m={m}, n0={n0}": average_hard_errors(theta_of(n0), a, m, n0)["errors"]
        for a, m, n0 in ((2, 1, 6), (2, 3, 6), (3, 2, 5), (2, 4, 7))
    }
    failures = [{"n0": n0, "tied_offset_differences": d[:5]} for n0, d in ties.items() if d]
    failures += [{"brute_force": k, "errors": e} for k, e in small.items() if e]
    return {
        "tied_offset_differences": {n0: len(d) for n0, d in ties.items()},
        "brute_force_errors": small,
        "failures": failures,
    }


# ---- Definition F.1 read literally (C4-index-literal, C4-index-literal-corrected) -------------
def stated_literal_condition(theta, m: int, n0: int) -> bool:
    """C4-index-literal-corrected: exact on the valid inputs (no tie up to D_max) and
    cos(theta) < cos(2 theta) < ... < cos(m theta) (certified ranks, 0 = largest)."""
    order = CosineOrder(theta, max(n0, m + 1))
    rising = all(order.rank(u) > order.rank(u + 1) for u in range(1, m))
    return rising and not tied_differences(theta, stated_d_max(m, n0))


def literal_angles() -> list[Angle]:
    """The exactness angles plus angles inside, outside and 1e-9 around the edges of the
    windows 1/3 < theta/2pi < 2/5 and 3/5 < theta/2pi < 2/3 where m = 2, 3 can work; 0, a
    negative angle and one above 2 pi (the statement says any theta)."""
    turns = [Fraction(k, 100) for k in (30, 35, 37, 39, 41, 45, 50, 55, 61, 63, 65, 70)]
    edges = [Fraction(1, 3), Fraction(2, 5), Fraction(3, 5), Fraction(2, 3)]
    out = [Angle(pi_multiple=2 * t) for t in turns]
    out += [Angle(pi_multiple=2 * e) + Angle(Fraction(sign, 10**9)) for e in edges for sign in (-1, 1)]
    return out + [Angle(), Angle(pi_multiple=Fraction(-74, 100)), Angle(pi_multiple=Fraction(274, 100))]


def check_literal(thorough: bool = False, condition=stated_literal_condition) -> dict:
    """Average-hard T_Index token by token on every input of Sigma^n (m < n <= n0), against F.1
    read literally, compared with ``condition``; and the errors at the package's theta = 2 pi/n0."""
    grid = [(m, n0) for m in range(1, 5) for n0 in range(m + 1, m + (3 if thorough else 2) + 1) if n0 <= 6]
    cases, mismatches, positions, at_package_angle = 0, [], 0, {}
    for m, n0 in grid:
        for theta in exactness_angles(n0, wide=thorough) + literal_angles():
            run = literal_errors(theta, 2, m, n0)
            cases, positions = cases + 1, positions + run["positions"]
            if condition(theta, m, n0) != (run["errors"] == 0):
                mismatches.append(
                    {
                        "m": m,
                        "n0": n0,
                        "theta": str(theta),
                        "errors": run["errors"],
                        "example_ids": run["examples"][:1],
                    }
                )
        run = literal_errors(Angle(pi_multiple=Fraction(2, n0)), 2, m, n0)
        at_package_angle[f"m={m}, n0={n0}"] = {
            k: run[k] for k in ("errors", "pointing_before_start", "examples")
        }
    return {
        "range": f"|ALPH| = 2, 1 <= m <= 4, m < n0 <= min(6, m + {3 if thorough else 2}); every 2 pi k/P "
        f"(P <= n0 + 1) {'in (0, 2 pi)' if thorough else 'in (0, pi]'}, 0.8, 3, 2 pi/3 + 1e-9 and "
        f"{len(literal_angles())} angles in and around the windows; every input of Sigma^n at every "
        "position (token by token)",
        "cases": cases,
        "positions": positions,
        "mismatches": mismatches[:5],
        "mismatch_count": len(mismatches),
        "at_theta_2pi_over_n0": at_package_angle,
    }


def rising_windows(m: int) -> list[tuple[Fraction, Fraction]]:
    """Every alpha in [0, 1) with ||alpha|| > ||2 alpha|| > ... > ||m alpha||, as open intervals,
    exactly: between consecutive points k/(2u) (u <= m) each ||u alpha|| is linear, so each
    inequality is a half-line; intersect them in Fractions."""
    points = sorted({Fraction(k, 2 * u) for u in range(1, m + 1) for k in range(2 * u + 1)})
    found = []
    for a, b in zip(points, points[1:]):
        c = (a + b) / 2
        lines = []  # ||u x|| = sign * (u x - r) on (a, b)
        for u in range(1, m + 1):
            r = round(u * c)
            lines.append((1 if u * c > r else -1, u, r))
        lo, hi, ok = a, b, True
        for (s1, u1, r1), (s2, u2, r2) in zip(lines, lines[1:]):  # ||u1 x|| - ||u2 x|| > 0
            slope, const = s1 * u1 - s2 * u2, -s1 * r1 + s2 * r2
            if slope > 0:
                lo = max(lo, Fraction(-const, slope))
            elif slope < 0:
                hi = min(hi, Fraction(-const, slope))
            else:
                ok = ok and const > 0
        if ok and lo < hi:
            if found and found[-1][1] == lo and _rising_at(lo, m):
                found[-1] = (found[-1][0], hi)
            else:
                found.append((lo, hi))
    return found


def _rising_at(x: Fraction, m: int) -> bool:
    dist = [abs(u * x - round(u * x)) for u in range(1, m + 1)]
    return all(p > q for p, q in zip(dist, dist[1:]))

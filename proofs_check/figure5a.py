"""Data for Figure 5A: exact discrepancies against n, with the stated and corrected bounds.

    python -m proofs_check.figure5a --out FILE [--n-max 1000000]

Every n from 2 to 100, then a log-spaced grid to n-max.  T_Index at the paper's theta = 0.8
(m = 16) and at the worst angle for n = 17, plus the supremum over all admissible angles;
T_Retrieval at theta = 0.0027, |ALPH| = 8.  Values are midpoints of arb balls (radius below
1e-30) from the exact routes of theory.discrepancy_index / theory.discrepancy_retrieval, except
Retrieval beyond n0 (where no closed form applies): there sup / competitor / margin come
from the O(n |ALPH|) float64 optimisation and lambda from its certified lower bound, and
each series says which.  The file is written atomically (temp file, then rename).
"""

from __future__ import annotations

import argparse
import math
import sys

import flint
import numpy as np

from theory.discrepancy_index import index_discrepancy, index_L
from theory.discrepancy_retrieval import (bound_stated, in_regime, inf_lower_bound, n0_max, retrieval_closed_form,
                                          retrieval_general)
from theory.files import atomic_write_json
from theory.numbers import Interval
from theory.phases import Angle

M = 16
INDEX_THETA, RETRIEVAL_THETA, ALPH = "0.8", "0.0027", 8
WORST_INDEX = "2*pi/9 + 1/729"  # worst for n = 17 (L_min = 8): theta just above 2 pi / 9


def grid(n_max: int) -> list[int]:
    tail = np.unique(np.round(np.logspace(2, math.log10(max(n_max, 101)), 49)).astype(np.int64))
    return sorted(set(range(2, min(100, n_max) + 1)) | {int(n) for n in tail if 100 < n <= n_max})


def _f(ball) -> float:
    return float(ball.mid())


def index_series(theta: str, ns: list[int]) -> dict:
    balls, angle = Interval(128), Angle.of(theta)
    out = {"theta": angle.describe(), "m": M, "sup": [], "inf": [], "stated_bound": [],
           "corrected_sup_bound": [], "corrected_inf_bound": []}
    with balls.working():
        cap = 1 - angle.ball(balls).cos()
        for n in ns:
            out["sup"].append(index_discrepancy(angle, n, "sup", M)["float"])
            out["inf"].append(index_discrepancy(angle, n, "inf", M)["float"])
            out["stated_bound"].append(_f(cap.min(2 * flint.arb.pi() ** 2 / n ** 2)))
            L = index_L(n, "sup", M)
            out["corrected_sup_bound"].append(_f(cap.min(1 - (2 * flint.arb.pi() / (L + 1)).cos())))
            out["corrected_inf_bound"].append(_f(cap.min(1 - (2 * flint.arb.pi() / n).cos())))
    return out


def sup_over_angles(ns: list[int]) -> list[float]:
    """sup over admissible theta of Delta_sup(n) = 1 - cos(2 pi / (L_min(n) + 1)) (approached, not attained)."""
    balls = Interval(128)
    with balls.working():
        return [_f(1 - (2 * flint.arb.pi() / (index_L(n, "sup", M) + 1)).cos()) for n in ns]


def retrieval_series(ns: list[int]) -> dict:
    balls, theta = Interval(128), Angle.of(RETRIEVAL_THETA)
    out = {"theta": theta.describe(), "alph_size": ALPH, "n0_max": n0_max(theta, ALPH),
           "route": [], "sup": [], "inf": [], "inf_lower_bound": [], "competitor": [], "margin": [],
           "stated_bound": [], "corrected_competitor_bound": [], "corrected_inf_bound": []}
    with balls.working():
        for n in ns:
            exact = in_regime(theta, ALPH, n)
            out["route"].append("closed form (arb)" if exact else "float64 optimisation; inf: certified lower bound")
            for reading in ("sup", "competitor", "margin"):
                value = (_f(retrieval_closed_form(theta, ALPH, n, reading, balls)) if exact
                         else retrieval_general(float(theta), ALPH, n, reading))
                out[reading].append(value)
            out["inf"].append(_f(retrieval_closed_form(theta, ALPH, n, "inf", balls)) if exact else None)
            out["inf_lower_bound"].append(_f(inf_lower_bound(theta, ALPH, n)) if not exact and n <= 2000 else None)
            out["stated_bound"].append(_f(bound_stated(theta, ALPH, n, balls)))
            omega = 2 * flint.arb.pi() / ALPH
            out["corrected_competitor_bound"].append(_f(1 - (omega - (n - 1) * theta.ball(balls)).cos()))
            fits = bool((n + 1) * theta.ball(balls) <= omega)
            out["corrected_inf_bound"].append(_f(1 - theta.ball(balls).cos()) if fits else None)
    return out


def build(n_max: int) -> dict:
    ns = grid(n_max)
    return {
        "figure": "5A", "n": ns,
        "notes": {"readings": "sup = Definition 3.1 (max over inputs); inf = Lemma F.1's lambda(n); competitor = "
                              "the F.2.2 proof's displayed quantity, maxed over inputs; margin = min over inputs of "
                              "matched minus best other-symbol logit",
                  "stated_bounds": "Index: min{1 - cos theta, 2 pi^2/n^2}; Retrieval: 1 - cos(omega - n theta)",
                  "claims": "C7-index-*, C7-retrieval-* in python -m proofs_check"},
        "index": index_series(INDEX_THETA, ns),
        "index_worst_angle": index_series(WORST_INDEX, ns),
        "index_sup_over_angles": sup_over_angles(ns),
        "retrieval": retrieval_series(ns),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proofs_check.figure5a", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, metavar="FILE", help="JSON file to write")
    parser.add_argument("--n-max", type=int, default=10 ** 6, help="largest length on the grid (default 1e6)")
    args = parser.parse_args(argv)
    if args.n_max < 2:
        parser.error(f"--n-max must be >= 2, got {args.n_max}")
    atomic_write_json(args.out, build(args.n_max), indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

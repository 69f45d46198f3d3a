"""Data for Figure 5A: exact discrepancies against n, with the stated and corrected bounds.

    python -m proofs_check.figure5a --out FILE [--n-max N]   (N in 2..1e7, default 1e6)

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
from theory.discrepancy_retrieval import (
    bound_stated,
    in_regime,
    inf_lower_bound,
    n0_max,
    retrieval_closed_form,
    retrieval_general,
)
from theory.io.cli import OneLineParser, UsageError, interrupted
from theory.io.files import OutputError, atomic_write_json
from theory.io.output_policy import PACKAGE_ROOT, check_output, output_argument
from theory.io.provenance import provenance
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
    out = {
        "theta": angle.describe(),
        "m": M,
        "sup": [],
        "inf": [],
        "stated_bound": [],
        "corrected_sup_bound": [],
        "corrected_inf_bound": [],
    }
    with balls.working():
        cap = 1 - angle.ball(balls).cos()
        for n in ns:
            out["sup"].append(index_discrepancy(angle, n, "sup", M)["float"])
            out["inf"].append(index_discrepancy(angle, n, "inf", M)["float"])
            out["stated_bound"].append(_f(cap.min(2 * flint.arb.pi() ** 2 / n**2)))
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
    out = {
        "theta": theta.describe(),
        "alph_size": ALPH,
        "n0_max": n0_max(theta, ALPH),
        "route": [],
        "sup": [],
        "inf": [],
        "inf_lower_bound": [],
        "competitor": [],
        "margin": [],
        "stated_bound": [],
        "corrected_competitor_bound": [],
        "corrected_inf_bound": [],
    }
    with balls.working():
        for n in ns:
            exact = in_regime(theta, ALPH, n)
            out["route"].append(
                "closed form (arb)" if exact else "float64 optimisation; inf: certified lower bound"
            )
            for reading in ("sup", "competitor", "margin"):
                value = (
                    _f(retrieval_closed_form(theta, ALPH, n, reading, balls))
                    if exact
                    else retrieval_general(float(theta), ALPH, n, reading)
                )
                out[reading].append(value)
            out["inf"].append(_f(retrieval_closed_form(theta, ALPH, n, "inf", balls)) if exact else None)
            out["inf_lower_bound"].append(
                _f(inf_lower_bound(theta, ALPH, n)) if not exact and n <= 2000 else None
            )
            out["stated_bound"].append(_f(bound_stated(theta, ALPH, n, balls)))
            omega = 2 * flint.arb.pi() / ALPH
            out["corrected_competitor_bound"].append(_f(1 - (omega - (n - 1) * theta.ball(balls)).cos()))
            fits = bool((n + 1) * theta.ball(balls) <= omega)
            out["corrected_inf_bound"].append(_f(1 - theta.ball(balls).cos()) if fits else None)
    return out


def build(n_max: int) -> dict:
    ns = grid(n_max)
    return {
        "figure": "5A",
        "n": ns,
        "notes": {
            "readings": "sup = Definition 3.1 (max over inputs); inf = Lemma F.1's lambda(n); competitor = "
            "the F.2.2 proof's displayed quantity, maxed over inputs; margin = min over inputs of "
            "matched minus best other-symbol logit",
            "stated_bounds": "Index: min{1 - cos theta, 2 pi^2/n^2}; Retrieval: 1 - cos(omega - n theta)",
            "claims": "C7-index-*, C7-retrieval-* in python -m proofs_check",
        },
        "index": index_series(INDEX_THETA, ns),
        "index_worst_angle": index_series(WORST_INDEX, ns),
        "index_sup_over_angles": sup_over_angles(ns),
        "retrieval": retrieval_series(ns),
    }


PROG = "python -m proofs_check.figure5a"
SHIPPED_FILE = PACKAGE_ROOT / "proofs_check" / "results" / "figure5a.json"  # what figures/ reads

# Time and memory are linear in n_max: beyond n0 (~146) Retrieval has no closed form, and the
# float64 optimisation builds an n x |ALPH| table (three times) at each of the ~50 log-spaced
# grid points, whose sum is about 5 n_max.  Measured on a shared 2-core machine: n_max = 1e6
# takes 8 s; 1e7 takes 60 s of CPU and 1.5 GB peak memory.  So 1e8 would need 10 minutes and
# 15 GB, 1e13 two years; the limit keeps every accepted value under about a minute.  (The grid's
# int64 cast also overflows beyond 9.2e18.)
N_MAX_LIMIT = 10**7


def _n_max(text: str) -> int:
    """An integer in 2..N_MAX_LIMIT, also written as 1e6; anything else (NaN, 2.5, -3) is refused."""
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number.is_integer()):
            raise argparse.ArgumentTypeError(
                f"expected an integer in 2..{N_MAX_LIMIT}, got {text!r}"
            ) from None
        value = int(number)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be in 2..{N_MAX_LIMIT}, got {text}")
    if value > N_MAX_LIMIT:
        raise argparse.ArgumentTypeError(
            f"must be at most {N_MAX_LIMIT}, got {text}: time and memory grow "
            f"linearly with it ({N_MAX_LIMIT} takes about a minute and 1.5 GB)"
        )
    return value


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    output_argument(parser, "--out", required=True, metavar="FILE", help="JSON file to write")
    parser.add_argument(
        "--n-max",
        type=_n_max,
        default=10**6,
        metavar="N",
        help=f"largest length on the grid, 2..{N_MAX_LIMIT} (default 1e6)",
    )
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        # before the computing, not after it; the shipped figure5a.json is this command's own output
        check_output(
            args.out, "--out", parents=True, documented=[SHIPPED_FILE], replace_shipped=args.replace_shipped
        )
        atomic_write_json(args.out, {**build(args.n_max), "provenance": provenance()}, indent=1)
    except (
        OutputError,
        UsageError,
    ) as error:  # UsageError: the policy; OutputError: turned bad while computing
        parser.error(str(error))
    except OSError as error:  # the disk filled up, the folder went away
        parser.error(f"--out: cannot write {args.out}: {error.strerror or error}")
    except KeyboardInterrupt:
        return interrupted(PROG)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

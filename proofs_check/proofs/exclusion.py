"""The exclusion principle (C13) and the sharpness of its constant (C13-sharp-constant): the
derivation of ``proofs_check.claims.impossibility``'s module docstring, step by step.

N = n - 1 keys; M[k][j] is the logit of content k at position j, lambda_j = M[j][j];
delta_pos(pi, j) = M[pi(j)][j] - M[j][j] and delta_sym(pi, j) = M[j][pi(j)] - M[j][j] over every
permutation pi of the N keys (``theory.impossibility.exclusion_terms``).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import sympy

from proofs_check.evidence.classes import Step, proved
from theory.impossibility import additive_matrix, exclusion_terms

from . import is_zero, nonnegative

NS = (2, 3, 4)  # the sizes at which the sum over all of S_N is expanded symbolically


def _symbolic(N: int):
    return np.array(
        [[sympy.Symbol(f"M_{k}{j}", real=True) for j in range(N)] for k in range(N)], dtype=object
    )


def closed_form_rhs(M):
    """N^-2 sum_{j,k} [(M_kj - M_jj)^2 + (M_kj - M_kk)^2], the RHS with no permutation."""
    N = len(M)
    return sum((M[k][j] - M[j][j]) ** 2 + (M[k][j] - M[k][k]) ** 2 for j in range(N) for k in range(N)) / N**2


def counting() -> bool:
    """Each k is pi(j) for (N-1)! permutations: the count by enumeration, and the sum over S_N
    equal to the closed form, symbolically, at N = 2..4."""
    counts = all(
        sum(p[j] == k for p in itertools.permutations(range(N))) == math.factorial(N - 1)
        for N in range(1, 7)
        for j in range(N)
        for k in range(N)
    )
    return counts and all(
        is_zero(exclusion_terms(_symbolic(N))["rhs"] - closed_form_rhs(_symbolic(N))) for N in NS
    )


def variance_identity() -> bool:
    """sum_{j,k} (x_j - x_k)^2 = 2 N S2 - 2 S1^2 (expand each term; S1 = sum x, S2 = sum x^2), and
    (2 N S2 - 2 S1^2) / (2 N^2) = S2/N - (S1/N)^2, the population variance."""
    xj, xk, N, S1, S2 = sympy.symbols("x_j x_k N S1 S2", positive=True)
    term = is_zero((xj - xk) ** 2 - (xj**2 - 2 * xj * xk + xk**2))
    return term and is_zero((2 * N * S2 - 2 * S1**2) / (2 * N**2) - (S2 / N - (S1 / N) ** 2))


A, B = sympy.symbols("a b", real=True)


def two_squares() -> bool:
    return is_zero(2 * (A**2 + B**2) - (A + B) ** 2 - (A - B) ** 2) and nonnegative((A - B) ** 2)


def termwise() -> bool:
    """a = M_jj - M_kj, b = M_kj - M_kk: a + b = M_jj - M_kk, a^2 + b^2 is the RHS's term, and
    (2 N^2)^-1 * 2 = N^-2."""
    jj, kj, kk, N = sympy.symbols("M_jj M_kj M_kk N", positive=True)
    a, b = jj - kj, kj - kk
    return (
        is_zero(a + b - (jj - kk))
        and is_zero(a**2 + b**2 - ((kj - jj) ** 2 + (kj - kk) ** 2))
        and is_zero(2 / (2 * N**2) - 1 / N**2)
    )


def zero_rhs_is_constant() -> bool:
    """The RHS is a sum of squares (>= 0, 0 only when every M_kj = M_jj = M_kk: a constant table)."""
    return all(nonnegative(closed_form_rhs(_symbolic(N)) * N**2) for N in NS)


INEQUALITY = (
    Step(
        r"Each $k$ is $\pi(j)$ for exactly $(N-1)!$ permutations (fix $\pi(j) = k$, permute the rest), so "
        r"$\mathrm{RHS} := (\lVert\delta_{\mathrm{pos}}\rVert^2 + \lVert\delta_{\mathrm{sym}}\rVert^2) / "
        r"(N!\,N) = N^{-2} \sum_{j,k} [(M_{kj} - M_{jj})^2 + (M_{kj} - M_{kk})^2]$",
        counting,
        "the count enumerated for N <= 6; the sum over S_N expanded by sympy for N = 2..4",
        cases=r"the count $N \le 6$, the sum $N = 2, 3, 4$",
    ),
    Step(
        r"$\mathrm{Var}(\lambda) = (2N^2)^{-1} \sum_{j,k} (M_{jj} - M_{kk})^2$ (population variance)",
        variance_identity,
        "sympy identity",
    ),
    Step(
        r"$(a + b)^2 \le 2(a^2 + b^2)$, since the difference is $(a - b)^2$",
        two_squares,
        "sympy identity and sign",
    ),
    Step(
        "With $a = M_{jj} - M_{kj}$ and $b = M_{kj} - M_{kk}$, $a + b = M_{jj} - M_{kk}$: summing over "
        r"$j, k$, $\mathrm{Var}(\lambda) \le N^{-2} \sum_{j,k} (a^2 + b^2) = \mathrm{RHS}$",
        termwise,
        "sympy identities",
    ),
)

EXCLUSION = proved(
    *INEQUALITY,
    Step(
        r"A head both positional and symbolic has $\delta_{\mathrm{pos}} = \delta_{\mathrm{sym}} = 0$, so "
        r"$\mathrm{RHS} = 0$ and $\mathrm{Var}(\lambda) = 0$; RHS is a sum of squares of $M_{kj} - M_{jj}$ "
        "and $M_{kj} - M_{kk}$, so every logit $M_{kj}$ equals $M_{jj} = M_{kk}$: the logits are constant",
        zero_rhs_is_constant,
        "sympy sign of the sum of squares, N = 2..4",
        cases="$N = 2, 3, 4$",
    ),
)


def equality_case() -> bool:
    """Equality iff a = b for every j, k, i.e. M_kj = (M_jj + M_kk)/2; an additive head M_kj = s_k
    + p_j with s_k - p_k = c constant satisfies it."""
    s_k, p_j, p_k, c = sympy.symbols("s_k p_j p_k c", real=True)
    M = lambda s, p: s + p  # noqa: E731
    a = M(p_j + c, p_j) - M(p_k + c, p_j)  # M_jj - M_kj
    b = M(p_k + c, p_j) - M(p_k + c, p_k)  # M_kj - M_kk
    return is_zero((A + B) ** 2 - 2 * (A**2 + B**2) + (A - B) ** 2) and is_zero(a - b)


def attained() -> bool:
    """An additive head with a non-constant diagonal: Var > 0 and Var/RHS = 1 exactly; with the
    sample variance (times N/(N-1)) the ratio is N/(N-1)."""
    terms = exclusion_terms(additive_matrix([Fraction(0), Fraction(1), Fraction(3)]))
    N = terms["N"]
    return (
        terms["var"] > 0
        and terms["ratio"] == 1
        and terms["var"] * N / (N - 1) / terms["rhs"] == Fraction(N, N - 1)
    )


SHARP = proved(
    *INEQUALITY,
    Step(
        "Equality needs $(a - b)^2 = 0$ for every $j, k$, i.e. $M_{kj} = (M_{jj} + M_{kk})/2$: exactly "
        r"the additive heads, $\mathrm{logit} = s(\mathrm{content}) + p(\mathrm{position})$ with $s - p$ "
        "constant",
        equality_case,
        "sympy identities",
    ),
    Step(
        r"An additive head with a non-constant diagonal has $\mathrm{Var} > 0$ and $\mathrm{Var} = "
        r"\mathrm{RHS}$, so no constant below 1 works; with the sample variance ($N/(N-1)$ times the "
        "population one) the sharp constant is $N/(N-1)$",
        attained,
        "exact rationals on the additive head with diagonal 0, 1, 3",
    ),
)

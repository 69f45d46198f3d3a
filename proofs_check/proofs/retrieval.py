"""The argument of ``theory.discrepancy_retrieval``'s module docstring, as checked steps: the margin
and competitor readings of T_Retrieval in closed form (C7-retrieval-margin-exact,
C7-retrieval-competitor-corrected), the side condition theta < omega/(2 n0) (C7-retrieval-condition)
and theta = 0 (C8).

Logits at the query: a key at offset t = 0..n-1 whose left letter differs from the query letter
by d in Z_A (A = |ALPH|, omega = 2 pi/A) has logit cos(d omega + t theta).  Every step reads the
formulas the statements print (``theory.retrieval_formulas``) at the moment it runs.
"""

from __future__ import annotations

import sympy
from sympy import cos, sin

from proofs_check.evidence.classes import Step, proved
from theory import retrieval_formulas as F
from theory.brute_retrieval import LETTERS, input_shapes, proper_inputs
from theory.discrepancy_retrieval import realizable_vectors
from theory.formula import THETA_PRIME
from theory.functions import retrieval, split_pair

from . import cos_decreasing, is_zero, nonnegative, positive

TP, W, N, T = THETA_PRIME, sympy.Symbol("omega"), sympy.Symbol("n"), sympy.Symbol("t")
# nonnegative / positive stand-ins for the substitutions that encode a step's hypotheses
U, V, X, R = sympy.symbols("u v x r", nonnegative=True)
Rp, Wp = sympy.symbols("r_p omega_p", positive=True)
SMALL = ((2, 4), (3, 4), (4, 3))  # (|ALPH|, largest n) where the finite facts are enumerated

BEST_OTHER = cos(W - T * TP)  # the best other-symbol logit at offset t (d = -1), step "best other"


def symmetry() -> bool:
    """Periodicity and evenness of every logit, and the relabelling that undoes theta -> -theta."""
    d, t, th = (
        sympy.Symbol("d", integer=True),
        sympy.Symbol("t", integer=True),
        sympy.Symbol("theta", real=True),
    )
    periodic = is_zero(cos(d * W + t * (th + 2 * sympy.pi)) - cos(d * W + t * th))
    even = is_zero(cos(d * W - t * th) - cos(-d * W + t * th))
    relabelled = True
    for A, n_top in SMALL:
        flip = {LETTERS[i]: LETTERS[(-i) % A] for i in range(A)}  # phi -> -phi, a bijection of ALPH
        for n in range(1, n_top + 1):
            for tokens in proper_inputs(A, 1, n):
                image = ["".join(flip.get(ch, ch) for ch in tok) for tok in tokens]
                try:
                    answer = retrieval(image)[-1]
                except ValueError:
                    return False
                relabelled &= answer == "".join(flip.get(ch, ch) for ch in retrieval(list(tokens))[-1])
    return periodic and even and relabelled


def realizable_rows() -> bool:
    """The rows of proper inputs are the vectors of Z_A^n with a zero (the docstring's construction)."""
    for A, n_top in SMALL:
        for n in range(1, n_top + 1):
            rows = {tuple(d for _, d in pairs) for pairs, *_ in input_shapes(A, 1, n)}
            if rows != set(realizable_vectors(A, n)):
                return False
    return True


def regime() -> bool:
    """2n theta' < omega implies 2(n-1) theta' < omega, so (n-1) theta' < omega/2 (theta' >= 0)."""
    exact, closed = F.EXACT_RANGE.relation, F.REGIME.relation
    return (
        exact.rhs == closed.rhs == W
        and exact.rel_op == closed.rel_op == "<"
        and nonnegative(exact.lhs - closed.lhs, {TP: X})
        and is_zero(closed.lhs / 2 - (N - 1) * TP)
    )


def best_other() -> bool:
    """For 0 <= x < omega/2 and d = 1..A-1: the distance of d omega + x to 2 pi Z is >= omega - x,
    with equality at d = A - 1, and omega - x lies in [0, pi]."""
    d, A = sympy.symbols("d A", positive=True, integer=True)
    omega_of_A = 2 * sympy.pi / A
    up = nonnegative((d * W + X) - (W - X), {d: 1 + U, W: Wp})  # d omega + x, d >= 1
    down = nonnegative(((A - d) * W - X) - (W - X), {A: d + 1 + U, W: Wp})  # (A - d) omega - x, d <= A - 1
    equal = is_zero(((A - (A - 1)) * W - X) - (W - X))
    in_range = nonnegative(sympy.pi - omega_of_A, {A: 2 + U}) and nonnegative(W - X, {W: 2 * X + Rp})
    return cos_decreasing() and up and down and equal and in_range


def monotone() -> bool:
    """d/dt cos(t theta') = -theta' sin(t theta') <= 0 and d/dt cos(omega - t theta') = theta'
    sin(omega - t theta') >= 0 while both arguments stay in [0, pi] (the regime)."""
    return (
        is_zero(sympy.diff(cos(T * TP), T) + TP * sin(T * TP))
        and is_zero(sympy.diff(BEST_OTHER, T) - TP * sin(W - T * TP))
        and cos_decreasing()
    )


def worst_input() -> bool:
    """The two candidates differ by 4 sin(x/2) cos(omega/2) sin(omega/2 - (2n-3) x/2) >= 0, so
    margin(n) is the t* = n-2 candidate: the printed MARGIN."""
    x = TP
    first = cos((N - 1) * x) - BEST_OTHER.subs(T, N - 2)  # matched at n-1, rival at n-2
    second = cos((N - 2) * x) - BEST_OTHER.subs(T, N - 1)  # matched at n-2, rival at n-1
    factors = 4 * sin(x / 2) * cos(W / 2) * sin(W / 2 - (2 * N - 3) * x / 2)
    # in the regime: x/2 in [0, pi/2), omega/2 in (0, pi/2], omega/2 - (2n-3)x/2 in (0, omega/2]
    signs = nonnegative(W / 2 - (2 * N - 3) * x / 2, {W: 2 * (N - 1) * X + Rp, x: X, N: 2 + U})
    return is_zero(first - second - factors) and signs and is_zero(second - F.MARGIN.expr)


def product_form() -> bool:
    return is_zero(F.MARGIN.expr - F.MARGIN_PRODUCT.expr)


def positive_in_range() -> bool:
    """With omega = 2n theta' + r (r > 0): omega - theta' > 0 and omega - (2n-3) theta' > 0, and both
    are <= omega <= pi, so both sines of the product form are positive."""
    hyp = {W: 2 * N * X + Rp, TP: X, N: 2 + U}
    return (
        positive(W - TP, hyp)
        and positive(W - (2 * N - 3) * TP, hyp)
        and nonnegative(W - (W - TP), hyp)
        and nonnegative(W - (W - (2 * N - 3) * TP), hyp)
    )


SYMMETRY = Step(
    r"Every reading depends on $\theta$ only through $\theta'$: each logit $\cos(d\omega + t\theta)$ "
    r"($t$ an integer offset, $d \in \mathbb{Z}_A$) is $2\pi$-periodic in $\theta$, and $\theta "
    r"\mapsto -\theta$ turns it into $\cos(-d\omega + t\theta)$, which relabelling the letters $\phi "
    r"\mapsto -\phi$ (a bijection of ALPH: proper inputs stay proper, answers follow) undoes",
    symmetry,
    "sympy identities; the relabelling on every proper input, |ALPH| <= 4, n <= 4",
    cases=r"the relabelling: $\lvert\mathrm{ALPH}\rvert \le 4$, $n \le 4$",
)
ROWS = Step(
    r"The rows of proper inputs are exactly the vectors $(d_0, \ldots, d_{n-1}) \in \mathbb{Z}_A^n$ "
    "with some $d_t = 0$: a proper input has a key matching the query letter, and the input of "
    "theory.discrepancy_retrieval's docstring realizes any such vector",
    realizable_rows,
    "the construction checked on every vector, |ALPH| <= 4, n <= 4",
    cases=r"$\lvert\mathrm{ALPH}\rvert \le 4$, $n \le 4$",
)
REGIME = Step(
    r"$2n\theta' < \omega$ implies $2(n-1)\theta' < \omega$, so every offset $t \le n-1$ has $0 \le "
    r"t\theta' < \omega/2 \le \pi/2$",
    regime,
    "sympy, from the printed conditions",
)
BEST_OTHER_STEP = Step(
    r"For $0 \le x < \omega/2$ and $d = 1, \ldots, A-1$ the angle $d\omega + x$ lies at distance "
    r"$\min(d\omega + x, (A-d)\omega - x) \ge \omega - x$ from $2\pi\mathbb{Z}$, with equality at $d = "
    r"A-1 = -1 \bmod A$; cos decreases on $[0, \pi]$, so the best other-symbol logit at offset $t$ is "
    r"$\cos(\omega - t\theta')$",
    best_other,
    "sympy signs after substitution; cos decreasing on [0, pi]",
)
MONOTONE = Step(
    r"$\cos(t\theta')$ decreases and $\cos(\omega - t\theta')$ increases in $t$ on $0, \ldots, n-1$: "
    "the best matched key present is the one nearest the query, the best other-symbol key present the "
    "one farthest from it",
    monotone,
    "sympy derivatives; cos decreasing on [0, pi]",
)
WORST = Step(
    r"For the nearest matched offset $t^*$ the margin is $\ge \cos(t^* \theta') - \max_{t \ne t^*} "
    r"\cos(\omega - t\theta')$, with equality on the realizable vector with $d = 0$ at $t^*$ and $d = "
    "-1$ elsewhere; of the candidates $t^* = n-1$ and $t^* = n-2$ (smaller $t^*$ only raise it), the "
    r"difference is $4\sin(\theta'/2)\cos(\omega/2)\sin(\omega/2 - (2n-3)\theta'/2) \ge 0$, so "
    r"$\mathrm{margin}(n) = \cos((n-2)\theta') - \cos(\omega - (n-1)\theta')$, the printed formula",
    worst_input,
    "sympy identity and signs; compared with the printed MARGIN",
)
PRODUCT = Step(
    r"Sum to product: $\cos((n-2)\theta') - \cos(\omega - (n-1)\theta') = 2\sin((\omega - "
    r"\theta')/2)\sin((\omega - (2n-3)\theta')/2)$",
    product_form,
    "sympy identity on the two printed formulas",
)
POSITIVE = Step(
    r"With $2n\theta' < \omega$ both sine arguments lie in $(0, \pi/2]$, so $\mathrm{margin}(n) > 0$",
    positive_in_range,
    "sympy signs after substitution",
)

MARGIN_EXACT = proved(SYMMETRY, ROWS, REGIME, BEST_OTHER_STEP, MONOTONE, WORST, PRODUCT, POSITIVE)


def competitor_formula() -> bool:
    """Best matched key over inputs: cos(0) = 1 (an ALPH x INT query matches itself at offset 0); the
    best other-symbol logit at any position is at t = n-1 (monotone): the printed COMPETITOR, which
    is Theorem 3.2's BOUND with n - 1 for n."""
    return is_zero(cos(0 * TP) - BEST_OTHER.subs(T, N - 1) - F.COMPETITOR.expr) and is_zero(
        F.BOUND.expr.subs(N, N - 1) - F.COMPETITOR.expr
    )


COMPETITOR_CORRECTED = proved(
    SYMMETRY,
    ROWS,
    REGIME,
    BEST_OTHER_STEP,
    MONOTONE,
    Step(
        r"The largest matched logit over inputs is $\cos(0) = 1$ (an $\mathrm{ALPH} \times \mathrm{INT}$ "
        r"query matches itself at offset 0) and the best other-symbol logit at any position $1, \ldots, n$ "
        r"is at offset $n-1$, $d = -1$; so the maximum over inputs is $1 - \cos(\omega - (n-1)\theta')$, "
        r"the printed formula, Theorem 3.2's $1 - \cos(\omega - n\theta')$ with $n - 1$ for $n$",
        competitor_formula,
        "sympy, on the printed formulas",
    ),
)


def paper_condition_in_range() -> bool:
    """0 < theta < omega/(2 n0) and 2 <= n <= n0: theta' = theta (theta < omega/4 <= pi/2) and 2n theta < omega."""
    n0 = sympy.Symbol("n0", positive=True)
    hyp = {W: 2 * n0 * X + Rp, n0: N + U, N: 2 + V}
    return positive(W - 2 * N * X, hyp) and nonnegative(sympy.pi - W / 4, {W: 2 * sympy.pi / (2 + U)})


def matched_keys_agree() -> bool:
    """The best matched key holds the answer: for an ALPH x ALPH query every key with the query's
    letter is the answer token (Definition F.2); for an ALPH x INT query the answer is the query
    itself, the matched key at offset 0 (cos 0 = 1 > cos(t theta') for 0 < t theta' < pi)."""
    for A, n_top in SMALL:
        for n in range(1, n_top + 1):
            for _pairs, matched, tokens, answer in input_shapes(A, 1, n):
                pointer = not split_pair(tokens[-1])[1].isdigit()
                held = {tok for tok, hit in zip(tokens, matched) if hit} if pointer else {tokens[-1]}
                if held != {answer}:
                    return False
    return True


CONDITION = proved(
    Step(
        r"$0 < \theta < \omega/(2n_0)$ and $2 \le n \le n_0$ give $\theta' = \theta$ and $2n\theta' < "
        r"\omega$, the range of C7-retrieval-margin-exact",
        paper_condition_in_range,
        "sympy signs after substitution",
    ),
    ROWS,
    REGIME,
    BEST_OTHER_STEP,
    MONOTONE,
    WORST,
    PRODUCT,
    POSITIVE,
    Step(
        r"$\mathrm{margin}(n) > 0$: on every input of length $n \le n_0$ the best matched key is strictly "
        r"above every other-symbol key present; it holds the answer (an $\mathrm{ALPH} \times "
        r"\mathrm{ALPH}$ query: every matched key is the answer token, Definition F.2; an $\mathrm{ALPH} "
        r"\times \mathrm{INT}$ query: the query itself at offset 0, unique top since $0 < t\theta' < \pi$ "
        "for its other matches), so average-hard attention picks the answer",
        matched_keys_agree,
        "Definition F.2 on every proper input, |ALPH| <= 4, n <= 4",
        cases=r"$\lvert\mathrm{ALPH}\rvert \le 4$, $n \le 4$",
    ),
)


def theta_zero() -> bool:
    """At theta = 0 every logit is cos(d omega), whatever the offset; a matched key gives 1, the
    largest value, and every other value is <= cos(omega) < 1 (d != 0: the best other step at x = 0)."""
    A = sympy.Symbol("A", positive=True, integer=True)
    independent = cos(sympy.Symbol("d") * W + T * 0) == cos(sympy.Symbol("d") * W)
    below_one = positive(2 * sympy.pi / A, {A: 2 + U}) and nonnegative(
        sympy.pi - 2 * sympy.pi / A, {A: 2 + U}
    )
    return independent and below_one and best_other() and is_zero(F.INF_AT_ZERO.expr - (1 - cos(W)))


def gaps_at_zero() -> bool:
    """Every gap the readings take at theta = 0 is 1 - v with v = 1 or v <= cos(omega) (so >= 1 -
    cos omega when positive), and 1 - cos(omega) > 0 because 0 < omega <= pi and cos decreases there;
    the input with one other key at d = 1 attains it: the printed lambda at theta' = 0."""
    A = sympy.Symbol("A", positive=True, integer=True)
    return (
        cos_decreasing()
        and positive(2 * sympy.pi / A, {A: 2 + U})
        and nonnegative(sympy.pi - 2 * sympy.pi / A, {A: 2 + U})
        and is_zero(F.INF_AT_ZERO.expr - (cos(0 * W) - cos(1 * W)))
    )


C8_PROOF = proved(
    ROWS,
    Step(
        r"At $\theta = 0$ each logit is $\cos(d\omega)$, independent of the offset; a proper input has a "
        r"matched key (logit 1, the largest value), and every other-symbol key has logit $\le \cos(\omega) "
        r"< 1$, since $0 < \omega \le \pi$",
        theta_zero,
        "sympy; the best-other step at x = 0",
    ),
    Step(
        r"So at every length $n \ge 2$ the sup gap (top minus second), $\lambda$ (top minus the next value "
        r"strictly below), the competitor and the margin are each $\ge 1 - \cos(\omega) > 0$ (equal to it "
        r"on the input with one other key at $d = 1$): $\Delta_{\mathrm{Retrieval}}(n)$ stays away from "
        "zero; only the tie-as-0 minimum vanishes (repeated tokens tie)",
        gaps_at_zero,
        "sympy signs; cos decreasing on [0, pi]",
    ),
)

"""The argument of ``theory.discrepancy_index``'s module docstring, as checked steps: T_Index's
discrepancy under the max-over-inputs reading (C7-index-sup-corrected), by Dirichlet's pigeonhole; the
min reading and Lemma F.1's lambda (C7-index-inf-corrected); and when T_Index is exact
(C4-index-corrected: unique tops decode Index, and a tie at D <= D_max breaks an explicit witness).

Every step holds for every theta, m >= 1 and n >= 2: the checks are sympy identities and signs
with symbolic n, m, L, s, t, theta (parities of n - 1 and the two sides of floor((n-1)/2) are
exhausted, each a full case), never a finite range of lengths.  The steps read the formulas the
statement prints (``theory.index_formulas``) when they run.
"""

from __future__ import annotations

import sympy
from sympy import Max, cos, pi, sin

from proofs_check.evidence.classes import Step, proved
from theory import index_formulas as IF

from . import cos_decreasing, is_zero, nonnegative, positive

N, M, L = sympy.Symbol("n"), sympy.Symbol("m"), sympy.Symbol("L")
THETA = sympy.Symbol("theta", real=True)
# nonnegative integer stand-ins for the substitutions that encode a step's hypotheses
A, B, C, K = sympy.symbols("a b c k", integer=True, nonnegative=True)
R = sympy.Symbol("r", nonnegative=True)


def _max_at_least(maximum, term) -> bool:
    """``term`` is one of the arguments of the sympy Max ``maximum`` (so maximum >= term)."""
    return maximum.func is Max and any(is_zero(arg - term) for arg in maximum.args)


def logit_row() -> bool:
    """The construction's logit (matrix route, symbolic s, t, theta) is cos((t - s) theta)."""
    from constructions.index import number_task

    route, closed = number_task(7, "0.8").symbolic_identity()  # the angle is a symbol on this route
    s, t = sympy.symbols("s t", integer=True)
    theta = next(iter(closed.free_symbols - {s, t}))
    return is_zero(route - closed) and is_zero(closed - cos((t - s) * theta))


def offsets() -> bool:
    """u = t - s, t = 0..n-1, 0 <= s <= n-1: 0 is in range, every |u| <= max(s, n-1-s), and every
    v in 1..max(s, n-1-s) is |u| of some u != 0 in range (v <= s: u = -v; v <= n-1-s: u = v)."""
    v = 1 + A
    low, high = -sympy.Symbol("s"), N - 1 - sympy.Symbol("s")  # u runs over low..high
    s_sym = sympy.Symbol("s")
    zero_in = nonnegative(0 - low, {s_sym: B}) and nonnegative(high - 0, {N: s_sym + 1 + C, s_sym: B})
    # v <= s: u = -v is in range
    left = nonnegative(-v - low, {s_sym: v + B}) and nonnegative(
        high - (-v), {N: s_sym + 1 + C, s_sym: v + B}
    )
    # v <= n-1-s: u = v is in range
    right = nonnegative(v - low, {s_sym: B}) and nonnegative(high - v, {N: s_sym + 1 + v + C, s_sym: B})
    # every u in range has |u| <= max(s, n-1-s): u = high - a gives u <= n-1-s, and u = low + a gives
    # -u = s - a <= s; each of s, n-1-s is an argument of the Max
    L_s = Max(s_sym, high)
    bounded = (
        nonnegative(high - (high - A))
        and nonnegative(s_sym - (s_sym - A))
        and _max_at_least(L_s, s_sym)
        and _max_at_least(L_s, high)
    )
    even = is_zero(cos(-v * THETA) - cos(v * THETA))
    return zero_in and left and right and bounded and even


def _lower_bounds(e: int) -> bool:
    """n - 1 = 2k + e: for every admissible s, max(s, n-1-s) >= ceil((n-1)/2) = k + e and >= n-1-m."""
    s_sym, n_val = sympy.Symbol("s"), 2 * K + e + 1
    ceil = IF.L_MIN.expr.args  # the printed Max's arguments, one of them the ceiling
    ceil_term = next(a for a in ceil if a.has(sympy.ceiling))
    rest = next(a for a in ceil if not a.has(sympy.ceiling))
    half = ceil_term.subs(N, n_val)
    if not is_zero(half - (K + e)):
        return False
    L_s = Max(s_sym, n_val - 1 - s_sym)
    below = nonnegative(L_s - half, {s_sym: K - A})  # s <= k: n-1-s >= k + e
    above = nonnegative(L_s - half, {s_sym: K + 1 + A})  # s >= k+1 >= k + e
    # max(s, n-1-s) >= n-1-s (an argument of the Max) >= n-1-m for s <= m
    by_m = _max_at_least(L_s, n_val - 1 - s_sym) and nonnegative(
        (n_val - 1 - s_sym) - rest.subs(N, n_val), {M: s_sym + B}
    )
    return below and above and by_m


def _attained(e: int) -> bool:
    """n - 1 = 2k + e: s* = min(m, k) is admissible and max(s*, n-1-s*) is the printed L_min."""
    n_val = 2 * K + e + 1
    printed = IF.L_MIN.expr.subs(N, n_val)
    big = printed.subs(M, K + A)  # m >= k: s* = k
    small = printed.subs(M, K - 1 - A)  # m < k: s* = m
    return (
        is_zero(big - Max(K, n_val - 1 - K))
        and is_zero(small - Max(K - 1 - A, n_val - 1 - (K - 1 - A)))
        and nonnegative(n_val - 1 - K)
    )


def l_min() -> bool:
    return all(_lower_bounds(e) and _attained(e) for e in (0, 1))


def pigeonhole() -> bool:
    """The L+1 arcs between consecutive sorted points x_(0) <= .. <= x_(L) of R/Z telescope to 1; if
    every arc were >= c their sum would be (L+1) c + (nonnegative) so c <= 1/(L+1); and for points
    x_a, x_b of u_a alpha = k_a + x_a, u_b alpha = k_b + x_b: (u_b - u_a) alpha differs from x_b - x_a
    by an integer."""
    i = sympy.Symbol("i", integer=True, nonnegative=True)
    Lp = sympy.Symbol("L", integer=True, positive=True)
    x, h = sympy.Function("x"), sympy.Function("h", nonnegative=True)
    arcs = sympy.Sum(x(i + 1) - x(i), (i, 0, Lp - 1)).doit() + (1 + x(0) - x(Lp))
    c = sympy.Symbol("c", real=True)
    total = sympy.Sum(c + h(i), (i, 0, Lp)).doit()
    mean = is_zero(sympy.expand(total - (Lp + 1) * c - sympy.Sum(h(i), (i, 0, Lp)).doit()))
    alpha, ua, ub, ka, kb, xa, xb = sympy.symbols("alpha u_a u_b k_a k_b x_a x_b", real=True)
    shift = ((ub - ua) * alpha - (kb - ka) - (xb - xa)).subs({ua * alpha: ka + xa, ub * alpha: kb + xb})
    return (
        is_zero(arcs - 1)
        and mean
        and sympy.Sum(h(i), (i, 0, Lp)).is_nonnegative is True
        and is_zero(sympy.expand(shift).subs({ua * alpha: ka + xa, ub * alpha: kb + xb}))
    )


def _cap_math() -> bool:
    v, k = sympy.symbols("v k", integer=True)
    periodic = is_zero(cos(2 * pi * (v * THETA / (2 * pi) - k)) - cos(v * THETA))
    return periodic and nonnegative(pi - 2 * pi / (L + 1), {L: 1 + R}) and cos_decreasing()


def cap() -> bool:
    """cos(v theta) = cos(2 pi (v alpha - k)) for integers k (alpha = theta/2pi), cos even, and
    0 <= 2 pi ||v alpha|| <= 2 pi/(L+1) <= pi for L >= 1: cos decreasing gives cos(v theta) >=
    cos(2 pi/(L+1)), the printed cap 1 - cos(2 pi/(L+1))."""
    return _cap_math() and is_zero(IF.SUP_CAP.expr - (1 - cos(2 * pi / (L + 1))))


def first_offset() -> bool:
    """v = 1 is an offset: L_min >= 1 and n - 1 >= 1 for every n >= 2 (both parities, both m cases)."""
    ok = nonnegative((N - 1) - 1, {N: 2 + A})
    for e in (0, 1):
        printed = IF.L_MIN.expr.subs(N, 2 * K + e + 1)
        for m_val in (K + A, K - 1 - A):
            value = printed.subs(M, m_val)
            # n >= 2: k >= 1 when e = 0
            ok &= nonnegative(value - 1, {K: 1 + C} if e == 0 else {})
    return ok


def _quadratic_math() -> bool:
    x = sympy.Symbol("x", real=True)
    f = x**2 / 2 - (1 - cos(x))
    return (
        f.subs(x, 0) == 0
        and sympy.diff(f, x).subs(x, 0) == 0
        and is_zero(sympy.diff(f, x, 2) - 2 * sin(x / 2) ** 2)
        and (sin(x / 2) ** 2).is_nonnegative is True
        and is_zero(f.subs(x, -x) - f)
    )


def quadratic() -> bool:
    """f(x) = x^2/2 - (1 - cos x): f(0) = f'(0) = 0, f''(x) = 1 - cos x = 2 sin^2(x/2) >= 0, f even; so
    f >= 0 on R; at x = 2 pi/(L+1) the right side is the printed 2 pi^2/(L+1)^2."""
    return _quadratic_math() and is_zero(IF.SUP_QUADRATIC.expr - (2 * pi / (L + 1)) ** 2 / 2)


def tail() -> bool:
    """L_min >= (n-1)/2 (both parities, both m cases), and L + 1 >= (n+1)/2 gives 2 pi^2/(L+1)^2 <=
    8 pi^2/(n+1)^2, the printed tail."""
    ok = True
    for e in (0, 1):
        n_val = 2 * K + e + 1
        printed = IF.L_MIN.expr.subs(N, n_val)
        for m_val in (K + A, K - 1 - A):
            ok &= nonnegative(printed.subs(M, m_val) - sympy.Rational(1, 2) * (n_val - 1))
    Np = sympy.Symbol("n_p", positive=True)
    gap = IF.SUP_TAIL.expr - IF.SUP_QUADRATIC.expr
    return ok and nonnegative(sympy.factor(sympy.together(gap.subs({L: (N - 1) / 2 + R}).subs(N, Np))))


def _sharp_math() -> bool:
    v = 1 + A
    return nonnegative(v - 1) and nonnegative(((v + B) + 1 - v) - 1) and cos_decreasing()


def sharp() -> bool:
    """At theta = 2 pi/(L+1), alpha = 1/(L+1): for v = 1..L both v and L+1-v are >= 1, so ||v alpha||
    = min(v, L+1-v)/(L+1) >= 1/(L+1), equality at v = 1; so G(L) = 1 - cos(2 pi/(L+1)) = 1 - cos theta."""
    return _sharp_math() and is_zero(IF.SUP_CAP.expr - (1 - cos(2 * pi / (L + 1))))


LOGIT = Step(
    r"$T_{\mathrm{Index}}$'s logit from a query holding $\sigma$ to the key at offset $t = n - j$ is "
    r"$v^\top \rho(t\theta) \rho(-s\theta) v = \cos((t - s)\theta)$, $s = \sigma$ for an integer and 0 "
    r"for a letter, whatever the key's token: a query type's row at length $n$ is $\cos(u\theta)$, $u "
    r"= t - s$, $t = 0, \ldots, n-1$",
    logit_row,
    "sympy identity, the construction's matrices with symbolic s, t, theta",
)
OFFSETS = Step(
    "Every reading ranges over the query types' rows (theory.discrepancy_index; Definition F.1's $n > "
    r"m$ is reported separately): $s = 0$ (a letter) and $1 \le s \le \min(m, n-1)$ (an integer "
    "pointing inside), each the last token of a valid input of length $n$ with letters elsewhere; $u$ "
    r"runs over $-s, \ldots, n-1-s$, which contains the top's $u = 0$ ($\cos 0 = 1$); cos being even, "
    r"the other values are $\cos(v\theta)$ for exactly $v = 1, \ldots, L(s)$, $L(s) = \max(s, n-1-s)$. "
    r"So the row's gap (top minus second, a tie counting 0) is $G(L(s)) = 1 - \max_{1 \le v \le L(s)} "
    r"\cos(v\theta)$, non-increasing in $L$ (a max over more offsets)",
    offsets,
    "sympy signs after substitution, symbolic n, s, v",
)
L_MIN = Step(
    r"So $\Delta_{\mathrm{Index}}(n) = \max_s G(L(s)) = G(\min_s L(s))$, and min over admissible $s$ "
    r"of $\max(s, n-1-s)$ is the printed $L_{\min} = \max(\lceil (n-1)/2 \rceil, n-1-m)$, for every $n "
    r"\ge 2$ and $m \ge 1$: each $\max(s, n-1-s)$ is $\ge \lceil (n-1)/2 \rceil$ and $\ge n-1-s \ge "
    r"n-1-m$, and $s^* = \min(m, \lfloor (n-1)/2 \rfloor)$ is admissible and attains it (cases: $n - "
    r"1$ even or odd, $m \ge \lfloor (n-1)/2 \rfloor$ or $m < \lfloor (n-1)/2 \rfloor$)",
    l_min,
    "sympy, symbolic k, s, m in each of the four exhaustive cases",
)
PIGEONHOLE = Step(
    r"Dirichlet: for every real $\alpha$ and $L \ge 1$ some $1 \le v \le L$ has $\lVert v\alpha\rVert "
    r"\le 1/(L+1)$: the fractional parts of $u\alpha$, $u = 0, \ldots, L$, cut $\mathbb{R}/\mathbb{Z}$ "
    r"into $L+1$ arcs whose lengths telescope to 1, so the shortest is $\le 1/(L+1)$ (were all $\ge "
    r"c$, their sum would be $\ge (L+1) c$); its end points $u_a\alpha$, $u_b\alpha$ give $v = \lvert "
    r"u_b - u_a\rvert \in \{1, \ldots, L\}$ with $v\alpha$ within that length of an integer (equal "
    "points: length 0)",
    pigeonhole,
    "sympy telescoping sum with symbolic L; sympy identity",
)
CAP = Step(
    r"With $\alpha = \theta/2\pi$, $\cos(v\theta) = \cos(2\pi \lVert v\alpha\rVert)$ (cos even and "
    r"$2\pi$-periodic), and $0 \le 2\pi \lVert v\alpha\rVert \le 2\pi/(L+1) \le \pi$ for that $v$; cos "
    r"decreasing on $[0, \pi]$ gives $\max_{1 \le v \le L} \cos(v\theta) \ge \cos(2\pi/(L+1))$: $G(L) "
    r"\le 1 - \cos(2\pi/(L+1))$, the printed middle bound at $L = L_{\min}$",
    cap,
    "sympy identities and signs; cos decreasing on [0, pi]; compared with the printed cap",
)
FIRST = Step(
    r"$v = 1$ is among the offsets ($L_{\min} \ge 1$ for every $n \ge 2$ and $m \ge 1$), so "
    r"$G(L_{\min}) \le 1 - \cos\theta$; with the previous step $\Delta_{\mathrm{Index}}(n) \le \min\{1 "
    r"- \cos\theta, 1 - \cos(2\pi/(L+1))\}$",
    first_offset,
    "sympy signs, symbolic k, m in the four exhaustive cases",
)
QUADRATIC = Step(
    r"$1 - \cos x \le x^2/2$ for every real $x$ ($f = x^2/2 - 1 + \cos x$ has $f(0) = f'(0) = 0$, $f'' "
    r"= 2\sin^2(x/2) \ge 0$, $f$ even); at $x = 2\pi/(L+1)$ the right side is the printed "
    r"$2\pi^2/(L+1)^2$, and $\min\{a, b\} \le \min\{a, c\}$ when $b \le c$",
    quadratic,
    "sympy derivatives and identities; compared with the printed quadratic bound",
)
TAIL = Step(
    r"$L_{\min} \ge (n-1)/2$, so $L_{\min} + 1 \ge (n+1)/2$ and $2\pi^2/(L+1)^2 \le 8\pi^2/(n+1)^2$, "
    r"the printed last bound ($\min\{a, b\} \le b$)",
    tail,
    "sympy signs after substitution, symbolic n, k, m, four exhaustive cases",
)
SHARP = Step(
    r"At $\theta = 2\pi/(L+1)$ ($L = L_{\min}$): $\alpha = 1/(L+1)$ and $\lVert v\alpha\rVert = "
    r"\min(v, L+1-v)/(L+1) \ge 1/(L+1)$ for $v = 1, \ldots, L$, equality at $v = 1$, so $G(L) = 1 - "
    r"\cos(2\pi/(L+1)) = 1 - \cos\theta$; the query $s^*$ of the $L_{\min}$ step realises $L_{\min}$ "
    r"and $G$ is non-increasing, so $\Delta_{\mathrm{Index}}(n) = G(L_{\min})$ equals the middle bound",
    sharp,
    "sympy signs after substitution; cos decreasing on [0, pi]",
)

SUP_CORRECTED = proved(LOGIT, OFFSETS, L_MIN, PIGEONHOLE, CAP, FIRST, QUADRATIC, TAIL, SHARP)


# ---- C7-index-inf-corrected: the min reading, lambda(n), and when the two agree --------------------

N0, P = sympy.Symbol("n0"), sympy.Symbol("P")
J = sympy.Symbol("j", integer=True)


def min_row() -> bool:
    """0 <= s <= n-1 gives max(s, n-1-s) <= n-1 (s = n-1-c, c >= 0: both arguments <= n-1), and the
    letter query s = 0 has max(0, n-1) = n-1 for n >= 2."""
    s_sym = sympy.Symbol("s")
    both = nonnegative((N - 1) - s_sym, {N: s_sym + 1 + C}) and nonnegative(
        (N - 1) - (N - 1 - s_sym), {s_sym: B}
    )
    return both and is_zero(Max(0, N - 1).subs(N, 2 + A) - (N - 1).subs(N, 2 + A))


def inf_cap() -> bool:
    """The printed 1 - cos(2 pi/n) and 2 pi^2/n^2 are the sup argument's cap and quadratic bound at
    L = n - 1 (their own forms checked again here), and L = n - 1 >= 1 for n >= 2."""
    return (
        is_zero(IF.INF_CAP.expr - (1 - cos(2 * pi / (L + 1))).subs(L, N - 1))
        and is_zero(IF.INF_QUADRATIC.expr - ((2 * pi / (L + 1)) ** 2 / 2).subs(L, N - 1))
        and nonnegative((N - 1) - 1, {N: 2 + A})
        and _cap_math()
        and _quadratic_math()
        and _sharp_math()
    )


def untied_rows() -> bool:
    """cos x = 1 exactly for x in 2 pi Z, so with no u in 1..n-1 tying, each row (|u| <= n-1) has a
    unique top and cos(u theta) < 1 elsewhere."""
    x = sympy.Symbol("x", real=True)
    found = sympy.solveset(cos(x) - 1, x, sympy.S.Reals)
    return (
        isinstance(found, sympy.ImageSet)
        and tuple(found.base_sets) == (sympy.S.Integers,)
        and is_zero(found.lamda.expr.subs(found.lamda.variables[0], J) - 2 * J * pi)
    )


def period() -> bool:
    """If P is the least positive integer with P theta in 2 pi Z and D theta in 2 pi Z, write
    D = q P + r, 0 <= r < P: r theta = D theta - q P theta is in 2 pi Z, so r = 0 and P <= D;
    and u theta = 2 pi k forces theta/2pi = k/u, rational."""
    q, a, b, k, u = sympy.symbols("q a b k u", integer=True)
    remainder = is_zero(
        (sympy.Symbol("D") - q * P) * THETA
        - 2 * pi * (a - q * b)
        - (sympy.Symbol("D") * THETA - 2 * pi * a)
        + q * (P * THETA - 2 * pi * b)
    )
    rational = is_zero((2 * pi * k / u) / (2 * pi) - k / u)
    return remainder and rational


def _decoded_uniquely(top: dict, query_score_letter: str, answer: str) -> bool:
    """The decoding rule of T_Index at one position (theory.brute_index._decode): scores k on the
    query's token plus 2 on the letter of each tied top position (an integer's value is 0); True
    when ``answer`` is the unique maximum."""
    scores = {query_score_letter: len(top)}
    for token in top.values():
        if token != "integer":
            scores[token] = scores.get(token, 0) + 2
    best = max(scores.values())
    return scores.get(answer) == best and sum(v == best for v in scores.values()) == 1


def _multiples_in(low, high) -> bool:
    """The multiples j P of P >= 1 in [low, high] = [-1, P] are 0 and P, and -P only when P = 1."""
    above = positive(J * P - high, {J: 2 + A, P: 1 + B})  # j >= 2: j P > P
    below = positive(low - J * P, {J: -2 - A, P: 1 + B})  # j <= -2: j P <= -2P < -1
    minus = positive(low - (-P), {P: 2 + B})  # j = -1 needs P = 1
    return above and below and minus


def witness_integer_one() -> bool:
    """P <= n0 - 2: the input B A^P 1 (length P + 2 <= n0; its only integer, 1, points inside).  At its
    last position s = 1, t = 0..P+1, u = t - 1 in [-1, P]; ties with the top are u in P Z: t = 1 (A)
    and t = P + 1 (B), and t = 0 (the query) when P = 1; in both cases (P >= 2, P = 1) A, Index's
    answer (the letter 1 back), is not the unique maximum of the scores."""
    length_ok = nonnegative(N0 - (P + 2), {N0: P + 2 + A})
    points_inside = nonnegative((P + 2) - 1 - 1, {P: 1 + A})
    distinct = positive((P + 1) - 1, {P: 1 + A})  # the B at t = P + 1 is not the A at t = 1
    wide = {1: "A", "P+1": "B"}  # P >= 2
    narrow = {0: "integer", 1: "A", 2: "B"}  # P = 1
    return (
        _multiples_in(-1, P)
        and length_ok
        and points_inside
        and distinct
        and not _decoded_uniquely(wide, "1", "A")
        and not _decoded_uniquely(narrow, "1", "A")
    )


def witness_integer_p() -> bool:
    """n0 - 2 < P <= m (< n0): the input A B^(P-1) P (length P + 1 <= n0; P points to position 1).  At its
    last position s = P, t = 0..P, u = t - P in [-P, 0]; ties with the top are u in P Z: t = P (A) and
    t = 0 (the query P itself, value 0): A and P share the maximum, an error."""
    length_ok = nonnegative(N0 - (P + 1), {N0: M + 1 + A, M: P + B})
    points_inside = is_zero(((P + 1) - P) - 1)
    above = positive(J * P - 0, {J: 1 + A, P: 1 + B})  # j >= 1: j P > 0
    below = positive(-P - J * P, {J: -2 - A, P: 1 + B})  # j <= -2: j P < -P
    return (
        length_ok
        and points_inside
        and above
        and below
        and not _decoded_uniquely({0: "integer", "P": "A"}, "P", "A")
    )


def parenthetical() -> bool:
    """A correct T_Index (m < n0) has no P <= D_max: D_max = n0 - 2 when m <= n0 - 2 (first witness)
    and D_max = n0 - 1 = m when m = n0 - 1 (first witness for P <= n0 - 2, second for P = m); either,
    extended by letters to length max(its length, m + 1) <= n0, is a valid input on which T_Index
    errs.  So for n <= D_max + 1 no u <= n - 1 ties; D_max + 1 = n0 exactly when m = n0 - 1."""
    d_max = IF.D_MAX.expr
    small_m = d_max.subs(M, N0 - 2 - A)  # m <= n0 - 2
    large_m = d_max.subs(M, N0 - 1)  # m = n0 - 1
    return (
        is_zero(small_m - (N0 - 2))
        and is_zero(large_m - (N0 - 1))
        and is_zero(large_m + 1 - N0)
        and is_zero(small_m + 1 - (N0 - 1))
        and nonnegative(N0 - (M + 1), {N0: M + 1 + A})
    )


MIN_ROW = Step(
    r"Every $L(s) = \max(s, n-1-s)$ is $\le n-1$ ($0 \le s \le n-1$), with equality at the letter "
    r"query $s = 0$, present at every $n \ge 2$ and $m$; so the min over inputs of the gap (ties "
    r"counting 0) is $\min_s G(L(s)) = G(n-1)$",
    min_row,
    "sympy signs after substitution, symbolic n, s",
)
INF_BOUNDS = Step(
    r"At $L = n - 1 \ge 1$: the Dirichlet step, $\cos(v\theta) = \cos(2\pi \lVert v\alpha\rVert)$ with "
    r"cos decreasing, $v = 1$ among the offsets, $1 - \cos x \le x^2/2$ and, at $\theta = 2\pi/n$, "
    r"$\lVert v/n\rVert \ge 1/n$ (equality at $v = 1$) give $G(n-1) \le \min\{1 - \cos\theta, 1 - "
    r"\cos(2\pi/n)\} \le \min\{1 - \cos\theta, 2\pi^2/n^2\}$, the middle bound attained at $\theta = "
    r"2\pi/n$; the printed formulas are those bounds",
    inf_cap,
    "sympy identities, derivatives and signs; compared with the printed formulas",
)
UNTIED = Step(
    r"$\cos x = 1$ exactly when $x \in 2\pi\mathbb{Z}$; every row's offsets have $\lvert u\rvert \le "
    r"n-1$, so when no $u \in \{1, \ldots, n-1\}$ has $u\theta \in 2\pi\mathbb{Z}$ every row has a "
    "unique top and Lemma F.1's gap (top minus the next value strictly below) is top minus second: "
    r"$\lambda(n)$ equals the min over inputs of the gap",
    untied_rows,
    "sympy solveset over the reals",
)
PERIOD = Step(
    r"If some $D \ge 1$ has $D\theta \in 2\pi\mathbb{Z}$, the least such $P$ divides it ($D = qP + r$, "
    r"$r\theta = D\theta - qP\theta \in 2\pi\mathbb{Z}$, so $r = 0$): some $D \le D_{\max}$ ties iff "
    r"$P \le D_{\max}$; and $u\theta = 2\pi k$ ($u \ge 1$) makes $\theta/2\pi = k/u$ rational, so no "
    r"$u$ ever ties when $\theta/2\pi$ is irrational",
    period,
    "sympy identities",
)
WITNESS_ONE = Step(
    r"$P \le n_0 - 2$: on $B\,A^P\,1$ (length $P + 2 \le n_0$, the integer 1 points inside) the last "
    "position's ties are $t = 1$ (A) and $t = P + 1$ (B), and $t = 0$ when $P = 1$ (the multiples of "
    r"$P$ in $[-1, P]$); $T_{\mathrm{Index}}$'s scores ($k$ on the query token, 2 on each tied letter; "
    "theory.brute_index._decode) leave A, Index's answer, no unique maximum: an error",
    witness_integer_one,
    "sympy signs, symbolic P, n0; the two exhaustive cases P = 1, P >= 2 of the tied set",
)
WITNESS_P = Step(
    r"$n_0 - 2 < P \le m$: on $A\,B^{P-1}\,P$ (length $P + 1 \le n_0$, $P$ points to the first "
    "position) the last position's ties are $t = P$ (A) and $t = 0$ (the query, value 0), the "
    "multiples of $P$ in $[-P, 0]$; the scores 2 on $P$ and 2 on A share the maximum: an error",
    witness_integer_p,
    "sympy signs, symbolic P, m, n0",
)
PARENTHETICAL = Step(
    r"So a correct $T_{\mathrm{Index}}$ with $m < n_0$ has no tie at $D \le D_{\max}$: $D_{\max} = n_0 "
    r"- 2$ when $m \le n_0 - 2$ (first witness) and $n_0 - 1 = m$ when $m = n_0 - 1$ (first or second "
    r"witness), each extended by letters to a valid length $\max(\text{its length}, m + 1) \le n_0$ "
    r"($T_{\mathrm{Index}}$ is causal: the witness's last position is unchanged); hence no $u \le n-1$ "
    r"ties for every $n \le D_{\max} + 1$, and $D_{\max} + 1 = n_0$ exactly when $m = n_0 - 1$",
    parenthetical,
    "sympy, on the printed D_max, symbolic m, n0",
)

INF_CORRECTED = proved(
    LOGIT, OFFSETS, MIN_ROW, PIGEONHOLE, INF_BOUNDS, UNTIED, PERIOD, WITNESS_ONE, WITNESS_P, PARENTHETICAL
)


# ---- C4-index-corrected: T_Index exact iff no tie at D <= D_max ---------------------------------------

S_Q, P_POS = sympy.Symbol("s"), sympy.Symbol("p")


def positions() -> bool:
    """The positions of valid inputs of length m < n <= n0 are the valid prefixes of length p <= n0: a
    prefix keeps its integers pointing inside, and a valid prefix extended by letters to length
    max(p, m + 1) <= n0 (m < n0) is a valid input with the same prefix (T_Index is causal)."""
    return nonnegative(N0 - (M + 1), {N0: M + 1 + A}) and nonnegative(N0 - P_POS, {P_POS: N0 - B})


def integer_queries_decode() -> bool:
    """Integer query s (1 <= s <= min(m, p-1)) at position p <= n0: every |u| <= max(s, p-1-s) <= D_max
    (s <= m, and p-1-s <= n0-2 as s >= 1), so without a tie at D <= D_max the top is the target
    alone (u = 0, position p - s >= 1); scores e_s + 2 e_A decode the letter A, and e_s decodes s
    when the target is an integer: Index's answer either way."""
    d_max = IF.D_MAX.expr
    by_m = _max_at_least(d_max, M) and nonnegative(M - S_Q, {M: S_Q + A})
    by_n0 = _max_at_least(d_max, N0 - 2) and nonnegative(
        (N0 - 2) - (P_POS - 1 - S_Q), {P_POS: N0 - C, S_Q: 1 + A}
    )
    inside = nonnegative((P_POS - S_Q) - 1, {P_POS: S_Q + 1 + A})
    return (
        by_m
        and by_n0
        and inside
        and _decoded_uniquely({"s": "A"}, "s", "A")
        and _decoded_uniquely({"s": "integer"}, "s", "s")
    )


def letter_queries_decode() -> bool:
    """Letter query sigma at position p <= n0: u = t in [0, p-1] with p - 1 <= n0 - 1.  With no tie at
    D <= D_max the least period P (if any) is > D_max >= n0 - 2, so P >= n0 - 1 and 2P > n0 - 1: the
    top set is t = 0 (sigma itself) or t in {0, P}; the scores leave sigma the unique maximum
    whatever the token at P (sigma, another letter, an integer)."""
    period_big = _max_at_least(IF.D_MAX.expr, N0 - 2)
    two = positive(2 * P - (N0 - 1), {P: N0 - 1 + A, N0: 2 + B})
    tops = ({0: "sigma"}, {0: "sigma", "P": "sigma"}, {0: "sigma", "P": "B"}, {0: "sigma", "P": "integer"})
    return period_big and two and all(_decoded_uniquely(top, "sigma", "sigma") for top in tops)


def only_if() -> bool:
    """A tie at some D <= D_max means the least period P <= D_max; P <= n0 - 2 gives the first witness,
    and n0 - 2 < P <= D_max forces m = n0 - 1 = D_max (D_max = n0 - 2 when m <= n0 - 2), so P <= m
    and the second witness applies."""
    d_max = IF.D_MAX.expr
    return (
        is_zero(d_max.subs(M, N0 - 2 - A) - (N0 - 2))
        and is_zero(d_max.subs(M, N0 - 1) - M.subs(M, N0 - 1))
        and witness_integer_one()
        and witness_integer_p()
    )


def examples() -> bool:
    """D theta = 2 pi k with 1 <= D: a rational theta != 0 would make pi = D theta/(2k) rational (k = 0
    gives theta = 0, excluded); theta/pi irrational contradicts theta/pi = 2k/D; theta = 2 pi/n0 needs
    n0 | D, impossible for 1 <= D <= D_max <= n0 - 1 (m < n0)."""
    d_max = IF.D_MAX.expr
    bounded = d_max.subs(M, N0 - 1 - A)  # m < n0: a Max is <= n0 - 1 when each argument is
    below_n0 = bounded.func is Max and all(nonnegative((N0 - 1) - arg) for arg in bounded.args)
    k, Dp = sympy.symbols("k D", integer=True, positive=True)
    return (
        sympy.pi.is_rational is False
        and below_n0
        and positive(N0 - Dp, {N0: Dp + 1 + A})
        and is_zero((2 * pi * k / Dp) / pi - 2 * k / Dp)
    )


POSITIONS = Step(
    r"Every position of a valid input of length $m < n \le n_0$ is the last position of a valid prefix "
    r"of length $p \le n_0$, and every valid prefix extends by letters to a valid input of length "
    r"$\max(p, m + 1) \le n_0$ ($m < n_0$); $T_{\mathrm{Index}}$ is causal, so 'exact on every valid "
    r"input' is 'decodes Index at the last position of every valid prefix of length $\le n_0$'. "
    r"Average-hard decoding there (Appendix F.2.1's weights: value $2 e_{\mathrm{letter}}$ or 0, "
    "residual $x + a$; theory.brute_index._decode): over the $k$ tied top positions the scores, "
    "scaled by $k$, are $k$ on the query token plus 2 on each tied letter, and a shared maximum is an "
    "error",
    positions,
    "sympy signs after substitution",
)
INTEGER_QUERIES = Step(
    r"If no $D \in \{1, \ldots, D_{\max}\}$ has $D\theta \in 2\pi\mathbb{Z}$: at an integer query $s$ "
    r"the offsets have $\lvert u\rvert \le \max(s, p-1-s) \le D_{\max}$, so the target ($u = 0$) is "
    "the only top position; the scores $e_s + 2 e_A$ (a letter target A) or $e_s$ (an integer target) "
    "decode Index's answer",
    integer_queries_decode,
    "sympy signs on the printed D_max, symbolic m, n0, p, s; the decoding rule on both target kinds",
)
LETTER_QUERIES = Step(
    r"If no $D \in \{1, \ldots, D_{\max}\}$ has $D\theta \in 2\pi\mathbb{Z}$: at a letter query the "
    r"least period $P$ (if any) is $\ge n_0 - 1$ and $2P > n_0 - 1$, so the top positions are $t = 0$ "
    r"or $t \in \{0, P\}$; in every case (the token at $P$ $\sigma$, another letter, an integer) "
    r"$\sigma$, Index's answer, is the unique top score",
    letter_queries_decode,
    "sympy signs on the printed D_max; the decoding rule on the four top sets",
)
ONLY_IF = Step(
    r"Conversely a tie at some $D \le D_{\max}$ gives $P \le D_{\max}$ (the least period divides $D$): "
    r"$P \le n_0 - 2$ breaks the first witness; otherwise $D_{\max} = n_0 - 1 = m$ and $P \le m$ "
    r"breaks the second; each is a valid prefix of length $\le n_0$",
    only_if,
    "sympy on the printed D_max; the two witness steps",
)
EXAMPLES = Step(
    r"The examples meet the condition: rational $\theta \ne 0$ ($\pi$ is irrational), $\theta/\pi$ "
    r"irrational ($D\theta = 2\pi k$ makes $\theta/\pi = 2k/D$), $\theta = 2\pi/n_0$ ($n_0 \mid D$ is "
    r"impossible for $1 \le D \le D_{\max} \le n_0 - 1$)",
    examples,
    "sympy: pi irrational, identities and signs on the printed D_max",
)

C4_CORRECTED = proved(
    LOGIT,
    OFFSETS,
    POSITIONS,
    PERIOD,
    INTEGER_QUERIES,
    LETTER_QUERIES,
    WITNESS_ONE,
    WITNESS_P,
    ONLY_IF,
    EXAMPLES,
)


# ---- C4-index-unique-top: a tie at some position of length <= n0 iff theta/2pi = p/q, q <= n0 - 1 ----


def _offsets_below_n0() -> bool:
    return (
        nonnegative((P_POS - 1) - S_Q, {P_POS: S_Q + 1 + A})
        and nonnegative((P_POS - 1) - (P_POS - 1 - S_Q), {S_Q: B})
        and nonnegative((N0 - 1) - (P_POS - 1), {P_POS: N0 - C})
    )


def offsets_below_n0() -> bool:
    """At a position p <= n0 every row's offsets have |u| <= max(s, p-1-s) <= p - 1 <= n0 - 1
    (0 <= s <= p - 1): the printed bound q <= n0 - 1."""
    return _offsets_below_n0() and is_zero(IF.Q_MAX.expr - (N0 - 1))


def tie_iff_denominator() -> bool:
    """A tie at some 1 <= u <= n0 - 1 (u theta = 2 pi k) makes theta/2pi = k/u, whose reduced
    denominator q divides u, so q <= n0 - 1; conversely theta/2pi = p/q with q <= n0 - 1 ties the
    letter query's offsets 0 and q (q theta = 2 pi p) at the position q + 1 <= n0 of an all-letter
    input, extended by letters to length max(q + 1, m + 1) <= n0."""
    k, u, p_, q = sympy.symbols("k u p q", integer=True, positive=True)
    from_tie = is_zero((2 * pi * k / u) / (2 * pi) - k / u) and nonnegative(u - q, {u: q * (1 + A)})
    to_tie = is_zero(q * (2 * pi * p_ / q) - 2 * pi * p_) and nonnegative(N0 - (q + 1), {N0: q + 1 + A})
    extend = nonnegative(N0 - (M + 1), {N0: M + 1 + A})
    return from_tie and to_tie and extend and untied_rows()


def paper_condition_examples() -> bool:
    """2 pi/5 is irrational (pi is) with theta/2pi = 1/5, q = 5 <= n0 - 1 from n0 = 6: a tie at n = 6;
    0.8 is rational and 0.8/2pi = 2/(5 pi) is irrational: never p/q."""
    return (
        (2 * pi / 5).is_rational is False
        and (2 * pi / 5) / (2 * pi) == sympy.Rational(1, 5)
        and IF.Q_MAX.expr.subs(N0, 6) == 5
        and (sympy.Rational(4, 5) / (2 * pi)).is_rational is False
    )


BELOW_N0 = Step(
    r"At a position $p \le n_0$ of a valid input every row's offsets have $\lvert u\rvert \le \max(s, "
    r"p-1-s) \le p-1 \le n_0-1$, the printed $q$ bound $n_0 - 1$",
    offsets_below_n0,
    "sympy signs after substitution, symbolic p, s, n0",
)
TIE_IFF = Step(
    r"$\cos x = 1$ exactly on $2\pi\mathbb{Z}$. A tie at $1 \le u \le n_0-1$ makes $\theta/2\pi = "
    r"k/u$, with reduced denominator $q \mid u$, so $q \le n_0 - 1$; conversely $\theta/2\pi = p/q$ "
    r"with $q \le n_0 - 1$ ties the offsets 0 and $q$ of the letter query at position $q + 1 \le n_0$ "
    r"of an all-letter input (valid, extended by letters to length $\max(q + 1, m + 1) \le n_0$ as $m "
    "< n_0$)",
    tie_iff_denominator,
    "sympy identities, signs and solveset",
)
PAPER_EXAMPLES = Step(
    r"$2\pi/5$ is irrational, yet $\theta/2\pi = 1/5$ with $5 \le n_0 - 1$ from $n_0 = 6$: F.2.1's "
    r"'$\theta \notin \mathbb{Q}$' is not sufficient; 0.8 is rational and $0.8/2\pi = 2/(5\pi)$ is "
    "irrational, so it never ties: the condition is not necessary",
    paper_condition_examples,
    "sympy: pi is irrational",
)

UNIQUE_TOP = proved(LOGIT, OFFSETS, POSITIONS, BELOW_N0, TIE_IFF, PAPER_EXAMPLES)


# ---- C4-index: Theorem 3.1 (Index) at theta = 2 pi/n0, every valid input of length <= n0 -------------


def prefixes() -> bool:
    """A position p of a valid input of length n <= n0 is the last position of its prefix of length
    p <= n0, itself valid (an integer at j points to j - i >= 1, inside any prefix reaching j)."""
    return nonnegative(N0 - P_POS, {P_POS: N - A, N: N0 - B})


def angle_two_pi_over_n0() -> bool:
    """theta = 2 pi/n0 lies in (0, pi] for n0 >= 2 (the construction's range), and u theta in 2 pi Z
    means u/n0 is an integer, impossible for 1 <= u <= n0 - 1 (0 < u/n0 < 1); with every |u| <= n0 - 1
    (the offsets step) each top is unique (cos x = 1 only on 2 pi Z)."""
    u = 1 + A
    return (
        positive(2 * pi / N0, {N0: 2 + A})
        and nonnegative(pi - 2 * pi / N0, {N0: 2 + A})
        and is_zero((u * 2 * pi / N0) / (2 * pi) - u / N0)
        and positive(u / N0, {N0: u + 1 + B})
        and positive(1 - u / N0, {N0: u + 1 + B})
        and _offsets_below_n0()
        and untied_rows()
    )


def unique_tops_decode() -> bool:
    """With a unique top: a letter query's top is itself (scores 3 on sigma); an integer query's top is
    its target (1 on s and 2 on a letter target A, or 1 on s for an integer target): Index's answer."""
    return (
        _decoded_uniquely({0: "sigma"}, "sigma", "sigma")
        and _decoded_uniquely({"s": "A"}, "s", "A")
        and _decoded_uniquely({"s": "integer"}, "s", "s")
    )


PREFIXES = Step(
    r"Every position of a valid input of length $n \le n_0$ is the last position of a valid prefix of "
    r"length $p \le n_0$; $T_{\mathrm{Index}}$ is causal (one decoder layer), so it computes Index on "
    r"every valid input of length $\le n_0$ iff it decodes Index at the last position of each. "
    r"Average-hard decoding there (Appendix F.2.1's weights: value $2 e_{\mathrm{letter}}$ or 0, "
    "residual $x + a$; theory.brute_index._decode): over the $k$ tied top positions the scores, "
    "scaled by $k$, are $k$ on the query token plus 2 on each tied letter",
    prefixes,
    "sympy signs after substitution",
)
ANGLE = Step(
    r"Take $T_{\mathrm{Index}}$ (one layer, one head, one angle) at $\theta = 2\pi/n_0$, in $(0, "
    r"\pi]$: every offset at a position $p \le n_0$ has $\lvert u\rvert \le p - 1 \le n_0 - 1$, and "
    r"$u\theta \in 2\pi\mathbb{Z}$ would need $n_0 \mid u$; so every top is unique",
    angle_two_pi_over_n0,
    "sympy signs and identities, symbolic u, n0, p, s; solveset",
)
UNIQUE_DECODE = Step(
    r"A unique top decodes Index: a letter query's top is itself (3 on $\sigma$); an integer query's "
    "top is its target (1 on $s$ plus 2 on a letter target A, or 1 on $s$ when the target is an "
    "integer, which Index keeps)",
    unique_tops_decode,
    "the decoding rule on the three kinds of top",
)

C4_INDEX = proved(LOGIT, OFFSETS, PREFIXES, ANGLE, UNIQUE_DECODE)

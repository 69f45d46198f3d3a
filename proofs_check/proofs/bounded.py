"""C6-retrieval-bounded: the three-input certificate of ``theory.bounded_positional``'s module
docstring, step by step, for every length n, readout V and weights at once (the weights of the
n - 3 middle positions enter only through their sum W, since they all carry the same token)."""

from __future__ import annotations

import sympy

from proofs_check.evidence.classes import Step, proved
from theory import bounded_positional as bp

from . import nonnegative, positive

TOKENS = ("a1", "b1", "ca", "cb")
N_WITNESS = range(4, 61)  # lengths at which the witnesses are built and Retrieval is asked


def witnesses() -> bool:
    """S1 = b1 a1 (cb)^(n-3) ca -> a1, S3 = b1 a1 (cb)^(n-3) cb -> b1, S4 = b1 a1 (ca)^(n-3) cb -> b1:
    proper, with those answers; the middle block is one repeated token, so n changes only its length."""
    for n in N_WITNESS:
        inputs = bp.witness_inputs(n)  # Retrieval itself (theory.functions.retrieval) gives the answers
        if [answer for _, answer in inputs] != ["a1", "b1", "b1"]:
            return False
        if any(len(set(tokens[2 : n - 1])) != 1 or len(tokens) != n for tokens, _ in inputs):
            return False
    return True


def _margins():
    """The three margins of a head with weights w1, w2 (positions 1, 2), W (the n - 3 middle
    positions, one token) and wn (the query), and any readout V[tau][x] with bias c[tau] (the
    bias does not cancel in a margin; it enters all three with the shared term)."""
    w1, w2, W, wn = sympy.symbols("w_1 w_2 W w_n", positive=True)
    V = {tau: {x: sympy.Symbol(f"V[{tau},{x}]", real=True) for x in TOKENS} for tau in ("a1", "b1")}
    c = {tau: sympy.Symbol(f"c[{tau}]", real=True) for tau in ("a1", "b1")}

    def score(tau, middle, last):
        return w1 * V[tau]["b1"] + w2 * V[tau]["a1"] + W * V[tau][middle] + wn * V[tau][last] + c[tau]

    m1 = score("a1", "cb", "ca") - score("b1", "cb", "ca")
    m3 = score("b1", "cb", "cb") - score("a1", "cb", "cb")
    m4 = score("b1", "ca", "cb") - score("a1", "ca", "cb")
    return (W, wn), (m1, m3, m4)


def certificate_identity() -> bool:
    (W, wn), (m1, m3, m4) = _margins()
    return sympy.expand(W * m1 + (W - wn) * m3 + wn * m4) == 0


def no_readout_is_right_on_all_three() -> bool:
    """W >= w_n > 0 (W = w_n + u): coefficients W, W - w_n, w_n >= 0, not all 0, so if the three
    margins were > 0 the combination would be > 0, not 0."""
    m1, m3, m4 = sympy.symbols("m1 m3 m4", positive=True)
    wn, u = sympy.Symbol("w_n", positive=True), sympy.Symbol("u", nonnegative=True)
    W = wn + u
    return positive(W * m1 + (W - wn) * m3 + wn * m4)


def bounded_ratio() -> bool:
    """|l| <= B: l_j - l_n + 2B = (l_j + B) + (B - l_n) >= 0, so w_j / w_n = e^(l_j - l_n) >= e^(-2B)
    (exp increasing: its derivative is itself, > 0), and the n - 3 middle weights sum to W >= (n-3) e^(-2B) w_n."""
    B, a, b = sympy.Symbol("B", nonnegative=True), *sympy.symbols("a b", nonnegative=True)
    lj, ln_ = -B + a, B - b
    x = sympy.Symbol("x", real=True)
    return (
        nonnegative(lj - ln_ + 2 * B)
        and sympy.diff(sympy.exp(x), x) == sympy.exp(x)
        and sympy.exp(x).is_positive
    )


def threshold_suffices() -> bool:
    """Every n >= the printed threshold (n = THRESHOLD + s, s >= 0) has (n - 3) e^(-2B) >= 1, so W >= w_n."""
    B, s = sympy.Symbol("B", real=True), sympy.Symbol("s", nonnegative=True)
    n = bp.THRESHOLD.expr.subs(sympy.Symbol("B"), B) + s
    return nonnegative((n - 3) * sympy.exp(-2 * B) - 1)


def residual_gap() -> bool:
    """With uniform weights 1/n and score(tau) = K [tau has the query's bonus] + count(tau)/n, K = 1 + k
    (k > 0): the answer (the one present token with the bonus, Definition F.2) scores >= K + 1/n, an
    absent token with the bonus K, a token without it <= 1; so the answer wins by >= 1/n.  The
    bonus rule is checked on every proper input of |ALPH| = 3, INT = {1}, n <= 4."""
    k, n, c = (
        sympy.Symbol("k", positive=True),
        sympy.Symbol("n", positive=True),
        sympy.Symbol("c", nonnegative=True),
    )
    K = 1 + k
    answer = K + (1 + c) / n  # present at least once: count = 1 + c
    arithmetic = nonnegative(answer - K - 1 / n) and nonnegative(
        answer - 1 - 1 / n, {n: 1 + c + sympy.Symbol("e", nonnegative=True)}
    )
    found = bp.residual_head_errors("abc", 1, 4)
    return arithmetic and not found["errors"] and found["least_gap"] >= sympy.Rational(1, 4)


BOUNDED = proved(
    Step(
        r"For every $n \ge 4$ the inputs $S_1 = b1\,a1\,(cb)^{n-3}\,ca$, $S_3 = b1\,a1\,(cb)^{n-3}\,cb$ "
        r"and $S_4 = b1\,a1\,(ca)^{n-3}\,cb$ are proper with Retrieval answers a1, b1, b1",
        witnesses,
        "Retrieval on the three inputs for every n in 4..60 (the middle block is one repeated token)",
        cases=r"$n \in \{4, \ldots, 60\}$",
    ),
    Step(
        r"With $E(x) = V[a1, x] - V[b1, x]$, $P = w_1 E(b1) + w_2 E(a1)$ and $W = w_3 + \cdots + w_{n-1}$, "
        "the margins are $m_1 = P + W E(cb) + w_n E(ca)$, $m_3 = -(P + W E(cb) + w_n E(cb))$, $m_4 = -(P "
        "+ W E(ca) + w_n E(cb))$, and $W m_1 + (W - w_n) m_3 + w_n m_4 = 0$ for every readout $V$",
        certificate_identity,
        "sympy identity, symbolic weights and readout",
    ),
    Step(
        r"If $W \ge w_n$ the coefficients $W$, $W - w_n$, $w_n$ are $\ge 0$ and $W > 0$, so $m_1$, $m_3$, "
        "$m_4$ cannot all be $> 0$: the head errs on $S_1$, $S_3$ or $S_4$ (a shared maximum counts as an "
        "error)",
        no_readout_is_right_on_all_three,
        "sympy sign after substitution",
    ),
    Step(
        r"$\lvert l_{nj}\rvert \le B$ makes every $w_j / w_n = e^{l_{nj} - l_{nn}} \ge e^{-2B}$, so $W \ge "
        "(n - 3) e^{-2B} w_n$",
        bounded_ratio,
        "sympy sign after substitution",
    ),
    Step(
        r"Every $n \ge 3 + e^{2B}$, the printed threshold, has $(n - 3) e^{-2B} \ge 1$, hence $W \ge w_n$ "
        "and an error",
        threshold_suffices,
        "sympy sign, on the printed threshold",
    ),
    Step(
        "With a residual readout no length is forced: uniform attention ($B = 0$) and "
        r"$\mathrm{score}(\tau) = K\,[\tau \text{ carries the query's pointer}] + \mathrm{count}(\tau)/n$, "
        r"$K > 1$, give the answer (the one present token with the bonus, Definition F.2) a lead $\ge 1/n$ "
        "at every $n$",
        residual_gap,
        "sympy signs; the bonus rule on every proper input, |ALPH| = 3, INT = {1}, n <= 4",
        cases=r"the bonus rule: $\lvert\mathrm{ALPH}\rvert = 3$, $\mathrm{INT} = \{1\}$, $n \le 4$",
    ),
)

# ---- C6-retrieval-hard ---------------------------------------------------------------------------
N_PAIRS = range(2, 41)  # lengths at which the pair is built for every missing position p


def attends_only_J() -> bool:
    """Hard attention on J(n) averages the values of the tokens at J(n) only, so the head output, and
    a one-layer model's output F(x_n, a_n), depend on the tokens at J(n) and n alone: two inputs
    equal there get one output.  Checked as the average of arbitrary values (sympy)."""
    n, J = 6, (2, 4)
    values = [sympy.Symbol(f"v{j}") for j in range(1, n + 1)]
    changed = [v if j in J or j == n else sympy.Symbol(f"w{j}") for j, v in enumerate(values, 1)]
    average = lambda vals: sum(vals[j - 1] for j in J) / len(J)  # noqa: E731
    return sympy.simplify(average(values) - average(changed)) == 0


def pair_differs_only_at_p() -> bool:
    """For p < n missing from J(n): b1^(p-1) a1 b1^(n-1-p) ca and the same with a2 at p are proper,
    agree everywhere but p, and Retrieval answers a1 on one and a2 on the other."""
    from theory.functions import retrieval
    from theory.impossibility import hard_positional_pair

    for n in N_PAIRS:
        for p in range(1, n):
            first, second = hard_positional_pair(n, set(range(1, n + 1)) - {p})
            if [k for k in range(n) if first[k] != second[k]] != [p - 1]:
                return False
            if (retrieval(first)[-1], retrieval(second)[-1]) != ("a1", "a2"):
                return False
    return True


HARD = proved(
    Step(
        "With hard attention (unique or average-hard) on a set $J(n)$ fixed by $n$, the head output at "
        "$n$ averages the values of the tokens at $J(n)$: two inputs equal on $J(n)$ and at $n$ give one "
        "output $F(x_n, a_n)$",
        attends_only_J,
        "sympy, an average of arbitrary values",
    ),
    Step(
        r"If $J(n)$ misses an earlier position $p$, the inputs $b1^{p-1}\,a1\,b1^{n-1-p}\,ca$ and the same "
        "with a2 at $p$ are proper (the query ca points at letter a, held by position $p$ alone), agree "
        "on $J(n)$ and the query, and have Retrieval answers a1 and a2: the model errs on one of them",
        pair_differs_only_at_p,
        "Retrieval on the pair for every n in 2..40 and every p < n (the rest of the input is one repeated token)",
        cases=r"$n \in \{2, \ldots, 40\}$",
    ),
)

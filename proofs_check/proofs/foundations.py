"""Arguments checked step by step: RoPE's relative form (S1-rope-relative), a symbolic head cannot
compute Index (C6-index), and Appendix B.1's chain with the last hop's position kept
(B1-formal-corrected)."""

from __future__ import annotations

import sympy
from sympy import cos, sin

from proofs_check.evidence.classes import Step, proved
from theory.functions import index
from theory.impossibility import index_swap_pair
from theory.numbers import SYMBOLIC
from theory.rope import PAIRINGS, plane_indices, rope_angles, rope_logit, rope_logit_absolute, rope_matrix

from . import is_zero, nonnegative

# ---- S1-rope-relative -----------------------------------------------------------------------------


def _rot(a):
    return sympy.Matrix([[cos(a), -sin(a)], [sin(a), cos(a)]])


DIM, ROTARY = 8, 6  # a rotated and a passed part, both pairings


def block_structure() -> bool:
    """rope_matrix is R_p of Appendix C.1: on plane k (dims a_k, b_k of the pairing) the rotation
    rot(p g_k), the identity on the passed dims, 0 elsewhere (symbolic p and base)."""
    p, base = sympy.Symbol("p", integer=True), sympy.Symbol("base", positive=True)
    angles = rope_angles(ROTARY, base=base, numbers=SYMBOLIC)
    for pairing in PAIRINGS:
        R = sympy.Matrix(rope_matrix(p, angles, DIM, SYMBOLIC, pairing))
        expected = sympy.eye(DIM)
        a, b = plane_indices(DIM, ROTARY, pairing)
        for k, (i, j) in enumerate(zip(a, b)):
            block = _rot(p * angles[k])
            expected[i, i], expected[i, j], expected[j, i], expected[j, j] = block
        if not all(is_zero(x) for x in R - expected):
            return False
    return True


def rotations_compose() -> bool:
    a, b = sympy.symbols("a b", real=True)
    return all(is_zero(x) for x in _rot(a).T * _rot(b) - _rot(b - a))


def blockwise() -> bool:
    """diag(A_k)^T diag(B_k) = diag(A_k^T B_k) for block-diagonal matrices (generic 2 x 2 blocks)."""
    blocks = [[sympy.Matrix(2, 2, sympy.symbols(f"{x}{k}_0:4")) for k in range(3)] for x in "AB"]
    left, right = (sympy.diag(*bs, sympy.eye(2)) for bs in blocks)
    product = sympy.diag(*[a.T * b for a, b in zip(*blocks)], sympy.eye(2))
    return all(is_zero(x) for x in left.T * right - product)


def logit_form() -> bool:
    """(R_j k)^T (R_i q) = k^T R_j^T R_i q = k^T R_(i-j) q (the last by the step above with i, j swapped)."""
    i, j = sympy.symbols("i j", integer=True)
    angles = rope_angles(ROTARY, base=sympy.Symbol("base", positive=True), numbers=SYMBOLIC)
    q, k = sympy.symbols("q0:6"), sympy.symbols("k0:6")
    return is_zero(
        rope_logit_absolute(q, i, k, j, angles, SYMBOLIC) - rope_logit(q, i, k, j, angles, SYMBOLIC)
    )


ROPE_RELATIVE = proved(
    Step(
        "By Appendix C.1, $R_p$ rotates plane $k$ (a pair of dims fixed by the pairing) by $p g_k$ and "
        r"leaves the dims past the rotary part unchanged: $R_p = \mathrm{diag}(\mathrm{rot}(p g_1), "
        r"\ldots, \mathrm{rot}(p g_{r/2}), I)$ up to that fixed permutation of the dims",
        block_structure,
        "sympy, symbolic p and base, d = 8 with rotary 6, both pairings",
    ),
    Step(
        r"$\mathrm{rot}(a)^\top \mathrm{rot}(b) = \mathrm{rot}(b - a)$ for all real $a, b$",
        rotations_compose,
        "sympy identity",
    ),
    Step(
        r"Block-diagonal matrices multiply block by block, so $R_i^\top R_j = \mathrm{diag}(\mathrm{rot}(i "
        r"g_k)^\top \mathrm{rot}(j g_k), I) = \mathrm{diag}(\mathrm{rot}((j-i) g_k), I) = R_{j-i}$, for "
        "every dimension, $i$, $j$ and base",
        blockwise,
        "sympy identity on generic blocks",
    ),
    Step(
        r"Hence $(R_j k)^\top (R_i q) = k^\top R_j^\top R_i q = k^\top R_{i-j} q$",
        logit_form,
        "sympy identity",
    ),
)

# ---- C6-index ------------------------------------------------------------------------------------


def symbolic_head_exact(tokens) -> sympy.Expr:
    """The attention output at the last token of a symbolic head with arbitrary logit function l and
    value map v (uninterpreted sympy functions of the contents): a sum over keys, so their order
    cannot matter (the claim C6-index compares it on its pairs too)."""
    l, v = sympy.Function("l"), sympy.Function("v")  # noqa: E741  (the paper names the logit map l)
    q = sympy.Symbol(tokens[-1])
    keys = [sympy.Symbol(t) for t in tokens]
    weights = [sympy.exp(l(q, k)) for k in keys]
    return sympy.Add(*[w * v(k) for w, k in zip(weights, keys)]) / sympy.Add(*weights)


def symmetric_output() -> bool:
    """A symbolic head's output at the query, with arbitrary l and v, is the same on both inputs of
    the pair (sympy)."""
    first, second = index_swap_pair()
    return is_zero(symbolic_head_exact(first) - symbolic_head_exact(second))


def same_query_permuted() -> bool:
    first, second = index_swap_pair()
    return first[-1] == second[-1] and sorted(first[:-1]) == sorted(second[:-1])


def answers_differ() -> bool:
    first, second = index_swap_pair()
    return index(first)[-1] != index(second)[-1]


SYMBOLIC_INDEX = proved(
    Step(
        "A purely symbolic head's logits and values depend on contents only, so its output at the query "
        r"is $\sum_k \exp(l(x_n, x_k)) v(x_k) / \sum_k \exp(l(x_n, x_k))$ for some $l, v$: permuting the "
        "earlier tokens permutes the summands and leaves it unchanged",
        symmetric_output,
        "sympy identity, l and v arbitrary functions",
    ),
    Step(
        "The inputs a b c 2 and b a c 2 have the same query and the same earlier tokens, permuted; a "
        "one-layer model's output at the query is $F(x_n, a_n)$, so it is the same on both",
        same_query_permuted,
        "exact comparison of the two inputs",
    ),
    Step(
        "Index answers differently on them (b, then a): no one-layer model with a purely symbolic head computes "
        "Index",
        answers_differ,
        "theory.functions.index on both inputs",
    ),
)

# ---- B1-formal-corrected -------------------------------------------------------------------------
# Layout: s_1..s_n1 at positions 1..n1, j_1..j_n2 at n1 + 1..n1 + n2; the figures' reading hops from
# position n1 + n2 back by the integer it stands on until it reaches a symbol.
N1, N2, K, J = sympy.symbols("n1 n2 k j", integer=True)
A_, B_ = sympy.symbols("a b", integer=True, nonnegative=True)


def hop_follows_chain() -> bool:
    """Standing on j_k at position n1 + k, one hop lands at n1 + (k - j_k), the chain's next index."""
    return is_zero((N1 + K) - J - (N1 + (K - J)))


def chain_stays_inside() -> bool:
    """k <= n2 and j >= 1 give k - j <= n2 - 1: a next index >= 1 is again an integer position,
    and the chain strictly decreases (so it stops within n2 steps)."""
    hyp = {K: N2 - A_, J: 1 + B_}
    return nonnegative((N2 - 1) - (K - J), hyp) and nonnegative(K - (K - J) - 1, hyp)


def landing_is_a_symbol_or_outside() -> bool:
    """At the first k with k - j_k <= 0 the hop lands at n1 + k - j_k <= n1: s_(n1 + k - j_k) when
    that index is >= 1 (condition 2 and f_NUM of the corrected text), outside the input otherwise."""
    return nonnegative(N1 - (N1 + K - J), {J: K + A_})


B1_CORRECTED = proved(
    Step(
        "Induction on the hops: after $i - 1$ hops the figures' reading stands on $j_{k_i}$ at position "
        "$n_1 + k_i$, where $k_1 = n_2$ and $k_{i+1} = k_i - j_{k_i}$ (true at $i = 1$; one hop from $n_1 "
        r"+ k_i$ lands at $n_1 + k_{i+1}$): both definitions follow $k \mapsto k - j_k$",
        hop_follows_chain,
        "sympy identity",
    ),
    Step(
        r"While $k_{i+1} \ge 1$ the landing is again an integer ($k_{i+1} \le k_i - 1 \le n_2 - 1$, as "
        r"every $j \ge 1$), and the chain strictly decreases, so it stops after at most $n_2$ hops",
        chain_stays_inside,
        "sympy signs after substitution",
    ),
    Step(
        r"It stops at the first $k_{HL}$ with $k_{HL} - j_{k_{HL}} \le 0$, landing at $n_1 + k_{HL} - "
        r"j_{k_{HL}} \le n_1$ after $HL$ hops: the symbol $s_{n_1 + k_{HL} - j_{k_{HL}}}$ when that index "
        r"is in $1, \ldots, n_1$ (condition 2 and $f_{\mathrm{NUM}}$ as corrected, with the figures' hop "
        r"count $HL$), and outside the input when it is $\le 0$ (no answer in either)",
        landing_is_a_symbol_or_outside,
        "sympy signs after substitution",
    ),
)

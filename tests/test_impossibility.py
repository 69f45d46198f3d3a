"""theory.impossibility: symbolic heads are order-blind, a positional softmax head computes
Retrieval, hard positional heads cannot, and the exclusion bound with its sharp constant."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.functions import index, retrieval, split_pair
from theory.impossibility import (
    PositionalRetrieval,
    additive_matrix,
    exclusion_terms,
    hard_positional_pair,
    index_swap_pair,
    logit_matrix,
    proper_inputs,
    symbolic_head_output,
)


def test_symbolic_heads_ignore_the_order_of_earlier_tokens_and_rope_does_not():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4))
    W_Q, W_K, W_V = (rng.normal(size=(4, 4)) for _ in range(3))
    base = symbolic_head_output(x, W_Q, W_K, W_V)
    rope_base = symbolic_head_output(x, W_Q, W_K, W_V, theta=0.8)
    rope_changes = 0.0
    for perm in itertools.permutations(range(4)):
        y = np.vstack([x[list(perm)], x[-1:]])
        assert np.allclose(symbolic_head_output(y, W_Q, W_K, W_V), base, atol=1e-12)
        rope_changes = max(
            rope_changes, np.abs(symbolic_head_output(y, W_Q, W_K, W_V, theta=0.8) - rope_base).max()
        )
    assert rope_changes > 1e-3


def test_index_swap_pair_changes_the_answer():
    first, second = index_swap_pair()
    assert sorted(first[:-1]) == sorted(second[:-1]) and first[-1] == second[-1]
    assert index(first)[-1] != index(second)[-1]


def test_positional_weights_depend_on_positions_only_and_sum_to_one():
    model = PositionalRetrieval("abc", [1, 2])
    for i in range(1, 9):
        w = model.weights(i)
        assert len(w) == i and sum(w) == 1 and all(v > 0 for v in w)


@pytest.mark.parametrize("letters,ints,n_top", [("abc", [1, 2], 3), ("abcd", [1], 2), ("ab", [1, 2, 3], 3)])
def test_positional_head_computes_retrieval_on_every_proper_input(letters, ints, n_top):
    model = PositionalRetrieval(letters, ints)
    count = 0
    for n in range(1, n_top + 1):
        for seq, answer in proper_inputs(letters, ints, n):
            out, gap = model.output(seq, n)
            assert out == split_pair(answer[-1]) and gap > 0, seq
            count += 1
    assert count > 0


def test_hard_positional_pairs_for_every_attended_set():
    for n in range(3, 7):
        for size in range(1, n + 1):
            for J in itertools.combinations(range(1, n + 1), size):
                pair = hard_positional_pair(n, set(J))
                if set(range(1, n)) <= set(J):
                    assert pair is None
                    continue
                first, second = pair
                assert all(first[p - 1] == second[p - 1] for p in set(J) | {n})
                assert retrieval(first)[-1] != retrieval(second)[-1]


# ---- the exclusion principle ------------------------------------------------------------------------
def _closed_form_terms(M):
    """The (N-1)! identities of the derivation (claims.impossibility docstring)."""
    N = len(M)
    pos = math.factorial(N - 1) * sum((M[k][j] - M[j][j]) ** 2 for j in range(N) for k in range(N))
    sym = math.factorial(N - 1) * sum((M[k][j] - M[k][k]) ** 2 for j in range(N) for k in range(N))
    return pos, sym


fractions = st.fractions(min_value=-10, max_value=10, max_denominator=12)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda N: st.lists(st.lists(fractions, min_size=N, max_size=N), min_size=N, max_size=N)
    )
)
def test_exclusion_bound_holds_exactly_with_constant_one(rows):
    M = np.array(rows, dtype=object)
    terms = exclusion_terms(M)
    assert (terms["pos"], terms["sym"]) == _closed_form_terms(rows)
    assert terms["var"] <= terms["rhs"]


def test_exclusion_bound_on_random_rope_heads():
    rng = np.random.default_rng(4)
    for N in (2, 3, 4, 5):
        for _ in range(5):
            E, P = rng.normal(size=(N + 1, 4)), rng.normal(size=(8, 4))
            W_Q, W_K, theta = rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), rng.uniform(0, np.pi)

            def logit(q, i, k, j, W_Q=W_Q, W_K=W_K, E=E, P=P, theta=theta):
                a, b = W_Q @ (E[q] + P[i]), W_K @ (E[k] + P[j])
                c, s = np.cos((i - j) * theta), np.sin((i - j) * theta)
                return float(b @ np.array([c * a[0] - s * a[1], s * a[0] + c * a[1]]))

            terms = exclusion_terms(logit_matrix(logit, list(range(N + 1)), N + 1))
            assert terms["var"] <= terms["rhs"] * (1 + 1e-12)


def test_additive_heads_attain_the_constant_and_sample_variance_needs_n_over_n_minus_1():
    for N in range(2, 6):
        d = [Fraction(k * k - 3 * k, 2) for k in range(N)]
        terms = exclusion_terms(additive_matrix(d))
        assert terms["ratio"] == 1
        assert terms["var"] * N / (N - 1) / terms["rhs"] == Fraction(N, N - 1)


def test_positional_or_symbolic_alone_zeroes_one_term():
    positional = np.array([[Fraction(j) for j in range(4)] for _ in range(4)], dtype=object)  # M[k, j] = p(j)
    symbolic = positional.T.copy()  # M[k, j] = s(k)
    assert exclusion_terms(positional)["pos"] == 0 and exclusion_terms(symbolic)["sym"] == 0
    both = np.full((4, 4), Fraction(3), dtype=object)
    assert exclusion_terms(both)["var"] == 0


def test_impossibility_claims_reproduce_their_records():
    import proofs_check.claims  # noqa: F401
    from proofs_check.registry import REGISTRY, Options

    for cid in ("C6-index", "C6-retrieval", "C6-retrieval-hard", "C13", "C13-sharp-constant"):
        assert REGISTRY[cid].check(Options()).status == REGISTRY[cid].recorded, cid

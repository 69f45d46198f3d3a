"""theory.scores: the score formula on heads whose nature is known by construction,
and the fast cross-matrix method against literally swapping contents."""

import numpy as np
import pytest

from theory.rope import rope_angles, rope_logit
from theory.scores import attention_entropy, head_scores, swap_pairs, swapped_rows_from_cross


def rope_head_cross(query, keys, angles):
    """cross[c, p]: logit from the query (last position) to key content c placed at p."""
    n = len(keys)
    c, p = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return rope_logit(query[None, None, :], n - 1, keys[c], p, angles)


def literal_swapped_rows(query, keys, pairs, angles):
    """The definition: swap the contents of a and b, recompute the whole row."""
    n = len(keys)
    rows = []
    for a, b in pairs:
        swapped = keys.copy()
        swapped[[a, b]] = swapped[[b, a]]
        rows.append(rope_logit(query[None, :], n - 1, swapped, np.arange(n), angles))
    return np.array(rows)


def test_fast_equals_literal_swaps_on_random_rope_heads():
    rng = np.random.default_rng(0)
    angles = rope_angles(8)
    for _ in range(5):
        keys = rng.normal(size=(17, 8)) * 3
        query = rng.normal(size=8) * 3
        pairs = swap_pairs(16)
        cross = rope_head_cross(query, keys, angles)
        assert np.allclose(np.diagonal(cross), rope_logit(query[None], 16, keys, np.arange(17), angles))
        fast = swapped_rows_from_cross(cross, pairs)
        assert np.max(np.abs(fast - literal_swapped_rows(query, keys, pairs, angles))) < 1e-12
        s_fast = head_scores(np.diagonal(cross), fast, pairs)
        s_literal = head_scores(np.diagonal(cross), literal_swapped_rows(query, keys, pairs, angles), pairs)
        assert np.allclose(s_fast, s_literal, atol=1e-12)


def test_purely_positional_head_scores_one_positional():
    rng = np.random.default_rng(1)
    by_position = rng.normal(size=17) * 4
    cross = np.broadcast_to(by_position[None, :], (17, 17))  # logits ignore content
    pairs = swap_pairs(16)
    pos, sym = head_scores(by_position, swapped_rows_from_cross(cross, pairs), pairs)
    assert pos == pytest.approx(1.0, abs=1e-12)
    assert sym < 0.9


def test_purely_symbolic_head_scores_one_symbolic():
    rng = np.random.default_rng(2)
    by_content = rng.normal(size=17) * 4
    cross = np.broadcast_to(by_content[:, None], (17, 17))  # logits follow content
    pairs = swap_pairs(16)
    pos, sym = head_scores(by_content, swapped_rows_from_cross(cross, pairs), pairs)
    assert sym == pytest.approx(1.0, abs=1e-12)
    assert pos < 0.9


def test_uniform_attention_scores_both_one_and_has_maximal_entropy():
    pairs = swap_pairs(16)
    zeros = np.zeros(17)
    pos, sym = head_scores(zeros, swapped_rows_from_cross(np.zeros((17, 17)), pairs), pairs)
    assert (pos, sym) == (pytest.approx(1.0), pytest.approx(1.0))
    assert attention_entropy(zeros) == pytest.approx(np.log(17))


def test_batched_shapes_and_bad_arguments():
    rng = np.random.default_rng(3)
    cross = rng.normal(size=(4, 3, 17, 17))
    pairs = swap_pairs(16)
    rows = swapped_rows_from_cross(cross, pairs)
    assert rows.shape == (4, 3, 120, 17)
    pos, sym = head_scores(np.diagonal(cross, axis1=-2, axis2=-1), rows, pairs)
    assert pos.shape == sym.shape == (4, 3)
    with pytest.raises(ValueError, match="tau must be > 0"):
        head_scores(np.zeros(3), np.zeros((3, 3)), swap_pairs(2), tau=0)
    with pytest.raises(ValueError, match="at least 2 positions"):
        swap_pairs(1)


@pytest.mark.parametrize("scale", [0.1, 1, 30, 1000, 1e6])
def test_scores_from_cross_equal_the_literal_rows_even_with_saturated_attention(scale):
    from theory.scores import head_scores_from_cross

    rng = np.random.default_rng(4)
    cross = rng.normal(size=(40, 17, 17)) * scale
    cross[:10, :, 3] += 5 * scale  # position 3 takes all attention (positional, sharp)
    cross[10:20, 5, :] += 5 * scale  # content 5 takes all attention wherever it goes (symbolic)
    pairs = swap_pairs(16)
    literal = head_scores(
        np.diagonal(cross, axis1=-2, axis2=-1), swapped_rows_from_cross(cross, pairs), pairs
    )
    fast = head_scores_from_cross(cross, pairs)
    assert np.all(np.isfinite(fast))
    assert np.max(np.abs(np.array(fast) - np.array(literal))) < 1e-12


def definition_scores(logits, swapped_logits, pairs, tau):
    """The module docstring's formula, one swap at a time in plain Python (no shared code).
    Conventions: attention below the smallest normal double counts as 0, and a zero vector
    agrees with anything (cosine 1)."""
    import math
    import sys

    def attention(row):
        top = max(row)
        weights = [math.exp(x - top) for x in row]
        return [0.0 if w / sum(weights) < sys.float_info.min else w / sum(weights) for w in weights]

    def cosine(u, w):
        norms = math.hypot(*u) * math.hypot(*w)
        return 1.0 if norms == 0 else (u[0] * w[0] + u[1] * w[1]) / norms

    d = attention(list(logits))
    gaps = [abs(d[a] - d[b]) / tau for a, b in pairs]  # the flush moves a gap by < 2.3e-308
    alpha = attention(gaps)
    positional = symbolic = 0.0
    for weight, (a, b), row in zip(alpha, pairs, swapped_logits):
        s = attention(list(row))
        positional += weight * cosine((s[a], s[b]), (d[a], d[b]))
        symbolic += weight * cosine((s[a], s[b]), (d[b], d[a]))
    return positional, symbolic


@pytest.mark.parametrize("scale", [0.3, 3, 3000])
def test_vectorised_scores_equal_the_definition_swap_by_swap(scale):
    """Includes rows where attention underflows to exactly 0 at both swapped positions
    (scale 3000), the zero-vector convention of the docstring."""
    from theory.scores import head_scores_from_cross

    rng = np.random.default_rng(5)
    pairs = swap_pairs(16)
    for cross in rng.normal(size=(6, 17, 17)) * scale:
        base, rows = np.diagonal(cross), swapped_rows_from_cross(cross, pairs)
        expected = definition_scores(base, rows, pairs, 1e-4)
        assert np.allclose(head_scores(base, rows, pairs), expected, rtol=0, atol=1e-12)
        assert np.allclose(head_scores_from_cross(cross, pairs), expected, rtol=0, atol=1e-12)

"""theory.rope against the reference implementations (HF GPT-J, LLaMA rotate_half)
and across the four number systems."""

import numpy as np
import pytest
import sympy
import torch
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama

from theory.numbers import FLOAT64, SYMBOLIC, Interval, MultiPrecision
from theory.rope import (
    convert_pairing,
    pairing_permutation,
    rope_angles,
    rope_logit,
    rope_logit_absolute,
    rope_matrix,
    rotate,
    rotation,
)


def hf_angles(dim, base=10000):
    # the inverse frequencies both HF GPT-J and LLaMA build (float32 there)
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))


@pytest.mark.parametrize("dim", [2, 8, 64, 128])
def test_angles_match_hf_inverse_frequencies(dim):
    ours = rope_angles(dim)
    assert np.allclose(ours, hf_angles(dim).numpy(), rtol=1e-14, atol=0)
    # and the float32 table GPT-J actually uses, to float32 precision
    table = modeling_gptj.create_sinusoidal_positions(2, dim)
    hf_cos_at_1 = table[1, dim // 2 :].double().numpy()
    assert np.allclose(np.cos(ours), hf_cos_at_1, atol=1e-6)


@pytest.mark.parametrize("head_dim,rotary_dim", [(16, 16), (16, 8), (12, 4)])
def test_adjacent_pairing_matches_hf_gptj(head_dim, rotary_dim):
    rng = np.random.default_rng(0)
    batch, length = 3, 40
    x = rng.normal(size=(batch, length, 2, head_dim))  # HF layout: (batch, seq, heads, head_dim)
    positions = np.arange(length)
    table = modeling_gptj.create_sinusoidal_positions(length, rotary_dim).double()
    sin, cos = torch.split(table[None], rotary_dim // 2, dim=-1)
    t = torch.tensor(x)
    rotated = modeling_gptj.apply_rotary_pos_emb(t[..., :rotary_dim], sin, cos)
    reference = torch.cat([rotated, t[..., rotary_dim:]], dim=-1).numpy()
    ours = rotate(x, positions[None, :, None], rope_angles(rotary_dim))
    # HF builds its table in float32; positions < 40 keep that error below 1e-5 * 4
    assert np.max(np.abs(ours - reference)) < 1e-5
    # with our float64 sin/cos fed to HF's rotation, the two agree to rounding
    phase = positions[:, None] * rope_angles(rotary_dim)[None, :]
    exact = modeling_gptj.apply_rotary_pos_emb(
        t[..., :rotary_dim], torch.tensor(np.sin(phase))[None], torch.tensor(np.cos(phase))[None]
    )
    assert np.max(np.abs(ours[..., :rotary_dim] - exact.numpy())) < 1e-12


@pytest.mark.parametrize("head_dim", [8, 64])
def test_halves_pairing_matches_llama_rotate_half(head_dim):
    rng = np.random.default_rng(1)
    length = 50
    q = rng.normal(size=(2, 3, length, head_dim))  # LLaMA layout: (batch, heads, seq, head_dim)
    k = rng.normal(size=(2, 3, length, head_dim))
    phase = np.arange(length)[:, None] * rope_angles(head_dim)[None, :]
    emb = torch.tensor(np.concatenate([phase, phase], axis=-1))[None]
    q_ref, k_ref = modeling_llama.apply_rotary_pos_emb(torch.tensor(q), torch.tensor(k), emb.cos(), emb.sin())
    positions = np.arange(length)[None, None, :]
    angles = rope_angles(head_dim)
    assert np.max(np.abs(rotate(q, positions, angles, pairing="halves") - q_ref.numpy())) < 1e-6
    assert np.max(np.abs(rotate(k, positions, angles, pairing="halves") - k_ref.numpy())) < 1e-6


@pytest.mark.parametrize("dim,rotary_dim", [(8, None), (16, 8), (128, None)])
def test_row_permutation_maps_one_pairing_onto_the_other(dim, rotary_dim):
    rng = np.random.default_rng(2)
    hidden = 10
    w_q, w_k = rng.normal(size=(dim, hidden)), rng.normal(size=(dim, hidden))
    h_query, h_key = rng.normal(size=hidden), rng.normal(size=hidden)
    angles = rope_angles(rotary_dim or dim)
    perm = pairing_permutation(dim, rotary_dim)
    # a vector in the adjacent layout, permuted, rotates exactly like the halves layout
    for position in (0, 3, 17):
        x = rng.normal(size=dim)
        assert np.array_equal(
            rotate(x, position, angles)[perm], rotate(x[perm], position, angles, pairing="halves")
        )
    q_h, k_h = convert_pairing(w_q, dim, rotary_dim) @ h_query, convert_pairing(w_k, dim, rotary_dim) @ h_key
    for i, j in [(5, 2), (9, 9), (30, 0)]:
        adjacent = rope_logit(w_q @ h_query, i, w_k @ h_key, j, angles)
        halves = rope_logit(q_h, i, k_h, j, angles, pairing="halves")
        assert adjacent == pytest.approx(halves, abs=1e-12)
    back = convert_pairing(convert_pairing(w_q, dim, rotary_dim), dim, rotary_dim, to="adjacent")
    assert np.array_equal(back, w_q)


def test_rope_matrix_is_block_diagonal_rotation():
    angles = rope_angles(6)
    big = rope_matrix(5, angles, 8)
    for k, g in enumerate(angles):
        assert np.allclose(big[2 * k : 2 * k + 2, 2 * k : 2 * k + 2], rotation(5 * g))
    assert np.array_equal(big[6:, 6:], np.eye(2))
    assert np.allclose(big.T @ big, np.eye(8), atol=1e-14)


def test_relative_and_absolute_logits_agree_in_float64():
    rng = np.random.default_rng(3)
    angles = rope_angles(32)
    q, k = rng.normal(size=(20, 32)), rng.normal(size=(20, 32))
    i, j = rng.integers(0, 500, 20), rng.integers(0, 500, 20)
    assert np.allclose(rope_logit(q, i, k, j, angles), rope_logit_absolute(q, i, k, j, angles), atol=1e-10)


SYSTEMS = [FLOAT64, MultiPrecision(40), SYMBOLIC, Interval(160)]


def test_four_number_systems_agree_where_they_overlap():
    q, k = [1, -2, "0.5", 3], ["0.25", 1, -1, 2]
    values = {}
    for numbers in SYSTEMS:
        angles = rope_angles(4, base=10000, numbers=numbers)
        values[numbers.name] = rope_logit(q, 7, k, 2, angles, numbers)
    reference = values["mpmath(40 digits)"]
    assert abs(values["float64"] - float(reference)) < 1e-13
    assert abs(sympy.N(values["sympy"], 50) - sympy.Float(str(reference), 40)) < 1e-35
    ball = values["arb(160 bits)"]
    assert ball.rad() < 1e-40
    assert (
        ball.contains(Interval(160).convert(reference)) or abs(float(ball.mid()) - float(reference)) < 1e-38
    )


def test_interval_encloses_mpmath_at_huge_offsets():
    balls, mp = Interval(200), MultiPrecision(60)
    for t in [1, 10**6, 10**9, 10**12]:
        for theta in ["0.8", "0.0027", "3.14159"]:
            with balls.working():  # flint arithmetic runs at the global precision
                ball = balls.cos(balls.convert(t) * balls.convert(theta))
                value = mp.cos(mp.convert(t) * mp.convert(theta))
                assert ball.rad() < 1e-45
                # the 60-digit value lies in the ball, up to its own 1e-48 rounding
                assert (ball - balls.convert(value)).abs_lower() < 1e-48


def test_float64_fails_at_large_offsets_while_mpmath_is_stable():
    g2 = rope_angles(128, numbers=MultiPrecision(80))[1]  # ID 2, irrational
    t = 10**9
    truth = MultiPrecision(80).cos(t * g2)
    float_value = np.cos(t * float(g2))
    float_error = abs(float_value - float(truth))
    # float64 rounds t * g to a multiple of ulp(8.7e8) ~ 1.2e-7: the cosine is wrong in the 8th digit
    assert float_error > 1e-9, float_error
    for dps in (30, 50):
        low = MultiPrecision(dps)
        assert abs(low.cos(t * rope_angles(128, numbers=low)[1]) - truth) < 10.0 ** (-dps + 12)

"""C6-retrieval-bounded (issue 30): the bounded-logit positional head, its certificate and the
claim check's rejection of real mutants (run through the registered check itself)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

import proofs_check.claims  # noqa: F401  (registers the claims)
from proofs_check.registry import REGISTRY, Options
from theory import bounded_positional as bp


def test_witness_inputs_are_proper_with_the_stated_answers():
    for n in (4, 5, 9):
        assert [a for _, a in bp.witness_inputs(n)] == ["a1", "b1", "b1"]
    with pytest.raises(ValueError, match="n >= 4"):
        bp.witness_inputs(3)


@pytest.mark.parametrize("n,ratio", [(4, Fraction(1)), (6, Fraction(3)), (9, Fraction(6)), (12, Fraction(9))])
def test_certificate_forces_an_error_for_every_readout(n, ratio):
    rng = random.Random(n)
    weights = bp.extremal_weights(n, ratio)  # ratio <= n - 3: W >= w_n
    for _ in range(30):
        V = {
            t: {x: Fraction(rng.randint(-20, 20), rng.randint(1, 5)) for x in ("a1", "b1", "ca", "cb")}
            for t in ("a1", "b1")
        }
        c = {
            t: Fraction(rng.randint(-40, 40), rng.randint(1, 5)) for t in ("a1", "b1")
        }  # a bias, not cancelling
        cert = bp.certificate(weights, V, c)
        assert cert["combination"] == 0 and cert["forces_error"] and min(cert["margins"]) <= 0
        assert (
            cert["margins"] != bp.certificate(weights, V)["margins"] or c["a1"] == c["b1"]
        )  # the bias is read


def test_a_bias_alone_can_fix_two_margins_but_not_three():
    """A large bias toward a1 makes m1 > 0; the certificate then forces m3 or m4 <= 0."""
    weights = bp.extremal_weights(6, Fraction(2))
    V = {"a1": {"ca": Fraction(1)}, "b1": {"cb": Fraction(1)}}
    cert = bp.certificate(weights, V, {"a1": Fraction(10), "b1": Fraction(0)})
    assert cert["margins"][0] > 0 and min(cert["margins"][1:]) <= 0 and cert["combination"] == 0


def test_below_the_threshold_a_readout_separates_the_three_inputs():
    weights = bp.extremal_weights(5, Fraction(3))  # W = 2/(4+3) < w_n = 3/7: the argument does not apply
    V = {"a1": {"ca": Fraction(1)}, "b1": {"cb": Fraction(1)}}
    assert not bp.certificate(weights, V)["forces_error"] and min(bp.certificate(weights, V)["margins"]) > 0


@pytest.mark.parametrize("B,n_star", [(0, 4), (Fraction(1, 2), 6), (1, 11), (2, 58)])
def test_threshold_is_certified(B, n_star):
    assert bp.threshold(B) == n_star and bp.forced_at(B, n_star) is True
    assert bp.forced_at(B, n_star - 1) is False
    with pytest.raises(ValueError, match="B must be >= 0"):
        bp.threshold(-1)


def test_a_residual_readout_is_exact_with_uniform_attention():
    out = bp.residual_head_errors("abc", 1, 4)
    assert not out["errors"] and out["least_gap"] == Fraction(1, 4)
    assert bp.residual_head_errors("abc", 1, 4, bonus=Fraction(1, 2))["errors"]  # a small K: presence wins


MUTANTS = {  # each a real mutant of the claim's formula or argument; the CLAIM CHECK must reject it
    "threshold off by one": ("threshold", lambda real: lambda B, prec=128: real(B, prec) - 1),
    "e^B for e^(2B)": ("threshold", lambda real: lambda B, prec=128: real(Fraction(B) / 2, prec)),
    "certificate without the third input": (
        "witness_inputs",
        lambda real: lambda n: real(n)[:2] + [real(n)[1]],
    ),
    "residual bonus too small": (
        "residual_head_errors",
        lambda real: lambda *a, **k: real(*a, **{**k, "bonus": Fraction(1, 2)}),
    ),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_claim_check_rejects_a_real_mutant(monkeypatch, mutant):
    check = REGISTRY["C6-retrieval-bounded"].check
    assert check(Options()).status == "verified"
    name, make = MUTANTS[mutant]
    monkeypatch.setattr(bp, name, make(getattr(bp, name)))
    assert check(Options()).status != "verified"

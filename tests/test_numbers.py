"""theory.numbers: conversions are exact where promised and contexts do not leak."""

from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
import sympy

from theory.numbers import FLOAT64, SYMBOLIC, Interval, MultiPrecision
from theory.rope import rope_angles, rotation


def test_decimal_strings_are_decimals_and_floats_are_binary():
    mp = MultiPrecision(40)
    assert mp.convert("0.8") == mp.ctx.mpf(4) / 5
    assert mp.convert(0.8) != mp.convert("0.8")  # the double nearest 0.8 is not 4/5
    assert SYMBOLIC.convert("0.8") == sympy.Rational(4, 5)
    assert SYMBOLIC.convert(0.5) == sympy.Rational(1, 2)
    ball = Interval(128).convert("0.8")
    with Interval(128).working():
        assert ball.contains(flint.arb(4) / 5) and not ball.contains(flint.arb(0.8))


def test_contexts_leave_global_precision_alone():
    before_mp, before_flint = mpmath.mp.dps, flint.ctx.prec
    MultiPrecision(80).cos(1)
    Interval(300).cos("0.3")
    rope_angles(16, numbers=Interval(300))
    assert (mpmath.mp.dps, flint.ctx.prec) == (before_mp, before_flint)


def test_interval_precision_is_honoured():
    wide, narrow = Interval(64).cos("0.7"), Interval(400).cos("0.7")
    assert float(narrow.rad()) < 1e-100 < float(wide.rad())
    assert wide.overlaps(narrow)


def test_symbolic_rotation_is_exact():
    theta = sympy.Symbol("theta")
    r = rotation(theta, SYMBOLIC)
    product = sympy.Matrix(r.tolist()) * sympy.Matrix(r.tolist()).T
    assert sympy.simplify(product - sympy.eye(2)) == sympy.zeros(2, 2)


def test_rope_angles_power_is_exact_rational_exponent():
    angles = rope_angles(128, numbers=SYMBOLIC)
    assert angles[1] == sympy.Integer(10000) ** sympy.Rational(-1, 64)
    assert rope_angles(128, numbers=FLOAT64)[1] == pytest.approx(0.8659643233600653, rel=1e-15)
    assert rope_angles(4, base=4, numbers=SYMBOLIC)[1] == sympy.Rational(1, 2)


@pytest.mark.parametrize(
    "make,bad", [(MultiPrecision, 2), (MultiPrecision, 3.5), (Interval, 8), (Interval, "64")]
)
def test_bad_precisions_are_refused(make, bad):
    with pytest.raises(ValueError, match="got"):
        make(bad)


@pytest.mark.parametrize("dim", [0, 3, -2, 2.0])
def test_bad_dimensions_are_refused(dim):
    with pytest.raises(ValueError, match="even integer"):
        rope_angles(dim)


def test_unreadable_values_are_refused():
    with pytest.raises(TypeError, match="bool"):
        Interval(64).convert(True)
    with pytest.raises(ValueError):
        SYMBOLIC.convert("not a number")
    assert np.isclose(FLOAT64.power(4, Fraction(1, 2)), 2.0)


# --- ball_text: certified numbers in prose keep their exponents ------------------------------------


@pytest.mark.parametrize(
    "given, shown",
    [
        (
            "[7.69405e-7 +/- 3.1e-25]",
            "7.694e-7 ± 3e-25",
        ),  # the C7-retrieval-inf line printed "[7.69405" before
        ("[4.55526e-8 +/- 1e-30]", "4.555e-8 ± 1e-30"),
        ("0.0115", "0.0115"),  # a plain decimal: no radius from its binary rounding
        ("1.1500000000e-2", "0.0115"),
        ("123456.7", "1.235e5"),
        ("[1.96448755742716 +/- 5.87e-17]", "1.964 ± 6e-17"),
    ],
)
def test_ball_text_keeps_the_exponent_and_the_radius(given, shown):
    from theory.numbers import ball_text

    assert ball_text(given) == shown


def test_ball_text_of_an_arb_shows_its_own_radius():
    from theory.numbers import ball_text

    third = flint.arb(1) / 3
    text = ball_text(third)
    assert text.startswith("0.3333 ± ") and "e-" in text

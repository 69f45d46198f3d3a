"""Shared fixtures.  Like mpmath's own suite, every test starts from the default
working precisions and may not leak a change to the next one."""

import flint
import mpmath
import pytest


@pytest.fixture(autouse=True)
def reset_precision():
    saved_mp, saved_flint = mpmath.mp.prec, flint.ctx.prec
    yield
    mpmath.mp.prec = saved_mp
    flint.ctx.prec = saved_flint

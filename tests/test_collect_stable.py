"""``study --collect`` is byte-stable (reliability round 4): the same inputs give the same
summary bytes on every machine, and a collect that finds nothing new writes nothing, so the
README's collect commands leave a fresh clone's ``git status`` clean.

The fits are exact (``break_prediction.hop_exponent`` and the rank correlation of
``compare_breaks``: rationals, no BLAS), and ``ship.write_json_if_changed`` keeps a shipped
summary whose only differences are floats within ``ship.FLOAT_NOISE`` (the shipped floats came
from np.polyfit, whose last bits depended on the CPU's BLAS kernel).
"""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction

import pytest
import test_study_safety
from test_study_safety import SHIPPED, cli

from training.analysis.break_prediction import RULES, compare_breaks, hop_exponent
from training.studies.ship import same_up_to_float_noise

mini = test_study_safety.mini  # the fixture: two letter members with every stage done


def _exact_slope(points) -> float:
    x, y = [Fraction(p) for p, _ in points], [Fraction(q) for _, q in points]
    n = len(points)
    return float(
        (n * sum(a * b for a, b in zip(x, y)) - sum(x) * sum(y)) / (n * sum(a * a for a in x) - sum(x) ** 2)
    )


def test_hop_exponent_is_the_correctly_rounded_least_squares_slope_in_any_order():
    # a shipped member's breaks: np.polyfit gave 1.0835185853352096 here, 1.0835185853352087 with
    # OpenBLAS's Zen kernel; the exact slope is one value everywhere
    shipped = json.loads((SHIPPED / "summary.json").read_text())
    per_hop = shipped["results"]["paper"]["number"]["breaks"]["measured_per_hop"]["0"]
    kept = [(int(k), b) for k, b in per_hop.items() if b is not None and b > 17]
    expected = -_exact_slope([(math.log(k), math.log(b)) for k, b in kept])
    assert hop_exponent(per_hop, 17) == expected
    assert hop_exponent(dict(reversed(list(per_hop.items()))), 17) == expected
    assert hop_exponent({"1": 100.0, "01": 50.0, "001": 25.0}) is None  # one hop count: no slope


def test_the_rank_correlation_is_exact():
    members = {
        f"m{i}": {
            "predicted": {rule: {"break": float(p)} for rule in RULES},
            "measured": float(m),
            "last_length": 5000,
        }
        for i, (p, m) in enumerate(zip([3, 5, 1, 4, 3], [4, 1, 3, 1, 6]))
    }
    # ranks (2.5, 5, 1, 4, 2.5) and (4, 1.5, 3, 1.5, 5): rho = -6 / (19 / 2) = -12/19 exactly
    # (np.corrcoef: -0.6315789473684211, one unit in the last place off)
    assert compare_breaks(members, "lemma")["spearman_rho"] == float(Fraction(-12, 19))


def _summary_after_collect(capsys, plan, path):
    code, _, err = cli(capsys, plan, "--collect")
    assert code == 0, err
    return path.read_bytes(), path.stat().st_mtime_ns


def _age(path):
    """Date the file back a minute, so a rewrite shows in its mtime whatever the clock's grain."""
    stamp = path.stat().st_mtime_ns - 60 * 10**9
    os.utime(path, ns=(stamp, stamp))
    return stamp


def test_collect_twice_gives_the_same_bytes_and_the_second_writes_nothing(capsys, tmp_path, mini):
    path = tmp_path / "ship" / "summary.json"
    first, _ = _summary_after_collect(capsys, mini, path)
    assert "hop_exponent" in json.loads(first)["results"]["paper"]["letter"]  # the fit is in it
    stamp = _age(path)
    assert _summary_after_collect(capsys, mini, path) == (first, stamp)


def _nudged(data: bytes, change) -> bytes:
    document = json.loads(data)
    cell = document["results"]["paper"]["letter"]["hop_exponent"]
    cell["values"]["1"] = change(cell["values"]["1"])
    return json.dumps(document, indent=1).encode()


@pytest.mark.parametrize(
    "change, rewritten",
    [
        (lambda v: math.nextafter(v, math.inf), False),  # float noise: the shipped bytes stay
        (lambda v: v * (1 + 1e-13), False),
        (lambda v: v * (1 + 1e-9), True),  # a real change is written
        (lambda v: str(v), True),  # so is a change of type
    ],
    ids=["one-ulp", "1e-13", "1e-9", "a-string"],
)
def test_a_summary_differing_only_by_float_noise_is_not_rewritten(capsys, tmp_path, mini, change, rewritten):
    path = tmp_path / "ship" / "summary.json"
    fresh, _ = _summary_after_collect(capsys, mini, path)
    path.write_bytes(_nudged(fresh, change))
    old, stamp = path.read_bytes(), _age(path)
    data, mtime = _summary_after_collect(capsys, mini, path)
    assert (data, mtime) == ((fresh, mtime) if rewritten else (old, stamp))
    assert rewritten == (mtime != stamp)


def test_float_noise_is_only_float_noise():
    assert same_up_to_float_noise({"a": [1.0, None, "x"]}, {"a": [1.0 + 1e-15, None, "x"]})
    assert not same_up_to_float_noise({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order is in the bytes
    assert not same_up_to_float_noise({"n": 2}, {"n": 2.0})  # an int is not a float
    assert not same_up_to_float_noise({"ok": True}, {"ok": 1})  # a bool is not an int
    assert not same_up_to_float_noise([0.0], [1e-300])  # relative, so 0 is exact
    assert not same_up_to_float_noise([1.0], [1.0, 2.0])

"""Softmax dilution and the break length Lemma F.1 predicts (training.analysis.dilution,
training.analysis.break_prediction), the theory per RoPE variant (theory.variant_theory) and
the premise claim's status rule (proofs_check.claims.premise)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from proofs_check.claims.premise import MIN_MEMBERS, decide, decide_held_out, shipped_breaks
from theory.statistics import reaches
from theory.variant_theory import logit_growth, retrieval_horizon, variant_angles, variant_prediction
from training.analysis.break_prediction import (
    RELATIVE_DROP,
    RULES,
    SEEN_BY_RELATIVE,
    SPREAD_RATIO,
    break_after_learning,
    compare_breaks,
    crossing,
    hop_exponent,
    layer_margins,
    measured_break,
    member_breaks,
    never_learned,
    predicted_break,
)

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = [17, 25, 50, 100, 200]


def test_crossing_interpolates_in_log_length():
    # margin +1 at 25 and -1 at 50: halfway in ln n, the geometric mean
    assert crossing([17, 25, 50], [2.0, 1.0, -1.0]) == pytest.approx(math.sqrt(25 * 50))
    assert crossing([17, 25, 50], [2.0, 3.0, 0.0]) == pytest.approx(50)
    assert crossing([17, 25], [-0.1, 1.0]) == 17  # fails at the first length already
    assert crossing([17, 25], [0.5, 1.0]) is None  # never fails: censored


def _layer(gaps, weights):
    return {"gap": {"q0.1": list(gaps)}, "top_weight": {"q0.1": list(weights)}}


def test_lemma_and_mass_margins_follow_the_stated_conditions():
    gaps = [5.0, 4.0, 3.0, 2.0, 1.0]
    weights = [0.9, 0.8, 0.6, 0.4, 0.2]
    layer = _layer(gaps, weights)
    lemma = layer_margins(layer, LENGTHS, "lemma")
    mass = layer_margins(layer, LENGTHS, "mass")
    for g, n, m in zip(gaps, LENGTHS, lemma):
        assert m == pytest.approx(g - math.log((n - 1) * SPREAD_RATIO))
    for w, m in zip(weights, mass):  # Gamma (1 - w) < delta  <=>  1 - w < 1 / r
        assert (m > 0) == ((1 - w) < 1 / SPREAD_RATIO)
    with pytest.raises(ValueError, match="rule must be one of"):
        layer_margins(layer, LENGTHS, "vibes")


def test_predicted_break_is_the_earliest_break_of_the_layers_hard_at_the_training_length():
    r = SPREAD_RATIO
    hard_long = [math.log((n - 1) * r) + 1 for n in LENGTHS]  # holds everywhere
    hard_short = [
        math.log((n - 1) * r) + d for n, d in zip(LENGTHS, [1, 1, -1, -2, -3])
    ]  # fails between 25 and 50
    soft = [0.0] * len(LENGTHS)  # never hard: not on the answer path
    dilution = {
        "lengths": LENGTHS,
        "layers": [
            {"layer": 0, **_layer(hard_long, [0.9] * 5)},
            {"layer": 1, **_layer(hard_short, [0.9] * 5)},
            {"layer": 2, **_layer(soft, [0.1] * 5)},
        ],
    }
    lemma = predicted_break(dilution, "lemma")
    assert lemma["path"] == [0, 1]
    assert lemma["layer_breaks"] == {"0": None, "1": pytest.approx(math.sqrt(25 * 50))}
    assert lemma["break"] == pytest.approx(math.sqrt(25 * 50))
    only_soft = {"lengths": LENGTHS, "layers": [dilution["layers"][2]]}
    assert predicted_break(only_soft, "lemma") == {"break": 17.0, "path": [], "layer_breaks": {}}
    assert predicted_break(dilution, "mass")["break"] is None  # top weight 0.9 everywhere on the path


def test_measured_break_per_hop_and_overall():
    accuracy = [1.0, 0.95, 0.85, 0.3, 0.1]
    assert measured_break(LENGTHS, accuracy) == pytest.approx(math.exp((math.log(25) + math.log(50)) / 2))
    assert measured_break(LENGTHS, [1.0, 0.9, 0.9, 0.9, 0.9]) is None  # 0.9 itself is not "below 0.9"
    assert measured_break(LENGTHS, [1.0, None, 0.95, 0.5, 0.1]) == pytest.approx(
        math.exp((math.log(50) + math.log(100)) / 2) * (100 / 50) ** (0.05 / 0.45 - 0.5)
    )  # 25 has no value
    dilution = {"lengths": LENGTHS, "layers": [{"layer": 0, **_layer([9.0] * 5, [1.0] * 5)}]}
    result = member_breaks(
        dilution, {"lengths": LENGTHS, "accuracy": accuracy, "per_hop": {"1": [1.0] * 5, "2": accuracy}}
    )
    assert result["measured_per_hop"]["1"] is None and result["measured"] == result["measured_per_hop"]["2"]


def test_break_after_learning_starts_where_accuracy_first_reaches_the_threshold():
    # below 0.9 at 17, right from 25, falls below between 50 and 100: the extra-window shape
    late = [0.85, 0.95, 0.95, 0.5, 0.3]
    assert measured_break(LENGTHS, late) == 17.0  # the claims' rule: never learned at the training length
    after = break_after_learning(LENGTHS, late)
    assert after["learned_at"] == 25.0
    assert after["break"] == pytest.approx(measured_break(LENGTHS[1:], late[1:]))
    assert 50 < after["break"] < 100
    right = [1.0, 0.95, 0.85, 0.3, 0.1]  # right at 17: the same break as the claims'
    assert break_after_learning(LENGTHS, right) == {
        "learned_at": 17.0,
        "break": measured_break(LENGTHS, right),
    }
    assert break_after_learning(LENGTHS, [0.5, 0.95, 0.95, 0.95, 0.95]) == {"learned_at": 25.0, "break": None}
    assert break_after_learning(LENGTHS, [0.5, None, 0.2, 0.1, 0.0]) == {"learned_at": None, "break": None}
    assert never_learned({"a": {"measured": 17.0}, "b": {"measured": 40.0}, "c": {"measured": None}}, 17) == [
        "a"
    ]


# 180/200 as the evaluate stage stored it before 2026-12-02 (through float32)
FLOAT32_NINE_TENTHS = float(np.float32(0.9))


def test_an_accuracy_of_exactly_0_9_stored_through_float32_is_not_below_0_9():
    assert FLOAT32_NINE_TENTHS < 0.9 and reaches(FLOAT32_NINE_TENTHS, 0.9)
    n = 10**5  # one input fewer than 0.9 of the most inputs we evaluate at a length is still a miss
    assert not reaches((0.9 * n - 1) / n, 0.9) and not reaches(float(np.float32(179 / 200)), 0.9)
    stored = [1.0, FLOAT32_NINE_TENTHS, FLOAT32_NINE_TENTHS, 0.5, 0.1]
    assert measured_break(LENGTHS, stored) == pytest.approx(50)  # held at 50 (margin 0+), fell by 100
    assert measured_break(LENGTHS, stored) == pytest.approx(
        measured_break(LENGTHS, [1.0, 0.9, 0.9, 0.5, 0.1])
    )
    assert measured_break(LENGTHS, [FLOAT32_NINE_TENTHS] * 5) is None
    assert break_after_learning(LENGTHS, [FLOAT32_NINE_TENTHS, 0.5, 0.5, 0.5, 0.5]) == {
        "learned_at": 17.0,
        "break": measured_break(LENGTHS, [FLOAT32_NINE_TENTHS, 0.5, 0.5, 0.5, 0.5]),
    }
    assert (
        never_learned(
            {
                "a": member_breaks(
                    {"lengths": LENGTHS, "layers": []},
                    {"lengths": LENGTHS, "accuracy": [FLOAT32_NINE_TENTHS] + [1.0] * 4, "per_hop": {}},
                )
            },
            17,
        )
        == []
    )


def test_relative_reading_breaks_where_the_top_weight_halves_on_the_mass_path():
    halving = [0.8, 0.6, 0.5, 0.3, 0.2]  # 0.4 = half of 0.8, crossed between 50 (0.5) and 100 (0.3)
    margins = layer_margins(_layer([9.0] * 5, halving), LENGTHS, "relative")
    assert margins == pytest.approx([w - RELATIVE_DROP * 0.8 for w in halving])
    dilution = {
        "lengths": LENGTHS,
        "layers": [
            {"layer": 0, **_layer([9.0] * 5, halving)},
            {"layer": 1, **_layer([9.0] * 5, [0.4, 0.1, 0.05, 0.02, 0.01])},
        ],
    }  # soft at 17: off the path, ignored
    relative = predicted_break(dilution, "relative")
    assert relative["path"] == predicted_break(dilution, "mass")["path"] == [0]
    assert relative["break"] == pytest.approx(math.exp(math.log(50) + 0.5 * (math.log(100) - math.log(50))))
    assert predicted_break(dilution, "mass")["break"] == pytest.approx(50)  # 1 - w < 1/2 fails at w = 0.5


def _member(predicted, measured, last=5000):
    return {
        "predicted": {rule: {"break": predicted} for rule in RULES},
        "measured": measured,
        "last_length": last,
    }


def test_hop_exponent_is_the_power_law_of_break_against_hop_count():
    assert hop_exponent({str(k): 1200.0 / k**1.75 for k in range(1, 5)}) == pytest.approx(1.75)
    assert hop_exponent({"1": 900.0, "2": 300.0, "3": 100.0, "4": 100.0}) == pytest.approx(
        -np.polyfit(np.log([1, 2, 3, 4]), np.log([900, 300, 100, 100]), 1)[0]
    )
    assert hop_exponent({"1": None, "2": 300.0, "3": 150.0, "4": 90.0}) == pytest.approx(
        -np.polyfit(np.log([2, 3, 4]), np.log([300, 150, 90]), 1)[0]
    )  # a censored hop count is left out
    assert hop_exponent({"1": None, "2": None, "3": 150.0, "4": 90.0}) is None  # two points fit any line
    # a hop below the threshold at the training length never learned it: no length break
    assert hop_exponent({"1": 17.0, "2": 300.0, "3": 150.0, "4": 90.0}, 17) == pytest.approx(
        hop_exponent({"1": None, "2": 300.0, "3": 150.0, "4": 90.0})
    )


def test_rank_correlation_and_factor_2_with_censored_members():
    same_order = {f"m{i}": _member(10.0 * (i + 1), 15.0 * (i + 1)) for i in range(4)}
    result = compare_breaks(same_order, "lemma")
    assert result["spearman_rho"] == pytest.approx(1.0) and result["within_factor_2"] == 4
    reversed_order = {f"m{i}": _member(10.0 * (4 - i), 100.0 * (i + 1)) for i in range(4)}
    result = compare_breaks(reversed_order, "lemma")
    assert result["spearman_rho"] == pytest.approx(-1.0) and result["within_factor_2"] == 0
    censored = {
        "a": _member(None, None),
        "b": _member(None, 4000.0),
        "c": _member(None, 100.0),
        "d": _member(50.0, 60.0),
    }
    result = compare_breaks(censored, "lemma")
    assert result["within_factor_2"] == 3  # a: both beyond; b: beyond half the last length; d: 50/60
    assert result["spearman_rho"] is not None


def test_the_premise_claims_status_rule():
    good = {f"m{i}": _member(100.0 * (i + 1), 120.0 * (i + 1)) for i in range(MIN_MEMBERS)}
    assert decide(good).status == "verified"
    bad = {f"m{i}": _member(100.0 * (MIN_MEMBERS - i), 120.0 * (i + 1)) for i in range(MIN_MEMBERS)}
    assert decide(bad).status == "refuted"
    too_few = dict(list(good.items())[: MIN_MEMBERS - 1])
    assert decide(too_few).status == "undecided"
    ranked_but_far = {f"m{i}": _member(100.0 * (i + 1), 300.0 * (i + 1)) for i in range(MIN_MEMBERS)}
    outcome = decide(ranked_but_far)  # rho 1 but every prediction a factor 3 early
    assert outcome.status == "refuted" and outcome.evidence["comparisons"]["lemma"]["within_factor_2"] == 0


def test_the_rescaled_premise_is_judged_on_the_mass_reading():
    # the letter models with the scale: measured never (censored); the number ones break near 55
    def member(lemma, mass, measured):
        return {
            "predicted": {"lemma": {"break": lemma}, "mass": {"break": mass}, "relative": {"break": None}},
            "measured": measured,
            "last_length": 5000,
        }

    letter = {f"l{i}": member(17.0, None, None) for i in range(4)}
    number = {f"n{i}": member(17.0, 40.0 + i, 55.0 + i) for i in range(3)}
    outcome = decide({**letter, **number}, reading="mass")
    assert outcome.status == "verified" and outcome.summary.startswith("7 members; mass: rho +")
    assert outcome.evidence["comparisons"]["lemma"]["within_factor_2"] == 0  # 17 is over a factor 3 below 55
    assert decide({**letter, **number}).status == "refuted"  # the lemma reading on the same members
    early = {m: member(17.0, 100.0, None) for m in letter}  # predicted to break, never does
    assert decide({**early, **number}, reading="mass").status == "refuted"
    all_censored = {f"l{i}": member(17.0, None, None) for i in range(MIN_MEMBERS)}  # rho undefined
    assert decide(all_censored, reading="mass").status == "undecided"
    assert (
        "run the rescale_dilution stage" in decide(number, reading="mass", stage="rescale_dilution").summary
    )


def test_the_rescaled_claim_reads_its_own_files(tmp_path):
    folder = tmp_path / "paper-3k" / "letter" / "seed-0"
    folder.mkdir(parents=True)
    (folder / "dilution.json").write_text(json.dumps({"breaks": _member(10.0, 20.0)}))
    (folder / "dilution_rescaled.json").write_text(json.dumps({"breaks": _member(None, None)}))
    assert shipped_breaks([tmp_path], "dilution_rescaled.json") == {
        "paper-3k/letter/seed-0": _member(None, None)
    }
    assert shipped_breaks([tmp_path])["paper-3k/letter/seed-0"]["measured"] == 20.0


def test_the_relative_reading_is_judged_on_held_out_members_only():
    seen = sorted(SEEN_BY_RELATIVE)
    assert len(seen) == 19 and "paper-3k/letter/seed-0" in seen and "nope-0-3k/letter/seed-0" not in seen
    wrong_on_seen = {m: _member(10.0, 1000.0) for m in seen}  # the seen members' misses do not count
    good = {f"held/{i}": _member(100.0 * (i + 1), 120.0 * (i + 1)) for i in range(MIN_MEMBERS)}
    assert decide_held_out({**wrong_on_seen, **good}).status == "verified"
    far = {f"held/{i}": _member(100.0 * (i + 1), 300.0 * (i + 1)) for i in range(MIN_MEMBERS)}
    assert decide_held_out(far).status == "refuted"
    assert decide_held_out({**good, **wrong_on_seen}).evidence["comparison"]["n"] == MIN_MEMBERS
    never_broken = {f"held/{i}": _member(None, None) for i in range(MIN_MEMBERS)}  # rho undefined
    assert decide_held_out(never_broken).status == "undecided"
    assert decide_held_out(dict(list(good.items())[:-1])).status == "undecided"


def test_a_member_that_never_learned_the_task_tests_no_length_rule():
    # measured break at the training length: accuracy < 0.9 already at 17; predicting 17 for it
    # would be a free hit, so both claims leave it out and name it
    good = {f"held/{i}": _member(100.0 * (i + 1), 120.0 * (i + 1)) for i in range(MIN_MEMBERS)}
    untrained = {"held/untrained": _member(17.0, 17.0)}
    for judge in (decide, decide_held_out):
        outcome = judge({**good, **untrained})
        assert outcome.status == "verified" and outcome.evidence["unsolved_left_out"] == ["held/untrained"]
        assert "1 unsolved left out (held/untrained)" in outcome.summary
    assert decide({**dict(list(good.items())[:-1]), **untrained}).status == "undecided"  # it does not count


def test_variant_angles_are_the_models_rotary_angles():
    import torch

    from training.model.gptj import GPTJ, ModelConfig

    for variant in ({}, {"rope_fraction": 0.75}, {"rope_base": 500000.0}):
        model = GPTJ(ModelConfig(n_layer=1, n_embd=16, n_inner=32, rotary_dim=16, vocab_size=8, **variant))
        expected = variant_angles(16, variant.get("rope_base", 10000.0), variant.get("rope_fraction", 1.0))
        assert torch.equal(model.rotary.angles, torch.from_numpy(expected))
    assert not variant_angles(16, rope=False).any()
    assert (variant_angles(128, fraction=0.75)[48:] == 0).all() and (
        variant_angles(128, fraction=0.75)[:48] > 0
    ).all()


def test_variant_theory_laws():
    lengths = [17, 100, 850, 5000]
    # a position-free plane (NoPE, p-RoPE) keeps the retrieval margin: Remark 3.2
    for variant in ({"nope_from_layer": 0}, {"rope_fraction": 0.75}):
        assert logit_growth(variant, 0, 128, 8, lengths) == pytest.approx([1.0] * 4)
    # the paper's RoPE: near constant inside the horizon 1 + omega / (2 theta_min), lost past it
    theta = variant_angles(128)[-1]
    assert retrieval_horizon(theta, 8) == pytest.approx(1 + (2 * math.pi / 8) / (2 * theta))
    paper = logit_growth({}, 0, 128, 8, lengths)
    assert paper[1] > 0.95 and paper[3] is None  # 5,000 > the horizon: another symbol on top
    # the log query scale multiplies the law by log(n) / log(17)
    scaled = logit_growth({"query_scale": "log", "nope_from_layer": 0}, 0, 128, 8, lengths)
    assert scaled == pytest.approx([math.log(n) / math.log(17) for n in lengths])
    prediction = variant_prediction({"nope_from_layer": 4}, 6, 128, 8, lengths)
    assert [layer["rotates"] for layer in prediction["layers"]] == [True] * 4 + [False] * 2
    assert prediction["layers"][5]["index_law"].startswith("impossible")


def test_dilution_readings_match_the_models_own_logits(one_torch_thread):
    import torch

    from training.analysis.adapters import OurGPTJAdapter
    from training.analysis.dilution import dilution_profile
    from training.analysis.measured_discrepancy import last_row_readings, top_weight
    from training.model.gptj import GPTJ, ModelConfig
    from training.tasks.definitions import get_task

    torch.manual_seed(0)
    task = get_task("letter")
    model = GPTJ(
        ModelConfig(n_layer=2, n_embd=16, n_inner=32, rotary_dim=16, vocab_size=len(task.vocab))
    ).double()
    adapter = OurGPTJAdapter(model)
    readings = last_row_readings(adapter, task, [17, 40], count=5, seed=1, progress=False)
    ids = task.generate(5, 1, extra_target=23).inputs
    with torch.no_grad():
        _, internals = model(torch.as_tensor(ids), last_only=True, return_internals=True)
    weights = torch.softmax(internals.last_logits[1][:, 0], dim=-1).max(dim=-1).values.numpy()
    assert np.allclose(readings[1]["top_weight"][1], weights, rtol=1e-12)
    assert np.allclose(top_weight(np.zeros((2, 4))), 0.25)
    profile = dilution_profile(adapter, task, [17, 40], count=5, seed=1, progress=False)
    assert profile["layers"][1]["top_weight"]["q0.5"][1] == pytest.approx(float(np.median(weights)))


def test_dilution_cli_refuses_an_accuracy_file_of_another_grid(tmp_path):
    bad = tmp_path / "acc.json"
    bad.write_text(json.dumps({"lengths": [25, 50], "accuracy": [1, 1], "per_hop": {}}))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            "dilution",
            "--run",
            str(ROOT / "training/reference/letter"),
            "--task",
            "letter",
            "--json",
            str(tmp_path / "out.json"),
            "--lengths",
            "17,25",
            "--accuracy",
            str(bad),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 2 and "must start at the same length" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("command", ["dilution", "evaluate"])
def test_device_cuda_without_a_gpu_exits_2_before_any_work(tmp_path, command):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal cannot happen here")
    extra = ["--lengths", "17"]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "training",
            command,
            "--run",
            str(ROOT / "training/reference/letter"),
            "--task",
            "letter",
            "--json",
            str(tmp_path / "out.json"),
            "--device",
            "cuda",
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 2 and "no CUDA device" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out.json").exists()

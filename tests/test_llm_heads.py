"""C11-llm (proofs_check/claims/llm_heads.py): the stated rule on fake analyses whose answer is
known, its mutants (swapped IDs flip the verdict), the exclusions, and the shipped data."""

import json

import numpy as np
import pytest

from proofs_check.claims import llm_heads
from proofs_check.registry import REGISTRY, Options

LAYERS, HEADS = 6, 5


def fake_analysis(kinds, ids, sink=None) -> dict:
    """An analysis of ``python -m training analyze --model`` (only the fields the claim reads):
    ``kinds`` [layer][head] of 'P' (positional), 'S' (symbolic), 'M' (both scores high),
    ``ids`` the dominant frequency IDs, ``sink`` the sink shares (default 0.1)."""
    score = {"P": (0.9, 0.2), "S": (0.1, 0.95), "M": (0.8, 0.8)}
    kinds = np.asarray(kinds)
    return {
        "model": "fake",
        "layers": kinds.shape[0],
        "heads": kinds.shape[1],
        "per_head": {
            "positional": [[score[k][0] for k in row] for row in kinds],
            "symbolic": [[score[k][1] for k in row] for row in kinds],
            "sink": np.full(kinds.shape, 0.1).tolist() if sink is None else np.asarray(sink).tolist(),
        },
        "frequency": {
            "dominant_id": np.asarray(ids).tolist(),
            "weighted_id": (np.asarray(ids) + 0.5).tolist(),
        },
    }


def separated(fast_positional=True):
    """Half the heads positional, half symbolic; the positional ones on planes 1-6 and the
    symbolic ones on planes 20-26 (or the reverse)."""
    rng = np.random.default_rng(0)
    kinds = np.where(np.arange(LAYERS * HEADS).reshape(LAYERS, HEADS) % 2 == 0, "P", "S")
    fast, slow = rng.integers(1, 7, kinds.shape), rng.integers(20, 27, kinds.shape)
    ids = np.where(kinds == "P", fast, slow) if fast_positional else np.where(kinds == "P", slow, fast)
    return kinds, ids


def write(folder, analyses: dict):
    folder.mkdir(parents=True, exist_ok=True)
    for task, analysis in analyses.items():
        (folder / f"analysis_{task}.json").write_text(json.dumps(analysis))
    return folder


def both_tasks(analysis) -> dict:
    return {task: analysis for task in llm_heads.TASKS}


def test_positional_heads_on_faster_planes_are_verified_and_swapping_the_ids_refutes(tmp_path):
    kinds, ids = separated()
    outcome = llm_heads.check_folder(write(tmp_path / "a", both_tasks(fake_analysis(kinds, ids))))
    assert outcome.status == "verified"
    row = outcome.evidence["per_task"]["number"]
    assert row["n_positional"] == row["n_symbolic"] == LAYERS * HEADS // 2
    assert row["p_lower"] < llm_heads.ALPHA < row["p_higher"]
    assert row["median_id_positional"] < row["median_id_symbolic"]
    kinds, swapped = separated(fast_positional=False)
    assert (
        llm_heads.check_folder(write(tmp_path / "b", both_tasks(fake_analysis(kinds, swapped)))).status
        == "refuted"
    )


def test_equal_planes_are_undecided_and_one_refuting_task_refutes(tmp_path):
    kinds, _ = separated()
    same = fake_analysis(kinds, np.full(kinds.shape, 10))
    assert llm_heads.check_folder(write(tmp_path / "same", both_tasks(same))).status == "undecided"
    good, bad = fake_analysis(*separated()), fake_analysis(*separated(fast_positional=False))
    assert (
        llm_heads.check_folder(write(tmp_path / "mixed", {"number": good, "letter": bad})).status == "refuted"
    )
    assert (
        llm_heads.check_folder(write(tmp_path / "half", {"number": good, "letter": same})).status
        == "undecided"
    )


def test_sink_dominated_heads_are_left_out_whatever_their_scores(tmp_path):
    """Sink-dominated positional heads on slow planes would refute the claim if counted."""
    kinds, ids = separated()
    extra = np.array([["P"] * HEADS] * 4)
    all_kinds = np.vstack([kinds, extra])
    all_ids = np.vstack([ids, np.full(extra.shape, 32)])
    sink = np.vstack([np.full(kinds.shape, 0.1), np.full(extra.shape, 0.9)])
    outcome = llm_heads.check_folder(write(tmp_path, both_tasks(fake_analysis(all_kinds, all_ids, sink))))
    assert outcome.status == "verified"
    assert outcome.evidence["per_task"]["letter"]["sink_dominated"] == extra.size
    counted = fake_analysis(all_kinds, all_ids, np.full(all_kinds.shape, 0.1))
    assert llm_heads.check_folder(write(tmp_path / "counted", both_tasks(counted))).status != "verified"


def test_the_rule_boundaries_are_the_stated_ones():
    analysis = {
        "per_head": {
            "positional": [[0.5, 0.49, 0.6, 0.6, None]],
            "symbolic": [[0.49, 0.5, 0.6, 0.1, 0.9]],
            "sink": [[0.5, 0.5, 0.1, 0.51, 0.1]],
        }
    }
    assert llm_heads.classify_heads(analysis).tolist() == [
        ["positional", "symbolic", "mixed", "sink", "mixed"]
    ]
    assert "> 0.5" in llm_heads.RULE and "s_POS >= 0.5 > s_SYM" in llm_heads.RULE


def test_mixed_heads_are_left_out_and_an_empty_group_is_undecided(tmp_path):
    kinds, ids = separated()
    kinds[kinds == "S"] = "M"
    outcome = llm_heads.check_folder(write(tmp_path, both_tasks(fake_analysis(kinds, ids))))
    assert outcome.status == "undecided" and "no test" in outcome.summary
    assert outcome.evidence["per_task"]["number"]["mixed"] == kinds.size // 2


def test_a_missing_file_is_undecided_and_names_the_command(tmp_path):
    write(tmp_path, {"number": fake_analysis(*separated())})
    outcome = llm_heads.check_folder(tmp_path)
    assert outcome.status == "undecided"
    assert (
        "analysis_letter.json" in outcome.summary and "python -m training analyze --model" in outcome.summary
    )


def test_the_shipped_smollm2_analysis_gives_the_recorded_status():
    claim = REGISTRY["C11-llm"]
    outcome = claim.check(Options())
    assert outcome.status == claim.recorded
    assert outcome.evidence["source"] == "training/reference/llm/smollm2"
    for row in outcome.evidence["per_task"].values():
        assert (
            row["n_positional"] + row["n_symbolic"] + row["sink_dominated"] + row["mixed"]
            == row["heads"]
            == 270
        )


@pytest.mark.parametrize("task", llm_heads.TASKS)
def test_the_shipped_files_stay_small_and_name_the_model_file_only(task):
    path = llm_heads.SHIPPED / f"analysis_{task}.json"
    data = json.loads(path.read_text())
    assert path.stat().st_size < 1_000_000
    assert data["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and data["n_inputs"] == 100
    assert (data["layers"], data["heads"], data["dtype"]) == (30, 9, "float32")

"""The proofs_check command line: table, JSON, selection, and exit statuses."""

import json
import os
import subprocess
import sys

import pytest

from proofs_check import __main__ as cli
from proofs_check.registry import REGISTRY, Options, Outcome, claim


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "proofs_check", *args], capture_output=True, text=True)


def test_foundation_claims_run_and_write_json(tmp_path):
    out = tmp_path / "sub" / "claims.json"
    done = run_cli("--only", "S1,C11-id-to-frequency,S2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text())
    rows = {row["id"]: row for row in payload["claims"]}
    assert set(rows) == {"S1-rope-relative", "C11-id-to-frequency", "S2-worked-examples"}
    assert all(row["status"] == "verified" for row in rows.values())
    assert len(rows["C11-id-to-frequency"]["evidence"]["rows"]) == 11
    assert "S2-worked-examples" in done.stdout and "verified" in done.stdout


def test_list_and_unknown_ids():
    listed = run_cli("--list")
    assert listed.returncode == 0 and "S1-rope-relative" in listed.stdout
    bad = run_cli("--only", "C99")
    assert bad.returncode == 2
    assert "unknown claim id 'C99'" in bad.stderr and "Traceback" not in bad.stderr


@pytest.fixture
def temporary_claims():
    added = []

    def add(claim_id, recorded, check):
        claim(claim_id, "a test-only claim", "tests", recorded)(check)
        added.append(claim_id)

    yield add
    for claim_id in added:
        REGISTRY.pop(claim_id)


def test_an_erroring_check_exits_non_zero(temporary_claims, capsys):
    def broken(options):
        raise RuntimeError("deliberate failure")

    temporary_claims("T-broken", "verified", broken)
    assert cli.main(["--only", "T-broken"]) == 1
    err = capsys.readouterr().err
    assert "ERROR in T-broken" in err and "deliberate failure" in err


def test_a_changed_outcome_exits_non_zero_and_a_recorded_refutation_does_not(temporary_claims, capsys):
    temporary_claims("T-refuted", "refuted", lambda options: Outcome("refuted", "as recorded"))
    assert cli.main(["--only", "T-refuted"]) == 0
    temporary_claims("T-flipped", "verified", lambda options: Outcome("refuted", "no longer holds"))
    assert cli.main(["--only", "T-flipped"]) == 1
    assert "CHANGED T-flipped: recorded verified, now refuted" in capsys.readouterr().err


def test_table3_claims_point_at_the_cells_that_break_the_summary():
    from proofs_check.claims.llm import letter_consistently_higher, summary_matches_table
    from proofs_check.registry import Options

    summary = summary_matches_table(Options())
    assert summary.status == "refuted"
    assert summary.counterexample == {"model": "Claude Sonnet 3.7", "task": "letter", "length": 32, "mean": 0.88,
                                      "claim": "> 0.88", "holds": False}
    assert sum(not cell["holds"] for cell in summary.evidence["cells"]) == 1
    higher = letter_consistently_higher(Options())
    assert higher.status == "refuted"
    assert (higher.counterexample["model"], higher.counterexample["length"]) == ("GPT 5.4", 12)


# -- arguments are checked before any claim runs (issue 13) ------------------------------------

@pytest.fixture
def probe_claim(temporary_claims):
    """A test-only claim that records whether it ran."""
    ran = []
    temporary_claims("T-probe", "verified", lambda options: ran.append(1) or Outcome("verified", "ran"))
    return ran


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m proofs_check: error: "), err
    return lines[0]


@pytest.mark.parametrize("args, names", [
    (["--json", "DIR"], "is a directory"),
    (["--json", ""], "--json: empty path"),
    (["--only", ",,,"], "no claim id in ',,,'"),
    (["--only", ""], "no claim id"),
])
def test_bad_json_and_empty_selections_exit_2_before_any_claim(probe_claim, tmp_path, capsys, args, names):
    args = [a.replace("DIR", str(tmp_path)) for a in args]
    assert cli.main(["--only", "T-probe", *args]) == 2
    assert names in one_line_error(capsys) and probe_claim == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_json_destination_exits_2_before_any_claim(probe_claim, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert cli.main(["--only", "T-probe", "--json", str(locked / "claims.json")]) == 2
    assert str(locked) in one_line_error(capsys) and probe_claim == []


def test_ctrl_c_is_one_line_and_status_130(temporary_claims, capsys):
    def interrupted(options):
        raise KeyboardInterrupt

    temporary_claims("T-interrupted", "verified", interrupted)
    assert cli.main(["--only", "T-interrupted"]) == 130
    assert capsys.readouterr().err == "python -m proofs_check: interrupted\n"


# -- --weights: bad runs refused, each trained claim names its source ---------------------------

TRAINED = ("C1", "C2", "C3", "C9", "C10", "C10-relative", "C11", "C11-pattern")


@pytest.fixture
def fresh_sources(monkeypatch):
    """The trained claims' measurements computed afresh for this test, on a short length grid."""
    from proofs_check.claims import trained_sources

    monkeypatch.setattr(trained_sources, "_CACHE", {})
    monkeypatch.setattr(trained_sources, "QUICK_LENGTHS", (17, 40))
    return trained_sources


def tiny_run(folder, task: str):
    """Final weights of an untrained tiny model and the task's vocabulary: a run without
    checkpoints, like the shipped reference runs."""
    import torch

    from training.model.checkpoints import save_weights
    from training.model.gptj import GPTJ, ModelConfig
    from training.tasks.definitions import get_task, save_vocab

    torch.manual_seed(0)
    config = ModelConfig(vocab_size=len(get_task(task).vocab), n_layer=1, n_embd=16, rotary_dim=16, n_inner=32)
    save_weights(folder, GPTJ(config))
    save_vocab(folder / "vocab.json", task)
    return folder


def test_bad_weights_exit_2_before_any_claim(probe_claim, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    for name in ("one", "two"):
        tiny_run(tmp_path / name, "number")
    stranger = tiny_run(tmp_path / "stranger", "letter")
    (stranger / "vocab.json").write_text('["a", "b"]')
    for weights, names in (([tmp_path / "nowhere"], "does not exist"), ([tmp_path / "file"], "not a directory"),
                           ([tmp_path / "empty"], "missing config.json"),
                           ([stranger], "vocabulary of neither task"),
                           ([tmp_path / "one", tmp_path / "two"], "both number-task runs")):
        assert cli.main(["--only", "T-probe", "--weights", *map(str, weights)]) == 2
        line = one_line_error(capsys)
        assert names in line and str(weights[-1]) in line and probe_claim == []


def test_default_trained_claims_name_the_shipped_json(fresh_sources):
    for claim_id in TRAINED:
        outcome = REGISTRY[claim_id].check(Options())
        assert outcome.status == REGISTRY[claim_id].recorded, claim_id
        assert outcome.summary.endswith("[data: shipped JSON]")
        sources = outcome.evidence["source"]
        assert all("shipped JSON in" in s for s in (sources.values() if isinstance(sources, dict) else [sources]))


def test_weights_without_checkpoints_decide_length_claims_and_name_what_the_others_miss(fresh_sources, tmp_path):
    runs = {task: tiny_run(tmp_path / task, task) for task in ("number", "letter")}
    options = Options(weights=(str(runs["number"]), str(runs["letter"])))
    for claim_id in ("C10", "C10-relative"):
        outcome = REGISTRY[claim_id].check(options)
        assert outcome.status != "undecided", outcome.summary
        assert f"[data: number: --weights {runs['number']}; letter: --weights {runs['letter']}]" in outcome.summary
        assert outcome.evidence["source"]["letter"] == f"recomputed from {runs['letter']}"
        assert list(outcome.evidence["accuracy"]["number"]) == [17, 40]
    for claim_id in ("C1", "C3", "C9", "C11"):
        outcome = REGISTRY[claim_id].check(options)
        assert outcome.status == "undecided"
        assert "checkpoint folders step-NNNNNN/" in outcome.summary and f"{runs['number']} has none" in outcome.summary
        assert "--checkpoint-dir" not in outcome.summary


def test_a_run_of_one_task_says_the_other_uses_the_shipped_json(fresh_sources, tmp_path):
    run = tiny_run(tmp_path / "letter", "letter")
    outcome = REGISTRY["C10"].check(Options(weights=(str(run),)))
    assert f"[data: number: shipped JSON; letter: --weights {run}]" in outcome.summary
    assert outcome.evidence["source"]["number"].endswith("(no number-task run among --weights)")

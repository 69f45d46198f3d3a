"""The proofs_check command line: table, JSON, selection, and exit statuses."""

import json
import subprocess
import sys

import pytest

from proofs_check import __main__ as cli
from proofs_check.registry import REGISTRY, Outcome, claim


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

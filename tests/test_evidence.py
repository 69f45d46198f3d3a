"""Issue 42: every verified statement says what it rests on (proved, exhaustive, finite cases), a
proved statement's steps run with its check and a failing step fails the claim; every claim has
an origin; the registry records the rounding word, and --list, the runner and the report agree
on every verdict word."""

import re

import pytest

from proofs_check import __main__ as cli
from proofs_check import claims  # noqa: F401  (registers the checks)
from proofs_check.evidence import CLASSES, EXHAUSTIVE, FINITE_CASES, PROVED, Evidence, Step, proved, run_steps
from proofs_check.registry import ORIGINS, REGISTRY, Options, Outcome, claim
from proofs_check.runner import run_claims
from proofs_check.verdicts import UP_TO_ROUNDING

VERIFIED_STATEMENTS = [c for c in REGISTRY.values() if (c.kind, c.recorded) == ("statement", "verified")]
PROVED_CLAIMS = [c.id for c in VERIFIED_STATEMENTS if c.evidence is not None and c.evidence.cls == PROVED]
FAST = ["B1-formal", "B1-formal-corrected", "C12-summary", "C12-letter-higher", "T4-totals", "S36-53x", "C13",
        "C13-sharp-constant", "C6-index"]  # a few seconds in all: the runner's words for a sample of every kind


@pytest.fixture
def temporary_claims():
    added = []

    def add(claim_id, recorded, check, **extra):
        claim(claim_id, "a test-only claim", "tests", recorded, kind="statement", **extra)(check)
        added.append(claim_id)

    yield add
    for claim_id in added:
        REGISTRY.pop(claim_id)


def test_every_verified_statement_declares_its_evidence_class():
    missing = [c.id for c in VERIFIED_STATEMENTS if c.evidence is None]
    assert not missing, f"verified statements without an evidence class: {missing}"
    assert all(c.evidence.cls in CLASSES for c in VERIFIED_STATEMENTS)
    for c in VERIFIED_STATEMENTS:  # a class says which cases, or gives the steps
        assert (c.evidence.steps if c.evidence.cls == PROVED else c.evidence.cases.strip()), c.id
    assert {c.evidence.cls for c in VERIFIED_STATEMENTS} == set(CLASSES)  # each class is in use


def test_only_verified_statements_carry_a_class_and_every_claim_an_origin():
    assert all(c.evidence is None for c in REGISTRY.values() if c not in VERIFIED_STATEMENTS)
    assert [c.id for c in REGISTRY.values() if c.origin not in ORIGINS] == []
    assert REGISTRY["P-break"].origin == "package" and "Section 4" in REGISTRY["P-break"].source
    assert "not a claim of the paper" in REGISTRY["P-break"].source  # filed with the package's hypotheses
    assert REGISTRY["C7-retrieval-margin-exact"].origin == "corrected" and REGISTRY["C4-index"].origin == "paper"


def test_a_class_refuses_to_be_empty_or_mixed():
    with pytest.raises(ValueError, match="needs its steps"):
        proved()
    with pytest.raises(ValueError, match="names its cases"):
        Evidence(FINITE_CASES, "")
    with pytest.raises(ValueError, match="names its cases"):
        Evidence(EXHAUSTIVE, "x", (Step("s", lambda: True, "h"),))
    with pytest.raises(ValueError, match="only a verified statement"):
        claim("T-x", "x", "tests", "refuted", kind="statement", evidence=Evidence(FINITE_CASES, "x"))


@pytest.mark.parametrize("claim_id", PROVED_CLAIMS)
def test_every_step_of_a_proved_statement_passes(claim_id):
    rows = run_steps(REGISTRY[claim_id].evidence)
    assert [r["step"] for r in rows if not r["passed"]] == [], rows


def test_a_proved_claim_runs_its_steps_when_checked():
    row = run_claims(["C13"], Options())[0]
    steps = row["evidence_class"]["steps"]
    assert row["verdict"] == "verified (proved)" and len(steps) == len(REGISTRY["C13"].evidence.steps)
    assert all(s["passed"] for s in steps) and all(s["checked_by"].startswith("proofs_check.proofs.") for s in steps)


@pytest.mark.parametrize("step", [lambda: False, lambda: 1 / 0, lambda: "yes"])
def test_a_failing_step_makes_the_claim_an_error_and_exits_1(temporary_claims, capsys, step):
    evidence = proved(Step("a sound step", lambda: True, "test"), Step("a broken step", step, "test"))
    temporary_claims("T-proof", "verified", lambda options: Outcome("verified", "the cases hold"), evidence=evidence)
    assert cli.main(["--only", "=T-proof"]) == 1
    err = capsys.readouterr().err
    assert "ERROR in T-proof: proof step 2 of 2 fails" in err and "the cases hold" in err


def test_a_refuted_proof_still_shows_its_check(temporary_claims):
    evidence = proved(Step("s", lambda: False, "test"))
    temporary_claims("T-both", "verified", lambda options: Outcome("verified", "fine"), evidence=evidence)
    row = run_claims(["T-both"], Options())[0]
    assert row["status"] == "error" and "traceback" in row["evidence"]
    assert row["evidence_class"]["steps"][0]["passed"] is False


def _listed_words(capsys) -> dict:
    assert cli.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    return {m.group(1): m.group(2) for m in (re.match(r"(\S+)\s+\[([^\]]+)\] <", line) for line in lines) if m}


def test_list_prints_the_runners_recorded_word_for_every_claim(capsys):
    listed = _listed_words(capsys)
    assert listed == {cid: c.recorded_verdict() for cid, c in REGISTRY.items()}
    assert listed["C12-summary"] == UP_TO_ROUNDING and listed["C13"] == "verified (proved)"
    rows = run_claims(FAST, Options())
    for row in rows:  # the runner words the recorded outcome as --list does, and this run reproduces it
        assert row["recorded_verdict"] == listed[row["id"]] and row["verdict"] == listed[row["id"]], row["id"]


def test_losing_the_rounding_word_is_a_changed_outcome(monkeypatch, capsys):
    from proofs_check.claims import llm
    monkeypatch.setattr(llm, "_may_hold_unrounded", lambda *args: False)  # every failing cell now beyond rounding
    assert cli.main(["--only", "=C12-summary"]) == 1
    assert "CHANGED C12-summary: recorded holds up to rounding, now false" in capsys.readouterr().err


def test_gaining_the_rounding_word_is_a_changed_outcome(temporary_claims, capsys):
    temporary_claims("T-round", "refuted", lambda options: Outcome("refuted", "on a boundary", up_to_rounding=True))
    assert cli.main(["--only", "=T-round"]) == 1
    assert "CHANGED T-round: recorded false, now holds up to rounding" in capsys.readouterr().err
    temporary_claims("T-round-kept", "refuted", lambda options: Outcome("refuted", "x", up_to_rounding=True),
                     up_to_rounding=True)
    assert cli.main(["--only", "=T-round-kept"]) == 0


def test_json_rows_carry_origin_and_evidence_class(tmp_path):
    out = tmp_path / "rows.json"
    assert cli.main(["--only", "=T4-totals,=B1-formal-corrected,=B1-formal", "--json", str(out)]) == 0
    import json
    rows = {r["id"]: r for r in json.loads(out.read_text())["claims"]}
    assert rows["T4-totals"]["origin"] == "paper" and rows["T4-totals"]["evidence_class"]["class"] == EXHAUSTIVE
    assert rows["B1-formal-corrected"]["origin"] == "corrected"
    assert all(s["passed"] for s in rows["B1-formal-corrected"]["evidence_class"]["steps"])
    assert rows["B1-formal"]["evidence_class"] is None and rows["B1-formal"]["verdict"] == "false"


def test_the_report_shows_the_class_the_steps_and_the_origin():
    from proofs_check.report import markdown
    from proofs_check.report.build import evidence_blocks
    proof_row, cases_row = run_claims(["B1-formal-corrected", "T4-totals"], Options())
    text = "\n".join(markdown.block(b) for b in evidence_blocks(proof_row))
    for step in REGISTRY["B1-formal-corrected"].evidence.steps:
        assert markdown.escape(step.text) in text
    assert text.count("**passed**") == len(REGISTRY["B1-formal-corrected"].evidence.steps)
    cases = "\n".join(markdown.block(b) for b in evidence_blocks(cases_row))
    assert "**exhaustive**" in cases and markdown.escape(REGISTRY["T4-totals"].evidence.cases) in cases
    from proofs_check.report import ROOT
    from proofs_check.report.build import claim_section
    from proofs_check.report.paper_places import load_table
    section = claim_section(proof_row, load_table(), ROOT, {}, {}, {})
    body = "\n".join(markdown.block(b) for b in section.blocks)
    assert "Origin: **the package's correction of a false statement**." in body and text in body


def test_the_step_helpers_can_say_no():
    import sympy
    from proofs_check.proofs import is_zero, nonnegative, positive
    x, u = sympy.Symbol("x", real=True), sympy.Symbol("u", nonnegative=True)
    assert is_zero(sympy.cos(2 * x) - (2 * sympy.cos(x) ** 2 - 1)) and not is_zero(sympy.cos(2 * x) - sympy.cos(x))
    assert nonnegative(u) and not nonnegative(-u - 1) and not nonnegative(x)  # x's sign is unknown: not proved
    assert positive(u + 1) and not positive(u)

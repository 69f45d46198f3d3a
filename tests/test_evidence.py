"""Issue 42: every verified statement says what it rests on (proved, exhaustive, finite cases), a
proved statement's steps run with its check and a failing step fails the claim; every claim has
an origin; the registry records the rounding word, and --list, the runner and the report agree
on every verdict word."""

import re

import pytest

from proofs_check import __main__ as cli
from proofs_check import claims  # noqa: F401  (registers the checks)
from proofs_check.evidence.classes import (
    CLASSES,
    EXHAUSTIVE,
    FINITE_CASES,
    PROVED,
    Evidence,
    Step,
    proved,
    run_steps,
)
from proofs_check.registry import ORIGINS, REGISTRY, Options, Outcome, claim
from proofs_check.runner import run_claims
from proofs_check.verdicts import UP_TO_ROUNDING

VERIFIED_STATEMENTS = [c for c in REGISTRY.values() if (c.kind, c.recorded) == ("statement", "verified")]
# every claim with a written argument, proved or with a step checked only on finitely many cases
PROVED_CLAIMS = [c.id for c in VERIFIED_STATEMENTS if c.evidence is not None and c.evidence.steps]
FAST = [
    "B1-formal",
    "B1-formal-corrected",
    "C12-summary",
    "C12-letter-higher",
    "T4-totals",
    "S36-53x",
    "C13",
    "C13-sharp-constant",
    "C6-index",
]  # a few seconds in all: the runner's words for a sample of every kind


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
        assert c.evidence.steps if c.evidence.cls == PROVED else c.evidence.cases.strip(), c.id
    assert {c.evidence.cls for c in VERIFIED_STATEMENTS} == set(CLASSES)  # each class is in use


def test_only_verified_statements_carry_a_class_and_every_claim_an_origin():
    assert all(c.evidence is None for c in REGISTRY.values() if c not in VERIFIED_STATEMENTS)
    assert [c.id for c in REGISTRY.values() if c.origin not in ORIGINS] == []
    assert REGISTRY["P-break"].origin == "package" and "Section 4" in REGISTRY["P-break"].source
    assert "not a claim of the paper" in REGISTRY["P-break"].source  # filed with the package's hypotheses
    assert (
        REGISTRY["C7-retrieval-margin-exact"].origin == "corrected" and REGISTRY["C4-index"].origin == "paper"
    )


def test_a_class_refuses_to_be_empty_or_mixed():
    with pytest.raises(ValueError, match="needs its steps"):
        proved()
    with pytest.raises(ValueError, match="whole range"):  # a step checked on finitely many cases is no proof
        Evidence(PROVED, "", (Step("s", lambda: True, "h", cases="n <= 4"),))
    with pytest.raises(ValueError, match="names its cases"):
        Evidence(FINITE_CASES, "")
    with pytest.raises(ValueError, match="no steps"):
        Evidence(EXHAUSTIVE, "x", (Step("s", lambda: True, "h"),))


def test_an_argument_with_a_finitely_checked_step_is_classed_finite_cases_naming_it():
    whole, partial = (
        Step("a", lambda: True, "sympy identity"),
        Step("b", lambda: True, "enumerated", cases="n <= 4"),
    )
    assert proved(whole).cls == PROVED
    evidence = proved(whole, partial)
    assert evidence.cls == FINITE_CASES and "step 2 only for n <= 4" in evidence.cases
    assert evidence.steps == (whole, partial)  # the argument is still shown and run
    # the claims whose arguments hold such steps say so (issue 42: "proved" is every step over its whole range)
    for cid in ("C7-retrieval-margin-exact", "C8", "C13", "C6-retrieval-bounded", "C6-retrieval-hard"):
        assert REGISTRY[cid].evidence.cls == FINITE_CASES and REGISTRY[cid].evidence.steps, cid
    with pytest.raises(ValueError, match="only a verified statement"):
        claim("T-x", "x", "tests", "refuted", kind="statement", evidence=Evidence(FINITE_CASES, "x"))


@pytest.mark.parametrize("claim_id", PROVED_CLAIMS)
def test_every_step_of_a_proved_statement_passes(claim_id):
    rows = run_steps(REGISTRY[claim_id].evidence)
    assert [r["step"] for r in rows if not r["passed"]] == [], rows


@pytest.mark.parametrize(
    "claim_id, word", [("B1-formal-corrected", "verified (proved)"), ("C13", "holds in every case checked")]
)
def test_a_claim_with_an_argument_runs_its_steps_when_checked(claim_id, word):
    row = run_claims([claim_id], Options())[0]
    steps = row["evidence_class"]["steps"]
    assert row["verdict"] == word and len(steps) == len(REGISTRY[claim_id].evidence.steps)
    assert all(s["passed"] for s in steps) and all(
        s["checked_by"].startswith("proofs_check.proofs.") for s in steps
    )


@pytest.mark.parametrize("step", [lambda: False, lambda: 1 / 0, lambda: "yes"])
def test_a_failing_step_makes_the_claim_an_error_and_exits_1(temporary_claims, capsys, step):
    evidence = proved(Step("a sound step", lambda: True, "test"), Step("a broken step", step, "test"))
    temporary_claims(
        "T-proof", "verified", lambda options: Outcome("verified", "the cases hold"), evidence=evidence
    )
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
    return {
        m.group(1): m.group(2) for m in (re.match(r"(\S+)\s+\[([^\]]+)\] <", line) for line in lines) if m
    }


def test_list_prints_the_runners_recorded_word_for_every_claim(capsys):
    listed = _listed_words(capsys)
    assert listed == {cid: c.recorded_verdict() for cid, c in REGISTRY.items()}
    assert listed["C12-summary"] == UP_TO_ROUNDING and listed["C6-index"] == "verified (proved)"
    rows = run_claims(FAST, Options())
    for row in rows:  # the runner words the recorded outcome as --list does, and this run reproduces it
        assert row["recorded_verdict"] == listed[row["id"]] and row["verdict"] == listed[row["id"]], row["id"]


def test_losing_the_rounding_word_is_a_changed_outcome(monkeypatch, capsys):
    from proofs_check.claims import llm

    monkeypatch.setattr(
        llm, "_may_hold_unrounded", lambda *args: False
    )  # every failing cell now beyond rounding
    assert cli.main(["--only", "=C12-summary"]) == 1
    assert "CHANGED C12-summary: recorded holds up to rounding, now false" in capsys.readouterr().err


def test_gaining_the_rounding_word_is_a_changed_outcome(temporary_claims, capsys):
    temporary_claims(
        "T-round", "refuted", lambda options: Outcome("refuted", "on a boundary", up_to_rounding=True)
    )
    assert cli.main(["--only", "=T-round"]) == 1
    assert "CHANGED T-round: recorded false, now holds up to rounding" in capsys.readouterr().err
    temporary_claims(
        "T-round-kept",
        "refuted",
        lambda options: Outcome("refuted", "x", up_to_rounding=True),
        up_to_rounding=True,
    )
    assert cli.main(["--only", "=T-round-kept"]) == 0


def test_json_rows_carry_origin_and_evidence_class(tmp_path):
    out = tmp_path / "rows.json"
    assert cli.main(["--only", "=T4-totals,=B1-formal-corrected,=B1-formal", "--json", str(out)]) == 0
    import json

    rows = {r["id"]: r for r in json.loads(out.read_text())["claims"]}
    assert (
        rows["T4-totals"]["origin"] == "paper" and rows["T4-totals"]["evidence_class"]["class"] == EXHAUSTIVE
    )
    assert rows["B1-formal-corrected"]["origin"] == "corrected"
    assert all(s["passed"] for s in rows["B1-formal-corrected"]["evidence_class"]["steps"])
    assert rows["B1-formal"]["evidence_class"] is None and rows["B1-formal"]["verdict"] == "false"


def test_the_report_shows_the_class_the_steps_and_the_origin():
    from proofs_check.report import markdown, mathtext
    from proofs_check.report.build import evidence_blocks

    proof_row, cases_row = run_claims(["B1-formal-corrected", "T4-totals"], Options())
    text = "\n".join(markdown.block(b) for b in evidence_blocks(proof_row))
    for step in REGISTRY["B1-formal-corrected"].evidence.steps:
        assert mathtext.markdown(step.text, markdown.escape) in text  # words escaped, math as $...$
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
    assert is_zero(sympy.cos(2 * x) - (2 * sympy.cos(x) ** 2 - 1)) and not is_zero(
        sympy.cos(2 * x) - sympy.cos(x)
    )
    assert (
        nonnegative(u) and not nonnegative(-u - 1) and not nonnegative(x)
    )  # x's sign is unknown: not proved
    assert positive(u + 1) and not positive(u)


def test_index_sup_corrected_is_proved_and_a_mutated_step_fails(monkeypatch):
    """C7-index-sup-corrected's Dirichlet argument: every step passes, and a wrong constant in the
    printed tail (8 -> 4), a wrong L_min, or a construction whose logit is cos((t + s) theta) fails
    the step that reads it, and only that one."""
    from constructions.index import IndexConstruction
    from proofs_check.proofs import index_discrepancy as P
    from theory import index_formulas as IF
    from theory.formula import Formula

    evidence = REGISTRY["C7-index-sup-corrected"].evidence
    assert evidence is P.SUP_CORRECTED and evidence.cls == PROVED
    assert all(r["passed"] for r in run_steps(evidence))

    def failing():
        return [r["checked_by"].rsplit(".", 1)[-1] for r in run_steps(evidence) if not r["passed"]]

    with monkeypatch.context() as patch:
        patch.setattr(IF, "SUP_TAIL", Formula("4 pi^2/(n+1)^2"))
        assert failing() == ["tail"]
    with monkeypatch.context() as patch:
        patch.setattr(IF, "L_MIN", Formula("max(ceil((n-1)/2), n-m)"))
        assert "l_min" in failing()
    with monkeypatch.context() as patch:
        patch.setattr(IF, "SUP_CAP", Formula("1 - cos(2 pi/(L+2))"))
        assert "cap" in failing()
    import sympy

    original = IndexConstruction.symbolic_identity

    def plus(self):
        route, closed = original(self)
        s = sympy.Symbol("s", integer=True)
        return route.subs(s, -s), closed.subs(s, -s)  # cos((t + s) theta): the query rotated the wrong way

    monkeypatch.setattr(IndexConstruction, "symbolic_identity", plus)
    assert failing() == ["logit_row"]


def test_index_inf_corrected_is_proved_and_a_mutated_step_fails(monkeypatch):
    """C7-index-inf-corrected: every step passes; a wrong constant in the printed cap (2 pi/n ->
    2 pi/(n+1)) fails the bounds step, a wrong D_max (max(m, n0-3)) the parenthetical, and a decoding
    rule that gave the query token no score the second witness (A would then win alone)."""
    from proofs_check.proofs import index_discrepancy as P
    from theory import index_formulas as IF
    from theory.formula import Formula

    evidence = REGISTRY["C7-index-inf-corrected"].evidence
    assert evidence is P.INF_CORRECTED and evidence.cls == PROVED
    assert all(r["passed"] for r in run_steps(evidence))

    def failing():
        return [r["checked_by"].rsplit(".", 1)[-1] for r in run_steps(evidence) if not r["passed"]]

    with monkeypatch.context() as patch:
        patch.setattr(IF, "INF_CAP", Formula("1 - cos(2 pi/(n+1))"))
        assert failing() == ["inf_cap"]
    with monkeypatch.context() as patch:
        patch.setattr(IF, "D_MAX", Formula("max(m, n0-3)"))
        assert failing() == ["parenthetical"]

    def no_query_score(top, query, answer):  # the mutant drops the k on the query token
        scores = {}
        for token in top.values():
            if token != "integer":
                scores[token] = scores.get(token, 0) + 2
        best = max(scores.values())
        return scores.get(answer) == best and sum(v == best for v in scores.values()) == 1

    monkeypatch.setattr(P, "_decoded_uniquely", no_query_score)
    assert failing() == ["witness_integer_p"]


def test_index_corrected_is_proved_and_a_mutated_step_fails(monkeypatch):
    """C4-index-corrected: every step passes; a letter valued 1 instead of 2 in the decoding rule fails
    the integer-query step (e_s + e_A would tie), and D_max = max(m, n0-1) fails the converse."""
    from proofs_check.proofs import index_discrepancy as P
    from theory import index_formulas as IF
    from theory.formula import Formula

    evidence = REGISTRY["C4-index-corrected"].evidence
    assert evidence is P.C4_CORRECTED and evidence.cls == PROVED
    assert all(r["passed"] for r in run_steps(evidence))

    def failing():
        return [r["checked_by"].rsplit(".", 1)[-1] for r in run_steps(evidence) if not r["passed"]]

    def letters_worth_one(top, query, answer):
        scores = {query: len(top)}
        for token in top.values():
            if token != "integer":
                scores[token] = scores.get(token, 0) + 1
        best = max(scores.values())
        return scores.get(answer) == best and sum(v == best for v in scores.values()) == 1

    with monkeypatch.context() as patch:
        patch.setattr(P, "_decoded_uniquely", letters_worth_one)
        assert "integer_queries_decode" in failing()
    with monkeypatch.context() as patch:
        patch.setattr(IF, "D_MAX", Formula("max(m, n0-1)"))
        assert "only_if" in failing() and "examples" in failing()


def test_index_unique_top_is_proved_and_a_mutated_step_fails(monkeypatch):
    """C4-index-unique-top: every step passes; printing q <= n0 (Q_MAX = n0) fails the offsets step."""
    from proofs_check.proofs import index_discrepancy as P
    from theory import index_formulas as IF
    from theory.formula import Formula

    evidence = REGISTRY["C4-index-unique-top"].evidence
    assert evidence is P.UNIQUE_TOP and evidence.cls == PROVED
    assert all(r["passed"] for r in run_steps(evidence))
    monkeypatch.setattr(IF, "Q_MAX", Formula("n0"))
    assert [r["checked_by"].rsplit(".", 1)[-1] for r in run_steps(evidence) if not r["passed"]] == [
        "offsets_below_n0",
        "paper_condition_examples",
    ]


def test_index_theorem_is_proved_and_a_mutated_step_fails(monkeypatch):
    """C4-index: every step passes; an integer query that scored its token 2 (as much as a letter
    target) fails the decoding step."""
    from proofs_check.proofs import index_discrepancy as P

    evidence = REGISTRY["C4-index"].evidence
    assert evidence is P.C4_INDEX and evidence.cls == PROVED
    assert all(r["passed"] for r in run_steps(evidence))
    original = P._decoded_uniquely
    monkeypatch.setattr(
        P,
        "_decoded_uniquely",
        lambda top, query, answer: original(
            {**top, "extra": "integer"} if query == "s" else top, query, answer
        ),
    )  # k = 2 on the query token
    assert [r["checked_by"].rsplit(".", 1)[-1] for r in run_steps(evidence) if not r["passed"]] == [
        "unique_tops_decode"
    ]

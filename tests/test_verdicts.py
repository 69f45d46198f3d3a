"""Verdict words: a statement is verified/false, an experiment reproduced/not reproduced, and a
refutation on a printed number's rounding boundary holds up to rounding; exact --only selection."""

import pytest

from proofs_check import __main__ as cli
from proofs_check import claims  # noqa: F401  (registers the checks)
from proofs_check.claims.llm import summary_matches_table
from proofs_check.registry import REGISTRY, Options, claim
from proofs_check.runner import format_table, run_claims
from proofs_check.verdicts import ALL_WORDS, KINDS, UP_TO_ROUNDING, verdict


@pytest.mark.parametrize(
    "kind, status, rounding, word",
    [
        (
            "statement",
            "verified",
            False,
            "holds in every case checked",
        ),  # no evidence class: the weakest word
        ("statement", "refuted", False, "false"),
        ("statement", "refuted", True, UP_TO_ROUNDING),
        ("statement", "undecided", False, "undecided"),
        (
            "statement",
            "verified",
            True,
            "holds in every case checked",
        ),  # only a refutation can sit on a boundary
        ("experiment", "verified", False, "reproduced"),
        ("experiment", "refuted", False, "not reproduced"),
        ("experiment", "refuted", True, "not reproduced"),  # a measurement is not a printed number
        ("experiment", "undecided", False, "undecided"),
        ("experiment", "error", False, "error"),
    ],
)
def test_each_kind_and_status_has_its_word(kind, status, rounding, word):
    assert verdict(kind, status, rounding) == word and word in ALL_WORDS


@pytest.mark.parametrize(
    "evidence_class, word",
    [
        ("proved", "verified (proved)"),
        ("exhaustive", "verified (exhaustive)"),
        ("finite cases", "holds in every case checked"),
    ],
)
def test_a_verified_statement_is_worded_by_its_evidence_class(evidence_class, word):
    assert verdict("statement", "verified", False, evidence_class) == word and word in ALL_WORDS
    assert (
        verdict("experiment", "verified", False, evidence_class) == "reproduced"
    )  # classes word statements only
    assert verdict("statement", "refuted", False, evidence_class) == "false"


def test_every_claim_has_a_kind_and_the_registration_refuses_none():
    assert all(c.kind in KINDS for c in REGISTRY.values())
    with pytest.raises(ValueError, match="kind of T-kindless"):
        claim("T-kindless", "x", "tests", "verified", kind="theorem")


def test_the_trained_claims_are_experiments_and_the_theorems_statements():
    assert {
        REGISTRY[c].kind for c in ("C1", "C2", "C10", "C11", "C11-llm", "V-scale", "P-break", "T4-cost")
    } == {"experiment"}
    assert {
        REGISTRY[c].kind for c in ("C4-index", "C7-index-sup", "C13", "B1-formal", "T4-totals", "C12-summary")
    } == {"statement"}


def test_c12_summary_holds_up_to_rounding_and_a_real_miss_does_not(monkeypatch):
    outcome = summary_matches_table(Options())
    assert outcome.status == "refuted" and outcome.up_to_rounding
    row = run_claims(["C12-summary"], Options())[0]
    assert row["verdict"] == UP_TO_ROUNDING and row["recorded_verdict"] == UP_TO_ROUNDING
    assert UP_TO_ROUNDING in format_table([row])
    # a mean printed 0.87 cannot be above 0.88 before rounding: false, not a boundary
    from proofs_check.claims import llm

    table = {m: {t: dict(c) for t, c in v.items()} for m, v in llm.TABLE3.items()}
    model = next(iter(table))
    table[model]["letter"][32] = (0.87, 0.01)
    monkeypatch.setattr(llm, "TABLE3", table)
    moved = summary_matches_table(Options())
    assert moved.status == "refuted" and not moved.up_to_rounding


def test_exact_selection_takes_one_claim_and_a_prefix_takes_its_family():
    assert cli.select("=C10") == ["C10"]
    assert cli.select("C10") == ["C10", "C10-relative"]
    assert cli.select("=C10,=C10-relative") == ["C10", "C10-relative"]
    with pytest.raises(cli.UsageError, match="unknown claim id 'C1-'"):
        cli.select("=C1-")


def test_the_table_and_json_rows_use_the_words(capsys):
    assert cli.main(["--only", "=S36-53x,=C10"]) == 0
    out = capsys.readouterr().out
    assert "S36-53x                  false" in out and "C10                      not reproduced" in out
    assert "refuted" not in out.split("\n", 2)[2].split("->")[0]

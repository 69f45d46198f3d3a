"""Issue 42: a statement's printed formula is the one its check evaluates.  Each mutant edits the
printed text (or swaps the formula object the check evaluates) and the claim, run through
python -m proofs_check itself, no longer reproduces its recorded verdict (exit 1)."""

import pytest
import sympy

from proofs_check import __main__ as cli
from proofs_check.evidence import binding
from proofs_check.registry import REGISTRY, Options
from proofs_check.runner import run_claims
from theory import bounded_positional as bp
from theory import retrieval_formulas as F
from theory.formula import Condition, Formula, parse
from theory.numbers import Interval


def test_the_plain_text_parse():
    n, B, omega, tp = sympy.symbols("n B omega theta'")
    assert parse("1 + cos((n-1) theta')") == 1 + sympy.cos((n - 1) * tp)
    assert parse("3 + e^(2B)") == 3 + sympy.exp(2 * B)
    assert parse("1 - cos omega") == 1 - sympy.cos(omega)
    assert parse("min{1 - cos theta', 2 pi^2/n^2}") == sympy.Min(1 - sympy.cos(tp), 2 * sympy.pi**2 / n**2)
    assert F.coefficient(Condition("2(n-1) theta' < omega"))(5) == 8
    with pytest.raises(ValueError, match="not of the form"):
        F.coefficient(Condition("2n theta' < pi"))


def test_a_formula_evaluates_its_own_text():
    balls = Interval(128)
    with balls.working():
        value = Formula("3 + e^(2B)").evaluate(B=balls.convert(1))
        assert bool(abs(value - (3 + balls.convert(2).exp())) < balls.convert(10) ** -30)
    assert bp.threshold(1) == 11 and bp.forced_at(1, 11) and not bp.forced_at(1, 10)


@pytest.mark.parametrize("claim_id", sorted(binding.BOUND))
def test_every_bound_statement_is_the_composed_one(claim_id):
    assert binding.problems(REGISTRY[claim_id]) == []


STATEMENT_MUTANTS = [
    ("C7-retrieval-sup-exact", "1 + cos((n-1) theta')", "1 + cos(n theta')"),
    ("C6-retrieval-bounded", "n >= 3 + e^(2B)", "n >= 2 + e^(2B)"),
    ("C7-retrieval-margin-exact", "sin((omega - (2n-3) theta')/2)", "sin((omega - (2n-2) theta')/2)"),
    (
        "C7-retrieval-competitor-corrected",
        "equals 1 - cos(omega - (n-1) theta')",
        "equals 1 - cos(omega - n theta')",
    ),
    (
        "C7-retrieval-inf-corrected",
        "min{1 - cos theta', cos((n-2) theta')",
        "min{1 - cos theta', cos((n-1) theta')",
    ),
    ("C7-retrieval-sup-exact", "with 2n theta' < omega", "with n theta' < omega"),
    ("C7-index-sup-corrected", "max(ceil((n-1)/2), n-1-m)", "max(ceil(n/2), n-1-m)"),
    ("C7-index-sup-corrected", "<= 8 pi^2/(n+1)^2", "<= 4 pi^2/(n+1)^2"),
    ("C7-index-inf-corrected", "1 - cos(2 pi/n)}", "1 - cos(2 pi/(n+1))}"),
    ("C4-index-corrected", "D_max = max(m, n0-2)", "D_max = max(m, n0-1)"),
    ("C4-index-unique-top", "q <= n0 - 1", "q <= n0"),
    ("C4-index-literal-corrected", "1/3 < alpha < 2/3 for m = 2", "1/3 < alpha < 3/4 for m = 2"),
    ("C4-index-literal-corrected", "no D <= max(m, n0-2)", "no D <= max(m, n0-1)"),
]


@pytest.mark.parametrize("claim_id, printed, mutant", STATEMENT_MUTANTS)
def test_a_changed_printed_formula_is_a_changed_outcome(monkeypatch, capsys, claim_id, printed, mutant):
    statement = REGISTRY[claim_id].statement
    assert printed in statement
    monkeypatch.setattr(REGISTRY[claim_id], "statement", statement.replace(printed, mutant))
    assert cli.main(["--only", "=" + claim_id]) == 1
    err = capsys.readouterr().err
    assert f"CHANGED {claim_id}:" in err and "now undecided" in err


def test_a_swapped_threshold_object_fails_the_binding_and_the_proof(monkeypatch, capsys):
    monkeypatch.setattr(bp, "THRESHOLD", Formula("2 + e^(2B)"))
    assert cli.main(["--only", "=C6-retrieval-bounded"]) == 1
    err = capsys.readouterr().err  # the statement still prints 3 + e^(2B); step 5 no longer follows
    assert "ERROR in C6-retrieval-bounded: proof step 5 of 6 fails" in err


def test_a_swapped_index_formula_fails_its_referee(monkeypatch, capsys):
    from proofs_check.evidence import brute_index
    from theory import index_formulas

    monkeypatch.setattr(index_formulas, "L_MIN", Formula("max(ceil(n/2), n-1-m)"))
    monkeypatch.setattr(brute_index, "L_MIN", index_formulas.L_MIN)  # where the referee evaluates it
    assert cli.main(["--only", "=C7-index-sup-corrected"]) == 1
    err = capsys.readouterr().err  # the proof's L_min step no longer follows (an error, not only a change)
    assert (
        "ERROR in C7-index-sup-corrected: proof step 3 of 9 fails (proofs_check.proofs.index_discrepancy.l_min)"
        in err
    )
    row = run_claims(["C7-index-sup-corrected"], Options())[0]
    assert row["evidence"]["L_agreement"]["failure_count"]  # the check itself, not only the argument, fails


def test_a_swapped_window_object_fails_the_check(monkeypatch, capsys):
    from fractions import Fraction

    from proofs_check.claims import index_literal

    wrong = index_literal.Windows(
        ((1, ((Fraction(0), Fraction(1)),)), (2, ((Fraction(1, 3), Fraction(3, 4)),))), none_from=3
    )
    monkeypatch.setattr(index_literal, "WINDOWS", wrong)
    assert cli.main(["--only", "=C4-index-literal-corrected"]) == 1
    row = run_claims(["C4-index-literal-corrected"], Options())[0]
    assert (
        row["evidence"]["windows_match"] is False and row["status"] == "undecided"
    )  # check refuted, text unbound


def test_a_swapped_margin_formula_fails_the_check(monkeypatch, capsys):
    monkeypatch.setattr(F, "MARGIN", Formula("cos((n-1) theta') - cos(omega - (n-1) theta')"))
    assert cli.main(["--only", "=C7-retrieval-margin-exact"]) == 1
    assert "ERROR in C7-retrieval-margin-exact: proof step 6 of 8 fails" in capsys.readouterr().err

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
from theory.formula import Condition, Formula, parse, plain
from theory.numbers import Interval


def test_the_plain_text_parse():
    n, B, omega, tp = sympy.symbols("n B omega theta'")
    assert parse("1 + cos((n-1) theta')") == 1 + sympy.cos((n - 1) * tp)
    assert parse("3 + e^(2B)") == 3 + sympy.exp(2 * B)
    assert parse("1 - cos omega") == 1 - sympy.cos(omega)
    assert parse("min{1 - cos theta', 2 pi^2/n^2}") == sympy.Min(1 - sympy.cos(tp), 2 * sympy.pi**2 / n**2)
    assert F.coefficient(Condition("2(n-1) theta' < omega"))(5) == 8
    assert F.coefficient(Condition(r"(2n-3)\theta' \le \omega"))(5) == 7
    with pytest.raises(ValueError, match="not of the form"):
        F.coefficient(Condition("2n theta' < pi"))


def test_the_latex_source_reads_as_the_plain_text_formula():
    """Issue 43: a formula's one source is LaTeX; its plain form is what is parsed and shown in a terminal."""
    assert plain(r"1 + \cos((n-1)\theta')") == "1 + cos((n-1) theta')"
    assert plain(r"3 + e^{2B}") == "3 + e^(2B)" and plain(r"e^{-2B}/n") == "e^(-2B)/n"
    assert plain(r"\max(\lceil (n-1)/2 \rceil, n-1-m)") == "max(ceil((n-1)/2), n-1-m)"
    assert plain(r"\frac{2\pi^2}{(L+1)^2}") == "2 pi^2/(L+1)^2" and plain(r"\max(m, n_0-2)") == "max(m, n0-2)"
    assert plain(r"\min\{1 - \cos\theta', \cos\omega\}") == "min{1 - cos theta', cos omega}"
    assert plain(r"2\sin\left(\frac{\omega - \theta'}{2}\right)") == "2 sin((omega - theta')/2)"
    assert plain("1 + cos((n-1) theta')") == "1 + cos((n-1) theta')"  # plain text passes unchanged
    for formula in (Formula(r"\frac{8\pi^2}{(n+1)^2}"), Formula(r"2\pi^2/(n+1)^2")):
        assert formula.expr == parse(formula.plain)
    assert Formula(r"\frac{8\pi^2}{(n+1)^2}").expr == 8 * sympy.pi**2 / (sympy.Symbol("n") + 1) ** 2


def test_a_formula_evaluates_its_own_text():
    balls = Interval(128)
    with balls.working():
        value = Formula(r"3 + e^{2B}").evaluate(B=balls.convert(1))
        assert bool(abs(value - (3 + balls.convert(2).exp())) < balls.convert(10) ** -30)
    assert bp.threshold(1) == 11 and bp.forced_at(1, 11) and not bp.forced_at(1, 10)


@pytest.mark.parametrize("claim_id", sorted(binding.BOUND))
def test_every_bound_statement_is_the_composed_one(claim_id):
    assert binding.problems(REGISTRY[claim_id]) == []


STATEMENT_MUTANTS = [  # issue 43: the bound text is the statement's LaTeX source
    ("C7-retrieval-sup-exact", r"1 + \cos((n-1)\theta')", r"1 + \cos(n\theta')"),
    ("C6-retrieval-bounded", r"n \ge 3 + e^{2B}", r"n \ge 2 + e^{2B}"),
    (
        "C7-retrieval-margin-exact",
        r"\sin\left(\frac{\omega - (2n-3)\theta'}{2}\right)",
        r"\sin\left(\frac{\omega - (2n-2)\theta'}{2}\right)",
    ),
    (
        "C7-retrieval-competitor-corrected",
        r"equals $1 - \cos(\omega - (n-1)\theta')",
        r"equals $1 - \cos(\omega - n\theta')",
    ),
    (
        "C7-retrieval-inf-corrected",
        r"\min\{1 - \cos\theta', \cos((n-2)\theta')",
        r"\min\{1 - \cos\theta', \cos((n-1)\theta')",
    ),
    ("C7-retrieval-sup-exact", r"with $2n\theta' < \omega$", r"with $n\theta' < \omega$"),
    ("C7-index-sup-corrected", r"\max(\lceil (n-1)/2 \rceil, n-1-m)", r"\max(\lceil n/2 \rceil, n-1-m)"),
    ("C7-index-sup-corrected", r"\le \frac{8\pi^2}{(n+1)^2}", r"\le \frac{4\pi^2}{(n+1)^2}"),
    ("C7-index-inf-corrected", r"1 - \cos(2\pi/n)\}", r"1 - \cos(2\pi/(n+1))\}"),
    ("C4-index-corrected", r"D_{\max} = \max(m, n_0-2)", r"D_{\max} = \max(m, n_0-1)"),
    ("C4-index-unique-top", r"q \le n_0 - 1", r"q \le n_0"),
    ("C4-index-literal-corrected", r"$1/3 < \alpha < 2/3$ for $m = 2$", r"$1/3 < \alpha < 3/4$ for $m = 2$"),
    ("C4-index-literal-corrected", r"no $D \le \max(m, n_0-2)$", r"no $D \le \max(m, n_0-1)$"),
    # a change to the mathematics that leaves its plain-text rendering alone is still a change
    ("C6-retrieval-bounded", r"n \ge 3 + e^{2B}", r"n \ge 3 + e^{2 B}"),
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
    monkeypatch.setattr(bp, "THRESHOLD", Formula(r"2 + e^{2B}"))
    assert cli.main(["--only", "=C6-retrieval-bounded"]) == 1
    err = capsys.readouterr().err  # the statement still prints 3 + e^{2B}; step 5 no longer follows
    assert "ERROR in C6-retrieval-bounded: proof step 5 of 6 fails" in err


def test_a_swapped_index_formula_fails_its_referee(monkeypatch, capsys):
    from proofs_check.evidence import brute_index
    from theory import index_formulas

    monkeypatch.setattr(index_formulas, "L_MIN", Formula(r"\max(\lceil n/2 \rceil, n-1-m)"))
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
    monkeypatch.setattr(F, "MARGIN", Formula(r"\cos((n-1)\theta') - \cos(\omega - (n-1)\theta')"))
    assert cli.main(["--only", "=C7-retrieval-margin-exact"]) == 1
    assert "ERROR in C7-retrieval-margin-exact: proof step 6 of 8 fails" in capsys.readouterr().err

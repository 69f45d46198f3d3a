"""The hand-built T_Index and T_Retrieval: weights, three evaluations, every input, Lemma F.1.

The argument next to each construction's weights is checked here on every input of small
sizes and on random inputs of the task vocabularies; the explicit beta of
constructions.temperature is checked against observed softmax margins.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from constructions.common import compare_outputs
from constructions.exact import Angle, certified_cosine_ranks, exact_hard, prove_closed_form
from constructions.export import OneLayerModel
from constructions.geometry import figure4a_geometry, write_figure4a
from constructions.index import IndexConstruction, number_task
from constructions.retrieval import RetrievalConstruction, letter_task
from constructions.temperature import (
    margin_lower_bound,
    observed_critical_beta,
    temperature_report,
    value_spread,
)
from theory import paper_data
from theory.functions import index
from theory.numbers import FLOAT64, SYMBOLIC, MultiPrecision
from theory.rope import rotation


def reference(model, ids):
    return np.array([model.reference_ids(model.tokens(row)) for row in ids])


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("angle", [0, -1, 4, "3*pi/2", "2*pi", 3.2, "-pi/4"])
def test_angle_outside_zero_pi_is_refused(angle):
    with pytest.raises(ValueError, match=r"outside the valid range 0 < theta <= pi"):
        IndexConstruction(["A", "B"], 2, angle, 5)
    with pytest.raises(ValueError, match=r"0 < theta <= pi"):
        RetrievalConstruction(["a", "b"], 1, angle, 5)


def test_pi_itself_is_allowed_and_irrational_non_pi_angles_are_refused():
    assert IndexConstruction(["A", "B"], 2, "pi", 5).theta == Angle(pi_multiple=Fraction(1))
    with pytest.raises(ValueError, match="rational or a rational multiple of pi"):
        IndexConstruction(["A", "B"], 2, "sqrt(2)", 5)


@pytest.mark.parametrize("alphabet", [[], ["A"], "A", ["A", "A"], ["A", "3"]])
def test_bad_alphabets_are_refused(alphabet):
    with pytest.raises(ValueError, match="ALPH"):
        IndexConstruction(alphabet, 2, "0.8", 5)
    with pytest.raises(ValueError, match="ALPH"):
        RetrievalConstruction(alphabet, 2, "pi/64", 5)


def test_length_beyond_n0_and_foreign_tokens_are_refused():
    model = IndexConstruction(["A", "B"], 2, "0.8", 4)
    with pytest.raises(ValueError, match=r"n = 5 .* 1 <= n <= n0 = 4"):
        model.forward(["A", "B", "A", "B", 1])
    with pytest.raises(ValueError, match=r"'C' at position 1"):
        model.forward(["A", "C"])
    with pytest.raises(ValueError, match=r"n = 6 .* n0 = 5"):
        exact_hard(letter_task(5), np.zeros((1, 6), dtype=int))
    with pytest.raises(ValueError, match=r"m \(INT = \[m\]\) = 0"):
        IndexConstruction(["A", "B"], 0, "0.8", 4)
    with pytest.raises(ValueError, match="n0 = 1"):
        RetrievalConstruction(["a", "b"], 1, "pi/64", 1)


# ---- exact angles ------------------------------------------------------------------------------
def test_angle_parsing_is_exact():
    assert Angle.of("0.8") == Angle(Fraction(4, 5))
    assert Angle.of("2*pi/3") == Angle(pi_multiple=Fraction(2, 3))
    assert Angle.of(sympy.pi / 4) == Angle(pi_multiple=Fraction(1, 4))
    assert Angle.of("2*pi/3").decimal(20).startswith("2.094395102393195492")


def test_certified_ranks_find_exact_ties_and_the_order():
    theta = Angle(pi_multiple=Fraction(1, 3))  # cos(a pi/3): a = 1 and a = 5 tie, a = 6 is the top
    ranks = certified_cosine_ranks([(1, 0), (5, 0), (6, 0), (2, 0), (-1, 0), (3, 0)], theta, None)
    assert ranks[0] == ranks[1] == ranks[4] and ranks[2] == max(ranks) and ranks[5] == min(ranks)
    pairs = [(a, b) for a in range(-7, 9) for b in range(-3, 4)]
    omega = Angle(pi_multiple=Fraction(2, 7))
    ranks = certified_cosine_ranks(pairs, Angle(Fraction(3, 10)), omega)  # 0.3 radians: mixed
    values = [math.cos(a * 0.3 + b * 2 * math.pi / 7) for a, b in pairs]
    for i in range(len(pairs)):
        for j in range(len(pairs)):
            if abs(values[i] - values[j]) > 1e-9:
                assert (ranks[i] < ranks[j]) == (values[i] < values[j])


# ---- the closed form, proved ------------------------------------------------------------------
def test_closed_forms_are_proved_equal_to_the_matrix_route():
    for model in (
        IndexConstruction(["A", "B"], 2, "0.8", 4),
        RetrievalConstruction(["a", "b"], 1, "pi/64", 4),
    ):
        proof = prove_closed_form(model)
        assert proof["failed"] == [] and proof["general_identity_proved"]
        assert proof["pairs_proved"] == len(model.vocab) ** 2


def test_a_wrong_closed_form_is_caught():
    class Tampered(IndexConstruction):
        def phase_shift(self, query_ids, key_ids):
            c_theta, c_omega = super().phase_shift(query_ids, key_ids)
            return -c_theta, c_omega  # cos((t + s) theta): wrong for every integer query

    proof = prove_closed_form(Tampered(["A", "B"], 2, "0.8", 4))
    assert len(proof["failed"]) == 2 * 4  # the two integer queries, against all four keys


def test_weights_rotate_by_matrix_powers_of_rho():
    theta = sympy.Symbol("theta", real=True)
    for s in (1, 2, 3):
        power = np.linalg.matrix_power(rotation(-theta, SYMBOLIC), s)
        assert all(sympy.simplify(x) == 0 for x in (power - rotation(-s * theta, SYMBOLIC)).ravel())


# ---- every valid input of small sizes -------------------------------------------------------------
@pytest.mark.parametrize("theta", ["2*pi/6", "0.8", "1"])
def test_index_is_exact_on_every_valid_input(theta):
    model = IndexConstruction(["A", "B"], 2, theta, 6)
    ids = model.all_valid_ids(6)
    assert len(ids) == 2 * 3 * 4**4
    expected = reference(model, ids)
    beta = temperature_report(model)["beta_value_aware"]
    for attention, b in (("exact", None), ("hard", None), ("softmax", beta)):
        result = compare_outputs(model, ids, expected, attention, b)
        assert result["wrong"] == 0, result
    assert compare_outputs(model, ids, expected, "exact")["min_decoding_gap"] == 1  # delta = 1


def test_retrieval_is_exact_on_every_proper_input():
    model = RetrievalConstruction(["a", "b", "c"], 1, "pi/60", 5)
    ids = model.all_proper_ids(5)
    expected = reference(model, ids)
    beta = temperature_report(model)["beta_value_aware"]
    for attention, b in (("exact", None), ("hard", None), ("softmax", beta)):
        result = compare_outputs(model, ids, expected, attention, b)
        assert result["wrong"] == 0, result
        assert result["inputs"] == len(ids) > 20000


def test_proper_enumeration_matches_the_definition():
    model = RetrievalConstruction(["a", "b"], 1, "pi/64", 4)
    proper = {tuple(r) for r in model.all_proper_ids(4).tolist()}
    everything = np.array(np.meshgrid(*[range(len(model.vocab))] * 4)).reshape(4, -1).T
    for row in everything:
        tokens = model.tokens(row)
        try:
            model.reference(tokens)
            ok = True
        except ValueError:
            ok = False
        assert ok == (tuple(row.tolist()) in proper)


# ---- randomised inputs of the task vocabularies -----------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n0=st.sampled_from([17, 40, 100]), data=st.data())
def test_task_vocabularies_random_inputs(seed, n0, data):
    rng = np.random.default_rng(seed)
    n = data.draw(st.integers(2, n0))
    numbers, letters = number_task(n0), letter_task(n0)
    for model, ids in (
        (numbers, numbers.sample_valid_ids(rng, n, 2)),
        (letters, np.stack([letters.sample_proper_ids(rng, n) for _ in range(2)])),
    ):
        expected = reference(model, ids)
        beta = temperature_report(model)["beta_value_aware"]
        for attention, b in (("exact", None), ("hard", None), ("softmax", beta)):
            assert compare_outputs(model, ids, expected, attention, b)["wrong"] == 0


@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_task_vocabularies_at_length_850(seed):
    rng = np.random.default_rng(seed)
    for model in (number_task(850), letter_task(850)):
        sample = (
            model.sample_valid_ids(rng, 850)
            if isinstance(model, IndexConstruction)
            else model.sample_proper_ids(rng, 850)[None]
        )
        ids = np.vstack([sample, model.adversarial_ids(850)])
        expected = reference(model, ids)
        for attention in ("exact", "hard"):
            assert compare_outputs(model, ids, expected, attention)["wrong"] == 0
        beta = temperature_report(model)["beta_value_aware"]
        assert compare_outputs(model, ids, expected, "softmax", beta)["wrong"] == 0


# ---- three evaluations of one construction --------------------------------------------------------
def test_mpmath_and_float64_agree_and_sympy_gives_the_closed_form():
    model = IndexConstruction(list("CBA"), 4, "0.8", 9)
    tokens = paper_data.DEPTH_ROWS["number"][0].split()
    floats = model.attention_logits(tokens)
    mp = model.attention_logits(tokens, MultiPrecision(40))
    live = np.tril(np.ones_like(floats, dtype=bool))
    assert np.allclose(floats[live], np.array(mp[live], dtype=float), atol=1e-13)
    exact = model.attention_logits(tokens, SYMBOLIC)
    for i, j in zip(*np.nonzero(live)):
        closed = model.closed_form_logit(tokens[i], tokens[j], i - j, SYMBOLIC)
        assert sympy.simplify(exact[i, j] - closed) == 0
    expected = paper_data.DEPTH_ROWS["number"][1][0].split()
    for numbers in (FLOAT64, MultiPrecision(30), SYMBOLIC):
        assert [str(x) for x in model.forward(tokens, numbers=numbers)[0]] == expected
    out, gaps = model.forward(tokens, "softmax", 500, numbers=MultiPrecision(30))
    assert [str(x) for x in out] == expected and min(gaps) > 0.5


def test_figure_examples_depth_zero():
    text, rows = paper_data.DEPTH_ROWS["letter"]
    model = RetrievalConstruction(list("ABCDEFGHI"), 3, "pi/200", 9)
    assert [model.display(x) for x in model.forward(text.split())[0]] == rows[0].split()


def test_figure_3b_is_not_proper_and_agrees_where_defined():
    tokens = paper_data.WORKED_EXAMPLES[3][2].split()
    model = letter_task(17)
    defined = model.reference_where_defined(tokens)
    assert [j for j, x in enumerate(defined) if x is None] == [9, 12, 14]
    out = model.forward(tokens)[0]
    assert all(model.canonical(x) == out[j] for j, x in enumerate(defined) if x is not None)
    assert model.display(out[-1]) == "hc"  # one hop of Retrieval: eh -> hc


# ---- Theorem 3.1's angle condition ---------------------------------------------------------------
def test_an_irrational_angle_can_tie_counterexample():
    model = IndexConstruction(["A", "B"], 3, "2*pi/3", 6)
    tokens = model.counterexample()
    assert tokens == ["B", "A", "A", "A", 1]
    logits = model.attention_logits(tokens, SYMBOLIC)[-1]
    assert logits[0] == 1 and logits[3] == 1  # exact tie: offsets 4 and 1 differ by 3, 3 theta = 2 pi
    assert model.forward(tokens, numbers=SYMBOLIC)[0][-1] is None
    assert model.forward(tokens)[0][-1] is None and index(tokens)[-1] == "A"
    out, _ = model.forward(tokens, "softmax", 1e4)
    assert out[-1] != "A"  # softmax cannot break an exact tie at any beta


@pytest.mark.parametrize("m,n0", [(2, 7), (5, 6), (1, 5)])
def test_index_tie_condition_matches_every_input(m, n0):
    angles = [
        Angle(pi_multiple=Fraction(2 * k, p))
        for p in range(2, n0 + 2)
        for k in range(1, p // 2 + 1)
        if math.gcd(k, p) == 1
    ]
    base = IndexConstruction(["A", "B"], m, angles[0], n0)
    ids = base.all_valid_ids(n0)
    expected = reference(base, ids)
    for angle in angles:
        model = IndexConstruction(["A", "B"], m, angle, n0)
        observed = compare_outputs(model, ids, expected, "exact")["wrong"] == 0
        assert observed == model.is_exact(), (str(angle), m, n0)
        if not observed:
            bad = model.ids(model.counterexample())
            assert exact_hard(model, bad)[0][0, -1] != model.reference_ids(model.counterexample())[-1]


def test_retrieval_gap_criterion_matches_every_input():
    base = RetrievalConstruction(["a", "b"], 2, "pi/64", 5)
    ids = base.all_proper_ids(5)
    expected = reference(base, ids)
    for q in (40, 10, 8, 7, 6, 5, 4, 2, 1):
        model = RetrievalConstruction(["a", "b"], 2, Angle(pi_multiple=Fraction(1, q)), 5)
        observed = compare_outputs(model, ids, expected, "exact")["wrong"] == 0
        assert observed == model.is_exact(), q
        if model.paper_condition():
            assert observed


# ---- the gaps and the explicit beta (Lemma F.1) ---------------------------------------------------
def brute_force_gaps(model, ids):
    """min over inputs and query positions of (top - best other-valued logit) and
    (top - best lower logit), from the float64 matrix route."""
    hidden = model.hidden(ids)
    logits = model.logits_from_hidden(hidden)
    values = hidden @ model.weights().value.T
    value_aware, lemma = np.inf, np.inf
    for b in range(len(ids)):
        for i in range(ids.shape[1]):
            row = logits[b, i, : i + 1]
            top = row.max()
            tied = row >= top - 1e-12
            other = np.array(
                [not np.array_equal(values[b, j], values[b, np.argmax(row)]) for j in range(i + 1)]
            )
            if other.any():
                value_aware = min(value_aware, top - row[other].max())
            if (~tied).any():
                lemma = min(lemma, top - row[~tied].max())
    return value_aware, lemma


@pytest.mark.parametrize(
    "model", [IndexConstruction(["A", "B"], 2, "0.8", 6), RetrievalConstruction(["a", "b"], 2, "pi/40", 5)]
)
def test_closed_form_gaps_equal_the_brute_force_minimum(model):
    enumerate_ = model.all_valid_ids if isinstance(model, IndexConstruction) else model.all_proper_ids
    value_aware, lemma = brute_force_gaps(model, enumerate_(model.n0))
    gaps = model.logit_gaps(MultiPrecision(30))
    assert float(gaps["value_aware"]) == pytest.approx(value_aware, abs=1e-12)
    assert float(gaps["lemma"]) == pytest.approx(lemma, abs=1e-12)


def test_value_spread_and_beta_values():
    assert value_spread(number_task(17)) == 4 and value_spread(letter_task(17)) == 2
    report = temperature_report(number_task(17))
    lam = 1 - math.cos(2 * math.pi / 17)
    assert float(report["lambda_value_aware"]) == pytest.approx(lam, rel=1e-12)
    assert report["beta_value_aware"] == pytest.approx(math.log(16 * 4) / lam, rel=1e-9)
    assert temperature_report(IndexConstruction(["A", "B"], 3, "2*pi/3", 17))["beta_value_aware"] == math.inf


@pytest.mark.parametrize("make", [number_task, letter_task])
def test_softmax_margins_respect_the_proven_bound_and_smaller_beta_fails(make):
    model = make(17)
    report = temperature_report(model)
    beta, lam = report["beta_value_aware"], float(report["lambda_value_aware"])
    worst = [model.adversarial_ids(17)] + ([model.variant_ids(17)] if make is letter_task else [])
    ids = np.vstack(worst)
    expected = reference(model, ids)
    for b in (beta, 2 * beta):
        _, gaps = model.forward_batch(ids, "softmax", b)
        assert gaps.min() >= margin_lower_bound(b, lam, 17, report["Gamma"], 1) - 1e-9
        assert compare_outputs(model, ids, expected, "softmax", b)["wrong"] == 0
    critical = observed_critical_beta(model, ids[-1:], steps=30)
    assert critical < beta  # the proven beta suffices ...
    assert (
        compare_outputs(model, ids[-1:], expected[-1:], "softmax", critical / 2)["wrong"] > 0
    )  # ... a small one not


# ---- export and geometry ----------------------------------------------------------------------------
def test_export_positional_index_and_content_following_retrieval():
    rng = np.random.default_rng(7)
    for model in (number_task(17), letter_task(17)):
        sample = (
            model.sample_valid_ids(rng, 17)[0]
            if isinstance(model, IndexConstruction)
            else model.sample_proper_ids(rng, 17)
        )
        exported = OneLayerModel(model)
        trace = exported.run(model.tokens(sample))
        hidden, logits = trace.hidden_states[0], trace.last_token_logits[0]
        assert hidden.shape == (17, len(model.vocab) + isinstance(model, IndexConstruction))
        assert np.allclose(logits, model.logits_from_hidden(hidden)[-1])
        assert trace.values[0].shape == hidden.shape
        theta = float(model.theta.value(FLOAT64))
        for i, j in ((0, 5), (3, 15), (7, 8)):
            swapped = hidden.copy()
            swapped[[i, j]] = swapped[[j, i]]
            after = exported.layer_logits(0, swapped)
            moved = logits.copy()
            moved[[i, j]] = moved[[j, i]]
            if isinstance(model, IndexConstruction):
                assert np.array_equal(after, logits)  # purely positional: keys carry no content
            else:  # follows the content, up to the RoPE term: |change| <= |i - j| theta
                assert np.abs(after - moved).max() <= abs(i - j) * theta + 1e-12
    with pytest.raises(ValueError, match="layer 1"):
        OneLayerModel(number_task(17)).layer_logits(1, hidden)


def test_retrieval_swap_changes_logits_when_contents_differ():
    model = letter_task(17)
    exported = OneLayerModel(model)
    trace = exported.run(["a1", "b2", "c3", "ab"])
    swapped = trace.hidden_states[0][[1, 0, 2, 3]]
    assert not np.allclose(exported.layer_logits(0, swapped), trace.last_token_logits[0])


def test_figure4a_geometry_and_atomic_write(tmp_path):
    data = figure4a_geometry("0.8", [1, 2, 3])
    assert data["key"] == [0.0, 1.0]
    for s in ("1", "2", "3"):
        assert np.allclose(data["rotated_queries"][s][s], [0.0, 1.0])  # lands on v at t = s
        for t, value in data["logits"][s].items():
            assert value == pytest.approx(math.cos((int(t) - int(s)) * 0.8), abs=1e-12)
    assert np.allclose(data["queries"]["1"], [math.sin(0.8), math.cos(0.8)])  # rho(-theta) v
    path = tmp_path / "out" / "figure4a.json"
    write_figure4a(path, "2*pi/17", range(1, 17))
    assert json.loads(path.read_text())["theta"] == "2*pi/17"
    assert [p.name for p in path.parent.iterdir()] == ["figure4a.json"]
    with pytest.raises(ValueError, match="offsets"):
        figure4a_geometry("0.8", [0, 1])


def test_the_fast_claims_reproduce_their_recorded_outcomes():
    import proofs_check.claims  # noqa: F401  (registers the checks)
    from proofs_check.registry import REGISTRY, Options

    for claim_id in ("C4-index-irrational-angle", "C4-index-corrected", "C4-retrieval-exact-condition"):
        outcome = REGISTRY[claim_id].check(Options())
        assert outcome.status == REGISTRY[claim_id].recorded, (claim_id, outcome.summary)
    refuted = REGISTRY["C4-index-irrational-angle"].check(Options())
    assert (
        refuted.counterexample["input"] == ["B", "A", "A", "A", "1"] and refuted.counterexample["got"] is None
    )
    assert refuted.corrected == "C4-index-corrected"

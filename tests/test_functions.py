"""theory.functions: the paper's printed examples, the definitions read literally,
and clear errors on invalid input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.functions import (
    index,
    is_integer_token,
    iterate,
    reflexive,
    retrieval,
    solve_letter,
    solve_number,
)
from theory.paper_data import DEPTH_ROWS, WORKED_EXAMPLES

SOLVERS = {"number": solve_number, "letter": solve_letter}


@pytest.mark.parametrize("where,task,text,answer,hops", WORKED_EXAMPLES, ids=[w[0] for w in WORKED_EXAMPLES])
def test_worked_examples_come_out_as_printed(where, task, text, answer, hops):
    got_answer, got_hops = SOLVERS[task](text.split())
    assert got_answer == answer
    if hops is not None:
        assert got_hops == hops


def test_figure_3b_takes_three_hops():
    # not printed as a number, but the path eh -> hc -> ca -> a2 is unique
    assert solve_letter("e1 b2 e1 g6 a2 b2 e1 g6 be db ca ge eb hc dg fh eh".split()) == ("a2", 3)


@pytest.mark.parametrize("task", ["number", "letter"])
def test_depth_rows_of_figure_3(task):
    function = index if task == "number" else retrieval
    text, rows = DEPTH_ROWS[task]
    for depth, row in enumerate(rows):
        assert iterate(function, text.split(), depth + 1) == row.split()


def test_solvers_equal_iterated_functions_read_at_the_query():
    for _, task, text, _answer, _ in WORKED_EXAMPLES:
        tokens = text.split()
        got, hops = SOLVERS[task](tokens)
        if task == "number":  # Index is defined on every position of these inputs
            assert iterate(index, tokens, hops)[-1] == got
            assert is_integer_token(iterate(index, tokens, hops - 1)[-1])


# ---- Definitions F.1 / F.2 read literally, 1-based, as independent oracles -----------------


def definition_f1(sigma):
    n = len(sigma)
    out = {}
    for j in range(1, n + 1):
        s = sigma[j - 1]
        if isinstance(s, int):
            assert j - s >= 1
            out[j] = sigma[j - s - 1] if not isinstance(sigma[j - s - 1], int) else s
        else:
            out[j] = s
    return [out[j] for j in range(1, n + 1)]


def definition_f2(sigma):
    out = []
    for j in range(1, len(sigma) + 1):
        left, right = sigma[j - 1]
        if isinstance(right, int):
            out.append(sigma[j - 1])
        else:
            k_j = [k for k in range(1, j + 1) if sigma[k - 1][0] == right]
            assert len({sigma[k - 1] for k in k_j}) == 1  # proper
            out.append(sigma[k_j[0] - 1])
    return out


@st.composite
def index_inputs(draw):
    alph = draw(st.lists(st.text("ABCxyz", min_size=1, max_size=2), min_size=2, max_size=5, unique=True))
    m = draw(st.integers(1, 6))
    n = draw(st.integers(m + 1, 24))
    seq = []
    for position in range(n):
        choices = [st.sampled_from(alph)]
        if position >= 1:  # an integer must point inside the sequence
            choices.append(st.integers(1, min(m, position)))
        seq.append(draw(st.one_of(*choices)))
    return seq


@given(index_inputs())
@settings(max_examples=300, deadline=None)
def test_index_agrees_with_definition_f1(seq):
    as_strings = [str(s) for s in seq]  # digit strings are integers too
    assert index(seq) == definition_f1(seq)
    assert index(as_strings) == [str(s) for s in definition_f1(seq)]


def definition_f1_literal(sigma):
    """F.1 word for word (1-based): sigma_(j-i) if it is a letter, sigma_j otherwise; a
    position j - i < 1 holds no letter (F.1 asks only n > m)."""
    return [
        sigma[j - s - 1] if isinstance(s, int) and j - s >= 1 and not isinstance(sigma[j - s - 1], int) else s
        for j, s in enumerate(sigma, start=1)
    ]


@given(
    st.integers(1, 5).flatmap(
        lambda m: st.tuples(
            st.just(m),
            st.lists(st.one_of(st.sampled_from("AB"), st.integers(1, m)), min_size=m + 1, max_size=12),
        )
    )
)
@settings(max_examples=300, deadline=None)
def test_literal_index_agrees_with_definition_f1_read_word_for_word(case):
    m, seq = case  # integers anywhere, also pointing before the start
    assert index(seq, literal=True) == definition_f1_literal(seq)
    if all(not isinstance(s, int) or s <= j for j, s in enumerate(seq)):  # every integer points inside
        assert index(seq, literal=True) == index(seq)


@pytest.mark.parametrize(
    "seq,literal",
    [(["A", 2, "A"], ["A", 2, "A"]), ([3, "B", 2, 2], [3, "B", 2, "B"]), (["a", "2", "b"], ["a", "2", "b"])],
)
def test_the_package_reading_refuses_what_the_literal_reading_keeps(seq, literal):
    assert index(seq, literal=True) == literal
    with pytest.raises(ValueError, match="before the start"):
        index(seq)


@st.composite
def proper_inputs(draw):
    """Proper by construction: every left letter is bound to one token, and a
    letter-letter token only points at a letter bound at or before it (itself
    included, as Definition F.2 allows)."""
    letters = draw(st.lists(st.sampled_from("abcdefgh"), min_size=2, max_size=8, unique=True))
    seq, bound = [], {}
    for _ in range(draw(st.integers(1, 20))):
        left = draw(st.sampled_from(letters))
        if left not in bound:
            if draw(st.booleans()):
                right = draw(st.sampled_from(sorted(set(bound) | {left})))
            else:
                right = draw(st.integers(1, 9))
            bound[left] = (left, right)
        seq.append(bound[left])
    return seq


@given(proper_inputs())
@settings(max_examples=300, deadline=None)
def test_retrieval_agrees_with_definition_f2(seq):
    assert retrieval(seq) == definition_f2(seq)
    strings = [f"{a}{b}" for a, b in seq]
    assert retrieval(strings) == [f"{a}{b}" for a, b in definition_f2(seq)]


def test_reflexive_is_identity():
    assert reflexive(["a", "1", ("x", "y")]) == ["a", "1", ("x", "y")]


def test_definition_not_listing_for_self_matches():
    # Definition F.2 searches k <= j, so "aa" may match itself; Listing 1 (range(n)) would not
    assert retrieval(["aa"]) == ["aa"]
    with pytest.raises(ValueError, match="not proper at position 2"):
        retrieval(["a1", "ba", "aa"])


@pytest.mark.parametrize(
    "function,seq,message",
    [
        (index, ["A", "3"], r"position 1 points to position -2, before the start"),
        (index, [], r"empty"),
        (index, ["A", "0"], r"position 1 is not in INT"),
        (retrieval, ["A1", "BC"], r"'BC' at position 1 has no match"),
        (retrieval, ["A1", "A2", "BA"], r"not proper at position 2"),
        (retrieval, ["A"], r"not a pair"),
        (solve_number, ["A", "B", "C"], r"query 'C' at position 2 is not an integer"),
        (solve_number, ["A", "1", "5"], r"position 2 points to position -3"),
        (solve_letter, ["A1", "B1"], r"not a letter-letter"),
        (solve_letter, ["A1", "CD"], r"position 1 has no match"),
        (solve_letter, ["A1", "A2", "BA"], r"not proper at position 2"),
        (solve_letter, ["bb"], r"returns to position 0"),
        (index, "C B 1", r"one string"),
    ],
)
def test_invalid_inputs_raise_value_errors_naming_position_and_reason(function, seq, message):
    with pytest.raises(ValueError, match=message):
        function(seq)

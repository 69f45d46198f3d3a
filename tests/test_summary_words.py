"""A claim's texts speak words where they are made, not only in the report: the statement, the
source and the evidence's summary as ``--json``, ``--list`` and the terminal table show them hold
no tracker number ("issue 15") and no Python value (``None``, ``True``, ``False``, a dict literal);
the rules in the evidence name no tracker number either.  Read from the session's one run of every
claim on the built-in defaults (``generated_report``, tests/conftest.py)."""

from __future__ import annotations

import re

ISSUE = re.compile(r"\bissue \d+", re.IGNORECASE)
LITERAL = re.compile(r"\b(?:None|True|False)\b")
DICT = re.compile(r"[{}]")  # statements may hold LaTeX braces; summaries are plain words
STATEMENT_WORDS = re.compile(r"\bseed-\d+ (?:verified|refuted|undecided)\b|\ba status needs\b")
# a Python list printed as it is: ['a2', 'a1'], [1, 2, 3, 4], [[2, 24]] (an interval [0.34, 0.58] is words)
PY_LIST = re.compile(r"\[\s*'|\[-?\d+, -?\d|\[\[")


def _strings(value, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def test_claim_texts_hold_no_tracker_numbers_nor_python_values(generated_report):
    _, rows = generated_report
    bad = []
    for row in rows:
        for field in ("statement", "source", "summary"):
            if ISSUE.search(row[field]):
                bad.append((row["id"], field, ISSUE.search(row[field]).group()))
        for pattern in (LITERAL, DICT, STATEMENT_WORDS, PY_LIST):
            found = pattern.search(row["summary"])
            if found:
                bad.append(
                    (row["id"], "summary", row["summary"][max(0, found.start() - 40) : found.end() + 40])
                )
        for path, text in _strings(row["evidence"], "evidence"):
            if path.endswith(("rule", "status_rule", "rule_fixed")) and ISSUE.search(text):
                bad.append((row["id"], path, ISSUE.search(text).group()))
    assert not bad, bad


def test_seed_tallies_use_the_claims_own_words(generated_report):
    """A trained claim over seeds says its seeds' results as an experiment does ("reproduced in 5
    (seed-0, ...)"; "supported" for the package's own hypotheses), never the registry's statuses."""
    _, rows = generated_report
    tallied = [row for row in rows if "status_rule" in row["evidence"] and row["evidence"].get("seeds")]
    assert tallied
    for row in tallied:
        words = (
            ("supported", "not supported") if row["origin"] == "package" else ("reproduced", "not reproduced")
        )
        assert re.search(rf"\b(?:{'|'.join(words)}|undecided) in \d+ \(seed-\d+", row["summary"]), row["id"]
        assert "a verdict needs the same result in" in row["summary"], row["id"]


def test_python_list_forms_are_caught_and_words_replace_them():
    """The pattern the summaries are held to, and the words that replace a list."""
    from proofs_check.evidence.words import angle_said, listed, spans

    for text in ("on ['B', 'A']", "layers [1, 2, 3, 4]", "n in [[2, 24]]", "at ['pi/12']"):
        assert PY_LIST.search(text), text
    for text in ("[0.342, 0.576]", "Wilson 95% [0.930, 0.994]", "INT = [2]", "n in 2..24"):
        assert not PY_LIST.search(text), text
    assert listed(["a2", "a1"]) == "a2, a1" and listed([]) == "none"
    assert spans([1, 2, 3, 4]) == "1 to 4" and spans([0, 2, 3, 4, 9]) == "0, 2 to 4, 9"
    assert spans([3, 4]) == "3, 4" and spans([]) == "none"
    assert listed([angle_said(t) for t in ("pi/12", "2*pi/17 + 1/10**6")]) == "pi/12, 2 pi/17 + 1/10^6"

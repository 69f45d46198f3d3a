"""A decision rule's text is formatted from the constants its check uses, so the two cannot drift:
change one constant and both the printed rule and the decision follow it."""

from __future__ import annotations

from proofs_check.claims import coverage_numbers, trained, variants


def _geometry(collapse: float, alignment: float) -> dict:
    row = {
        "layer": 1,
        "plane_id": 1,
        "frequency": 0.5,
        "key_collapse": collapse,
        "query_alignment": alignment,
        "query_spread": 0.9,
    }
    return {"number": {"index_geometry": row, "index_geometry_layers": [row]}}


def test_c9_rule_text_follows_its_thresholds(monkeypatch):
    found = _geometry(collapse=0.92, alignment=0.85)
    before = trained.index_geometry(found)
    assert before.status == "verified"
    assert f">= {trained.COLLAPSE_VERIFIES} and query_alignment" in before.evidence["rule"]
    monkeypatch.setattr(trained, "COLLAPSE_VERIFIES", 0.95)
    monkeypatch.setattr(trained, "ALIGNMENT_REFUTES", 0.55)
    after = trained.index_geometry(found)
    assert after.status == "undecided"  # 0.92 no longer verifies, and refutes only below 0.7
    assert "key_collapse (mean resultant length of key directions) >= 0.95" in after.evidence["rule"]
    assert "query_alignment < 0.55" in after.evidence["rule"]
    assert after.evidence["rule"] != before.evidence["rule"]


def _curves(letter: dict, number: dict) -> dict:
    return {
        task: {"lengths": list(c), "accuracy": list(c.values()), "n_per_length": 100}
        for task, c in (("letter", letter), ("number", number))
    }


def test_c10_rule_text_follows_its_thresholds(monkeypatch):
    found = _curves({17: 1.0, 100: 0.95, 850: 0.8}, {17: 1.0, 100: 0.3})
    before = trained.length_generalisation(found)
    assert before.status == "refuted"  # 0.8 at 850 is not above 0.9
    assert f"accuracy > {trained.C10_LETTER_FLOOR} at every measured length" in before.evidence["rule"]
    monkeypatch.setattr(trained, "C10_LETTER_FLOOR", 0.75)
    monkeypatch.setattr(trained, "C10_LONG", 850)
    monkeypatch.setattr(trained, "C10_SHARE", 0.25)
    found = _curves({17: 1.0, 100: 0.95, 850: 0.8}, {17: 1.0, 850: 0.2})
    after = trained.length_generalisation(found)
    assert after.status == "verified"
    assert "accuracy > 0.75 at every measured length <= 850" in after.evidence["rule"]
    assert "accuracy at length 850 below 0.25 times its accuracy at 17" in after.evidence["rule"]


def test_v_scale_words_follow_the_goal(monkeypatch):
    values = {"0": 1.0, "1": 0.98, "2": 1.0}
    assert variants.decide_every_seed(values, "letter").status == "refuted"
    monkeypatch.setattr(variants, "GOAL", 0.97)
    outcome = variants.decide_every_seed(values, "letter")
    assert outcome.status == "verified" and ">= 0.97" in outcome.summary


def test_r32_rule_text_follows_its_constants(monkeypatch):
    monkeypatch.setattr(coverage_numbers, "FACTOR", 1000)
    monkeypatch.setattr(coverage_numbers, "N_FROM", 3)
    outcome = coverage_numbers.separation_outcome(n_max=8, readings=("bound",))
    rule = outcome.evidence["rule"]
    assert "separated when Index's is > 1000 x Retrieval's" in rule
    assert "n = 3..8" in rule and "D(3) / D(8)" in rule
    assert "from n = 3 to 8" in outcome.summary
    assert outcome.evidence["readings"]["bound"]["of_n"] == 6
